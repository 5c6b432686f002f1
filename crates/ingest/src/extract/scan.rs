//! One pass over an HTML string: a hand-written tag scanner that keeps a
//! stack of open elements (with the implied end tags that matter for text:
//! `p`, `li`, `dt`/`dd`, table cells and rows), decodes entities, collapses
//! white space, and records
//! * text blocks (runs of text between block-level boundaries) with their
//!   link-text share and the element that holds them, and
//! * element records for block-level elements: parent, last descendant and
//!   flags (`main`, `article`, furniture by class/id/role, ...),
//!
//! which is all the selection step (`select`) needs: there is no DOM.
//! Subtrees that are never wanted (`script`, `svg`, `hidden`, and in
//! main-content mode `nav`, `aside`, page-level `header`/`footer`, ...) are
//! skipped as they are scanned.

use super::tags::{self, flag::*, Verdict};
use memchr::{memchr, memmem};

/// Deepest nesting tracked; start tags deeper than this are ignored (their
/// text is kept), so hostile nesting costs no more memory.
const MAX_DEPTH: usize = 512;

/// What the scan is for.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Mode {
    /// Main-content extraction: page furniture is dropped or flagged.
    Main,
    /// All visible text.
    All,
}

/// A run of text between block boundaries: `text[start..end]`.
#[derive(Debug)]
pub(super) struct Block {
    pub(super) start: usize,
    pub(super) end: usize,
    /// The innermost block-level element holding the text (0: the document).
    pub(super) owner: usize,
    /// Bytes of the text that are inside links.
    pub(super) link: usize,
}

/// A block-level element. Element records are in document order, so the
/// descendants of element `e` are exactly `e + 1 ..= last`.
#[derive(Debug)]
pub(super) struct Elem {
    pub(super) parent: usize,
    pub(super) last: usize,
    pub(super) flags: u32,
}

/// The result of a scan.
pub(super) struct Parsed {
    /// The text of all blocks, each followed by `\n`.
    pub(super) text: String,
    pub(super) blocks: Vec<Block>,
    /// Element 0 is the document itself.
    pub(super) elems: Vec<Elem>,
    /// The first `<title>`, entity-decoded and white-space-collapsed.
    pub(super) title: Option<String>,
}

/// An open element on the stack.
struct Open {
    /// Hash of the lower-case tag name: end tags are matched by it.
    id: u32,
    flags: u32,
    /// Its element record, or its nearest block ancestor's if it has none.
    elem: usize,
    owns_elem: bool,
}

/// The attributes the extractor looks at.
#[derive(Default)]
struct Attrs<'a> {
    class: &'a [u8],
    id: &'a [u8],
    role: &'a [u8],
    /// `hidden`, `aria-hidden=true`, or an inline `display:none` /
    /// `visibility:hidden` style.
    hidden: bool,
}

/// Scans `html` once.
pub(super) fn scan(html: &str, mode: Mode) -> Parsed {
    let mut s = Scanner {
        html,
        mode,
        out: Vec::with_capacity(html.len() / 4),
        block_start: 0,
        block_link: 0,
        pending_space: false,
        pre_fresh: false,
        blocks: Vec::new(),
        elems: vec![Elem {
            parent: 0,
            last: 0,
            flags: ROOT,
        }],
        stack: Vec::new(),
        drop_depth: None,
        link_depth: 0,
        pre_depth: 0,
        semantic_depth: 0,
        title: None,
        scratch: String::new(),
    };
    s.run();
    let text = String::from_utf8(s.out)
        // Never taken: text is only cut at ASCII bytes and decoded entities
        // are whole characters.
        .unwrap_or_else(|err| String::from_utf8_lossy(err.as_bytes()).into_owned());
    Parsed {
        text,
        blocks: s.blocks,
        elems: s.elems,
        title: s.title,
    }
}

struct Scanner<'a> {
    html: &'a str,
    mode: Mode,
    out: Vec<u8>,
    block_start: usize,
    block_link: usize,
    pending_space: bool,
    /// Just after `<pre>`: a leading newline is dropped, as browsers do.
    pre_fresh: bool,
    blocks: Vec<Block>,
    elems: Vec<Elem>,
    stack: Vec<Open>,
    /// Stack height below which an element whose subtree is being dropped
    /// sits; text is ignored while set.
    drop_depth: Option<usize>,
    link_depth: u32,
    pre_depth: u32,
    semantic_depth: u32,
    title: Option<String>,
    scratch: String,
}

