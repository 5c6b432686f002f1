//! The page headers of a Parquet column chunk, read without reading the pages: each header is
//! parsed from the file with the Thrift compact protocol (as the format defines it), only its
//! declared sizes kept, and the page body after it is skipped by its declared compressed size.
//! Reads are bounded (a small buffer, and no more bytes than the header may take); nothing
//! is allocated by a declared length.

use std::fs::File;
use std::io::{self, BufRead, BufReader, Read, Seek, SeekFrom, Take};
use std::ops::Range;

/// The bytes read from the file at a time.
const READ_BYTES: usize = 16 << 10;
/// How deep Thrift structures, lists and maps may nest in a page header.
const MAX_DEPTH: u32 = 32;

/// A page whose declared sizes are over the cap.
pub(super) struct LargePage {
    /// Where its header starts in the file.
    pub offset: u64,
    /// The larger of its declared uncompressed and compressed sizes.
    pub size: u64,
}

/// Walks the page headers of the column chunk at `chunk` in `file`: the first page that
/// declares more than `cap` bytes (uncompressed or compressed), `None` if none does; or what
/// is wrong with a header (it does not parse within `cap` bytes or the chunk, or its page runs
/// past the chunk's end).
pub(super) fn large_page(
    file: &File,
    chunk: Range<u64>,
    cap: u64,
) -> Result<Option<LargePage>, String> {
    let mut at = chunk.start;
    while at < chunk.end {
        let room = (chunk.end - at).min(cap);
        let (header, header_len) = read_header(file, at, room)
            .map_err(|detail| format!("the page header at offset {at}: {detail}"))?;
        let size = header.uncompressed.max(header.compressed);
        if size > cap {
            return Ok(Some(LargePage { offset: at, size }));
        }
        let end = at + header_len + header.compressed;
        if end > chunk.end {
            return Err(format!(
                "the page at offset {at} declares {} compressed bytes, past the column chunk's end at {}",
                header.compressed, chunk.end
            ));
        }
        at = end;
    }
    Ok(None)
}

/// What a page header declares.
struct Header {
    uncompressed: u64,
    compressed: u64,
}

/// The page header at `offset` in `file`, parsed from at most `room` bytes, and its length.
fn read_header(file: &File, offset: u64, room: u64) -> Result<(Header, u64), String> {
    let mut handle = file;
    handle
        .seek(SeekFrom::Start(offset))
        .map_err(|error| format!("cannot seek: {error}"))?;
    let mut bytes = Bytes {
        reader: BufReader::with_capacity(READ_BYTES, handle.take(room)),
        read: 0,
        room,
    };
    let (mut uncompressed, mut compressed) = (None, None);
    bytes.fields(&mut |bytes, id, kind| {
        match (id, kind) {
            (2, I32) => uncompressed = Some(bytes.size()?),
            (3, I32) => compressed = Some(bytes.size()?),
            _ => bytes.skip_value(kind, 0)?,
        }
        Ok(())
    })?;
    match (uncompressed, compressed) {
        (Some(uncompressed), Some(compressed)) => Ok((
            Header {
                uncompressed,
                compressed,
            },
            bytes.read,
        )),
        _ => Err("no page sizes in it".into()),
    }
}

/// Thrift compact protocol types (the low nibble of a field header).
const TRUE: u8 = 1;
const FALSE: u8 = 2;
const BYTE: u8 = 3;
const I16: u8 = 4;
const I32: u8 = 5;
const I64: u8 = 6;
const DOUBLE: u8 = 7;
const BINARY: u8 = 8;
const LIST: u8 = 9;
const SET: u8 = 10;
const MAP: u8 = 11;
const STRUCT: u8 = 12;
const UUID: u8 = 13;

/// A bounded reader of Thrift compact protocol values.
struct Bytes<'a> {
    reader: BufReader<Take<&'a File>>,
    /// The bytes consumed.
    read: u64,
    /// The most bytes it may consume.
    room: u64,
}

