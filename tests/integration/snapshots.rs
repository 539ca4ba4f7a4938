//! Memory snapshots: the generated scenarios in `tests/snapshots/` (written
//! by `tests/snapshots/make_fixtures.py`, a plain-Python simulation of the
//! caching allocator) against their golden JSON and text, the verdict each
//! scenario was built to show, the join with a log, the JSON Schema, the
//! real snapshots of public repositories when they are present, and the CLI's
//! answers to pickles that are no snapshot.
//!
//! `UPDATE_GOLDEN=1 cargo test --test snapshots` re-blesses the goldens
//! (review the diff: never bless a golden to match a bug).

use oomwhy::record::{Category, Finding, Kind};
use oomwhy::render::{render, Format, RenderOptions};
use oomwhy::{Analysis, Summary};
use serde_json::Value;
use std::fs;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

fn dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/snapshots")
}

fn scenarios() -> Vec<PathBuf> {
    let mut out: Vec<PathBuf> = fs::read_dir(dir())
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "pickle"))
        .collect();
    out.sort();
    assert!(out.len() >= 16, "the generated scenarios are missing");
    out
}

/// Analyses inputs (given as (path, name)) the way the CLI does.
fn analyse(inputs: &[(&Path, &str)]) -> (Vec<Finding>, Summary) {
    let mut analysis = Analysis::new();
    for (path, name) in inputs {
        let file = fs::File::open(path).unwrap();
        analysis.add(oomwhy::scan(file, name).unwrap());
    }
    analysis.finish()
}

fn name(p: &Path) -> String {
    p.file_name().unwrap().to_string_lossy().into_owned()
}

fn rendered(findings: &[Finding], summary: &Summary, format: Format) -> String {
    let mut out = Vec::new();
    render(
        format,
        findings,
        summary,
        RenderOptions::default(),
        &mut out,
    )
    .unwrap();
    String::from_utf8(out).unwrap()
}

#[test]
fn scenarios_match_their_goldens() {
    let update = std::env::var_os("UPDATE_GOLDEN").is_some();
    let mut failures = Vec::new();
    for path in scenarios() {
        let n = name(&path);
        let (findings, summary) = analyse(&[(&path, &n)]);
        for (format, ext) in [(Format::Json, "json"), (Format::Text, "txt")] {
            let got = rendered(&findings, &summary, format);
            let golden = path.with_extension(ext);
            if update {
                fs::write(&golden, &got).unwrap();
                continue;
            }
            match fs::read_to_string(&golden) {
                Ok(want) if want == got => {}
                Ok(_) => failures.push(format!("{} differs", golden.display())),
                Err(e) => failures.push(format!("{}: {e}", golden.display())),
            }
        }
    }
    assert!(
        failures.is_empty(),
        "{failures:#?}\n(UPDATE_GOLDEN=1 re-blesses after review)"
    );
}

/// A snapshot explained one finding at a time (NDJSON, `--follow`) gets
/// the same answer as in a whole report: the verdicts and fixes are the
/// explainer's, not written afterwards by one path only.
#[test]
fn streamed_snapshots_are_explained_as_in_a_report() {
    for path in scenarios() {
        let n = name(&path);
        let (whole, _) = analyse(&[(&path, &n)]);
        let outcome = oomwhy::scan(fs::File::open(&path).unwrap(), &n).unwrap();
        let mut live = oomwhy::LiveAnalysis::new();
        let streamed: Vec<Finding> = outcome
            .findings
            .into_iter()
            .map(|f| live.explain(f))
            .collect();
        assert_eq!(streamed.len(), whole.len(), "{n}");
        for (a, b) in streamed.iter().zip(&whole) {
            assert!(!a.diagnosis.verdicts.is_empty(), "{n}: no verdict");
            assert_eq!(a.diagnosis, b.diagnosis, "{n}");
            assert_eq!(a.explain, b.explain, "{n}");
        }
    }
}

