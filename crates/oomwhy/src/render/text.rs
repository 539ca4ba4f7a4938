//! The human-readable explanation: headline, numbers with their meaning, the
//! reserved-vs-allocated gap, verdicts, numbered fixes, where it happened.

use super::localize::{self, localize};
use super::{sanitize, RenderOptions};
use crate::i18n::{count, Lang, Msg};
use crate::record::{Category, Finding, Summary};
use colored::Colorize;
use std::io::{self, Write};
use unicode_width::UnicodeWidthStr;

struct Painter {
    color: bool,
}

impl Painter {
    fn bold(&self, s: &str) -> String {
        if self.color {
            s.bold().to_string()
        } else {
            s.to_string()
        }
    }
    fn heading(&self, s: &str) -> String {
        if self.color {
            s.bold().cyan().to_string()
        } else {
            s.to_string()
        }
    }
    fn category(&self, category: Category, s: &str) -> String {
        if !self.color {
            return s.to_string();
        }
        match category {
            Category::Oom => s.bold().red().to_string(),
            Category::LikelyOom => s.bold().yellow().to_string(),
            Category::Crash => s.bold().magenta().to_string(),
            Category::MemoryState => s.bold().cyan().to_string(),
            Category::Warning => s.bold().yellow().to_string(),
        }
    }
    fn dim(&self, s: &str) -> String {
        if self.color {
            s.dimmed().to_string()
        } else {
            s.to_string()
        }
    }
    fn value(&self, s: &str) -> String {
        if self.color {
            s.bold().yellow().to_string()
        } else {
            s.to_string()
        }
    }
}

/// A number and its unit (`2.00 GiB`, `GPU 0`, `rank 3`), joined by a
/// no-break space while wrapping so that a line never ends between them.
fn units() -> &'static regex::Regex {
    static UNITS: std::sync::OnceLock<regex::Regex> = std::sync::OnceLock::new();
    UNITS.get_or_init(|| {
        crate::constant_regex(
            r"(\d) (B|KiB|MiB|GiB|TiB|PiB|KB|MB|GB|TB|bytes|ms|s|tokens)\b|\b(GPU|rank|Xid|PID|line|第) (\d)",
        )
    })
}

/// Wraps `text` to `width` display columns (East Asian wide characters
/// count two, lines break between CJK characters and at spaces, never
/// between a number and its unit), the first line prefixed by `first`,
/// the others by `indent`. Words longer than a line are broken.
pub(super) fn wrap(text: &str, first: &str, indent: &str, width: usize) -> String {
    let glued = units().replace_all(text, |c: &regex::Captures<'_>| match (c.get(1), c.get(2)) {
        (Some(n), Some(unit)) => format!("{}\u{a0}{}", n.as_str(), unit.as_str()),
        _ => format!("{}\u{a0}{}", &c[3], &c[4]),
    });
    let options = textwrap::Options::new(width.max(1))
        .initial_indent(first)
        .subsequent_indent(indent)
        .break_words(true)
        // Optimal fit lets a line overflow for a better-looking paragraph;
        // first fit never exceeds the width.
        .wrap_algorithm(textwrap::WrapAlgorithm::FirstFit);
    let lines: Vec<String> = textwrap::wrap(&glued, options)
        .into_iter()
        .map(|line| line.trim_end().replace('\u{a0}', " "))
        .collect();
    if lines.is_empty() {
        return first.trim_end().to_string();
    }
    lines.join("\n")
}

/// Pads `text` with spaces to `width` display columns.
fn pad(text: &str, width: usize) -> String {
    let used = UnicodeWidthStr::width(text);
    format!("{text}{}", " ".repeat(width.saturating_sub(used)))
}

/// One finding and the blank line after it.
pub(super) fn finding(f: &Finding, options: RenderOptions, out: &mut dyn Write) -> io::Result<()> {
    let p = Painter {
        color: options.color,
    };
    let f = localize(f, options.lang);
    let view = View {
        p: &p,
        lang: options.lang,
        width: options.width.max(super::MIN_WIDTH),
    };
    view.answer(&f, out)?;
    if !options.brief {
        view.detail(&f, out)?;
    }
    writeln!(out)
}

