//! `neardup pairs`: every pair of fingerprints within a Hamming distance, or their clusters.
//!
//! Does the job of seomoz's `simhash-find-all`, exactly and faster: it keeps identical
//! fingerprints (each pair of equal lines is reported at distance 0) and reports positions (line
//! indices), so duplicates stay distinguishable.
//!
//! Input: one fingerprint a line, either decimal `u64` or hexadecimal with exactly 16 (64-bit) or
//! 32 (128-bit) digits, or the JSON lines `neardup fingerprint` writes (`{"id", "simhash", ...}`).
//! A file whose first line starts with `{` is read as JSON lines, and its pairs and clusters name
//! documents by their `id`; otherwise a file is read as hexadecimal when its lines are all 16 or
//! all 32 hex digits, as decimal otherwise, and members are named by line index (from 0).
//! `--format` overrides the guess (a 16-digit decimal number could be either).

use std::io::{BufWriter, Read, Write};
use std::path::PathBuf;

use anyhow::{bail, Context};
use neardup_index::{all_pairs, clusters, Design, Fingerprint, Pair, Representative};

use crate::usage::usage;

/// How the fingerprints in the input are written.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum FingerprintFormat {
    /// JSON lines if the first line starts with `{`; else hexadecimal if every line has 16 (or
    /// every line 32) hex digits; else decimal.
    Auto,
    /// Decimal `u64`, one a line.
    Dec,
    /// Hexadecimal, 16 digits (64-bit) or 32 digits (128-bit) a line, all lines alike.
    Hex,
    /// The JSON lines of `neardup fingerprint`: the `simhash` field (hex), named by `id`.
    Jsonl,
}

/// Arguments of `neardup pairs`.
#[derive(Debug, clap::Args)]
pub struct PairsArgs {
    /// Largest Hamming distance of a reported pair.
    #[arg(long, short)]
    pub k: u32,
    /// Use the general design with this many blocks (more than k): C(blocks, k) tables.
    #[arg(long, conflicts_with = "design")]
    pub blocks: Option<u32>,
    /// Use a preset design for 64-bit fingerprints at k ≤ 3: 4x16, 10, 16 or 20 tables. Default:
    /// chosen from the number of fingerprints.
    #[arg(long, value_parser = parse_design)]
    pub design: Option<Design>,
    /// Write clusters ({"cluster", "members", "representative"}) instead of pairs.
    #[arg(long)]
    pub clusters: bool,
    /// How fingerprints are written in the input.
    #[arg(long, value_enum, default_value_t = FingerprintFormat::Auto)]
    pub format: FingerprintFormat,
    /// Input file with one fingerprint a line; `-` or nothing reads standard input.
    pub input: Option<PathBuf>,
}

/// Parses a `--design` value.
fn parse_design(s: &str) -> Result<Design, String> {
    s.parse()
        .map_err(|e: neardup_index::IndexError| e.to_string())
}

/// Runs `neardup pairs`.
pub fn run(args: PairsArgs) -> anyhow::Result<()> {
    let data = read_input(args.input.as_deref())?;
    let lines = split_lines(&data)?;
    let is_jsonl = match args.format {
        FingerprintFormat::Jsonl => true,
        FingerprintFormat::Auto => lines.first().is_some_and(|l| l.starts_with(b"{")),
        FingerprintFormat::Dec | FingerprintFormat::Hex => false,
    };
    if is_jsonl {
        let (ids, simhashes) = parse_jsonl(&lines)?;
        let hex: Vec<&[u8]> = simhashes.iter().map(String::as_bytes).collect();
        return match detect(&hex, FingerprintFormat::Jsonl)? {
            Width::W64(_) => search(parse_all::<u64>(&hex, true)?, &args, &ids),
            Width::W128 => search(parse_all::<u128>(&hex, true)?, &args, &ids),
        };
    }
    let positions: Vec<u32> = (0..u32::try_from(lines.len())?).collect();
    match detect(&lines, args.format)? {
        Width::W64(hex) => search(parse_all::<u64>(&lines, hex)?, &args, &positions),
        Width::W128 => search(parse_all::<u128>(&lines, true)?, &args, &positions),
    }
}

