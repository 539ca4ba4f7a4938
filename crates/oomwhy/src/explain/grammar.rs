//! Findings of the general grammar (`detect/grammar.rs`) that a kind's own
//! explanation would misname: the host-memory explanation speaks of
//! PyTorch's CPU allocator, but the grammar's host findings come from any
//! stack (a data pipeline's pinned buffer, Python's `MemoryError`).
//! Everything else about them is the kind's own explanation.

use super::common::{row, FieldRow};
use crate::i18n::Said;
use crate::record::{fact, Finding, Kind};
use crate::say;
use crate::say_parts;
use crate::units::format_size as fmt;

/// The program the grammar named, for a finding it made (the JVM's own
/// limits have their own explanation, `explain/jvm.rs`).
fn reporter(f: &Finding) -> Option<&str> {
    (f.kind == Kind::HostOom && !super::jvm::owns(f))
        .then(|| f.facts.get(fact::REPORTED_BY).map(String::as_str))
        .flatten()
}

/// The headline of a host-memory finding the grammar made.
pub(super) fn headline(f: &Finding) -> Option<Said> {
    let reporter = reporter(f)?;
    // Ray's memory monitor kills workers; nothing failed to allocate.
    if reporter.starts_with("Ray's raylet") {
        return Some(say!(
            en: "Ray's memory monitor killed workers: the node's RAM use crossed its threshold (host memory, not GPU memory)",
            zh: "Ray 的内存监控杀掉了 worker：节点的内存使用超过了它的阈值（是主机内存，不是显存）"
        ));
    }
    // The writer's own words: nothing was read from a program.
    if f.facts.get("stated_in_prose").is_some_and(|v| v == "true")
        && f.sizes.requested_bytes.is_none()
    {
        return Some(say!(
            en: "Out of memory: the writer states in prose, with no message, that the machine's RAM ran out (host memory, not GPU memory)",
            zh: "内存不足：只有作者的叙述，没有报错，说的是机器的内存用完了（是主机内存，不是显存）"
        ));
    }
    Some(match f.sizes.requested_bytes.map(fmt) {
        Some(size) => say_parts!(
            en: "{reporter} could not allocate {size} of host memory (CPU RAM or pinned memory, not GPU memory)",
            zh: "{reporter} 无法分配 {size} 的主机内存（CPU 内存或锁页内存，不是显存）",
            reporter = crate::i18n::reporter::said(reporter),
            size = Said::same(size)
        ),
        None => say_parts!(
            en: "{reporter} could not allocate host memory (CPU RAM or pinned memory, not GPU memory)",
            zh: "{reporter} 无法分配主机内存（CPU 内存或锁页内存，不是显存）",
            reporter = crate::i18n::reporter::said(reporter)
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
                row(
                    say!(en: "Requested", zh: "申请量"),
                    format!("{} ({n} bytes)", fmt(n)),
                    say!(
                        en: "the allocation that failed, as the message states it",
                        zh: "失败的那次分配，按报错里写的大小"
                    ),
                    false,
                )
            })
            .into_iter()
            .collect(),
    )
}