/// The closing summary line.
pub(super) fn summary(s: &Summary, options: RenderOptions, out: &mut dyn Write) -> io::Result<()> {
    let p = Painter {
        color: options.color,
    };
    let width = options.width.max(super::MIN_WIDTH);
    let line = wrap(&summary_line_in(s, options.lang), "", "", width);
    writeln!(out, "{}", p.bold(&line))
}

/// "2 findings: 1 out-of-memory, 1 crash (3 lines in 3 inputs, 1 unreadable)".
pub fn summary_line(s: &Summary) -> String {
    summary_line_in(s, Lang::En)
}

/// [`summary_line`] in `lang`.
pub fn summary_line_in(s: &Summary, lang: Lang) -> String {
    let mut parts = Vec::new();
    if s.oom > 0 {
        parts.push(Msg::CountOom.fill(lang, &[&s.oom]));
    }
    if s.likely_oom > 0 {
        parts.push(Msg::CountLikelyOom.fill(lang, &[&s.likely_oom]));
    }
    if s.crash > 0 {
        parts.push(count(
            lang,
            s.crash,
            Msg::CountCrashOne,
            Msg::CountCrashMany,
        ));
    }
    if s.warning > 0 {
        parts.push(count(
            lang,
            s.warning,
            Msg::CountWarningOne,
            Msg::CountWarningMany,
        ));
    }
    let counts = if parts.is_empty() {
        String::new()
    } else {
        format!(
            "{}{}",
            Msg::CountsIntro.text(lang),
            parts.join(Msg::ListSep.text(lang))
        )
    };
    let errors = if s.input_errors > 0 {
        format!(
            "{}{}",
            Msg::ListSep.text(lang),
            Msg::Unreadable.fill(lang, &[&s.input_errors])
        )
    } else {
        String::new()
    };
    let lines = usize::try_from(s.lines).unwrap_or(usize::MAX);
    Msg::SummaryLine.fill(
        lang,
        &[
            &count(lang, s.findings, Msg::FindingOne, Msg::FindingMany),
            &counts,
            &count(lang, lines, Msg::LinesOne, Msg::LinesMany),
            &count(lang, s.inputs, Msg::InputsOne, Msg::InputsMany),
            &errors,
        ],
    )
}

/// The finding's tag: in Chinese, host memory (内存) is told apart from
/// GPU memory (显存); a crash is a "GPU crash" only when the GPU or its code
/// faulted, not when a process, a worker or a collective failed.
pub(super) fn category_label(f: &Finding) -> Msg {
    let host = localize::host_memory(f);
    let gpu_fault = f.kind.is_gpu_fault();
    match (f.category, host) {
        (Category::Oom, false) => Msg::Oom,
        (Category::Oom, true) => Msg::HostOom,
        (Category::LikelyOom, false) => Msg::LikelyOom,
        (Category::LikelyOom, true) => Msg::HostLikelyOom,
        (Category::Crash, _) if gpu_fault => Msg::Crash,
        (Category::Crash, _) => Msg::ProcessCrash,
        (Category::MemoryState, _) => Msg::MemoryState,
        (Category::Warning, _) => Msg::Warning,
    }
}

/// The first sentence of a verdict's detail, when it carries a figure: the
/// reason in one line.
fn first_sentence(detail: &str) -> Option<&str> {
    // The full-width colon ends a Chinese clause as ": " ends an English one.
    // A stop inside a quoted message (`` `cuda runtime error (2) : out of
    // memory` ``) is the message's own: the cut would leave its quote open.
    let end = [". ", "。", ": ", "："]
        .iter()
        .flat_map(|stop| detail.match_indices(stop).map(|(i, _)| (i, stop.len())))
        .filter(|&(i, _)| detail[..i].matches('`').count() % 2 == 0)
        .map(|(i, len)| i + len)
        .min()
        .unwrap_or(detail.len());
    let sentence = detail[..end].trim_end_matches([' ', ':', '：']).trim();
    let sentence = sentence.strip_suffix('.').unwrap_or(sentence);
    let sentence = sentence.strip_suffix('。').unwrap_or(sentence);
    (sentence.chars().any(|c| c.is_ascii_digit()) && sentence.chars().count() <= 160)
        .then_some(sentence)
}

