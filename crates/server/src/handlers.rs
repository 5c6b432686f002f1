//! The route handlers: parse, call [`neardup_store::NearDupDb`] on the blocking pool, format.

use std::sync::Arc;

use axum::extract::State;
use axum::http::{header, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::Json;
use neardup_store::{CheckOutcome, InsertMode};
use serde_json::json;

use crate::api::{DocumentIn, IdPath, InsertQuery, JsonBody, Params};
use crate::error::ApiError;
use crate::AppState;

/// The OpenAPI description of this API.
const OPENAPI: &str = include_str!("openapi.json");

/// Runs CPU or store work off the reactor; a panic there becomes a 500, never a crash.
async fn blocking<T: Send + 'static>(
    work: impl FnOnce() -> Result<T, ApiError> + Send + 'static,
) -> Result<T, ApiError> {
    tokio::task::spawn_blocking(work)
        .await
        .map_err(|error| ApiError::internal(format!("worker failed: {error}")))?
}

/// 201 when the document was inserted, 200 otherwise.
fn outcome_response(outcome: CheckOutcome) -> Response {
    let status = if outcome.inserted {
        StatusCode::CREATED
    } else {
        StatusCode::OK
    };
    (status, Json(outcome)).into_response()
}

/// Checks one document and inserts it as `mode` says.
fn check_one(
    state: &AppState,
    doc: DocumentIn,
    mode: InsertMode,
) -> Result<CheckOutcome, ApiError> {
    let doc = doc.into_document(&state.extractor)?;
    Ok(state.db.check_and_insert(&doc, mode)?)
}

/// `POST /v1/documents`: check, and insert as `?insert=` says (default: if unique).
pub async fn post_document(
    State(state): State<Arc<AppState>>,
    Params(query): Params<InsertQuery>,
    JsonBody(doc): JsonBody<DocumentIn>,
) -> Result<Response, ApiError> {
    let outcome = blocking(move || check_one(&state, doc, query.insert)).await?;
    Ok(outcome_response(outcome))
}

/// `POST /v1/check`: check only.
pub async fn check(
    State(state): State<Arc<AppState>>,
    JsonBody(doc): JsonBody<DocumentIn>,
) -> Result<Response, ApiError> {
    let outcome = blocking(move || check_one(&state, doc, InsertMode::Never)).await?;
    Ok(outcome_response(outcome))
}

/// `POST /v1/documents/batch`: an array of documents, each checked and inserted in order; one
/// result (an outcome or an error) per document.
pub async fn post_batch(
    State(state): State<Arc<AppState>>,
    Params(query): Params<InsertQuery>,
    JsonBody(docs): JsonBody<Vec<DocumentIn>>,
) -> Result<Response, ApiError> {
    if docs.len() > state.config.batch_limit {
        return Err(ApiError::new(
            StatusCode::PAYLOAD_TOO_LARGE,
            format!(
                "{} documents in one batch; the limit is {}",
                docs.len(),
                state.config.batch_limit
            ),
        ));
    }
    let results = blocking(move || {
        Ok(docs
            .into_iter()
            .map(|doc| match check_one(&state, doc, query.insert) {
                Ok(outcome) => serde_json::to_value(outcome).unwrap_or_default(),
                Err(error) => json!({ "error": error.message, "status": error.status.as_u16() }),
            })
            .collect::<Vec<_>>())
    })
    .await?;
    Ok(Json(json!({ "results": results })).into_response())
}

/// `GET /v1/documents/{id}`.
pub async fn get_document(
    State(state): State<Arc<AppState>>,
    IdPath(id): IdPath,
) -> Result<Response, ApiError> {
    let found = blocking(move || Ok(state.db.get(&id).map(|r| (id, r))?)).await?;
    match found {
        (_, Some(record)) => Ok(Json(record).into_response()),
        (id, None) => Err(ApiError::not_found(format!("no document {id:?}"))),
    }
}

/// `DELETE /v1/documents/{id}`.
pub async fn delete_document(
    State(state): State<Arc<AppState>>,
    IdPath(id): IdPath,
) -> Result<Response, ApiError> {
    let deleted = blocking(move || Ok(state.db.delete(&id).map(|r| (id, r))?)).await?;
    match deleted {
        (id, Some(_)) => Ok(Json(json!({ "deleted": id })).into_response()),
        (id, None) => Err(ApiError::not_found(format!("no document {id:?}"))),
    }
}

/// `GET /v1/stats`.
pub async fn stats(State(state): State<Arc<AppState>>) -> Result<Response, ApiError> {
    let stats = blocking(move || Ok(state.db.stats()?)).await?;
    Ok(Json(stats).into_response())
}

/// `GET /healthz`: readiness. `ok` only when the store serves now (see
/// [`neardup_store::NearDupDb::health`]: the store is asked while it is up, probed at most once
/// a second while it is not), with what an acknowledged write survives, and the store's
/// eviction policy and a warning when it may evict documents (allowed); 503 with
/// `Retry-After` and the reason while the store is unavailable (or may evict documents, not
/// allowed).
pub async fn healthz(State(state): State<Arc<AppState>>) -> Result<Response, ApiError> {
    let body = blocking(move || {
        state.db.health()?;
        Ok(json!({
            "status": "ok",
            "durability": state.db.durability(),
            "eviction": state.db.eviction(),
            "warning": state.db.warning(),
        }))
    })
    .await?;
    Ok(Json(body).into_response())
}

/// `GET /metrics`: Prometheus text.
pub async fn metrics(State(state): State<Arc<AppState>>) -> Response {
    let text = state.metrics.render(state.db.indexed());
    ([(header::CONTENT_TYPE, "text/plain; version=0.0.4")], text).into_response()
}

/// `GET /v1/openapi.json`.
pub async fn openapi() -> Response {
    ([(header::CONTENT_TYPE, "application/json")], OPENAPI).into_response()
}

/// Any other path.
pub async fn not_found() -> ApiError {
    ApiError::not_found("no such route")
}

/// A known path with another method.
pub async fn method_not_allowed() -> ApiError {
    ApiError::new(
        StatusCode::METHOD_NOT_ALLOWED,
        "method not allowed on this route",
    )
}
