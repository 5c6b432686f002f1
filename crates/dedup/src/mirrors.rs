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
//! # Method (built for millions of URLs)
//!
//! 1. Each URL is canonicalised ([`neardup_ingest::url`]) and split into a prefix
//!    (the host plus up to [`MirrorOptions::max_prefix_depth`] leading path
//!    segments) and the rest, the relative path, at every possible depth.
//! 2. Candidates come from co-occurrence only: pages are grouped by (content
//!    key, last path segment); within a group, each pair of pages votes for
//!    the prefix pairs that align them (`a.org/docs/x.html` and
//!    `b.net/mirror/docs/x.html` vote for `a.org/docs ~ b.net/mirror/docs`
//!    and `a.org ~ b.net/mirror`). Groups larger than
//!    [`MirrorOptions::max_group_size`] (the same empty or error page on
//!    every host) are not evidence and are skipped.
//! 3. Each candidate with enough votes is verified exactly: a merge of the two
//!    prefixes' sorted relative paths counts the shared paths and those with
//!    the same key.
//! 4. A pair implied by a more general reported pair with the same alignment
//!    (`a.org/docs ~ b.net/mirror/docs` by `a.org ~ b.net/mirror`) is left out.
//!
//! Relative paths are compared by a 64-bit hash; prefixes are interned.

use neardup_core::digest::Digest;
use neardup_ingest::url::{canonicalize_with, UrlError, UrlOptions};
use std::collections::HashMap;
use std::hash::{DefaultHasher, Hash, Hasher};

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
/// mirrors with [`MirrorFinder::finish`].
pub struct MirrorFinder {
    opts: MirrorOptions,
    prefix_ids: HashMap<String, u32>,
    prefixes: Vec<String>,
    /// Per prefix: (relative path hash, content key) of its pages.
    under: Vec<Vec<(u64, u64)>>,
    pages: Vec<Page>,
    /// Per page and depth: (prefix id, relative path hash); see `Page`.
    splits: Vec<(u32, u64)>,
}

/// One page: its key, its number of path segments, and where its splits
/// (one per prefix depth) are in `MirrorFinder::splits`.
struct Page {
    key: u64,
    last_segment: u64,
    segments: u32,
    first_split: u32,
    splits: u32,
}

impl MirrorFinder {
    /// An empty finder.
    pub fn new(opts: MirrorOptions) -> Self {
        MirrorFinder {
            opts,
            prefix_ids: HashMap::new(),
            prefixes: Vec::new(),
            under: Vec::new(),
            pages: Vec::new(),
            splits: Vec::new(),
        }
    }

    /// Adds a page. A URL that cannot be canonicalised is an error (and
    /// ignored).
    pub fn add(&mut self, url: &str, content_key: u64) -> Result<(), UrlError> {
        let key = canonicalize_with(url, &self.opts.url)?;
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
        let depths = segments.min(self.opts.max_prefix_depth + 1);
        let first_split = self.splits.len();
        // Prefixes end at the host, then at the `/` after each segment.
        let cuts = std::iter::once(host_end).chain(slashes.iter().skip(1).copied());
        for cut in cuts.take(depths) {
            let prefix = &key[..cut];
            let rest = hash(key.get(cut + 1..).unwrap_or_default());
            let id = self.intern(prefix);
            self.under[id as usize].push((rest, content_key));
            self.splits.push((id, rest));
        }
        let last = slashes.last().map_or(key.len(), |&i| i + 1);
        self.pages.push(Page {
            key: content_key,
            last_segment: hash(&key[last.min(key.len())..]),
            segments: segments as u32,
            first_split: first_split as u32,
            splits: depths as u32,
        });
        Ok(())
    }

    fn intern(&mut self, prefix: &str) -> u32 {
        if let Some(&id) = self.prefix_ids.get(prefix) {
            return id;
        }
        let id = self.prefixes.len() as u32;
        self.prefix_ids.insert(prefix.to_string(), id);
        self.prefixes.push(prefix.to_string());
        self.under.push(Vec::new());
        id
    }

