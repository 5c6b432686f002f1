//! [`RedisStore`]: one database shared by several processes through Redis (one server or a
//! Redis Cluster).
//!
//! # Keys (all tagged `{name}`, so one database lives in one cluster slot)
//! * `neardup:{name}:meta` — the [`Meta`] as JSON (written once, `SET NX`).
//! * `neardup:{name}:doc:<id>` — one hash per document: `record` (its JSON), `slot`.
//! * `neardup:{name}:slots` — hash slot → id.
//! * `neardup:{name}:seq` — the slot counter (`INCR`).
//! * `neardup:{name}:log` — a stream with one entry per insert (`op=i slot sim dig`) or delete
//!   (`op=d slot`): every process keeps its in-memory index current by reading it from where it
//!   last was ([`Store::changes`]) before each check.
//! * `neardup:{name}:last` — the id of the log's last entry.
//!
//! # Atomicity across processes
//! An insert is one Lua script (atomic in Redis): it refuses the insert if `last` is not the
//! position the caller's index had caught up to, so a document is inserted as unique only if
//! nothing was written since it was checked; the caller then catches up and checks again. Every
//! key is in one hash slot because a script may only touch keys of one slot: a database then
//! lives on one cluster node (several databases spread over the cluster).
//!
//! # Timeouts
//! Every connection is made, and every command answered, within the store timeout (a stalled
//! Redis, e.g. stopped by SIGSTOP, gives [`StoreError::Redis`] timing out, not a wait for ever); a
//! connection that failed or timed out is dropped, never reused.
//!
//! # A Redis that went back in time
//! Restarted empty, or from an older snapshot: its log now ends before, or differs from, what
//! this process applied. [`Store::changes`] reads the log from the last entry this process saw
//! (inclusive), so an end before it, or a first entry that is not it, is [`StoreError::Reset`]
//! in the same round trip, and the database reloads its index from what Redis now holds.

use std::collections::BTreeMap;
use std::path::Path;
use std::sync::{Mutex, MutexGuard};
use std::time::Duration;

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
use crate::store::{Change, Cursor, Durable, Insert, Store};

/// Stream entries read per round trip.
const PAGE: usize = 10_000;
/// Idle connections kept for reuse.
const MAX_IDLE: usize = 64;

const INSERT: &str = r"
local last = redis.call('GET', KEYS[1]) or '0-0'
if last ~= ARGV[1] then return {'conflict'} end
if redis.call('EXISTS', KEYS[4]) == 1 then return {'exists'} end
local slot = redis.call('INCR', KEYS[3])
redis.call('HSET', KEYS[4], 'record', ARGV[3], 'slot', slot)
redis.call('HSET', KEYS[5], slot, ARGV[2])
local xid = redis.call('XADD', KEYS[2], '*', 'op', 'i', 'slot', slot, 'sim', ARGV[4], 'dig', ARGV[5])
redis.call('SET', KEYS[1], xid)
return {'ok', tostring(slot), xid}
";

const DELETE: &str = r"
local slot = redis.call('HGET', KEYS[1], 'slot')
if not slot then return {} end
local record = redis.call('HGET', KEYS[1], 'record')
redis.call('DEL', KEYS[1])
redis.call('HDEL', KEYS[2], slot)
local xid = redis.call('XADD', KEYS[3], '*', 'op', 'd', 'slot', slot)
redis.call('SET', KEYS[4], xid)
return {slot, record}
";

/// How new connections are made.
enum Opener {
    /// One server.
    Single(Client),
    /// A cluster (timeouts set in the client); its node URLs.
    Cluster(ClusterClient, Vec<String>),
}

type Conn = Box<dyn ConnectionLike + Send>;

