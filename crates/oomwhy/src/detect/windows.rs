//! Windows endings of GPU jobs (docs/formats.md §9): the fail-fast
//! exit code 0xC0000409, the access violation 0xC0000005, and
//! `[WinError 1455]`, the paging file too small to map a CUDA DLL.
//!
//! Exit codes appear signed (`-1073740791`, as IDEs print them), unsigned
//! (`3221226505`) or in hex. The bare decimal numbers are only taken next to
//! words that make them an exit code, so a log that happens to contain the
//! number elsewhere is not reported.

use super::{Family, Message};
use crate::constant_regex;
use crate::record::{fact, Finding, Kind};
use regex::Regex;
use std::sync::OnceLock;

fn anchor() -> &'static Regex {
    static RE: OnceLock<Regex> = OnceLock::new();
    RE.get_or_init(|| {
        constant_regex(concat!(
            r"(?i)(?:(?:exit(?:ed)?|return(?:ed)?|error|status|finished)[\w ]{0,20}?(?:code|status)?\s*[:=]?\s*(?:-1073740791|3221226505)\b",
            r"|\b0xC0000409\b",
            r"|\bSTATUS_STACK_BUFFER_OVERRUN\b)"
        ))
    })
}

/// The two statuses with families of their own (`codes/ntstatus.tsv`).
const STATUS_STACK_BUFFER_OVERRUN: i64 = 0xC000_0409;
const STATUS_ACCESS_VIOLATION: i64 = 0xC000_0005;

/// The `exit_code` (hex), `exit_code_signed` and `ntstatus` facts of a
/// status, named by the NTSTATUS table.
fn insert_status_facts(finding: &mut Finding, status: i64) {
    let Some(entry) = crate::codes::table("ntstatus").and_then(|t| t.by_number(status)) else {
        return;
    };
    // The signed spelling IDEs print: the same 32 bits read as an i32.
    let signed = u32::try_from(status).map_or(status, |bits| i64::from(bits as i32));
    finding
        .facts
        .insert("exit_code".into(), format!("0x{status:08X}"));
    finding
        .facts
        .insert("exit_code_signed".into(), signed.to_string());
    finding
        .facts
        .insert(fact::NTSTATUS.into(), entry.name.into());
}

/// A family's triggers after the phrases that come before an unsigned
/// decimal status (`exit status 3221225477`, `exited with code 3221226505`,
/// `exitcode: ...`). Each phrase contains a prefilter key already searched
/// for, so they add no literal; a literal starting with digits would slow
/// the prefilter.
macro_rules! after_exit_phrases {
    ($($trigger:literal),* $(,)?) => {
        &["exit ", "exited with", "Exit ", "EXIT ", "exitcode", $($trigger),*]
    };
}

/// A process that ended with 0xC0000409.
pub struct FailFast;

impl Family for FailFast {
    fn triggers(&self) -> &'static [&'static str] {
        // The unsigned spelling (3221226505) comes after an exit phrase.
        after_exit_phrases![
            "-1073740791",
            "0xC0000409",
            "0xc0000409",
            "C0000409",
            "STATUS_STACK_BUFFER_OVERRUN",
        ]
    }

    fn start(&self, line: &str) -> Option<usize> {
        anchor().find(line).map(|m| m.start())
    }

    fn decode(&self, message: &Message<'_>) -> Option<Finding> {
        // The whole line: "Process finished with exit code ..." reads better than its tail.
        let text = format!("{}{}", message.prefix, message.lines.first()?)
            .trim()
            .to_string();
        let mut finding = message.finding(Kind::WindowsFailFast, text);
        finding.exception = None;
        insert_status_facts(&mut finding, STATUS_STACK_BUFFER_OVERRUN);
        Some(finding)
    }
}

fn access_violation_anchor() -> &'static Regex {
    static RE: OnceLock<Regex> = OnceLock::new();
    RE.get_or_init(|| {
        constant_regex(concat!(
            r"(?i)(?:(?:exit(?:ed)?|return(?:ed)?|error|status|finished)[\w ]{0,20}?(?:code|status)?\s*[:=]?\s*(?:-1073741819|3221225477)\b",
            r"|\b0xC0000005\b",
            r"|\bSTATUS_ACCESS_VIOLATION\b",
            // Windows' Application Error event (Event Viewer's XML view).
            r"|\bExceptionCode\s+c0000005\b",
            r"|Windows fatal exception: access violation",
            // Visual Studio's debugger stopping on the exception (its
            // dialog's `Exception thrown: read access violation.`).
            r"|\bException thrown: (?:read|write) access violation\b)"
        ))
    })
}

