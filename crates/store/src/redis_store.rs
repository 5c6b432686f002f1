//! [`RedisStore`]: one database shared by several processes through Redis (one server or a
//! Redis Cluster).
//!
//! # Keys
//! What must stay ordered (the log, its end, the slot counter, two bits a slot saying which are
//! stored, the metadata) is tagged `{name}`, so it lives in one cluster slot, on one node: the
//! ordering node; each document's body (its record, text included) and its id's claim have keys
//! of their own, so they spread over every node of a cluster. The keys, scripts and order of
//! writes are in [`crate::redis_layout`].
//!
//! # Atomicity across processes
//! An insert claims its id on the id's node (an id is stored once), writes its body, then runs
//! one Lua script on the ordering node (atomic in Redis): it refuses the insert if `last` is not
//! the position the caller's index had caught up to, so a document is inserted as unique only
//! if nothing was written since it was checked; the caller then catches up and checks again.
//!
//! # Replicas
//! On a cluster opened with [`OpenOptions::strict_durability`], each write (the claim, the
//! body, then the script) is followed by `WAIT 1` on its node: an insert is acknowledged only
//! once a replica holds it, so it survives the failover of its master (the replica taking over
//! has it). A write no replica acknowledged within the wait is [`StoreError::Unreplicated`].
//!
//! # Timeouts
//! Every connection is made, and every command answered, within the store timeout (a stalled
//! Redis, e.g. stopped by SIGSTOP, gives [`StoreError::Redis`] timing out, not a wait for ever); a
//! connection that failed or timed out is dropped, never reused. On a cluster, a command may be
//! tried [`CLUSTER_ATTEMPTS`] times (a redirection to a node that took over slots, a retry while
//! the cluster heals), each within that share of the store timeout.
//!
//! # A Redis that went back in time
//! Restarted empty, or from an older snapshot: its log now ends before, or differs from, what
//! this process applied. [`Store::changes`] reads the log from the last entry this process saw
//! (inclusive), so an end before it, or a first entry that is not it, is [`StoreError::Reset`]
//! in the same round trip, and the database reloads its index from what Redis now holds.
//!
//! # Moving a database of an earlier layout
//! At open, a database of layout 3 (its slot and id maps on the ordering node) or of the layout
//! before spreading (its records on the ordering node too) is moved, document by document, to
//! this layout ([`crate::redis_layout::MIGRATE`]), then `layout` records it; each step is safe to
//! repeat and to run from several processes opening at once. Stop processes of older versions
//! first: they would keep writing their layout.

use std::path::Path;
use std::sync::{mpsc, Mutex, MutexGuard};
use std::time::{Duration, Instant};

use redis::cluster::ClusterClient;
use redis::{
    Client, ConnectionInfo, ConnectionLike, IntoConnectionInfo, RedisResult, Script,
    TlsCertificates,
};

use crate::db::OpenOptions;
use crate::durability::Durability;
use crate::error::{redis_unavailable, Result, StoreError};
use crate::meta::Meta;
use crate::record::{Entry, Record};
use crate::redact::redact;
use crate::redis_conn::Conn;
use crate::redis_layout::{
    parse_claim, Keys, CLAIM, DEAD, DELETE, FENCE, FREE, INSERT, LAYOUT, LIVE, MIGRATE, READER,
    RELEASE, REMOVE_ENTRY, SWEEP, TRIM,
};
use crate::store::{BlockWrite, Change, Cursor, Durable, Insert, Store};

mod sweep;
mod window;

pub use sweep::DEFAULT_SWEEP_AFTER;
pub use window::{DEFAULT_LOG_WINDOW, DEFAULT_READER_TIMEOUT};

/// Stream entries read per round trip.
const PAGE: usize = 10_000;
/// Idle connections kept for reuse.
const MAX_IDLE: usize = 64;
/// Tries of one command on a cluster (the first, then retries: a redirection after a failover,
/// a cluster still electing a master); each gets this share of the store timeout.
const CLUSTER_ATTEMPTS: u32 = 3;
/// Documents of an earlier layout read per round trip while moving them.
const MIGRATE_PAGE: usize = 1000;
/// The longest pause between two reads of a claim held by an insert in progress.
const CLAIM_POLL: Duration = Duration::from_millis(20);

/// The lists of some block keys, in order.
type Lists = Vec<Vec<u8>>;

/// How new connections are made.
enum Opener {
    /// One server.
    Single(Client),
    /// A cluster (timeouts set in the client); its node URLs.
    Cluster(ClusterClient, Vec<String>),
}

/// A database in Redis: its order (log, slot states, metadata) on one node, each document's body
/// and its id's claim on the nodes their own keys hash to; a database of an earlier layout is
/// moved when opened.
pub struct RedisStore {
    location: String,
    keys: Keys,
    opener: Opener,
    /// The longest a connection or a command may take.
    timeout: Duration,
    /// The longest `WAIT` for a replica after a write, if writes wait for one (a cluster opened
    /// with strict durability).
    replica_wait: Option<Duration>,
    idle: Mutex<Vec<Conn>>,
    insert: Script,
    delete: Script,
    fence: Script,
    claim: Script,
    release: Script,
    migrate: Script,
    remove_entry: Script,
    reader_script: Script,
    trim_script: Script,
    sweep_script: Script,
    /// A slot still free this long after it was reserved is swept ([`OpenOptions::sweep_after`]).
    sweep_after: Duration,
    /// This process's name in `readers`.
    reader: String,
    /// When this process last reported its log position (`None`: never, it holds no index).
    beat: Mutex<Option<Instant>>,
    /// No log entry older is kept ([`OpenOptions::log_window`]).
    window: Duration,
    /// A reader silent longer holds the log back no more ([`OpenOptions::reader_timeout`]).
    reader_timeout: Duration,
    /// Bytes of a SimHash in the rows, once read from the metadata (which never changes it):
    /// read once, so that reloads do not keep the metadata key the most recently used one,
    /// which an evicting Redis would then never evict, and the eviction never be seen.
    sim_len: std::sync::OnceLock<usize>,
}

