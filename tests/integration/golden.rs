//! Golden test: every `fixtures/*.log` is scanned and explained, and the JSON
//! output must equal the `fixtures/*.json` beside it, the uncoloured text the
//! `fixtures/*.txt` beside it. All mismatches are
//! reported at once. A few fixtures also have a Chinese golden
//! (`fixtures/*.zh.txt`, `--lang zh`), and README.md's examples must equal
//! their goldens. `UPDATE_GOLDEN=1 cargo test --test integration golden::` re-blesses
//! (then review the diff: a fixture must never be blessed to match a bug).

use oomwhy::i18n::Lang;
use oomwhy::render::{render, Format, RenderOptions};
use oomwhy::Analysis;
use std::fs;
use std::path::{Path, PathBuf};

fn fixtures() -> Vec<PathBuf> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures");
    let mut logs: Vec<PathBuf> = fs::read_dir(&dir)
        .expect("fixtures/ exists")
        .map(|e| e.expect("readable entry").path())
        .filter(|p| p.extension().is_some_and(|e| e == "log"))
        .collect();
    logs.sort();
    logs
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

/// Compares every fixture's output in `format` with the golden file of
/// extension `ext` beside it (or re-blesses it under `UPDATE_GOLDEN`).
fn check_goldens(format: Format, ext: &str) {
    let logs = fixtures();
    assert!(
        logs.len() >= 10,
        "expected the shipped fixtures, found {}",
        logs.len()
    );
    check_goldens_of(&logs, format, Lang::En, ext);
}

fn check_goldens_of(logs: &[PathBuf], format: Format, lang: Lang, ext: &str) {
    let update = std::env::var_os("UPDATE_GOLDEN").is_some();
    let mut failures = Vec::new();
    for log in logs {
        let actual = run_in(log, format, lang);
        let expected_path = log.with_extension(ext);
        if update {
            fs::write(&expected_path, &actual).unwrap();
            continue;
        }
        match fs::read_to_string(&expected_path) {
            Ok(expected) if expected == actual => {}
            Ok(expected) => {
                let line = expected
                    .lines()
                    .zip(actual.lines())
                    .position(|(e, a)| e != a)
                    .map_or(expected.lines().count().min(actual.lines().count()), |i| i);
                failures.push(format!(
                    "{}: differs from line {}:\n  expected: {}\n  actual:   {}",
                    log.display(),
                    line + 1,
                    expected.lines().nth(line).unwrap_or("<end>"),
                    actual.lines().nth(line).unwrap_or("<end>")
                ));
            }
            Err(_) => failures.push(format!(
                "{}: no golden file {}",
                log.display(),
                expected_path.display()
            )),
        }
    }
    assert!(
        failures.is_empty(),
        "{} of {} fixtures differ (UPDATE_GOLDEN=1 to re-bless after reviewing):\n\n{}",
        failures.len(),
        logs.len(),
        failures.join("\n\n")
    );
}

#[test]
fn fixtures_match_golden_json() {
    check_goldens(Format::Json, "json");
}

/// The uncoloured text (what `--color never` prints) is checked as well, so
/// a change in wording, order or layout is seen, not only in the JSON.
#[test]
fn fixtures_match_golden_text() {
    check_goldens(Format::Text, "txt");
}

/// Fixtures whose Chinese text is kept as a golden: the seed example, an
/// allocator OOM with other processes, a masked OOM, a crash and a host kill.
const CHINESE: &[&str] = &[
    "torch_reserved_era_seed",
    "torch_capacity_2_2_kaggle_container",
    "library_alloc_failed_cublas_create",
    "device_side_assert_labels",
    "host_oom_killed_kernel",
];

#[test]
fn chinese_fixtures_match_golden_text() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures");
    let logs: Vec<PathBuf> = CHINESE
        .iter()
        .map(|name| dir.join(format!("{name}.log")))
        .collect();
    for log in &logs {
        assert!(log.exists(), "{} is missing", log.display());
    }
    check_goldens_of(&logs, Format::Text, Lang::Zh, "zh.txt");
}

/// The examples in README.md are the goldens of the seed fixture, so the
/// README cannot drift from what oomwhy prints.
#[test]
fn readme_examples_are_the_goldens() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let readme = fs::read_to_string(root.join("README.md")).unwrap();
    for ext in ["txt", "zh.txt"] {
        let golden =
            fs::read_to_string(root.join(format!("fixtures/torch_reserved_era_seed.{ext}")))
                .unwrap();
        let block = format!("```text\n{golden}```");
        assert!(
            readme.contains(&block),
            "README.md does not show fixtures/torch_reserved_era_seed.{ext} exactly: \
             paste the golden into its ```text block"
        );
    }
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
