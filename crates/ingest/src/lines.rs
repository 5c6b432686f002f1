//! Reading lines with a length limit, so that one huge line (a 200 MB JSONL
//! record, or a binary file without newlines) never has to fit in memory.

use std::io::{self, BufRead};

/// What [`LineReader::read_line`] found.
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum Line {
    /// The input has ended.
    End,
    /// A line is in the buffer (without its `\n`).
    Read,
    /// A line longer than the limit was skipped; its length without `\n`.
    TooLong(u64),
}

/// A [`BufRead`] split into numbered lines of bounded length.
pub(crate) struct LineReader<R> {
    inner: R,
    line_no: u64,
}

impl<R: BufRead> LineReader<R> {
    /// Wraps `inner`; the first line read is line 1.
    pub(crate) fn new(inner: R) -> Self {
        LineReader { inner, line_no: 0 }
    }

    /// The 1-based number of the line last read (or being read, after an
    /// error).
    pub(crate) fn line_no(&self) -> u64 {
        self.line_no
    }

    /// Reads the next line into `buf` (cleared first) without its `\n`. A
    /// line of more than `limit` bytes is read through and discarded, and
    /// reported as [`Line::TooLong`].
    pub(crate) fn read_line(&mut self, buf: &mut Vec<u8>, limit: u64) -> io::Result<Line> {
        buf.clear();
        self.line_no += 1;
        let mut len = 0u64;
        let mut too_long = false;
        loop {
            let chunk = match self.inner.fill_buf() {
                Ok(chunk) => chunk,
                Err(err) if err.kind() == io::ErrorKind::Interrupted => continue,
                Err(err) => return Err(err),
            };
            if chunk.is_empty() {
                if len == 0 {
                    self.line_no -= 1;
                    return Ok(Line::End);
                }
                break;
            }
            let (take, newline) = match memchr::memchr(b'\n', chunk) {
                Some(i) => (i, true),
                None => (chunk.len(), false),
            };
            len += take as u64;
            if !too_long {
                if len > limit {
                    too_long = true;
                    buf.clear();
                } else {
                    buf.extend_from_slice(&chunk[..take]);
                }
            }
            self.inner.consume(take + usize::from(newline));
            if newline {
                break;
            }
        }
        Ok(if too_long {
            Line::TooLong(len)
        } else {
            Line::Read
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lines_limits_and_numbers() {
        let data = b"one\n\ntoo long line\nlast".as_slice();
        let mut r = LineReader::new(io::BufReader::with_capacity(4, data));
        let mut buf = Vec::new();
        assert_eq!(r.read_line(&mut buf, 8).unwrap(), Line::Read);
        assert_eq!((buf.as_slice(), r.line_no()), (&b"one"[..], 1));
        assert_eq!(r.read_line(&mut buf, 8).unwrap(), Line::Read);
        assert!(buf.is_empty());
        assert_eq!(r.read_line(&mut buf, 8).unwrap(), Line::TooLong(13));
        assert_eq!(r.line_no(), 3);
        assert_eq!(r.read_line(&mut buf, 8).unwrap(), Line::Read);
        assert_eq!(buf, b"last");
        assert_eq!(r.read_line(&mut buf, 8).unwrap(), Line::End);
        assert_eq!(r.line_no(), 4);
    }
}
