//! HTML → text: main-content extraction ([`MainContentExtractor`]), all
//! visible text ([`html_to_text`]) and the page title ([`html_title`]).
//!
//! # How, and why this way
//!
//! `neardup dedup` must run at ≥ 100 MB/s of HTML on 2 cores including
//! fingerprinting, so extraction must do ≥ ~80 MB/s per core. Measured on
//! 487 real pages of the Rust documentation (7.3 MB, every 100th page of the
//! toolchain's `share/doc/rust/html`), one core, release build:
//!
//! | approach                                   | MB/s |
//! |--------------------------------------------|-----:|
//! | `dom_smoothie` 0.19 (Readability port)     |   19 |
//! | `scraper` 0.29 parse + all text (html5ever) |   50 |
//! | `html5gum` 0.9 tokenizer only              |  104 |
//! | `tl` 0.7 parse only                        |  197 |
//! | `lol_html` 3 text handler only             |  215 |
//! | **this module**, main content              | 400–490 |
//! | **this module**, all visible text          | 370–560 |
//!
//! (The last two rows: `cargo bench -p neardup-ingest --bench extract`,
//! every 50th page, 11 MB; the range is run-to-run noise on a shared
//! 2-core machine. They predate the selection of 2026-11-24, session 5:
//! on every 50th page the `extract_eval` example measured the library's
//! main content at 722 MB/s before it and 541 after, the same machine and
//! run; the crates' rows were not measured again.)
//!
//! A DOM (and anything built on one) is several times too slow, and a
//! general tokenizer leaves little time for the rest. So this is a
//! hand-written scanner (`scan`): `memchr` to the next `<`, a small tag and
//! attribute parser, a stack of open elements with the implied end tags that
//! matter for text, entity decoding (`html-escape`, the full HTML5 table) and
//! white-space collapsing as it goes. It records text *blocks* and
//! block-level *element records*, not a tree; a selection pass (`select`)
//! then picks the content:
//!
//! 1. Dropped while scanning: `script`, `style`, `template`, `svg`,
//!    `iframe`, ... (never visible), ruby annotations (`rt`, `rp`: furigana
//!    would cut the words they annotate apart), elements with `hidden`,
//!    `aria-hidden=true` or an inline `display:none`; and for main content
//!    `nav`, `aside`, `menu`, `dialog`, `button`, `footer`, `figcaption`,
//!    `time`, and inline elements (`span`, `a`, ...) whose class or id has a
//!    strong furniture word. `noscript` is read as markup (it is what a
//!    reader without scripts sees; blog platforms put the post there), and
//!    a raw-text element without an end tag (an SVG icon's `<title/>`, a
//!    stray `<textarea>`) is taken as empty rather than as the rest of the
//!    page.
//! 2. Flagged as furniture: block elements whose class, id, ARIA role or
//!    custom tag name says navigation, menu, sidebar, breadcrumbs, ads,
//!    cookie banner, comments, related stories, ratings, bylines, author
//!    boxes, entry meta, overlays, disclosures, ... (see `tags::judge`:
//!    names are split into words at punctuation and camel case, so
//!    `navBreadcrumbs` says `nav`; strong words decide alone, medium and weak
//!    ones yield to a content word such as `post` or `entry-content`; BEM
//!    modifiers (`o-section--has-ad`), state classes (`is-x`, `has-x`) and
//!    utility classes (`overflow-hidden`, `hidden-xs`) say nothing), `form`s,
//!    and `header`s outside `main`/`article` (inside, they hold the
//!    article's title). A flagged element that holds the `main`, an
//!    `article` with more than 2% of the text (less is a teaser card in a
//!    `related-articles` list), a content-named element with ≥ 30% of the
//!    text, or ≥ 90% of the text is a misjudged wrapper and stays, and so is
//!    one flagged by a medium or weak word only with ≥ 30% of the text, and
//!    a `form` with ≥ 50% of the text of its `main`/`article` (or of the
//!    page).
//! 3. The page's `main` (or `role=main`) — narrowed to the `article` inside
//!    it that holds ≥ 60% of its text — else its largest `article`, is the
//!    content if it holds ≥ [`ExtractOptions::min_main_share`] of the text.
//! 4. Otherwise Readability's scoring: paragraphs (≥ 50 bytes) score their
//!    container by length and commas, discounted by link density; the best
//!    container and its well-scoring siblings are kept.
//! 5. Prose next to what was chosen joins it (jusText's context, anchored
//!    on the choice): walking away from it in page order, each paragraph of
//!    ≥ 100 bytes with under 20% link text, not furniture, is taken with the
//!    up to two short blocks crossed to reach it; the walk stops at three
//!    blocks in a row that are not prose. Content split over sibling
//!    containers (page builders' columns, a lead outside the article body,
//!    several `article`s) is found this way.
//! 6. Within that, link-heavy blocks (menus, "related" lists) are dropped,
//!    and so is a heading over a list of them or over nothing; code (`pre`),
//!    definition terms (`dt`) and table cells (a product, a download) are
//!    never link-heavy. The content ends with its last paragraph of prose:
//!    short lines (< 40 bytes) after it, outside tables and lists, go
//!    (credits, "Share", tags, a press contact). A block that is only a
//!    well-known heading over related content, an author box or comments
//!    ("Related stories", "Mehr zum Thema", "Zobacz również", "Über den
//!    Autor", "Leave a reply", see `labels`) is dropped too, and so is a
//!    short credit or source line (`Foto: dpa`, `(Credit: Jane Doe)`,
//!    `Quelle: Statista`, a caption ending in `© Getty Images`), a post's
//!    tag, category or date line (`Tagged:`, `Kategorie: News`,
//!    `Aktualisiert am 17.01.2021`) and a share prompt (`Diesen Artikel
//!    teilen`), a reading time (`5 min read`), a short line led by an
//!    advertising label (`Anzeige`, `*Werbung. Dieser Beitrag ...`,
//!    `Advertisement`) or holding only a date or time (`23.10.2018`,
//!    `2021-04-07 19:49`), and a short call to sign up for a newsletter,
//!    subscribe or donate (`Zum Newsletter anmelden`, `Subscribe now for the
//!    full story`).
//! 7. A result under 300 bytes is more often a misjudged page (a post in a
//!    `modal-enabled` box) than a short one: the page is chosen again by
//!    density alone, without class judgements, and that text is taken if it
//!    is over twice as long.
//!
//! Measured on trafilatura's evaluation set (990 real pages, scored by its
//! snippets; `tools/bench/extract_eval.py`, figures in BENCHMARKS.md):
//! F1 0.822 → 0.903 → 0.931 (P 0.932, R 0.930; trafilatura 0.922 on the
//! set it was developed against), `neardup extract` at about 500 MB/s of
//! HTML per CPU-second end to end on those pages.
//!
//! Blocks are separated by newlines, `<br>` is a newline, `<pre>` keeps its
//! white space. Elsewhere a no-break space is white space like any other
//! (collapsed with its neighbours) and a soft hyphen (`&shy;`) is dropped:
//! the text is what a reader reads.

