//! Golden test: every `fixtures/*.log` is scanned and explained, and the JSON
//! output must equal the `fixtures/*.json` beside it, the uncoloured text the
//! `fixtures/*.txt` beside it. All mismatches are
//! reported at once. `UPDATE_GOLDEN=1 cargo test --test golden` re-blesses
//! (then review the diff: a fixture must never be blessed to match a bug).

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
    let name = log.file_name().unwrap().to_string_lossy().to_string();
    let file = fs::File::open(log).unwrap();
    let mut analysis = Analysis::new();
    analysis.add(oomwhy::scan(file, &name).unwrap());
    let (findings, summary) = analysis.finish();
    let mut out = Vec::new();
    render(
        format,
        &findings,
        &summary,
        RenderOptions::default(),
        &mut out,
    )
    .unwrap();
    String::from_utf8(out).unwrap()
}

/// Compares every fixture's output in `format` with the golden file of
/// extension `ext` beside it (or re-blesses it under `UPDATE_GOLDEN`).
fn check_goldens(format: Format, ext: &str) {
    let update = std::env::var_os("UPDATE_GOLDEN").is_some();
    let logs = fixtures();
    assert!(
        logs.len() >= 10,
        "expected the shipped fixtures, found {}",
        logs.len()
    );
    let mut failures = Vec::new();
    for log in &logs {
        let actual = run(log, format);
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
