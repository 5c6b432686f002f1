//! Input read in blocks of whole lines, for the caller to work on each block's lines in
//! parallel (the JSON Lines fast path of [`crate::corpus`]).
//!
//! Nothing here knows JSON: a line is a record of any line-oriented format. A line longer than
//! the limit is read through without being held and reported as such, so memory stays bounded
//! by about a block plus the limit whatever the input.

use std::io::{self, Read};

/// The lines of a block with their 1-based numbers (the block's first line is `first_line`)
/// and the offsets they start at, cut at the offsets of its newlines, `ends` (as
/// [`Chunk::Lines`] gives them: increasing, inside the block); the bytes after the last newline
/// are the last line. Iteration stops at an offset that is not.
pub fn lines<'b>(
    block: &'b [u8],
    ends: &'b [usize],
    first_line: u64,
) -> impl Iterator<Item = (u64, usize, &'b [u8])> {
    let mut start = 0;
    let ends = ends.iter().copied().chain(std::iter::once(block.len()));
    ends.enumerate().map_while(move |(i, end)| {
        let line = block.get(start..end)?;
        let at = start;
        start = end + 1;
        Some((first_line + i as u64, at, line))
    })
}

/// What [`BlockReader::next_chunk`] read.
#[derive(Debug, PartialEq, Eq)]
pub enum Chunk {
    /// Whole lines (the last may lack its newline at the end of the input); the first is line
    /// `first_line`.
    Lines {
        /// The bytes.
        block: Vec<u8>,
        /// The 1-based number of the block's first line.
        first_line: u64,
        /// The offset of each newline in the block, in order: found once, by the reader (it
        /// numbers the next block's lines with their count), for [`lines`] to cut at.
        ends: Vec<usize>,
    },
    /// A line longer than the limit, read through and dropped.
    TooLong {
        /// Its 1-based number.
        line: u64,
        /// Its length in bytes, without the newline.
        size: u64,
    },
}

/// Reads an input in blocks of whole lines (about `block_bytes` each).
pub struct BlockReader<R> {
    input: R,
    block_bytes: usize,
    max_line: u64,
    /// The unfinished last line of the previous block.
    carry: Vec<u8>,
    next_line: u64,
    at_end: bool,
}

impl<R: Read> BlockReader<R> {
    /// Reads `input`; a line of more than `max_line` bytes (without its newline) is reported
    /// as [`Chunk::TooLong`] instead of being held.
    pub fn new(input: R, block_bytes: usize, max_line: u64) -> Self {
        BlockReader {
            input,
            block_bytes,
            max_line,
            carry: Vec::new(),
            next_line: 1,
            at_end: false,
        }
    }

    /// The next chunk, read into `buffer` (a spare one to reuse: its content is dropped), or
    /// `None` at the end of the input.
    pub fn next_chunk(&mut self, mut buffer: Vec<u8>) -> io::Result<Option<Chunk>> {
        loop {
            if self.at_end && self.carry.is_empty() {
                return Ok(None);
            }
            // The spare buffer's bytes are overwritten, not cleared: memory it held already is
            // not zeroed again (a recycled block costs no memset).
            let kept = self.carry.len();
            if kept > buffer.len() {
                std::mem::swap(&mut buffer, &mut self.carry);
            } else {
                buffer[..kept].copy_from_slice(&self.carry);
            }
            self.carry.clear();
            let read = match self.at_end {
                true => 0,
                false => self.read_after(&mut buffer, kept)?,
            };
            buffer.truncate(kept + read);
            self.at_end |= read == 0;
            if !self.at_end {
                match memchr::memrchr(b'\n', &buffer) {
                    Some(last) => {
                        self.carry.extend_from_slice(&buffer[last + 1..]);
                        buffer.truncate(last + 1);
                    }
                    None if buffer.len() as u64 > self.max_line => {
                        return self.skip_line(buffer).map(Some);
                    }
                    // A line longer than the block: keep reading until it ends.
                    None => {
                        std::mem::swap(&mut buffer, &mut self.carry);
                        continue;
                    }
                }
            }
            if buffer.is_empty() {
                continue;
            }
            let first_line = self.next_line;
            let ends: Vec<usize> = memchr::memchr_iter(b'\n', &buffer).collect();
            self.next_line += ends.len() as u64;
            return Ok(Some(Chunk::Lines {
                block: buffer,
                first_line,
                ends,
            }));
        }
    }