/// Whether `reason` opens like `title` ("Other processes hold a large part
/// of this GPU" and "Other processes hold 20.31 GiB of the 23.65 GiB
/// card"): then the reason alone says both, without repeating the subject.
/// The first two words are compared; for Chinese, which does not separate
/// words, the first four characters.
fn restates(title: &str, reason: &str) -> bool {
    let opening = |text: &str| -> String {
        if text.starts_with(|c: char| c.is_ascii()) {
            let words: Vec<&str> = text.split_whitespace().take(2).collect();
            words.join(" ").to_lowercase()
        } else {
            text.chars().take(4).collect()
        }
    };
    opening(title) == opening(reason)
}

/// "Why: text" in English, "原因：text" in Chinese (a full-width colon
/// carries its own space).
fn labelled(label: &str, text: &str) -> String {
    if label.ends_with('：') {
        format!("{label}{text}")
    } else {
        format!("{label} {text}")
    }
}

/// `sentence` and its opening clauses (cut before ` (`, `, `, `; `, ` — `,
/// `（`, `，`, `；`) that still hold a digit and close their parentheses,
/// longest first.
fn clauses(sentence: &str) -> Vec<&str> {
    let mut cuts: Vec<usize> = [" (", ", ", "; ", " — ", "（", "，", "；"]
        .iter()
        .flat_map(|stop| sentence.match_indices(stop).map(|(i, _)| i))
        .collect();
    cuts.sort_unstable_by(|a, b| b.cmp(a));
    std::iter::once(sentence)
        .chain(cuts.into_iter().map(|i| &sentence[..i]))
        .filter(|clause| clause.chars().any(|c| c.is_ascii_digit()))
        // A clause never ends inside parentheses or a quoted message.
        .filter(|clause| clause.matches(['(', '（']).count() == clause.matches([')', '）']).count())
        .filter(|clause| clause.matches('`').count() % 2 == 0)
        .collect()
}

struct View<'a> {
    p: &'a Painter,
    lang: Lang,
    width: usize,
}

