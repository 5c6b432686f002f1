//! Fairness between clients: who holds the connection slots, and how long they may wait.
//!
//! Issue 19: 5,000 idle connections made a normal request wait 4–20 s, and 2,000 slow bodies
//! 35.6 s, because a connection kept its slot for the whole header or body timeout while the
//! next clients waited in the kernel's backlog behind the attackers. The rules, one home:
//! * the accept loop never waits behind idle connections: when every slot is in use, the
//!   connection idle the longest (waiting for a request head: nothing sent, half a head, or a
//!   kept-alive connection between requests) is closed to make room for the new one;
//! * one client address holds at most [`crate::ServerConfig::max_connections_per_ip`] slots
//!   (loopback included): over it, that address's own longest-idle connection is closed, or,
//!   if none of its connections is idle, the new one is answered 503 and closed;
//! * the header and body timeouts shrink as the slots fill ([`Slots::scaled`]): the full
//!   timeout up to half the slots, then linearly down to [`MIN_TIMEOUT`] when all are in use;
//! * a body must come at [`crate::ServerConfig::min_body_rate`] bytes a second or faster once
//!   [`BODY_GRACE`] has passed (`api::JsonBody`), else 408.

use std::collections::HashMap;
use std::net::IpAddr;
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::{Duration, Instant};

use tokio::sync::{Notify, OwnedSemaphorePermit, Semaphore};

/// The shortest a header or body timeout gets when every slot is in use.
pub const MIN_TIMEOUT: Duration = Duration::from_secs(1);

/// How long a body may take before [`crate::ServerConfig::min_body_rate`] applies.
pub const BODY_GRACE: Duration = Duration::from_secs(1);

/// The connection slots and who holds them.
#[derive(Debug)]
pub(crate) struct Slots {
    max: usize,
    per_ip: usize,
    permits: Arc<Semaphore>,
    table: Mutex<Table>,
}

#[derive(Debug, Default)]
struct Table {
    next_id: u64,
    entries: HashMap<u64, Entry>,
}

#[derive(Debug)]
struct Entry {
    ip: IpAddr,
    /// Since when it waits for a request head; `None` while a request is served.
    idle_since: Option<Instant>,
    /// Asked to close: no longer counted for its address or the slots.
    evicted: bool,
    evict: Arc<Notify>,
}

/// Why a connection is not served.
#[derive(Debug)]
pub(crate) struct Refused {
    /// Its address, which holds its whole share of slots with requests in flight.
    pub(crate) ip: IpAddr,
    /// That share.
    pub(crate) limit: usize,
}

impl Slots {
    /// `max` slots, at most `per_ip` for one address.
    pub(crate) fn new(max: usize, per_ip: usize) -> Arc<Slots> {
        let max = max.clamp(1, Semaphore::MAX_PERMITS);
        Arc::new(Slots {
            max,
            per_ip: per_ip.max(1),
            permits: Arc::new(Semaphore::new(max)),
            table: Mutex::default(),
        })
    }

    /// The slots' semaphore: a connection is served while it holds a permit.
    pub(crate) async fn permit(&self) -> Option<OwnedSemaphorePermit> {
        Arc::clone(&self.permits).acquire_owned().await.ok()
    }

    /// Waits until every connection has given its slot back.
    pub(crate) async fn drained(&self) {
        let _ = self.permits.acquire_many(self.max as u32).await;
    }

    /// `full` while at most half the slots are in use, then shrinking linearly to
    /// [`MIN_TIMEOUT`] as the last ones fill (never longer than `full`).
    pub(crate) fn scaled(&self, full: Duration) -> Duration {
        let in_use = self.max - self.permits.available_permits().min(self.max);
        let half = self.max / 2;
        if in_use <= half || full <= MIN_TIMEOUT {
            return full;
        }
        let fill = (in_use - half) as f64 / (self.max - half) as f64;
        MIN_TIMEOUT + (full - MIN_TIMEOUT).mul_f64(1.0 - fill.min(1.0))
    }

    /// Registers a new connection from `ip`, closing the longest-idle connection of its
    /// address (over its share) or of all (when every slot is in use) to make room.
    pub(crate) fn admit(self: &Arc<Self>, ip: IpAddr) -> Result<Slot, Refused> {
        let mut table = self.lock();
        let (from_ip, live) = table
            .entries
            .values()
            .filter(|e| !e.evicted)
            .fold((0, 0), |(from_ip, live), e| {
                (from_ip + usize::from(e.ip == ip), live + 1)
            });
        if from_ip >= self.per_ip {
            if !table.evict_longest_idle(|e| e.ip == ip) {
                return Err(Refused {
                    ip,
                    limit: self.per_ip,
                });
            }
        } else if live >= self.max {
            // None idle: the new connection waits for a slot, as every request is served.
            table.evict_longest_idle(|_| true);
        }
        let id = table.next_id;
        table.next_id += 1;
        let evict = Arc::new(Notify::new());
        let entry = Entry {
            ip,
            idle_since: Some(Instant::now()),
            evicted: false,
            evict: Arc::clone(&evict),
        };
        table.entries.insert(id, entry);
        Ok(Slot {
            slots: Arc::clone(self),
            id,
            evict,
        })
    }

