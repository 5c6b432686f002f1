//! The `--profile` / `--profile-file` options every fingerprinting command shares.

use std::path::PathBuf;

use anyhow::Context;
use neardup_core::profile::BUILTIN_PROFILES;
use neardup_core::Profile;

/// Which fingerprinting profile to use.
#[derive(Debug, Clone, clap::Args)]
pub struct ProfileArgs {
    /// Built-in profile.
    #[arg(
        long,
        default_value = "web",
        value_parser = builtin_profile(),
        conflicts_with = "profile_file"
    )]
    pub profile: String,
    /// A profile written as JSON (see `neardup fingerprint --show-profile` for the fields).
    #[arg(long, value_name = "FILE")]
    pub profile_file: Option<PathBuf>,
}

/// The parser of a built-in profile's name: another name is a usage error that lists them.
pub fn builtin_profile() -> clap::builder::PossibleValuesParser {
    clap::builder::PossibleValuesParser::new(BUILTIN_PROFILES)
}

impl ProfileArgs {
    /// The profile the options name, validated.
    pub fn load(&self) -> anyhow::Result<Profile> {
        let profile = match &self.profile_file {
            Some(path) => {
                let text = std::fs::read_to_string(path)
                    .with_context(|| format!("cannot read profile {}", path.display()))?;
                serde_json::from_str::<Profile>(&text)
                    .with_context(|| format!("invalid profile {}", path.display()))?
            }
            None => Profile::builtin(&self.profile)?,
        };
        profile.validate()?;
        Ok(profile)
    }
}
