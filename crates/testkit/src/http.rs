//! A small HTTP client for the tests of the service: every answer with its status, its body
//! as JSON and the headers the tests look at.

use std::time::{Duration, Instant};

use serde_json::Value;

/// An answer, with what the fault tests look at.
#[derive(Debug)]
pub struct Reply {
    /// The status.
    pub status: u16,
    /// The body as JSON (`Value::Null` if not JSON).
    pub body: Value,
    /// The `Retry-After` header.
    pub retry_after: Option<String>,
    /// The `Content-Type` header.
    pub content_type: Option<String>,
    /// How long the answer took.
    pub elapsed: Duration,
}

/// Sends a request (30 s at most) with this `Authorization` header, if any, and a JSON body
/// unless it is a GET or a DELETE; a transport error (server gone) is an `Err`.
pub fn send(
    method: &str,
    url: &str,
    body: &[u8],
    authorization: Option<&str>,
) -> Result<Reply, String> {
    let started = Instant::now();
    let mut request = ureq::request(method, url).timeout(Duration::from_secs(30));
    if let Some(authorization) = authorization {
        request = request.set("Authorization", authorization);
    }
    let result = if method == "GET" || method == "DELETE" {
        request.call()
    } else {
        request
            .set("Content-Type", "application/json")
            .send_bytes(body)
    };
    let response = match result {
        Ok(response) => response,
        Err(ureq::Error::Status(_, response)) => response,
        Err(error) => return Err(error.to_string()),
    };
    let status = response.status();
    let retry_after = response.header("retry-after").map(str::to_string);
    let content_type = response.header("content-type").map(str::to_string);
    let text = response.into_string().map_err(|e| e.to_string())?;
    Ok(Reply {
        status,
        body: serde_json::from_str(&text).unwrap_or(Value::Null),
        retry_after,
        content_type,
        elapsed: started.elapsed(),
    })
}
