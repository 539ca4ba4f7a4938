//! A report made as `oomwhy FILE...` makes one (the library's
//! `ScanReport::from_members`, which the command's scan shares), each input
//! scanned on this thread, and rendered for the page.

use oomwhy::explain::docs;
use oomwhy::i18n::{zh, Lang, Msg};
use oomwhy::input::{self, Archive, Content, Scanned};
use oomwhy::record::Finding;
use oomwhy::render::{self, sanitize, Format, RenderOptions};
use oomwhy::{Error, Notice, ScanOutcome, ScanReport};
use serde_json::{json, Value};
use std::io::{self, Cursor, Read, Seek};
use std::sync::Arc;

/// The inputs of one report, each scanned as it is added.
#[derive(Debug, Default)]
pub struct Batch {
    /// Every input and archive member in order, with what scanning it gave.
    members: Vec<(String, Scanned)>,
}

/// A finished report: explained findings, the counts, and the notices.
pub type Report = ScanReport;

impl Batch {
    /// Adds an input held in memory.
    pub fn add_bytes(&mut self, name: &str, data: Vec<u8>) {
        let data: Arc<[u8]> = data.into();
        self.add_source(name, || Cursor::new(Arc::clone(&data)));
    }

    /// Adds an input that `open` opens (again, for a zip archive, whose
    /// directory is at its end) at its first byte.
    pub fn add_source<S, F>(&mut self, name: &str, open: F)
    where
        S: Read + Seek + Send + 'static,
        F: Fn() -> S,
    {
        let scanned = scan_one(name, open);
        self.members.extend(scanned.into_members(name));
    }

    /// Folds the per-rank files and explains everything, as the command does
    /// (the library's [`ScanReport::from_members`]).
    pub fn finish(self) -> Report {
        ScanReport::from_members(self.members)
    }
}

/// Scans one input as the command scans a file it finds in a directory:
/// decompressed if its first bytes say so, a binary file skipped (a dropped
/// file is as likely to be a checkpoint as a log), an archive's files read
/// one by one, a snapshot analysed, anything else scanned as a log. Always
/// on this thread: the browser build has no threads.
fn scan_one<S, F>(name: &str, open: F) -> Scanned
where
    S: Read + Seek + Send + 'static,
    F: Fn() -> S,
{
    let failed = |source: io::Error| {
        Scanned::Failed(
            ScanOutcome::default(),
            Error::Read {
                input: name.to_string(),
                source,
            },
        )
    };
    let opened = match input::open_reader(Box::new(open()), true) {
        Ok(opened) => opened,
        Err(source) => return failed(source),
    };
    if opened.content == Content::Binary {
        return Scanned::Binary;
    }
    match opened.archive {
        Some(Archive::Tar) => Scanned::Archive(input::scan_archive(opened.reader, name)),
        Some(Archive::Zip) => {
            drop(opened.reader);
            input::scan_zip_from(open(), name)
        }
        None => Scanned::from(input::scan_opened_serial(opened.reader, name)),
    }
}

