//! What a database records about itself at creation: the profile and the distance.

use neardup_core::Profile;
use serde::{Deserialize, Serialize};

use crate::error::{Result, StoreError};

/// The on-disk format version this crate writes.
///
/// 1: redb rows one per slot; 2: redb rows in chunks (the Redis layout is unchanged).
pub const FORMAT_VERSION: u32 = 2;

/// The database's metadata, stored as JSON when the database is created.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Meta {
    /// Format version ([`FORMAT_VERSION`]).
    pub version: u32,
    /// The profile every stored fingerprint was made with.
    pub profile: Profile,
    /// Largest SimHash distance that makes a near duplicate.
    pub k: u32,
}

impl Meta {
    /// Metadata for a new database.
    pub fn new(profile: Profile, k: u32) -> Meta {
        Meta {
            version: FORMAT_VERSION,
            profile,
            k,
        }
    }

    /// Checks that a database holding `self` may be opened with `wanted` profile and distance
    /// (`None`: whatever is stored).
    pub fn check(&self, location: &str, wanted: Option<&Profile>, k: Option<u32>) -> Result<()> {
        if self.version != FORMAT_VERSION {
            return Err(StoreError::Corrupt(format!(
                "{location}: format version {} (this program reads {FORMAT_VERSION})",
                self.version
            )));
        }
        let profile_differs = wanted.is_some_and(|p| *p != self.profile);
        let k_differs = k.is_some_and(|k| k != self.k);
        if profile_differs || k_differs {
            let wanted_profile = wanted.unwrap_or(&self.profile);
            return Err(StoreError::ProfileMismatch {
                location: location.to_string(),
                stored: describe(&self.profile, self.k),
                wanted: describe(wanted_profile, k.unwrap_or(self.k))
                    + if profile_differs && wanted_profile.name == self.profile.name {
                        " (same name, different settings)"
                    } else {
                        ""
                    },
            });
        }
        Ok(())
    }
}

fn describe(profile: &Profile, k: u32) -> String {
    format!("profile {:?} and k = {k}", profile.name)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn mismatch_names_both() {
        let meta = Meta::new(Profile::web(), 3);
        assert!(meta.check("db", None, None).is_ok());
        assert!(meta.check("db", Some(&Profile::web()), Some(3)).is_ok());
        let error = meta.check("db", Some(&Profile::zh()), None).unwrap_err();
        let text = error.to_string();
        assert!(
            text.contains("\"web\"") && text.contains("\"zh\""),
            "{text}"
        );
        assert!(meta.check("db", None, Some(5)).is_err());
    }
}
