//! Every sentence a person reads has its Chinese version: the catalogue
//! covers every kind and verdict code, and every verdict, fix and field row
//! that a shipped fixture produces.

use oomwhy::explain::VERDICT_CODES;
use oomwhy::i18n::zh;
use oomwhy::i18n::Lang;
use oomwhy::record::Kind;
use oomwhy::render::localize;
use oomwhy::Analysis;
use std::collections::BTreeSet;
use std::fs;
use std::path::Path;

fn findings() -> Vec<oomwhy::Finding> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures");
    let mut logs: Vec<_> = fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "log"))
        .collect();
    logs.sort();
    let mut analysis = Analysis::new();
    for log in &logs {
        let name = log.file_name().unwrap().to_string_lossy().to_string();
        analysis.add(oomwhy::scan(fs::File::open(log).unwrap(), &name).unwrap());
    }
    analysis.finish().0
}

fn has_chinese(text: &str) -> bool {
    text.chars().any(|c| ('\u{4e00}'..='\u{9fff}').contains(&c))
}

#[test]
fn every_code_has_chinese_titles() {
    let mut missing = Vec::new();
    for kind in Kind::ALL {
        if !oomwhy::explain::docs::chinese_title(kind.slug()).is_some_and(has_chinese) {
            missing.push(kind.slug());
        }
    }
    for (code, _) in oomwhy::explain::docs::EXPLANATIONS.iter() {
        if !oomwhy::explain::docs::chinese_page(code).is_some_and(has_chinese) {
            missing.push(code);
        }
    }
    for code in VERDICT_CODES {
        if !zh::verdict_title(code).is_some_and(has_chinese) {
            missing.push(code);
        }
        if !zh::verdict_summary(code).is_some_and(has_chinese) {
            missing.push(code);
        }
    }
    assert!(
        missing.is_empty(),
        "no Chinese title or summary: {missing:?}"
    );
}

#[test]
fn everything_the_fixtures_say_has_chinese() {
    let findings = findings();
    assert!(findings.len() > 50);
    let mut missing = BTreeSet::new();
    for f in &findings {
        if !has_chinese(&localize::headline(f, Lang::Zh)) {
            missing.insert(format!("headline of {}", f.kind.slug()));
        }
        let chinese = localize::localize(f, Lang::Zh);
        for v in &chinese.diagnosis.verdicts {
            if !(has_chinese(&v.title) && has_chinese(&v.detail)) {
                missing.insert(format!("verdict {}", v.code));
            }
        }
        for fix in &chinese.diagnosis.fixes {
            if !(has_chinese(&fix.title) && has_chinese(&fix.how)) {
                missing.insert(format!("fix {:?}", fix.title));
            }
        }
        for key in f.facts.keys() {
            if zh::fact_label(key).is_none() {
                missing.insert(format!("fact {key:?}"));
            }
        }
        for note in &f.notes {
            if note.zh.is_none() {
                missing.insert(format!("note {note:?}"));
            }
        }
        for row in localize::field_rows(f, Lang::Zh) {
            if !has_chinese(&row.label) && !has_chinese(&row.meaning) {
                missing.insert(format!("row {:?}", row.label));
            }
        }
    }
    assert!(
        missing.is_empty(),
        "{} texts have no Chinese version:\n{}",
        missing.len(),
        missing.into_iter().collect::<Vec<_>>().join("\n")
    );
}

/// JSON keys and codes stay as they are; titles and details follow --lang.
#[test]
fn json_keeps_codes_and_translates_text() {
    use oomwhy::render::{render, Format, RenderOptions};
    let log = "RuntimeError: CUDA out of memory. Tried to allocate 2.00 GiB (GPU 0; 8.00 GiB total capacity; 6.32 GiB already allocated; 1.56 GiB free; 7.88 GiB reserved in total by PyTorch)\n";
    let mut analysis = Analysis::new();
    analysis.add(oomwhy::scan(log.as_bytes(), "a.log").unwrap());
    let (findings, summary) = analysis.finish();
    let json = |lang| {
        let mut out = Vec::new();
        let options = RenderOptions {
            lang,
            ..RenderOptions::default()
        };
        render(Format::Json, &findings, &summary, options, &mut out).unwrap();
        serde_json::from_slice::<serde_json::Value>(&out).unwrap()
    };
    let (en, zh) = (json(Lang::En), json(Lang::Zh));
    let verdict = |j: &serde_json::Value| j["findings"][0]["diagnosis"]["verdicts"][0].clone();
    assert_eq!(verdict(&en)["code"], verdict(&zh)["code"]);
    assert_eq!(en["findings"][0]["kind"], zh["findings"][0]["kind"]);
    assert!(has_chinese(verdict(&zh)["title"].as_str().unwrap()));
    assert!(!has_chinese(verdict(&en)["title"].as_str().unwrap()));
    let keys = |j: &serde_json::Value| {
        j["findings"][0]
            .as_object()
            .unwrap()
            .keys()
            .cloned()
            .collect::<Vec<_>>()
    };
    assert_eq!(keys(&en), keys(&zh));
}

/// Memory snapshots speak Chinese too: their headline, verdicts, fixes and
/// sections (the snapshot scenarios of tests/snapshots).
#[test]
fn snapshot_findings_have_chinese() {
    use oomwhy::render::{render, Format, RenderOptions};
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/snapshots");
    let mut pickles: Vec<_> = fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "pickle"))
        .collect();
    pickles.sort();
    assert!(!pickles.is_empty());
    let mut missing = BTreeSet::new();
    for pickle in &pickles {
        let name = pickle.file_name().unwrap().to_string_lossy().to_string();
        let mut analysis = Analysis::new();
        analysis.add(oomwhy::scan(fs::File::open(pickle).unwrap(), &name).unwrap());
        let (findings, summary) = analysis.finish();
        for f in &findings {
            if !has_chinese(&localize::headline(f, Lang::Zh)) {
                missing.insert(format!("{name}: headline"));
            }
            let chinese = localize::localize(f, Lang::Zh);
            for fix in &chinese.diagnosis.fixes {
                if !has_chinese(&fix.title) || !has_chinese(&fix.how) {
                    missing.insert(format!("{name}: fix {:?}", fix.title));
                }
            }
            for v in &chinese.diagnosis.verdicts {
                if !has_chinese(&v.title) || !has_chinese(&v.detail) {
                    missing.insert(format!("{name}: verdict {}", v.code));
                }
            }
        }
        let mut out = Vec::new();
        let options = RenderOptions {
            lang: Lang::Zh,
            ..RenderOptions::default()
        };
        render(Format::Text, &findings, &summary, options, &mut out).unwrap();
        let text = String::from_utf8(out).unwrap();
        for english in ["Memory snapshot", "Request vs free space", "Live memory by"] {
            if text.contains(english) {
                missing.insert(format!("{name}: section {english:?}"));
            }
        }
    }
    assert!(missing.is_empty(), "{missing:#?}");
}
