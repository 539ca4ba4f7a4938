//! Diagnostics pasted alongside an error: `nvidia-smi`'s default table and
//! `torch.cuda.memory_summary()`. Pure functions over lines; the scanner
//! decides where a block starts ([`start`]), which lines belong to it
//! ([`Block::continues`]) and which finding it belongs to.
//!
//! Layouts recognised (see fixtures/SOURCES-diag.md):
//! * nvidia-smi: the header `| NVIDIA-SMI 410.48   Driver Version: 410.48 |`
//!   (CUDA Version since R418), GPU rows `|   0  Tesla V100-DGXS...  Off  | ...`
//!   followed by `| N/A 38C P0 49W / 300W |  449MiB / 32478MiB | ...`, and the
//!   `Processes:` table, without (≤ R440) or with (≥ R450) the `GI CI`
//!   columns; names may contain spaces and paths; sizes are MiB.
//! * memory_summary: every layout since PyTorch 1.4 (`KB`/`MB`/`GB` before
//!   1.13ish, `KiB`/`MiB`/`GiB` after; all powers of 1024), full or abbreviated.

use crate::constant_regex;
use crate::record::{MemorySummary, NvidiaSmi, SmiGpu, SmiProcess};
use crate::units::MIB;
use regex::Regex;
use std::sync::OnceLock;

/// Most lines kept for one block; the rest of a longer table is ignored.
pub const MAX_BLOCK_LINES: usize = 200;

/// Literal phrases that start a block; the scanner's prefilter looks for them.
pub const TRIGGERS: &[&str] = &["NVIDIA-SMI", "memory summary, device ID"];

/// Which table a block is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TableKind {
    /// `nvidia-smi`'s default output.
    NvidiaSmi,
    /// `torch.cuda.memory_summary()`.
    MemorySummary,
}

/// A parsed diagnostic.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Parsed {
    /// An `nvidia-smi` table.
    NvidiaSmi(NvidiaSmi),
    /// A memory summary.
    MemorySummary(MemorySummary),
}

impl Parsed {
    /// 1-based line where the block started.
    pub fn line(&self) -> u64 {
        match self {
            Parsed::NvidiaSmi(s) => s.line,
            Parsed::MemorySummary(m) => m.line,
        }
    }
}

fn smi_header() -> &'static Regex {
    static RE: OnceLock<Regex> = OnceLock::new();
    RE.get_or_init(|| {
        constant_regex(r"NVIDIA-SMI\s+(\S+)\s+Driver Version:\s*(\S+)(?:\s+CUDA Version:\s*(\S+))?")
    })
}

fn summary_title() -> &'static Regex {
    static RE: OnceLock<Regex> = OnceLock::new();
    RE.get_or_init(|| constant_regex(r"CUDA memory summary, device ID (\d+)"))
}

/// The kind of block that starts on this line, if one does.
pub fn start(line: &str) -> Option<TableKind> {
    if line.contains("NVIDIA-SMI") && smi_header().is_match(line) {
        Some(TableKind::NvidiaSmi)
    } else if line.contains("memory summary, device ID") && summary_title().is_match(line) {
        Some(TableKind::MemorySummary)
    } else {
        None
    }
}

/// A block being collected.
#[derive(Debug)]
pub struct Block {
    /// What it is.
    pub kind: TableKind,
    /// 1-based line of its first line.
    pub line: u64,
    /// Its lines, at most [`MAX_BLOCK_LINES`].
    pub lines: Vec<String>,
    blank_run: u32,
    full: bool,
}

impl Block {
    /// A block of `kind` whose first line (number `line`) is `text`.
    pub fn new(kind: TableKind, line: u64, text: String) -> Self {
        Block {
            kind,
            line,
            lines: vec![text],
            blank_run: 0,
            full: false,
        }
    }