/// What claiming an id found.
enum Claimed {
    /// The id is this insert's now.
    Mine,
    /// The id is stored.
    Stored,
}

impl Drop for RedisStore {
    /// A process closing the database holds the log back no more.
    fn drop(&mut self) {
        self.leave();
    }
}

impl std::fmt::Debug for RedisStore {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RedisStore")
            .field("location", &self.location)
            .finish()
    }
}

impl RedisStore {
    /// Connects to one Redis server (`redis://[user:password@]host:port[/db]`, or `rediss://`
    /// for TLS, trusting [`OpenOptions::redis_ca_file`] if given, else the system's
    /// authorities); `name` tags the keys; every connection and command takes at most
    /// [`OpenOptions::timeout`].
    pub fn open(url: &str, name: &str, options: &OpenOptions) -> Result<RedisStore> {
        let info = connection_info(url)?;
        let client = match &options.redis_ca_file {
            Some(path) => Client::build_with_tls(info, trusting(path, url)?)?,
            None => Client::open(info)?,
        };
        Self::connect(url, name, Opener::Single(client), options, None)
    }

    /// Connects to a Redis Cluster through any of its nodes (the first one's user and
    /// password are used for all); `name` tags the keys; every command, with its retries,
    /// takes about [`OpenOptions::timeout`] at most. Under
    /// [`OpenOptions::strict_durability`], every write waits for a replica (`WAIT 1`).
    pub fn open_cluster(nodes: &[String], name: &str, options: &OpenOptions) -> Result<RedisStore> {
        let hosts: Vec<&str> = nodes
            .iter()
            .map(|node| {
                node.split_once("://")
                    .map_or(node.as_str(), |(_, host)| host)
            })
            .collect();
        let location = format!("redis+cluster://{}", hosts.join(","));
        let infos = nodes
            .iter()
            .map(|node| connection_info(node))
            .collect::<RedisResult<Vec<_>>>()?;
        // The client's default is 16 retries more than a second apart: a cluster healing
        // would hold a request for minutes instead of answering it within the store timeout.
        let attempt = options.timeout / (CLUSTER_ATTEMPTS + 1);
        let client = ClusterClient::builder(infos)
            .connection_timeout(attempt)
            .response_timeout(attempt)
            .retries(CLUSTER_ATTEMPTS - 1)
            .min_retry_wait(1)
            .max_retry_wait((attempt / 2).as_millis() as u64 + 2)
            .build()?;
        Self::connect(
            &location,
            name,
            Opener::Cluster(client, nodes.to_vec()),
            options,
            options.strict_durability.then_some(attempt / 2),
        )
    }

    fn connect(
        location: &str,
        name: &str,
        opener: Opener,
        options: &OpenOptions,
        replica_wait: Option<Duration>,
    ) -> Result<RedisStore> {
        let store = RedisStore {
            location: format!("{} (name {name})", redact(location)),
            keys: Keys::new(name),
            opener,
            timeout: options.timeout,
            replica_wait,
            idle: Mutex::new(Vec::new()),
            insert: Script::new(INSERT),
            delete: Script::new(DELETE),
            fence: Script::new(FENCE),
            claim: Script::new(CLAIM),
            release: Script::new(RELEASE),
            migrate: Script::new(MIGRATE),
            remove_entry: Script::new(REMOVE_ENTRY),
            reader_script: Script::new(READER),
            trim_script: Script::new(TRIM),
            sweep_script: Script::new(SWEEP),
            sweep_after: options.sweep_after,
            reader: window::reader_name(),
            beat: Mutex::new(None),
            sim_len: std::sync::OnceLock::new(),
            window: options.log_window,
            reader_timeout: options.reader_timeout,
        };
        store.probe()?;
        store.migrate_layout()?;
        Ok(store)
    }

    fn key(&self, what: &str) -> String {
        self.keys.ordered(what)
    }

    fn idle(&self) -> MutexGuard<'_, Vec<Conn>> {
        self.idle.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Runs `f` on a pooled connection; a connection that failed is dropped, not reused, and
    /// so is every idle one if the failure means the server is unavailable.
    fn run<T>(&self, f: impl FnOnce(&mut Conn) -> RedisResult<T>) -> Result<T> {
        let pooled = self.idle().pop();
        let mut conn: Conn = match pooled {
            Some(conn) => conn,
            None => match &self.opener {
                Opener::Single(client) => Conn::Single(connect_within(client, self.timeout)?),
                Opener::Cluster(client, _) => Conn::Cluster(Box::new(client.get_connection()?)),
            },
        };
        let result = f(&mut conn).map_err(|error| {
            // The server is gone or stalled: the other idle connections are as dead as this
            // one, and each would fail a call (and close the gate again) after it comes back.
            if redis_unavailable(&error) {
                self.idle().clear();
            }
            refused_or_failed(error)
        })?;
        let mut idle = self.idle();
        if idle.len() < MAX_IDLE {
            idle.push(conn);
        }
        Ok(result)
    }

    /// Reads the log after `after`, page by page. Unless `after` is the start, the first page
    /// starts at `after` itself, which must be there: if it is not, the log was replaced
    /// (restored from an older snapshot and written again) and this is [`StoreError::Reset`].
    fn read_log(&self, after: Cursor, sink: &mut dyn FnMut(Cursor, Change)) -> Result<Cursor> {
        let log = self.key("log");
        let mut at = after;
        let mut check_first = after != Cursor::default();
        if !check_first && self.trimmed()? {
            return Err(self.reset(after, "was trimmed since this process read it"));
        }
        loop {
            let start = if check_first {
                format!("{}-{}", at.0, at.1)
            } else {
                format!("{}-{}", at.0, at.1.saturating_add(1))
            };
            let mut page: Vec<(String, Vec<String>)> = self.run(|conn| {
                redis::cmd("XRANGE")
                    .arg(&log)
                    .arg(&start)
                    .arg("+")
                    .arg("COUNT")
                    .arg(PAGE)
                    .query(conn)
            })?;
            let full = page.len() == PAGE;
            if std::mem::take(&mut check_first) {
                let first = page
                    .first()
                    .map(|(id, _)| parse_stream_id(id))
                    .transpose()?;
                match first {
                    Some(first) if first == after => {}
                    Some(first) if first > after => {
                        return Err(self.reset(after, "was trimmed past the last entry it saw"))
                    }
                    _ => return Err(self.reset(after, "no longer holds the last entry it saw")),
                }
                page.remove(0);
            }
            for (id, fields) in &page {
                at = parse_stream_id(id)?;
                sink(at, parse_change(fields)?);
            }
            if !full {
                return Ok(at);
            }
        }
    }