/// The verdict each scenario was built to show (see make_fixtures.py).
#[test]
fn each_scenario_gets_its_verdict() {
    let expected: &[(&str, &str, Category)] = &[
        (
            "bare_segment_list",
            "snapshot_no_oom_event",
            Category::MemoryState,
        ),
        (
            "dumped_after_oom_v2_2",
            "snapshot_fragmentation",
            Category::Oom,
        ),
        ("empty_v2_5", "snapshot_no_oom_event", Category::MemoryState),
        ("expandable_v2_5", "snapshot_shortage", Category::Oom),
        (
            "fragmentation_v2_1",
            "snapshot_fragmentation",
            Category::Oom,
        ),
        ("history_oom_v2_0", "snapshot_shortage", Category::Oom),
        (
            "legacy_one_entry_v2_0",
            "snapshot_no_oom_event",
            Category::MemoryState,
        ),
        ("no_stacks_v2_5", "snapshot_shortage", Category::Oom),
        (
            "oom_event_lost_v2_2",
            "snapshot_no_oom_event",
            Category::MemoryState,
        ),
        ("other_stream_v2_2", "snapshot_other_stream", Category::Oom),
        (
            "oversize_rule_v2_5",
            "snapshot_oversize_rule",
            Category::Oom,
        ),
        ("pending_free_v2_8", "snapshot_pending_free", Category::Oom),
        ("private_pool_v2_3", "snapshot_private_pool", Category::Oom),
        ("shortage_v2_10", "snapshot_shortage", Category::Oom),
        ("two_devices_v2_3", "snapshot_shortage", Category::Oom),
        ("windows_paths_v2_10", "snapshot_shortage", Category::Oom),
    ];
    for (stem, code, category) in expected {
        let path = dir().join(format!("{stem}.pickle"));
        let (findings, _) = analyse(&[(&path, stem)]);
        assert_eq!(findings.len(), 1, "{stem}");
        let f = &findings[0];
        assert_eq!(f.kind, Kind::MemorySnapshot, "{stem}");
        assert_eq!(f.category, *category, "{stem}");
        assert_eq!(f.diagnosis.verdicts[0].code, *code, "{stem}");
        assert!(!f.diagnosis.fixes.is_empty(), "{stem}: no fix");
        let era = &f.snapshot.as_ref().unwrap().era;
        let want_era = stem.rsplit_once("_v").map(|(_, v)| v.replace('_', "."));
        if let Some(v) = want_era {
            assert!(era.contains(&v), "{stem}: era {era}");
        }
    }
}

#[test]
fn usable_hole_and_sites_are_reported() {
    let path = dir().join("fragmentation_v2_1.pickle");
    let (findings, _) = analyse(&[(&path, "f")]);
    let r = findings[0].snapshot.as_ref().unwrap();
    let o = r.oom.as_ref().unwrap();
    const MIB: u64 = 1 << 20;
    // 30 blocks of 38 MiB in three 400 MiB segments, every second one freed:
    // 14 holes of 38 MiB and three 58 MiB holes (the last 38 MiB block with the 20 MiB tail).
    assert_eq!(o.request_bytes, 260 * MIB);
    assert_eq!(o.allocation_bytes, 260 * MIB);
    assert_eq!(o.largest_usable_hole_bytes, 58 * MIB);
    assert_eq!(o.usable_class_free_bytes, 630 * MIB);
    assert_eq!(o.device_free_bytes, Some(248 * MIB));
    assert_eq!(o.state, "at_oom");
    let d = &r.devices[0];
    assert_eq!(d.reserved_bytes, 1500 * MIB);
    assert_eq!(d.allocated_bytes, 870 * MIB);
    assert_eq!(
        d.top_sites[0].location,
        "/home/user/project/model.py:57 in forward"
    );
    assert_eq!(d.top_sites[0].bytes, 15 * 38 * MIB);
    assert_eq!(
        d.top_sites[1].location,
        "/home/user/project/model.py:12 in __init__"
    );
    // The failed allocation's own stack, PyTorch's frame skipped.
    assert_eq!(o.stack[0], "/home/user/project/model.py:61 in forward");
}

