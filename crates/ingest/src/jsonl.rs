//! JSON Lines: one JSON object per line, fields named by [`JsonlFields`].
//!
//! Lines are parsed with a serde visitor that only materialises the
//! configured fields (borrowing them from the line when they contain no
//! escapes) and skips everything else, so a record with a big unused field
//! costs a scan, not an allocation.

use crate::document::{Body, Document, Place};
use crate::error::{ErrorKind, IngestError};
use crate::format::Compression;
use crate::lines::{Line, LineReader};
use crate::options::{JsonlFields, ReadOptions};
use serde::de::{self, DeserializeSeed, Deserializer, IgnoredAny, MapAccess, SeqAccess, Visitor};
use std::borrow::Cow;
use std::fmt;
use std::io::BufRead;
use std::path::Path;
use std::sync::Arc;

/// Streams [`Document`]s from JSON Lines.
///
/// Blank lines are skipped. A bad line (malformed JSON, no text field,
/// invalid UTF-8, over the size limit, ...) yields an error with its line
/// number and reading goes on with the next line. A read or decompression
/// error (e.g. a truncated `.gz`) yields one error and ends the stream.
pub struct JsonlReader<R> {
    lines: LineReader<R>,
    place: Place,
    opts: Arc<ReadOptions>,
    compression: Compression,
    buf: Vec<u8>,
    done: bool,
}

impl<R: BufRead> JsonlReader<R> {
    /// Reads uncompressed JSONL from `reader`; `source` names it in places
    /// (a path, or `-` for stdin).
    pub fn new(reader: R, source: impl Into<Arc<Path>>, opts: Arc<ReadOptions>) -> Self {
        JsonlReader {
            lines: LineReader::new(reader),
            place: Place::file(source),
            opts,
            compression: Compression::None,
            buf: Vec::new(),
            done: false,
        }
    }

    /// Says that `reader` decompresses a stream of this kind, so that read
    /// errors are reported as a corrupt or truncated stream.
    pub(crate) fn decompressing(mut self, compression: Compression) -> Self {
        self.compression = compression;
        self
    }

    fn record(&mut self) -> Result<Document, IngestError> {
        let place = self.place.at_line(self.lines.line_no());
        let doc = {
            let line = match std::str::from_utf8(&self.buf) {
                Ok(line) => Cow::Borrowed(line),
                Err(_) if self.opts.lossy_utf8 => String::from_utf8_lossy(&self.buf),
                Err(err) => {
                    let kind = ErrorKind::InvalidUtf8 {
                        valid_up_to: err.valid_up_to(),
                    };
                    return Err(IngestError::new(place, kind));
                }
            };
            match parse_record(&line, &self.opts.fields) {
                Ok(record) => record.into_document(&self.opts.fields, place),
                Err(kind) => Err(IngestError::new(place, kind)),
            }
        };
        let mut doc = doc?;
        if self.opts.keep_raw {
            doc.raw = Some(std::mem::take(&mut self.buf).into_boxed_slice());
        }
        Ok(doc)
    }
}

impl<R: BufRead> Iterator for JsonlReader<R> {
    type Item = Result<Document, IngestError>;

    fn next(&mut self) -> Option<Self::Item> {
        while !self.done {
            let limit = self.opts.max_document_bytes;
            match self.lines.read_line(&mut self.buf, limit) {
                Ok(Line::Read) if self.buf.iter().all(u8::is_ascii_whitespace) => continue,
                Ok(Line::Read) => return Some(self.record()),
                Ok(Line::TooLong(size)) => {
                    let place = self.place.at_line(self.lines.line_no());
                    return Some(Err(IngestError::new(
                        place,
                        ErrorKind::TooLarge { size, limit },
                    )));
                }
                Ok(Line::End) => self.done = true,
                Err(source) => {
                    self.done = true;
                    let place = self.place.at_line(self.lines.line_no());
                    let kind = match self.compression {
                        Compression::None => ErrorKind::Read(source),
                        codec => ErrorKind::Decompress { codec, source },
                    };
                    return Some(Err(IngestError::new(place, kind)));
                }
            }
        }
        None
    }
}