    /// Whether any entry of the log was ever trimmed (`XINFO STREAM`'s `max-deleted-entry-id`
    /// is not `0-0`): then a read from its start misses some.
    fn trimmed(&self) -> Result<bool> {
        let log = self.key("log");
        let exists: bool = self.run(|conn| redis::cmd("EXISTS").arg(&log).query(conn))?;
        if !exists {
            return Ok(false);
        }
        let info: redis::Value =
            self.run(|conn| redis::cmd("XINFO").arg("STREAM").arg(&log).query(conn))?;
        let text = |value: &redis::Value| match value {
            redis::Value::BulkString(bytes) => String::from_utf8(bytes.clone()).ok(),
            redis::Value::SimpleString(text) => Some(text.clone()),
            _ => None,
        };
        let pairs: Vec<(&redis::Value, &redis::Value)> = match &info {
            redis::Value::Map(pairs) => pairs.iter().map(|(k, v)| (k, v)).collect(),
            redis::Value::Array(items) => {
                items.chunks_exact(2).map(|kv| (&kv[0], &kv[1])).collect()
            }
            _ => return Err(corrupt("XINFO STREAM reply")),
        };
        let deleted = pairs
            .into_iter()
            .find(|(name, _)| text(name).as_deref() == Some("max-deleted-entry-id"))
            .and_then(|(_, value)| text(value));
        Ok(deleted.is_some_and(|id| id != "0-0"))
    }

    /// The error for a log that went back in time: `how` it differs from `after`.
    fn reset(&self, after: Cursor, how: &str) -> StoreError {
        StoreError::Reset(format!(
            "{}: its log {how} ({}-{}, this process's position)",
            self.location, after.0, after.1
        ))
    }

    /// `read` applied to each server of the database (one, or every node given of a cluster
    /// that answers), on a connection of its own for a cluster node, with the node's redacted
    /// URL. A cluster node that cannot be reached is skipped (a master killed and failed over
    /// to its replica holds none of the database), unless none answers.
    fn each_server<T>(
        &self,
        read: impl Fn(&mut dyn ConnectionLike, &str) -> RedisResult<T>,
    ) -> Result<Vec<T>> {
        let Opener::Cluster(_, nodes) = &self.opener else {
            return Ok(vec![self.run(|conn| read(conn, &self.location))?]);
        };
        let mut found = Vec::new();
        let mut unreachable = None;
        for node in nodes {
            let answer = (|| {
                let client = Client::open(connection_info(node)?)?;
                read(&mut connect_within(&client, self.timeout)?, &redact(node))
            })();
            match answer {
                Ok(value) => found.push(value),
                Err(error) if redis_unavailable(&error) => {
                    tracing::debug!(node = %redact(node), error = %StoreError::Redis(error.clone()), "cluster node skipped");
                    unreachable.get_or_insert(error);
                }
                Err(error) => return Err(error.into()),
            }
        }
        match unreachable {
            Some(error) if found.is_empty() => Err(error.into()),
            _ => Ok(found),
        }
    }

    /// `None` once a replica acknowledged the writes `conn` made on the node holding `key`
    /// (at once if writes wait for no replica); else the error to answer: the write is on the
    /// master only, and may be lost if it fails over.
    fn unreplicated(&self, conn: &mut Conn, key: &str) -> Option<StoreError> {
        let wait = self.replica_wait?;
        match conn.replicas_acknowledging(key, wait) {
            Ok(n) if n >= 1 => None,
            Ok(_) => Some(StoreError::Unreplicated(format!(
                "{}: none of {key} within {wait:?}",
                self.location
            ))),
            Err(error) => Some(StoreError::Unreplicated(format!(
                "{}: waiting for a replica of {key}: {}",
                self.location,
                StoreError::Redis(error)
            ))),
        }
    }

    /// Moves a database of an earlier layout to this one, unless `layout` says it is moved: every
    /// document named in `slots` gets its body under its slot's key and its claim, then
    /// [`MIGRATE`] commits it in the slot states and removes it from `slots` and `ids`. An empty
    /// database of an earlier layout (a policy, no `slots`) only records the layout; an absent
    /// one is left unwritten (a read-only command must write nothing; [`Store::init_meta`]
    /// records the layout when the database is made).
    fn migrate_layout(&self) -> Result<()> {
        let (layout, slots, meta) = (self.key("layout"), self.key("slots"), self.key("meta"));
        let (recorded, old, made): (Option<String>, u64, u64) = self.run(|conn| {
            Ok((
                redis::cmd("GET").arg(&layout).query(conn)?,
                redis::cmd("EXISTS").arg(&slots).query(conn)?,
                redis::cmd("EXISTS").arg(&meta).query(conn)?,
            ))
        })?;
        if recorded.is_none() && old == 0 && made == 0 {
            return Ok(());
        }
        match recorded.as_deref() {
            Some(LAYOUT) => return Ok(()),
            Some("4") => return self.record_layout(0),
            Some(other) => {
                return Err(StoreError::Corrupt(format!(
                    "{}: Redis layout {other} (this program reads {LAYOUT} and older)",
                    self.location
                )))
            }
            None => {}
        }
        let mut moved = 0u64;
        if old > 0 {
            let mut at = 0u64;
            loop {
                let (next, page): (u64, Vec<String>) = self.run(|conn| {
                    redis::cmd("HSCAN")
                        .arg(&slots)
                        .arg(at)
                        .arg("COUNT")
                        .arg(MIGRATE_PAGE)
                        .query(conn)
                })?;
                for pair in page.chunks_exact(2) {
                    moved += u64::from(self.move_one(&pair[0], &pair[1])?);
                }
                if next == 0 {
                    break;
                }
                at = next;
            }
        }
        let ids = self.key("ids");
        self.run(|conn| redis::cmd("DEL").arg(&ids).exec(conn))?;
        self.record_layout(moved)
    }

