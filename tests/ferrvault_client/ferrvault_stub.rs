//! A scripted HTTP server for the FerrVault client's status-code tests: it answers each
//! request with the next scripted reply (or the default one) and records what it received.
//! The FerrVault simulator (`sim::ferrvault`) covers realistic behaviour; this stub covers
//! exact wire details and failure shapes.
#![allow(dead_code)] // each test file uses a different part of the stub

use std::{
    collections::VecDeque,
    net::SocketAddr,
    sync::{Arc, Mutex},
    time::Duration,
};

use bytes::Bytes;
use warp::{Filter, http::HeaderMap};

/// One scripted answer.
#[derive(Clone, Debug)]
pub struct Reply {
    pub status: u16,
    pub headers: Vec<(String, String)>,
    pub body: String,
    pub delay: Duration,
}

impl Reply {
    pub fn json(status: u16, body: &str) -> Self {
        Self {
            status,
            headers: vec![],
            body: body.to_owned(),
            delay: Duration::ZERO,
        }
    }

    pub fn header(mut self, name: &str, value: &str) -> Self {
        self.headers.push((name.to_owned(), value.to_owned()));
        self
    }

    pub fn after(mut self, delay: Duration) -> Self {
        self.delay = delay;
        self
    }
}

/// What the stub received.
#[derive(Clone, Debug)]
pub struct Recorded {
    pub method: String,
    pub path: String,
    pub query: String,
    pub headers: HeaderMap,
    pub body: Bytes,
}

pub struct Stub {
    pub url: String,
    script: Arc<Mutex<VecDeque<Reply>>>,
    requests: Arc<Mutex<Vec<Recorded>>>,
}

impl Stub {
    /// Starts on 127.0.0.1:0, answering `default` once the script is exhausted.
    pub async fn start(default: Reply) -> Stub {
        let script: Arc<Mutex<VecDeque<Reply>>> = Arc::default();
        let requests: Arc<Mutex<Vec<Recorded>>> = Arc::default();
        let (s, r) = (script.clone(), requests.clone());
        let route = warp::method()
            .and(warp::path::full())
            .and(warp::query::raw().or(warp::any().map(String::new)).unify())
            .and(warp::header::headers_cloned())
            .and(warp::body::bytes())
            .then(
                move |method: warp::http::Method,
                      path: warp::path::FullPath,
                      query: String,
                      headers: HeaderMap,
                      body: Bytes| {
                    let reply = s.lock().unwrap().pop_front().unwrap_or_else(|| default.clone());
                    r.lock().unwrap().push(Recorded {
                        method: method.to_string(),
                        path: path.as_str().to_owned(),
                        query,
                        headers,
                        body,
                    });
                    async move {
                        tokio::time::sleep(reply.delay).await;
                        let mut response = warp::http::Response::builder().status(reply.status);
                        for (name, value) in &reply.headers {
                            response = response.header(name, value);
                        }
                        response
                            .header("content-type", "application/json")
                            .body(reply.body)
                            .unwrap()
                    }
                },
            );
        let listener = tokio::net::TcpListener::bind(SocketAddr::from(([127, 0, 0, 1], 0)))
            .await
            .unwrap();
        let url = format!("http://{}", listener.local_addr().unwrap());
        tokio::spawn(warp::serve(route).incoming(listener).run());
        Stub {
            url,
            script,
            requests,
        }
    }

    /// Queues replies for the next requests, in order.
    pub fn then(&self, replies: impl IntoIterator<Item = Reply>) -> &Self {
        self.script.lock().unwrap().extend(replies);
        self
    }

    pub fn requests(&self) -> Vec<Recorded> {
        self.requests.lock().unwrap().clone()
    }
}
