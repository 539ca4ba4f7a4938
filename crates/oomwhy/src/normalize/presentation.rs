//! Presentation: how a paste dresses a message that a program printed.
//!
//! People paste errors into issues, forums and chats, and the message comes
//! back wrapped in markdown (`**bold**`, `` `code` ``, `> ` quotes), in HTML
//! (`&gt;`, `<br>`, `<code>`), with typographic quotes and full-width
//! punctuation (`“ ” ’ （ ） ； ：`), zero-width characters, retyped in lower
//! case, or with words and figures run together by a wrap (`totalcapacity`,
//! `50MiB(GPU 0;`). [`canonical`] undoes these so that every family matches
//! one canonical text, and keeps, for every byte of the result, where it
//! came from in the original line ([`Origin`]), so that a quotation can
//! point back at the bytes the user gave.
//!
//! The rules (each is a class, not one paste):
//! * ANSI escapes and zero-width characters (U+200B–U+200D, U+2060, U+FEFF,
//!   soft hyphen) are dropped; no-break and ideographic spaces become spaces.
//! * Typographic quotes become ASCII quotes; full-width forms (U+FF01–U+FF5E)
//!   become their ASCII letters and punctuation.
//! * HTML: entities are decoded (`&gt;`, `&#39;`, `&#x27;`, ...); formatting
//!   tags from a known list (`<code>`, `<b>`, `<pre>`, `<span ...>`) are
//!   dropped and `<br>` ends a line. Anything else in angle brackets stays:
//!   `<module>` and `<cell line: 29>` belong to tracebacks.
//! * Markdown: blockquote markers at the start of the line are dropped;
//!   emphasis markers are dropped in pairs (`**…**` anywhere it opens before
//!   a word and closes after one, `*…*`, `__…__` and `_…_` only around
//!   several words and after a space, so that `__init__` and `max_split_size_mb` stay). A backtick
//!   pair is dropped only where the quotation is a paste of what a program
//!   printed ([`crate::detect::is_mention`] says it is not a mention): a
//!   quotation that only mentions a message keeps its backticks, and with
//!   them what makes it a mention.
//! * Canonical phrases: the allocator's sentence words, in any case and run
//!   together (`cuda out of memory, tried to allocate`, `totalcapacity`,
//!   `alreadyallocated`), are written as the program prints them.
//! * A figure glued to the next token (`50MiB(GPU 0;`, `4.00 GiB.GPU 0`) or
//!   a `;` glued to the next figure (`;1.33GiB`) gets its space back.

use memchr::memmem;
use std::ops::Range;

/// Where the bytes of a normalised text came from in the raw line.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Origin {
    /// Runs of the text, in order: (start in the text, start in the raw
    /// line, whether the run is the raw bytes copied verbatim). A run that
    /// replaced raw bytes maps every one of its bytes to its raw start.
    runs: Vec<(usize, usize, bool)>,
}

impl Origin {
    /// The identity: the text is the raw line from `raw_start` on.
    pub fn verbatim(raw_start: usize) -> Self {
        Origin {
            runs: vec![(0, raw_start, true)],
        }
    }

    /// The raw byte offset that text offset `at` came from.
    pub fn raw_offset(&self, at: usize) -> usize {
        let index = self.runs.partition_point(|run| run.0 <= at);
        match index.checked_sub(1).and_then(|i| self.runs.get(i)) {
            Some(&(text, raw, true)) => raw + (at - text),
            Some(&(_, raw, false)) => raw,
            None => at,
        }
    }

    /// The same origin for the text after its first `bytes` bytes.
    pub fn skip(&self, bytes: usize) -> Origin {
        if bytes == 0 {
            return self.clone();
        }
        let index = self.runs.partition_point(|run| run.0 <= bytes).max(1) - 1;
        let mut runs = Vec::with_capacity(self.runs.len() - index);
        for (i, &(text, raw, verbatim)) in self.runs.iter().enumerate().skip(index) {
            if i == index {
                let raw = if verbatim {
                    raw + bytes.saturating_sub(text)
                } else {
                    raw
                };
                runs.push((0, raw, verbatim));
            } else {
                runs.push((text - bytes, raw, verbatim));
            }
        }
        Origin { runs }
    }
}

/// A text being built, with the origin of each run.
#[derive(Default)]
struct Builder {
    text: String,
    origin: Origin,
}

impl Builder {
    fn copy(&mut self, raw_at: usize, piece: &str) {
        if piece.is_empty() {
            return;
        }
        let contiguous = self
            .origin
            .runs
            .last()
            .is_some_and(|&(text, raw, verbatim)| {
                verbatim && raw_at >= raw && raw_at - raw == self.text.len() - text
            });
        if !contiguous {
            self.origin.runs.push((self.text.len(), raw_at, true));
        }
        self.text.push_str(piece);
    }

