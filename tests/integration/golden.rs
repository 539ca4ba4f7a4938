//! Golden tests: every `fixtures/*.log` is scanned and explained, and the
//! JSON output must equal the `fixtures/*.json` beside it, the uncoloured text
//! the `fixtures/*.txt` beside it, and the Chinese text (`--lang zh`) the
//! `fixtures/*.zh.txt`. build.rs writes one test per
//! fixture, named after it, so one fixture or one family runs by name:
//! `cargo test --test integration golden::torch_`. `UPDATE_GOLDEN=1` before
//! the command re-blesses the goldens of the tests it runs (then review the
//! diff: a fixture must never be blessed to match a bug).
//!
//! README.md's example and the Chinese example page must equal their
//! fixture's goldens, README.md stays short with its Quick start intact,
//! docs/kinds.md lists every kind, and every relative link in README.md,
//! CONTRIBUTING.md and docs/ resolves.

use oomwhy::explain::docs;
use oomwhy::i18n::Lang;
use oomwhy::record::Kind;
use oomwhy::render::{render, Format, RenderOptions};
use oomwhy::Analysis;
use std::collections::BTreeSet;
use std::fs;
use std::path::{Path, PathBuf};

fn root() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

fn fixtures_dir() -> PathBuf {
    root().join("fixtures")
}

fn fixtures() -> Vec<PathBuf> {
    let mut logs: Vec<PathBuf> = fs::read_dir(fixtures_dir())
        .expect("fixtures/ exists")
        .map(|e| e.expect("readable entry").path())
        .filter(|p| p.extension().is_some_and(|e| e == "log"))
        .collect();
    logs.sort();
    logs
}

/// A fixture's name: its file name without `.log` and any golden extension.
fn fixture_name(path: &Path) -> String {
    let file = path.file_name().unwrap().to_string_lossy();
    file.split('.').next().unwrap_or_default().to_string()
}

/// Scans one fixture the way the CLI does and renders it in `format`.
fn run(log: &Path, format: Format) -> String {
    run_in(log, format, Lang::En)
}

/// [`run`] in `lang`.
fn run_in(log: &Path, format: Format, lang: Lang) -> String {
    let name = log.file_name().unwrap().to_string_lossy().to_string();
    let file = fs::File::open(log).unwrap();
    let mut analysis = Analysis::new();
    analysis.add(oomwhy::scan(file, &name).unwrap());
    let (findings, summary) = analysis.finish();
    let mut out = Vec::new();
    let options = RenderOptions {
        lang,
        ..RenderOptions::default()
    };
    render(format, &findings, &summary, options, &mut out).unwrap();
    String::from_utf8(out).unwrap()
}

/// Checks every golden of the fixture `name`: its JSON, its English text
/// and its Chinese text. All mismatches are
/// reported at once. Under `UPDATE_GOLDEN` it writes them instead.
fn check_fixture(name: &str) {
    let log = fixtures_dir().join(format!("{name}.log"));
    assert!(log.exists(), "{} is missing", log.display());
    let goldens = vec![
        (Format::Json, Lang::En, "json"),
        (Format::Text, Lang::En, "txt"),
        (Format::Text, Lang::Zh, "zh.txt"),
    ];
    let failures: Vec<String> = goldens
        .into_iter()
        .filter_map(|(format, lang, ext)| check_golden(&log, format, lang, ext))
        .collect();
    assert!(
        failures.is_empty(),
        "{name}: the output differs from its goldens (after reviewing, re-bless with \
         `UPDATE_GOLDEN=1 cargo test --test integration golden::{name}`):\n\n{}",
        failures.join("\n\n")
    );
}

