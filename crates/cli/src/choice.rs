//! Options whose values are a library enum ([`Choice`]): parsed and listed by the enum's own
//! serde names, so `--method cascade` on the command line is `"method": "cascade"` in a policy
//! file and over HTTP, and the help lists what the library lists.

use std::marker::PhantomData;

use clap::builder::{PossibleValue, TypedValueParser};
use neardup_core::Choice;

/// A clap value parser for the choice `T`.
#[derive(Clone)]
pub struct ChoiceParser<T>(PhantomData<T>);

/// The value parser of an option whose values are the choice `T`.
pub fn choice<T: Choice>() -> ChoiceParser<T> {
    ChoiceParser(PhantomData)
}

impl<T: Choice> TypedValueParser for ChoiceParser<T> {
    type Value = T;

    fn parse_ref(
        &self,
        cmd: &clap::Command,
        arg: Option<&clap::Arg>,
        value: &std::ffi::OsStr,
    ) -> Result<T, clap::Error> {
        let invalid = || {
            let mut error = clap::Error::new(clap::error::ErrorKind::InvalidValue).with_cmd(cmd);
            if let Some(arg) = arg {
                error.insert(
                    clap::error::ContextKind::InvalidArg,
                    clap::error::ContextValue::String(arg.to_string()),
                );
            }
            error.insert(
                clap::error::ContextKind::InvalidValue,
                clap::error::ContextValue::String(value.to_string_lossy().into_owned()),
            );
            error.insert(
                clap::error::ContextKind::ValidValue,
                clap::error::ContextValue::Strings(T::ALL.iter().map(|v| v.name()).collect()),
            );
            error
        };
        value
            .to_str()
            .and_then(|name| T::parse(name).ok())
            .ok_or_else(invalid)
    }

    fn possible_values(&self) -> Option<Box<dyn Iterator<Item = PossibleValue> + '_>> {
        Some(Box::new(T::ALL.iter().map(|value| {
            PossibleValue::new(value.name()).help(value.help())
        })))
    }
}

/// A choice or `none` (JSON's `null` in a policy file): `--verify none`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct OrNone<T>(pub Option<T>);

/// The value parser of an option whose values are the choice `T` or `none`.
pub fn choice_or_none<T: Choice>() -> OrNoneParser<T> {
    OrNoneParser(PhantomData)
}

/// A clap value parser for the choice `T` or `none`.
#[derive(Clone)]
pub struct OrNoneParser<T>(PhantomData<T>);

impl<T: Choice> TypedValueParser for OrNoneParser<T> {
    type Value = OrNone<T>;

    fn parse_ref(
        &self,
        cmd: &clap::Command,
        arg: Option<&clap::Arg>,
        value: &std::ffi::OsStr,
    ) -> Result<OrNone<T>, clap::Error> {
        if value == "none" {
            return Ok(OrNone(None));
        }
        choice::<T>()
            .parse_ref(cmd, arg, value)
            .map(|v| OrNone(Some(v)))
    }

    fn possible_values(&self) -> Option<Box<dyn Iterator<Item = PossibleValue> + '_>> {
        let none = PossibleValue::new("none").help("none");
        Some(Box::new(
            ChoiceParser::<T>(PhantomData)
                .possible_values()
                .into_iter()
                .flatten()
                .chain([none]),
        ))
    }
}

#[cfg(test)]
mod tests {
    use clap::Parser;
    use neardup_dedup::{KeepPolicy, Method};

    use super::*;

    #[derive(Parser)]
    struct Args {
        #[arg(long, value_parser = choice::<Method>())]
        method: Method,
        #[arg(long, value_parser = choice::<KeepPolicy>(), default_value = "first")]
        keep: KeepPolicy,
    }

    #[test]
    fn values_are_the_serde_names() {
        let args = Args::try_parse_from(["t", "--method", "overlap", "--keep", "newest"]).unwrap();
        assert_eq!(
            (args.method, args.keep),
            (Method::Overlap, KeepPolicy::Newest)
        );
        let error = Args::try_parse_from(["t", "--method", "Overlap"])
            .err()
            .unwrap()
            .to_string();
        assert!(
            error.contains("cascade, simhash, minhash, overlap, exact"),
            "{error}"
        );
    }
}
