//! The accept loop: a header-read timeout, a connection limit shared fairly (see
//! [`crate::fairness`]), JSON for the errors hyper answers by itself, and a graceful drain.
//!
//! `axum::serve` sets no timer, so hyper's header-read timeout never fires: a client that sends
//! half a request head (slowloris) or nothing at all holds its connection, and its file
//! descriptor, for ever (issue 12: 372 idle connections starved a normal request). Here each
//! connection is served by hyper's HTTP/1 builder with a timer and
//! [`crate::ServerConfig::header_timeout`], which bounds the wait for every request head (the
//! first and each keep-alive one, shrinking as the slots fill); at most
//! [`crate::ServerConfig::max_connections`] are served at once, an idle one making room for a
//! new one; when accepting fails (out of file descriptors) the loop waits a little and tries
//! again rather than spinning or stopping.

use std::future::Future;
use std::io;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{ready, Context, Poll};
use std::time::Duration;

use axum::body::Body;
use axum::extract::Request;
use axum::Router;
use http_body_util::BodyExt;
use hyper::body::Incoming;
use hyper::server::conn::http1;
use hyper::service::Service;
use hyper_util::rt::{TokioIo, TokioTimer};
use hyper_util::service::TowerToHyperService;
use tokio::io::{AsyncRead, AsyncWrite, AsyncWriteExt, ReadBuf};
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::watch;

use crate::fairness::{refusal, Load, Refused, Slot, Slots};

/// How long the loop waits after a failed accept (e.g. out of file descriptors).
const ACCEPT_BACKOFF: Duration = Duration::from_millis(50);

/// How long a refused connection is given to take its 503.
const REFUSAL_TIMEOUT: Duration = Duration::from_secs(1);

/// Serves `app` on `listener` until `shutdown` resolves, then lets every open connection finish
/// its request in flight and returns.
pub(crate) async fn serve(
    listener: TcpListener,
    app: Router,
    header_timeout: Duration,
    slots: Arc<Slots>,
    shutdown: impl Future<Output = ()>,
) {
    let (stop, stopped) = watch::channel(());
    let mut builder = http1::Builder::new();
    builder
        .timer(TokioTimer::new())
        // One buffer per write, so that `JsonErrors` sees a whole response head.
        .writev(false);
    tokio::pin!(shutdown);
    loop {
        let (stream, peer) = tokio::select! {
            () = &mut shutdown => break,
            accepted = listener.accept() => match accepted {
                Ok(accepted) => accepted,
                Err(error) => {
                    tracing::warn!("accept failed: {error}; retrying");
                    tokio::time::sleep(ACCEPT_BACKOFF).await;
                    continue;
                }
            },
        };
        let slot = match slots.admit(peer.ip()) {
            Ok(slot) => slot,
            Err(refused) => {
                tokio::spawn(refuse(stream, refused));
                continue;
            }
        };
        // Every slot serving a request: wait for one (an evicted idle one frees at once).
        let permit = tokio::select! {
            () = &mut shutdown => break,
            permit = slots.permit() => permit,
        };
        let Some(permit) = permit else { break };
        let mut builder = builder.clone();
        builder.header_read_timeout(slots.scaled(header_timeout));
        let connection = Connection {
            app: app.clone(),
            load: Load(Arc::clone(&slots)),
            slot,
        };
        let stopped = stopped.clone();
        tokio::spawn(async move {
            let _permit = permit;
            connection.run(builder, stream, stopped).await;
        });
    }
    drop(stop);
    // Every connection gives its permit back when it is done.
    slots.drained().await;
}

/// Answers a connection refused for its address, and closes it.
async fn refuse(mut stream: TcpStream, refused: Refused) {
    let answer = async {
        stream.write_all(&refusal(&refused)).await?;
        stream.shutdown().await
    };
    let _ = tokio::time::timeout(REFUSAL_TIMEOUT, answer).await;
}

/// One accepted connection.
struct Connection {
    app: Router,
    load: Load,
    slot: Slot,
}

impl Connection {
    /// Serves the connection until the client closes it, a timeout, an eviction (at once if it
    /// is idle, else after the request in flight) or the shutdown (after the request in flight).
    async fn run(
        self,
        builder: http1::Builder,
        stream: TcpStream,
        mut stopped: watch::Receiver<()>,
    ) {
        let Connection { app, load, slot } = self;
        let slot = Arc::new(slot);
        let tower = TowerToHyperService::new(app);
        let in_slot = Arc::clone(&slot);
        let service = hyper::service::service_fn(move |mut request: Request<Incoming>| {
            request.extensions_mut().insert(load.clone());
            let busy = in_slot.busy();
            let response = tower.call(request);
            async move {
                // The request counts as in flight until its body is sent.
                let response = response.await?;
                Ok::<_, std::convert::Infallible>(response.map(|body| {
                    Body::new(body.map_frame(move |frame| {
                        let _in_flight = &busy;
                        frame
                    }))
                }))
            }
        });
        let conn = builder.serve_connection(TokioIo::new(JsonErrors::new(stream)), service);
        tokio::pin!(conn);
        let result = tokio::select! {
            result = conn.as_mut() => result,
            _ = stopped.changed() => {
                conn.as_mut().graceful_shutdown();
                conn.await
            }
            () = slot.evicted() => {
                if slot.is_idle() {
                    return;
                }
                conn.as_mut().graceful_shutdown();
                conn.await
            }
        };
        if let Err(error) = result {
            tracing::debug!("connection closed: {error}");
        }
    }
}