/// A dump taken after the script caught the OOM and went on is rewound to
/// the state at the OOM: the same numbers as the dump from the observer.
#[test]
fn a_later_dump_is_rewound_to_the_oom() {
    let at = dir().join("fragmentation_v2_1.pickle");
    let later = dir().join("dumped_after_oom_v2_2.pickle");
    let (a, _) = analyse(&[(&at, "a")]);
    let (b, _) = analyse(&[(&later, "b")]);
    let (ra, rb) = (
        a[0].snapshot.as_ref().unwrap(),
        b[0].snapshot.as_ref().unwrap(),
    );
    let (mut oa, mut ob) = (ra.oom.clone().unwrap(), rb.oom.clone().unwrap());
    assert_eq!(ob.state, "rewound");
    assert!(ob.events_after > 0);
    (oa.state, oa.events_after, oa.event_index) = (String::new(), 0, 0);
    (ob.state, ob.events_after, ob.event_index) = (String::new(), 0, 0);
    assert_eq!(oa, ob);
    assert_eq!(ra.devices[0].reserved_bytes, rb.devices[0].reserved_bytes);
    assert_eq!(ra.devices[0].allocated_bytes, rb.devices[0].allocated_bytes);
    assert_eq!(
        ra.devices[0].free_in_segments_bytes,
        rb.devices[0].free_in_segments_bytes
    );
}

#[test]
fn log_and_snapshot_are_joined() {
    let log = dir().join("fragmentation_train.log");
    let snap = dir().join("fragmentation_v2_1.pickle");
    let (findings, summary) = analyse(&[(&log, "train.log"), (&snap, "snap.pickle")]);
    assert_eq!(
        findings.len(),
        1,
        "the snapshot's OOM is folded into the log's"
    );
    assert_eq!(summary.oom, 1);
    let f = &findings[0];
    assert_eq!(f.kind, Kind::TorchAllocatorOom);
    assert_eq!(f.id, 1);
    assert_eq!(
        f.facts.get("snapshot").map(String::as_str),
        Some("snap.pickle")
    );
    assert!(f.snapshot.is_some());
    assert_eq!(f.diagnosis.verdicts[0].code, "snapshot_fragmentation");
    // The message's own verdicts follow the snapshot's.
    assert!(f.diagnosis.verdicts.len() > 1);
    let note = f
        .notes
        .iter()
        .find(|n| n.text.starts_with("Joined"))
        .expect("cross-check note");
    assert!(note.text.contains("630.00 MiB matches"), "{}", note.text);
    assert!(f.explain.contains(&"snapshot_fragmentation".to_string()));

    // A snapshot of another size stays a finding of its own.
    let other = dir().join("shortage_v2_10.pickle");
    let (findings, _) = analyse(&[(&log, "train.log"), (&other, "other.pickle")]);
    assert_eq!(findings.len(), 2);
    assert!(findings[0].snapshot.is_none());
}

#[test]
fn per_rank_snapshots_join_their_rank() {
    let text = fs::read_to_string(dir().join("fragmentation_train.log")).unwrap();
    let ranked: String = text.lines().map(|l| format!("[rank1]: {l}\n")).collect();
    let tmp = std::env::temp_dir().join(format!("oomwhy-rank-{}.log", std::process::id()));
    fs::write(&tmp, ranked).unwrap();
    let snap = dir().join("fragmentation_v2_1.pickle");
    let (findings, _) = analyse(&[
        (&tmp, "train.log"),
        (&snap, "oom_rank-0.pickle"),
        (&snap, "oom_rank-1.pickle"),
    ]);
    fs::remove_file(&tmp).ok();
    let log = findings
        .iter()
        .find(|f| f.kind == Kind::TorchAllocatorOom)
        .unwrap();
    assert_eq!(log.first_rank, Some(1));
    assert_eq!(
        log.facts.get("snapshot").map(String::as_str),
        Some("oom_rank-1.pickle")
    );
    let left: Vec<&str> = findings
        .iter()
        .filter(|f| f.kind == Kind::MemorySnapshot)
        .map(|f| f.source.input.as_str())
        .collect();
    assert_eq!(left, ["oom_rank-0.pickle"]);
}

/// Adds `"additionalProperties": false` to every object schema with properties.
fn strict(schema: &mut Value) {
    match schema {
        Value::Object(map) => {
            if map.contains_key("properties") && !map.contains_key("additionalProperties") {
                map.insert("additionalProperties".into(), Value::Bool(false));
            }
            map.iter_mut()
                .filter(|(k, _)| *k != "if")
                .for_each(|(_, v)| strict(v));
        }
        Value::Array(items) => items.iter_mut().for_each(strict),
        _ => {}
    }
}

