//! Every log line of the test process, captured into one buffer for the leak scan.

use std::{
    io::Write,
    sync::{Arc, Mutex, OnceLock},
};

/// A tracing subscriber writing every log line of this process into one buffer.
#[derive(Clone, Default)]
pub(super) struct LogBuffer(Arc<Mutex<Vec<u8>>>);

impl Write for LogBuffer {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.0.lock().unwrap().extend_from_slice(buf);
        Ok(buf.len())
    }
    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

pub(super) fn logs() -> &'static LogBuffer {
    static LOGS: OnceLock<LogBuffer> = OnceLock::new();
    LOGS.get_or_init(|| {
        let buffer = LogBuffer::default();
        let writer = buffer.clone();
        let subscriber = tracing_subscriber::fmt()
            .with_env_filter("ferrvault_operator=trace,controller_actors=debug,kube=debug,info")
            .with_writer(move || writer.clone())
            .with_ansi(false)
            .finish();
        // Another test in this process may have installed it first; then we still own `buffer`
        // only if ours won, so fall back to an empty buffer's guarantees being checked by the
        // non-empty assertion in `assert_no_leaks`.
        let _ = tracing::subscriber::set_global_default(subscriber);
        buffer
    })
}

impl LogBuffer {
    /// Everything logged so far, as text.
    pub(super) fn text(&self) -> String {
        String::from_utf8_lossy(&self.0.lock().unwrap()).into_owned()
    }
}
