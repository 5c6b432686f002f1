//! Main content of pages in other scripts and charsets, read the way the
//! commands read them: Chinese pages in GBK, GB18030 and Big5 declared in
//! `<meta>` (folder files) or in the HTTP header (WARC), right-to-left pages,
//! and pages without `article` or `main` (a table layout, div soup). Every
//! fixture is made here.

mod common;

use common::{http, read_corpus, warc_record};
use encoding_rs::{Encoding, BIG5, GB18030, GBK};
use neardup_ingest::extract::MainContentExtractor;
use neardup_ingest::{Document, ReadOptions};

/// The words of a Chinese news page, in one script.
struct Zh {
    title: &'static str,
    nav: [&'static str; 3],
    popular: [&'static str; 2],
    heading: &'static str,
    story: &'static str,
    footer: &'static str,
}

const SIMPLIFIED: Zh = Zh {
    title: "新闻",
    nav: ["首页", "新闻中心", "联系我们"],
    popular: ["热门文章一", "热门文章二"],
    heading: "交通计划获批",
    story: "市议会周二晚间经过长时间辩论，批准了新的公共交通计划，新增三条公交线路，并延长轻轨至北部郊区。\
        市长表示，该计划在不增加税收的情况下，为通勤者每天节省约二十分钟。",
    footer: "版权所有",
};

const TRADITIONAL: Zh = Zh {
    title: "新聞",
    nav: ["首頁", "新聞中心", "聯絡我們"],
    popular: ["熱門文章一", "熱門文章二"],
    heading: "交通計劃獲批",
    story: "市議會週二晚間經過長時間辯論，批准了新的公共交通計劃，新增三條公車路線，並延長輕軌至北部郊區。\
        市長表示，該計劃在不增加稅收的情況下，為通勤者每天節省約二十分鐘。",
    footer: "版權所有",
};

/// A Chinese news page laid out with a table and divs (no `article`, no
/// `main`), declaring `charset` in a `<meta>` if given.
fn zh_page(meta: Option<&str>, zh: &Zh) -> String {
    let meta = meta.map_or(String::new(), |m| format!("<meta charset=\"{m}\">"));
    let Zh {
        title,
        nav,
        popular,
        heading,
        story,
        footer,
    } = zh;
    format!(
        "<html><head>{meta}<title>{title}</title></head><body>\
         <div class=\"menu\"><a href=\"/\">{}</a> <a href=\"/n\">{}</a> <a href=\"/c\">{}</a></div>\
         <table><tr><td class=\"left\"><a href=\"/a\">{}</a><br><a href=\"/b\">{}</a></td>\
         <td><h1>{heading}</h1><p>{story}</p></td></tr></table>\
         <div class=\"copyright\">{footer} 2024</div></body></html>",
        nav[0], nav[1], nav[2], popular[0], popular[1]
    )
}

fn encode(encoding: &'static Encoding, text: &str) -> Vec<u8> {
    let (bytes, _, unmappable) = encoding.encode(text);
    assert!(!unmappable, "{} cannot encode the fixture", encoding.name());
    bytes.into_owned()
}

fn read_all(path: &std::path::Path) -> Vec<Document> {
    let reading = read_corpus(&[path.to_path_buf()], &ReadOptions::default()).unwrap();
    assert!(reading.end.is_ok(), "{:?}", reading.end);
    assert!(
        reading.items.iter().all(Result::is_ok),
        "{:?}",
        reading.outline()
    );
    reading.documents()
}

fn main_text(doc: &Document) -> String {
    neardup_ingest::document_text(
        doc,
        neardup_ingest::HtmlText::Main,
        &MainContentExtractor::default(),
    )
    .into_owned()
}

/// The decoded document has the title, and its main text is the heading and
/// the story without navigation, links or footer.
fn assert_story_only(doc: &Document, zh: &Zh) {
    assert_eq!(doc.title.as_deref(), Some(zh.title), "{}", doc.id);
    assert_eq!(main_text(doc), format!("{}\n{}", zh.heading, zh.story));
}

#[test]
fn chinese_pages_in_gbk_gb18030_and_big5_declared_in_meta() {
    let dir = tempfile::tempdir().unwrap();
    let cases = [
        ("a-gbk.html", GBK, "gbk", &SIMPLIFIED),
        ("b-gb18030.html", GB18030, "GB18030", &SIMPLIFIED),
        ("c-big5.html", BIG5, "big5", &TRADITIONAL),
    ];
    for (name, encoding, label, zh) in &cases {
        let bytes = encode(encoding, &zh_page(Some(label), zh));
        assert!(std::str::from_utf8(&bytes).is_err(), "not UTF-8: {name}");
        std::fs::write(dir.path().join(name), bytes).unwrap();
    }
    let docs = read_all(dir.path());
    assert_eq!(docs.len(), cases.len());
    for (doc, (name, _, _, zh)) in docs.iter().zip(&cases) {
        assert_eq!(&doc.id, name);
        assert_story_only(doc, zh);
    }
}

#[test]
fn chinese_pages_declared_in_http_headers() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("zh.warc");
    let cases = [
        ("http://zh.example/gbk", GBK, "GBK", &SIMPLIFIED),
        ("http://zh.example/gb18030", GB18030, "gb18030", &SIMPLIFIED),
        ("http://tw.example/big5", BIG5, "Big5", &TRADITIONAL),
    ];
    let mut warc = Vec::new();
    for (uri, encoding, label, zh) in &cases {
        // No `<meta>`: the header alone says how to decode.
        let body = encode(encoding, &zh_page(None, zh));
        let header = format!("Content-Type: text/html; charset={label}");
        warc.extend(warc_record(
            "response",
            uri,
            &http("200 OK", &[&header], &body),
        ));
    }
    std::fs::write(&path, warc).unwrap();
    let docs = read_all(&path);
    assert_eq!(docs.len(), cases.len());
    for (doc, (uri, _, _, zh)) in docs.iter().zip(&cases) {
        assert_eq!(doc.url.as_deref(), Some(*uri));
        assert_story_only(doc, zh);
    }
}

const AR_STORY: &str =
    "وافق المجلس البلدي مساء الثلاثاء على خطة النقل الجديدة، التي تضيف ثلاثة خطوط للحافلات، \
    وتمدد القطار الخفيف إلى الضواحي الشمالية، وتعيد رصف أربعين كيلومترا من مسارات الدراجات.";
const HE_STORY: &str =
    "מועצת העיר אישרה ביום שלישי את תוכנית התחבורה החדשה, המוסיפה שלושה קווי אוטובוס, \
    מאריכה את הרכבת הקלה לפרברים הצפוניים, ומרצפת מחדש ארבעים קילומטרים של שבילי אופניים.";

#[test]
fn right_to_left_pages() {
    let arabic = format!(
        "<html dir=\"rtl\" lang=\"ar\"><head><meta charset=\"utf-8\"><title>أخبار المدينة</title></head><body>\
         <nav><a href=\"/\">الرئيسية</a> <a href=\"/s\">رياضة</a></nav>\
         <div class=\"post-content\"><h1>الموافقة على خطة النقل</h1><p>{AR_STORY}</p></div>\
         <div class=\"sidebar\"><a href=\"/x\">الأكثر قراءة</a></div>\
         <div id=\"footer\">جميع الحقوق محفوظة</div></body></html>"
    );
    let text = MainContentExtractor::default().extract(&arabic).text;
    assert_eq!(text, format!("الموافقة على خطة النقل\n{AR_STORY}"));

    // Hebrew, in a table layout with right-to-left marks and entities.
    let hebrew = format!(
        "<html dir=\"rtl\" lang=\"he\"><body><table>\
         <tr><td colspan=\"2\" class=\"topbar\"><a href=\"/\">דף הבית</a> | <a href=\"/c\">צור קשר</a></td></tr>\
         <tr><td class=\"links\"><a href=\"/1\">כתבה קודמת</a><br><a href=\"/2\">כתבה הבאה</a></td>\
         <td><p>&rlm;{HE_STORY}</p></td></tr></table></body></html>"
    );
    let text = MainContentExtractor::default().extract(&hebrew).text;
    assert!(text.contains(HE_STORY), "{text}");
    for dropped in ["דף הבית", "כתבה קודמת"] {
        assert!(!text.contains(dropped), "{dropped:?} in {text}");
    }
}

#[test]
fn ruby_annotations_do_not_cut_words_apart() {
    // Japanese with furigana (and the fallback parentheses): the text is the base text, as a
    // reader reads it, in every mode; an `rt` closed implicitly by the next `rt` counts too.
    let html = "<html><body><main><h1>ニュース</h1>\
        <p>子どもへの<ruby>虐待<rp>(</rp><rt>ぎゃくたい</rt><rp>)</rp></ruby>をなくすための\
        <ruby>法律<rt>ほう<rt>りつ</ruby>ができました。</p></main></body></html>";
    let want = "ニュース\n子どもへの虐待をなくすための法律ができました。";
    assert_eq!(MainContentExtractor::default().extract(html).text, want);
    assert_eq!(neardup_ingest::extract::html_to_text(html), want);
}
