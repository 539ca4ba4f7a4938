//! GitHub Actions workflow commands: one annotation per finding, shown on
//! the run's summary page and, when the input is a file of the repository,
//! on that file's line.
//!
//! Findings of category `oom` and `likely_oom` become `::error`; other
//! crashes (illegal memory access, fail-fast, ...) become `::warning`,
//! because they are often a consequence of another failure or outside what
//! oomwhy can diagnose from the numbers. Inputs that are not files
//! (`<stdin>`, `<stdout>`, ...) get no `file=`/`line=` properties.

use super::localize::{headline, localize};
use crate::i18n::{Lang, Msg};
use crate::record::{Category, Finding};
use std::io::{self, Write};

/// Escapes a message: `%`, CR and LF.
pub fn escape_data(text: &str) -> String {
    text.replace('%', "%25")
        .replace('\r', "%0D")
        .replace('\n', "%0A")
}

/// Escapes a property value: as a message, plus `:` and `,`.
pub fn escape_property(text: &str) -> String {
    escape_data(text).replace(':', "%3A").replace(',', "%2C")
}

/// Longest part of the original message quoted in an annotation.
const QUOTE_CHARS: usize = 500;

pub(super) fn finding(f: &Finding, lang: Lang, out: &mut dyn Write) -> io::Result<()> {
    let command = match f.category {
        Category::Oom | Category::LikelyOom => "error",
        Category::Crash | Category::Warning => "warning",
        Category::MemoryState => "notice",
    };
    let mut properties = Vec::new();
    if !f.source.input.starts_with('<') {
        properties.push(format!("file={}", escape_property(&f.source.input)));
        properties.push(format!("line={}", f.source.line));
    }
    let title = format!("oomwhy: {}", headline(f, lang));
    properties.push(format!("title={}", escape_property(&title)));

    let mut lines = Vec::new();
    let localized = localize(f, lang);
    let d = &localized.diagnosis;
    for v in &d.verdicts {
        lines.push(Msg::AnnotationWhy.fill(lang, &[&v.title, &v.detail]));
    }
    if let Some(fix) = d.fixes.first() {
        lines.push(Msg::AnnotationFix.fill(lang, &[&fix.title, &fix.how]));
    }
    let text: String = f.text.chars().take(QUOTE_CHARS).collect();
    let cut = if f.text.chars().count() > QUOTE_CHARS {
        " […]"
    } else {
        ""
    };
    lines.push(Msg::AnnotationMessage.fill(
        lang,
        &[&f.source.input, &f.source.line, &format!("{text}{cut}")],
    ));
    if !f.explain.is_empty() {
        let codes: Vec<String> = f
            .explain
            .iter()
            .map(|c| format!("oomwhy explain {c}"))
            .collect();
        lines.push(format!("{} {}", Msg::More.text(lang), codes.join(" · ")));
    }
    let message = super::sanitize(&lines.join("\n")).into_owned();
    writeln!(
        out,
        "::{command} {}::{}",
        properties.join(","),
        escape_data(&message)
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn escapes_like_the_toolkit() {
        assert_eq!(escape_data("50% of\r\nmemory"), "50%25 of%0D%0Amemory");
        assert_eq!(escape_property("a:b,c%"), "a%3Ab%2Cc%25");
    }

    #[test]
    fn one_line_per_finding() {
        let mut f = Finding::new(
            crate::record::Kind::CudaRuntimeOom,
            "logs/train,1.log",
            7,
            "RuntimeError: CUDA error: out of memory\nmore".into(),
        );
        crate::explain::explain(&mut f);
        let mut out = Vec::new();
        finding(&f, Lang::En, &mut out).unwrap();
        let text = String::from_utf8(out).unwrap();
        assert_eq!(text.lines().count(), 1);
        assert!(text.starts_with("::error file=logs/train%2C1.log,line=7,title=oomwhy%3A "));
        assert!(text.contains("%0AMore: oomwhy explain cuda_runtime_oom"));
    }
}
