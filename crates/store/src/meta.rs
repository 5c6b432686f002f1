//! What a database records about itself at creation: its format and the [`Policy`] it decides
//! by, which every door then opens it with.

use neardup_core::Profile;
use neardup_dedup::Policy;
use serde::{Deserialize, Serialize};

use crate::error::{Result, StoreError};

/// The format version this crate writes.
///
/// 1: redb rows one per slot; 2: redb rows in chunks, the profile and k recorded (SimHash
/// decision only); 3: the whole policy recorded, and each document's text kept (compressed)
/// for verification; 4: redb's block keys one B-tree key per entry (a Redis database is as in
/// 3). Format 2 is migrated by [`Meta::migrated`] (`neardup index migrate`); a redb file of
/// format 3 is upgraded when opened (its block keys built again when next asked for), a Redis
/// database of format 3 is read as it is.
pub const FORMAT_VERSION: u32 = 4;

/// The older format read as the current one: 3 differs from 4 only in redb's block keys, which
/// a redb store upgrades when it opens the file, so only a Redis database is still in it.
pub(crate) const READ_AS_CURRENT: u32 = 3;

/// The metadata of a database.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(try_from = "StoredMeta")]
pub struct Meta {
    /// The format version it was written in.
    pub version: u32,
    /// The decision the database makes.
    pub policy: Policy,
}

/// The metadata as stored, in any format version.
#[derive(Deserialize)]
struct StoredMeta {
    version: u32,
    #[serde(default)]
    policy: Option<Policy>,
    /// Format 2: the profile and distance of a SimHash decision.
    #[serde(default)]
    profile: Option<Profile>,
    #[serde(default)]
    k: Option<u32>,
}

impl TryFrom<StoredMeta> for Meta {
    type Error = String;

    fn try_from(stored: StoredMeta) -> std::result::Result<Meta, String> {
        let policy = match (stored.policy, stored.profile, stored.k) {
            (Some(policy), _, _) => policy,
            // Format 2 decided by SimHash distance alone: that decision, as a policy.
            (None, Some(profile), Some(k)) => Policy::simhash(profile, k),
            _ => return Err("the metadata names no policy".into()),
        };
        Ok(Meta {
            version: stored.version,
            policy,
        })
    }
}

impl Meta {
    /// Metadata of a new database deciding by `policy`.
    pub fn new(policy: Policy) -> Meta {
        Meta {
            version: FORMAT_VERSION,
            policy,
        }
    }

    /// The metadata of a format-2 database in the current format: its policy is the decision
    /// it made (SimHash distance ≤ k under its profile); its documents have no stored text, so
    /// a verifying policy could not check them, and migration keeps the old decision.
    pub fn migrated(&self) -> Meta {
        Meta::new(self.policy.clone())
    }

    /// Checks the format, and that `wanted` (an explicit policy, if any) is the stored one.
    /// The error names both policies.
    pub fn check(&self, location: &str, wanted: Option<&Policy>) -> Result<()> {
        if self.version == 2 {
            return Err(StoreError::Corrupt(format!(
                "{location}: format version 2 (this program reads {FORMAT_VERSION}): run \
                 `neardup index migrate --db {location}` to upgrade it in place"
            )));
        }
        if self.version != FORMAT_VERSION && self.version != READ_AS_CURRENT {
            return Err(StoreError::Corrupt(format!(
                "{location}: format version {} (this program reads {FORMAT_VERSION})",
                self.version
            )));
        }
        match wanted {
            Some(wanted) if *wanted != self.policy => {
                let same_words = wanted.describe() == self.policy.describe();
                Err(StoreError::ProfileMismatch {
                    location: location.to_string(),
                    stored: self.policy.describe(),
                    wanted: wanted.describe()
                        + if same_words {
                            " (same rule, different profile settings)"
                        } else {
                            ""
                        },
                })
            }
            _ => Ok(()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn mismatch_names_both() {
        let meta = Meta::new(Policy::default());
        assert!(meta.check("db", None).is_ok());
        assert!(meta.check("db", Some(&Policy::default())).is_ok());
        let zh = Policy {
            profile: Profile::zh(),
            ..Policy::default()
        };
        let text = meta.check("db", Some(&zh)).unwrap_err().to_string();
        assert!(
            text.contains("profile web") && text.contains("profile zh"),
            "{text}"
        );
        let k3 = Policy {
            k: 3,
            ..Policy::default()
        };
        let text = meta.check("db", Some(&k3)).unwrap_err().to_string();
        assert!(text.contains("<= 6") && text.contains("<= 3"), "{text}");
    }

    /// Format 3 (a Redis database, the same as 4 there) reads as the current format; a later
    /// one is refused, naming both.
    #[test]
    fn format_3_reads_and_a_later_one_is_refused() {
        let mut meta = Meta::new(Policy::default());
        assert_eq!(meta.version, 4);
        meta.version = READ_AS_CURRENT;
        assert!(meta.check("db", None).is_ok());
        meta.version = FORMAT_VERSION + 1;
        let text = meta.check("db", None).unwrap_err().to_string();
        assert!(
            text.contains("format version 5 (this program reads 4)"),
            "{text}"
        );
    }

    #[test]
    fn format_2_reads_as_its_simhash_policy_and_asks_for_migration() {
        let old = serde_json::json!({"version": 2, "profile": Profile::web(), "k": 3});
        let meta: Meta = serde_json::from_value(old).unwrap();
        assert_eq!(meta.policy, Policy::simhash(Profile::web(), 3));
        let text = meta.check("idx", None).unwrap_err().to_string();
        assert!(text.contains("neardup index migrate --db idx"), "{text}");
        let migrated = meta.migrated();
        assert_eq!(migrated.version, FORMAT_VERSION);
        assert!(migrated.check("idx", None).is_ok());
        let round: Meta = serde_json::from_str(&serde_json::to_string(&migrated).unwrap()).unwrap();
        assert_eq!(round, migrated);
    }
}
