//! What a thread keeps of its work spaces between documents.
//!
//! The fingerprinter and the set sort keep their buffers per thread, so that thousands of
//! documents in a row reuse memory that is in cache instead of faulting in fresh pages. But a
//! buffer grows to the largest document the thread has seen, and a thread keeps it until it
//! ends: on the 1 GB corpus of `tools/bench/make_text_corpus.py`, whose longest documents are
//! 3.2 MB, a dedup run's threads held about 70 MB each of work space sized for them, resident
//! outside any share of the memory budget. So a buffer beyond [`KEPT_BYTES`] is given back
//! once its document is done: ordinary documents still reuse theirs, and a long one pays for
//! an allocation its own size, which is small beside the work on it.

use std::cell::RefCell;
use std::thread::LocalKey;

/// The most bytes of capacity a per-thread buffer keeps between documents.
pub(crate) const KEPT_BYTES: usize = 1 << 20;

/// A buffer a thread reuses from one document to the next.
pub(crate) trait Reused {
    /// Bytes of capacity held.
    fn capacity_bytes(&self) -> usize;
    /// Gives all of its memory back.
    fn release(&mut self);

    /// Gives its memory back if it holds more than [`KEPT_BYTES`].
    fn keep_small(&mut self) {
        if self.capacity_bytes() > KEPT_BYTES {
            self.release();
        }
    }
}

impl<T> Reused for Vec<T> {
    fn capacity_bytes(&self) -> usize {
        self.capacity() * std::mem::size_of::<T>()
    }

    fn release(&mut self) {
        *self = Vec::new();
    }
}

impl Reused for String {
    fn capacity_bytes(&self) -> usize {
        self.capacity()
    }

    fn release(&mut self) {
        *self = String::new();
    }
}

/// A thread's work space: buffers reused from one document to the next.
pub(crate) trait WorkSpace: Default {
    /// Gives back the buffers a long document grew ([`Reused::keep_small`] on each).
    fn keep_small(&mut self);
}

/// `f` with this thread's work space in `key`, which then keeps only small buffers; with a new
/// one if it is in use (only when called re-entrantly, from inside another use of it).
pub(crate) fn with_work_space<S: WorkSpace, T>(
    key: &'static LocalKey<RefCell<S>>,
    f: impl FnOnce(&mut S) -> T,
) -> T {
    key.with(|cell| match cell.try_borrow_mut() {
        Ok(mut space) => {
            let result = f(&mut space);
            space.keep_small();
            result
        }
        Err(_) => f(&mut S::default()),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_large_buffers_are_given_back() {
        let mut small: Vec<u64> = Vec::with_capacity(KEPT_BYTES / 8);
        small.keep_small();
        assert_eq!(small.capacity(), KEPT_BYTES / 8);
        let mut large: Vec<u64> = Vec::with_capacity(KEPT_BYTES / 8 + 1);
        large.keep_small();
        assert_eq!(large.capacity(), 0);
        let mut text = String::with_capacity(KEPT_BYTES + 1);
        text.keep_small();
        assert_eq!(text.capacity(), 0);
    }
}
