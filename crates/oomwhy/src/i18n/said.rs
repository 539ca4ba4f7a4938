//! What the explainer writes, typed: every sentence is built by [`say!`]
//! with its English and its Chinese side by side and the same named
//! arguments, so a sentence without a translation does not compile and the
//! Chinese cannot drop or invent a figure.

use super::Lang;
use crate::record::Note;

/// One text the explainer wrote, in both languages.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Said {
    /// English.
    pub en: String,
    /// Simplified Chinese.
    pub zh: String,
}

impl Said {
    /// The text in `lang`.
    pub fn get(&self, lang: Lang) -> &str {
        match lang {
            Lang::En => &self.en,
            Lang::Zh => &self.zh,
        }
    }

    /// A name or figure that reads the same in both languages.
    pub fn same(text: impl ToString) -> Said {
        let text = text.to_string();
        Said {
            en: text.clone(),
            zh: text,
        }
    }

    /// Both texts joined with a space (a detail followed by a note).
    pub fn then(mut self, next: Said) -> Said {
        for (text, more) in [(&mut self.en, next.en), (&mut self.zh, next.zh)] {
            if more.is_empty() {
                continue;
            }
            if !text.is_empty() {
                // Chinese sentences are not separated by a space.
                if !text.ends_with(['。', '；', '：', '）']) {
                    text.push(' ');
                }
            }
            text.push_str(&more);
        }
        self
    }
}

