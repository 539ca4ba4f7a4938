//! Windows' fail-fast exit (0xC0000409).

use super::common::{fix, verdict};
use super::docs::Code;
use super::Explain;
use crate::record::{Diagnosis, Finding, Fix, Verdict};

/// Explains `Kind::WindowsFailFast` findings.
pub(super) struct WindowsFailFast;

impl Explain for WindowsFailFast {
    fn headline(&self, _f: &Finding) -> String {
        "The process was ended by Windows' fail-fast (0xC0000409): a native crash with no Python error".into()
    }
    fn verdicts(&self, _f: &Finding, _d: &Diagnosis, out: &mut Vec<Verdict>) {
        out.push(verdict(
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
    out.push(fix(
        "Get a native stack trace",
        "Run from a terminal instead of the IDE with `python -X faulthandler train.py`; open Event Viewer → Windows Logs → Application and read the 'Faulting module' of the crash (nvcuda64.dll, cudnn*.dll, ucrtbase.dll ...).",
    ));
    out.push(fix(
        "Match CUDA, cuDNN and the driver to your PyTorch/TensorFlow build",
        "Compare torch.version.cuda (or tf.sysconfig.get_build_info()) with the installed toolkit/cuDNN and update the GPU driver; mixed pip/conda CUDA libraries are a common cause.",
    ));
    out.push(fix(
        "Rule out memory exhaustion inside native code",
        "Retry with a smaller batch or model: an allocation failure inside a native library can end in abort() instead of a Python OOM error.",
    ));
}