    /// Writes the rows of every stored document from the log (layout 4 and older have none),
    /// then records this layout; `moved` documents were moved from an older one.
    fn record_layout(&self, moved: u64) -> Result<()> {
        let rows = self.rows_from_log()?;
        let layout = self.key("layout");
        self.run(|conn| redis::cmd("SET").arg(&layout).arg(LAYOUT).exec(conn))?;
        tracing::info!(location = %self.location, moved, rows, layout = LAYOUT, "database moved to this layout");
        Ok(())
    }

    /// Moves document `id` in `slot` of an earlier layout: copies its record (from its layout-3
    /// body, or its hash of the layout before spreading) to its slot's body key, claims its id
    /// (unless claimed: by an earlier try of this move, or by an insert after another process
    /// moved it), then [`MIGRATE`] commits it; last, the old body is deleted. False if another
    /// process moved it first.
    fn move_one(&self, slot: &str, id: &str) -> Result<bool> {
        let number: u64 = slot.parse().map_err(|_| corrupt(slot))?;
        let (ids, old) = (self.key("ids"), self.keys.unspread(id));
        let (held, unspread): (Option<String>, Option<String>) = self.run(|conn| {
            Ok((
                redis::cmd("HGET").arg(&ids).arg(id).query(conn)?,
                redis::cmd("HGET").arg(&old).arg("record").query(conn)?,
            ))
        })?;
        let old_body = held
            .as_deref()
            .and_then(|held| held.split_once(':'))
            .map(|(_, nonce)| self.keys.nonce_body(id, nonce));
        let record: Option<String> = match &old_body {
            Some(key) => self.run(|conn| redis::cmd("GET").arg(key).query(conn))?,
            None => unspread,
        };
        let Some(record) = record else {
            return Ok(false);
        };
        let (body, claim) = (self.keys.body(number), self.keys.claim(id));
        let mut invocation = self.migrate.prepare_invoke();
        invocation
            .key(self.key("slots"))
            .key(&ids)
            .key(self.key("state"))
            .key(self.key("count"))
            .key(&old)
            .arg(slot)
            .arg(id);
        self.run(|conn| {
            redis::cmd("SET").arg(&body).arg(&record).exec(conn)?;
            if let Some(error) = self.unreplicated(conn, &body) {
                return Ok(Err(error));
            }
            redis::cmd("SET")
                .arg(&claim)
                .arg(format!("{slot}:0"))
                .arg("NX")
                .exec(conn)?;
            if let Some(error) = self.unreplicated(conn, &claim) {
                return Ok(Err(error));
            }
            let moved: Vec<String> = invocation.invoke(conn)?;
            if moved.is_empty() {
                return Ok(Ok(false));
            }
            if let Some(error) = self.unreplicated(conn, &ids) {
                return Ok(Err(error));
            }
            if let Some(key) = &old_body {
                redis::cmd("DEL").arg(key).exec(conn)?;
            }
            Ok(Ok(true))
        })?
    }

    /// The state of each slot ([`crate::redis_layout::FREE`], [`LIVE`] or [`DEAD`]): one
    /// `BITFIELD_RO` on the ordering node.
    fn states(&self, slots: &[u64]) -> Result<Vec<u8>> {
        let mut read = redis::cmd("BITFIELD_RO");
        read.arg(self.key("state"));
        for slot in slots {
            read.arg("GET").arg("u2").arg(format!("#{slot}"));
        }
        self.run(|conn| read.query(conn))
    }

    /// Claims `id` for the insert in `slot` ([`CLAIM`], then a replica under strict durability).
    /// A claim held by another slot: the id is stored if that slot is committed; a dead slot's
    /// claim is taken over; a claim in progress is waited for, then, once older than the store
    /// timeout (its writer stalled or died), its slot is fenced and the claim taken over.
    fn claim(&self, id: &str, slot: u64) -> Result<Claimed> {
        let key = self.keys.claim(id);
        let stale = self.timeout.as_millis() as u64;
        let started = std::time::Instant::now();
        let mut take_over: Option<String> = None;
        loop {
            let mut invocation = self.claim.prepare_invoke();
            invocation.key(&key).arg(slot);
            if let Some(held) = &take_over {
                invocation.arg(held);
            }
            let reply = self.run(|conn| {
                let reply: Vec<String> = invocation.invoke(conn)?;
                let unreplicated = match reply.first().map(String::as_str) {
                    Some("ok") => self.unreplicated(conn, &key),
                    _ => None,
                };
                Ok((reply, unreplicated))
            })?;
            let held = match reply {
                (reply, None) if reply.first().map(String::as_str) == Some("ok") => {
                    return Ok(Claimed::Mine)
                }
                (_, Some(error)) => {
                    self.release(id, slot);
                    return Err(error);
                }
                (reply, None) => reply,
            };
            let [_, held, now] = held.as_slice() else {
                return Err(corrupt("claim script reply"));
            };
            let (theirs, since) =
                parse_claim(held).ok_or_else(|| corrupt(&format!("claim {held:?} of {id}")))?;
            let now: u64 = now.parse().map_err(|_| corrupt(now))?;
            let state = match self.states(&[theirs])?.first() {
                Some(&FREE) if now.saturating_sub(since) >= stale => self.fence_slot(theirs)?,
                Some(&state) => state,
                None => return Err(corrupt("slot states reply")),
            };
            match state {
                LIVE => return Ok(Claimed::Stored),
                DEAD => take_over = Some(held.clone()),
                _ => {
                    if started.elapsed() > self.timeout * 3 {
                        return Err(StoreError::Timeout(format!(
                            "{}: the id {id} stayed claimed by another insert in progress",
                            self.location
                        )));
                    }
                    take_over = None;
                    std::thread::sleep(CLAIM_POLL);
                }
            }
        }
    }