/// One line of `neardup fingerprint`'s output, as far as `pairs` reads it.
#[derive(serde::Deserialize)]
struct FingerprintLine {
    id: String,
    simhash: String,
}

/// The ids and SimHash values (hex) of fingerprint JSON lines.
fn parse_jsonl(lines: &[&[u8]]) -> anyhow::Result<(Vec<String>, Vec<String>)> {
    let mut ids = Vec::with_capacity(lines.len());
    let mut simhashes = Vec::with_capacity(lines.len());
    for (i, line) in lines.iter().enumerate() {
        let parsed: FingerprintLine = serde_json::from_slice(line).with_context(|| {
            format!(
                "line {}: not a fingerprint JSON line ({{\"id\", \"simhash\"}}): {}",
                i + 1,
                shown(line)
            )
        })?;
        ids.push(parsed.id);
        simhashes.push(parsed.simhash);
    }
    Ok((ids, simhashes))
}

/// Reads the whole input: a file, or standard input for `-` or no path.
fn read_input(path: Option<&std::path::Path>) -> anyhow::Result<Vec<u8>> {
    match path {
        Some(p) if p.as_os_str() != "-" => {
            std::fs::read(p).with_context(|| format!("cannot read {}", p.display()))
        }
        _ => {
            let mut data = Vec::new();
            std::io::stdin()
                .lock()
                .read_to_end(&mut data)
                .context("cannot read standard input")?;
            Ok(data)
        }
    }
}

/// The input's lines, trimmed; a missing final newline is fine, an empty line is an error.
fn split_lines(data: &[u8]) -> anyhow::Result<Vec<&[u8]>> {
    let body = data.strip_suffix(b"\n").unwrap_or(data);
    if body.is_empty() {
        return Ok(Vec::new());
    }
    body.split(|&b| b == b'\n')
        .enumerate()
        .map(|(i, line)| {
            let line = line.trim_ascii();
            if line.is_empty() {
                bail!("line {}: empty line, expected a fingerprint", i + 1);
            }
            Ok(line)
        })
        .collect()
}

/// The fingerprint width of the input, and for 64 bits whether it is hexadecimal.
enum Width {
    W64(bool),
    W128,
}

/// Decides how to read the lines (see the module documentation).
fn detect(lines: &[&[u8]], format: FingerprintFormat) -> anyhow::Result<Width> {
    let is_hex = |l: &[u8], len: usize| l.len() == len && l.iter().all(u8::is_ascii_hexdigit);
    let Some(first) = lines.first() else {
        return Ok(Width::W64(false));
    };
    let hex_width = |len: usize| -> anyhow::Result<()> {
        match lines.iter().position(|l| !is_hex(l, len)) {
            None => Ok(()),
            Some(i) => bail!(
                "line {}: expected {len} hex digits like line 1 (mixed widths or formats): {}",
                i + 1,
                shown(lines[i])
            ),
        }
    };
    match format {
        FingerprintFormat::Dec => Ok(Width::W64(false)),
        FingerprintFormat::Hex | FingerprintFormat::Jsonl if is_hex(first, 32) => {
            hex_width(32).map(|()| Width::W128)
        }
        FingerprintFormat::Hex | FingerprintFormat::Jsonl => {
            hex_width(16).map(|()| Width::W64(true))
        }
        FingerprintFormat::Auto if lines.iter().any(|l| is_hex(l, 32)) => {
            hex_width(32).map(|()| Width::W128)
        }
        FingerprintFormat::Auto => Ok(Width::W64(lines.iter().all(|l| is_hex(l, 16)))),
    }
}

/// A line for an error message, cut short.
fn shown(line: &[u8]) -> String {
    let text = String::from_utf8_lossy(&line[..line.len().min(40)]);
    format!("{text:?}")
}