impl Scanner<'_> {
    fn run(&mut self) {
        let bytes = self.html.as_bytes();
        let mut pos = 0;
        while pos < bytes.len() {
            let Some(found) = memchr(b'<', &bytes[pos..]) else {
                self.text(pos, bytes.len());
                break;
            };
            let lt = pos + found;
            if lt > pos {
                self.text(pos, lt);
            }
            pos = self.markup(lt);
        }
        self.flush();
        while !self.stack.is_empty() {
            self.pop();
        }
        self.elems[0].last = self.elems.len() - 1;
    }

    /// Handles the markup starting with `<` at `lt`; returns where text
    /// resumes.
    fn markup(&mut self, lt: usize) -> usize {
        let b = self.html.as_bytes();
        match b.get(lt + 1) {
            Some(b'!') if b[lt + 2..].starts_with(b"--") => {
                let body = lt + 4;
                match memmem::find(b.get(body..).unwrap_or_default(), b"-->") {
                    Some(i) => body + i + 3,
                    None => b.len(),
                }
            }
            Some(b'!' | b'?') => skip_to_gt(b, lt + 2),
            Some(b'/') => match b.get(lt + 2) {
                Some(c) if c.is_ascii_alphabetic() => {
                    let end = name_end(b, lt + 2);
                    self.end_tag(&b[lt + 2..end]);
                    skip_to_gt(b, end)
                }
                _ => skip_to_gt(b, lt + 2),
            },
            Some(c) if c.is_ascii_alphabetic() => self.start_tag(lt),
            _ => {
                self.text(lt, lt + 1);
                lt + 1
            }
        }
    }

    fn start_tag(&mut self, lt: usize) -> usize {
        let b = self.html.as_bytes();
        let name_stop = name_end(b, lt + 1);
        let name = &b[lt + 1..name_stop];
        let (attrs, end) = parse_attrs(b, name_stop);
        let (id, flags) = identify(name);
        if flags & RAW != 0 {
            return self.raw_text(name, flags, end);
        }
        if flags & BLOCK != 0 {
            self.flush();
            self.close_implied(flags);
        }
        if flags & VOID != 0 {
            if flags & BR != 0 {
                self.line_break();
            }
            return end;
        }
        if self.stack.len() >= MAX_DEPTH {
            return end;
        }
        let mut open_flags = flags;
        if attrs.role.eq_ignore_ascii_case(b"main") {
            open_flags |= MAIN;
        } else if attrs.role.eq_ignore_ascii_case(b"article") {
            open_flags |= ARTICLE;
        }
        let dropping = self.drop_depth.is_some();
        let drop_here = !dropping
            && (flags & HIDDEN != 0
                || attrs.hidden
                || (self.mode == Mode::Main
                    && (flags & CHROME != 0 || (flags & BLOCK == 0 && inline_furniture(&attrs)))));
        let parent = self.current_elem();
        let owns_elem = !dropping && !drop_here && flags & BLOCK != 0;
        let elem = if owns_elem {
            let judged = open_flags
                & (MAIN | ARTICLE | PARA | ROOT | HEADING | DT_DD | PRE | FORM | CELL | LI);
            let judged = judged | self.judge(name, flags, &attrs);
            self.elems.push(Elem {
                parent,
                last: self.elems.len(),
                flags: judged,
            });
            self.elems.len() - 1
        } else {
            parent
        };
        if drop_here {
            self.drop_depth = Some(self.stack.len());
        }
        self.stack.push(Open {
            id,
            flags: open_flags,
            elem,
            owns_elem,
        });
        self.link_depth += u32::from(open_flags & LINK != 0);
        self.semantic_depth += u32::from(open_flags & (MAIN | ARTICLE) != 0);
        if open_flags & PRE != 0 {
            self.pre_depth += 1;
            self.pre_fresh = true;
        }
        end
    }

    /// Flags an element record by its class, id, role or custom name (main
    /// content mode only; never `main`, `article`, `body`, `html`; a
    /// paragraph-like element only by a strong word).
    fn judge(&self, name: &[u8], flags: u32, attrs: &Attrs<'_>) -> u32 {
        if self.mode == Mode::All || flags & (MAIN | ARTICLE | ROOT) != 0 {
            return 0;
        }
        let page_part = flags & PAGE_PART != 0 && self.semantic_depth == 0;
        if flags & FORM != 0 || page_part || tags::chrome_role(attrs.role) {
            return BOILER;
        }
        let custom: &[u8] = if flags & CUSTOM != 0 { name } else { b"" };
        // A paragraph's or heading's id is an anchor (`nav_summary`), not a
        // role: only its class counts.
        let id: &[u8] = if flags & PARA != 0 { b"" } else { attrs.id };
        match tags::judge(&[attrs.class, id, custom]) {
            Verdict::Boilerplate => BOILER,
            Verdict::LikelyBoilerplate => BOILER | SOFT,
            Verdict::WeakBoilerplate if flags & PARA == 0 => BOILER | SOFT,
            Verdict::Content => POSITIVE,
            Verdict::WeakBoilerplate => 0,
            Verdict::Neutral => 0,
        }
    }

    /// Skips the content of a raw-text element (capturing the first title);
    /// returns where markup resumes.
    fn raw_text(&mut self, name: &[u8], flags: u32, from: usize) -> usize {
        let b = self.html.as_bytes();
        // Inside an `svg` (dropped) a `<title/>` is an empty element, not
        // the start of raw text.
        if self.drop_depth.is_some() && b[..from].ends_with(b"/>") {
            return from;
        }
        let Some((content_end, resume)) = find_end_tag(b, from, name) else {
            // No end tag: broken markup, not a page of raw text. The
            // element is taken as empty and what follows is read.
            return from;
        };
        if flags & TITLE != 0 && self.title.is_none() && self.drop_depth.is_none() {
            let raw = self.html.get(from..content_end).unwrap_or_default();
            self.title = Some(clean_inline(raw)).filter(|t| !t.is_empty());
        }
        resume
    }

    /// Pops the elements that a new block implicitly closes: an open `p`,
    /// and an open `li`, `dt`/`dd`, cell or row before a new one.
    fn close_implied(&mut self, flags: u32) {
        while let Some(i) = self.stack.iter().rposition(|o| o.flags & BLOCK != 0) {
            let open = self.stack[i].flags;
            let closes = open & P != 0
                || (flags & LI != 0 && open & LI != 0)
                || (flags & DT_DD != 0 && open & DT_DD != 0)
                || (flags & (CELL | ROW) != 0 && open & CELL != 0)
                || (flags & ROW != 0 && open & ROW != 0);
            if !closes {
                break;
            }
            self.pop_to(i);
        }
    }

    fn end_tag(&mut self, name: &[u8]) {
        let (id, flags) = identify(name);
        if flags & BR != 0 {
            // `</br>` is a line break, as in browsers.
            self.line_break();
            return;
        }
        let Some(i) = self.stack.iter().rposition(|o| o.id == id) else {
            return;
        };
        if self.stack[i..].iter().any(|o| o.flags & BLOCK != 0) {
            self.flush();
        }
        self.pop_to(i);
    }

    fn pop_to(&mut self, height: usize) {
        while self.stack.len() > height {
            self.pop();
        }
    }

    fn pop(&mut self) {
        let Some(open) = self.stack.pop() else {
            return;
        };
        self.link_depth -= u32::from(open.flags & LINK != 0);
        self.pre_depth -= u32::from(open.flags & PRE != 0);
        self.semantic_depth -= u32::from(open.flags & (MAIN | ARTICLE) != 0);
        if self.drop_depth.is_some_and(|d| self.stack.len() <= d) {
            self.drop_depth = None;
        }
        if open.owns_elem {
            self.elems[open.elem].last = self.elems.len() - 1;
        }
    }

    fn current_elem(&self) -> usize {
        self.stack.last().map_or(0, |o| o.elem)
    }

    /// Text between markup at `html[from..to]`.
    fn text(&mut self, from: usize, to: usize) {
        if self.drop_depth.is_some() {
            return;
        }
        let raw = self.html.get(from..to).unwrap_or_default();
        let before = self.out.len();
        if memchr(b'&', raw.as_bytes()).is_some() {
            let mut decoded = std::mem::take(&mut self.scratch);
            decoded.clear();
            html_escape::decode_html_entities_to_string(raw, &mut decoded);
            self.push_text(decoded.as_bytes());
            self.scratch = decoded;
        } else {
            self.push_text(raw.as_bytes());
        }
        if self.link_depth > 0 {
            self.block_link += self.out.len() - before;
        }
    }

    fn push_text(&mut self, mut text: &[u8]) {
        if self.pre_depth > 0 {
            if std::mem::take(&mut self.pre_fresh) {
                text = text
                    .strip_prefix(b"\r\n")
                    .or_else(|| text.strip_prefix(b"\n"))
                    .unwrap_or(text);
            }
            self.space_if_pending();
            self.out.extend(text.iter().filter(|&&c| c != b'\r'));
            return;
        }
        while !text.is_empty() {
            match text {
                [c, rest @ ..] if is_space(*c) => {
                    self.pending_space = true;
                    text = rest;
                }
                // A no-break space is a space like any other in the text (`a&nbsp; b` is
                // `a b`); a soft hyphen is a hint where a word may break, not a character.
                [0xC2, 0xA0, rest @ ..] => {
                    self.pending_space = true;
                    text = rest;
                }
                [0xC2, 0xAD, rest @ ..] => text = rest,
                _ => {
                    // Up to the next white space or possible no-break space / soft hyphen;
                    // 0xC2 is never a word's first byte here unless it starts another
                    // character, which is copied with the word.
                    let word = 1 + text[1..]
                        .iter()
                        .position(|&c| is_space(c) || c == 0xC2)
                        .unwrap_or(text.len() - 1);
                    self.space_if_pending();
                    self.out.extend_from_slice(&text[..word]);
                    text = &text[word..];
                }
            }
        }
    }

    fn space_if_pending(&mut self) {
        if std::mem::take(&mut self.pending_space)
            && self.out.len() > self.block_start
            && self.out.last() != Some(&b'\n')
        {
            self.out.push(b' ');
        }
    }

    fn line_break(&mut self) {
        if self.drop_depth.is_some() || self.out.len() == self.block_start {
            return;
        }
        self.trim_end();
        self.out.push(b'\n');
        self.pending_space = false;
    }

    fn trim_end(&mut self) {
        while self.out.len() > self.block_start && self.out.last().is_some_and(|c| is_space(*c)) {
            self.out.pop();
        }
    }

    /// Ends the current block (if it has text).
    fn flush(&mut self) {
        self.trim_end();
        if self.out.len() > self.block_start {
            self.blocks.push(Block {
                start: self.block_start,
                end: self.out.len(),
                owner: self.current_elem(),
                link: self.block_link.min(self.out.len() - self.block_start),
            });
            self.out.push(b'\n');
        }
        self.block_start = self.out.len();
        self.block_link = 0;
        self.pending_space = false;
    }
}

