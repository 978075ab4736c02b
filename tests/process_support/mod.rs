//! Starting the real `ferrvault-operator` binary in tests: spawn with piped output, wait for a
//! log line, probe it over HTTP, send SIGTERM, wait for the exit — every wait bounded, every
//! failure showing the process's output.
#![allow(dead_code)] // Each test crate that includes this module uses a different part of it.

use std::{
    io::{BufRead, BufReader},
    net::SocketAddr,
    path::PathBuf,
    process::{Child, Command, ExitStatus, Stdio},
    sync::{Arc, Mutex},
    time::{Duration, Instant},
};

/// The binary under test.
pub fn binary() -> PathBuf {
    PathBuf::from(env!("CARGO_BIN_EXE_ferrvault-operator"))
}

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

    /// Where the servers listen, from the `http servers listening` JSON log line.
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

    /// Sends SIGTERM.
    pub fn sigterm(&self) {
        let status = Command::new("kill")
            .args(["-TERM", &self.child.id().to_string()])
            .status()
            .expect("kill runs");
        assert!(status.success(), "kill -TERM failed");
    }

    /// Sends SIGKILL (a crash: no shutdown code runs).
    pub fn sigkill(&self) {
        let status = Command::new("kill")
            .args(["-KILL", &self.child.id().to_string()])
            .status()
            .expect("kill runs");
        assert!(status.success(), "kill -KILL failed");
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

/// The servers' addresses as logged at startup.
#[derive(Debug, Clone, Copy)]
pub struct Addresses {
    /// `/metrics`.
    pub metrics: SocketAddr,
    /// `/healthz`, `/readyz`.
    pub probes: SocketAddr,
    /// `/debug/*`, when enabled.
    pub admin: Option<SocketAddr>,
}

/// A plain-HTTP client (reqwest needs a crypto provider even for http://).
pub fn http() -> reqwest::Client {
    // Another test in this process may have installed it already: the same provider either way.
    let _ = rustls::crypto::ring::default_provider().install_default();
    reqwest::Client::builder()
        .timeout(Duration::from_secs(10))
        .build()
        .expect("reqwest client builds")
}

/// `method url` → (status, body).
pub async fn call(method: reqwest::Method, url: &str) -> (u16, String) {
    let response = http()
        .request(method, url)
        .send()
        .await
        .unwrap_or_else(|error| panic!("{url}: {error}"));
    let status = response.status().as_u16();
    (status, response.text().await.expect("a text body"))
}

/// `GET url` → (status, body).
pub async fn get(url: &str) -> (u16, String) {
    call(reqwest::Method::GET, url).await
}

/// Polls `GET url` until it answers 200, up to `within` (refused connections count as "not
/// yet": the process may still be starting); returns the body.
///
/// # Panics
/// With the last answer when it never does.
pub async fn wait_for_200(url: &str, within: Duration) -> String {
    let deadline = Instant::now() + within;
    loop {
        let last = match http().get(url).send().await {
            Ok(response) if response.status() == 200 => {
                return response.text().await.expect("a text body");
            }
            Ok(response) => format!(
                "{}: {}",
                response.status(),
                response.text().await.unwrap_or_default()
            ),
            Err(error) => error.to_string(),
        };
        assert!(
            Instant::now() < deadline,
            "{url} did not answer 200 within {within:?}; last answer:\n{last}"
        );
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
}

/// A currently free port on 127.0.0.1 (bound then released).
pub fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .and_then(|listener| listener.local_addr())
        .expect("bind 127.0.0.1:0")
        .port()
}

/// `.tools/bin/promtool` (from `bash .ci/install-tools`), else `promtool` on the PATH.
pub fn promtool() -> PathBuf {
    let local = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join(".tools/bin/promtool");
    if local.exists() {
        local
    } else {
        PathBuf::from("promtool")
    }
}

/// Runs `promtool check metrics` on `scrape`; `Err` with promtool's output when it complains.
pub fn promtool_check_metrics(scrape: &str) -> Result<(), String> {
    use std::io::Write;
    let mut child = Command::new(promtool())
        .args(["check", "metrics"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("promtool is installed: run bash .ci/install-tools");
    child
        .stdin
        .take()
        .expect("stdin is piped")
        .write_all(scrape.as_bytes())
        .expect("write the scrape to promtool");
    let output = child.wait_with_output().expect("promtool finishes");
    let said = format!(
        "{}{}",
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    );
    if output.status.success() && said.trim().is_empty() {
        Ok(())
    } else {
        Err(said)
    }
}
