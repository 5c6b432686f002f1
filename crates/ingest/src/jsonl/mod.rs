//! JSON Lines: one JSON object per line, fields named by [`JsonlFields`].
//!
//! Lines are parsed in one pass (`scan`: a SIMD scan of strings, escapes
//! unescaped once) that only materialises the configured fields (borrowing
//! them from the line when they contain no escapes) and skips everything else,
//! so a record with a big unused field costs a scan, not an allocation. A line
//! that pass is not sure of (malformed, a number in a read field, an escaped
//! key, ...) is parsed again by a serde visitor with the same rules, which
//! gives the value or the error. [`parse_record`] is that parser on one
//! line, for callers that read lines their own way (`neardup fingerprint`
//! reads blocks of lines and parses them in parallel); [`JsonlReader`] uses it
//! to stream [`Document`]s.

use crate::charset::decode_utf8;
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

mod scan;
mod string_end;

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
        parse_document(&self.buf, place, &self.opts)
    }
}

/// Makes the [`Document`] of one JSON Lines record at `place` (a line
/// without its `\n`), as [`JsonlReader`] does: decoded as `opts` says (UTF-8,
/// lossy or not), parsed with [`parse_record`] for `opts.fields`, its raw
/// bytes kept when `opts.keep_raw`. For callers that split lines themselves
/// (e.g. blocks of lines parsed in parallel); the size limit is theirs to
/// check.
pub fn parse_document(
    line: &[u8],
    place: Place,
    opts: &ReadOptions,
) -> Result<Document, IngestError> {
    match decode_utf8(line, opts.lossy_utf8) {
        Ok(text) => parse_text_document(&text, line, place, opts),
        Err(kind) => Err(IngestError::new(place, kind)),
    }
}

/// [`parse_document`] of a line already decoded: `text` is `line` as UTF-8 (for a line known to
/// be valid, `line` itself: a block of lines checked at once need not check each line again).
pub(crate) fn parse_text_document(
    text: &str,
    line: &[u8],
    place: Place,
    opts: &ReadOptions,
) -> Result<Document, IngestError> {
    let mut doc = match parse_record(text, &opts.fields) {
        Ok(record) => record.into_document(place),
        Err(kind) => return Err(IngestError::new(place, kind)),
    };
    if opts.keep_raw {
        doc.raw = Some(line.into());
    }
    Ok(doc)
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
                        codec => ErrorKind::CorruptStream { codec, source },
                    };
                    return Some(Err(IngestError::new(place, kind)));
                }
            }
        }
        None
    }
}

/// The configured fields of one JSON Lines record, as [`parse_record`] finds
/// them. Strings are borrowed from the line where they have no escapes, so a
/// caller that works on the line in place (`neardup fingerprint`) copies
/// nothing; [`JsonlReader`] makes [`Document`]s of them.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct InputRecord<'a> {
    /// The id: a string, or a number rendered in decimal; `None` when absent
    /// or `null`.
    pub id: Option<Cow<'a, str>>,
    /// The text, or else the HTML.
    pub body: InputRecordBody<'a>,
    /// The URL, if the field is read and present.
    pub url: Option<Cow<'a, str>>,
    /// The title, if the field is read and present.
    pub title: Option<Cow<'a, str>>,
    /// The fetch time, if the field is read and present.
    pub fetched_at: Option<Cow<'a, str>>,
}

/// The body of an [`InputRecord`], tagged with the field it came from, because HTML
/// is extracted before it is compared and text is not.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum InputRecordBody<'a> {
    /// From the text field.
    Text(Cow<'a, str>),
    /// From the html field (read only when the text field is absent or null).
    Html(Cow<'a, str>),
}

impl InputRecordBody<'_> {
    /// The body's characters, whichever field they came from.
    pub fn as_str(&self) -> &str {
        match self {
            InputRecordBody::Text(text) | InputRecordBody::Html(text) => text,
        }
    }
}

/// Parses one JSON Lines record (a line without its newline) into the fields
/// named by `fields`, skipping every other field without building it.
///
/// Errors, in this order: the line is not JSON ([`ErrorKind::Json`]), not an
/// object ([`ErrorKind::NotAnObject`]), its text (or, when there is none, its
/// html) is not a string ([`ErrorKind::WrongType`]), it has neither
/// ([`ErrorKind::MissingText`]), another read field has the wrong type. Of a
/// key given twice, the first value counts. The place is the caller's to add.
pub fn parse_record<'a>(line: &'a str, fields: &JsonlFields) -> Result<InputRecord<'a>, ErrorKind> {
    // The one-pass reader first; serde_json for what it is not sure of, and for the errors.
    match scan::scan_record(line, fields) {
        Some(values) => values.into_record(fields),
        None => parse_record_serde(line, fields),
    }
}

