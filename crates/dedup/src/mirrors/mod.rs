//! Mirror detection: host (or host/path-prefix) pairs that serve the same
//! content under the same relative paths.
//!
//! Also [`same_content_urls`]: the simpler case of one page under several
//! URLs (`espn.go.com` and `www.espn.com`).
//!
//! From the lecture: `Host1/α` and `Host2/β` are mirrors iff for most paths
//! `p` such that `Host1/α/p` exists, `Host2/β/p` exists too with (near)
//! identical content, and vice versa. This module is pure logic: the caller
//! gives `(url, content_key)` pairs, where the key is anything that is equal
//! for equal content (an exact digest, or a SimHash for near-identity), and
//! gets [`MirrorPair`]s back.
//!
//! # Method (built for millions of URLs, within a memory budget)
//!
//! 1. Each URL is canonicalised ([`neardup_ingest::url`]) and split into a prefix
//!    (the host plus up to [`MirrorOptions::max_prefix_depth`] leading path
//!    segments) and the rest, the relative path, at every possible depth. Each
//!    split is written twice, as a vote record and as a path record, to sorted
//!    runs ([`neardup_index::Runs`]: in memory while they fit a share of the
//!    [`Budget`], temporary files beyond it, merged in passes).
//! 2. Candidates come from co-occurrence only: pages are grouped by (content
//!    key, last path segment); within a group, each pair of pages votes for
//!    the prefix pairs that align them (`a.org/docs/x.html` and
//!    `b.net/mirror/docs/x.html` vote for `a.org/docs ~ b.net/mirror/docs`
//!    and `a.org ~ b.net/mirror`). The vote records come sorted by group, so
//!    one group is held at a time. Groups larger than
//!    [`MirrorOptions::max_group_size`] (the same empty or error page on
//!    every host) are not evidence and are skipped. Votes (prefix pairs) go to
//!    sorted runs too and are counted by a merge.
//! 3. Each candidate with enough votes is verified exactly: a join of the path
//!    records, sorted by (relative path, prefix), counts for every candidate the
//!    paths both prefixes have and those with the same key (and every prefix's
//!    paths).
//! 4. A pair implied by a more general reported pair with the same alignment
//!    (`a.org/docs ~ b.net/mirror/docs` by `a.org ~ b.net/mirror`) is left out.
//!
//! Relative paths are compared by a 64-bit hash; prefixes are interned. What
//! is held in memory whatever the input (the prefixes, the candidates) is listed
//! at [`MirrorFinder`].

mod prefixes;
mod records;
#[cfg(test)]
mod reference;
mod verify;
mod votes;

use std::collections::HashMap;
use std::hash::{DefaultHasher, Hash, Hasher};

use neardup_core::digest::Digest;
use neardup_index::{Runs, SpillDir};
use neardup_ingest::url::{canonicalize_with, UrlError, UrlOptions};

use crate::budget::Budget;
use crate::error::DedupError;
use prefixes::Prefixes;
use records::{pair_of, PathRecord, VoteRecord};

/// Thresholds and limits of mirror detection.
#[derive(Clone, Debug, PartialEq)]
pub struct MirrorOptions {
    /// Fewest paths the two prefixes must share (default 5).
    pub min_shared_paths: usize,
    /// Smallest share of the shared paths with the same content (default
    /// 0.8).
    pub min_ratio: f64,
    /// Most path segments in a prefix besides the host (default 2: `host`,
    /// `host/a`, `host/a/b`).
    pub max_prefix_depth: usize,
    /// Content keys shared by more pages than this (with the same last
    /// segment) cast no votes (default 1000).
    pub max_group_size: usize,
    /// How URLs are canonicalised before splitting (default
    /// [`UrlOptions::default`]: no scheme, no `www.`, ...).
    pub url: UrlOptions,
}

impl Default for MirrorOptions {
    fn default() -> Self {
        MirrorOptions {
            min_shared_paths: 5,
            min_ratio: 0.8,
            max_prefix_depth: 2,
            max_group_size: 1000,
            url: UrlOptions::default(),
        }
    }
}

