//! `neardup serve`: the JSON-over-HTTP service over one database.

use std::net::SocketAddr;
use std::sync::Arc;

use anyhow::Context;
use neardup_server::{ServerConfig, DEFAULT_BATCH_LIMIT, DEFAULT_BODY_LIMIT, DEFAULT_LISTEN};

use crate::db_args::DbArgs;

/// Arguments of `neardup serve`.
#[derive(Debug, clap::Args)]
pub struct ServeArgs {
    /// The database to serve.
    #[command(flatten)]
    pub db: DbArgs,
    /// Address to listen on; anything but loopback needs --token.
    #[arg(long, default_value = DEFAULT_LISTEN)]
    pub listen: SocketAddr,
    /// Bearer token every request (but /healthz) must carry.
    #[arg(long)]
    pub token: Option<String>,
    /// Largest request body in bytes (413 above).
    #[arg(long, default_value_t = DEFAULT_BODY_LIMIT)]
    pub body_limit: usize,
    /// Most documents in one batch request.
    #[arg(long, default_value_t = DEFAULT_BATCH_LIMIT)]
    pub batch_limit: usize,
}

/// Runs `neardup serve` until Ctrl-C or SIGTERM.
pub fn run(args: ServeArgs) -> anyhow::Result<()> {
    let config = ServerConfig {
        listen: args.listen,
        token: args.token,
        body_limit: args.body_limit,
        batch_limit: args.batch_limit,
        ..ServerConfig::default()
    };
    neardup_server::check_config(&config)?;
    let db = Arc::new(args.db.open()?);
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .context("cannot start the async runtime")?;
    runtime.block_on(neardup_server::serve(db, config, |addr| {
        // The one line scripts and tests wait for.
        eprintln!("neardup: listening on http://{addr}");
    }))?;
    Ok(())
}
