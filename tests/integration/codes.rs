//! The codes check (a small version of rustc's tidy check on error codes):
//! every code oomwhy can emit has a long explanation, every explanation file
//! is registered, and every code is produced by at least one fixture.
//!
//! Codes are collected, not listed here, so that new kinds and verdicts are
//! checked as soon as they exist: kinds from `Kind::ALL` (generated with the
//! enum by `record.rs`'s `kinds!` list), verdicts from `explain::Code`, the
//! only type `verdict(...)` accepts.

use oomwhy::explain::{docs, Code, VERDICT_CODES};
use oomwhy::record::Kind;
use oomwhy::Analysis;
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

/// Every code oomwhy can emit: kinds, then verdicts.
fn emittable() -> BTreeSet<String> {
    Kind::ALL
        .iter()
        .map(|k| k.slug().to_string())
        .chain(VERDICT_CODES.iter().map(|c| c.to_string()))
        .collect()
}

#[test]
fn slugs_are_unique_and_typed_codes_match_their_slugs() {
    let kinds: BTreeSet<&str> = Kind::ALL.iter().map(|k| k.slug()).collect();
    assert_eq!(kinds.len(), Kind::ALL.len(), "two kinds share a slug");
    let codes: Vec<&str> = Code::ALL.iter().map(|c| c.as_str()).collect();
    assert_eq!(codes, VERDICT_CODES, "Code::ALL and VERDICT_CODES differ");
    for code in &codes {
        assert!(!kinds.contains(code), "{code} is both a kind and a verdict");
    }
    // The serialised kind is its slug.
    for kind in Kind::ALL {
        assert_eq!(
            serde_json::to_value(kind).unwrap(),
            serde_json::Value::from(kind.slug())
        );
    }
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
        "write crates/oomwhy/src/explanations/CODE.md and register it in crates/oomwhy/src/explain/docs.rs for: {missing:?}"
    );
    // And the forgiving lookup finds each code exactly.
    for code in emittable() {
        assert_eq!(docs::lookup(&code).unwrap().0, code);
    }
}

#[test]
fn every_explanation_is_registered_and_emitted() {
    let on_disk: BTreeSet<String> = files("crates/oomwhy/src/explanations", "md")
        .iter()
        .map(|p| p.file_stem().unwrap().to_string_lossy().into_owned())
        .collect();
    let registered: BTreeSet<String> = docs::EXPLANATIONS
        .iter()
        .map(|(c, _)| c.to_string())
        .collect();
    assert_eq!(
        on_disk, registered,
        "crates/oomwhy/src/explanations/*.md and the list in crates/oomwhy/src/explain/docs.rs differ"
    );
    // A code no longer emitted keeps its file, marked as such (rustc's rule).
    let emittable = emittable();
    for (code, text) in docs::EXPLANATIONS.iter() {
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
        analysis.add(oomwhy::scan(fs::File::open(log).unwrap(), &name).unwrap());
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
        .filter(|c| docs::lookup(c).ok().map(|(code, _)| code) != Some(String::as_str(c)))
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
