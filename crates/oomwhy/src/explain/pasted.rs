//! Reasoning on diagnostics pasted alongside the error (`nvidia-smi`,
//! `torch.cuda.memory_summary()`; see [`crate::diagnostics`]). Both were
//! sampled at another moment than the failure, and every sentence built
//! here says so.

use super::common::{tolerance, MIB};
use super::thresholds::{
    FRAGMENTATION_MIN, FRAGMENTATION_NO_REQUEST_DIVISOR, FRAGMENTATION_NO_REQUEST_MIN,
    MANY_RETRIES, OWN_OVERHEAD,
};
use crate::i18n::Said;
use crate::record::{Finding, MemorySummary, SmiProcess};
use crate::say;
use crate::units::format_size as fmt;

/// The nvidia-smi row of `pid`, if the pasted table lists it.
pub(super) fn smi_process(f: &Finding, pid: u32) -> Option<&SmiProcess> {
    let smi = f.diagnostics.as_ref()?.nvidia_smi.as_ref()?;
    smi.processes.iter().find(|p| p.pid == Some(pid))
}

/// `; nvidia-smi: NAME on GPU N` for a PID the pasted table lists.
pub(super) fn smi_label(f: &Finding, pid: u32) -> Said {
    smi_process(f, pid)
        .map(|p| {
            say!(
                en: "; nvidia-smi: {name} on GPU {gpu}",
                zh: "；nvidia-smi：GPU {gpu} 上的 {name}",
                name = &p.name,
                gpu = p.gpu
            )
        })
        .unwrap_or_default()
}

/// Other processes on the failing GPU according to the pasted nvidia-smi
/// table, for messages without a process list. The GPU is the message's
/// device, or the only GPU of the table. The own process is left out: the
/// smallest row holding at least what PyTorch reserved (`reserved`) and at
/// most [`OWN_OVERHEAD`] more, if any (none when nvidia-smi ran after the
/// crash, when the process was gone).
/// Returns the rows counted and the PID taken for this process.
pub(super) fn smi_others(
    f: &Finding,
    reserved: Option<u64>,
) -> Option<(Vec<&SmiProcess>, Option<u32>)> {
    let smi = f.diagnostics.as_ref()?.nvidia_smi.as_ref()?;
    let gpu = match f.device {
        Some(d) => d,
        None if smi.gpus.len() == 1 => smi.gpus[0].index,
        None => return None,
    };
    let on_gpu: Vec<&SmiProcess> = smi
        .processes
        .iter()
        .filter(|p| p.gpu == gpu && p.used_bytes.is_some())
        .collect();
    if on_gpu.is_empty() {
        return None;
    }
    let own = reserved.and_then(|r| {
        on_gpu
            .iter()
            .filter(|p| {
                let used = p.used_bytes.unwrap_or(0);
                used + tolerance(r) + MIB >= r && used <= r.saturating_add(OWN_OVERHEAD)
            })
            .min_by_key(|p| p.used_bytes)
            .and_then(|p| p.pid)
    });
    let others = on_gpu
        .into_iter()
        .filter(|p| own.is_none() || p.pid != own)
        .collect();
    Some((others, own))
}

/// `PID 88123 (python3, 20.31 GiB)` items for nvidia-smi rows.
pub(super) fn smi_names(rows: &[&SmiProcess]) -> Said {
    let items: Vec<Said> = rows
        .iter()
        .take(5)
        .map(|p| {
            say!(
                en: "PID {pid} ({name}, {used})",
                zh: "PID {pid}（{name}，{used}）",
                pid = p.pid.map_or("N/A".into(), |pid| pid.to_string()),
                name = &p.name,
                used = fmt(p.used_bytes.unwrap_or(0))
            )
        })
        .collect();
    Said {
        en: items
            .iter()
            .map(|s| s.en.as_str())
            .collect::<Vec<_>>()
            .join(", "),
        zh: items
            .iter()
            .map(|s| s.zh.as_str())
            .collect::<Vec<_>>()
            .join("、"),
    }
}

