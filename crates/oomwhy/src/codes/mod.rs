//! Status-code tables as data: each GPU runtime, driver or library's error
//! codes with their numbers, names, what they mean and whether they mean
//! memory ran out, one TSV file per table (docs/codes.md), read from the
//! library's own header and cited row by row.
//!
//! The files are compiled in and parsed once. A row that does not parse is
//! skipped (a test checks that none is), so a bad edit cannot panic a scan.

pub mod advice;
pub mod xid;

use std::collections::HashMap;
use std::sync::OnceLock;

/// Whether a code means that memory ran out.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Class {
    /// The code states an allocation failed.
    Memory,
    /// The code is a failure of another kind.
    NotMemory,
    /// Not an out-of-memory by itself, but commonly caused by memory
    /// pressure (a handle or workspace that could not be allocated).
    Maybe,
    /// A failure of another kind that says the caller passed a bad argument
    /// or handle: a bug in the calling program, not a failure of the GPU or
    /// its runtime. Not reported (the labelled real pastes count such
    /// errors as nothing to report).
    Usage,
}

impl Class {
    fn parse(text: &str) -> Option<Class> {
        Some(match text {
            "memory" => Class::Memory,
            "not_memory" => Class::NotMemory,
            "maybe" => Class::Maybe,
            "usage" => Class::Usage,
            _ => return None,
        })
    }

    /// The column's spelling (`memory`, `not_memory`, `maybe`, `usage`).
    pub fn as_str(self) -> &'static str {
        match self {
            Class::Memory => "memory",
            Class::NotMemory => "not_memory",
            Class::Maybe => "maybe",
            Class::Usage => "usage",
        }
    }
}

/// One code of one table.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Entry {
    /// The code's value (negative for Vulkan).
    pub number: i64,
    /// How the number is written in the header (`0x70000003`, `-2`, `35`).
    pub written: &'static str,
    /// The enumerator's name (`cudaErrorInsufficientDriver`).
    pub name: &'static str,
    /// Whether the code means memory ran out.
    pub class: Class,
    /// The library's own error string for it, where one is known; empty otherwise.
    pub message: &'static str,
    /// What the code means, from the header's comment or the API reference.
    pub meaning: &'static str,
    /// Where the row was read.
    pub source: &'static str,
    /// The meaning in Chinese, for the tables whose meanings a report
    /// prints as a sentence (signals, NTSTATUS); empty otherwise.
    pub zh: &'static str,
}

/// One table: the codes of one API.
#[derive(Debug)]
pub struct Table {
    /// The file's stem (`cuda_runtime`), written into findings as `table`.
    pub id: &'static str,
    /// A readable name (`CUDA runtime`).
    pub title: &'static str,
    /// The backend a finding from this table ran on (`cuda`, `hip`, ...).
    pub backend: &'static str,
    /// Whether the status family reads this table's codes by name or number
    /// in any log line. absl's status codes are read only in their own
    /// form; the process tables (signals, NTSTATUS) by the families that
    /// know their forms (`signal.rs`, `windows.rs`, `host.rs`) and by
    /// `exit.rs`: their names (`SIGKILL`, `STATUS_NO_MEMORY`) are not GPU
    /// statuses.
    pub scanned: bool,
    /// The codes, in the file's order.
    pub entries: Vec<Entry>,
}

impl Table {
    /// The first entry with this number.
    pub fn by_number(&self, number: i64) -> Option<&Entry> {
        self.entries.iter().find(|e| e.number == number)
    }
}

