//! Where a database's data lives in Redis: the keys, and the scripts that change them.
//!
//! # Keys of the database `name`
//! On the **ordering node** (every key tagged `{name}`, so one cluster slot holds them all and
//! one script may change them together):
//! * `neardup:{name}:meta` — the [`crate::Meta`] as JSON (written once, `SET NX`).
//! * `neardup:{name}:log` — a stream with one entry per insert (`op=i slot sim dig`) or delete
//!   (`op=d slot`), which every process reads to keep its index current.
//! * `neardup:{name}:last` — the id of the log's last entry; `neardup:{name}:seq` — the slot
//!   counter (`INCR`).
//! * `neardup:{name}:slots` — slot → id; `neardup:{name}:ids` — id → `slot:nonce`.
//!
//! Spread over the cluster by their own hash tag, one **body** per document:
//! * `neardup:{name:<id>}:<nonce>` — the record as JSON (its text compressed), a plain string.
//!   The nonce is chosen by each insert attempt, so two processes inserting the same id at once
//!   never write the same body: the one whose script wins is named in `ids`, the other's body
//!   is deleted.
//!
//! # The order of writes
//! An insert writes the body first, then runs [`INSERT`] on the ordering node: a document is
//! in the log only once its body is written, so no process ever finds an indexed document
//! without its body. A crash between the two leaves an orphan body nothing names (harmless:
//! never read; a sweeper could delete bodies whose `ids` entry names another nonce). A delete
//! runs [`DELETE`] first, then deletes the body.
//!
//! # The layout before spreading
//! Databases written before bodies were spread keep each record in a hash on the ordering node,
//! `neardup:{name}:doc:<id>` (`record`, `slot`), with no `ids`. [`MIGRATE`] moves one such
//! document (its body already copied to its own key); the store runs it for every document
//! without an `ids` entry when it opens (see [`crate::RedisStore`]).

use std::collections::hash_map::RandomState;
use std::hash::BuildHasher;
use std::sync::atomic::{AtomicU64, Ordering};

/// The conflict-checked insert, on the ordering node. KEYS: last, log, seq, slots, ids. ARGV:
/// the caller's position, id, nonce, SimHash (hex), digest key (hex), and the slot reserved for
/// it (`INCR seq` before its block entries were written), else one is taken.
///
/// Replies `mine` first if this very attempt is recorded already (the client re-sent the
/// script after losing the answer to its first run), `conflict` if the log moved since the
/// caller's position, `exists` if the id is stored, else `ok`, the slot and the log entry's id.
pub(crate) const INSERT: &str = r"
local held = redis.call('HGET', KEYS[5], ARGV[2])
if held then
  if string.sub(held, -string.len(ARGV[3]) - 1) == ':' .. ARGV[3] then return {'mine'} end
  return {'exists'}
end
local last = redis.call('GET', KEYS[1]) or '0-0'
if last ~= ARGV[1] then return {'conflict'} end
local slot = ARGV[6] or redis.call('INCR', KEYS[3])
redis.call('HSET', KEYS[4], slot, ARGV[2])
redis.call('HSET', KEYS[5], ARGV[2], slot .. ':' .. ARGV[3])
local xid = redis.call('XADD', KEYS[2], '*', 'op', 'i', 'slot', slot, 'sim', ARGV[4], 'dig', ARGV[5])
redis.call('SET', KEYS[1], xid)
return {'ok', tostring(slot), xid}
";

/// The delete, on the ordering node. KEYS: ids, slots, log, last. ARGV: the id. Replies the
/// `slot:nonce` the document had, or nothing if it is not stored.
pub(crate) const DELETE: &str = r"
local held = redis.call('HGET', KEYS[1], ARGV[1])
if not held then return {} end
local slot = string.match(held, '^(%d+):')
redis.call('HDEL', KEYS[1], ARGV[1])
redis.call('HDEL', KEYS[2], slot)
local xid = redis.call('XADD', KEYS[3], '*', 'op', 'd', 'slot', slot)
redis.call('SET', KEYS[4], xid)
return {held}
";

