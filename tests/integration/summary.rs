//! The fleet summary (`oomwhy --summary`): the binary's output validates
//! against the shipped schema, equals what the library folds from the same
//! files, and agrees with the golden documents' own counts. Also: findings
//! read back from their JSON render as before (the Python package relies on it).

use oomwhy::record::Finding;
use oomwhy::summary::{FleetSummary, InputDigest};
use serde_json::Value;
use std::collections::BTreeMap;
use std::fs;
use std::io::Read;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::thread;
use std::time::{Duration, Instant};

/// Longest wait for the binary.
const PATIENCE: Duration = Duration::from_secs(60);

fn fixtures_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures")
}

fn logs() -> Vec<PathBuf> {
    let mut logs: Vec<PathBuf> = fs::read_dir(fixtures_dir())
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "log"))
        .collect();
    logs.sort();
    logs
}

fn file_name(path: &Path) -> String {
    path.file_name().unwrap().to_string_lossy().into_owned()
}

/// Runs the binary in `dir` with `args`; kills it after [`PATIENCE`].
/// Returns (exit status, stdout, stderr).
fn oomwhy(dir: &Path, args: &[String]) -> (i32, String, String) {
    let mut child = Command::new(env!("CARGO_BIN_EXE_oomwhy"))
        .args(args)
        .current_dir(dir)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("the binary starts");
    let drain = |mut pipe: Box<dyn Read + Send>| {
        thread::spawn(move || {
            let mut text = String::new();
            let _ = pipe.read_to_string(&mut text);
            text
        })
    };
    let stdout = drain(Box::new(child.stdout.take().unwrap()));
    let stderr = drain(Box::new(child.stderr.take().unwrap()));
    let start = Instant::now();
    let status = loop {
        if let Some(status) = child.try_wait().unwrap() {
            break status;
        }
        if start.elapsed() > PATIENCE {
            let _ = child.kill();
            let _ = child.wait();
            panic!("oomwhy {args:?} did not finish in {PATIENCE:?}");
        }
        thread::sleep(Duration::from_millis(20));
    };
    (
        status.code().unwrap_or(-1),
        stdout.join().unwrap(),
        stderr.join().unwrap(),
    )
}

fn summary_args(format: &str, names: impl IntoIterator<Item = String>) -> Vec<String> {
    let mut args = vec!["--summary".to_string(), "--format".into(), format.into()];
    args.extend(names);
    args
}

#[test]
fn binary_summary_is_the_library_fold_and_matches_the_schema() {
    let names: Vec<String> = logs().iter().map(|p| file_name(p)).collect();
    let (status, stdout, stderr) = oomwhy(&fixtures_dir(), &summary_args("json", names.clone()));
    assert_eq!(status, 0, "{stderr}");
    let got: Value = serde_json::from_str(&stdout).unwrap();

    let schema: Value = serde_json::from_str(oomwhy::schema::SUMMARY).unwrap();
    let validator = jsonschema::validator_for(&schema).unwrap();
    let errors: Vec<String> = validator.iter_errors(&got).map(|e| e.to_string()).collect();
    assert!(errors.is_empty(), "{errors:#?}");

    let digests = names.iter().map(|name| {
        let data = fs::read(fixtures_dir().join(name)).unwrap();
        InputDigest::from_bytes(&data, name)
    });
    let folded = FleetSummary::from_digests(digests);
    assert_eq!(got, serde_json::to_value(&folded).unwrap());
}

