//! The log scanner (`oomwhy::scan_log`) through a reader that returns arbitrary chunk sizes; the
//! findings and counts must equal those of reading the same bytes at once.
//!
//! Input layout: byte 0 mod 16 = how many chunk sizes follow (each byte + 1,
//! used in a cycle, 1..=256 bytes per read); the rest is the log.
#![no_main]

use libfuzzer_sys::fuzz_target;
use std::io::Read;

struct Chunked<'a> {
    data: &'a [u8],
    sizes: &'a [u8],
    next: usize,
}

impl Read for Chunked<'_> {
    fn read(&mut self, out: &mut [u8]) -> std::io::Result<usize> {
        let size = match self.sizes {
            [] => 1,
            sizes => usize::from(sizes[self.next % sizes.len()]) + 1,
        };
        self.next += 1;
        let n = size.min(out.len()).min(self.data.len());
        out[..n].copy_from_slice(&self.data[..n]);
        self.data = &self.data[n..];
        Ok(n)
    }
}

fuzz_target!(|data: &[u8]| {
    let Some((&count, rest)) = data.split_first() else {
        return;
    };
    let count = usize::from(count % 16).min(rest.len());
    let (sizes, log) = rest.split_at(count);
    let whole = oomwhy::scan_log(log, "fuzz").expect("a slice reads without error");
    let reader = Chunked {
        data: log,
        sizes,
        next: 0,
    };
    let chunked = oomwhy::scan_log(reader, "fuzz").expect("the reader never fails");
    assert_eq!(chunked.findings, whole.findings, "chunk sizes {sizes:?}");
    assert_eq!(chunked.lines, whole.lines);
    assert_eq!(chunked.bytes, whole.bytes);
    assert_eq!(chunked.long_lines, whole.long_lines);
});
