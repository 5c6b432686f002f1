//! How the main content is bounded once a container is chosen: prose next to
//! it joins it, short lines after its last paragraph do not, a page that
//! yields almost nothing is read again without judging classes, and markup
//! that browsers show (`noscript`) or that is broken (a raw-text element
//! without an end tag) loses no text. Every fixture is made here.

use neardup_ingest::extract::MainContentExtractor;

const LEAD: &str = "The harbour authority confirmed on Monday that the old grain terminal will be turned into a public park, with a promenade along the water.";
const BODY_1: &str = "Work starts in spring and should take two years, the authority said, while the listed silo at the northern end is to become a climbing centre.";
const BODY_2: &str = "Residents had campaigned for a decade to open the site, which has been fenced off since the terminal closed in the nineteen-nineties.";
const SECOND_COLUMN: &str = "A second phase, still without funding, would add a ferry stop and a small beach where the old barges were once loaded and unloaded.";

fn extract(html: &str) -> String {
    MainContentExtractor::default().extract(html).text
}

#[test]
fn prose_in_a_sibling_container_joins_the_content() {
    // A page builder puts the story in two columns; the scoring picks one.
    let html = format!(
        r#"<html><body><nav><a href="/">Home</a></nav>
<div class="row">
  <div class="col"><div class="text"><p>{LEAD}</p><p>{BODY_1}</p><p>{BODY_2}</p></div></div>
  <div class="col"><div class="text"><p>{SECOND_COLUMN}</p></div></div>
</div>
<div class="widget"><ul><li><a href="/a">One link</a></li><li><a href="/b">Another link</a></li></ul></div>
</body></html>"#
    );
    let text = extract(&html);
    for paragraph in [LEAD, BODY_1, BODY_2, SECOND_COLUMN] {
        assert!(text.contains(paragraph), "{paragraph:?} in {text:?}");
    }
    assert!(!text.contains("One link"), "{text:?}");
}

#[test]
fn a_lead_before_the_article_body_joins_it() {
    let html = format!(
        r#"<html><body>
<div class="top"><div class="intro"><h1>Grain terminal becomes a park</h1>
<p class="standfirst">{LEAD}</p></div></div>
<div class="layout"><div class="meta-line"><span>5 min read</span></div>
<div class="article-body"><p>{BODY_1}</p><p>{BODY_2}</p><p>{SECOND_COLUMN}</p></div></div>
</body></html>"#
    );
    let text = extract(&html);
    assert!(text.contains(LEAD), "{text:?}");
    assert!(text.contains(BODY_1), "{text:?}");
}

#[test]
fn short_lines_after_the_last_paragraph_are_dropped() {
    let html = format!(
        r#"<html><body><article><h1>Grain terminal becomes a park</h1>
<p>{LEAD}</p><p>{BODY_1}</p><p>{BODY_2}</p>
<p>Back to top</p><p>Print this page</p><p>Harbour desk, ext. 214</p>
</article></body></html>"#
    );
    let text = extract(&html);
    assert!(text.ends_with(BODY_2), "{text:?}");
    assert!(
        text.starts_with("Grain terminal becomes a park\n"),
        "{text:?}"
    );
}

#[test]
fn a_long_last_line_stays() {
    // Lines after the last paragraph go only when short: a closing remark
    // of a sentence or more is the author's.
    let closing = "Have you visited the site before it closed? Tell us in the comments below.";
    let html = format!(
        r#"<html><body><article><p>{LEAD}</p><p>{BODY_1}</p><p>{closing}</p></article></body></html>"#
    );
    assert!(extract(&html).ends_with(closing));
}

#[test]
fn a_misjudged_page_is_read_again_without_class_judgement() {
    // The whole story sits in a box whose class says `modal` (furniture):
    // what is left is one line about the site, so the page is read again
    // by density.
    let html = format!(
        r#"<html><body><div class="top">Site name</div>
<div class="box article modal-enabled"><h1>Grain terminal becomes a park</h1>
<p>{LEAD}</p><p>{BODY_1}</p><p>{BODY_2}</p></div>
<div class="site-info"><p>City Harbour News is published by the Harbour Press Company, an independent publisher since 1890.</p></div>
</body></html>"#
    );
    let text = extract(&html);
    assert!(text.contains(BODY_1), "{text:?}");
    assert!(!text.contains("Site name"), "{text:?}");
}

#[test]
fn noscript_text_is_read() {
    // Blog platforms render posts with scripts and put the text in
    // `noscript` for readers (and crawlers) without them.
    let html = format!(
        r#"<html><body><div class="post"><script>render(post)</script>
<noscript><p>{LEAD}</p><p>{BODY_1}</p></noscript></div></body></html>"#
    );
    let text = extract(&html);
    assert!(text.contains(LEAD) && text.contains(BODY_1), "{text:?}");
}

#[test]
fn a_raw_text_element_without_an_end_tag_hides_nothing() {
    // A self-closed `<title/>` inside an inline SVG icon, and a stray
    // `<textarea>` that is never closed, must not swallow the page.
    let html = format!(
        r#"<html><head><title>Park</title></head><body>
<a class="icon" href="/share"><svg viewBox="0 0 8 8"><title/><path d="M0 0"/></svg></a>
<article><p>{LEAD}</p><p>{BODY_1}</p></article>
<div class="form"><textarea name="comment"></div></body></html>"#
    );
    let text = extract(&html);
    assert!(text.contains(LEAD) && text.contains(BODY_1), "{text:?}");
}

#[test]
fn a_table_or_list_after_the_last_paragraph_stays() {
    // Short lines, but content: a product's data, a recipe's ingredients.
    let html = format!(
        r#"<html><body><article><p>{LEAD}</p><p>{BODY_1}</p>
<table><tr><th>Area</th><td>12 ha</td></tr><tr><th>Opening</th><td>2027</td></tr></table>
<ul><li>Promenade</li><li>Climbing centre</li></ul><p>Share</p></article></body></html>"#
    );
    let text = extract(&html);
    assert!(
        text.ends_with("Area\n12 ha\nOpening\n2027\nPromenade\nClimbing centre"),
        "{text:?}"
    );
}

#[test]
fn links_in_a_table_are_its_values() {
    // A comparison table whose first column links to each product: data,
    // not navigation (a list of such links would be dropped).
    let html = format!(
        r#"<html><body><article><p>{LEAD}</p><p>{BODY_1}</p>
<table><tr><td><a href="/p/1">Harbour bench</a></td><td>good</td></tr>
<tr><td><a href="/p/2">Silo lamp</a></td><td>fair</td></tr></table>
<p>{BODY_2}</p></article></body></html>"#
    );
    let text = extract(&html);
    assert!(
        text.contains("Harbour bench\ngood\nSilo lamp\nfair"),
        "{text:?}"
    );
}

#[test]
fn many_short_lines_after_the_last_paragraph_are_the_content() {
    // A reference page: a description, then the items, one short line each.
    let items: String = (1..=12)
        .map(|i| format!("<h4>fn step_{i}(&mut self)</h4><div>Moves {i} steps.</div>"))
        .collect();
    let html = format!(r#"<html><body><main><p>{LEAD}</p>{items}</main></body></html>"#);
    let text = extract(&html);
    assert!(
        text.ends_with("fn step_12(&mut self)\nMoves 12 steps."),
        "{text:?}"
    );
}