/// A JSON value as far as a document field cares.
#[derive(Clone, Debug, PartialEq)]
enum Value<'a> {
    Str(Cow<'a, str>),
    /// A number, rendered in decimal.
    Number(String),
    Null,
    /// Any other JSON type, by its description (`a boolean`, `an array`, ...).
    Other(&'static str),
}

/// The configured fields of one record.
#[derive(Default)]
struct Record<'a> {
    id: Option<Value<'a>>,
    text: Option<Value<'a>>,
    html: Option<Value<'a>>,
    url: Option<Value<'a>>,
    title: Option<Value<'a>>,
    fetched_at: Option<Value<'a>>,
}

/// Parses one line into the configured fields.
fn parse_record<'a>(line: &'a str, fields: &JsonlFields) -> Result<Record<'a>, ErrorKind> {
    let json_error = |err: serde_json::Error| {
        let message = err.to_string();
        let position = format!(" at line {} column {}", err.line(), err.column());
        ErrorKind::Json {
            column: err.column(),
            message: message
                .strip_suffix(&position)
                .unwrap_or(&message)
                .to_string(),
        }
    };
    if !line.trim_start().starts_with('{') {
        return Err(match serde_json::from_str::<IgnoredAny>(line) {
            Ok(_) => ErrorKind::NotAnObject,
            Err(err) => json_error(err),
        });
    }
    let mut de = serde_json::Deserializer::from_str(line);
    let record = RecordSeed(fields)
        .deserialize(&mut de)
        .map_err(json_error)?;
    de.end().map_err(json_error)?;
    Ok(record)
}

impl Record<'_> {
    fn into_document(self, fields: &JsonlFields, place: Place) -> Result<Document, IngestError> {
        let fail = |kind| IngestError::new(place.clone(), kind);
        let body = match string_field(self.text, &fields.text, false).map_err(fail)? {
            Some(text) => Body::Text(text),
            None => match string_field(self.html, &fields.html, false).map_err(fail)? {
                Some(html) => Body::Html(html),
                None => {
                    return Err(fail(ErrorKind::MissingText {
                        text: fields.text.clone(),
                        html: fields.html.clone(),
                    }))
                }
            },
        };
        let id = string_field(self.id, &fields.id, true).map_err(fail)?;
        let url = string_field(self.url, &fields.url, false).map_err(fail)?;
        let title = string_field(self.title, &fields.title, false).map_err(fail)?;
        let fetched_at = string_field(self.fetched_at, &fields.fetched_at, false).map_err(fail)?;
        let title = match (&title, &body) {
            (None, Body::Html(html)) => crate::extract::html_title(html),
            _ => title,
        };
        Ok(Document {
            id: id.unwrap_or_else(|| place.to_string()),
            url,
            title,
            body,
            fetched_at,
            place,
            raw: None,
        })
    }
}

/// A field as an owned string: `None` when absent or null, an error when of
/// the wrong type. Numbers are accepted (in decimal) where `number_ok`.
fn string_field(
    value: Option<Value<'_>>,
    name: &str,
    number_ok: bool,
) -> Result<Option<String>, ErrorKind> {
    let found = match value {
        None | Some(Value::Null) => return Ok(None),
        Some(Value::Str(s)) => return Ok(Some(s.into_owned())),
        Some(Value::Number(n)) if number_ok => return Ok(Some(n)),
        Some(Value::Number(_)) => "a number",
        Some(Value::Other(found)) => found,
    };
    Err(ErrorKind::WrongType {
        field: name.to_string(),
        expected: if number_ok {
            "a string or a number"
        } else {
            "a string"
        },
        found,
    })
}

/// Deserialises a JSON object into a [`Record`], keeping only the fields
/// named in the [`JsonlFields`].
struct RecordSeed<'f>(&'f JsonlFields);

impl<'de> DeserializeSeed<'de> for RecordSeed<'_> {
    type Value = Record<'de>;

    fn deserialize<D: Deserializer<'de>>(self, de: D) -> Result<Record<'de>, D::Error> {
        de.deserialize_map(self)
    }
}

