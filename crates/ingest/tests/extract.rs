//! Main-content extraction on pages with navigation, sidebars, ads, cookie
//! banners, comments and footers, with and without `main`/`article`.

use neardup_ingest::extract::{html_title, html_to_text, ExtractOptions, MainContentExtractor};

const PARAGRAPH_1: &str = "The city council voted on Tuesday to approve the new transit plan, which adds three bus lines, extends the light rail, and repaves forty kilometres of cycle lanes.";
const PARAGRAPH_2: &str = "Critics said the plan, while welcome, does little for the northern suburbs, where commuters still face the longest trips in the region.";

/// A news page around an `<article>`.
fn news_page() -> String {
    format!(
        r##"<!DOCTYPE html><html><head><title>Transit plan approved &ndash; City News</title>
<script>var ads = "<p>not text</p>";</script><style>p {{ color: red }}</style></head>
<body class="has-sidebar">
<div id="cookie-banner">We use cookies. <button>Accept</button></div>
<header class="site-header"><a href="/">City News</a><nav><a href="/a">Politics</a> <a href="/b">Sport</a></nav></header>
<div class="breadcrumbs"><a href="/">Home</a> › <a href="/local">Local</a></div>
<main>
<article>
<header><h1>Transit plan approved</h1><p class="byline">By A. Writer</p></header>
<p>{PARAGRAPH_1}</p>
<div class="ad-slot">BUY NOW &mdash; 50% off</div>
<p>{PARAGRAPH_2}</p>
<div class="share-bar"><a href="#">Share on X</a></div>
</article>
<section id="comments"><h2>Comments</h2><p>First! This plan is great, really great.</p></section>
</main>
<aside class="sidebar"><h3>Most read</h3><ul><li><a href="/x">Another story with a long title here</a></li></ul></aside>
<footer>&copy; 2024 City News. All rights reserved.</footer>
</body></html>"##
    )
}

/// Asserts that the main text of `html` is the transit story (its heading
/// and its two paragraphs) followed by the lines `after`.
fn assert_story(html: &str, after: &[&str]) {
    let mut expected = format!("Transit plan approved\n{PARAGRAPH_1}\n{PARAGRAPH_2}");
    for line in after {
        expected.push('\n');
        expected.push_str(line);
    }
    assert_eq!(MainContentExtractor::default().extract(html).text, expected);
}

#[test]
fn article_page_keeps_the_story_only() {
    let out = MainContentExtractor::default().extract(&news_page());
    assert_eq!(
        out.title.as_deref(),
        Some("Transit plan approved – City News")
    );
    // The byline is furniture, as the reference extractors have it.
    assert_eq!(
        out.text,
        format!("Transit plan approved\n{PARAGRAPH_1}\n{PARAGRAPH_2}")
    );
}

#[test]
fn all_text_keeps_the_furniture() {
    let text = html_to_text(&news_page());
    for kept in [
        "We use cookies. Accept",
        "Politics Sport",
        "BUY NOW — 50% off",
        "Most read",
        "© 2024",
    ] {
        assert!(text.contains(kept), "{kept:?} in {text}");
    }
    assert!(!text.contains("not text"));
    assert!(!text.contains("color"));
}

#[test]
fn div_soup_is_chosen_by_text_density() {
    let html = format!(
        r#"<html><body>
<div id="top"><a href="/">Home</a> | <a href="/news">News</a> | <a href="/about">About us and our long history</a></div>
<div id="left"><ul><li><a href="/1">Link one to somewhere else</a></li><li><a href="/2">Link two to somewhere else</a></li></ul></div>
<div id="story">
  <div class="headline">Transit plan approved</div>
  <p>{PARAGRAPH_1}</p>
  <p>{PARAGRAPH_2}</p>
  <p>Read more: <a href="/1">one</a>, <a href="/2">two</a>, <a href="/3">three related stories</a></p>
</div>
<div id="bottom">Contact | Imprint | Privacy</div>
</body></html>"#
    );
    let text = MainContentExtractor::default().extract(&html).text;
    assert!(
        text.contains(PARAGRAPH_1) && text.contains(PARAGRAPH_2),
        "{text}"
    );
    assert!(text.contains("Transit plan approved"), "{text}");
    for dropped in ["Home", "Link one", "Imprint", "three related"] {
        assert!(!text.contains(dropped), "{dropped:?} in {text}");
    }
}

