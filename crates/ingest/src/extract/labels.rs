//! What a short block says by its words alone: a heading that introduces
//! teasers of other pages ("Related stories", "Mehr zum Thema").

/// Longest block (bytes) that is judged by its words.
const MAX_LABEL: usize = 64;

/// Well-known headings over links or teasers to other pages, in the
/// languages of the web's larger news sites, lower case, without the final
/// colon.
const RELATED: &[&str] = &[
    // English
    "related",
    "related articles",
    "related content",
    "related news",
    "related posts",
    "related stories",
    "related topics",
    "more on this",
    "more on this topic",
    "more on this story",
    "read more",
    "read also",
    "also read",
    "see also",
    "explore further",
    "further reading",
    "you may also like",
    "you might also like",
    "recommended",
    "recommended for you",
    "most read",
    "most popular",
    // German
    "mehr zum thema",
    "auch interessant",
    "das könnte sie auch interessieren",
    "das könnte dich auch interessieren",
    "das thema könnte dich auch interessieren",
    "ähnliche beiträge",
    "ähnliche artikel",
    "verwandte artikel",
    "verwandte beiträge",
    "weitere artikel",
    "weitere beiträge",
    "lesen sie auch",
    "lies auch",
    "schon gelesen",
    "empfohlene beiträge",
    "empfohlene artikel",
    "zum weiterlesen",
    "meistgelesen",
    "meistgelesene artikel",
    "meistdiskutierte artikel",
    "mehr themen",
    // French
    "à découvrir",
    "à lire aussi",
    "lire aussi",
    "sur le même sujet",
    "articles similaires",
    "voir aussi",
    // Spanish, Portuguese, Italian
    "contenido relacionado",
    "noticias relacionadas",
    "artículos relacionados",
    "te puede interesar",
    "lee también",
    "veja também",
    "leia também",
    "notícias relacionadas",
    "leggi anche",
    "articoli correlati",
    // Polish
    "zobacz również",
    "zobacz też",
    "czytaj też",
    "czytaj także",
    "przeczytaj również",
];

/// Whether a block's whole text is a well-known heading over related
/// content ("Related stories", "Das könnte Sie auch interessieren:").
pub(super) fn related_heading(text: &str) -> bool {
    if text.len() > MAX_LABEL {
        return false;
    }
    let label = text
        .trim_end_matches([':', '?', '!', '.', ' '])
        .to_lowercase();
    RELATED.contains(&label.as_str())
}
