//! Request middleware: bearer-token authentication and metrics.

use std::sync::Arc;
use std::time::Instant;

use axum::extract::{MatchedPath, Request, State};
use axum::http::{header, StatusCode};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use sha2::{Digest, Sha256};

use crate::error::ApiError;
use crate::AppState;

/// Paths served without a token.
const OPEN_PATHS: [&str; 1] = ["/healthz"];

/// Refuses a request without the configured bearer token (401 JSON).
pub async fn authenticate(
    State(state): State<Arc<AppState>>,
    request: Request,
    next: Next,
) -> Response {
    let Some(token) = &state.config.token else {
        return next.run(request).await;
    };
    if OPEN_PATHS.contains(&request.uri().path()) {
        return next.run(request).await;
    }
    let given = request
        .headers()
        .get(header::AUTHORIZATION)
        .and_then(|value| bearer_token(value.as_bytes()));
    if given.is_some_and(|given| same_token(given, token.as_bytes())) {
        next.run(request).await
    } else {
        ApiError::new(StatusCode::UNAUTHORIZED, "missing or wrong bearer token").into_response()
    }
}

/// The token of an `Authorization: Bearer <token>` value; the scheme is case-insensitive (RFC
/// 7235), and spaces around the token are not part of it.
fn bearer_token(value: &[u8]) -> Option<&[u8]> {
    let (scheme, token) = value.split_at_checked(7)?;
    scheme
        .eq_ignore_ascii_case(b"bearer ")
        .then(|| token.trim_ascii())
}

/// Compares the SHA-256 digests of the two tokens without an early exit: the time taken reveals
/// neither the token's length nor how much of it matches.
fn same_token(given: &[u8], token: &[u8]) -> bool {
    let (a, b) = (Sha256::digest(given), Sha256::digest(token));
    a.iter()
        .zip(b.iter())
        .fold(0u8, |acc, (x, y)| acc | (x ^ y))
        == 0
}

/// The methods counted under their own name in the metrics; any other is `other`, so that
/// clients cannot make series without bound.
const KNOWN_METHODS: [&str; 7] = ["GET", "POST", "DELETE", "HEAD", "PUT", "PATCH", "OPTIONS"];

/// Counts the request and its latency under its route pattern and method (one of
/// [`KNOWN_METHODS`] or `other`); a request refused with 401 is counted as method `other`, route
/// `unauthenticated`.
pub async fn measure(State(state): State<Arc<AppState>>, request: Request, next: Next) -> Response {
    let started = Instant::now();
    let method = KNOWN_METHODS
        .into_iter()
        .find(|&known| request.method().as_str() == known)
        .unwrap_or("other");
    let route = request
        .extensions()
        .get::<MatchedPath>()
        .map_or("unmatched", MatchedPath::as_str)
        .to_string();
    let response = next.run(request).await;
    // Refused requests share one series whatever they asked for.
    let (method, route) = if response.status() == StatusCode::UNAUTHORIZED {
        ("other", "unauthenticated".to_string())
    } else {
        (method, route)
    };
    state.metrics.record(
        method,
        &route,
        response.status().as_u16(),
        started.elapsed(),
    );
    response
}