#[test]
fn small_teaser_article_is_not_the_content() {
    let html = format!(
        "<body><article><p>Teaser.</p></article><div class=\"content\"><p>{PARAGRAPH_1}</p><p>{PARAGRAPH_2}</p></div></body>"
    );
    let text = MainContentExtractor::default().extract(&html).text;
    assert!(text.contains(PARAGRAPH_1), "{text}");
}

#[test]
fn form_wrapping_the_page_is_kept() {
    // ASP.NET pages put everything in one form.
    let html = format!("<body><form id=\"form1\"><div><p>{PARAGRAPH_1}</p><p>{PARAGRAPH_2}</p></div><form><input name=q></form></form></body>");
    let text = MainContentExtractor::default().extract(&html).text;
    assert_eq!(text, format!("{PARAGRAPH_1}\n{PARAGRAPH_2}"));
}

#[test]
fn product_form_holding_most_of_the_article_is_kept() {
    // A shop's article: the description sits in the order form; a small
    // newsletter form beside it is still furniture.
    let html = format!(
        "<html><body><article><h1>Wool blanket</h1><form class=\"product-form\"><p>{PARAGRAPH_1}</p>\
         <p>{PARAGRAPH_2}</p><input type=submit></form><p>Made by hand in a small workshop in the hills.</p></article>\
         <div><form><p>Get our newsletter every week, with the best offers in the shop.</p></form>\
         </div></body></html>"
    );
    let text = MainContentExtractor::default().extract(&html).text;
    assert_eq!(
        text,
        format!("Wool blanket\n{PARAGRAPH_1}\n{PARAGRAPH_2}\nMade by hand in a small workshop in the hills.")
    );
}

#[test]
fn weakly_judged_wrapper_of_much_of_the_page_is_kept() {
    // `teaser` (without a content word) and `author` are medium furniture
    // words: a small author box goes, a "teaser" wrapper around the story
    // (half the page) stays.
    let links: String = [
        "the archive of the last twenty years of city news",
        "the weather and the sports pages",
        "the cinema programme and the small ads",
        "the letters to the editor and the obituaries",
        "the events calendar of the city and the region",
        "the shop, the subscriptions and the newsletter",
    ]
    .iter()
    .map(|page| format!("<a href=/x>{page}</a>, "))
    .collect();
    let html = format!(
        "<html><body><div class=\"teaser-wrap\"><h1>Transit plan approved</h1><p>{PARAGRAPH_1}</p>\
         <p>{PARAGRAPH_2}</p><div class=\"author-box\"><p>Jane Doe writes about cities, transport \
         and the people who plan them.</p></div></div><div><p>Other pages of this site: {links}and \
         more.</p></div></body></html>"
    );
    assert_story(&html, &[]);
}

#[test]
fn an_inline_dateline_opening_the_story_stays() {
    // A wire story's first paragraph opens with its dateline; a dateline
    // block above the story is furniture.
    let html = format!(
        "<html><body><article><div class=\"dateline\">Published 3 May 2021, 10:12</div>\
         <p><span class=\"dateline\">BERLIN –</span> {PARAGRAPH_1}</p><p>{PARAGRAPH_2}</p>\
         </article></body></html>"
    );
    let text = MainContentExtractor::default().extract(&html).text;
    assert_eq!(text, format!("BERLIN – {PARAGRAPH_1}\n{PARAGRAPH_2}"));
}

