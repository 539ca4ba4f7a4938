//! A code from one of the status tables (`crate::codes`, docs/codes.md)
//! reported in any of the forms programs print it:
//!
//! * its name: `cudaErrorInsufficientDriver`, `CUDA_ERROR_OUT_OF_MEMORY`,
//!   `hipErrorOutOfMemory`, `ZE_RESULT_ERROR_OUT_OF_DEVICE_MEMORY`,
//!   `VK_ERROR_OUT_OF_DEVICE_MEMORY`, `CUDNN_STATUS_INTERNAL_ERROR`;
//! * its number where the line names the API: `CUDA error 2`, `CUDA failure
//!   35:`, `cudaGetDeviceProperties returned 35`, `cuda runtime error (35)`,
//!   `THCudaCheck FAIL ... error=59`. A bare number is never a code;
//! * the library's own error string printed as an error: `CUDA error: an
//!   illegal memory access was encountered`, `what():  FILE(322): unspecified
//!   launch failure`, Blender Cycles' `Out of memory in cuStreamCreate(...)`;
//! * PyTorch's `Search for `hipErrorOutOfMemory' in URL for more information.`
//!   left alone when the message above it was cut off.
//!
//! It runs after the specific families, so a message they know keeps its
//! kind; the codes they leave are classed by the table (memory, not memory,
//! maybe) into the kinds the rest of oomwhy uses.

use super::text::{continues_with_boilerplate, message_text};
use super::{is_mention, re, Family, Message};
use crate::codes::{self, Class, Entry, Table};
use crate::record::{fact, Era, Finding, Kind};
use regex::Regex;
use std::sync::{LazyLock, OnceLock};

/// How the code was printed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Form {
    Name,
    Number,
    Message,
}

impl Form {
    fn as_str(self) -> &'static str {
        match self {
            Form::Name => "name",
            Form::Number => "number",
            Form::Message => "message",
        }
    }
}

/// A code found on a line.
#[derive(Debug, Clone, Copy)]
struct Hit {
    /// Where the message starts on the line.
    start: usize,
    table: &'static Table,
    entry: &'static Entry,
    form: Form,
    /// The class the finding is reported by: the entry's, unless the line
    /// says more (`effective_class`).
    class: Class,
    /// A CUDA runtime number the line printed, in the numbering before
    /// CUDA 10.1, that the runtime's own string shows to be the entry
    /// (`error=77 : an illegal memory access was encountered`).
    numbered_before_10_1: Option<i64>,
    /// What a bare CUDA runtime number meant before CUDA 10.1, where that
    /// differs from the entry (its meaning since): the line does not say
    /// which release printed it.
    meant_before_10_1: Option<&'static str>,
}

impl Hit {
    fn new(start: usize, table: &'static Table, entry: &'static Entry, form: Form) -> Hit {
        Hit {
            start,
            table,
            entry,
            form,
            class: entry.class,
            numbered_before_10_1: None,
            meant_before_10_1: None,
        }
    }
}

/// The family's patterns, each compiled on its first use: a line reaches
/// few of them (most need a word or a digit the line lacks, checked first),
/// and compiling all of them on the first line the family read took about
/// 3 ms, a share of a one-core scan that ends in a crash.
struct Patterns {
    /// Every name of every table.
    names: LazyLock<NameFinder>,
    /// A word that names an API, then a word that introduces its status and
    /// the number: `CUDA error 2`, `cudaMalloc returned 2`, `error=2`, `err(2)`.
    number: LazyLock<Regex>,
    /// A status type, then its value: Kaldi's `cudaError_t 4 : "unspecified
    /// launch failure" returned from 'cudaMemcpy(...)'`, `CUresult 2`,
    /// `hipError_t = 1`. The type says that a code of its table follows.
    typed_number: LazyLock<Regex>,
    /// absl's `NAME: message` after JAX's runtime error class: the only
    /// form in which an XLA status name is read (the names are ordinary
    /// words elsewhere).
    xla_status: LazyLock<Regex>,
    /// ONNX Runtime's status: `[ONNXRuntimeError] : 6 : RUNTIME_EXCEPTION :
    /// ...` (`Status::ToString`), the Java binding's `Error code -
    /// ORT_RUNTIME_EXCEPTION`, Triton's `onnx runtime error 6:`.
    ort_status: LazyLock<Regex>,
    /// An HRESULT in hex: WIL's `Exception(3) tid(5a68) 887A0005 message`
    /// (DirectML, as ONNX Runtime's DirectML provider prints it), SharpDX's
    /// and Vortice's `HRESULT: [0x887A0005]`, `hr = 0x887A0005`.
    hresult: LazyLock<Regex>,
    /// An HRESULT in decimal, signed (`Unknown error -2147024882`: glibc's
    /// `strerror` text for a number that is no errno, which
    /// `std::system_category` prints on Linux and WSL for a DirectX
    /// HRESULT) or unsigned (`2147942414`), after an error word.
    hresult_decimal: LazyLock<Regex>,
    /// Metal's abort message ends with the driver's status, in hex, and its
    /// name: `(00000004:kIOGPUCommandBufferCallbackErrorSubmissionsIgnored)`
    /// (older macOS: `kIOAccelCommandBufferCallbackError...`).
    metal_callback: LazyLock<Regex>,
    /// PyTorch's pointer to the error's documentation.
    search_for: LazyLock<Regex>,
    /// Cycles' `MESSAGE in cuCall(` and `CUDA error at cuCall: MESSAGE`.
    cycles_call: LazyLock<Regex>,
    cycles_at: LazyLock<Regex>,
}

fn patterns() -> &'static Patterns {
    static P: Patterns = Patterns {
        names: LazyLock::new(NameFinder::new),
        xla_status: LazyLock::new(|| {
            let xla_names = codes::table("absl_status")
                .map(|t| {
                    t.entries
                        .iter()
                        .map(|e| e.name)
                        .collect::<Vec<_>>()
                        .join("|")
                })
                .unwrap_or_default();
            re(&format!(
                r"\b(?:Xla|Jax)RuntimeError: (?P<name>{xla_names}): "
            ))
        }),
        number: LazyLock::new(|| {
            re(concat!(
                // The libraries' words first: at one start the first
                // alternative wins, and `cuFFT` is also `cu` + a capital.
                r"(?P<api>\bTensorRT\b|\bTRT\b|\bhipblas\w*|\bhipBLAS\b|\bHIPBLAS\b|\bhipsolver\w*|\bhipSOLVER\b|\bHIPSOLVER\b|\bhipfft\w*|\bhipFFT\b|\bHIPFFT\b|\bcufft\w*|\bcuFFT\b|\bCUFFT\b|\bcusolver\w*|\bcuSOLVER\b|\bCUSOLVER\b",
                r"|\bcusparse\w*|\bcuSPARSE\b|\bCUSPARSE\b|\bcurand\w*|\bcuRAND\b|\bCURAND\b",
                r"|\bnpp[a-z]\w*|\bNPP\b|\bnvjpeg\w*|\bnvJPEG\b|\bNVJPEG\b|\brocblas\w*|\brocBLAS\b|\bmiopen\w*|\bMIOpen\b",
                r"|\bcuda[A-Z]\w*|\bcu[A-Z]\w*|\bCUresult\b|\bCUDA\b|\bCuda\b|\bcuda\b|THCudaCheck",
                r"|\bhip[A-Z]\w*|\bHIP\b|\bcublas\w*|\bCUBLAS\b|\bcuBLAS\b|\bcudnn\w*|\bcuDNN\b|\bCUDNN\b",
                r"|\bnccl[A-Z]\w*|\bNCCL\b|\bze[A-Z]\w*|\bLevel[ -]?Zero\b|\bvk[A-Z]\w*|\bVulkan\b|\bVkResult\b",
                // oneAPI Unified Runtime's calls (`urEnqueueKernelLaunch`),
                // OpenCL's (`clEnqueueNDRangeKernel`) and OpenCL named.
                r"|\bur[A-Z]\w*|\bcl[A-Z]\w*|\bOpenCL\b",
                // CANN's runtime on Ascend NPUs (`ACL stream synchronize
                // failed, error code:507015`, `aclrtMalloc failed`).
                r"|\bACL\b|\bacl(?:rt)?[A-Z]\w*)",
                r"[^\n]{0,100}?\b(?P<word>error|Error|ERROR|failure|Failure|failed|code|err|status|result|returned)",
                r"\s*(?:[=:]\s*|\(\s*|\s+)(?:[Cc]ode\s+|with\s+error\s+)?(?P<number>-?0x[0-9A-Fa-f]+|-?\d+)\b",
            ))
        }),
        typed_number: LazyLock::new(|| {
            re(concat!(
                r"\b(?P<api>cudaError_t|CUresult|hipError_t|cublasStatus_t|cudnnStatus_t|ncclResult_t|ze_result_t|ur_result_t|cl_int|VkResult)",
                // The type written around its number, as TensorFlow-ROCm's
                // early stream executor printed it (`from device:
                // hipError_t(1002)`).
                r"\s*(?:[=:(]\s*)?(?P<number>-?0x[0-9A-Fa-f]+|-?\d+)\b",
            ))
        }),
        ort_status: LazyLock::new(|| {
            re(concat!(
                r"\[ONNXRuntimeError\] : (?P<number>\d+) : (?P<name>[A-Z_]+) :",
                r"|\bError code - ORT_(?P<java>[A-Z_]+)\b",
                r"|\bonnx runtime error (?P<triton>\d+):",
            ))
        }),
        hresult: LazyLock::new(|| {
            re(concat!(
                r"\bException\(\d+\) tid\([0-9a-fA-F]+\) (?P<wil>[0-9A-Fa-f]{8})\b",
                // TensorFlow-DirectML's `HRESULT failed with 0x887a0001: call`.
                r"|\b(?:HRESULT|hr)\s*(?:failed with\s+|[:=]\s*)?\[?0x(?P<hex>[0-9A-Fa-f]{8})\b",
            ))
        }),
        hresult_decimal: LazyLock::new(|| {
            re(
                r"\b(?:[Uu]nknown error|HRESULT|HResult|hr|[Ee]rror [Cc]ode|[Ee]rror)\s*(?:[:=]\s*)?\(?(?P<dec>-?\d{10})\b",
            )
        }),
        metal_callback: LazyLock::new(|| {
            re(r"\((?P<hex>[0-9A-Fa-f]{8}):kIO(?:GPU|Accel)CommandBufferCallbackError\w+\)")
        }),
        search_for: LazyLock::new(|| re(r"\bSearch for `(\w+)' in \S+ for more information")),
        cycles_call: LazyLock::new(|| re(r"^ in (?:cu[A-Z]\w*\(|CUDA queue )")),
        cycles_at: LazyLock::new(|| re(r"\bCUDA error at cu[A-Z]\w*: $")),
    };
    &P
}

/// Finds the tables' names in a line as the pattern `\b(?:NAME|...)\b`
/// (ASCII word boundaries, the longest name first) finds them, without
/// compiling that pattern: an alternation of every name took 40 ms and
/// 4 MiB to compile, the most of any pattern, on the first line the family
/// read. A literal automaton takes 1 ms and a tenth of the memory.
struct NameFinder {
    /// Every name, all occurrences reported (overlapping), so that a name
    /// cut short by a word boundary does not hide a shorter one.
    names: aho_corasick::AhoCorasick,
}

impl NameFinder {
    #[allow(clippy::expect_used)] // constant names, built by every test
    fn new() -> Self {
        let names: Vec<&str> = codes::scanned_tables()
            .flat_map(|t| t.entries.iter().map(|e| e.name))
            .collect();
        let names = aho_corasick::AhoCorasick::builder()
            .kind(Some(aho_corasick::AhoCorasickKind::ContiguousNFA))
            .build(names)
            .expect("the tables' names");
        NameFinder { names }
    }

    /// The names in `line`, as `(start, end)`, in order and not
    /// overlapping: where several names between word boundaries start at
    /// one place the longest is taken, and the next is looked for after it,
    /// as a regex's leftmost-first search of the alternation would.
    fn find_iter<'l>(&self, line: &'l str) -> impl Iterator<Item = (usize, usize)> + 'l {
        let bytes = line.as_bytes();
        let mut found: Vec<(usize, usize)> = self
            .names
            .find_overlapping_iter(line)
            .map(|m| (m.start(), m.end()))
            .filter(|&(start, end)| word_boundary(bytes, start) && word_boundary(bytes, end))
            .collect();
        found.sort_unstable_by_key(|&(start, end)| (start, std::cmp::Reverse(end)));
        let mut after = 0;
        found.into_iter().filter(move |&(start, end)| {
            let next = start >= after;
            if next {
                after = end;
            }
            next
        })
    }
}

/// An ASCII word boundary (`(?-u:\b)`) at `at`: a word byte on one side
/// only, the ends of the text counting as non-word.
fn word_boundary(bytes: &[u8], at: usize) -> bool {
    let word = |i: Option<usize>| {
        i.and_then(|i| bytes.get(i))
            .is_some_and(|&b| b.is_ascii_alphanumeric() || b == b'_')
    };
    word(at.checked_sub(1)) != word(Some(at))
}

