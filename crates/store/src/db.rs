//! [`NearDupDb`]: a store, its policy and the in-memory index; check, insert, get, delete.

use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, RwLock, RwLockReadGuard, RwLockWriteGuard};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use neardup_core::{Fingerprinter, Fingerprints};
use neardup_dedup::{DuplicateOf, Evidence, Kind, Method, Policy};
use serde::Serialize;

use crate::durability::Durability;
use crate::error::{Result, StoreError};
use crate::gate::Gated;
use crate::held::{IndexIn, Plan};
use crate::memory::{Found, MemIndex};
use crate::meta::Meta;
use crate::record::{digest_key, Entry, Record, StoredText};
use crate::set_cache::{SetCache, Verifiable};
use crate::store::{Cursor, Durable, Insert, Store};
use crate::verdict::{CheckOutcome, DocMatch, InsertMode, Verdict};

/// Most matches an [`CheckOutcome`] lists.
pub const MAX_MATCHES: usize = 10;
/// Most candidate records read for one check (the nearest by distance, then slot).
const MAX_FETCH: usize = 1000;
/// Candidate records read at a time while verifying, nearest first.
const VERIFY_CHUNK: usize = 16;
/// Inserts refused because another writer moved first, before an insert gives up (each retry
/// catches up first, so only a store written without pause by others gets this far).
const MAX_CONFLICTS: usize = 1000;
/// A writer sweeps ([`NearDupDb::sweep`]) after each insert whose slot is a multiple of this.
pub const SWEEP_EVERY: u64 = 256;
/// The default longest wait for one store call: a Redis connection or command, a redb commit.
pub const DEFAULT_STORE_TIMEOUT: Duration = Duration::from_secs(2);

/// A document to check or insert.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct NewDocument {
    /// The caller's id; one is generated when absent.
    pub id: Option<String>,
    /// Its URL.
    pub url: Option<String>,
    /// Its title.
    pub title: Option<String>,
    /// When it was fetched (any string the caller likes, typically RFC 3339).
    pub fetched_at: Option<String>,
    /// Its text (main content already extracted from HTML).
    pub text: String,
}

/// How to open a database: the policy of a new one, checked against an existing one; the store
/// timeout; whether every acknowledged write must be fsynced.
#[derive(Debug, Clone)]
pub struct OpenOptions {
    /// The policy; `None` opens an existing database with its own policy, and creates a new
    /// one with [`Policy::default`].
    pub policy: Option<Policy>,
    /// The longest wait for one store call (default [`DEFAULT_STORE_TIMEOUT`]); then it fails
    /// with [`StoreError::Timeout`] or a Redis timeout (a 503 from the server).
    pub timeout: Duration,
    /// Refuse to open ([`StoreError::NotDurable`]) unless the store fsyncs every acknowledged
    /// write ([`Durability::fsync_every_write`]): redb does; Redis only with `appendonly yes`
    /// and `appendfsync always`.
    pub strict_durability: bool,
    /// Open a store that may evict acknowledged documents by itself (a Redis whose
    /// `maxmemory-policy` is `allkeys-*`), warning loudly and showing it in
    /// [`NearDupDb::warning`], stats and health, instead of refusing it
    /// ([`StoreError::Eviction`]) at open and while serving (read again at most every
    /// [`crate::EVICTION_CHECK_INTERVAL`]).
    pub allow_eviction: bool,
    /// A PEM file of the certificate authorities to trust for `rediss://` (TLS) instead of the
    /// system's.
    pub redis_ca_file: Option<PathBuf>,
    /// Open only a database that exists, creating nothing (no directory, no file, no key):
    /// else fail with [`StoreError::NoDatabase`]. For the doors that only read or delete.
    pub must_exist: bool,
    /// Where checks find their candidates: an index in this process (the default) or the one
    /// the store holds (redb or Redis; else [`StoreError::IndexPlacement`]).
    pub index_in: IndexIn,
    /// The most this process may hold for the database's data, in bytes: the store's own page
    /// cache (redb: [`OpenOptions::store_cache_bytes`], a quarter), then the in-memory index
    /// (a local index over what is left is refused at open, [`StoreError::IndexPlacement`]:
    /// before it is built when the stored documents alone show it cannot fit) plus the
    /// verification cache, which gets what the index leaves. `None`: no limit on the index,
    /// the cache's default share, redb's default page cache (1 GiB).
    pub memory: Option<u64>,
    /// Redis: the oldest a log entry may be before a writer trims it, whatever process still
    /// needs it (default [`crate::DEFAULT_LOG_WINDOW`], a day); a process further behind loads
    /// its index again. Give every writer the same.
    pub log_window: Duration,
    /// Redis: how long a process's reported log position holds the log back after it last
    /// reported (it reports as it catches up); no entry younger is trimmed (default
    /// [`crate::DEFAULT_READER_TIMEOUT`]). Give every process the same.
    pub reader_timeout: Duration,
    /// Redis: a slot still free this long after it was reserved is an insert whose writer died:
    /// writers sweep its keys ([`NearDupDb::sweep`]; default [`crate::DEFAULT_SWEEP_AFTER`], ten
    /// minutes). Longer than any insert takes (a few store timeouts): a slower one is refused
    /// (a 503, retried with its id).
    pub sweep_after: Duration,
}