    /// Reads up to a block of bytes into `buffer` after its first `from` bytes, until the block
    /// is full or the input ends; how many. Only the part of `buffer` never written before is
    /// zeroed first.
    fn read_after(&mut self, buffer: &mut Vec<u8>, from: usize) -> io::Result<usize> {
        let end = from + self.block_bytes;
        if buffer.len() < end {
            buffer.resize(end, 0);
        }
        let mut filled = from;
        while filled < end {
            match self.input.read(&mut buffer[filled..end]) {
                Ok(0) => break,
                Ok(read) => filled += read,
                Err(error) if error.kind() == io::ErrorKind::Interrupted => {}
                Err(error) => return Err(error),
            }
        }
        Ok(filled - from)
    }

    /// Reads through the rest of a line too long to hold, of which `buffer` holds the start
    /// (and no newline); what follows its newline is carried to the next block.
    fn skip_line(&mut self, mut buffer: Vec<u8>) -> io::Result<Chunk> {
        let mut size = buffer.len() as u64;
        loop {
            buffer.clear();
            let read = self
                .input
                .by_ref()
                .take(self.block_bytes as u64)
                .read_to_end(&mut buffer)?;
            if read == 0 {
                self.at_end = true;
                break;
            }
            if let Some(end) = memchr::memchr(b'\n', &buffer) {
                size += end as u64;
                self.carry.extend_from_slice(&buffer[end + 1..]);
                break;
            }
            size += read as u64;
        }
        let line = self.next_line;
        self.next_line += 1;
        Ok(Chunk::TooLong { line, size })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every chunk of `input` read in `block`-byte blocks with lines of at most `max` bytes,
    /// each read into a new buffer or (`recycle`) into a copy of the last block read, whose
    /// stale bytes must not show.
    fn chunks_recycled(input: &[u8], block: usize, max: u64, recycle: bool) -> Vec<Chunk> {
        let mut reader = BlockReader::new(input, block, max);
        let mut out: Vec<Chunk> = Vec::new();
        let spare = |out: &Vec<Chunk>| match out.last() {
            Some(Chunk::Lines { block, .. }) if recycle => block.clone(),
            _ if recycle => vec![b'#'; 3 * block],
            _ => Vec::new(),
        };
        while let Some(chunk) = reader.next_chunk(spare(&out)).unwrap() {
            out.push(chunk);
        }
        out
    }

    /// Every chunk of `input`, read into new buffers; the same into recycled ones.
    fn chunks(input: &[u8], block: usize, max: u64) -> Vec<Chunk> {
        let fresh = chunks_recycled(input, block, max, false);
        assert_eq!(fresh, chunks_recycled(input, block, max, true));
        fresh
    }

    #[test]
    fn blocks_keep_every_byte_and_line_number() {
        // Lines of 0 to 300 bytes through 64-byte blocks: many blocks, some lines longer than
        // a block.
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
        for chunk in chunks(&input, 64, u64::MAX) {
            let Chunk::Lines {
                block,
                first_line,
                ends,
            } = chunk
            else {
                panic!("no line is too long");
            };
            let lines_before = memchr::memchr_iter(b'\n', &joined).count() as u64;
            assert_eq!(first_line, lines_before + 1);
            let newlines: Vec<usize> = memchr::memchr_iter(b'\n', &block).collect();
            assert_eq!(ends, newlines);
            assert!(block.ends_with(b"\n") || block.ends_with(b"newline"));
            joined.extend_from_slice(&block);
        }
        assert_eq!(joined, input);
    }

    #[test]
    fn a_line_over_the_limit_is_reported_with_its_number_and_size_and_not_held() {
        let long = "x".repeat(1000);
        let input = format!("one\n{long}\nthree\n{long}");
        let got = chunks(input.as_bytes(), 64, 100);
        let lines: Vec<String> = got
            .iter()
            .map(|chunk| match chunk {
                Chunk::Lines {
                    block, first_line, ..
                } => {
                    format!("{first_line}:{}", String::from_utf8_lossy(block))
                }
                Chunk::TooLong { line, size } => format!("{line}: {size} bytes"),
            })
            .collect();
        assert_eq!(
            lines,
            ["1:one\n", "2: 1000 bytes", "3:three\n", "4: 1000 bytes"]
        );
    }

    #[test]
    fn lines_are_numbered_within_a_block() {
        let numbered: Vec<(u64, usize, &[u8])> = lines(b"a\n\nb", &[1, 2], 7).collect();
        assert_eq!(
            numbered,
            [(7, 0, &b"a"[..]), (8, 2, &b""[..]), (9, 3, &b"b"[..])]
        );
        let cut_short: Vec<(u64, usize, &[u8])> = lines(b"a\nb", &[1, 9], 1).collect();
        assert_eq!(
            cut_short,
            [(1, 0, &b"a"[..])],
            "an offset past the block ends the lines"
        );
    }
}
