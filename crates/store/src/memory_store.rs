//! [`MemoryStore`]: a [`Store`] in process memory that keeps the shared stores' multi-writer
//! protocol (an ordered change log; an insert refused when anything was written since the
//! writer caught up), so that protocol can be tested without a server, and a database can live
//! for one process's lifetime (tests, notebooks, one-off checks). Clones share the data: each
//! clone under its own [`crate::NearDupDb`] behaves as another process of a shared store.

use std::collections::{BTreeMap, HashMap};
use std::sync::{Arc, Mutex, MutexGuard};

use crate::durability::Durability;
use crate::error::Result;
use crate::meta::Meta;
use crate::record::{Entry, Record};
use crate::store::{Change, Cursor, Durable, Insert, Store};

/// A store in memory; nothing survives the process. Clones share one database.
///
/// ```
/// use neardup_store::{MemoryStore, NearDupDb, NewDocument, OpenOptions};
/// let store = MemoryStore::new("demo");
/// let a = NearDupDb::open(Box::new(store.clone()), OpenOptions::default()).unwrap();
/// let b = NearDupDb::open(Box::new(store), OpenOptions::default()).unwrap();
/// let doc = NewDocument { text: "A text seen by one writer.".into(), ..Default::default() };
/// a.insert(&doc).unwrap();
/// // The other writer catches up before it checks.
/// assert!(!b.check(&doc).unwrap().verdict.is_unique());
/// ```
#[derive(Debug, Clone)]
pub struct MemoryStore {
    name: String,
    shared: Arc<Mutex<Shared>>,
}

/// The data every clone sees.
#[derive(Debug, Default)]
struct Shared {
    meta: Option<Meta>,
    docs: HashMap<String, Record>,
    /// Live slots and their ids.
    slots: BTreeMap<u64, String>,
    /// Every change, in order; position `i` is cursor `(i + 1, 0)`.
    log: Vec<Change>,
    next_slot: u64,
}

impl Shared {
    fn position(&self) -> Cursor {
        Cursor(self.log.len() as u64, 0)
    }
}

impl MemoryStore {
    /// An empty store named `name` (its location is `memory:NAME`).
    pub fn new(name: &str) -> MemoryStore {
        MemoryStore {
            name: name.to_string(),
            shared: Arc::default(),
        }
    }

    /// Forgets everything, metadata included, as a Redis server restarted without persistence
    /// does: for tests of recovery.
    pub fn clear(&self) {
        *self.lock() = Shared::default();
    }

    fn lock(&self) -> MutexGuard<'_, Shared> {
        self.shared.lock().unwrap_or_else(|e| e.into_inner())
    }
}

impl Store for MemoryStore {
    fn location(&self) -> String {
        format!("memory:{}", self.name)
    }

    fn init_meta(&self, meta: &Meta) -> Result<Meta> {
        Ok(self.lock().meta.get_or_insert_with(|| meta.clone()).clone())
    }

    fn meta(&self) -> Result<Option<Meta>> {
        Ok(self.lock().meta.clone())
    }

    fn replace_meta(&self, meta: &Meta) -> Result<()> {
        self.lock().meta = Some(meta.clone());
        Ok(())
    }

    fn load(&self, sink: &mut dyn FnMut(Entry)) -> Result<Cursor> {
        let shared = self.lock();
        for id in shared.slots.values() {
            sink(shared.docs[id].entry());
        }
        Ok(shared.position())
    }

    fn changes(&self, after: Cursor, sink: &mut dyn FnMut(Cursor, Change)) -> Result<Cursor> {
        let shared = self.lock();
        if after > shared.position() {
            return Err(crate::error::StoreError::Reset(format!(
                "{} holds {} changes, this process has seen {}",
                self.location(),
                shared.log.len(),
                after.0
            )));
        }
        for (at, change) in shared.log.iter().enumerate().skip(after.0 as usize) {
            sink(Cursor(at as u64 + 1, 0), *change);
        }
        Ok(shared.position())
    }

    fn insert(&self, mut record: Record, seen: Cursor) -> Result<Insert> {
        let mut shared = self.lock();
        if shared.position() > seen {
            return Ok(Insert::Conflict);
        }
        if shared.docs.contains_key(&record.id) {
            return Ok(Insert::IdExists);
        }
        let slot = shared.next_slot;
        shared.next_slot += 1;
        record.slot = slot;
        shared.log.push(Change::Insert(record.entry()));
        shared.slots.insert(slot, record.id.clone());
        shared.docs.insert(record.id.clone(), record);
        Ok(Insert::Accepted {
            slot,
            cursor: shared.position(),
            durable: Durable::done(),
        })
    }

    fn delete(&self, id: &str) -> Result<Option<Record>> {
        let mut shared = self.lock();
        let Some(record) = shared.docs.remove(id) else {
            return Ok(None);
        };
        shared.slots.remove(&record.slot);
        shared.log.push(Change::Delete(record.slot));
        Ok(Some(record))
    }

    fn get(&self, id: &str) -> Result<Option<Record>> {
        Ok(self.lock().docs.get(id).cloned())
    }

    fn get_slots(&self, slots: &[u64]) -> Result<Vec<Option<Record>>> {
        let shared = self.lock();
        Ok(slots
            .iter()
            .map(|slot| shared.slots.get(slot).map(|id| shared.docs[id].clone()))
            .collect())
    }

    fn len(&self) -> Result<u64> {
        Ok(self.lock().docs.len() as u64)
    }

    fn probe(&self) -> Result<()> {
        Ok(())
    }

    fn durability(&self) -> Result<Durability> {
        Ok(Durability::memory())
    }
}
