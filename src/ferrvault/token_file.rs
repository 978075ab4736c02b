//! Reading the projected ServiceAccount token file: bounded in size, in time and in file type.
//!
//! # Guarantees
//! - Only a regular file is read, judged on the opened descriptor (`fstat`), so a path that is
//!   swapped for a FIFO or a device between a check and the read is still refused. Opening never
//!   waits: `O_NONBLOCK` makes the open of a FIFO without a writer return at once.
//! - A file larger than [`MAX_TOKEN_BYTES`] is refused without being read, and no more than that
//!   is ever read from one that grows meanwhile.
//! - The read ends by [`READ_TIMEOUT`] or the caller's deadline, whichever comes first.
//! - Errors name the path and the problem, never a byte of the content.
//!
//! # Caveats
//! A read stuck in the kernel (a hung network filesystem) cannot be interrupted: the caller
//! gets its error at the deadline, the blocking thread returns whenever the kernel lets it.

use std::{
    fs::OpenOptions,
    io::Read,
    os::unix::fs::{FileTypeExt, OpenOptionsExt},
    path::{Path, PathBuf},
    time::Duration,
};

use tokio::time::Instant;

use super::FerrVaultError;

/// Largest token file read. A projected ServiceAccount token (a JWT) is 1–2 KiB.
pub(super) const MAX_TOKEN_BYTES: u64 = 64 * 1024;

/// Longest one read may take; a local or tmpfs file takes microseconds.
pub(super) const READ_TIMEOUT: Duration = Duration::from_secs(2);

/// The trimmed content of the token file at `path`.
///
/// # Errors
/// [`FerrVaultError::TokenFile`] when the file cannot be opened, is not a regular file, is larger
/// than [`MAX_TOKEN_BYTES`], is not UTF-8, is empty, or is not read by the deadline.
pub(crate) async fn read_token(path: &Path, deadline: Instant) -> Result<String, FerrVaultError> {
    let owned: PathBuf = path.to_owned();
    let until = deadline.min(Instant::now() + READ_TIMEOUT);
    blocking_until(until, move || read_blocking(&owned))
        .await
        .map_err(|why| FerrVaultError::TokenFile {
            path: path.display().to_string(),
            why,
        })
}

/// Runs `read` on the blocking pool; gives up waiting for it at `until`.
async fn blocking_until(
    until: Instant,
    read: impl FnOnce() -> Result<String, String> + Send + 'static,
) -> Result<String, String> {
    match tokio::time::timeout_at(until, tokio::task::spawn_blocking(read)).await {
        Ok(Ok(result)) => result,
        Ok(Err(join)) => Err(format!("the read did not complete: {join}")),
        Err(_) => Err(format!(
            "the read did not finish in time (at most {READ_TIMEOUT:?}, within the reconcile's deadline)"
        )),
    }
}

fn read_blocking(path: &Path) -> Result<String, String> {
    let file = OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NONBLOCK | libc::O_CLOEXEC)
        .open(path)
        .map_err(|e| e.kind().to_string())?;
    let metadata = file.metadata().map_err(|e| e.kind().to_string())?;
    let kind = metadata.file_type();
    if !kind.is_file() {
        let what = if kind.is_fifo() {
            "a FIFO"
        } else if kind.is_char_device() || kind.is_block_device() {
            "a device"
        } else if kind.is_dir() {
            "a directory"
        } else {
            "not a regular file"
        };
        return Err(format!("{what}, not a regular file: refused without reading"));
    }
    if metadata.len() > MAX_TOKEN_BYTES {
        return Err(format!(
            "{} bytes, over the {MAX_TOKEN_BYTES}-byte limit of a token file: refused without reading",
            metadata.len()
        ));
    }
    let mut bytes = Vec::new();
    file.take(MAX_TOKEN_BYTES + 1)
        .read_to_end(&mut bytes)
        .map_err(|e| e.kind().to_string())?;
    if bytes.len() as u64 > MAX_TOKEN_BYTES {
        return Err(format!(
            "grew over the {MAX_TOKEN_BYTES}-byte limit while being read"
        ));
    }
    let text = String::from_utf8(bytes).map_err(|_| "the file is not UTF-8".to_owned())?;
    let token = text.trim();
    if token.is_empty() {
        return Err("the file is empty".into());
    }
    Ok(token.to_owned())
}

