//! A compact Markdown report to paste into a GitHub issue or a chat: per
//! finding a headline, the numbers with their meaning in a table, the
//! verdicts, numbered fixes, the original message in a fenced block and the
//! `oomwhy explain` codes.

use super::sanitize;
use super::text::{context_line, origin_line, summary_line};
use crate::explain::{field_rows, headline, reserved_gap};
use crate::record::{Category, Finding, Summary};
use std::io::{self, Write};

/// Backslash-escapes the characters that would format text taken from a log.
fn escape(text: &str) -> String {
    let text = sanitize(text);
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '\\' | '`' | '*' | '_' | '[' | ']' | '<' | '>' | '|' | '#' | '~' => {
                out.push('\\');
                out.push(c);
            }
            '\n' => out.push(' '),
            c => out.push(c),
        }
    }
    out
}

/// A fence longer than any backtick run in `text`.
fn fence(text: &str) -> String {
    let mut longest = 0;
    let mut run = 0;
    for c in text.chars() {
        run = if c == '`' { run + 1 } else { 0 };
        longest = longest.max(run);
    }
    "`".repeat((longest + 1).max(3))
}

fn label(c: Category) -> &'static str {
    match c {
        Category::Oom => "Out of memory",
        Category::LikelyOom => "Probably out of memory",
        Category::Crash => "GPU crash",
        Category::MemoryState => "Memory state",
        Category::Warning => "Warning",
    }
}

pub(super) fn finding(f: &Finding, out: &mut dyn Write) -> io::Result<()> {
    writeln!(
        out,
        "### {}. {}: {}",
        f.id,
        label(f.category),
        escape(&headline(f))
    )?;
    writeln!(out)?;
    writeln!(out, "{}", escape(&origin_line(f)))?;
    if let Some(context) = context_line(f) {
        writeln!(out, "{}", escape(&context))?;
    }
    if let Some(id) = f.consequence_of {
        writeln!(
            out,
            "This follows from finding {id}: a consequence of that crash, not a separate cause."
        )?;
    }

    let rows = field_rows(f);
    if !rows.is_empty() {
        writeln!(out)?;
        writeln!(out, "| Number | Value | Meaning |")?;
        writeln!(out, "| --- | ---: | --- |")?;
        for r in &rows {
            writeln!(
                out,
                "| {} | {} | {} |",
                escape(&r.label),
                escape(&r.value),
                escape(&r.meaning)
            )?;
        }
    }
    if let Some(gap) = reserved_gap(f) {
        writeln!(out)?;
        writeln!(out, "{}", escape(&gap))?;
    }
    if !f.facts.is_empty() && rows.is_empty() {
        writeln!(out)?;
        for (key, value) in &f.facts {
            writeln!(
                out,
                "- {}: `{}`",
                key.replace('_', " "),
                sanitize(value).replace('`', "'")
            )?;
        }
    }
    for note in &f.notes {
        writeln!(out)?;
        writeln!(out, "Note: {}", escape(note))?;
    }

    if let Some(report) = &f.snapshot {
        for (heading, lines) in crate::snapshot::text_sections(report) {
            writeln!(out)?;
            writeln!(out, "**{}**", escape(&heading))?;
            writeln!(out)?;
            for line in lines {
                writeln!(out, "- {}", escape(&line))?;
            }
        }
    }
    let d = &f.diagnosis;
    if !d.verdicts.is_empty() {
        writeln!(out)?;
        writeln!(out, "**Why**")?;
        writeln!(out)?;
        for v in &d.verdicts {
            writeln!(out, "- **{}** — {}", v.title, sanitize(&v.detail))?;
        }
    }
    if !d.fixes.is_empty() {
        writeln!(out)?;
        writeln!(out, "**What to do** (most effective first)")?;
        writeln!(out)?;
        for (n, fix) in d.fixes.iter().enumerate() {
            writeln!(out, "{}. **{}** — {}", n + 1, fix.title, sanitize(&fix.how))?;
        }
    }
    writeln!(out)?;
    let message = sanitize(&f.text);
    let fence = fence(&message);
    writeln!(out, "{fence}text\n{message}\n{fence}")?;
    if !f.explain.is_empty() {
        writeln!(out)?;
        let codes: Vec<String> = f
            .explain
            .iter()
            .map(|c| format!("`oomwhy explain {c}`"))
            .collect();
        writeln!(out, "More: {}", codes.join(" · "))?;
    }
    writeln!(out)
}

pub(super) fn summary(s: &Summary, out: &mut dyn Write) -> io::Result<()> {
    writeln!(out, "_oomwhy: {}_", escape(&summary_line(s)))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn escapes_log_text() {
        assert_eq!(escape("a|b *c* <d>"), "a\\|b \\*c\\* \\<d\\>");
        assert_eq!(fence("no ticks"), "```");
        assert_eq!(fence("a ```` b"), "`````");
    }
}