/// Renders `report` for the page, as one JSON object:
///
/// * `document_json`: the `oomwhy --format json` document (in `lang`), byte
///   for byte, as a string;
/// * `text`: the text view (`oomwhy`, without colour), wrapped to `width`;
/// * `findings`: per finding, the answer the text view opens with (`label`,
///   `headline`, `why`, `first_fix`, as the text view says them at its
///   default width), split out for the page to lay out,
///   its `category`, verdict `codes` and `explain` codes, its `fixes`, and
///   its own block of the text view (`text`);
/// * `notices`: what the command writes to standard error (unreadable and
///   binary inputs, or that nothing was found), each `{"kind", "text"}`;
/// * `summary_line` and `status` (the command's exit status).
pub fn render_report(report: &Report, lang: Lang, width: usize) -> Value {
    let width = width.clamp(render::MIN_WIDTH, 1000);
    let options = RenderOptions {
        color: false,
        width,
        brief: false,
        lang,
    };
    let (findings, summary) = (&report.findings, &report.summary);
    let document = rendered(|out| render::render(Format::Json, findings, summary, options, out))
        .unwrap_or_default();
    let text = if findings.is_empty() {
        String::new()
    } else {
        rendered(|out| render::render(Format::Text, findings, summary, options, out))
            .unwrap_or_default()
    };
    let cards: Vec<Value> = findings.iter().map(|f| card(f, options)).collect();
    let mut notices: Vec<Value> = report
        .notices
        .iter()
        .map(|notice| match notice {
            Notice::Error(err) => json!({
                "kind": "error",
                "text": format!("oomwhy: {}", err.localized(lang)),
            }),
            Notice::Binary(name) => json!({
                "kind": "binary",
                "text": format!("oomwhy: {}", Msg::BinarySkipped.fill(lang, &[&sanitize(name)])),
            }),
            // Only a directory walk meets a symlink loop; the page has none.
            Notice::Loop { path, ancestor } => json!({
                "kind": "loop",
                "text": format!(
                    "oomwhy: {}",
                    Msg::SymlinkLoop.fill(lang, &[&sanitize(path), &sanitize(ancestor)])
                ),
            }),
        })
        .collect();
    if summary.findings == summary.warning && summary.input_errors == 0 {
        let lines = usize::try_from(summary.lines).unwrap_or(usize::MAX);
        let lines = oomwhy::i18n::count(lang, lines, Msg::LinesOne, Msg::LinesMany);
        notices.push(json!({
            "kind": "nothing_found",
            "text": Msg::NothingFound.fill(lang, &[&lines]),
        }));
    }
    let status = if summary.input_errors > 0 {
        2
    } else if summary.findings == summary.warning {
        1
    } else {
        0
    };
    json!({
        "lang": match lang { Lang::En => "en", Lang::Zh => "zh" },
        "document_json": document,
        "text": text,
        "findings": cards,
        "notices": notices,
        "summary_line": render::summary_line_in(summary, lang),
        "status": status,
    })
}

/// What a renderer writes, as text.
fn rendered(write: impl FnOnce(&mut dyn io::Write) -> io::Result<()>) -> io::Result<String> {
    let mut out = Vec::new();
    write(&mut out)?;
    Ok(String::from_utf8_lossy(&out).into_owned())
}

/// One finding for the page: the text view's answer split into its parts,
/// and the text view's block for the details.
fn card(f: &Finding, options: RenderOptions) -> Value {
    let lang = options.lang;
    // The answer is read from the text view at its default width, whatever
    // width the details get: a narrow text view keeps only the title of the
    // reason (it allows two lines), while the page wraps the answer freely.
    let brief = rendered(|out| {
        render::render_finding(
            Format::Text,
            f,
            RenderOptions {
                brief: true,
                width: render::DEFAULT_WIDTH,
                ..options
            },
            out,
        )
    })
    .unwrap_or_default();
    let answer = Answer::parse(&brief, f.id, lang);
    let text =
        rendered(|out| render::render_finding(Format::Text, f, options, out)).unwrap_or_default();
    let localized = render::localize(f, lang);
    let fixes: Vec<Value> = localized
        .diagnosis
        .fixes
        .iter()
        .map(|fix| json!({ "title": fix.title, "how": fix.how }))
        .collect();
    let codes: Vec<&str> = f
        .diagnosis
        .verdicts
        .iter()
        .map(|v| v.code.as_str())
        .collect();
    json!({
        "id": f.id,
        "kind": f.kind,
        "category": f.category,
        "label": answer.label,
        "headline": answer.headline,
        "why": answer.why,
        "first_fix": answer.first_fix,
        "codes": codes,
        "explain": f.explain,
        "fixes": fixes,
        "input": f.source.input,
        "line": f.source.line,
        "text": text.trim_end(),
    })
}

/// The opening of a finding in the text view (`--brief`): its tag, headline,
/// "Why:" and "First fix:" lines, unwrapped.
#[derive(Debug, Default, PartialEq, Eq)]
struct Answer {
    label: String,
    headline: String,
    why: Option<String>,
    first_fix: Option<String>,
}

/// The finding tags of the text view, longest first so that a tag that
/// begins another is tried after it.
const LABELS: &[Msg] = &[
    Msg::HostLikelyOom,
    Msg::LikelyOom,
    Msg::MemoryState,
    Msg::ProcessCrash,
    Msg::HostOom,
    Msg::Oom,
    Msg::Crash,
    Msg::Warning,
];