/// The share of [`OpenOptions::memory`] a store's own page cache gets: one part in this many.
const STORE_CACHE_SHARE: u64 = 4;

impl OpenOptions {
    /// The most a store may hold as its own page cache in this process (redb's cache of its
    /// file's pages): a quarter of [`OpenOptions::memory`]; `None` without a budget (redb's
    /// default, 1 GiB). [`NearDupDb::open`] gives the index and the verification cache what
    /// the store's cache leaves ([`Store::cache_bytes`]).
    pub fn store_cache_bytes(&self) -> Option<u64> {
        self.memory.map(|memory| memory / STORE_CACHE_SHARE)
    }
}

impl Default for OpenOptions {
    fn default() -> Self {
        OpenOptions {
            policy: None,
            timeout: DEFAULT_STORE_TIMEOUT,
            strict_durability: false,
            allow_eviction: false,
            redis_ca_file: None,
            must_exist: false,
            index_in: IndexIn::Local,
            memory: None,
            log_window: crate::DEFAULT_LOG_WINDOW,
            reader_timeout: crate::DEFAULT_READER_TIMEOUT,
            sweep_after: crate::DEFAULT_SWEEP_AFTER,
        }
    }
}

/// Logs what an acknowledged write of the store at `location` survives; under `strict`, refuses
/// ([`StoreError::NotDurable`]) a store that does not fsync every one.
fn check_durability(location: &str, durability: &Durability, strict: bool) -> Result<()> {
    if strict && !durability.fsync_every_write {
        return Err(StoreError::NotDurable(format!(
            "{location} does not fsync every acknowledged write ({}: {})",
            durability.persistence, durability.meaning
        )));
    }
    if durability.fsync_every_write {
        tracing::info!(%location, persistence = %durability.persistence, meaning = %durability.meaning, "durability");
    } else {
        tracing::warn!(%location, persistence = %durability.persistence, meaning = %durability.meaning, "durability: acknowledged writes are not all fsynced");
    }
    Ok(())
}

/// Figures about an open database.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Stats {
    /// Where the data is.
    pub location: String,
    /// Documents in the store.
    pub documents: u64,
    /// Where checks find their candidates: `local` (an index in this process's memory) or
    /// `store` (the index the store holds; this process holds none).
    pub index_in: IndexIn,
    /// Documents the index answers for: those in this process's in-memory index, or with the
    /// index in the store, every stored document (the store's count).
    pub indexed: u64,
    /// Heap bytes of this process's in-memory index (Hamming tables and digest keys; with the
    /// index in the store, which holds it instead, an empty index's few KB).
    pub index_bytes: u64,
    /// The plan of the block keys the store holds (the index the store holds, written by every
    /// insert whichever `index_in` answers), as recorded in the store; `None` for a store that
    /// holds none (process memory, a redb database never opened with the index in the store).
    pub store_index: Option<String>,
    /// The most this process may hold for the database's data (`--memory`), if bounded.
    pub memory_budget_bytes: Option<u64>,
    /// The profile's name.
    pub profile: String,
    /// The largest SimHash distance of a candidate.
    pub k: u32,
    /// SimHash width.
    pub bits: u32,
    /// The decision, in words.
    pub policy: String,
    /// Shingles of stored documents held in memory for verification (about 9 bytes each).
    pub cached_shingles: u64,
    /// What an acknowledged write survives (read when the database was opened).
    pub durability: Durability,
    /// The store's key-eviction policy when it may evict documents (allowed by
    /// [`OpenOptions::allow_eviction`]), else `None`.
    pub eviction: Option<String>,
    /// A danger to know about (see [`NearDupDb::warning`]), else `None`.
    pub warning: Option<String>,
}

/// A validated, fingerprinted document.
#[derive(Debug)]
struct Prepared {
    id: String,
    fingerprints: Fingerprints,
    /// (SimHash bits, digest key).
    query: (u128, u128),
    /// The text as the record stores it, compressed before the writer lock is taken (only for
    /// an insert under a verifying policy).
    stored_text: Option<StoredText>,
}

/// What the locked step judged, and the insert it made (its slot; durable when resolved).
#[derive(Debug)]
struct Step {
    judged: Judged,
    inserted: Option<(u64, Durable)>,
}

/// Records read while verifying, by slot (reused for the matches they become).
type RecordsBySlot = HashMap<u64, Record>;

/// A verdict and the matches behind it.
#[derive(Debug)]
struct Judged {
    verdict: Verdict,
    matches: Vec<DocMatch>,
    /// The judged document's own verification data, when candidates needed it: held for the
    /// checks to come if the document is inserted.
    own: Option<Verifiable>,
}