/// [`parse_record`] by serde_json alone, without the one-pass reader it tries first: the
/// reference that reader is tested and benchmarked against (the same values and errors).
pub fn parse_record_serde<'a>(
    line: &'a str,
    fields: &JsonlFields,
) -> Result<InputRecord<'a>, ErrorKind> {
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
    serde_values(line, fields)
        .map_err(json_error)?
        .into_record(fields)
}

/// The values of the read fields of the JSON object `line`, by serde_json.
fn serde_values<'a>(line: &'a str, fields: &JsonlFields) -> Result<Values<'a>, serde_json::Error> {
    let mut de = serde_json::Deserializer::from_str(line);
    let values = RecordSeed(fields).deserialize(&mut de)?;
    de.end()?;
    Ok(values)
}

impl InputRecord<'_> {
    /// The document this record at `place` describes: the id defaults to the
    /// place, and an HTML body without a title field gets its `<title>`.
    pub(crate) fn into_document(self, place: Place) -> Document {
        // A borrowed body is copied into a spare string of this thread's when it has one.
        let owned = |text: Cow<'_, str>| match text {
            Cow::Borrowed(text) => crate::spare::string_of(text),
            Cow::Owned(text) => text,
        };
        let body = match self.body {
            InputRecordBody::Text(text) => Body::Text(owned(text)),
            InputRecordBody::Html(html) => Body::Html(owned(html)),
        };
        let title = crate::text::title_of(self.title.map(Cow::into_owned), &body);
        Document {
            id: self.id.map_or_else(|| place.to_string(), Cow::into_owned),
            url: self.url.map(Cow::into_owned),
            title,
            body,
            fetched_at: self.fetched_at.map(Cow::into_owned),
            place,
            raw: None,
        }
    }
}

/// A JSON value as far as a record field cares.
#[derive(Clone, Debug, PartialEq)]
enum Value<'a> {
    Str(Cow<'a, str>),
    /// A number, rendered in decimal.
    Number(String),
    Null,
    /// Any other JSON type, by its description (`a boolean`, `an array`, ...).
    Other(&'static str),
}

/// The values of the read fields of one record, before their types are
/// checked.
#[derive(Debug, Default)]
struct Values<'a> {
    id: Option<Value<'a>>,
    text: Option<Value<'a>>,
    html: Option<Value<'a>>,
    url: Option<Value<'a>>,
    title: Option<Value<'a>>,
    fetched_at: Option<Value<'a>>,
}

impl<'a> Values<'a> {
    /// Each field's name, `None` when the field is not read, in the order of [`Values::slots`].
    fn names(fields: &JsonlFields) -> [Option<&str>; 6] {
        [
            Some(fields.id.as_str()),
            Some(fields.text.as_str()),
            fields.html.as_deref(),
            fields.url.as_deref(),
            fields.title.as_deref(),
            fields.fetched_at.as_deref(),
        ]
    }

    /// Each field's slot, in the order of [`Values::names`].
    fn slots(&mut self) -> [&mut Option<Value<'a>>; 6] {
        [
            &mut self.id,
            &mut self.text,
            &mut self.html,
            &mut self.url,
            &mut self.title,
            &mut self.fetched_at,
        ]
    }

    /// Whether `key` names a read field (its value is then read, else skipped).
    fn wants(fields: &JsonlFields, key: &str) -> bool {
        Values::names(fields).contains(&Some(key))
    }

    /// Puts the value of `key` in the slot of each field it names that has none yet: the
    /// first occurrence of a duplicated key wins, and a key that names several fields fills
    /// each (only then is the value copied).
    fn fill(&mut self, fields: &JsonlFields, key: &str, value: Value<'a>) {
        let mut named = Values::names(fields)
            .into_iter()
            .zip(self.slots())
            .filter(|(name, _)| *name == Some(key))
            .map(|(_, slot)| slot);
        let Some(first) = named.next() else {
            return;
        };
        for slot in named.filter(|slot| slot.is_none()) {
            *slot = Some(value.clone());
        }
        if first.is_none() {
            *first = Some(value);
        }
    }

