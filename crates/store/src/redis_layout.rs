//! Where a database's data lives in Redis: the keys, and the scripts that change them.
//!
//! # Keys of the database `name`
//! On the **ordering node** (every key tagged `{name}`, so one cluster slot holds them all and
//! one script may change them together), nothing that grows faster than a quarter of a byte a
//! document besides the log:
//! * `neardup:{name}:meta` — the [`crate::Meta`] as JSON (written once, `SET NX`);
//!   `neardup:{name}:layout` — this layout's number, [`LAYOUT`].
//! * `neardup:{name}:log` — a stream with one entry per insert (`op=i slot sim dig`) or delete
//!   (`op=d slot`), which every process reads to keep its index current.
//! * `neardup:{name}:last` — the id of the log's last entry; `neardup:{name}:seq` — the slot
//!   counter (`INCR`); `neardup:{name}:count` — the documents stored.
//! * `neardup:{name}:state` — two bits a slot ([`FREE`], [`LIVE`], [`DEAD`]): whether the
//!   insert script committed the slot's document (and no delete removed it since). Every other
//!   key of a document is written before its slot is committed, so this is what says it exists.
//! * `neardup:{name}:readers` — a hash: each process holding an index of its own → the log
//!   position it reflects and when it said so (`ms-seq|millis`, the server's clock). The log is
//!   trimmed ([`TRIM`]) to the oldest live one, and never keeps entries older than the window.
//! * `neardup:{name}:swept` — how far the sweep of abandoned slots went (`floor|bound|millis`),
//!   and `neardup:{name}:fenced` — the slots fenced by a claim taken over since its last pass
//!   ([`SWEEP`]).
//!
//! Spread over the cluster by their own hash tags, two keys per document, and one per
//! [`ROWS_BUCKET`] slots:
//! * `neardup:{name/d<slot>}` — the body: the record as JSON (its text compressed), a string.
//! * `neardup:{name:<id>}:id` — the id's **claim**: `slot:millis`, the slot of the insert that
//!   holds the id and when (the server's clock) it claimed it. It makes "this id is stored once"
//!   a decision on the id's own node.
//! * `neardup:{name/r<slot / ROWS_BUCKET>}` — the **rows** of those slots: each document's
//!   slot, SimHash and digest key ([`row`]), appended before its slot is committed. A process
//!   builds its index from them and `state`, not from the log, which is trimmed.
//!
//! # The order of writes
//! An insert (its slot reserved, its block entries written) claims its id ([`CLAIM`], on the
//! id's node), writes its body, then runs [`INSERT`] on the ordering node: a slot is committed
//! only once its body and its claim are written, so no process finds a committed document
//! without its body. The insert script refuses a stale position (`conflict`: the writer deletes
//! its body, releases its claim, catches up and retries).
//!
//! A claim naming a slot not committed is an insert in progress, or one whose writer died: the
//! next insert of that id waits for it, and once the claim is older than the store timeout
//! marks its slot [`DEAD`] on the ordering node ([`FENCE`], refused if the slot was committed
//! meanwhile) and takes the claim over (`CLAIM` with the old value to compare). A dead slot is
//! never committed, so a writer that stalled past the store timeout cannot store its id a second
//! time: its script answers `fenced`.
//!
//! A slot reserved but still free long after (its writer died) is fenced by a sweep
//! ([`SWEEP`], run by writers), which then deletes its body, row and claim (found from the
//! body) and, in [`crate::NearDupDb`], its block entries. A writer that died before writing its
//! body leaves its block entries (skipped by every check: they name a dead slot) and its claim
//! (taken over at once when its id is inserted again).
//!
//! A delete reads the claim, runs [`DELETE`] (the slot becomes [`DEAD`], a delete entry is
//! logged), then deletes the body and its row, and releases the claim ([`RELEASE`]).
//!
//! # Layouts before this one
//! Layout 4 (the same keys without rows and readers: the log was never trimmed) gets its rows
//! at open, from its log. Layout 3 (spread bodies `neardup:{name:<id>}:<nonce>`, with `slots`: slot → id and `ids`: id →
//! `slot:nonce` on the ordering node) and the layout before spreading (records in hashes
//! `neardup:{name}:doc:<id>` on the ordering node, only `slots`) are moved at open, document by
//! document ([`MIGRATE`]; see [`crate::RedisStore`]).

use crate::record::Entry;

/// The number of this layout, recorded under `neardup:{name}:layout`.
pub(crate) const LAYOUT: &str = "5";
/// Slots whose rows share one key: 1,024 rows of 32 bytes (40 for 128-bit SimHashes) make a
/// 32 KB string, so a key's own cost (about 90 bytes) is under 0.1 byte a document.
pub(crate) const ROWS_BUCKET: u64 = 1024;
/// A slot's state: nothing committed (an insert in progress, or never used).
pub(crate) const FREE: u8 = 0;
/// A slot's state: its document is stored.
pub(crate) const LIVE: u8 = 1;
/// A slot's state: deleted, or fenced (its claim taken over): never committed again.
pub(crate) const DEAD: u8 = 2;

