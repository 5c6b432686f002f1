//! How the streaming (TF) path of the [`crate::Fingerprinter`] gets each feature's hash:
//! directly, through the per-thread [`HashMemo`], or through the memo with the misses hashed by
//! MD5 sixteen at a time ([`crate::md5_lanes`]).
//!
//! A strategy may hand a hash over later than the feature it belongs to: the bit counter and
//! MinHash that receive them do not depend on the order of their inputs.

use crate::features::CharWindows;
use crate::hash::{FeatureHasher, HashMemo, Md5Hasher};
use crate::md5_lanes::{md5_many, ShortMessage, LANES};

/// Where a strategy's hashes go: one at a time, or 64-bit hashes a slice at a time (which a
/// sink may take in bulk: SIMD bit counting, a vector's `extend`).
pub(crate) trait HashSink {
    /// Takes one hash.
    fn one(&mut self, hash: u128);
    /// Takes 64-bit hashes (upper words zero), as many calls of [`HashSink::one`] would.
    fn many64(&mut self, hashes: &[u64]) {
        hashes.iter().for_each(|&hash| self.one(u128::from(hash)));
    }
    /// Room to write 64-bit hashes in place, taken by [`HashSink::commit64`]; `None` (the
    /// default) when the sink takes them through [`HashSink::many64`] only.
    fn spare64(&mut self) -> Option<&mut [u64]> {
        None
    }
    /// Takes the first `n` hashes written into [`HashSink::spare64`], as
    /// [`HashSink::many64`] would take them.
    fn commit64(&mut self, _n: usize) {}
}

/// Turns features into hashes of `64 * WORDS` bits, handing each to `emit`.
pub(crate) trait HashStrategy<const WORDS: usize> {
    /// Hands the hash of `feature` to `emit`, now or at a later call.
    fn hash(&mut self, feature: &[u8], emit: &mut impl FnMut(u128));
    /// Hands the hashes of every `width`-byte window of `run` to `sink`, now or at a later
    /// call.
    fn hash_windows(&mut self, run: &[u8], width: usize, sink: &mut impl HashSink) {
        for window in run.windows(width) {
            self.hash(window, &mut |hash| sink.one(hash));
        }
    }
    /// Hands the hashes of every window of `width` characters of `run` ([`CharWindows`]) to
    /// `sink`, now or at a later call.
    fn hash_char_windows(&mut self, run: &[u8], width: usize, sink: &mut impl HashSink) {
        for window in CharWindows::new(run, width) {
            self.hash(window, &mut |hash| sink.one(hash));
        }
    }
    /// Hands over every hash still held back.
    fn flush(&mut self, _emit: &mut impl FnMut(u128)) {}
}

/// Windows [`Direct::hash_windows`] hashes per call of [`FeatureHasher::hash64_windows`].
const WINDOW_BATCH: usize = 256;

/// Hashes every feature as it comes: for hash functions cheaper than a memo look-up (XXH3,
/// FNV-1a).
pub(crate) struct Direct<'h, H: ?Sized>(pub &'h H);

impl<H: FeatureHasher + ?Sized, const WORDS: usize> HashStrategy<WORDS> for Direct<'_, H> {
    #[inline(always)]
    fn hash(&mut self, feature: &[u8], emit: &mut impl FnMut(u128)) {
        emit(if WORDS == 1 {
            u128::from(self.0.hash64(feature))
        } else {
            self.0.hash128(feature)
        });
    }

    #[inline(always)]
    fn hash_char_windows(&mut self, run: &[u8], width: usize, sink: &mut impl HashSink) {
        if WORDS == 1 {
            char_windows64(self.0, run, width, sink);
        } else {
            for window in CharWindows::new(run, width) {
                sink.one(self.0.hash128(window));
            }
        }
    }

    /// 64-bit hashes go through the hasher's [`FeatureHasher::hash64_windows`]: written
    /// straight into the sink's [`HashSink::spare64`] when it has room, else [`WINDOW_BATCH`]
    /// windows at a time into a buffer handed over as a slice.
    #[inline(always)]
    fn hash_windows(&mut self, run: &[u8], width: usize, sink: &mut impl HashSink) {
        if WORDS != 1 {
            return run
                .windows(width)
                .for_each(|window| sink.one(self.0.hash128(window)));
        }
        let windows = (run.len() + 1).saturating_sub(width);
        let mut first = 0;
        while first < windows {
            let left = windows - first;
            let count = if let Some(room) = sink.spare64() {
                let count = room.len().min(left);
                let bytes = &run[first..first + count + width - 1];
                self.0.hash64_windows(bytes, width, &mut room[..count]);
                sink.commit64(count);
                count
            } else {
                let mut batch = [0u64; WINDOW_BATCH];
                let count = WINDOW_BATCH.min(left);
                let hashes = &mut batch[..count];
                let bytes = &run[first..first + count + width - 1];
                self.0.hash64_windows(bytes, width, hashes);
                sink.many64(hashes);
                count
            };
            first += count;
        }
    }
}