/// (id, title, backend, file text) of every table the status family reads,
/// most used first.
const SOURCES: &[(&str, &str, &str, &str)] = &[
    (
        "cuda_runtime",
        "CUDA runtime",
        "cuda",
        include_str!("cuda_runtime.tsv"),
    ),
    (
        "cuda_driver",
        "CUDA driver",
        "cuda",
        include_str!("cuda_driver.tsv"),
    ),
    ("cublas", "cuBLAS", "cuda", include_str!("cublas.tsv")),
    ("cudnn", "cuDNN", "cuda", include_str!("cudnn.tsv")),
    ("nccl", "NCCL", "cuda", include_str!("nccl.tsv")),
    (
        "hip_runtime",
        "HIP runtime",
        "hip",
        include_str!("hip_runtime.tsv"),
    ),
    (
        "level_zero",
        "Level Zero",
        "level_zero",
        include_str!("level_zero.tsv"),
    ),
    // oneAPI's layer between SYCL and the drivers (Level Zero on Intel
    // GPUs, also OpenCL, CUDA and HIP): SYCL and PyTorch's XPU backend print
    // its names.
    (
        "unified_runtime",
        "oneAPI Unified Runtime",
        "level_zero",
        include_str!("unified_runtime.tsv"),
    ),
    // SYCL's Plugin Interface, the layer the Unified Runtime replaced
    // (`Native API returns: -6 (PI_ERROR_OUT_OF_HOST_MEMORY)`). No
    // backend: its plugins drive Level Zero, OpenCL, CUDA and HIP.
    (
        "sycl_pi",
        "SYCL Plugin Interface",
        "",
        include_str!("sycl_pi.tsv"),
    ),
    ("vulkan", "Vulkan", "vulkan", include_str!("vulkan.tsv")),
    // Huawei Ascend NPUs: CANN's runtime (`ACL stream synchronize failed,
    // error code:507015`, torch_npu's and MindSpore's checks).
    ("acl", "CANN (ACL)", "npu", include_str!("acl.tsv")),
    ("cufft", "cuFFT", "cuda", include_str!("cufft.tsv")),
    ("cusolver", "cuSOLVER", "cuda", include_str!("cusolver.tsv")),
    ("cusparse", "cuSPARSE", "cuda", include_str!("cusparse.tsv")),
    ("curand", "cuRAND", "cuda", include_str!("curand.tsv")),
    ("npp", "NPP", "cuda", include_str!("npp.tsv")),
    ("nvjpeg", "nvJPEG", "cuda", include_str!("nvjpeg.tsv")),
    ("rocblas", "rocBLAS", "hip", include_str!("rocblas.tsv")),
    ("miopen", "MIOpen", "hip", include_str!("miopen.tsv")),
    ("tensorrt", "TensorRT", "cuda", include_str!("tensorrt.tsv")),
    ("hipblas", "hipBLAS", "hip", include_str!("hipblas.tsv")),
    (
        "hipsolver",
        "hipSOLVER",
        "hip",
        include_str!("hipsolver.tsv"),
    ),
    ("hipfft", "hipFFT", "hip", include_str!("hipfft.tsv")),
    (
        "hresult",
        "DirectX 12",
        "directml",
        include_str!("hresult.tsv"),
    ),
];

/// (id, title, backend, file text) of the tables whose names are ordinary
/// words in logs (`INTERNAL`, `NOT_FOUND`): the status family reads them
/// only in their own printed form (`detect/status.rs`), never by name alone.
/// No backend: XLA and TensorFlow run on several.
const FORM_SOURCES: &[(&str, &str, &str, &str)] = &[
    (
        "absl_status",
        "XLA/TensorFlow status",
        "",
        include_str!("absl_status.tsv"),
    ),
    // Read in `[ONNXRuntimeError] : N : NAME :` and the Java binding's
    // `Error code - ORT_NAME`; the execution provider's error in the
    // message says more and is read first. No backend: ONNX Runtime runs
    // on several.
    (
        "onnxruntime",
        "ONNX Runtime",
        "",
        include_str!("onnxruntime.tsv"),
    ),
    // Read in the forms libraries print (oneDNN's verbose `errcode -6,NAME,`,
    // the texts wrappers such as boost.compute print): OpenCL's names fill
    // the source code of every OpenCL program. No backend: OpenCL runs on
    // every vendor's GPUs and on CPUs.
    ("opencl", "OpenCL", "", include_str!("opencl.tsv")),
    // Read in Metal's abort message, by the driver status's number:
    // MTLCommandBufferError's names appear in no log.
    ("metal", "Metal", "metal", include_str!("metal.tsv")),
];

