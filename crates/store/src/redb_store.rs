//! [`RedbStore`]: the embedded default. A directory holding one redb file; nothing to install.
//!
//! Tables: `meta` (the [`Meta`] as JSON), `docs` (id → record JSON), `slots` (slot → id) and
//! `rows` (slot → (simhash, digest key)): the fixed-size rows read sequentially at open.
//!
//! Group commit: inserts and deletes are queued to one committer thread, which takes every job
//! waiting in the queue (up to [`MAX_BATCH`]), writes them in one write transaction and commits it
//! durably (redb's default `Durability::Immediate`: fsync before `commit` returns); only then is
//! each caller told its write is durable. While one commit is syncing, the next batch gathers, so
//! concurrent inserts share fsyncs. Until its commit, an insert is visible to reads through the
//! `pending` map.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::mpsc::{channel, Receiver, Sender};
use std::sync::{Arc, Mutex, MutexGuard};
use std::thread::JoinHandle;

use redb::{Database, ReadableTable, ReadableTableMetadata, TableDefinition};

use crate::error::{Result, StoreError};
use crate::meta::Meta;
use crate::record::{Entry, Record};
use crate::store::{Change, Cursor, Durable, Insert, Store};

/// The most jobs one group commit takes.
pub const MAX_BATCH: usize = 4096;
/// The database file inside the directory.
const FILE_NAME: &str = "neardup.redb";

const META: TableDefinition<&str, &str> = TableDefinition::new("meta");
const DOCS: TableDefinition<&str, &[u8]> = TableDefinition::new("docs");
const SLOTS: TableDefinition<u64, &str> = TableDefinition::new("slots");
const ROWS: TableDefinition<u64, (u128, u128)> = TableDefinition::new("rows");
const META_KEY: &str = "meta";

/// Writes not yet committed, readable meanwhile.
#[derive(Debug, Default)]
struct Pending {
    by_id: HashMap<String, Record>,
    by_slot: HashMap<u64, String>,
}

/// One queued write.
enum Job {
    Insert(Box<Record>, Sender<Result<()>>),
    Delete(String, Sender<Result<Option<Record>>>),
}

/// The embedded store: one redb file in a directory.
pub struct RedbStore {
    dir: PathBuf,
    db: Arc<Database>,
    next_slot: AtomicU64,
    pending: Arc<Mutex<Pending>>,
    queue: Option<Sender<Job>>,
    committer: Option<JoinHandle<()>>,
}

impl std::fmt::Debug for RedbStore {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RedbStore").field("dir", &self.dir).finish()
    }
}

impl RedbStore {
    /// Opens the store in directory `dir`, creating the directory and the file if needed. Fails
    /// if another process has it open.
    pub fn open(dir: &Path) -> Result<RedbStore> {
        std::fs::create_dir_all(dir)?;
        let db = Database::create(dir.join(FILE_NAME))
            .map_err(|error| StoreError::Redb(format!("cannot open {}: {error}", dir.display())))?;
        let txn = db.begin_write()?;
        txn.open_table(META)?;
        txn.open_table(DOCS)?;
        txn.open_table(SLOTS)?;
        let next_slot = {
            let rows = txn.open_table(ROWS)?;
            let last = rows.last()?.map(|(slot, _)| slot.value());
            last.map_or(0, |slot| slot + 1)
        };
        txn.commit()?;
        let db = Arc::new(db);
        let pending = Arc::new(Mutex::new(Pending::default()));
        let (queue, jobs) = channel();
        let committer = {
            let (db, pending) = (Arc::clone(&db), Arc::clone(&pending));
            std::thread::Builder::new()
                .name("neardup-commit".into())
                .spawn(move || run_committer(&db, &pending, &jobs))?
        };
        Ok(RedbStore {
            dir: dir.to_path_buf(),
            db,
            next_slot: AtomicU64::new(next_slot),
            pending,
            queue: Some(queue),
            committer: Some(committer),
        })
    }

    fn pending(&self) -> MutexGuard<'_, Pending> {
        self.pending.lock().unwrap_or_else(|e| e.into_inner())
    }

    fn send(&self, job: Job) -> Result<()> {
        self.queue
            .as_ref()
            .ok_or(StoreError::CommitterGone)?
            .send(job)
            .map_err(|_| StoreError::CommitterGone)
    }

    fn stored_record(&self, id: &str) -> Result<Option<Record>> {
        let txn = self.db.begin_read()?;
        let docs = txn.open_table(DOCS)?;
        let found = docs.get(id)?;
        found
            .map(|bytes| Ok(serde_json::from_slice(bytes.value())?))
            .transpose()
    }
}

impl Drop for RedbStore {
    fn drop(&mut self) {
        self.queue.take();
        if let Some(handle) = self.committer.take() {
            let _ = handle.join();
        }
    }
}

/// The committer thread: group commits until the queue closes.
fn run_committer(db: &Database, pending: &Mutex<Pending>, jobs: &Receiver<Job>) {
    while let Ok(first) = jobs.recv() {
        let mut batch = vec![first];
        while batch.len() < MAX_BATCH {
            match jobs.try_recv() {
                Ok(job) => batch.push(job),
                Err(_) => break,
            }
        }
        let outcome = commit(db, &batch);
        {
            let mut pending = pending.lock().unwrap_or_else(|e| e.into_inner());
            for job in &batch {
                if let Job::Insert(record, _) = job {
                    pending.by_id.remove(&record.id);
                    pending.by_slot.remove(&record.slot);
                }
            }
        }
        match outcome {
            Ok(deleted) => {
                let mut deleted = deleted.into_iter();
                for job in batch {
                    match job {
                        Job::Insert(_, reply) => drop(reply.send(Ok(()))),
                        Job::Delete(_, reply) => drop(reply.send(Ok(deleted.next().flatten()))),
                    }
                }
            }
            Err(error) => {
                tracing::error!("group commit failed: {error}");
                let message = error.to_string();
                for job in batch {
                    let error = StoreError::Redb(message.clone());
                    match job {
                        Job::Insert(_, reply) => drop(reply.send(Err(error))),
                        Job::Delete(_, reply) => drop(reply.send(Err(error))),
                    }
                }
            }
        }
    }
}

