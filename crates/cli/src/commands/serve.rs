//! `neardup serve`: the JSON-over-HTTP service over one database.

use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use anyhow::Context;
use neardup_server::{
    ServerConfig, DEFAULT_BATCH_LIMIT, DEFAULT_BODY_LIMIT, DEFAULT_BODY_TIMEOUT,
    DEFAULT_HEADER_TIMEOUT, DEFAULT_LISTEN, DEFAULT_MAX_CONNECTIONS,
    DEFAULT_MAX_CONNECTIONS_PER_IP, DEFAULT_MIN_BODY_RATE,
};

use crate::db_args::{seconds, DbArgs};

/// Arguments of `neardup serve`.
#[derive(Debug, clap::Args)]
pub struct ServeArgs {
    /// The database to serve.
    #[command(flatten)]
    pub db: DbArgs,
    /// Address to listen on; anything but loopback needs --token.
    #[arg(long, default_value = DEFAULT_LISTEN)]
    pub listen: SocketAddr,
    /// Bearer token every request (but /healthz) must carry. Give it in NEARDUP_TOKEN or
    /// --token-file rather than here, where `ps` shows it.
    #[arg(
        long,
        env = "NEARDUP_TOKEN",
        hide_env_values = true,
        conflicts_with = "token_file"
    )]
    pub token: Option<String>,
    /// A file holding the bearer token (its trailing newline ignored).
    #[arg(long, value_name = "PATH")]
    pub token_file: Option<PathBuf>,
    /// Largest request body in bytes (413 above).
    #[arg(long, default_value_t = DEFAULT_BODY_LIMIT)]
    pub body_limit: usize,
    /// Most documents in one batch request.
    #[arg(long, default_value_t = DEFAULT_BATCH_LIMIT)]
    pub batch_limit: usize,
    /// Seconds a client has to send a request head (and to start the next one on a kept-alive
    /// connection); then its connection is closed. Shrinks to 1 s as the connections fill.
    #[arg(long, value_name = "SECONDS", default_value_t = DEFAULT_HEADER_TIMEOUT.as_secs_f64(), value_parser = seconds)]
    pub header_timeout: f64,
    /// Seconds a client has to send a request body once its head is read; then it gets a 408
    /// and its connection is closed. Shrinks to 1 s as the connections fill.
    #[arg(long, value_name = "SECONDS", default_value_t = DEFAULT_BODY_TIMEOUT.as_secs_f64(), value_parser = seconds)]
    pub body_timeout: f64,
    /// Connections served at once (keep it below the file-descriptor limit); when all are in
    /// use, the one idle the longest is closed to make room.
    #[arg(long, default_value_t = DEFAULT_MAX_CONNECTIONS, value_parser = clap::builder::RangedU64ValueParser::<usize>::new().range(1..))]
    pub max_connections: usize,
    /// Connections one client address may hold (loopback included; raise it behind a proxy);
    /// over it, its longest-idle one is closed, or the new one is answered 503.
    #[arg(long, value_name = "N", default_value_t = DEFAULT_MAX_CONNECTIONS_PER_IP, value_parser = clap::builder::RangedU64ValueParser::<usize>::new().range(1..))]
    pub max_connections_per_ip: usize,
    /// Slowest a request body may come after its first second, in bytes a second (408 below
    /// it); 0 for no minimum.
    #[arg(long, value_name = "BYTES", default_value_t = DEFAULT_MIN_BODY_RATE)]
    pub min_body_rate: u64,
}

/// Runs `neardup serve` until Ctrl-C or SIGTERM.
pub fn run(args: ServeArgs) -> anyhow::Result<()> {
    let token = match &args.token_file {
        Some(path) => Some(read_token(path)?),
        None => args.token,
    };
    let config = ServerConfig {
        listen: args.listen,
        token,
        body_limit: args.body_limit,
        batch_limit: args.batch_limit,
        header_timeout: Duration::from_secs_f64(args.header_timeout),
        body_timeout: Duration::from_secs_f64(args.body_timeout),
        max_connections: args.max_connections,
        max_connections_per_ip: args.max_connections_per_ip,
        min_body_rate: args.min_body_rate,
    };
    neardup_server::check_config(&config)?;
    let db = Arc::new(args.db.open()?);
    let durability = db.durability();
    eprintln!(
        "neardup: durability: {}: {}",
        durability.persistence, durability.meaning
    );
    if let Some(warning) = db.warning() {
        eprintln!("neardup: WARNING: {warning}");
    }
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .context("cannot start the async runtime")?;
    runtime.block_on(neardup_server::serve(db, config, |addr| {
        // The one line scripts and tests wait for.
        eprintln!("neardup: listening on http://{addr}");
    }))?;
    // The drain is over; a store call still running on the blocking pool ends within the
    // store timeout, and is not waited for longer.
    runtime.shutdown_timeout(args.db.timeout());
    Ok(())
}

/// The token in the file at `path`, without its trailing newline; an error if the file cannot
/// be read or holds no token.
fn read_token(path: &Path) -> anyhow::Result<String> {
    let text = std::fs::read_to_string(path)
        .with_context(|| format!("cannot read the token file {}", path.display()))?;
    let token = text.strip_suffix('\n').unwrap_or(&text);
    let token = token.strip_suffix('\r').unwrap_or(token);
    anyhow::ensure!(
        !token.is_empty(),
        "the token file {} is empty",
        path.display()
    );
    Ok(token.to_string())
}