/// The conflict-checked insert, on the ordering node. KEYS: last, log, state, count. ARGV: the
/// caller's position, the slot reserved for it, SimHash (hex), digest key (hex).
///
/// Replies `mine` if this very slot is committed (the client re-sent the script after losing
/// the answer to its first run), `fenced` if the slot is dead (its claim was taken over),
/// `conflict` if the log moved since the caller's position, else `ok`, the slot and the log
/// entry's id.
pub(crate) const INSERT: &str = r"
local at = '#' .. ARGV[2]
local state = redis.call('BITFIELD', KEYS[3], 'GET', 'u2', at)[1]
if state == 1 then return {'mine'} end
if state ~= 0 then return {'fenced'} end
local last = redis.call('GET', KEYS[1]) or '0-0'
if last ~= ARGV[1] then return {'conflict'} end
redis.call('BITFIELD', KEYS[3], 'SET', 'u2', at, 1)
redis.call('INCR', KEYS[4])
local xid = redis.call('XADD', KEYS[2], '*', 'op', 'i', 'slot', ARGV[2], 'sim', ARGV[3], 'dig', ARGV[4])
redis.call('SET', KEYS[1], xid)
return {'ok', ARGV[2], xid}
";

/// The delete, on the ordering node. KEYS: state, count, log, last. ARGV: the slot. Replies 1 if
/// the slot was committed (it is dead now, and the delete logged), else 0.
pub(crate) const DELETE: &str = r"
local at = '#' .. ARGV[1]
if redis.call('BITFIELD', KEYS[1], 'GET', 'u2', at)[1] ~= 1 then return 0 end
redis.call('BITFIELD', KEYS[1], 'SET', 'u2', at, 2)
redis.call('DECR', KEYS[2])
local xid = redis.call('XADD', KEYS[3], '*', 'op', 'd', 'slot', ARGV[1])
redis.call('SET', KEYS[4], xid)
return 1
";

/// Marks a slot never committed dead, on the ordering node, so the claim naming it may be taken
/// over, and adds it to the slots the next sweep cleans ([`SWEEP`]). KEYS: state, fenced. ARGV:
/// the slot. Replies the slot's state after (2, or 1 if it was committed first).
pub(crate) const FENCE: &str = r"
local at = '#' .. ARGV[1]
local state = redis.call('BITFIELD', KEYS[1], 'GET', 'u2', at)[1]
if state ~= 0 then return state end
redis.call('BITFIELD', KEYS[1], 'SET', 'u2', at, 2)
redis.call('SADD', KEYS[2], ARGV[1])
return 2
";
/// Sweeps the slots of inserts whose writer died, on the ordering node. KEYS: swept, seq,
/// state, fenced. ARGV: the age (ms) past which a slot still free was abandoned, the most slots
/// a pass reads.
///
/// `swept` is `floor|bound|millis`: every slot below `floor` was swept, and the slots up to
/// `bound` (the slot counter then) were all reserved by `millis` (the server's clock). Once
/// `millis` is the age ago, the slots from `floor` to `bound` (at most the most a pass reads)
/// are swept: each still free is marked dead (so its writer, were it only stalled, can never
/// commit it: its insert script answers `fenced`), then the mark moves on (to a new bound, the
/// counter now, when the range is done). The slots fenced by a claim taken over since the last
/// pass (`fenced`, a set) are swept too. Replies the slots to clean, each fenced by this
/// script or by a claim taken over: never a slot committed, nor one a delete made dead.
pub(crate) const SWEEP: &str = r"
local time = redis.call('TIME')
local now = time[1] * 1000 + math.floor(time[2] / 1000)
local top = tonumber(redis.call('GET', KEYS[2]) or '0')
local mark = redis.call('GET', KEYS[1])
local function set(floor, bound, since)
  redis.call('SET', KEYS[1], string.format('%d|%d|%d', floor, bound, since))