/// Compares the output of `log` in `format` and `lang` with its golden of
/// extension `ext` (or writes the golden under `UPDATE_GOLDEN`); a
/// mismatch comes back as its first differing line.
fn check_golden(log: &Path, format: Format, lang: Lang, ext: &str) -> Option<String> {
    let actual = run_in(log, format, lang);
    let expected_path = log.with_extension(ext);
    if std::env::var_os("UPDATE_GOLDEN").is_some() {
        // An unchanged golden is left alone: a write would touch fixtures/,
        // which reruns build.rs and rebuilds this package.
        if fs::read_to_string(&expected_path).ok().as_deref() != Some(actual.as_str()) {
            fs::write(&expected_path, &actual).unwrap();
        }
        return None;
    }
    let Ok(expected) = fs::read_to_string(&expected_path) else {
        return Some(format!("no golden file {}", expected_path.display()));
    };
    if expected == actual {
        return None;
    }
    let line = expected
        .lines()
        .zip(actual.lines())
        .position(|(e, a)| e != a)
        .unwrap_or(expected.lines().count().min(actual.lines().count()));
    Some(format!(
        "{} differs from line {}:\n  expected: {}\n  actual:   {}",
        expected_path
            .strip_prefix(root())
            .unwrap_or(&expected_path)
            .display(),
        line + 1,
        expected.lines().nth(line).unwrap_or("<end>"),
        actual.lines().nth(line).unwrap_or("<end>")
    ))
}

// One `#[test]` per `fixtures/*.log`, named after it, calling
// [`check_fixture`], and `GOLDEN_FIXTURES`, their names: written by the
// root package's build.rs, so a new fixture needs no line here.
include!(concat!(env!("OUT_DIR"), "/golden_tests.rs"));

/// The tests build.rs wrote are exactly the fixtures on disk (a stale
/// build would miss a new fixture); every golden file belongs to a fixture.
#[test]
fn every_fixture_has_a_golden_test() {
    let on_disk: BTreeSet<String> = fixtures().iter().map(|p| fixture_name(p)).collect();
    let listed: BTreeSet<String> = GOLDEN_FIXTURES.iter().map(|s| s.to_string()).collect();
    let unlisted: Vec<&String> = on_disk.difference(&listed).collect();
    assert!(
        unlisted.is_empty(),
        "fixtures without a golden test (build.rs writes one per fixtures/*.log; \
         did it rerun?): {unlisted:?}"
    );
    let gone: Vec<&String> = listed.difference(&on_disk).collect();
    assert!(
        gone.is_empty(),
        "golden tests for fixtures that are not in fixtures/: {gone:?}"
    );
    for entry in fs::read_dir(fixtures_dir()).unwrap() {
        let path = entry.unwrap().path();
        let file = path.file_name().unwrap().to_string_lossy().to_string();
        if !(file.ends_with(".json") || file.ends_with(".txt")) {
            continue;
        }
        let name = fixture_name(&path);
        assert!(
            on_disk.contains(&name),
            "{file}: a golden without its fixture {name}.log"
        );
    }
}

/// The fixture README.md shows as its example; docs/zh-example.md shows
/// its Chinese text.
const README_EXAMPLE: &str = "torch_capacity_2_2_kaggle_container";

/// README.md's example and the Chinese example page are the goldens of
/// [`README_EXAMPLE`], with the command that prints them, so neither can
/// drift from what oomwhy prints.
#[test]
fn readme_examples_are_the_goldens() {
    for (page, ext, command) in [
        ("README.md", "txt", format!("oomwhy {README_EXAMPLE}.log")),
        (
            "docs/zh-example.md",
            "zh.txt",
            format!("oomwhy --lang zh {README_EXAMPLE}.log"),
        ),
    ] {
        let text = fs::read_to_string(root().join(page)).unwrap();
        let golden =
            fs::read_to_string(fixtures_dir().join(format!("{README_EXAMPLE}.{ext}"))).unwrap();
        let block = format!("```text\n{golden}```");
        assert!(
            text.contains(&block),
            "{page} does not show fixtures/{README_EXAMPLE}.{ext} exactly: \
             paste the golden into its ```text block"
        );
        assert!(
            text.contains(&command),
            "{page} does not show the command `{command}`"
        );
    }
}

/// The table of kinds in docs/kinds.md: its header, then one row per kind.
const KINDS_TABLE_HEADER: &str = "| code | what it means |\n| --- | --- |\n";

