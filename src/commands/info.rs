//! Subcommands that print built-in information: `explain`, `schema`,
//! `completions`, `man`.

use super::use_color;
use crate::cli::{Cli, ColorArg, CompletionsArgs, ExplainArgs, SchemaArgs};
use anyhow::Context;
use clap::CommandFactory;
use colored::Colorize;
use oomwhy::explain::docs;
use oomwhy::i18n::{zh, Lang, Msg};
use std::io::{self, IsTerminal, Write};
use unicode_width::UnicodeWidthChar;

/// A code as a user typed it, in the form codes are written: case, `-` for
/// `_`, spaces and an `oomwhy explain` prefix do not matter.
fn normalize(code: &str) -> String {
    code.trim()
        .trim_start_matches("oomwhy explain")
        .trim()
        .to_ascii_lowercase()
        .chars()
        .map(|c| if c == '-' || c == ' ' { '_' } else { c })
        .collect()
}

/// The title of a code in `lang` (the page's own title in English).
fn title_in(code: &str, english: &'static str, lang: Lang) -> &'static str {
    match lang {
        Lang::Zh => oomwhy::explain::docs::chinese_title(code)
            .or_else(|| zh::verdict_title(code))
            .unwrap_or(english),
        Lang::En => english,
    }
}

/// Why a code was not found: the codes it is a prefix of, or the codes
/// closest to it (Jaro–Winkler similarity, which favours a shared start).
fn not_found(wanted: &str, lang: Lang) -> String {
    let key = normalize(wanted);
    let codes: Vec<&str> = docs::list().into_iter().map(|(c, _)| c).collect();
    let prefixed: Vec<&str> = codes
        .iter()
        .copied()
        .filter(|c| !key.is_empty() && c.starts_with(&key))
        .collect();
    if prefixed.len() > 1 {
        return format!(
            "oomwhy: {}",
            Msg::Ambiguous.fill(lang, &[&wanted, &prefixed.join(", ")])
        );
    }
    let mut scored: Vec<(f64, &str)> = codes
        .iter()
        .map(|c| {
            // A word of the code typed alone ("fragment") counts too.
            let word = c
                .split('_')
                .map(|w| strsim::jaro_winkler(&key, w))
                .fold(0.0, f64::max);
            (strsim::jaro_winkler(&key, c).max(word * 0.95), *c)
        })
        .filter(|(score, _)| *score >= 0.8)
        .collect();
    scored.sort_by(|a, b| b.0.total_cmp(&a.0));
    let mut text = format!("oomwhy: {}", Msg::UnknownCode.fill(lang, &[&wanted]));
    if !scored.is_empty() {
        let names: Vec<&str> = scored.iter().take(3).map(|(_, c)| *c).collect();
        text.push_str("; ");
        text.push_str(&Msg::DidYouMean.fill(lang, &[&names.join(", ")]));
    }
    text.push_str("\n  ");
    text.push_str(Msg::SeeList.text(lang));
    text
}

/// `oomwhy explain CODE` and `oomwhy explain --list`.
pub fn explain(args: &ExplainArgs, color: ColorArg, lang: Lang) -> anyhow::Result<i32> {
    let color = use_color(color, io::stdout().is_terminal());
    colored::control::set_override(color);
    let mut out = io::stdout().lock();
    if args.list {
        let list = docs::list();
        let width = list.iter().map(|(code, _)| code.len()).max().unwrap_or(0);
        let kinds: Vec<&str> = oomwhy::record::Kind::ALL.iter().map(|k| k.slug()).collect();
        let groups = [(Msg::KindsHeading, true), (Msg::VerdictsHeading, false)];
        for (n, (heading, is_kind)) in groups.into_iter().enumerate() {
            if n > 0 {
                writeln!(out)?;
            }
            let heading = heading.text(lang);
            writeln!(
                out,
                "{}",
                if color {
                    heading.bold().cyan().to_string()
                } else {
                    heading.to_string()
                }
            )?;
            for (code, title) in list.iter().filter(|(c, _)| kinds.contains(c) == is_kind) {
                let name = format!("{code:<width$}");
                let name = if color { name.bold().to_string() } else { name };
                writeln!(out, "  {name}  {}", title_in(code, title, lang))?;
            }
        }
        out.flush().context("cannot write the output")?;
        return Ok(0);
    }
    let wanted = args.code.as_deref().unwrap_or_default();
    let (code, text) = match docs::lookup(wanted) {
        Ok(found) => found,
        Err(_) => {
            warn!("{}", not_found(wanted, lang));
            return Ok(2);
        }
    };
    let chinese_page = (lang == Lang::Zh)
        .then(|| docs::chinese_page(code))
        .flatten();
    let text = chinese_page.unwrap_or(text);
    if lang == Lang::Zh && chinese_page.is_none() {
        let title = title_in(code, docs::title(text), lang);
        let head = format!("{code}：{title}");
        writeln!(
            out,
            "{}",
            if color { head.bold().to_string() } else { head }
        )?;
        if let Some(summary) = zh::verdict_summary(code) {
            writeln!(out)?;
            writeln!(out, "{summary}")?;
        }
        writeln!(out)?;
        writeln!(out, "{}", Msg::PageInEnglish.text(lang))?;
        writeln!(out)?;
    }
    if color {
        // On a terminal: paragraphs and list items reflowed to its width.
        let width = super::text_width(super::stdout_width());
        for block in blocks(text) {
            writeln!(out, "{}", block.render(width))?;
        }
    } else {
        // Piped: the Markdown source, which reads as plain text.
        out.write_all(text.as_bytes())?;
    }
    out.flush().context("cannot write the output")?;
    Ok(0)
}

/// A piece of an explanation page, as laid out on a terminal.
enum Block<'a> {
    /// Printed as it is (headings, code, tables, blank lines), styled.
    Line(&'a str),
    /// Words reflowed to the width; `first` and `rest` indent the lines.
    Flow {
        first: String,
        rest: String,
        words: String,
    },
}

impl Block<'_> {
    fn render(&self, width: usize) -> String {
        match self {
            Block::Line(line) => style_markdown(line),
            Block::Flow { first, rest, words } => {
                let options = textwrap::Options::new(width)
                    .initial_indent(first)
                    .subsequent_indent(rest)
                    .wrap_algorithm(textwrap::WrapAlgorithm::FirstFit);
                // Styled first: textwrap does not count colour codes.
                textwrap::fill(&style_markdown(words), options)
            }
        }
    }
}

