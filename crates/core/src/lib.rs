//! # neardup-core
//!
//! Everything that turns a text into features, weights, fingerprints and similarity figures,
//! with no I/O: the bottom layer of neardup.
//!
//! The path of a text: [`normalize`] (the explicit choices: Unicode form, case, punctuation,
//! white space) → [`tokenize`] (UAX #29 words, jieba for Chinese, characters) → [`features`]
//! (tokens, word or character shingles, hashed as they are produced by a [`hash`] function) →
//! [`weight`] (uniform, TF, TF-IDF, top-K keywords) → [`simhash`] (Charikar's weighted bit sums),
//! [`minhash`] (Broder) and [`digest`] (exact duplicates). [`measure`] holds the exact
//! similarity measures used to verify and explain. A [`Profile`] names one complete
//! configuration; a [`Fingerprinter`] runs it.
//!
//! ```
//! use neardup_core::{Fingerprinter, Profile};
//! let fingerprinter = Fingerprinter::new(Profile::web())?;
//! let a = fingerprinter.fingerprint("The cat sat on the mat, and the dog sat on the log. It was a fine day.");
//! let b = fingerprinter.fingerprint("The cat sat on the mat, and the dog sat on the log. It was a fine day!");
//! let c = fingerprinter.fingerprint("We all scream for ice cream, said nobody in the history of the world.");
//! assert!(a.simhash.distance(b.simhash)? <= 8, "the default cascade's candidate bound");
//! assert!(a.simhash.distance(c.simhash)? > 10);
//! # Ok::<(), neardup_core::Error>(())
//! ```

pub mod bit_columns;
pub mod choice;
pub mod digest;
mod error;
mod feature_hashing;
pub mod features;
pub mod fingerprint;
pub mod hash;
mod md5_lanes;
pub mod measure;
pub mod minhash;
pub mod normalize;
pub mod profile;
pub mod python_compat;
mod scratch;
pub mod simhash;
pub mod stopwords;
mod stretch;
pub mod tokenize;
pub mod weight;
pub mod xxh3_short;

pub use choice::Choice;
pub use error::{Error, Result};
pub use fingerprint::{Fingerprinter, Fingerprints, WeightedFeature};
pub use profile::Profile;
pub use simhash::{Bits, Simhash};
