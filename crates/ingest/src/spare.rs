//! Spare strings: the memory of the bodies of documents already mapped, kept by the thread that
//! dropped them for the next documents it parses. A read that maps documents and drops them on
//! the same worker ([`crate::Corpus::map_each_document`]) then allocates and frees no body,
//! and each body is copied into memory still in cache (`malloc`, `free` and their page faults
//! were about 6% of `fingerprint`'s worker; issue 22, step 10).
//!
//! A spare is taken only by a text that fills at least half of it, so a document holds at most
//! about twice its text, as when its string is made for it; the spares are few and bounded.

use std::cell::RefCell;

/// Spare strings a thread keeps at most.
const SPARES: usize = 16;
/// The largest spare kept, in bytes: a larger body is freed as before.
const MAX_SPARE_BYTES: usize = 1 << 20;

thread_local! {
    static SPARE: RefCell<Vec<String>> = const { RefCell::new(Vec::new()) };
}

/// An empty string with room for at least `capacity` bytes: a spare of this thread's that
/// `capacity` fills at least half of (less 64 bytes of slack), else a new one.
pub(crate) fn string_with_capacity(capacity: usize) -> String {
    SPARE
        .with(|spare| {
            let mut spare = spare.try_borrow_mut().ok()?;
            let fits = |s: &String| s.capacity() >= capacity && s.capacity() <= 2 * capacity + 64;
            let at = spare.iter().position(fits)?;
            Some(spare.swap_remove(at))
        })
        .unwrap_or_else(|| String::with_capacity(capacity))
}

/// `text` in a string of its own ([`string_with_capacity`]).
pub(crate) fn string_of(text: &str) -> String {
    let mut string = string_with_capacity(text.len());
    string.push_str(text);
    string
}

/// Keeps `string`'s memory for this thread's next [`string_with_capacity`], unless this thread
/// has enough spares or the string is too large to keep (then it is freed).
pub(crate) fn give_back(mut string: String) {
    if string.capacity() == 0 || string.capacity() > MAX_SPARE_BYTES {
        return;
    }
    string.clear();
    SPARE.with(|spare| {
        if let Ok(mut spare) = spare.try_borrow_mut() {
            if spare.len() < SPARES {
                spare.push(string);
            }
        }
    });
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_spare_is_taken_only_by_a_text_that_fills_half_of_it() {
        // A thread of its own: the test harness's threads run other tests.
        std::thread::spawn(|| {
            give_back(String::with_capacity(1000));
            let small = string_with_capacity(100);
            assert!(
                small.capacity() < 1000,
                "a 100-byte text takes no 1000-byte spare"
            );
            let half = string_of(&"x".repeat(500));
            assert_eq!(half, "x".repeat(500));
            assert_eq!(half.capacity(), 1000, "a 500-byte text takes the spare");
            let none = string_with_capacity(500);
            assert!(
                none.capacity() >= 500 && none.capacity() < 1000,
                "the spare is gone"
            );
            give_back("y".repeat(MAX_SPARE_BYTES + 1));
            SPARE.with(|spare| assert!(spare.borrow().is_empty(), "too large to keep"));
            for _ in 0..2 * SPARES {
                give_back(String::with_capacity(100));
            }
            SPARE.with(|spare| assert_eq!(spare.borrow().len(), SPARES, "bounded"));
            SPARE.with(|spare| assert!(spare.borrow().iter().all(String::is_empty)));
        })
        .join()
        .unwrap();
    }
}
