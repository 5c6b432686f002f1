//! [`RedbStore`]: the embedded default. A directory holding one redb file; nothing to install.
//!
//! Tables: `meta` (the [`Meta`] as JSON), `docs` (id → record JSON), `slots` (slot → id) and
//! `row_chunks` (chunk number → [`CHUNK_ROWS`] fixed-size rows): the compact rows the in-memory
//! index is rebuilt from; and `blocks` ((table, block key) → a run of the fixed-size entries of
//! the `held` module): the index the store holds ([`crate::IndexIn::Store`]), built when a
//! process first opens the database so (its plan then recorded in `meta`) and written by every
//! insert from then on, in the insert's own commit. Row `slot` is at `slot % CHUNK_ROWS` in chunk `slot / CHUNK_ROWS`: a
//! state byte (1 live, 0 absent or deleted), then the SimHash bits and the digest key, each 16
//! bytes big-endian. A chunk grows as inserts are committed and a delete clears the state byte,
//! so opening reads about 33 bytes per document in large values, not a B-tree row each.
//!
//! Group commit: inserts and deletes are queued to one committer thread, which takes every job
//! waiting in the queue (up to [`MAX_BATCH`]), writes them in one write transaction and commits it
//! durably (redb's default `Durability::Immediate`: fsync before `commit` returns); only then is
//! each caller told its write is durable. While one commit is syncing, the next batch gathers, so
//! concurrent inserts share fsyncs. Until its commit, an insert is visible to reads through the
//! `pending` map. A caller waits for its commit at most the store timeout.
//!
//! Page cache: redb's own, sized by [`crate::OpenOptions::store_cache_bytes`] (a share of the
//! process's `--memory`), redb's default of 1 GiB without a budget.
//!
//! I/O errors (a full disk): after one, redb answers every call with "Previous I/O error
//! occurred. Please close and re-open the database." until the database is reopened. Every
//! access goes through [`Handle::with`], which marks the database broken on such an error and
//! reopens it (under its write lock, so no transaction is open) before the next access; until
//! a reopen and a probe commit succeed, callers get [`StoreError::Unavailable`] (a 503).

use std::collections::{BTreeMap, HashMap, HashSet};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::mpsc::{channel, Receiver, Sender};
use std::sync::{Arc, Mutex, MutexGuard, RwLock};
use std::thread::JoinHandle;
use std::time::Duration;

use redb::{Database, ReadableTable, ReadableTableMetadata, TableDefinition, TableHandle};

use crate::durability::Durability;
use crate::error::{Cause, Result, StoreError};
use crate::meta::{Meta, FORMAT_VERSION};
use crate::record::{Entry, Record};
use crate::store::{reply_within, BlockWrite, Change, Cursor, Durable, Insert, Store};

/// The most jobs one group commit takes.
pub const MAX_BATCH: usize = 4096;
/// The database file inside the directory.
const FILE_NAME: &str = "neardup.redb";

const META: TableDefinition<&str, &str> = TableDefinition::new("meta");
const DOCS: TableDefinition<&str, &[u8]> = TableDefinition::new("docs");
const SLOTS: TableDefinition<u64, &str> = TableDefinition::new("slots");
const ROW_CHUNKS: TableDefinition<u64, &[u8]> = TableDefinition::new("row_chunks");
/// (table, block key) → the entries appended under it.
const BLOCKS: TableDefinition<(u32, u64), &[u8]> = TableDefinition::new("blocks");
/// The key of the block plan in the `meta` table.
const BLOCKS_KEY: &str = "blocks";
/// The format before row chunks: its presence means a database this program cannot read.
const OLD_ROWS: &str = "rows";
/// Rows per chunk.
pub const CHUNK_ROWS: u64 = 1024;
/// Bytes per row: state, SimHash bits, digest key.
const ROW_BYTES: usize = 33;
const META_KEY: &str = "meta";
/// The key a probe commit writes in the `meta` table (the time of the probe).
const PROBE_KEY: &str = "probe";

/// Writes not yet committed, readable meanwhile.
#[derive(Debug, Default)]
struct Pending {
    by_id: HashMap<String, Record>,
    by_slot: HashMap<u64, String>,
    /// The block entries of the pending inserts, by key.
    blocks: HashMap<(u32, u64), Vec<u8>>,
}