/// Parses every line as a fingerprint of type `F`, hexadecimal or decimal.
fn parse_all<F: Fingerprint>(lines: &[&[u8]], hex: bool) -> anyhow::Result<Vec<F>> {
    lines
        .iter()
        .enumerate()
        .map(|(i, line)| {
            let value = if hex {
                parse_hex(line)
            } else {
                parse_decimal(line)
            };
            value.map(F::from_u128).with_context(|| {
                let form = if hex { "hex" } else { "decimal u64" };
                format!("line {}: not a {form} fingerprint: {}", i + 1, shown(line))
            })
        })
        .collect()
}

/// Parses hexadecimal digits (already checked to be 16 or 32 of them).
fn parse_hex(line: &[u8]) -> Option<u128> {
    line.iter().try_fold(0u128, |acc, &c| {
        let digit = (c as char).to_digit(16)?;
        Some((acc << 4) | u128::from(digit))
    })
}

/// Parses a decimal `u64`.
fn parse_decimal(line: &[u8]) -> Option<u128> {
    let value = line.iter().try_fold(0u64, |acc, &c| {
        let digit = c.checked_sub(b'0').filter(|d| *d <= 9)?;
        acc.checked_mul(10)?.checked_add(u64::from(digit))
    })?;
    Some(u128::from(value))
}

/// One pair of the output: the two members' names (ids or line indices) and their distance.
#[derive(serde::Serialize)]
struct PairLine<'a, N> {
    a: &'a N,
    b: &'a N,
    distance: u32,
}

/// One cluster of the output: its number, its members' names and its representative's.
#[derive(serde::Serialize)]
struct ClusterLine<'a, N> {
    cluster: usize,
    members: Vec<&'a N>,
    representative: &'a N,
}

/// Finds the pairs (or clusters) and writes them as JSON lines to standard output, each member
/// named by `names[index]`.
fn search<F: Fingerprint, N: serde::Serialize>(
    fps: Vec<F>,
    args: &PairsArgs,
    names: &[N],
) -> anyhow::Result<()> {
    let design = match (args.blocks, args.design) {
        (Some(blocks), _) => Design::Blocks { blocks, k: args.k },
        (None, Some(design)) => design,
        (None, None) => Design::for_expected_len(fps.len(), args.k, F::BITS),
    };
    let pairs = all_pairs(&fps, args.k, design)
        .map_err(usage)
        .with_context(|| format!("cannot search at k = {} with design {design}", args.k))?;
    tracing::info!(fingerprints = fps.len(), pairs = pairs.len(), %design, "pairs found");
    let mut out = BufWriter::with_capacity(1 << 16, std::io::stdout().lock());
    if args.clusters {
        write_clusters(&mut out, &pairs, names)?;
    } else {
        for p in &pairs {
            let line = PairLine {
                a: &names[p.a as usize],
                b: &names[p.b as usize],
                distance: p.distance,
            };
            serde_json::to_writer(&mut out, &line)?;
            out.write_all(b"\n")?;
        }
    }
    out.flush()?;
    Ok(())
}

/// Writes one JSON line per cluster of two or more members; the representative is the first.
fn write_clusters<N: serde::Serialize>(
    out: &mut impl Write,
    pairs: &[Pair],
    names: &[N],
) -> anyhow::Result<()> {
    let found = clusters(
        names.len(),
        pairs.iter().map(|p| (p.a, p.b)),
        Representative::FirstSeen,
        false,
    )?;
    for (i, cluster) in found.iter().enumerate() {
        let line = ClusterLine {
            cluster: i,
            members: cluster
                .members
                .iter()
                .map(|&m| &names[m as usize])
                .collect(),
            representative: &names[cluster.representative as usize],
        };
        serde_json::to_writer(&mut *out, &line)?;
        out.write_all(
            b"
",
        )?;
    }
    Ok(())
}
