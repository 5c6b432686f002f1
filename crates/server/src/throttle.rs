//! [`Throttled`]: a warning that could repeat for every request (a store that is down answers
//! each with a 503) logged at most once a period, with the count of those held back since.

use std::sync::{Mutex, MutexGuard};
use std::time::{Duration, Instant};

/// A warning logged at most once a period (see the module documentation).
#[derive(Debug)]
pub struct Throttled {
    period: Duration,
    window: Mutex<Window>,
}

/// When a warning was last logged, and how many were held back since.
#[derive(Debug)]
struct Window {
    last: Option<Instant>,
    held_back: u64,
}

impl Throttled {
    /// A warning logged at most once every `period`.
    pub const fn new(period: Duration) -> Throttled {
        Throttled {
            period,
            window: Mutex::new(Window {
                last: None,
                held_back: 0,
            }),
        }
    }

    fn window(&self) -> MutexGuard<'_, Window> {
        self.window.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Logs `message` as a warning, unless one was logged less than a period ago: then it is
    /// only counted, and the next one logged says how many were held back.
    pub fn warn(&self, message: &str) {
        match self.admit(Instant::now()) {
            Some(0) => tracing::warn!("{message}"),
            Some(held_back) => tracing::warn!(
                held_back,
                "{message} (and {held_back} more like it in the last {:?}, not logged one by one)",
                self.period
            ),
            None => {}
        }
    }

    /// At `now`: `Some(held back since the last one)` if a warning is to be logged, else
    /// `None` (and it is counted).
    fn admit(&self, now: Instant) -> Option<u64> {
        let mut window = self.window();
        match window.last {
            Some(last) if now.saturating_duration_since(last) < self.period => {
                window.held_back += 1;
                None
            }
            _ => {
                window.last = Some(now);
                Some(std::mem::take(&mut window.held_back))
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn logs_one_a_period_and_counts_the_rest() {
        let throttled = Throttled::new(Duration::from_secs(10));
        let start = Instant::now();
        assert_eq!(throttled.admit(start), Some(0));
        for n in 1..=1000 {
            assert_eq!(throttled.admit(start + Duration::from_millis(n)), None);
        }
        assert_eq!(throttled.admit(start + Duration::from_secs(10)), Some(1000));
        assert_eq!(throttled.admit(start + Duration::from_secs(11)), None);
        assert_eq!(throttled.admit(start + Duration::from_secs(20)), Some(1));
    }
}
