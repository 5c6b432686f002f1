//! The `--db` option and the profile and distance of a new database, shared by every command
//! that opens a [`neardup_store::NearDupDb`].

use std::path::PathBuf;

use anyhow::Context;
use neardup_store::{open_db, DbSpec, NearDupDb, OpenOptions};

use crate::profile_args::{builtin_profile, ProfileArgs};

/// Which database to open, and how to create it if new.
#[derive(Debug, Clone, clap::Args)]
pub struct DbArgs {
    /// The database: a directory (embedded redb, created if missing), redis://HOST:PORT[?name=N]
    /// or redis+cluster://HOST:PORT,HOST:PORT,...[?name=N].
    #[arg(long, value_name = "DIR|URL")]
    pub db: String,
    /// Profile of a new database (an existing one must match).
    #[arg(long, value_parser = builtin_profile(), conflicts_with = "profile_file")]
    pub profile: Option<String>,
    /// A profile written as JSON, for a new database.
    #[arg(long, value_name = "FILE")]
    pub profile_file: Option<PathBuf>,
    /// Largest SimHash distance of a near duplicate, for a new database (default 3).
    #[arg(long, short)]
    pub k: Option<u32>,
}

impl DbArgs {
    /// Opens the database, creating it with the given profile and distance if new (and
    /// saying so on stderr when it is a folder that does not exist: a typo shows).
    pub fn open(&self) -> anyhow::Result<NearDupDb> {
        let profile = match (&self.profile, &self.profile_file) {
            (None, None) => None,
            (profile, profile_file) => Some(
                ProfileArgs {
                    profile: profile.clone().unwrap_or_else(|| "web".into()),
                    profile_file: profile_file.clone(),
                }
                .load()?,
            ),
        };
        let options = OpenOptions { profile, k: self.k };
        if let Ok(DbSpec::Dir(dir)) = DbSpec::parse(&self.db) {
            if !dir.exists() {
                eprintln!(
                    "neardup: {} does not exist: creating a new database there",
                    dir.display()
                );
            }
        }
        open_db(&self.db, options).with_context(|| format!("cannot open database {}", self.db))
    }
}