/// The libraries whose API word (`cufftExecC2C`, `cuSOLVER`, `nppiResize`,
/// `MIOpen`) starts, in any case, with the table's id.
const LIBRARY_TABLES: &[&str] = &[
    "cufft",
    "cusolver",
    "cusparse",
    "curand",
    "npp",
    "nvjpeg",
    "rocblas",
    "miopen",
    "hipblas",
    "hipsolver",
    "hipfft",
];

/// Which table a number belongs to, by the word that names the API.
fn table_for_api(api: &str, matched: &str) -> Option<&'static Table> {
    let lower = api.to_ascii_lowercase();
    if api == "TRT" || lower == "tensorrt" {
        return codes::table("tensorrt");
    }
    if let Some(id) = LIBRARY_TABLES.iter().find(|id| lower.starts_with(*id)) {
        return codes::table(id);
    }
    let id = if api.starts_with("cublas") || api.eq_ignore_ascii_case("cublas") {
        "cublas"
    } else if api.starts_with("cudnn") || api.eq_ignore_ascii_case("cudnn") {
        "cudnn"
    } else if api.starts_with("nccl") || api == "NCCL" {
        "nccl"
    } else if api.starts_with("hip") || api == "HIP" {
        "hip_runtime"
    } else if api.starts_with("ur") {
        "unified_runtime"
    } else if api.starts_with("cl") || api == "OpenCL" {
        "opencl"
    } else if api.starts_with("ze") || api.starts_with("Level") {
        "level_zero"
    } else if api == "ACL" || api.starts_with("acl") {
        "acl"
    } else if api.starts_with("vk") || api == "Vulkan" || api == "VkResult" {
        "vulkan"
    } else if api == "CUresult"
        || matched.contains("driver error")
        || (api.starts_with("cu") && !api.starts_with("cuda"))
    {
        "cuda_driver"
    } else {
        "cuda_runtime"
    };
    codes::table(id)
}

/// Whether a name at `start..end` of `line` is a report of the code, not a
/// mention of it in code or documentation (`case cudaErrorX:`, `if (err ==
/// cudaErrorX)`, `cudaErrorX = 35,`, `cudaGetErrorString(cudaErrorX)`).
fn reported_name(line: &str, start: usize, end: usize, written: &str) -> bool {
    let before = line[..start].trim_end();
    let after = line[end..].trim_start();
    match received_in_quotes(line, start, end) {
        Quoted::Received(_) => return true,
        Quoted::NotSaid => return false,
        Quoted::Other => {}
    }
    if is_mention(line, start) {
        return false;
    }
    let code_before = ["==", "!=", "case", "return", "<<", "::", "#define", "enum"];
    if code_before.iter().any(|c| before.ends_with(c)) || before.ends_with(" =") {
        return false;
    }
    // A call's argument, unless the call is a printed code (`code=35(name)`).
    if let Some(call) = line[..start].strip_suffix('(') {
        let callee = call.ends_with(|c: char| c.is_alphabetic() || c == '_');
        if callee && !call.ends_with("code") {
            return false;
        }
    }
    // `cupy.cuda.runtime.cudaErrorMemoryAllocation`: an attribute in code.
    if line[..start].ends_with('.') {
        return false;
    }
    // An enum's definition or a comparison after it.
    let definition = (after.starts_with('=') && !after.starts_with("=="))
        || after.starts_with("==")
        || after.starts_with("!=");
    if definition {
        return false;
    }
    // What introduces a reported code: nothing (the line is the code), a
    // separator (`handle: NAME`, `(NAME)`, `code=35(NAME)`, `35 (0x23) NAME`),
    // or a word that says a status follows. Prose (`retry on NAME with a
    // smaller batch`) mentions it.
    const SEPARATORS: &[char] = &[':', '(', '[', '=', ',', '-', '>', '|', ')', '*', '`'];
    if before.is_empty()
        || before.ends_with(SEPARATORS)
        || before.ends_with(|c: char| c.is_ascii_digit())
        || last_column(line, start, end)
        || after_log_location(before)
    {
        return true;
    }
    let lower = before.to_ascii_lowercase();
    const WORDS: &[&str] = &[
        "error",
        "err",
        "code",
        "status",
        "result",
        "returned",
        "returns",
        "with",
        "failed",
        "failure",
        "exception",
        "results in",
        "got",
        "is",
        // A poster saying what they received: `i'm getting
        // VK_ERROR_OUT_OF_DEVICE_MEMORY from vmaCreateImage`.
        "getting",
        "get",
        "gets",
        "hitting",
        "hit",
    ];
    WORDS.iter().any(|w| {
        lower.ends_with(w) && !lower[..lower.len() - w.len()].ends_with(char::is_alphanumeric)
    }) || prints_own_number(before, written)
}

/// Whether a name quoted on its own (`` `hipErrorOutOfMemory` ``,
/// `"VK_ERROR_DEVICE_LOST"`) is what the writer says they received: a verb
/// of receiving or failing right before the quotation (`I just get`, `fails
/// with`, `returned`), in a clause that is no question, condition, negation
/// or instruction to someone else (`if you get`, `why do I get`, `I no longer
/// get`). A quotation ending the line is otherwise read as a mention (a
/// heading, a title), and a name in a list of codes has no such verb.
/// A received name's clause is the report: the sentence, not the quoted
/// name alone.
fn received_in_quotes(line: &str, start: usize, end: usize) -> Quoted {
    static RE: OnceLock<(Regex, Regex)> = OnceLock::new();
    let (verb, not_said) = RE.get_or_init(|| {
        (
            re(concat!(
                r"(?i)(?:^|[^\w'])(?:get|gets|got|getting|hit|hits|hitting|receive|receives|received|receiving",
                r"|see|saw|seeing|returns|returned|returning|throws|threw|raised|raises",
                r"|(?:fails|failed|failing|crashes|crashed|crashing|dies|died|exits|exited|errors|errored|ends|ended|aborts|aborted) with)",
                r"(?:\s+(?:an?|the|this|that))?(?:\s+(?:error|status|code|result))?\s*:?\s*$",
            )),
            re(concat!(
                r"(?i)(?:^|[^\w'])(?:if|unless|whether|why|how|avoid|avoiding|prevent|handle|catch|should|would|could|might|may|can|cannot|will",
                r"|not|never|no longer|don't|doesn't|didn't|won't|can't|shouldn't|you|your|expect|expected)(?:[^\w']|$)",
            )),
        )
    });
    let opening = line[..start].trim_end_matches(' ');
    let Some(quote) = opening.chars().next_back() else {
        return Quoted::Other;
    };
    let closing = match quote {
        '`' | '"' | '\'' => quote,
        '\u{201c}' => '\u{201d}',
        _ => return Quoted::Other,
    };
    if !line[end..].trim_start_matches(' ').starts_with(closing)
        || super::text::in_comment(line, start)
    {
        return Quoted::Other;
    }
    let lead = &opening[..opening.len() - quote.len_utf8()];
    let clause_at = lead
        .rfind(['.', ';', '!', '?', '(', '['])
        .map_or(0, |at| at + 1);
    let clause = &lead[clause_at..];
    // The rest of the sentence: a question, or a condition that makes the
    // code what a call returns in some case (API documentation's `returns
    // NAME if ...`).
    let rest = line[end..].split(['.', '!', ';']).next().unwrap_or("");
    let conditional_rest = rest.contains('?')
        || rest
            .split(|c: char| !c.is_alphanumeric())
            .any(|w| w.eq_ignore_ascii_case("if") || w.eq_ignore_ascii_case("unless"));
    if !verb.is_match(clause) {
        return Quoted::Other;
    }
    if not_said.is_match(clause) || conditional_rest {
        return Quoted::NotSaid;
    }
    Quoted::Received(clause_at + (clause.len() - clause.trim_start().len()))
}

/// What a quoted name is, by the words around the quotation.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Quoted {
    /// What the writer received, in the clause that starts here.
    Received(usize),
    /// After a verb of receiving, but asked, supposed or denied.
    NotSaid,
    /// Anything else: the other rules decide.
    Other,
}

impl Quoted {
    fn clause_start(self) -> Option<usize> {
        match self {
            Quoted::Received(at) => Some(at),
            _ => None,
        }
    }
}

/// Whether `before` ends with the source location that closes a log
/// prefix (glog's and TensorFlow's `E .../dnn.cc:588]`): what follows is
/// the message the program logged, a name alone included. Only where the
/// digits are is read, not their value.
fn after_log_location(before: &str) -> bool {
    let Some(location) = before.strip_suffix(']') else {
        return false;
    };
    let location = location.rsplit([' ', '/']).next().unwrap_or("");
    location.rsplit_once(':').is_some_and(|(file, line)| {
        file.contains('.')
            && !file.starts_with('.')
            && !line.is_empty()
            && line.bytes().all(|b| b.is_ascii_digit())
    })
}

/// Whether a name stands alone in the last column of a table row: spaced
/// from the cell before it by a column's gap, nothing after it (a probe's
/// result column: `cycle 2, another 4GB          UR_RESULT_ERROR_DEVICE_LOST`).
/// A code in a list of codes comes after its number or at the line's
/// start, which are read as reported already.
fn last_column(line: &str, start: usize, end: usize) -> bool {
    let before = &line[..start];
    let gap = before.len() - before.trim_end_matches(' ').len();
    gap >= 3 && !before.trim().is_empty() && line[end..].trim().is_empty()
}

/// Whether the text before a name decodes the code's own number, as its
/// header writes it (`0x70000003 corresponds to
/// ZE_RESULT_ERROR_OUT_OF_DEVICE_MEMORY`, `-2 means VK_ERROR_...`): a value
/// the program returned, then its name. One digit is too common to say so.
/// The connecting words are in [`FIGURE_PHRASES`]: the number's value
/// decides.
fn prints_own_number(before: &str, written: &str) -> bool {
    if written.trim_start_matches('-').len() < 2 {
        return false;
    }
    ["corresponds to", "means"].iter().any(|words| {
        before
            .strip_suffix(words)
            .map(str::trim_end)
            .and_then(|number| number.strip_suffix(written))
            .is_some_and(|rest| !rest.ends_with(|c: char| c.is_ascii_alphanumeric()))
    })
}

/// The number a match printed, when it is a code of its table.
/// TensorRT's logger marks a line as its own: `[TRT]`, or its internal
/// error's source location before the code (`[defaultAllocator.cpp::
/// allocate::19] Error code 1: ...`, the function perhaps with its
/// namespaces: `defaultAllocator.cpp::nvinfer1::internal::DefaultAllocator::
/// allocate::63]`, the opening bracket perhaps cut off). A number such a line prints after
/// `Error Code` is TensorRT's (nvinfer1::ErrorCode), whatever API word
/// comes before it (`cuda Runtime (...)`).
pub(super) fn shows_tensorrt(line: &str) -> bool {
    static RE: OnceLock<Regex> = OnceLock::new();
    line.contains("[TRT]")
        || RE
            .get_or_init(|| re(r"\b\w+\.(?:cpp|cu|h)::(?:\w+::)+\d+\] Error [Cc]ode \d+:"))
            .is_match(line)
}

fn number_hit(line: &str) -> Option<Hit> {
    // Most lines that reach here (`error: out of memory` in prose) have no
    // number: skip the pattern, whose many API words make it the costliest.
    if !line.bytes().any(|b| b.is_ascii_digit()) {
        return None;
    }
    let p = patterns();
    // An API word whose number is not its code may come before the one
    // that prints it (NCCL's `NCCL WARN Cuda failure 999 'unknown error'`:
    // `NCCL` then CUDA's status): look again after that word.
    let mut at = 0;
    while let Some(caps) = p.number.captures_at(line, at) {
        if let Some(hit) = number_in(line, &caps) {
            return Some(hit);
        }
        at = caps.name("api").map_or(line.len(), |m| m.end());
    }
    // Every status type `typed_number` reads holds one of these.
    let typed = [
        "Error_t", "CUresult", "Status_t", "Result_t", "result_t", "cl_int", "VkResult",
    ]
    .iter()
    .any(|t| line.contains(t));
    if !typed {
        return None;
    }
    p.typed_number
        .captures_iter(line)
        .find_map(|caps| number_in(line, &caps))
}