/// The in-memory half: the index and how far into the store's log it reflects.
#[derive(Debug)]
struct State {
    index: MemIndex,
    cursor: Cursor,
}

/// A near-duplicate database: store + profile + in-memory index.
///
/// Checks read the in-memory index (after catching up with other writers, for shared stores);
/// check-and-insert is atomic: one writer at a time in this process, and across processes the
/// store refuses an insert made from a stale position (see [`Store::insert`]), so two writers
/// racing on near-identical documents cannot both insert as unique.
pub struct NearDupDb {
    store: Gated,
    /// The block keys of the store-held index, when the store holds one (every insert writes
    /// them, whichever index this process reads).
    plan: Option<Plan>,
    index_in: IndexIn,
    fingerprinter: Fingerprinter,
    meta: Meta,
    durability: Durability,
    state: RwLock<State>,
    writer: Mutex<()>,
    generated: AtomicU64,
    /// Shingle sets of stored documents, for verification (see [`crate::set_cache`]).
    sets: SetCache,
    /// The budget it was opened with ([`OpenOptions::memory`]).
    memory: Option<u64>,
}

impl std::fmt::Debug for NearDupDb {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("NearDupDb")
            .field("location", &self.store.location())
            .field("policy", &self.meta.policy.describe())
            .finish()
    }
}

impl NearDupDb {
    /// Opens a database over `store`: reads what the store promises an acknowledged write
    /// (logged; refused under [`OpenOptions::strict_durability`] unless every write is
    /// fsynced), creates its metadata if new (unless [`OpenOptions::must_exist`]: then
    /// [`StoreError::NoDatabase`], nothing written), checks an explicit policy against the stored one
    /// otherwise, and loads every live row into the in-memory index. A store that may evict
    /// documents is refused ([`StoreError::Eviction`]) unless [`OpenOptions::allow_eviction`].
    pub fn open(store: Box<dyn Store>, options: OpenOptions) -> Result<NearDupDb> {
        let store = Gated::new(store, options.allow_eviction);
        store.check_eviction()?;
        let location = store.location();
        let stored = store.meta()?;
        if stored.is_none() && options.must_exist {
            return Err(StoreError::NoDatabase(location));
        }
        let durability = store.durability()?;
        check_durability(&location, &durability, options.strict_durability)?;
        let meta = match stored {
            Some(meta) => meta,
            None => {
                let policy = options.policy.clone().unwrap_or_default();
                check_online(&policy)?;
                store.init_meta(&Meta::new(policy))?
            }
        };
        store.meta_stored();
        meta.check(&location, options.policy.as_ref())?;
        check_online(&meta.policy)?;
        let fingerprinter = Fingerprinter::new(meta.policy.profile.clone())?;
        let plan = open_plan(&store, &meta, options.index_in)?;
        // What the store's own cache leaves of the budget.
        let memory = options
            .memory
            .map(|memory| memory.saturating_sub(store.cache_bytes()));
        let (index, cursor) = match options.index_in {
            IndexIn::Local => load_index(&store, &meta, memory)?,
            IndexIn::Store if plan.is_some() => (
                MemIndex::build(&[], meta.policy.profile.bits, meta.policy.k)?,
                Cursor::default(),
            ),
            IndexIn::Store => {
                return Err(StoreError::IndexPlacement(format!(
                    "{location} holds no index: --index-in store needs a redb or Redis database"
                )))
            }
        };
        let sets = match memory {
            Some(memory) => {
                SetCache::with_bytes(memory.saturating_sub(index.memory_bytes() as u64))
            }
            None => SetCache::default(),
        };
        Ok(NearDupDb {
            store,
            plan,
            index_in: options.index_in,
            fingerprinter,
            meta,
            durability,
            state: RwLock::new(State { index, cursor }),
            writer: Mutex::new(()),
            generated: AtomicU64::new(0),
            sets,
            memory: options.memory,
        })
    }

    /// Upgrades the database behind `store` to the current format in place, keeping the
    /// decision it made; returns the metadata it now has. A database already current is left
    /// as it is.
    pub fn migrate(store: &dyn Store) -> Result<Meta> {
        let location = store.location();
        let meta = store
            .meta()?
            .ok_or_else(|| StoreError::NoDatabase(location.clone()))?;
        if meta.version == crate::meta::FORMAT_VERSION {
            return Ok(meta);
        }
        let migrated = meta.migrated();
        migrated.check(&location, None)?;
        store.replace_meta(&migrated)?;
        tracing::info!(%location, from = meta.version, "database migrated");
        Ok(migrated)
    }

    /// The policy this database decides by (recorded at its creation).
    pub fn policy(&self) -> &Policy {
        &self.meta.policy
    }

    /// The fingerprints of `text` under the database's profile.
    pub fn fingerprint(&self, text: &str) -> Fingerprints {
        self.fingerprinter.fingerprint(text)
    }

    /// Checks `doc` without inserting it.
    pub fn check(&self, doc: &NewDocument) -> Result<CheckOutcome> {
        self.check_and_insert(doc, InsertMode::Never)
    }