/// Whether an inline element (`span`, `a`, ...) is furniture by a strong
/// word of its class or id (`post-ratings`, `share-link`): dropped with its
/// content, since inline elements get no element record to be judged later.
fn inline_furniture(attrs: &Attrs<'_>) -> bool {
    (!attrs.class.is_empty() || !attrs.id.is_empty())
        && tags::judge(&[attrs.class, attrs.id]) == Verdict::Boilerplate
}

/// ASCII white space as HTML defines it.
fn is_space(c: u8) -> bool {
    matches!(c, b' ' | b'\t' | b'\n' | b'\r' | b'\x0c')
}

/// End of a tag name starting at `from`.
fn name_end(b: &[u8], from: usize) -> usize {
    from + b[from..]
        .iter()
        .position(|&c| is_space(c) || c == b'/' || c == b'>')
        .unwrap_or(b.len() - from)
}

/// Position after the next `>` at or after `from` (or the end).
fn skip_to_gt(b: &[u8], from: usize) -> usize {
    let from = from.min(b.len());
    memchr(b'>', &b[from..]).map_or(b.len(), |i| from + i + 1)
}

/// A tag's identity (FNV-1a hash of its lower-case name) and flags.
fn identify(name: &[u8]) -> (u32, u32) {
    let mut hash: u32 = 0x811c_9dc5;
    for &c in name {
        hash = (hash ^ u32::from(c.to_ascii_lowercase())).wrapping_mul(0x0100_0193);
    }
    let mut buf = [0u8; 16];
    let flags = if name.len() <= buf.len() {
        let lower = &mut buf[..name.len()];
        lower.copy_from_slice(name);
        lower.make_ascii_lowercase();
        tags::classify(lower)
    } else if name.contains(&b'-') {
        BLOCK | CUSTOM
    } else {
        0
    };
    (hash, flags)
}

