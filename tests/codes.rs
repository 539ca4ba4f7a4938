//! The codes check (a small version of rustc's tidy check on error codes):
//! every code oomwhy can emit has a long explanation, every explanation file
//! is registered, and every code is produced by at least one fixture.
//!
//! Codes are collected, not listed here, so that new kinds and verdicts are
//! checked as soon as they exist: kinds from `Kind::ALL` (checked against
//! the variants of `enum Kind`), verdicts from `explain::VERDICT_CODES`
//! (checked against every `verdict("code", ...)` call in `src/explain/`).

use oomwhy::explain::{docs, VERDICT_CODES};
use oomwhy::record::Kind;
use oomwhy::Analysis;
use regex::Regex;
use std::collections::{BTreeMap, BTreeSet};
use std::fs;
use std::path::{Path, PathBuf};

fn root() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

fn files(dir: &str, ext: &str) -> Vec<PathBuf> {
    let mut out: Vec<PathBuf> = fs::read_dir(root().join(dir))
        .unwrap_or_else(|e| panic!("{dir}: {e}"))
        .map(|e| e.expect("readable entry").path())
        .filter(|p| p.extension().is_some_and(|e| e == ext))
        .collect();
    out.sort();
    out
}

/// Verdict codes written as `verdict("code", ...)` in the explainer's source.
fn verdict_codes_in_source() -> BTreeMap<String, PathBuf> {
    let call = Regex::new(r#"\bverdict\(\s*"([a-z0-9_]+)""#).unwrap();
    let mut codes = BTreeMap::new();
    for file in files("src/explain", "rs") {
        let source = fs::read_to_string(&file).unwrap();
        for caps in call.captures_iter(&source) {
            codes.insert(caps[1].to_string(), file.clone());
        }
    }
    codes
}

/// Every code oomwhy can emit: kinds, then verdicts.
fn emittable() -> BTreeSet<String> {
    Kind::ALL
        .iter()
        .map(|k| k.slug().to_string())
        .chain(VERDICT_CODES.iter().map(|c| c.to_string()))
        .chain(verdict_codes_in_source().into_keys())
        .collect()
}

#[test]
fn kind_all_lists_every_variant() {
    let source = fs::read_to_string(root().join("src/record.rs")).unwrap();
    let start = source
        .find("pub enum Kind {")
        .expect("enum Kind in record.rs");
    let body = &source[start..];
    let body = &body[..body.find("\n}").expect("end of enum Kind")];
    let variant = Regex::new(r"(?m)^\s{4}([A-Z][A-Za-z0-9]*),?\s*$").unwrap();
    let variants: BTreeSet<&str> = variant
        .captures_iter(body)
        .map(|c| c.get(1).unwrap().as_str())
        .collect();
    assert!(!variants.is_empty(), "no variants found in enum Kind");
    assert_eq!(
        variants.len(),
        Kind::ALL.len(),
        "Kind::ALL must list every variant of enum Kind: {variants:?}"
    );
}

#[test]
fn verdict_codes_list_every_verdict() {
    let in_source = verdict_codes_in_source();
    assert!(!in_source.is_empty(), "no verdict(...) calls found");
    let missing: Vec<String> = in_source
        .iter()
        .filter(|(code, _)| !VERDICT_CODES.contains(&code.as_str()))
        .map(|(code, file)| format!("{code} ({})", file.display()))
        .collect();
    assert!(
        missing.is_empty(),
        "add to explain::VERDICT_CODES: {missing:?}"
    );
}

#[test]
fn every_code_has_an_explanation() {
    let explained: BTreeSet<&str> = docs::EXPLANATIONS.iter().map(|(c, _)| *c).collect();
    let missing: Vec<String> = emittable()
        .into_iter()
        .filter(|c| !explained.contains(c.as_str()))
        .collect();
    assert!(
        missing.is_empty(),
        "write src/explanations/CODE.md and register it in src/explain/docs.rs for: {missing:?}"
    );
    // And the forgiving lookup finds each code exactly.
    for code in emittable() {
        assert_eq!(docs::lookup(&code).unwrap().0, code);
    }
}

#[test]
fn every_explanation_is_registered_and_emitted() {
    let on_disk: BTreeSet<String> = files("src/explanations", "md")
        .iter()
        .map(|p| p.file_stem().unwrap().to_string_lossy().into_owned())
        .collect();
    let registered: BTreeSet<String> = docs::EXPLANATIONS
        .iter()
        .map(|(c, _)| c.to_string())
        .collect();
    assert_eq!(
        on_disk, registered,
        "src/explanations/*.md and the list in src/explain/docs.rs differ"
    );
    // A code no longer emitted keeps its file, marked as such (rustc's rule).
    let emittable = emittable();
    for (code, text) in docs::EXPLANATIONS {
        assert!(
            emittable.contains(*code) || text.contains("no longer emitted"),
            "{code} is explained but never emitted; mark it \"no longer emitted\""
        );
    }
}

#[test]
fn every_code_is_produced_by_a_fixture() {
    let mut produced: BTreeMap<String, String> = BTreeMap::new();
    let logs = files("fixtures", "log");
    assert!(!logs.is_empty());
    // Memory snapshots are fixtures too (tests/snapshots/make_fixtures.py).
    let inputs = logs
        .iter()
        .chain(files("tests/snapshots", "pickle").iter())
        .cloned()
        .collect::<Vec<_>>();
    for log in &inputs {
        let name = log.file_name().unwrap().to_string_lossy().into_owned();
        let mut analysis = Analysis::new();
        analysis.add(oomwhy::snapshot::scan(fs::File::open(log).unwrap(), &name).unwrap());
        for f in analysis.finish().0 {
            let verdicts = f.diagnosis.verdicts.iter().map(|v| v.code.clone());
            for code in std::iter::once(f.kind.slug().to_string())
                .chain(verdicts)
                .chain(f.explain.iter().cloned())
            {
                produced.entry(code).or_insert_with(|| name.clone());
            }
        }
    }
    let unexplained: Vec<&String> = produced
        .keys()
        .filter(|c| docs::lookup(c).ok().map(|(code, _)| code) != Some(c.as_str()))
        .collect();
    assert!(
        unexplained.is_empty(),
        "fixtures produce codes without an explanation: {unexplained:?}"
    );
    let missing: Vec<String> = emittable()
        .into_iter()
        .filter(|c| !produced.contains_key(c))
        .collect();
    assert!(
        missing.is_empty(),
        "add a real-format fixture (fixtures/*.log + golden JSON) that produces: {missing:?}"
    );
}