    /// Inserts `doc` whatever its verdict; fails if its id is stored already.
    pub fn insert(&self, doc: &NewDocument) -> Result<CheckOutcome> {
        self.check_and_insert(doc, InsertMode::Always)
    }

    /// Checks `doc` and, atomically, inserts it as `mode` says. Returns once the insert is
    /// durable. Fails with [`StoreError::IdExists`] if it is to be inserted under an id stored
    /// already.
    pub fn check_and_insert(&self, doc: &NewDocument, mode: InsertMode) -> Result<CheckOutcome> {
        let prepared = self.prepare(doc, mode)?;
        if mode == InsertMode::Never {
            let judged = self.check_only(doc, &prepared)?;
            return self.finish(
                prepared,
                Step {
                    judged,
                    inserted: None,
                },
            );
        }
        let step = {
            let _guard = self.writer.lock().unwrap_or_else(|e| e.into_inner());
            self.locked_check_insert(doc, &prepared, mode)?
        };
        self.finish(prepared, step)
    }

    /// Checks and inserts many documents, in order, as if one after the other (each sees the
    /// ones before it), fingerprinting them in parallel and waiting for durability once at the
    /// end, so their writes share group commits. One result per document.
    pub fn check_and_insert_many(
        &self,
        docs: &[NewDocument],
        mode: InsertMode,
    ) -> Vec<Result<CheckOutcome>> {
        use rayon::prelude::*;
        let prepared: Vec<Result<Prepared>> =
            docs.par_iter().map(|d| self.prepare(d, mode)).collect();
        let steps: Vec<Result<(Prepared, Step)>> = {
            let _guard = self.writer.lock().unwrap_or_else(|e| e.into_inner());
            docs.iter()
                .zip(prepared)
                .map(|(doc, prepared)| {
                    let prepared = prepared?;
                    let step = if mode == InsertMode::Never {
                        Step {
                            judged: self.check_only(doc, &prepared)?,
                            inserted: None,
                        }
                    } else {
                        self.locked_check_insert(doc, &prepared, mode)?
                    };
                    Ok((prepared, step))
                })
                .collect()
        };
        steps
            .into_iter()
            .map(|step| step.and_then(|(prepared, step)| self.finish(prepared, step)))
            .collect()
    }

    /// Fingerprints and validates a document, and compresses its text if `mode` may store it.
    fn prepare(&self, doc: &NewDocument, mode: InsertMode) -> Result<Prepared> {
        if doc.text.trim().is_empty() {
            return Err(StoreError::InvalidDocument("the text is empty".into()));
        }
        if doc.id.as_deref().is_some_and(str::is_empty) {
            return Err(StoreError::InvalidDocument("the id is empty".into()));
        }
        let fingerprints = self.fingerprint(&doc.text);
        let query = (fingerprints.simhash.as_u128(), digest_key(&fingerprints));
        let id = doc.id.clone().unwrap_or_else(|| self.generate_id());
        let stores_text = mode != InsertMode::Never && self.meta.policy.verifies();
        Ok(Prepared {
            id,
            fingerprints,
            query,
            stored_text: stores_text
                .then(|| StoredText::compress(&doc.text))
                .transpose()?,
        })
    }

    /// Judges a document against the database without inserting it.
    fn check_only(&self, doc: &NewDocument, prepared: &Prepared) -> Result<Judged> {
        let found = match (&self.plan, self.index_in) {
            (Some(plan), IndexIn::Store) => self.held_query(plan, prepared.query)?,
            _ => {
                self.catch_up()?;
                self.read()
                    .index
                    .query(prepared.query.0, prepared.query.1)?
            }
        };
        self.judge(&found, prepared.query, &doc.text)
    }

    /// The candidates of `query` in the store-held index.
    fn held_query(&self, plan: &Plan, query: (u128, u128)) -> Result<Found> {
        plan.query(&self.store, query.0, query.1, self.meta.policy.k)
    }

    /// Check and insert, with the writer lock held: retried while another process wrote
    /// since this one caught up. Block entries written for an insert that was not made are
    /// removed again (left behind, they would only be skipped: they name no stored slot).
    fn locked_check_insert(
        &self,
        doc: &NewDocument,
        prepared: &Prepared,
        mode: InsertMode,
    ) -> Result<Step> {
        let mut reserved = None;
        let step = self.check_insert_attempts(doc, prepared, mode, &mut reserved);
        let made = match &step {
            Ok(step) => step.inserted.is_some(),
            Err(error) => error.may_be_stored(),
        };
        if let (Some(slot), Some(plan), false) = (reserved, &self.plan, made) {
            let simhash = prepared.query.0;
            if let Err(error) = self
                .store
                .remove_blocks(&plan.homes(slot, simhash), &plan.entry(slot, simhash))
            {
                tracing::warn!(%error, slot, "block entries of an insert not made are left");
            }
        }
        step
    }