end
if not mark then set(1, top, now) return {} end
local floor, bound, since = string.match(mark, '^(%d+)|(%d+)|(%d+)$')
floor, bound, since = tonumber(floor), tonumber(bound), tonumber(since)
if now - since < tonumber(ARGV[1]) then return {} end
local stop = math.min(bound, floor + tonumber(ARGV[2]) - 1)
if stop >= bound then set(bound + 1, top, now) else set(stop + 1, bound, since) end
local found = redis.call('SMEMBERS', KEYS[4])
redis.call('DEL', KEYS[4])
if stop < floor then return found end
local first = math.floor(floor / 4)
local bytes = redis.call('GETRANGE', KEYS[3], first, math.floor(stop / 4))
for slot = floor, stop do
  local byte = string.byte(bytes, math.floor(slot / 4) - first + 1) or 0
  local state = math.floor(byte / 2 ^ (6 - 2 * (slot % 4))) % 4
  if state == 0 then
    redis.call('BITFIELD', KEYS[3], 'SET', 'u2', '#' .. string.format('%d', slot), 2)
    found[#found + 1] = string.format('%d', slot)
  end
end
return found
";

/// Claims an id for a slot, on the id's node. KEYS: the claim. ARGV: the slot, and the claim to
/// take over (optional: the value read before its slot was fenced). Writes `slot:millis` if the
/// id is unclaimed or claimed by the value to take over, and replies `ok` (also if it is this
/// slot's claim already: a retry); else replies `held`, the claim, and the server's time (ms).
pub(crate) const CLAIM: &str = r"
local time = redis.call('TIME')
local now = tostring(time[1] * 1000 + math.floor(time[2] / 1000))
local held = redis.call('GET', KEYS[1])
if held and string.match(held, '^(%d+):') == ARGV[1] then return {'ok'} end
if held and held ~= ARGV[2] then return {'held', held, now} end
redis.call('SET', KEYS[1], ARGV[1] .. ':' .. now)
return {'ok'}
";

/// Releases an id's claim if it names this slot, on the id's node. KEYS: the claim. ARGV: the
/// slot. Replies 1 if it was deleted.
pub(crate) const RELEASE: &str = r"
local held = redis.call('GET', KEYS[1])
if held and string.match(held, '^(%d+):') == ARGV[1] then return redis.call('DEL', KEYS[1]) end
return 0
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

/// Commits one document of an earlier layout, its body and claim already written, on the
/// ordering node. KEYS: slots, ids, state, count, the record hash of the layout before
/// spreading. ARGV: slot, id. Replies the `ids` entry it removed (`slot:nonce`, empty for a
/// document of the layout before spreading), or nothing if another process moved it first.
pub(crate) const MIGRATE: &str = r"
if redis.call('HGET', KEYS[1], ARGV[1]) ~= ARGV[2] then return {} end
local held = redis.call('HGET', KEYS[2], ARGV[2]) or ''
redis.call('HDEL', KEYS[1], ARGV[1])
redis.call('HDEL', KEYS[2], ARGV[2])
redis.call('DEL', KEYS[5])
redis.call('BITFIELD', KEYS[3], 'SET', 'u2', '#' .. ARGV[1], 1)
redis.call('INCR', KEYS[4])
return {held}
";

/// Records a reader's position, on the ordering node. KEYS: readers. ARGV: the reader, its
/// position (`ms-seq`). Writes `position|millis` (the server's clock).
pub(crate) const READER: &str = r"
local time = redis.call('TIME')
local now = time[1] * 1000 + math.floor(time[2] / 1000)
redis.call('HSET', KEYS[1], ARGV[1], ARGV[2] .. '|' .. string.format('%d', now))
return 1
";

/// Trims the log, on the ordering node. KEYS: readers, log, last. ARGV: the window (ms: no
/// entry older is kept), the readers' timeout (ms: a reader silent longer is removed, and no
/// entry younger is trimmed). Keeps every entry from the oldest live reader's position (or from
/// the timeout ago, if earlier), but nothing older than the window, and never the log's last
/// entry (`last`, which the insert script compares, stays readable). Replies the entries
/// removed.
pub(crate) const TRIM: &str = r"
local time = redis.call('TIME')
local now = time[1] * 1000 + math.floor(time[2] / 1000)
local function id(text)
  local ms, seq = string.match(text, '^(%d+)-(%d+)$')
  return {tonumber(ms), tonumber(seq)}
end
local function before(a, b) return a[1] < b[1] or (a[1] == b[1] and a[2] < b[2]) end
local last = redis.call('GET', KEYS[3])
if not last then return 0 end
local timeout = tonumber(ARGV[2])
local keep = {now - timeout, 0}
local readers = redis.call('HGETALL', KEYS[1])
for i = 1, #readers, 2 do
  local at, beat = string.match(readers[i + 1], '^(%d+%-%d+)|(%d+)$')
  if not beat or now - tonumber(beat) > timeout then
    redis.call('HDEL', KEYS[1], readers[i])
  else
    local position = id(at)
    if before(position, keep) then keep = position end
  end
end
local floor = {now - tonumber(ARGV[1]), 0}
if before(keep, floor) then keep = floor end
local stop = id(last)
if before(stop, keep) then keep = stop end
return redis.call('XTRIM', KEYS[2], 'MINID', string.format('%d-%d', keep[1], keep[2]))
";

/// A document's row: its slot (8 bytes), SimHash (8 or 16: `sim_len`) and digest key (16),
/// little-endian.
pub(crate) fn row(entry: &Entry, sim_len: usize) -> Vec<u8> {
    let mut bytes = entry.slot.to_le_bytes().to_vec();
    bytes.extend_from_slice(&entry.simhash.to_le_bytes()[..sim_len]);
    bytes.extend_from_slice(&entry.digest.to_le_bytes());
    bytes
}

/// The rows of one rows key, for SimHashes of `sim_len` bytes; `None` if it is not made of
/// whole rows.
pub(crate) fn rows(list: &[u8], sim_len: usize) -> Option<Vec<Entry>> {
    let len = 8 + sim_len + 16;
    if !list.len().is_multiple_of(len) {
        return None;
    }
    let number = |bytes: &[u8]| {
        let mut wide = [0u8; 16];
        wide[..bytes.len()].copy_from_slice(bytes);
        u128::from_le_bytes(wide)
    };
    Some(
        list.chunks_exact(len)
            .map(|chunk| Entry {
                slot: number(&chunk[..8]) as u64,
                simhash: number(&chunk[8..8 + sim_len]),
                digest: number(&chunk[8 + sim_len..]),
            })
            .collect(),
    )
}

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

    /// A key on the ordering node (`log`, `last`, `seq`, `state`, `count`, `meta`, ...).
    pub(crate) fn ordered(&self, what: &str) -> String {
        format!("neardup:{{{}}}:{what}", self.name)
    }

    /// The body of the document in `slot`, tagged by itself so bodies spread.
    pub(crate) fn body(&self, slot: u64) -> String {
        format!("neardup:{{{}/d{slot}}}", self.name)
    }

    /// The claim of `id`, tagged by the id so claims spread.
    pub(crate) fn claim(&self, id: &str) -> String {
        format!("neardup:{{{}:{id}}}:id", self.name)
    }

    /// The block key of `table` and block value `key`, tagged by itself so keys spread.
    pub(crate) fn block(&self, table: u32, key: u64) -> String {
        format!("neardup:{{{}/b{table}:{key:x}}}", self.name)
    }

    /// The rows of the slots of `bucket` (`slot / ROWS_BUCKET`), tagged by itself so rows
    /// spread.
    pub(crate) fn rows(&self, bucket: u64) -> String {
        format!("neardup:{{{}/r{bucket}}}", self.name)
    }

    /// The body of document `id` in layout 3, as written by the insert attempt `nonce`.
    pub(crate) fn nonce_body(&self, id: &str, nonce: &str) -> String {
        format!("neardup:{{{}:{id}}}:{nonce}", self.name)
    }

    /// The record hash of document `id` in the layout before spreading.
    pub(crate) fn unspread(&self, id: &str) -> String {
        self.ordered(&format!("doc:{id}"))
    }
}