/// The code a match of a number pattern printed, when it is a code of its
/// table and the line reports it.
fn number_in(line: &str, caps: &regex::Captures<'_>) -> Option<Hit> {
    let (all, api, number) = (caps.get(0)?, caps.name("api")?, caps.name("number")?);
    // A version, a size or a time is not a code (`CUDA error 12.1`,
    // `cuda result 3 ms`).
    let after = &line[number.end()..];
    if after.starts_with('.') && after[1..].starts_with(|c: char| c.is_ascii_digit())
        || after.starts_with('%')
    {
        return None;
    }
    if at_nccl_info_level(&line[..number.start()]) {
        return None;
    }
    // `NCCL WARN Cuda failure 1 'invalid argument'`: the number is CUDA's,
    // read at the word `Cuda` on the next look, not an ncclResult_t.
    let between = &line[api.end()..number.start()];
    if api.as_str() == "NCCL"
        && (between.contains("Cuda failure") || between.contains("CUDA failure"))
    {
        return None;
    }
    let value = codes::parse_number(number.as_str()).filter(|&v| v != 0)?;
    let table = if shows_tensorrt(line) {
        codes::table("tensorrt")
    } else {
        table_for_api(api.as_str(), all.as_str())
    }?;
    // The runtime's own string for the code, printed after the number,
    // names the code in the numbering of the release that printed it: CUDA
    // before 10.1 numbered `unspecified launch failure` 4, later releases
    // 719 (and 4 is now another code).
    let printed = printed_string_entry(table, after);
    let entry = printed.or_else(|| table.by_number(value))?;
    if is_mention(line, api.start()) {
        return None;
    }
    let mut hit = Hit::new(api.start(), table, entry, Form::Number);
    if table.id == "cuda_runtime" {
        let before = codes::cuda_runtime_before_10_1(value);
        if printed.is_some() {
            hit.numbered_before_10_1 =
                (entry.number != value && before == Some(entry.name)).then_some(value);
        } else {
            hit.meant_before_10_1 = before.filter(|&old| old != entry.name);
        }
    }
    // OpenVINO's GPU plugin tags its messages `[GPU] ` and prints the
    // OpenCL call it made itself (`[GPU] clEnqueueNDRangeKernel, error
    // code: -54`): a bad argument there is the plugin's failure, not a bug
    // of the program that called OpenVINO, so it is reported.
    if table.id == "opencl"
        && entry.class == Class::Usage
        && line[..api.start()].ends_with("[GPU] ")
    {
        hit.class = Class::NotMemory;
    }
    // NCCL's check of its own CUDA calls (`NCCL WARN Cuda failure 1
    // 'invalid argument'`, `CUDACHECK` in its source): NCCL made the call,
    // so a bad argument there is NCCL's failure in its transport or setup,
    // not a bug of the program that called NCCL.
    if table.id == "cuda_runtime"
        && entry.class == Class::Usage
        && line[..api.start()].ends_with("NCCL WARN ")
    {
        hit.class = Class::NotMemory;
    }
    Some(hit)
}

/// Whether the line is one NCCL logs at its INFO or TRACE level
/// (`host:pid:tid [0] NCCL INFO NET/Plugin: Plugin load returned 2 : ...`):
/// with `NCCL_DEBUG=INFO` it narrates its start-up (plugins it looked for
/// and did without, transports, versions), and a number there is a value it
/// describes, not a status it failed with. NCCL reports its failures at
/// WARN level (`NCCL WARN ...`), and the INFO lines that trace one back
/// (`init.cc:1270 -> 2`) follow that WARN line and print no status word.
fn at_nccl_info_level(before_number: &str) -> bool {
    static RE: OnceLock<Regex> = OnceLock::new();
    RE.get_or_init(|| re(r"\bNCCL (?:INFO|TRACE) "))
        .is_match(before_number)
}