/// Windows of characters, 64-bit hashes written straight into the sink's
/// [`HashSink::spare64`] while it has room (the windows' ends found one from the other, the
/// hash function inlined): a stretch of Chinese text is a window per character.
#[inline(always)]
fn char_windows64<H: FeatureHasher + ?Sized>(
    hasher: &H,
    run: &[u8],
    width: usize,
    sink: &mut impl HashSink,
) {
    let mut windows = CharWindows::new(run, width);
    loop {
        let Some(room) = sink.spare64() else {
            return windows.for_each(|window| sink.one(u128::from(hasher.hash64(window))));
        };
        let mut filled = 0;
        for (slot, window) in room.iter_mut().zip(&mut windows) {
            *slot = hasher.hash64(window);
            filled += 1;
        }
        let more = filled == room.len();
        sink.commit64(filled);
        if !more {
            return;
        }
    }
}

/// Looks every short feature up in the memo first: for costly hash functions (SipHash).
pub(crate) struct Memoized<'h, 'm, H: ?Sized> {
    pub hasher: &'h H,
    pub memo: &'m mut HashMemo,
}

impl<H: FeatureHasher + ?Sized, const WORDS: usize> HashStrategy<WORDS> for Memoized<'_, '_, H> {
    #[inline(always)]
    fn hash(&mut self, feature: &[u8], emit: &mut impl FnMut(u128)) {
        let hasher = self.hasher;
        emit(if WORDS == 1 {
            u128::from(self.memo.get_or_compute64(feature, |f| hasher.hash64(f)))
        } else {
            self.memo.get_or_compute(feature, |f| hasher.hash128(f))
        });
    }
}

/// MD5 through the memo, the misses queued and hashed [`LANES`] at a time.
pub(crate) struct BatchedMd5<'m> {
    memo: &'m mut HashMemo,
    queue: [ShortMessage; LANES],
    queued: usize,
}

impl<'m> BatchedMd5<'m> {
    /// A strategy with an empty queue over `memo` (which must hold MD5 values only).
    pub(crate) fn new(memo: &'m mut HashMemo) -> Self {
        BatchedMd5 {
            memo,
            queue: [ShortMessage::default(); LANES],
            queued: 0,
        }
    }

    /// Hashes the first `queued` messages of the queue, memoises and emits them.
    fn drain<const WORDS: usize>(&mut self, emit: &mut impl FnMut(u128)) {
        let digests = md5_many(&self.queue);
        for (message, &digest) in self.queue[..self.queued].iter().zip(&digests) {
            let feature = message.as_bytes();
            if WORDS == 1 {
                self.memo.insert64(feature, digest as u64);
                emit(u128::from(digest as u64));
            } else {
                self.memo.insert(feature, digest);
                emit(digest);
            }
        }
        self.queued = 0;
    }
}

impl<const WORDS: usize> HashStrategy<WORDS> for BatchedMd5<'_> {
    #[inline(always)]
    fn hash(&mut self, feature: &[u8], emit: &mut impl FnMut(u128)) {
        let known = if WORDS == 1 {
            self.memo.get64(feature).map(u128::from)
        } else {
            self.memo.get(feature)
        };
        if let Some(hash) = known {
            return emit(hash);
        }
        let Some(message) = ShortMessage::new(feature) else {
            // Too long for the memo and the lanes: hashed on its own.
            let hash = Md5Hasher.hash128(feature);
            return emit(if WORDS == 1 {
                u128::from(hash as u64)
            } else {
                hash
            });
        };
        self.queue[self.queued] = message;
        self.queued += 1;
        if self.queued == LANES {
            self.drain::<WORDS>(emit);
        }
    }

    fn flush(&mut self, emit: &mut impl FnMut(u128)) {
        if self.queued > 0 {
            self.drain::<WORDS>(emit);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every strategy hands over exactly the hashes of the features, whatever their lengths
    /// and repeats, at both widths.
    #[test]
    fn strategies_emit_the_same_multiset() {
        let features: Vec<Vec<u8>> = (0..500u32)
            .map(|i| {
                let len = (i * 7 % 24) as usize;
                (0..len).map(|j| (i % 37 + j as u32) as u8).collect()
            })
            .collect();
        fn run<const WORDS: usize>(
            strategy: &mut impl HashStrategy<WORDS>,
            features: &[Vec<u8>],
        ) -> Vec<u128> {
            let mut out = Vec::new();
            for feature in features {
                strategy.hash(feature, &mut |h| out.push(h));
            }
            strategy.flush(&mut |h| out.push(h));
            out.sort_unstable();
            out
        }
        let expected64: Vec<u128> = {
            let mut v: Vec<u128> = features
                .iter()
                .map(|f| u128::from(Md5Hasher.hash64(f)))
                .collect();
            v.sort_unstable();
            v
        };
        let expected128: Vec<u128> = {
            let mut v: Vec<u128> = features.iter().map(|f| Md5Hasher.hash128(f)).collect();
            v.sort_unstable();
            v
        };
        assert_eq!(run::<1>(&mut Direct(&Md5Hasher), &features), expected64);
        let mut memo = HashMemo::new();
        for _ in 0..2 {
            let mut memoized = Memoized {
                hasher: &Md5Hasher,
                memo: &mut memo,
            };
            assert_eq!(run::<1>(&mut memoized, &features), expected64);
        }
        let mut memo = HashMemo::new();
        for _ in 0..2 {
            assert_eq!(
                run::<1>(&mut BatchedMd5::new(&mut memo), &features),
                expected64
            );
        }
        let mut memo = HashMemo::new();
        for _ in 0..2 {
            assert_eq!(
                run::<2>(&mut BatchedMd5::new(&mut memo), &features),
                expected128
            );
        }
    }
}