#[test]
fn json_output_follows_the_schema() {
    let mut schema: Value = serde_json::from_str(oomwhy::schema::REPORT).unwrap();
    strict(&mut schema);
    let validator = jsonschema::validator_for(&schema).unwrap();
    let log = dir().join("fragmentation_train.log");
    let mut failures = Vec::new();
    let mut inputs: Vec<(PathBuf, String)> = scenarios()
        .into_iter()
        .map(|p| (p.clone(), name(&p)))
        .collect();
    inputs.push((log, "train.log".into()));
    for (path, n) in &inputs {
        let mut set: Vec<(&Path, &str)> = vec![(path.as_path(), n.as_str())];
        let frag = dir().join("fragmentation_v2_1.pickle");
        if n == "train.log" {
            set.push((&frag, "snap.pickle"));
        }
        let (findings, summary) = analyse(&set);
        let json: Value =
            serde_json::from_str(&rendered(&findings, &summary, Format::Json)).unwrap();
        for e in validator.iter_errors(&json).take(3) {
            failures.push(format!("{n}: {e} at {}", e.instance_path()));
        }
    }
    assert!(failures.is_empty(), "{failures:#?}");
}

/// The real snapshots (public repositories, never committed here) when the
/// folder named by `OOMWHY_REAL_SNAPSHOTS` holds them: totals and era as
/// computed once with Python's own unpickler.
#[test]
fn real_snapshots_when_present() {
    let Some(real) = std::env::var_os("OOMWHY_REAL_SNAPSHOTS").map(std::path::PathBuf::from) else {
        eprintln!("skipped: OOMWHY_REAL_SNAPSHOTS names no folder of real snapshots");
        return;
    };
    if !real.is_dir() {
        eprintln!("skipped: no real snapshots at {}", real.display());
        return;
    }
    // (file, segments, reserved, allocated, free in segments, trace events, era)
    let expected: &[(&str, u64, u64, u64, u64, u64, &str)] = &[
        (
            "bare_segment_list_memory_snapshot.pkl",
            255,
            3649044480,
            3353639424,
            295405056,
            0,
            "≥2.1",
        ),
        (
            "v2_0_history_oom_snapshot.pickle",
            176,
            11844714496,
            11840159744,
            4554752,
            1,
            "2.0",
        ),
        (
            "v2_10_user_metadata_windows.pickle",
            216,
            14180941824,
            1377753600,
            12803188224,
            5163,
            "≥2.10",
        ),
        (
            "v2_1_frames_trace.pickle",
            215,
            6471811072,
            2297283072,
            4174528000,
            10307,
            "2.1",
        ),
        (
            "v2_2_time_us_trace.pickle",
            10,
            134217728,
            48760832,
            85456896,
            5803,
            "2.2",
        ),
        ("v2_5_empty.pickle", 0, 0, 0, 0, 0, "≥2.5"),
        (
            "v2_5_expandable_segments.pickle",
            3,
            85983232,
            17049600,
            68933632,
            0,
            "≥2.5",
        ),
        (
            "v2_5_near_full_gpu.pickle",
            649,
            36165386240,
            36045752320,
            119633920,
            4152,
            "2.5–2.7",
        ),
        (
            "v2_8_compile_context.pickle",
            61,
            1897922560,
            1014430208,
            883492352,
            23105,
            "2.8–2.9",
        ),
    ];
    for (file, segments, reserved, allocated, free, events, era) in expected {
        let path = real.join(file);
        if !path.is_file() {
            eprintln!("skipped: {file} is missing");
            continue;
        }
        let (findings, _) = analyse(&[(&path, file)]);
        assert_eq!(findings.len(), 1, "{file}");
        let f = &findings[0];
        assert_eq!(
            f.category,
            Category::MemoryState,
            "{file}: none holds an oom event"
        );
        assert_eq!(f.diagnosis.verdicts[0].code, "snapshot_no_oom_event");
        let r = f.snapshot.as_ref().unwrap();
        assert_eq!(r.era, *era, "{file}");
        let sum = |g: fn(&oomwhy::record::DeviceState) -> u64| r.devices.iter().map(g).sum::<u64>();
        assert_eq!(sum(|d| d.segments), *segments, "{file}");
        assert_eq!(sum(|d| d.reserved_bytes), *reserved, "{file}");
        assert_eq!(sum(|d| d.allocated_bytes), *allocated, "{file}");
        assert_eq!(sum(|d| d.free_in_segments_bytes), *free, "{file}");
        assert_eq!(sum(|d| d.trace_events), *events, "{file}");
    }
    let not = real.join("not_a_snapshot.pickle");
    if not.is_file() {
        let err = oomwhy::scan(fs::File::open(&not).unwrap(), "n").unwrap_err();
        assert!(
            err.to_string()
                .contains("a pickle, but not a PyTorch memory snapshot"),
            "{err}"
        );
    }
}

