//! The fast reader of a JSON Lines record: one pass over the line that finds the read
//! fields' values, unescapes a string with escapes once into its own `String` (a string
//! without them is borrowed), and skips every other value, with the string scan of
//! [`string_end`] (SIMD) instead of serde_json's byte loop and its scratch copy.
//!
//! It reads only what it is sure of: valid JSON that serde_json reads into the same
//! [`Values`]. Anything else (malformed JSON, a read field holding a number, a key with an
//! escape, a lone surrogate in a read string, nesting deeper than [`MAX_DEPTH`]) gives `None`,
//! and the caller parses the line again with serde_json, which gives the value or the error it
//! always gave. So the two readers never disagree on a result; the property tests check that
//! they agree on every line the fast one accepts.

use super::string_end::string_end;
use super::{Value, Values};
use crate::options::JsonlFields;
use std::borrow::Cow;

/// The deepest nesting of skipped arrays and objects read here (serde_json's own limit is
/// 128); deeper lines go to serde_json.
const MAX_DEPTH: usize = 100;

/// The values of `fields` in the JSON object `line`, as serde_json would find them, or `None`
/// when the line is not one this reader is sure of (see the module's documentation).
pub(super) fn scan_record<'a>(line: &'a str, fields: &JsonlFields) -> Option<Values<'a>> {
    let mut scanner = Scanner { line, pos: 0 };
    scanner.skip_whitespace();
    scanner.expect(b'{')?;
    let mut values = Values::default();
    scanner.skip_whitespace();
    if scanner.peek() == Some(b'}') {
        scanner.pos += 1;
    } else {
        loop {
            scanner.skip_whitespace();
            scanner.expect(b'"')?;
            let key = scanner.plain_key()?;
            scanner.skip_whitespace();
            scanner.expect(b':')?;
            scanner.skip_whitespace();
            if Values::wants(fields, key) {
                let value = scanner.value()?;
                values.fill(fields, key, value);
            } else {
                scanner.skip_value(0)?;
            }
            scanner.skip_whitespace();
            match scanner.next()? {
                b',' => {}
                b'}' => break,
                _ => return None,
            }
        }
    }
    scanner.skip_whitespace();
    (scanner.pos == line.len()).then_some(values)
}

/// A position in the line being read.
struct Scanner<'a> {
    line: &'a str,
    pos: usize,
}