/// A database in Redis.
pub struct RedisStore {
    location: String,
    name: String,
    opener: Opener,
    /// The longest a connection or a command may take.
    timeout: Duration,
    idle: Mutex<Vec<Conn>>,
    insert: Script,
    delete: Script,
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
        Self::connect(url, name, Opener::Single(client), options.timeout)
    }

    /// Connects to a Redis Cluster through any of its nodes (the first one's user and
    /// password are used for all); `name` tags the keys; every connection and command takes
    /// at most [`OpenOptions::timeout`].
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
        let client = ClusterClient::builder(infos)
            .connection_timeout(options.timeout)
            .response_timeout(options.timeout)
            .build()?;
        Self::connect(
            &location,
            name,
            Opener::Cluster(client, nodes.to_vec()),
            options.timeout,
        )
    }

    fn connect(
        location: &str,
        name: &str,
        opener: Opener,
        timeout: Duration,
    ) -> Result<RedisStore> {
        let store = RedisStore {
            location: format!("{} (name {name})", redact(location)),
            name: name.to_string(),
            opener,
            timeout,
            idle: Mutex::new(Vec::new()),
            insert: Script::new(INSERT),
            delete: Script::new(DELETE),
        };
        store.probe()?;
        Ok(store)
    }

    fn key(&self, what: &str) -> String {
        format!("neardup:{{{}}}:{what}", self.name)
    }

    fn doc_key(&self, id: &str) -> String {
        self.key(&format!("doc:{id}"))
    }

    fn idle(&self) -> MutexGuard<'_, Vec<Conn>> {
        self.idle.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Runs `f` on a pooled connection; a connection that failed is dropped, not reused, and
    /// so is every idle one if the failure means the server is unavailable.
    fn run<T>(&self, f: impl FnOnce(&mut dyn ConnectionLike) -> RedisResult<T>) -> Result<T> {
        let pooled = self.idle().pop();
        let mut conn: Conn = match pooled {
            Some(conn) => conn,
            None => match &self.opener {
                Opener::Single(client) => Box::new(connect_within(client, self.timeout)?),
                Opener::Cluster(client, _) => Box::new(client.get_connection()?),
            },
        };
        let result = f(conn.as_mut()).map_err(|error| {
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
                if first != Some(after) {
                    return Err(self.reset(after, "no longer holds the last entry it saw"));
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

    /// The error for a log that went back in time: `how` it differs from `after`.
    fn reset(&self, after: Cursor, how: &str) -> StoreError {
        StoreError::Reset(format!(
            "{}: its log {how} ({}-{}, this process's position)",
            self.location, after.0, after.1
        ))
    }

    /// `read` applied to each server of the database (one, or every node given of a cluster),
    /// on a connection of its own for a cluster node, with the node's redacted URL.
    fn each_server<T>(
        &self,
        read: impl Fn(&mut dyn ConnectionLike, &str) -> RedisResult<T>,
    ) -> Result<Vec<T>> {
        match &self.opener {
            Opener::Single(..) => Ok(vec![self.run(|conn| read(conn, &self.location))?]),
            Opener::Cluster(_, nodes) => nodes
                .iter()
                .map(|node| {
                    let client = Client::open(connection_info(node)?)?;
                    let mut conn = connect_within(&client, self.timeout)?;
                    Ok(read(&mut conn, &redact(node))?)
                })
                .collect(),
        }
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
/// writes) is [`StoreError::Full`], the rest [`StoreError::Redis`].
fn refused_or_failed(error: redis::RedisError) -> StoreError {
    if error.code() == Some("OOM") {
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
        let stored: String = self.run(|conn| {
            redis::cmd("SET")
                .arg(&key)
                .arg(&json)
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

    fn load(&self, sink: &mut dyn FnMut(Entry)) -> Result<Cursor> {
        let mut live = BTreeMap::new();
        let cursor = self.read_log(Cursor::default(), &mut |_, change| match change {
            Change::Insert(entry) => {
                live.insert(entry.slot, entry);
            }
            Change::Delete(slot) => {
                live.remove(&slot);
            }
        })?;
        live.into_values().for_each(sink);
        Ok(cursor)
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

    fn insert(&self, record: Record, seen: Cursor) -> Result<Insert> {
        let entry = record.entry();
        let json = serde_json::to_string(&record)?;
        let mut invocation = self.insert.prepare_invoke();
        invocation
            .key(self.key("last"))
            .key(self.key("log"))
            .key(self.key("seq"))
            .key(self.doc_key(&record.id))
            .key(self.key("slots"))
            .arg(format!("{}-{}", seen.0, seen.1))
            .arg(&record.id)
            .arg(json)
            .arg(format!("{:x}", entry.simhash))
            .arg(format!("{:x}", entry.digest));
        let reply: Vec<String> = self.run(|conn| invocation.invoke(conn))?;
        match reply.as_slice() {
            [status] if status == "conflict" => Ok(Insert::Conflict),
            [status] if status == "exists" => Ok(Insert::IdExists),
            [status, slot, xid] if status == "ok" => Ok(Insert::Accepted {
                slot: slot.parse().map_err(|_| corrupt(slot))?,
                cursor: parse_stream_id(xid)?,
                durable: Durable::done(),
            }),
            _ => Err(corrupt("insert script reply")),
        }
    }

    fn delete(&self, id: &str) -> Result<Option<Record>> {
        let mut invocation = self.delete.prepare_invoke();
        invocation
            .key(self.doc_key(id))
            .key(self.key("slots"))
            .key(self.key("log"))
            .key(self.key("last"));
        let reply: Vec<String> = self.run(|conn| invocation.invoke(conn))?;
        match reply.as_slice() {
            [] => Ok(None),
            [slot, json] => Ok(Some(parse_record(
                json,
                slot.parse().map_err(|_| corrupt(slot))?,
            )?)),
            _ => Err(corrupt("delete script reply")),
        }
    }

    fn get(&self, id: &str) -> Result<Option<Record>> {
        let key = self.doc_key(id);
        let (json, slot): (Option<String>, Option<u64>) = self.run(|conn| {
            redis::cmd("HMGET")
                .arg(&key)
                .arg("record")
                .arg("slot")
                .query(conn)
        })?;
        match (json, slot) {
            (Some(json), Some(slot)) => Ok(Some(parse_record(&json, slot)?)),
            _ => Ok(None),
        }
    }

    fn get_slots(&self, slots: &[u64]) -> Result<Vec<Option<Record>>> {
        if slots.is_empty() {
            return Ok(Vec::new());
        }
        let slots_key = self.key("slots");
        let ids: Vec<Option<String>> =
            self.run(|conn| redis::cmd("HMGET").arg(&slots_key).arg(slots).query(conn))?;
        // One HMGET per match (at most a handful): cluster connections take no pipelines.
        ids.iter()
            .map(|id| {
                let Some(id) = id else { return Ok(None) };
                self.get(id)
            })
            .collect()
    }

    fn len(&self) -> Result<u64> {
        let key = self.key("slots");
        self.run(|conn| redis::cmd("HLEN").arg(&key).query(conn))
    }

    fn probe(&self) -> Result<()> {
        self.run(|conn| redis::cmd("PING").exec(conn))
    }

    /// Read from each server's configuration (`CONFIG GET appendonly`, `appendfsync`, `save`);
    /// a cluster promises what its weakest node given does.
    fn durability(&self) -> Result<Durability> {
        let found = self.each_server(server_durability)?;
        Ok(found
            .into_iter()
            .reduce(Durability::weaker)
            .unwrap_or_else(|| Durability::unknown("redis cluster", "no node")))
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