/// (id, title, backend, file text) of the process tables: how a process
/// ended, not a GPU API's status (see [`Table::scanned`]).
const PROCESS_SOURCES: &[(&str, &str, &str, &str)] = &[
    ("signal", "POSIX signal", "cpu", include_str!("signal.tsv")),
    (
        "ntstatus",
        "Windows NTSTATUS",
        "cpu",
        include_str!("ntstatus.tsv"),
    ),
];

/// A number as a header writes it: decimal (maybe negative) or `0x` hex.
pub fn parse_number(text: &str) -> Option<i64> {
    let text = text.trim();
    match text.strip_prefix("0x").or_else(|| text.strip_prefix("0X")) {
        Some(hex) => i64::from_str_radix(hex, 16).ok(),
        None => text.parse().ok(),
    }
}

fn parse_row(line: &'static str) -> Option<Entry> {
    let mut columns = line.split('\t');
    let written = columns.next()?.trim();
    let entry = Entry {
        number: parse_number(written)?,
        written,
        name: columns.next()?.trim(),
        class: Class::parse(columns.next()?.trim())?,
        message: columns.next()?.trim(),
        meaning: columns.next()?.trim(),
        source: columns.next()?.trim(),
        zh: columns.next().unwrap_or_default().trim(),
    };
    (columns.next().is_none() && !entry.name.is_empty()).then_some(entry)
}

/// The rows of a table file: every line that is neither blank nor a `#` comment.
fn rows(text: &'static str) -> impl Iterator<Item = &'static str> {
    text.lines()
        .filter(|l| !l.trim().is_empty() && !l.starts_with('#'))
}

/// Every table, parsed once: the GPU APIs' (in [`SOURCES`] order), then the
/// process tables.
pub fn tables() -> &'static [Table] {
    static TABLES: OnceLock<Vec<Table>> = OnceLock::new();
    TABLES.get_or_init(|| {
        let scanned = SOURCES.iter().map(|source| (source, true));
        let others = FORM_SOURCES.iter().chain(PROCESS_SOURCES);
        scanned
            .chain(others.map(|source| (source, false)))
            .map(|(&(id, title, backend, text), scanned)| Table {
                id,
                title,
                backend,
                scanned,
                entries: rows(text).filter_map(parse_row).collect(),
            })
            .collect()
    })
}

/// The tables the status family reads (every GPU API's).
pub fn scanned_tables() -> impl Iterator<Item = &'static Table> {
    tables().iter().filter(|t| t.scanned)
}

/// The table with this id.
/// The name CUDA's runtime gave `number` before CUDA 10.1, which
/// renumbered `cudaError_t` (`cudaErrorIllegalAddress` was 77, then 700;
/// `cudaErrorLaunchFailure` 4, then 719): old releases of PyTorch and
/// TensorFlow print those numbers.
pub fn cuda_runtime_before_10_1(number: i64) -> Option<&'static str> {
    include_str!("cuda_runtime_before_10_1.tsv")
        .lines()
        .filter(|line| !line.starts_with('#'))
        .find_map(|line| {
            let (n, name) = line.split_once('\t')?;
            (n.parse::<i64>().ok()? == number).then_some(name.trim())
        })
}

pub fn table(id: &str) -> Option<&'static Table> {
    tables().iter().find(|t| t.id == id)
}