    /// Checks the types, in the order [`parse_record`] documents.
    fn into_record(self, fields: &JsonlFields) -> Result<InputRecord<'a>, ErrorKind> {
        // A value is only ever found for a field that is read, so an unread
        // field's name is never needed.
        fn name(field: &Option<String>) -> &str {
            field.as_deref().unwrap_or_default()
        }
        let body = match string_field(self.text, &fields.text, false)? {
            Some(text) => InputRecordBody::Text(text),
            None => match string_field(self.html, name(&fields.html), false)? {
                Some(html) => InputRecordBody::Html(html),
                None => {
                    return Err(ErrorKind::MissingText {
                        text: fields.text.clone(),
                        html: fields.html.clone(),
                    })
                }
            },
        };
        Ok(InputRecord {
            id: string_field(self.id, &fields.id, true)?,
            body,
            url: string_field(self.url, name(&fields.url), false)?,
            title: string_field(self.title, name(&fields.title), false)?,
            fetched_at: string_field(self.fetched_at, name(&fields.fetched_at), false)?,
        })
    }
}

/// A field as a string: `None` when absent or null, an error when of the
/// wrong type. Numbers are accepted (in decimal) where `number_ok`.
fn string_field<'a>(
    value: Option<Value<'a>>,
    name: &str,
    number_ok: bool,
) -> Result<Option<Cow<'a, str>>, ErrorKind> {
    let found = match value {
        None | Some(Value::Null) => return Ok(None),
        Some(Value::Str(s)) => return Ok(Some(s)),
        Some(Value::Number(n)) if number_ok => return Ok(Some(Cow::Owned(n))),
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

/// Deserialises a JSON object into [`Values`], keeping only the fields named
/// in the [`JsonlFields`].
struct RecordSeed<'f>(&'f JsonlFields);

impl<'de> DeserializeSeed<'de> for RecordSeed<'_> {
    type Value = Values<'de>;

    fn deserialize<D: Deserializer<'de>>(self, de: D) -> Result<Values<'de>, D::Error> {
        de.deserialize_map(self)
    }
}

impl<'de> Visitor<'de> for RecordSeed<'_> {
    type Value = Values<'de>;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a JSON object")
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Values<'de>, A::Error> {
        let fields = self.0;
        let mut values = Values::default();
        while let Some(key) = map.next_key::<Value<'de>>()? {
            match key {
                Value::Str(key) if Values::wants(fields, &key) => {
                    let value: Value<'de> = map.next_value()?;
                    values.fill(fields, &key, value);
                }
                _ => {
                    map.next_value::<IgnoredAny>()?;
                }
            }
        }
        Ok(values)
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
    fn parse_record_borrows_and_skips_the_rest() {
        let fields = JsonlFields::default();
        let line =
            r#"{"meta": {"a": [1, 2]}, "id": 17, "text": "caf\u00e9 ok", "url": "u", "x": null}"#;
        let record = parse_record(line, &fields).unwrap();
        assert_eq!(record.id.as_deref(), Some("17"));
        assert_eq!(record.body, InputRecordBody::Text("café ok".into()));
        assert!(matches!(record.url, Some(Cow::Borrowed("u"))));
        assert_eq!((record.title, record.fetched_at), (None, None));
        let plain = parse_record(r#"{"text": "plain", "id": "a"}"#, &fields).unwrap();
        assert!(matches!(
            plain.body,
            InputRecordBody::Text(Cow::Borrowed("plain"))
        ));
        assert!(matches!(plain.id, Some(Cow::Borrowed("a"))));
    }

    #[test]
    fn id_and_text_reads_nothing_else() {
        let fields = JsonlFields::id_and_text("key", "body");
        let line = r#"{"key": "k", "body": "b", "html": 1, "url": 2, "title": [], "text": 3}"#;
        let record = parse_record(line, &fields).unwrap();
        assert_eq!(record.id.as_deref(), Some("k"));
        assert_eq!(record.body.as_str(), "b");
        let missing = parse_record(r#"{"key": "k", "html": "<p>x</p>"}"#, &fields);
        assert_eq!(
            missing.unwrap_err().to_string(),
            "record has no text field `body`"
        );
    }

    #[test]
    fn a_key_naming_two_fields_fills_both_and_the_first_of_a_repeated_key_counts() {
        let fields = JsonlFields::id_and_text("text", "text");
        let record = parse_record(r#"{"text": "a\nb", "text": "c"}"#, &fields).unwrap();
        assert_eq!(record.id.as_deref(), Some("a\nb"));
        assert_eq!(record.body.as_str(), "a\nb");
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
