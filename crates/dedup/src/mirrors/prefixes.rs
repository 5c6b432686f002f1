//! The interned prefixes of mirror detection: every distinct prefix's text once, one after
//! another, 8 bytes where each ends, and a map from its 64-bit hash to its id (12 bytes an
//! entry), not a `String` (24 bytes and an allocation) and a map entry of 32 bytes each.

use std::collections::HashMap;

use super::hash;
use crate::error::DedupError;

/// Prefixes by id, and ids by prefix.
#[derive(Default)]
pub(super) struct Prefixes {
    /// The texts, one after another.
    text: String,
    /// Where each text ends in `text`.
    ends: Vec<u64>,
    /// The first prefix with each hash.
    by_hash: HashMap<u64, u32>,
    /// Prefixes whose hash an earlier prefix has (almost never).
    collided: HashMap<String, u32>,
}

impl Prefixes {
    /// The id of `prefix`, a new one if it is new.
    pub fn id(&mut self, prefix: &str) -> Result<u32, DedupError> {
        let key = hash(prefix);
        match self.by_hash.get(&key) {
            None => {
                let id = self.push(prefix)?;
                self.by_hash.insert(key, id);
                Ok(id)
            }
            Some(&id) if self.name(id) == prefix => Ok(id),
            Some(_) => match self.collided.get(prefix) {
                Some(&id) => Ok(id),
                None => {
                    let id = self.push(prefix)?;
                    self.collided.insert(prefix.to_string(), id);
                    Ok(id)
                }
            },
        }
    }

    fn push(&mut self, prefix: &str) -> Result<u32, DedupError> {
        let id = u32::try_from(self.ends.len()).map_err(|_| {
            DedupError::InvalidOption(format!(
                "mirror detection takes at most {} prefixes",
                u32::MAX
            ))
        })?;
        self.text.push_str(prefix);
        self.ends.push(self.text.len() as u64);
        Ok(id)
    }

    /// The text of prefix `id`.
    pub fn name(&self, id: u32) -> &str {
        let id = id as usize;
        let start = id.checked_sub(1).map_or(0, |i| self.ends[i] as usize);
        &self.text[start..self.ends[id] as usize]
    }

    /// How many prefixes there are.
    pub fn len(&self) -> usize {
        self.ends.len()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_name_their_prefix_and_collisions_get_their_own() {
        let mut prefixes = Prefixes::default();
        let a = prefixes.id("a.org").unwrap();
        let b = prefixes.id("b.org/x").unwrap();
        assert_eq!((a, b), (0, 1));
        assert_eq!(prefixes.id("a.org").unwrap(), a);
        assert_eq!((prefixes.name(a), prefixes.name(b)), ("a.org", "b.org/x"));
        // Another text under a's hash, as a collision would put it.
        prefixes.by_hash.insert(hash("c.net"), a);
        let c = prefixes.id("c.net").unwrap();
        assert_eq!((c, prefixes.id("c.net").unwrap()), (2, 2));
        assert_eq!((prefixes.name(c), prefixes.len()), ("c.net", 3));
    }
}
