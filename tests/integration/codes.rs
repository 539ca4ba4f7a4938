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

/// The library's own word and one of its calls, as a program names them
/// beside a status: the API words the status family reads a number after.
fn library_words(table: &str) -> Option<(&'static str, &'static str)> {
    Some(match table {
        "cufft" => ("cuFFT", "cufftExecC2C"),
        "cusolver" => ("cuSOLVER", "cusolverDnSgetrf"),
        "cusparse" => ("cuSPARSE", "cusparseSpMM"),
        "curand" => ("cuRAND", "curandGenerateNormal"),
        "npp" => ("NPP", "nppiResize_8u_C3R"),
        "nvjpeg" => ("nvJPEG", "nvjpegDecode"),
        "rocblas" => ("rocBLAS", "rocblas_gemm_ex"),
        "miopen" => ("MIOpen", "miopenConvolutionForward"),
        "hipblas" => ("hipBLAS", "hipblasSgemm"),
        "hipsolver" => ("hipSOLVER", "hipsolverDnSgetrf"),
        "hipfft" => ("hipFFT", "hipfftExecC2C"),
        _ => return None,
    })
}

/// Every printed form of a code: its name alone after an exception class,
/// after the library's `error:` and inside a C++ exception's `what():`
/// line, and its number (decimal, as the libraries' checks print it) after
/// `error`, `returned`, `err(`, `code=` and `failed with error`.
fn printed_forms(word: &str, call: &str, name: &str, number: i64) -> Vec<(String, bool)> {
    vec![
        (format!("RuntimeError: {name}"), true),
        (format!("{word} error: {name}"), true),
        (
            format!("terminate called after throwing an instance of 'std::runtime_error'\n  what():  {word} error: {name}"),
            true,
        ),
        (format!("{word} error {number}"), false),
        (format!("{call} returned {number}"), false),
        (format!("{call} err({number})"), false),
        (format!("{word} error at src/ops.cpp:42 code={number}"), false),
        (format!("{call} failed with error {number}"), false),
    ]
}

/// Each entry of each library table is recognised through the whole
/// decoder in every printed form: a memory code as an out-of-memory
/// finding, another failure as a finding that names it (the number's first
/// row when only the number is printed), and a bad-argument (`usage`) code
/// not at all.
#[test]
fn every_library_status_is_recognised_in_every_printed_form() {
    use oomwhy::codes::{scanned_tables, Class};
    let mut checked = 0;
    for table in scanned_tables() {
        let Some((word, call)) = library_words(table.id) else {
            continue;
        };
        for entry in &table.entries {
            for (text, named) in printed_forms(word, call, entry.name, entry.number) {
                let expected = if named {
                    entry
                } else {
                    table.by_number(entry.number).expect("its own number")
                };
                let findings = oomwhy::decode_str(&format!("{text}\n"));
                let naming = findings
                    .iter()
                    .find(|f| f.facts.get("error_name").map(String::as_str) == Some(expected.name));
                match expected.class {
                    Class::Usage => assert!(naming.is_none(), "{text}: {findings:?}"),
                    Class::Memory => assert!(
                        findings.iter().any(|f| f.category.is_oom()),
                        "{text}: {findings:?}"
                    ),
                    Class::NotMemory | Class::Maybe => {
                        let f = naming
                            .unwrap_or_else(|| panic!("not recognised: {text}: {findings:?}"));
                        assert_eq!(
                            f.facts.get("table").map(String::as_str),
                            Some(table.id),
                            "{text}"
                        );
                        assert!(!f.category.is_oom(), "{text}: {:?}", f.category);
                    }
                }
                checked += 1;
            }
        }
    }
    // Eleven tables, every row, eight forms each.
    assert!(checked > 11 * 8 * 8, "{checked}");
}

/// The process tables (signals, NTSTATUS) name how `oomwhy run`'s command
/// ended, in both languages, and are not read as GPU statuses in a log.
#[test]
fn process_tables_name_endings() {
    use oomwhy::exit::{note, Ending};
    use oomwhy::i18n::Lang;
    let signals = oomwhy::codes::table("signal").expect("the signal table");
    for entry in &signals.entries {
        let n = i32::try_from(entry.number).expect("a signal number");
        let english = note(Ending::Signal(n), Lang::En).unwrap_or_default();
        assert!(
            english.contains(entry.name) && english.contains(entry.meaning),
            "{english}"
        );
        let chinese = note(Ending::Signal(n), Lang::Zh).unwrap_or_default();
        assert!(chinese.contains(entry.zh), "{chinese}");
        assert!(!entry.message.is_empty(), "{}: strsignal text", entry.name);
    }
    let statuses = oomwhy::codes::table("ntstatus").expect("the NTSTATUS table");
    for entry in &statuses.entries {
        let unsigned = entry.number;
        let signed = i64::from(u32::try_from(unsigned).expect("32 bits") as i32);
        for code in [unsigned, signed] {
            let english = note(Ending::Code(code), Lang::En).unwrap_or_default();
            assert!(
                english.contains(entry.name) && english.contains(entry.meaning),
                "{english}"
            );
        }
        assert!(
            oomwhy::codes::by_name(entry.name).is_none(),
            "{}",
            entry.name
        );
    }
}

