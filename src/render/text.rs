//! The human-readable explanation: headline, numbers with their meaning, the
//! reserved-vs-allocated gap, verdicts, numbered fixes, where it happened.

use super::{sanitize, RenderOptions};
use crate::explain::{field_rows, headline, reserved_gap};
use crate::record::{Category, Finding, Summary};
use colored::Colorize;
use std::io::{self, Write};

const WIDTH: usize = 100;

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

/// Greedy word wrap of `text` to `width`, continuation lines prefixed by `indent`.
fn wrap(text: &str, first_indent: &str, indent: &str, width: usize) -> String {
    let mut out = String::new();
    for (n, paragraph) in text.split('\n').enumerate() {
        if n > 0 {
            out.push('\n');
        }
        let mut line = String::from(if n == 0 { first_indent } else { indent });
        let mut line_len = line.chars().count();
        let base = line_len;
        for word in paragraph.split(' ').filter(|w| !w.is_empty()) {
            let word_len = word.chars().count();
            if line_len > base && line_len + 1 + word_len > width {
                out.push_str(line.trim_end());
                out.push('\n');
                line = indent.to_string();
                line_len = line.chars().count();
            } else if line_len > base {
                line.push(' ');
                line_len += 1;
            }
            line.push_str(word);
            line_len += word_len;
        }
        out.push_str(line.trim_end());
    }
    out
}

/// One finding and the blank line after it.
pub(super) fn finding(f: &Finding, options: RenderOptions, out: &mut dyn Write) -> io::Result<()> {
    let p = Painter {
        color: options.color,
    };
    render_finding(f, &p, out)?;
    writeln!(out)
}

/// The closing summary line.
pub(super) fn summary(s: &Summary, options: RenderOptions, out: &mut dyn Write) -> io::Result<()> {
    let p = Painter {
        color: options.color,
    };
    writeln!(out, "{}", p.bold(&summary_line(s)))
}

/// "2 findings: 1 out-of-memory, 1 crash (in 3 inputs, 1 unreadable)".
pub fn summary_line(s: &Summary) -> String {
    let mut parts = Vec::new();
    if s.oom > 0 {
        parts.push(format!("{} out-of-memory", s.oom));
    }
    if s.likely_oom > 0 {
        parts.push(format!("{} likely out-of-memory", s.likely_oom));
    }
    if s.crash > 0 {
        parts.push(format!(
            "{} other crash{}",
            s.crash,
            if s.crash == 1 { "" } else { "es" }
        ));
    }
    if s.warning > 0 {
        parts.push(format!(
            "{} warning{}",
            s.warning,
            if s.warning == 1 { "" } else { "s" }
        ));
    }
    let counts = if parts.is_empty() {
        String::new()
    } else {
        format!(": {}", parts.join(", "))
    };
    let errors = if s.input_errors > 0 {
        format!(", {} unreadable", s.input_errors)
    } else {
        String::new()
    };
    format!(
        "{} finding{}{counts} ({} line{} in {} input{}{errors})",
        s.findings,
        if s.findings == 1 { "" } else { "s" },
        s.lines,
        if s.lines == 1 { "" } else { "s" },
        s.inputs,
        if s.inputs == 1 { "" } else { "s" },
    )
}

fn category_label(c: Category) -> &'static str {
    match c {
        Category::Oom => "OUT OF MEMORY",
        Category::LikelyOom => "PROBABLY OUT OF MEMORY",
        Category::Crash => "GPU CRASH",
        Category::MemoryState => "MEMORY STATE",
        Category::Warning => "WARNING",
    }
}

