//! kubectl (the real binary, first on PATH: `.tools/bin` has the version CI uses) bound to
//! one simulator through its own kubeconfig and discovery cache.

use crate::kube_sim_support::within;
use ferrvault_sim::kube::KubeSim;
use std::{path::PathBuf, process::Stdio};
use tokio::process::{Child, Command};

/// `kubectl create role reader`: get and list Secrets in namespace `team-a`.
pub const CREATE_SECRET_READER: &[&str] = &[
    "create",
    "role",
    "reader",
    "-n",
    "team-a",
    "--verb=get,list",
    "--resource=secrets",
];

/// `kubectl create rolebinding bot-reads`: role `reader` for ServiceAccount `team-a:bot`.
pub const BIND_READER_TO_BOT: &[&str] = &[
    "create",
    "rolebinding",
    "bot-reads",
    "-n",
    "team-a",
    "--role=reader",
    "--serviceaccount=team-a:bot",
];

/// kubectl bound to one simulator through its own kubeconfig and discovery cache.
pub struct Kubectl {
    dir: tempfile::TempDir,
}

impl Kubectl {
    pub fn new(sim: &KubeSim) -> Self {
        let dir = tempfile::tempdir().expect("temp dir");
        sim.write_kubeconfig(&dir.path().join("kubeconfig"))
            .expect("kubeconfig written");
        Kubectl { dir }
    }

    pub fn command(&self, args: &[&str]) -> Command {
        let mut cmd = Command::new("kubectl");
        cmd.arg("--kubeconfig").arg(self.dir.path().join("kubeconfig"));
        cmd.arg("--cache-dir").arg(self.dir.path().join("cache"));
        cmd.args(args).stdin(Stdio::null()).kill_on_drop(true);
        cmd
    }

    /// Writes `content` to a file in the temp dir and returns its path.
    pub fn file(&self, name: &str, content: &str) -> PathBuf {
        let path = self.dir.path().join(name);
        std::fs::write(&path, content).expect("manifest written");
        path
    }

    pub async fn run(&self, args: &[&str]) -> std::process::Output {
        let out = self.command(args).output();
        within(&format!("kubectl {args:?}"), out)
            .await
            .expect("kubectl runs (is it installed?)")
    }

    /// Runs kubectl, asserts success and returns stdout.
    pub async fn ok(&self, args: &[&str]) -> String {
        let out = self.run(args).await;
        let (stdout, stderr) = (
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr),
        );
        assert!(
            out.status.success(),
            "kubectl {args:?} failed: {stderr}\nstdout: {stdout}"
        );
        stdout.into_owned()
    }

    /// `kubectl patch widget <name> <extra…> --type <patch_type> -p <patch>`, asserting success.
    pub async fn patch_widget(&self, name: &str, extra: &[&str], patch_type: &str, patch: &str) -> String {
        let mut args = vec!["patch", "widget", name];
        args.extend_from_slice(extra);
        args.extend(["--type", patch_type, "-p", patch]);
        self.ok(&args).await
    }

    /// Runs kubectl, asserts failure and returns stderr.
    pub async fn fails(&self, args: &[&str]) -> String {
        let out = self.run(args).await;
        assert!(
            !out.status.success(),
            "kubectl {args:?} should fail; stdout: {}",
            String::from_utf8_lossy(&out.stdout)
        );
        String::from_utf8_lossy(&out.stderr).into_owned()
    }

    pub fn spawn(&self, args: &[&str]) -> Child {
        self.command(args)
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("kubectl starts")
    }
}
