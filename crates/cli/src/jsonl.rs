//! JSON Lines records with caller-chosen id and text fields, read in parallel batches.
//!
//! Parsing picks the two wanted fields out of each object and skips the rest without building
//! a `serde_json::Value`; the text borrows from the line when it has no escapes.

use std::borrow::Cow;
use std::fmt;
use std::io::Read;
use std::sync::mpsc;

use serde::de::{DeserializeSeed, Deserializer, IgnoredAny, MapAccess, Visitor};

/// Which fields of a JSON object hold the id and the text.
#[derive(Debug, Clone)]
pub struct Fields {
    /// The id field (a string or a number).
    pub id: String,
    /// The text field (a string).
    pub text: String,
}

/// One parsed record.
#[derive(Debug)]
pub struct Record<'a> {
    /// The id as text, if the object has one.
    pub id: Option<Cow<'a, str>>,
    /// The text.
    pub text: Cow<'a, str>,
}

/// Parses one line. Errors say what is wrong, without the place (the caller adds it).
pub fn parse_record<'a>(
    line: &'a [u8],
    fields: &Fields,
    lossy: bool,
) -> anyhow::Result<Record<'a>> {
    let line: Cow<'a, str> = match std::str::from_utf8(line) {
        Ok(text) => Cow::Borrowed(text),
        Err(error) if !lossy => anyhow::bail!(
            "invalid UTF-8 at byte {} (use --lossy to replace invalid bytes)",
            error.valid_up_to()
        ),
        Err(_) => Cow::Owned(String::from_utf8_lossy(line).into_owned()),
    };
    let parsed = match &line {
        Cow::Borrowed(text) => parse_fields(text, fields)?,
        Cow::Owned(text) => {
            let record = parse_fields(text, fields)?;
            Record {
                id: record.id.map(|id| Cow::Owned(id.into_owned())),
                text: Cow::Owned(record.text.into_owned()),
            }
        }
    };
    Ok(parsed)
}

/// Parses an already validated line (so serde_json does not validate UTF-8 again).
fn parse_fields<'a>(line: &'a str, fields: &Fields) -> anyhow::Result<Record<'a>> {
    let mut deserializer = serde_json::Deserializer::from_str(line);
    let (id, text) = RecordSeed { fields }
        .deserialize(&mut deserializer)
        .map_err(|e| anyhow::anyhow!("malformed JSON: {e}"))?;
    deserializer
        .end()
        .map_err(|e| anyhow::anyhow!("malformed JSON: {e}"))?;
    let text = text.ok_or_else(|| anyhow::anyhow!("no string field {:?}", fields.text))?;
    Ok(Record { id, text })
}

struct RecordSeed<'f> {
    fields: &'f Fields,
}

type Parsed<'a> = (Option<Cow<'a, str>>, Option<Cow<'a, str>>);

impl<'de> DeserializeSeed<'de> for RecordSeed<'_> {
    type Value = Parsed<'de>;
    fn deserialize<D: Deserializer<'de>>(self, deserializer: D) -> Result<Self::Value, D::Error> {
        deserializer.deserialize_map(self)
    }
}

impl<'de> Visitor<'de> for RecordSeed<'_> {
    type Value = Parsed<'de>;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a JSON object")
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Self::Value, A::Error> {
        let (mut id, mut text) = (None, None);
        while let Some(key) = map.next_key::<Str<'de>>()? {
            if key.0 == self.fields.text {
                text = Some(map.next_value::<Str<'de>>()?.0);
            } else if key.0 == self.fields.id {
                id = map.next_value::<IdValue<'de>>()?.0;
            } else {
                map.next_value::<IgnoredAny>()?;
            }
        }
        Ok((id, text))
    }
}

/// A JSON string, borrowed when it has no escapes.
struct Str<'a>(Cow<'a, str>);

impl<'de> serde::Deserialize<'de> for Str<'de> {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct StrVisitor;
        impl<'de> Visitor<'de> for StrVisitor {
            type Value = Str<'de>;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a string")
            }
            fn visit_borrowed_str<E>(self, v: &'de str) -> Result<Self::Value, E> {
                Ok(Str(Cow::Borrowed(v)))
            }
            fn visit_str<E>(self, v: &str) -> Result<Self::Value, E> {
                Ok(Str(Cow::Owned(v.to_owned())))
            }
        }
        deserializer.deserialize_str(StrVisitor)
    }
}

