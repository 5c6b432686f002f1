//! [`NearDupDb`]: a store, its profile and the in-memory index; check, insert, get, delete.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Mutex, RwLock, RwLockReadGuard, RwLockWriteGuard};
use std::time::{SystemTime, UNIX_EPOCH};

use neardup_core::{Fingerprinter, Fingerprints, Profile};
use serde::Serialize;

use crate::error::{Result, StoreError};
use crate::memory::{Found, MemIndex};
use crate::meta::Meta;
use crate::record::{digest_key, digest_key_hex, Entry, Record};
use crate::store::{Cursor, Durable, Insert, Store};
use crate::verdict::{DocMatch, InsertMode, Outcome, Verdict};

/// Most matches an [`Outcome`] lists.
pub const MAX_MATCHES: usize = 10;
/// Most matching records read to sort matches by id (the nearest by distance, then slot).
const MAX_FETCH: usize = 1000;
/// The default near-duplicate distance.
pub const DEFAULT_K: u32 = 3;

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

/// How to open a database: the profile and distance for a new one, checked against an old one.
#[derive(Debug, Clone, Default)]
pub struct OpenOptions {
    /// The profile; `None` uses the stored one (or `web` for a new database).
    pub profile: Option<Profile>,
    /// The distance `k`; `None` uses the stored one (or [`DEFAULT_K`]).
    pub k: Option<u32>,
}

/// Figures about an open database.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Stats {
    /// Where the data is.
    pub location: String,
    /// Documents in the store.
    pub documents: u64,
    /// Documents in this process's in-memory index.
    pub indexed: u64,
    /// Heap bytes of the in-memory index (Hamming tables and digest keys).
    pub index_bytes: u64,
    /// The profile's name.
    pub profile: String,
    /// The near-duplicate distance.
    pub k: u32,
    /// SimHash width.
    pub bits: u32,
}

/// A validated, fingerprinted document.
#[derive(Debug)]
struct Prepared {
    id: String,
    fingerprints: Fingerprints,
    /// (SimHash bits, digest key).
    query: (u128, u128),
}

/// What the locked step found, and the insert it made (its slot; durable when resolved).
#[derive(Debug)]
struct Step {
    found: Found,
    inserted: Option<(u64, Durable)>,
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
    store: Box<dyn Store>,
    fingerprinter: Fingerprinter,
    meta: Meta,
    state: RwLock<State>,
    writer: Mutex<()>,
    generated: AtomicU64,
}

impl std::fmt::Debug for NearDupDb {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("NearDupDb")
            .field("location", &self.store.location())
            .field("profile", &self.meta.profile.name)
            .field("k", &self.meta.k)
            .finish()
    }
}

impl NearDupDb {
    /// Opens a database over `store`: creates its metadata if new, checks the profile and `k`
    /// otherwise, and loads every live row into the in-memory index.
    pub fn open(store: Box<dyn Store>, options: OpenOptions) -> Result<NearDupDb> {
        let location = store.location();
        let meta = match store.meta()? {
            Some(meta) => meta,
            None => store.init_meta(&Meta::new(
                options.profile.clone().unwrap_or_else(Profile::web),
                options.k.unwrap_or(DEFAULT_K),
            ))?,
        };
        meta.check(&location, options.profile.as_ref(), options.k)?;
        let fingerprinter = Fingerprinter::new(meta.profile.clone())?;
        let started = std::time::Instant::now();
        let mut entries = Vec::new();
        let cursor = store.load(&mut |entry| entries.push(entry))?;
        let loaded = started.elapsed();
        let index = MemIndex::build(&entries, meta.profile.bits, meta.k)?;
        drop(entries);
        tracing::info!(
            %location,
            documents = index.len(),
            ?loaded,
            built = ?(started.elapsed() - loaded),
            "database open"
        );
        Ok(NearDupDb {
            store,
            fingerprinter,
            meta,
            state: RwLock::new(State { index, cursor }),
            writer: Mutex::new(()),
            generated: AtomicU64::new(0),
        })
    }

    /// The profile every fingerprint in this database is made with.
    pub fn profile(&self) -> &Profile {
        &self.meta.profile
    }

    /// The near-duplicate distance.
    pub fn k(&self) -> u32 {
        self.meta.k
    }

    /// The fingerprints of `text` under the database's profile.
    pub fn fingerprint(&self, text: &str) -> Fingerprints {
        self.fingerprinter.fingerprint(text)
    }

