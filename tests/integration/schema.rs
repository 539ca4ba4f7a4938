//! The shipped JSON Schemas describe the real output: every fixture's JSON
//! document and NDJSON lines validate against them, in the shipped form and
//! in a strict form that rejects properties the schema does not describe
//! (so a new field must be added to the schema). Also: the NDJSON lines
//! carry exactly what the JSON document carries, the two schemas share
//! their definitions, and `kind` stays open to kinds of later releases.

use oomwhy::record::Kind;
use oomwhy::render::{render, Format, RenderOptions};
use oomwhy::{Analysis, LiveAnalysis};
use serde_json::Value;
use std::fs;
use std::path::{Path, PathBuf};

fn fixtures() -> Vec<PathBuf> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures");
    let mut logs: Vec<PathBuf> = fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "log"))
        .collect();
    logs.sort();
    logs
}

fn name(log: &Path) -> String {
    log.file_name().unwrap().to_string_lossy().into_owned()
}

fn json_output(log: &Path) -> Value {
    let mut analysis = Analysis::new();
    analysis.add(oomwhy::scan(fs::File::open(log).unwrap(), &name(log)).unwrap());
    let (findings, summary) = analysis.finish();
    let mut out = Vec::new();
    render(
        Format::Json,
        &findings,
        &summary,
        RenderOptions::default(),
        &mut out,
    )
    .unwrap();
    serde_json::from_slice(&out).unwrap()
}

