//! Reading `eval`'s labelled pairs: a batch at a time, classified and counted.

use std::path::Path;

use anyhow::bail;
use serde_json::Value;

use super::{Class, Counts, EvalArgs};
use crate::input::TextLines;

/// One pair to score.
#[derive(Debug)]
pub(super) struct LabelledPair {
    /// `None` for a label that is neither positive nor negative: scored, but only counted.
    pub class: Option<Class>,
    pub label: f64,
    pub a: String,
    pub b: String,
}

/// The pairs of an input, read a batch at a time; errors name the line.
pub(super) struct PairReader<'a> {
    args: &'a EvalArgs,
    lines: TextLines,
    /// The number of the line last read.
    number: usize,
    /// How the lines read so far were used.
    pub counts: Counts,
}

impl<'a> PairReader<'a> {
    /// Opens `args.pairs`.
    pub fn open(args: &'a EvalArgs) -> anyhow::Result<Self> {
        Ok(PairReader {
            lines: TextLines::open(&args.pairs, args.lossy)?,
            args,
            number: 0,
            counts: Counts::default(),
        })
    }

    /// The next pairs, up to about `bytes` of text (at least one pair); empty at the end.
    pub fn batch(&mut self, bytes: usize) -> anyhow::Result<Vec<LabelledPair>> {
        let mut batch = Vec::new();
        let mut held = 0;
        while held < bytes {
            let Some(pair) = self.next_pair()? else {
                break;
            };
            held += pair.a.len() + pair.b.len();
            batch.push(pair);
        }
        Ok(batch)
    }

    /// The next used pair, counting the lines on the way; `None` at the end.
    fn next_pair(&mut self) -> anyhow::Result<Option<LabelledPair>> {
        let args = self.args;
        while let Some(line) = self.lines.next_line()? {
            self.number += 1;
            if line.trim().is_empty() {
                continue;
            }
            self.counts.lines += 1;
            let place = || format!("{}:{}", args.pairs.display(), self.number);
            let value: Value = serde_json::from_str(&line)
                .map_err(|e| anyhow::anyhow!("{}: not a JSON object: {e}", place()))?;
            let Value::Object(mut object) = value else {
                bail!("{}: not a JSON object", place());
            };
            let label = match object.get(&args.label_field) {
                None => bail!("{}: no field {:?}", place(), args.label_field),
                Some(Value::Null) => {
                    self.counts.null_labels += 1;
                    continue;
                }
                Some(Value::Number(n)) => n.as_f64(),
                Some(Value::String(s)) => s.trim().parse::<f64>().ok(),
                Some(_) => None,
            };
            let Some(label) = label else {
                self.counts.other_labels += 1;
                self.counts.non_numeric_labels += 1;
                continue;
            };
            let class = if args.positive.contains(&label) {
                self.counts.positives += 1;
                Some(Class::Positive)
            } else if args.negative.contains(&label) {
                self.counts.negatives += 1;
                Some(Class::Negative)
            } else {
                self.counts.other_labels += 1;
                None
            };
            let mut take = |field: &str| match object.remove(field) {
                Some(Value::String(s)) => Ok(s),
                Some(_) => bail!("{}: field {field:?} is not a string", place()),
                None => bail!("{}: no field {field:?}", place()),
            };
            let a = take(&args.text_a_field)?;
            let b = take(&args.text_b_field)?;
            return Ok(Some(LabelledPair { class, label, a, b }));
        }
        Ok(None)
    }

    /// The counts, once every line is read: an error if no pair was positive or negative.
    pub fn finish(self, path: &Path) -> anyhow::Result<Counts> {
        let counts = self.counts;
        if counts.positives + counts.negatives == 0 {
            bail!(
                "{}: no pair has a --positive or --negative label ({} lines)",
                path.display(),
                counts.lines
            );
        }
        Ok(counts)
    }
}