/// Every string printed here passes through [`sanitize`], whether a parser
/// took it from the log or the explainer built it (which may quote the log):
/// text from a log must never reach the terminal raw.
impl View<'_> {
    fn wrap(&self, text: &str, first: &str, indent: &str) -> String {
        wrap(&sanitize(text), first, indent, self.width)
    }

    fn heading(&self, out: &mut dyn Write, msg: Msg) -> io::Result<()> {
        writeln!(out)?;
        let text = self.wrap(msg.text(self.lang), "  ", "  ");
        writeln!(out, "{}", self.p.heading(&text))
    }

    /// The answer first: what failed, the main reason with its figure, the
    /// first thing to change (at most three entries).
    fn answer(&self, f: &Finding, out: &mut dyn Write) -> io::Result<()> {
        let p = self.p;
        let lang = self.lang;
        let label = category_label(f).text(lang);
        let tag = format!("[{}] {label}", f.id);
        let line = self.wrap(
            &format!("{tag} {}", localize::headline_after(f, label, lang)),
            "",
            "    ",
        );
        let (tag_part, rest) = line.split_at(tag.len().min(line.len()));
        writeln!(out, "{}{}", p.category(f.category, tag_part), p.bold(rest))?;
        if let Some(v) = f.diagnosis.verdicts.first() {
            let why = Msg::SummaryWhy.text(lang);
            let join = |reason: &str| match lang {
                _ if restates(&v.title, reason) => reason.to_string(),
                Lang::Zh => format!("{}：{reason}", v.title),
                Lang::En => format!("{}: {reason}", v.title),
            };
            // The reason with the figure it rests on, in at most two lines:
            // the detail's first sentence, else its longest opening clause
            // that still holds a number, else the title alone.
            let candidates = first_sentence(&v.detail)
                .map(clauses)
                .unwrap_or_default()
                .into_iter()
                .map(join)
                .chain(std::iter::once(v.title.clone()));
            let mut text = String::new();
            for reason in candidates {
                text = self.wrap(&labelled(why, &reason), "    ", "      ");
                if text.lines().count() <= 2 {
                    break;
                }
            }
            writeln!(out, "{}", text.replacen(why, &p.bold(why), 1))?;
        }
        if let Some(fix) = f.diagnosis.fixes.first() {
            let label = Msg::SummaryFix.text(lang);
            let text = self.wrap(&labelled(label, &fix.title), "    ", "      ");
            writeln!(out, "{}", text.replacen(label, &p.bold(label), 1))?;
        }
        Ok(())
    }

    /// The detail, in the order people ask: why, what to do, what the
    /// numbers mean, where.
    fn detail(&self, f: &Finding, out: &mut dyn Write) -> io::Result<()> {
        let p = self.p;
        let lang = self.lang;
        writeln!(out)?;
        writeln!(
            out,
            "{}",
            p.dim(&self.wrap(&origin_line_in(f, lang), "    ", "      "))
        )?;
        if let Some(context) = context_line_in(f, lang) {
            writeln!(out, "{}", p.dim(&self.wrap(&context, "    ", "      ")))?;
        }
        if let Some(id) = f.consequence_of {
            let text = self.wrap(&Msg::Consequence.fill(lang, &[&id]), "    ", "    ");
            writeln!(out, "{}", p.bold(&text))?;
        }
        writeln!(out)?;
        let message = sanitize(&f.text);
        let shown: String = if message.chars().count() > 2000 {
            let cut: String = message.chars().take(2000).collect();
            format!("{cut} […]")
        } else {
            message.into_owned()
        };
        writeln!(out, "{}", wrap(&shown, "    │ ", "    │ ", self.width))?;

        let d = &f.diagnosis;
        if !d.verdicts.is_empty() {
            self.heading(out, Msg::WhyHeading)?;
            for v in &d.verdicts {
                let bullet = p.category(f.category, "●");
                let title = self.wrap(&v.title, "    ● ", "      ");
                writeln!(out, "{}", p.bold(&title).replacen('●', &bullet, 1))?;
                writeln!(out, "{}", self.wrap(&v.detail, "      ", "      "))?;
            }
        }
        if !d.fixes.is_empty() {
            self.heading(out, Msg::FixHeading)?;
            for (n, fix) in d.fixes.iter().enumerate() {
                let number = format!("    {}. ", n + 1);
                let title = self.wrap(&fix.title, &number, "       ");
                writeln!(out, "{}", p.bold(&title))?;
                writeln!(out, "{}", self.wrap(&fix.how, "       ", "       "))?;
            }
        }
        self.numbers(f, out)?;
        if let Some(diag) = &f.diagnostics {
            self.heading(out, Msg::DiagnosticsHeading)?;
            for line in diagnostics_lines(diag, lang) {
                writeln!(out, "{}", self.wrap(&line, "    ", "      "))?;
            }
        }
        if let Some(report) = &f.snapshot {
            for (heading, lines) in localize::snapshot_sections(report, lang) {
                writeln!(out)?;
                writeln!(out, "  {}", p.heading(&heading))?;
                for line in lines {
                    writeln!(out, "{}", self.wrap(&line, "    ", "      "))?;
                }
            }
        }
        self.traceback(f, out)?;
        if !f.explain.is_empty() {
            writeln!(out)?;
            let label = Msg::More.text(lang);
            let codes: Vec<String> = f
                .explain
                .iter()
                .map(|c| format!("oomwhy\u{a0}explain\u{a0}{c}"))
                .collect();
            let text = self.wrap(&labelled(label, &codes.join(" · ")), "  ", "        ");
            writeln!(out, "{}", text.replacen(label, &p.heading(label), 1))?;
        }
        Ok(())
    }

    fn numbers(&self, f: &Finding, out: &mut dyn Write) -> io::Result<()> {
        let p = self.p;
        let lang = self.lang;
        let rows = localize::field_rows(f, lang);
        if !rows.is_empty() {
            self.heading(out, Msg::NumbersHeading)?;
            let label_width = rows
                .iter()
                .map(|r| UnicodeWidthStr::width(r.label.as_str()))
                .max()
                .unwrap_or(0);
            let value_width = rows
                .iter()
                .map(|r| UnicodeWidthStr::width(r.value.as_str()))
                .max()
                .unwrap_or(0);
            let lead_width = 4 + label_width + 2 + value_width + 2;
            // The meaning beside the numbers when it has room (30 columns),
            // under them otherwise.
            let beside = lead_width + 30 <= self.width;
            let indent = " ".repeat(if beside { lead_width } else { 8 });
            for r in &rows {
                let (label, value) = (sanitize(&r.label), sanitize(&r.value));
                let value_pad =
                    " ".repeat(value_width.saturating_sub(UnicodeWidthStr::width(&*value)));
                let lead = format!("    {}  {value_pad}{value}  ", pad(&label, label_width));
                let wrapped = if beside {
                    self.wrap(&r.meaning, &lead, &indent)
                } else {
                    let lead = self.wrap(&labelled(&format!("{label}:"), &value), "    ", "      ");
                    format!("{lead}\n{}", self.wrap(&r.meaning, &indent, &indent))
                };
                let wrapped = wrapped.replacen(&*value, &p.value(&value), 1);
                writeln!(out, "{wrapped}")?;
            }
        }
        if let Some(gap) = localize::reserved_gap(f, lang) {
            self.heading(out, Msg::GapHeading)?;
            writeln!(out, "{}", self.wrap(&gap, "    ", "    "))?;
        }
        if !f.facts.is_empty() && rows.is_empty() {
            self.heading(out, Msg::DetailsHeading)?;
            for (key, value) in &f.facts {
                let Some(value) = localize::fact_value(f, key, value, lang) else {
                    continue;
                };
                let colon = if lang == Lang::Zh { "：" } else { ": " };
                let line = format!("{}{colon}{value}", localize::fact_label(key, lang));
                writeln!(out, "{}", self.wrap(&line, "    ", "      "))?;
            }
        }
        for note in &f.notes {
            let text = Msg::Note.fill(lang, &[&note.text]);
            writeln!(out, "{}", self.wrap(&text, "    ", "      "))?;
        }
        Ok(())
    }

    fn traceback(&self, f: &Finding, out: &mut dyn Write) -> io::Result<()> {
        let Some(tb) = &f.traceback else {
            return Ok(());
        };
        if tb.frames.is_empty() && tb.chained.is_empty() {
            return Ok(());
        }
        let lang = self.lang;
        self.heading(out, Msg::WhereHeading)?;
        for chained in &tb.chained {
            let relation = if chained.relation == "direct_cause" {
                Msg::DirectCause
            } else {
                Msg::WhileHandling
            };
            let text = format!("({}: {})", relation.text(lang), chained.exception);
            writeln!(out, "{}", self.wrap(&text, "    ", "      "))?;
        }
        let skip = tb.frames.len().saturating_sub(6);
        let hidden = usize::try_from(skip as u64 + tb.omitted_frames).unwrap_or(usize::MAX);
        if hidden > 0 {
            let text = count(lang, hidden, Msg::EarlierFrame, Msg::EarlierFrames);
            writeln!(out, "    {}", self.p.dim(&text))?;
        }
        for frame in &tb.frames[skip..] {
            let code = frame
                .code
                .as_deref()
                .map(|c| format!(": {c}"))
                .unwrap_or_default();
            let line = format!("{}:{} in {}{code}", frame.file, frame.line, frame.function);
            writeln!(out, "{}", self.wrap(&line, "    ", "        "))?;
        }
        Ok(())
    }
}