    /// Marks `slot` dead unless it was committed ([`FENCE`], then a replica under strict
    /// durability); its state after.
    fn fence_slot(&self, slot: u64) -> Result<u8> {
        let state = self.key("state");
        let mut invocation = self.fence.prepare_invoke();
        invocation.key(&state).key(self.key("fenced")).arg(slot);
        self.run(|conn| {
            let after: u8 = invocation.invoke(conn)?;
            Ok(match self.unreplicated(conn, &state) {
                Some(error) => Err(error),
                None => Ok(after),
            })
        })?
    }

    /// Releases `id`'s claim if it names `slot`; a failure is only logged (a claim left names
    /// a slot never committed: the next insert of the id takes it over once it is stale).
    fn release(&self, id: &str, slot: u64) {
        let mut invocation = self.release.prepare_invoke();
        invocation.key(self.keys.claim(id)).arg(slot);
        if let Err(error) = self.run(|conn| invocation.invoke::<i64>(conn)) {
            tracing::warn!(%error, id, slot, "a claim was left");
        }
    }

    /// The lists under block keys `keys` (empty for a key never written), and the value of
    /// `extra` if given, in one `MGET` (a round trip per node holding some of them).
    fn mget_blocks(
        &self,
        keys: &[(u32, u64)],
        extra: Option<String>,
    ) -> Result<(Lists, Option<Vec<u8>>)> {
        let mut names: Vec<String> = keys
            .iter()
            .map(|&(t, key)| self.keys.block(t, key))
            .collect();
        names.extend(extra.clone());
        let mut lists: Vec<Option<Vec<u8>>> =
            self.run(|conn| redis::cmd("MGET").arg(&names).query(conn))?;
        let extra = extra.and_then(|_| lists.pop().flatten());
        Ok((
            lists.into_iter().map(Option::unwrap_or_default).collect(),
            extra,
        ))
    }

    /// The bodies of the documents in `slots`, in order: `None` for a body missing (lost with
    /// a master that failed over before a replica had it).
    fn bodies(&self, slots: &[u64]) -> Result<Vec<Option<Record>>> {
        if slots.is_empty() {
            return Ok(Vec::new());
        }
        let names: Vec<String> = slots.iter().map(|&slot| self.keys.body(slot)).collect();
        // MGET: one round trip per node holding some of them.
        let jsons: Vec<Option<String>> =
            self.run(|conn| redis::cmd("MGET").arg(&names).query(conn))?;
        names
            .iter()
            .zip(slots)
            .zip(jsons)
            .map(|((key, &slot), json)| match json {
                Some(json) => parse_record(&json, slot).map(Some),
                None => {
                    tracing::warn!(location = %self.location, key, "a stored document has no body");
                    Ok(None)
                }
            })
            .collect()
    }

    /// The slot `id`'s claim names, if it has one.
    fn claimed_slot(&self, id: &str) -> Result<Option<u64>> {
        let key = self.keys.claim(id);
        let held: Option<String> = self.run(|conn| redis::cmd("GET").arg(&key).query(conn))?;
        held.map(|held| {
            parse_claim(&held)
                .map(|(slot, _)| slot)
                .ok_or_else(|| corrupt(&format!("claim {held:?} of {id}")))
        })
        .transpose()
    }
}

/// One parameter of the configuration of the server at `conn` (`CONFIG GET name`).
fn config_get(conn: &mut dyn ConnectionLike, name: &str) -> RedisResult<String> {
    let pair: Vec<String> = redis::cmd("CONFIG").arg("GET").arg(name).query(conn)?;
    Ok(pair.into_iter().nth(1).unwrap_or_default())
}

/// The persistence of the server at `conn`, from its configuration.
fn server_durability(conn: &mut dyn ConnectionLike, server: &str) -> RedisResult<Durability> {
    let read = (|| {
        Ok((
            config_get(conn, "appendonly")?,
            config_get(conn, "appendfsync")?,
            config_get(conn, "save")?,
        ))
    })();
    match read {
        Ok((appendonly, appendfsync, save)) => {
            Ok(Durability::redis(&appendonly, &appendfsync, &save))
        }
        Err(error) if redis_unavailable(&error) => Err(error),
        Err(error) => Ok(Durability::unknown(
            &format!("redis {server}"),
            &format!("CONFIG GET refused: {}", StoreError::Redis(error)),
        )),
    }
}

/// The eviction policy of the server at `conn` if it may evict keys of a database: a
/// `maxmemory` and an `allkeys-*` policy (`volatile-*` ones evict only keys with a TTL, and no
/// key of a database has one). A server that refuses `CONFIG GET` (then its durability says so
/// too) cannot be checked: `None`.
fn server_eviction(conn: &mut dyn ConnectionLike, _server: &str) -> RedisResult<Option<String>> {
    let read = (|| {
        Ok((
            config_get(conn, "maxmemory-policy")?,
            config_get(conn, "maxmemory")?,
        ))
    })();
    match read {
        Ok((policy, maxmemory)) => {
            Ok((policy.starts_with("allkeys-") && maxmemory.trim() != "0").then_some(policy))
        }
        Err(error) if redis_unavailable(&error) => Err(error),
        Err(_) => Ok(None),
    }
}