/// The memory summary printed with the error, if any.
pub(super) fn summary(f: &Finding) -> Option<&MemorySummary> {
    f.diagnostics.as_ref()?.memory_summary.as_ref()
}

/// The summary's non-releasable memory as fragmentation evidence: ≥ 64 MiB
/// and at least the request, or (without a request) ≥ 1 GiB and ≥ 20 % of
/// what the summary shows reserved.
pub(super) fn non_releasable_evidence(f: &Finding) -> Option<Said> {
    let m = summary(f)?;
    let n = m.non_releasable_current_bytes?;
    let enough = match f.sizes.requested_bytes {
        Some(a) => n >= FRAGMENTATION_MIN && n >= a,
        None => {
            n >= FRAGMENTATION_NO_REQUEST_MIN
                && m.reserved_current_bytes
                    .is_some_and(|r| n >= r / FRAGMENTATION_NO_REQUEST_DIVISOR)
        }
    };
    enough.then(|| {
        say!(
            en: "The memory summary printed with the error (device {device}) shows {size} of non-releasable memory: free space inside split blocks that cannot be returned or reused for a larger block.",
            zh: "随报错打印的显存摘要（设备 {device}）显示有 {size} 不可释放的显存：被拆分的块里的空闲空间，既不能归还，也不能给更大的块复用。",
            device = m.device.map_or("?".into(), |d| d.to_string()),
            size = fmt(n)
        )
    })
}

/// Peak usage and cudaMalloc retries from the summary, for the details.
pub(super) fn summary_note(f: &Finding) -> Option<Said> {
    let m = summary(f)?;
    let mut parts = Vec::new();
    if let (Some(a), Some(r)) = (m.allocated_peak_bytes, m.reserved_peak_bytes) {
        parts.push(say!(
            en: "peak allocated {allocated}, peak reserved {reserved}",
            zh: "已分配峰值 {allocated}，已预留峰值 {reserved}",
            allocated = fmt(a),
            reserved = fmt(r)
        ));
    }
    if let Some(count) = m.alloc_retries.filter(|&r| r > 0) {
        parts.push(if count >= MANY_RETRIES {
            say!(
                en: "cudaMalloc was retried {retries} times: the allocator repeatedly had to flush its whole cache to find memory, so the run has lived at the limit for a while",
                zh: "cudaMalloc 重试了 {retries} 次：分配器一再需要清空整个缓存才能找到显存，说明这次运行已经在极限上待了一段时间",
                retries = count
            )
        } else if count == 1 {
            say!(
                en: "cudaMalloc was retried {retries} time (each retry flushes the allocator's cache: the run was at the limit before)",
                zh: "cudaMalloc 重试了 {retries} 次（每次重试都会清空分配器的缓存：之前就已经到了极限）",
                retries = count
            )
        } else {
            say!(
                en: "cudaMalloc was retried {retries} times (each retry flushes the allocator's cache: the run was at the limit before)",
                zh: "cudaMalloc 重试了 {retries} 次（每次重试都会清空分配器的缓存：之前就已经到了极限）",
                retries = count
            )
        });
    }
    if parts.is_empty() {
        return None;
    }
    let shows = say!(
        en: "The memory summary printed with the error (device {device}) shows ",
        zh: "随报错打印的显存摘要（设备 {device}）显示：",
        device = m.device.map_or("?".into(), |d| d.to_string())
    );
    Some(Said {
        en: format!(
            "{}{}.",
            shows.en,
            parts
                .iter()
                .map(|p| p.en.as_str())
                .collect::<Vec<_>>()
                .join("; ")
        ),
        zh: format!(
            "{}{}。",
            shows.zh,
            parts
                .iter()
                .map(|p| p.zh.as_str())
                .collect::<Vec<_>>()
                .join("；")
        ),
    })
}