/// The wrapper tables through the whole decoder: TensorRT's `Error Code N`
/// log line and JAX's `XlaRuntimeError: NAME: message`, each row found (a
/// memory row as an out-of-memory finding, a bad-argument row not at all),
/// and a wrapper whose message says memory ran out left to the
/// out-of-memory families.
#[test]
fn wrapper_statuses_are_recognised_in_their_forms() {
    use oomwhy::codes::{table, Class};
    let trt = table("tensorrt").expect("the TensorRT table");
    let xla = table("absl_status").expect("the absl table");
    let mut lines = Vec::new();
    for e in &trt.entries {
        let n = e.number;
        lines.push((e, format!("[11/10/2023-06:30:40] [TRT] [E] {n}: [builder.cpp::buildEngine::42] Error Code {n}: Internal Error (a check failed)")));
        lines.push((e, format!("RuntimeError: {}", e.name)));
    }
    for e in &xla.entries {
        let name = e.name;
        lines.push((
            e,
            format!("jaxlib.xla_extension.XlaRuntimeError: {name}: the call failed"),
        ));
    }
    for (entry, line) in lines {
        let findings = oomwhy::decode_str(&format!("{line}\n"));
        let naming = findings
            .iter()
            .find(|f| f.facts.get("error_name").map(String::as_str) == Some(entry.name));
        match entry.class {
            Class::Usage => assert!(naming.is_none(), "{line}: {findings:?}"),
            // absl's RESOURCE_EXHAUSTED is read by the XLA family's forms only.
            Class::Memory if entry.name == "RESOURCE_EXHAUSTED" => {
                assert!(naming.is_none(), "{line}")
            }
            Class::Memory => assert!(
                findings.iter().any(|f| f.category.is_oom()),
                "{line}: {findings:?}"
            ),
            Class::NotMemory | Class::Maybe => {
                let f = naming.unwrap_or_else(|| panic!("not recognised: {line}: {findings:?}"));
                assert!(!f.category.is_oom(), "{line}");
            }
        }
    }
    for line in [
        "jaxlib.xla_extension.XlaRuntimeError: RESOURCE_EXHAUSTED: Out of memory while trying to allocate 7406166528 bytes.",
        "[11/10/2023-06:30:40] [TRT] [E] 2: [virtualMemoryBuffer.cpp::resizePhysical::140] Error Code 2: OutOfMemory (no further information)",
    ] {
        let findings = oomwhy::decode_str(&format!("{line}\n"));
        assert!(findings.iter().any(|f| f.category.is_oom()), "{line}: {findings:?}");
    }
}

/// ONNX Runtime's status and DirectX 12's HRESULTs through the whole
/// decoder, in lines quoted from real pastes: a device removed under
/// ONNX Runtime's DirectML provider is a crash named by its HRESULT, the
/// provider's E_OUTOFMEMORY and the CUDA arena's refusal are out of memory,
/// and ONNX Runtime's own code stands only where its message names no cause.
#[test]
fn onnxruntime_and_directml_statuses() {
    let find = |line: &str| oomwhy::decode_str(&format!("{line}\n"));
    let name = |line: &str| {
        find(line)
            .iter()
            .find_map(|f| f.facts.get("error_name").cloned())
            .unwrap_or_default()
    };
    // onnxruntime-directml (microsoft/onnxruntime, DirectML provider).
    let removed = "[ONNXRuntimeError] : 1 : FAIL : D:\\a\\_work\\1\\s\\onnxruntime\\core\\providers\\dml\\DmlExecutionProvider\\src\\ExecutionProvider.cpp(962)\\onnxruntime_pybind11_state.pyd!00007FFABA30B0B1: (caller: 00007FFABA30B740) Exception(3) tid(5a68) 887A0005 The GPU device instance has been suspended. Use GetDeviceRemovedReason to determine the appropriate action.";
    assert_eq!(name(removed), "DXGI_ERROR_DEVICE_REMOVED");
    assert!(find(removed).iter().all(|f| !f.category.is_oom()));
    for oom in [
        // diffusers' ONNX pipeline on onnxruntime-directml.
        "2022-10-18 13:56:21.2822368 [E:onnxruntime:, sequential_executor.cc:369 onnxruntime::SequentialExecutor::Execute] Non-zero status code returned while running MemcpyToHost node. Name:'Memcpy_token_29' Status Message: D:\\a\\_work\\1\\s\\onnxruntime\\core\\providers\\dml\\DmlExecutionProvider\\src\\MLOperatorAuthorImpl.cpp(1978)\\onnxruntime_pybind11_state.pyd!00007FFBDC8EBB9F: (caller: 00007FFBDCFFDEFF) Exception(3) tid(4304) 8007000E Not enough memory resources are available to complete this operation.",
        // ragflow on onnxruntime-gpu: the CUDA arena at its limit.
        "[ERROR][Exception]: [ONNXRuntimeError] : 6 : RUNTIME_EXCEPTION : Non-zero status code returned while running Softmax node. Name:'/model.23/dfl/Softmax' Status Message: /onnxruntime_src/onnxruntime/core/framework/bfc_arena.cc:376 void* onnxruntime::BFCArena::AllocateRawInternal(size_t, bool, onnxruntime::Stream*, bool, onnxruntime::WaitNotificationFn) Available memory of 0 is smaller than requested bytes of 5505024",
        // torch-directml (ComfyUI, stable-diffusion-webui-amdgpu).
        "RuntimeError: Could not allocate tensor with 530841600 bytes. There is not enough GPU video memory available!",
    ] {
        let findings = find(oom);
        assert!(findings.iter().any(|f| f.category.is_oom()), "{oom}: {findings:?}");
        assert!(
            findings.iter().all(|f| f.facts.get("table").map(String::as_str) != Some("onnxruntime")),
            "{oom}"
        );
    }
    // ONNX Runtime's own code where the message names no other cause.
    let own = "onnxruntime.capi.onnxruntime_pybind11_state.EPFail: [ONNXRuntimeError] : 11 : EP_FAIL : Non-zero status code returned while running MatMul node.";
    assert_eq!(name(own), "ORT_EP_FAIL");
}