    fn replace(&mut self, raw_at: usize, piece: &str) {
        if piece.is_empty() {
            return;
        }
        self.origin.runs.push((self.text.len(), raw_at, false));
        self.text.push_str(piece);
    }
}

/// Bytes whose presence in a line means there may be presentation to undo.
/// Every other ASCII byte is left as it is.
fn has_markup(line: &str) -> bool {
    let bytes = line.as_bytes();
    !line.is_ascii()
        || memchr::memchr3(b'*', b'`', b'&', bytes).is_some()
        || memchr::memchr3(b'<', b'_', b'\x1b', bytes).is_some()
        || memmem::find(bytes, b"#033[").is_some()
        || line.trim_start().starts_with('>')
}

/// Whether the canonical-phrase pass could change the line: it holds one of
/// the phrase words in a case other than the canonical one or run together.
fn may_need_phrases(line: &str) -> bool {
    let bytes = line.as_bytes();
    ["emory", "EMORY", "llocat", "LLOCAT", "apacity", "APACITY"]
        .iter()
        .any(|needle| memmem::find(bytes, needle.as_bytes()).is_some())
}

/// The canonical text of a raw line (after its `\r`), with its origin; one
/// entry per line when `<br>` splits it. `None` when the line needs nothing:
/// the common case, decided with a few byte searches.
pub fn canonical(raw: &str) -> Option<Vec<(String, Origin)>> {
    let markup = has_markup(raw);
    if !markup && !may_need_phrases(raw) {
        return None;
    }
    let first = if markup {
        let removed = markdown_removals(raw);
        characters(raw, &removed)
    } else {
        let mut b = Builder::default();
        b.copy(0, raw);
        b
    };
    let mut out = Vec::new();
    // `<br>` was written as a newline: each part is a line of its own.
    let mut from = 0;
    loop {
        let end = first.text[from..]
            .find('\n')
            .map_or(first.text.len(), |i| from + i);
        let text = first.text[from..end].to_string();
        let origin = first.origin.skip(from);
        let (text, origin) = phrases(text, origin);
        out.push((text, origin));
        if end == first.text.len() {
            break;
        }
        from = end + 1;
    }
    let unchanged = out.len() == 1 && out[0].0 == raw;
    (!unchanged).then_some(out)
}

/// Byte ranges of the raw line that are markdown markup to drop.
fn markdown_removals(raw: &str) -> Vec<Range<usize>> {
    let mut removed = Vec::new();
    let bytes = raw.as_bytes();
    // Blockquote markers (`> `, `> > `), after up to three spaces; not the
    // `>>>` of an interpreter prompt.
    let mut at = 0;
    loop {
        let indent = bytes[at..]
            .iter()
            .take(3)
            .take_while(|&&b| b == b' ')
            .count();
        let marker = at + indent;
        if bytes.get(marker) != Some(&b'>') || bytes.get(marker + 1) == Some(&b'>') {
            break;
        }
        let end = if bytes.get(marker + 1) == Some(&b' ') {
            marker + 2
        } else {
            marker + 1
        };
        removed.push(at..end);
        at = end;
    }
    if at > 0 {
        reflowed_quote_markers(raw, &mut removed);
    }
    emphasis(raw, at, "**", false, &mut removed);
    emphasis(raw, at, "*", true, &mut removed);
    emphasis(raw, at, "__", true, &mut removed);
    emphasis(raw, at, "_", true, &mut removed);
    backticks(raw, at, &mut removed);
    removed.sort_by_key(|r| r.start);
    removed
}

/// Where a mail reader joined a quoted paragraph back into one line, the
/// quote markers of its wrapped lines stay inside it (`...Kill process 7963
/// > (sge_qmaster) score 948`). Only in a quoted line, and only where a
/// mail client wraps (50 to 78 columns after the previous marker), and
/// not between two figures: that `>` is a comparison (`57.97% > 50.00%`,
/// `(734003200 > 52428800)`).
fn reflowed_quote_markers(raw: &str, removed: &mut Vec<Range<usize>>) {
    const WRAP: std::ops::RangeInclusive<usize> = 50..=78;
    let bytes = raw.as_bytes();
    let mut line_start = 0;
    for at in memmem::find_iter(bytes, b" > ") {
        let marker = at + 1;
        let before = at.checked_sub(1).and_then(|i| bytes.get(i)).copied();
        let after = bytes.get(marker + 2).copied();
        let figure_before = before.is_some_and(|b| b.is_ascii_digit() || b"%)".contains(&b));
        let figure_after = after.is_some_and(|b| b.is_ascii_digit() || b == b'-');
        let operator = before.is_some_and(|b| b"<=>!".contains(&b));
        if operator || (figure_before && figure_after) || !WRAP.contains(&(marker - line_start)) {
            continue;
        }
        removed.push(marker..marker + 2);
        line_start = marker;
    }
}