/// The entry whose own string (`cudaGetErrorString`'s) follows a printed
/// number, after a separator and perhaps an opening quote: `4 :
/// "unspecified launch failure"`, `(59) : device-side assert triggered`.
fn printed_string_entry(table: &'static Table, after: &str) -> Option<&'static Entry> {
    let rest = after
        .trim_start_matches(|c: char| c.is_whitespace() || ":=-)".contains(c))
        .trim_start_matches(['"', '\'', '`', '(']);
    table
        .entries
        .iter()
        .filter(|e| !e.message.is_empty() && rest.starts_with(e.message))
        .filter(|e| !rest[e.message.len()..].starts_with(|c: char| c.is_alphanumeric() || c == '_'))
        .max_by_key(|e| e.message.len())
}

/// Words of a message (its length for the rules below).
fn words(text: &str) -> usize {
    text.split_whitespace().count()
}

/// A message long enough to be the library's own wherever it appears, and
/// the first six words of one longer than six (a paste cut or reworded
/// after them: `no kernel image is available for execution this device`).
const DISTINCT_WORDS: usize = 5;
const PREFIX_WORDS: usize = 6;

/// Whether the text before a message prints it as an error: after
/// `CUDA error:`, `failed:`, `->`, a `what():` line's last colon, or an
/// error number (`CUDA failure 35:`, `cuda runtime error (35) :`).
fn printed_as_error(before: &str) -> bool {
    let t = before.trim_end();
    if t.ends_with("->") {
        return true;
    }
    let Some(head) = t.strip_suffix(':') else {
        return false;
    };
    let head = head.trim_end();
    let lower = head.to_ascii_lowercase();
    lower.ends_with("error")
        || lower.ends_with("failed")
        || lower.ends_with("failure")
        || lower.ends_with(')')
        || lower
            .split_whitespace()
            .last()
            .is_some_and(|w| w.chars().all(|c| c.is_ascii_digit()))
        || before.contains("what():")
}

/// A table's own message on the line, printed as an error.
/// Every text a message form can print for a code, with its table and
/// entry: the message, its first six words when it is longer, and (driver
/// table) the name without its prefix, which older Cycles printed
/// (`ILLEGAL_ADDRESS in cuMemAlloc(...)`).
struct MessageIndex {
    searcher: aho_corasick::AhoCorasick,
    texts: Vec<(&'static str, &'static Table, &'static Entry)>,
}

fn message_index() -> Option<&'static MessageIndex> {
    static INDEX: OnceLock<Option<MessageIndex>> = OnceLock::new();
    INDEX
        .get_or_init(|| {
            let mut texts = Vec::new();
            for table in codes::scanned_tables() {
                for entry in &table.entries {
                    if !entry.message.is_empty() {
                        texts.push((entry.message, table, entry));
                    }
                    if let Some(short) = entry.name.strip_prefix("CUDA_ERROR_") {
                        texts.push((short, table, entry));
                    }
                    if words(entry.message) > PREFIX_WORDS && table.id != "cuda_driver" {
                        if let Some(end) = nth_word_end(entry.message, PREFIX_WORDS) {
                            texts.push((&entry.message[..end], table, entry));
                        }
                    }
                }
            }
            let searcher = aho_corasick::AhoCorasick::builder()
                .match_kind(aho_corasick::MatchKind::Standard)
                .build(texts.iter().map(|(text, _, _)| *text))
                .ok()?;
            Some(MessageIndex { searcher, texts })
        })
        .as_ref()
}

/// A table's own message on the line, printed as an error.
fn message_hit(line: &str) -> Option<Hit> {
    let p = patterns();
    let index = message_index()?;
    let mut best: Option<(Hit, usize)> = None;
    for m in index.searcher.find_overlapping_iter(line) {
        let Some(&(text, table, entry)) = index.texts.get(m.pattern().as_usize()) else {
            continue;
        };
        let (at, end) = (m.start(), m.end());
        let bounded = line[..at]
            .chars()
            .next_back()
            .is_none_or(|c| !c.is_alphanumeric())
            && line[end..]
                .chars()
                .next()
                .is_none_or(|c| !c.is_alphanumeric());
        if !bounded {
            continue;
        }
        let before = &line[..at];
        let after = &line[end..];
        let cycles = table.id == "cuda_driver"
            && (((after.starts_with(" in cu") || after.starts_with(" in CUDA queue "))
                && p.cycles_call.is_match(after))
                || (before.contains("CUDA error at cu") && p.cycles_at.is_match(before)));
        let ok = if table.id == "cuda_driver" {
            // cuew's short strings ("Invalid value") only in Cycles' forms.
            cycles
        } else if entry.class == Class::Memory {
            // The runtimes' own "out of memory" is read by the families
            // that know each tool's form of it (`CUDA error: out of
            // memory`, ggml's `cudaMalloc failed: out of memory`); only
            // a C++ exception's `what():` line is left to this one.
            before.contains("what():") && printed_as_error(before)
        } else {
            printed_as_error(before) || words(text) >= DISTINCT_WORDS
        };
        if !ok || is_mention(line, at) {
            continue;
        }
        let start = if cycles {
            line.len() - line.trim_start().len()
        } else {
            at
        };
        let start = error_prefix_start(line, start);
        // At one start the longer message wins (NCCL's `invalid argument
        // (run with ...)` over the runtime's `invalid argument`), then the
        // first table.
        let better =
            best.is_none_or(|(b, len)| start < b.start || (start == b.start && text.len() > len));
        if better {
            best = Some((Hit::new(start, table, entry, Form::Message), text.len()));
        }
    }
    best.map(|(hit, _)| hit)
}

/// The byte offset just after the `n`th word of `text`.
fn nth_word_end(text: &str, n: usize) -> Option<usize> {
    let mut count = 0;
    let mut in_word = false;
    for (i, c) in text.char_indices() {
        if c.is_whitespace() {
            if in_word {
                count += 1;
                if count == n {
                    return Some(i);
                }
            }
            in_word = false;
        } else {
            in_word = true;
        }
    }
    None
}

/// Moves a message's start back to the error prefix that introduces it on
/// the line (`CUDA error: `, `cuda runtime error (35) : `, `what():  `), so
/// the finding's text keeps it.
fn error_prefix_start(line: &str, start: usize) -> usize {
    static PREFIX: OnceLock<Regex> = OnceLock::new();
    let prefix = PREFIX.get_or_init(|| {
        re(r"(?:\b(?:CUDA|HIP|Cuda|cuda|cuDNN|CUDNN|cuBLAS|CUBLAS|NCCL)(?: runtime| driver)? (?:[Ee]rror|ERROR|[Ff]ailure)\b|\bwhat\(\):)[^\n]*$")
    });
    let before = &line[..start];
    prefix
        .find(before)
        .filter(|m| start - m.start() <= 200)
        .map_or(start, |m| m.start())
}

/// Where the clause that reports a name starts: after a log prefix's last
/// `] ` (`E .../cuda_dnn.cc:329] Could not create cudnn handle: NAME`) and
/// after a leading exception class (kept as the finding's exception), or at
/// the error prefix before the name, whichever is earlier.
fn clause_start(line: &str, name_at: usize) -> usize {
    static EXCEPTION: OnceLock<Regex> = OnceLock::new();
    let exception =
        EXCEPTION.get_or_init(|| re(r"^\s*(?:[A-Za-z_]\w*\.)*[A-Za-z_]\w*(?:Error|Exception): "));
    let before = &line[..name_at];
    let mut cut = before.rfind("] ").map_or(0, |i| i + 2);
    if let Some(m) = exception.find(&line[cut..name_at]) {
        cut += m.end();
    }
    let cut = cut + (line[cut..name_at].len() - line[cut..name_at].trim_start().len());
    if name_at - cut > 160 {
        return error_prefix_start(line, name_at);
    }
    cut.min(error_prefix_start(line, name_at))
}

/// The code reported on a line, if any: a name, else a number in its API's
/// context, else a message; the earliest of the forms found.
fn find(line: &str) -> Option<Hit> {
    let p = patterns();
    let search_for = line
        .contains("Search for `")
        .then(|| p.search_for.captures(line));
    if let Some(c) = search_for.flatten() {
        if let (Some(m), Some(name)) = (c.get(0), c.get(1)) {
            if let Some((table, entry)) = codes::by_name(name.as_str()) {
                return Some(Hit::new(m.start(), table, entry, Form::Name));
            }
        }
    }
    let names: Vec<Hit> = p
        .names
        .find_iter(line)
        .filter_map(|(start, end)| {
            let (table, entry) = codes::by_name(line.get(start..end)?)?;
            if !reported_name(line, start, end, entry.written) {
                return None;
            }
            let at = received_in_quotes(line, start, end)
                .clause_start()
                .unwrap_or_else(|| clause_start(line, start));
            Some(Hit::new(at, table, entry, Form::Name))
        })
        .collect();
    // A line that names several codes (`hipErrorTbd
    // (ZE_RESULT_ERROR_OUT_OF_DEVICE_MEMORY )`: a wrapper's code, then the
    // cause) is classed by the one that says memory ran out, else the first.
    let by_class = |class: Class| names.iter().find(|h| h.entry.class == class).copied();
    let name = by_class(Class::Memory)
        .map(|h| Hit {
            start: names
                .first()
                .map_or(h.start, |first| first.start.min(h.start)),
            ..h
        })
        .or_else(|| names.first().copied());
    // A name says the most; a number or a message only when there is none.
    // ONNX Runtime's status is a wrapper: the execution provider's code in
    // its message (`CUDA failure 35:`, an HRESULT) says more, so it comes last.
    let hit = name
        .or_else(|| xla_status_hit(line))
        .or_else(|| hresult_hit(line))
        .or_else(|| device_removed_hit(line))
        .or_else(|| metal_hit(line))
        .or_else(|| number_hit(line))
        .or_else(|| message_hit(line))
        .or_else(|| ort_status_hit(line))?;
    // A wrapper's status (absl's, TensorRT's `Error Code 2: OutOfMemory`)
    // whose message says memory ran out is left to the out-of-memory
    // families, which read that message and its sizes; so is absl's
    // RESOURCE_EXHAUSTED, which the XLA, TensorFlow and grammar families read.
    // ONNX Runtime's own code stands alone only when it says an execution
    // provider (CUDA, TensorRT, DirectML, ROCm) failed: `FAIL` or
    // `RUNTIME_EXCEPTION` with no provider's code in the message is as often
    // a shape error on the CPU, or a message cut short after the status.
    if hit.table.id == "onnxruntime" && hit.entry.name != "ORT_EP_FAIL" {
        return None;
    }
    let wrapper = matches!(hit.table.id, "absl_status" | "tensorrt" | "onnxruntime");
    let left_to_oom_families = wrapper
        && (says_memory_ran_out(line)
            || (hit.table.id == "absl_status" && hit.entry.class == Class::Memory));
    (!left_to_oom_families).then_some(hit)
}

/// JAX's `XlaRuntimeError: INTERNAL: ...` (`JaxRuntimeError` in newer
/// releases): an absl status code printed by `Status::ToString`.
fn xla_status_hit(line: &str) -> Option<Hit> {
    if !line.contains("RuntimeError: ") {
        return None;
    }
    let c = patterns().xla_status.captures(line)?;
    let name = c.name("name")?;
    let table = codes::table("absl_status")?;
    let entry = table.entries.iter().find(|e| e.name == name.as_str())?;
    Some(Hit::new(
        clause_start(line, name.start()),
        table,
        entry,
        Form::Name,
    ))
}

/// ONNX Runtime's status in its printed forms (`Patterns::ort_status`): the
/// printed name is the C API's without its `ORT_` prefix.
fn ort_status_hit(line: &str) -> Option<Hit> {
    // `... Status Message: ` at the end: the message, on the next line,
    // says what failed and is read there.
    if line.trim_end().ends_with("Status Message:") {
        return None;
    }
    let printed = [
        "[ONNXRuntimeError] : ",
        "Error code - ORT_",
        "onnx runtime error ",
    ];
    if !printed.iter().any(|p| line.contains(p)) {
        return None;
    }
    let c = patterns().ort_status.captures(line)?;
    let table = codes::table("onnxruntime")?;
    let entry = if let Some(name) = c.name("name").or_else(|| c.name("java")) {
        let found = table
            .entries
            .iter()
            .find(|e| e.name.strip_prefix("ORT_") == Some(name.as_str()));
        // `[ONNXRuntimeError] : N : NAME :` with a name of a later release:
        // its number still says which code.
        match (found, c.name("number")) {
            (Some(entry), _) => entry,
            (None, Some(n)) => table.by_number(n.as_str().parse().ok()?)?,
            (None, None) => return None,
        }
    } else {
        table.by_number(c.name("triton")?.as_str().parse().ok()?)?
    };
    let at = c.get(0)?.start();
    Some(Hit::new(clause_start(line, at), table, entry, Form::Name))
}

/// Metal's command-buffer status (`Patterns::metal_callback`): its number
/// is the MTLCommandBufferError code. The message starts at Metal's
/// sentence (`Execution of the command buffer was aborted ...`) when the
/// line has it.
fn metal_hit(line: &str) -> Option<Hit> {
    if !line.contains("CommandBufferCallbackError") {
        return None;
    }
    let c = patterns().metal_callback.captures(line)?;
    let value = i64::from_str_radix(c.name("hex")?.as_str(), 16).ok()?;
    let table = codes::table("metal")?;
    let entry = table.by_number(value)?;
    let at = c.get(0)?.start();
    if is_mention(line, at) {
        return None;
    }
    let start = line
        .find("Execution of the command buffer")
        .filter(|&s| s < at)
        .map_or_else(|| clause_start(line, at), |s| clause_start(line, s));
    Some(Hit::new(start, table, entry, Form::Number))
}

/// A Windows HRESULT (`Patterns::hresult`, `Patterns::hresult_decimal`)
/// in any of its printed forms: hex with or without `0x`, unsigned or
/// signed decimal. An HRESULT is a 32-bit value; a failure has its top bit
/// set, so its signed form is negative.
fn hresult_hit(line: &str) -> Option<Hit> {
    let p = patterns();
    let hex = ["Exception(", "HRESULT", "hr"]
        .iter()
        .any(|w| line.contains(w));
    let (value, at) = if let Some(c) = hex.then(|| p.hresult.captures(line)).flatten() {
        let hex = c.name("wil").or_else(|| c.name("hex"))?;
        (
            i64::from_str_radix(hex.as_str(), 16).ok()?,
            c.get(0)?.start(),
        )
    } else {
        // Ten digits in a row, after an error word or `hr`.
        let ten_digits = line
            .as_bytes()
            .split(|b| !b.is_ascii_digit())
            .any(|run| run.len() >= 10);
        if !ten_digits {
            return None;
        }
        let c = p.hresult_decimal.captures(line)?;
        let printed: i64 = c.name("dec")?.as_str().parse().ok()?;
        (hresult_bits(printed)?, c.get(0)?.start())
    };
    let table = codes::table("hresult")?;
    let entry = table.by_number(value)?;
    if is_mention(line, at) {
        return None;
    }
    let mut hit = Hit::new(clause_start(line, at), table, entry, Form::Number);
    // The HRESULT of `GetDeviceRemovedReason()` is why the device was
    // removed (TensorFlow-DirectML's `HRESULT failed with 0x887a0001:
    // dml_device_->GetDeviceRemovedReason()`): whatever the code, the GPU
    // was lost to the program.
    if line[at..].contains("GetDeviceRemovedReason()") {
        hit.class = Class::NotMemory;
    }
    Some(hit)
}

/// The 32 bits of an HRESULT printed in decimal: a signed value from
/// `i32::MIN` to -1, or an unsigned one with its top bit set.
fn hresult_bits(printed: i64) -> Option<i64> {
    let bits = if printed < 0 {
        i32::try_from(printed).ok()? as u32
    } else {
        u32::try_from(printed).ok()?
    };
    (bits & 0x8000_0000 != 0).then_some(i64::from(bits))
}

/// DXGI_ERROR_DEVICE_REMOVED said in words: Direct3D 12's own notice that it
/// removes the device (`D3D12: Removing Device.`, the WSL runtime's), and
/// the code's FormatMessage text in any language, which keeps the API's
/// name (`HRESULT = La instancia de dispositivo de GPU se ha suspendido.
/// Use GetDeviceRemovedReason para ...`): after an HRESULT word, the name
/// followed by a word, not a call.
fn device_removed_hit(line: &str) -> Option<Hit> {
    let table = codes::table("hresult")?;
    let entry = table
        .entries
        .iter()
        .find(|e| e.name == "DXGI_ERROR_DEVICE_REMOVED")?;
    let at = if let Some(at) = line.find("D3D12: Removing Device.") {
        at
    } else {
        let hresult = line.find("HRESULT")?;
        let name = line[hresult..].find("GetDeviceRemovedReason ")? + hresult;
        let next = line[name + "GetDeviceRemovedReason ".len()..]
            .chars()
            .next();
        if !next.is_some_and(char::is_alphabetic) {
            return None;
        }
        hresult
    };
    if is_mention(line, at) {
        return None;
    }
    Some(Hit::new(
        clause_start(line, at),
        table,
        entry,
        Form::Message,
    ))
}

/// Whether a line says, in the words the out-of-memory families read, that
/// memory ran out.
fn says_memory_ran_out(line: &str) -> bool {
    const PHRASES: &[&str] = &[
        "out of memory",
        "outofmemory",
        "out of host memory",
        "failed to allocate",
        "oom when allocating",
        // ONNX Runtime's arena when its limit is reached; DirectML's
        // E_OUTOFMEMORY text inside ONNX Runtime's status.
        "is smaller than requested bytes",
        "not enough memory resources",
    ];
    let lower = line.to_ascii_lowercase();
    PHRASES.iter().any(|p| lower.contains(p))
}

/// The kind a code is reported as: the specific kind where oomwhy has one
/// for it (CUDA's out of memory, illegal address, device-side assert,
/// misaligned address, launch failure, missing kernel image; an NCCL
/// result; a library allocation failure), else by its class.
fn kind_for(table: &Table, entry: &Entry, class: Class) -> Kind {
    let cuda_like = matches!(table.id, "cuda_runtime" | "cuda_driver" | "hip_runtime");
    match class {
        Class::Memory => match table.id {
            "cuda_runtime" | "cuda_driver" => Kind::CudaRuntimeOom,
            // The libraries whose allocation failures oomwhy explains as
            // a workspace that did not fit.
            "cublas" | "cudnn" | "cusolver" => Kind::LibraryAllocFailed,
            _ => Kind::GenericOom,
        },
        _ if table.id == "nccl" => Kind::NcclError,
        _ if cuda_like => match entry.number {
            700 => Kind::IllegalMemoryAccess,
            710 => Kind::DeviceSideAssert,
            716 => Kind::MisalignedAddress,
            719 => Kind::LaunchFailure,
            // HIP's number for it before HIP took CUDA's numbers.
            1004 if table.id == "hip_runtime" => Kind::LaunchFailure,
            209 => Kind::NoKernelImage,
            _ => Kind::GpuRuntimeError,
        },
        _ => Kind::GpuRuntimeError,
    }
}

/// A status-table code that is not out of memory, reported in any form
/// (module docs). Placed before the weakest families.
pub struct StatusCode;

/// A status-table code that says memory ran out. Placed after every other
/// family: one that reads a tool's own form of the same code (sizes, the
/// allocator) keeps it.
pub struct StatusOom;

/// The first line of every form holds one of these (a test checks each
/// table's names and messages against them).
const TRIGGERS: &[&str] = &[
    // Names, by their API's prefix (`STATUS_`: cuBLAS, cuDNN; `_ERROR_`:
    // the driver API, Level Zero, Vulkan).
    "cudaError",
    "hipError",
    "STATUS_",
    "_ERROR_",
    "nccl",
    // The CUDA and ROCm libraries' names whose prefix none of the above
    // has: one rare literal each (cuSOLVER's, cuSPARSE's, cuRAND's and
    // nvJPEG's have `STATUS_`).
    // cuFFT's and hipFFT's names (`CUFFT_`, `HIPFFT_`): one literal whose
    // four bytes are a piece of their own.
    "FFT_",
    "NPP_",
    "rocblas_status_",
    "miopenStatus",
    // An HRESULT's number needs no literal of its own: WIL's `Exception(3)
    // tid(5a68) 887A0005` comes inside ONNX Runtime's status (`rror`) or
    // log line (`returned `), SharpDX's `HRESULT: [0x887A0005]` beside its
    // name (`_ERROR_`: also DirectX's other names; hipBLAS's and hipSOLVER's
    // have `STATUS_`); `hr = 0x887A0005` is read on a line another literal
    // finds.
    // A number or message after an error word: `CUDA error 35`, `HIP error:`,
    // `RuntimeError: NAME`, `failed with error -2`; the CUDA samples'
    // `cudaGetDeviceCount returned 35`; ONNX Runtime's `CUDA failure 35:`.
    "rror",
    "returned ",
    // NCCL's check of its own CUDA calls, whose string may hold no error
    // word (`NCCL WARN Cuda failure 1 'invalid argument'`): its literal is
    // NCCL's WARN key.
    "NCCL WARN Cuda failure ",
    // ncnn's `vkAllocateMemory failed -2` (`NCNN_LOGE("... failed %d",
    // ret)`): a call, then its negative VkResult.
    " failed -",
    "with status",
    "err(",
    "CUDA failure ",
    // A message in a C++ exception, and Cycles' `MESSAGE in cuCall(` and
    // `MESSAGE in CUDA queue ...`.
    "what():",
    " in cu",
    " in CUDA",
    // A long message alone on its line.
    "no kernel image is available",
    // cudaErrorInsufficientDriver's text after a caller's own words
    // (`cudaGetDevice() failed. Status: ...`), on the piece ` is `.
    "driver version is insufficient",
    // TensorFlow-DirectML's failed check (`HRESULT failed with 0x887a0001:
    // ...`), on the piece ` fai`.
    "HRESULT failed with",
    // Direct3D 12's notice that it removes the device (WSL's runtime), on a
    // piece of its own (`3D12`).
    "D3D12: Removing Device.",
];

/// The code reported on a line, when it is of the wanted side: memory, or
/// not memory. A code of the `usage` class is never reported.
fn find_class(line: &str, memory: bool) -> Option<Hit> {
    let mut hit = find(line)?;
    if let Some(at) = stream_executor_request(&line[..hit.start]).map(|(at, _)| at) {
        hit.start = at;
    }
    let class = hit.class;
    (class != Class::Usage && (class == Class::Memory) == memory).then_some(hit)
}

/// TensorFlow's and XLA's stream executor state the failed device
/// allocation before its status (`failed to allocate 7.35G (7889485824
/// bytes) from device: hipError_t(1002)`): one message, whatever form the
/// status takes. Where that text ends right before the status: where it
/// starts, and the request in bytes.
fn stream_executor_request(before: &str) -> Option<(usize, Option<u64>)> {
    static RE: OnceLock<Regex> = OnceLock::new();
    let c = RE
        .get_or_init(|| {
            re(r"\bfailed to allocate [\d.]+ ?[KMGT]?i?B? \((\d+) bytes\) from device: $")
        })
        .captures(before)?;
    Some((c.get(0)?.start(), c[1].parse().ok()))
}

/// The CUDA samples print the code's string on the next line
/// (`cudaGetDeviceCount returned 35` / `-> CUDA driver version ...`).
/// Where `find` reads a figure's value: the codes' names and messages that
/// hold a digit (a test checks the tables), and the numbers `number_hit`
/// reads after its status words. Elsewhere it matches digits as a class.
const FIGURE_PHRASES: &[&str] = &[
    "NPP_MOMENT_00",
    "D3D12_ERROR_",
    // SYCL's Plugin Interface's names of OpenCL's Direct3D and DX9
    // sharing errors (`PI_ERROR_INVALID_D3D10_DEVICE_KHR`).
    "_D3D1",
    "_DX9_",
    // An HRESULT after these words, and a code's own number before them.
    "HRESULT failed with",
    " corresponds to ",
    " means ",
];
const FIGURE_WORDS: &[&str] = &[
    "error", "err", "failure", "failed", "code", "status", "result", "returned", "hresult", "hr",
];

fn continues_status(lines: &[String], next: &str) -> bool {
    (lines.len() == 1 && next.trim_start().starts_with("-> "))
        || continues_with_boilerplate(lines, next)
}

impl Family for StatusCode {
    fn triggers(&self) -> &'static [&'static str] {
        TRIGGERS
    }

    fn start_figure_phrases(&self) -> Option<&'static [&'static str]> {
        Some(FIGURE_PHRASES)
    }

    fn start_figure_words(&self) -> &'static [&'static str] {
        FIGURE_WORDS
    }

    fn start(&self, line: &str) -> Option<usize> {
        find_class(line, false).map(|hit| hit.start)
    }

    fn continues(&self, lines: &[String], next: &str) -> bool {
        continues_status(lines, next)
    }

    fn decode(&self, message: &Message<'_>) -> Option<Finding> {
        decode_status(message, false)
    }
}

