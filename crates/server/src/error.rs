//! Every error the API answers is `{"error": "..."}` with a fitting status.

use axum::http::{header, HeaderValue, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::Json;
use neardup_store::StoreError;

use crate::throttle::Throttled;

/// How often a store refusal (a 503 or a 507, one per request while it lasts) is logged.
const STORE_WARNING_PERIOD: std::time::Duration = std::time::Duration::from_secs(10);
/// The log of store refusals: the first, then at most one a [`STORE_WARNING_PERIOD`] with the
/// count of those held back.
static STORE_WARNINGS: Throttled = Throttled::new(STORE_WARNING_PERIOD);

/// An error answered to a client.
#[derive(Debug)]
pub struct ApiError {
    /// The HTTP status.
    pub status: StatusCode,
    /// What went wrong, for the client.
    pub message: String,
    /// Seconds after which to try again (`Retry-After`), for a 503.
    pub retry_after: Option<u64>,
    /// Close the connection after this answer (`Connection: close`): the request was not
    /// read whole.
    pub close: bool,
}

impl ApiError {
    /// An error with this status and message.
    pub fn new(status: StatusCode, message: impl Into<String>) -> ApiError {
        ApiError {
            status,
            message: message.into(),
            retry_after: None,
            close: false,
        }
    }

    /// The same error, closing the connection after it.
    pub fn closing(self) -> ApiError {
        ApiError {
            close: true,
            ..self
        }
    }

    /// 400 Bad Request.
    pub fn bad_request(message: impl Into<String>) -> ApiError {
        ApiError::new(StatusCode::BAD_REQUEST, message)
    }

    /// 404 Not Found.
    pub fn not_found(message: impl Into<String>) -> ApiError {
        ApiError::new(StatusCode::NOT_FOUND, message)
    }

    /// 500, for a failure the client cannot fix (logged, not detailed beyond its message).
    pub fn internal(message: impl Into<String>) -> ApiError {
        let message = message.into();
        tracing::error!("internal error: {message}");
        ApiError::new(StatusCode::INTERNAL_SERVER_ERROR, message)
    }

    /// 503 with `Retry-After`: the store cannot be reached now; the same request may succeed
    /// later.
    pub fn unavailable(message: impl Into<String>) -> ApiError {
        let message = message.into();
        STORE_WARNINGS.warn(&format!("answering 503: {message}"));
        ApiError {
            retry_after: Some(crate::RETRY_AFTER_SECONDS),
            ..ApiError::new(StatusCode::SERVICE_UNAVAILABLE, message)
        }
    }
}

impl From<StoreError> for ApiError {
    fn from(error: StoreError) -> ApiError {
        match error {
            StoreError::InvalidDocument(_) => ApiError::bad_request(error.to_string()),
            StoreError::IdExists(_) => ApiError::new(StatusCode::CONFLICT, error.to_string()),
            other if other.is_unavailable() => ApiError::unavailable(other.to_string()),
            StoreError::Full(_) => {
                let message = error.to_string();
                STORE_WARNINGS.warn(&format!("answering 507: {message}"));
                ApiError::new(StatusCode::INSUFFICIENT_STORAGE, message)
            }
            other => ApiError::internal(other.to_string()),
        }
    }
}

impl IntoResponse for ApiError {
    fn into_response(self) -> Response {
        let body = serde_json::json!({ "error": self.message });
        let mut response = (self.status, Json(body)).into_response();
        if let Some(seconds) = self.retry_after {
            response
                .headers_mut()
                .insert(header::RETRY_AFTER, HeaderValue::from(seconds));
        }
        if self.close {
            response
                .headers_mut()
                .insert(header::CONNECTION, HeaderValue::from_static("close"));
        }
        response
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_unreachable_store_is_503_with_retry_after() {
        let refused = || std::io::Error::from(std::io::ErrorKind::ConnectionRefused);
        for error in [
            StoreError::Redis(refused().into()),
            StoreError::Io(refused()),
            StoreError::Timeout("the commit".into()),
            StoreError::unavailable("redb: No space left on device"),
        ] {
            let response = ApiError::from(error).into_response();
            assert_eq!(response.status(), StatusCode::SERVICE_UNAVAILABLE);
            assert_eq!(response.headers()[header::RETRY_AFTER], "1");
            assert_eq!(response.headers()[header::CONTENT_TYPE], "application/json");
        }
        let corrupt = ApiError::from(StoreError::Corrupt("bad row".into()));
        assert_eq!(corrupt.status, StatusCode::INTERNAL_SERVER_ERROR);
        assert_eq!(corrupt.retry_after, None);
    }
}