mod labels;
mod scan;
mod select;
mod tags;

use scan::Mode;

/// Tuning of [`MainContentExtractor`]. The defaults suit news and
/// documentation pages.
#[derive(Clone, Debug, PartialEq)]
pub struct ExtractOptions {
    /// Drop elements whose class, id or role look like navigation, ads,
    /// sidebars, ... (default true). Tags like `nav` are dropped regardless.
    pub drop_boilerplate: bool,
    /// Take `main` / `article` as the content when they hold enough of the
    /// text (default true); otherwise always score by text density.
    pub prefer_semantic: bool,
    /// Share of the page's (non-furniture) text a `main` or `article` must
    /// hold to be taken as the content (default 0.25): a small teaser
    /// `article` on a list page is not the content.
    pub min_main_share: f64,
    /// Blocks of the chosen content whose text is more than this share link
    /// text (menus, tag lists, "related" links) are dropped, with a heading
    /// over them (default 0.35).
    pub max_link_density: f64,
}

impl Default for ExtractOptions {
    fn default() -> Self {
        ExtractOptions {
            drop_boilerplate: true,
            prefer_semantic: true,
            min_main_share: 0.25,
            max_link_density: 0.35,
        }
    }
}

/// What extraction yields.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Extracted {
    /// The page's `<title>`, entity-decoded, white space collapsed.
    pub title: Option<String>,
    /// The main text: blocks separated by `\n`, no leading or trailing
    /// white space.
    pub text: String,
}

/// Extracts the main content of HTML pages (see the module documentation
/// for the method). Cheap to create, `Sync`: share one across threads.
#[derive(Clone, Debug, Default)]
pub struct MainContentExtractor {
    opts: ExtractOptions,
}

impl MainContentExtractor {
    /// An extractor with these options.
    pub fn new(opts: ExtractOptions) -> Self {
        MainContentExtractor { opts }
    }

    /// The options in use.
    pub fn options(&self) -> &ExtractOptions {
        &self.opts
    }

    /// The title and main text of `html`. Never fails: any input gives
    /// some (possibly empty) text.
    pub fn extract(&self, html: &str) -> Extracted {
        let parsed = scan::scan(html, Mode::Main);
        let text = select::main_text(&parsed, &self.opts);
        Extracted {
            title: parsed.title,
            text,
        }
    }
}

/// All visible text of `html` (scripts, styles, hidden and `svg` subtrees
/// left out; navigation and the rest kept), blocks separated by `\n`: the
/// baseline to compare main-content extraction with.
pub fn html_to_text(html: &str) -> String {
    let mut text = scan::scan(html, Mode::All).text;
    text.pop();
    text
}

/// The page's `<title>` (entity-decoded, white space collapsed), found by a
/// quick scan of the head; `None` if there is none before `<body>`.
pub fn html_title(html: &str) -> Option<String> {
    scan::find_title(html)
}
