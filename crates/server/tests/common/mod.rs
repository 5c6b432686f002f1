//! A real server on loopback over a temporary redb database, and raw-socket helpers.

#![allow(dead_code)] // Each test file uses its own subset.

use std::io::{Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::sync::Arc;
use std::time::Duration;

use neardup_server::ServerConfig;
use neardup_store::{open_db, OpenOptions};

/// A server running on its own thread until dropped.
pub struct Server {
    /// Where it listens.
    pub addr: SocketAddr,
    stop: Option<tokio::sync::oneshot::Sender<()>>,
    thread: Option<std::thread::JoinHandle<()>>,
    _dir: tempfile::TempDir,
}

impl Server {
    /// Starts a server on a free loopback port with `config` (its `listen` is ignored).
    pub fn start(config: ServerConfig) -> Server {
        let dir = tempfile::tempdir().unwrap();
        let db = open_db(dir.path().to_str().unwrap(), OpenOptions::default()).unwrap();
        let config = ServerConfig {
            listen: "127.0.0.1:0".parse().unwrap(),
            ..config
        };
        let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
        let (ready, bound) = std::sync::mpsc::channel();
        let thread = std::thread::spawn(move || {
            let runtime = tokio::runtime::Builder::new_multi_thread()
                .worker_threads(2)
                .enable_all()
                .build()
                .unwrap();
            let shutdown = async {
                let _ = stopped.await;
            };
            runtime
                .block_on(neardup_server::serve_until(
                    Arc::new(db),
                    config,
                    |addr| ready.send(addr).unwrap(),
                    shutdown,
                ))
                .unwrap();
        });
        let addr = bound.recv_timeout(Duration::from_secs(30)).unwrap();
        Server {
            addr,
            stop: Some(stop),
            thread: Some(thread),
            _dir: dir,
        }
    }

    /// The URL of `path` on this server.
    pub fn url(&self, path: &str) -> String {
        format!("http://{}{path}", self.addr)
    }

    /// Sends `request` as is and reads the whole answer (the server closes or 5 s pass).
    pub fn raw(&self, request: &[u8]) -> String {
        let mut stream = TcpStream::connect(self.addr).unwrap();
        stream
            .set_read_timeout(Some(Duration::from_secs(5)))
            .unwrap();
        stream.write_all(request).unwrap();
        let mut answer = Vec::new();
        let _ = stream.read_to_end(&mut answer);
        String::from_utf8_lossy(&answer).into_owned()
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        if let Some(stop) = self.stop.take() {
            let _ = stop.send(());
        }
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
    }
}

/// `(status, body as JSON, headers)` of a request made with ureq; the body is `null` if not JSON.
pub fn call(
    method: &str,
    url: &str,
    body: Option<serde_json::Value>,
    token: Option<&str>,
) -> (u16, serde_json::Value, Vec<(String, String)>) {
    let agent = ureq::AgentBuilder::new()
        .timeout(Duration::from_secs(10))
        .build();
    let mut request = agent.request(method, url);
    if let Some(token) = token {
        request = request.set("Authorization", token);
    }
    let result = match body {
        Some(body) => request.send_json(body),
        None => request.call(),
    };
    let response = match result {
        Ok(response) | Err(ureq::Error::Status(_, response)) => response,
        Err(error) => panic!("{method} {url}: {error}"),
    };
    let status = response.status();
    let headers = response
        .headers_names()
        .into_iter()
        .map(|name| {
            let value = response.header(&name).unwrap_or_default().to_string();
            (name, value)
        })
        .collect();
    let text = response.into_string().unwrap_or_default();
    (
        status,
        serde_json::from_str(&text).unwrap_or_default(),
        headers,
    )
}
