//! A run of consecutive intact gzip members, read as one decompressed stream.
//!
//! WARC writers usually put one record in each gzip member, but BGZF-style tools cut the
//! uncompressed stream into fixed-size members (64 KB) wherever the cut falls, so a record may
//! span several members. [`Members`] decodes member after member as one continuous stream, and
//! keeps what the WARC reader needs to recover from damage:
//! * each member's decompressed bytes are held back until the member ends with a good CRC (up
//!   to `cap` bytes: beyond that a member is released unverified, as it could not be rewound
//!   either), so a corrupt member gives none of its bytes, and no record that touches it is
//!   read;
//! * the compressed window is marked at each member's start: on corruption it goes back there
//!   (one byte further) so that the next gzip magic after it can be found, even when the
//!   decoder read past the member's end;
//! * where each member starts in the decompressed stream, for the places of records.
//!
//! The run ends (the stream reads as ended) at the end of the input, at a corrupt member, or
//! at bytes between members that are not a gzip member; [`Members::finish`] then gives back
//! the compressed window and the corruption, if any.

use crate::window::Window;
use flate2::bufread::GzDecoder;
use std::collections::VecDeque;
use std::io::{self, Read};

/// The start of a gzip member (magic and the deflate method byte).
pub(crate) const GZIP_MAGIC: &[u8] = &[0x1f, 0x8b, 0x08];

/// Most decompressed bytes asked of the decoder at a time.
const STEP: usize = 64 * 1024;

/// A corrupt (or truncated) gzip member: its offset in the compressed input and the decoder's
/// error.
pub(crate) struct Corrupt {
    /// Offset of the member's gzip header in the compressed input.
    pub(crate) offset: u64,
    /// What the decoder said.
    pub(crate) source: io::Error,
}

/// The decompressed stream of consecutive intact gzip members (see the module's doc).
pub(crate) struct Members<R> {
    /// The member being decoded; `None` once the run has ended.
    decoder: Option<GzDecoder<Window<R>>>,
    /// The compressed input once the run has ended.
    rest: Option<Window<R>>,
    /// Decompressed bytes: `held[given..ready]` are released and not read yet,
    /// `held[ready..]` belong to the member being decoded and wait for its CRC.
    held: Vec<u8>,
    given: usize,
    ready: usize,
    /// Offset of `held[0]` in the decompressed stream.
    held_offset: u64,
    /// Where each member starts: its offset in the decompressed stream and in the compressed
    /// input, oldest first (those before the record being read are dropped).
    starts: VecDeque<(u64, u64)>,
    /// Most bytes of one member held back (decompressed) or kept to rewind to (compressed).
    cap: usize,
    corrupt: Option<Corrupt>,
}

impl<R: Read> Members<R> {
    /// Starts a run at a gzip member: `window` must be at its magic.
    pub(crate) fn new(window: Window<R>, cap: usize) -> Self {
        let mut members = Members {
            decoder: None,
            rest: None,
            held: Vec::new(),
            given: 0,
            ready: 0,
            held_offset: 0,
            starts: VecDeque::new(),
            cap,
            corrupt: None,
        };
        members.start_member(window);
        members
    }

    /// The compressed offset of the member holding decompressed byte `offset`. Offsets asked
    /// for never decrease: the members before it are forgotten.
    pub(crate) fn member_at(&mut self, offset: u64) -> u64 {
        while self
            .starts
            .get(1)
            .is_some_and(|&(start, _)| start <= offset)
        {
            self.starts.pop_front();
        }
        self.starts.front().map_or(0, |&(_, at)| at)
    }

    /// The compressed offset of the last member started.
    pub(crate) fn current_member(&self) -> u64 {
        self.starts.back().map_or(0, |&(_, at)| at)
    }

    /// After the run has ended: the compressed input (at the end of the last intact member, or
    /// just past the corrupt member's start), and the corrupt member that ended it, if any.
    pub(crate) fn finish(self) -> (Option<Window<R>>, Option<Corrupt>) {
        let rest = self
            .rest
            .or_else(|| self.decoder.map(GzDecoder::into_inner));
        (rest, self.corrupt)
    }

    fn start_member(&mut self, mut window: Window<R>) {
        window.mark(self.cap);
        let decoded = self.held_offset + self.held.len() as u64;
        self.starts.push_back((decoded, window.offset()));
        self.decoder = Some(GzDecoder::new(window));
    }

    /// Decodes some more; `false` once the run has ended.
    fn decode(&mut self) -> io::Result<bool> {
        self.compact();
        let Some(decoder) = self.decoder.as_mut() else {
            return Ok(false);
        };
        let len = self.held.len();
        self.held.resize(len + STEP, 0);
        let result = decoder.read(&mut self.held[len..]);
        self.held.truncate(len + result.as_ref().map_or(0, |&n| n));
        match result {
            Ok(0) => self.next_member()?,
            Ok(_) if self.held.len() - self.ready > self.cap => self.ready = self.held.len(),
            Ok(_) => {}
            Err(error) if error.kind() == io::ErrorKind::Interrupted => {}
            Err(error) => self.fail(error),
        }
        Ok(true)
    }

    /// Drops the bytes already read, once every released byte is.
    fn compact(&mut self) {
        if self.given > 0 && self.given == self.ready {
            self.held.drain(..self.given);
            self.held_offset += self.given as u64;
            self.ready -= self.given;
            self.given = 0;
        }
    }

    /// The member ended with a good CRC: its bytes are released, and the next member, if the
    /// input goes on with one, is started.
    fn next_member(&mut self) -> io::Result<()> {
        self.ready = self.held.len();
        let Some(decoder) = self.decoder.take() else {
            return Ok(());
        };
        let mut window = decoder.into_inner();
        window.unmark();
        match window.fill_to(GZIP_MAGIC.len()) {
            Ok(next) if next.starts_with(GZIP_MAGIC) => self.start_member(window),
            Ok(_) => self.rest = Some(window),
            Err(error) => {
                self.rest = Some(window);
                return Err(error);
            }
        }
        Ok(())
    }

    /// The member being decoded is corrupt: its bytes are dropped, and the compressed input
    /// goes back to just past its start (or, if that is no longer held, stays where the
    /// decoder stopped) so that the next member can be found.
    fn fail(&mut self, source: io::Error) {
        self.held.truncate(self.ready);
        let offset = self.current_member();
        if let Some(decoder) = self.decoder.take() {
            let mut window = decoder.into_inner();
            if window.rewind() || window.offset() == offset {
                window.consume_buffered(1);
            }
            self.rest = Some(window);
        }
        self.corrupt = Some(Corrupt { offset, source });
    }
}

impl<R: Read> Read for Members<R> {
    fn read(&mut self, out: &mut [u8]) -> io::Result<usize> {
        while self.given == self.ready {
            if !self.decode()? {
                return Ok(0);
            }
        }
        let n = (self.ready - self.given).min(out.len());
        out[..n].copy_from_slice(&self.held[self.given..self.given + n]);
        self.given += n;
        Ok(n)
    }
}
