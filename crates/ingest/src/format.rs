//! Input formats: detected from a path's name (or, for stdin, from its first
//! bytes), or given explicitly by the user.

use std::fmt;
use std::path::Path;
use std::str::FromStr;

/// How a stream is compressed.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Compression {
    /// Not compressed.
    None,
    /// gzip, possibly several members one after the other (`cat a.gz b.gz`).
    Gzip,
    /// Zstandard, possibly several frames.
    Zstd,
}

impl fmt::Display for Compression {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Compression::None => "uncompressed",
            Compression::Gzip => "gzip",
            Compression::Zstd => "zstd",
        })
    }
}

/// The format of one input path.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Format {
    /// JSON Lines (`.jsonl`, `.ndjson`, optionally `.gz` / `.zst`): one JSON
    /// object per line, fields named by [`crate::JsonlFields`].
    Jsonl(Compression),
    /// WARC (`.warc`); `response` records become documents.
    Warc,
    /// WARC compressed record by record, or as one stream (`.warc.gz`).
    WarcGz,
    /// A plain text file (`.txt`): one document.
    Text,
    /// An HTML file (`.html`, `.htm`): one document with an HTML body.
    Html,
    /// Apache Parquet (`.parquet`): one document a row, its fields from the columns named like
    /// the JSON Lines fields. Read from files only (Parquet needs to seek).
    Parquet,
    /// A folder, walked recursively in sorted order; each file is read by
    /// the format of its name, others are skipped and counted.
    Dir,
}

impl Format {
    /// The names [`Format::from_str`] accepts (the canonical ones), for help
    /// texts and error messages.
    pub const NAMES: &'static [&'static str] = &[
        "jsonl",
        "jsonl.gz",
        "jsonl.zst",
        "warc",
        "warc.gz",
        "txt",
        "html",
        "parquet",
        "dir",
    ];

    /// The format implied by a file name's extension, if any: `.jsonl`,
    /// `.ndjson` (each optionally followed by `.gz`, `.zst` or `.zstd`),
    /// `.warc`, `.warc.gz`, `.txt`, `.html`, `.htm`, `.parquet`; case-insensitive. Folders
    /// are told apart by [`crate::open_path`], which looks at the file system.
    pub fn from_extension(path: &Path) -> Option<Format> {
        let name = path.file_name()?.to_str()?.to_ascii_lowercase();
        let (stem, compression) = if let Some(stem) = name.strip_suffix(".gz") {
            (stem, Compression::Gzip)
        } else if let Some(stem) = name
            .strip_suffix(".zst")
            .or_else(|| name.strip_suffix(".zstd"))
        {
            (stem, Compression::Zstd)
        } else {
            (name.as_str(), Compression::None)
        };
        let ext = stem.rsplit_once('.')?.1;
        match (ext, compression) {
            ("jsonl" | "ndjson", c) => Some(Format::Jsonl(c)),
            ("warc", Compression::None) => Some(Format::Warc),
            ("warc", Compression::Gzip) => Some(Format::WarcGz),
            ("txt", Compression::None) => Some(Format::Text),
            ("html" | "htm", Compression::None) => Some(Format::Html),
            ("parquet", Compression::None) => Some(Format::Parquet),
            _ => None,
        }
    }

    /// Guesses the format of a stream (stdin, a pipe) from its first bytes:
    /// zstd magic → zstd JSONL; gzip magic → WARC if the decompressed data
    /// starts with `WARC/`, else gzip JSONL; `WARC/` → WARC; then, after any
    /// byte order mark and white space: `{` (or nothing) → JSONL, `<` →
    /// HTML, anything else → plain text (one document).
    pub fn sniff(prefix: &[u8]) -> Format {
        use std::io::Read;
        const ZSTD_MAGIC: &[u8] = &[0x28, 0xb5, 0x2f, 0xfd];
        if prefix.starts_with(ZSTD_MAGIC) {
            return Format::Jsonl(Compression::Zstd);
        }
        if prefix.starts_with(&[0x1f, 0x8b]) {
            let mut head = [0u8; 5];
            let mut decoder = flate2::read::GzDecoder::new(prefix);
            let is_warc = decoder.read_exact(&mut head).is_ok() && &head == b"WARC/";
            return if is_warc {
                Format::WarcGz
            } else {
                Format::Jsonl(Compression::Gzip)
            };
        }
        if prefix.starts_with(b"WARC/") {
            return Format::Warc;
        }
        let text = prefix.strip_prefix(b"\xef\xbb\xbf").unwrap_or(prefix);
        match text.iter().find(|b| !b.is_ascii_whitespace()) {
            None | Some(b'{') => Format::Jsonl(Compression::None),
            Some(b'<') => Format::Html,
            Some(_) => Format::Text,
        }
    }
}