    /// Whether `next` belongs to the block; if so it is kept (up to the bound).
    /// Table lines start and end with `|` or `+` (a logged message such as
    /// fairseq's `| WARNING | ... | OOM: ...` does not end so); nvidia-smi separates its two tables
    /// with one blank line. A second title ends a block (fairseq prints one
    /// summary per device).
    pub fn continues(&mut self, next: &str) -> bool {
        let t = next.trim();
        let belongs = if t.is_empty() {
            self.kind == TableKind::NvidiaSmi && {
                self.blank_run += 1;
                self.blank_run <= 1
            }
        } else {
            self.blank_run = 0;
            (t.starts_with('|') || t.starts_with('+'))
                && (t.ends_with('|') || t.ends_with('+'))
                && start(t).is_none()
        };
        if belongs && !self.full {
            self.lines.push(next.to_string());
            self.full = self.lines.len() >= MAX_BLOCK_LINES;
        }
        belongs
    }

    /// Parses the collected lines.
    pub fn parse(&self) -> Option<Parsed> {
        match self.kind {
            TableKind::NvidiaSmi => parse_nvidia_smi(&self.lines, self.line).map(Parsed::NvidiaSmi),
            TableKind::MemorySummary => {
                parse_memory_summary(&self.lines, self.line).map(Parsed::MemorySummary)
            }
        }
    }
}

/// Parses nvidia-smi's default table; `lines[0]` is the header line.
pub fn parse_nvidia_smi(lines: &[String], line: u64) -> Option<NvidiaSmi> {
    static GPU: OnceLock<Regex> = OnceLock::new();
    static MEM: OnceLock<Regex> = OnceLock::new();
    let gpu_re = GPU.get_or_init(|| constant_regex(r"^\|\s*(\d+)\s+(.+?)\s+(?:On|Off)\s*\|"));
    let mem_re = MEM.get_or_init(|| constant_regex(r"\|\s*(\d+)MiB\s*/\s*(\d+)MiB\s*\|"));
    let header = smi_header().captures(lines.first()?)?;
    let mut smi = NvidiaSmi {
        line,
        driver_version: Some(header[2].to_string()),
        cuda_version: header.get(3).map(|m| m.as_str().to_string()),
        ..NvidiaSmi::default()
    };
    let mut in_processes = false;
    let mut expect_memory = false;
    for raw in &lines[1..] {
        let t = raw.trim();
        if t.contains("Processes:") {
            in_processes = true;
            continue;
        }
        if t.contains("MIG devices:") {
            in_processes = false;
            expect_memory = false;
            continue;
        }
        if in_processes {
            smi.processes.extend(parse_process_row(t));
            continue;
        }
        if expect_memory {
            expect_memory = false;
            if let Some(gpu) = smi.gpus.last_mut() {
                if let Some(c) = mem_re.captures(t) {
                    gpu.used_bytes = c[1].parse::<u64>().ok().and_then(|v| v.checked_mul(MIB));
                    gpu.total_bytes = c[2].parse::<u64>().ok().and_then(|v| v.checked_mul(MIB));
                }
            }
            continue;
        }
        if let Some(c) = gpu_re.captures(t) {
            let Ok(index) = c[1].parse() else { continue };
            smi.gpus.push(SmiGpu {
                index,
                name: c[2].trim().to_string(),
                used_bytes: None,
                total_bytes: None,
            });
            expect_memory = true;
        }
    }
    Some(smi)
}

/// One row of the Processes table: `|    0   N/A  N/A     12345      C   python    78920MiB |`
/// (≥ R450) or `|    0     12345      C   python    78920MiB |` (older).
fn parse_process_row(t: &str) -> Option<SmiProcess> {
    let inner = t.strip_prefix('|')?.strip_suffix('|')?.trim();
    let tokens: Vec<(usize, &str)> = split_tokens(inner);
    if tokens.len() < 4 {
        return None;
    }
    let gpu: u32 = tokens[0].1.parse().ok()?;
    // The type column: C, G, M, C+G, M+C, ... within the first six tokens.
    let is_type = |s: &str| {
        !s.is_empty()
            && s.len() <= 5
            && s.chars().all(|c| matches!(c, 'C' | 'G' | 'M' | '+'))
            && s.chars().any(|c| c != '+')
    };
    let type_at = (2..tokens.len().min(6)).find(|&i| is_type(tokens[i].1))?;
    let pid_token = tokens[type_at - 1].1;
    let pid = pid_token.parse().ok();
    if pid.is_none() && pid_token != "N/A" {
        return None;
    }
    let (last_at, last) = *tokens.last()?;
    if tokens.len() - 1 <= type_at {
        return None;
    }
    let used_bytes = if last == "N/A" {
        None
    } else {
        let mib: u64 = last.strip_suffix("MiB")?.parse().ok()?;
        mib.checked_mul(MIB)
    };
    let name_start = tokens[type_at + 1].0;
    let name = inner[name_start..last_at].trim().to_string();
    Some(SmiProcess {
        gpu,
        pid,
        kind: tokens[type_at].1.to_string(),
        name,
        used_bytes,
    })
}

