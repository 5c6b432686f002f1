//! neardup-server: "have we seen this, or nearly?" as JSON over HTTP.
//!
//! A thin layer over [`neardup_store::NearDupDb`]: parse, call the database on tokio's blocking
//! pool (fingerprinting and index queries are CPU work), format. Routes (see
//! `src/openapi.json`, served at `/v1/openapi.json`):
//!
//! * `POST /v1/documents` — check and insert (`?insert=if_unique|always|never`): 201 if
//!   inserted, else 200, with `{"verdict", "id", "inserted", "matches"}`.
//! * `POST /v1/check` — check only; `POST /v1/documents/batch` — many at once (bounded).
//! * `GET`/`DELETE /v1/documents/{id}`, `GET /v1/stats`, `GET /healthz`, `GET /metrics`.
//!
//! Safety: loopback by default, a bearer token required to bind anything else, a body limit
//! (413), strict JSON (400 on bad syntax, bad UTF-8, unknown fields, empty text, ids over
//! [`MAX_ID_BYTES`]), and every error is `{"error": "..."}` (hyper's own 400/414/431 included).
//! Faults: a request head must arrive within [`ServerConfig::header_timeout`] and its body
//! within [`ServerConfig::body_timeout`] (408) at [`ServerConfig::min_body_rate`] or faster, both
//! timeouts shrinking as the server fills; a declared body over the limit is refused at once
//! (413); at most [`ServerConfig::max_connections`] are served at once, at most
//! [`ServerConfig::max_connections_per_ip`] for one address, an idle one making room for a new
//! one; a store that is unavailable (each store call bounded by the store timeout:
//! see [`neardup_store::OpenOptions::timeout`]) answers 503 with `Retry-After` and a JSON error,
//! at once once it is known to be down, and `/healthz` says whether the store serves now.

mod api;
mod connections;
mod error;
mod fairness;
mod handlers;
mod metrics;
mod middleware;
mod throttle;

use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use axum::routing::{get, post};
use axum::Router;
use neardup_ingest::extract::MainContentExtractor;
use neardup_store::NearDupDb;

pub use error::ApiError;
pub use fairness::{BODY_GRACE, MIN_TIMEOUT};
pub use metrics::Metrics;
pub use throttle::Throttled;

/// The default listening address: loopback only.
pub const DEFAULT_LISTEN: &str = "127.0.0.1:7070";
/// The default request body limit: 10 MB.
pub const DEFAULT_BODY_LIMIT: usize = 10 * 1024 * 1024;
/// The default number of documents one batch request may hold.
pub const DEFAULT_BATCH_LIMIT: usize = 1000;
/// The default time a client has to send a whole request head (and, on a kept-alive connection,
/// to start the next one) before its connection is closed.
pub const DEFAULT_HEADER_TIMEOUT: Duration = Duration::from_secs(10);
/// The default time a client has to send a whole request body once its head is read; then it
/// gets a 408 and its connection is closed.
pub const DEFAULT_BODY_TIMEOUT: Duration = Duration::from_secs(30);
/// The default number of connections served at once; when all are in use, the one idle the
/// longest makes room for a new one.
pub const DEFAULT_MAX_CONNECTIONS: usize = 1024;
/// The default number of connections one client address may hold (loopback included).
pub const DEFAULT_MAX_CONNECTIONS_PER_IP: usize = 64;
/// The default slowest a request body may come once [`BODY_GRACE`] has passed, bytes a second.
pub const DEFAULT_MIN_BODY_RATE: u64 = 1024;
/// The longest document id accepted (bytes of UTF-8): longer ones are refused at insert (400),
/// so that every stored id fits in a `GET`/`DELETE /v1/documents/{id}` request line even
/// percent-encoded (3 bytes a byte, far below hyper's 65,534-byte URI limit).
pub const MAX_ID_BYTES: usize = 1024;
/// The `Retry-After` (seconds) of a 503 answered while the store is unreachable.
pub const RETRY_AFTER_SECONDS: u64 = 1;

/// How the server runs.
#[derive(Debug, Clone)]
pub struct ServerConfig {
    /// Where to listen.
    pub listen: SocketAddr,
    /// A bearer token every request (but `/healthz`) must carry; required off loopback.
    pub token: Option<String>,
    /// Largest request body, in bytes.
    pub body_limit: usize,
    /// Most documents in one batch.
    pub batch_limit: usize,
    /// Time a client has to send a request head; then its connection is closed.
    pub header_timeout: Duration,
    /// Time a client has to send a request body once its head is read; then it gets a 408.
    pub body_timeout: Duration,
    /// Connections served at once; keep it below the process's file-descriptor limit. When all
    /// are in use, the one idle the longest is closed to make room, and the header and body
    /// timeouts shrink (down to [`MIN_TIMEOUT`]) once more than half are.
    pub max_connections: usize,
    /// Connections one client address may hold (at least 1); over it, its own longest-idle
    /// connection makes room, or the new one is answered 503.
    pub max_connections_per_ip: usize,
    /// Slowest a request body may come once [`BODY_GRACE`] has passed, in bytes a second (408
    /// below it); 0 for no minimum.
    pub min_body_rate: u64,
}