/// One queued write.
enum Job {
    /// A record and its block entries, if the store holds them.
    Insert(Box<Record>, Option<BlockWrite>, Sender<Result<()>>),
    /// Block entries to add (`true`) or remove.
    Blocks(Vec<BlockWrite>, bool, Sender<Result<()>>),
    /// A document to delete, with its block entries if the store holds them.
    Delete(String, Option<BlockWrite>, Sender<Result<Option<Record>>>),
    /// A small write that shows commits work (see [`Store::probe`]).
    Probe(Sender<Result<()>>),
}

/// The open database, reopened after an I/O error.
struct Handle {
    path: PathBuf,
    /// redb's page cache, in bytes (`None`: redb's default).
    cache: Option<u64>,
    /// `None` after a failed reopen.
    db: RwLock<Option<Database>>,
    /// An I/O error was seen: reopen before the next access.
    broken: AtomicBool,
}

impl Handle {
    /// Opens the database file at `path`, creating it if it does not exist, and checks its
    /// integrity (see [`open_file`]).
    fn open(path: PathBuf, cache: Option<u64>) -> Result<Handle> {
        let db = open_file(&path, cache).map_err(|error| match error {
            StoreError::Unavailable {
                source: Some(source),
                ..
            } => StoreError::Redb {
                detail: source.to_string(),
                source,
            },
            other => other,
        });
        let db = db.map_err(|error| error.naming(&path, "cannot open"))?;
        Ok(Handle {
            path,
            cache,
            db: RwLock::new(Some(db)),
            broken: AtomicBool::new(false),
        })
    }

    /// Runs `f` on the database, reopening it first if an I/O error broke it; an I/O error of
    /// `f` marks it broken.
    fn with<T>(&self, f: impl FnOnce(&Database) -> Result<T>) -> Result<T> {
        if self.broken.load(Ordering::Acquire) {
            self.reopen()?;
        }
        let db = self.db.read().unwrap_or_else(|e| e.into_inner());
        let db = db.as_ref().ok_or_else(|| {
            StoreError::unavailable(format!("{} could not be reopened", self.path.display()))
        })?;
        let result = neardup_guard::catch(|| f(db)).unwrap_or_else(|panic| {
            Err(StoreError::CorruptFile {
                path: self.path.clone(),
                detail: format!("redb failed reading it: {panic}"),
            })
        });
        if let Err(StoreError::Unavailable { .. }) = &result {
            self.broken.store(true, Ordering::Release);
        }
        result.map_err(|error| error.naming(&self.path, "reading"))
    }

    /// Closes and reopens the database (redb's only way out of a "previous I/O error"); waits
    /// for every transaction in progress, which holds the read lock.
    fn reopen(&self) -> Result<()> {
        let mut db = self.db.write().unwrap_or_else(|e| e.into_inner());
        if !self.broken.load(Ordering::Acquire) {
            return Ok(()); // reopened meanwhile
        }
        *db = None; // closes the file: redb refuses a second handle on it
        let reopened = open_file(&self.path, self.cache).map_err(|error| match error {
            StoreError::Unavailable { reason, source } => StoreError::Unavailable {
                reason: format!("cannot reopen {}: {reason}", self.path.display()),
                source,
            },
            StoreError::Redb { detail, source } => StoreError::Unavailable {
                reason: format!("cannot reopen {}: {detail}", self.path.display()),
                source: Some(source),
            },
            other => other,
        })?;
        *db = Some(reopened);
        self.broken.store(false, Ordering::Release);
        tracing::info!(path = %self.path.display(), "database reopened after an I/O error");
        Ok(())
    }
}

