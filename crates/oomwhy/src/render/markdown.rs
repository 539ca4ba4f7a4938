//! A compact Markdown report to paste into a GitHub issue or a chat: per
//! finding a headline, the numbers with their meaning in a table, the
//! verdicts, numbered fixes, the original message in a fenced block and the
//! `oomwhy explain` codes.

use super::localize::{self, localize};
use super::sanitize;
use super::text::{context_line_in, origin_line_in, summary_line_in};
use crate::i18n::{Lang, Msg};
use crate::record::{Finding, Summary};
use std::io::{self, Write};

/// A word that is code: a call (`torch.cuda.empty_cache()`), a dotted name
/// (`torch.utils.checkpoint`), an assignment (`PYTORCH_CUDA_ALLOC_CONF=...`),
/// an environment variable or option with underscores (`max_split_size_mb`).
fn code_word() -> &'static regex::Regex {
    static CODE: std::sync::OnceLock<regex::Regex> = std::sync::OnceLock::new();
    CODE.get_or_init(|| {
        crate::constant_regex(
            r"^(?:[A-Za-z_][\w.]*\([^\s]*\)|[A-Za-z_]\w*(?:\.[A-Za-z_]\w*){2,}|[A-Za-z_][\w.]*=[^\s]+|[A-Za-z]\w*_\w+|--[a-z][\w-]*)$",
        )
    })
}

/// Text the explainer wrote, for Markdown: what it quotes in backticks
/// stays code, words that are code become code, everything else is
/// escaped so that `_` or `*` in it cannot turn into emphasis.
fn prose(text: &str) -> String {
    let text = sanitize(text);
    let mut out = String::with_capacity(text.len() + 16);
    for (i, part) in text.split('`').enumerate() {
        if i % 2 == 1 {
            out.push('`');
            out.push_str(part);
            out.push('`');
            continue;
        }
        for (j, word) in part.split(' ').enumerate() {
            if j > 0 {
                out.push(' ');
            }
            let mut core = word.trim_end_matches([',', ';', ':', '.']);
            // A closing parenthesis belongs to the word only with its opening one.
            while core.ends_with(')') && core.matches(')').count() > core.matches('(').count() {
                core = &core[..core.len() - 1];
                core = core.trim_end_matches([',', ';', ':', '.']);
            }
            let core = core.trim_start_matches('(');
            let lead = &word[..word.find(core).unwrap_or(0)];
            let tail = &word[lead.len() + core.len()..];
            if !core.is_empty() && code_word().is_match(core) {
                out.push_str(&escape(lead));
                out.push('`');
                out.push_str(core);
                out.push('`');
                out.push_str(&escape(tail));
            } else {
                out.push_str(&escape(word));
            }
        }
    }
    out
}

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

fn label(f: &Finding) -> Msg {
    match super::text::category_label(f) {
        Msg::Oom => Msg::OomTitle,
        Msg::HostOom => Msg::HostOomTitle,
        Msg::LikelyOom => Msg::LikelyOomTitle,
        Msg::HostLikelyOom => Msg::HostLikelyOomTitle,
        Msg::MemoryState => Msg::MemoryStateTitle,
        Msg::Warning => Msg::WarningTitle,
        Msg::ProcessCrash => Msg::ProcessCrashTitle,
        _ => Msg::CrashTitle,
    }
}

