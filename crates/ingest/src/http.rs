//! The HTTP response inside a WARC `response` record: status line and
//! headers (parsed by `httparse`, leniently), de-chunking, and gzip/deflate
//! content decoding with a size limit (no decompression bombs).

use crate::error::ErrorKind;
use std::borrow::Cow;
use std::io::Read;

/// Most headers a response may have.
const MAX_HEADERS: usize = 256;

/// A parsed HTTP response.
pub(crate) struct Response<'a> {
    /// Status code, e.g. 200.
    pub(crate) status: u16,
    /// The Content-Type header value, if any.
    pub(crate) content_type: Option<String>,
    /// The payload, de-chunked and content-decoded.
    pub(crate) body: Cow<'a, [u8]>,
}

/// What a Content-Encoding means for us.
enum Coding {
    Identity,
    Gzip,
    Deflate,
    Unsupported,
}

/// Parses an HTTP response message. `Ok(None)` means a well-formed response
/// whose Content-Encoding this crate cannot decode (e.g. `br`): not a
/// document, but not an error either. A decoded body over `limit` bytes is
/// [`ErrorKind::TooLarge`].
pub(crate) fn parse_response(block: &[u8], limit: u64) -> Result<Option<Response<'_>>, ErrorKind> {
    let mut headers = vec![httparse::EMPTY_HEADER; MAX_HEADERS];
    let mut response = httparse::Response::new(&mut headers);
    let status = httparse::ParserConfig::default()
        .allow_spaces_after_header_name_in_responses(true)
        .allow_obsolete_multiline_headers_in_responses(true)
        .allow_multiple_spaces_in_response_status_delimiters(true)
        .ignore_invalid_headers_in_responses(true)
        .parse_response(&mut response, block)
        .map_err(|err| ErrorKind::http_failed("the header", err))?;
    let header_len = match status {
        httparse::Status::Complete(len) => len,
        httparse::Status::Partial => return Err(ErrorKind::http("incomplete header")),
    };
    let header = |name: &str| {
        response
            .headers
            .iter()
            .find(|h| h.name.eq_ignore_ascii_case(name))
            .map(|h| String::from_utf8_lossy(h.value).trim().to_string())
    };
    let content_type = header("content-type");
    let chunked =
        header("transfer-encoding").is_some_and(|te| te.to_ascii_lowercase().contains("chunked"));
    let coding = match header("content-encoding").map(|c| c.to_ascii_lowercase()) {
        None => Coding::Identity,
        Some(c) if c.is_empty() || c == "identity" => Coding::Identity,
        Some(c) if c == "gzip" || c == "x-gzip" => Coding::Gzip,
        Some(c) if c == "deflate" => Coding::Deflate,
        Some(_) => Coding::Unsupported,
    };
    let status = response.code.unwrap_or(0);
    let raw = &block[header_len..];
    let body = if chunked {
        dechunk(raw)?
    } else {
        Cow::Borrowed(raw)
    };
    let body = match coding {
        Coding::Identity => body,
        Coding::Gzip => Cow::Owned(inflate(flate2::read::MultiGzDecoder::new(&*body), limit)?),
        Coding::Deflate => Cow::Owned(inflate_deflate(&body, limit)?),
        Coding::Unsupported => return Ok(None),
    };
    Ok(Some(Response {
        status,
        content_type,
        body,
    }))
}

/// Undoes `Transfer-Encoding: chunked`. A body that does not even start with
/// a chunk size is taken as already de-chunked (some WARC writers store it
/// so but keep the header).
fn dechunk(mut data: &[u8]) -> Result<Cow<'_, [u8]>, ErrorKind> {
    let original = data;
    let mut out = Vec::with_capacity(data.len());
    loop {
        let (skip, size) = match httparse::parse_chunk_size(data) {
            Ok(httparse::Status::Complete(found)) => found,
            Err(_) if out.is_empty() && data.len() == original.len() => {
                return Ok(Cow::Borrowed(original))
            }
            // A missing last chunk: keep what arrived.
            Ok(httparse::Status::Partial) if data.trim_ascii().is_empty() => break,
            Ok(httparse::Status::Partial) | Err(_) => {
                return Err(ErrorKind::http("invalid chunked encoding"))
            }
        };
        data = &data[skip..];
        if size == 0 {
            break;
        }
        let size = usize::try_from(size).unwrap_or(usize::MAX);
        if size > data.len() {
            return Err(ErrorKind::http(format!(
                "chunk of {size} bytes but only {} bytes left",
                data.len()
            )));
        }
        out.extend_from_slice(&data[..size]);
        data = &data[size..];
        data = data
            .strip_prefix(b"\r\n")
            .or_else(|| data.strip_prefix(b"\n"))
            .ok_or_else(|| ErrorKind::http("missing CRLF after a chunk"))?;
    }
    Ok(Cow::Owned(out))
}