/// An id: a string, or a number written as decimal; `null` means none.
struct IdValue<'a>(Option<Cow<'a, str>>);

impl<'de> serde::Deserialize<'de> for IdValue<'de> {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct IdVisitor;
        impl<'de> Visitor<'de> for IdVisitor {
            type Value = IdValue<'de>;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a string or number id")
            }
            fn visit_borrowed_str<E>(self, v: &'de str) -> Result<Self::Value, E> {
                Ok(IdValue(Some(Cow::Borrowed(v))))
            }
            fn visit_str<E>(self, v: &str) -> Result<Self::Value, E> {
                Ok(IdValue(Some(Cow::Owned(v.to_owned()))))
            }
            fn visit_u64<E>(self, v: u64) -> Result<Self::Value, E> {
                Ok(IdValue(Some(Cow::Owned(v.to_string()))))
            }
            fn visit_i64<E>(self, v: i64) -> Result<Self::Value, E> {
                Ok(IdValue(Some(Cow::Owned(v.to_string()))))
            }
            fn visit_f64<E>(self, v: f64) -> Result<Self::Value, E> {
                Ok(IdValue(Some(Cow::Owned(v.to_string()))))
            }
            fn visit_unit<E>(self) -> Result<Self::Value, E> {
                Ok(IdValue(None))
            }
        }
        deserializer.deserialize_any(IdVisitor)
    }
}

/// The lines of a block with their 1-based numbers (the block's first line is `first_line`);
/// newlines are found with `memchr`.
pub fn lines(block: &[u8], first_line: u64) -> impl Iterator<Item = (u64, &[u8])> {
    let mut start = 0;
    let ends = memchr::memchr_iter(b'\n', block).chain(std::iter::once(block.len()));
    ends.enumerate().filter_map(move |(i, end)| {
        if start > block.len() {
            return None;
        }
        let line = &block[start..end];
        start = end + 1;
        Some((first_line + i as u64, line))
    })
}

/// Reads `input` in blocks of whole lines (about `block_bytes` each), calling `handle` with each
/// block and the 1-based number of its first line. A final line without a newline is included.
///
/// A reader thread reads the next block while `handle` works on the current one; the buffers
/// of handled blocks go back to the reader, so that a long input reuses a few buffers instead
/// of faulting in fresh memory for every block.
pub fn for_each_block(
    input: impl Read + Send,
    block_bytes: usize,
    mut handle: impl FnMut(&[u8], u64) -> anyhow::Result<()>,
) -> anyhow::Result<()> {
    std::thread::scope(|scope| {
        let (sender, receiver) = mpsc::sync_channel::<std::io::Result<(Vec<u8>, u64)>>(1);
        let (recycle, recycled) = mpsc::sync_channel::<Vec<u8>>(2);
        scope.spawn(move || read_blocks(input, block_bytes, &sender, &recycled));
        for block in receiver {
            let (block, first_line) = block?;
            handle(&block, first_line)?;
            // The reader may have finished: then the buffer is simply dropped.
            let _ = recycle.try_send(block);
        }
        Ok(())
    })
}