/// Parses the attributes of a start tag from `pos` (after the name) to its
/// `>`; returns them and the position after the tag.
fn parse_attrs(b: &[u8], mut pos: usize) -> (Attrs<'_>, usize) {
    let mut attrs = Attrs::default();
    loop {
        while pos < b.len() && (is_space(b[pos]) || b[pos] == b'/') {
            pos += 1;
        }
        match b.get(pos) {
            None => return (attrs, b.len()),
            Some(b'>') => return (attrs, pos + 1),
            Some(_) => {}
        }
        let name_start = pos;
        pos += 1;
        while pos < b.len() && !(is_space(b[pos]) || matches!(b[pos], b'/' | b'>' | b'=')) {
            pos += 1;
        }
        let name = &b[name_start..pos];
        while pos < b.len() && is_space(b[pos]) {
            pos += 1;
        }
        let mut value: &[u8] = b"";
        if b.get(pos) == Some(&b'=') {
            pos += 1;
            while pos < b.len() && is_space(b[pos]) {
                pos += 1;
            }
            match b.get(pos) {
                Some(&quote @ (b'"' | b'\'')) => {
                    let start = pos + 1;
                    let Some(len) = memchr(quote, &b[start..]) else {
                        return (attrs, b.len());
                    };
                    value = &b[start..start + len];
                    pos = start + len + 1;
                }
                Some(_) => {
                    let start = pos;
                    while pos < b.len() && !is_space(b[pos]) && b[pos] != b'>' {
                        pos += 1;
                    }
                    value = &b[start..pos];
                }
                None => {}
            }
        }
        attrs.set(name, value);
    }
}

