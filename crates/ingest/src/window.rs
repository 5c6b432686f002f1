//! A growable read buffer that can look ahead by any number of bytes.
//!
//! `std::io::BufReader` cannot guarantee `n` bytes of look-ahead, which the
//! WARC reader needs (a whole record, to check its framing before consuming it
//! and to resynchronise inside it when the framing is wrong) and the gzip
//! member scanner needs (a 3-byte magic that may straddle two reads).
//! [`Window`] also counts consumed bytes, which gives readers their offsets.

use std::io::{self, BufRead, Read};

/// Size of one read from the inner reader, at most.
const CHUNK: usize = 256 * 1024;

/// Size of the first read.
const FIRST_READ: usize = 8 * 1024;

/// A buffered reader with unbounded look-ahead ([`Window::fill_to`]) and an
/// absolute offset ([`Window::offset`]).
pub(crate) struct Window<R> {
    inner: R,
    buf: Vec<u8>,
    start: usize,
    end: usize,
    offset: u64,
    eof: bool,
    /// Where [`Window::rewind`] goes back to: bytes from here on are kept
    /// even once consumed, up to `mark_cap` of them.
    mark: Option<usize>,
    mark_cap: usize,
}

impl<R: Read> Window<R> {
    /// Wraps `inner`; nothing is read yet.
    pub(crate) fn new(inner: R) -> Self {
        Window {
            inner,
            buf: Vec::new(),
            start: 0,
            end: 0,
            offset: 0,
            eof: false,
            mark: None,
            mark_cap: 0,
        }
    }

    /// The buffered bytes not consumed yet.
    pub(crate) fn available(&self) -> &[u8] {
        &self.buf[self.start..self.end]
    }

    /// Absolute offset (bytes consumed so far) of `available()[0]`.
    pub(crate) fn offset(&self) -> u64 {
        self.offset
    }

    /// Reads until at least `n` bytes are buffered or the input ends, and
    /// returns the buffered bytes (fewer than `n` only at the end).
    pub(crate) fn fill_to(&mut self, n: usize) -> io::Result<&[u8]> {
        while self.end - self.start < n && !self.eof {
            self.read_more()?;
        }
        Ok(self.available())
    }

    /// Discards `n` buffered bytes (at most what is buffered).
    pub(crate) fn consume_buffered(&mut self, n: usize) {
        let n = n.min(self.end - self.start);
        self.start += n;
        self.offset += n as u64;
        if self
            .mark
            .is_some_and(|mark| self.start - mark > self.mark_cap)
        {
            self.mark = None;
        }
        if self.start == self.end && self.mark.is_none() {
            self.start = 0;
            self.end = 0;
        }
    }

    /// Remembers the current position so that [`Window::rewind`] can come
    /// back to it, as long as no more than `cap` bytes are consumed past it
    /// (beyond that the mark is dropped: memory stays bounded).
    pub(crate) fn mark(&mut self, cap: usize) {
        self.mark = Some(self.start);
        self.mark_cap = cap;
    }

    /// Forgets the mark (the bytes it kept can go).
    pub(crate) fn unmark(&mut self) {
        self.mark = None;
    }

    /// Goes back to the mark, un-consuming what was consumed since; `false`
    /// (and no move) if there is no mark or it was dropped.
    pub(crate) fn rewind(&mut self) -> bool {
        let Some(mark) = self.mark.take() else {
            return false;
        };
        self.offset -= (self.start - mark) as u64;
        self.start = mark;
        true
    }

    /// The inner reader.
    pub(crate) fn inner_mut(&mut self) -> &mut R {
        &mut self.inner
    }

    /// Wraps `inner`, reusing `buf`'s allocation (its content is ignored).
    pub(crate) fn with_buffer(inner: R, buf: Vec<u8>) -> Self {
        Window {
            buf,
            ..Window::new(inner)
        }
    }

    /// Gives back the inner reader and the buffer (for reuse with
    /// [`Window::with_buffer`]), dropping whatever is buffered.
    pub(crate) fn into_parts(self) -> (R, Vec<u8>) {
        (self.inner, self.buf)
    }

