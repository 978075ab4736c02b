//! A child process with its stdout and stderr lines collected as they arrive: wait for a line,
//! send a signal, wait for the exit; every wait bounded, every failure showing the output.

use std::{
    io::{BufRead, BufReader},
    net::SocketAddr,
    process::{Child, Command, ExitStatus, Stdio},
    sync::{Arc, Mutex},
    time::{Duration, Instant},
};

/// A running binary whose stdout and stderr lines are collected as they arrive.
pub struct Spawned {
    child: Child,
    output: Arc<Mutex<Vec<String>>>,
}

impl Spawned {
    /// Spawns `command` with stdout and stderr piped into the collected output.
    pub fn start(mut command: Command) -> Self {
        let mut child = command
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap_or_else(|error| panic!("cannot start {command:?}: {error}"));
        let output = Arc::new(Mutex::new(Vec::new()));
        let stdout = child.stdout.take().expect("stdout is piped");
        let stderr = child.stderr.take().expect("stderr is piped");
        for pipe in [
            Box::new(stdout) as Box<dyn std::io::Read + Send>,
            Box::new(stderr),
        ] {
            let output = output.clone();
            std::thread::spawn(move || {
                for line in BufReader::new(pipe).lines().map_while(Result::ok) {
                    output.lock().expect("output lock").push(line);
                }
            });
        }
        Self { child, output }
    }

    /// The process id (for `/proc/<pid>/…` readings and signals).
    pub fn pid(&self) -> u32 {
        self.child.id()
    }

    /// Everything printed so far.
    pub fn output(&self) -> String {
        self.output.lock().expect("output lock").join("\n")
    }

    /// The first line containing `needle`, waiting up to `within`.
    ///
    /// # Panics
    /// When no such line appears in time, or the process exits first, with the output.
    pub fn wait_for_line(&mut self, needle: &str, within: Duration) -> String {
        let deadline = Instant::now() + within;
        loop {
            if let Some(line) = self
                .output
                .lock()
                .expect("output lock")
                .iter()
                .find(|line| line.contains(needle))
            {
                return line.clone();
            }
            if let Ok(Some(status)) = self.child.try_wait() {
                std::thread::sleep(Duration::from_millis(100)); // let the readers drain the pipes
                panic!("exited ({status}) before printing {needle:?}:\n{}", self.output());
            }
            assert!(
                Instant::now() < deadline,
                "no line with {needle:?} within {within:?}:\n{}",
                self.output()
            );
            std::thread::sleep(Duration::from_millis(50));
        }
    }

    /// Sends SIGTERM.
    pub fn sigterm(&self) {
        self.signal("TERM");
    }

    /// Sends SIGKILL (a crash: no shutdown code runs).
    pub fn sigkill(&self) {
        self.signal("KILL");
    }

    /// Sends SIGSTOP: the process freezes as in a long GC pause or a frozen VM; its clocks run
    /// on, its sockets buffer what arrives.
    pub fn sigstop(&self) {
        self.signal("STOP");
    }

    /// Sends SIGCONT: a stopped process runs again.
    pub fn sigcont(&self) {
        self.signal("CONT");
    }

    fn signal(&self, name: &str) {
        let status = Command::new("kill")
            .args([&format!("-{name}"), &self.pid().to_string()])
            .status()
            .expect("kill runs");
        assert!(status.success(), "kill -{name} failed");
    }

    /// Whether the process is still running.
    pub fn running(&mut self) -> bool {
        matches!(self.child.try_wait(), Ok(None))
    }

    /// Waits up to `within` for the process to exit.
    ///
    /// # Panics
    /// When it is still running then, with its output.
    pub fn wait_exit(&mut self, within: Duration) -> ExitStatus {
        let deadline = Instant::now() + within;
        loop {
            if let Some(status) = self.child.try_wait().expect("try_wait") {
                std::thread::sleep(Duration::from_millis(100)); // let the readers drain the pipes
                return status;
            }
            assert!(
                Instant::now() < deadline,
                "still running after {within:?}:\n{}",
                self.output()
            );
            std::thread::sleep(Duration::from_millis(50));
        }
    }
}

impl Drop for Spawned {
    fn drop(&mut self) {
        // Already exited in a passing test; on a failing one, do not leave the process behind.
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// The operator's servers' addresses as logged at startup.
#[derive(Debug, Clone, Copy)]
pub struct Addresses {
    /// `/metrics`.
    pub metrics: SocketAddr,
    /// `/healthz`, `/readyz`.
    pub probes: SocketAddr,
    /// `/debug/*`, when enabled.
    pub admin: Option<SocketAddr>,
}

impl Spawned {
    /// Where a started `ferrvault-operator run` listens, from its `http servers listening` JSON
    /// log line (waiting up to 30 s for it).
    ///
    /// # Panics
    /// When the line does not come or does not parse.
    pub fn addresses(&mut self) -> Addresses {
        let line = self.wait_for_line("http servers listening", Duration::from_secs(30));
        let json: serde_json::Value = serde_json::from_str(&line)
            .unwrap_or_else(|error| panic!("not a JSON log line ({error}): {line}"));
        let addr = |field: &str| json[field].as_str().and_then(|a| a.parse::<SocketAddr>().ok());
        Addresses {
            metrics: addr("metrics").unwrap_or_else(|| panic!("no metrics address in {line}")),
            probes: addr("probes").unwrap_or_else(|| panic!("no probes address in {line}")),
            admin: addr("admin"),
        }
    }
}
