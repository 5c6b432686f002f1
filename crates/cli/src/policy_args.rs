//! The options that name a [`Policy`], shared by every command that decides: `dedup`,
//! `compare`, `eval`, `index` and `serve`. Defaults live in the library ([`Policy::default`]);
//! an option left out keeps the default (or, for a database, the policy it was made with).

use std::path::PathBuf;

use anyhow::Context;
use neardup_core::Bits;
use neardup_core::Choice;
use neardup_dedup::{Method, Policy, PolicyChanges, VerifyMeasure, DEFAULT_K, DEFAULT_THRESHOLD};

use crate::choice::{choice, choice_or_none, OrNone};
use crate::profile_args::{builtin_profile, ProfileArgs};
use crate::usage::usage;

/// How near-duplicates are decided.
#[derive(Debug, Clone, Default, clap::Args)]
pub struct PolicyArgs {
    /// Built-in profile: web (the default), zh, zh-short, python-simhash.
    #[arg(
        long,
        value_parser = builtin_profile(),
        conflicts_with_all = ["profile_file", "policy_file"]
    )]
    pub profile: Option<String>,
    /// A profile written as JSON (see `neardup fingerprint --show-profile` for the fields).
    #[arg(long, value_name = "FILE", conflicts_with = "policy_file")]
    pub profile_file: Option<PathBuf>,
    /// A whole policy written as JSON (see --show-policy for the fields); the other policy
    /// options then refine it.
    #[arg(long, value_name = "FILE")]
    pub policy_file: Option<PathBuf>,
    #[arg(long, value_parser = choice::<Method>(), help = format!(
        "How candidates are found (exact duplicates are always found first; default {})",
        Policy::default().method.name()
    ))]
    pub method: Option<Method>,
    #[arg(long, help = format!("Largest SimHash distance of a candidate (default {DEFAULT_K})"))]
    pub k: Option<u32>,
    #[arg(long, help = format!(
        "Smallest verified similarity (or MinHash estimate) of a near-duplicate (default {DEFAULT_THRESHOLD})"
    ))]
    pub threshold: Option<f64>,
    /// The measure candidates are verified with (the method's own by default: jaccard for
    /// cascade, containment for overlap, none for simhash and minhash).
    #[arg(long, value_parser = choice_or_none::<VerifyMeasure>())]
    pub verify: Option<OrNone<VerifyMeasure>>,
    /// With verification: a pair is a near-duplicate only if the smaller shingle set has at
    /// least R times as many shingles as the larger (0, the default, is off). With containment, 0.2
    /// keeps re-posts and re-headlined copies but not a headline or a quote in a long article.
    #[arg(long, value_name = "R")]
    pub min_length_ratio: Option<f64>,
    /// Fingerprint width, instead of the profile's.
    #[arg(long, value_parser = choice::<Bits>())]
    pub bits: Option<Bits>,
    /// Print the policy these options give as JSON, and exit.
    #[arg(long)]
    pub show_policy: bool,
}

impl PolicyArgs {
    /// Whether any option names a policy (a database opened without one keeps its own).
    pub fn is_given(&self) -> bool {
        self.profile.is_some()
            || self.profile_file.is_some()
            || self.policy_file.is_some()
            || self.method.is_some()
            || self.k.is_some()
            || self.threshold.is_some()
            || self.verify.is_some()
            || self.min_length_ratio.is_some()
            || self.bits.is_some()
    }

    /// The policy: the policy file's or the default, with each given option applied, validated.
    pub fn policy(&self) -> anyhow::Result<Policy> {
        self.policy_over(Policy::default())
    }

    /// The policy `base` with each given option applied, validated.
    pub fn policy_over(&self, base: Policy) -> anyhow::Result<Policy> {
        let policy = match &self.policy_file {
            Some(path) => {
                let text = std::fs::read_to_string(path)
                    .with_context(|| format!("cannot read policy {}", path.display()))?;
                serde_json::from_str::<Policy>(&text)
                    .with_context(|| format!("invalid policy {}", path.display()))?
            }
            None => base,
        };
        let profile = (self.profile.is_some() || self.profile_file.is_some())
            .then(|| {
                ProfileArgs {
                    profile: self.profile.clone().unwrap_or_else(|| "web".into()),
                    profile_file: self.profile_file.clone(),
                }
                .load()
            })
            .transpose()?;
        let changes = PolicyChanges {
            profile,
            bits: self.bits,
            method: self.method,
            verify: self.verify.map(|OrNone(verify)| verify),
            k: self.k,
            threshold: self.threshold,
            min_length_ratio: self.min_length_ratio,
            // `dedup --granularity` names the rule below the document (or a policy file).
            units: None,
        };
        // The file was read and parsed above; what fails now is an option's value.
        changes.apply(policy).map_err(|e| usage(e).into())
    }

    /// With --show-policy: prints `policy` as JSON and says so (the command then exits).
    pub fn show(&self, policy: &Policy) -> anyhow::Result<bool> {
        if self.show_policy {
            crate::output::print_pretty_json(policy)?;
        }
        Ok(self.show_policy)
    }
}
