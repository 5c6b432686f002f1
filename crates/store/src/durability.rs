//! What an acknowledged write survives, per store: read at open (for Redis from its own
//! configuration), logged, shown in stats and `/healthz`, and required by strict mode.

use serde::Serialize;

/// What a store promises about an acknowledged write.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Durability {
    /// True if every acknowledged write is on disk (fsynced) before it is acknowledged: it
    /// survives a crash of the store's process and of its machine. What strict mode requires.
    pub fsync_every_write: bool,
    /// The persistence the store has, as read (e.g. `redb, fsync per group commit` or
    /// `redis appendonly=yes appendfsync=everysec save="3600 1"`).
    pub persistence: String,
    /// What an acknowledgement means then, in words.
    pub meaning: String,
}

impl Durability {
    /// The embedded store: each group commit is fsynced before any of its writes is answered.
    pub fn redb() -> Durability {
        Durability {
            fsync_every_write: true,
            persistence: "redb, one fsync per group commit".into(),
            meaning: "an acknowledged write is on disk: it survives a crash of the process or \
                      the machine"
                .into(),
        }
    }

    /// Process memory: nothing survives the process.
    pub fn memory() -> Durability {
        Durability {
            fsync_every_write: false,
            persistence: "process memory".into(),
            meaning: "nothing is persisted: every write is lost when the process ends".into(),
        }
    }

    /// A store whose persistence could not be read (`why`): assumed to promise nothing.
    pub fn unknown(persistence: &str, why: &str) -> Durability {
        Durability {
            fsync_every_write: false,
            persistence: persistence.into(),
            meaning: format!("unknown ({why}): assume an acknowledged write may be lost"),
        }
    }

    /// A Redis server with this configuration (`CONFIG GET appendonly`, `appendfsync`, `save`).
    pub fn redis(appendonly: &str, appendfsync: &str, save: &str) -> Durability {
        let persistence =
            format!("redis appendonly={appendonly} appendfsync={appendfsync} save={save:?}");
        let snapshots = if save.trim().is_empty() {
            "no persistence: a Redis restart loses every write".to_string()
        } else {
            format!(
                "RDB snapshots only (save {save:?}): a Redis restart or crash loses the writes \
                 since the last snapshot"
            )
        };
        let (fsync_every_write, meaning) = match (appendonly, appendfsync) {
            ("yes", "always") => (
                true,
                "AOF fsynced before each answer: an acknowledged write survives a crash of \
                 Redis or of its machine"
                    .to_string(),
            ),
            ("yes", "everysec") => (
                false,
                "AOF fsynced once a second: an acknowledged write survives a crash of Redis, \
                 a crash of its machine may lose the last second or two"
                    .to_string(),
            ),
            ("yes", _) => (
                false,
                "AOF written but fsynced when the OS decides: an acknowledged write survives a \
                 crash of Redis, a crash of its machine may lose about 30 s"
                    .to_string(),
            ),
            _ => (false, snapshots),
        };
        Durability {
            fsync_every_write,
            persistence,
            meaning,
        }
    }

    /// This promise, each write also acknowledged by a replica (`WAIT 1`) before it is answered
    /// (a Redis Cluster opened with strict durability).
    pub fn with_replica(self) -> Durability {
        Durability {
            persistence: format!("{} + WAIT 1 (a replica)", self.persistence),
            meaning: format!(
                "{}; and a replica holds it before it is answered: it survives the failover of \
                 its master",
                self.meaning
            ),
            ..self
        }
    }

    /// The weaker of two promises (the first if they are equally strong): a database spread
    /// over several servers promises what its weakest does.
    pub fn weaker(self, other: Durability) -> Durability {
        if self.fsync_every_write && !other.fsync_every_write {
            other
        } else {
            self
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_an_aof_fsynced_always_promises_every_write() {
        assert!(Durability::redis("yes", "always", "").fsync_every_write);
        for (aof, fsync, save, says) in [
            ("yes", "everysec", "", "once a second"),
            ("yes", "no", "", "when the OS decides"),
            ("no", "always", "3600 1", "RDB snapshots only"),
            ("no", "everysec", "", "no persistence"),
        ] {
            let durability = Durability::redis(aof, fsync, save);
            assert!(!durability.fsync_every_write, "{durability:?}");
            assert!(durability.meaning.contains(says), "{durability:?}");
        }
        let strong = Durability::redis("yes", "always", "");
        let weak = Durability::redis("no", "always", "");
        assert_eq!(strong.clone().weaker(weak.clone()), weak);
        assert_eq!(weak.clone().weaker(strong.clone()), weak);
        assert_eq!(strong.clone().weaker(Durability::redb()), strong);
        let replicated = strong.clone().with_replica();
        assert!(replicated.fsync_every_write && replicated.meaning.contains("failover"));
        assert_eq!(replicated.clone().weaker(weak.clone()), weak);
    }
}