/// A sentence in both languages, with named arguments each evaluated once:
///
/// ```ignore
/// say!(en: "CuPy could not allocate {size} on the GPU",
///      zh: "CuPy 无法在 GPU 上分配 {size}",
///      size = format_size(n))
/// ```
///
/// Each language must use every named argument (`format!` refuses an unused
/// one), and a constant check refuses two texts whose `{placeholders}`
/// differ, so neither can use a variable captured from the scope that the
/// other does not.
#[macro_export]
#[doc(hidden)]
macro_rules! say {
    (en: $en:literal, zh: $zh:literal $(,)?) => {{
        const _: () = assert!(
            $crate::i18n::said::same_placeholders($en, $zh),
            "the English and the Chinese name different placeholders"
        );
        $crate::i18n::Said { en: format!($en), zh: format!($zh) }
    }};
    (en: $en:literal, zh: $zh:literal, $($name:ident = $value:expr),+ $(,)?) => {{
        const _: () = assert!(
            $crate::i18n::said::same_placeholders($en, $zh),
            "the English and the Chinese name different placeholders"
        );
        // `x = x` (a value already named like its placeholder) is fine.
        $(#[allow(clippy::redundant_locals)] let $name = $value;)+
        $crate::i18n::Said {
            en: format!($en, $($name = &$name),+),
            zh: format!($zh, $($name = &$name),+),
        }
    }};
}

impl From<Said> for Note {
    fn from(said: Said) -> Note {
        Note {
            text: said.en,
            zh: Some(said.zh),
        }
    }
}

/// A sentence that puts in, at each `{name}` of both templates, a fragment
/// already written in both languages (a place, a noun phrase, a size that
/// may be missing): what [`say!`] does for one value, for a value that is
/// itself said differently in each language. The same placeholder check.
///
/// ```ignore
/// say_parts!(en: "{who} could not allocate {size}{on}",
///            zh: "{who}{on}分配 {size} 失败",
///            who = Said::same(reporter), size = Said::same(fmt(n)), on = place)
/// ```
#[macro_export]
#[doc(hidden)]
macro_rules! say_parts {
    (en: $en:literal, zh: $zh:literal, $($name:ident = $value:expr),+ $(,)?) => {{
        const _: () = assert!(
            $crate::i18n::said::same_placeholders($en, $zh),
            "the English and the Chinese name different placeholders"
        );
        $(let $name: $crate::i18n::Said = $value;)+
        $crate::i18n::Said {
            en: format!($en, $($name = $name.en),+),
            zh: $crate::i18n::said::tidy_chinese(format!($zh, $($name = $name.zh),+)),
        }
    }};
}

/// Chinese with a part filled in: the space a template keeps between a
/// Latin name and the Chinese around it (`{who} 报告`) goes where the part
/// filled in is itself Chinese (`原生代码（x.hpp）报告`, not `…） 报告`).
pub fn tidy_chinese(text: String) -> String {
    let chinese = |c: char| matches!(c, '\u{4e00}'..='\u{9fff}' | '\u{3000}'..='\u{303f}' | '\u{ff00}'..='\u{ffef}');
    if !text.contains(' ') {
        return text;
    }
    let chars: Vec<char> = text.chars().collect();
    let mut out = String::with_capacity(text.len());
    for (i, &c) in chars.iter().enumerate() {
        let between_chinese = c == ' '
            && i > 0
            && chars.get(i + 1).is_some_and(|&next| chinese(next))
            && chinese(chars[i - 1]);
        if !between_chinese {
            out.push(c);
        }
    }
    out
}

/// True when every `{name}` (or `{name:spec}`) of `a` is in `b` and the
/// other way round; `{{` and `}}` are literal braces.
pub const fn same_placeholders(a: &str, b: &str) -> bool {
    contains_all(a.as_bytes(), b.as_bytes()) && contains_all(b.as_bytes(), a.as_bytes())
}

/// Every placeholder name of `a` is a placeholder name of `b`.
const fn contains_all(a: &[u8], b: &[u8]) -> bool {
    let mut i = 0;
    while i < a.len() {
        if let Some((start, end, next)) = placeholder(a, i) {
            if !has_placeholder(b, a, start, end) {
                return false;
            }
            i = next;
        } else {
            i += 1;
        }
    }
    true
}

/// The placeholder whose `{` is at `i`: the name's range and where the
/// text goes on; `None` when `i` is not an opening brace of one.
const fn placeholder(text: &[u8], i: usize) -> Option<(usize, usize, usize)> {
    if text[i] != b'{' {
        return None;
    }
    if i + 1 < text.len() && text[i + 1] == b'{' {
        return None;
    }
    if i > 0 && text[i - 1] == b'{' {
        return None;
    }
    let start = i + 1;
    let mut end = start;
    while end < text.len() && text[end] != b'}' && text[end] != b':' {
        end += 1;
    }
    let mut close = end;
    while close < text.len() && text[close] != b'}' {
        close += 1;
    }
    Some((start, end, close + 1))
}

/// `b` has a placeholder named `a[start..end]`.
const fn has_placeholder(b: &[u8], a: &[u8], start: usize, end: usize) -> bool {
    let mut i = 0;
    while i < b.len() {
        if let Some((s, e, next)) = placeholder(b, i) {
            if e - s == end - start {
                let mut k = 0;
                while k < e - s && b[s + k] == a[start + k] {
                    k += 1;
                }
                if k == e - s {
                    return true;
                }
            }
            i = next;
        } else {
            i += 1;
        }
    }
    false
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_note_keeps_its_chinese_and_is_one_string_in_json() {
        let printed = "11.96GiB";
        let note: Note = crate::say!(
            en: "the request is printed rounded ({printed}); its byte count is approximate",
            zh: "申请量打印时做了取整（{printed}）；字节数是近似值",
        )
        .into();
        assert_eq!(
            note.zh.as_deref(),
            Some("申请量打印时做了取整（11.96GiB）；字节数是近似值")
        );
        let json = serde_json::to_string(&note).unwrap();
        assert_eq!(
            json,
            "\"the request is printed rounded (11.96GiB); its byte count is approximate\""
        );
        let back: Note = serde_json::from_str(&json).unwrap();
        assert_eq!(back.text, note.text);
        assert_eq!(back.zh, None);
    }

    #[test]
    fn placeholders_must_match() {
        assert!(same_placeholders("a {x} b {y:>4}", "{y} 和 {x}"));
        assert!(!same_placeholders("a {x}", "没有"));
        assert!(!same_placeholders("{x}", "{x} {y}"));
        assert!(same_placeholders("{{literal}} {x}", "{x}"));
    }

    #[test]
    fn a_chinese_part_takes_no_space_before_chinese() {
        assert_eq!(
            tidy_chinese("原生代码（a.hpp） 报告".into()),
            "原生代码（a.hpp）报告"
        );
        assert_eq!(
            tidy_chinese("一个未能识别的程序 在 GPU 上".into()),
            "一个未能识别的程序在 GPU 上"
        );
        // A Latin name keeps its spaces.
        assert_eq!(
            tidy_chinese("cuDF 报告 7.81 GiB".into()),
            "cuDF 报告 7.81 GiB"
        );
    }

    #[test]
    fn says_both_languages_with_one_evaluation() {
        let mut calls = 0;
        let said = crate::say!(
            en: "{n} left",
            zh: "剩 {n}",
            n = {
                calls += 1;
                3
            }
        );
        assert_eq!(calls, 1);
        assert_eq!(said.get(Lang::En), "3 left");
        assert_eq!(said.get(Lang::Zh), "剩 3");
    }
}
