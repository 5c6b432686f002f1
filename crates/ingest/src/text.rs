//! Document → text: the one rule every door uses (the CLI's commands, `compare`, the server,
//! the fuzz targets) to turn a [`Document`] or a [`Body`] into the text that is fingerprinted,
//! and the title rule of every reader.

use std::borrow::Cow;

use serde::{Deserialize, Serialize};

use crate::document::{Body, Document};
use crate::extract::{html_title, html_to_text, MainContentExtractor};

/// Which text of an HTML document is used.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum HtmlText {
    /// The main content: navigation, sidebars, ads and footers dropped.
    #[default]
    Main,
    /// All visible text.
    All,
}

impl neardup_core::Choice for HtmlText {
    const ALL: &'static [Self] = &[HtmlText::Main, HtmlText::All];

    fn help(self) -> &'static str {
        match self {
            HtmlText::Main => "the main content (navigation, sidebars, ads and footers dropped)",
            HtmlText::All => "all visible text",
        }
    }
}

/// The text a document is fingerprinted by (see [`body_text`]).
pub fn document_text<'a>(
    doc: &'a Document,
    html: HtmlText,
    extractor: &MainContentExtractor,
) -> Cow<'a, str> {
    body_text(&doc.body, html, extractor)
}

/// The text a body is fingerprinted by: a text body as is; of an HTML body its main content
/// or all its visible text, as `html` says.
pub fn body_text<'a>(
    body: &'a Body,
    html: HtmlText,
    extractor: &MainContentExtractor,
) -> Cow<'a, str> {
    match (body, html) {
        (Body::Text(text), _) => Cow::Borrowed(text),
        (Body::Html(page), HtmlText::Main) => Cow::Owned(extractor.extract(page).text),
        (Body::Html(page), HtmlText::All) => Cow::Owned(html_to_text(page)),
    }
}

/// A document's title: the one `given` (a title field), else an HTML body's `<title>`.
pub fn title_of(given: Option<String>, body: &Body) -> Option<String> {
    match (given, body) {
        (None, Body::Html(html)) => html_title(html),
        (given, _) => given,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn both_bodies_in_both_modes() {
        let ex = MainContentExtractor::default();
        let text = Body::Text("plain <b>text</b>".into());
        for mode in [HtmlText::Main, HtmlText::All] {
            assert!(matches!(
                body_text(&text, mode, &ex),
                Cow::Borrowed("plain <b>text</b>")
            ));
        }
        let page = "<nav><a href=/>Home</a> <a href=/a>About</a></nav><main><p>Hello &amp; welcome</p></main>";
        let html = Body::Html(page.into());
        assert_eq!(body_text(&html, HtmlText::Main, &ex), "Hello & welcome");
        assert_eq!(
            body_text(&html, HtmlText::All, &ex),
            "Home About\nHello & welcome"
        );
    }

    #[test]
    fn a_given_title_wins_over_the_pages() {
        let html = Body::Html("<title>Page</title><p>x</p>".into());
        assert_eq!(title_of(None, &html).as_deref(), Some("Page"));
        assert_eq!(
            title_of(Some("Given".into()), &html).as_deref(),
            Some("Given")
        );
        assert_eq!(
            title_of(None, &Body::Text("<title>no</title>".into())),
            None
        );
    }

    #[test]
    fn html_text_names() {
        neardup_core::choice::check_names::<HtmlText>().unwrap();
        assert_eq!(HtmlText::default(), HtmlText::Main);
    }
}