    /// The mirror pairs, most same-content paths first (then by name).
    pub fn finish(mut self) -> Vec<MirrorPair> {
        let votes = self.votes();
        for list in &mut self.under {
            list.sort_by_key(|&(rest, _)| rest);
            list.dedup_by_key(|&mut (rest, _)| rest);
        }
        let min_votes =
            ((self.opts.min_shared_paths as f64 * self.opts.min_ratio).ceil() as u32).max(1);
        let mut found: HashMap<(u32, u32), MirrorPair> = HashMap::new();
        for ((a, b), count) in votes {
            if count < min_votes {
                continue;
            }
            let (shared, same) = overlap(&self.under[a as usize], &self.under[b as usize]);
            let ratio = same as f64 / shared.max(1) as f64;
            if shared >= self.opts.min_shared_paths && ratio >= self.opts.min_ratio {
                let (a_name, b_name) = (&self.prefixes[a as usize], &self.prefixes[b as usize]);
                let flip = a_name > b_name;
                let ((a, a_name), (b, b_name)) = if flip {
                    ((b, b_name), (a, a_name))
                } else {
                    ((a, a_name), (b, b_name))
                };
                found.insert(
                    (a, b),
                    MirrorPair {
                        a: a_name.clone(),
                        b: b_name.clone(),
                        shared_paths: shared,
                        same_content: same,
                        ratio,
                        a_paths: self.under[a as usize].len(),
                        b_paths: self.under[b as usize].len(),
                    },
                );
            }
        }
        let names: HashMap<(&str, &str), ()> = found
            .values()
            .map(|p| ((p.a.as_str(), p.b.as_str()), ()))
            .collect();
        let mut pairs: Vec<MirrorPair> = found
            .values()
            .filter(|p| !implied(&p.a, &p.b, &names))
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

    /// Votes of page pairs (same key, same last segment) for prefix pairs.
    fn votes(&self) -> HashMap<(u32, u32), u32> {
        let mut order: Vec<u32> = (0..self.pages.len() as u32).collect();
        order.sort_by_key(|&i| {
            let p = &self.pages[i as usize];
            (p.key, p.last_segment)
        });
        let mut votes: HashMap<(u32, u32), u32> = HashMap::new();
        let group_of = |i: &u32| {
            let p = &self.pages[*i as usize];
            (p.key, p.last_segment)
        };
        for group in order.chunk_by(|x, y| group_of(x) == group_of(y)) {
            if group.len() < 2 || group.len() > self.opts.max_group_size {
                continue;
            }
            for (n, &x) in group.iter().enumerate() {
                for &y in &group[n + 1..] {
                    self.vote(&self.pages[x as usize], &self.pages[y as usize], &mut votes);
                }
            }
        }
        votes
    }

    /// Every alignment of two pages with the same content: depths where
    /// their relative paths are equal.
    fn vote(&self, x: &Page, y: &Page, votes: &mut HashMap<(u32, u32), u32>) {
        let splits =
            |p: &Page| &self.splits[p.first_split as usize..(p.first_split + p.splits) as usize];
        let (xs, ys) = (splits(x), splits(y));
        for (dx, &(px, rx)) in xs.iter().enumerate() {
            // The same number of trailing segments on both sides.
            let Some(dy) = (dx + y.segments as usize).checked_sub(x.segments as usize) else {
                continue;
            };
            let Some(&(py, ry)) = ys.get(dy) else {
                continue;
            };
            if rx == ry && px != py {
                *votes.entry((px.min(py), px.max(py))).or_insert(0) += 1;
            }
        }
    }
}

/// (shared relative paths, shared with the same key) of two sorted lists.
fn overlap(a: &[(u64, u64)], b: &[(u64, u64)]) -> (usize, usize) {
    let (mut i, mut j, mut shared, mut same) = (0, 0, 0, 0);
    while i < a.len() && j < b.len() {
        match a[i].0.cmp(&b[j].0) {
            std::cmp::Ordering::Less => i += 1,
            std::cmp::Ordering::Greater => j += 1,
            std::cmp::Ordering::Equal => {
                shared += 1;
                same += usize::from(a[i].1 == b[j].1);
                i += 1;
                j += 1;
            }
        }
    }
    (shared, same)
}

/// Whether `a ~ b` follows from a reported pair of shorter prefixes with the
/// same alignment (`a = a'/s`, `b = b'/s`).
fn implied(a: &str, b: &str, found: &HashMap<(&str, &str), ()>) -> bool {
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

/// Finds mirrors among `(url, content_key)` pairs at once; URLs that cannot
/// be canonicalised are ignored.
pub fn find_mirrors<I, S>(pages: I, opts: &MirrorOptions) -> Vec<MirrorPair>
where
    I: IntoIterator<Item = (S, u64)>,
    S: AsRef<str>,
{
    let mut finder = MirrorFinder::new(opts.clone());
    for (url, key) in pages {
        // A bad URL only means one page less.
        let _ = finder.add(url.as_ref(), key);
    }
    finder.finish()
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
        let pairs = find_mirrors(pages, &MirrorOptions::default());
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
        assert!(find_mirrors(pages.clone(), &strict).is_empty());
        let loose = MirrorOptions {
            min_ratio: 0.7,
            ..MirrorOptions::default()
        };
        assert_eq!(find_mirrors(pages, &loose).len(), 1);
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
        assert!(find_mirrors(pages, &opts).is_empty());
    }
}