/// A process that ended with 0xC0000005 (`Process finished with exit code
/// -1073741819 (0xC0000005)`, faulthandler's `Windows fatal exception: access violation`).
pub struct AccessViolation;

impl Family for AccessViolation {
    fn triggers(&self) -> &'static [&'static str] {
        // 3221225477 comes after an exit phrase, as above.
        after_exit_phrases![
            "-1073741819",
            "0xC0000005",
            "0xc0000005",
            "ExceptionCode c0000005",
            "STATUS_ACCESS_VIOLATION",
            "Windows fatal exception: access violation",
            // On the piece `ion ` the prefilter already searches for.
            "Exception thrown: ",
        ]
    }

    fn start(&self, line: &str) -> Option<usize> {
        access_violation_anchor().find(line).map(|m| m.start())
    }

    fn decode(&self, message: &Message<'_>) -> Option<Finding> {
        let text = message.lines.first()?.trim_end().to_string();
        let debugger = text.contains("Exception thrown: ");
        let mut finding = message.finding(Kind::WindowsAccessViolation, text);
        finding.exception = None;
        if debugger {
            // The debugger stopped the process on it: nothing ended yet.
            finding
                .facts
                .insert(fact::REPORTED_BY.into(), "Visual Studio debugger".into());
        }
        insert_status_facts(&mut finding, STATUS_ACCESS_VIOLATION);
        Some(finding)
    }
}

fn paging_anchor() -> &'static Regex {
    static RE: OnceLock<Regex> = OnceLock::new();
    RE.get_or_init(|| {
        constant_regex(
            r"\[WinError 1455\]|\(os error 1455\)|(?:os::commit_memory\(.*)?(?i:the paging file is too small for this operation to complete)",
        )
    })
}

fn commit_re() -> &'static Regex {
    static RE: OnceLock<Regex> = OnceLock::new();
    RE.get_or_init(|| constant_regex(r"os::commit_memory\(0x[0-9a-fA-F]+, (\d+), \d+\) failed"))
}

fn dll_re() -> &'static Regex {
    static RE: OnceLock<Regex> = OnceLock::new();
    RE.get_or_init(|| constant_regex(r#"Error loading "([^"]+)""#))
}

/// `OSError: [WinError 1455] The paging file is too small for this operation
/// to complete. Error loading "...\cudnn_cnn_infer64_8.dll" or one of its dependencies.`
pub struct PagingFile;

impl Family for PagingFile {
    fn triggers(&self) -> &'static [&'static str] {
        // `rror 1455` also finds Rust's `(os error 1455)` (safetensors), whose
        // text before it is in the system's language.
        &["rror 1455", "paging file is too small"]
    }

    fn start(&self, line: &str) -> Option<usize> {
        let m = paging_anchor().find(line)?;
        // The localised sentence before `(os error 1455)` is the message.
        Some(if m.as_str().starts_with("(os error") {
            0
        } else {
            m.start()
        })
    }

    fn continues(&self, lines: &[String], next: &str) -> bool {
        lines.len() == 1 && next.trim_start().starts_with("Error loading \"")
    }

    fn decode(&self, message: &Message<'_>) -> Option<Finding> {
        let joined = message.joined();
        let mut finding = message.finding(Kind::WindowsPagingFile, joined.clone());
        finding.facts.insert("winerror".into(), "1455".into());
        finding
            .facts
            .insert(fact::ERROR_NAME.into(), "ERROR_COMMITMENT_LIMIT".into());
        // The JVM's `os::commit_memory(ADDR, N, 0) failed; error='The paging file ...'`.
        if let Some(c) = commit_re().captures(&joined) {
            finding.sizes.requested_bytes = c[1].parse().ok();
            finding.facts.insert(
                fact::REPORTED_BY.into(),
                "Java VM (os::commit_memory)".into(),
            );
        }
        if let Some(c) = dll_re().captures(&joined) {
            let dll = &c[1];
            finding.facts.insert("dll".into(), dll.to_string());
            let file = dll.rsplit(['\\', '/']).next().unwrap_or(dll);
            finding
                .facts
                .insert(fact::DLL_NAME.into(), file.to_string());
        }
        Some(finding)
    }
}