    /// The candidates and the store's position they reflect: the in-memory index caught up,
    /// or the store-held index read after the position.
    fn candidates(&self, query: (u128, u128)) -> Result<(Found, Cursor)> {
        match (&self.plan, self.index_in) {
            (Some(plan), IndexIn::Store) => {
                let seen = self.store.position()?;
                Ok((self.held_query(plan, query)?, seen))
            }
            _ => {
                self.catch_up()?;
                let state = self.read();
                Ok((state.index.query(query.0, query.1)?, state.cursor))
            }
        }
    }

    /// The attempts of [`NearDupDb::locked_check_insert`]; `reserved` is the slot whose block
    /// entries it wrote.
    fn check_insert_attempts(
        &self,
        doc: &NewDocument,
        prepared: &Prepared,
        mode: InsertMode,
        reserved: &mut Option<u64>,
    ) -> Result<Step> {
        let query = prepared.query;
        let held = self.index_in == IndexIn::Store;
        let (mut found, mut seen) = self.candidates(query)?;
        for _ in 0..MAX_CONFLICTS {
            let judged = self.judge(&found, query, &doc.text)?;
            if !mode.inserts(&judged.verdict) {
                return Ok(Step {
                    judged,
                    inserted: None,
                });
            }
            let mut record = self.record(doc, prepared);
            let inserted = match (&self.plan, *reserved) {
                (Some(_), Some(slot)) => {
                    record.slot = slot;
                    self.store.insert(record, seen)?
                }
                (Some(plan), None) => {
                    let slot = self.store.reserve_slot()?;
                    *reserved = Some(slot);
                    record.slot = slot;
                    let blocks = (plan.homes(slot, query.0), plan.entry(slot, query.0));
                    self.store.insert_with_blocks(record, seen, &blocks)?
                }
                (None, _) => self.store.insert(record, seen)?,
            };
            match inserted {
                Insert::Conflict if held => {
                    (found, seen) = self.changed_since(found, seen, query, *reserved)?;
                }
                Insert::Conflict => (found, seen) = self.candidates(query)?,
                Insert::IdExists => return Err(StoreError::IdExists(prepared.id.clone())),
                Insert::Accepted {
                    slot,
                    cursor,
                    durable,
                } => {
                    let mut judged = judged;
                    if let Some(own) = judged.own.take() {
                        self.sets.insert(slot, Arc::new(own));
                    }
                    if !held {
                        let mut state = self.write();
                        state.index.insert(Entry {
                            slot,
                            simhash: query.0,
                            digest: query.1,
                        })?;
                        state.cursor = state.cursor.max(cursor);
                    }
                    return Ok(Step {
                        judged,
                        inserted: Some((slot, durable)),
                    });
                }
            }
        }
        Err(StoreError::Busy(format!(
            "{MAX_CONFLICTS} inserts in a row were overtaken by other writers"
        )))
    }

    /// The store-held candidates `found` (at position `seen`) with the changes other writers
    /// made since, and the position reached; read again from the keys if the store went back
    /// in time.
    fn changed_since(
        &self,
        mut found: Found,
        seen: Cursor,
        query: (u128, u128),
        own: Option<u64>,
    ) -> Result<(Found, Cursor)> {
        let mut changes = Vec::new();
        match self
            .store
            .changes(seen, &mut |_, change| changes.push(change))
        {
            Ok(at) => {
                Plan::merge(&mut found, changes, query, self.meta.policy.k, own);
                Ok((found, at))
            }
            Err(StoreError::Reset(_)) => self.candidates(query),
            Err(error) => Err(error),
        }
    }

    /// Waits for durability (outside the lock) and gives the outcome; after every
    /// [`SWEEP_EVERY`]-th slot, sweeps ([`NearDupDb::sweep`]: a failure is only logged).
    fn finish(&self, prepared: Prepared, step: Step) -> Result<CheckOutcome> {
        let inserted = step.inserted.is_some();
        if let Some((slot, durable)) = step.inserted {
            // A commit that timed out may still be made durable, and a write no replica
            // acknowledged is on the master: the document stays indexed (if it is not stored,
            // its slot is skipped as deleted). One that failed is not stored.
            self.store.watch(durable.wait()).inspect_err(|error| {
                if !error.may_be_stored() {
                    self.write().index.remove(slot);
                }
            })?;
            if slot.is_multiple_of(SWEEP_EVERY) {
                if let Err(error) = self.sweep() {
                    tracing::warn!(%error, "the remains of inserts never stored were not swept");
                }
            }
        }
        Ok(CheckOutcome {
            id: prepared.id,
            verdict: step.judged.verdict,
            inserted,
            matches: step.judged.matches,
        })
    }

    /// The record of document `id` (without its stored text).
    pub fn get(&self, id: &str) -> Result<Option<Record>> {
        Ok(self.store.get(id)?.map(|record| Record {
            text: None,
            ..record
        }))
    }