impl<'a> Attrs<'a> {
    fn set(&mut self, name: &[u8], value: &'a [u8]) {
        let is = |n: &[u8]| name.eq_ignore_ascii_case(n);
        match name.len() {
            2 if is(b"id") => self.id = value,
            4 if is(b"role") => self.role = value,
            5 if is(b"class") => self.class = value,
            5 if is(b"style") => self.hidden |= hiding_style(value),
            6 if is(b"hidden") => self.hidden = true,
            11 if is(b"aria-hidden") => self.hidden |= value.eq_ignore_ascii_case(b"true"),
            _ => {}
        }
    }
}

/// Whether an inline style hides the element.
fn hiding_style(style: &[u8]) -> bool {
    if memmem::find(style, b"none").is_none() && memmem::find(style, b"hidden").is_none() {
        return false;
    }
    let compact: Vec<u8> = style
        .iter()
        .filter(|c| !is_space(**c))
        .map(u8::to_ascii_lowercase)
        .collect();
    memmem::find(&compact, b"display:none").is_some()
        || memmem::find(&compact, b"visibility:hidden").is_some()
}

/// The end of a raw-text element's content: (start of `</name`, position
/// after its `>`), or `None` if there is no end tag.
fn find_end_tag(b: &[u8], from: usize, name: &[u8]) -> Option<(usize, usize)> {
    let from = from.min(b.len());
    for at in memmem::find_iter(&b[from..], b"</").map(|i| from + i) {
        let rest = &b[at + 2..];
        if rest.len() >= name.len()
            && rest[..name.len()].eq_ignore_ascii_case(name)
            && rest
                .get(name.len())
                .is_none_or(|&c| is_space(c) || c == b'/' || c == b'>')
        {
            return Some((at, skip_to_gt(b, at + 2 + name.len())));
        }
    }
    None
}

/// Entity-decodes and white-space-collapses a short inline text (a title).
pub(super) fn clean_inline(raw: &str) -> String {
    let decoded = html_escape::decode_html_entities(raw);
    decoded
        .split(|c: char| c.is_ascii() && is_space(c as u8))
        .filter(|w| !w.is_empty())
        .collect::<Vec<_>>()
        .join(" ")
}

/// The first `<title>` of a page, found by a quick scan of the part before
/// `<body>` (no full parse).
pub(super) fn find_title(html: &str) -> Option<String> {
    let b = html.as_bytes();
    let mut pos = 0;
    while let Some(i) = memchr(b'<', &b[pos..]) {
        let at = pos + i + 1;
        let name = &b[at..name_end(b, at)];
        if name.eq_ignore_ascii_case(b"body") {
            return None;
        }
        if name.eq_ignore_ascii_case(b"script") || name.eq_ignore_ascii_case(b"style") {
            let (_, resume) = find_end_tag(b, at, name).unwrap_or((b.len(), b.len()));
            pos = resume;
        } else if name.eq_ignore_ascii_case(b"title") {
            let start = skip_to_gt(b, at);
            let (end, _) = find_end_tag(b, start, name).unwrap_or((b.len(), b.len()));
            return Some(clean_inline(html.get(start..end)?)).filter(|t| !t.is_empty());
        } else {
            pos = at;
        }
    }
    None
}