/// Every string printed here passes through [`sanitize`], whether a parser
/// took it from the log or the explainer built it (which may quote the log):
/// text from a log must never reach the terminal raw.
fn render_finding(f: &Finding, p: &Painter, out: &mut dyn Write) -> io::Result<()> {
    writeln!(
        out,
        "{} {}",
        p.category(
            f.category,
            &format!("[{}] {}", f.id, category_label(f.category))
        ),
        p.bold(&sanitize(&headline(f)))
    )?;
    writeln!(out, "    {}", p.dim(&sanitize(&origin_line(f))))?;
    if let Some(context) = context_line(f) {
        writeln!(out, "    {}", p.dim(&sanitize(&context)))?;
    }
    if let Some(id) = f.consequence_of {
        writeln!(
            out,
            "    {}",
            p.bold(&format!("This follows from finding [{id}]: a consequence of that crash, not a separate cause."))
        )?;
    }
    writeln!(out)?;
    let message = sanitize(&f.text);
    let shown: String = if message.chars().count() > 2000 {
        let cut: String = message.chars().take(2000).collect();
        format!("{cut} […]")
    } else {
        message.into_owned()
    };
    writeln!(out, "{}", wrap(&shown, "    │ ", "    │ ", WIDTH))?;

    let rows = field_rows(f);
    if !rows.is_empty() {
        writeln!(out)?;
        writeln!(out, "  {}", p.heading("What the numbers mean"))?;
        let label_width = rows
            .iter()
            .map(|r| r.label.chars().count())
            .max()
            .unwrap_or(0);
        let value_width = rows.iter().map(|r| r.value.len()).max().unwrap_or(0);
        let indent = " ".repeat(4 + label_width + 2 + value_width + 2);
        for r in &rows {
            let (label, value) = (sanitize(&r.label), sanitize(&r.value));
            let lead = format!("    {label:<label_width$}  {value:>value_width$}  ");
            let wrapped = wrap(&sanitize(&r.meaning), &lead, &indent, WIDTH);
            let wrapped = wrapped.replacen(&*value, &p.value(&value), 1);
            writeln!(out, "{wrapped}")?;
        }
    }
    if let Some(gap) = reserved_gap(f) {
        writeln!(out)?;
        writeln!(out, "  {}", p.heading("Reserved vs allocated"))?;
        writeln!(out, "{}", wrap(&sanitize(&gap), "    ", "    ", WIDTH))?;
    }
    if !f.facts.is_empty() && rows.is_empty() {
        writeln!(out)?;
        writeln!(out, "  {}", p.heading("Details"))?;
        for (key, value) in &f.facts {
            writeln!(
                out,
                "    {}: {}",
                sanitize(&key.replace('_', " ")),
                sanitize(value)
            )?;
        }
    }
    for note in &f.notes {
        writeln!(
            out,
            "{}",
            wrap(
                &format!("Note: {}", sanitize(note)),
                "    ",
                "      ",
                WIDTH
            )
        )?;
    }

    if let Some(diag) = &f.diagnostics {
        writeln!(out)?;
        writeln!(out, "  {}", p.heading("Diagnostics pasted alongside"))?;
        for line in diagnostics_lines(diag) {
            writeln!(out, "{}", wrap(&sanitize(&line), "    ", "      ", WIDTH))?;
        }
    }
    if let Some(report) = &f.snapshot {
        for (heading, lines) in crate::snapshot::text_sections(report) {
            writeln!(out)?;
            writeln!(out, "  {}", p.heading(&heading))?;
            for line in lines {
                writeln!(out, "{}", wrap(&sanitize(&line), "    ", "      ", WIDTH))?;
            }
        }
    }
    let d = &f.diagnosis;
    if !d.verdicts.is_empty() {
        writeln!(out)?;
        writeln!(out, "  {}", p.heading("Why"))?;
        for v in &d.verdicts {
            writeln!(
                out,
                "    {} {}",
                p.category(f.category, "●"),
                p.bold(&sanitize(&v.title))
            )?;
            writeln!(
                out,
                "{}",
                wrap(&sanitize(&v.detail), "      ", "      ", WIDTH)
            )?;
        }
    }
    if !d.fixes.is_empty() {
        writeln!(out)?;
        writeln!(out, "  {}", p.heading("What to do (most effective first)"))?;
        for (n, fix) in d.fixes.iter().enumerate() {
            writeln!(out, "    {}. {}", n + 1, p.bold(&sanitize(&fix.title)))?;
            writeln!(
                out,
                "{}",
                wrap(&sanitize(&fix.how), "       ", "       ", WIDTH)
            )?;
        }
    }
    if let Some(tb) = &f.traceback {
        if !tb.frames.is_empty() || !tb.chained.is_empty() {
            writeln!(out)?;
            writeln!(out, "  {}", p.heading("Where (traceback, innermost last)"))?;
            for chained in &tb.chained {
                let relation = if chained.relation == "direct_cause" {
                    "caused by an earlier exception"
                } else {
                    "raised while handling an earlier exception"
                };
                writeln!(
                    out,
                    "{}",
                    wrap(
                        &format!("({relation}: {})", sanitize(&chained.exception)),
                        "    ",
                        "      ",
                        WIDTH
                    )
                )?;
            }
            let skip = tb.frames.len().saturating_sub(6);
            let hidden = skip as u64 + tb.omitted_frames;
            if hidden > 0 {
                writeln!(
                    out,
                    "    {}",
                    p.dim(&format!(
                        "… {hidden} earlier frame{}",
                        if hidden == 1 { "" } else { "s" }
                    ))
                )?;
            }
            for frame in &tb.frames[skip..] {
                let code = frame
                    .code
                    .as_deref()
                    .map(|c| format!(": {c}"))
                    .unwrap_or_default();
                let line = format!("{}:{} in {}{code}", frame.file, frame.line, frame.function);
                writeln!(out, "{}", wrap(&sanitize(&line), "    ", "        ", WIDTH))?;
            }
        }
    }
    if !f.explain.is_empty() {
        writeln!(out)?;
        let codes: Vec<String> = f
            .explain
            .iter()
            .map(|c| format!("oomwhy explain {c}"))
            .collect();
        writeln!(
            out,
            "  {} {}",
            p.heading("More:"),
            sanitize(&codes.join(" · "))
        )?;
    }
    Ok(())
}

