//! A child process the benchmarks launch: `ferrvault-operator run` or the plain-Controller
//! worker, with its output collected (the last lines kept for error messages), its resource use
//! read from `/proc`, and signals sent by pid.

use std::{
    collections::VecDeque,
    io::{BufRead, BufReader},
    path::{Path, PathBuf},
    process::{Child, Command, ExitStatus, Stdio},
    sync::{Arc, Mutex},
    time::Duration,
};

use tokio::time::Instant;

use ferrvault_testkit::proc_stats::{self, ProcStats};

/// Output lines kept per child (older lines are dropped; only the tail is shown on errors).
const KEPT_LINES: usize = 400;

/// A launched child; killed (SIGKILL) and reaped when dropped.
pub struct Spawned {
    child: Child,
    lines: Arc<Mutex<VecDeque<String>>>,
    /// When `spawn` returned.
    pub started: Instant,
}

/// The operator binary to launch: `explicit`, else `ferrvault-operator` beside this executable
/// (cargo builds every binary of the workspace into the same folder).
///
/// # Errors
/// The path of the running executable is unknown, or the operator was not built beside it.
pub fn operator_binary(explicit: Option<&Path>) -> Result<PathBuf, String> {
    if let Some(path) = explicit {
        return Ok(path.to_owned());
    }
    let sibling = this_executable()?.with_file_name("ferrvault-operator");
    if sibling.is_file() {
        Ok(sibling)
    } else {
        Err(format!(
            "{} not found: build it first with the same profile (`cargo build --release -p ferrvault-operator`)",
            sibling.display()
        ))
    }
}

/// The running executable (`ferrvault-dev`, which also hosts the plain-Controller worker).
///
/// # Errors
/// Its path is unknown.
pub fn this_executable() -> Result<PathBuf, String> {
    std::env::current_exe().map_err(|e| format!("cannot locate this executable: {e}"))
}

impl Spawned {
    /// Starts `binary args…` with `env` added, stdout and stderr collected.
    ///
    /// # Errors
    /// The process could not be started.
    pub fn start(binary: &Path, args: &[String], env: &[(&str, String)]) -> Result<Self, String> {
        let mut command = Command::new(binary);
        command
            .args(args)
            .envs(env.iter().map(|(k, v)| (*k, v)))
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        let mut child = command
            .spawn()
            .map_err(|e| format!("cannot start {}: {e}", binary.display()))?;
        let lines = Arc::new(Mutex::new(VecDeque::new()));
        let pipes: [Box<dyn std::io::Read + Send>; 2] = [
            Box::new(child.stdout.take().expect("stdout is piped")),
            Box::new(child.stderr.take().expect("stderr is piped")),
        ];
        for pipe in pipes {
            let lines = lines.clone();
            std::thread::spawn(move || {
                for line in BufReader::new(pipe).lines().map_while(Result::ok) {
                    let mut lines = lines.lock().expect("output lock");
                    if lines.len() == KEPT_LINES {
                        lines.pop_front();
                    }
                    lines.push_back(line);
                }
            });
        }
        Ok(Self {
            child,
            lines,
            started: Instant::now(),
        })
    }

    /// The process id.
    pub fn pid(&self) -> u32 {
        self.child.id()
    }

    /// The last lines the child printed.
    pub fn tail(&self) -> String {
        let lines = self.lines.lock().expect("output lock");
        let skip = lines.len().saturating_sub(30);
        lines.iter().skip(skip).cloned().collect::<Vec<_>>().join("\n")
    }

    /// The most recent kept line containing `needle`.
    pub fn last_line_containing(&self, needle: &str) -> Option<String> {
        let lines = self.lines.lock().expect("output lock");
        lines.iter().rev().find(|line| line.contains(needle)).cloned()
    }

    /// Waits up to `within` for a line containing `needle` and returns it.
    ///
    /// # Errors
    /// The child exited first or nothing matched in time; the message holds the output's tail.
    pub async fn wait_for_line(&mut self, needle: &str, within: Duration) -> Result<String, String> {
        let deadline = Instant::now() + within;
        loop {
            let found = self
                .lines
                .lock()
                .expect("output lock")
                .iter()
                .find(|line| line.contains(needle))
                .cloned();
            if let Some(line) = found {
                return Ok(line);
            }
            if let Ok(Some(status)) = self.child.try_wait() {
                return Err(format!(
                    "exited ({status}) before printing {needle:?}:\n{}",
                    self.tail()
                ));
            }
            if Instant::now() >= deadline {
                return Err(format!("no {needle:?} within {within:?}:\n{}", self.tail()));
            }
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    }

    /// How the process ended, or `None` while it runs.
    pub fn exit_status(&mut self) -> Option<ExitStatus> {
        self.child.try_wait().ok().flatten()
    }

    /// Memory and CPU so far; `None` once the process has exited.
    pub fn stats(&self) -> Option<ProcStats> {
        proc_stats::sample(self.pid())
    }

    /// Sends SIGTERM (graceful stop).
    ///
    /// # Errors
    /// `kill` could not be run or refused.
    pub fn sigterm(&self) -> Result<(), String> {
        let status = Command::new("kill")
            .args(["-TERM", &self.pid().to_string()])
            .status()
            .map_err(|e| format!("kill -TERM: {e}"))?;
        status
            .success()
            .then_some(())
            .ok_or_else(|| format!("kill -TERM {} failed", self.pid()))
    }

    /// Sends SIGKILL.
    pub fn sigkill(&mut self) {
        // An error means the process already exited, which is what SIGKILL is for.
        let _ = self.child.kill();
    }

    /// Waits up to `within` for the process to exit.
    ///
    /// # Errors
    /// It is still running then (it is left running; dropping kills it).
    pub async fn wait_exit(&mut self, within: Duration) -> Result<(), String> {
        let deadline = Instant::now() + within;
        while Instant::now() < deadline {
            if let Ok(Some(_)) = self.child.try_wait() {
                return Ok(());
            }
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
        Err(format!("pid {} still running after {within:?}", self.pid()))
    }

    /// SIGTERM, then SIGKILL if it has not exited within `grace`.
    pub async fn stop(&mut self, grace: Duration) {
        if self.sigterm().is_err() || self.wait_exit(grace).await.is_err() {
            self.sigkill();
            let _ = self.child.wait();
        }
    }
}

impl Drop for Spawned {
    fn drop(&mut self) {
        // Already exited after `stop`; otherwise never leave a benchmark process behind.
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}
