//! One module per subcommand: its clap arguments and its `run` function.

pub mod compare;
pub mod fingerprint;
pub mod index;
pub mod pairs;
pub mod serve;