#[cfg(test)]
mod tests {
    use std::{ffi::CString, os::unix::ffi::OsStrExt};

    use super::*;

    fn soon() -> Instant {
        Instant::now() + Duration::from_secs(10)
    }

    async fn refusal(path: &Path) -> String {
        match read_token(path, soon()).await {
            Err(FerrVaultError::TokenFile { why, .. }) => why,
            other => panic!("{} should be refused, got {other:?}", path.display()),
        }
    }

    #[tokio::test]
    async fn a_regular_file_should_be_read_and_trimmed() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("token");
        std::fs::write(&path, "  eyJ.token.sig\n").unwrap();
        assert_eq!(read_token(&path, soon()).await.unwrap(), "eyJ.token.sig");
    }

    #[tokio::test]
    async fn dev_zero_should_be_refused_without_reading() {
        assert!(refusal(Path::new("/dev/zero")).await.contains("a device"));
    }

    #[tokio::test]
    async fn a_fifo_without_writer_should_be_refused_at_once_not_waited_for() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("fifo");
        let c_path = CString::new(path.as_os_str().as_bytes()).unwrap();
        // SAFETY: a valid NUL-terminated path; mkfifo only creates a file system node.
        assert_eq!(unsafe { libc::mkfifo(c_path.as_ptr(), 0o600) }, 0, "mkfifo");
        let _release = ReleaseBlockedReader(&path);
        let started = std::time::Instant::now();
        let why = refusal(&path).await;
        assert!(why.contains("a FIFO"), "{why}");
        assert!(
            started.elapsed() < READ_TIMEOUT,
            "the open must not wait for a writer"
        );
    }

    /// When dropped, opens the FIFO for writing without waiting, which releases a reader stuck
    /// in `open` (only if the protection under test failed): the test then fails, not hangs.
    struct ReleaseBlockedReader<'a>(&'a Path);

    impl Drop for ReleaseBlockedReader<'_> {
        fn drop(&mut self) {
            let _ = OpenOptions::new()
                .write(true)
                .custom_flags(libc::O_NONBLOCK)
                .open(self.0);
        }
    }

    #[tokio::test]
    async fn a_one_gib_file_should_be_refused_by_its_size() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("huge");
        std::fs::File::create(&path).unwrap().set_len(1 << 30).unwrap(); // sparse
        let why = refusal(&path).await;
        assert!(why.contains("1073741824 bytes") && why.contains("limit"), "{why}");
    }

    #[tokio::test]
    async fn missing_empty_directory_and_binary_files_should_be_refused_naming_no_content() {
        let dir = tempfile::tempdir().unwrap();
        assert!(refusal(&dir.path().join("absent")).await.contains("not found"));
        assert!(refusal(dir.path()).await.contains("directory"));
        let empty = dir.path().join("empty");
        std::fs::write(&empty, " \n").unwrap();
        assert!(refusal(&empty).await.contains("empty"));
        let binary = dir.path().join("binary");
        std::fs::write(&binary, b"SECRET-MARKER\xff\xfe").unwrap();
        let error = read_token(&binary, soon()).await.unwrap_err();
        assert!(error.to_string().contains("not UTF-8"), "{error}");
        assert!(!format!("{error} {error:?}").contains("SECRET-MARKER"));
    }

    #[tokio::test]
    async fn a_read_that_hangs_should_end_at_the_deadline() {
        let started = std::time::Instant::now();
        let until = Instant::now() + Duration::from_millis(100);
        let outcome = blocking_until(until, || {
            std::thread::sleep(Duration::from_secs(1)); // a hung file system
            Ok("late".into())
        })
        .await;
        assert!(outcome.unwrap_err().contains("in time"));
        assert!(
            started.elapsed() < Duration::from_millis(800),
            "{:?}",
            started.elapsed()
        );
    }
}