/// Whitespace-separated tokens with their byte offsets.
fn split_tokens(s: &str) -> Vec<(usize, &str)> {
    let mut out = Vec::new();
    let mut start = None;
    for (i, c) in s.char_indices() {
        if c.is_whitespace() {
            if let Some(b) = start.take() {
                out.push((b, &s[b..i]));
            }
        } else if start.is_none() {
            start = Some(i);
        }
    }
    if let Some(b) = start {
        out.push((b, &s[b..]));
    }
    out
}

/// Parses `torch.cuda.memory_summary()`; `lines[0]` is the title line.
pub fn parse_memory_summary(lines: &[String], line: u64) -> Option<MemorySummary> {
    static COUNTS: OnceLock<Regex> = OnceLock::new();
    let counts_re = COUNTS
        .get_or_init(|| constant_regex(r"CUDA OOMs:\s*(\d+)\s*\|\s*cudaMalloc retries:\s*(\d+)"));
    let title = summary_title().captures(lines.first()?)?;
    let mut m = MemorySummary {
        line,
        device: title[1].parse().ok(),
        ..MemorySummary::default()
    };
    for raw in &lines[1..] {
        let t = raw.trim();
        if let Some(c) = counts_re.captures(t) {
            m.ooms = c[1].parse().ok();
            m.alloc_retries = c[2].parse().ok();
            continue;
        }
        let cells: Vec<&str> = t.trim_matches('|').split('|').map(str::trim).collect();
        if cells.len() < 3 {
            continue;
        }
        let (current, peak) = (parse_size(cells[1]), parse_size(cells[2]));
        let slot = match cells[0] {
            "Allocated memory" => (&mut m.allocated_current_bytes, &mut m.allocated_peak_bytes),
            "Active memory" => (&mut m.active_current_bytes, &mut m.active_peak_bytes),
            "Requested memory" => (&mut m.requested_current_bytes, &mut m.requested_peak_bytes),
            "GPU reserved memory" => (&mut m.reserved_current_bytes, &mut m.reserved_peak_bytes),
            "Non-releasable memory" => (
                &mut m.non_releasable_current_bytes,
                &mut m.non_releasable_peak_bytes,
            ),
            _ => continue,
        };
        *slot.0 = current;
        *slot.1 = peak;
    }
    Some(m)
}