#[test]
fn hidden_things_are_dropped_everywhere() {
    let html = r#"<p>visible</p><p hidden>secret1</p><div style="display: none">secret2</div>
<span aria-hidden="true">secret3</span><template><p>secret4</p></template><svg><text>secret5</text></svg>
<!-- secret6 --><p>also visible</p>"#;
    assert_eq!(html_to_text(html), "visible\nalso visible");
    // `noscript` is what readers without scripts see: text, as lxml and
    // trafilatura read it.
    assert_eq!(html_to_text("<noscript><p>shown</p></noscript>"), "shown");
}

#[test]
fn blocks_entities_white_space_and_pre() {
    let html = "<div>one<p>two  <b>bold</b>&nbsp;&amp; &#x41;&#66;&copy;&unknown; <br>line\n break</p>tail<ul><li>a<li>b</ul><pre>\n  code\n    indented</pre>x &lt; y</div>";
    assert_eq!(
        html_to_text(html),
        "one\ntwo bold & AB©&unknown;\nline break\ntail\na\nb\n  code\n    indented\nx < y"
    );
}

#[test]
fn broken_markup_does_not_lose_text() {
    let html = "<p>unclosed <b>bold <i>both</b> after</i> <p>next</div></span> end <3 & x<y</p><div class=\"x";
    // As in browsers, `<y</p>` is a start tag `y<` with an attribute `p`.
    assert_eq!(
        html_to_text(html),
        "unclosed bold both after\nnext end <3 & x"
    );
}

#[test]
fn titles() {
    assert_eq!(
        html_title("<html><head><TITLE> A\n  b </TITLE>"),
        Some("A b".into())
    );
    assert_eq!(
        html_title("<script>'<title>no</title>'</script><title>yes</title>"),
        Some("yes".into())
    );
    assert_eq!(html_title("<body><svg><title>icon</title></svg>"), None);
    assert_eq!(html_title("<title></title>"), None);
}

#[test]
fn options_turn_heuristics_off() {
    let keep_classes = MainContentExtractor::new(ExtractOptions {
        drop_boilerplate: false,
        ..ExtractOptions::default()
    });
    let text = keep_classes.extract(&news_page()).text;
    assert!(text.contains("BUY NOW"), "{text}");
    assert!(
        !text.contains("Politics"),
        "nav is dropped by tag regardless"
    );
}

#[test]
fn a_page_of_links_is_its_own_content() {
    let html = r#"<html><body><p>Redirecting to <a href="../x/struct.Y.html">../x/struct.Y.html</a>...</p></body></html>"#;
    let text = MainContentExtractor::default().extract(html).text;
    assert_eq!(text, "Redirecting to ../x/struct.Y.html...");
}

#[test]
fn related_links_author_boxes_ratings_and_captions_are_dropped() {
    let html = format!(
        r#"<html><body><main>
<article class="post hentry author-jane tag-transit">
<h1>Transit plan approved</h1>
<figure><img src="bus.jpg"><figcaption>Photo: A. Photographer</figcaption></figure>
<p>{PARAGRAPH_1}</p>
<p>{PARAGRAPH_2} <span class="post-ratings">Rate this article</span></p>
<div class="entry-meta">Posted in Local on <time>3 May</time></div>
<div class="author-box"><p>Jane writes about cities and has done so for twenty years.</p></div>
<h2>Related posts</h2>
<ul><li><a href="/1">Bus lanes extended to the harbour</a></li><li><a href="/2">Cycle lanes repaved</a></li></ul>
</article>
<section class="more"><p>Newsletter: the best of the week, every Friday, in your inbox for free.</p></section>
</main></body></html>"#
    );
    assert_story(&html, &[]);
}

