//! The `--db` option and the policy of a new database, shared by every command that opens a
//! [`neardup_store::NearDupDb`]; the store timeout and the durability it must have.

use std::path::PathBuf;
use std::time::Duration;

use neardup_store::{
    open_db, redact, DbSpec, IndexIn, NearDupDb, OpenOptions, StoreError, DEFAULT_LOG_WINDOW,
    DEFAULT_STORE_TIMEOUT,
};

use crate::budget_args::parse_memory;
use crate::choice::choice;
use crate::policy_args::PolicyArgs;

/// Which database to open, and how to create it if new.
#[derive(Debug, Clone, clap::Args)]
pub struct DbArgs {
    /// The database: a directory (embedded redb, created if missing by `index add` and
    /// `serve`; the other commands only open an existing one),
    /// `redis://[USER:PASSWORD@]HOST:PORT[/N][?name=NAME]` (`rediss://` for TLS) or
    /// `redis+cluster://HOST:PORT,HOST:PORT,...[?name=NAME]`. Give a URL with a password in
    /// NEARDUP_DB rather than on the command line, where `ps` shows it.
    #[arg(
        long,
        value_name = "DIR|URL",
        env = "NEARDUP_DB",
        hide_env_values = true
    )]
    pub db: String,
    /// The trusted certificate authorities (PEM) for a rediss:// database, instead of the
    /// system's.
    #[arg(
        long,
        value_name = "PATH",
        env = "NEARDUP_REDIS_CA_FILE",
        hide_env_values = true
    )]
    pub redis_ca_file: Option<PathBuf>,
    /// Open a Redis whose maxmemory-policy may evict keys (allkeys-*), warning loudly, instead
    /// of refusing it: documents acknowledged as stored may then vanish.
    #[arg(long)]
    pub allow_eviction: bool,
    /// The longest wait for one store call, in seconds (a Redis connection or command, a redb
    /// commit); then the call fails (the server answers 503).
    #[arg(long, value_name = "SECONDS", default_value_t = DEFAULT_STORE_TIMEOUT.as_secs_f64(), value_parser = seconds)]
    pub store_timeout: f64,
    /// `strict`: refuse to open a store that does not fsync every acknowledged write (redb
    /// does; Redis only with appendonly yes and appendfsync always). `any`: open it, and say
    /// on stderr what an acknowledgement then means.
    #[arg(long, value_enum, default_value_t = DurabilityMode::Any)]
    pub durability: DurabilityMode,
    /// Where checks find their candidates: `local`, an index of every document in this
    /// process (fastest; it grows with the database), or `store`, the block keys the database
    /// holds (redb: a table in its file, built when it is first opened so; Redis: keys spread
    /// over the cluster): this process holds no index, whatever the database's size.
    #[arg(long, value_parser = choice::<IndexIn>(), default_value = "local")]
    pub index_in: IndexIn,
    /// The most this process may hold for the database (e.g. 512M, 2G): redb's page cache gets
    /// a quarter; a local index over the rest is refused at start; the verification cache gets
    /// what the index leaves [default: no limit on the index, a cache of about 150 MB, redb's
    /// page cache 1 GiB].
    #[arg(long, value_name = "SIZE", value_parser = parse_memory)]
    pub memory: Option<u64>,
    /// Redis: the oldest, in seconds, a log entry may be before this process trims it, even
    /// if a process still needs it (that process then loads its index again from the rows
    /// spread over the cluster). The ordering node holds about this many seconds of inserts.
    /// Give every process of a database the same.
    #[arg(long, value_name = "SECONDS", default_value_t = DEFAULT_LOG_WINDOW.as_secs_f64(), value_parser = seconds)]
    pub log_window: f64,
    /// The policy of a new database (the default one if none is given). An existing database
    /// keeps the policy it was made with: leave these out, or name that same policy.
    #[command(flatten)]
    pub policy: PolicyArgs,
}

/// What durability the store must have.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum DurabilityMode {
    /// Whatever the store has (said on stderr when it does not fsync every write).
    Any,
    /// Every acknowledged write fsynced, or the command refuses to start.
    Strict,
}

/// A duration in seconds (fractions allowed), above zero.
pub fn seconds(text: &str) -> Result<f64, String> {
    match text.parse::<f64>() {
        Ok(value) if value > 0.0 && value.is_finite() && value < 1e9 => Ok(value),
        _ => Err(format!("{text:?} is not a number of seconds above 0")),
    }
}

impl DbArgs {
    /// The store timeout.
    pub fn timeout(&self) -> Duration {
        Duration::from_secs_f64(self.store_timeout)
    }

    /// Opens the database, creating it with the given policy if new. Says so on stderr when a
    /// directory that does not exist yet is about to become a new database.
    pub fn open(&self) -> anyhow::Result<NearDupDb> {
        if let Ok(DbSpec::Dir(dir)) = DbSpec::parse(&self.db) {
            if !dir.exists() {
                eprintln!(
                    "neardup: {} does not exist: creating a new database there",
                    dir.display()
                );
            }
        }
        self.open_with(false)
    }

    /// Opens the database only if it exists, creating nothing: for the commands that read or
    /// delete. Fails with "no neardup database at …" otherwise.
    pub fn open_existing(&self) -> anyhow::Result<NearDupDb> {
        self.open_with(true)
    }

    fn open_with(&self, must_exist: bool) -> anyhow::Result<NearDupDb> {
        let policy = self
            .policy
            .is_given()
            .then(|| self.policy.policy())
            .transpose()?;
        let options = OpenOptions {
            policy,
            timeout: self.timeout(),
            strict_durability: self.durability == DurabilityMode::Strict,
            allow_eviction: self.allow_eviction,
            redis_ca_file: self.redis_ca_file.clone(),
            must_exist,
            index_in: self.index_in,
            memory: self.memory,
            log_window: Duration::from_secs_f64(self.log_window),
            ..OpenOptions::default()
        };
        open_db(&self.db, options).map_err(|error| opening(&self.db, error))
    }
}

/// The error of a failure to open the database at `spec`: a missing database as it is (its
/// message names the place), any other failure in the context of [`cannot_open`].
pub fn opening(spec: &str, error: StoreError) -> anyhow::Error {
    match error {
        StoreError::NoDatabase(_) => error.into(),
        other => anyhow::Error::new(other).context(cannot_open(spec)),
    }
}

/// The context of a failure to open the database at `spec`, its password hidden.
pub fn cannot_open(spec: &str) -> String {
    format!("cannot open database {}", redact(spec))
}