impl Family for StatusOom {
    fn triggers(&self) -> &'static [&'static str] {
        TRIGGERS
    }

    fn start_figure_phrases(&self) -> Option<&'static [&'static str]> {
        Some(FIGURE_PHRASES)
    }

    fn start_figure_words(&self) -> &'static [&'static str] {
        FIGURE_WORDS
    }

    fn start(&self, line: &str) -> Option<usize> {
        find_class(line, true).map(|hit| hit.start)
    }

    fn continues(&self, lines: &[String], next: &str) -> bool {
        continues_status(lines, next)
    }

    fn decode(&self, message: &Message<'_>) -> Option<Finding> {
        decode_status(message, true)
    }
}

fn decode_status(message: &Message<'_>, memory: bool) -> Option<Finding> {
    // The forms are read on the whole first line: what comes before the
    // message's start decides whether it is printed as an error.
    let first = format!("{}{}", message.prefix, message.lines.first()?);
    let hit = find_class(&first, memory)?;
    let (table, entry) = (hit.table, hit.entry);
    let kind = kind_for(table, entry, hit.class);
    let mut finding = message.finding(kind, message_text(message.lines));
    finding.backend = (!table.backend.is_empty()).then(|| table.backend.into());
    record_code(&mut finding, table.id, entry);
    record_numbering(&mut finding, &hit);
    finding.device = super::cuda::stated_device(message.lines);
    if memory {
        finding.sizes.free_bytes = stated_free(&first[hit.start.min(first.len())..]);
    }
    if let Some(status) = find(&first) {
        if let Some((_, requested)) = stream_executor_request(&first[..status.start]) {
            finding.sizes.requested_bytes = requested;
        }
    }
    finding
        .facts
        .insert("printed_as".into(), hit.form.as_str().into());
    match kind {
        Kind::CudaRuntimeOom => {
            finding.era = Some(if table.id == "cuda_driver" {
                Era::Driver
            } else {
                Era::Runtime
            });
        }
        Kind::LibraryAllocFailed => {
            finding.facts.insert(fact::LIBRARY.into(), table.id.into());
            finding.facts.insert(fact::STATUS.into(), entry.name.into());
        }
        Kind::GenericOom => {
            finding.era = match (table.id, table.backend) {
                (_, "hip") => Some(Era::Hip),
                ("vulkan", _) => Some(Era::Vulkan),
                ("metal", _) => Some(Era::Metal),
                _ => None,
            };
            finding.facts.insert(
                fact::REPORTED_BY.into(),
                format!("{} ({})", table.title, entry.name),
            );
            // The runtime's own host allocation (Level Zero's, Vulkan's,
            // the Unified Runtime's and SYCL's `..._OUT_OF_HOST_MEMORY`),
            // not the device's memory.
            if entry.name.contains("OUT_OF_HOST_MEMORY") {
                finding.facts.insert(fact::MEMORY.into(), "host".into());
            }
        }
        Kind::NcclError => {
            finding
                .facts
                .insert(fact::NCCL_ERROR.into(), entry.name.into());
        }
        _ => {
            finding
                .facts
                .insert("table_title".into(), table.title.into());
            finding.facts.insert("meaning".into(), entry.meaning.into());
            finding
                .facts
                .insert("code_class".into(), hit.class.as_str().into());
        }
    }
    Some(finding)
}

/// The free memory a writer states in the sentence that gives an
/// out-of-memory status: `error 39 UR_RESULT_ERROR_OUT_OF_DEVICE_MEMORY,
/// Error OP MUL_MAT (ggml-sycl.cpp:5177) with 27GB free.` Only `with N
/// free` (`only` allowed), up to the sentence's end (a stop and a space):
/// a figure in a later sentence may be of another run.
fn stated_free(text: &str) -> Option<u64> {
    static RE: OnceLock<Regex> = OnceLock::new();
    let pattern = RE.get_or_init(|| re(r"\bwith (?:only )?{SIZE} free\b"));
    let sentence = text.split(". ").next().unwrap_or(text);
    let c = pattern.captures(sentence)?;
    crate::units::to_bytes(&c[1], &c[2]).ok()
}

/// Records which code of which table a finding carries: its name, its
/// number as the header writes it, and the table (the explainer looks the
/// code's advice and meaning up by these).
pub(super) fn record_code(finding: &mut Finding, table: &str, entry: &crate::codes::Entry) {
    finding
        .facts
        .insert(fact::ERROR_NAME.into(), entry.name.into());
    finding
        .facts
        .insert("error_code".into(), entry.written.into());
    finding.facts.insert("table".into(), table.into());
}