    /// Checks `doc` without inserting it.
    pub fn check(&self, doc: &NewDocument) -> Result<Outcome> {
        self.check_and_insert(doc, InsertMode::Never)
    }

    /// Inserts `doc` whatever its verdict; fails if its id is stored already.
    pub fn insert(&self, doc: &NewDocument) -> Result<Outcome> {
        self.check_and_insert(doc, InsertMode::Always)
    }

    /// Checks `doc` and, atomically, inserts it as `mode` says. Returns once the insert is
    /// durable. Fails with [`StoreError::IdExists`] if it is to be inserted under an id stored
    /// already.
    pub fn check_and_insert(&self, doc: &NewDocument, mode: InsertMode) -> Result<Outcome> {
        let prepared = self.prepare(doc)?;
        if mode == InsertMode::Never {
            self.catch_up()?;
            let found = self
                .read()
                .index
                .query(prepared.query.0, prepared.query.1)?;
            return self.outcome(prepared, found, false);
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
    ) -> Vec<Result<Outcome>> {
        use rayon::prelude::*;
        let prepared: Vec<Result<Prepared>> = docs.par_iter().map(|d| self.prepare(d)).collect();
        let steps: Vec<Result<(Prepared, Step)>> = {
            let _guard = self.writer.lock().unwrap_or_else(|e| e.into_inner());
            docs.iter()
                .zip(prepared)
                .map(|(doc, prepared)| {
                    let prepared = prepared?;
                    let step = if mode == InsertMode::Never {
                        self.catch_up()?;
                        let found = self
                            .read()
                            .index
                            .query(prepared.query.0, prepared.query.1)?;
                        Step {
                            found,
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

    /// Fingerprints and validates a document.
    fn prepare(&self, doc: &NewDocument) -> Result<Prepared> {
        if doc.text.trim().is_empty() {
            return Err(StoreError::InvalidDocument("the text is empty".into()));
        }
        if doc.id.as_deref().is_some_and(str::is_empty) {
            return Err(StoreError::InvalidDocument("the id is empty".into()));
        }
        let fingerprints = self.fingerprint(&doc.text);
        let query = (fingerprints.simhash.as_u128(), digest_key(&fingerprints));
        let id = doc.id.clone().unwrap_or_else(|| self.generate_id());
        Ok(Prepared {
            id,
            fingerprints,
            query,
        })
    }

    /// Check and insert, with the writer lock held: retried while another process wrote
    /// since this one caught up.
    fn locked_check_insert(
        &self,
        doc: &NewDocument,
        prepared: &Prepared,
        mode: InsertMode,
    ) -> Result<Step> {
        let query = prepared.query;
        loop {
            self.catch_up()?;
            let (found, cursor) = {
                let state = self.read();
                (state.index.query(query.0, query.1)?, state.cursor)
            };
            let verdict = self.verdict_of(&found, query)?;
            if !mode.inserts(&verdict) {
                return Ok(Step {
                    found,
                    inserted: None,
                });
            }
            let record = self.record(doc, &prepared.id, &prepared.fingerprints);
            match self.store.insert(record, cursor)? {
                Insert::Conflict => continue,
                Insert::IdExists => return Err(StoreError::IdExists(prepared.id.clone())),
                Insert::Accepted {
                    slot,
                    cursor,
                    durable,
                } => {
                    let mut state = self.write();
                    state.index.insert(Entry {
                        slot,
                        simhash: query.0,
                        digest: query.1,
                    })?;
                    state.cursor = state.cursor.max(cursor);
                    return Ok(Step {
                        found,
                        inserted: Some((slot, durable)),
                    });
                }
            }
        }
    }

    /// Waits for durability (outside the lock) and reads the matches.
    fn finish(&self, prepared: Prepared, step: Step) -> Result<Outcome> {
        let inserted = step.inserted.is_some();
        if let Some((slot, durable)) = step.inserted {
            durable
                .wait()
                .inspect_err(|_| self.write().index.remove(slot))?;
        }
        self.outcome(prepared, step.found, inserted)
    }

    /// The record of document `id`.
    pub fn get(&self, id: &str) -> Result<Option<Record>> {
        self.store.get(id)
    }

    /// Deletes document `id` durably; returns its record if it was stored.
    pub fn delete(&self, id: &str) -> Result<Option<Record>> {
        let _guard = self.writer.lock().unwrap_or_else(|e| e.into_inner());
        let deleted = self.store.delete(id)?;
        if let Some(record) = &deleted {
            self.write().index.remove(record.slot);
        }
        Ok(deleted)
    }

    /// Figures about the database.
    pub fn stats(&self) -> Result<Stats> {
        let documents = self.store.len()?;
        let state = self.read();
        Ok(Stats {
            location: self.store.location(),
            documents,
            indexed: state.index.len() as u64,
            index_bytes: state.index.memory_bytes() as u64,
            profile: self.meta.profile.name.clone(),
            k: self.meta.k,
            bits: self.meta.profile.bits.count(),
        })
    }

    /// Documents in this process's in-memory index (cheap: no store access).
    pub fn indexed(&self) -> usize {
        self.read().index.len()
    }

    fn read(&self) -> RwLockReadGuard<'_, State> {
        self.state.read().unwrap_or_else(|e| e.into_inner())
    }

    fn write(&self) -> RwLockWriteGuard<'_, State> {
        self.state.write().unwrap_or_else(|e| e.into_inner())
    }

    /// Applies other writers' changes (a no-op for a store with one writer).
    fn catch_up(&self) -> Result<()> {
        let after = self.read().cursor;
        let mut changes = Vec::new();
        self.store
            .changes(after, &mut |at, change| changes.push((at, change)))?;
        if changes.is_empty() {
            return Ok(());
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
        Ok(())
    }

    fn generate_id(&self) -> String {
        let millis = now_millis();
        let n = self.generated.fetch_add(1, Ordering::Relaxed);
        format!("{millis:x}-{:x}-{n:x}", std::process::id())
    }

    fn record(&self, doc: &NewDocument, id: &str, fingerprints: &Fingerprints) -> Record {
        Record {
            id: id.to_string(),
            url: doc.url.clone(),
            title: doc.title.clone(),
            fetched_at: doc.fetched_at.clone(),
            simhash: fingerprints.simhash,
            digest: fingerprints.digest.to_string(),
            minhash: fingerprints.minhash.clone(),
            inserted_at: now_millis(),
            slot: 0,
        }
    }

    /// The verdict alone (matches' records are read only for exact duplicates' ids).
    fn verdict_of(&self, found: &Found, query: (u128, u128)) -> Result<Verdict> {
        if found.near.is_empty() && found.exact.is_empty() {
            return Ok(Verdict::Unique);
        }
        Ok(self.matches(found, query)?.0)
    }

    fn outcome(&self, prepared: Prepared, found: Found, inserted: bool) -> Result<Outcome> {
        let (verdict, matches) = self.matches(&found, prepared.query)?;
        Ok(Outcome {
            id: prepared.id,
            verdict,
            inserted,
            matches,
        })
    }

    /// Reads the matching records and orders them: by distance, then id.
    fn matches(&self, found: &Found, query: (u128, u128)) -> Result<(Verdict, Vec<DocMatch>)> {
        let mut slots: Vec<u64> = found.near.iter().map(|m| m.id).collect();
        for &slot in &found.exact {
            if !slots.contains(&slot) {
                slots.push(slot);
            }
        }
        slots.truncate(MAX_FETCH);
        let bits = f64::from(self.meta.profile.bits.count());
        let mut records: Vec<(u32, Record)> = self
            .store
            .get_slots(&slots)?
            .into_iter()
            .flatten()
            .map(|record| {
                let distance = (record.simhash.as_u128() ^ query.0).count_ones();
                (distance, record)
            })
            .collect();
        records.sort_by(|a, b| (a.0, &a.1.id).cmp(&(b.0, &b.1.id)));
        let exact = records
            .iter()
            .find(|(_, r)| digest_key_hex(&r.digest) == query.1);
        let verdict = match (exact, records.first()) {
            (Some((_, record)), _) => Verdict::Duplicate {
                of: record.id.clone(),
            },
            (None, Some((distance, record))) => Verdict::NearDuplicate {
                of: record.id.clone(),
                distance: *distance,
                similarity: 1.0 - f64::from(*distance) / bits,
            },
            (None, None) => Verdict::Unique,
        };
        let matches = records
            .into_iter()
            .take(MAX_MATCHES)
            .map(|(distance, record)| DocMatch {
                id: record.id,
                url: record.url,
                title: record.title,
                distance,
                similarity: 1.0 - f64::from(distance) / bits,
            })
            .collect();
        Ok((verdict, matches))
    }
}

fn now_millis() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_millis() as u64)
}