/// Reads a decoder to the end, failing beyond `limit` bytes of output.
fn inflate(decoder: impl Read, limit: u64) -> Result<Vec<u8>, ErrorKind> {
    let mut out = Vec::new();
    decoder
        .take(limit.saturating_add(1))
        .read_to_end(&mut out)
        .map_err(|err| ErrorKind::http_failed("cannot decode the content", err))?;
    if out.len() as u64 > limit {
        return Err(ErrorKind::TooLarge {
            size: out.len() as u64,
            limit,
        });
    }
    Ok(out)
}

/// `Content-Encoding: deflate` is zlib-wrapped by the standard but raw
/// deflate in the wild; try both.
fn inflate_deflate(body: &[u8], limit: u64) -> Result<Vec<u8>, ErrorKind> {
    inflate(flate2::read::ZlibDecoder::new(body), limit)
        .or_else(|_| inflate(flate2::read::DeflateDecoder::new(body), limit))
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Write;

    fn parse(block: &[u8]) -> Response<'_> {
        parse_response(block, 1 << 20).unwrap().unwrap()
    }

    #[test]
    fn plain_and_chunked() {
        let r = parse(b"HTTP/1.1 200 OK\r\nContent-Type: text/html\r\n\r\n<p>hi</p>");
        assert_eq!(
            (r.status, r.content_type.as_deref()),
            (200, Some("text/html"))
        );
        assert_eq!(&*r.body, b"<p>hi</p>");
        let r = parse(b"HTTP/1.1 404 Not Found\r\nTransfer-Encoding: chunked\r\n\r\n4\r\nWiki\r\n5;x=y\r\npedia\r\n0\r\n\r\n");
        assert_eq!((r.status, &*r.body), (404, &b"Wikipedia"[..]));
        // Already de-chunked despite the header.
        let r = parse(b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n<html>");
        assert_eq!(&*r.body, b"<html>");
        let bad = parse_response(
            b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\nff\r\nshort",
            100,
        );
        assert!(matches!(bad, Err(ErrorKind::Http { .. })));
    }

    #[test]
    fn content_encodings_and_limits() {
        let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
        gz.write_all(&[b'a'; 1000]).unwrap();
        let mut block = b"HTTP/1.0 200 OK\r\nContent-Encoding: gzip\r\n\r\n".to_vec();
        block.extend(gz.finish().unwrap());
        assert_eq!(parse(&block).body.len(), 1000);
        assert!(matches!(
            parse_response(&block, 999),
            Err(ErrorKind::TooLarge { .. })
        ));
        let br = b"HTTP/1.1 200 OK\r\nContent-Encoding: br\r\n\r\nxx";
        assert!(parse_response(br, 100).unwrap().is_none());
        assert!(matches!(
            parse_response(b"garbage", 100),
            Err(ErrorKind::Http { .. })
        ));
    }

    #[test]
    fn the_parser_s_and_the_decoder_s_errors_are_kept_as_sources() {
        let Err(ErrorKind::Http { what, source }) = parse_response(b"HTTP/1.1 2x0 OK\r\n\r\n", 100)
        else {
            panic!("a bad status code is a malformed response");
        };
        let source = source.expect("httparse's error is kept");
        assert!(
            source.downcast_ref::<httparse::Error>().is_some(),
            "{source:?}"
        );
        assert_eq!(what, format!("the header: {source}"));

        let block = b"HTTP/1.1 200 OK\r\nContent-Encoding: gzip\r\n\r\nnot gzip at all";
        let Err(ErrorKind::Http { what, source }) = parse_response(block, 100) else {
            panic!("content that does not decode is a malformed response");
        };
        let source = source.expect("the decoder's error is kept");
        assert!(
            source.downcast_ref::<std::io::Error>().is_some(),
            "{source:?}"
        );
        assert!(what.starts_with("cannot decode the content: "), "{what}");
    }
}