/// NDJSON output the way `--format ndjson` produces it: streamed.
fn ndjson_output(log: &Path) -> Vec<Value> {
    let mut live = LiveAnalysis::new();
    live.begin_input();
    let mut findings = Vec::new();
    let outcome = oomwhy::scan_streaming(fs::File::open(log).unwrap(), &name(log), &mut |f| {
        findings.push(live.explain(f))
    })
    .unwrap();
    live.end_input(&outcome);
    let mut out = Vec::new();
    render(
        Format::Ndjson,
        &findings,
        live.summary(),
        RenderOptions::default(),
        &mut out,
    )
    .unwrap();
    String::from_utf8(out)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

fn schema(text: &str) -> Value {
    serde_json::from_str(text).expect("the schema is JSON")
}

/// Adds `"additionalProperties": false` to every object schema with
/// `properties` that does not say otherwise (conditions excepted).
fn strict(schema: &mut Value) {
    match schema {
        Value::Object(map) => {
            if map.contains_key("properties") && !map.contains_key("additionalProperties") {
                map.insert("additionalProperties".into(), Value::Bool(false));
            }
            for (key, value) in map.iter_mut() {
                if key != "if" {
                    strict(value);
                }
            }
        }
        Value::Array(items) => items.iter_mut().for_each(strict),
        _ => {}
    }
}

fn validators(text: &str) -> [(jsonschema::Validator, &'static str); 2] {
    let shipped = schema(text);
    let mut strict_form = shipped.clone();
    strict(&mut strict_form);
    [
        (
            jsonschema::validator_for(&shipped).expect("a valid schema"),
            "shipped",
        ),
        (
            jsonschema::validator_for(&strict_form).expect("a valid schema"),
            "strict",
        ),
    ]
}

fn check(
    validator: &jsonschema::Validator,
    instance: &Value,
    what: &str,
    failures: &mut Vec<String>,
) {
    for error in validator.iter_errors(instance).take(3) {
        failures.push(format!("{what}: {error} at {}", error.instance_path()));
    }
}

#[test]
fn every_fixture_validates() {
    let report = validators(oomwhy::schema::REPORT);
    let ndjson = validators(oomwhy::schema::NDJSON);
    let mut failures = Vec::new();
    for log in fixtures() {
        let document = json_output(&log);
        for (validator, form) in &report {
            check(
                validator,
                &document,
                &format!("{} (json, {form})", name(&log)),
                &mut failures,
            );
        }
        let lines = ndjson_output(&log);
        for (n, line) in lines.iter().enumerate() {
            for (validator, form) in &ndjson {
                check(
                    validator,
                    line,
                    &format!("{} (ndjson line {}, {form})", name(&log), n + 1),
                    &mut failures,
                );
            }
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

#[test]
fn schemas_reject_wrong_output() {
    let [(report, _), _] = validators(oomwhy::schema::REPORT);
    let [(ndjson, _), _] = validators(oomwhy::schema::NDJSON);
    let log = fixtures()
        .into_iter()
        .find(|p| name(p).starts_with("torch_"))
        .unwrap();
    let good = json_output(&log);
    assert!(report.is_valid(&good));
    let mut bad = good.clone();
    bad["findings"][0]["sizes"]["requested_bytes"] = Value::from("2 GiB");
    assert!(!report.is_valid(&bad));
    let mut bad = good.clone();
    bad["findings"][0]["sizes"]["weird"] = Value::from(1);
    assert!(!report.is_valid(&bad), "only *_bytes extras are allowed");
    let mut extra = good.clone();
    extra["findings"][0]["sizes"]["pool_limit_bytes"] = Value::Null;
    assert!(report.is_valid(&extra));
    let mut bad = good;
    bad["schema_version"] = Value::from(2);
    assert!(!report.is_valid(&bad));

    let line = serde_json::json!({"type": "finding", "schema_version": 1});
    assert!(!ndjson.is_valid(&line), "a finding line needs its finding");
    let future = serde_json::json!({"type": "progress", "schema_version": 1, "bytes": 5});
    assert!(ndjson.is_valid(&future), "unknown line types are allowed");
}

#[test]
fn ndjson_carries_the_json_findings() {
    for log in fixtures() {
        let document = json_output(&log);
        let lines = ndjson_output(&log);
        let (last, findings) = lines.split_last().unwrap();
        assert_eq!(last["type"], "summary");
        assert_eq!(last["summary"], document["summary"], "{}", name(&log));
        let streamed: Vec<&Value> = findings.iter().map(|l| &l["finding"]).collect();
        let whole: Vec<&Value> = document["findings"].as_array().unwrap().iter().collect();
        assert_eq!(streamed, whole, "{}", name(&log));
    }
}

/// The schemas share their definitions, and `kind` is open: every kind of
/// this release matches its pattern, and the schema's few examples are real
/// kinds. The schema does not list the kinds, on purpose: a stable format
/// lets new kinds appear (docs/json.md), so a consumer validating with the
/// shipped schema keeps working when one does, and the schema changes only
/// when the format does. The list of kinds is `oomwhy explain --list` and
/// docs/kinds.md (kept complete by `golden::kinds_page_lists_every_kind`).
#[test]
fn schemas_share_definitions_and_accept_every_kind() {
    let report = schema(oomwhy::schema::REPORT);
    let ndjson = schema(oomwhy::schema::NDJSON);
    assert_eq!(
        report["$defs"], ndjson["$defs"],
        "crates/oomwhy/src/schema/*.schema.json: keep $defs identical"
    );
    let kind_schema = &report["$defs"]["finding"]["properties"]["kind"];
    assert!(
        kind_schema.get("enum").is_none(),
        "`kind` must stay open (a pattern, not an enum), so new kinds validate"
    );
    let kind_validator = jsonschema::validator_for(kind_schema).expect("a valid schema");
    for kind in Kind::ALL {
        assert!(
            kind_validator.is_valid(&Value::from(kind.slug())),
            "{} does not match the schema's `kind`",
            kind.slug()
        );
    }
    assert!(
        kind_validator.is_valid(&Value::from("a_kind_of_a_later_release")),
        "a kind of a later release must validate"
    );
    let slugs: Vec<&str> = Kind::ALL.iter().map(|k| k.slug()).collect();
    for example in kind_schema["examples"].as_array().unwrap() {
        let example = example.as_str().unwrap_or_default();
        assert!(
            slugs.contains(&example),
            "the schema's `kind` example {example} is not a kind"
        );
    }
    assert_eq!(
        report["$defs"]["schema_version"]["const"],
        oomwhy::record::SCHEMA_VERSION
    );
}