/// The TLS settings of `url` that trust the certificate authorities in the PEM file at `path`
/// (read now: a missing or unreadable file is an error naming it).
fn trusting(path: &Path, url: &str) -> Result<TlsCertificates> {
    let root_cert = std::fs::read(path).map_err(|error| StoreError::InvalidSpec {
        spec: redact(url),
        reason: format!("cannot read the Redis CA file {}: {error}", path.display()),
    })?;
    Ok(TlsCertificates {
        client_tls: None,
        root_cert: Some(root_cert),
    })
}

/// A Redis error as a store error: `OOM` (the server is at its `maxmemory` and refuses
/// writes), alone or as the answer of any command of a pipeline or transaction, is
/// [`StoreError::Full`], the rest [`StoreError::Redis`].
fn refused_or_failed(error: redis::RedisError) -> StoreError {
    let in_a_batch = |error: &redis::RedisError| {
        error
            .clone()
            .into_server_errors()
            .is_some_and(|answers| answers.iter().any(|(_, answer)| answer.code() == "OOM"))
    };
    if error.code() == Some("OOM") || in_a_batch(&error) {
        StoreError::Full(redact(&error.to_string()))
    } else {
        StoreError::Redis(error)
    }
}

/// How to connect to the server at `url`, without the `CLIENT SETINFO` commands the client sends
/// by default on connecting: against a stalled server, each of their answers is waited for up
/// to the timeout, which doubled the time a new connection took to fail.
fn connection_info(url: &str) -> RedisResult<ConnectionInfo> {
    if url.starts_with("rediss://") {
        // The redis client's rustls comes without a crypto provider: this process's is ring
        // (installed once; later calls find it there).
        let _ = rustls::crypto::ring::default_provider().install_default();
    }
    let info = url.into_connection_info()?;
    let settings = info.redis_settings().clone().set_skip_set_lib_name();
    Ok(info.set_redis_settings(settings))
}

/// A connection to one server whose connecting, and every command on it, takes at most
/// `timeout`.
fn connect_within(client: &Client, timeout: Duration) -> RedisResult<redis::Connection> {
    let conn = client.get_connection_with_timeout(timeout)?;
    conn.set_read_timeout(Some(timeout))?;
    conn.set_write_timeout(Some(timeout))?;
    Ok(conn)
}

fn corrupt(what: &str) -> StoreError {
    StoreError::Corrupt(format!("unexpected Redis data: {what}"))
}

fn parse_stream_id(id: &str) -> Result<Cursor> {
    let (ms, seq) = id.split_once('-').ok_or_else(|| corrupt(id))?;
    Ok(Cursor(
        ms.parse().map_err(|_| corrupt(id))?,
        seq.parse().map_err(|_| corrupt(id))?,
    ))
}

fn parse_change(fields: &[String]) -> Result<Change> {
    let field = |name: &str| -> Result<&str> {
        fields
            .chunks_exact(2)
            .find(|kv| kv[0] == name)
            .map(|kv| kv[1].as_str())
            .ok_or_else(|| corrupt(&format!("log entry without {name}")))
    };
    let number = |name: &str, radix: u32| -> Result<u128> {
        let text = field(name)?;
        u128::from_str_radix(text, radix).map_err(|_| corrupt(text))
    };
    let slot = number("slot", 10)? as u64;
    match field("op")? {
        "i" => Ok(Change::Insert(Entry {
            slot,
            simhash: number("sim", 16)?,
            digest: number("dig", 16)?,
        })),
        "d" => Ok(Change::Delete(slot)),
        other => Err(corrupt(other)),
    }
}

/// A write's durability: done, or failed with `error` (a write no replica acknowledged).
fn failed_or_done(error: Option<StoreError>, timeout: Duration) -> Durable {
    match error {
        None => Durable::done(),
        Some(error) => {
            let (sender, receiver) = mpsc::channel();
            // The receiver is in hand: the send cannot fail.
            let _ = sender.send(Err(error));
            Durable::pending(receiver, timeout)
        }
    }
}

fn parse_record(json: &str, slot: u64) -> Result<Record> {
    let mut record: Record = serde_json::from_str(json)?;
    record.slot = slot;
    Ok(record)
}

impl Store for RedisStore {
    fn location(&self) -> String {
        self.location.clone()
    }

    fn init_meta(&self, meta: &Meta) -> Result<Meta> {
        let key = self.key("meta");
        let json = serde_json::to_string(meta)?;
        let layout = self.key("layout");
        let stored: String = self.run(|conn| {
            redis::cmd("SET")
                .arg(&key)
                .arg(&json)
                .arg("NX")
                .exec(conn)?;
            redis::cmd("SET")
                .arg(&layout)
                .arg(LAYOUT)
                .arg("NX")
                .exec(conn)?;
            redis::cmd("GET").arg(&key).query(conn)
        })?;
        Ok(serde_json::from_str(&stored)?)
    }

    fn replace_meta(&self, meta: &Meta) -> Result<()> {
        let key = self.key("meta");
        let json = serde_json::to_string(meta)?;
        self.run(|conn| redis::cmd("SET").arg(&key).arg(&json).exec(conn))
    }

    fn meta(&self) -> Result<Option<Meta>> {
        let key = self.key("meta");
        let stored: Option<String> = self.run(|conn| redis::cmd("GET").arg(&key).query(conn))?;
        stored
            .map(|json| Ok(serde_json::from_str(&json)?))
            .transpose()
    }

    /// `EXISTS`, which leaves the key's access time and frequency as they were (a `GET` every
    /// eviction check would keep the metadata the most recently used key of an evicting Redis,
    /// and an eviction of the documents unseen).
    fn has_meta(&self) -> Result<bool> {
        let key = self.key("meta");
        self.run(|conn| redis::cmd("EXISTS").arg(&key).query(conn))
    }

    /// From the rows spread over the cluster and the slot states, not the log (which keeps
    /// only a window); this process's position is reported first, so the log from it stays.
    fn load(&self, sink: &mut dyn FnMut(Entry)) -> Result<Cursor> {
        self.load_rows(sink)
    }

    fn reader_at(&self, at: Cursor) -> Result<()> {
        self.report(at, false)
    }

