//! `neardup compare`.

/// Arguments of `neardup compare`.
#[derive(Debug, clap::Args)]
pub struct CompareArgs {}

/// Runs `neardup compare`.
pub fn run(_args: CompareArgs) -> anyhow::Result<()> {
    anyhow::bail!("not yet implemented")
}