fn is_word_byte(b: u8) -> bool {
    b.is_ascii_alphanumeric() || b == b'_' || b >= 0x80
}

/// Pairs of emphasis markers: one opening before a word (not after one), one
/// closing after a word (not before one). `words` asks for whitespace
/// inside, for the underscore forms that identifiers are made of.
fn emphasis(raw: &str, from: usize, marker: &str, words: bool, removed: &mut Vec<Range<usize>>) {
    let bytes = raw.as_bytes();
    let m = marker.len();
    let taken = |at: usize, removed: &Vec<Range<usize>>| {
        removed.iter().any(|r| r.start < at + m && at < r.end)
    };
    let finder = memmem::Finder::new(marker.as_bytes());
    let positions: Vec<usize> = finder.find_iter(&bytes[from..]).map(|i| from + i).collect();
    let mut open: Option<usize> = None;
    for &at in &positions {
        if taken(at, removed) {
            continue;
        }
        let before = at.checked_sub(1).map(|i| bytes[i]);
        let after = bytes.get(at + m).copied();
        // A longer run of the same character (`***`, `___`) is not this marker.
        let same = marker.as_bytes()[0];
        if before == Some(same) || after == Some(same) {
            continue;
        }
        // Underscores also sit in paths and names (`C:\a\_work`,
        // `stream_)`): they open only after a space and close only before a
        // space or a sentence's punctuation.
        let can_open = if words {
            before.is_none_or(|b| b.is_ascii_whitespace() || b == b'>')
        } else {
            !before.is_some_and(is_word_byte)
        } && after.is_some_and(|b| !b.is_ascii_whitespace());
        let can_close = before.is_some_and(|b| !b.is_ascii_whitespace())
            && if words {
                after.is_none_or(|b| b.is_ascii_whitespace() || b".,;:!?*".contains(&b))
            } else {
                !after.is_some_and(is_word_byte)
            };
        match open {
            Some(start) if can_close => {
                let inner = &raw[start + m..at];
                // A whole line in bold is a heading (an FAQ question), which
                // `is_mention` reads as one: it keeps its markers.
                let whole_line = raw[..start].trim().is_empty() && raw[at + m..].trim().is_empty();
                let words_ok = !words || (inner.contains(' ') && !inner.contains(['\\', '/']));
                if words_ok && (words || !whole_line) {
                    removed.push(start..start + m);
                    removed.push(at..at + m);
                }
                open = None;
            }
            _ if can_open => open = Some(at),
            _ => {}
        }
    }
}

/// Backtick pairs around a paste of a printed message.
fn backticks(raw: &str, from: usize, removed: &mut Vec<Range<usize>>) {
    let bytes = raw.as_bytes();
    let ticks: Vec<usize> = memchr::memchr_iter(b'`', &bytes[from..])
        .map(|i| from + i)
        .filter(|&i| bytes.get(i + 1) != Some(&b'`') && (i == 0 || bytes[i - 1] != b'`'))
        .collect();
    // An odd count: the first one closes a span opened on an earlier line.
    let skip = ticks.len() % 2;
    for pair in ticks[skip..].chunks_exact(2) {
        let (open, close) = (pair[0], pair[1]);
        let inner = &raw[open + 1..close];
        // A paste states something: figures, or a class and a colon. And it
        // ends the line: programs print backticks too, inside their own
        // sentences (`Assertion `t >= 0` failed.`, `Compile with `X` to`).
        let states = inner.bytes().any(|b| b.is_ascii_digit()) || inner.contains(": ");
        let ends_line = raw[close + 1..]
            .trim_matches(|c: char| c.is_whitespace() || ".,;:!?*_)".contains(c))
            .is_empty();
        if states && ends_line && !crate::detect::is_mention(raw, open + 1) {
            removed.push(open..open + 1);
            removed.push(close..close + 1);
        }
    }
}

/// HTML tags that only format text; `br` ends a line.
const FORMAT_TAGS: &[&str] = &[
    "code",
    "pre",
    "b",
    "strong",
    "em",
    "i",
    "p",
    "span",
    "kbd",
    "samp",
    "tt",
    "div",
    "details",
    "summary",
    "sub",
    "sup",
    "u",
    "s",
    "del",
    "ins",
    "mark",
    "font",
    "small",
    "big",
    "li",
    "ul",
    "ol",
    "blockquote",
    "h1",
    "h2",
    "h3",
    "h4",
    "h5",
    "h6",
];