/// A connection whose bodiless error responses written by hyper itself (400 for a malformed
/// head, 414 for a URI over 65,534 bytes, 431 for a head over the buffer limit: no handler sees
/// those requests) get the JSON body every other error has. The application's own responses
/// never have `content-length: 0` with these statuses, so they are left alone.
struct JsonErrors<S> {
    inner: S,
    /// A rewritten response not fully written yet, and how much of it is.
    pending: Vec<u8>,
    written: usize,
}

impl<S> JsonErrors<S> {
    fn new(inner: S) -> Self {
        JsonErrors {
            inner,
            pending: Vec::new(),
            written: 0,
        }
    }
}

impl<S: AsyncWrite + Unpin> JsonErrors<S> {
    /// Writes what is left of a rewritten response.
    fn drain(&mut self, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        while self.written < self.pending.len() {
            let n =
                ready!(Pin::new(&mut self.inner).poll_write(cx, &self.pending[self.written..]))?;
            if n == 0 {
                return Poll::Ready(Err(io::ErrorKind::WriteZero.into()));
            }
            self.written += n;
        }
        self.pending.clear();
        self.written = 0;
        Poll::Ready(Ok(()))
    }
}

impl<S: AsyncRead + Unpin> AsyncRead for JsonErrors<S> {
    fn poll_read(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        Pin::new(&mut self.inner).poll_read(cx, buf)
    }
}

impl<S: AsyncWrite + Unpin> AsyncWrite for JsonErrors<S> {
    fn poll_write(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<io::Result<usize>> {
        ready!(self.drain(cx))?;
        if let Some(rewritten) = json_error_head(buf) {
            self.pending = rewritten;
            // Written or not, the bytes are taken; flush and shutdown finish them.
            if let Poll::Ready(Err(error)) = self.drain(cx) {
                return Poll::Ready(Err(error));
            }
            return Poll::Ready(Ok(buf.len()));
        }
        Pin::new(&mut self.inner).poll_write(cx, buf)
    }

    fn poll_flush(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        ready!(self.drain(cx))?;
        Pin::new(&mut self.inner).poll_flush(cx)
    }

    fn poll_shutdown(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        ready!(self.drain(cx))?;
        Pin::new(&mut self.inner).poll_shutdown(cx)
    }
}

/// If `buf` is one of hyper's own bodiless error responses, the same response with a JSON body.
fn json_error_head(buf: &[u8]) -> Option<Vec<u8>> {
    let head = std::str::from_utf8(buf).ok()?;
    let rest = head.strip_prefix("HTTP/1.1 ")?;
    let message = match rest.get(..4)? {
        "400 " => "malformed HTTP request",
        "414 " => "the request URI is too long",
        "431 " => "the request head is too large",
        _ => return None,
    };
    let lines = head.strip_suffix("\r\n\r\n")?;
    if lines.contains("\r\n\r\n") {
        return None;
    }
    let mut kept = Vec::new();
    let mut bodiless = false;
    for line in lines.split("\r\n") {
        if line.eq_ignore_ascii_case("content-length: 0") {
            bodiless = true;
        } else {
            kept.push(line);
        }
    }
    if !bodiless {
        return None;
    }
    let body = serde_json::json!({ "error": message }).to_string();
    let content_length = format!("content-length: {}", body.len());
    kept.extend(["content-type: application/json", &content_length]);
    Some(format!("{}\r\n\r\n{body}", kept.join("\r\n")).into_bytes())
}

#[cfg(test)]
mod tests {
    use super::json_error_head;

    #[test]
    fn only_bodiless_error_heads_are_rewritten() {
        let head = b"HTTP/1.1 414 URI Too Long\r\ncontent-length: 0\r\ndate: x\r\n\r\n";
        let rewritten = String::from_utf8(json_error_head(head).unwrap()).unwrap();
        assert_eq!(
            rewritten,
            "HTTP/1.1 414 URI Too Long\r\ndate: x\r\ncontent-type: application/json\r\n\
             content-length: 39\r\n\r\n{\"error\":\"the request URI is too long\"}"
        );
        assert!(json_error_head(b"HTTP/1.1 200 OK\r\ncontent-length: 0\r\n\r\n").is_none());
        assert!(json_error_head(b"HTTP/1.1 400 Bad\r\ncontent-length: 9\r\n\r\n").is_none());
        assert!(json_error_head(b"HTTP/1.1 400 Bad\r\ncontent-length: 0\r\n\r\n{}").is_none());
    }
}