impl<'de> Visitor<'de> for RecordSeed<'_> {
    type Value = Record<'de>;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a JSON object")
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Record<'de>, A::Error> {
        let fields = self.0;
        let mut record = Record::default();
        while let Some(key) = map.next_key::<Value<'de>>()? {
            let Value::Str(key) = key else {
                map.next_value::<IgnoredAny>()?;
                continue;
            };
            let mut slots = [
                (&fields.id, &mut record.id),
                (&fields.text, &mut record.text),
                (&fields.html, &mut record.html),
                (&fields.url, &mut record.url),
                (&fields.title, &mut record.title),
                (&fields.fetched_at, &mut record.fetched_at),
            ];
            if !slots.iter().any(|(name, _)| **name == key) {
                map.next_value::<IgnoredAny>()?;
                continue;
            }
            let value: Value<'de> = map.next_value()?;
            for (name, slot) in &mut slots {
                // The first occurrence of a duplicated key wins.
                if **name == key && slot.is_none() {
                    **slot = Some(value.clone());
                }
            }
        }
        Ok(record)
    }
}

impl<'de> de::Deserialize<'de> for Value<'de> {
    fn deserialize<D: Deserializer<'de>>(de: D) -> Result<Self, D::Error> {
        de.deserialize_any(ValueVisitor)
    }
}

struct ValueVisitor;

