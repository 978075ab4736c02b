"""`.ci/slowest-tests` on small JUnit reports shaped like nextest's (Jenkins format: one testsuite
per test binary, one testcase per test). Run: `python3 -m unittest discover .ci/tests`.
"""
import os
import subprocess
import tempfile
import unittest

SCRIPT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "slowest-tests")

REPORT = """<?xml version="1.0" encoding="UTF-8"?>
<testsuites name="nextest-run" tests="5" failures="1" errors="0">
  <testsuite name="ferrvault-operator::process" tests="3">
    <testcase name="probes::fast" classname="ferrvault-operator::process" time="0.250"/>
    <testcase name="leaks::slow" classname="ferrvault-operator::process" time="42.125">
      <failure type="test failure" message="assertion failed">output</failure>
    </testcase>
    <testcase name="ignored" classname="ferrvault-operator::process" time="0.000"><skipped/></testcase>
  </testsuite>
  <testsuite name="ferrvault-sim::kube" tests="2">
    <testcase name="scale::ten_thousand" classname="ferrvault-sim::kube" time="12.961"/>
    <testcase name="watch::retried" classname="ferrvault-sim::kube" time="3.500">
      <flakyFailure type="test failure" message="first attempt">output</flakyFailure>
    </testcase>
  </testsuite>
</testsuites>
"""


class SlowestTests(unittest.TestCase):
    def run_script(self, *args):
        done = subprocess.run([SCRIPT, *args], capture_output=True, text=True, check=False)
        return done.returncode, done.stdout + done.stderr

    def test_slowest_tests_should_list_the_slowest_first_with_failures_marked(self):
        with tempfile.TemporaryDirectory() as root:
            report = os.path.join(root, "junit.xml")
            with open(report, "w", encoding="utf-8") as out:
                out.write(REPORT)
            status, out = self.run_script(report, "3")
        self.assertEqual(status, 0, out)
        lines = out.splitlines()
        self.assertEqual(lines[0], f"The 3 slowest of 4 tests (every timing: {report}):")
        self.assertEqual(lines[1].split(), ["42.125s", "ferrvault-operator::process", "leaks::slow", "(FAILED)"])
        self.assertEqual(lines[2].split(), ["12.961s", "ferrvault-sim::kube", "scale::ten_thousand"])
        self.assertEqual(lines[3].split(), ["3.500s", "ferrvault-sim::kube", "watch::retried", "(flaky)"])
        self.assertEqual(len(lines), 4, out)

    def test_slowest_tests_should_say_when_the_tests_did_not_run(self):
        status, out = self.run_script("/nonexistent/junit.xml")
        self.assertEqual(status, 0, out)
        self.assertIn("No per-test timings: /nonexistent/junit.xml was not written", out)


if __name__ == "__main__":
    unittest.main()
