//! A JSON record with its text field replaced, every other field kept as read, in order.

use std::fmt;

use serde::de::{MapAccess, Visitor};
use serde::Deserializer;
use serde_json::value::RawValue;

use crate::error::DedupError;

/// The fields of a JSON object, in order, each value as its raw JSON.
struct Fields<'a>(Vec<(String, &'a RawValue)>);

impl<'de: 'a, 'a> serde::Deserialize<'de> for Fields<'a> {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct Each<'a>(std::marker::PhantomData<&'a ()>);
        impl<'de: 'a, 'a> Visitor<'de> for Each<'a> {
            type Value = Fields<'a>;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a JSON object")
            }
            fn visit_map<M: MapAccess<'de>>(self, mut map: M) -> Result<Fields<'a>, M::Error> {
                let mut fields = Vec::new();
                while let Some(entry) = map.next_entry::<String, &'de RawValue>()? {
                    fields.push(entry);
                }
                Ok(Fields(fields))
            }
        }
        deserializer.deserialize_map(Each(std::marker::PhantomData))
    }
}

/// The JSON object `raw` (a JSON Lines record, without its newline) with the field
/// `text_field` set to `text` (added at the end if absent); every other field is written back
/// as read, in its place.
///
/// ```
/// use neardup_dedup::units::rewrite_record;
/// let raw = br#"{"url":"u","text":"Menu\n\nStory","n": 1.50}"#;
/// let out = rewrite_record(raw, "text", "Story").unwrap();
/// assert_eq!(out, br#"{"url":"u","text":"Story","n":1.50}"#);
/// ```
pub fn rewrite_record(raw: &[u8], text_field: &str, text: &str) -> Result<Vec<u8>, DedupError> {
    let Fields(fields) = serde_json::from_slice(raw).map_err(DedupError::Record)?;
    let at = fields.iter().position(|(name, _)| name == text_field);
    // The text is escaped straight into the line; most texts grow by a few escapes only.
    let mut out = Vec::with_capacity(raw.len() + text.len() / 16 + text_field.len() + 8);
    out.push(b'{');
    for (i, (name, value)) in fields.iter().enumerate() {
        if i > 0 {
            out.push(b',');
        }
        serde_json::to_writer(&mut out, name).map_err(DedupError::Record)?;
        out.push(b':');
        match at == Some(i) {
            true => serde_json::to_writer(&mut out, text).map_err(DedupError::Record)?,
            false => out.extend_from_slice(value.get().as_bytes()),
        }
    }
    if at.is_none() {
        if !fields.is_empty() {
            out.push(b',');
        }
        serde_json::to_writer(&mut out, text_field).map_err(DedupError::Record)?;
        out.push(b':');
        serde_json::to_writer(&mut out, text).map_err(DedupError::Record)?;
    }
    out.push(b'}');
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_missing_field_is_added_and_bad_records_are_errors() {
        let out = rewrite_record(br#"{"id":7,"html":"<p>x</p>"}"#, "text", "x \"q\"").unwrap();
        assert_eq!(out, br#"{"id":7,"html":"<p>x</p>","text":"x \"q\""}"#);
        let out = rewrite_record(br#"{}"#, "text", "a\nb").unwrap();
        assert_eq!(out, br#"{"text":"a\nb"}"#);
        let out = rewrite_record(
            br#"{ "text" : "old", "a\u0041" : [1, 2] }"#,
            "text",
            "\u{1}e",
        )
        .unwrap();
        assert_eq!(out, br#"{"text":"\u0001e","aA":[1, 2]}"#);
        assert!(rewrite_record(b"[1]", "text", "x").is_err());
        assert!(rewrite_record(b"{\"a\":", "text", "x").is_err());
    }
}