/// The table and entry of a code's name, in any table the status family
/// reads. Names are unique across tables (each API prefixes its own); within
/// one, the first row wins.
pub fn by_name(name: &str) -> Option<(&'static Table, &'static Entry)> {
    static INDEX: OnceLock<HashMap<&'static str, (usize, usize)>> = OnceLock::new();
    let index = INDEX.get_or_init(|| {
        let mut index = HashMap::new();
        for (t, table) in tables().iter().enumerate().filter(|(_, t)| t.scanned) {
            for (e, entry) in table.entries.iter().enumerate() {
                index.entry(entry.name).or_insert((t, e));
            }
        }
        index
    });
    let &(t, e) = index.get(name)?;
    let table = tables().get(t)?;
    Some((table, table.entries.get(e)?))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_row_parses() {
        let all = SOURCES.iter().chain(FORM_SOURCES).chain(PROCESS_SOURCES);
        for (&(id, _, _, text), table) in all.zip(tables()) {
            let rows = rows(text).count();
            assert!(rows > 0, "{id} is empty");
            assert_eq!(table.entries.len(), rows, "{id}: a row does not parse");
            for entry in &table.entries {
                assert!(!entry.meaning.is_empty(), "{id} {}: no meaning", entry.name);
                assert!(!entry.source.is_empty(), "{id} {}: no source", entry.name);
                // The process tables' meanings are printed in both languages.
                let process = PROCESS_SOURCES.iter().any(|source| source.0 == id);
                assert_eq!(process, !entry.zh.is_empty(), "{id} {}: zh", entry.name);
            }
        }
    }

    #[test]
    fn names_belong_to_one_table() {
        let mut seen: HashMap<&str, &str> = HashMap::new();
        for table in tables() {
            for entry in &table.entries {
                if let Some(other) = seen.insert(entry.name, table.id) {
                    assert_eq!(other, table.id, "{} is in two tables", entry.name);
                }
            }
        }
    }

    #[test]
    fn finds_codes_by_name_and_number() {
        let (table, entry) = by_name("cudaErrorInsufficientDriver").unwrap();
        assert_eq!((table.id, entry.number), ("cuda_runtime", 35));
        assert_eq!(entry.class, Class::NotMemory);
        let ze = table_or_panic("level_zero").by_number(0x7000_0003).unwrap();
        assert_eq!(ze.name, "ZE_RESULT_ERROR_OUT_OF_DEVICE_MEMORY");
        assert_eq!(ze.class, Class::Memory);
        let ur = table_or_panic("unified_runtime").by_number(39).unwrap();
        assert_eq!(ur.name, "UR_RESULT_ERROR_OUT_OF_DEVICE_MEMORY");
        assert_eq!(ur.class, Class::Memory);
        let (table, _) = by_name("UR_RESULT_ERROR_DEVICE_LOST").unwrap();
        assert_eq!(table.id, "unified_runtime");
        let vk = table_or_panic("vulkan").by_number(-2).unwrap();
        assert_eq!(vk.name, "VK_ERROR_OUT_OF_DEVICE_MEMORY");
        let npp = table_or_panic("npp").by_number(-9).unwrap();
        assert_eq!(npp.name, "NPP_MEMORY_ALLOCATION_ERR");
        assert_eq!(npp.class, Class::Memory);
        let dxgi = table_or_panic("hresult").by_number(0x887A_0005).unwrap();
        assert_eq!(dxgi.name, "DXGI_ERROR_DEVICE_REMOVED");
        let cl = table_or_panic("opencl");
        assert_eq!(cl.by_number(-6).unwrap().name, "CL_OUT_OF_HOST_MEMORY");
        assert_eq!(cl.by_number(-6).unwrap().class, Class::Memory);
        assert_eq!(cl.by_number(-5).unwrap().class, Class::Maybe);
        assert_eq!(
            cl.by_number(-72).unwrap().name,
            "CL_MAX_SIZE_RESTRICTION_EXCEEDED"
        );
        // OpenCL's names are read only in the forms programs print.
        assert!(by_name("CL_OUT_OF_HOST_MEMORY").is_none());
        let ort = table_or_panic("onnxruntime").by_number(6).unwrap();
        assert_eq!(ort.name, "ORT_RUNTIME_EXCEPTION");
        // ONNX Runtime's names are read only in its own forms.
        assert!(by_name("ORT_FAIL").is_none());
        let status = table_or_panic("ntstatus").by_number(0xC000_0409).unwrap();
        assert_eq!(status.name, "STATUS_STACK_BUFFER_OVERRUN");
        // The process tables are not read as GPU statuses.
        assert!(by_name("SIGKILL").is_none() && by_name("STATUS_NO_MEMORY").is_none());
    }

    fn table_or_panic(id: &str) -> &'static Table {
        table(id).unwrap()
    }
}