    /// Removes what inserts never stored left behind, their writer taken for dead (Redis: a slot
    /// still free [`OpenOptions::sweep_after`] after it was reserved, or fenced by a claim taken
    /// over): bodies, rows and claims ([`Store::sweep`]), then block entries. Runs a pass if one
    /// is due; writers call it after every [`SWEEP_EVERY`]-th slot. Returns the inserts whose
    /// remains were removed.
    pub fn sweep(&self) -> Result<usize> {
        let swept = self.store.sweep()?;
        if let Some(plan) = &self.plan {
            for entry in &swept {
                self.store.remove_blocks(
                    &plan.homes(entry.slot, entry.simhash),
                    &plan.entry(entry.slot, entry.simhash),
                )?;
            }
        }
        Ok(swept.len())
    }

    /// Deletes document `id` durably; returns its record if it was stored.
    pub fn delete(&self, id: &str) -> Result<Option<Record>> {
        let _guard = self.writer.lock().unwrap_or_else(|e| e.into_inner());
        let deleted = match &self.plan {
            Some(plan) => self.store.delete_with_blocks(id, &|record| {
                let simhash = record.simhash.as_u128();
                (
                    plan.homes(record.slot, simhash),
                    plan.entry(record.slot, simhash),
                )
            })?,
            None => self.store.delete(id)?,
        };
        if let Some(record) = &deleted {
            self.write().index.remove(record.slot);
        }
        Ok(deleted)
    }

    /// Figures about the database, after catching up with other writers (so `indexed` counts
    /// what the store holds, unless a writer is inserting meanwhile).
    pub fn stats(&self) -> Result<Stats> {
        if self.index_in == IndexIn::Local {
            self.catch_up()?;
        }
        let documents = self.store.len()?;
        let state = self.read();
        Ok(Stats {
            location: self.store.location(),
            documents,
            index_in: self.index_in,
            indexed: match self.index_in {
                IndexIn::Local => state.index.len() as u64,
                IndexIn::Store => documents,
            },
            index_bytes: state.index.memory_bytes() as u64,
            store_index: self.plan.as_ref().map(Plan::describe),
            memory_budget_bytes: self.memory,
            profile: self.meta.policy.profile.name.clone(),
            k: self.meta.policy.k,
            bits: self.meta.policy.profile.bits.count(),
            policy: self.meta.policy.describe(),
            cached_shingles: self.sets.shingles() as u64,
            durability: self.durability.clone(),
            eviction: self.eviction(),
            warning: self.warning(),
        })
    }

    /// The store's key-eviction policy when it may evict documents (allowed by
    /// [`OpenOptions::allow_eviction`]; as last read), else `None`.
    pub fn eviction(&self) -> Option<String> {
        self.store.allowed_eviction()
    }

    /// A danger the operator must know about, in words: the store may evict acknowledged
    /// documents (see [`NearDupDb::eviction`]).
    pub fn warning(&self) -> Option<String> {
        self.eviction()
            .map(|policy| crate::eviction::warning(&policy))
    }

    /// Ok if the store can serve now. After a store call failed as unavailable (a timeout, a
    /// lost connection, a full disk), every call fails at once with
    /// [`StoreError::Unavailable`] until a probe (one a [`crate::PROBE_INTERVAL`] at most, made
    /// by the next call or by this one) shows the store is back; while it is up, this asks
    /// the store for its document count.
    pub fn health(&self) -> Result<()> {
        self.store.health()
    }

    /// What an acknowledged write survives (read when the database was opened).
    pub fn durability(&self) -> &Durability {
        &self.durability
    }

    /// Documents the index answers for: those in this process's in-memory index (cheap: no
    /// store access), or with the index in the store, the store's count (one call; 0 if it
    /// fails).
    pub fn indexed(&self) -> usize {
        match self.index_in {
            IndexIn::Local => self.read().index.len(),
            IndexIn::Store => self
                .store
                .len()
                .map_or(0, |n| usize::try_from(n).unwrap_or(usize::MAX)),
        }
    }