    fn read_more(&mut self) -> io::Result<()> {
        // Move the unconsumed (or marked) bytes to the front when that
        // makes room.
        let keep = self.mark.unwrap_or(self.start);
        if keep > 0 && self.buf.len() - self.end < CHUNK {
            self.buf.copy_within(keep..self.end, 0);
            self.end -= keep;
            self.start -= keep;
            self.mark = self.mark.map(|_| 0);
        }
        // Room for one more read, not for the whole look-ahead asked for: a
        // record that declares 60 MB in a 1 KB input costs 1 KB and one read,
        // not 60 MB zeroed up front (`fill_to` reads again until it has
        // `want` bytes or the input ends). Reads grow from `FIRST_READ` to
        // `CHUNK` as the buffer does, so a small input costs a small buffer.
        let needed = self.end + self.buf.len().clamp(FIRST_READ, CHUNK);
        if self.buf.len() < needed {
            self.buf.resize(needed, 0);
        }
        loop {
            match self.inner.read(&mut self.buf[self.end..]) {
                Ok(0) => {
                    self.eof = true;
                    return Ok(());
                }
                Ok(got) => {
                    self.end += got;
                    return Ok(());
                }
                Err(err) if err.kind() == io::ErrorKind::Interrupted => continue,
                Err(err) => return Err(err),
            }
        }
    }
}

impl<R: Read> Read for Window<R> {
    fn read(&mut self, out: &mut [u8]) -> io::Result<usize> {
        let got = {
            let avail = self.fill_buf()?;
            let got = avail.len().min(out.len());
            out[..got].copy_from_slice(&avail[..got]);
            got
        };
        self.consume_buffered(got);
        Ok(got)
    }
}

impl<R: Read> BufRead for Window<R> {
    fn fill_buf(&mut self) -> io::Result<&[u8]> {
        self.fill_to(1)
    }

    fn consume(&mut self, amt: usize) {
        self.consume_buffered(amt);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A reader that hands out at most 3 bytes per call.
    struct Trickle<'a>(&'a [u8]);

    impl Read for Trickle<'_> {
        fn read(&mut self, out: &mut [u8]) -> io::Result<usize> {
            let n = self.0.len().min(out.len()).min(3);
            out[..n].copy_from_slice(&self.0[..n]);
            self.0 = &self.0[n..];
            Ok(n)
        }
    }

    /// Discards up to `n` bytes; how many were (fewer only at the end).
    fn skip<R: Read>(w: &mut Window<R>, mut n: u64) -> io::Result<u64> {
        let wanted = n;
        while n > 0 {
            let got = w.fill_to(1)?.len();
            if got == 0 {
                break;
            }
            let step = (got as u64).min(n) as usize;
            w.consume_buffered(step);
            n -= step as u64;
        }
        Ok(wanted - n)
    }

    #[test]
    fn look_ahead_offsets_and_skip() {
        let data: Vec<u8> = (0..=255u8).cycle().take(1000).collect();
        let mut w = Window::new(Trickle(&data));
        assert_eq!(&w.fill_to(10).unwrap()[..10], &data[..10]);
        w.consume_buffered(4);
        assert_eq!(w.offset(), 4);
        assert_eq!(skip(&mut w, 500).unwrap(), 500);
        assert_eq!(w.offset(), 504);
        assert_eq!(w.fill_to(2000).unwrap(), &data[504..]);
        assert_eq!(skip(&mut w, 2000).unwrap(), 496);
        assert!(w.fill_to(1).unwrap().is_empty());
    }

    #[test]
    fn rewind_to_the_mark_within_its_cap() {
        let data: Vec<u8> = (0..=255u8).cycle().take(3 * CHUNK).collect();
        let mut w = Window::new(&data[..]);
        skip(&mut w, 10).unwrap();
        w.mark(2 * CHUNK);
        skip(&mut w, CHUNK as u64 + 5).unwrap();
        assert!(w.rewind());
        assert_eq!(w.offset(), 10);
        assert_eq!(w.fill_to(4).unwrap()[..4], data[10..14]);
        assert!(!w.rewind(), "a rewind uses the mark up");
        w.mark(100);
        skip(&mut w, 101).unwrap();
        assert!(!w.rewind(), "past its cap the mark is dropped");
        assert_eq!(w.offset(), 111);
    }
}