/// The CUDA runtime's numbering the line's number belongs to: CUDA 10.1
/// renumbered `cudaError_t`, and old releases of PyTorch and TensorFlow
/// print the numbers from before. A number the runtime's own string shows
/// to be the old one stays the number printed; a bare number whose meaning
/// changed is said to be either.
fn record_numbering(finding: &mut Finding, hit: &Hit) {
    let entry = hit.entry;
    if let Some(printed) = hit.numbered_before_10_1 {
        super::text::numbered_before_10_1(finding, printed, entry.name, entry.written);
    } else if let Some(old) = hit.meant_before_10_1 {
        finding.facts.insert("numbering".into(), "ambiguous".into());
        finding.facts.insert("old_cuda_name".into(), old.into());
        finding.notes.push(
            crate::say!(
                en: "The number alone does not say which CUDA release printed it: it is {name} in CUDA 10.1 and later, but was {old} before CUDA 10.1, which renumbered the runtime's errors (old PyTorch and TensorFlow releases print the old numbers).",
                zh: "单看这个数字，看不出是哪个 CUDA 版本打印的：在 CUDA 10.1 及以后它是 {name}，而在 CUDA 10.1 之前它是 {old}（CUDA 10.1 重新编排了运行时的错误码；旧版 PyTorch 和 TensorFlow 打印的是旧编号）。",
                name = entry.name,
                old = old
            )
            .into(),
        );
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::detect::decode_lines;

    /// Each pattern is compiled on its first use, so a pattern no test
    /// line reaches would not be compiled by the tests: compile them all.
    #[test]
    fn every_pattern_compiles() {
        let p = super::patterns();
        let compiled = [
            &p.number,
            &p.typed_number,
            &p.xla_status,
            &p.ort_status,
            &p.hresult,
            &p.hresult_decimal,
            &p.metal_callback,
            &p.search_for,
            &p.cycles_call,
            &p.cycles_at,
        ];
        assert!(compiled.iter().all(|re| !re.as_str().is_empty()));
        assert!(p.names.find_iter("cudaErrorMemoryAllocation").count() > 0);
    }

    /// The alternation the name finder stands in for, as it was compiled.
    fn names_regex() -> Regex {
        let mut names: Vec<&str> = codes::scanned_tables()
            .flat_map(|t| t.entries.iter().map(|e| e.name))
            .collect();
        names.sort_by_key(|n| std::cmp::Reverse(n.len()));
        names.dedup();
        let alternation = names
            .iter()
            .map(|n| regex::escape(n))
            .collect::<Vec<_>>()
            .join("|");
        re(&format!(r"\b(?:{alternation})\b"))
    }

    /// The name finder finds what the alternation of every name found: on
    /// each name in the forms that test word boundaries and longest names,
    /// and on every line of the fixtures and real pastes.
    #[test]
    fn name_finder_finds_what_the_alternation_found() {
        let regex = names_regex();
        let finder = &patterns().names;
        let check = |line: &str| {
            let expected: Vec<(usize, usize)> = regex
                .find_iter(line)
                .map(|m| (m.start(), m.end()))
                .collect();
            let found: Vec<(usize, usize)> = finder.find_iter(line).collect();
            assert_eq!(found, expected, "{line:?}");
            expected.len()
        };
        let mut hits = 0;
        for table in codes::scanned_tables() {
            for entry in &table.entries {
                let n = entry.name;
                for line in [
                    n.to_string(),
                    format!("error: {n}, then {n}:{n}"),
                    format!("x{n} {n}x _{n} {n}_ 1{n} {n}9"),
                    format!("{n}{n} ({n}) `{n}'.{n}"),
                    format!("é{n}é {n}{}", '\u{a0}'),
                    n[..n.len() - 1].to_string(),
                ] {
                    hits += check(&line);
                }
            }
        }
        assert!(hits > 1000, "{hits} names found");
        let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../fixtures");
        let mut lines = 0;
        for dir in [root.clone(), root.join("wild")] {
            let Ok(entries) = std::fs::read_dir(&dir) else {
                continue;
            };
            for entry in entries.flatten() {
                let Ok(bytes) = std::fs::read(entry.path()) else {
                    continue;
                };
                for line in String::from_utf8_lossy(&bytes).lines() {
                    check(line);
                    lines += 1;
                }
            }
        }
        assert!(lines > 10_000, "{lines} fixture lines read");
    }

    fn decode(line: &str) -> Option<Finding> {
        decode_lines(&StatusCode, &[line]).or_else(|| decode_lines(&StatusOom, &[line]))
    }

    #[test]
    fn free_memory_stated_with_the_status_is_read() {
        // A llama.cpp SYCL report's sentence.
        let f = decode("First try with -ngl 99: error 39 UR_RESULT_ERROR_OUT_OF_DEVICE_MEMORY, Error OP MUL_MAT (ggml-sycl.cpp:5177) with 27GB free. Added UR_L0_ENABLE_RELAXED_ALLOCATION_LIMITS=1: MUL_MAT now passes").unwrap();
        assert_eq!(
            f.facts[fact::ERROR_NAME],
            "UR_RESULT_ERROR_OUT_OF_DEVICE_MEMORY"
        );
        assert_eq!(f.sizes.free_bytes, Some(27 << 30));
        // A figure in the next sentence is not the failure's.
        let f = decode("error 39 UR_RESULT_ERROR_OUT_OF_DEVICE_MEMORY on MUL_MAT. Retried with 27GB free and it passed").unwrap();
        assert_eq!(f.sizes.free_bytes, None);
    }

    fn name_of(line: &str) -> Option<String> {
        decode(line).and_then(|f| f.facts.get(fact::ERROR_NAME).cloned())
    }

    /// The forms each table's stack prints its codes in, for one entry.
    fn printed_forms(table: &Table, entry: &Entry) -> Vec<String> {
        let n = entry.written;
        let d = entry.number;
        let name = entry.name;
        let mut forms = vec![format!("RuntimeError: {name}"), format!("error: {name}")];
        if matches!(table.id, "cuda_runtime" | "hip_runtime") {
            // PyTorch's pointer to the error's documentation.
            forms.push(format!(
                "Search for `{name}' in https://docs.example/errors for more information."
            ));
        }
        match table.id {
            "cuda_runtime" => forms.extend([
                format!("CUDA error {n}"),
                format!("CUDA failure {n}: something"),
                format!("cudaGetDeviceProperties returned {n}"),
                format!("cudaMalloc err({n})"),
                format!("cuda runtime error ({n}) : something"),
                format!("THCudaCheck FAIL file=/pytorch/aten/src/THC/THCGeneral.cpp line=844 error={n} : x"),
                format!("CUDA error at bandwidthTest.cu:255 code={n}({name}) \"cudaSetDevice(currentDevice)\""),
            ]),
            "cuda_driver" => forms.extend([
                format!("cuMemAlloc failed with error {n}"),
                format!("CUresult error result={n}"),
                format!("cuInit returned {n}"),
            ]),
            "cublas" => forms.extend([
                format!("cuBLAS error {n}"),
                format!("cublasSgemm returned status {n}"),
            ]),
            "cudnn" => forms.extend([
                format!("cuDNN error {n}"),
                format!("cudnnConvolutionForward failed with status {n}"),
            ]),
            "nccl" => forms.extend([format!("NCCL error {n}"), format!("ncclAllReduce returned {n}")]),
            "hip_runtime" => forms.extend([
                format!("HIP error {n}"),
                format!("hipMalloc returned {n}"),
                format!("*ERROR: HIPError(code {name}, something)*"),
            ]),
            "level_zero" => forms.extend([
                format!("zeMemAllocDevice returned {n}"),
                format!("CHIP error [TID 227578] : hipErrorTbd ({name} ) in x.cc:365:recordStream"),
            ]),
            "unified_runtime" => forms.extend([
                format!("urEnqueueKernelLaunch returned {n}"),
            ]),
            // SYCL's `Native API failed. Native API returns: -6
            // (PI_ERROR_OUT_OF_HOST_MEMORY)` (the number, then its name).
            "sycl_pi" => forms.push(format!(
                "Native API failed. Native API returns: {n} ({name}) {n} ({name})"
            )),
            "vulkan" => forms.extend([
                format!("vkAllocateMemory failed with error {n}"),
                format!("Vulkan error: {name}"),
            ]),
            // The libraries print their numbers in decimal (cuFFT's header
            // writes them in hex).
            "cufft" => forms.extend([
                format!("cuFFT error {d}"),
                format!("cufftPlanMany returned {d}"),
                format!("CUFFT error {d}: {name}"),
            ]),
            "cusolver" => forms.extend([
                format!("cuSOLVER error {d}"),
                format!("cusolverDnCreate returned {d}"),
            ]),
            "cusparse" => forms.extend([
                format!("cuSPARSE error {d}"),
                format!("cusparseSpMM returned status {d}"),
            ]),
            "curand" => forms.extend([
                format!("cuRAND error {d}"),
                format!("curandGenerateNormal returned {d}"),
            ]),
            "npp" => forms.extend([
                format!("NPP error {d}"),
                format!("nppiResize_8u_C3R returned {d}"),
            ]),
            "nvjpeg" => forms.extend([
                format!("nvjpeg error {d}"),
                format!("nvjpegDecode returned {d}"),
            ]),
            "rocblas" => forms.extend([
                format!("rocBLAS error {d}"),
                format!("rocblas_gemm_ex returned {d}"),
                format!("rocBLAS error: {name}"),
            ]),
            // TensorRT's log: `[TRT] [E] N: [file.cpp::function::line] Error Code N: ...`.
            "tensorrt" => forms.push(format!(
                "[11/10/2023-06:30:40] [TRT] [E] {d}: [builder.cpp::buildEngine::42] Error Code {d}: Internal Error (a check failed)"
            )),
            "miopen" => forms.extend([
                format!("MIOpen error {d}"),
                format!("miopenConvolutionForward returned {d}"),
                format!("MIOpen Error: /src/ocl/convolutionocl.cpp:812: {name}"),
            ]),
            "hipblas" => forms.extend([
                format!("hipBLAS error {d}"),
                format!("hipblasSgemm returned {d}"),
                format!("HIPBLAS ERROR: hipblasCreate(&handle) failed with error {name}"),
            ]),
            "hipsolver" => forms.extend([
                format!("hipSOLVER error {d}"),
                format!("hipsolverDnSgetrf returned {d}"),
            ]),
            "hipfft" => forms.extend([
                format!("hipFFT error {d}"),
                format!("hipfftExecC2C returned {d}"),
                format!("hipFFT error during hipfftPlanMany: {name}"),
            ]),
            // WIL's form inside ONNX Runtime's status (its DirectML provider),
            // SharpDX's exception, `hr = ` after a failed check.
            "hresult" => {
                let hex = format!("{d:08X}");
                forms.extend([
                    format!("[ONNXRuntimeError] : 1 : FAIL : D:\\a\\_work\\1\\s\\onnxruntime\\core\\providers\\dml\\DmlExecutionProvider\\src\\ExecutionProvider.cpp(962)\\onnxruntime_pybind11_state.pyd!00007FFABA30B0B1: (caller: 00007FFABA30B740) Exception(3) tid(5a68) {hex} The call failed."),
                    format!("RuntimeError: check failed, hr = 0x{hex}"),
                    // Signed (glibc's strerror on Linux and WSL) and
                    // unsigned decimal.
                    format!("RuntimeError: Unknown error {}", d as u32 as i32),
                    format!("failed with error code {d}"),
                ]);
                // SharpDX names the code beside it; the prefilter finds the
                // line by the name's `_ERROR_`.
                if name.contains("_ERROR_") {
                    forms.push(format!("Message: HRESULT: [0x{hex}], Module: [SharpDX.DXGI], ApiCode: [{name}/Name], Message: Unknown"));
                }
            }
            _ => {}
        }
        forms
    }

    /// Every entry of every table is recognised in each printed form its
    /// stack uses, as its own entry (by its number's first row when only the
    /// number is printed) and as the kind its class gives.
    #[test]
    fn every_entry_in_every_form() {
        for table in codes::scanned_tables() {
            for entry in &table.entries {
                for line in printed_forms(table, entry) {
                    let expected = if line.contains(entry.name) {
                        entry
                    } else {
                        table.by_number(entry.number).unwrap()
                    };
                    if expected.class == Class::Usage && !line.starts_with("CHIP error") {
                        // A bad argument is the calling program's bug: not reported.
                        assert!(decode(&line).is_none(), "{line}");
                        continue;
                    }
                    let f = decode(&line).unwrap_or_else(|| panic!("not recognised: {line}"));
                    let name = f.facts.get(fact::ERROR_NAME).map(String::as_str);
                    // Level Zero's form names a HIP code first, then the cause.
                    if !line.starts_with("CHIP error") {
                        assert_eq!(name, Some(expected.name), "{line}");
                    }
                    if line.starts_with("CHIP error") || !line.contains(entry.name) {
                        continue;
                    }
                    assert_eq!(f.kind, kind_for(table, entry, entry.class), "{line}");
                    let category = f.kind.category();
                    match entry.class {
                        Class::Memory => assert!(category.is_oom(), "{line}: {category:?}"),
                        Class::NotMemory | Class::Maybe | Class::Usage => {
                            assert!(!category.is_oom(), "{line}: {category:?}")
                        }
                    }
                }
            }
        }
    }

    #[test]
    fn every_message_printed_as_an_error() {
        for table in codes::scanned_tables() {
            for entry in table.entries.iter().filter(|e| !e.message.is_empty()) {
                let m = entry.message;
                let lines = if table.id == "cuda_driver" {
                    vec![
                        format!("{m} in cuStreamCreate(&cuda_stream_, CU_STREAM_NON_BLOCKING) (queue.cpp:21)"),
                        format!("CUDA error: {m} in cuMemcpyDtoH(ptr, size), line 970"),
                        format!("CUDA error at cuCtxCreate: {m}"),
                    ]
                } else {
                    let mut lines = vec![
                        format!("RuntimeError: CUDA error: {m}"),
                        format!("  what():  /src/predictor/gpu_predictor.cu(322): {m}"),
                    ];
                    if entry.class != Class::Memory {
                        lines.push(format!("cudaRuntimeGetVersion failed: {m}"));
                    }
                    lines
                };
                for line in lines {
                    if entry.class == Class::Memory && table.id != "cuda_driver" {
                        // Claimed by the families that know each tool's form.
                        let findings = crate::decode_str(&line);
                        assert!(
                            findings.iter().any(|f| f.category.is_oom()),
                            "{line}: {findings:?}"
                        );
                        continue;
                    }
                    if entry.class == Class::Usage {
                        assert!(decode(&line).is_none(), "{line}");
                        continue;
                    }
                    let found = name_of(&line).unwrap_or_else(|| panic!("not recognised: {line}"));
                    let first = table
                        .entries
                        .iter()
                        .find(|e| e.message == m)
                        .map(|e| e.name);
                    assert_eq!(Some(found.as_str()), first, "{line}");
                }
            }
        }
    }

    #[test]
    fn the_triggers_cover_every_form() {
        for table in codes::scanned_tables() {
            for entry in &table.entries {
                for line in printed_forms(table, entry) {
                    assert!(TRIGGERS.iter().any(|t| line.contains(t)), "{line}");
                }
                if !entry.message.is_empty() && table.id != "cuda_driver" {
                    let line = format!("CUDA error: {}", entry.message);
                    assert!(TRIGGERS.iter().any(|t| line.contains(t)), "{line}");
                }
            }
        }
    }

    #[test]
    fn real_forms() {
        for (line, name) in [
            ("cudaGetDeviceProperties returned 35", "cudaErrorInsufficientDriver"),
            ("-> CUDA driver version is insufficient for CUDA runtime version", "cudaErrorInsufficientDriver"),
            ("CUDA error at D:/bandwidthTest.cu:255 code=35(cudaErrorInsufficientDriver) \"cudaSetDevice(currentDevice)\"", "cudaErrorInsufficientDriver"),
            (" CUDA error: 35 (0x23) cudaErrorInsufficientDriver : CUDA driver version is insufficient for CUDA runtime version", "cudaErrorInsufficientDriver"),
            ("onnxruntime::CudaCall CUDA failure 35: CUDA driver version is insufficient for CUDA runtime version ; GPU=-2011338632 ; expr=cudaSetDevice(info_.device_id); ", "cudaErrorInsufficientDriver"),
            ("  what():  /home/u/xgboost/src/predictor/gpu_predictor.cu(322): unspecified launch failure", "cudaErrorLaunchFailure"),
            ("Out of memory in cuStreamCreate(&cuda_stream_, CU_STREAM_NON_BLOCKING) (C:\\blender\\queue.cpp:21)", "CUDA_ERROR_OUT_OF_MEMORY"),
            (" CUDA error: ILLEGAL_ADDRESS in cuCtxSynchronize()", "CUDA_ERROR_ILLEGAL_ADDRESS"),
            ("`Illegal address in CUDA queue copy_from_device (integrator_shade_surface prefix_sum)`", "CUDA_ERROR_ILLEGAL_ADDRESS"),
            ("CUDA error: Illegal address in cuMemcpyDtoH( (char *)mem.host_pointer + offset, size), line 970", "CUDA_ERROR_ILLEGAL_ADDRESS"),
            ("*ERROR: HIPError(code hipErrorOutOfMemory, out of memory)*", "hipErrorOutOfMemory"),
            ("E tensorflow/stream_executor/cuda/cuda_dnn.cc:334] Could not create cudnn handle: CUDNN_STATUS_INTERNAL_ERROR", "CUDNN_STATUS_INTERNAL_ERROR"),
            // The name alone after TensorFlow's log prefix (DeepSpeech's
            // training log, a wild paste).
            ("2020-06-18 12:30:30.589204: E tensorflow/stream_executor/dnn.cc:588] CUDNN_STATUS_EXECUTION_FAILED", "CUDNN_STATUS_EXECUTION_FAILED"),
            ("no kernel image is available for execution this device", "cudaErrorNoKernelImageForDevice"),
            ("                         Search for `hipErrorOutOfMemory' in https://rocm.docs.amd.com/projects/HIP/en/latest/index.html for more information.", "hipErrorOutOfMemory"),
        ] {
            assert_eq!(name_of(line).as_deref(), Some(name), "{line}");
        }
    }

    /// NCCL's INFO level narrates (a wild paste's plugin search: the number
    /// is dlopen's outcome, not an ncclResult_t); its WARN level reports
    /// (`WARN("Cuda failure %d '%s'", err, errStr)`, NCCL's CUCHECK).
    #[test]
    fn nccl_info_lines_report_no_status() {
        for line in [
            "node17-2:36748:36748 [0] NCCL INFO NET/Plugin: Plugin load returned 2 : libnccl-net.so: cannot open shared object file: No such file or directory : when loading libnccl-net.so",
            "node17-2:36748:36748 [0] NCCL TRACE NET/Plugin: Plugin load returned 2 : libnccl-net.so: cannot open shared object file",
        ] {
            assert!(decode(line).is_none(), "{line}");
        }
        let warn =
            "node17-2:36748:36751 [0] include/alloc.h:185 NCCL WARN Cuda failure 2 'out of memory'";
        assert!(decode(warn).is_some(), "{warn}");
        // A usage code of NCCL's own CUDA call is NCCL's failure (a vLLM
        // pod's NVLS transport, wild paste), not the caller's argument.
        let invalid = "h100-kickoff-llama-70b-chat-20230328-bcf75c4f6-gn6nd:843:843 [5] transport/nvls.cc:157 NCCL WARN Cuda failure 1 'invalid argument'";
        assert_eq!(
            name_of(invalid).as_deref(),
            Some("cudaErrorInvalidValue"),
            "{invalid}"
        );
        assert!(decode("cudaMemcpy failed: invalid argument").is_none());
        // NCCL's word before CUDA's status and its number (NCCL's
        // cudawrap.cc, CUDA's code 999).
        let unknown = "misc/cudawrap.cc:188 NCCL WARN Cuda failure 999 'unknown error'";
        assert_eq!(
            name_of(unknown).as_deref(),
            Some("cudaErrorUnknown"),
            "{unknown}"
        );
    }

    /// absl's codes are read only after JAX's runtime error class; a status
    /// whose message says memory ran out, and RESOURCE_EXHAUSTED, are left
    /// to the out-of-memory families, as is TensorRT's `OutOfMemory`.
    #[test]
    fn xla_statuses_in_their_own_form() {
        let table = codes::table("absl_status").unwrap();
        for entry in &table.entries {
            let name = entry.name;
            for line in [
                format!("jaxlib.xla_extension.XlaRuntimeError: {name}: something went wrong"),
                format!("jax.errors.JaxRuntimeError: {name}: something went wrong"),
            ] {
                assert!(TRIGGERS.iter().any(|t| line.contains(t)), "{line}");
                let found = decode(&line);
                match entry.class {
                    Class::Memory | Class::Usage => assert!(found.is_none(), "{line}"),
                    _ => {
                        let f = found.unwrap_or_else(|| panic!("not recognised: {line}"));
                        assert_eq!(f.facts[fact::ERROR_NAME], name, "{line}");
                        assert_eq!(f.facts["table"], "absl_status");
                        assert_eq!(
                            f.exception.as_deref().map(|e| e.ends_with("RuntimeError")),
                            Some(true)
                        );
                        assert_eq!(f.backend, None);
                    }
                }
            }
            // Elsewhere the names are ordinary words.
            for line in [format!("error: {name}"), format!("status: {name}: done")] {
                assert!(decode(&line).is_none(), "{line}");
            }
        }
        for line in [
            "jaxlib.xla_extension.XlaRuntimeError: INTERNAL: Failed to allocate 98697216 bytes for new constant",
            "[11/10/2023-06:30:40] [TRT] [E] 2: [virtualMemoryBuffer.cpp::resizePhysical::140] Error Code 2: OutOfMemory (no further information)",
            "[TRT] [E] 1: [defaultAllocator.cpp::allocate::20] Error Code 1: Cuda Runtime (out of memory)",
        ] {
            assert!(decode(line).is_none(), "{line}");
        }
        let f = decode("[TRT] [E] 6: [libLoader.cpp::Impl::293] Error Code 6: Internal Error (Unable to load library: libnvinfer_builder_resource.so.10.0.1)").unwrap();
        assert_eq!(f.facts[fact::ERROR_NAME], "kFAILED_INITIALIZATION");
    }

    /// ONNX Runtime's codes in its printed forms: `Status::ToString` (the
    /// name without `ORT_`), the Java binding, Triton's backend. A wrapper:
    /// an execution provider's code in the message decides, a message that
    /// says memory ran out is left to the out-of-memory families.
    #[test]
    fn onnxruntime_statuses_in_their_forms() {
        let table = codes::table("onnxruntime").unwrap();
        for entry in &table.entries {
            let (n, name) = (entry.number, entry.name);
            let short = name.trim_start_matches("ORT_");
            for line in [
                format!("onnxruntime.capi.onnxruntime_pybind11_state.Fail: [ONNXRuntimeError] : {n} : {short} : the call failed"),
                format!("ai.onnxruntime.OrtException: Error code - {name} - message: the call failed"),
                format!("tritonclient.utils.InferenceServerException: [StatusCode.INTERNAL] onnx runtime error {n}: the call failed"),
            ] {
                assert!(TRIGGERS.iter().any(|t| line.contains(t)), "{line}");
                let found = decode(&line);
                // Only a failed execution provider stands alone.
                if entry.name != "ORT_EP_FAIL" {
                    assert!(found.is_none(), "{line}");
                    continue;
                }
                let f = found.unwrap_or_else(|| panic!("not recognised: {line}"));
                assert_eq!(f.facts[fact::ERROR_NAME], name, "{line}");
                assert_eq!(f.facts["table"], "onnxruntime");
                assert_eq!(f.backend, None);
            }
            // Elsewhere the printed names are ordinary words.
            assert!(
                decode(&format!("error: {short}: done")).is_none(),
                "{short}"
            );
        }
        // Real pastes: the provider's code inside the status decides.
        for (line, name) in [
            // ONNX Runtime's DirectML provider (a microsoft/onnxruntime issue).
            ("[ONNXRuntimeError] : 1 : FAIL : D:\\a\\_work\\1\\s\\onnxruntime\\core\\providers\\dml\\DmlExecutionProvider\\src\\ExecutionProvider.cpp(962)\\onnxruntime_pybind11_state.pyd!00007FFABA30B0B1: (caller: 00007FFABA30B740) Exception(3) tid(5a68) 887A0005 The GPU device instance has been suspended. Use GetDeviceRemovedReason to determine the appropriate action.", "DXGI_ERROR_DEVICE_REMOVED"),
            // The C# binding (BetterGI).
            ("Microsoft.ML.OnnxRuntime.OnnxRuntimeException: [ErrorCode:Fail] D:\\a\\_work\\1\\s\\onnxruntime\\core\\providers\\dml\\DmlExecutionProvider\\src\\CommandQueue.cpp(16)\\onnxruntime.dll!00007FF869EDCFB6: (caller: 00007FF869E4EE3E) Exception(1) tid(28e8) 887A0005 The GPU device instance has been suspended. Use GetDeviceRemovedReason to determine the appropriate action.", "DXGI_ERROR_DEVICE_REMOVED"),
            ("onnxruntime::CudaCall CUDA failure 35: CUDA driver version is insufficient for CUDA runtime version ; GPU=0 ; expr=cudaSetDevice(info_.device_id); ", "cudaErrorInsufficientDriver"),
        ] {
            assert_eq!(name_of(line).as_deref(), Some(name), "{line}");
        }
        for line in [
            // The arena's messages: the out-of-memory families read them.
            "onnxruntime.capi.onnxruntime_pybind11_state.RuntimeException: [ONNXRuntimeError] : 6 : RUNTIME_EXCEPTION : Non-zero status code returned while running Softmax node. Name:'/model.23/dfl/Softmax' Status Message: /onnxruntime_src/onnxruntime/core/framework/bfc_arena.cc:376 void* onnxruntime::BFCArena::AllocateRawInternal(size_t, bool, onnxruntime::Stream*, bool, onnxruntime::WaitNotificationFn) Available memory of 0 is smaller than requested bytes of 5505024",
            "onnx runtime error 6: Non-zero status code returned while running Mul node. Name:'Mul_8702' Status Message: /workspace/onnxruntime/onnxruntime/core/framework/bfc_arena.cc:368 void* onnxruntime::BFCArena::AllocateRawInternal(size_t, bool, onnxruntime::Stream*, bool, onnxruntime::WaitNotificationFn) Failed to allocate memory for requested buffer of size 2830172160",
            // The message is on the next line.
            "onnxruntime.capi.onnxruntime_pybind11_state.RuntimeException: [ONNXRuntimeError] : 6 : RUNTIME_EXCEPTION : Non-zero status code returned while running Conv node. Name:'/patch_embed/Conv' Status Message: ",
            // A bad input is the caller's bug (Triton's onnxruntime backend).
            "tritonclient.utils.InferenceServerException: [StatusCode.INTERNAL] onnx runtime error 2: not enough space: expected 270080, got 261760",
            // A message cut short after the provider's call (Deep-Live-Cam).
            "Processing:  99%|▉| 1734/1744 [08:44<00:03,  3.13frame/s, execution_providers=['CUDAExecutionProvider'], execution_thre[ONNXRuntimeError] : 1 : FAIL : D:\\a\\_work\\1\\s\\onnxruntime\\core\\providers\\cuda\\cuda_call.cc:121 onnxruntime::CudaCall D:\\a\\_work\\1\\s\\onnxruntime\\core\\providers\\cuda\\cuda_call.cc:114 o",
            // A shape error on the CPU (anuragxel/salt; the Java binding, microsoft/onnxruntime).
            "onnxruntime.capi.onnxruntime_pybind11_state.RuntimeException: [ONNXRuntimeError] : 6 : RUNTIME_EXCEPTION : Non-zero status code returned while running Reshape node. Name:'Reshape_149' Status Message: /onnxruntime_src/onnxruntime/core/providers/cpu/tensor/reshape_helper.h:41 onnxruntime::ReshapeHelper::ReshapeHelper(const onnxruntime::TensorShape&, onnxruntime::TensorShapeVector&, bool) gsl::narrow_cast<int64_t>(input_shape.Size()) == size was false. The input tensor cannot be reshaped to the requested shape. Input shape:{1,7,256}, requested shape:{1,10,8,32}",
            "Caused by: ai.onnxruntime.OrtException: Error code - ORT_RUNTIME_EXCEPTION - message: Non-zero status code returned while running Reshape node. Name:‘model/flatten_22_tab/Reshape’ Status Message: /onnxruntime_src/onnxruntime/core/providers/cpu/tensor/reshape_helper.h:40 onnxruntime::ReshapeHelper::ReshapeHelper(const onnxruntime::TensorShape&, onnxruntime::TensorShapeVector&, bool) gsl::narrow_cast<int64_t>(input_shape.Size()) == size was false. The input tensor cannot be reshaped to the requested shape. Input shape:{1,128,1}, requested shape:{3828399574983193889,3828399574983193889}",
        ] {
            assert!(decode(line).is_none(), "{line}");
        }
    }

    /// DirectX 12's HRESULTs as DirectML programs print them (real pastes:
    /// torch-directml, SharpDX, DirectX-Graphics-Samples' MiniEngine,
    /// onnxruntime-directml's E_OUTOFMEMORY).
    #[test]
    fn hresults_in_their_forms() {
        for (line, name) in [
            ("RuntimeError: The GPU device instance has been suspended. Use GetDeviceRemovedReason to determine the appropriate action.", "DXGI_ERROR_DEVICE_REMOVED"),
            ("Message: HRESULT: [0x887A0005], Module: [SharpDX.DXGI], ApiCode: [DXGI_ERROR_DEVICE_REMOVED/DeviceRemoved], Message: Unknown", "DXGI_ERROR_DEVICE_REMOVED"),
            ("2022-10-18 13:56:21.2822368 [E:onnxruntime:, sequential_executor.cc:369 onnxruntime::SequentialExecutor::Execute] Non-zero status code returned while running MemcpyToHost node. Name:'Memcpy_token_29' Status Message: D:\\a\\_work\\1\\s\\onnxruntime\\core\\providers\\dml\\DmlExecutionProvider\\src\\MLOperatorAuthorImpl.cpp(1978)\\onnxruntime_pybind11_state.pyd!00007FFBDC8EBB9F: (caller: 00007FFBDCFFDEFF) Exception(3) tid(4304) 8007000E Not enough memory resources are available to complete this operation.", "E_OUTOFMEMORY"),
        ] {
            assert_eq!(name_of(line).as_deref(), Some(name), "{line}");
        }
        let f = decode("(caller: 00007FFBDCFFDEFF) Exception(3) tid(4304) 8007000E Not enough memory resources are available to complete this operation.").unwrap();
        assert_eq!(f.kind, Kind::GenericOom);
        assert_eq!(f.backend.as_deref(), Some("directml"));
        // Eight hex digits only after WIL's thread id or an HRESULT word.
        for line in [
            "commit 887a0005 fixed the build",
            "hr = 0x00000000",
            "tid(5a68) 887A0005",
        ] {
            assert!(decode(line).is_none(), "{line}");
        }
    }

    /// The forms of the vendor stacks (docs/vendor-gpu.md): real pastes
    /// (fixtures/wild 2042, 2049, 1277, 1269, 2016, 1289, 1520, 2015).
    #[test]
    fn vendor_stack_forms() {
        for (line, name, kind) in [
            ("[GPU] clEnqueueNDRangeKernel, error code: -54", "CL_INVALID_WORK_GROUP_SIZE", Kind::GpuRuntimeError),
            ("The specific error I keep running into is: `UR_RESULT_ERROR_OUT_OF_DEVICE_MEMORY `", "UR_RESULT_ERROR_OUT_OF_DEVICE_MEMORY", Kind::GenericOom),
            ("0x70000003 corresponds to ZE_RESULT_ERROR_OUT_OF_DEVICE_MEMORY.", "ZE_RESULT_ERROR_OUT_OF_DEVICE_MEMORY", Kind::GenericOom),
            // 1269 is `... on my machine i'm getting NAME from`; the mention
            // check reads the apostrophe of `i'm` as an opening quote.
            ("getting VK_ERROR_OUT_OF_DEVICE_MEMORY from", "VK_ERROR_OUT_OF_DEVICE_MEMORY", Kind::GenericOom),
            ("RuntimeError: Unknown error -2147024882**", "E_OUTOFMEMORY", Kind::GenericOom),
            ("   F tensorflow/c/logging.cc:43] HRESULT failed with 0x887a0001: dml_device_->GetDeviceRemovedReason(), and Python Restart", "DXGI_ERROR_INVALID_CALL", Kind::GpuRuntimeError),
            ("{rsx::thread} class std::runtime_error thrown: HRESULT = La instancia de dispositivo de GPU se ha suspendido. Use GetDeviceRemovedReason para averiguar cuál es la acción adecuada.", "DXGI_ERROR_DEVICE_REMOVED", Kind::GpuRuntimeError),
            ("D3D12: Removing Device.", "DXGI_ERROR_DEVICE_REMOVED", Kind::GpuRuntimeError),
            ("clBuildProgram failed with error -11", "CL_BUILD_PROGRAM_FAILURE", Kind::GpuRuntimeError),
            ("urUSMDeviceAlloc returned 39", "UR_RESULT_ERROR_OUT_OF_DEVICE_MEMORY", Kind::GenericOom),
        ] {
            let f = decode(line).unwrap_or_else(|| panic!("{line}"));
            assert_eq!(f.facts.get(fact::ERROR_NAME).map(String::as_str), Some(name), "{line}");
            assert_eq!(f.kind, kind, "{line}");
        }
        for line in [
            // A bad argument outside OpenVINO's plugin is the caller's bug.
            "clEnqueueNDRangeKernel, error code: -54",
            // The HRESULT of another call is its own code.
            "HRESULT failed with 0x887a0001: device_->CreateCommittedResource()",
            // Decimal: a number that is no failure HRESULT, or not one of the table.
            "Unknown error -1",
            "Unknown error 2147942414000",
            "error 1073741824",
            // Code that calls GetDeviceRemovedReason, and prose that names it.
            "HRESULT hr = device->GetDeviceRemovedReason();",
            "We call GetDeviceRemovedReason to see why",
            // A one-digit number before a name is no printed code.
            "1 and ZE_RESULT_NOT_READY appear",
        ] {
            assert!(decode(line).is_none(), "{line}");
        }
    }

    #[test]
    fn kinds_by_class() {
        let f = decode("cudaGetDeviceProperties returned 35").unwrap();
        assert_eq!(f.kind, Kind::GpuRuntimeError);
        assert!(f.facts["meaning"].contains("older than the CUDA runtime"));
        let f = decode("Out of memory in cuStreamCreate(&s, 0) (queue.cpp:21)").unwrap();
        assert_eq!(f.kind, Kind::CudaRuntimeOom);
        let f = decode(
            "CHIP error [TID 1] : hipErrorTbd (ZE_RESULT_ERROR_OUT_OF_DEVICE_MEMORY ) in a.cc:365",
        )
        .unwrap();
        // The Level Zero cause, not HIP's placeholder, decides.
        assert_eq!(
            f.facts[fact::ERROR_NAME],
            "ZE_RESULT_ERROR_OUT_OF_DEVICE_MEMORY"
        );
        assert_eq!(f.kind, Kind::GenericOom);
        let f = decode("Could not create cudnn handle: CUDNN_STATUS_INTERNAL_ERROR").unwrap();
        assert_eq!(f.kind, Kind::GpuRuntimeError);
        assert_eq!(f.facts["code_class"], "maybe");
    }

    #[test]
    fn bare_numbers_and_mentions_are_not_findings() {
        for line in [
            // A number without its API, or with a version, size or time.
            "error 35",
            "returned 2",
            "Epoch 3 finished with code 2",
            "CUDA version 12.1",
            "CUDA error rate 12.5%",
            // Code and documentation.
            "    if (err == cudaErrorInsufficientDriver) {",
            "    case CUDA_ERROR_OUT_OF_MEMORY:",
            "    cudaErrorInsufficientDriver = 35,",
            "  const char* s = cudaGetErrorString(cudaErrorIllegalAddress);",
            "    if \"CUDA driver version is insufficient for CUDA runtime version\" in str(e):",
            "print(\"CUDA error: an illegal memory access was encountered\")",
            "except cupy.cuda.runtime.cudaErrorMemoryAllocation:",
            // Prose and comments that name a code.
            "    # retry on CUBLAS_STATUS_ALLOC_FAILED with a smaller batch",
            "Check for cudaErrorInsufficientDriver before calling.",
            // Cycles' short strings anywhere else.
            "Invalid value for --threads",
            "Out of memory",
        ] {
            assert!(decode(line).is_none(), "{line}");
        }
    }

    #[test]
    fn a_status_type_then_its_number() {
        // Kaldi's CU_SAFE_CALL (a wild paste): the number in CUDA 10.0's
        // numbering, then the runtime's string, which names the code.
        let f = decode("ERROR (nnet3-train[5.4]:CopyToVec():cu-vector.cc:899) cudaError_t 4 : \"unspecified launch failure\" returned from 'cudaMemcpy(dst->Data(), this->data_, sizeof(Real) * dim_, cudaMemcpyDeviceToHost)'").unwrap();
        assert_eq!(f.kind, Kind::LaunchFailure);
        assert_eq!(f.facts[fact::ERROR_NAME], "cudaErrorLaunchFailure");
        // Without the string, the number is read in today's numbering.
        assert_eq!(
            name_of("cudaError_t 4 : returned from 'cudaMemcpy(...)'").as_deref(),
            Some("cudaErrorCudartUnloading")
        );
        // A string that is no code's leaves the number to decide.
        assert_eq!(
            name_of("cudaError_t 4 : \"unspecified launch failures\"").as_deref(),
            Some("cudaErrorCudartUnloading")
        );
        assert_eq!(
            name_of("CUresult 2 from cuMemAlloc").as_deref(),
            Some("CUDA_ERROR_OUT_OF_MEMORY")
        );
        // A type named without a number, or with a version, is no code.
        assert!(decode("cudaError_t err = cudaMalloc(&p, n);").is_none());
        assert!(decode("cudaError_t 12.1 headers").is_none());
    }

    #[test]
    fn a_vulkan_call_failed_with_its_result() {
        // ncnn's log line (a wild paste, Real-ESRGAN's ncnn build).
        let f = decode("vkAllocateMemory failed -2").unwrap();
        assert_eq!(f.facts[fact::ERROR_NAME], "VK_ERROR_OUT_OF_DEVICE_MEMORY");
        assert_eq!(
            name_of("vkQueueSubmit failed -4").as_deref(),
            Some("VK_ERROR_DEVICE_LOST")
        );
        // No result, or one that is no VkResult, is nothing to report.
        assert!(decode("vkAllocateMemory failed").is_none());
        assert!(decode("vkAllocateMemory failed -999").is_none());
    }

    #[test]
    fn tensorrt_source_locations() {
        // A wild paste, cut before the logger's prefix.
        assert!(shows_tensorrt(" defaultAllocator.cpp::nvinfer1::internal::DefaultAllocator::allocate::63] Error Code 1: Cuda Runtime (out of memory)."));
        assert!(shows_tensorrt(
            "[builder.cpp::buildEngine::42] Error Code 2: Internal Error (a check failed)"
        ));
        // A C++ name without TensorRT's `] Error Code N:` after it.
        assert!(!shows_tensorrt(
            "at defaultAllocator.cpp::allocate::63 the pool was empty"
        ));
        assert!(!shows_tensorrt("std::vector::at::63] Error Code 1: x"));
    }

    #[test]
    fn metal_command_buffer_status() {
        // WhirlyGlobe's log (a wild paste): access revoked after earlier GPU errors.
        let line = "Execution of the command buffer was aborted due to an error during execution. Ignored (for causing prior/excessive GPU errors) (00000004:kIOGPUCommandBufferCallbackErrorSubmissionsIgnored)";
        let f = decode(line).unwrap();
        assert_eq!(f.kind, Kind::GpuRuntimeError);
        assert_eq!(
            f.facts[fact::ERROR_NAME],
            "MTLCommandBufferErrorAccessRevoked"
        );
        assert_eq!(f.backend.as_deref(), Some("metal"));
        assert!(f.text.starts_with("Execution of the command buffer"));
        let f = decode("Execution of the command buffer was aborted due to an error during execution. Caused GPU Timeout Error (00000002:kIOGPUCommandBufferCallbackErrorTimeout)").unwrap();
        assert_eq!(f.facts[fact::ERROR_NAME], "MTLCommandBufferErrorTimeout");
        // MLX's abort on the GPU watchdog (a wild paste): a status outside
        // MTLCommandBufferError, in the table as the driver names it.
        let f = decode("libc++abi: terminating due to uncaught exception of type std::runtime_error: [METAL] Command buffer execution failed: Impacting Interactivity (0000000e:kIOGPUCommandBufferCallbackErrorImpactingInteractivity)").unwrap();
        assert_eq!(f.kind, Kind::GpuRuntimeError);
        assert_eq!(
            f.facts[fact::ERROR_NAME],
            "kIOGPUCommandBufferCallbackErrorImpactingInteractivity"
        );
        // No callback's form.
        assert!(decode("kIOGPUCommandBufferCallbackErrorSubmissionsIgnored").is_none());
    }

    /// A code's name quoted after a verb of receiving is what the writer
    /// got (fixtures/wild 2407, a ROCm issue's comment); a question, a
    /// condition, a negation, an instruction or a name without such a verb
    /// is a mention.
    #[test]
    fn a_name_quoted_as_what_the_writer_got() {
        let line = "I encountered a similar error on ROCm 4.5.2. The first time I encountered a system freeze which appeared to be a result of running out of RAM (32 GBs)! After that whenever I try to run I just get `hipErrorOutOfMemory`";
        let f = decode(line).unwrap();
        assert_eq!(f.facts[fact::ERROR_NAME], "hipErrorOutOfMemory");
        assert_eq!(f.kind, Kind::GenericOom);
        assert!(
            f.text.starts_with("After that whenever I try to run"),
            "{}",
            f.text
        );
        for line in [
            "Why do I just get `hipErrorOutOfMemory`?",
            "If you get `hipErrorOutOfMemory`, lower the batch size.",
            "I no longer get `hipErrorOutOfMemory`",
            "hipMalloc returns `hipErrorOutOfMemory` if the allocation fails.",
            "Possible values include `hipErrorOutOfMemory`",
            "    # then we get `hipErrorOutOfMemory`",
        ] {
            assert!(decode(line).is_none(), "{line}");
        }
    }

    /// A probe's result column (fixtures/wild 2410): the name alone after a
    /// column's gap ends the row. One space is prose; text after it is not
    /// a last column.
    #[test]
    fn a_name_in_a_tables_last_column() {
        let f =
            decode("  cycle 2, another 4GB                 UR_RESULT_ERROR_DEVICE_LOST").unwrap();
        assert_eq!(f.facts[fact::ERROR_NAME], "UR_RESULT_ERROR_DEVICE_LOST");
        assert_eq!(f.kind, Kind::GpuRuntimeError);
        for line in [
            "  cycle 2, another 4GB UR_RESULT_ERROR_DEVICE_LOST",
            "  cycle 2, another 4GB      UR_RESULT_ERROR_DEVICE_LOST   means the device was lost",
        ] {
            assert!(decode(line).is_none(), "{line}");
        }
    }

    /// SYCL's Plugin Interface names its status after the number (fixtures/wild
    /// 3318): PI_ERROR_OUT_OF_HOST_MEMORY states the runtime's host memory
    /// ran out; PI_ERROR_OUT_OF_RESOURCES is OpenCL's `maybe`; a bad argument
    /// is not reported.
    #[test]
    fn sycl_plugin_interface_statuses() {
        let f = decode("Native API failed. Native API returns: -6 (PI_ERROR_OUT_OF_HOST_MEMORY) -6 (PI_ERROR_OUT_OF_HOST_MEMORY)").unwrap();
        assert_eq!(f.kind, Kind::GenericOom);
        assert_eq!(f.facts[fact::ERROR_NAME], "PI_ERROR_OUT_OF_HOST_MEMORY");
        assert_eq!(f.facts[fact::MEMORY], "host");
        assert_eq!(f.backend, None);
        let f = decode("Native API failed. Native API returns: -5 (PI_ERROR_OUT_OF_RESOURCES) -5 (PI_ERROR_OUT_OF_RESOURCES)").unwrap();
        assert_eq!(f.kind, Kind::GpuRuntimeError);
        assert!(decode("Native API failed. Native API returns: -30 (PI_ERROR_INVALID_VALUE) -30 (PI_ERROR_INVALID_VALUE)").is_none());
    }

    /// HIP numbered its runtime errors from 1001 before it took CUDA's
    /// numbers; TensorFlow-ROCm's stream executor printed such a code as
    /// `hipError_t(1002)` after its failed allocation (fixtures/wild 3339):
    /// the message starts at `failed to allocate` and its request is read.
    #[test]
    fn hip_codes_numbered_before_hip_took_cudas_numbers() {
        let line = "2019-01-08 19:06:11.303639: E tensorflow/stream_executor/rocm/rocm_driver.cc:601] failed to allocate 7.35G (7889485824 bytes) from device: hipError_t(1002)";
        let f = decode(line).unwrap();
        assert_eq!(f.kind, Kind::GenericOom);
        assert_eq!(f.facts[fact::ERROR_NAME], "hipErrorMemoryAllocation");
        assert_eq!(f.sizes.requested_bytes, Some(7_889_485_824));
        assert!(f.text.starts_with("failed to allocate 7.35G"), "{}", f.text);
        // The name alone takes its current number; the old number names it too.
        let (_, entry) = codes::by_name("hipErrorMemoryAllocation").unwrap();
        assert_eq!(entry.number, 2);
        let f = decode("HIP error 1004").unwrap();
        assert_eq!(f.kind, Kind::LaunchFailure);
        assert!(decode("hipMalloc returned 1011").is_none());
    }
}
