//! The reference for [`MirrorFinder`]: the in-memory finder it replaced (every page's splits,
//! every prefix's list of paths and a map of votes held at once), and a property test that the
//! finder gives exactly its pairs, in memory and spilled at every step.

use std::collections::HashMap;

use proptest::prelude::*;

use super::*;

/// The in-memory finder: pages, splits, per-prefix lists and votes all held.
struct Reference {
    opts: MirrorOptions,
    prefix_ids: HashMap<String, u32>,
    prefixes: Vec<String>,
    /// Per prefix: (relative path hash, content key) of its pages.
    under: Vec<Vec<(u64, u64)>>,
    pages: Vec<RefPage>,
}

/// A page: key, last segment, segments, and its splits (prefix id, relative path hash).
type RefPage = (u64, u64, usize, Vec<(u32, u64)>);

impl Reference {
    fn new(opts: MirrorOptions) -> Self {
        Reference {
            opts,
            prefix_ids: HashMap::new(),
            prefixes: Vec::new(),
            under: Vec::new(),
            pages: Vec::new(),
        }
    }

    fn add(&mut self, url: &str, content_key: u64) {
        let Ok(key) = canonicalize_with(url, &self.opts.url) else {
            return;
        };
        let split = Split::of(&key, self.opts.max_prefix_depth);
        let mut splits = Vec::new();
        for &(cut, rest) in &split.cuts {
            let prefix = &key[..cut];
            let id = match self.prefix_ids.get(prefix) {
                Some(&id) => id,
                None => {
                    let id = self.prefixes.len() as u32;
                    self.prefix_ids.insert(prefix.to_string(), id);
                    self.prefixes.push(prefix.to_string());
                    self.under.push(Vec::new());
                    id
                }
            };
            self.under[id as usize].push((rest, content_key));
            splits.push((id, rest));
        }
        self.pages
            .push((content_key, split.last_segment, split.segments, splits));
    }