/// Opens (or creates, if it does not exist) the database file at `path` and checks its
/// integrity: every page's checksum (redb's `check_integrity`; a file that fails is rolled back
/// to its last intact commit if redb can, which is logged, and refused if it cannot). A panic of
/// redb on a damaged file, and an empty file (which redb would take for a new database), are
/// [`StoreError::CorruptFile`]. redb's page cache holds at most `cache` bytes (`None`: its
/// default).
fn open_file(path: &Path, cache: Option<u64>) -> Result<Database> {
    let corrupt = |detail: String| StoreError::CorruptFile {
        path: path.to_path_buf(),
        detail,
    };
    if std::fs::metadata(path).is_ok_and(|m| m.is_file() && m.len() == 0) {
        return Err(corrupt(
            "the file is empty (0 bytes), not a database: restore it, or delete it to start a \
             new database"
                .into(),
        ));
    }
    let opened = neardup_guard::catch(|| -> Result<Database> {
        let mut builder = Database::builder();
        if let Some(bytes) = cache {
            builder.set_cache_size(usize::try_from(bytes).unwrap_or(usize::MAX));
        }
        let checked = builder
            .create(path)
            .and_then(|mut db| Ok((db.check_integrity()?, db)));
        let (intact, db) = checked.map_err(|error| match error {
            redb::DatabaseError::Storage(redb::StorageError::Corrupted(detail)) => corrupt(detail),
            other => other.into(),
        })?;
        if !intact {
            tracing::warn!(
                path = %path.display(),
                "the database file failed its integrity check and was repaired (rolled back to \
                 its last intact commit)"
            );
        }
        Ok(db)
    });
    opened.unwrap_or_else(|panic| Err(corrupt(format!("redb failed opening it: {panic}"))))
}

/// The embedded store: one redb file in a directory.
pub struct RedbStore {
    dir: PathBuf,
    handle: Arc<Handle>,
    /// The longest wait for a commit.
    timeout: Duration,
    next_slot: AtomicU64,
    /// Slots given by [`Store::reserve_slot`] and not inserted yet.
    reserved: Mutex<HashSet<u64>>,
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
    /// Opens the store in directory `dir`, creating the directory and the file if needed; a
    /// caller waits at most `timeout` for its commit. Fails if another process has it open.
    /// redb's page cache is its default (1 GiB): see [`RedbStore::open_within`].
    pub fn open(dir: &Path, timeout: Duration) -> Result<RedbStore> {
        RedbStore::open_within(dir, timeout, None)
    }

    /// [`RedbStore::open`] with redb's page cache holding at most `cache` bytes (`None`: its
    /// default), the store's share of a budget ([`crate::OpenOptions::store_cache_bytes`]).
    pub fn open_within(dir: &Path, timeout: Duration, cache: Option<u64>) -> Result<RedbStore> {
        std::fs::create_dir_all(dir)?;
        let handle = Arc::new(Handle::open(dir.join(FILE_NAME), cache)?);
        let next_slot = handle.with(|db| {
            check_format(db)?;
            let txn = db.begin_write()?;
            txn.open_table(META)?;
            txn.open_table(DOCS)?;
            txn.open_table(SLOTS)?;
            txn.open_table(BLOCKS)?;
            let next_slot = {
                let chunks = txn.open_table(ROW_CHUNKS)?;
                let last = chunks.last()?;
                last.map_or(0, |(chunk, rows)| {
                    chunk.value() * CHUNK_ROWS + (rows.value().len() / ROW_BYTES) as u64
                })
            };
            txn.commit()?;
            Ok(next_slot)
        })?;
        let pending = Arc::new(Mutex::new(Pending::default()));
        let (queue, jobs) = channel();
        let committer = {
            let (handle, pending) = (Arc::clone(&handle), Arc::clone(&pending));
            std::thread::Builder::new()
                .name("neardup-commit".into())
                .spawn(move || run_committer(&handle, &pending, &jobs))?
        };
        Ok(RedbStore {
            dir: dir.to_path_buf(),
            handle,
            timeout,
            next_slot: AtomicU64::new(next_slot),
            reserved: Mutex::new(HashSet::new()),
            pending,
            queue: Some(queue),
            committer: Some(committer),
        })
    }

    /// Whether directory `dir` holds a database file (opening it creates one if not).
    pub fn holds_database(dir: &Path) -> bool {
        dir.join(FILE_NAME).is_file()
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
        self.handle.with(|db| {
            let txn = db.begin_read()?;
            let docs = txn.open_table(DOCS)?;
            let found = docs.get(id)?;
            found
                .map(|bytes| Ok(serde_json::from_slice(bytes.value())?))
                .transpose()
        })
    }