/// docs/kinds.md's table has one row per kind, each kind once.
/// `UPDATE_GOLDEN=1` rewrites it instead of failing: rows are kept as
/// written and where they are, a removed kind's row goes, and a new kind
/// gets a row after the kind before it in [`Kind::ALL`], saying its page's
/// title (refine it by hand if it needs more). So a new kind needs no hand
/// edit of the page.
#[test]
fn kinds_page_lists_every_kind() {
    let path = root().join("docs/kinds.md");
    let page = fs::read_to_string(&path).unwrap();
    let start = page
        .find(KINDS_TABLE_HEADER)
        .expect("docs/kinds.md has its table of kinds")
        + KINDS_TABLE_HEADER.len();
    let end = page[start..]
        .find("\n\n")
        .map_or(page.len(), |n| start + n + 1);
    let mut rows: Vec<(String, String)> = page[start..end]
        .lines()
        .map(|row| {
            row.strip_prefix("| `")
                .and_then(|rest| rest.split_once("` | "))
                .and_then(|(kind, text)| {
                    Some((kind.to_string(), text.strip_suffix(" |")?.to_string()))
                })
                .unwrap_or_else(|| panic!("docs/kinds.md: not a row of the table: {row}"))
        })
        .collect();
    let kinds: Vec<&str> = Kind::ALL.iter().map(|kind| kind.slug()).collect();
    let listed: Vec<&str> = rows.iter().map(|(kind, _)| kind.as_str()).collect();
    let missing: Vec<&str> = kinds
        .iter()
        .copied()
        .filter(|k| !listed.contains(k))
        .collect();
    let extra: Vec<&str> = listed
        .iter()
        .enumerate()
        .filter(|(i, k)| !kinds.contains(k) || listed[..*i].contains(k))
        .map(|(_, k)| *k)
        .collect();
    if missing.is_empty() && extra.is_empty() {
        return;
    }
    assert!(
        std::env::var_os("UPDATE_GOLDEN").is_some(),
        "docs/kinds.md's table lacks {missing:?} and has rows for no kind or twice {extra:?}: \
         `UPDATE_GOLDEN=1 cargo test --test integration golden::kinds_page` rewrites it"
    );
    let mut seen = BTreeSet::new();
    rows.retain(|(kind, _)| kinds.contains(&kind.as_str()) && seen.insert(kind.clone()));
    for kind in missing {
        let before = &kinds[..kinds.iter().position(|k| *k == kind).unwrap_or(0)];
        // After the row of the nearest kind before it that has one.
        let at = before
            .iter()
            .rev()
            .find_map(|k| rows.iter().position(|(listed, _)| listed == k))
            .map_or(0, |i| i + 1);
        let title = docs::lookup(kind).map_or("", |(_, text)| docs::title(text));
        rows.insert(at, (kind.to_string(), title.to_string()));
    }
    let table: String = rows
        .iter()
        .map(|(kind, text)| format!("| `{kind}` | {text} |\n"))
        .collect();
    fs::write(&path, format!("{}{table}{}", &page[..start], &page[end..])).unwrap();
}

/// The Quick start commands that CI and a fresh clone rely on.
const QUICK_START: [&str; 2] = [
    "cargo run --release -- fixtures/torch_reserved_era_seed.log   # explain a shipped example",
    "cargo test                                                     # run the test suite",
];

/// README.md is a README: at most 400 lines, and its Quick start holds the
/// two commands verbatim, each on a line of its own.
#[test]
fn readme_is_short_and_keeps_its_quick_start() {
    let readme = fs::read_to_string(root().join("README.md")).unwrap();
    let lines = readme.lines().count();
    assert!(
        lines <= 400,
        "README.md has {lines} lines; at most 400: move detail to docs/"
    );
    let quick_start = readme
        .split("\n## Quick start\n")
        .nth(1)
        .and_then(|rest| rest.split("\n## ").next())
        .expect("README.md has a `## Quick start` section");
    for command in QUICK_START {
        assert!(
            quick_start.lines().any(|line| line == command),
            "README.md's Quick start lacks, verbatim:\n{command}"
        );
    }
}

