//! Windows endings of GPU jobs: the fail-fast exit (0xC0000409), access
//! violations (0xC0000005) and a paging file too small to map the CUDA
//! libraries.

use super::common::{fact, fix_en, verdict_en};
use super::docs::Code;
use super::Explain;
use crate::record::{fact, Diagnosis, Finding, Fix, Verdict};

/// Explains `Kind::WindowsFailFast` findings.
pub(super) struct WindowsFailFast;

impl Explain for WindowsFailFast {
    fn headline_en(&self, _f: &Finding) -> String {
        "The process was ended by Windows' fail-fast (0xC0000409): a native crash with no Python error".into()
    }
    fn verdicts(&self, _f: &Finding, _d: &Diagnosis, out: &mut Vec<Verdict>) {
        out.push(verdict_en(
            Code::NativeFailFast,
            "Native code stopped the process on purpose",
            "0xC0000409 is Windows' fail-fast status: native code (the C runtime's abort(), std::terminate(), a failed check in a DLL) ended the process at once, bypassing Python, so there is no Python traceback and no error message. Despite its name (STATUS_STACK_BUFFER_OVERRUN) it rarely means a stack overrun.".into(),
        ))
    }
    fn fixes(&self, _f: &Finding, _d: &Diagnosis, out: &mut Vec<Fix>) {
        fail_fast_fixes(out)
    }
}

fn fail_fast_fixes(out: &mut Vec<Fix>) {
    out.push(fix_en(
        "Get a native stack trace",
        "Run from a terminal instead of the IDE with `python -X faulthandler train.py`; open Event Viewer → Windows Logs → Application and read the 'Faulting module' of the crash (nvcuda64.dll, cudnn*.dll, ucrtbase.dll ...).",
    ));
    out.push(fix_en(
        "Match CUDA, cuDNN and the driver to your PyTorch/TensorFlow build",
        "Compare torch.version.cuda (or tf.sysconfig.get_build_info()) with the installed toolkit/cuDNN and update the GPU driver; mixed pip/conda CUDA libraries are a common cause.",
    ));
    out.push(fix_en(
        "Rule out memory exhaustion inside native code",
        "Retry with a smaller batch or model: an allocation failure inside a native library can end in abort() instead of a Python OOM error.",
    ));
}

/// Explains `Kind::WindowsAccessViolation` findings.
pub(super) struct WindowsAccessViolation;

impl Explain for WindowsAccessViolation {
    fn headline_en(&self, _f: &Finding) -> String {
        "The process was ended by an access violation (0xC0000005): a native crash with no Python error".into()
    }
    fn verdicts(&self, _f: &Finding, _d: &Diagnosis, out: &mut Vec<Verdict>) {
        out.push(verdict_en(
            Code::NativeAccessViolation,
            "Native code accessed memory it does not own",
            "0xC0000005 (STATUS_ACCESS_VIOLATION) means native code read or wrote an address it had no access to and Windows ended the process, so Python printed no traceback. In GPU jobs the usual suspects are a CUDA extension or DLL built for another PyTorch/CUDA version, mixed CUDA/cuDNN DLLs found on PATH, DataLoader worker processes, or a driver crash. It is not an out-of-memory message, although a native allocation failure that goes unchecked can end this way.".into(),
        ))
    }
    fn fixes(&self, _f: &Finding, _d: &Diagnosis, out: &mut Vec<Fix>) {
        out.push(fix_en(
                "Get a native stack trace",
                "Run from a terminal with `python -X faulthandler train.py` (it prints the Python stack on the crash); Event Viewer → Windows Logs → Application names the faulting module (nvcuda64.dll, cudnn*.dll, an extension's .pyd).",
            ));
        out.push(fix_en(
                "Rule out DataLoader workers",
                "Try num_workers=0: on Windows each worker is a separate process, and crashes in them end this way.",
            ));
        out.push(fix_en(
                "Match the native pieces",
                "Reinstall PyTorch and every CUDA extension from wheels built for the same CUDA version, remove other CUDA/cuDNN DLL folders from PATH, update the GPU driver.",
            ));
    }
}

/// Explains `Kind::WindowsPagingFile` findings.
pub(super) struct WindowsPagingFile;

impl Explain for WindowsPagingFile {
    fn headline_en(&self, f: &Finding) -> String {
        format!(
            "Windows ran out of virtual memory (paging file too small){}: host memory, not GPU memory",
            fact(f, fact::DLL_NAME)
                .map(|d| format!(" while loading {d}"))
                .unwrap_or_default()
        )
    }
    fn verdicts(&self, f: &Finding, _d: &Diagnosis, out: &mut Vec<Verdict>) {
        out.push(verdict_en(
            Code::PagingFileTooSmall,
            "Windows could not commit virtual memory: host memory, not GPU memory",
            format!(
                "Windows refused to commit more virtual memory while loading {}. Every process that imports torch maps the CUDA and cuDNN DLLs, several GB of commit charge, and on Windows every DataLoader worker is a new process that imports torch again. When RAM plus the paging file cannot cover the total, loading fails with WinError 1455. The GPU's memory is not involved.",
                fact(f, fact::DLL_NAME).unwrap_or("a DLL")
            ),
        ))
    }
    fn fixes(&self, _f: &Finding, _d: &Diagnosis, out: &mut Vec<Fix>) {
        out.push(fix_en(
                "Raise the Windows paging file",
                "System Properties → Advanced → Performance Settings → Advanced → Virtual memory → Change: set \"System managed size\" or a custom maximum of tens of GB on the drive with space, then restart.",
            ));
        out.push(fix_en(
                "Use fewer DataLoader workers",
                "Each worker imports torch and maps the CUDA DLLs again: num_workers=0 to 2, or persistent_workers=True so they start once.",
            ));
        out.push(fix_en(
            "Free host memory",
            "Close other programs; add RAM if it keeps happening.",
        ));
    }
}

/// This family's fixes, for the catalogue (`catalogue::ALL`).
pub(super) const FIXES: &[super::catalogue::FixSpec] = &[];
