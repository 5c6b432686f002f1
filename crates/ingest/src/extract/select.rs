//! Choosing the main content from a scan: which element records to keep
//! (by semantics, else by text density), and which of their blocks.

use super::labels;
use super::scan::{Block, Elem, Parsed};
use super::tags::flag::*;
use super::ExtractOptions;

/// A furniture-flagged element holding at least this share of the page's
/// text is a page wrapper misjudged by its class, and is kept.
const WRAPPER_SHARE: f64 = 0.9;

/// An element flagged by a medium or weak class word only (`SOFT`) holding
/// at least this share of the page's text is a misjudged wrapper.
const SOFT_WRAPPER_SHARE: f64 = 0.3;

/// A `form` holding at least this share of the text of its nearest `main`
/// or `article` (or of the page) wraps the content and is kept.
const FORM_SHARE: f64 = 0.5;

/// A content-named element holding at least this share of the page's text
/// keeps its furniture-named ancestors.
const POSITIVE_SHARE: f64 = 0.3;

/// An `article` holding at most this share of the page's text is a teaser
/// card (in a "related stories" list), not the content: it does not make its
/// furniture-named ancestors wrappers.
const TEASER_SHARE: f64 = 0.02;

/// Share of the text of `main` an `article` inside it must hold to be taken
/// as the content instead.
const ARTICLE_IN_MAIN: f64 = 0.6;

/// Fewest bytes of text of a lead: a sibling before the best container
/// taken with it.
const LEAD_MIN: usize = 80;

/// Most link text a lead may have, as a share of its text.
const LEAD_LINK_DENSITY: f64 = 0.25;

/// How much more a content-named container (`post-body`) scores.
const POSITIVE_BONUS: f64 = 2.0;

/// Fewest bytes of a paragraph of prose (see `prose`): one next to the
/// chosen content joins it, and the content ends with its last one.
const PROSE_MIN: usize = 100;

/// Most link text a paragraph of prose has, as a share of its text.
const PROSE_LINK_DENSITY: f64 = 0.2;

/// Lines after the content's last paragraph of prose shorter than this
/// (bytes) are dropped.
const TAIL_LINE: usize = 40;

/// Most such lines that are dropped: more are the content's own (the items
/// of a reference page); on trafilatura's set any cap from 6 to 15 scores
/// alike.
const TAIL_LINES: usize = 8;

/// Most blocks (short or linky) between the chosen content and a block of
/// prose that joins it.
const EXTEND_GAP: usize = 2;

/// A main text shorter than this (bytes) is checked against the densest
/// prose found without judging classes (see `main_text`).
const SHORT_TEXT: usize = 300;

/// How many times longer that prose must be to replace a short main text.
const SHORT_TEXT_FACTOR: usize = 2;

/// Blocks shorter than this (bytes) do not count as paragraphs when scoring:
/// Readability's 25 characters, counted in bytes (so about 25 characters
/// of Cyrillic, Greek or Arabic, 17 of CJK, and a short line of Latin
/// script). On trafilatura's set every value from 35 to 80 scores alike
/// (F1 0.931–0.932, both halves), 25 scores 0.930.
const MIN_PARAGRAPH: usize = 50;

/// The main text of a parsed page: selected blocks joined by newlines.
pub(super) fn main_text(parsed: &Parsed, opts: &ExtractOptions) -> String {
    let judged = Judged::new(parsed, opts);
    let out = judged.join(&judged.roots(), true);
    if out.is_empty() {
        // A page of links only (a redirect notice, a table of contents):
        // its links are its content.
        return judged.join(&[0], false);
    }
    if out.len() < SHORT_TEXT && (opts.drop_boilerplate || opts.prefer_semantic) {
        // So little text is more often a misjudged page (a post in a
        // `modal-enabled` box, an article's sections classed `--ads`) than a
        // short one: the densest prose without judging classes, if it says
        // much more and in paragraphs, is the content. Short lines alone (a
        // help box, a menu) would make every short page of a site alike.
        let plain = ExtractOptions {
            drop_boilerplate: false,
            prefer_semantic: false,
            ..opts.clone()
        };
        let alternative = main_text(parsed, &plain);
        let has_prose = alternative.split('\n').any(|line| line.len() >= PROSE_MIN);
        if has_prose && alternative.len() > SHORT_TEXT_FACTOR * out.len() {
            return alternative;
        }
    }
    out
}

/// Text per subtree, before any judgement.
fn subtree_text(parsed: &Parsed) -> Vec<usize> {
    let elems = &parsed.elems;
    let mut all = vec![0usize; elems.len()];
    for block in &parsed.blocks {
        all[block.owner] += len(block);
    }
    for e in (1..elems.len()).rev() {
        all[elems[e].parent] += all[e];
    }
    all
}

