//! One module per subcommand: its clap arguments and its `run` function.

pub mod compare;
pub mod dedup;
pub mod eval;
pub mod extract;
pub mod fingerprint;
pub mod index;
pub mod mirrors;
pub mod pairs;
pub mod serve;
pub mod units;
