//! Memory snapshots: the analysis in `crate::snapshot` writes the verdicts
//! and fixes after the explainer has run (`snapshot::after_explain`), since
//! they come from the snapshot's segments and trace, not from message text.

use super::Explain;
use crate::i18n::Said;
use crate::record::{Diagnosis, Finding, Fix, Verdict};

/// Explains `Kind::MemorySnapshot` findings.
pub(super) struct MemorySnapshot;

impl Explain for MemorySnapshot {
    fn headline(&self, f: &Finding) -> Said {
        crate::snapshot::headline(f)
    }
    fn verdicts(&self, _f: &Finding, _d: &Diagnosis, _out: &mut Vec<Verdict>) {}
    fn fixes(&self, _f: &Finding, _d: &Diagnosis, _out: &mut Vec<Fix>) {}
}