/// The "Diagnostics pasted alongside" lines: GPUs and processes from
/// nvidia-smi, the memory summary's key numbers.
fn diagnostics_lines(diag: &crate::record::Diagnostics, lang: Lang) -> Vec<String> {
    use crate::units::format_size as fmt;
    let size = |b: Option<u64>| b.map_or("?".to_string(), fmt);
    let mut lines = Vec::new();
    if let Some(smi) = &diag.nvidia_smi {
        let cuda = smi
            .cuda_version
            .as_deref()
            .map(|c| format!(", CUDA {c}"))
            .unwrap_or_default();
        lines.push(Msg::SmiHeader.fill(
            lang,
            &[
                &smi.line,
                &smi.driver_version.as_deref().unwrap_or("?"),
                &cuda,
            ],
        ));
        for g in &smi.gpus {
            lines.push(Msg::SmiGpu.fill(
                lang,
                &[&g.index, &g.name, &size(g.used_bytes), &size(g.total_bytes)],
            ));
        }
        for p in smi.processes.iter().take(16) {
            lines.push(format!(
                "· GPU {} PID {} {} {}: {}",
                p.gpu,
                p.pid.map_or("N/A".to_string(), |pid| pid.to_string()),
                p.kind,
                p.name,
                size(p.used_bytes)
            ));
        }
        if smi.processes.len() > 16 {
            lines.push(Msg::SmiMore.fill(lang, &[&(smi.processes.len() - 16)]));
        }
    }
    if let Some(m) = &diag.memory_summary {
        let count = |c: Option<u64>| c.map_or("?".to_string(), |c| c.to_string());
        lines.push(Msg::SummaryHeader.fill(
            lang,
            &[
                &m.line,
                &count(m.device.map(u64::from)),
                &count(m.ooms),
                &count(m.alloc_retries),
            ],
        ));
        let rows = [
            (
                "allocated",
                m.allocated_current_bytes,
                m.allocated_peak_bytes,
            ),
            ("reserved", m.reserved_current_bytes, m.reserved_peak_bytes),
            (
                "non-releasable",
                m.non_releasable_current_bytes,
                m.non_releasable_peak_bytes,
            ),
        ];
        for (name, current, peak) in rows {
            if current.is_some() || peak.is_some() {
                lines.push(Msg::SummaryRow.fill(lang, &[&name, &size(current), &size(peak)]));
            }
        }
    }
    lines
}