/// Elements holding the page's `main`, `article` or a content-named element
/// with much of the text (`all`: text per subtree): a furniture class on them
/// is a misjudged wrapper (`sidebar_content` around the post). An `article`
/// with almost no text is a teaser card, and its `related-articles` list
/// stays furniture.
fn semantic_holders(elems: &[Elem], all: &[usize]) -> Vec<bool> {
    let n = elems.len();
    let mut semantic = vec![false; n];
    let big = (POSITIVE_SHARE * all[0] as f64) as usize;
    let teaser = (TEASER_SHARE * all[0] as f64) as usize;
    for e in (1..n).rev() {
        let flags = elems[e].flags;
        semantic[e] |= flags & MAIN != 0
            || (flags & ARTICLE != 0 && all[e] > teaser)
            || (flags & POSITIVE != 0 && all[e] > big);
        if semantic[e] {
            semantic[elems[e].parent] = true;
        }
    }
    semantic
}

/// Furniture (when `opts` drops boilerplate), except wrappers: elements
/// holding the semantic content or nearly all the text.
fn furniture(elems: &[Elem], opts: &ExtractOptions, all: &[usize], semantic: &[bool]) -> Vec<bool> {
    let n = elems.len();
    let mut excluded = vec![false; n];
    if !opts.drop_boilerplate {
        return excluded;
    }
    let within = semantic_ancestors(elems);
    for e in 1..n {
        // A form holding most of its `main` or `article` (a shop's
        // product form) is no furniture either, nor is an element only
        // weakly judged (`author-box`) that holds much of the page.
        let flags = elems[e].flags;
        let (share, of) = if flags & FORM != 0 {
            (FORM_SHARE, within[e])
        } else if flags & SOFT != 0 {
            (SOFT_WRAPPER_SHARE, 0)
        } else {
            (WRAPPER_SHARE, 0)
        };
        let boiler =
            flags & BOILER != 0 && !semantic[e] && (all[e] as f64) < share * all[of] as f64;
        excluded[e] = excluded[elems[e].parent] || boiler;
    }
    excluded
}

/// A parsed page judged: its furniture, and the text and link text of each
/// subtree without it.
struct Judged<'p> {
    parsed: &'p Parsed,
    opts: &'p ExtractOptions,
    excluded: Vec<bool>,
    text: Vec<usize>,
    link: Vec<usize>,
}

impl<'p> Judged<'p> {
    fn new(parsed: &'p Parsed, opts: &'p ExtractOptions) -> Self {
        let elems = &parsed.elems;
        let n = elems.len();
        let all = subtree_text(parsed);
        let semantic = semantic_holders(elems, &all);
        let excluded = furniture(elems, opts, &all, &semantic);
        let mut text = vec![0usize; n];
        let mut link = vec![0usize; n];
        for block in parsed.blocks.iter().filter(|b| !excluded[b.owner]) {
            text[block.owner] += len(block);
            link[block.owner] += block.link;
        }
        for e in (1..n).rev() {
            text[elems[e].parent] += text[e];
            link[elems[e].parent] += link[e];
        }
        Judged {
            parsed,
            opts,
            excluded,
            text,
            link,
        }
    }

    /// Whether a block is outside the furniture.
    fn kept(&self, block: &Block) -> bool {
        !self.excluded[block.owner]
    }

    /// The elements whose blocks are the content: the page's own `main` (or
    /// else `article`) if it holds enough text, else the densest ones.
    fn roots(&self) -> Vec<usize> {
        let (elems, text, opts) = (&self.parsed.elems, &self.text, self.opts);
        let n = elems.len();
        let page = text[0] as f64;
        let semantic_root = |flag: u32| {
            (1..n)
                .filter(|&e| elems[e].flags & flag != 0 && !self.excluded[e])
                .max_by_key(|&e| (text[e], std::cmp::Reverse(e)))
                .filter(|&e| text[e] > 0 && text[e] as f64 >= opts.min_main_share * page)
        };
        // Within `main`, an `article` holding most of its text is the content
        // and the rest (related stories, author boxes) is not.
        let narrowed = |main: usize| {
            (main + 1..=elems[main].last)
                .filter(|&e| elems[e].flags & ARTICLE != 0 && !self.excluded[e])
                .max_by_key(|&e| (text[e], std::cmp::Reverse(e)))
                .filter(|&e| text[e] as f64 >= ARTICLE_IN_MAIN * text[main] as f64)
                .unwrap_or(main)
        };
        let semantic_pick = if opts.prefer_semantic {
            semantic_root(MAIN)
                .map(narrowed)
                .or_else(|| semantic_root(ARTICLE))
        } else {
            None
        };
        match semantic_pick {
            Some(root) => vec![root],
            None => densest(self.parsed, &self.excluded, text, &self.link),
        }
    }

