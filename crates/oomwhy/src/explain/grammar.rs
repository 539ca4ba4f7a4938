//! Findings of the general grammar (`detect/grammar.rs`) that a kind's own
//! explanation would misname: the host-memory explanation speaks of
//! PyTorch's CPU allocator, but the grammar's host findings come from any
//! stack (a data pipeline's pinned buffer, Python's `MemoryError`).
//! Everything else about them is the kind's own explanation.

use super::common::{row_en, FieldRow};
use crate::record::{fact, Finding, Kind};
use crate::units::format_size as fmt;

/// The program the grammar named, for a finding it made.
fn reporter(f: &Finding) -> Option<&str> {
    (f.kind == Kind::HostOom)
        .then(|| f.facts.get(fact::REPORTED_BY).map(String::as_str))
        .flatten()
}

/// The headline of a host-memory finding the grammar made.
pub(super) fn headline(f: &Finding) -> Option<String> {
    let reporter = reporter(f)?;
    Some(match f.sizes.requested_bytes.map(fmt) {
        Some(size) => format!(
            "{reporter} could not allocate {size} of host memory (CPU RAM or pinned memory, not GPU memory)"
        ),
        None => format!(
            "{reporter} could not allocate host memory (CPU RAM or pinned memory, not GPU memory)"
        ),
    })
}

/// The numbers of a host-memory finding the grammar made.
pub(super) fn field_rows(f: &Finding) -> Option<Vec<FieldRow>> {
    reporter(f)?;
    Some(
        f.sizes
            .requested_bytes
            .map(|n| {
                row_en(
                    "Requested",
                    format!("{} ({n} bytes)", fmt(n)),
                    "the allocation that failed, as the message states it",
                    false,
                )
            })
            .into_iter()
            .collect(),
    )
}
