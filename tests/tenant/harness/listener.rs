//! A listener the attacker controls: a raw TCP server on 127.0.0.1 that records every byte it
//! receives, on every connection, and answers each HTTP request with a scripted reply (a
//! healthy FerrVault's `200`, a redirect elsewhere, a hostile FerrVault serving the values
//! the attacker chose, or bodies of many megabytes written as they are generated, so the test
//! process never holds one whole).

use std::{
    sync::{
        Arc, Mutex,
        atomic::{AtomicUsize, Ordering},
    },
    time::Duration,
};

use tokio::{
    io::{AsyncReadExt, AsyncWriteExt},
    net::{TcpListener, TcpStream},
};

/// How the listener answers each request.
#[derive(Clone, Debug)]
pub enum Answer {
    /// `200 {"status":"ok"}`, like a FerrVault's `/healthz`.
    Ok,
    /// `307 Temporary Redirect` to this base URL plus the request's path: a 307 keeps the method
    /// and the body, so a client that followed it would re-send a POSTed token there.
    RedirectTo(String),
    /// A FerrVault of the attacker's (ferrvault mode): `200` to every request, and to a reveal
    /// (`POST /operator/secrets/reveal`) the hits `values`. With `rotating`, every value ends in
    /// the current Unix second, so the content changes every second.
    Vault {
        values: Vec<(String, String)>,
        rotating: bool,
    },
    /// Every request, the probe included, answered with `status` and `body`.
    Raw { status: u16, body: Generated },
    /// A FerrVault of the attacker's (ferrvault mode) revealing `values`, whose `list`
    /// (`GET /operator/secrets/list`) answers `200` with `list`.
    Listing {
        values: Vec<(String, String)>,
        list: Generated,
    },
    /// A FerrVault of the attacker's (either mode) whose probe is healthy and whose reveals
    /// are answered `200` with `body`.
    Reveal(Generated),
    /// A FerrVault of the attacker's whose probe is healthy and whose `GET /operator/me` is
    /// answered `200` with `body` (issue 38: `me` is tenant-controlled server output).
    Me(Generated),
    /// A FerrVault of the attacker's whose `GET /operator/me` is answered `200` and then one
    /// byte of body every [`TRICKLE_EVERY`], for at most [`TRICKLE_FOR`]: a server too slow to
    /// ever finish.
    SlowMe,
}

/// The pause between two bytes of an [`Answer::SlowMe`] body.
pub const TRICKLE_EVERY: Duration = Duration::from_millis(200);
/// How long an [`Answer::SlowMe`] body trickles before the listener gives up.
pub const TRICKLE_FOR: Duration = Duration::from_secs(60);

/// The path of `me`.
pub const ME_PATH: &str = "/operator/me";

/// A body written as it is generated, chunk by chunk (`transfer-encoding: chunked`): `head`,
/// then `count` items separated by commas, then `tail`.
#[derive(Clone, Debug)]
pub struct Generated {
    head: &'static str,
    /// Appends item `i` to the buffer.
    item: fn(usize, &mut String),
    count: usize,
    tail: &'static str,
}

impl Generated {
    /// `[0,0,…,0]` of at most `bytes` bytes: cheap to send, and over 100 MiB as a generic JSON
    /// tree.
    pub fn zeros(bytes: usize) -> Generated {
        Generated {
            head: "[",
            item: |_, out| out.push('0'),
            count: bytes.saturating_sub(1) / 2,
            tail: "]",
        }
    }

    /// A `list` answer of `count` names `K<i>`, each at version 1 and changed at the start of
    /// year 9999 (a time far in the future).
    pub fn listing(count: usize) -> Generated {
        Generated {
            head: "[",
            item: |i, out| {
                out.push_str(&format!(
                    r#"{{"name":"K{i}","version":1,"updated_at":"9999-01-01T00:00:00Z"}}"#
                ));
            },
            count,
            tail: "]",
        }
    }