#[test]
fn a_title_over_one_link_and_an_index_of_linked_terms_stay() {
    let html = "<html><body><nav><a href='/'>Docs</a></nav><main>\
        <div class='main-heading'><h1>Module fs</h1><a class='src' href='/src'>Source</a></div>\
        <pre><code>pub trait <a href='m.html'>MetadataExt</a></code></pre>\
        <p>Extensions to the file system types, for one platform only.</p>\
        <h2>Traits</h2><dl><dt><a href='a.html'>MetadataExt</a></dt><dd>Extensions to Metadata.</dd>\
        <dt><a href='b.html'>FileTimesExt</a></dt><dd>Extensions to FileTimes.</dd></dl>\
        </main></body></html>";
    assert_eq!(
        MainContentExtractor::default().extract(html).text,
        "Module fs\npub trait MetadataExt\nExtensions to the file system types, for one platform only.\nTraits\n\
         MetadataExt\nExtensions to Metadata.\nFileTimesExt\nExtensions to FileTimes."
    );
}

#[test]
fn a_page_header_wrapping_the_article_is_no_furniture() {
    // A template that opens its `header` and never closes it before the article: the header
    // holds the page, so it is a wrapper, not the site's masthead (which still goes).
    let html = format!(
        "<html><body><header id='branding'><a href='/'>Travel site</a>\
         <div class='row'><article><h1>Emden</h1><p>{PARAGRAPH_1}</p><p>{PARAGRAPH_2}</p>\
         </article></div></header><footer>Imprint</footer></body></html>"
    );
    let text = MainContentExtractor::default().extract(&html).text;
    assert_eq!(text, format!("Emden\n{PARAGRAPH_1}\n{PARAGRAPH_2}"));
    let masthead = format!(
        "<html><body><header><h2>Travel site, the best trips since 1999</h2></header>\
         <div><p>{PARAGRAPH_1}</p><p>{PARAGRAPH_2}</p></div></body></html>"
    );
    let text = MainContentExtractor::default().extract(&masthead).text;
    assert_eq!(text, format!("{PARAGRAPH_1}\n{PARAGRAPH_2}"));
}

#[test]
fn no_break_spaces_are_spaces_and_soft_hyphens_are_not_text() {
    // As a reader sees the text: `&nbsp;` (or the character itself) is a space, collapsed
    // with its neighbours; `&shy;` only says where a long word may break. Other characters
    // whose UTF-8 starts with the same byte (`©`, `°`) are kept, and `pre` keeps its own.
    let html = "<html><body><main><p>Preis:&nbsp; 3\u{a0}€ für Er\u{ad}wach&shy;sene, 180&nbsp;°C © 2020</p>\
        <pre>a&nbsp;&nbsp;b</pre></main></body></html>";
    let want = "Preis: 3 € für Erwachsene, 180 °C © 2020\na\u{a0}\u{a0}b";
    assert_eq!(MainContentExtractor::default().extract(html).text, want);
    assert_eq!(html_to_text(html), want);
}

#[test]
fn teaser_articles_do_not_keep_a_related_list() {
    let body = format!("<p>{PARAGRAPH_1}</p><p>{PARAGRAPH_2}</p>").repeat(6);
    let html = format!(
        r#"<html><body><main><article><h1>Transit plan approved</h1>{body}
<div class="related-articles"><div class="h3">Related articles</div>
<article><h3>Bus fares rise</h3><p>From May.</p></article>
<article><h3>New depot</h3><p>In the north.</p></article>
<article><h3>Tram plans</h3><p>On hold.</p></article>
<article><h3>Night buses</h3><p>Every hour.</p></article>
<article><h3>Ferry stop</h3><p>Next year.</p></article>
</div></article></main></body></html>"#
    );
    let text = MainContentExtractor::default().extract(&html).text;
    assert!(text.starts_with("Transit plan approved\n"), "{text}");
    assert!(text.ends_with(PARAGRAPH_2), "{text}");
}