/// Splits a page into lines kept as they are and paragraphs or list items
/// to reflow (their source lines joined).
fn blocks(text: &str) -> Vec<Block<'_>> {
    let mut out: Vec<Block<'_>> = Vec::new();
    let mut open = false;
    for line in text.lines() {
        let trimmed = line.trim_start();
        let item_marker = trimmed
            .split_once(' ')
            .map(|(marker, _)| marker)
            .filter(|m| *m == "-" || (m.ends_with('.') && m[..m.len() - 1].parse::<u32>().is_ok()));
        let verbatim = line.is_empty()
            || line.starts_with('#')
            || line.starts_with("    ") && !open
            || line.starts_with('|')
            || line.starts_with("```");
        if verbatim {
            open = false;
            out.push(Block::Line(line));
        } else if let Some(marker) = item_marker {
            let indent = line.len() - trimmed.len();
            let words = trimmed[marker.len()..].trim_start().to_string();
            out.push(Block::Flow {
                first: format!("{}{marker} ", " ".repeat(indent)),
                rest: " ".repeat(indent + marker.len() + 1),
                words,
            });
            open = true;
        } else if let (true, Some(Block::Flow { words, .. })) = (open, out.last_mut()) {
            // Chinese lines join without a space; others with one.
            let wide = |c: Option<char>| c.is_some_and(|c| UnicodeWidthChar::width(c) == Some(2));
            if !(wide(words.chars().last()) || wide(trimmed.chars().next())) {
                words.push(' ');
            }
            words.push_str(trimmed);
        } else {
            out.push(Block::Flow {
                first: String::new(),
                rest: String::new(),
                words: trimmed.to_string(),
            });
            open = true;
        }
    }
    out
}