/// The Markdown files a reader browses in the repository.
fn markdown_pages() -> Vec<PathBuf> {
    let mut pages = vec![root().join("README.md"), root().join("CONTRIBUTING.md")];
    let mut docs: Vec<PathBuf> = fs::read_dir(root().join("docs"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "md"))
        .collect();
    docs.sort();
    pages.extend(docs);
    pages
}

/// The targets of the inline Markdown links `[text](target)` in `page`,
/// outside fenced code blocks and code spans.
fn link_targets(page: &str) -> Vec<String> {
    let mut targets = Vec::new();
    let mut in_fence = false;
    for line in page.lines() {
        if line.trim_start().starts_with("```") {
            in_fence = !in_fence;
            continue;
        }
        if in_fence {
            continue;
        }
        // Code spans hold examples, not links.
        let prose: String = line
            .split('`')
            .enumerate()
            .filter(|(i, _)| i % 2 == 0)
            .map(|(_, s)| s)
            .collect::<Vec<_>>()
            .join(" ");
        let mut rest = prose.as_str();
        while let Some(at) = rest.find("](") {
            let after = &rest[at + 2..];
            let Some(end) = after.find(')') else { break };
            // `[text](target "title")`: the target ends at the first space.
            let target = after[..end].split_whitespace().next().unwrap_or_default();
            targets.push(target.to_string());
            rest = &after[end..];
        }
    }
    targets
}

/// The anchor GitHub gives a heading: lower case, spaces to `-`, other
/// punctuation dropped.
fn heading_anchor(heading: &str) -> String {
    heading
        .trim()
        .chars()
        .filter_map(|c| match c {
            ' ' => Some('-'),
            '-' | '_' => Some(c),
            c if c.is_alphanumeric() => Some(c),
            _ => None,
        })
        .flat_map(char::to_lowercase)
        .collect()
}

/// The anchors of `page`'s headings (a repeated heading gets `-1`, `-2`).
fn anchors(page: &str) -> BTreeSet<String> {
    let mut found = BTreeSet::new();
    let mut in_fence = false;
    for line in page.lines() {
        if line.trim_start().starts_with("```") {
            in_fence = !in_fence;
        }
        if in_fence || !line.starts_with('#') {
            continue;
        }
        let anchor = heading_anchor(line.trim_start_matches('#'));
        let mut unique = anchor.clone();
        let mut n = 0;
        while found.contains(&unique) {
            n += 1;
            unique = format!("{anchor}-{n}");
        }
        found.insert(unique);
    }
    found
}

/// Every relative link in README.md, CONTRIBUTING.md and docs/*.md names a
/// file or folder of the repository, and every `#anchor` on a Markdown page
/// names one of its headings, so moving a section cannot leave a dead link.
#[test]
fn every_relative_link_resolves() {
    let mut dead = Vec::new();
    let mut checked = 0;
    for page in markdown_pages() {
        let text = fs::read_to_string(&page).unwrap_or_else(|e| panic!("{}: {e}", page.display()));
        let dir = page.parent().unwrap();
        for target in link_targets(&text) {
            if target.contains("://") || target.starts_with("mailto:") {
                continue;
            }
            checked += 1;
            let (path, anchor) = match target.split_once('#') {
                Some((path, anchor)) => (path, Some(anchor)),
                None => (target.as_str(), None),
            };
            let file = if path.is_empty() {
                page.clone()
            } else {
                dir.join(path)
            };
            let shown = page.strip_prefix(root()).unwrap_or(&page).display();
            if !file.exists() {
                dead.push(format!("{shown}: ({target}): no such file"));
                continue;
            }
            if let Some(anchor) = anchor {
                if file.extension().is_some_and(|e| e == "md") {
                    let headings = anchors(&fs::read_to_string(&file).unwrap());
                    if !headings.contains(anchor) {
                        dead.push(format!("{shown}: ({target}): no such heading"));
                    }
                }
            }
        }
    }
    assert!(
        checked > 0,
        "no relative links found: the link reader is broken"
    );
    assert!(dead.is_empty(), "dead links:\n{}", dead.join("\n"));
}