    fn lock(&self) -> MutexGuard<'_, Table> {
        // The table stays consistent whatever panicked while holding it.
        self.table
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
    }

    fn set_idle(&self, id: u64, idle: bool) {
        if let Some(entry) = self.lock().entries.get_mut(&id) {
            entry.idle_since = idle.then(Instant::now);
        }
    }
}

impl Table {
    /// Asks the connection idle the longest among those `eligible` to close; `false` if none
    /// is idle.
    fn evict_longest_idle(&mut self, eligible: impl Fn(&Entry) -> bool) -> bool {
        let longest = self
            .entries
            .values_mut()
            .filter(|e| !e.evicted && eligible(e))
            .filter_map(|e| e.idle_since.map(|since| (since, e)))
            .min_by_key(|(since, _)| *since);
        let Some((_, entry)) = longest else {
            return false;
        };
        entry.evicted = true;
        entry.evict.notify_one();
        true
    }
}

/// One connection's place in [`Slots`], given back when dropped.
#[derive(Debug)]
pub(crate) struct Slot {
    slots: Arc<Slots>,
    id: u64,
    evict: Arc<Notify>,
}

impl Slot {
    /// Resolves when the connection is asked to close to make room.
    pub(crate) async fn evicted(&self) {
        self.evict.notified().await;
    }

    /// True while no request is being served on it.
    pub(crate) fn is_idle(&self) -> bool {
        self.slots
            .lock()
            .entries
            .get(&self.id)
            .is_some_and(|e| e.idle_since.is_some())
    }

    /// Marks a request in flight until the guard is dropped (when its response is sent).
    pub(crate) fn busy(&self) -> Busy {
        self.slots.set_idle(self.id, false);
        Busy {
            slots: Arc::clone(&self.slots),
            id: self.id,
        }
    }
}

impl Drop for Slot {
    fn drop(&mut self) {
        self.slots.lock().entries.remove(&self.id);
    }
}

/// A request in flight on a connection (see [`Slot::busy`]).
#[derive(Debug)]
pub(crate) struct Busy {
    slots: Arc<Slots>,
    id: u64,
}

impl Drop for Busy {
    fn drop(&mut self) {
        self.slots.set_idle(self.id, true);
    }
}

/// The load of the server, given to each request (as an extension) so that its body timeout
/// can shrink as the slots fill.
#[derive(Debug, Clone)]
pub(crate) struct Load(pub(crate) Arc<Slots>);

impl Load {
    /// `full`, shrunk by the load (see the module's doc).
    pub(crate) fn scaled(&self, full: Duration) -> Duration {
        self.0.scaled(full)
    }
}

/// The answer to a connection refused for its address: 503, a JSON error, closed.
pub(crate) fn refusal(refused: &Refused) -> Vec<u8> {
    let body = serde_json::json!({
        "error": format!(
            "too many connections from {} (the limit is {}); try again later",
            refused.ip, refused.limit
        )
    })
    .to_string();
    format!(
        "HTTP/1.1 503 Service Unavailable\r\ncontent-type: application/json\r\n\
         retry-after: {}\r\nconnection: close\r\ncontent-length: {}\r\n\r\n{body}",
        crate::RETRY_AFTER_SECONDS,
        body.len()
    )
    .into_bytes()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn timeouts_shrink_past_half_the_slots() {
        let slots = Slots::new(4, 4);
        let full = Duration::from_secs(9);
        let mut held = Vec::new();
        let mut seen = Vec::new();
        for _ in 0..4 {
            held.push(Arc::clone(&slots.permits).try_acquire_owned().unwrap());
            seen.push(slots.scaled(full).as_secs_f64());
        }
        assert_eq!(seen, [9.0, 9.0, 5.0, 1.0]);
        assert_eq!(slots.scaled(Duration::from_millis(500)).as_millis(), 500);
    }

    #[test]
    fn the_longest_idle_of_an_address_makes_room() {
        let slots = Slots::new(10, 2);
        let ip: IpAddr = [127, 0, 0, 1].into();
        let first = slots.admit(ip).unwrap();
        let second = slots.admit(ip).unwrap();
        let _busy = second.busy();
        let third = slots.admit(ip).unwrap();
        assert!(slots.lock().entries[&first.id].evicted);
        let _also_busy = third.busy();
        let refused = slots.admit(ip).unwrap_err();
        assert_eq!(refused.limit, 2);
        assert!(slots.admit([127, 0, 0, 2].into()).is_ok());
    }
}
