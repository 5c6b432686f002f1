//! neardup-guard: a dependency's panic caught at our boundary.
//!
//! The readers and the store call crates (`parquet`, `arrow`, `redb`) that panic on some
//! corrupt input instead of returning an error. The project's rule is that the library returns
//! errors, never panics on input: [`catch`] runs such a call, catches its panic and hands back
//! the panic's message, for the caller to turn into its own typed error with the place (the
//! file, the row group, the database).
//!
//! A caught panic must not print either (the CLI prints one line per error): the first
//! [`catch`] installs, once for the process, a panic hook that stays silent for a panic inside
//! a [`catch`] on the same thread and hands every other panic to the hook that was there
//! before (a bug elsewhere still prints as usual). An application that replaces the hook
//! afterwards gets every panic, caught ones included, in its own hook.

use std::cell::Cell;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::Once;

thread_local! {
    /// How many [`catch`] calls are running on this thread.
    static CATCHING: Cell<usize> = const { Cell::new(0) };
}

static HOOK: Once = Once::new();

/// Runs `f`; a panic in it is caught and returned as its message. Nothing is printed for it.
///
/// `f` is taken as unwind-safe: use it at a boundary where the state `f` touched is dropped or
/// not used again after a panic (a reader that stops, a database handle reported corrupt).
pub fn catch<T>(f: impl FnOnce() -> T) -> Result<T, String> {
    HOOK.call_once(install_hook);
    CATCHING.with(|depth| depth.set(depth.get() + 1));
    let outcome = catch_unwind(AssertUnwindSafe(f));
    CATCHING.with(|depth| depth.set(depth.get() - 1));
    outcome.map_err(|panic| panic_message(&*panic))
}

/// The message a panic was raised with (`(no message)` for a payload that is not text).
pub fn panic_message(panic: &(dyn std::any::Any + Send)) -> String {
    panic
        .downcast_ref::<&str>()
        .map(|s| s.to_string())
        .or_else(|| panic.downcast_ref::<String>().cloned())
        .unwrap_or_else(|| "(no message)".into())
}

/// Wraps the current panic hook: silent inside a [`catch`] on the panicking thread.
fn install_hook() {
    let previous = std::panic::take_hook();
    std::panic::set_hook(Box::new(move |info| {
        if CATCHING.with(Cell::get) == 0 {
            previous(info);
        }
    }));
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_panic_is_its_message_and_a_value_passes_through() {
        assert_eq!(catch(|| 7), Ok(7));
        let caught = catch(|| -> u8 { panic!("offset + len out of bounds") });
        assert_eq!(caught, Err("offset + len out of bounds".to_string()));
        let formatted = catch(|| -> u8 { panic!("slice {} must not be empty", 3) });
        assert_eq!(formatted, Err("slice 3 must not be empty".to_string()));
        // Nested and after a panic, the depth is back to zero.
        assert_eq!(catch(|| catch(|| 1)), Ok(Ok(1)));
        assert_eq!(CATCHING.with(Cell::get), 0);
    }
}
