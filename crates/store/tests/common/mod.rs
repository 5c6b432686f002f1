//! What the store's tests share.

use neardup_store::NewDocument;

/// A document `id` with this text and the URL `https://example.com/ID`.
pub fn doc(id: &str, text: &str) -> NewDocument {
    NewDocument {
        id: Some(id.into()),
        url: Some(format!("https://example.com/{id}")),
        text: text.into(),
        ..NewDocument::default()
    }
}