/// Two prefixes (`host` or `host/path`) that mirror each other.
#[derive(Clone, Debug, PartialEq, serde::Serialize)]
pub struct MirrorPair {
    /// The prefix that sorts first.
    pub a: String,
    /// The other prefix.
    pub b: String,
    /// Relative paths present under both.
    pub shared_paths: usize,
    /// Shared paths whose pages have the same content key.
    pub same_content: usize,
    /// `same_content / shared_paths`.
    pub ratio: f64,
    /// Relative paths under `a` (coverage: `shared_paths / a_paths`).
    pub a_paths: usize,
    /// Relative paths under `b`.
    pub b_paths: usize,
}

/// Collects pages one at a time (e.g. while reading a crawl), then finds
/// mirrors with [`MirrorFinder::finish`], within a [`Budget`].
///
/// Held in memory whatever the input: the interned prefixes (each prefix's text once and 8
/// bytes where it ends, and a map from its hash to its id), then per prefix its count of paths (4 bytes) and whether it is in a candidate pair
/// (1 byte), and the candidate pairs with their counts (24 bytes each). What
/// grows with the pages goes to sorted runs, held while they fit a share of the budget and
/// written to temporary files in [`Budget::spill_dir`] beyond it (anonymous files: nothing is
/// left behind however the run ends): per split of a page (one per prefix depth) a vote
/// record (40 bytes in memory, 33 on disk) and a path record (24 bytes), and per vote 8
/// bytes. Each of the three has a quarter of the budget.
pub struct MirrorFinder {
    opts: MirrorOptions,
    prefixes: Prefixes,
    spill: SpillDir,
    /// Bytes of memory the votes may hold before they spill.
    vote_share: u64,
    /// The splits of every page, for the votes.
    vote_records: Runs<VoteRecord>,
    /// The splits of every page, for verification.
    path_records: Runs<PathRecord>,
    vote_batch: Vec<VoteRecord>,
    path_batch: Vec<PathRecord>,
    pages: u32,
}

