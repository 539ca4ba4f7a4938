//! Helpers shared by the robustness tests (properties, adversarial, hostile,
//! regressions): readers that split or generate input, and sample messages.
#![allow(dead_code)] // each area uses a different subset

use std::io::{self, Read, Write};
use std::path::{Path, PathBuf};
use std::process::{Output, Stdio};

/// The reserved-era message of the README.
pub const SEED: &str = "RuntimeError: CUDA out of memory. Tried to allocate 2.00 GiB (GPU 0; 8.00 GiB total capacity; 6.32 GiB already allocated; 1.56 GiB free; 7.88 GiB reserved in total by PyTorch)";

/// A 2.1+ sentence-form message.
pub const CAPACITY: &str = "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 4.39 GiB. GPU 3 has a total capacity of 22.30 GiB of which 2.94 GiB is free. Process 48849 has 19.36 GiB memory in use. Of the allocated memory 9.83 GiB is allocated by PyTorch, and 9.20 GiB is reserved by PyTorch but unallocated. If reserved but unallocated memory is large try setting PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True to avoid fragmentation.  See documentation for Memory Management  (https://pytorch.org/docs/stable/notes/cuda.html#environment-variables)";

/// A reader that hands out `data` in reads of the given sizes, cycling.
pub struct Chunked<'a> {
    data: &'a [u8],
    sizes: Vec<usize>,
    next: usize,
}

impl<'a> Chunked<'a> {
    /// `sizes` must not be empty nor hold a zero (that would read as EOF).
    pub fn new(data: &'a [u8], sizes: Vec<usize>) -> Self {
        assert!(!sizes.is_empty() && !sizes.contains(&0));
        Chunked {
            data,
            sizes,
            next: 0,
        }
    }
}

impl Read for Chunked<'_> {
    fn read(&mut self, out: &mut [u8]) -> io::Result<usize> {
        let size = self.sizes[self.next % self.sizes.len()];
        self.next += 1;
        let n = size.min(out.len()).min(self.data.len());
        out[..n].copy_from_slice(&self.data[..n]);
        self.data = &self.data[n..];
        Ok(n)
    }
}

/// Streams `head`, then `body` repeated until `body_len` bytes of it were
/// produced (the last copy cut), then `tail` — without ever holding more
/// than one copy in memory. Used for inputs of gigabytes.
pub struct Generated {
    parts: Vec<(Vec<u8>, u64)>,
    part: usize,
    pos: u64,
}

impl Generated {
    pub fn new(head: &[u8], body: &[u8], body_len: u64, tail: &[u8]) -> Self {
        assert!(!body.is_empty());
        Generated {
            parts: vec![
                (head.to_vec(), head.len() as u64),
                (body.to_vec(), body_len),
                (tail.to_vec(), tail.len() as u64),
            ],
            part: 0,
            pos: 0,
        }
    }

    /// Total number of bytes this reader produces.
    pub fn len(&self) -> u64 {
        self.parts.iter().map(|(_, n)| n).sum()
    }
}

impl Read for Generated {
    fn read(&mut self, out: &mut [u8]) -> io::Result<usize> {
        while let Some((pattern, len)) = self.parts.get(self.part) {
            if self.pos >= *len {
                self.part += 1;
                self.pos = 0;
                continue;
            }
            let mut written = 0;
            while written < out.len() && self.pos < *len {
                let offset = (self.pos % pattern.len() as u64) as usize;
                let left_in_part = (*len - self.pos).min(usize::MAX as u64) as usize;
                let n = (pattern.len() - offset)
                    .min(out.len() - written)
                    .min(left_in_part);
                out[written..written + n].copy_from_slice(&pattern[offset..offset + n]);
                written += n;
                self.pos += n as u64;
            }
            return Ok(written);
        }
        Ok(0)
    }
}

/// Every `fixtures/*.log`, sorted.
pub fn fixture_logs() -> Vec<PathBuf> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures");
    let mut logs: Vec<PathBuf> = std::fs::read_dir(dir)
        .expect("fixtures/ exists")
        .map(|e| e.expect("readable entry").path())
        .filter(|p| p.extension().is_some_and(|e| e == "log"))
        .collect();
    logs.sort();
    logs
}

/// The lines of every fixture, for building mixed inputs.
pub fn fixture_lines() -> Vec<String> {
    fixture_logs()
        .iter()
        .flat_map(|p| {
            std::fs::read_to_string(p)
                .expect("fixtures are UTF-8")
                .lines()
                .map(str::to_string)
                .collect::<Vec<_>>()
        })
        .filter(|l| !l.is_empty())
        .collect()
}

/// True if `c` must never reach a terminal raw: C0 controls but newline,
/// DEL, C1 controls, and the bidirectional overrides/isolates.
pub fn is_dangerous(c: char) -> bool {
    (c.is_control() && c != '\n') || matches!(c, '\u{202a}'..='\u{202e}' | '\u{2066}'..='\u{2069}')
}

/// Panics, showing where, if `text` holds a dangerous character.
pub fn assert_terminal_safe(text: &str, what: &str) {
    if let Some((at, c)) = text.char_indices().find(|&(_, c)| is_dangerous(c)) {
        let from = text[..at]
            .char_indices()
            .rev()
            .nth(40)
            .map_or(0, |(i, _)| i);
        panic!(
            "{what}: raw {c:?} at byte {at}, after {:?}",
            &text[from..at]
        );
    }
}

/// Runs the binary with `reader` streamed to its stdin. Returns its output
/// and its peak resident set (VmHWM, KiB) read from /proc just before its
/// stdin is closed, when it has processed all but the last pipe buffer.
pub fn run_streaming(args: &[&str], mut reader: impl Read) -> (Output, Option<u64>) {
    let mut child = std::process::Command::new(env!("CARGO_BIN_EXE_oomwhy"))
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut stdout = child.stdout.take().unwrap();
    let mut stderr = child.stderr.take().unwrap();
    let out_thread = std::thread::spawn(move || {
        let mut v = Vec::new();
        stdout.read_to_end(&mut v).unwrap();
        v
    });
    let err_thread = std::thread::spawn(move || {
        let mut v = Vec::new();
        stderr.read_to_end(&mut v).unwrap();
        v
    });
    let mut stdin = child.stdin.take().unwrap();
    let mut buf = vec![0u8; 1 << 20];
    loop {
        let n = reader.read(&mut buf).unwrap();
        if n == 0 {
            break;
        }
        stdin.write_all(&buf[..n]).unwrap();
    }
    let peak = peak_rss_kib(child.id());
    drop(stdin);
    let status = child.wait().unwrap();
    let output = Output {
        status,
        stdout: out_thread.join().unwrap(),
        stderr: err_thread.join().unwrap(),
    };
    (output, peak)
}

/// VmHWM of a live process, in KiB (Linux only).
pub fn peak_rss_kib(pid: u32) -> Option<u64> {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).ok()?;
    let line = status.lines().find(|l| l.starts_with("VmHWM:"))?;
    line.split_whitespace().nth(1)?.parse().ok()
}