/// The reader side of [`for_each_block`]: sends blocks of whole lines until the input ends,
/// an error occurs, or the receiver hangs up.
fn read_blocks(
    mut input: impl Read,
    block_bytes: usize,
    sender: &mpsc::SyncSender<std::io::Result<(Vec<u8>, u64)>>,
    recycled: &mpsc::Receiver<Vec<u8>>,
) {
    // The unfinished last line of the previous block.
    let mut carry: Vec<u8> = Vec::new();
    let mut first_line = 1u64;
    loop {
        let mut block = match recycled.try_recv() {
            Ok(mut buffer) if carry.len() < block_bytes => {
                buffer.clear();
                buffer.extend_from_slice(&carry);
                carry.clear();
                buffer
            }
            // No buffer to reuse, or a line longer than a block still being read.
            _ => std::mem::take(&mut carry),
        };
        block.reserve(block_bytes);
        // `read_to_end` fills the spare capacity without zeroing it first.
        let read = match input
            .by_ref()
            .take(block_bytes as u64)
            .read_to_end(&mut block)
        {
            Ok(read) => read,
            Err(error) => {
                let _ = sender.send(Err(error));
                return;
            }
        };
        let at_end = read == 0;
        if !at_end {
            match memchr::memrchr(b'\n', &block) {
                Some(last) => {
                    carry.extend_from_slice(&block[last + 1..]);
                    block.truncate(last + 1);
                }
                // A line longer than the block: keep reading until it ends.
                None => {
                    carry = block;
                    continue;
                }
            }
        }
        if !block.is_empty() {
            let lines = memchr::memchr_iter(b'\n', &block).count() as u64;
            if sender.send(Ok((block, first_line))).is_err() {
                return;
            }
            first_line += lines;
        }
        if at_end {
            return;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn fields() -> Fields {
        Fields {
            id: "id".into(),
            text: "text".into(),
        }
    }

    #[test]
    fn picks_fields_and_skips_the_rest() {
        let line = br#"{"meta": {"a": [1, 2]}, "id": 17, "text": "caf\u00e9 ok", "x": null}"#;
        let record = parse_record(line, &fields(), false).unwrap();
        assert_eq!(record.id.as_deref(), Some("17"));
        assert_eq!(record.text, "café ok");
        let borrowed = parse_record(br#"{"text": "plain", "id": "a"}"#, &fields(), false).unwrap();
        assert!(matches!(borrowed.text, Cow::Borrowed("plain")));
    }

    #[test]
    fn reports_what_is_wrong() {
        let err = |line: &[u8]| {
            parse_record(line, &fields(), false)
                .unwrap_err()
                .to_string()
        };
        assert!(err(b"{\"text\": ").starts_with("malformed JSON"));
        assert!(err(b"[1, 2]").starts_with("malformed JSON"));
        assert!(err(br#"{"id": 1}"#).contains("no string field \"text\""));
        assert!(err(br#"{"text": 5}"#).starts_with("malformed JSON"));
        assert!(err(b"{\"text\": \"\xff\"}").contains("invalid UTF-8"));
        let lossy = parse_record(b"{\"text\": \"a\xffb\"}", &fields(), true).unwrap();
        assert_eq!(lossy.text, "a\u{fffd}b");
    }

    #[test]
    fn recycled_buffers_keep_every_byte_and_line_number() {
        // Lines of 0 to 300 bytes through 64-byte blocks: many blocks, some lines longer than
        // a block, buffers handed back and reused.
        let input: Vec<u8> = (0..5000u32)
            .flat_map(|i| {
                let len = (i * 7919 % 301) as usize;
                let mut line = vec![b'a' + (i % 26) as u8; len];
                line.push(b'\n');
                line
            })
            .chain(*b"last line without a newline")
            .collect();
        let mut joined = Vec::new();
        for_each_block(&input[..], 64, |block, first| {
            let lines_before = memchr::memchr_iter(b'\n', &joined).count() as u64;
            assert_eq!(first, lines_before + 1);
            assert!(block.ends_with(b"\n") || block.ends_with(b"newline"));
            joined.extend_from_slice(block);
            Ok(())
        })
        .unwrap();
        assert_eq!(joined, input);
    }

    #[test]
    fn blocks_hold_whole_lines_with_their_numbers() {
        let input = b"one\ntwo\nthree\nfour-is-long\nfive";
        let mut seen = Vec::new();
        for_each_block(&input[..], 6, |block, first| {
            seen.push((String::from_utf8(block.to_vec()).unwrap(), first));
            Ok(())
        })
        .unwrap();
        let joined: String = seen.iter().map(|(b, _)| b.as_str()).collect();
        assert_eq!(joined, String::from_utf8(input.to_vec()).unwrap());
        for (block, first) in &seen {
            let expected = input[..]
                .split(|&b| b == b'\n')
                .position(|l| block.as_bytes().starts_with(l) && !l.is_empty())
                .unwrap() as u64
                + 1;
            assert_eq!(*first, expected);
        }
    }
}