    /// The kept blocks under `roots`, joined by newlines; with `link_filter`,
    /// joined by the prose next to them, and without link lists, orphan
    /// headings, furniture lines and the tail of short lines.
    fn join(&self, roots: &[usize], link_filter: bool) -> String {
        let (parsed, elems) = (self.parsed, &self.parsed.elems);
        let blocks = &parsed.blocks;
        let mut sel: Vec<bool> = blocks
            .iter()
            .map(|b| {
                self.kept(b)
                    && roots
                        .iter()
                        .any(|&r| (r..=elems[r].last).contains(&b.owner))
            })
            .collect();
        if link_filter {
            extend_to_neighbours(blocks, &self.excluded, &mut sel);
        }
        let candidates: Vec<&Block> = blocks
            .iter()
            .zip(&sel)
            .filter(|(_, &s)| s)
            .map(|(b, _)| b)
            .collect();
        // A term of a definition list is a label, link or not (an index of
        // items with their descriptions), a table cell is a value (a
        // product, a download, a venue), and code is code, whatever they
        // link.
        let linky = |b: &Block| {
            link_filter
                && elems[b.owner].flags & (DT_DD | PRE | CELL) == 0
                && b.link as f64 > self.opts.max_link_density * len(b) as f64
        };
        let heading = |b: &Block| elems[b.owner].flags & HEADING != 0;
        let tail = if link_filter {
            tail_start(&candidates, &self.excluded, heading)
        } else {
            candidates.len()
        };
        let mut out = String::with_capacity(self.text[0] + parsed.blocks.len());
        for (i, block) in candidates.iter().enumerate() {
            // Tables, lists and code after the prose (a product's data, a
            // recipe's ingredients, a type's definition) are content in
            // short lines.
            let structured = elems[block.owner].flags & (CELL | LI | DT_DD | PRE) != 0;
            if i >= tail && len(block) < TAIL_LINE && !structured {
                continue;
            }
            // A heading over a list of links that were dropped ("Related
            // posts", "More on this") or over nothing at the end goes with
            // them; a title over one link ("Source", "Edit") stays.
            let over_links = |j: usize| candidates.get(j).is_none_or(|b| linky(b) || heading(b));
            let orphan = link_filter
                && heading(block)
                && candidates
                    .get(i + 1)
                    .is_none_or(|next| linky(next) && over_links(i + 2));
            // "Related stories", "Über den Autor" over teasers or a bio that
            // stay, captions' credits ("Foto: dpa") outside a `figcaption`,
            // tag, date and share lines ("Tagged:", "Diesen Artikel teilen"),
            // advertising labels ("Anzeige"), lone dates ("23.10.2018"),
            // calls to subscribe or donate ("Zum Newsletter anmelden") and
            // reading times ("5 min read").
            let words = &parsed.text[block.start..block.end];
            if linky(block) || orphan || (link_filter && labels::furniture(words)) {
                continue;
            }
            out.push_str(words);
            out.push('\n');
        }
        out.pop();
        out
    }
}

/// Where the tail of the content starts: after its last paragraph of
/// [`prose`] (headings do not count). Short lines there are what pages put
/// under an article (credits, "Share", tags, "Related stories", a press
/// contact); more than [`TAIL_LINES`] of them are a structure of the content
/// (a reference's items, a timetable), and then there is no tail
/// (`candidates.len()`).
fn tail_start(candidates: &[&Block], excluded: &[bool], heading: impl Fn(&Block) -> bool) -> usize {
    let start = candidates
        .iter()
        .rposition(|b| prose(b, excluded) && !heading(b))
        .map_or(candidates.len(), |last| last + 1);
    let short = candidates[start..]
        .iter()
        .filter(|b| len(b) < TAIL_LINE)
        .count();
    if short <= TAIL_LINES {
        start
    } else {
        candidates.len()
    }
}