/// A claim's slot and the time (ms, the server's clock) it was made, from `slot:millis`.
pub(crate) fn parse_claim(held: &str) -> Option<(u64, u64)> {
    let (slot, millis) = held.split_once(':')?;
    Some((slot.parse().ok()?, millis.parse().ok()?))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bodies_and_claims_spread_and_order_stays_on_one_tag() {
        let keys = Keys::new("news");
        assert_eq!(keys.ordered("log"), "neardup:{news}:log");
        assert_eq!(keys.body(7), "neardup:{news/d7}");
        assert_eq!(keys.claim("a:b"), "neardup:{news:a:b}:id");
        assert_eq!(keys.nonce_body("a:b", "ff"), "neardup:{news:a:b}:ff");
        assert_eq!(parse_claim("7:1700000000123"), Some((7, 1_700_000_000_123)));
        assert_eq!(parse_claim("x"), None);
        assert_eq!(keys.block(2, 0xab), "neardup:{news/b2:ab}");
        assert_eq!(keys.rows(3), "neardup:{news/r3}");
    }

    #[test]
    fn rows_read_back_as_written() {
        let entries = [
            Entry {
                slot: 7,
                simhash: 0xdead_beef,
                digest: u128::MAX - 5,
            },
            Entry {
                slot: 1 << 40,
                simhash: u128::from(u64::MAX),
                digest: 1,
            },
        ];
        for sim_len in [8, 16] {
            let list: Vec<u8> = entries.iter().flat_map(|e| row(e, sim_len)).collect();
            assert_eq!(list.len(), 2 * (24 + sim_len));
            assert_eq!(rows(&list, sim_len).unwrap(), entries);
            assert_eq!(rows(&list[1..], sim_len), None);
        }
    }
}