/// The "Diagnostics pasted alongside" lines: GPUs and processes from
/// nvidia-smi, the memory summary's key numbers.
fn diagnostics_lines(diag: &crate::record::Diagnostics) -> Vec<String> {
    use crate::units::format_size as fmt;
    let size = |b: Option<u64>| b.map_or("?".to_string(), fmt);
    let mut lines = Vec::new();
    if let Some(smi) = &diag.nvidia_smi {
        lines.push(format!(
            "nvidia-smi (line {}, driver {}{}):",
            smi.line,
            smi.driver_version.as_deref().unwrap_or("?"),
            smi.cuda_version
                .as_deref()
                .map(|c| format!(", CUDA {c}"))
                .unwrap_or_default()
        ));
        for g in &smi.gpus {
            lines.push(format!(
                "· GPU {} {}: {} / {} used",
                g.index,
                g.name,
                size(g.used_bytes),
                size(g.total_bytes)
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
            lines.push(format!("· … {} more processes", smi.processes.len() - 16));
        }
    }
    if let Some(m) = &diag.memory_summary {
        let count = |c: Option<u64>| c.map_or("?".to_string(), |c| c.to_string());
        lines.push(format!(
            "memory_summary (line {}, device {}): {} OOMs, {} cudaMalloc retries",
            m.line,
            count(m.device.map(u64::from)),
            count(m.ooms),
            count(m.alloc_retries)
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
                lines.push(format!(
                    "· {name}: {} now, {} peak",
                    size(current),
                    size(peak)
                ));
            }
        }
    }
    lines
}

/// "train.log line 57 · RuntimeError · message form "reserved" (PyTorch ≈1.4–1.12)".
pub(super) fn origin_line(f: &Finding) -> String {
    let mut parts = vec![format!("{} line {}", f.source.input, f.source.line)];
    if let Some(e) = &f.exception {
        parts.push(e.clone());
    }
    if let Some(era) = &f.era {
        let version = f
            .version_hint
            .as_deref()
            .map(|v| format!(" ({v})"))
            .unwrap_or_default();
        parts.push(format!("message form \"{era}\"{version}"));
    }
    if f.truncated {
        parts.push("message cut short".into());
    }
    parts.join(" · ")
}

/// Ranks, copies, phase and progress, when known.
pub(super) fn context_line(f: &Finding) -> Option<String> {
    let mut parts = Vec::new();
    if f.ranks.len() > 1 {
        parts.push(format!(
            "ranks {} (first to fail: rank {})",
            join_numbers(&f.ranks),
            f.first_rank.map_or("?".into(), |r| r.to_string())
        ));
    } else if let Some(r) = f.first_rank {
        parts.push(format!("rank {r}"));
    }
    if f.devices.len() > 1 {
        parts.push(format!("GPUs {}", join_numbers(&f.devices)));
    }
    if f.occurrences > 1 {
        parts.push(format!("seen {} times", f.occurrences));
    }
    if f.phase.name != "unknown" {
        parts.push(format!(
            "phase: {} ({} confidence)",
            f.phase.name.replace('_', " "),
            f.phase.confidence
        ));
    }
    if let Some(step) = f.last_step {
        parts.push(format!("last progress counter: {step}"));
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

    #[test]
    fn wraps_words() {
        assert_eq!(wrap("aaa bbb ccc", "> ", "  ", 9), "> aaa bbb\n  ccc");
        assert_eq!(wrap("one\ntwo", "- ", "  ", 80), "- one\n  two");
    }

    #[test]
    fn joins_ranges() {
        assert_eq!(join_numbers(&[3, 0, 1, 2, 7]), "0–3, 7");
        assert_eq!(join_numbers(&[1, 2]), "1, 2");
    }
}
