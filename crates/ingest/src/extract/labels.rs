//! What a short block says by its words alone: a heading that introduces
//! teasers of other pages ("Related stories", "Mehr zum Thema"), an image
//! credit or source line ("Foto: dpa", "© Getty Images").

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

/// Longest block (bytes) that can be a credit line.
const MAX_CREDIT: usize = 200;

/// Labels of image credits and sources, lower case, before a colon:
/// `Foto: dpa`, `Quelle: Statista`, `Źródło: PAP`.
const CREDIT: &[&str] = &[
    "foto",
    "fotos",
    "fotoquelle",
    "bild",
    "bilder",
    "bildquelle",
    "titelbild",
    "beitragsbild",
    "abbildung",
    "quelle",
    "quellen",
    "photo",
    "photos",
    "image",
    "credit",
    "credits",
    "image credit",
    "photo credit",
    "crédit",
    "crédits",
    "crédit photo",
    "crédits photos",
    "fuente",
    "fonte",
    "źródło",
    "fot",
    "zdjęcie",
];

/// Whether a block is an image credit or source line: short, and either
/// holding `©` and a name or starting with a credit label and a colon (`Foto: dpa`,
/// `(Credit: Jane Doe)`, `Abbildung 4: ...`).
pub(super) fn credit_line(text: &str) -> bool {
    if text.len() > MAX_CREDIT {
        return false;
    }
    if let Some((_, owner)) = text.split_once('©') {
        // A photographer or agency (`© Getty Images`); a bare year
        // (`© 2020`) may close the content's own last line.
        if owner.trim_start().starts_with(char::is_alphabetic) {
            return true;
        }
    }
    let text = text.trim_start_matches(['(', '[']);
    let Some(colon) = text.find(':').filter(|&i| i <= 32) else {
        return false;
    };
    let label = text[..colon]
        .trim_end_matches(|c: char| c == ' ' || c.is_ascii_digit())
        .to_lowercase();
    CREDIT.contains(&label.as_str())
}