pub(super) fn finding(f: &Finding, lang: Lang, out: &mut dyn Write) -> io::Result<()> {
    let f = &*localize(f, lang);
    let label = label(f).text(lang);
    writeln!(
        out,
        "### {}. {label}: {}",
        f.id,
        prose(&localize::headline_after(f, label, lang))
    )?;
    writeln!(out)?;
    writeln!(out, "{}", escape(&origin_line_in(f, lang)))?;
    if let Some(context) = context_line_in(f, lang) {
        writeln!(out, "{}", escape(&context))?;
    }
    if let Some(id) = f.consequence_of {
        writeln!(out, "{}", escape(&Msg::Consequence.fill(lang, &[&id])))?;
    }

    let d = &f.diagnosis;
    if !d.verdicts.is_empty() {
        writeln!(out)?;
        writeln!(out, "**{}**", Msg::WhyHeading.text(lang))?;
        writeln!(out)?;
        for v in &d.verdicts {
            writeln!(out, "- **{}** — {}", prose(&v.title), prose(&v.detail))?;
        }
    }
    if !d.fixes.is_empty() {
        writeln!(out)?;
        writeln!(out, "**{}**", Msg::FixHeading.text(lang))?;
        writeln!(out)?;
        for (n, fix) in d.fixes.iter().enumerate() {
            writeln!(
                out,
                "{}. **{}** — {}",
                n + 1,
                prose(&fix.title),
                prose(&fix.how)
            )?;
        }
    }

    let rows = localize::field_rows(f, lang);
    if !rows.is_empty() {
        writeln!(out)?;
        writeln!(
            out,
            "| {} | {} | {} |",
            Msg::TableNumber.text(lang),
            Msg::TableValue.text(lang),
            Msg::TableMeaning.text(lang)
        )?;
        writeln!(out, "| --- | ---: | --- |")?;
        for r in &rows {
            writeln!(
                out,
                "| {} | {} | {} |",
                escape(&r.label),
                escape(&r.value),
                prose(&r.meaning)
            )?;
        }
    }
    if let Some(gap) = localize::reserved_gap(f, lang) {
        writeln!(out)?;
        writeln!(out, "{}", prose(&gap))?;
    }
    if !f.facts.is_empty() && rows.is_empty() {
        writeln!(out)?;
        for (key, value) in &f.facts {
            let Some(value) = localize::fact_value(f, key, value, lang) else {
                continue;
            };
            writeln!(
                out,
                "- {}: `{}`",
                localize::fact_label(key, lang),
                sanitize(&value).replace('`', "'")
            )?;
        }
    }
    for note in &f.notes {
        writeln!(out)?;
        writeln!(out, "{}", prose(&Msg::Note.fill(lang, &[&note.text])))?;
    }

    if let Some(report) = &f.snapshot {
        for (heading, lines) in localize::snapshot_sections(report, lang) {
            writeln!(out)?;
            writeln!(out, "**{}**", escape(&heading))?;
            writeln!(out)?;
            for line in lines {
                writeln!(out, "- {}", escape(&line))?;
            }
        }
    }
    writeln!(out)?;
    let message = sanitize(&f.text);
    let message_fence = fence(&message);
    writeln!(out, "{message_fence}text\n{message}\n{message_fence}")?;
    if let Some(tb) = f.traceback.as_ref().filter(|tb| !tb.frames.is_empty()) {
        let mut lines = Vec::new();
        if tb.omitted_frames > 0 {
            lines.push(format!("… {}", tb.omitted_frames));
        }
        for frame in &tb.frames {
            lines.push(format!(
                "{}:{} in {}",
                sanitize(&frame.file),
                frame.line,
                sanitize(&frame.function)
            ));
            if let Some(code) = &frame.code {
                lines.push(format!("    {}", sanitize(code)));
            }
        }
        let block = lines.join("\n");
        let fence = fence(&block);
        writeln!(out)?;
        writeln!(out, "{}", Msg::Traceback.text(lang))?;
        writeln!(out)?;
        writeln!(out, "{fence}text\n{block}\n{fence}")?;
    }
    if !f.explain.is_empty() {
        writeln!(out)?;
        let codes: Vec<String> = f
            .explain
            .iter()
            .map(|c| format!("`oomwhy explain {c}`"))
            .collect();
        writeln!(out, "{} {}", Msg::More.text(lang), codes.join(" · "))?;
    }
    writeln!(out)
}

pub(super) fn summary(s: &Summary, lang: Lang, out: &mut dyn Write) -> io::Result<()> {
    writeln!(out, "_oomwhy: {}_", escape(&summary_line_in(s, lang)))
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

    #[test]
    fn code_in_prose_becomes_code() {
        assert_eq!(
            prose("Set PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True, then call torch.cuda.empty_cache()."),
            "Set `PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True`, then call `torch.cuda.empty_cache()`."
        );
        assert_eq!(
            prose("Run `nvidia-smi -l 1` now"),
            "Run `nvidia-smi -l 1` now"
        );
        assert_eq!(
            prose("cap max_length or *crop*"),
            "cap `max_length` or \\*crop\\*"
        );
    }
}