/// `15046 MB`, `184648 KiB`, `512 B` → bytes (every unit a power of 1024).
fn parse_size(cell: &str) -> Option<u64> {
    let mut parts = cell.split_whitespace();
    let number: u64 = parts.next()?.parse().ok()?;
    let power = match parts.next()? {
        "B" => 0,
        "KB" | "KiB" => 1,
        "MB" | "MiB" => 2,
        "GB" | "GiB" => 3,
        "TB" | "TiB" => 4,
        "PB" | "PiB" => 5,
        _ => return None,
    };
    number.checked_mul(1u64.checked_shl(10 * power)?)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn collect(text: &str) -> Option<Parsed> {
        let mut lines = text.lines();
        let first = lines.find(|l| start(l).is_some())?;
        let mut block = Block::new(start(first)?, 1, first.to_string());
        for l in lines {
            if !block.continues(l) {
                break;
            }
        }
        block.parse()
    }

    // Layout of R410 (no GI/CI columns, no CUDA version).
    const SMI_410: &str = "\
Wed Jun 26 02:44:30 2019
+-----------------------------------------------------------------------------+
| NVIDIA-SMI 410.48                 Driver Version: 410.48                    |
|-------------------------------+----------------------+----------------------+
| GPU  Name        Persistence-M| Bus-Id        Disp.A | Volatile Uncorr. ECC |
| Fan  Temp  Perf  Pwr:Usage/Cap|         Memory-Usage | GPU-Util  Compute M. |
|===============================+======================+======================|
|   0  Tesla V100-DGXS...  Off  | 00000000:82:00.0 Off |                    0 |
| N/A   38C    P0    49W / 300W |  30449MiB / 32478MiB |      0%      Default |
+-------------------------------+----------------------+----------------------+

+-----------------------------------------------------------------------------+
| Processes:                                                       GPU Memory |
|  GPU       PID   Type   Process name                             Usage      |
|=============================================================================|
|    0     87315      C   python                                     30439MiB |
+-----------------------------------------------------------------------------+
after
";

    // Layout of R535+ (GI/CI columns, paths and spaces in names, C+G).
    const SMI_550: &str = "\
+-----------------------------------------------------------------------------------------+
| NVIDIA-SMI 550.135                Driver Version: 550.135        CUDA Version: 12.4     |
|-----------------------------------------+------------------------+----------------------+
| GPU  Name                 Persistence-M | Bus-Id          Disp.A | Volatile Uncorr. ECC |
| Fan  Temp   Perf          Pwr:Usage/Cap |           Memory-Usage | GPU-Util  Compute M. |
|                                         |                        |               MIG M. |
|=========================================+========================+======================|
|   0  NVIDIA A100-SXM4-80GB          On  |   00000000:07:00.0 Off |                    0 |
| N/A   34C    P0             61W /  400W |   78935MiB /  81920MiB |      0%      Default |
|                                         |                        |             Disabled |
+-----------------------------------------+------------------------+----------------------+
|   1  NVIDIA GB10                    On  |   0000000F:01:00.0 Off |                  N/A |
| N/A   63C    P0             44W /  N/A  | Not Supported          |     96%      Default |
|                                         |                        |                  N/A |
+-----------------------------------------+------------------------+----------------------+
                                                                                         
+-----------------------------------------------------------------------------------------+
| Processes:                                                                              |
|  GPU   GI   CI              PID   Type   Process name                        GPU Memory |
|        ID   ID                                                               Usage      |
|=========================================================================================|
|    0   N/A  N/A            3154      G   /usr/lib/xorg/Xorg                       18MiB |
|    0   N/A  N/A          166340    C+G   ...ery Lover 2\\MysteryLover2.exe        300MiB |
|    0   N/A  N/A           23451      C   /usr/bin/python3                      56501MiB |
|    1   N/A  N/A             N/A      C   python                                   N/A  |
+-----------------------------------------------------------------------------------------+
";

    #[test]
    fn parses_old_nvidia_smi() {
        let Some(Parsed::NvidiaSmi(s)) = collect(SMI_410) else {
            panic!("not parsed")
        };
        assert_eq!(s.driver_version.as_deref(), Some("410.48"));
        assert_eq!(s.cuda_version, None);
        assert_eq!(s.gpus.len(), 1);
        assert_eq!(s.gpus[0].name, "Tesla V100-DGXS...");
        assert_eq!(s.gpus[0].used_bytes, Some(30449 * MIB));
        assert_eq!(s.gpus[0].total_bytes, Some(32478 * MIB));
        assert_eq!(
            s.processes,
            vec![SmiProcess {
                gpu: 0,
                pid: Some(87315),
                kind: "C".into(),
                name: "python".into(),
                used_bytes: Some(30439 * MIB)
            }]
        );
    }

    #[test]
    fn parses_new_nvidia_smi() {
        let Some(Parsed::NvidiaSmi(s)) = collect(SMI_550) else {
            panic!("not parsed")
        };
        assert_eq!(s.driver_version.as_deref(), Some("550.135"));
        assert_eq!(s.cuda_version.as_deref(), Some("12.4"));
        assert_eq!(s.gpus.len(), 2);
        assert_eq!(s.gpus[0].index, 0);
        assert_eq!(s.gpus[0].name, "NVIDIA A100-SXM4-80GB");
        assert_eq!(s.gpus[0].used_bytes, Some(78935 * MIB));
        assert_eq!(s.gpus[1].used_bytes, None);
        assert_eq!(s.processes.len(), 4);
        assert_eq!(s.processes[1].kind, "C+G");
        assert_eq!(s.processes[1].name, "...ery Lover 2\\MysteryLover2.exe");
        assert_eq!(s.processes[2].pid, Some(23451));
        assert_eq!(s.processes[2].name, "/usr/bin/python3");
        assert_eq!(s.processes[2].used_bytes, Some(56501 * MIB));
        assert_eq!(s.processes[3].pid, None);
        assert_eq!(s.processes[3].used_bytes, None);
    }

    #[test]
    fn no_running_processes() {
        let text = "| NVIDIA-SMI 550.135   Driver Version: 550.135   CUDA Version: 12.4 |\n| Processes: |\n|  No running processes found   |\n+---+\n";
        let Some(Parsed::NvidiaSmi(s)) = collect(text) else {
            panic!("not parsed")
        };
        assert!(s.processes.is_empty());
    }

    #[test]
    fn nvidia_smi_failure_is_not_a_table() {
        assert_eq!(
            start("NVIDIA-SMI has failed because it couldn't communicate with the NVIDIA driver."),
            None
        );
    }

    // PyTorch ≤ 1.12 units (fairseq issue), full layout.
    const SUMMARY_OLD: &str = "\
|                  PyTorch CUDA memory summary, device ID 1                 |
|---------------------------------------------------------------------------|
|            CUDA OOMs: 1            |        cudaMalloc retries: 3         |
|===========================================================================|
|        Metric         | Cur Usage  | Peak Usage | Tot Alloc  | Tot Freed  |
|---------------------------------------------------------------------------|
| Allocated memory      |   15046 MB |   15114 MB |   14505 GB |   14490 GB |
|       from large pool |   15015 MB |   15083 MB |   14253 GB |   14239 GB |
|---------------------------------------------------------------------------|
| GPU reserved memory   |   15240 MB |   15240 MB |   21830 MB |    6590 MB |
|---------------------------------------------------------------------------|
| Non-releasable memory |  198144 KB |    1024 MB |   14960 GB |   14960 GB |
|---------------------------------------------------------------------------|
| Allocations           |    1285    |    1331    |    7913 K  |    7912 K  |
|===========================================================================|
2021-08-02 | next
";

    #[test]
    fn parses_old_memory_summary() {
        let Some(Parsed::MemorySummary(m)) = collect(SUMMARY_OLD) else {
            panic!("not parsed")
        };
        assert_eq!(m.device, Some(1));
        assert_eq!((m.ooms, m.alloc_retries), (Some(1), Some(3)));
        assert_eq!(m.allocated_current_bytes, Some(15046 * MIB));
        assert_eq!(m.allocated_peak_bytes, Some(15114 * MIB));
        assert_eq!(m.reserved_current_bytes, Some(15240 * MIB));
        assert_eq!(m.non_releasable_current_bytes, Some(198144 * 1024));
        assert_eq!(m.non_releasable_peak_bytes, Some(1024 * MIB));
        assert_eq!(m.requested_current_bytes, None);
    }

    #[test]
    fn parses_new_memory_summary_units() {
        let text = "|   PyTorch CUDA memory summary, device ID 0   |\n| Allocated memory      | 184648 KiB | 192833 KiB | 258378 KiB |  73729 KiB |\n| Requested memory      |      0 B   |    512 B   |      1 GiB |      0 B   |\n";
        let Some(Parsed::MemorySummary(m)) = collect(text) else {
            panic!("not parsed")
        };
        assert_eq!(m.allocated_current_bytes, Some(184_648 * 1024));
        assert_eq!(m.requested_current_bytes, Some(0));
        assert_eq!(m.requested_peak_bytes, Some(512));
    }

    #[test]
    fn a_second_title_ends_the_block() {
        let mut block = Block::new(
            TableKind::MemorySummary,
            1,
            "| PyTorch CUDA memory summary, device ID 0 |".into(),
        );
        assert!(block.continues("|=====|"));
        assert!(!block.continues("| PyTorch CUDA memory summary, device ID 1 |"));
    }

    #[test]
    fn blocks_are_bounded() {
        let mut block = Block::new(
            TableKind::NvidiaSmi,
            1,
            "| NVIDIA-SMI 1 Driver Version: 1 |".into(),
        );
        for _ in 0..1000 {
            assert!(block.continues("| x |"));
        }
        assert_eq!(block.lines.len(), MAX_BLOCK_LINES);
    }
}