/// A formatting tag at the start of `rest`: its length and whether it is `<br>`.
fn html_tag(rest: &str) -> Option<(usize, bool)> {
    let Some(close) = rest.find('>').filter(|&close| close <= 200) else {
        return styled_tag(rest).map(|len| (len, false));
    };
    let inner = rest.get(1..close)?;
    let inner = inner.strip_prefix('/').unwrap_or(inner);
    let name_len = inner
        .bytes()
        .take_while(|b| b.is_ascii_alphanumeric())
        .count();
    let (name, tail) = inner.split_at(name_len);
    let name = name.to_ascii_lowercase();
    let tail_ok = tail.is_empty() || tail.starts_with(' ') || tail == "/" || tail == " /";
    if !tail_ok {
        return None;
    }
    if name == "br" || name == "hr" {
        return Some((close + 1, true));
    }
    FORMAT_TAGS
        .contains(&name.as_str())
        .then_some((close + 1, false))
}

/// A formatting tag with attributes at the start of `rest` that the short
/// rule leaves (rich text copied from a page: `<span class="hljs-symbol"
/// style="padding: 0px; ...">`, longer than 200 bytes, or cut by the line's
/// end before its `>`): its length, to its `>` or to the line's end. Only a
/// tag whose name is a formatting one and whose first attribute is written
/// `name="` is taken, so that no other angle bracket is.
fn styled_tag(rest: &str) -> Option<usize> {
    let inner = rest.get(1..)?;
    let name_len = inner
        .bytes()
        .take_while(|b| b.is_ascii_alphanumeric())
        .count();
    let name = inner[..name_len].to_ascii_lowercase();
    if !FORMAT_TAGS.contains(&name.as_str()) {
        return None;
    }
    let attribute = inner[name_len..].strip_prefix(' ')?;
    let key_len = attribute
        .bytes()
        .take_while(|b| b.is_ascii_alphanumeric() || *b == b'-')
        .count();
    if key_len == 0 || !attribute[key_len..].starts_with("=\"") {
        return None;
    }
    Some(rest.find('>').map_or(rest.len(), |close| close + 1))
}

/// The rest of a tag's inline style that opens a line, the tag's start left
/// on the line before or cut off by the paste (`important; color: rgb(171,
/// 86, 86);">Error:`): its length up to and with its `">`. Only CSS
/// declarations (`property: value;`, at least two), with no angle bracket
/// or quote before the `">`.
fn style_tail(raw: &str) -> Option<usize> {
    let end = raw.find("\">")?;
    let head = &raw[..end];
    if head.contains(['<', '>', '"']) || !head.trim_end().ends_with(';') {
        return None;
    }
    let declarations = head
        .split(';')
        .filter(|d| {
            d.split_once(": ").is_some_and(|(property, _)| {
                let property = property.trim();
                !property.is_empty()
                    && property
                        .bytes()
                        .all(|b| b.is_ascii_lowercase() || b == b'-')
            })
        })
        .count();
    (declarations >= 2).then_some(end + 2)
}

/// An ANSI escape as syslog writes one (rsyslog escapes a control
/// character as `#` and its three octal digits: `#033[2m#033[33m(raylet)`):
/// its length.
fn syslog_escape(rest: &str) -> Option<usize> {
    let params = rest.strip_prefix("#033[")?;
    let digits = params
        .bytes()
        .take_while(|b| b.is_ascii_digit() || *b == b';')
        .count();
    let last = params.as_bytes().get(digits)?;
    last.is_ascii_alphabetic().then_some(5 + digits + 1)
}

/// A named or numeric HTML entity at the start of `rest`: its length and character.
fn html_entity(rest: &str) -> Option<(usize, char)> {
    let end = rest.bytes().take(12).position(|b| b == b';')?;
    let name = &rest[1..end];
    let c = match name {
        "gt" => '>',
        "lt" => '<',
        "amp" => '&',
        "quot" => '"',
        "apos" => '\'',
        "nbsp" => ' ',
        _ => {
            let digits = name.strip_prefix('#')?;
            let code = match digits.strip_prefix(['x', 'X']) {
                Some(hex) => u32::from_str_radix(hex, 16).ok()?,
                None => digits.parse().ok()?,
            };
            char::from_u32(code)?
        }
    };
    Some((end + 1, c))
}

/// The ASCII form of a typographic or full-width character, if it has one;
/// `Some("")` drops the character.
fn ascii_form(c: char) -> Option<&'static str> {
    Some(match c {
        '\u{200B}' | '\u{200C}' | '\u{200D}' | '\u{2060}' | '\u{FEFF}' | '\u{00AD}' => "",
        '\u{00A0}' | '\u{3000}' | '\u{2002}' | '\u{2003}' | '\u{2009}' | '\u{202F}' => " ",
        '\u{201C}' | '\u{201D}' | '\u{201E}' | '\u{201F}' | '\u{2033}' => "\"",
        '\u{2018}' | '\u{2019}' | '\u{201A}' | '\u{201B}' | '\u{2032}' => "'",
        '\u{2026}' => "...",
        '\u{3001}' => ",",
        _ => return None,
    })
}