/// Writes a batch in one durable transaction; returns what each delete removed, in order.
fn commit(db: &Database, batch: &[Job]) -> Result<Vec<Option<Record>>> {
    let txn = db.begin_write()?;
    let mut deleted = Vec::new();
    {
        let mut docs = txn.open_table(DOCS)?;
        let mut slots = txn.open_table(SLOTS)?;
        let mut rows = txn.open_table(ROWS)?;
        for job in batch {
            match job {
                Job::Insert(record, _) => {
                    let entry = record.entry();
                    docs.insert(record.id.as_str(), serde_json::to_vec(record)?.as_slice())?;
                    slots.insert(entry.slot, record.id.as_str())?;
                    rows.insert(entry.slot, (entry.simhash, entry.digest))?;
                }
                Job::Delete(id, _) => {
                    let removed = docs.remove(id.as_str())?;
                    let record: Option<Record> = removed
                        .map(|bytes| serde_json::from_slice(bytes.value()))
                        .transpose()?;
                    if let Some(record) = &record {
                        slots.remove(record.slot)?;
                        rows.remove(record.slot)?;
                    }
                    deleted.push(record);
                }
            }
        }
    }
    txn.commit()?;
    Ok(deleted)
}

impl Store for RedbStore {
    fn location(&self) -> String {
        self.dir.display().to_string()
    }

    fn init_meta(&self, meta: &Meta) -> Result<Meta> {
        if let Some(stored) = self.meta()? {
            return Ok(stored);
        }
        let txn = self.db.begin_write()?;
        txn.open_table(META)?
            .insert(META_KEY, serde_json::to_string(meta)?.as_str())?;
        txn.commit()?;
        Ok(meta.clone())
    }

    fn meta(&self) -> Result<Option<Meta>> {
        let txn = self.db.begin_read()?;
        let table = txn.open_table(META)?;
        let found = table.get(META_KEY)?;
        found
            .map(|json| Ok(serde_json::from_str(json.value())?))
            .transpose()
    }

    fn load(&self, sink: &mut dyn FnMut(Entry)) -> Result<Cursor> {
        let txn = self.db.begin_read()?;
        let rows = txn.open_table(ROWS)?;
        for row in rows.iter()? {
            let (slot, value) = row?;
            let (simhash, digest) = value.value();
            sink(Entry {
                slot: slot.value(),
                simhash,
                digest,
            });
        }
        Ok(Cursor::default())
    }

    fn changes(&self, after: Cursor, _sink: &mut dyn FnMut(Cursor, Change)) -> Result<Cursor> {
        // The redb file is locked by this process: nobody else writes.
        Ok(after)
    }

    fn insert(&self, mut record: Record, _seen: Cursor) -> Result<Insert> {
        if self.pending().by_id.contains_key(&record.id)
            || self.stored_record(&record.id)?.is_some()
        {
            return Ok(Insert::IdExists);
        }
        record.slot = self.next_slot.fetch_add(1, Ordering::Relaxed);
        let slot = record.slot;
        {
            let mut pending = self.pending();
            pending.by_slot.insert(slot, record.id.clone());
            pending.by_id.insert(record.id.clone(), record.clone());
        }
        let (reply, durable) = channel();
        self.send(Job::Insert(Box::new(record), reply))?;
        Ok(Insert::Accepted {
            slot,
            cursor: Cursor::default(),
            durable: Durable::pending(durable),
        })
    }

    fn delete(&self, id: &str) -> Result<Option<Record>> {
        let (reply, deleted) = channel();
        self.send(Job::Delete(id.to_string(), reply))?;
        deleted.recv().map_err(|_| StoreError::CommitterGone)?
    }

    fn get(&self, id: &str) -> Result<Option<Record>> {
        if let Some(record) = self.pending().by_id.get(id) {
            return Ok(Some(record.clone()));
        }
        self.stored_record(id)
    }

    fn get_slots(&self, slots: &[u64]) -> Result<Vec<Option<Record>>> {
        let txn = self.db.begin_read()?;
        let (ids, docs) = (txn.open_table(SLOTS)?, txn.open_table(DOCS)?);
        let pending = self.pending();
        slots
            .iter()
            .map(|&slot| {
                if let Some(record) = pending
                    .by_slot
                    .get(&slot)
                    .and_then(|id| pending.by_id.get(id))
                {
                    return Ok(Some(record.clone()));
                }
                let Some(id) = ids.get(slot)? else {
                    return Ok(None);
                };
                let found = docs.get(id.value())?;
                found
                    .map(|bytes| Ok(serde_json::from_slice(bytes.value())?))
                    .transpose()
            })
            .collect()
    }

    fn len(&self) -> Result<u64> {
        let txn = self.db.begin_read()?;
        let stored = txn.open_table(DOCS)?.len()?;
        Ok(stored + self.pending().by_id.len() as u64)
    }
}
