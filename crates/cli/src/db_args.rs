//! The `--db` option and the policy of a new database, shared by every command that opens a
//! [`neardup_store::NearDupDb`].

use anyhow::Context;
use neardup_store::{open_db, DbSpec, NearDupDb, OpenOptions};

use crate::policy_args::PolicyArgs;

/// Which database to open, and how to create it if new.
#[derive(Debug, Clone, clap::Args)]
pub struct DbArgs {
    /// The database: a directory (embedded redb, created if missing), redis://HOST:PORT[?name=N]
    /// or redis+cluster://HOST:PORT,HOST:PORT,...[?name=N].
    #[arg(long, value_name = "DIR|URL")]
    pub db: String,
    /// The policy of a new database (the default one if none is given). An existing database
    /// keeps the policy it was made with: leave these out, or name that same policy.
    #[command(flatten)]
    pub policy: PolicyArgs,
}

impl DbArgs {
    /// Opens the database, creating it with the given policy if new. Says so on stderr when a
    /// directory that does not exist yet is about to become a new database.
    pub fn open(&self) -> anyhow::Result<NearDupDb> {
        let policy = self
            .policy
            .is_given()
            .then(|| self.policy.policy())
            .transpose()?;
        if let Ok(DbSpec::Dir(dir)) = DbSpec::parse(&self.db) {
            if !dir.exists() {
                eprintln!(
                    "neardup: {} does not exist: creating a new database there",
                    dir.display()
                );
            }
        }
        open_db(&self.db, OpenOptions { policy })
            .with_context(|| format!("cannot open database {}", self.db))
    }
}