#[test]
fn well_known_related_author_and_comment_headings_are_dropped() {
    let html = format!(
        r#"<html><body><article><h1>Transit plan approved</h1><p>{PARAGRAPH_1}</p>
<div class="box"><span class="headline">Mehr zum Thema:</span></div><h3>Über den Autor</h3>
<h2>Related</h2><p>{PARAGRAPH_2}</p>
<p>The related question, whether fares rise, was left open.</p></article></body></html>"#
    );
    assert_story(
        &html,
        &["The related question, whether fares rise, was left open."],
    );
}

#[test]
fn credit_and_source_lines_are_dropped() {
    let html = format!(
        r#"<html><body><article><h1>Transit plan approved</h1><p>{PARAGRAPH_1}</p>
<img src="bus.jpg"><p class="small">Foto: Jane Doe</p><p>(Credit: City archive)</p>
<p>A new bus on line 4. | © Photo Agency</p><p>{PARAGRAPH_2}</p><p>Quelle: City council</p>
<p>Their photos: the council showed three, all taken in the rain.</p>
</article></body></html>"#
    );
    assert_story(
        &html,
        &["Their photos: the council showed three, all taken in the rain."],
    );
}

#[test]
fn tag_date_and_share_lines_are_dropped() {
    let html = format!(
        r#"<html><body><article><h1>Transit plan approved</h1>
<div class="info">Published: 2024-05-02 10:15</div><p>{PARAGRAPH_1}</p><p>{PARAGRAPH_2}</p>
<p>Tagged: <span>transit</span>, <span>council</span></p><div>Diesen Artikel teilen</div>
<p>Aktualisiert am 03.05.2024.</p><p>Updated: the council will vote again in June.</p>
</article></body></html>"#
    );
    assert_story(&html, &["Updated: the council will vote again in June."]);
}

#[test]
fn advertising_labels_are_dropped() {
    let html = format!(
        r#"<html><body><article><h1>Transit plan approved</h1><p>{PARAGRAPH_1}</p>
<div class="box">- Anzeige -</div><p>*Werbung. Dieser Beitrag enthält Werbung für Busse.</p>
<p>{PARAGRAPH_2}</p><p>Advertisements for the new lines will run in May.</p>
</article></body></html>"#
    );
    assert_story(
        &html,
        &["Advertisements for the new lines will run in May."],
    );
}

#[test]
fn lone_dates_are_dropped() {
    let html = format!(
        r#"<html><body><article><h1>Transit plan approved</h1><div class="d">02.05.2024</div>
<p>{PARAGRAPH_1}</p><p>2024-05-02, 10:15</p><p>{PARAGRAPH_2}</p><table><tr><td>Line</td><td>4</td></tr>
<tr><td>Fare</td><td>2.50</td></tr></table></article></body></html>"#
    );
    let text = MainContentExtractor::default().extract(&html).text;
    assert_eq!(
        text,
        format!("Transit plan approved\n{PARAGRAPH_1}\n{PARAGRAPH_2}\nLine\n4\nFare\n2.50")
    );
}

#[test]
fn calls_to_subscribe_or_donate_are_dropped() {
    let html = format!(
        r#"<html><body><article><h1>Transit plan approved</h1><p>{PARAGRAPH_1}</p>
<div class="box"><p>Never miss a story: sign up for our Newsletter!</p></div>
<p>{PARAGRAPH_2}</p><p>Jede kleine Spende hilft uns.</p><p>Subscribe now for the full story.</p>
</article></body></html>"#
    );
    assert_story(&html, &[]);
}

#[test]
fn reading_times_are_dropped() {
    let html = format!(
        r#"<html><body><article><h1>Transit plan approved</h1><p class="x">4 min read</p>
<p>{PARAGRAPH_1}</p><div>Lesezeit: 3 Minuten</div><p>{PARAGRAPH_2}</p>
<p>Reading time for pupils rose by 5 minutes a day.</p></article></body></html>"#
    );
    assert_story(&html, &["Reading time for pupils rose by 5 minutes a day."]);
}
