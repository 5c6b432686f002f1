//! The JSON the API reads: request bodies and query parameters, strictly (unknown fields are
//! errors), and the extractors that turn every rejection into an [`ApiError`].

use std::sync::Arc;

use std::time::{Duration, Instant};

use axum::extract::{FromRequest, FromRequestParts, Path, Query, Request};
use axum::http::request::Parts;
use axum::http::{header, StatusCode};
use http_body_util::BodyExt;
use neardup_ingest::extract::MainContentExtractor;
use neardup_ingest::{body_text, title_of, Body, HtmlText};
use neardup_store::{InsertMode, NewDocument};
use serde::de::DeserializeOwned;
use serde::Deserialize;

use crate::error::ApiError;
use crate::fairness::Load;
use crate::{AppState, ServerConfig, BODY_GRACE};

/// A document as posted: `text` or `html`, exactly one.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct DocumentIn {
    /// The caller's id; generated if absent.
    pub id: Option<String>,
    /// The URL.
    pub url: Option<String>,
    /// The title (taken from the HTML `<title>` when absent).
    pub title: Option<String>,
    /// When it was fetched.
    pub fetched_at: Option<String>,
    /// Plain text.
    pub text: Option<String>,
    /// An HTML page: its main content is extracted.
    pub html: Option<String>,
}

impl DocumentIn {
    /// The document to check, with HTML reduced to its main text.
    pub fn into_document(self, extractor: &MainContentExtractor) -> Result<NewDocument, ApiError> {
        let body = match (self.text, self.html) {
            (Some(text), None) => Body::Text(text),
            (None, Some(html)) => Body::Html(html),
            (Some(_), Some(_)) => return Err(ApiError::bad_request("give text or html, not both")),
            (None, None) => return Err(ApiError::bad_request("missing field: text or html")),
        };
        let text = body_text(&body, HtmlText::Main, extractor).into_owned();
        let title = title_of(self.title, &body);
        if text.trim().is_empty() {
            return Err(ApiError::bad_request("the text is empty"));
        }
        if let Some(id) = self.id.as_ref().filter(|id| id.len() > crate::MAX_ID_BYTES) {
            return Err(ApiError::bad_request(format!(
                "the id is {} bytes long; the limit is {}",
                id.len(),
                crate::MAX_ID_BYTES
            )));
        }
        Ok(NewDocument {
            id: self.id,
            url: self.url,
            title,
            fetched_at: self.fetched_at,
            text,
        })
    }
}

/// Query parameters of the document-posting routes.
#[derive(Debug, Clone, Copy, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct InsertQuery {
    /// When to insert: `if_unique` (default), `always`, `never`.
    #[serde(default)]
    pub insert: InsertMode,
}

/// A JSON body: any syntax, UTF-8, field or size error becomes a 400 (or 413) JSON error; a
/// declared `Content-Length` over [`crate::ServerConfig::body_limit`] is a 413 at once, before
/// any of the body is read; a body not received whole within
/// [`crate::ServerConfig::body_timeout`] (shrunk as the server fills), or coming slower than
/// [`crate::ServerConfig::min_body_rate`] once [`crate::BODY_GRACE`] has passed, a 408. After a
/// 408 or 413 the connection is closed (the rest of the body is not read).
#[derive(Debug)]
pub struct JsonBody<T>(pub T);

impl<T: DeserializeOwned> FromRequest<Arc<AppState>> for JsonBody<T> {
    type Rejection = ApiError;

    async fn from_request(request: Request, state: &Arc<AppState>) -> Result<Self, ApiError> {
        let bytes = read_body(request, &state.config).await?;
        serde_json::from_slice(&bytes)
            .map(JsonBody)
            .map_err(|error| ApiError::bad_request(format!("invalid JSON: {error}")))
    }
}

/// The whole body of `request`, within the limits of `config` (see [`JsonBody`]).
async fn read_body(request: Request, config: &ServerConfig) -> Result<Vec<u8>, ApiError> {
    let limit = config.body_limit;
    let too_large = || {
        ApiError::new(
            StatusCode::PAYLOAD_TOO_LARGE,
            format!("the request body is too large (the limit is {limit} bytes)"),
        )
        .closing()
    };
    let declared = request
        .headers()
        .get(header::CONTENT_LENGTH)
        .and_then(|value| value.to_str().ok()?.parse::<u64>().ok());
    if declared.is_some_and(|declared| declared > limit as u64) {
        return Err(too_large());
    }
    let load = request.extensions().get::<Load>().cloned();
    let timeout = |full| load.as_ref().map_or(full, |load| load.scaled(full));
    let started = Instant::now();
    let mut body = request.into_body();
    let mut bytes = Vec::new();
    loop {
        let within = timeout(config.body_timeout);
        let (deadline, why) = body_deadline(within, config.min_body_rate, bytes.len());
        let frame = tokio::time::timeout_at((started + deadline).into(), body.frame()).await;
        let frame = match frame {
            Err(_) => return Err(ApiError::new(StatusCode::REQUEST_TIMEOUT, why).closing()),
            Ok(None) => return Ok(bytes),
            Ok(Some(frame)) => frame.map_err(|error| {
                ApiError::bad_request(format!("cannot read the request body: {error}"))
            })?,
        };
        if let Ok(data) = frame.into_data() {
            if bytes.len() + data.len() > limit {
                return Err(too_large());
            }
            bytes.extend_from_slice(&data);
        }
    }
}

/// When a body must have come by (from its start) with `received` bytes come so far, and what
/// to say if it has not: within the (load-scaled) body timeout, or sooner if the minimum rate
/// says so.
fn body_deadline(within: Duration, rate: u64, received: usize) -> (Duration, String) {
    let by_rate =
        (rate > 0).then(|| BODY_GRACE + Duration::from_secs_f64(received as f64 / rate as f64));
    match by_rate {
        Some(due) if due < within => (
            due,
            format!("the request body came slower than {rate} bytes a second"),
        ),
        _ => (
            within,
            format!("the request body did not arrive within {within:?}"),
        ),
    }
}

/// Query parameters; an unknown or bad parameter is a 400 JSON error.
#[derive(Debug)]
pub struct Params<T>(pub T);

impl<T: DeserializeOwned + Send, S: Send + Sync> FromRequestParts<S> for Params<T> {
    type Rejection = ApiError;

    async fn from_request_parts(parts: &mut Parts, state: &S) -> Result<Self, ApiError> {
        Query::<T>::from_request_parts(parts, state)
            .await
            .map(|Query(value)| Params(value))
            .map_err(|rejection| ApiError::bad_request(rejection.body_text()))
    }
}

/// A document id from the path; a bad percent-encoding (e.g. `%FF%FE`, not UTF-8) is a 400 JSON
/// error like every other.
#[derive(Debug)]
pub struct IdPath(pub String);

impl<S: Send + Sync> FromRequestParts<S> for IdPath {
    type Rejection = ApiError;

    async fn from_request_parts(parts: &mut Parts, state: &S) -> Result<Self, ApiError> {
        Path::<String>::from_request_parts(parts, state)
            .await
            .map(|Path(id)| IdPath(id))
            .map_err(|rejection| ApiError::bad_request(rejection.body_text()))
    }
}