/// Runs the binary on files, bounded by a timeout.
fn oomwhy(args: &[&Path]) -> (i32, String, String) {
    let mut child = Command::new(env!("CARGO_BIN_EXE_oomwhy"))
        .args(["--color", "never"])
        .args(args)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let deadline = Instant::now() + Duration::from_secs(60);
    loop {
        if child.try_wait().unwrap().is_some() {
            break;
        }
        if Instant::now() > deadline {
            child.kill().ok();
            child.wait().ok();
            panic!("oomwhy did not finish within 60 s");
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    let out = child.wait_with_output().unwrap();
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

#[test]
fn cli_answers_pickles_that_are_no_snapshot() {
    let tmp = std::env::temp_dir().join(format!("oomwhy-snap-{}", std::process::id()));
    fs::create_dir_all(&tmp).unwrap();
    let cases: &[(&str, &[u8], &str)] = &[
        (
            "phrases.pickle",
            b"\x80\x04}\x94\x8c\x01a\x94K\x01s.",
            "a pickle, but not a PyTorch memory snapshot",
        ),
        (
            "evil.pickle",
            b"\x80\x04\x8c\x02os\x8c\x06system\x93\x8c\x05touch\x85R.",
            "refuses",
        ),
        ("cut.pickle", b"\x80\x04}\x94(\x8c\x08segments", "truncated"),
    ];
    for (file, data, says) in cases {
        let path = tmp.join(file);
        fs::write(&path, data).unwrap();
        let (code, stdout, stderr) = oomwhy(&[&path]);
        assert_eq!(code, 2, "{file}: {stdout}{stderr}");
        assert!(stderr.contains(says), "{file}: {stderr}");
    }
    // A snapshot and a log in one run: the log's OOM carries the snapshot.
    let (code, stdout, _) = oomwhy(&[
        &dir().join("fragmentation_train.log"),
        &dir().join("fragmentation_v2_1.pickle"),
    ]);
    assert_eq!(code, 0);
    assert!(stdout.contains("Request vs free space (GPU 0)"), "{stdout}");
    assert!(stdout.contains("1 finding"), "{stdout}");
    fs::remove_dir_all(&tmp).ok();
}

mod mutations {
    use super::*;
    use proptest::prelude::*;

    fn seeds() -> Vec<Vec<u8>> {
        scenarios().iter().map(|p| fs::read(p).unwrap()).collect()
    }

    proptest! {
        #![proptest_config(ProptestConfig { cases: 512, ..ProptestConfig::default() })]

        /// Damaged snapshots (bytes overwritten, the end cut off) give a
        /// finding or an error, never a panic; the output still renders.
        #[test]
        fn damaged_snapshots_never_panic(
            which in 0usize..16,
            edits in proptest::collection::vec((any::<u16>(), any::<u8>()), 0..8),
            cut in any::<u16>(),
        ) {
            let seeds = seeds();
            let mut data = seeds[which % seeds.len()].clone();
            for (at, byte) in edits {
                let i = usize::from(at) % data.len();
                data[i] = byte;
            }
            let keep = data.len() - usize::from(cut) % (data.len() / 4 + 1);
            data.truncate(keep);
            if let Ok(outcome) = oomwhy::scan(&data[..], "damaged.pickle") {
                let mut analysis = Analysis::new();
                analysis.add(outcome);
                let (findings, summary) = analysis.finish();
                let json = rendered(&findings, &summary, Format::Json);
                prop_assert!(serde_json::from_str::<Value>(&json).is_ok());
                rendered(&findings, &summary, Format::Text);
            }
        }
    }
}