impl fmt::Display for Format {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Format::Jsonl(Compression::None) => "jsonl",
            Format::Jsonl(Compression::Gzip) => "jsonl.gz",
            Format::Jsonl(Compression::Zstd) => "jsonl.zst",
            Format::Warc => "warc",
            Format::WarcGz => "warc.gz",
            Format::Text => "txt",
            Format::Html => "html",
            Format::Parquet => "parquet",
            Format::Dir => "dir",
        })
    }
}

/// A format name that [`Format::from_str`] does not know.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("unknown format `{0}` (expected one of {names})", names = Format::NAMES.join(", "))]
pub struct ParseFormatError(pub String);

impl FromStr for Format {
    type Err = ParseFormatError;

    /// Parses a format name: one of [`Format::NAMES`] or an alias (`ndjson`,
    /// `ndjson.gz`, `jsonl.zstd`, `text`, `htm`, `folder`); case-insensitive.
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        Ok(match s.to_ascii_lowercase().as_str() {
            "jsonl" | "ndjson" => Format::Jsonl(Compression::None),
            "jsonl.gz" | "ndjson.gz" => Format::Jsonl(Compression::Gzip),
            "jsonl.zst" | "jsonl.zstd" | "ndjson.zst" => Format::Jsonl(Compression::Zstd),
            "warc" => Format::Warc,
            "warc.gz" => Format::WarcGz,
            "txt" | "text" => Format::Text,
            "html" | "htm" => Format::Html,
            "parquet" => Format::Parquet,
            "dir" | "folder" => Format::Dir,
            _ => return Err(ParseFormatError(s.to_string())),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Write;

    #[test]
    fn detection_by_extension() {
        let cases = [
            ("a.jsonl", Some(Format::Jsonl(Compression::None))),
            ("dir/b.JSONL.GZ", Some(Format::Jsonl(Compression::Gzip))),
            ("c.jsonl.zst", Some(Format::Jsonl(Compression::Zstd))),
            ("d.ndjson", Some(Format::Jsonl(Compression::None))),
            ("e.warc", Some(Format::Warc)),
            ("f.warc.gz", Some(Format::WarcGz)),
            ("g.txt", Some(Format::Text)),
            ("h.html", Some(Format::Html)),
            ("i.htm", Some(Format::Html)),
            ("l.Parquet", Some(Format::Parquet)),
            ("j.pdf", None),
            ("k.txt.gz", None),
            ("jsonl", None),
        ];
        for (name, want) in cases {
            assert_eq!(Format::from_extension(Path::new(name)), want, "{name}");
        }
    }

    #[test]
    fn names_round_trip() {
        for name in Format::NAMES {
            let format: Format = name.parse().unwrap();
            assert_eq!(format.to_string(), *name);
        }
        assert!("pdf".parse::<Format>().is_err());
    }

    #[test]
    fn sniffing() {
        assert_eq!(
            Format::sniff(b"{\"id\":1}"),
            Format::Jsonl(Compression::None)
        );
        assert_eq!(Format::sniff(b"WARC/1.0\r\n"), Format::Warc);
        assert_eq!(
            Format::sniff(b"\xef\xbb\xbf \n{}"),
            Format::Jsonl(Compression::None)
        );
        assert_eq!(Format::sniff(b""), Format::Jsonl(Compression::None));
        assert_eq!(Format::sniff(b"\n<!doctype html>"), Format::Html);
        assert_eq!(Format::sniff("美国“51区”".as_bytes()), Format::Text);
        let gz = |data: &[u8]| {
            let mut e = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
            e.write_all(data).unwrap();
            e.finish().unwrap()
        };
        assert_eq!(Format::sniff(&gz(b"WARC/1.1\r\n")), Format::WarcGz);
        assert_eq!(
            Format::sniff(&gz(b"{}\n")),
            Format::Jsonl(Compression::Gzip)
        );
        let zst = zstd::encode_all(&b"{}\n"[..], 1).unwrap();
        assert_eq!(Format::sniff(&zst), Format::Jsonl(Compression::Zstd));
    }
}