/// Walks the raw line once: drops `removed` ranges and ANSI escapes, decodes
/// HTML, and writes typographic and full-width characters as ASCII.
fn characters(raw: &str, removed: &[Range<usize>]) -> Builder {
    let mut b = Builder::default();
    let mut next_removed = removed.iter().peekable();
    let mut at = 0;
    let mut plain_from = 0;
    let flush = |b: &mut Builder, from: usize, to: usize| {
        if to > from {
            b.copy(from, &raw[from..to]);
        }
    };
    if let Some(len) = style_tail(raw) {
        at = len;
        plain_from = len;
    }
    while at < raw.len() {
        if let Some(r) = next_removed.peek() {
            if r.start <= at {
                let end = r.end.max(at);
                next_removed.next();
                flush(&mut b, plain_from, at);
                at = end;
                plain_from = end;
                continue;
            }
        }
        let rest = &raw[at..];
        let Some(c) = rest.chars().next() else { break };
        let width = c.len_utf8();
        let replaced: Option<(usize, String)> = match c {
            '\x1b' | '\u{9b}' => Some((ansi_len(rest), String::new())),
            '&' => html_entity(rest).map(|(len, c)| (len, c.to_string())),
            '#' => syslog_escape(rest).map(|len| (len, String::new())),
            '<' => {
                html_tag(rest).map(|(len, br)| (len, if br { "\n".into() } else { String::new() }))
            }
            '\u{FF01}'..='\u{FF5E}' => {
                char::from_u32(c as u32 - 0xFEE0).map(|a| (width, a.to_string()))
            }
            c if !c.is_ascii() => ascii_form(c).map(|s| (width, s.to_string())),
            _ => None,
        };
        match replaced {
            Some((len, with)) => {
                flush(&mut b, plain_from, at);
                b.replace(at, &with);
                at += len.max(1);
                // Never stop inside a character.
                while !raw.is_char_boundary(at) {
                    at += 1;
                }
                plain_from = at;
            }
            None => at += width,
        }
    }
    flush(&mut b, plain_from, raw.len());
    b
}

/// The length of the ANSI escape at the start of `rest`, read as a terminal
/// reads it: a CSI up to its final byte, an OSC/DCS/APC string up to BEL or
/// ST (only its introducer when this line holds no terminator, so that a
/// message after it is still seen), a two-byte escape with its extra byte.
fn ansi_len(rest: &str) -> usize {
    let mut chars = rest.char_indices().peekable();
    let csi_end = |chars: &mut std::iter::Peekable<std::str::CharIndices<'_>>| {
        chars
            .find(|(_, c)| ('\x40'..='\x7e').contains(c))
            .map_or(rest.len(), |(i, c)| i + c.len_utf8())
    };
    match chars.next() {
        Some((_, '\u{9b}')) => csi_end(&mut chars),
        Some((_, '\x1b')) => match chars.next() {
            Some((_, '[')) => csi_end(&mut chars),
            Some((i, ']' | 'P' | '_' | '^' | 'X')) => {
                let introducer = i + 1;
                while let Some((j, c)) = chars.next() {
                    if c == '\x07' || c == '\u{9c}' {
                        return j + c.len_utf8();
                    }
                    if c == '\x1b' {
                        return match chars.peek() {
                            Some(&(k, '\\')) => k + 1,
                            _ => j + 1,
                        };
                    }
                }
                // No terminator on this line: only the introducer is junk.
                introducer
            }
            Some((i, '(' | ')' | '*' | '+')) => {
                chars.next().map_or(i + 1, |(j, c)| j + c.len_utf8())
            }
            Some((i, c)) => i + c.len_utf8(),
            None => 1,
        },
        _ => 1,
    }
}

struct PhraseRules {
    allocator: regex::Regex,
    words: regex::Regex,
    glued_unit: regex::Regex,
    glued_figure: regex::Regex,
}

