//! What a short block says by its words alone (judged lower-cased): a heading that introduces
//! teasers of other pages ("Related stories", "Mehr zum Thema"), an author
//! box or comments ("Über den Autor", "Leave a reply"), an image
//! credit or source line ("Foto: dpa", "© Getty Images"), a post's metadata
//! or a share prompt ("Tagged:", "Aktualisiert am 17.01.2021", "Diesen
//! Artikel teilen"), an advertising label ("Anzeige"), a lone date, a call
//! to subscribe or donate ("Zum Newsletter anmelden"), a reading time.

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

/// Well-known headings over an author box or comments, lower case, without
/// the final colon.
const AUTHOR_COMMENTS: &[&str] = &[
    "about the author",
    "über den autor",
    "über die autorin",
    "zum autor",
    "à propos de l'auteur",
    "sobre el autor",
    "o autorze",
    "comments",
    "no comments",
    "leave a comment",
    "leave a reply",
    "kommentare",
    "keine kommentare",
    "kommentieren",
    "kommentar schreiben",
];

/// Whether a block's whole text is a well-known heading over related
/// content ("Related stories", "Das könnte Sie auch interessieren:"), an
/// author box ("Über den Autor") or comments ("Leave a reply").
fn furniture_heading(text: &str) -> bool {
    if text.len() > MAX_LABEL {
        return false;
    }
    let label = text.trim_end_matches([':', '?', '!', '.', ' ']);
    RELATED.contains(&label) || AUTHOR_COMMENTS.contains(&label)
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
fn credit_line(text: &str) -> bool {
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
    let label = text[..colon].trim_end_matches(|c: char| c == ' ' || c.is_ascii_digit());
    CREDIT.contains(&label)
}

/// Most bytes after a tag label (`Tags: a, b, c`).
const MAX_TAGS: usize = 60;

/// Labels of a post's tags and categories, lower case, without the final
/// colon: `Tagged: x, y`, `Kategorie: News`.
const TAGS: &[&str] = &[
    "tags",
    "tagged",
    "tagged with",
    "filed under",
    "posted in",
    "category",
    "categories",
    "topics",
    "kategorie",
    "kategorien",
    "schlagwörter",
    "schlagworte",
    "themen",
    "themen im artikel",
    "catégories",
    "temas",
    "etiquetas",
    "categorías",
    "tagi",
    "tematy",
];

/// Labels of a post's dates, lower case, without the final colon:
/// `Last modified: 03-10-2004`, `Aktualisiert am 17.01.2021`.
const DATES: &[&str] = &[
    "published",
    "published on",
    "posted on",
    "updated",
    "last updated",
    "last modified",
    "release date",
    "news date",
    "veröffentlicht",
    "veröffentlicht am",
    "veröffentlichung",
    "aktualisiert",
    "aktualisiert am",
    "zuletzt aktualisiert",
    "letzte änderung",
    "publié le",
    "mis à jour le",
    "publicado",
    "actualizado",
    "publikacja",
    "aktualizacja",
    "opublikowano",
];

/// Share prompts, lower case, without the final colon or question mark.
const SHARE: &[&str] = &[
    "share",
    "share this",
    "share this article",
    "share this post",
    "teilen",
    "artikel teilen",
    "diesen artikel teilen",
    "beitrag teilen",
    "news teilen",
    "möchten sie den artikel teilen",
    "partager",
    "partager cet article",
    "compartir",
    "compartilhe",
    "udostępnij",
];

/// Whether a block is a post's metadata line or a share prompt: a tag label
/// alone or before a short value (`Tagged:`, `Themen: Ehrenamt Jugend`), a
/// date label alone or before a date (`Aktualisiert am 17.01.2021`), or a
/// share prompt alone (`Diesen Artikel teilen`).
fn meta_line(text: &str) -> bool {
    let (label, value) = text.split_once(':').unwrap_or((text, ""));
    if label.len() > MAX_LABEL || value.len() > MAX_TAGS {
        return false;
    }
    let label = label.trim_end_matches([' ', '?']);
    let value = value.trim();
    let is = |list: &[&str]| list.contains(&label);
    let dated_label = || {
        DATES.iter().any(|&date| {
            label
                .strip_prefix(date)
                .is_some_and(|rest| rest.starts_with(' ') && dated(rest))
        })
    };
    is(TAGS)
        || (value.is_empty() && is(SHARE))
        || (is(DATES) && (value.is_empty() || dated(value)))
        || (value.is_empty() && dated_label())
}

/// Whether text is one or more dates (`d.m.y`, `d/m/y`, `y-m-d`) and times
/// (`h:m`, `h:m:s`), separated by spaces or commas.
fn dated(text: &str) -> bool {
    let mut any = false;
    for token in text.split([' ', ',']).filter(|t| !t.is_empty()) {
        let ok = [b'.', b'/', b'-']
            .iter()
            .any(|&sep| groups(token, sep) == Some(3))
            || matches!(groups(token, b':'), Some(2 | 3));
        if !ok {
            return false;
        }
        any = true;
    }
    any
}

/// How many groups of 1 to 4 digits `token` is, separated by `sep` (a
/// trailing `sep` allowed: `23.10.`), or `None` if it is anything else.
fn groups(token: &str, sep: u8) -> Option<usize> {
    let token = token.strip_suffix(sep as char).unwrap_or(token);
    let mut n = 0;
    for group in token.as_bytes().split(|&c| c == sep) {
        if group.is_empty() || group.len() > 4 || !group.iter().all(u8::is_ascii_digit) {
            return None;
        }
        n += 1;
    }
    Some(n)
}

/// Labels of advertising, lower case.
const ADVERT: &[&str] = &[
    "anzeige",
    "werbung",
    "advertisement",
    "sponsored",
    "publicidad",
    "publicité",
    "reklama",
];

/// Longest block (bytes) that can be an advertising label.
const MAX_ADVERT: usize = 100;

/// Whether a short block starts with an advertising label (`Anzeige`,
/// `- Anzeige -`, `*Werbung. Dieser Beitrag ...`, `Advertisement`).
fn advert_line(text: &str) -> bool {
    if text.len() > MAX_ADVERT {
        return false;
    }
    let text = text.trim_start_matches(|c: char| !c.is_alphanumeric());
    let word = text
        .split(|c: char| !c.is_alphanumeric())
        .next()
        .unwrap_or_default();
    ADVERT.contains(&word)
}

/// Longest block (bytes) that can be a date line.
const MAX_DATE: usize = 40;

/// Whether a block is only a date and/or time (`23.10.2018`,
/// `2021-04-07 19:49`, `20:37`): a post's date, set apart from its text.
fn date_line(text: &str) -> bool {
    text.len() <= MAX_DATE && dated(text)
}

/// Longest block (bytes) that can be a call to subscribe or donate.
const MAX_CALL: usize = 200;

/// Longest block (bytes) judged by its words: the longest of the limits
/// (a tag line is a label, a colon and a value).
const MAX_JUDGED: usize = longest(&[
    MAX_LABEL,
    MAX_CREDIT,
    MAX_LABEL + 1 + MAX_TAGS,
    MAX_ADVERT,
    MAX_DATE,
    MAX_CALL,
    MAX_READING_TIME,
]);

/// The largest of `limits`.
const fn longest(limits: &[usize]) -> usize {
    let mut max = 0;
    let mut i = 0;
    while i < limits.len() {
        if limits[i] > max {
            max = limits[i];
        }
        i += 1;
    }
    max
}

/// Whether a block is furniture by its words alone: a heading over related
/// content, an author box or comments, a credit, tag, date, share or
/// advertising line, a call to subscribe or donate, or a reading time. A short block is
/// lower-cased once for all the judgements, a long one is never furniture.
pub(super) fn furniture(text: &str) -> bool {
    if text.len() > MAX_JUDGED {
        return false;
    }
    let text = text.to_lowercase();
    let text = text.as_str();
    furniture_heading(text)
        || credit_line(text)
        || meta_line(text)
        || advert_line(text)
        || date_line(text)
        || call_to_action(text)
        || reading_time(text)
}

/// Longest block (bytes) that can be a reading time.
const MAX_READING_TIME: usize = 32;

/// Words of a reading time, lower case.
const READING: &[&str] = &[
    "min read",
    "minute read",
    "minutes read",
    "reading time",
    "lesezeit",
    "lesedauer",
    "min. lesen",
    "de lecture",
    "de lectura",
    "czytania",
    "przeczytasz",
];

/// Whether a block is a post's reading time (`5 min read`, `Lesezeit: 3
/// Minuten`, `11 minut czytania`): short, with a number and a reading word.
fn reading_time(text: &str) -> bool {
    text.len() <= MAX_READING_TIME
        && text.bytes().any(|c| c.is_ascii_digit())
        && READING.iter().any(|word| text.contains(word))
}

/// Word beginnings that ask a reader to subscribe: `newsletter`,
/// `subscribe`, `abonnieren`, `suscríbete`, `subskrypcja`, ...
const SUBSCRIBE: &[&str] = &["newsletter", "subscri", "abonn", "suscr", "subskrypc"];

/// Words that ask a reader to donate.
const DONATE: &[&str] = &["donate", "spende", "spenden"];

/// Whether a short block asks the reader to sign up for a newsletter,
/// subscribe or donate ("Zum Newsletter anmelden", "Subscribe now for the
/// full story", "Jede kleine Spende hilft").
fn call_to_action(text: &str) -> bool {
    if text.len() > MAX_CALL {
        return false;
    }
    text.split(|c: char| !c.is_alphanumeric())
        .any(|word| SUBSCRIBE.iter().any(|start| word.starts_with(start)) || DONATE.contains(&word))
}