    fn read(&self) -> RwLockReadGuard<'_, State> {
        self.state.read().unwrap_or_else(|e| e.into_inner())
    }

    fn write(&self) -> RwLockWriteGuard<'_, State> {
        self.state.write().unwrap_or_else(|e| e.into_inner())
    }

    /// Applies other writers' changes (a no-op for a store with one writer); reloads the index
    /// when the store went back in time.
    fn catch_up(&self) -> Result<()> {
        let after = self.read().cursor;
        let mut changes = Vec::new();
        match self
            .store
            .changes(after, &mut |at, change| changes.push((at, change)))
        {
            Err(StoreError::Reset(why)) => return self.reload(&why),
            other => other?,
        };
        if changes.is_empty() {
            return self.store.reader_at(after);
        }
        let mut state = self.write();
        for (at, change) in changes {
            if at <= state.cursor {
                continue;
            }
            match change {
                crate::store::Change::Insert(entry) => state.index.insert(entry)?,
                crate::store::Change::Delete(slot) => state.index.remove(slot),
            }
            state.cursor = at;
        }
        let reached = state.cursor;
        drop(state);
        self.store.reader_at(reached)
    }

    /// Rebuilds the in-memory index from what the store holds now, after its log no longer
    /// reaches this process's position: trimmed past it (the process was away longer than the
    /// log's window), or the store lost changes (what it still has is the truth from here on:
    /// documents it lost are gone, as the store's durability promised). Metadata lost with the
    /// rest is written again.
    fn reload(&self, why: &str) -> Result<()> {
        tracing::warn!(location = %self.store.location(), why, "the log does not reach this process's position: reloading the index");
        if !self.store.has_meta()? {
            // Lost with the rest (a restart without persistence), unless Redis evicts keys:
            // then it was evicted, and that is reported, not covered up.
            self.store.watch(self.store.check_eviction())?;
            self.store.init_meta(&self.meta)?;
        }
        let mut entries = Vec::new();
        let cursor = self.store.load(&mut |entry| entries.push(entry))?;
        let index = MemIndex::build(&entries, self.meta.policy.profile.bits, self.meta.policy.k)?;
        *self.write() = State { index, cursor };
        self.sets.clear();
        Ok(())
    }

    fn generate_id(&self) -> String {
        let millis = now_millis();
        let n = self.generated.fetch_add(1, Ordering::Relaxed);
        format!("{millis:x}-{:x}-{n:x}", std::process::id())
    }

    /// The record stored for `doc`.
    fn record(&self, doc: &NewDocument, prepared: &Prepared) -> Record {
        let fingerprints = &prepared.fingerprints;
        Record {
            id: prepared.id.clone(),
            url: doc.url.clone(),
            title: doc.title.clone(),
            fetched_at: doc.fetched_at.clone(),
            simhash: fingerprints.simhash,
            digest: fingerprints.digest.to_string(),
            minhash: fingerprints.minhash.clone(),
            inserted_at: now_millis(),
            slot: 0,
            text: prepared.stored_text.clone(),
        }
    }

    /// The verification data of the documents in `slots` (in order; `None` for a document
    /// without a stored text or deleted), from the cache or rebuilt from the stored texts; and
    /// the records read to rebuild them, by slot.
    fn verifiables(&self, slots: &[u64]) -> Result<(Vec<Option<Arc<Verifiable>>>, RecordsBySlot)> {
        let mut sets = self.sets.get_many(slots);
        let missing: Vec<u64> = slots
            .iter()
            .zip(&sets)
            .filter(|(_, held)| held.is_none())
            .map(|(&slot, _)| slot)
            .collect();
        let mut records = HashMap::new();
        if missing.is_empty() {
            return Ok((sets, records));
        }
        let fetched = self.store.get_slots(&missing)?;
        for (&slot, record) in missing.iter().zip(fetched) {
            let Some(record) = record else {
                continue; // deleted meanwhile
            };
            if let Some(stored) = &record.text {
                let entry = Arc::new(Verifiable::new(
                    self.fingerprinter.feature_set(&stored.text()?),
                ));
                self.sets.insert(slot, Arc::clone(&entry));
                if let Some(at) = slots.iter().position(|&s| s == slot) {
                    sets[at] = Some(entry);
                }
            }
            records.insert(slot, record);
        }
        Ok((sets, records))
    }

    /// The verdict on a document whose query found `found`, by the database's policy: an
    /// exact duplicate (the first stored with the same digest), else the nearest candidate the
    /// policy accepts (smallest distance, then first stored), verified on its stored text when
    /// the policy verifies; with the matches (at most [`MAX_MATCHES`]).
    fn judge(&self, found: &Found, query: (u128, u128), text: &str) -> Result<Judged> {
        let policy = &self.meta.policy;
        let distance_to = |record: &Record| (record.simhash.as_u128() ^ query.0).count_ones();
        let mut matches = Vec::new();
        let mut exact_slots = found.exact.clone();
        exact_slots.sort_unstable();
        exact_slots.truncate(MAX_MATCHES);
        for record in self.store.get_slots(&exact_slots)?.into_iter().flatten() {
            matches.push(doc_match(
                distance_to(&record),
                record,
                Kind::Exact,
                Evidence::EXACT,
            ));
        }
        let mut near: Vec<(u32, u64)> = found
            .near
            .iter()
            .filter(|m| !found.exact.contains(&m.id))
            .map(|m| (m.distance, m.id))
            .collect();
        near.sort_unstable();
        near.truncate(MAX_FETCH);
        // The query's set and bucket counts, built only if some candidate needs them.
        let mut query: Option<Verifiable> = None;
        if policy.method != Method::Exact {
            for chunk in near.chunks(VERIFY_CHUNK) {
                if matches.len() >= MAX_MATCHES {
                    break;
                }
                let slots: Vec<u64> = chunk.iter().map(|&(_, slot)| slot).collect();
                if !policy.verifies() {
                    for record in self.store.get_slots(&slots)?.into_iter().flatten() {
                        let distance = distance_to(&record);
                        let evidence = Evidence {
                            measure: neardup_dedup::Measure::SimhashDistance,
                            value: f64::from(distance),
                            threshold: f64::from(policy.k),
                        };
                        matches.push(doc_match(distance, record, Kind::Near, evidence));
                    }
                    continue;
                }
                let (sets, mut records) = self.verifiables(&slots)?;
                let query = query
                    .get_or_insert_with(|| Verifiable::new(self.fingerprinter.feature_set(text)));
                for (&(distance, slot), candidate) in chunk.iter().zip(sets) {
                    let Some(candidate) = candidate else {
                        continue; // stored without its text, or deleted: cannot be verified
                    };
                    let bounds = Some((&query.counts, &candidate.counts));
                    let Some(evidence) = policy.verify(&query.set, &candidate.set, bounds) else {
                        continue;
                    };
                    let record = match records.remove(&slot) {
                        Some(record) => Some(record),
                        None => self.store.get_slots(&[slot])?.pop().flatten(),
                    };
                    if let Some(record) = record {
                        matches.push(doc_match(distance, record, Kind::Near, evidence));
                    }
                }
            }
        }
        matches.truncate(MAX_MATCHES);
        let verdict = match matches.first() {
            None => Verdict::Unique,
            Some(m) => Verdict::Duplicate(DuplicateOf {
                duplicate_of: m.id.clone(),
                kind: m.kind,
                distance: m.distance,
                evidence: m.evidence,
            }),
        };
        Ok(Judged {
            verdict,
            matches,
            own: query,
        })
    }
}