/// "train.log line 57 · RuntimeError · message form "reserved" (PyTorch ≈1.4–1.12)".
pub(super) fn origin_line_in(f: &Finding, lang: Lang) -> String {
    let mut parts = vec![Msg::AtLine.fill(lang, &[&f.source.input, &f.source.line])];
    if let Some(e) = &f.exception {
        parts.push(e.clone());
    }
    if let Some(era) = &f.era {
        let version = f
            .version_hint
            .as_deref()
            .map(|v| match lang {
                Lang::En => format!(" ({v})"),
                Lang::Zh => format!(" ({})", crate::i18n::zh::version_hint(v)),
            })
            .unwrap_or_default();
        parts.push(format!("{}{version}", Msg::MessageForm.fill(lang, &[era])));
    }
    if f.truncated {
        parts.push(Msg::CutShort.text(lang).to_string());
    }
    parts.join(" · ")
}

/// Ranks, copies, phase and progress, when known.
pub(super) fn context_line_in(f: &Finding, lang: Lang) -> Option<String> {
    let mut parts = Vec::new();
    if f.ranks.len() > 1 {
        let first = f.first_rank.map_or("?".into(), |r| r.to_string());
        parts.push(Msg::Ranks.fill(lang, &[&join_numbers(&f.ranks), &first]));
    } else if let Some(r) = f.first_rank {
        parts.push(Msg::Rank.fill(lang, &[&r]));
    }
    if f.devices.len() > 1 {
        parts.push(Msg::Gpus.fill(lang, &[&join_numbers(&f.devices)]));
    }
    if f.occurrences > 1 {
        parts.push(Msg::SeenTimes.fill(lang, &[&f.occurrences]));
    }
    if f.phase.name != "unknown" {
        parts.push(Msg::Phase.fill(
            lang,
            &[
                &localize::phase(&f.phase.name, lang),
                &localize::confidence(&f.phase.confidence, lang),
            ],
        ));
    }
    if let Some(step) = f.last_step {
        parts.push(Msg::LastStep.fill(lang, &[&step]));
    }
    (!parts.is_empty()).then(|| parts.join(" · "))
}