fn phrase_rules() -> &'static PhraseRules {
    static RULES: std::sync::OnceLock<PhraseRules> = std::sync::OnceLock::new();
    RULES.get_or_init(|| PhraseRules {
        // The allocator's headline, retyped: any case, a comma for the stop
        // or no stop at all (retyped or machine-translated pastes drop it).
        allocator: crate::constant_regex(
            r"(?i)\b(cuda|hip|xpu|npu|mlu|musa) out of memory\s*[.,]?\s*tried to allocate\b",
        ),
        // The sentence words in another case or run together.
        words: crate::constant_regex(
            r"(?i)\btotal ?capacity\b|\balready ?allocated\b|\breserved in total by pytorch\b",
        ),
        // `50MiB(GPU`, `4.00 GiB.GPU 0`: a size glued to the next token.
        glued_unit: crate::constant_regex(r"\d(?: ?(?:[KMGT]iB|[KMG]B|bytes))(\.?)([(A-Z])"),
        // `;1.33GiB`: a separator glued to the next figure.
        glued_figure: crate::constant_regex(r";(\d)"),
    })
}

/// Writes the allocator's phrases in their canonical form and spaces out
/// figures glued to the next token.
fn phrases(text: String, origin: Origin) -> (String, Origin) {
    if !may_need_phrases(&text) {
        return (text, origin);
    }
    let rules = phrase_rules();
    let mut edits: Vec<(Range<usize>, String)> = Vec::new();
    for m in rules.allocator.captures_iter(&text) {
        let (Some(whole), Some(backend)) = (m.get(0), m.get(1)) else {
            continue;
        };
        let canonical = format!(
            "{} out of memory. Tried to allocate",
            backend.as_str().to_ascii_uppercase()
        );
        if whole.as_str() != canonical {
            edits.push((whole.range(), canonical));
        }
    }
    for m in rules.words.find_iter(&text) {
        let lower = m.as_str().to_ascii_lowercase();
        let canonical = if lower.starts_with("total") {
            "total capacity"
        } else if lower.starts_with("already") {
            "already allocated"
        } else {
            "reserved in total by PyTorch"
        };
        if m.as_str() != canonical {
            edits.push((m.range(), canonical.to_string()));
        }
    }
    let sized = edits.is_empty() && !text.contains("Tried to allocate");
    if !sized {
        for c in rules.glued_unit.captures_iter(&text) {
            if let Some(next) = c.get(2) {
                let stop = c.get(1).map_or("", |m| m.as_str());
                let at = next.start() - stop.len();
                edits.push((at..next.start(), format!("{stop} ")));
            }
        }
        for c in rules.glued_figure.captures_iter(&text) {
            if let Some(digit) = c.get(1) {
                edits.push((digit.start()..digit.start(), " ".into()));
            }
        }
    }
    if edits.is_empty() {
        return (text, origin);
    }
    edits.sort_by_key(|(r, _)| (r.start, r.end));
    let mut b = Builder::default();
    let mut at = 0;
    for (range, with) in edits {
        if range.start < at {
            continue;
        }
        copy_through(&mut b, &text, &origin, at, range.start);
        b.replace(origin.raw_offset(range.start), &with);
        at = range.end;
    }
    copy_through(&mut b, &text, &origin, at, text.len());
    (b.text, b.origin)
}