/// Where the documents in some slots are, on the ordering node. KEYS: slots, ids. ARGV: the
/// slots. Replies, per slot, its id and `slot:nonce` (two empty strings for a slot not stored).
pub(crate) const LOCATE: &str = r"
local found = {}
for _, slot in ipairs(ARGV) do
  local id = redis.call('HGET', KEYS[1], slot)
  local held = id and redis.call('HGET', KEYS[2], id)
  if held then
    found[#found + 1] = id
    found[#found + 1] = held
  else
    found[#found + 1] = ''
    found[#found + 1] = ''
  end
end
return found
";

/// Removes one entry from a block key (the only key it touches, so it runs on the key's own
/// node). KEYS: the block key. ARGV: the entry (its bytes). Replies 1 if it was there.
pub(crate) const REMOVE_ENTRY: &str = r"
local list = redis.call('GET', KEYS[1])
if not list then return 0 end
local len = string.len(ARGV[1])
for at = 1, string.len(list), len do
  if string.sub(list, at, at + len - 1) == ARGV[1] then
    local rest = string.sub(list, 1, at - 1) .. string.sub(list, at + len)
    if rest == '' then redis.call('DEL', KEYS[1]) else redis.call('SET', KEYS[1], rest) end
    return 1
  end
end
return 0
";

/// Moves one document of the layout before spreading, its body already written under its own
/// key, on the ordering node. KEYS: ids, the old record hash. ARGV: id, slot, nonce. Replies 1
/// if it moved it, 0 if it was moved already (by another process opening meanwhile) or is gone.
pub(crate) const MIGRATE: &str = r"
if redis.call('HEXISTS', KEYS[1], ARGV[1]) == 1 then return 0 end
if redis.call('EXISTS', KEYS[2]) == 0 then return 0 end
redis.call('HSET', KEYS[1], ARGV[1], ARGV[2] .. ':' .. ARGV[3])
redis.call('DEL', KEYS[2])
return 1
";

/// The key names of one database.
#[derive(Debug, Clone)]
pub(crate) struct Keys {
    name: String,
}

impl Keys {
    /// The keys of the database `name`.
    pub(crate) fn new(name: &str) -> Keys {
        Keys {
            name: name.to_string(),
        }
    }

    /// A key on the ordering node (`log`, `last`, `seq`, `slots`, `ids`, `meta`).
    pub(crate) fn ordered(&self, what: &str) -> String {
        format!("neardup:{{{}}}:{what}", self.name)
    }

    /// The body of document `id` as written by the insert attempt `nonce`.
    pub(crate) fn body(&self, id: &str, nonce: &str) -> String {
        format!("neardup:{{{}:{id}}}:{nonce}", self.name)
    }

    /// The body of the document an `ids` entry (`slot:nonce`) names, and its slot.
    pub(crate) fn held_body(&self, id: &str, held: &str) -> Option<(String, u64)> {
        let (slot, nonce) = held.split_once(':')?;
        Some((self.body(id, nonce), slot.parse().ok()?))
    }

    /// The block key of `table` and block value `key`, tagged by itself so keys spread.
    pub(crate) fn block(&self, table: u32, key: u64) -> String {
        format!("neardup:{{{}/b{table}:{key:x}}}", self.name)
    }

    /// The record hash of document `id` in the layout before spreading.
    pub(crate) fn unspread(&self, id: &str) -> String {
        self.ordered(&format!("doc:{id}"))
    }
}

/// A new insert attempt's nonce: 64 random bits in hexadecimal (the process's random hash
/// keys applied to a counter).
pub(crate) fn nonce() -> String {
    static COUNTER: AtomicU64 = AtomicU64::new(0);
    let random = RandomState::new().hash_one(COUNTER.fetch_add(1, Ordering::Relaxed));
    format!("{random:x}")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bodies_spread_and_order_stays_on_one_tag() {
        let keys = Keys::new("news");
        assert_eq!(keys.ordered("log"), "neardup:{news}:log");
        assert_eq!(keys.body("a:b", "ff"), "neardup:{news:a:b}:ff");
        assert_eq!(
            keys.held_body("a:b", "7:ff"),
            Some(("neardup:{news:a:b}:ff".to_string(), 7))
        );
        assert_eq!(keys.held_body("a", "x"), None);
        assert_eq!(keys.block(2, 0xab), "neardup:{news/b2:ab}");
        assert_ne!(nonce(), nonce());
    }
}