impl Default for ServerConfig {
    fn default() -> Self {
        ServerConfig {
            listen: SocketAddr::from(([127, 0, 0, 1], 7070)),
            token: None,
            body_limit: DEFAULT_BODY_LIMIT,
            batch_limit: DEFAULT_BATCH_LIMIT,
            header_timeout: DEFAULT_HEADER_TIMEOUT,
            body_timeout: DEFAULT_BODY_TIMEOUT,
            max_connections: DEFAULT_MAX_CONNECTIONS,
            max_connections_per_ip: DEFAULT_MAX_CONNECTIONS_PER_IP,
            min_body_rate: DEFAULT_MIN_BODY_RATE,
        }
    }
}

/// Why the server could not start.
#[derive(Debug, thiserror::Error)]
pub enum ServerError {
    /// Binding a non-loopback address without a token.
    #[error("refusing to listen on {0} without --token: only loopback addresses may be served without one")]
    TokenRequired(SocketAddr),
    /// The token is empty.
    #[error("the token is empty")]
    EmptyToken,
    /// Binding or serving failed.
    #[error("cannot serve on {addr}: {source}")]
    Io {
        /// The address.
        addr: SocketAddr,
        /// The cause.
        source: std::io::Error,
    },
}

/// What every handler shares.
#[derive(Debug)]
pub struct AppState {
    /// The database.
    pub db: Arc<NearDupDb>,
    /// The configuration.
    pub config: ServerConfig,
    /// Request counters.
    pub metrics: Metrics,
    /// Main-content extraction for HTML bodies.
    pub extractor: MainContentExtractor,
}

/// Checks that `config` is safe to serve: a token is required off loopback.
pub fn check_config(config: &ServerConfig) -> Result<(), ServerError> {
    match &config.token {
        Some(token) if token.is_empty() => Err(ServerError::EmptyToken),
        None if !config.listen.ip().is_loopback() => Err(ServerError::TokenRequired(config.listen)),
        _ => Ok(()),
    }
}

/// The application: every route, authentication and metrics (the body limit is `JsonBody`'s).
pub fn router(db: Arc<NearDupDb>, config: ServerConfig) -> Router {
    let state = Arc::new(AppState {
        db,
        config,
        metrics: Metrics::default(),
        extractor: MainContentExtractor::default(),
    });
    Router::new()
        .route("/v1/documents", post(handlers::post_document))
        .route("/v1/documents/batch", post(handlers::post_batch))
        .route(
            "/v1/documents/{id}",
            get(handlers::get_document).delete(handlers::delete_document),
        )
        .route("/v1/check", post(handlers::check))
        .route("/v1/stats", get(handlers::stats))
        .route("/v1/openapi.json", get(handlers::openapi))
        .route("/metrics", get(handlers::metrics))
        .route("/healthz", get(handlers::healthz))
        .fallback(handlers::not_found)
        .method_not_allowed_fallback(handlers::method_not_allowed)
        .layer(axum::middleware::from_fn_with_state(
            Arc::clone(&state),
            middleware::authenticate,
        ))
        .layer(axum::middleware::from_fn_with_state(
            Arc::clone(&state),
            middleware::measure,
        ))
        .with_state(state)
}

/// Serves `db` until Ctrl-C or SIGTERM. `ready` is called with the bound address (useful with
/// port 0) before the first request is accepted.
pub async fn serve(
    db: Arc<NearDupDb>,
    config: ServerConfig,
    ready: impl FnOnce(SocketAddr),
) -> Result<(), ServerError> {
    serve_until(db, config, ready, shutdown_signal()).await
}

/// Serves `db` until `shutdown` resolves, then lets the requests in flight finish (as [`serve`]
/// does on a signal).
pub async fn serve_until(
    db: Arc<NearDupDb>,
    config: ServerConfig,
    ready: impl FnOnce(SocketAddr),
    shutdown: impl std::future::Future<Output = ()>,
) -> Result<(), ServerError> {
    check_config(&config)?;
    let addr = config.listen;
    let io = |source| ServerError::Io { addr, source };
    let listener = tokio::net::TcpListener::bind(addr).await.map_err(io)?;
    ready(listener.local_addr().map_err(io)?);
    let header_timeout = config.header_timeout;
    let slots = fairness::Slots::new(config.max_connections, config.max_connections_per_ip);
    let app = router(db, config);
    connections::serve(listener, app, header_timeout, slots, shutdown).await;
    Ok(())
}

/// Resolves on Ctrl-C or SIGTERM.
async fn shutdown_signal() {
    let ctrl_c = async {
        let _ = tokio::signal::ctrl_c().await;
    };
    #[cfg(unix)]
    let terminate = async {
        match tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate()) {
            Ok(mut signal) => {
                signal.recv().await;
            }
            Err(_) => std::future::pending().await,
        }
    };
    #[cfg(not(unix))]
    let terminate = std::future::pending::<()>();
    tokio::select! {
        () = ctrl_c => {},
        () = terminate => {},
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn token_required_off_loopback() {
        let mut config = ServerConfig::default();
        assert!(check_config(&config).is_ok());
        config.listen = "0.0.0.0:7070".parse().unwrap();
        assert!(matches!(
            check_config(&config),
            Err(ServerError::TokenRequired(_))
        ));
        config.token = Some("secret".into());
        assert!(check_config(&config).is_ok());
        config.token = Some(String::new());
        assert!(matches!(
            check_config(&config),
            Err(ServerError::EmptyToken)
        ));
    }
}