impl Answer {
    /// Reads the brief text view of finding `id`: its first line holds
    /// `[id] TAG headline`, then a line that starts with the "Why:" label and
    /// one with the "First fix:" label, each wrapped with a deeper indent.
    fn parse(brief: &str, id: usize, lang: Lang) -> Answer {
        let why_label = Msg::SummaryWhy.text(lang);
        let fix_label = Msg::SummaryFix.text(lang);
        // Logical lines: the wrapped lines of each part joined again.
        let mut parts: Vec<String> = Vec::new();
        for line in brief.lines() {
            if line.trim().is_empty() {
                continue;
            }
            let trimmed = line.trim_start();
            let starts_part = parts.is_empty()
                || (line.starts_with("    ")
                    && !line.starts_with("     ")
                    && (trimmed.starts_with(why_label) || trimmed.starts_with(fix_label)));
            match parts.last_mut() {
                Some(last) if !starts_part => unwrap_onto(last, trimmed),
                _ => parts.push(trimmed.to_string()),
            }
        }
        let mut answer = Answer::default();
        let mut parts = parts.into_iter();
        if let Some(first) = parts.next() {
            let tag = format!("[{id}] ");
            let rest = first.strip_prefix(&tag).unwrap_or(&first);
            let label = LABELS
                .iter()
                .map(|m| m.text(lang))
                .filter(|label| rest.starts_with(label))
                .max_by_key(|label| label.len())
                .unwrap_or("");
            answer.label = label.to_string();
            answer.headline = rest[label.len()..].trim().to_string();
        }
        let after = |part: &str, label: &str| -> Option<String> {
            part.strip_prefix(label).map(|rest| rest.trim().to_string())
        };
        for part in parts {
            if let Some(why) = after(&part, why_label) {
                answer.why = Some(why);
            } else if let Some(fix) = after(&part, fix_label) {
                answer.first_fix = Some(fix);
            }
        }
        answer
    }
}

/// Joins a wrapped line back onto the text before it: with a space where
/// the wrapper broke at one, with nothing between CJK characters (which it
/// breaks between without a space).
fn unwrap_onto(text: &mut String, next: &str) {
    let wide =
        |c: char| ('\u{2e80}'..='\u{9fff}').contains(&c) || ('\u{ff00}'..='\u{ffef}').contains(&c);
    let before_wide = text.chars().next_back().is_some_and(wide);
    let after_wide = next.chars().next().is_some_and(wide);
    if !(before_wide || after_wide) {
        text.push(' ');
    }
    text.push_str(next);
}