#[test]
fn summary_counts_agree_with_the_golden_documents() {
    let mut kinds: BTreeMap<String, usize> = BTreeMap::new();
    let (mut findings, mut with_findings) = (0, 0);
    for log in logs() {
        let golden: Value =
            serde_json::from_slice(&fs::read(log.with_extension("json")).unwrap()).unwrap();
        let list = golden["findings"].as_array().unwrap();
        findings += list.len();
        with_findings += usize::from(!list.is_empty());
        for f in list {
            *kinds.entry(f["kind"].as_str().unwrap().into()).or_default() += 1;
        }
    }
    let names = logs().iter().map(|p| file_name(p)).collect::<Vec<_>>();
    let (_, stdout, _) = oomwhy(&fixtures_dir(), &summary_args("json", names.clone()));
    let got: FleetSummary = serde_json::from_str(&stdout).unwrap();
    assert_eq!(got.inputs, names.len());
    assert_eq!(got.findings, findings);
    assert_eq!(got.inputs_with_findings, with_findings);
    let got_kinds: BTreeMap<String, usize> = got
        .by_kind
        .iter()
        .map(|g| (g.key.clone(), g.findings))
        .collect();
    assert_eq!(got_kinds, kinds);
}

#[test]
fn text_summary_and_exit_statuses() {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join("summary-status");
    let _ = fs::remove_dir_all(&dir);
    fs::create_dir_all(&dir).unwrap();
    fs::write(dir.join("quiet.log"), "epoch 1\nepoch 2\n").unwrap();
    fs::copy(
        fixtures_dir().join("torch_capacity_2_2_kaggle_container.log"),
        dir.join("oom.log"),
    )
    .unwrap();

    let (status, stdout, _) = oomwhy(&dir, &summary_args("text", ["quiet.log".into()]));
    assert_eq!(status, 1, "nothing found");
    assert!(stdout.starts_with("oomwhy summary: 1 input, 0 with findings; 0 findings"));

    let (status, stdout, stderr) = oomwhy(
        &dir,
        &summary_args(
            "text",
            ["quiet.log".into(), "oom.log".into(), "gone.log".into()],
        ),
    );
    assert_eq!(status, 2, "an unreadable input");
    assert!(stderr.contains("gone.log: no such file"), "{stderr}");
    assert!(
        stdout.starts_with("oomwhy summary: 3 inputs, 1 with findings, 1 unreadable;"),
        "{stdout}"
    );
    assert!(stdout.contains("\nUnreadable inputs\n  gone.log: no such file\n"));

    // In Chinese: the same counts, headings and codes with their titles.
    let mut args = vec!["--lang".to_string(), "zh".into()];
    args.extend(summary_args(
        "text",
        ["quiet.log".into(), "oom.log".into(), "gone.log".into()],
    ));
    let (status, stdout, _) = oomwhy(&dir, &args);
    assert_eq!(status, 2);
    assert!(
        stdout.starts_with("oomwhy 汇总：3 个输入，其中 1 个有发现，1 个无法读取；"),
        "{stdout}"
    );
    assert!(stdout.contains("\n按类型\n"), "{stdout}");
    assert!(
        stdout.contains("torch_allocator_oom（PyTorch 缓存分配器申请不到显存块"),
        "{stdout}"
    );
    assert!(stdout.contains("\n无法读取的输入\n"), "{stdout}");

    let (status, _, stderr) = oomwhy(&dir, &summary_args("ndjson", ["oom.log".into()]));
    assert_eq!(status, 2);
    assert!(stderr.contains("--summary writes text or json"), "{stderr}");

    let (status, stdout, _) = oomwhy(&dir, &["schema".into(), "--summary".into()]);
    assert_eq!(status, 0);
    assert_eq!(stdout, oomwhy::schema::SUMMARY);
}

/// Every golden finding reads back from its JSON into the same JSON.
#[test]
fn findings_read_back_from_json() {
    for log in logs() {
        let golden: Value =
            serde_json::from_slice(&fs::read(log.with_extension("json")).unwrap()).unwrap();
        for f in golden["findings"].as_array().unwrap() {
            let finding: Finding = serde_json::from_value(f.clone())
                .unwrap_or_else(|e| panic!("{}: {e}", log.display()));
            assert_eq!(
                &serde_json::to_value(&finding).unwrap(),
                f,
                "{}",
                log.display()
            );
        }
    }
}