impl Bytes<'_> {
    /// The next byte.
    fn byte(&mut self) -> Result<u8, String> {
        let room = self.room;
        let mut one = [0u8];
        self.reader
            .read_exact(&mut one)
            .map_err(|error| ended(room, error))?;
        self.read += 1;
        Ok(one[0])
    }

    /// Skips `len` bytes without keeping them.
    fn skip(&mut self, len: u64) -> Result<(), String> {
        let room = self.room;
        let mut left = len;
        while left > 0 {
            let available = self
                .reader
                .fill_buf()
                .map_err(|error| ended(room, error))?
                .len();
            if available == 0 {
                return Err(ended(room, io::ErrorKind::UnexpectedEof.into()));
            }
            let taken = left.min(available as u64);
            self.reader.consume(taken as usize);
            left -= taken;
        }
        self.read += len;
        Ok(())
    }

    /// An unsigned variable-length integer.
    fn varint(&mut self) -> Result<u64, String> {
        let mut value = 0u64;
        for shift in (0..64).step_by(7) {
            let byte = self.byte()?;
            value |= u64::from(byte & 0x7f) << shift;
            if byte & 0x80 == 0 {
                return Ok(value);
            }
        }
        Err("an integer runs over 10 bytes".into())
    }

    /// A zigzag-encoded signed integer.
    fn signed(&mut self) -> Result<i64, String> {
        let value = self.varint()?;
        Ok((value >> 1) as i64 ^ -((value & 1) as i64))
    }

    /// A size (an `i32` that must not be negative).
    fn size(&mut self) -> Result<u64, String> {
        let value = self.signed()?;
        u64::try_from(value)
            .ok()
            .filter(|_| i32::try_from(value).is_ok())
            .ok_or_else(|| format!("a size of {value} bytes"))
    }

    /// Reads the fields of a struct up to its end, handing each (id, type) to `field`, which
    /// must read or skip its value.
    fn fields(
        &mut self,
        field: &mut dyn FnMut(&mut Self, i64, u8) -> Result<(), String>,
    ) -> Result<(), String> {
        let mut id = 0i64;
        loop {
            let header = self.byte()?;
            if header == 0 {
                return Ok(());
            }
            let delta = i64::from(header >> 4);
            id = if delta == 0 {
                self.signed()?
            } else {
                id + delta
            };
            field(self, id, header & 0x0f)?;
        }
    }

    /// Skips a value of type `kind` (a boolean field's value is in its type: nothing to skip).
    fn skip_value(&mut self, kind: u8, depth: u32) -> Result<(), String> {
        if depth > MAX_DEPTH {
            return Err(format!("it nests over {MAX_DEPTH} levels"));
        }
        match kind {
            TRUE | FALSE => Ok(()),
            BYTE => self.skip(1),
            I16 | I32 | I64 => self.varint().map(drop),
            DOUBLE => self.skip(8),
            BINARY => {
                let len = self.varint()?;
                self.skip(len)
            }
            LIST | SET => self.skip_list(depth),
            MAP => self.skip_map(depth),
            STRUCT => self.fields(&mut |bytes, _, kind| bytes.skip_value(kind, depth + 1)),
            UUID => self.skip(16),
            _ => Err(format!("an unknown Thrift type {kind}")),
        }
    }

    /// Skips an element of a list, set or map (where a boolean takes a byte).
    fn skip_element(&mut self, kind: u8, depth: u32) -> Result<(), String> {
        match kind {
            TRUE | FALSE => self.skip(1),
            _ => self.skip_value(kind, depth),
        }
    }

    /// Skips a list or set.
    fn skip_list(&mut self, depth: u32) -> Result<(), String> {
        let header = self.byte()?;
        let mut len = u64::from(header >> 4);
        if len == 15 {
            len = self.varint()?;
        }
        // Every element takes a byte at least, so the room bounds the loop.
        for _ in 0..len {
            self.skip_element(header & 0x0f, depth + 1)?;
        }
        Ok(())
    }

    /// Skips a map.
    fn skip_map(&mut self, depth: u32) -> Result<(), String> {
        let len = self.varint()?;
        if len == 0 {
            return Ok(());
        }
        let kinds = self.byte()?;
        for _ in 0..len {
            self.skip_element(kinds >> 4, depth + 1)?;
            self.skip_element(kinds & 0x0f, depth + 1)?;
        }
        Ok(())
    }
}

/// Why a header of at most `room` bytes could not be read further.
fn ended(room: u64, error: io::Error) -> String {
    if error.kind() == io::ErrorKind::UnexpectedEof {
        format!("it does not end within {room} bytes")
    } else {
        format!("cannot read it: {error}")
    }
}