/// The explanation page of `code` (as `oomwhy explain CODE` prints it when
/// piped: Markdown), with its title, in `lang`: the Chinese page where there
/// is one, else the English page.
pub fn explain_page(code: &str, lang: Lang) -> Value {
    match docs::lookup(code) {
        Ok((code, english)) => {
            let chinese = (lang == Lang::Zh)
                .then(|| docs::chinese_page(code))
                .flatten();
            let text = chinese.unwrap_or(english);
            let title = match lang {
                Lang::Zh => oomwhy::explain::docs::chinese_title(code)
                    .or_else(|| zh::verdict_title(code))
                    .unwrap_or(docs::title(english)),
                Lang::En => docs::title(english),
            };
            json!({
                "code": code,
                "title": title,
                "text": text,
                "in_english": lang == Lang::Zh && chinese.is_none(),
            })
        }
        Err(err) => json!({ "error": format!("oomwhy: {}", err.localized(lang)) }),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const SEED: &str = "RuntimeError: CUDA out of memory. Tried to allocate 2.00 GiB \
        (GPU 0; 8.00 GiB total capacity; 6.32 GiB already allocated; \
        1.56 GiB free; 7.88 GiB reserved in total by PyTorch)\n";

    fn report(inputs: &[(&str, &[u8])]) -> Report {
        let mut batch = Batch::default();
        for (name, data) in inputs {
            batch.add_bytes(name, data.to_vec());
        }
        batch.finish()
    }

    #[test]
    fn the_answer_is_the_text_views_opening() {
        let view = render_report(&report(&[("train.log", SEED.as_bytes())]), Lang::En, 100);
        let card = &view["findings"][0];
        assert_eq!(card["label"], "OUT OF MEMORY");
        assert_eq!(
            card["headline"],
            "PyTorch could not allocate 2.00 GiB on GPU 0"
        );
        assert_eq!(card["codes"][0], "inconsistent_numbers");
        let why = card["why"].as_str().unwrap_or_default();
        assert!(
            why.starts_with("The numbers in this message cannot all be true"),
            "{why}"
        );
        assert!(!why.contains("  "), "unwrapped: {why}");
        // The unwrapped answer is the text view's, words for words.
        let text = view["text"].as_str().unwrap_or_default();
        let words = |s: &str| s.split_whitespace().collect::<Vec<_>>().join(" ");
        assert!(words(text).contains(&words(why)));
        let fix = card["first_fix"].as_str().unwrap_or_default();
        assert_eq!(fix, card["fixes"][0]["title"].as_str().unwrap_or("?"));
        assert_eq!(view["status"], 0);
        let document: Value =
            serde_json::from_str(view["document_json"].as_str().unwrap_or_default())
                .unwrap_or_default();
        assert_eq!(document["findings"][0]["source"]["input"], "train.log");
    }

    #[test]
    fn chinese_answer_has_its_own_labels() {
        let view = render_report(&report(&[("train.log", SEED.as_bytes())]), Lang::Zh, 40);
        let card = &view["findings"][0];
        assert_eq!(card["label"], "显存不足");
        assert!(card["why"].as_str().is_some_and(|w| !w.is_empty()));
        assert!(card["first_fix"].as_str().is_some_and(|w| !w.is_empty()));
        // Codes never change with the language.
        assert_eq!(card["codes"][0], "inconsistent_numbers");
    }

    #[test]
    fn a_binary_file_is_a_notice_not_a_finding() {
        let mut elf = b"\x7fELF\x02\x01\x01\x00\x00".to_vec();
        elf.extend(std::iter::repeat_n(0u8, 10_000));
        let view = render_report(&report(&[("model.bin", &elf)]), Lang::En, 100);
        assert_eq!(view["findings"].as_array().map(Vec::len), Some(0));
        let notices = view["notices"].as_array().cloned().unwrap_or_default();
        assert!(notices.iter().any(
            |n| n["kind"] == "binary" && n["text"] == "oomwhy: model.bin: binary file, skipped"
        ));
        assert_eq!(view["status"], 1);
    }

    #[test]
    fn a_gzip_log_is_read_and_a_zstd_one_is_a_clear_error() {
        let mut gz = flate2_gzip(SEED.as_bytes());
        let view = render_report(&report(&[("train.log.gz", &gz)]), Lang::En, 100);
        assert_eq!(view["findings"][0]["codes"][0], "inconsistent_numbers");
        // A truncated gzip: the error names the format, nothing panics.
        gz.truncate(gz.len() / 2);
        let view = render_report(&report(&[("cut.log.gz", &gz)]), Lang::En, 100);
        assert_eq!(view["status"], 2);
        // zstd: in the browser build, an error that says it is not supported
        // there; where the workspace builds the core with its C decoders
        // (`cargo test --workspace`), the decoder's own error on this cut
        // frame. Either way a notice that names the format, never a panic.
        let zstd_frame_start = [0x28u8, 0xb5, 0x2f, 0xfd, 0x24, 0x00];
        let view = render_report(
            &report(&[("train.log.zst", &zstd_frame_start)]),
            Lang::En,
            100,
        );
        assert_eq!(view["status"], 2);
        let text = view["notices"][0]["text"].as_str().unwrap_or_default();
        assert!(
            text.starts_with("oomwhy: train.log.zst: ") && text.contains("zstd"),
            "{text}"
        );
    }

    /// gzip of `data`, written by hand (stored blocks) so the test needs no
    /// compressor: RFC 1952 header, deflate stored block, CRC-32 and size.
    fn flate2_gzip(data: &[u8]) -> Vec<u8> {
        let mut out = vec![0x1f, 0x8b, 8, 0, 0, 0, 0, 0, 0, 255];
        out.push(1); // final stored block
        let len = data.len() as u16;
        out.extend(len.to_le_bytes());
        out.extend((!len).to_le_bytes());
        out.extend(data);
        out.extend(crc32(data).to_le_bytes());
        out.extend((data.len() as u32).to_le_bytes());
        out
    }

    fn crc32(data: &[u8]) -> u32 {
        let mut crc = !0u32;
        for &b in data {
            crc ^= u32::from(b);
            for _ in 0..8 {
                crc = if crc & 1 == 1 {
                    (crc >> 1) ^ 0xedb8_8320
                } else {
                    crc >> 1
                };
            }
        }
        !crc
    }

    #[test]
    fn explain_pages_in_both_languages() {
        let page = explain_page("inconsistent-numbers", Lang::En);
        assert_eq!(page["code"], "inconsistent_numbers");
        assert!(page["text"].as_str().is_some_and(|t| t.contains('#')));
        let page = explain_page("torch_allocator_oom", Lang::Zh);
        assert_eq!(page["code"], "torch_allocator_oom");
        assert!(explain_page("no_such_code_at_all", Lang::En)["error"].is_string());
    }
}