fn join_numbers(numbers: &[u32]) -> String {
    let mut sorted = numbers.to_vec();
    sorted.sort_unstable();
    let mut out: Vec<String> = Vec::new();
    let mut i = 0;
    while i < sorted.len() {
        let mut j = i;
        while j + 1 < sorted.len() && sorted[j + 1] == sorted[j] + 1 {
            j += 1;
        }
        out.push(if j > i + 1 {
            format!("{}–{}", sorted[i], sorted[j])
        } else if j == i + 1 {
            format!("{}, {}", sorted[i], sorted[j])
        } else {
            sorted[i].to_string()
        });
        i = j + 1;
    }
    out.join(", ")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::record::Kind;

    #[test]
    fn a_reason_that_restates_the_title_stands_alone() {
        assert!(restates(
            "Other processes hold a large part of this GPU",
            "Other processes hold 20.31 GiB of the 23.65 GiB card"
        ));
        assert!(!restates(
            "The workload does not fit in GPU memory",
            "Live tensors take 14.76 GiB of the 15.90 GiB card"
        ));
        assert!(restates(
            "设备报告的空闲显存比申请的还多",
            "设备报告空闲 5.00 GiB"
        ));
        assert!(!restates("工作负载放不下", "活跃张量占用 14.76 GiB"));
    }

    #[test]
    fn a_crash_is_a_gpu_crash_only_when_the_gpu_faulted() {
        let label = |kind: Kind, category: Category| {
            let mut f = Finding::new(kind, "t", 1, String::new());
            f.category = category;
            category_label(&f)
        };
        assert_eq!(
            label(Kind::IllegalMemoryAccess, Category::Crash),
            Msg::Crash
        );
        assert_eq!(label(Kind::Xid, Category::Crash), Msg::Crash);
        assert_eq!(label(Kind::FatalSignal, Category::Crash), Msg::ProcessCrash);
        assert_eq!(label(Kind::NcclTimeout, Category::Crash), Msg::ProcessCrash);
        assert_eq!(label(Kind::ChildFailed, Category::Crash), Msg::ProcessCrash);
        // A bus error in a DataLoader worker: /dev/shm, host memory.
        assert_eq!(
            label(Kind::FatalSignal, Category::LikelyOom),
            Msg::HostLikelyOom
        );
        assert_eq!(label(Kind::WindowsPagingFile, Category::Oom), Msg::HostOom);
        assert_eq!(label(Kind::TorchAllocatorOom, Category::Oom), Msg::Oom);
    }

    /// torchrun's report of a worker ended by SIGKILL (exit code -9) is
    /// probably the host's out-of-memory killer: 内存, not 显存; the same
    /// report with another signal keeps the neutral label.
    #[test]
    fn a_worker_killed_by_sigkill_is_host_memory() {
        let with_signal = |signal: &str| {
            let mut f = Finding::new(Kind::ChildFailed, "t", 1, String::new());
            f.category = Category::LikelyOom;
            f.facts
                .insert("root_cause_signal".into(), signal.to_string());
            category_label(&f)
        };
        assert_eq!(with_signal("SIGKILL"), Msg::HostLikelyOom);
        assert_eq!(with_signal("SIGSEGV"), Msg::LikelyOom);
    }

    /// torchrun's report with only `exitcode  : -9` and no signal line
    /// (fixtures/wild/2244.txt) is the same SIGKILL: 很可能是内存不足; exit
    /// code 1 keeps 显存's label.
    #[test]
    fn a_worker_exiting_minus_nine_is_host_memory() {
        let paste = include_str!("../../../../fixtures/wild/2244.txt");
        let label_of = |text: &str| {
            crate::decode_str(text)
                .into_iter()
                .find(|f| f.kind == Kind::ChildFailed)
                .map(|f| category_label(&f).text(Lang::Zh))
        };
        assert_eq!(label_of(paste), Some("很可能是内存不足"));
        let raised = paste.replace("exitcode  : -9", "exitcode  : 1");
        assert_ne!(label_of(&raised), Some("很可能是内存不足"));
    }

    /// A prose report of the Linux OOM killer whose detector wrote
    /// `memory: device` (fixtures/wild/2313.txt) shows host memory in its
    /// Details, as its host-RAM headline says.
    #[test]
    fn the_memory_row_follows_the_host_decision() {
        let paste = include_str!("../../../../fixtures/wild/2313.txt");
        let f = crate::decode_str(paste)
            .into_iter()
            .next()
            .expect("the fixture has a finding");
        assert_eq!(f.facts.get("memory").map(String::as_str), Some("device"));
        assert!(localize::host_memory(&f));
        assert_eq!(
            localize::fact_value(&f, "memory", "device", Lang::En).as_deref(),
            Some("host")
        );
    }

    #[test]
    fn wraps_words() {
        assert_eq!(wrap("aaa bbb ccc", "> ", "  ", 9), "> aaa bbb\n  ccc");
        assert_eq!(wrap("one\ntwo", "- ", "  ", 80), "- one\n  two");
    }

    #[test]
    fn never_splits_a_number_from_its_unit() {
        let text = wrap("tried to allocate 2.00 GiB now", "", "", 22);
        assert_eq!(text, "tried to allocate\n2.00 GiB now");
        assert!(wrap("on GPU 0 today", "", "", 7).contains("GPU 0"));
    }

    #[test]
    fn wide_characters_count_two_columns() {
        let text = wrap("显存不足显存不足显存不足", "", "", 10);
        for line in text.lines() {
            assert!(UnicodeWidthStr::width(line) <= 10, "{line:?}");
        }
        assert_eq!(text.lines().count(), 3);
    }

    #[test]
    fn summary_line_counts_lines_in_both_languages() {
        let s = Summary {
            findings: 1,
            oom: 1,
            lines: 1,
            inputs: 1,
            ..Summary::default()
        };
        assert_eq!(
            summary_line(&s),
            "1 finding: 1 out-of-memory (1 line in 1 input)"
        );
        assert_eq!(
            summary_line_in(&s, Lang::Zh),
            "1 个发现：1 个 OOM 错误（1 行，共 1 个输入）"
        );
    }

    #[test]
    fn clauses_keep_their_figures() {
        assert_eq!(
            clauses("PyTorch holds 1.32 GiB that no tensor uses (reserved 8.80 GiB), more than 1.25 GiB"),
            [
                "PyTorch holds 1.32 GiB that no tensor uses (reserved 8.80 GiB), more than 1.25 GiB",
                "PyTorch holds 1.32 GiB that no tensor uses (reserved 8.80 GiB)",
                "PyTorch holds 1.32 GiB that no tensor uses",
            ]
        );
        assert!(clauses("no figure here, at all").is_empty());
        assert_eq!(
            clauses("refused 32 GiB (error 12, ENOMEM)"),
            ["refused 32 GiB (error 12, ENOMEM)", "refused 32 GiB"]
        );
    }

    #[test]
    fn a_cut_never_leaves_a_quote_open() {
        // Old PyTorch's message, quoted in a verdict: its own ` : ` is no
        // end of the sentence.
        let detail = "`cuda runtime error (2) : out of memory` is how PyTorch 0.4 and older reported any failed CUDA allocation (error 2 is cudaErrorMemoryAllocation). It carries no sizes.";
        assert_eq!(
            first_sentence(detail),
            Some("`cuda runtime error (2) : out of memory` is how PyTorch 0.4 and older reported any failed CUDA allocation (error 2 is cudaErrorMemoryAllocation)")
        );
        // A stop after the quote closes still ends the sentence.
        assert_eq!(
            first_sentence("`error 2` means: no memory left"),
            Some("`error 2` means")
        );
        assert_eq!(
            clauses("`refused 32 GiB, sadly` then 2 more"),
            ["`refused 32 GiB, sadly` then 2 more"]
        );
    }

    #[test]
    fn joins_ranges() {
        assert_eq!(join_numbers(&[3, 0, 1, 2, 7]), "0–3, 7");
        assert_eq!(join_numbers(&[1, 2]), "1, 2");
    }
}