/// A failed check (protobuf's `CHECK failed:`, glog's `Check failed:`) whose
/// condition is the HRESULT of a Direct3D 12 call that allocates GPU memory
/// (`CHECK failed: ((((HRESULT)((d3d_device->CreateCommittedResource( ...
/// )))) >= 0)) == (true)`, pytorch-directml's `dml_backend.cc`):
/// `CreateCommittedResource`, `CreatePlacedResource`,
/// `CreateReservedResource` and `CreateHeap` create a resource or the heap
/// behind it, and their usual failure is E_OUTOFMEMORY. The code itself is
/// not printed, so the allocation failed and an out of memory is likely,
/// not stated. A check on any other call (`CreateOperator`) or without an
/// HRESULT says nothing of memory and stays silent.
pub struct D3d12AllocCheck;

fn d3d12_alloc_check() -> &'static Regex {
    static RE: OnceLock<Regex> = OnceLock::new();
    RE.get_or_init(|| {
        constant_regex(
            r"\b(?:CHECK|Check) failed: [^\n]*?\bHRESULT\b[^\n]*?\b(Create(?:Committed|Placed|Reserved)Resource\d?|CreateHeap\d?)\s*\(",
        )
    })
}

impl Family for D3d12AllocCheck {
    fn triggers(&self) -> &'static [&'static str] {
        // On the piece ` fai` the prefilter already searches for.
        &["CHECK failed: ", "Check failed: "]
    }

    fn start(&self, line: &str) -> Option<usize> {
        d3d12_alloc_check().find(line).map(|m| m.start())
    }

    fn decode(&self, message: &Message<'_>) -> Option<Finding> {
        let text = message.joined();
        let c = d3d12_alloc_check().captures(&text)?;
        let mut finding = message.finding(Kind::LibraryAllocFailed, text.trim_end().to_string());
        finding
            .facts
            .insert(fact::REPORTED_BY.into(), "Direct3D 12".into());
        finding.facts.insert(fact::CALL.into(), c[1].to_string());
        finding.facts.insert(fact::MEMORY.into(), "device".into());
        Some(finding)
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn a_failed_check_on_a_d3d12_allocation() {
        let found = crate::scan(
            "[libprotobuf FATAL D:\\a\\_work\\1\\s\\pytorch-directml\\caffe2\\dml\\dml_backend.cc:171] CHECK failed: ((((HRESULT)((d3d_device->CreateCommittedResource( &properties, D3D12_HEAP_FLAG_NONE, &resource_buffer, D3D12_RESOURCE_STATE_UNORDERED_ACCESS, nullptr, __uuidof(*out), reinterpret_cast<void**>(out))))) >= 0)) == (true): \n".as_bytes(),
            "t",
        )
        .unwrap()
        .findings;
        assert_eq!(found.len(), 1);
        assert_eq!(found[0].kind, crate::record::Kind::LibraryAllocFailed);
        assert_eq!(found[0].facts["call"], "CreateCommittedResource");
        // A check on a call that allocates nothing (pytorch-directml's
        // `CreateOperator`, as a DirectML user pasted it) and a bare check stay
        // silent.
        for line in [
            "CHECK failed: ((((HRESULT)((backend_->dml_device->CreateOperator(&op_desc_, __uuidof(**(&op)), IID_PPV_ARGS_Helper(&op))))) >= 0)) == (true)\n",
            "[libprotobuf FATAL google/protobuf/repeated_field.h:1506] CHECK failed: (index) < (current_size_): \n",
        ] {
            assert!(crate::scan(line.as_bytes(), "t").unwrap().findings.is_empty(), "{line}");
        }
    }

    use super::*;

    #[test]
    fn visual_studios_debugger_reports_an_access_violation() {
        let found = crate::scan(
            "Exception thrown: read access violation.\nresourceWrapper.ptr_ was nullptr.\n"
                .as_bytes(),
            "t",
        )
        .unwrap()
        .findings;
        assert_eq!(found.len(), 1);
        assert_eq!(found[0].kind, Kind::WindowsAccessViolation);
        assert_eq!(found[0].facts[fact::REPORTED_BY], "Visual Studio debugger");
        // The debugger's other first-chance exceptions are no access violation.
        let other = "Exception thrown: 'System.IO.IOException' in mscorlib.dll\n".as_bytes();
        assert!(crate::scan(other, "t").unwrap().findings.is_empty());
    }

    #[test]
    fn recognises_every_spelling() {
        for line in [
            "Process finished with exit code -1073740791 (0xC0000409)",
            "Process finished with exit code -1073740791",
            "error: process exited with code 3221226505",
            "The program '[1234] python.exe' has exited with code 3221226505 (0xc0000409).",
            "Exception code: 0xc0000409",
        ] {
            assert!(FailFast.start(line).is_some(), "{line}");
        }
    }

    /// Through the whole scanner: the prefilter and the family gate must
    /// send the unsigned decimal spellings to these families.
    #[test]
    fn decimal_statuses_are_found_in_a_log() {
        for (line, kind) in [
            ("(sd3-Flux) returned non-zero exit status 3221225477.", Kind::WindowsAccessViolation),
            ("[error] Unhandled exception during server start Error: Python process exited with code 3221225477 and signal null", Kind::WindowsAccessViolation),
            ("error: process exited with code 3221226505", Kind::WindowsFailFast),
        ] {
            let found = crate::decode_str(&format!("step 1\n{line}\n"));
            assert_eq!(found.first().map(|f| f.kind), Some(kind), "{line}");
        }
    }

    #[test]
    fn facts_come_from_the_ntstatus_table() {
        let line = vec!["Process finished with exit code -1073740791 (0xC0000409)".to_string()];
        let m = Message {
            input: "t",
            line: 1,
            prefix: "",
            lines: &line,
        };
        let f = FailFast.decode(&m).unwrap();
        assert_eq!(f.facts["exit_code"], "0xC0000409");
        assert_eq!(f.facts["exit_code_signed"], "-1073740791");
        assert_eq!(f.facts["ntstatus"], "STATUS_STACK_BUFFER_OVERRUN");
        let line = vec!["Process finished with exit code -1073741819 (0xC0000005)".to_string()];
        let m = Message {
            input: "t",
            line: 1,
            prefix: "",
            lines: &line,
        };
        let f = AccessViolation.decode(&m).unwrap();
        assert_eq!(f.facts["exit_code"], "0xC0000005");
        assert_eq!(f.facts["exit_code_signed"], "-1073741819");
        assert_eq!(f.facts["ntstatus"], "STATUS_ACCESS_VIOLATION");
    }

    #[test]
    fn ignores_the_number_alone() {
        assert!(FailFast.start("step 3221226505 loss 0.1").is_none());
        assert!(FailFast.start("id=-1073740791").is_none());
    }

    #[test]
    fn access_violation_spellings() {
        for line in [
            "Process finished with exit code -1073741819 (0xC0000005)",
            "error: process exited with code 3221225477",
            "Exception code: 0xc0000005",
            "Windows fatal exception: access violation",
        ] {
            assert!(AccessViolation.start(line).is_some(), "{line}");
        }
        assert!(AccessViolation.start("step 3221225477 loss 0.1").is_none());
        assert!(AccessViolation.start("id=-1073741819").is_none());
    }

    #[test]
    fn paging_file() {
        let line = r#"OSError: [WinError 1455] The paging file is too small for this operation to complete. Error loading "C:\Users\me\venv\lib\site-packages\torch\lib\cudnn_cnn_infer64_8.dll" or one of its dependencies."#;
        let start = PagingFile.start(line).unwrap();
        let body = vec![line[start..].to_string()];
        let m = Message {
            input: "t",
            line: 1,
            prefix: &line[..start],
            lines: &body,
        };
        let f = PagingFile.decode(&m).unwrap();
        assert_eq!(f.kind, Kind::WindowsPagingFile);
        assert_eq!(f.exception.as_deref(), Some("OSError"));
        assert_eq!(f.facts["dll_name"], "cudnn_cnn_infer64_8.dll");
    }
}