/// One line of an explanation page for a terminal: headings in colour,
/// `**strong**` in bold, `code` highlighted, the Markdown marks removed.
fn style_markdown(line: &str) -> String {
    if let Some(heading) = line.strip_prefix("## ") {
        return heading.bold().cyan().to_string();
    }
    if let Some(title) = line.strip_prefix("# ") {
        return title.bold().underline().to_string();
    }
    if line.starts_with("```") {
        return line.dimmed().to_string();
    }
    let mut out = String::with_capacity(line.len() + 16);
    let mut rest = line;
    while !rest.is_empty() {
        if let Some(after) = rest.strip_prefix("**") {
            if let Some(end) = after.find("**") {
                out.push_str(&after[..end].bold().to_string());
                rest = &after[end + 2..];
                continue;
            }
        }
        if let Some(after) = rest.strip_prefix('`') {
            if let Some(end) = after.find('`') {
                out.push_str(&after[..end].yellow().to_string());
                rest = &after[end + 1..];
                continue;
            }
        }
        // Past the first character (which may be wide), up to the next mark.
        let first = rest.chars().next().map_or(1, char::len_utf8);
        let next = rest[first..]
            .find(['*', '`'])
            .map_or(rest.len(), |i| i + first);
        out.push_str(&rest[..next]);
        rest = &rest[next..];
    }
    out
}

/// `oomwhy schema [--ndjson | --summary]`.
pub fn schema(args: &SchemaArgs) -> anyhow::Result<i32> {
    let schema = if args.ndjson {
        oomwhy::schema::NDJSON
    } else if args.summary {
        oomwhy::schema::SUMMARY
    } else {
        oomwhy::schema::REPORT
    };
    io::stdout().lock().write_all(schema.as_bytes())?;
    Ok(0)
}

/// `oomwhy completions SHELL`.
pub fn completions(args: &CompletionsArgs) -> anyhow::Result<i32> {
    // clap_complete panics on a write error: generate into memory, then
    // write with an error that can be reported.
    // The codes `explain` knows, so that they complete; the real parser
    // takes any text (prefixes, other spellings) and says what it matched.
    let codes: Vec<&'static str> = docs::list().into_iter().map(|(c, _)| c).collect();
    let mut command = Cli::command().mut_subcommand("explain", |explain| {
        explain.mut_arg("code", |code| {
            code.value_parser(clap::builder::PossibleValuesParser::new(codes))
        })
    });
    let mut script = Vec::new();
    clap_complete::generate(args.shell, &mut command, "oomwhy", &mut script);
    let mut out = io::stdout().lock();
    out.write_all(&script)
        .and_then(|()| out.flush())
        .context("cannot write the output")?;
    Ok(0)
}

/// `oomwhy man`.
pub fn man() -> anyhow::Result<i32> {
    let mut out = io::stdout().lock();
    // One page: the subcommands are described in it, not in separate
    // oomwhy-<command>(1) pages that nothing installs.
    let command = Cli::command();
    let man = clap_mangen::Man::new(command.clone());
    man.render_title(&mut out)?;
    man.render_name_section(&mut out)?;
    man.render_synopsis_section(&mut out)?;
    man.render_description_section(&mut out)?;
    man.render_options_section(&mut out)?;
    for sub in command.get_subcommands().filter(|s| s.get_name() != "help") {
        let name = format!("oomwhy {}", sub.get_name());
        writeln!(out, ".SH \"{}\"", name.to_uppercase())?;
        let sub_man = clap_mangen::Man::new(sub.clone().bin_name(name));
        sub_man.render_synopsis_section(&mut out)?;
        sub_man.render_description_section(&mut out)?;
        sub_man.render_options_section(&mut out)?;
    }
    man.render_extra_section(&mut out)?;
    man.render_version_section(&mut out)?;
    out.flush()?;
    Ok(0)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pages_reflow_paragraphs_and_items_but_not_code() {
        colored::control::set_override(false);
        let page = "# a: title\n\nOne paragraph\non two lines.\n\n    code line\n\n1. **First** item\n   continued\n- bullet\n";
        let lines: Vec<String> = blocks(page).iter().map(|b| b.render(80)).collect();
        assert_eq!(
            lines,
            [
                "a: title",
                "",
                "One paragraph on two lines.",
                "",
                "    code line",
                "",
                "1. First item continued",
                "- bullet",
            ]
        );
        let chinese: Vec<String> = blocks("显存\n不足，batch\nsize 减半\n")
            .iter()
            .map(|b| b.render(80))
            .collect();
        assert_eq!(chinese, ["显存不足，batch size 减半"]);
        colored::control::set_override(true);
        assert!(style_markdown("显存 **不足** `x`").starts_with("显存 "));
        colored::control::set_override(false);
        let narrow: Vec<String> = blocks("1. one two three four\n")
            .iter()
            .map(|b| b.render(13))
            .collect();
        assert_eq!(narrow, ["1. one two\n   three four"]);
    }
}