    fn sweep(&self) -> Result<Vec<Entry>> {
        self.sweep_orphans()
    }

    fn changes(&self, after: Cursor, sink: &mut dyn FnMut(Cursor, Change)) -> Result<Cursor> {
        // The log's end first (one round trip, the same as an empty read of the log): nothing
        // new is the common case; an end behind `after` means the store lost changes (a
        // restart without persistence, or from an older snapshot), and an insert would
        // otherwise conflict for ever against a `last` that can never match.
        let key = self.key("last");
        let last: Option<String> = self.run(|conn| redis::cmd("GET").arg(&key).query(conn))?;
        let last = last.as_deref().map(parse_stream_id).transpose()?;
        match last {
            Some(last) if last == after => Ok(after),
            None if after == Cursor::default() => Ok(after),
            Some(last) if last > after => self.read_log(after, sink),
            Some(last) => Err(self.reset(after, &format!("ends at {}-{}", last.0, last.1))),
            None => Err(self.reset(after, "is empty")),
        }
    }

    /// Claims the id, writes the body under its slot's key, then runs the conflict-checked
    /// insert script on the ordering node: a slot is committed only once its claim and body are
    /// written. An insert refused deletes its body and releases its claim.
    fn insert(&self, mut record: Record, seen: Cursor) -> Result<Insert> {
        if record.slot == 0 {
            record.slot = self.reserve_slot()?;
        }
        let slot = record.slot;
        if let Claimed::Stored = self.claim(&record.id, slot)? {
            return Ok(Insert::IdExists);
        }
        let entry = record.entry();
        let json = serde_json::to_string(&record)?;
        let body = self.keys.body(slot);
        let last = self.key("last");
        let mut invocation = self.insert.prepare_invoke();
        invocation
            .key(&last)
            .key(self.key("log"))
            .key(self.key("state"))
            .key(self.key("count"))
            .arg(format!("{}-{}", seen.0, seen.1))
            .arg(slot)
            .arg(format!("{:x}", entry.simhash))
            .arg(format!("{:x}", entry.digest));
        // Before the script runs, the claim can go again if the body is not written (or not
        // replicated); once it may have run, the claim stays: it may name a stored slot.
        let body_written = self.run(|conn| {
            redis::cmd("SET").arg(&body).arg(&json).exec(conn)?;
            Ok(self.unreplicated(conn, &body))
        });
        let sim_len = record.simhash.bits().count() as usize / 8;
        let written = match body_written.unwrap_or_else(Some) {
            None => self.add_row(&entry, sim_len).err(),
            error => error,
        };
        if let Some(error) = written {
            self.release(&record.id, slot);
            return Err(error);
        }
        let (reply, unreplicated) = self.run(|conn| {
            let reply: Vec<String> = invocation.invoke(conn)?;
            match reply.first().map(String::as_str) {
                Some("ok") => Ok((reply, self.unreplicated(conn, &last))),
                Some("mine") => Ok((reply, None)),
                _ => {
                    redis::cmd("DEL").arg(&body).exec(conn)?;
                    Ok((reply, None))
                }
            }
        })?;
        if !matches!(reply.first().map(String::as_str), Some("ok" | "mine")) {
            if let Err(error) = self.remove_row(&entry, sim_len) {
                tracing::warn!(%error, slot, "the row of an insert not made is left");
            }
        }
        match reply.as_slice() {
            [status] if status == "conflict" => {
                self.release(&record.id, slot);
                Ok(Insert::Conflict)
            }
            [status] if status == "fenced" => Err(StoreError::Timeout(format!(
                "{}: the insert of {} stalled past the store timeout and another took its id over",
                self.location, record.id
            ))),
            [status] if status == "mine" => Err(StoreError::Timeout(format!(
                "{}: the insert of {} was made, but its answer was lost with the connection",
                self.location, record.id
            ))),
            [status, slot, xid] if status == "ok" => {
                let slot: u64 = slot.parse().map_err(|_| corrupt(slot))?;
                if slot.is_multiple_of(window::TRIM_EVERY) {
                    // The insert is made: a trim that fails is tried again TRIM_EVERY later.
                    if let Err(error) = self.trim_log() {
                        tracing::warn!(%error, "the log was not trimmed");
                    }
                }
                Ok(Insert::Accepted {
                    slot,
                    cursor: parse_stream_id(xid)?,
                    durable: failed_or_done(unreplicated, self.timeout),
                })
            }
            _ => Err(corrupt("insert script reply")),
        }
    }

    /// Reads the id's claim, runs the delete script on the ordering node (the slot dies), then
    /// deletes the body and its row, and releases the claim.
    fn delete(&self, id: &str) -> Result<Option<Record>> {
        let Some(slot) = self.claimed_slot(id)? else {
            return Ok(None);
        };
        let last = self.key("last");
        let body = self.keys.body(slot);
        let mut invocation = self.delete.prepare_invoke();
        invocation
            .key(self.key("state"))
            .key(self.key("count"))
            .key(self.key("log"))
            .key(&last)
            .arg(slot);
        let json = self.run(|conn| {
            let deleted: i64 = invocation.invoke(conn)?;
            if deleted == 0 {
                return Ok(Ok(None));
            }
            if let Some(error) = self.unreplicated(conn, &last) {
                return Ok(Err(error));
            }
            let json: Option<String> = redis::cmd("GETDEL").arg(&body).query(conn)?;
            Ok(Ok(Some(json)))
        })??;
        let Some(json) = json else {
            return Ok(None);
        };
        self.release(id, slot);
        let Some(json) = json else {
            return Err(corrupt(&format!("deleted document {id} had no body")));
        };
        let record = parse_record(&json, slot)?;
        let sim_len = record.simhash.bits().count() as usize / 8;
        if let Err(error) = self.remove_row(&record.entry(), sim_len) {
            tracing::warn!(%error, id, "the row of a deleted document is left");
        }
        Ok(Some(record))
    }

