"""`.ci/use-cycles` on tiny crates written to a temporary directory: what it reports, and its exit
status (0 clean, 1 cycles, 2 a crate it cannot read). Run: `python3 -m unittest discover .ci/tests`.
"""
import os
import subprocess
import tempfile
import textwrap
import unittest

SCRIPT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "use-cycles")


def write_tree(root, files):
    """Writes {relative path: Rust text} under `root`."""
    for path, text in files.items():
        path = os.path.join(root, path)
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(path, "w", encoding="utf-8") as out:
            out.write(textwrap.dedent(text))


class UseCycles(unittest.TestCase):
    def run_script(self, files, *args):
        """Runs the script in a directory holding `files`; (exit status, stdout + stderr)."""
        with tempfile.TemporaryDirectory() as root:
            write_tree(root, files)
            done = subprocess.run(
                [SCRIPT, *args], cwd=root, capture_output=True, text=True, check=False
            )
            return done.returncode, done.stdout + done.stderr

    def test_use_cycles_should_list_a_real_cycle_with_its_edges(self):
        status, out = self.run_script({
            "src/lib.rs": "mod a;\nmod b;\n",
            "src/a.rs": "use crate::b::Bee;\npub struct Ay;\n",
            "src/b.rs": "pub struct Bee(crate::a::Ay);\n",
        }, "src")
        self.assertEqual(status, 1, out)
        self.assertIn("use cycle in the crate of src/lib.rs (2 files):", out)
        self.assertIn("src/a.rs -> src/b.rs  (crate::b::Bee)", out)
        self.assertIn("src/b.rs -> src/a.rs  (crate::a::Ay)", out)

    def test_use_cycles_should_pass_a_crate_whose_arrows_point_one_way(self):
        status, out = self.run_script({
            "src/lib.rs": "mod a;\nmod b;\n",
            "src/a.rs": "use crate::b::Bee;\npub fn f(_: Bee) {}\n",
            "src/b.rs": "pub struct Bee;\n",
        }, "src")
        self.assertEqual(status, 0, out)
        self.assertIn("no use cycles in 1 crates: src/lib.rs", out)

    def test_use_cycles_should_check_both_roots_of_a_package_as_two_crates(self):
        # The library's cycle goes through lib.rs, the binary's through main.rs: mapping both
        # roots to one module would lose one of them, whichever file was read last.
        status, out = self.run_script({
            "src/lib.rs": "pub mod a;\npub fn helper() { a::run() }\n",
            "src/a.rs": "use crate::helper;\npub fn run() {}\npub fn go() { helper() }\n",
            "src/main.rs": """\
                mod cli;
                const NAME: &str = "demo";
                fn main() { cli::parse(); fixture::a::go(); }
                """,
            "src/cli.rs": "pub fn parse() { let _ = crate::NAME; }\n",
        }, "src")
        self.assertEqual(status, 1, out)
        self.assertIn("use cycle in the crate of src/lib.rs (2 files):", out)
        self.assertIn("src/a.rs -> src/lib.rs  (crate::helper)", out)
        self.assertIn("use cycle in the crate of src/main.rs (2 files):", out)
        self.assertIn("src/cli.rs -> src/main.rs  (crate::NAME)", out)

    def test_use_cycles_should_not_count_a_binary_using_its_library_by_name(self):
        status, out = self.run_script({
            "src/lib.rs": "pub mod a;\n",
            "src/a.rs": "pub fn run() {}\n",
            "src/main.rs": "use fixture::a;\nfn main() { a::run() }\n",
        }, "src")
        self.assertEqual(status, 0, out)
        self.assertIn("no use cycles in 2 crates: src/lib.rs, src/main.rs", out)

    def test_use_cycles_should_pass_a_facade_that_reexports_its_child(self):
        status, out = self.run_script({
            "src/lib.rs": "mod kit;\n",
            "src/kit/mod.rs": "mod item;\nmod user;\npub use item::Item;\npub use user::make;\n",
            "src/kit/item.rs": "pub struct Item;\n",
            "src/kit/user.rs": "use super::Item;\npub fn make() -> Item { Item }\n",
        }, "src")
        self.assertEqual(status, 0, out)

    def assert_cycle_seen_after(self, literal):
        """A cycle whose one arrow is a `use` between `literal` and a later string literal."""
        status, out = self.run_script({
            "src/lib.rs": "mod a;\nmod b;\n",
            "src/a.rs": f"""\
                pub const LITERAL: {literal};
                use crate::b::Bee;
                pub const NAME: &str = "ay";
                pub struct Ay(Bee);
                """,
            "src/b.rs": "pub struct Bee;\npub fn f(_: crate::a::Ay) {}\n",
        }, "src")
        self.assertEqual(status, 1, out)
        self.assertIn("src/a.rs -> src/b.rs  (crate::b::Bee)", out)

    def test_use_cycles_should_read_code_after_a_url(self):
        self.assert_cycle_seen_after('&str = "http://example.com"')

    def test_use_cycles_should_read_code_after_a_quote_in_a_char(self):
        self.assert_cycle_seen_after("char = '\"'")

    def test_use_cycles_should_read_code_after_a_lifetime(self):
        self.assert_cycle_seen_after("Option<&'static str> = None")

    def test_use_cycles_should_ignore_paths_in_strings_comments_and_unit_tests(self):
        status, out = self.run_script({
            "src/lib.rs": "mod a;\nmod b;\n",
            "src/a.rs": """\
                // use crate::b::Bee;
                /* outer /* nested */ crate::b::Bee */
                pub const TEXT: &str = r#"use crate::b::Bee; "quoted""#;
                pub struct Ay;
                #[cfg(test)]
                mod tests {
                    const BRACE: &str = "}";
                    use crate::b::Bee;
                }
                """,
            "src/b.rs": "pub struct Bee(crate::a::Ay);\n",
        }, "src")
        self.assertEqual(status, 0, out)

    def test_use_cycles_should_follow_a_path_attribute(self):
        status, out = self.run_script({
            "src/lib.rs": '#[path = "elsewhere/a_file.rs"]\nmod a;\nmod b;\n',
            "src/elsewhere/a_file.rs": "use crate::b::Bee;\npub struct Ay;\n",
            "src/b.rs": "pub struct Bee(crate::a::Ay);\n",
        }, "src")
        self.assertEqual(status, 1, out)
        self.assertIn("src/elsewhere/a_file.rs -> src/b.rs", out)

    def test_use_cycles_should_fail_on_a_module_without_a_file(self):
        status, out = self.run_script({"src/lib.rs": "mod gone;\n"}, "src")
        self.assertEqual(status, 2, out)
        self.assertIn("`mod gone;` in src/lib.rs: no src/gone.rs or src/gone/mod.rs", out)

    def test_use_cycles_should_check_every_crate_of_the_workspace_without_arguments(self):
        package = '[package]\nname = "{}"\nversion = "0.1.0"\nedition = "2021"\n'
        workspace = {
            "Cargo.toml": '[workspace]\nmembers = ["one", "two"]\nresolver = "2"\n',
            "one/Cargo.toml": package.format("one"),
            "one/src/lib.rs": "pub fn f() {}\n",
            "one/src/main.rs": "fn main() { one::f() }\n",
            "two/Cargo.toml": package.format("two"),
            "two/src/lib.rs": "mod a;\nmod b;\n",
            "two/src/a.rs": "use crate::b::Bee;\npub struct Ay;\n",
            "two/src/b.rs": "pub struct Bee;\n",
        }
        status, out = self.run_script(workspace)
        self.assertEqual(status, 0, out)
        self.assertIn("no use cycles in 3 crates: one/src/lib.rs, one/src/main.rs, two/src/lib.rs", out)
        workspace["two/src/b.rs"] = "pub struct Bee(crate::a::Ay);\n"
        status, out = self.run_script(workspace)
        self.assertEqual(status, 1, out)
        self.assertIn("use cycle in the crate of two/src/lib.rs (2 files):", out)


if __name__ == "__main__":
    unittest.main()