    /// Queues the insert of `record` (in the slot [`Store::reserve_slot`] gave it, or a new
    /// one) with its block entries, readable until its commit through `pending`.
    fn queue_insert(&self, mut record: Record, blocks: Option<BlockWrite>) -> Result<Insert> {
        if self.pending().by_id.contains_key(&record.id)
            || self.stored_record(&record.id)?.is_some()
        {
            return Ok(Insert::IdExists);
        }
        let reserved = self
            .reserved
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .remove(&record.slot);
        if !reserved {
            record.slot = self.next_slot.fetch_add(1, Ordering::Relaxed);
        }
        let slot = record.slot;
        {
            let mut pending = self.pending();
            pending.by_slot.insert(slot, record.id.clone());
            pending.by_id.insert(record.id.clone(), record.clone());
            if let Some((keys, entry)) = &blocks {
                for key in keys {
                    pending
                        .blocks
                        .entry(*key)
                        .or_default()
                        .extend_from_slice(entry);
                }
            }
        }
        let (reply, durable) = channel();
        self.send(Job::Insert(Box::new(record), blocks, reply))?;
        Ok(Insert::Accepted {
            slot,
            cursor: Cursor::default(),
            durable: Durable::pending(durable, self.timeout),
        })
    }

    /// Queues `job` and waits at most the timeout for the reply `job_of` hands it.
    fn submit<T>(&self, job_of: impl FnOnce(Sender<Result<T>>) -> Job, what: &str) -> Result<T> {
        let (reply, replied) = channel();
        self.send(job_of(reply))?;
        reply_within(&replied, self.timeout, what)?
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

/// Fails with a clear message if `db` was written in another format: a stored format version
/// other than [`FORMAT_VERSION`], or the per-row table of the first format.
fn check_format(db: &Database) -> Result<()> {
    let txn = db.begin_read()?;
    let old = txn.list_tables()?.any(|table| table.name() == OLD_ROWS);
    let version = match txn.open_table(META) {
        Ok(table) => {
            let found = table.get(META_KEY)?;
            found
                .map(|json| serde_json::from_str::<Meta>(json.value()).map(|m| m.version))
                .transpose()?
        }
        Err(redb::TableError::TableDoesNotExist(_)) => None,
        Err(error) => return Err(error.into()),
    };
    // Format 2 opens, to be migrated in place (see `Meta::check`).
    if old || version.is_some_and(|v| v != FORMAT_VERSION && v != 2) {
        return Err(StoreError::Corrupt(format!(
            "format version {} (this program reads {FORMAT_VERSION}); no migration: write the \
             documents into a new database",
            version.filter(|_| !old).unwrap_or(1)
        )));
    }
    Ok(())
}

/// Puts `row` (`None`: absent) at `slot` in its chunk, read from `chunks` at first use and kept in
/// `touched` until written back.
fn set_row(
    chunks: &redb::Table<u64, &[u8]>,
    touched: &mut BTreeMap<u64, Vec<u8>>,
    slot: u64,
    row: Option<(u128, u128)>,
) -> Result<()> {
    let chunk = slot / CHUNK_ROWS;
    let bytes = match touched.entry(chunk) {
        std::collections::btree_map::Entry::Occupied(found) => found.into_mut(),
        std::collections::btree_map::Entry::Vacant(vacant) => {
            let stored = chunks.get(chunk)?.map(|v| v.value().to_vec());
            vacant.insert(stored.unwrap_or_default())
        }
    };
    let at = (slot % CHUNK_ROWS) as usize * ROW_BYTES;
    if bytes.len() < at + ROW_BYTES {
        if row.is_none() {
            return Ok(());
        }
        bytes.resize(at + ROW_BYTES, 0);
    }
    let out = &mut bytes[at..at + ROW_BYTES];
    match row {
        Some((simhash, digest)) => {
            out[0] = 1;
            out[1..17].copy_from_slice(&simhash.to_be_bytes());
            out[17..].copy_from_slice(&digest.to_be_bytes());
        }
        None => out.fill(0),
    }
    Ok(())
}

/// Writes back the chunks [`set_row`] changed (none is empty unless it was not stored: skipped).
fn write_chunks(
    chunks: &mut redb::Table<u64, &[u8]>,
    touched: BTreeMap<u64, Vec<u8>>,
) -> Result<()> {
    for (chunk, bytes) in touched {
        if !bytes.is_empty() {
            chunks.insert(chunk, bytes.as_slice())?;
        }
    }
    Ok(())
}

/// Appends `entry` to the list of each of `keys` in `table` (`add`), or removes its first
/// occurrence from each (a list left empty is removed).
fn write_blocks(
    table: &mut redb::Table<(u32, u64), &[u8]>,
    keys: &[(u32, u64)],
    entry: &[u8],
    add: bool,
) -> Result<()> {
    for &key in keys {
        let stored = table.get(key)?.map(|list| list.value().to_vec());
        let mut list = stored.unwrap_or_default();
        if add {
            list.extend_from_slice(entry);
        } else if !remove_entry(&mut list, entry) {
            continue;
        }
        if list.is_empty() {
            table.remove(key)?;
        } else {
            table.insert(key, list.as_slice())?;
        }
    }
    Ok(())
}

/// Removes the first occurrence of `entry` from `list`, a run of entries of its length;
/// returns whether there was one.
fn remove_entry(list: &mut Vec<u8>, entry: &[u8]) -> bool {
    let len = entry.len().max(1);
    match list.chunks_exact(len).position(|chunk| chunk == entry) {
        Some(at) => {
            list.drain(at * len..(at + 1) * len);
            true
        }
        None => false,
    }
}

/// Forgets the pending block entries of an insert committed or failed.
fn unpend_blocks(pending: &mut HashMap<(u32, u64), Vec<u8>>, keys: &[(u32, u64)], entry: &[u8]) {
    for key in keys {
        if let Some(list) = pending.get_mut(key) {
            remove_entry(list, entry);
            if list.is_empty() {
                pending.remove(key);
            }
        }
    }
}

/// The committer thread: group commits until the queue closes.
fn run_committer(handle: &Handle, pending: &Mutex<Pending>, jobs: &Receiver<Job>) {
    while let Ok(first) = jobs.recv() {
        let mut batch = vec![first];
        while batch.len() < MAX_BATCH {
            match jobs.try_recv() {
                Ok(job) => batch.push(job),
                Err(_) => break,
            }
        }
        let outcome = handle.with(|db| commit(db, &batch));
        {
            let mut pending = pending.lock().unwrap_or_else(|e| e.into_inner());
            for job in &batch {
                if let Job::Insert(record, blocks, _) = job {
                    pending.by_id.remove(&record.id);
                    pending.by_slot.remove(&record.slot);
                    if let Some((keys, entry)) = blocks {
                        unpend_blocks(&mut pending.blocks, keys, entry);
                    }
                }
            }
        }
        match outcome {
            Ok(deleted) => {
                let mut deleted = deleted.into_iter();
                for job in batch {
                    match job {
                        Job::Insert(_, _, reply) | Job::Blocks(_, _, reply) | Job::Probe(reply) => {
                            drop(reply.send(Ok(())))
                        }
                        Job::Delete(_, _, reply) => drop(reply.send(Ok(deleted.next().flatten()))),
                    }
                }
            }
            Err(error) => {
                tracing::error!("group commit failed: {error}");
                // Every write of the batch failed with it: each caller gets a copy whose
                // source is the one failure.
                let unavailable = matches!(error, StoreError::Unavailable { .. });
                let detail = error.detail();
                let source: Cause = Arc::new(error);
                for job in batch {
                    let error = if unavailable {
                        StoreError::Unavailable {
                            reason: detail.clone(),
                            source: Some(source.clone()),
                        }
                    } else {
                        StoreError::Redb {
                            detail: detail.clone(),
                            source: source.clone(),
                        }
                    };
                    match job {
                        Job::Insert(_, _, reply) | Job::Blocks(_, _, reply) | Job::Probe(reply) => {
                            drop(reply.send(Err(error)))
                        }
                        Job::Delete(_, _, reply) => drop(reply.send(Err(error))),
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
        let mut chunks = txn.open_table(ROW_CHUNKS)?;
        let mut blocks = txn.open_table(BLOCKS)?;
        let mut touched = BTreeMap::new();
        for job in batch {
            match job {
                Job::Probe(_) => {
                    let now = std::time::SystemTime::now()
                        .duration_since(std::time::UNIX_EPOCH)
                        .map_or(0, |d| d.as_millis());
                    txn.open_table(META)?
                        .insert(PROBE_KEY, now.to_string().as_str())?;
                }
                Job::Blocks(writes, add, _) => {
                    for (keys, entry) in writes {
                        write_blocks(&mut blocks, keys, entry, *add)?;
                    }
                }
                Job::Insert(record, own, _) => {
                    if let Some((keys, entry)) = own {
                        write_blocks(&mut blocks, keys, entry, true)?;
                    }
                    let entry = record.entry();
                    docs.insert(record.id.as_str(), serde_json::to_vec(record)?.as_slice())?;
                    slots.insert(entry.slot, record.id.as_str())?;
                    set_row(
                        &chunks,
                        &mut touched,
                        entry.slot,
                        Some((entry.simhash, entry.digest)),
                    )?;
                }
                Job::Delete(id, own, _) => {
                    let removed = docs.remove(id.as_str())?;
                    let record: Option<Record> = removed
                        .map(|bytes| serde_json::from_slice(bytes.value()))
                        .transpose()?;
                    if let Some(record) = &record {
                        slots.remove(record.slot)?;
                        set_row(&chunks, &mut touched, record.slot, None)?;
                        if let Some((keys, entry)) = own {
                            write_blocks(&mut blocks, keys, entry, false)?;
                        }
                    }
                    deleted.push(record);
                }
            }
        }
        write_chunks(&mut chunks, touched)?;
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
        self.replace_meta(meta)?;
        Ok(meta.clone())
    }

    fn replace_meta(&self, meta: &Meta) -> Result<()> {
        self.handle.with(|db| {
            let txn = db.begin_write()?;
            txn.open_table(META)?
                .insert(META_KEY, serde_json::to_string(meta)?.as_str())?;
            txn.commit()?;
            Ok(())
        })
    }

    fn meta(&self) -> Result<Option<Meta>> {
        self.handle.with(|db| {
            let txn = db.begin_read()?;
            let table = txn.open_table(META)?;
            let found = table.get(META_KEY)?;
            found
                .map(|json| Ok(serde_json::from_str(json.value())?))
                .transpose()
        })
    }

    /// A chunk of rows at a time, each read in a transaction of its own and handed on after it
    /// ends: a sink that writes (the block keys built at open, a commit every thousand
    /// documents) is never under a read transaction that would keep every page those commits
    /// free from being used again (redb keeps them for its readers: a file 15 GB large after
    /// building the keys of a million documents under one).
    fn load(&self, sink: &mut dyn FnMut(Entry)) -> Result<Cursor> {
        let mut from = 0;
        while let Some((chunk, rows)) = self.handle.with(|db| {
            let txn = db.begin_read()?;
            let chunks = txn.open_table(ROW_CHUNKS)?;
            let mut after = chunks.range(from..)?;
            after
                .next()
                .transpose()?
                .map(|(chunk, rows)| Ok((chunk.value(), rows.value().to_vec())))
                .transpose()
        })? {
            let first = chunk * CHUNK_ROWS;
            for (slot, row) in (first..).zip(rows.chunks_exact(ROW_BYTES)) {
                if row[0] != 1 {
                    continue;
                }
                let word =
                    |at: usize| u128::from_be_bytes(row[at..at + 16].try_into().expect("16 bytes"));
                sink(Entry {
                    slot,
                    simhash: word(1),
                    digest: word(17),
                });
            }
            from = chunk + 1;
        }
        Ok(Cursor::default())
    }

    fn changes(&self, after: Cursor, _sink: &mut dyn FnMut(Cursor, Change)) -> Result<Cursor> {
        // The redb file is locked by this process: nobody else writes.
        Ok(after)
    }

    fn insert(&self, record: Record, _seen: Cursor) -> Result<Insert> {
        self.queue_insert(record, None)
    }

    fn insert_with_blocks(
        &self,
        record: Record,
        _seen: Cursor,
        blocks: &BlockWrite,
    ) -> Result<Insert> {
        self.queue_insert(record, Some(blocks.clone()))
    }

    fn delete(&self, id: &str) -> Result<Option<Record>> {
        self.submit(
            |reply| Job::Delete(id.to_string(), None, reply),
            "the delete",
        )
    }

    /// The record and its block entries removed in one commit. The entries are those of the
    /// record read before the delete is queued: the same record, as this process is the file's
    /// only writer and [`crate::NearDupDb`] holds its writer lock around both.
    fn delete_with_blocks(
        &self,
        id: &str,
        blocks: &dyn Fn(&Record) -> BlockWrite,
    ) -> Result<Option<Record>> {
        let Some(record) = self.get(id)? else {
            return Ok(None);
        };
        let own = blocks(&record);
        self.submit(
            |reply| Job::Delete(id.to_string(), Some(own), reply),
            "the delete",
        )
    }

    fn get(&self, id: &str) -> Result<Option<Record>> {
        if let Some(record) = self.pending().by_id.get(id) {
            return Ok(Some(record.clone()));
        }
        self.stored_record(id)
    }

    fn get_slots(&self, slots: &[u64]) -> Result<Vec<Option<Record>>> {
        // The pending lock first, then the read snapshot: the committer removes records from
        // `pending` only after their commit, so a record is either still pending or in the
        // snapshot. (The other order lost records committed between the two steps, and a
        // near-duplicate check then found no match.)
        let pending = self.pending();
        self.handle.with(|db| {
            let txn = db.begin_read()?;
            let (ids, docs) = (txn.open_table(SLOTS)?, txn.open_table(DOCS)?);
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
        })
    }

    fn len(&self) -> Result<u64> {
        // Pending first, as in `get_slots`: a record is counted once, pending or stored.
        let pending = self.pending();
        let stored = self
            .handle
            .with(|db| Ok(db.begin_read()?.open_table(DOCS)?.len()?))?;
        Ok(stored + pending.by_id.len() as u64)
    }

    fn probe(&self) -> Result<()> {
        // Through the committer: it shows the file reopens, takes a commit and an fsync, and
        // that the committer is not stuck.
        self.submit(Job::Probe, "the probe commit")
    }

    fn durability(&self) -> Result<Durability> {
        Ok(Durability::redb())
    }

    fn holds_blocks(&self) -> bool {
        true
    }

    fn cache_bytes(&self) -> u64 {
        self.handle.cache.unwrap_or(0)
    }

    fn blocks_when_asked(&self) -> bool {
        true
    }

    fn blocks_plan(&self) -> Result<Option<String>> {
        self.handle.with(|db| {
            let txn = db.begin_read()?;
            let table = txn.open_table(META)?;
            let found = table.get(BLOCKS_KEY)?;
            Ok(found.map(|plan| plan.value().to_string()))
        })
    }

    fn set_blocks_plan(&self, plan: &str) -> Result<String> {
        self.handle.with(|db| {
            let txn = db.begin_write()?;
            let recorded = {
                let mut table = txn.open_table(META)?;
                let stored = table.get(BLOCKS_KEY)?.map(|p| p.value().to_string());
                match stored {
                    Some(stored) => stored,
                    None => {
                        table.insert(BLOCKS_KEY, plan)?;
                        plan.to_string()
                    }
                }
            };
            txn.commit()?;
            Ok(recorded)
        })
    }

    fn position(&self) -> Result<Cursor> {
        // The redb file is locked by this process: nobody else writes.
        Ok(Cursor::default())
    }

    /// One read transaction, with the entries of inserts not committed yet.
    fn read_blocks(&self, keys: &[(u32, u64)]) -> Result<Vec<Vec<u8>>> {
        // The pending lock first, as in `get_slots`: an entry is pending or in the snapshot
        // (or both, for a moment: queries take each slot once).
        let pending = self.pending();
        self.handle.with(|db| {
            let txn = db.begin_read()?;
            let table = txn.open_table(BLOCKS)?;
            keys.iter()
                .map(|key| {
                    let stored = table.get(*key)?;
                    let mut list = stored.map_or_else(Vec::new, |list| list.value().to_vec());
                    if let Some(more) = pending.blocks.get(key) {
                        list.extend_from_slice(more);
                    }
                    Ok(list)
                })
                .collect()
        })
    }

    fn read_blocks_reserved(&self, keys: &[(u32, u64)]) -> Result<(Vec<Vec<u8>>, u64)> {
        let reserved = self.next_slot.load(Ordering::Relaxed).saturating_sub(1);
        Ok((self.read_blocks(keys)?, reserved))
    }

    fn reserve_slot(&self) -> Result<u64> {
        let slot = self.next_slot.fetch_add(1, Ordering::Relaxed);
        self.reserved
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .insert(slot);
        Ok(slot)
    }

    fn add_blocks(&self, keys: &[(u32, u64)], entry: &[u8]) -> Result<()> {
        self.add_blocks_batch(&[(keys.to_vec(), entry.to_vec())])
    }

    /// One commit.
    fn add_blocks_batch(&self, batch: &[BlockWrite]) -> Result<()> {
        if batch.is_empty() {
            return Ok(());
        }
        self.submit(
            |reply| Job::Blocks(batch.to_vec(), true, reply),
            "the block entries",
        )
    }

    fn remove_blocks(&self, keys: &[(u32, u64)], entry: &[u8]) -> Result<()> {
        let write = vec![(keys.to_vec(), entry.to_vec())];
        self.submit(
            |reply| Job::Blocks(write, false, reply),
            "the block entries",
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_first_format_is_a_clear_error() {
        let dir = tempfile::tempdir().unwrap();
        {
            let db = Database::create(dir.path().join(FILE_NAME)).unwrap();
            let txn = db.begin_write().unwrap();
            let mut meta = Meta::new(neardup_dedup::Policy::default());
            meta.version = 1;
            txn.open_table(META)
                .unwrap()
                .insert(META_KEY, serde_json::to_string(&meta).unwrap().as_str())
                .unwrap();
            let rows: TableDefinition<u64, (u128, u128)> = TableDefinition::new(OLD_ROWS);
            txn.open_table(rows).unwrap().insert(0, (1, 2)).unwrap();
            txn.commit().unwrap();
        }
        let error = RedbStore::open(dir.path(), Duration::from_secs(2))
            .unwrap_err()
            .to_string();
        assert!(error.contains("format version 1"), "{error}");
    }

    #[test]
    fn rows_survive_gaps_and_deletes_across_chunks() {
        let dir = tempfile::tempdir().unwrap();
        let db = Database::create(dir.path().join(FILE_NAME)).unwrap();
        let txn = db.begin_write().unwrap();
        {
            let mut chunks = txn.open_table(ROW_CHUNKS).unwrap();
            let mut touched = BTreeMap::new();
            for slot in [0, 5, CHUNK_ROWS + 2, 3 * CHUNK_ROWS - 1] {
                set_row(&chunks, &mut touched, slot, Some((slot.into(), 7))).unwrap();
            }
            set_row(&chunks, &mut touched, 5, None).unwrap();
            set_row(&chunks, &mut touched, 9 * CHUNK_ROWS, None).unwrap();
            write_chunks(&mut chunks, touched).unwrap();
        }
        txn.commit().unwrap();
        drop(db);
        let store = RedbStore::open(dir.path(), Duration::from_secs(2)).unwrap();
        assert_eq!(store.next_slot.load(Ordering::Relaxed), 3 * CHUNK_ROWS);
        let mut loaded = Vec::new();
        store
            .load(&mut |e| loaded.push((e.slot, e.simhash, e.digest)))
            .unwrap();
        let slots = [0, CHUNK_ROWS + 2, 3 * CHUNK_ROWS - 1];
        let expected: Vec<_> = slots.iter().map(|&s| (s, u128::from(s), 7)).collect();
        assert_eq!(loaded, expected);
    }

    #[test]
    fn a_stored_record_that_does_not_parse_keeps_the_parser_error() {
        use std::error::Error;
        let dir = tempfile::tempdir().unwrap();
        drop(RedbStore::open(dir.path(), Duration::from_secs(2)).unwrap());
        {
            let db = Database::create(dir.path().join(FILE_NAME)).unwrap();
            let txn = db.begin_write().unwrap();
            txn.open_table(DOCS)
                .unwrap()
                .insert("a", b"{not json".as_slice())
                .unwrap();
            txn.commit().unwrap();
        }
        let store = RedbStore::open(dir.path(), Duration::from_secs(2)).unwrap();
        let error = store.get("a").unwrap_err();
        let message = error.to_string();
        assert!(
            message.starts_with("corrupt database: a stored record in "),
            "{message}"
        );
        assert!(message.contains(FILE_NAME), "{message}");
        let cause = error.source().expect("the parser's error is kept");
        assert!(cause.is::<serde_json::Error>(), "{cause:?}");
    }
}