    fn finish(mut self) -> Vec<MirrorPair> {
        let votes = self.votes();
        for list in &mut self.under {
            list.sort_by_key(|&(rest, _)| rest);
            list.dedup_by_key(|&mut (rest, _)| rest);
        }
        let min_votes =
            ((self.opts.min_shared_paths as f64 * self.opts.min_ratio).ceil() as u32).max(1);
        let mut found: HashMap<(&str, &str), MirrorPair> = HashMap::new();
        for ((a, b), count) in votes {
            if count < min_votes {
                continue;
            }
            let (shared, same) = overlap(&self.under[a as usize], &self.under[b as usize]);
            let ratio = same as f64 / shared.max(1) as f64;
            if shared >= self.opts.min_shared_paths && ratio >= self.opts.min_ratio {
                let (a, b) = if self.prefixes[a as usize] > self.prefixes[b as usize] {
                    (b, a)
                } else {
                    (a, b)
                };
                let (a_name, b_name) = (&self.prefixes[a as usize], &self.prefixes[b as usize]);
                found.insert(
                    (a_name, b_name),
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
        reported(&found)
    }

    /// Every pair of pages of a group (same key, same last segment; not too big) votes for the
    /// prefixes at the depths where their relative paths are equal.
    fn votes(&self) -> HashMap<(u32, u32), u32> {
        let mut groups: HashMap<(u64, u64), Vec<usize>> = HashMap::new();
        for (i, page) in self.pages.iter().enumerate() {
            groups.entry((page.0, page.1)).or_default().push(i);
        }
        let mut votes = HashMap::new();
        for group in groups.values() {
            if group.len() < 2 || group.len() > self.opts.max_group_size {
                continue;
            }
            for (n, &x) in group.iter().enumerate() {
                for &y in &group[n + 1..] {
                    let ((_, _, x_segments, xs), (_, _, y_segments, ys)) =
                        (&self.pages[x], &self.pages[y]);
                    for (dx, &(px, rx)) in xs.iter().enumerate() {
                        let Some(dy) = (dx + y_segments).checked_sub(*x_segments) else {
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
        }
        votes
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

/// One page of a generated crawl: a copy of a site's page, possibly edited.
#[derive(Clone, Debug)]
struct Page {
    site: u64,
    copy: usize,
    page: u64,
    edit: Option<u64>,
}

impl Page {
    /// Copies live on a few hosts (several sites can share one) under bases at depths 0 to 2;
    /// pages at depths 0 to 2 below the base; edited pages take one of a few other keys.
    fn url_and_key(&self) -> (String, u64) {
        let host =
            ["h0.org", "www.h1.net", "h2.com", "h3.org"][(self.site as usize + self.copy) % 4];
        let base = ["", "mirror/", "a/b/", "pub/"][self.copy % 4];
        let dir = ["", "docs/", "docs/api/"][self.page as usize % 3];
        let scheme = ["http", "https"][self.copy % 2];
        let url = format!("{scheme}://{host}/{base}{dir}p{}.html", self.page);
        let key = self
            .edit
            .map_or(self.site * 100 + self.page, |e| 10_000 + e);
        (url, key)
    }
}

fn page() -> impl Strategy<Value = Page> {
    (
        0..3u64,
        0..6usize,
        0..14u64,
        prop::option::weighted(0.15, 0..4u64),
    )
        .prop_map(|(site, copy, page, edit)| Page {
            site,
            copy,
            page,
            edit,
        })
}

fn options() -> impl Strategy<Value = MirrorOptions> {
    (
        1..7usize,
        prop::sample::select(vec![0.5, 0.8, 1.0]),
        0..4usize,
        2..12usize,
    )
        .prop_map(
            |(min_shared_paths, min_ratio, max_prefix_depth, max_group_size)| MirrorOptions {
                min_shared_paths,
                min_ratio,
                max_prefix_depth,
                max_group_size,
                ..MirrorOptions::default()
            },
        )
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]

    /// Mirrors at several depths, a page on more hosts than `max_group_size` (the same
    /// `index.html`), pages without a shared path, a bad URL: the same pairs as the reference,
    /// with everything in memory and with every record spilled (runs of 16 records, merged in
    /// passes), and nothing left in the spill folder.
    #[test]
    fn the_same_pairs_as_the_in_memory_reference(
        pages in prop::collection::vec(page(), 0..400),
        common in 0..16usize,
        opts in options(),
    ) {
        let mut crawl: Vec<(String, u64)> = pages.iter().map(Page::url_and_key).collect();
        crawl.extend((0..common).map(|i| (format!("http://x{i}.net/index.html"), 7)));
        crawl.extend((0..5).map(|i| (format!("http://lone.org/only/{i}.html"), 50_000 + i)));
        crawl.push(("not a url".into(), 1));
        let mut reference = Reference::new(opts.clone());
        for (url, key) in &crawl {
            reference.add(url, *key);
        }
        let expected = reference.finish();
        let dir = tempfile::tempdir().unwrap();
        for share in [u64::MAX >> 8, 0] {
            let mut finder = MirrorFinder::with_share(opts.clone(), dir.path(), share);
            for (url, key) in &crawl {
                let _ = finder.add(url, *key);
            }
            let found = finder.finish().unwrap();
            prop_assert_eq!(&found.pairs, &expected);
            // Runs of 16 records: more than 20 pages spill.
            if share > 0 || crawl.len() > 20 {
                prop_assert_eq!(found.bytes_spilled > 0, share == 0);
            }
        }
        prop_assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 0);
    }
}

/// A crawl large enough for merges in passes (more than 64 runs of each kind): the same pairs.
#[test]
fn many_runs_merge_to_the_same_pairs() {
    let crawl: Vec<(String, u64)> = (0..3000u64)
        .map(|i| {
            Page {
                site: i % 3,
                copy: (i / 3 % 6) as usize,
                page: i / 18 % 40,
                edit: (i % 11 == 0).then_some(i % 4),
            }
            .url_and_key()
        })
        .collect();
    let opts = MirrorOptions::default();
    let mut reference = Reference::new(opts.clone());
    for (url, key) in &crawl {
        reference.add(url, *key);
    }
    let expected = reference.finish();
    assert!(!expected.is_empty());
    let dir = tempfile::tempdir().unwrap();
    let mut finder = MirrorFinder::with_share(opts, dir.path(), 0);
    for (url, key) in &crawl {
        finder.add(url, *key).unwrap();
    }
    let found = finder.finish().unwrap();
    assert_eq!(found.pairs, expected);
    assert!(
        found.bytes_spilled > 64 * 16 * 24,
        "{}",
        found.bytes_spilled
    );
}
