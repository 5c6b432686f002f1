//! [`Choice`]: an option with a fixed set of values, spelled one way at every door.
//!
//! An enum that a user names (a method, a measure, a keep policy, an insert mode, a width) is
//! spelled by its serde name everywhere: in policy files, JSON answers, HTTP query strings,
//! Python arguments and command-line options. The command line lists and parses the values
//! through this trait, so it has no copy of the enum and no spelling of its own.

use serde::de::DeserializeOwned;
use serde::Serialize;

/// An enum whose values a user chooses by name: its serde name.
pub trait Choice: Copy + Serialize + DeserializeOwned + Send + Sync + 'static {
    /// Every value, in the order they are listed to a user.
    const ALL: &'static [Self];

    /// One line on what the value does, for help texts.
    fn help(self) -> &'static str;

    /// The value's name: its serde spelling (`"cascade"`, `"if_unique"`, `"64"`).
    fn name(self) -> String {
        match serde_json::to_value(self) {
            Ok(serde_json::Value::String(name)) => name,
            // Every implementor is a unit enum serialised as a string (a test checks each).
            other => unreachable!("a choice serialises as a string, not {other:?}"),
        }
    }

    /// The value named `name` (its serde spelling), or an error listing the names.
    fn parse(name: &str) -> Result<Self, String> {
        serde_json::from_value(serde_json::Value::String(name.to_owned())).map_err(|_| {
            let names: Vec<String> = Self::ALL.iter().map(|v| v.name()).collect();
            format!("{name:?} is not one of {}", names.join(", "))
        })
    }
}

impl Choice for crate::Bits {
    const ALL: &'static [Self] = &[crate::Bits::B64, crate::Bits::B128];

    fn help(self) -> &'static str {
        match self {
            crate::Bits::B64 => "64-bit fingerprints (the classic choice, with k = 3)",
            crate::Bits::B128 => "128-bit fingerprints",
        }
    }
}

/// Whether every value of `T` has a name that parses back to it, and no two share a name:
/// what each implementor's tests check.
pub fn check_names<T: Choice + PartialEq>() -> Result<(), String> {
    let mut seen = std::collections::HashSet::new();
    for &value in T::ALL {
        let name = value.name();
        if T::parse(&name) != Ok(value) {
            return Err(format!("{name:?} does not parse back to its value"));
        }
        if !seen.insert(name.clone()) {
            return Err(format!("{name:?} names two values"));
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bits_are_named_by_their_width() {
        check_names::<crate::Bits>().unwrap();
        assert_eq!(crate::Bits::B128.name(), "128");
        assert!(crate::Bits::parse("32").unwrap_err().contains("64, 128"));
    }
}