    /// A ferrvault-mode reveal answer of `count` hits `{"name":"K<i>","value":""}`.
    pub fn hits(count: usize) -> Generated {
        Generated {
            head: r#"{"hits":["#,
            item: |i, out| out.push_str(&format!(r#"{{"name":"K{i}","value":""}}"#)),
            count,
            tail: "]}",
        }
    }

    /// A cloud-mode reveal answer of `count` secrets `"K<i>": ""`.
    pub fn secrets(count: usize) -> Generated {
        Generated {
            head: r#"{"secrets":{"#,
            item: |i, out| out.push_str(&format!(r#""K{i}":"""#)),
            count,
            tail: "}}",
        }
    }

    /// A ferrvault-mode reveal answer of one hit `FOUND` and `count` missing names `M<i>`
    /// (zero-padded to six digits, so they sort as they are numbered).
    pub fn missing(count: usize) -> Generated {
        Generated {
            head: r#"{"hits":[{"name":"FOUND","value":"found"}],"missing":["#,
            item: |i, out| out.push_str(&format!(r#""M{i:06}""#)),
            count,
            tail: "]}",
        }
    }

    /// `{"vaultSlug":` and `depth` opening brackets, never closed: within the `me` bound, and
    /// no `me` answer (nor JSON) at all.
    pub fn nested(depth: usize) -> Generated {
        Generated {
            head: r#"{"vaultSlug":"#,
            item: |_, out| out.push('['),
            count: depth,
            tail: "",
        }
    }

    /// A ferrvault-mode reveal answer of one hit `LARGE` whose value is about `bytes` bytes of
    /// `x` (commas between the generated items, inside the string).
    pub fn value(bytes: usize) -> Generated {
        Generated {
            head: r#"{"hits":[{"name":"LARGE","value":""#,
            item: |_, out| out.extend(std::iter::repeat_n('x', 1023)),
            count: bytes / 1024,
            tail: r#""}]}"#,
        }
    }

    /// Writes the body as HTTP/1.1 chunks of about 64 KiB, then the last chunk.
    async fn write_to(&self, stream: &mut TcpStream) -> std::io::Result<()> {
        let mut chunk = String::from(self.head);
        for i in 0..self.count {
            if i > 0 {
                chunk.push(',');
            }
            (self.item)(i, &mut chunk);
            if chunk.len() >= 64 << 10 {
                write_chunk(stream, &chunk).await?;
                chunk.clear();
            }
        }
        chunk.push_str(self.tail);
        write_chunk(stream, &chunk).await?;
        stream.write_all(b"0\r\n\r\n").await
    }
}

async fn write_chunk(stream: &mut TcpStream, chunk: &str) -> std::io::Result<()> {
    stream
        .write_all(format!("{:x}\r\n{chunk}\r\n", chunk.len()).as_bytes())
        .await
}

impl Answer {
    /// A hostile FerrVault always revealing `values`.
    pub fn vault(values: &[(&str, &str)]) -> Answer {
        Answer::Vault {
            values: owned(values),
            rotating: false,
        }
    }

    /// A hostile FerrVault revealing `values` and answering its `list` with `list`.
    pub fn listing(values: &[(&str, &str)], list: Generated) -> Answer {
        Answer::Listing {
            values: owned(values),
            list,
        }
    }

    /// A hostile FerrVault revealing `values`, each with the current Unix second appended.
    pub fn rotating_vault(values: &[(&str, &str)]) -> Answer {
        Answer::Vault {
            values: owned(values),
            rotating: true,
        }
    }
}

fn owned(values: &[(&str, &str)]) -> Vec<(String, String)> {
    values
        .iter()
        .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
        .collect()
}

/// The path of a ferrvault-mode reveal.
pub const REVEAL_PATH: &str = "/operator/secrets/reveal";

/// The path of a ferrvault-mode `list`.
pub const LIST_PATH: &str = "/operator/secrets/list";

/// A running listener; it stops with the test's runtime.
pub struct Listener {
    url: String,
    received: Arc<Mutex<Vec<u8>>>,
    connections: Arc<AtomicUsize>,
}

impl Listener {
    /// Listens on a free port of 127.0.0.1.
    pub async fn start(answer: Answer) -> Listener {
        Self::start_on([127, 0, 0, 1], answer).await
    }

    /// Listens on a free port of `ip` (another loopback address stands for another host).
    pub async fn start_on(ip: [u8; 4], answer: Answer) -> Listener {
        let listener = TcpListener::bind(std::net::SocketAddr::from((ip, 0)))
            .await
            .expect("bind");
        let url = format!("http://{}", listener.local_addr().expect("addr"));
        let received = Arc::new(Mutex::new(Vec::new()));
        let connections = Arc::new(AtomicUsize::new(0));
        let (record, count) = (received.clone(), connections.clone());
        tokio::spawn(async move {
            while let Ok((stream, _)) = listener.accept().await {
                count.fetch_add(1, Ordering::SeqCst);
                tokio::spawn(serve(stream, answer.clone(), record.clone()));
            }
        });
        Listener {
            url,
            received,
            connections,
        }
    }

    /// `http://IP:PORT`.
    pub fn url(&self) -> &str {
        &self.url
    }

    /// Every byte received so far, all connections in arrival order of their reads.
    pub fn received(&self) -> Vec<u8> {
        self.received.lock().expect("record lock").clone()
    }

    /// TCP connections accepted so far.
    pub fn connections(&self) -> usize {
        self.connections.load(Ordering::SeqCst)
    }

    /// Reveal requests received so far.
    pub fn reveals(&self) -> usize {
        String::from_utf8_lossy(&self.received())
            .matches(&format!("POST {REVEAL_PATH} "))
            .count()
    }

    /// Fails, naming `who`, if anything at all connected.
    pub fn assert_untouched(&self, who: &str) {
        assert_eq!(
            (self.connections(), self.received().len()),
            (0, 0),
            "{who} was contacted: {:?}",
            String::from_utf8_lossy(&self.received())
        );
    }

    /// Fails if any of `needles` is in what was received (naming a prefix, never the value).
    pub fn assert_nothing_of(&self, who: &str, needles: &[&str]) {
        let text = String::from_utf8_lossy(&self.received()).into_owned();
        for needle in needles.iter().filter(|n| !n.is_empty()) {
            assert!(
                !text.contains(needle),
                "{who} received a secret ({}…)",
                needle.chars().take(8).collect::<String>()
            );
        }
    }
}

/// Records and answers one connection until the client closes it.
async fn serve(mut stream: TcpStream, answer: Answer, record: Arc<Mutex<Vec<u8>>>) {
    let mut pending = Vec::new();
    let mut buffer = [0u8; 8192];
    loop {
        let read = tokio::time::timeout(Duration::from_secs(10), stream.read(&mut buffer)).await;
        let n = match read {
            Ok(Ok(n)) if n > 0 => n,
            _ => return,
        };
        record
            .lock()
            .expect("record lock")
            .extend_from_slice(&buffer[..n]);
        pending.extend_from_slice(&buffer[..n]);
        while let Some(length) = complete_request(&pending) {
            let request: Vec<u8> = pending.drain(..length).collect();
            let written = match generated(&answer, &request) {
                Some((status, body)) => {
                    let head = format!(
                        "HTTP/1.1 {status} {}\r\ncontent-type: application/json\r\ntransfer-encoding: chunked\r\n\r\n",
                        if status < 400 { "OK" } else { "Error" }
                    );
                    match stream.write_all(head.as_bytes()).await {
                        Ok(()) => body.write_to(&mut stream).await,
                        Err(error) => Err(error),
                    }
                }
                None if matches!(answer, Answer::SlowMe) && path_of(&request) == ME_PATH => {
                    trickle(&mut stream).await
                }
                None => stream.write_all(reply(&answer, &request).as_bytes()).await,
            };
            // The client hung up, possibly mid-body (the operator stops reading where its bound is).
            if written.is_err() {
                return;
            }
        }
    }
}

/// Answers `200` and writes one byte of body every [`TRICKLE_EVERY`] until [`TRICKLE_FOR`]
/// passed or the client hung up.
async fn trickle(stream: &mut TcpStream) -> std::io::Result<()> {
    let head = "HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ntransfer-encoding: chunked\r\n\r\n";
    stream.write_all(head.as_bytes()).await?;
    write_chunk(stream, "{").await?;
    let end = tokio::time::Instant::now() + TRICKLE_FOR;
    while tokio::time::Instant::now() < end {
        tokio::time::sleep(TRICKLE_EVERY).await;
        write_chunk(stream, " ").await?;
    }
    // Given up: the connection is dropped mid-body.
    Err(std::io::ErrorKind::TimedOut.into())
}

/// The length of the first complete request in `bytes` (headers plus `content-length` body).
fn complete_request(bytes: &[u8]) -> Option<usize> {
    let head_end = bytes.windows(4).position(|w| w == b"\r\n\r\n")? + 4;
    let head = String::from_utf8_lossy(&bytes[..head_end]).to_ascii_lowercase();
    let body = head
        .lines()
        .find_map(|line| line.strip_prefix("content-length:"))
        .and_then(|value| value.trim().parse::<usize>().ok())
        .unwrap_or(0);
    (bytes.len() >= head_end + body).then_some(head_end + body)
}

/// The request's path.
fn path_of(request: &[u8]) -> String {
    String::from_utf8_lossy(request)
        .split_whitespace()
        .nth(1)
        .unwrap_or("/")
        .to_owned()
}

/// Whether `path` is a reveal of either mode (`/operator/secrets/reveal`,
/// `/api/v1/orgs/…/secrets/reveal?…`).
fn is_reveal(path: &str) -> bool {
    path.split('?')
        .next()
        .is_some_and(|path| path.ends_with("/secrets/reveal"))
}

/// The status and the generated body `answer` gives `request`, if it gives one.
fn generated<'a>(answer: &'a Answer, request: &[u8]) -> Option<(u16, &'a Generated)> {
    match answer {
        Answer::Raw { status, body } => Some((*status, body)),
        Answer::Reveal(body) if is_reveal(&path_of(request)) => Some((200, body)),
        Answer::Me(body) if path_of(request) == ME_PATH => Some((200, body)),
        Answer::Listing { list, .. } if path_of(request) == LIST_PATH => Some((200, list)),
        Answer::Reveal(_)
        | Answer::Me(_)
        | Answer::SlowMe
        | Answer::Ok
        | Answer::RedirectTo(_)
        | Answer::Vault { .. }
        | Answer::Listing { .. } => None,
    }
}

fn reply(answer: &Answer, request: &[u8]) -> String {
    let path = path_of(request);
    let mut body = r#"{"status":"ok"}"#.to_owned();
    let (status, extra) = match answer {
        // Raw and Reveal answers with a generated body are written by `serve`.
        Answer::Ok | Answer::Raw { .. } | Answer::Reveal(_) | Answer::Me(_) | Answer::SlowMe => {
            ("200 OK", String::new())
        }
        Answer::RedirectTo(base) => ("307 Temporary Redirect", format!("location: {base}{path}\r\n")),
        Answer::Vault { values, rotating } => {
            if path == REVEAL_PATH {
                body = hits(values, *rotating);
            }
            ("200 OK", String::new())
        }
        // The list itself is written by `serve`.
        Answer::Listing { values, .. } => {
            if path == REVEAL_PATH {
                body = hits(values, false);
            }
            ("200 OK", String::new())
        }
    };
    format!(
        "HTTP/1.1 {status}\r\n{extra}content-type: application/json\r\ncontent-length: {}\r\n\r\n{body}",
        body.len()
    )
}

/// A ferrvault-mode reveal answer holding `values` (rotated: the current Unix second appended).
fn hits(values: &[(String, String)], rotating: bool) -> String {
    let second = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .expect("after 1970")
        .as_secs();
    let hits: Vec<serde_json::Value> = values
        .iter()
        .map(|(name, value)| {
            let value = if rotating {
                format!("{value}-{second}")
            } else {
                value.clone()
            };
            serde_json::json!({ "name": name, "value": value })
        })
        .collect();
    serde_json::json!({ "hits": hits }).to_string()
}