#[test]
fn every_fixture_renders_as_text() {
    for log in fixtures() {
        let text = run(&log, Format::Text);
        assert!(text.ends_with(")\n"), "{}: no summary line", log.display());
        assert!(
            !text.contains('\x1b'),
            "{}: escape sequence in uncoloured text",
            log.display()
        );
    }
}

/// Fixtures named `negative_*` hold text that only mentions memory errors:
/// no finding but warnings (TensorFlow's retry warning is reported as one).
#[test]
fn negative_fixtures_find_nothing() {
    let negatives: Vec<_> = fixtures()
        .into_iter()
        .filter(|p| {
            p.file_name()
                .unwrap()
                .to_string_lossy()
                .starts_with("negative_")
        })
        .collect();
    assert!(!negatives.is_empty());
    for log in negatives {
        let json: serde_json::Value = serde_json::from_str(&run(&log, Format::Json)).unwrap();
        let errors = json["findings"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|f| f["category"] != "warning")
            .count();
        assert_eq!(errors, 0, "{}", log.display());
    }
}

/// Every fixture's text fits 80 columns at `COLUMNS=80`, in both languages,
/// counting East Asian wide characters as two.
#[test]
fn every_fixture_fits_80_columns() {
    use unicode_width::UnicodeWidthStr;
    for log in fixtures() {
        for lang in [Lang::En, Lang::Zh] {
            let text = render_with(&log, lang, 80, false);
            for line in text.lines() {
                assert!(
                    line.width() <= 80,
                    "{} ({lang:?}): {} columns: {line}",
                    log.display(),
                    line.width()
                );
            }
        }
    }
}

/// The first lines of every finding name its top verdict and its first fix,
/// and `--brief` prints only those lines and the count.
#[test]
fn every_finding_answers_first() {
    for log in fixtures() {
        let name = log.file_name().unwrap().to_string_lossy().to_string();
        let mut analysis = Analysis::new();
        analysis.add(oomwhy::scan(fs::File::open(&log).unwrap(), &name).unwrap());
        let (findings, _) = analysis.finish();
        let brief = render_with(&log, Lang::En, 100, true);
        let answers: Vec<&str> = brief.split("\n\n").collect();
        assert_eq!(answers.len(), findings.len() + 1, "{name}: {brief}");
        for (f, answer) in findings.iter().zip(&answers) {
            let joined = answer.split_whitespace().collect::<Vec<_>>().join(" ");
            if let Some(v) = f.diagnosis.verdicts.first() {
                // Its title, or its detail's opening when that restates the
                // title with the figure ("Other processes hold 20.31 GiB").
                let opening: Vec<&str> = v.detail.split_whitespace().take(5).collect();
                assert!(
                    joined.contains(&v.title) || joined.contains(&opening.join(" ")),
                    "{name}: no verdict in {answer}"
                );
            }
            if let Some(fix) = f.diagnosis.fixes.first() {
                assert!(joined.contains(&fix.title), "{name}: no fix in {answer}");
            }
            // Three entries (what failed, why, first fix), each at most
            // two lines at 100 columns.
            assert!(
                answer.lines().count() <= 6,
                "{name}: answer too long: {answer}"
            );
        }
        let full = run(&log, Format::Text);
        for answer in &answers[..findings.len()] {
            assert!(
                full.contains(answer),
                "{name}: the full text does not open with the answer"
            );
        }
    }
}

fn render_with(log: &Path, lang: Lang, width: usize, brief: bool) -> String {
    let name = log.file_name().unwrap().to_string_lossy().to_string();
    let mut analysis = Analysis::new();
    analysis.add(oomwhy::scan(fs::File::open(log).unwrap(), &name).unwrap());
    let (findings, summary) = analysis.finish();
    let options = RenderOptions {
        lang,
        width,
        brief,
        ..RenderOptions::default()
    };
    let mut out = Vec::new();
    render(Format::Text, &findings, &summary, options, &mut out).unwrap();
    String::from_utf8(out).unwrap()
}