/// Adds to the selected blocks the prose just before and after them in the
/// page (jusText's idea of context, anchored on the chosen content): each
/// paragraph of [`prose`], together with the up to [`EXTEND_GAP`] short or
/// linky blocks between it and the selection (a subheading, a caption).
/// Content split over sibling containers (a page builder's columns, a lead
/// outside the article's body, several `article`s) is found this way.
fn extend_to_neighbours(blocks: &[Block], excluded: &[bool], selected: &mut [bool]) {
    let (Some(first), Some(last)) = (
        selected.iter().position(|&s| s),
        selected.iter().rposition(|&s| s),
    ) else {
        return;
    };
    let after = joining(blocks, excluded, last + 1..blocks.len());
    let before = joining(blocks, excluded, (0..first).rev());
    for k in after.into_iter().chain(before) {
        selected[k] = true;
    }
}

/// The blocks that join the selection walking away from it in `order`:
/// each paragraph of [`prose`] met before more than [`EXTEND_GAP`] other
/// blocks in a row, with the blocks crossed to reach it (furniture left
/// out).
fn joining(blocks: &[Block], excluded: &[bool], order: impl Iterator<Item = usize>) -> Vec<usize> {
    let mut joined = Vec::new();
    let mut crossed = Vec::new();
    for j in order {
        if prose(&blocks[j], excluded) {
            joined.append(&mut crossed);
            joined.push(j);
        } else if crossed.len() == EXTEND_GAP {
            break;
        } else {
            crossed.push(j);
        }
    }
    joined.retain(|&k| !excluded[blocks[k].owner]);
    joined
}

/// A paragraph of prose: at least [`PROSE_MIN`] bytes, under
/// [`PROSE_LINK_DENSITY`] link text, not furniture.
fn prose(block: &Block, excluded: &[bool]) -> bool {
    !excluded[block.owner]
        && len(block) >= PROSE_MIN
        && (block.link as f64) < PROSE_LINK_DENSITY * len(block) as f64
}

/// For each element, its nearest `main` or `article` ancestor (0, the
/// document, if none).
fn semantic_ancestors(elems: &[Elem]) -> Vec<usize> {
    let mut within = vec![0; elems.len()];
    for e in 1..elems.len() {
        let parent = elems[e].parent;
        within[e] = if elems[parent].flags & (MAIN | ARTICLE) != 0 {
            parent
        } else {
            within[parent]
        };
    }
    within
}

fn len(block: &Block) -> usize {
    block.end - block.start
}

/// Readability's idea without a DOM: each paragraph scores its container
/// (and half for the container's parent) by its length and commas; the
/// container with the best score, discounted by its link density, wins,
/// together with its siblings that score at least a fifth as well.
/// Returns the chosen elements, or the whole document if nothing scores.
fn densest(parsed: &Parsed, excluded: &[bool], text: &[usize], link: &[usize]) -> Vec<usize> {
    let elems = &parsed.elems;
    let mut score = vec![0f64; elems.len()];
    for block in &parsed.blocks {
        let bytes = len(block);
        if excluded[block.owner] || bytes < MIN_PARAGRAPH {
            continue;
        }
        let words = &parsed.text.as_bytes()[block.start..block.end];
        let commas = memchr::memchr_iter(b',', words).count();
        let points = 1.0 + commas as f64 + (bytes as f64 / 100.0).min(3.0);
        let owner = block.owner;
        let container = if elems[owner].flags & PARA != 0 {
            elems[owner].parent
        } else {
            owner
        };
        score[container] += points;
        let grand = elems[container].parent;
        if grand != container {
            score[grand] += points / 2.0;
        }
    }
    let adjusted = |e: usize| {
        if score[e] == 0.0 || text[e] == 0 {
            return 0.0;
        }
        let bonus = if elems[e].flags & POSITIVE != 0 {
            POSITIVE_BONUS
        } else {
            1.0
        };
        score[e] * bonus * (1.0 - link[e] as f64 / text[e] as f64)
    };
    let best = (0..elems.len())
        .filter(|&e| !excluded[e])
        .map(|e| (e, adjusted(e)))
        .filter(|&(_, s)| s > 0.0)
        .fold(None, |best: Option<(usize, f64)>, cur| match best {
            Some(b) if b.1 >= cur.1 => Some(b),
            _ => Some(cur),
        });
    let Some((best, best_score)) = best else {
        return vec![0];
    };
    if best == 0 {
        return vec![0];
    }
    let parent = elems[best].parent;
    let threshold = (best_score * 0.2).max(10.0);
    // A sibling before the best container holding prose, not links, is its
    // lead or standfirst, however little it scores.
    let lead = |e: usize| {
        e < best && text[e] >= LEAD_MIN && (link[e] as f64) < LEAD_LINK_DENSITY * text[e] as f64
    };
    (1..elems.len())
        .filter(|&e| {
            e == best
                || (elems[e].parent == parent
                    && !excluded[e]
                    && (adjusted(e) >= threshold || lead(e)))
        })
        .collect()
}
