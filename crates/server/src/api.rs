//! The JSON the API reads: request bodies and query parameters, strictly (unknown fields are
//! errors), and the extractors that turn every rejection into an [`ApiError`].

use std::sync::Arc;

use axum::body::Bytes;
use axum::extract::{FromRequest, FromRequestParts, Path, Query, Request};
use axum::http::request::Parts;
use axum::http::StatusCode;
use neardup_ingest::extract::MainContentExtractor;
use neardup_store::{InsertMode, NewDocument};
use serde::de::DeserializeOwned;
use serde::Deserialize;

use crate::error::ApiError;
use crate::AppState;

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
        let (text, title) = match (self.text, self.html) {
            (Some(text), None) => (text, self.title),
            (None, Some(html)) => {
                let extracted = extractor.extract(&html);
                (extracted.text, self.title.or(extracted.title))
            }
            (Some(_), Some(_)) => return Err(ApiError::bad_request("give text or html, not both")),
            (None, None) => return Err(ApiError::bad_request("missing field: text or html")),
        };
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
/// body not received whole within [`crate::ServerConfig::body_timeout`] (a client sending it
/// slowly, or stopping half-way) a 408, and the connection is closed.
#[derive(Debug)]
pub struct JsonBody<T>(pub T);

impl<T: DeserializeOwned> FromRequest<Arc<AppState>> for JsonBody<T> {
    type Rejection = ApiError;

    async fn from_request(request: Request, state: &Arc<AppState>) -> Result<Self, ApiError> {
        let timeout = state.config.body_timeout;
        let read = tokio::time::timeout(timeout, Bytes::from_request(request, state));
        let bytes = read
            .await
            .map_err(|_| {
                ApiError::new(
                    StatusCode::REQUEST_TIMEOUT,
                    format!("the request body did not arrive within {timeout:?}"),
                )
                .closing()
            })?
            .map_err(|rejection| {
                let status = rejection.status();
                let message = if status == StatusCode::PAYLOAD_TOO_LARGE {
                    "the request body is too large".to_string()
                } else {
                    rejection.body_text()
                };
                ApiError::new(status, message)
            })?;
        serde_json::from_slice(&bytes)
            .map(JsonBody)
            .map_err(|error| ApiError::bad_request(format!("invalid JSON: {error}")))
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