/// What [`MirrorFinder::add`] can fail with.
#[derive(Debug, thiserror::Error)]
pub enum MirrorError {
    /// The URL cannot be canonicalised: the page is ignored, the finder can go on.
    #[error(transparent)]
    Url(#[from] UrlError),
    /// Spilling failed, or there are too many pages or prefixes: the finder cannot go on.
    #[error(transparent)]
    Finder(#[from] DedupError),
}

/// The mirrors found, and what it took.
#[derive(Clone, Debug, PartialEq)]
pub struct Mirrors {
    /// The mirror pairs, most same-content paths first (then by name).
    pub pairs: Vec<MirrorPair>,
    /// Bytes written to temporary files (0 when everything fitted the budget).
    pub bytes_spilled: u64,
}

impl MirrorFinder {
    /// An empty finder within `budget`.
    pub fn new(opts: MirrorOptions, budget: &Budget) -> Self {
        Self::with_share(opts, &budget.spill_dir(), budget.memory / 4)
    }

    /// An empty finder holding up to `share` bytes of each kind of record (at least a few
    /// records: 0 spills nearly everything) before it spills to `dir`.
    fn with_share(opts: MirrorOptions, dir: &std::path::Path, share: u64) -> Self {
        let spill = SpillDir::new(dir);
        let vote_records = Runs::new(spill.clone(), share);
        let path_records = Runs::new(spill.clone(), share);
        MirrorFinder {
            opts,
            prefixes: Prefixes::default(),
            vote_batch: Vec::with_capacity(vote_records.batch()),
            path_batch: Vec::with_capacity(path_records.batch()),
            vote_records,
            path_records,
            spill,
            vote_share: share,
            pages: 0,
        }
    }

    /// Adds a page. A URL that cannot be canonicalised is a [`MirrorError::Url`] (and the page
    /// is ignored); a failure to spill is a [`MirrorError::Finder`].
    pub fn add(&mut self, url: &str, content_key: u64) -> Result<(), MirrorError> {
        let key = canonicalize_with(url, &self.opts.url)?;
        let split = Split::of(&key, self.opts.max_prefix_depth);
        let page = self.pages;
        self.pages = page.checked_add(1).ok_or_else(|| {
            DedupError::InvalidOption(format!("mirror detection takes at most {} pages", u32::MAX))
        })?;
        for (depth, &(cut, rest)) in split.cuts.iter().enumerate() {
            let prefix = self.prefixes.id(&key[..cut])?;
            self.vote_batch.push(VoteRecord {
                key: content_key,
                last_segment: split.last_segment,
                // The same number on both sides: pages align at equal relative paths only.
                tail: (split.segments - depth) as u32,
                rest,
                prefix,
                first: depth == 0,
            });
            self.path_batch.push(PathRecord {
                rest,
                prefix,
                page,
                key: content_key,
            });
        }
        if self.vote_batch.len() >= self.vote_records.batch() {
            self.flush()?;
        }
        Ok(())
    }

    /// Hands the batches of records to their runs.
    fn flush(&mut self) -> Result<(), DedupError> {
        self.vote_records.add(&mut self.vote_batch)?;
        self.path_records.add(&mut self.path_batch)?;
        Ok(())
    }

    /// The mirror pairs, most same-content paths first (then by name): the votes counted by
    /// a merge of their sorted runs, then every candidate verified by a join on the relative
    /// path.
    pub fn finish(mut self) -> Result<Mirrors, DedupError> {
        self.flush()?;
        let opts = &self.opts;
        let min_votes = ((opts.min_shared_paths as f64 * opts.min_ratio).ceil() as u64).max(1);
        let candidates = votes::candidates(
            self.vote_records.into_sorted()?,
            opts.max_group_size,
            opts.max_prefix_depth + 1,
            min_votes,
            &self.spill,
            self.vote_share,
        )?;
        let names = &self.prefixes;
        let verified = verify::verify(self.path_records.into_sorted()?, &candidates, names.len())?;
        let mut found: HashMap<(&str, &str), MirrorPair> = HashMap::new();
        for (&word, &(shared, same)) in candidates.iter().zip(&verified.overlaps) {
            let ratio = same as f64 / shared.max(1) as f64;
            if shared < opts.min_shared_paths || ratio < opts.min_ratio {
                continue;
            }
            let (a, b) = pair_of(word);
            let (a, b) = if names.name(a) > names.name(b) {
                (b, a)
            } else {
                (a, b)
            };
            let (a_name, b_name) = (names.name(a), names.name(b));
            found.insert(
                (a_name, b_name),
                MirrorPair {
                    a: a_name.to_string(),
                    b: b_name.to_string(),
                    shared_paths: shared,
                    same_content: same,
                    ratio,
                    a_paths: verified.paths[a as usize] as usize,
                    b_paths: verified.paths[b as usize] as usize,
                },
            );
        }
        Ok(Mirrors {
            pairs: reported(&found),
            bytes_spilled: self.spill.written(),
        })
    }
}

/// A canonical URL split at every prefix depth.
struct Split {
    /// Path segments (at least 1).
    segments: usize,
    /// The hash of the last segment.
    last_segment: u64,
    /// Per depth (the host, then up to `max_prefix_depth` segments more): where the prefix
    /// ends in the URL, and the hash of the relative path after it.
    cuts: Vec<(usize, u64)>,
}

impl Split {
    /// Splits `key`, a canonical URL.
    fn of(key: &str, max_prefix_depth: usize) -> Split {
        let host_start = key.find("://").map_or(0, |i| i + 3);
        let host_end = key[host_start..]
            .find('/')
            .map_or(key.len(), |i| host_start + i);
        let path_end = key[host_end..]
            .find(['?', '#'])
            .map_or(key.len(), |i| host_end + i);
        // Segment boundaries: the `/` before each segment.
        let slashes: Vec<usize> = key[host_end..path_end]
            .match_indices('/')
            .map(|(i, _)| host_end + i)
            .collect();
        let segments = slashes.len().max(1);
        let depths = segments.min(max_prefix_depth + 1);
        let last = slashes.last().map_or(key.len(), |&i| i + 1);
        // Prefixes end at the host, then at the `/` after each segment.
        let cuts = std::iter::once(host_end).chain(slashes.iter().skip(1).copied());
        Split {
            segments,
            last_segment: hash(&key[last.min(key.len())..]),
            cuts: cuts
                .take(depths)
                .map(|cut| (cut, hash(key.get(cut + 1..).unwrap_or_default())))
                .collect(),
        }
    }
}

/// The pairs `found` (by names) that are not implied by another, most same-content paths
/// first (then by name).
fn reported(found: &HashMap<(&str, &str), MirrorPair>) -> Vec<MirrorPair> {
    let mut pairs: Vec<MirrorPair> = found
        .values()
        .filter(|p| !implied(&p.a, &p.b, found))
        .cloned()
        .collect();
    pairs.sort_by(|x, y| {
        y.same_content
            .cmp(&x.same_content)
            .then_with(|| x.a.cmp(&y.a))
            .then_with(|| x.b.cmp(&y.b))
    });
    pairs
}

/// Whether `a ~ b` follows from a reported pair of shorter prefixes with the
/// same alignment (`a = a'/s`, `b = b'/s`).
fn implied(a: &str, b: &str, found: &HashMap<(&str, &str), MirrorPair>) -> bool {
    let (mut a, mut b) = (a, b);
    while let (Some((a_parent, a_last)), Some((b_parent, b_last))) =
        (a.rsplit_once('/'), b.rsplit_once('/'))
    {
        if a_last != b_last {
            return false;
        }
        let key = if a_parent <= b_parent {
            (a_parent, b_parent)
        } else {
            (b_parent, a_parent)
        };
        if found.contains_key(&key) {
            return true;
        }
        (a, b) = (a_parent, b_parent);
    }
    false
}

fn hash(s: &str) -> u64 {
    let mut hasher = DefaultHasher::new();
    s.hash(&mut hasher);
    hasher.finish()
}

/// The content key of a page whose normalised text has this digest: pages with equal texts
/// have equal keys (the digest's first 8 bytes).
pub fn content_key(digest: &Digest) -> u64 {
    let mut key = [0u8; 8];
    key.copy_from_slice(&digest.as_bytes()[..8]);
    u64::from_le_bytes(key)
}

/// Finds mirrors among `(url, content_key)` pairs at once, within `budget`; URLs that cannot
/// be canonicalised are ignored.
pub fn find_mirrors<I, S>(
    pages: I,
    opts: &MirrorOptions,
    budget: &Budget,
) -> Result<Vec<MirrorPair>, DedupError>
where
    I: IntoIterator<Item = (S, u64)>,
    S: AsRef<str>,
{
    let mut finder = MirrorFinder::new(opts.clone(), budget);
    for (url, key) in pages {
        match finder.add(url.as_ref(), key) {
            // A bad URL only means one page less.
            Ok(()) | Err(MirrorError::Url(_)) => {}
            Err(MirrorError::Finder(e)) => return Err(e),
        }
    }
    Ok(finder.finish()?.pairs)
}

/// Distinct canonical URLs that serve the same content.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize)]
pub struct UrlGroup {
    /// The content key they share.
    pub content_key: u64,
    /// The canonical URLs, sorted.
    pub urls: Vec<String>,
}

/// Groups `(url, content_key)` pairs by key and returns the keys reached by
/// two or more distinct canonical URLs (the same page under different URLs;
/// spellings of one URL, like `http://www.a.org/` and `https://a.org`, count
/// once). Sorted by decreasing group size, then by first URL. URLs that
/// cannot be canonicalised are ignored.
pub fn same_content_urls<I, S>(pages: I, opts: &UrlOptions) -> Vec<UrlGroup>
where
    I: IntoIterator<Item = (S, u64)>,
    S: AsRef<str>,
{
    let mut by_key: HashMap<u64, Vec<String>> = HashMap::new();
    for (url, key) in pages {
        if let Ok(canonical) = canonicalize_with(url.as_ref(), opts) {
            by_key.entry(key).or_default().push(canonical);
        }
    }
    let mut groups: Vec<UrlGroup> = by_key
        .into_iter()
        .filter_map(|(content_key, mut urls)| {
            urls.sort();
            urls.dedup();
            (urls.len() > 1).then_some(UrlGroup { content_key, urls })
        })
        .collect();
    groups.sort_by(|x, y| {
        y.urls
            .len()
            .cmp(&x.urls.len())
            .then_with(|| x.urls.cmp(&y.urls))
    });
    groups
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Ten pages under a path, keys from `key(i)`.
    fn site(base: &str, key: impl Fn(u64) -> u64) -> Vec<(String, u64)> {
        (0..10)
            .map(|i| (format!("{base}/page{i}.html"), key(i)))
            .collect()
    }

    #[test]
    fn two_host_mirror_and_a_path_prefix_mirror() {
        let mut pages = site("http://apache.mesi.com.ar/dist", |i| i);
        pages.extend(site("https://www.apache.planetmirror.com.au/dist", |i| {
            if i == 3 {
                99
            } else {
                i
            }
        }));
        pages.extend(site("http://docs.a.org/manual", |i| 100 + i));
        pages.extend(site("http://b.net/mirror/a/manual", |i| 100 + i));
        // Same content under different paths: not a mirror.
        pages.extend((0..10).map(|i| (format!("http://other.org/x{i}"), i)));
        // Unrelated host sharing paths with different content.
        pages.extend(site("http://c.org/dist", |i| 1000 + i));
        let pairs = find_mirrors(pages, &MirrorOptions::default(), &Budget::default()).unwrap();
        let got: Vec<(&str, &str, usize, usize)> = pairs
            .iter()
            .map(|p| (p.a.as_str(), p.b.as_str(), p.shared_paths, p.same_content))
            .collect();
        assert_eq!(
            got,
            [
                ("b.net/mirror/a", "docs.a.org", 10, 10),
                ("apache.mesi.com.ar", "apache.planetmirror.com.au", 10, 9),
            ]
        );
        assert!((pairs[1].ratio - 0.9).abs() < 1e-9);
        assert_eq!((pairs[1].a_paths, pairs[1].b_paths), (10, 10));
    }

    #[test]
    fn thresholds_apply() {
        let mut pages = site("http://a.org", |i| i);
        pages.extend(site("http://b.org", |i| if i < 7 { i } else { 50 + i }));
        let strict = MirrorOptions::default();
        assert!(find_mirrors(pages.clone(), &strict, &Budget::default())
            .unwrap()
            .is_empty());
        let loose = MirrorOptions {
            min_ratio: 0.7,
            ..MirrorOptions::default()
        };
        assert_eq!(
            find_mirrors(pages, &loose, &Budget::default())
                .unwrap()
                .len(),
            1
        );
    }

    #[test]
    fn one_page_under_several_urls() {
        let pages = [
            ("http://espn.go.com", 1),
            ("http://www.espn.com/", 1),
            ("https://espn.com", 1),
            ("http://a.org/x", 2),
            ("http://a.org/x#top", 2),
            ("http://b.org/y", 3),
            ("not a url at all", 3),
        ];
        let groups = same_content_urls(pages, &UrlOptions::default());
        assert_eq!(
            groups,
            [UrlGroup {
                content_key: 1,
                urls: vec!["espn.com/".into(), "espn.go.com/".into()]
            }]
        );
    }

    #[test]
    fn big_groups_cast_no_votes() {
        // Every host serves the same page at /: no evidence of mirroring.
        let pages: Vec<(String, u64)> = (0..20).map(|h| (format!("http://h{h}.org/"), 7)).collect();
        let opts = MirrorOptions {
            min_shared_paths: 1,
            max_group_size: 10,
            ..MirrorOptions::default()
        };
        assert!(find_mirrors(pages, &opts, &Budget::default())
            .unwrap()
            .is_empty());
    }
}