    fn get(&self, id: &str) -> Result<Option<Record>> {
        match self.claimed_slot(id)? {
            Some(slot) => Ok(self.get_slots(&[slot])?.pop().flatten()),
            None => Ok(None),
        }
    }

    /// The slots' states in one read on the ordering node, then the bodies of the stored ones
    /// in one `MGET`.
    fn get_slots(&self, slots: &[u64]) -> Result<Vec<Option<Record>>> {
        if slots.is_empty() {
            return Ok(Vec::new());
        }
        let states = self.states(slots)?;
        let stored: Vec<u64> = slots
            .iter()
            .zip(&states)
            .filter(|(_, &state)| state == LIVE)
            .map(|(&slot, _)| slot)
            .collect();
        let mut bodies = self.bodies(&stored)?.into_iter();
        Ok(states
            .iter()
            .map(|&state| {
                if state == LIVE {
                    bodies.next().flatten()
                } else {
                    None
                }
            })
            .collect())
    }

    fn len(&self) -> Result<u64> {
        let key = self.key("count");
        let count: Option<u64> = self.run(|conn| redis::cmd("GET").arg(&key).query(conn))?;
        Ok(count.unwrap_or(0))
    }

    fn probe(&self) -> Result<()> {
        self.run(|conn| redis::cmd("PING").exec(conn))
    }

    /// Read from each server's configuration (`CONFIG GET appendonly`, `appendfsync`, `save`);
    /// a cluster promises what its weakest node given does, plus a replica when writes wait
    /// for one.
    fn durability(&self) -> Result<Durability> {
        let found = self.each_server(server_durability)?;
        let weakest = found
            .into_iter()
            .reduce(Durability::weaker)
            .unwrap_or_else(|| Durability::unknown("redis cluster", "no node"));
        Ok(match self.replica_wait {
            Some(_) => weakest.with_replica(),
            None => weakest,
        })
    }

    fn holds_blocks(&self) -> bool {
        true
    }

    fn blocks_plan(&self) -> Result<Option<String>> {
        let key = self.key("blocks");
        self.run(|conn| redis::cmd("GET").arg(&key).query(conn))
    }

    fn set_blocks_plan(&self, plan: &str) -> Result<String> {
        let key = self.key("blocks");
        self.run(|conn| {
            redis::cmd("SET").arg(&key).arg(plan).arg("NX").exec(conn)?;
            redis::cmd("GET").arg(&key).query(conn)
        })
    }

    fn position(&self) -> Result<Cursor> {
        let key = self.key("last");
        let last: Option<String> = self.run(|conn| redis::cmd("GET").arg(&key).query(conn))?;
        last.as_deref()
            .map_or(Ok(Cursor::default()), parse_stream_id)
    }

    /// One `MGET` (a round trip per node holding some of the keys).
    fn read_blocks(&self, keys: &[(u32, u64)]) -> Result<Vec<Vec<u8>>> {
        if keys.is_empty() {
            return Ok(Vec::new());
        }
        Ok(self.mget_blocks(keys, None)?.0)
    }

    /// The same `MGET`, with the slot counter: no round trip more.
    fn read_blocks_reserved(&self, keys: &[(u32, u64)]) -> Result<(Vec<Vec<u8>>, u64)> {
        let (lists, seq) = self.mget_blocks(keys, Some(self.key("seq")))?;
        let seq = match seq {
            Some(bytes) => std::str::from_utf8(&bytes)
                .ok()
                .and_then(|text| text.parse().ok())
                .ok_or_else(|| corrupt("the slot counter"))?,
            None => 0,
        };
        Ok((lists, seq))
    }

    fn reserve_slot(&self) -> Result<u64> {
        let key = self.key("seq");
        self.run(|conn| redis::cmd("INCR").arg(&key).query(conn))
    }

    /// `APPEND` to each key (pipelined on one server); under strict durability each key's node
    /// then waits for a replica, as every write does.
    fn add_blocks(&self, keys: &[(u32, u64)], entry: &[u8]) -> Result<()> {
        let names: Vec<String> = keys
            .iter()
            .map(|&(t, key)| self.keys.block(t, key))
            .collect();
        self.run(|conn| {
            if let Conn::Single(single) = conn {
                let mut pipe = redis::pipe();
                for name in &names {
                    pipe.cmd("APPEND").arg(name).arg(entry).ignore();
                }
                pipe.exec(single)?;
            } else {
                for name in &names {
                    redis::cmd("APPEND").arg(name).arg(entry).exec(conn)?;
                }
            }
            Ok(names.iter().find_map(|name| self.unreplicated(conn, name)))
        })?
        .map_or(Ok(()), Err)
    }

    /// One pipeline of `APPEND`s on one server; one [`Store::add_blocks`] a document on a
    /// cluster.
    fn add_blocks_batch(&self, batch: &[BlockWrite]) -> Result<()> {
        if matches!(self.opener, Opener::Cluster(..)) || self.replica_wait.is_some() {
            return batch
                .iter()
                .try_for_each(|(keys, entry)| self.add_blocks(keys, entry));
        }
        let mut pipe = redis::pipe();
        for (keys, entry) in batch {
            for &(t, key) in keys {
                pipe.cmd("APPEND")
                    .arg(self.keys.block(t, key))
                    .arg(entry)
                    .ignore();
            }
        }
        self.run(|conn| pipe.exec(conn))
    }

    fn remove_blocks(&self, keys: &[(u32, u64)], entry: &[u8]) -> Result<()> {
        self.run(|conn| {
            for &(t, key) in keys {
                let _: i64 = self
                    .remove_entry
                    .key(self.keys.block(t, key))
                    .arg(entry)
                    .invoke(conn)?;
            }
            Ok(())
        })
    }

    /// Read from each server's configuration (`CONFIG GET maxmemory-policy`, `maxmemory`): the
    /// first evicting policy found.
    fn eviction(&self) -> Result<Option<String>> {
        Ok(self
            .each_server(server_eviction)?
            .into_iter()
            .flatten()
            .next())
    }
}
