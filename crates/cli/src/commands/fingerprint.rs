//! `neardup fingerprint`.

/// Arguments of `neardup fingerprint`.
#[derive(Debug, clap::Args)]
pub struct FingerprintArgs {}

/// Runs `neardup fingerprint`.
pub fn run(_args: FingerprintArgs) -> anyhow::Result<()> {
    anyhow::bail!("not yet implemented")
}