/// Copies `text[from..to]` into `b`, keeping the origin of each byte.
fn copy_through(b: &mut Builder, text: &str, origin: &Origin, from: usize, to: usize) {
    if from >= to {
        return;
    }
    let mut at = from;
    while at < to {
        let index = origin.runs.partition_point(|run| run.0 <= at).max(1) - 1;
        let run_end = origin
            .runs
            .get(index + 1)
            .map_or(text.len(), |r| r.0)
            .min(to);
        let verbatim = origin.runs.get(index).is_some_and(|r| r.2);
        let piece = &text[at..run_end];
        if verbatim {
            b.copy(origin.raw_offset(at), piece);
        } else {
            b.replace(origin.raw_offset(at), piece);
        }
        at = run_end.max(at + 1);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn one(raw: &str) -> (String, Origin) {
        let mut lines =
            canonical(raw).unwrap_or_else(|| vec![(raw.to_string(), Origin::verbatim(0))]);
        assert_eq!(lines.len(), 1, "{raw}");
        lines.remove(0)
    }

    fn text(raw: &str) -> String {
        one(raw).0
    }

    /// The raw bytes a canonical substring maps back to start with `expected`.
    fn points_back(raw: &str, needle: &str, expected: &str) {
        let (text, origin) = one(raw);
        let at = text
            .find(needle)
            .unwrap_or_else(|| panic!("{needle} in {text}"));
        let raw_at = origin.raw_offset(at);
        assert!(raw[raw_at..].starts_with(expected), "{raw:?} at {raw_at}");
    }

    #[test]
    fn plain_lines_take_the_fast_path() {
        assert!(
            canonical("RuntimeError: CUDA out of memory. Tried to allocate 2.00 GiB").is_none()
        );
        assert!(canonical("Epoch 1/10 loss=0.3").is_none());
        assert!(canonical("  File \"a.py\", line 3, in <module>").is_none());
    }

    #[test]
    fn markdown_emphasis() {
        let raw = "**RuntimeError: CUDA out of memory.** Tried to allocate 1.71 GiB (GPU 0; 31.72 GiB total capacity)";
        assert_eq!(
            text(raw),
            "RuntimeError: CUDA out of memory. Tried to allocate 1.71 GiB (GPU 0; 31.72 GiB total capacity)"
        );
        points_back(raw, "Tried", "Tried");
        points_back(raw, "RuntimeError", "RuntimeError");
        assert_eq!(
            text("__CUDA out of memory here__"),
            "CUDA out of memory here"
        );
        assert_eq!(
            text("_CUDA out of memory here_ x"),
            "CUDA out of memory here x"
        );
        // Identifiers and code keep their underscores and stars.
        for kept in [
            "  File \"x.py\", line 3, in __init__",
            "try setting max_split_size_mb to avoid fragmentation",
            "    model(**kwargs)  # f(**kw)",
            "x = 2**31",
            "file=C:\\a\\_work\\1\\cuda_execution_provider.cc ; expr=f(stream_));",
            "**Q: I get `RuntimeError: x 2`. What now?**",
        ] {
            assert_eq!(text(kept), kept);
        }
    }

    #[test]
    fn blockquotes() {
        assert_eq!(text("> RuntimeError: x"), "RuntimeError: x");
        assert_eq!(text("> > RuntimeError: x"), "RuntimeError: x");
        assert_eq!(text(">>> import torch"), ">>> import torch");
        points_back("> > RuntimeError: x", "x", "x");
        // A quoted paragraph joined back into one line keeps the markers of
        // its wrapped lines where the mail client wrapped (1903).
        let joined = "> Dec 1 15:01:07 cluster1 kernel: Out of memory: Kill process 7963 > (sge_qmaster) score 948 or sacrifice child it's also worth";
        assert_eq!(
            text(joined),
            "Dec 1 15:01:07 cluster1 kernel: Out of memory: Kill process 7963 (sge_qmaster) score 948 or sacrifice child it's also worth"
        );
        points_back(joined, "(sge_qmaster)", "(sge_qmaster)");
        // A comparison stays: before the wrap column, or in a line that is
        // not quoted.
        let compared = "> slurmstepd: error: StepId=7.batch exceeded memory limit (734003200 > 52428800), being killed";
        assert_eq!(text(compared), &compared[2..]);
        let unquoted = "Dec 1 15:01:07 cluster1 kernel: Out of memory: Kill process 7963 > (sge_qmaster) score";
        assert_eq!(text(unquoted), unquoted);
    }

    #[test]
    fn backticks_around_a_paste() {
        let raw = "but l got this problem `cuda out of memory, tried to allocate 50MiB(GPU 0; 1.96GiB totalcapacity;1.33GiB already allocated; 43.5MiB free;1.36 GiB reserved in total by Pytorch)`";
        assert_eq!(
            text(raw),
            "but l got this problem CUDA out of memory. Tried to allocate 50MiB (GPU 0; 1.96GiB total capacity; 1.33GiB already allocated; 43.5MiB free; 1.36 GiB reserved in total by PyTorch)"
        );
        points_back(raw, "CUDA", "cuda");
        points_back(raw, "(GPU", "(GPU");
        points_back(raw, "1.33GiB", "1.33GiB");
        // A mention keeps its backticks.
        let mention = "    if `CUDA out of memory` in str(e):";
        let assertion = "Loss.cu:242: block: [0,0,0] Assertion `t >= 0 && t < n_classes` failed.";
        assert_eq!(text(assertion), assertion);
        assert_eq!(text(mention), mention);
        let code = "set `PYTORCH_CUDA_ALLOC_CONF` first";
        assert_eq!(text(code), code);
    }

    /// Rich text copied from a page (a real paste of a GitHub comment):
    /// tags whose inline styles run past 200 bytes or past the line's end,
    /// and a line that opens inside the style the line before cut, are
    /// dropped; an angle bracket that is no tag stays.
    #[test]
    fn html_with_inline_styles_cut_by_lines() {
        let first = r#"ackground: rgba(248, 248, 250, 0.87); border-radius: 3px; overflow-wrap: anywhere; border-top: none; border-right: 42px solid transparent; border-bottom: none; border-left: none; border-image: initial; white-space: pre-wrap; word-break: break-all;"><code data-highlighted="yes" class="hljs language-vbnet" style="padding: 3px 5px; margin: 0px; box-sizing: border-box; -webkit-font-smoothing: antialiased !important; text-rendering: optimizelegibility !important; forced-color-adjust: none; font-variant-ligatures: none; -webkit-user-drag: none !important; font-family: &quot;JetBrains Mono&quot; !important; font-size: 15.04px; background: transparent; border-radius: 5px; border: 0px; word-break: break-all; white-space: pre-wrap; max-width: initial; overflow-x: auto; overflow-y: initial; line-height: inherit; overflow-wrap: anywhere; color: rgb(68, 68, 68); display: block;"><span class="hljs-symbol" style="padding: 0px; margin: 0px; box-sizing: border-box; -webkit-font-smoothing: antialiased !"#;
        assert_eq!(text(first), "");
        let second = r#"important; text-rendering: optimizelegibility !important; forced-color-adjust: none; font-variant-ligatures: none; -webkit-user-drag: none !important; color: rgb(171, 86, 86);">Error:</span> Memory_Allocation_Failure(EL0004): Failed <span class="hljs-keyword" style="padding: 0px; margin: 0px; box-sizing: bo"#;
        assert_eq!(
            text(second),
            "Error: Memory_Allocation_Failure(EL0004): Failed "
        );
        points_back(second, "Memory_", "Memory_Allocation_Failure");
        for kept in ["if a <b and c", "x = 1; y: int;\">", "<cell line: 12>"] {
            assert_eq!(text(kept), kept);
        }
    }

    /// rsyslog writes a control character as `#` and its octal digits: a
    /// colour escape becomes `#033[33m` (a real raylet log), dropped as the
    /// escape it is; a `#033` that opens no escape stays.
    #[test]
    fn ansi_escapes_as_syslog_writes_them() {
        assert_eq!(
            text("#033[2m#033[33m(raylet)#033[0m node_manager.cc:3007: 2 Workers"),
            "(raylet) node_manager.cc:3007: 2 Workers"
        );
        assert_eq!(text("issue #033[ is open"), "issue #033[ is open");
    }

    #[test]
    fn html() {
        assert_eq!(
            text("<code>RuntimeError: CUDA error: out of memory</code>"),
            "RuntimeError: CUDA error: out of memory"
        );
        assert_eq!(text("a &gt; b &#39;c&#x27; &amp;"), "a > b 'c' &");
        let lines = canonical("first line<br>second line<br/>third").unwrap_or_default();
        let texts: Vec<&str> = lines.iter().map(|(t, _)| t.as_str()).collect();
        assert_eq!(texts, ["first line", "second line", "third"]);
        let raw = "x<br>RuntimeError: y";
        let lines = canonical(raw).unwrap_or_default();
        assert_eq!(&raw[lines[1].1.raw_offset(0)..], "RuntimeError: y");
        // Traceback angle brackets are not HTML.
        let kept = "  File \"<stdin>\", line 1, in <module>";
        assert_eq!(text(kept), kept);
        assert_eq!(text("a < b & c"), "a < b & c");
    }

    #[test]
    fn typographic_and_full_width() {
        assert_eq!(
            text("I get “CUDA out of memory” it’s"),
            "I get \"CUDA out of memory\" it's"
        );
        assert_eq!(text("错误（GPU 0）；显存不足：x"), "错误(GPU 0);显存不足:x");
        assert_eq!(
            text("CUDA\u{200B} out of\u{00A0}memory"),
            "CUDA out of memory"
        );
        let raw = "“RuntimeError: x”";
        points_back(raw, "x", "x");
        points_back(raw, "\"", "“");
    }

    #[test]
    fn ansi_escapes() {
        assert_eq!(text("\x1b[31mRuntimeError\x1b[0m: x"), "RuntimeError: x");
        points_back("\x1b[31mRuntimeError\x1b[0m: x", ": x", ": x");
        // OSC strings end at BEL or at ST (`ESC \`), a clipboard write too.
        assert_eq!(text("\x1b]0;title\x07RuntimeError: x"), "RuntimeError: x");
        assert_eq!(
            text("\x1b]52;c;ZXZpbA==\x1b\\RuntimeError: x"),
            "RuntimeError: x"
        );
        // An OSC with no terminator on the line: only its introducer goes.
        assert_eq!(ansi_len("\x1b]unterminated"), 2);
    }

    #[test]
    fn canonical_phrases_and_glued_figures() {
        assert_eq!(
            text("CUDA out of memory. Tried to allocate 4.00 GiB.GPU 0 has"),
            "CUDA out of memory. Tried to allocate 4.00 GiB. GPU 0 has"
        );
        assert_eq!(
            text("HIP Out Of Memory, Tried To Allocate 2 GiB"),
            "HIP out of memory. Tried to allocate 2 GiB"
        );
        // Prose that names memory without a size is left alone.
        let prose = "the model uses more memory than expected;1 thing";
        assert_eq!(text(prose), prose);
    }
}
