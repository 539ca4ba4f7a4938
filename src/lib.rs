//! oomwhy explains why a GPU ran out of memory.
//!
//! It reads training logs, finds every out-of-memory error and related CUDA
//! crash (PyTorch's caching allocator in every era, CUDA runtime errors,
//! illegal memory accesses, Windows fail-fast exits), decodes each into a
//! [`record::Finding`] with exact byte counts, and explains it.
//!
//! Data flows input → [`scanner`] → [`record`] → [`explain`] → [`render`]:
//!
//! ```
//! let log = "RuntimeError: CUDA out of memory. Tried to allocate 2.00 GiB \
//!     (GPU 0; 8.00 GiB total capacity; 6.32 GiB already allocated; \
//!     1.56 GiB free; 7.88 GiB reserved in total by PyTorch)";
//! let findings = oomwhy::decode_str(log);
//! assert_eq!(findings.len(), 1);
//! assert_eq!(findings[0].sizes.requested_bytes, Some(2 << 30));
//! // 7.88 GiB reserved + 1.56 GiB free is more than 8.00 GiB total.
//! assert_eq!(findings[0].diagnosis.verdicts[0].code, "inconsistent_numbers");
//! ```
#![forbid(unsafe_code)]
#![deny(missing_docs)]
// No panicking shortcuts on input-dependent paths (issue 6). The few
// remaining ones are constant regexes, each allowed where it is built.
#![cfg_attr(not(test), deny(clippy::unwrap_used, clippy::expect_used))]

pub mod context;
pub mod detect;
pub mod error;
pub mod explain;
pub mod normalize;
pub mod record;
pub mod render;
pub mod scanner;
pub mod units;

pub use error::{Error, Result};
pub use record::{Finding, Summary};
pub use scanner::{scan, ScanOutcome};

/// Collects the findings of several inputs into one explained report.
#[derive(Debug, Default)]
pub struct Analysis {
    findings: Vec<Finding>,
    summary: Summary,
}

impl Analysis {
    /// An empty analysis.
    pub fn new() -> Self {
        Self::default()
    }

    /// Adds the outcome of scanning one input.
    pub fn add(&mut self, outcome: ScanOutcome) {
        let offset = self.findings.len();
        self.summary.inputs += 1;
        self.summary.lines += outcome.lines;
        self.summary.bytes += outcome.bytes;
        for (local, mut finding) in outcome.findings.into_iter().enumerate() {
            finding.id = offset + local + 1;
            // Consequences point at a local index until they get global ids.
            finding.consequence_of = finding.consequence_of.map(|i| offset + i + 1);
            self.findings.push(finding);
        }
    }

    /// Records an input that could not be read.
    pub fn add_error(&mut self) {
        self.summary.inputs += 1;
        self.summary.input_errors += 1;
    }

    /// Explains every finding and returns them with the summary.
    pub fn finish(mut self) -> (Vec<Finding>, Summary) {
        explain::explain_all(&mut self.findings);
        let s = &mut self.summary;
        s.findings = self.findings.len();
        for f in &self.findings {
            match f.category {
                record::Category::Oom => s.oom += 1,
                record::Category::LikelyOom => s.likely_oom += 1,
                record::Category::Crash => s.crash += 1,
            }
        }
        (self.findings, self.summary)
    }
}

/// Finds and explains every message in `text` (e.g. a pasted error).
pub fn decode_str(text: &str) -> Vec<Finding> {
    let mut analysis = Analysis::new();
    // Reading from a byte slice cannot fail.
    if let Ok(outcome) = scan(text.as_bytes(), "<stdin>") {
        analysis.add(outcome);
    }
    analysis.finish().0
}
