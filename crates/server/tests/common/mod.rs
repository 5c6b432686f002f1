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

/// `(status, body as JSON)` of a request with this `Authorization` header, if any; the body is
/// `null` if not JSON.
pub fn call(
    method: &str,
    url: &str,
    body: Option<serde_json::Value>,
    authorization: Option<&str>,
) -> (u16, serde_json::Value) {
    let body = body.map_or_else(Vec::new, |body| body.to_string().into_bytes());
    let reply = neardup_testkit::http::send(method, url, &body, authorization)
        .unwrap_or_else(|error| panic!("{method} {url}: {error}"));
    (reply.status, reply.body)
}