impl<'a> Scanner<'a> {
    fn bytes(&self) -> &'a [u8] {
        self.line.as_bytes()
    }

    fn peek(&self) -> Option<u8> {
        self.bytes().get(self.pos).copied()
    }

    fn next(&mut self) -> Option<u8> {
        let b = self.peek()?;
        self.pos += 1;
        Some(b)
    }

    fn expect(&mut self, expected: u8) -> Option<()> {
        (self.next()? == expected).then_some(())
    }

    /// Skips JSON's white space (space, tab, line feed, carriage return).
    fn skip_whitespace(&mut self) {
        while matches!(self.peek(), Some(b' ' | b'\t' | b'\n' | b'\r')) {
            self.pos += 1;
        }
    }

    /// The rest of a key whose opening quote was read; `None` if it has an escape (rare:
    /// serde_json reads it).
    fn plain_key(&mut self) -> Option<&'a str> {
        let start = self.pos;
        let end = string_end(self.bytes(), start);
        if self.bytes().get(end) != Some(&b'"') {
            return None;
        }
        self.pos = end + 1;
        // `start` follows and `end` is an ASCII quote: both are character boundaries.
        Some(&self.line[start..end])
    }

    /// A read field's value, as serde_json gives it to the record's visitor; `None` for a
    /// number (its rendering is serde_json's to give), an object, or anything not sure.
    fn value(&mut self) -> Option<Value<'a>> {
        match self.peek()? {
            b'"' => {
                self.pos += 1;
                self.string().map(Value::Str)
            }
            b'n' => self.literal("null").map(|()| Value::Null),
            b't' => self.literal("true").map(|()| Value::Other("a boolean")),
            b'f' => self.literal("false").map(|()| Value::Other("a boolean")),
            b'[' => self.skip_value(0).map(|()| Value::Other("an array")),
            // An object in a read field is left to serde_json: it reads that object's keys as
            // strings (a lone surrogate there is an error), where a skipped value's are not.
            _ => None,
        }
    }

    /// The rest of a string whose opening quote was read: borrowed when it has no escape,
    /// else unescaped once into a `String`.
    fn string(&mut self) -> Option<Cow<'a, str>> {
        let start = self.pos;
        let end = string_end(self.bytes(), start);
        match self.bytes().get(end)? {
            b'"' => {
                self.pos = end + 1;
                // Both ends sit next to ASCII bytes: character boundaries.
                Some(Cow::Borrowed(&self.line[start..end]))
            }
            b'\\' => {
                // Room for the whole string at once (growing it by doubling cost 3.5% of
                // `fingerprint`'s CPU in copies and page faults): it ends before the line's
                // last quote, and unescaping never lengthens it.
                let last_quote = memchr::memrchr(b'"', self.bytes()).unwrap_or(end);
                let mut out = crate::spare::string_with_capacity(last_quote.max(end) - start);
                out.push_str(&self.line[start..end]);
                self.pos = end;
                self.unescape_into(&mut out)?;
                // A field before others (a title before the text) got room for what follows
                // it too: given back, so that a document holds at most twice its strings.
                if out.capacity() - out.len() > out.len() + 64 {
                    out.shrink_to_fit();
                }
                Some(Cow::Owned(out))
            }
            _ => None,
        }
    }

    /// Unescapes from an escape at `pos` to the closing quote into `out`.
    fn unescape_into(&mut self, out: &mut String) -> Option<()> {
        loop {
            match self.next()? {
                b'"' => return Some(()),
                b'\\' => out.push(self.escape()?),
                _ => return None,
            }
            let start = self.pos;
            let end = string_end(self.bytes(), start);
            // `end` is at an ASCII byte or the end of the line: a character boundary.
            out.push_str(&self.line[start..end]);
            self.pos = end;
        }
    }

    /// The character an escape stands for (its backslash read); surrogates must come in pairs.
    fn escape(&mut self) -> Option<char> {
        Some(match self.next()? {
            b'"' => '"',
            b'\\' => '\\',
            b'/' => '/',
            b'b' => '\u{8}',
            b'f' => '\u{c}',
            b'n' => '\n',
            b'r' => '\r',
            b't' => '\t',
            b'u' => {
                let high = self.hex4()?;
                if !(0xd800..0xdc00).contains(&high) {
                    return char::from_u32(u32::from(high));
                }
                self.expect(b'\\')?;
                self.expect(b'u')?;
                let low = self.hex4()?;
                if !(0xdc00..0xe000).contains(&low) {
                    return None;
                }
                let code = 0x10000 + ((u32::from(high) - 0xd800) << 10) + (u32::from(low) - 0xdc00);
                return char::from_u32(code);
            }
            _ => return None,
        })
    }

    /// Four hex digits (either case) as a number.
    fn hex4(&mut self) -> Option<u16> {
        let digits = self.bytes().get(self.pos..self.pos + 4)?;
        let mut n = 0u16;
        for &d in digits {
            n = n << 4 | u16::from(char::from(d).to_digit(16)? as u8);
        }
        self.pos += 4;
        Some(n)
    }

    /// Reads `word` (a literal whose first byte is at `pos`).
    fn literal(&mut self, word: &str) -> Option<()> {
        let end = self.pos + word.len();
        (self.bytes().get(self.pos..end)? == word.as_bytes()).then(|| self.pos = end)
    }

    /// Skips a value as serde_json's `IgnoredAny` does: any well-formed number, escapes
    /// checked for their form only.
    fn skip_value(&mut self, depth: usize) -> Option<()> {
        match self.peek()? {
            b'"' => {
                self.pos += 1;
                self.skip_string()
            }
            b'n' => self.literal("null"),
            b't' => self.literal("true"),
            b'f' => self.literal("false"),
            b'-' | b'0'..=b'9' => self.skip_number(),
            open @ (b'[' | b'{') if depth < MAX_DEPTH => {
                self.pos += 1;
                self.skip_container(open, depth + 1)
            }
            _ => None,
        }
    }

    /// The rest of an array or object (its opening byte `open` read).
    fn skip_container(&mut self, open: u8, depth: usize) -> Option<()> {
        let close = if open == b'[' { b']' } else { b'}' };
        self.skip_whitespace();
        if self.peek() == Some(close) {
            self.pos += 1;
            return Some(());
        }
        loop {
            self.skip_whitespace();
            if open == b'{' {
                self.expect(b'"')?;
                self.skip_string()?;
                self.skip_whitespace();
                self.expect(b':')?;
                self.skip_whitespace();
            }
            self.skip_value(depth)?;
            self.skip_whitespace();
            match self.next()? {
                b',' => {}
                b if b == close => return Some(()),
                _ => return None,
            }
        }
    }

    /// The rest of a skipped string (its opening quote read).
    fn skip_string(&mut self) -> Option<()> {
        loop {
            self.pos = string_end(self.bytes(), self.pos);
            match self.next()? {
                b'"' => return Some(()),
                b'\\' => match self.next()? {
                    b'"' | b'\\' | b'/' | b'b' | b'f' | b'n' | b'r' | b't' => {}
                    b'u' => {
                        self.hex4()?;
                    }
                    _ => return None,
                },
                _ => return None,
            }
        }
    }

    /// A number: `-? (0 | [1-9][0-9]*) (. [0-9]+)? ([eE] [+-]? [0-9]+)?`.
    fn skip_number(&mut self) -> Option<()> {
        if self.peek() == Some(b'-') {
            self.pos += 1;
        }
        match self.next()? {
            b'0' => {}
            b'1'..=b'9' => self.skip_digits(),
            _ => return None,
        }
        if self.peek() == Some(b'.') {
            self.pos += 1;
            self.digits()?;
        }
        if matches!(self.peek(), Some(b'e' | b'E')) {
            self.pos += 1;
            if matches!(self.peek(), Some(b'+' | b'-')) {
                self.pos += 1;
            }
            self.digits()?;
        }
        Some(())
    }

    /// One or more digits.
    fn digits(&mut self) -> Option<()> {
        matches!(self.peek(), Some(b'0'..=b'9')).then(|| self.skip_digits())
    }

    fn skip_digits(&mut self) {
        while matches!(self.peek(), Some(b'0'..=b'9')) {
            self.pos += 1;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::super::{parse_record_serde, Values};
    use super::*;
    use proptest::prelude::*;

    /// A string's characters: mostly prose, with quotes, backslashes, control characters,
    /// non-ASCII letters, astral characters and the characters next to the string scan's ends.
    fn chars() -> impl Strategy<Value = String> {
        let c = prop_oneof![
            6 => prop::char::range('a', 'z'),
            1 => prop::sample::select(vec![
                '"', '\\', '/', '\n', '\r', '\t', '\u{8}', '\u{c}', '\0', '\u{1f}', ' ', '!',
                '#', '\u{7f}', 'é', '§', '’', '©', 'Σ', '中', '😀', '\u{10ffff}', '\u{fffd}',
            ]),
            1 => any::<char>(),
        ];
        prop::collection::vec(c, 0..90).prop_map(|cs| cs.into_iter().collect())
    }

    /// `s` as a JSON string, each character written as itself where JSON allows it or by one
    /// of its escapes, as `choices` (one per character) say.
    fn json_string(s: &str, choices: &[u8]) -> String {
        let mut out = String::from("\"");
        for (c, &choice) in s.chars().zip(choices.iter().cycle()) {
            let short = match c {
                '"' => Some("\\\""),
                '\\' => Some("\\\\"),
                '/' if choice % 2 == 0 => Some("\\/"),
                '\u{8}' => Some("\\b"),
                '\u{c}' => Some("\\f"),
                '\n' => Some("\\n"),
                '\r' => Some("\\r"),
                '\t' => Some("\\t"),
                _ => None,
            };
            match short {
                Some(escape) if choice % 3 != 0 => out.push_str(escape),
                _ if c < ' ' || c == '"' || c == '\\' || choice % 5 == 0 => {
                    let mut units = [0u16; 2];
                    for unit in c.encode_utf16(&mut units) {
                        let hex = format!("{unit:04x}");
                        let hex = if choice % 2 == 0 {
                            hex.to_uppercase()
                        } else {
                            hex
                        };
                        out.push_str(&format!("\\u{hex}"));
                    }
                }
                _ => out.push(c),
            }
        }
        out.push('"');
        out
    }

    /// A JSON value of any kind, nested up to three levels.
    fn json_value() -> impl Strategy<Value = String> {
        let leaf = prop_oneof![
            (chars(), prop::collection::vec(any::<u8>(), 1..8))
                .prop_map(|(s, choices)| json_string(&s, &choices)),
            any::<i64>().prop_map(|n| n.to_string()),
            (-1e300f64..1e300).prop_map(|x| format!("{x:e}")),
            Just("-0".to_string()),
            Just("1.5E+3".to_string()),
            Just("123456789012345678901234567890".to_string()),
            Just("true".to_string()),
            Just("false".to_string()),
            Just("null".to_string()),
        ];
        leaf.prop_recursive(3, 24, 4, |inner| {
            prop_oneof![
                prop::collection::vec(inner.clone(), 0..4)
                    .prop_map(|v| format!("[{}]", v.join(","))),
                prop::collection::vec((key(), inner), 0..4).prop_map(|v| {
                    let members: Vec<String> =
                        v.into_iter().map(|(k, v)| format!("{k}:{v}")).collect();
                    format!("{{{}}}", members.join(" , "))
                }),
            ]
        })
    }

    /// A key: a read field's name (sometimes escaped), or another.
    fn key() -> impl Strategy<Value = String> {
        prop::sample::select(vec![
            "\"id\"",
            "\"text\"",
            "\"html\"",
            "\"url\"",
            "\"title\"",
            "\"fetched_at\"",
            "\"other\"",
            "\"\"",
            "\"t\\u0065xt\"",
            "\"meta\"",
        ])
        .prop_map(str::to_string)
    }

    /// A record: an object of keys and values, with white space around its tokens.
    fn record() -> impl Strategy<Value = String> {
        let space = prop::sample::select(vec!["", "", " ", "\t", "\r\n", "  "]);
        prop::collection::vec((key(), json_value(), space.clone()), 0..6).prop_flat_map(
            move |members| {
                let members: Vec<String> = members
                    .into_iter()
                    .map(|(k, v, s)| format!("{s}{k}{s}:{s}{v}{s}"))
                    .collect();
                space
                    .clone()
                    .prop_map(move |s| format!("{s}{{{}}}{s}", members.join(",")))
            },
        )
    }

    /// A record, often broken: cut short, or a byte put in or taken out.
    fn line() -> impl Strategy<Value = String> {
        (
            record(),
            0usize..4,
            any::<prop::sample::Index>(),
            prop::sample::select(vec![
                "\"", "\\", ",", "}", "{", "]", ":", "\u{1}", "x", "\\u12", "\\ud800", "0", "-",
                ".",
            ]),
        )
            .prop_map(|(line, how, at, piece)| {
                let mut cut = at.index(line.len() + 1);
                while !line.is_char_boundary(cut) {
                    cut -= 1;
                }
                match how {
                    0 => line[..cut].to_string(),
                    1 => format!("{}{piece}{}", &line[..cut], &line[cut..]),
                    2 => {
                        let next = line[cut..].chars().next().map_or(0, char::len_utf8);
                        format!("{}{}", &line[..cut], &line[cut + next..])
                    }
                    _ => line,
                }
            })
    }

    /// Fields with every optional field read, or only an id and a text.
    fn fields(all: bool) -> JsonlFields {
        if all {
            JsonlFields::default()
        } else {
            JsonlFields::id_and_text("id", "text")
        }
    }

    fn outcome(values: Result<Values<'_>, String>, fields: &JsonlFields) -> String {
        match values {
            Ok(values) => format!("{:?}", values.into_record(fields)),
            Err(error) => error,
        }
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(2000))]

        /// What the fast reader accepts, serde_json reads to the same values; what it does not,
        /// `parse_record` leaves to serde_json (the same value or error as before).
        #[test]
        fn the_fast_reader_agrees_with_serde_json(line in line(), all in any::<bool>()) {
            let fields = fields(all);
            let serde = parse_record_serde(&line, &fields);
            if let Some(values) = scan_record(&line, &fields) {
                let serde_values = super::super::serde_values(&line, &fields);
                prop_assert!(serde_values.is_ok(), "serde_json refused {line:?}");
                prop_assert_eq!(outcome(Ok(values), &fields), outcome(serde_values.map_err(|e| format!("{e:?}")), &fields));
            }
            let new = super::super::parse_record(&line, &fields);
            prop_assert_eq!(format!("{new:?}"), format!("{serde:?}"));
        }

        /// Well-formed records whose read fields hold no number and whose keys have no escape
        /// take the fast path (so the test above sees it at work).
        #[test]
        fn plain_records_take_the_fast_path(
            text in chars(), choices in prop::collection::vec(any::<u8>(), 1..8), other in json_value()
        ) {
            let line = format!(
                "{{\"id\": \"a\", \"meta\": {other}, \"text\": {}, \"url\": null}}",
                json_string(&text, &choices)
            );
            let values = scan_record(&line, &fields(true));
            prop_assert!(values.is_some(), "not read: {line:?}");
            let record = values.unwrap_or_default().into_record(&fields(true));
            prop_assert_eq!(record.map(|r| r.body.as_str().to_string()).ok(), Some(text));
        }
    }

    /// An escaped string is unescaped into one allocation of at most the rest of the line, and
    /// one followed by a long field keeps no more than its length and 64 bytes of slack.
    #[test]
    fn escaped_strings_take_room_once_and_keep_little_slack() {
        let text = "a\\nb".repeat(5_000);
        let line = format!("{{\"title\": \"T\\u00e9\", \"text\": \"{text}\", \"id\": \"x\"}}");
        let values = scan_record(&line, &fields(true)).expect("a plain record");
        let (Some(Value::Str(Cow::Owned(title))), Some(Value::Str(Cow::Owned(body)))) =
            (&values.title, &values.text)
        else {
            panic!("both strings have escapes: {values:?}");
        };
        assert_eq!(title, "Té");
        assert!(
            title.capacity() <= 2 * title.len() + 64,
            "{}",
            title.capacity()
        );
        assert_eq!(body, &"a\nb".repeat(5_000));
        assert!(body.capacity() >= body.len() && body.capacity() < line.len());
    }

    #[test]
    fn lines_it_leaves_to_serde_json() {
        let fields = JsonlFields::default();
        for line in [
            r#"{"id": 17, "text": "x"}"#,
            r#"{"t\u0065xt": "x"}"#,
            r#"{"text": "\ud800"}"#,
            r#"{"text": "\udc00\ud800"}"#,
            "{\"text\": \"a\u{1}b\"}",
            r#"{"text": "x",}"#,
            r#"{"text": "x"} x"#,
            r#"[{"text": "x"}]"#,
            r#"{"text": "x", "n": 01}"#,
            r#"{"text": "x", "n": 1.}"#,
            r#"{"text": "\x"}"#,
            r#"{"text": {"a\ud800": 1}}"#,
            r#"{"id": {}, "text": "x"}"#,
        ] {
            assert!(scan_record(line, &fields).is_none(), "{line}");
        }
        let deep = format!(
            "{{\"text\": \"x\", \"a\": {}{}}}",
            "[".repeat(101),
            "]".repeat(101)
        );
        assert!(scan_record(&deep, &fields).is_none());
        let shallow = format!(
            "{{\"text\": \"x\", \"a\": {}{}}}",
            "[".repeat(99),
            "]".repeat(99)
        );
        assert!(scan_record(&shallow, &fields).is_some());
    }
}