/// The in-memory index of every live document the store holds, and the position it reflects;
/// refused if it takes more than `memory` bytes.
fn load_index(store: &Gated, meta: &Meta, memory: Option<u64>) -> Result<(MemIndex, Cursor)> {
    let location = store.location();
    if let Some(memory) = memory {
        let documents = store.len()?;
        let least = documents.saturating_mul(LEAST_INDEX_BYTES);
        if least > memory {
            return Err(over_budget(documents, least, memory));
        }
    }
    let started = std::time::Instant::now();
    let mut entries = Vec::new();
    let cursor = store.load(&mut |entry| entries.push(entry))?;
    let loaded = started.elapsed();
    let index = MemIndex::build(&entries, meta.policy.profile.bits, meta.policy.k)?;
    drop(entries);
    tracing::info!(
        %location,
        documents = index.len(),
        ?loaded,
        built = ?(started.elapsed() - loaded),
        "database open"
    );
    let bytes = index.memory_bytes() as u64;
    if let Some(memory) = memory.filter(|&memory| bytes > memory) {
        return Err(over_budget(index.len() as u64, bytes, memory));
    }
    Ok((index, cursor))
}

/// The least a local index holds a document while it is built: the loaded row (48 bytes) and
/// its digest key (16); the index built takes more (about 90 bytes a document, ARCHITECTURE.md).
const LEAST_INDEX_BYTES: u64 = 64;

/// The refusal of a local index of `documents` taking `bytes` over the budget `memory`.
fn over_budget(documents: u64, bytes: u64, memory: u64) -> StoreError {
    StoreError::IndexPlacement(format!(
        "the index of {documents} documents takes at least {} MiB in this process, over the \
         {} MiB the memory budget leaves it (less the store's own page cache, if any): give \
         more (--memory), or check against the index the store holds (--index-in store)",
        bytes >> 20,
        memory >> 20
    ))
}

/// The plan of the block keys the store holds and every insert writes: none for a store that
/// holds none; for one that builds them when asked (redb), the one recorded, or a new one built
/// now if this process reads the index in the store; else the recorded one, or a new one built.
fn open_plan(store: &Gated, meta: &Meta, index_in: IndexIn) -> Result<Option<Plan>> {
    let (bits, k) = (meta.policy.profile.bits, meta.policy.k);
    if !store.holds_blocks() {
        return Ok(None);
    }
    if store.blocks_when_asked() && index_in == IndexIn::Local {
        return crate::held::recorded(store, bits, k);
    }
    crate::held::open(store, bits, k).map(Some)
}

/// A match from a stored record.
fn doc_match(distance: u32, record: Record, kind: Kind, evidence: Evidence) -> DocMatch {
    DocMatch {
        id: record.id,
        url: record.url,
        title: record.title,
        distance,
        kind,
        evidence,
    }
}

/// Fails for a policy the online database cannot serve: its candidates come from the SimHash
/// index, so MinHash LSH and the overlap search are batch-only.
fn check_online(policy: &Policy) -> Result<()> {
    policy
        .validate()
        .map_err(|e| StoreError::InvalidPolicy(e.to_string()))?;
    match policy.method {
        Method::Exact | Method::Simhash | Method::Cascade => Ok(()),
        Method::Minhash | Method::Overlap => Err(StoreError::InvalidPolicy(format!(
            "a database finds candidates by SimHash distance: the {:?} method is for `neardup dedup` only",
            policy.method
        ).to_lowercase())),
    }
}

fn now_millis() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_millis() as u64)
}