impl<'de> Visitor<'de> for ValueVisitor {
    type Value = Value<'de>;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("any JSON value")
    }

    fn visit_borrowed_str<E>(self, v: &'de str) -> Result<Self::Value, E> {
        Ok(Value::Str(Cow::Borrowed(v)))
    }

    fn visit_str<E>(self, v: &str) -> Result<Self::Value, E> {
        Ok(Value::Str(Cow::Owned(v.to_string())))
    }

    fn visit_string<E>(self, v: String) -> Result<Self::Value, E> {
        Ok(Value::Str(Cow::Owned(v)))
    }

    fn visit_u64<E>(self, v: u64) -> Result<Self::Value, E> {
        Ok(Value::Number(v.to_string()))
    }

    fn visit_i64<E>(self, v: i64) -> Result<Self::Value, E> {
        Ok(Value::Number(v.to_string()))
    }

    fn visit_f64<E>(self, v: f64) -> Result<Self::Value, E> {
        Ok(Value::Number(v.to_string()))
    }

    fn visit_bool<E>(self, _: bool) -> Result<Self::Value, E> {
        Ok(Value::Other("a boolean"))
    }

    fn visit_unit<E>(self) -> Result<Self::Value, E> {
        Ok(Value::Null)
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Self::Value, A::Error> {
        while seq.next_element::<IgnoredAny>()?.is_some() {}
        Ok(Value::Other("an array"))
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Self::Value, A::Error> {
        while map.next_entry::<IgnoredAny, IgnoredAny>()?.is_some() {}
        Ok(Value::Other("an object"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Cursor;

    fn read(data: &str, opts: ReadOptions) -> Vec<Result<Document, IngestError>> {
        JsonlReader::new(
            Cursor::new(data.to_string()),
            Path::new("t.jsonl"),
            Arc::new(opts),
        )
        .collect()
    }

    #[test]
    fn fields_ids_and_bodies() {
        let data = concat!(
            "{\"id\":\"a\",\"text\":\"hello\",\"url\":\"http://x/\",\"title\":\"T\",\"fetched_at\":\"2024-01-01T00:00:00Z\",\"extra\":[1,{\"x\":2}]}\n",
            "{\"id\":42,\"text\":\"esc\\u00e9\\n\"}\n",
            "\n",
            "{\"text\":\"no id\"}\r\n",
            "{\"id\":1.5,\"html\":\"<title>Hi</title><p>x</p>\"}\n",
        );
        let docs: Vec<Document> = read(data, ReadOptions::default())
            .into_iter()
            .map(Result::unwrap)
            .collect();
        assert_eq!(docs.len(), 4);
        assert_eq!(docs[0].id, "a");
        assert_eq!(docs[0].url.as_deref(), Some("http://x/"));
        assert_eq!(docs[0].title.as_deref(), Some("T"));
        assert_eq!(docs[0].fetched_at.as_deref(), Some("2024-01-01T00:00:00Z"));
        assert_eq!(docs[0].body, Body::Text("hello".into()));
        assert_eq!(docs[1].id, "42");
        assert_eq!(docs[1].body, Body::Text("escé\n".into()));
        assert_eq!(docs[2].id, "t.jsonl:4");
        assert_eq!(docs[2].place.to_string(), "t.jsonl:4");
        assert_eq!(docs[3].id, "1.5");
        assert!(docs[3].body.is_html());
        assert_eq!(docs[3].title.as_deref(), Some("Hi"));
        assert!(docs.iter().all(|d| d.raw.is_none()));
    }

    #[test]
    fn custom_field_names_and_raw() {
        let opts = ReadOptions {
            fields: JsonlFields {
                id: "url".into(),
                text: "content".into(),
                ..JsonlFields::default()
            },
            keep_raw: true,
            ..ReadOptions::default()
        };
        let line = "{\"url\":\"u1\",\"content\":\"c\"}\r";
        let docs = read(&format!("{line}\n"), opts);
        let doc = docs[0].as_ref().unwrap();
        assert_eq!((doc.id.as_str(), doc.url.as_deref()), ("u1", Some("u1")));
        assert_eq!(doc.raw.as_deref(), Some(line.as_bytes()));
    }

    #[test]
    fn bad_lines_are_reported_and_skipped() {
        let data = concat!(
            "{\"id\":1,\"text\":\"ok\"}\n",
            "{\"id\":2,\"text\":\n",
            "[1,2]\n",
            "{\"id\":3}\n",
            "{\"id\":4,\"text\":7}\n",
            "{\"id\":{},\"text\":\"x\"}\n",
            "{\"id\":5,\"text\":\"ok\"} trailing\n",
            "{\"id\":6,\"text\":\"ok\"}\n",
        );
        let out = read(data, ReadOptions::default());
        let msgs: Vec<String> = out
            .iter()
            .map(|r| match r {
                Ok(d) => format!("ok {}", d.id),
                Err(e) => e.to_string(),
            })
            .collect();
        assert_eq!(
            msgs,
            [
                "ok 1",
                "t.jsonl:2: malformed JSON at column 15: EOF while parsing a value",
                "t.jsonl:3: record is not a JSON object",
                "t.jsonl:4: record has no text field `text` (nor html field `html`)",
                "t.jsonl:5: field `text` is a number, expected a string",
                "t.jsonl:6: field `id` is an object, expected a string or a number",
                "t.jsonl:7: malformed JSON at column 22: trailing characters",
                "ok 6",
            ]
        );
    }

    #[test]
    fn invalid_utf8_strict_and_lossy() {
        let data = b"{\"text\":\"a\xffb\"}\n{\"text\":\"ok\"}\n".to_vec();
        let strict: Vec<_> = JsonlReader::new(
            Cursor::new(data.clone()),
            Path::new("u.jsonl"),
            Default::default(),
        )
        .collect();
        let err = strict[0].as_ref().unwrap_err();
        assert_eq!(
            err.to_string(),
            "u.jsonl:1: invalid UTF-8 (first bad byte at byte 10 of the record)"
        );
        assert!(strict[1].is_ok());
        let opts = Arc::new(ReadOptions {
            lossy_utf8: true,
            ..ReadOptions::default()
        });
        let lossy: Vec<_> =
            JsonlReader::new(Cursor::new(data), Path::new("u.jsonl"), opts).collect();
        assert_eq!(
            lossy[0].as_ref().unwrap().body,
            Body::Text("a\u{fffd}b".into())
        );
    }

    #[test]
    fn oversized_line_is_an_error_and_reading_goes_on() {
        let big = format!("{{\"text\":\"{}\"}}", "x".repeat(1000));
        let data = format!("{big}\n{{\"text\":\"small\"}}\n");
        let opts = ReadOptions {
            max_document_bytes: 100,
            ..ReadOptions::default()
        };
        let out = read(&data, opts);
        assert_eq!(
            out[0].as_ref().unwrap_err().to_string(),
            "t.jsonl:1: record of 1011 bytes is over the limit of 100 bytes (max_document_bytes)"
        );
        assert_eq!(out[1].as_ref().unwrap().body, Body::Text("small".into()));
    }
}
