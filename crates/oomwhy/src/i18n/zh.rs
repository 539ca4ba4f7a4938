//! The Chinese text of what the explainer says, looked up at render time.
//!
//! The explainer writes English; this catalogue gives the Chinese for each
//! kind's headline, each verdict code's title and detail, each fix (keyed by
//! its English title: fixes have no code) and each field row (keyed by its
//! English label). Details are templates over named figures of the finding
//! (`{requested}`, `{free}`, `{fact:status}` …, see [`figures`]); the first
//! alternative whose figures are all known is used, so a Chinese detail still
//! names the figure it rests on. What has no entry here stays English
//! (`tests/i18n.rs` fails when a kind, verdict code or fixture's text has none).

use crate::record::{Category, Finding, Kind, SnapshotReport};
use crate::units::format_size;
use std::collections::HashMap;

/// The figures a template may name, as oomwhy prints them.
pub fn figures(f: &Finding) -> HashMap<String, String> {
    let s = &f.sizes;
    let d = &f.diagnosis;
    let mut out = HashMap::new();
    let mut size = |name: &str, value: Option<u64>| {
        if let Some(v) = value {
            out.insert(name.to_string(), format_size(v));
        }
    };
    size("requested", s.requested_bytes);
    size("total", s.total_bytes);
    size("free", s.free_bytes);
    size("allocated", s.allocated_bytes);
    size("reserved", d.reserved_bytes);
    size("unallocated", d.reserved_unallocated_bytes);
    size("allowed", s.allowed_bytes);
    size("pools", s.private_pools_bytes);
    size("in_use", s.process_in_use_bytes);
    size("non_pytorch", d.non_pytorch_bytes);
    size("others", d.other_processes_bytes.filter(|&b| b > 0));
    // An out-of-memory killer's victim too small to have filled the machine.
    if let Some(held) = crate::explain::small_victim_bytes(f) {
        out.insert("small_victim".into(), format_size(held));
    }
    // The earlier Xid a follow-up Xid names.
    if let Some(earlier) = crate::explain::xid_caused_by(f) {
        out.insert("caused_by_xid".into(), earlier.to_string());
    }
    // The request with its device (`figures_missing`).
    if let Some(requested) = s.requested_bytes {
        let size = format_size(requested);
        out.insert(
            "requested_on".into(),
            match f.device {
                Some(gpu) => format!("GPU {gpu} 上 {size} "),
                None => format!("{size} "),
            },
        );
    }
    let signed = |v: i64| {
        let text = format_size(v.unsigned_abs());
        if v < 0 {
            format!("-{text}")
        } else {
            text
        }
    };
    if let Some(v) = d.shortfall_bytes {
        out.insert("shortfall".into(), signed(v));
    }
    if let Some(v) = d.outside_allocator_bytes {
        out.insert("outside".into(), signed(v));
    }
    if let (Some(r), Some(free), Some(total)) = (d.reserved_bytes, s.free_bytes, s.total_bytes) {
        out.insert(
            "reserved_plus_free".into(),
            format_size(r.saturating_add(free)),
        );
        let _ = total;
    }
    if let (Some(gap), Some(reserved)) = (d.reserved_unallocated_bytes, d.reserved_bytes) {
        if let Some(share) = gap.saturating_mul(100).checked_div(reserved) {
            out.insert("gap_share".into(), share.to_string());
        }
    }
    if let Some(device) = f.device {
        out.insert("device".into(), format!("GPU {device}"));
    }
    if let Some(meaning) = f.facts.get("xid").and_then(|x| xid_meaning(x)) {
        out.insert("xid_meaning".into(), meaning.into());
    }
    if let (Some(a), Some(o), Some(r)) = (
        s.allocated_bytes,
        s.extra.get("other_allocations_bytes").copied().flatten(),
        s.requested_bytes,
    ) {
        out.insert(
            "mps_total".into(),
            format_size(a.saturating_add(o).saturating_add(r)),
        );
    }
    if let Some(step) = f.last_step {
        out.insert("step".into(), step.to_string());
    }
    if let Some(id) = f.consequence_of {
        out.insert("cause".into(), id.to_string());
    }
    for (key, value) in &f.facts {
        out.insert(format!("fact:{key}"), value.clone());
    }
    // Empty, so that a verdict shared by several kinds can word its
    // detail for one of them (`{kind:gpu_fallen_off_bus}…`).
    out.insert(format!("kind:{}", f.kind.slug()), String::new());
    if f.facts.get("resource").map(String::as_str) == Some("shared memory") {
        out.insert("shared_memory".into(), String::new());
    }
    // A launcher's root cause killed by SIGKILL (exit code -9): the
    // detector makes only that report a likely OOM.
    if f.kind == Kind::ChildFailed && f.category == Category::LikelyOom {
        out.insert("root_cause_killed".into(), String::new());
    }
    if f.occurrences > 1 {
        out.insert("occurrences".into(), f.occurrences.to_string());
    }
    if f.kind == Kind::GpuFallenOffBus {
        // The detector names the kernel driver in English; nvidia-smi stays.
        let by = f.facts.get("reported_by").map(String::as_str);
        out.insert(
            "lost_by".into(),
            match by {
                Some("NVIDIA kernel driver") | None => "据 NVIDIA 内核驱动报告".into(),
                Some(other) => format!("据 {other} 报告"),
            },
        );
    }
    // A status code whose class says memory pressure commonly causes it.
    if f.kind == Kind::GpuRuntimeError
        && f.facts.get("code_class").map(String::as_str) == Some("maybe")
    {
        out.insert("status_maybe".into(), String::new());
    }
    fatal_signal_figures(f, &mut out);
    outside_process_figures(f, &mut out);
    snapshot_figures(f, &mut out);
    for (key, value) in &s.extra {
        if let Some(v) = value {
            out.insert(format!("size:{key}"), format_size(*v));
        }
    }
    out
}

/// A fatal signal's case as figures: `{worker_shm}` and `{worker}` are
/// empty and only present in their case (templates test for them), and
/// `{bus_note}` is the sentence a bus error adds.
fn fatal_signal_figures(f: &Finding, out: &mut HashMap<String, String>) {
    if f.kind != Kind::FatalSignal {
        return;
    }
    let worker = f.era == Some(crate::record::Era::Dataloader);
    if worker && f.facts.contains_key("memory") {
        out.insert("worker_shm".into(), String::new());
    }
    if worker {
        out.insert("worker".into(), String::new());
    }
    let signal = f.facts.get("signal").map(String::as_str);
    if let Some(name) = signal.and_then(|s| s.split(" (").next()) {
        out.insert("signal_name".into(), name.to_string());
    }
    let bus = signal.is_some_and(|s| s.starts_with("SIGBUS"));
    out.insert(
        "bus_note".into(),
        if bus {
            "用了 DataLoader worker 的任务出现总线错误，通常是 /dev/shm 用完了。".into()
        } else {
            String::new()
        },
    );
}

/// What the card holds outside this process (total − free − this process −
/// the listed processes), as `memory_outside_process` states it.
fn outside_process_figures(f: &Finding, out: &mut HashMap<String, String>) {
    let s = &f.sizes;
    let d = &f.diagnosis;
    let listed = d.other_processes_bytes.filter(|&b| b > 0);
    if let (Some(total), Some(free), Some(own)) =
        (s.total_bytes, s.free_bytes, s.process_in_use_bytes)
    {
        let outside = i128::from(total)
            - i128::from(free)
            - i128::from(own)
            - i128::from(listed.unwrap_or(0));
        if let Ok(outside) = u64::try_from(outside) {
            out.insert("outside_process".into(), format_size(outside));
            let shortfall = d
                .shortfall_bytes
                .and_then(|b| u64::try_from(b).ok())
                .unwrap_or(0);
            out.insert(
                "outside_note".into(),
                if shortfall > 0 && outside >= shortfall {
                    format!("这比缺的 {} 还多。", format_size(shortfall))
                } else {
                    String::new()
                },
            );
        }
        out.insert(
            "listed_note".into(),
            listed.map_or_else(String::new, |b| {
                format!("，列出的进程占用 {}", format_size(b))
            }),
        );
    }
    // What PyTorch holds plus the request (`numbers_inconclusive`).
    if let (Some(own), Some(requested)) =
        (d.reserved_bytes.or(s.allocated_bytes), s.requested_bytes)
    {
        out.insert("own".into(), format_size(own));
        out.insert(
            "own_plus".into(),
            format_size(own.saturating_add(requested)),
        );
        out.insert(
            "free_note".into(),
            s.free_bytes
                .map_or_else(String::new, |b| format!("空闲 {}，", format_size(b))),
        );
    }
}

/// The figures of a memory snapshot's OOM (`{snap:…}`).
fn snapshot_figures(f: &Finding, out: &mut HashMap<String, String>) {
    let Some(r) = f.snapshot.as_deref() else {
        return;
    };
    if let Some(limit) = r.max_split_size_bytes {
        out.insert("snap:max_split".into(), format_size(limit));
    }
    let Some(o) = &r.oom else {
        return;
    };
    let mut size = |name: &str, value: u64| {
        out.insert(format!("snap:{name}"), format_size(value));
    };
    size("request", o.request_bytes);
    size("allocation", o.allocation_bytes);
    size("other_stream_hole", o.largest_other_stream_hole_bytes);
    size("private_pool_hole", o.largest_private_pool_hole_bytes);
    size("oversize_hole", o.largest_oversize_hole_bytes);
    size("pending", o.pending_free_bytes);
    size("usable_free", o.usable_class_free_bytes);
    size("largest_hole", o.largest_usable_hole_bytes);
    size("cuda_free", o.device_free_bytes.unwrap_or(0));
    if let Some(d) = r.devices.iter().find(|d| d.device == o.device) {
        size("allocated", d.allocated_bytes);
        size("reserved", d.reserved_bytes);
    }
    out.insert("snap:device".into(), o.device.to_string());
    out.insert("snap:stream".into(), o.stream.to_string());
}

/// What an Xid code means, for the codes the explainer describes.
fn xid_meaning(xid: &str) -> Option<&'static str> {
    Some(match xid {
        "13" => "图形引擎异常",
        "31" => "GPU 显存页错误",
        "43" => "GPU 停止处理",
        "45" => "之前出错后的抢占式清理",
        "48" => "双比特 ECC 错误",
        "63" => "ECC 页退役或行重映射事件",
        "64" => "ECC 页退役或行重映射失败",
        "74" => "NVLink 错误",
        "79" => "GPU 从总线上掉线",
        "92" => "单比特 ECC 错误率过高",
        "94" => "已隔离的 ECC 错误",
        "95" => "未隔离的 ECC 错误",
        "119" => "GSP RPC 超时",
        _ => return None,
    })
}

/// Fills the first template whose figures are all known.
fn pick(templates: &[&str], figures: &HashMap<String, String>) -> Option<String> {
    'templates: for template in templates {
        let mut out = String::with_capacity(template.len() + 32);
        let mut rest = *template;
        while let Some(start) = rest.find('{') {
            out.push_str(&rest[..start]);
            let Some(len) = rest[start..].find('}') else {
                continue 'templates;
            };
            let name = &rest[start + 1..start + len];
            match figures.get(name) {
                Some(value) => out.push_str(value),
                None => continue 'templates,
            }
            rest = &rest[start + len + 1..];
        }
        out.push_str(rest);
        return Some(out);
    }
    None
}

/// The Chinese headline of a finding.
pub fn headline(f: &Finding) -> Option<String> {
    pick(headline_templates(f.kind), &figures(f))
}

/// The Chinese title and detail of a verdict.
pub fn verdict(code: &str, f: &Finding) -> Option<(String, String)> {
    let (_, titles, details) = VERDICTS.iter().find(|(c, _, _)| *c == code)?;
    let figures = figures(f);
    Some((pick(titles, &figures)?, pick(details, &figures)?))
}

/// The Chinese title of a verdict code, for `explain --list`.
pub fn verdict_title(code: &str) -> Option<&'static str> {
    VERDICTS
        .iter()
        .find(|(c, _, _)| *c == code)
        .and_then(|(_, titles, _)| titles.last().copied())
}

/// The Chinese title and how of a fix. A how may name `{export}`: the
/// first `export VAR=value` of the English how, which depends on the
/// PyTorch era (`PYTORCH_CUDA_ALLOC_CONF` or `PYTORCH_ALLOC_CONF`).
pub fn fix(title: &str, english_how: &str) -> Option<(String, String)> {
    if let Some(id) = title
        .strip_prefix("Fix finding [")
        .and_then(|rest| rest.strip_suffix("] first"))
    {
        return Some((
            format!("先解决发现 [{id}]"),
            format!("这个错误是发现 [{id}] 的连带后果。按那个发现的建议去改；只要没有 rank 再显存不足，这个错误就会消失。"),
        ));
    }
    static COMPILED: std::sync::OnceLock<Vec<(&str, regex::Regex, &str, &str)>> =
        std::sync::OnceLock::new();
    let patterns = COMPILED.get_or_init(|| {
        FIXES_BY_HOW
            .iter()
            .map(|(en, pattern, zh, how)| (*en, crate::constant_regex(pattern), *zh, *how))
            .collect()
    });
    let by_how = patterns.iter().find_map(|(en, re, zh, how)| {
        let caps = re.captures(english_how).filter(|_| *en == title)?;
        let mut out = String::new();
        caps.expand(how, &mut out);
        Some((zh.to_string(), out))
    });
    if by_how.is_some() {
        return by_how;
    }
    FIXES
        .iter()
        .find(|(en, _, _)| *en == title)
        .and_then(|(_, zh, how)| {
            let export = english_how
                .split_whitespace()
                .skip_while(|w| *w != "export")
                .take(2)
                .collect::<Vec<_>>()
                .join(" ");
            let export = export.trim_end_matches(['.', ',', ';']);
            let how = if how.contains("{export}") {
                // No command in the English how: keep it English.
                (export.split(' ').count() == 2).then(|| how.replace("{export}", export))?
            } else {
                how.to_string()
            };
            Some((zh.to_string(), how))
        })
}

/// The Chinese title of a fix, by its English title alone (`--summary`
/// groups fixes by title).
pub fn fix_title(title: &str) -> Option<&'static str> {
    FIXES
        .iter()
        .map(|(en, zh, _)| (*en, *zh))
        .chain(FIXES_BY_HOW.iter().map(|(en, _, zh, _)| (*en, *zh)))
        .find(|(en, _)| *en == title)
        .map(|(_, zh)| zh)
}

/// The Chinese label and meaning of a field row.
pub fn row(label: &str, english_meaning: &str) -> Option<(String, &'static str)> {
    // A label whose meaning depends on the figure: the English meaning
    // tells which one the explainer chose.
    if let Some((_, _, zh, meaning)) = ROWS_BY_MEANING
        .iter()
        .find(|(en, part, _, _)| *en == label && english_meaning.contains(part))
    {
        return Some((zh.to_string(), meaning));
    }
    if let Some(pid) = label.strip_prefix("Process ") {
        if pid.chars().all(|c| c.is_ascii_digit()) {
            return Some((format!("进程 {pid}"), "该进程在这块 GPU 上占用的显存"));
        }
    }
    ROWS.iter()
        .find(|(en, _, _)| *en == label)
        .map(|(_, zh, meaning)| (zh.to_string(), *meaning))
}

/// Field rows whose meaning depends on the figure: the English label, a
/// phrase of the English meaning that tells the case, the Chinese label and
/// meaning. Looked up before `ROWS`.
const ROWS_BY_MEANING: &[(&str, &str, &str, &str)] = &[
    (
        "Outside PyTorch (derived)",
        "negative, so these figures contradict",
        "PyTorch 之外（推算）",
        "总容量 − 空闲 − 已预留：是负数，所以这些数字互相矛盾（见“原因”）",
    ),
    (
        "Tried to allocate",
        "at most 1 MiB",
        "尝试分配",
        "分配器向 CUDA 申请的块；张量本身不超过 1 MiB（小张量共用 2 MiB 的块）",
    ),
    (
        "Tried to allocate",
        "between 1 and 10 MiB",
        "尝试分配",
        "分配器向 CUDA 申请的块；张量本身在 1 到 10 MiB 之间（它们共用 20 MiB 的块），或在 18–20 MiB 之间",
    ),
    (
        "Tried to allocate",
        "the exact size of the tensor",
        "尝试分配",
        "正在创建的张量的确切大小",
    ),
    (
        "Tried to allocate",
        "the size of the allocation that failed",
        "尝试分配",
        "失败的那次分配的大小",
    ),
];

/// The notes detectors attach to a finding (English pattern, Chinese with
/// `$1`, `$2` for the captured parts).
const NOTES: &[(&str, &str)] = &[
    (
        r"^the message is (\d+) bytes long; only its first (\d+) KiB are kept$",
        "报错长达 $1 字节；只保留了前 $2 KiB",
    ),
    (
        r"^(.+) `(.+)` is too large to be a real byte count$",
        "$1 `$2` 太大，不可能是真实的字节数",
    ),
    (r"^(.+) `(.+)` could not be read$", "$1 `$2` 无法读取"),
    (
        r"^the request is printed rounded \((.+)\); its byte count is approximate$",
        "申请量打印时做了取整（$1）；字节数是近似值",
    ),
    (
        r"^dtype `(.+)` has no fixed size known to oomwhy, so the tensor's bytes are not computed$",
        "oomwhy 不知道 dtype `$1` 的固定大小，所以没有计算张量的字节数",
    ),
    (r"^(.+) × (.+) bytes does not fit in 64 bits$", "$1 × $2 字节超出了 64 位整数的范围"),
    (r"^the shape (.+) could not be multiplied out$", "形状 $1 无法相乘得出大小"),
    (
        r"^the message stops right after `GPU`; PyTorch ≈2\.2–2\.3 builds cut the message there for GPU 0 \(pytorch/pytorch#123984\)$",
        "报错在 `GPU` 之后就断了；PyTorch ≈2.2–2.3 的构建对 GPU 0 会在这里截断报错（pytorch/pytorch#123984）",
    ),
];

/// The Chinese of a detector's note.
pub fn note(text: &str) -> Option<String> {
    static COMPILED: std::sync::OnceLock<Vec<(regex::Regex, &'static str)>> =
        std::sync::OnceLock::new();
    let notes = COMPILED.get_or_init(|| {
        NOTES
            .iter()
            .map(|(pattern, zh)| (crate::constant_regex(pattern), *zh))
            .collect()
    });
    notes.iter().find_map(|(re, zh)| {
        let caps = re.captures(text)?;
        let mut out = String::new();
        caps.expand(zh, &mut out);
        Some(out)
    })
}

/// JSON fact key, Chinese label (the "Details" lines of the text output).
const FACT_LABELS: &[(&str, &str)] = &[
    ("allocator", "分配器"),
    ("allocator_backend", "分配器后端"),
    ("assert", "断言"),
    ("assertion", "断言条件"),
    ("assertion_lines", "断言行数"),
    ("async_warning", "异步报告提示"),
    ("call", "调用"),
    ("constraint", "约束"),
    ("device_name", "设备名"),
    ("dll", "DLL"),
    ("dll_name", "DLL 名称"),
    ("driver_message", "驱动消息"),
    ("dtype", "数据类型"),
    ("engine", "推理引擎"),
    ("errno", "errno"),
    ("error_code", "错误码"),
    ("error_name", "错误名"),
    ("estimated_max_model_len", "估算的最长上下文"),
    ("exit_code", "退出码"),
    ("exit_code_signed", "退出码（有符号）"),
    ("failed_allocations", "失败的分配次数"),
    ("failed_check", "失败的检查"),
    ("failed_ranks", "失败的 rank"),
    ("file", "文件"),
    ("heartbeat_timeout_ms", "心跳超时（ms）"),
    ("high_watermark_limit", "high watermark 上限"),
    ("hint", "提示"),
    ("kernel", "kernel"),
    ("kv_cache_tokens", "KV cache token 数"),
    ("last_error", "最后的错误"),
    ("library", "库"),
    ("line", "行"),
    ("location", "位置"),
    ("max_seq_len", "max_model_len"),
    ("memory", "用完的内存"),
    ("memory_space", "内存空间"),
    ("nccl_error", "NCCL 错误"),
    ("nccl_version", "NCCL 版本"),
    ("node", "节点"),
    ("ntstatus", "NTSTATUS"),
    ("numel_in", "输入元素数"),
    ("numel_out", "输出元素数"),
    ("oom_kill_events", "OOM kill 事件数"),
    ("op", "操作"),
    ("op_type", "操作类型"),
    ("pci", "PCI 地址"),
    ("pid", "PID"),
    ("pool", "内存池"),
    ("process", "进程"),
    ("program_fragmentation", "程序碎片"),
    ("pytorch_limit", "PyTorch 上限"),
    ("raised_at", "抛出位置"),
    ("ran_for_ms", "已运行（ms）"),
    ("rank", "rank"),
    ("reason", "原因"),
    ("reported_by", "报告者"),
    ("table", "状态码表"),
    ("table_title", "状态码所属的 API"),
    ("meaning", "状态码的含义"),
    ("code_class", "状态码类别"),
    ("printed_as", "打印形式"),
    ("resource", "资源"),
    ("root_cause_error_file", "根因错误文件"),
    ("root_cause_exitcode", "根因退出码"),
    ("root_cause_host", "根因主机"),
    ("root_cause_local_rank", "根因 local rank"),
    ("root_cause_pid", "根因 PID"),
    ("root_cause_rank", "根因 rank"),
    ("root_cause_signal", "根因信号"),
    ("root_cause_time", "根因时间"),
    ("script", "脚本"),
    ("seq_num", "序号"),
    ("shape", "形状"),
    ("signal", "信号"),
    ("size_units", "大小单位"),
    ("source", "源码位置"),
    ("status", "状态"),
    ("step", "步数"),
    ("strerror", "错误描述"),
    ("timeout_ms", "超时（ms）"),
    ("total_including_request", "含本次申请的总量"),
    ("winerror", "WinError"),
    ("worker_pid", "worker 的 PID"),
    ("xid", "Xid"),
];

/// What a signal usually means for a training job, in Chinese (the English
/// is in `exit.rs`).
pub fn signal_meaning(n: i32) -> Option<&'static str> {
    Some(match n {
        1 => "它所在的终端或会话关闭了",
        2 => "被中断（Ctrl-C）",
        3 => "退出（Ctrl-\\）",
        4 => "非法 CPU 指令：为别的 CPU 编译的二进制，或者内存已被破坏",
        6 => "原生代码中止：C++ 检查或断言失败、std::terminate 或重复释放；通常紧挨着的前几行会说明原因",
        7 => "错误的内存访问：常见原因是 DataLoader worker 用的共享内存（/dev/shm）太小，例如在容器里",
        8 => "原生代码里的算术错误（整数除以零）",
        9 => "没有机会清理就被杀掉：最可能是主机内存（不是显存）耗尽后内核的 OOM killer 干的——在 `dmesg` 或 `journalctl -k` 里找 \"Out of memory: Killed process\"；作业调度器或容器运行时执行内存或时间上限时也会发这个信号",
        11 => "原生代码段错误（驱动、CUDA 扩展、库的 bug 或版本不匹配）",
        13 => "它向一个已经没有人读的管道写数据",
        15 => "被要求停止：用户、作业调度器（时间或内存上限、抢占）或容器运行时",
        _ => return None,
    })
}

/// What a Windows crash status means, in Chinese (the English is in
/// `exit.rs`).
pub fn ntstatus_meaning(status: u32) -> Option<&'static str> {
    Some(match status {
        0xC000_0005 => "原生代码读写了不属于它的内存（驱动、扩展、库版本不匹配）",
        0xC000_0017 => "进程耗尽了主机内存（RAM 或页面文件），不是显存",
        0xC000_001D => "这颗处理器没有的 CPU 指令：为更新的 CPU 编译的二进制",
        0xC000_00FD => "栈溢出（递归太深）",
        0xC000_013A => "被中断（Ctrl-C）",
        0xC000_0409 => "Windows 的 fail-fast：原生代码立即结束了进程",
        _ => return None,
    })
}

/// The Chinese label of a fact key.
pub fn fact_label(key: &str) -> Option<&'static str> {
    FACT_LABELS
        .iter()
        .find(|(k, _)| *k == key)
        .map(|(_, label)| *label)
}

/// The Chinese reserved-versus-allocated paragraph.
pub fn reserved_gap(f: &Finding) -> Option<String> {
    pick(&[
        "已预留 {reserved} − 已分配 {allocated} = {unallocated}（占已预留的 {gap_share}%）由 PyTorch 持有，但没有任何张量在用（其中 {pools} 是 CUDA graph 私有池里的空闲空间）。PyTorch 会把释放的块缓存起来复用；报这个错之前，它已经归还了所有能归还的缓存段，剩下的这部分散落在部分占用的段里，只放得下足够小的请求。",
        "已预留 {reserved} − 已分配 {allocated} = {unallocated}（占已预留的 {gap_share}%）由 PyTorch 持有，但没有任何张量在用。PyTorch 会把释放的块缓存起来复用；报这个错之前，它已经归还了所有能归还的缓存段，剩下的这部分散落在部分占用的段里，只放得下足够小的请求。",
    ], &figures(f))
    .filter(|_| f.sizes.private_pools_bytes.is_some() || f.diagnosis.reserved_unallocated_bytes.is_some())
}

/// The Chinese name of a training phase.
pub fn phase(name: &str) -> Option<&'static str> {
    Some(match name {
        "forward" => "前向传播",
        "backward" => "反向传播",
        "optimizer_step" => "优化器更新",
        "optimizer" => "优化器更新",
        "data_loading" => "数据加载",
        "model_loading" => "模型加载",
        "checkpoint_loading" => "加载 checkpoint",
        "checkpoint_saving" => "保存 checkpoint",
        "evaluation" => "评估",
        "inference" => "推理",
        "generation" => "生成",
        "initialization" => "初始化",
        "startup" => "启动",
        "compilation" => "编译",
        "to_device" => "搬到 GPU",
        _ => return None,
    })
}

/// The Chinese word for a phase confidence.
pub fn confidence(level: &str) -> Option<&'static str> {
    Some(match level {
        "high" => "高",
        "medium" => "中",
        "low" => "低",
        _ => return None,
    })
}

/// The Chinese title of a kind, for `explain --list` and page headers.
pub fn kind_title(slug: &str) -> Option<&'static str> {
    Kind::ALL
        .iter()
        .find(|k| k.slug() == slug)
        .and_then(|k| kind_title_of(*k))
}

// A new kind compiles without its Chinese (so that branches merge); the
// tests in tests/i18n.rs and below name what is missing.
fn kind_title_of(kind: Kind) -> Option<&'static str> {
    Some(match kind {
        Kind::TorchAllocatorOom => "PyTorch 缓存分配器报显存不足（CUDA out of memory）",
        Kind::CudaRuntimeOom => "CUDA 运行时/驱动调用报显存不足",
        Kind::IllegalMemoryAccess => "非法内存访问（illegal memory access）",
        Kind::WindowsFailFast => "Windows 快速失败退出（0xC0000409）",
        Kind::MpsOom => "Apple MPS 显存不足",
        Kind::HostOom => "PyTorch 申请主机内存失败",
        Kind::HostOomKilled => "进程因主机内存不足被杀",
        Kind::TfOom => "TensorFlow 显存不足",
        Kind::XlaOom => "XLA（JAX、TensorFlow）显存不足",
        Kind::CupyOom => "CuPy 内存池显存不足",
        Kind::KvCacheOom => "推理引擎放不下 KV cache",
        Kind::LibraryAllocFailed => "CUDA 库（cuBLAS、cuDNN 等）分配失败",
        Kind::NcclOom => "NCCL 申请显存失败",
        Kind::AllocatorAssert => "PyTorch 分配器在显存不足路径上断言失败",
        Kind::DeviceNotReady => "CUDA 驱动报 device not ready（显存吃紧时出现）",
        Kind::DeviceSideAssert => "GPU kernel 内的断言失败（device-side assert）",
        Kind::MisalignedAddress => "未对齐的内存访问（misaligned address）",
        Kind::LaunchFailure => "kernel 运行中崩溃（unspecified launch failure）",
        Kind::NoKernelImage => "没有适用于这块 GPU 的 kernel 代码",
        Kind::NcclError => "NCCL 报错",
        Kind::NcclTimeout => "NCCL 集合通信超时",
        Kind::ProcessGroupAborted => "NCCL 进程组被中止",
        Kind::ChildFailed => "torchrun 报告子进程失败",
        Kind::Xid => "NVIDIA 驱动 Xid 事件",
        Kind::WindowsAccessViolation => "Windows 访问冲突（0xC0000005）",
        Kind::WindowsPagingFile => "Windows 页面文件太小（WinError 1455）",
        Kind::GenericOom => "其他框架或库报告显存分配失败",
        Kind::FatalSignal => "进程被致命信号终止（SIGSEGV、SIGBUS、SIGABRT 等）",
        Kind::MemorySnapshot => "PyTorch 显存快照",
        Kind::TfAllocatorWarning => "TensorFlow 分配器重试了一次分配（警告，不是报错）",
        Kind::TritonOutOfResources => "Triton kernel 超出了 GPU 的片上资源",
        Kind::CudnnNotSupported => "cuDNN 不支持这个调用（CUDNN_STATUS_NOT_SUPPORTED）",
        Kind::GpuFallenOffBus => "GPU 掉卡（fallen off the bus）",
        Kind::PtxasAllocFailure => "ptxas 编译 kernel 时内存不足",
        Kind::GpuRuntimeError => "GPU 运行时、驱动或库的调用失败（不是显存不足）",
        #[allow(unreachable_patterns)]
        _ => return None,
    })
}

fn headline_templates(kind: Kind) -> &'static [&'static str] {
    match kind {
        Kind::TorchAllocatorOom => &[
            "PyTorch 在 {device} 上分配 {requested} 失败",
            "PyTorch 分配 {requested} 失败",
            "PyTorch 的显存分配失败",
        ],
        Kind::CudaRuntimeOom => &[
            "{fact:reported_by} 的一次 CUDA 调用在 {device} 上显存不足（报错里没有大小）",
            "{fact:reported_by} 的一次 CUDA 调用显存不足（报错里没有大小）",
            "一次 CUDA 调用在 {device} 上显存不足（发生在 PyTorch 分配器之外；报错里没有大小）",
            "一次 CUDA 调用显存不足（发生在 PyTorch 分配器之外；报错里没有大小）",
        ],
        Kind::IllegalMemoryAccess => &["GPU kernel 访问了不该访问的内存（illegal memory access），不是显存不足"],
        Kind::WindowsFailFast => &["进程以 0xC0000409 退出：原生代码主动终止了进程，不是显存不足本身"],
        Kind::MpsOom => &[
            "PyTorch 在 Apple GPU（MPS）上分配 {requested} 失败",
            "PyTorch 的 MPS 后端在 Apple GPU 上内存不足",
        ],
        Kind::HostOom => &[
            "PyTorch 申请 {requested} 主机内存失败（是 CPU 内存，不是显存）",
            "PyTorch 申请主机内存失败（是 CPU 内存，不是显存）",
        ],
        Kind::HostOomKilled => &[
            "systemd 报告 OOM killer 结束了 {fact:unit}（是主机内存，不是显存）",
            "进程 {fact:pid}（{fact:process}）因主机内存不足被杀（是 CPU 内存，不是显存）",
            "进程因主机内存不足被杀（是 CPU 内存，不是显存）",
        ],
        Kind::TfOom => &[
            "TensorFlow 在 {device} 上分配 {requested} 时内存不足",
            "TensorFlow 分配 {requested} 时内存不足",
            "TensorFlow 内存不足",
        ],
        Kind::XlaOom => &[
            "XLA 在 {device} 上分配 {requested} 失败",
            "XLA 分配 {requested} 失败",
            "XLA 内存不足",
        ],
        Kind::CupyOom => &["CuPy 在 GPU 上分配 {requested} 失败", "CuPy 显存不足"],
        Kind::KvCacheOom => &[
            "推理引擎的 KV cache 只能放 {fact:kv_cache_tokens} 个 token，少于 max_model_len {fact:max_seq_len}",
            "推理引擎需要 {size:kv_cache_needed_bytes} 的 KV cache 才能支持 max_model_len {fact:max_seq_len}，但只有 {size:kv_cache_available_bytes}",
            "推理引擎放不下 KV cache",
        ],
        Kind::LibraryAllocFailed => &[
            "{fact:library} 调用失败（{fact:status}，于 {fact:call}）：多半是换了个名字的显存不足",
            "{fact:library} 调用失败（{fact:status}）：多半是换了个名字的显存不足",
            "CUDA 库调用失败（{fact:status}）：多半是换了个名字的显存不足",
            "CUDA 库分配失败：多半是换了个名字的显存不足",
        ],
        Kind::NcclOom => &[
            "NCCL 在 {device} 上申请 {requested} 显存失败：换了个名字的显存不足",
            "NCCL 申请 {requested} 显存失败：换了个名字的显存不足",
            "NCCL 申请显存失败：换了个名字的显存不足",
        ],
        Kind::AllocatorAssert => &["PyTorch 分配器在处理显存不足时内部断言失败：很可能是显存不足"],
        Kind::DeviceNotReady => &["`CUDA driver error: device not ready`：在显存吃紧时（WSL2）这通常意味着显存不足"],
        Kind::DeviceSideAssert => &[
            "GPU kernel 的断言失败（{fact:kernel} 中的 `{fact:assertion}`）：索引或取值有误，不是显存不足",
            "GPU kernel 的断言失败（device-side assert）：通常是索引越界，不是显存不足",
        ],
        Kind::MisalignedAddress => &["GPU kernel 做了未对齐的内存访问：kernel 的 bug，不是显存不足"],
        Kind::LaunchFailure => &[
            "cuBLAS 在 {fact:call} 里没能运行它的 GPU kernel（{fact:status}）：不是显存不足",
            "cuBLAS 没能运行它的 GPU kernel（{fact:status}）：不是显存不足",
            "GPU kernel 运行中崩溃（unspecified launch failure）：不是显存不足",
        ],
        Kind::NoKernelImage => &["安装的版本里没有这块 GPU 架构的代码"],
        Kind::NcclError => &[
            "NCCL 报错（{fact:nccl_error}）：这是发现 [{cause}] 的后果",
            "NCCL 报错（{fact:nccl_error}）",
            "NCCL 报错：这是发现 [{cause}] 的后果",
            "NCCL 报错",
        ],
        Kind::NcclTimeout => &[
            "NCCL {fact:op_type} 在 rank {fact:rank} 上运行 {fact:ran_for_ms} ms 后超时：这是发现 [{cause}] 的后果",
            "NCCL {fact:op_type} 在 rank {fact:rank} 上运行 {fact:ran_for_ms} ms 后超时",
            "NCCL {fact:op_type} 运行 {fact:ran_for_ms} ms 后超时",
            "NCCL 集合通信超时",
        ],
        Kind::ProcessGroupAborted => &[
            "rank {fact:rank} 上的 NCCL 进程组被中止：这是发现 [{cause}] 的后果",
            "rank {fact:rank} 上的 NCCL 进程组被中止",
            "NCCL 进程组被中止：这是发现 [{cause}] 的后果",
            "NCCL 进程组被中止",
        ],
        Kind::ChildFailed => &[
            "torchrun 报告 {fact:script} 失败：根因在 rank {fact:root_cause_rank}，退出码 {fact:root_cause_exitcode}",
            "torchrun 报告 {fact:script} 失败",
            "torchrun 报告训练脚本失败",
        ],
        Kind::Xid => &["NVIDIA 驱动报告了 Xid {fact:xid} 事件", "NVIDIA 驱动报告了 Xid 事件"],
        Kind::WindowsAccessViolation => &["进程以 0xC0000005 退出：原生代码访问了不属于它的内存"],
        Kind::WindowsPagingFile => &["Windows 页面文件太小（WinError 1455）：是主机虚拟内存不够，不是显存"],
        Kind::GenericOom => &[
            "{fact:reported_by} 在 {device} 上分配 {requested} 失败：显存不足",
            "{fact:reported_by} 分配 {requested} 失败：显存不足",
            "在 {device} 上分配 {requested} 失败：显存不足",
            "分配 {requested} 失败：显存不足",
            "在 {device} 上分配显存失败",
            "显存分配失败",
        ],
        Kind::FatalSignal => &[
            "{worker_shm}一个 DataLoader worker 用完了共享内存（/dev/shm），因总线错误退出",
            "{worker}一个 DataLoader worker 在原生代码里崩溃了（{signal_name}）",
            "命令以 Windows 崩溃状态 {fact:ntstatus} 结束",
            "命令被 {fact:signal} 终止",
            "命令被致命信号终止",
        ],
        Kind::MemorySnapshot => &[
            "PyTorch 无法在 GPU {snap:device} 上分配 {snap:allocation}（来自显存快照）",
            "PyTorch 显存快照：拍下时的显存状态，没有记录 OOM",
        ],
        Kind::TfAllocatorWarning => &[
            "只是警告，不是报错：TensorFlow 没能在 {device} 上一次分配到 {requested}，已经重试",
            "只是警告，不是报错：TensorFlow 没能一次分配到 {requested}，已经重试",
            "只是警告，不是报错：TensorFlow 没能一次完成分配，已经重试",
        ],
        Kind::TritonOutOfResources => &[
            "{shared_memory}Triton kernel 每个 block 需要 {requested} 的 shared memory，这块 GPU 只允许 {size:hardware_limit_bytes}",
            "Triton kernel 需要的 {fact:resource} 超出了这块 GPU 的上限",
            "Triton kernel 需要的片上资源超出了这块 GPU 的上限",
        ],
        Kind::CudnnNotSupported => &["cuDNN 不支持这个调用（CUDNN_STATUS_NOT_SUPPORTED）"],
        Kind::GpuFallenOffBus => &[
            "GPU {fact:pci} 掉卡了（fallen off the bus）：驱动已经找不到它",
            "有一块 GPU 掉卡了（fallen off the bus）：驱动已经找不到它",
        ],
        Kind::PtxasAllocFailure => &["ptxas（NVIDIA 的 PTX 汇编器）编译 kernel 时内存不足"],
        Kind::GpuRuntimeError => &[
            "{fact:table_title} 调用返回了 {fact:error_name}（{fact:error_code}）",
            "GPU 运行时、驱动或库的调用返回了错误状态",
        ],
        #[allow(unreachable_patterns)]
        _ => &[],
    }
}

/// Verdict code, Chinese title and detail alternatives (most specific
/// first; the last names no figure).
const VERDICTS: &[(&str, &[&str], &[&str])] = &[
    ("memory_outside_process", &["显存被这个进程之外的东西占着"], &[
        "这块 {total} 的卡上，空闲 {free}，本进程占用 {in_use}{listed_note}；其余 {outside_process} 被本进程之外的东西占着：容器里看不到的其他进程、桌面会话，或者共用这块 GPU 的另一个容器或虚拟机。{outside_note}",
        "有一大块显存被这个进程之外的东西占着：容器里看不到的其他进程、桌面会话，或者共用这块 GPU 的另一个容器或虚拟机。",
    ]),
    ("numbers_inconclusive", &["从这些数字看不出为什么失败"], &[
        "PyTorch 持有 {own}，又申请 {requested}，合计 {own_plus}，还不到这块 {total} 的卡的一半；{free_note}报错里也看不到别的大到能占满其余空间的东西。所以不是工作负载放不下：显存多半被报错没显示的东西占着（另一个进程、桌面会话、另一个容器），或者在失败和读数之间被释放了。",
        "PyTorch 持有的加上这次申请还不到整块卡的一半，报错里也看不到别的大到能占满其余空间的东西。所以不是工作负载放不下：显存多半被报错没显示的东西占着（另一个进程、桌面会话、另一个容器），或者在失败和读数之间被释放了。",
    ]),
    ("figures_missing", &["报错在数字之前就被截断了"], &[
        "{requested_on}的申请量是唯一留下的数字。说明容量、空闲显存和 PyTorch 占用的部分被截掉了，而正是这些数字能说明是工作负载放不下、另一个进程占着 GPU，还是显存碎片化。从剩下的内容看不出可能的原因。",
        "只剩下申请量：说明容量、空闲显存和 PyTorch 占用的部分被截掉了，而正是这些数字能说明是工作负载放不下、另一个进程占着 GPU，还是显存碎片化。从剩下的内容看不出可能的原因。",
    ]),
    ("dev_shm_full", &["/dev/shm 太小，DataLoader 的 worker 不够用"], &[
        "DataLoader 的 worker 通过共享内存把每个 batch 交给主进程，也就是 /dev/shm 里的文件（以内存为后端的 tmpfs）。它写满之后，worker 再往里写就会触发 SIGBUS。Docker 默认只给容器 64 MB 的 /dev/shm，几个图像 batch 就能超过。这是主机内存，不是显存；如果同时碰到容器自己的内存上限，worker 也可能被直接杀掉（SIGKILL）。",
    ]),
    ("native_crash", &["原生代码崩溃了"], &[
        "{worker}{fact:signal} 终止了一个 DataLoader worker 进程：原生代码（C/C++ 扩展、图像或视频解码器、CUDA 库，或早先已被破坏的内存）出错或主动 abort，所以 Python 没有打印出原因的调用栈。{bus_note}它本身不是显存不足。",
        "{fact:signal} 终止了命令：原生代码（C/C++ 扩展、图像或视频解码器、CUDA 库，或早先已被破坏的内存）出错或主动 abort，所以 Python 没有打印出原因的调用栈。{bus_note}它本身不是显存不足。",
        "原生代码（C/C++ 扩展、图像或视频解码器、CUDA 库，或早先已被破坏的内存）出错或主动 abort，所以 Python 没有打印出原因的调用栈。它本身不是显存不足。",
    ]),
    ("snapshot_no_oom_event", &["这个快照里没有 OOM 事件"], &[
        "快照里没有记录到 OOM 事件，所以下面的汇总是拍快照时的显存状态，不是失败那一刻的。",
    ]),
    ("snapshot_other_stream", &["有足够大的空闲块，但属于另一个 stream"], &[
        "这次 {snap:request} 的申请来自 stream {snap:stream}；同一池类型里有一块 {snap:other_stream_hole} 的空闲块，但属于另一个 stream。缓存分配器只在分配某个块的那个 stream 上复用它。",
        "同一池类型里有足够大的空闲块，但属于另一个 stream。缓存分配器只在分配某个块的那个 stream 上复用它。",
    ]),
    ("snapshot_private_pool", &["空闲显存在私有池（CUDA graph）里"], &[
        "一块 {snap:private_pool_hole} 的空闲块在私有内存池里（CUDA graph 的池或 torch.cuda.MemPool）。普通分配用不上它；私有池会一直留着自己的显存，直到 graph 或池被释放。",
        "足够大的空闲块在私有内存池里（CUDA graph 的池或 torch.cuda.MemPool）。普通分配用不上它；私有池会一直留着自己的显存，直到 graph 或池被释放。",
    ]),
    ("snapshot_oversize_rule", &["有足够大的空闲块，但 max_split_size 规则不让用"], &[
        "stream 对得上的一块 {snap:oversize_hole} 空闲块本可以放下这次 {snap:request} 的申请，但 max_split_size 设为 {snap:max_split} 时，分配器不会为更小的申请拆分达到这个大小的块，也不会把比申请大 20 MiB 以上的块交给更大的申请。",
        "stream 对得上的一块 {snap:oversize_hole} 空闲块本可以放下这次 {snap:request} 的申请，但设了 max_split_size 后，分配器不会为更小的申请拆分达到这个大小的块，也不会把比申请大 20 MiB 以上的块交给更大的申请。",
        "有一块足够大的空闲块，但设了 max_split_size 后，分配器不会为更小的申请拆分达到这个大小的块，也不会把比申请大 20 MiB 以上的块交给更大的申请。",
    ]),
    ("snapshot_pending_free", &["释放的显存还在等其他 stream"], &[
        "这个池类型里有 {snap:pending} 的块已被张量释放，但还不能复用：它们在其他 stream 上用过（record_stream），分配器要等那些 stream 上的事件完成才会复用。",
        "有些块已被张量释放，但还不能复用：它们在其他 stream 上用过（record_stream），分配器要等那些 stream 上的事件完成才会复用。",
    ]),
    ("snapshot_fragmentation", &["碎片化：空闲显存够，却没有一个足够大的空洞"], &[
        "这次申请需要一整块 {snap:request}。分配器能用的空闲空洞加起来有 {snap:usable_free}，CUDA 还空闲 {snap:cuda_free}，但最大的可用空洞只有 {snap:largest_hole}：空闲空间夹在部分占用的段里的活块之间，分配器既不能归还，也不能合并。",
        "空闲显存加起来够，但最大的可用空洞放不下这次申请：空闲空间夹在部分占用的段里的活块之间，分配器既不能归还，也不能合并。",
    ]),
    ("snapshot_shortage", &["显存不够：活着的张量占满了 GPU"], &[
        "PyTorch 预留的 {snap:reserved} 里，活着的张量占了 {snap:allocated}；类型合适的空闲空洞共 {snap:usable_free}，CUDA 空闲 {snap:cuda_free}，就算把所有空洞合起来，也不到这次申请的 {snap:request}。这次分配发生时，必须有更少的显存在用。",
        "活着的张量占满了 PyTorch 预留的显存；就算把所有空闲空洞合起来也放不下这次申请。这次分配发生时，必须有更少的显存在用。",
    ]),
    ("inconsistent_numbers", &["这条报错里的数字不可能同时成立"], &[
        "已预留 {reserved} + 空闲 {free} = {reserved_plus_free}，超过了总容量 {total}。这些数字不是同一时刻采样的（空闲显存是在失败之后读的，可能已经变了），或者驱动对显存做了虚拟化（Windows WDDM 的共享内存回退、WSL、vGPU、MIG）。oomwhy 不再基于它们往下推理。",
        "报错里的几个数字加起来对不上。它们不是同一时刻采样的，或者驱动对显存做了虚拟化（Windows WDDM、WSL、vGPU、MIG）。oomwhy 不再基于它们往下推理。",
    ]),
    ("request_exceeds_capacity", &["单次分配就超过了这块 GPU 能提供的全部显存"], &[
        "这一次就要 {requested}，超过了这个进程允许使用的 {allowed}。换什么分配器设置都没用：多半是某个维度算错或溢出、一次把整个数据集搬上 GPU，或者对超长输入算两两/注意力矩阵。",
        "这一次就要 {requested}，而整块卡只有 {total}。换什么分配器设置都没用：多半是某个维度算错或溢出、一次把整个数据集搬上 GPU，或者对超长输入算两两/注意力矩阵。",
        "这一次申请比任何一块卡都大。换什么分配器设置都没用：多半是某个维度算错、一次搬上了整个数据集，或者对超长输入算注意力矩阵。",
    ]),
    ("memory_limit", &["是为这个进程设的显存上限拒绝了分配，不是硬件不够"], &[
        "允许使用的上限是 {allowed}，再申请 {requested} 就会让总量超过它。上限来自 torch.cuda.set_per_process_memory_fraction()、框架的内存池上限或类似设置；GPU 本身可能还有空间。",
        "这次申请超过了为进程设置的内存上限（如 set_per_process_memory_fraction() 或内存池上限）；GPU 本身可能还有空间。",
    ]),
    ("free_exceeds_request", &["设备报告的空闲显存比申请的还多"], &[
        "申请 {requested}，而设备报告空闲 {free}。空闲显存是在失败之后读取的：同一块卡上的其他进程可能刚好释放了，或者空闲总量虽然够，却没有一块连续的区域放得下，或者驱动做了虚拟化。",
        "设备报告的空闲显存多于申请量：空闲值是在失败之后读取的，可能已经变化，或者没有连续的空间。",
    ]),
    ("other_processes", &["其他进程占用了这块 GPU 的很大一部分"], &[
        "报错里列出的其他进程一共占用 {others}。它们和你的进程抢同一块卡：可能是另一个训练任务、残留的 Jupyter 内核、DataLoader 子进程里误建的 CUDA 上下文，或者同一任务的其他 rank 选错了卡。",
        "同一块 GPU 上的其他进程占用了大量显存：另一个任务、残留的 Jupyter 内核，或者选错卡的其他 rank。",
    ]),
    ("memory_outside_pytorch", &["缺的显存大部分被 PyTorch 分配器之外的东西占着"], &[
        "总容量 {total} − 空闲 {free} − PyTorch 已预留 {reserved} = {outside}，这部分在 PyTorch 的缓存分配器之外：CUDA 上下文（每个进程几百 MiB）、cuDNN/cuBLAS 的工作区、NCCL 缓冲区、其他库（TensorFlow、JAX、CuPy）以及其他进程。",
        "相当一部分显存被 PyTorch 缓存分配器之外的东西占用：CUDA 上下文、cuDNN/cuBLAS 工作区、NCCL 缓冲区、其他库或其他进程。",
    ]),
    ("fragmentation", &["显存碎片化：PyTorch 手里的空闲空间用不上"], &[
        "PyTorch 手里有 {unallocated} 没有张量在用（已预留 {reserved}，已分配 {allocated}），设备上还空闲 {free}，这次申请 {requested} 却放不下：空闲空间散落在部分占用的段里，或者分成了几块，没有一块足够大的连续区域。",
        "PyTorch 手里有 {unallocated} 没有张量在用，这次申请 {requested} 却放不下：空闲空间散落在部分占用的段里，没有一块足够大的连续区域。",
        "PyTorch 手里有足够的空闲缓存，但都是零碎的小块，没有一块足够大的连续区域放得下这次申请。",
    ]),
    ("cuda_graph_pools", &["CUDA graph 把空闲显存留在了私有池里"], &[
        "“已分配”里有 {pools} 是 CUDA graph 私有池中的空闲空间。这些池只给捕获它们的 graph 使用，普通张量用不上。",
        "CUDA graph 的私有池占着空闲显存，只给捕获它们的 graph 使用，普通张量用不上。",
    ]),
    ("non_pytorch_memory", &["这个进程在 PyTorch 之外占用了大量显存"], &[
        "这个进程一共占用 {in_use}，其中只有 {reserved} 由 PyTorch 预留，多出的 {non_pytorch} 属于 CUDA 上下文、cuDNN/cuBLAS 工作区、NCCL、CUDA graph 或同进程里的其他库。",
        "这个进程在 PyTorch 缓存之外占用了不少显存：CUDA 上下文、库的工作区、NCCL 或同进程里的其他库。",
    ]),
    ("capacity_exhausted", &["工作负载放不进显存"], &[
        "总共 {total}，PyTorch 已分配 {allocated}，空闲只剩 {free}，而这次还要 {requested}。显存确实被真实数据占满了：模型权重、梯度、优化器状态和激活值加起来超过了这块卡。",
        "已分配 {allocated}，空闲 {free}，这次申请 {requested} 放不下。显存确实被真实数据占满了：权重、梯度、优化器状态和激活值加起来超过了这块卡。",
        "显存确实被真实数据占满了：权重、梯度、优化器状态和激活值加起来超过了可用的显存。",
    ]),
    ("memory_growth", &["多次 OOM 之间显存在增长：有东西在累积"], &[
        "这块设备上最近几次 OOM 时已分配的显存一次比一次多。显存在步与步之间持续增长，说明有张量跨迭代被保留：没用 .item() 就累加的 loss、追加到列表里的输出、不断变大的缓存或序列长度。",
    ]),
    ("fails_at_start", &["第一步就失败了"], &[
        "崩溃前最后的进度计数是 {step}：这套配置连一次都跑不下来。要改的是配置（batch、序列长度、精度），而不是去找泄漏。",
        "刚开始就失败：这套配置连一次都跑不下来。要改的是配置（batch、序列长度、精度），而不是去找泄漏。",
    ]),
    ("late_failure", &["成功跑了很多步之后才失败"], &[
        "崩溃前最后的进度计数是 {step}：同样的配置之前跑过很多次。要么某个 batch 比其他的大（变长序列、最后一个大 batch、评估阶段），要么显存随时间增长（有张量跨步保留）。",
        "同样的配置之前跑过很多次。要么某个 batch 比其他的大（变长序列、评估阶段），要么显存随时间增长。",
    ]),
    ("outside_allocator_oom", &["PyTorch 分配器之外的一次 CUDA 调用显存不足"], &[
        "这次失败不是 PyTorch 的缓存分配器报的，而是另一处 CUDA 调用（创建上下文、cuBLAS/cuDNN 句柄、kernel 启动、其他库）没拿到显存，所以报错里没有大小。通常是卡已经被占满了：PyTorch 的缓存、其他库或其他进程。",
    ]),
    ("async_error_location", &["调用栈多半指错了行"], &[
        "CUDA 异步报告 kernel 错误：错误在下一次与 GPU 同步的调用处才冒出来，而不是在出错的那个 kernel。上面的 Python 调用栈显示的是 PyTorch 发现错误的位置，通常晚于真正出错的位置。设 CUDA_LAUNCH_BLOCKING=1 重跑可以找到真正的位置。",
    ]),
    ("native_fail_fast", &["原生代码故意终止了进程"], &[
        "0xC0000409（STATUS_STACK_BUFFER_OVERRUN）在现代 Windows 上也用于 fail-fast：某个原生库（CUDA、cuDNN、驱动、扩展）检测到无法继续的状态，主动结束了进程。显存或内存耗尽是常见诱因之一，但退出码本身不能证明这一点。",
    ]),
    ("mps_high_watermark", &["是 PyTorch 的 MPS 内存上限拒绝了分配，不是机器内存不够"], &[
        "MPS 已分配 {allocated} + 其他分配 {size:other_allocations_bytes} + 这次申请 {requested} = {mps_total}，达到了 max allowed {size:max_allowed_bytes}（按打印的精度）。这个上限是 PyTorch 的 high watermark：PYTORCH_MPS_HIGH_WATERMARK_RATIO（默认 1.7）× Metal 为这块 GPU 推荐的工作集大小。PyTorch 在问 macOS 之前就检查它，所以机器可能还有内存；设这个上限是为了不让 macOS 换页换到卡死。",
        "PyTorch 给 MPS 设了上限（high watermark，默认约为推荐最大工作集的 1.7 倍）。这次申请 {requested} 会超过它；系统可能还有内存。",
        "PyTorch 的 MPS 上限（high watermark）拒绝了这次分配；系统可能还有内存。",
    ]),
    ("unified_memory_exhausted", &["macOS 给 GPU 的内存用完了（MPS 上限已关闭）"], &[
        "PYTORCH_MPS_HIGH_WATERMARK_RATIO=0.0 关掉了上限，于是 macOS 本身没法再给 GPU 分配统一内存。Apple GPU 和 CPU 共用同一块内存，其他程序也在占用它。",
    ]),
    ("host_ram_exhausted", &["{kind:ptxas_alloc_failure}多半是编译机器的内存用完了", "机器的内存（RAM）用完了：是主机内存，不是显存"], &[
        "整台机器的内存（RAM 和 swap）用完了，内核的 OOM killer 杀掉了一个进程。这是主机内存，不是显存。被杀的进程只占 {small_victim}，而 OOM killer 会挑它能杀的最大进程：大部分内存被它杀不了或不愿杀的东西占着——/dev/shm 或其他 tmpfs 里的文件、用 oom_score_adj 保护起来的进程，或者内核自己。dmesg -T 里 “Killed process” 前面内核打印的进程表能看出是谁占的。",
        "systemd 报告 {fact:unit} 以 'oom-kill' 结束：OOM killer 杀掉了它的进程——可能是内核的（整台机器或这个 unit 的 MemoryMax= 上限的内存用完了），也可能是按内存压力动手的 systemd-oomd。这是主机内存，不是显存。用 `journalctl -k` 和 `journalctl -u UNIT` 查看当时的记录。",
        "{kind:ptxas_alloc_failure}ptxas 在编译时或首次启动时把 PTX 转成 GPU 机器码，它分配不到内存了。这是主机内存（RAM），不是显存：kernel 特别大、同时编译很多目标架构、并行编译任务或 32 位的 ptxas 都会把它耗尽。它失败了 {occurrences} 次（每个 kernel 或架构一次）。",
        "{kind:ptxas_alloc_failure}ptxas 在编译时或首次启动时把 PTX 转成 GPU 机器码，它分配不到内存了。这是主机内存（RAM），不是显存：kernel 特别大、同时编译很多目标架构、并行编译任务或 32 位的 ptxas 都会把它耗尽。",
        "这次失败的是 CPU 内存：数据加载、把 checkpoint 整个读进内存、pin_memory 缓冲区、DataLoader 子进程各自的副本，都会占用主机内存。显存相关的设置对它没有用。",
    ]),
    ("host_memory_limit", &["任务超出了调度器给它的内存上限"], &[
        "上限是 {fact:limit}，而用量达到了 {fact:usage}。Slurm/Kubernetes 按 cgroup 计量内存，超过申请量就会被杀，即使机器上还有空闲内存。",
        "任务超出了 Slurm/Kubernetes 给它的内存上限而被杀，即使机器上还有空闲内存。",
    ]),
    ("killed_by_sigkill", &["被 SIGKILL 杀掉：很可能是主机内存不足，但日志证明不了"], &[
        "进程收到 SIGKILL（退出码 -9 或 137）。最常见的原因是 Linux 的 OOM killer 或容器的内存上限，但手动 kill、调度器超时或抢占也会发出同样的信号。看内核日志（dmesg）能确认。",
    ]),
    ("xla_preallocation", &["XLA 预分配的显存池没有空间放这个缓冲区"], &[
        "XLA 启动时默认预先占用 75% 的显存，之后所有缓冲区都从这个池里分配。这次申请 {requested} 放不下。池太小、同一块卡上还有别的框架，或者模型本身太大。",
        "XLA 启动时默认预先占用 75% 的显存，之后所有缓冲区都从这个池里分配；这次的缓冲区放不下。",
    ]),
    ("xla_host_memory_limit", &["XLA 的锁页主机内存达到上限（默认 64 GB）"], &[
        "XLA 把数据卸载到主机时使用锁页（pinned）内存，默认上限是 64 GB。这次申请 {requested} 超过了它；这不是显存，也不一定是机器内存不够。",
        "XLA 卸载到主机的锁页内存达到上限（默认 64 GB）；这不是显存不足。",
    ]),
    ("kv_cache_too_small", &["KV cache 放不下配置的上下文长度"], &[
        "推理引擎先加载权重、做一次剖析，再把剩下的显存留给 KV cache；剩下的放不下一个 max_model_len {fact:max_seq_len} 的请求。调低 max_model_len、提高 gpu_memory_utilization，或者用更小/量化的权重。",
        "推理引擎加载权重后剩下的显存放不下一个最长上下文的 KV cache：调低 max_model_len、提高 gpu_memory_utilization，或用量化权重。",
    ]),
    ("masked_oom", &["{kind:cudnn_not_supported}多半是换了个名字的显存不足", "报错里没说显存不足，但实际上多半就是"], &[
        "{kind:cudnn_not_supported}cuDNN 报错附近的日志说显存用完了：拿到的工作区放不下任何算法时，cuDNN 就报 NOT_SUPPORTED。把它当作显存不足处理。",
        "{fact:status} 这类状态码在分配失败时也会出现：库在申请句柄或工作区时拿不到显存，就只报一个笼统的错误。要确认：把 batch size 减半重跑（错误消失或推迟出现，就是显存的问题）；运行时用 `nvidia-smi -l 1` 观察；在出错那一步之前打印 torch.cuda.memory_summary()。",
        "这条报错没写“out of memory”，但它常常是在显存不足时出现的。要确认：把 batch size 减半重跑（错误消失或推迟出现，就是显存的问题）；运行时用 `nvidia-smi -l 1` 观察；在出错那一步之前打印 torch.cuda.memory_summary()。",
    ]),
    ("index_out_of_range", &["GPU 上有索引越界"], &[
        "kernel 里的断言 `{fact:assertion}` 失败：有索引超出了范围，最常见的是标签值 ≥ 类别数（或为负数，且不是 ignore_index），或 token id ≥ 词表/embedding 大小。这不是显存不足；CUDA 上下文此后已不可用。",
        "有索引超出了范围：最常见的是标签值 ≥ 类别数，或 token id ≥ embedding 大小。这不是显存不足；CUDA 上下文此后已不可用。",
    ]),
    ("device_assert", &["GPU kernel 自己的检查失败了"], &[
        "kernel 里的断言 `{fact:assertion}` 失败：输入的取值不满足 kernel 的要求（越界的索引、不在 [0, 1] 里的概率、NaN 等）。这不是显存不足；CUDA 上下文此后已不可用。",
        "kernel 里的断言失败：输入的取值不满足 kernel 的要求（越界的索引、不在 [0, 1] 里的概率、NaN 等）。这不是显存不足。",
    ]),
    ("kernel_fault", &["kernel 出错了"], &[
        "{fact:status} 是 cuBLAS 的“GPU 程序执行失败”，多数是 kernel 没能启动。在 PyTorch 里通常有三种来源：cuBLAS 只是第一个发现之前异步发生的 CUDA 错误（embedding 或 loss 里越界的下标，设 CUDA_LAUNCH_BLOCKING=1 后会显示为 device-side assert）；这个 PyTorch/CUDA 版本不支持这块 GPU（在 RTX 30 系列上用 CUDA 10 的版本就会这样）；或者这次调用接受不了输入（不连续或极大的矩阵）。这不是显存不足。",
        "某个 kernel 在运行时出错（未对齐的访问或运行中崩溃）：多半是自定义的 CUDA/Triton kernel，或是为其他 PyTorch/CUDA 版本编译的扩展（flash-attn、xformers、bitsandbytes、apex），也可能是显示看门狗（Windows TDR）或驱动/硬件故障。这不是显存不足；CUDA 异步报告错误，调用栈可能指向更靠后的行。",
    ]),
    ("arch_mismatch", &["二进制不是为这块 GPU 编译的"], &[
        "发起 kernel 的库里既没有这块 GPU 计算能力的机器码，也没有可以现编的 PTX：新卡配了只编到旧架构的版本（如 sm_120 的 RTX 50 系列配上只到 sm_90 的 wheel）、旧卡已被新版本放弃，或扩展编译时的 TORCH_CUDA_ARCH_LIST 没包含这块卡。对比 torch.cuda.get_arch_list() 和 torch.cuda.get_device_capability()。",
    ]),
    ("collateral_timeout", &["是发现 [{cause}] 的后果，不是另一个原因", "是更早那个错误的后果，不是另一个原因"], &[
        "这次超时是因为别的 rank 已经因发现 [{cause}] 崩溃，没能参加集合通信。先解决发现 [{cause}]。",
        "这次超时是因为别的 rank 已经崩溃，没能参加集合通信。先解决最早的那个错误。",
    ]),
    ("collateral_failure", &["是发现 [{cause}] 的后果，不是另一个原因", "是更早那个错误的后果，不是另一个原因"], &[
        "这条报错出现在发现 [{cause}] 之后，是它引起的连锁反应。先解决发现 [{cause}]。",
        "这条报错是更早一个错误引起的连锁反应。先解决最早的那个错误。",
    ]),
    ("collective_timeout", &["一次集合通信一直在等一个始终没到的 rank"], &[
        "{fact:op_type} 等了 {fact:ran_for_ms} ms 后被 watchdog 判定超时。通常是某个 rank 已经崩溃或卡住（显存不足、数据加载卡死、各 rank 走了不同的代码分支），而不是网络慢。先找到最早出错的 rank。",
        "集合通信超时：通常是某个 rank 已经崩溃或卡住（显存不足、数据加载卡死、各 rank 走了不同的代码分支），而不是网络慢。先找到最早出错的 rank。",
    ]),
    ("nccl_failure", &["集合通信失败"], &[
        "NCCL 报告 {fact:nccl_error}。设 NCCL_DEBUG=INFO 重跑，NCCL 会打印具体原因：网络接口、共享内存（/dev/shm）、驱动或 CUDA 版本不匹配，或者某个 rank 已经先崩溃了。",
        "NCCL 通信失败。设 NCCL_DEBUG=INFO 重跑，NCCL 会打印具体原因：网络接口、共享内存（/dev/shm）、版本不匹配，或者某个 rank 已经先崩溃了。",
    ]),
    ("launcher_report", &["启动器只报告了有 worker 退出"], &[
        "{root_cause_killed}torchrun（torchelastic）并不知道 worker 为什么失败。它的“根因”是它最先看到的失败：rank {fact:root_cause_rank}，退出码 -9，即进程被 SIGKILL 杀掉：最常见的是 Linux 的 OOM killer（主机内存不够，不是显存），或者作业调度器；用 `dmesg -T | grep -i -E 'killed process|out of memory'` 确认。最先失败的也可能只是等超时的受害者。真正的错误在那个 rank 自己的输出里。",
        "{root_cause_killed}torchrun（torchelastic）并不知道 worker 为什么失败。它的“根因”是它最先看到的失败：local rank {fact:root_cause_local_rank}，退出码 -9，即进程被 SIGKILL 杀掉：最常见的是 Linux 的 OOM killer（主机内存不够，不是显存），或者作业调度器；用 `dmesg -T | grep -i -E 'killed process|out of memory'` 确认。真正的错误在那个 rank 自己的输出里。",
        "{root_cause_killed}torchrun（torchelastic）并不知道 worker 为什么失败。它最先看到的失败是被 SIGKILL 杀掉（退出码 -9）：最常见的是 Linux 的 OOM killer（主机内存不够，不是显存），或者作业调度器；用 `dmesg -T | grep -i -E 'killed process|out of memory'` 确认。真正的错误在那个 rank 自己的输出里。",
        "torchrun 的 ChildFailedError 只是汇总：根因在 rank {fact:root_cause_rank}（退出码 {fact:root_cause_exitcode}）。真正的错误在那个 rank 自己的输出里。",
        "torchrun 的 ChildFailedError 只是汇总，真正的错误在根因 rank 自己的输出里。",
    ]),
    ("xid_error", &["Xid {fact:xid}：{xid_meaning}", "Xid {fact:xid}：NVIDIA 驱动报告的 GPU 事件", "NVIDIA 驱动报告了 Xid 事件"], &[
        "这是 NVIDIA 内核驱动记录在内核日志（dmesg）里的事件，它本身是后续清理，不是原因：驱动写明了它跟在 Xid {caused_by_xid} 之后。先查 Xid {caused_by_xid}（NVIDIA 的 Xid 目录：https://docs.nvidia.com/deploy/xid-errors/），并在内核日志里找到它那一行。",
        "这是 NVIDIA 内核驱动记录在内核日志（dmesg）里的事件。按 NVIDIA 的 Xid 文档处理：有的是应用自身的错误（如 31：GPU 内存页错误），有的指向硬件或驱动问题（如 48、63、64、79、94、95、119）。",
        "Xid 是 NVIDIA 内核驱动记录的 GPU 事件（见 dmesg）。按 NVIDIA 的 Xid 文档处理：有的是应用自身的错误（如 31：GPU 内存页错误），有的指向硬件或驱动问题（如 48、63、64、79、94、95、119）。",
    ]),
    ("gpu_status_code", &["状态码的含义"], &[
        "{status_maybe}{fact:error_name}（{fact:error_code}）是 {fact:table_title} 的状态码。状态码表里的说明（英文原文）：{fact:meaning} 它本身不是显存不足，但显存吃紧是常见原因：库没能分配自己的句柄或工作区，就报了这个状态。",
        "{fact:error_name}（{fact:error_code}）是 {fact:table_title} 的状态码。状态码表里的说明（英文原文）：{fact:meaning} 它不是显存不足错误。",
        "这是 GPU 运行时、驱动或库返回的状态码，含义见状态码表；它不是显存不足错误。",
    ]),
    ("hardware_fault", &["是 GPU 或它的连接坏了，不是你的程序"], &[
        "{kind:gpu_fallen_off_bus}{lost_by}，这块 GPU 已不再通过 PCIe 响应（NVIDIA 的 Xid 79 说的也是这种情况），重启节点之前它都不能用。NVIDIA 列出的原因有供电、过热，以及 PCIe 插槽或转接卡故障；减小 batch 或改显存设置都没有用。",
        "这个 Xid 表示硬件或驱动层面的故障（掉卡、ECC 错误、GSP 超时等）。重启后如果还出现，检查散热、供电、PCIe 连接，并联系管理员或厂商；改程序解决不了。",
    ]),
    ("native_access_violation", &["原生代码访问了不属于它的内存"], &[
        "0xC0000005（访问冲突）来自原生代码：扩展、驱动或版本不匹配的 CUDA/cuDNN DLL。显存不足一般不会直接导致它；先检查各个原生组件的版本是否匹配。",
    ]),
    ("paging_file_too_small", &["Windows 无法提交虚拟内存：是主机内存，不是显存"], &[
        "WinError 1455 表示页面文件太小：Windows 为每个加载 CUDA DLL 的进程（包括每个 DataLoader worker）预留大量虚拟内存。调大页面文件或减少 DataLoader worker 数。",
    ]),
    ("allocation_failed", &["一次 GPU 显存分配失败"], &[
        "{fact:reported_by} 在 {device} 上申请 {requested} 失败：只剩 {free} 可用，而它自己已经占了 {size:used_bytes}。报错没有给出显卡的总容量：如果这个数接近容量，就是任务本身放不下，减小 batch；否则是其他进程占着其余的显存。",
        "{fact:reported_by} 在 {device} 上申请 {requested} 失败：当时只剩 {free} 可用。先看是配置太大（batch、序列长度、模型）还是有其他进程占着卡。",
        "{fact:reported_by} 在 {device} 上申请 {requested} 失败。报错没有说明卡上还剩多少，所以先看是配置太大（batch、序列长度、模型）还是有其他进程占着卡。",
        "这次在 {device} 上申请 {requested} 失败。报错没有说明卡上还剩多少，所以先看是配置太大（batch、序列长度、模型）还是有其他进程占着卡。",
        "这次申请 {requested} 失败。报错没有说明卡上还剩多少，所以先看是配置太大还是有其他进程占着卡。",
        "一次 GPU 分配失败。报错没有给出数字，所以先看是配置太大（batch、序列长度、模型）还是有其他进程占着卡。",
    ]),
    ("shared_memory_limit", &["kernel 的配置超出了这块 GPU 的共享内存"], &[
        "{shared_memory}Triton kernel 编译出来每个 thread block 要用 {requested} 的 shared memory，超过了这块 GPU 的上限 {size:hardware_limit_bytes}。shared memory 是每个 SM 上的片上内存，不是显存：这不是显存不足，减小 batch 或释放显存都没有用。kernel 的 tile 大小和流水线级数（BLOCK_* 和 num_stages）是按 shared memory 更多的 GPU 选的。",
        "{kind:triton_out_of_resources}Triton kernel 的启动配置每个 block 需要的 {fact:resource} 超出了这块 GPU 的上限。这是芯片的限制，和空闲显存无关。",
        "kernel（通常是 Triton 自动调优出的配置）需要的 shared memory 超出了这块 GPU 每个 block 的上限。这和显存无关：换一个适合这块卡的配置（更小的 BLOCK_SIZE、num_stages），或者换一条不走 Triton 的路径。",
    ]),
];

/// Fixes whose how depends on the finding (a figure, a vendor's tool) or
/// whose title is shared by fixes with different hows: English title, a
/// pattern over the English how, Chinese title, Chinese how (`$1`, `$2`
/// for the captured parts). Looked up before [`FIXES`].
const FIXES_BY_HOW: &[(&str, &str, &str, &str)] = &[
    (
        "Act on the Xid that caused it",
        r"^Xid (\d+) \(",
        "处理引起它的那个 Xid",
        "先出现的 Xid $1 才是原因：按 NVIDIA 对 Xid $1 的建议处理（`oomwhy explain xid`），并在内核日志里找到它那一行（dmesg -T | grep -i xid）。",
    ),
    (
        "Look up the Xid that caused it",
        r"^Xid (\d+) came first",
        "查一查引起它的那个 Xid",
        "先出现的 Xid $1 才是原因：在 NVIDIA 的 Xid 目录（https://docs.nvidia.com/deploy/xid-errors/）里查它，并在内核日志里找到它那一行（dmesg -T | grep -i xid）。",
    ),
    (
        "Use mixed precision",
        r#"torch\.autocast\(device_type="(xpu|npu)""#,
        "使用混合精度",
        "在 torch.autocast(device_type=\"$1\", dtype=torch.bfloat16) 下跑前向：激活值只占一半内存。",
    ),
    (
        "Check what else uses the GPU",
        r"^Intel's xpu-smi",
        "检查还有什么在用 GPU",
        "用 Intel 的 xpu-smi（如 `xpu-smi stats -d 0`）查看设备内存占用；结束同一块卡上的其他进程，或用 ZE_AFFINITY_MASK 换一块卡。",
    ),
    (
        "Free host memory",
        r"^Use fewer DataLoader workers",
        "释放主机内存",
        "减少 DataLoader worker，按需加载数据集而不是整个读进内存，关掉其他程序，或调大 Windows 页面文件。",
    ),
    (
        "Get a native stack trace",
        r"^Run with `python -X faulthandler`",
        "拿到原生调用栈",
        "用 `python -X faulthandler` 运行（遇到 SIGSEGV、SIGBUS、SIGFPE、SIGABRT、SIGILL 时会打印 Python 调用栈），或在 gdb 下运行：`gdb -ex run --args python train.py`，崩溃后输入 `bt`。",
    ),
    (
        "Match the native pieces",
        r"^Reinstall PyTorch and every compiled extension",
        "让各个原生组件的版本匹配",
        "按同一个 PyTorch 和 CUDA 版本重装 PyTorch 和所有编译过的扩展；升级 GPU 驱动。",
    ),
    (
        "Find what holds the rest of the GPU",
        r"^Run (.+?) on the host, not inside the container: .* pick an idle GPU with (.+?)\.$",
        "找出是什么占着这块 GPU 的其余显存",
        "在宿主机上（不是在容器里）运行 $1：本进程没占的那部分显存属于另一个进程、桌面会话（这块 GPU 接着显示器），或共用这块 GPU 的另一个容器或虚拟机。结束它、把显示器换到另一块 GPU，或者用 $2 选一块空闲的 GPU。",
    ),
    (
        "Look first at the largest holder of live memory",
        r"^(.+?) of live tensors on device (-?\d+) were allocated at (.+) \((\d+) blocks?\)\.$",
        "先看占用活张量最多的地方",
        "设备 $2 上有 $1 的活张量是在 $3 分配的（$4 个块）。",
    ),
    (
        "Shrink the largest holder of live memory",
        r"^(.+?) of live tensors \((\d+) blocks?\) were allocated at (.+): free them earlier, keep them on the CPU, or make them smaller\.$",
        "缩小占用活张量最多的地方",
        "有 $1 的活张量（$2 个块）是在 $3 分配的：更早释放它们、把它们放在 CPU 上，或者让它们变小。",
    ),
];

/// English fix title, Chinese title, Chinese how.
const FIXES: &[(&str, &str, &str)] = &[
    ("Update the GPU driver", "更新 GPU 驱动", "驱动比程序编译时用的 CUDA（或 ROCm）旧。装新一点的驱动（`nvidia-smi` 显示驱动支持的最高 CUDA 版本），或者换成针对更旧 CUDA 编译的程序或框架版本。"),
    ("Check that the GPU is visible to the process", "确认进程看得到 GPU", "在同一环境里运行 `nvidia-smi`（或 `rocm-smi`）；检查 `CUDA_VISIBLE_DEVICES`；容器要带着 GPU 启动（`--gpus all`）。库路径上的驱动桩库（stub）也会让 GPU 不可见。"),
    ("Find the kernel that failed", "找到出错的 kernel", "这个错误是由出错 kernel 之后的某个调用报告的。用 `CUDA_LAUNCH_BLOCKING=1` 重跑，让出错的调用在发生处报告，或者在 `compute-sanitizer` 下运行；要重启进程才能再用 GPU。"),
    ("Leave GPU memory for the library", "给库留出显存", "减小 batch 或模型占用，结束这块 GPU 上的其他进程；TensorFlow 里打开显存按需增长（`tf.config.experimental.set_memory_growth(gpu, True)`），免得框架在 cuDNN 或 cuBLAS 申请之前就占掉全部显存。"),
    ("Look up the code in its library's reference", "到所属库的文档里查这个状态码", "finding 里写明了状态码表、状态码和含义的出处（`oomwhy explain gpu_runtime_error` 介绍这些表）。返回它的调用通常就在同一行或 traceback 里。"),
    ("Allocate long-lived and large tensors first", "先分配长期存在的大张量", "在第一步之前就创建整个训练期间都要用的缓冲区（权重、优化器状态、KV cache），大的临时张量复用预先分配好的缓冲区，这样短命的张量就不会把大段切碎。"),
    ("Allocate on one stream, or hand memory over explicitly", "在同一个 stream 上分配，或显式交接显存", "在侧 stream 上用的张量就在那个 stream 上创建（with torch.cuda.stream(s):），更早释放侧 stream 上的张量，或者在侧 stream 阶段结束后调用 torch.cuda.empty_cache()，让它缓存的段还给 CUDA。"),
    ("Get the real error with num_workers=0", "用 num_workers=0 拿到真正的错误", "在主进程里加载数据（num_workers=0）：崩溃就会发生在主进程里，这时 `python -X faulthandler` 能打印出出错调用的 Python 调用栈。"),
    ("Find the whole message", "找到完整的报错", "在日志文件或终端的回滚记录里读完整的那一行，不要用通知或被截短的副本，再用 oomwhy 看它：那些数字（容量、空闲、已分配、已保留）决定该用哪种办法。"),
    ("Find what holds the RAM", "找出是谁占着内存", "dmesg -T 里 “Killed process” 前面有内核打印的进程表：rss 最大的几行就是占内存的。检查 tmpfs 里的文件（df -h /dev/shm /tmp /run；/dev/shm 里残留的 DataLoader 或 NCCL 段）、用负的 oom_score_adj 启动的进程（cat /proc/PID/oom_score_adj），以及内核自己的占用（grep -E 'Slab|Shmem|Unevict' /proc/meminfo）。"),
    ("Give SGLang less to fit", "让 SGLang 需要的显存少一些", "有其他进程共用 GPU 或激活值放不下时，调低 --mem-fraction-static，以及 --context-length 和 --max-running-requests；--disable-cuda-graph 跳过 CUDA graph 捕获；--tp-size N 把模型分到 N 块 GPU 上；或者用量化的 checkpoint。"),
    ("Give text-generation-inference less to fit", "让 text-generation-inference 需要的显存少一些", "调低 --max-total-tokens、--max-input-tokens 和 --max-batch-prefill-tokens；--cuda-memory-fraction 给其他进程留出空间；--num-shard N 把模型分到 N 块 GPU 上；--quantize 缩小权重。"),
    ("Give the container more shared memory", "给容器更多共享内存", "Docker：`docker run --shm-size=16g ...`（或 `--ipc=host`）；docker compose：`shm_size: 16gb`；Kubernetes：在 /dev/shm 挂载一个 `medium: Memory` 的 `emptyDir`。用 `df -h /dev/shm` 查看大小。"),
    ("Give vLLM less to fit", "让 vLLM 需要的显存少一些", "调低 --max-model-len（每个序列最长能到的上下文）和 --max-num-seqs（一次批处理的序列数）；有其他进程共用 GPU 时调低 --gpu-memory-utilization（只有 vLLM 独占这块卡时才往 0.95 调高）；--enforce-eager 跳过 CUDA graph 捕获，省下它的显存；--tensor-parallel-size N 把模型分到 N 块 GPU 上；量化的 checkpoint 能缩小权重。"),
    ("Keep less in flight between workers and the main process", "减少 worker 和主进程之间在途的数据", "调低 num_workers、batch size 或 prefetch_factor；num_workers=0 可以确认诊断（这时不用共享内存）。"),
    ("Let TensorFlow leave room for cuBLAS and cuDNN", "让 TensorFlow 给 cuBLAS 和 cuDNN 留出空间", "TensorFlow 一启动就占掉几乎全部显存，库自己的 cudaMalloc 就拿不到了：设 TF_FORCE_GPU_ALLOW_GROWTH=true，或在任何操作运行之前对每块 GPU 调用 tf.config.experimental.set_memory_growth(gpu, True)（TensorFlow 1 的 session：config.gpu_options.allow_growth = True）。结束这块 GPU 上的其他进程（`nvidia-smi`）。"),
    ("Record a snapshot at the OOM", "在 OOM 时记录快照", "训练开始前调用 torch.cuda.memory._record_memory_history(max_entries=100000)。然后用 OOM 观察者在失败时保存快照：torch._C._cuda_attach_out_of_memory_observer(lambda device, alloc, device_alloc, device_free: torch.cuda.memory._dump_snapshot(\"oom_snapshot.pickle\"))，或者在 `except torch.OutOfMemoryError:` 块里保存。"),
    ("Reduce the batch size or the activations kept", "减小 batch size 或保留的激活值", "把 batch 减半（用梯度累积保持等效 batch），打开梯度检查点，或在 torch.autocast 下用 bfloat16 运行。"),
    ("Revisit max_split_size_mb", "重新考虑 max_split_size_mb", "把 PYTORCH_CUDA_ALLOC_CONF 里的 max_split_size_mb 调到大于大张量需要的块，或者去掉它，改用 expandable_segments:True。"),
    ("Share or release CUDA-graph pools", "共享或释放 CUDA graph 的池", "把多个 graph 捕获到同一个共享池里（torch.cuda.graph(g, pool=first_graph.pool())），删掉不再重放的 graph，或者少捕获几种形状（torch.compile 的 mode=\"reduce-overhead\" 每种形状捕获一个 graph）。"),
    ("Suspect threads inside forked workers", "怀疑 fork 出来的 worker 里的线程", "会启动线程的库（OpenCV、一些图像和音频解码器）在 fork 出来的 worker 里可能崩溃：在 dataset 里调用 cv2.setNumThreads(0)，或者用 multiprocessing_context=\"spawn\"。"),
    ("Synchronise side streams before the big allocation", "大分配之前先同步侧 stream", "让当前 stream 等待侧 stream（torch.cuda.current_stream().wait_stream(s)），或在分配前同步；不要对大张量用 tensor.record_stream。"),
    ("Try the native allocator", "试试原生分配器", "这条报错来自 cudaMallocAsync 后端（PYTORCH_CUDA_ALLOC_CONF=backend:cudaMallocAsync；ComfyUI 默认开启），它不理会 expandable_segments 和 max_split_size_mb。去掉 backend:cudaMallocAsync（ComfyUI：--disable-cuda-malloc）再对比。"),
    ("Use ComfyUI's low-VRAM modes", "使用 ComfyUI 的低显存模式", "用 --lowvram（或 --novram）启动 ComfyUI，用 \"VAE Decode (Tiled)\" 节点解码，使用 fp16/fp8 的模型权重，降低分辨率或 batch size；关掉其他占用 GPU 的程序。"),
    ("Use diffusers' low-memory modes", "使用 diffusers 的低显存模式", "pipe.enable_model_cpu_offload()（要最省显存就用 enable_sequential_cpu_offload()）、pipe.enable_attention_slicing()、大图用 pipe.enable_vae_tiling()，加载时设 torch_dtype=torch.float16；或者降低分辨率、减少每个 prompt 生成的图片数。"),
    ("Use expandable segments", "使用 expandable segments", "设 PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True（PyTorch ≥ 2.1）：段可以原地变大，不会在段之间留下空洞。"),
    ("Allocate less at once", "一次少分配一些", "把大的操作拆成几块做（分块计算、逐层处理），避免一次性申请很大的缓冲区。"),
    ("Allocate on demand when processes share the GPU", "多个进程共用 GPU 时按需分配", "TensorFlow 设 TF_FORCE_GPU_ALLOW_GROWTH=true，JAX 设 XLA_PYTHON_CLIENT_PREALLOCATE=false，让框架不要一启动就占满整块卡。"),
    ("Ask for more memory", "申请更多内存", "在 Slurm 里调大 --mem / --mem-per-cpu，在 Kubernetes 里调大 resources.limits.memory；或者减少进程占用的主机内存。"),
    ("Bound ONNX Runtime's arena", "限制 ONNX Runtime 的 arena", "在 CUDA execution provider 的选项里设 gpu_mem_limit，并把 arena_extend_strategy 设为 kSameAsRequested。"),
    ("Capture fewer or smaller CUDA graphs", "少捕获一些 CUDA graph，或捕获小一些的", "每个捕获的 graph 都留着自己的池。torch.compile(mode=\"reduce-overhead\") 会按输入形状分别捕获 graph：改用 mode=\"default\" 或减少不同形状的数量；vLLM 里调小捕获的 batch size，或设 enforce_eager=True。"),
    ("Check labels against the number of classes", "检查标签是否小于类别数", "在送进 loss 之前检查：assert labels.min() >= 0 and labels.max() < num_classes（ignore_index 除外）。"),
    ("Check shared memory and the network interface", "检查共享内存和网卡", "在 Docker 里给 NCCL 足够的共享内存（--ipc=host 或 --shm-size=16g）；用 NCCL_SOCKET_IFNAME=eth0（换成你的网卡）指定网卡；排查时可以试 NCCL_P2P_DISABLE=1 或 NCCL_IB_DISABLE=1。"),
    ("Check the GPU's health", "检查 GPU 的健康状况", "`nvidia-smi -q -d ECC,ROW_REMAPPER` 显示显存错误和待处理的行重映射；`dcgmi diag -r 2` 运行 NVIDIA 的诊断（需要几分钟）。"),
    ("Check that the build supports this GPU", "确认这个版本支持这块 GPU", "对比 torch.version.cuda、torch.cuda.get_arch_list() 和 torch.cuda.get_device_capability()：比版本所用 CUDA 更新的 GPU（如用 CUDA 10.x 的 RTX 30 系列）需要换成为更新 CUDA 编译的 PyTorch。"),
    ("Check the indices on the CPU", "在 CPU 上检查下标", "把出错的那一步在 CPU 上跑一次：embedding 的 id ≥ num_embeddings 或 label ≥ num_classes 时会得到清楚的 IndexError，而不是 cuBLAS 的状态码。"),
    ("Check the driver's kernel log", "查看驱动的内核日志", "运行 `sudo dmesg -T | grep -i -E 'NVRM|Xid'`，看崩溃前后有没有 Xid 事件。"),
    ("Check the host's out-of-memory killer", "检查主机的 OOM killer", "运行 `dmesg -T | grep -i -E 'killed process|out of memory'`，看进程是不是因内存不足被内核杀掉。"),
    ("Check the usual causes", "排查常见原因", "索引越界（embedding id ≥ num_embeddings、标签 ≥ num_classes、gather/scatter 的索引）：在 CPU 上跑同一步，会得到清楚的 IndexError。为其他 PyTorch/CUDA 版本编译的自定义 CUDA/Triton kernel 和扩展（flash-attn、bitsandbytes、apex）。放错设备的张量，或传给自定义算子的非连续输入。"),
    ("Check token ids against the embedding size", "检查 token id 是否小于 embedding 大小", "assert input_ids.max() < model.get_input_embeddings().num_embeddings；换过 tokenizer 或加过特殊 token 后要 resize_token_embeddings()。"),
    ("Check what changes on the GPU around the crash", "检查崩溃前后 GPU 上发生了什么变化", "运行时用 `nvidia-smi -l 1` 观察：其他任务的启停，或者 MIG/vGPU/容器的上限小于整卡，都能解释“明明有空闲显存却失败”。在一块空闲的卡上（CUDA_VISIBLE_DEVICES=N）重跑对比。"),
    ("Check what else holds the GPU", "检查还有什么占着 GPU", "运行 `nvidia-smi` 查看这块卡上的所有进程；结束不需要的进程（残留的 Jupyter 内核、旧任务）。"),
    ("Check what else uses the NPU", "检查还有什么在用 NPU", "`npu-smi info` 会显示每块 NPU 的内存占用和进程；结束同一块 NPU 上的其他进程，或用 ASCEND_RT_VISIBLE_DEVICES=N 换一块。"),
    ("Check what else uses the GPU", "检查还有什么在用 GPU", "运行 `nvidia-smi` 查看这块卡上的所有进程；结束不需要的进程。"),
    ("Confirm it was the out-of-memory killer", "确认是不是 OOM killer", "运行 `dmesg -T | grep -i -E 'killed process|out of memory'`，或在 Slurm 里看 `sacct -j JOBID -o JobID,State,MaxRSS`。"),
    ("Confirm that it is memory", "确认是不是显存问题", "把 batch size 减半重跑：错误消失或推迟出现，就是显存的问题。运行时用 `nvidia-smi -l 1` 观察，并在出错那一步之前打印 torch.cuda.memory_summary()。"),
    ("Do what NVIDIA recommends for this Xid", "按 NVIDIA 对这个 Xid 的建议处理", "按 NVIDIA 的 Xid 文档处理：重启受影响的应用；在方便时重置 GPU 或重启节点（让行重映射生效）；检查 `nvidia-smi -q -d ROW_REMAPPER`（老卡看 PAGE_RETIREMENT）、供电和温度；同一块卡反复出现就送修或联系 NVIDIA/云服务商。"),
    ("Enlarge the Windows page file", "调大 Windows 页面文件", "系统属性 → 高级 → 性能设置 → 高级 → 虚拟内存：给系统盘设置更大的页面文件（或交给系统管理大小），然后重启。"),
    ("Find the first error across all ranks", "在所有 rank 里找到最早的错误", "按时间对比每个 rank 的日志，最早报错的那个才是原因，其余的超时和中止都是后果。"),
    ("Find the kernel that failed", "找出出错的 kernel", "设 CUDA_LAUNCH_BLOCKING=1 重跑，让错误在真正出错的 kernel 处报出来。"),
    ("Find the kernel that really failed", "找出真正出错的 kernel", "设 CUDA_LAUNCH_BLOCKING=1 重跑（会变慢），让调用栈指向真正出错的那一行；或用 compute-sanitizer 运行。"),
    ("Find the tensor that is far too large", "找出那个大得离谱的张量", "在出错的那一行（调用栈里你自己代码的最后一帧）打印各个张量的 shape。找算错或溢出的维度、一次搬上 GPU 的整个数据集，或者对超长输入算的两两/注意力矩阵。内存设置帮不了这种情况。"),
    ("Find who else holds the GPU", "找出还有谁占着 GPU", "运行 `nvidia-smi` 查看这块卡上的所有进程；在容器里 PID 是宿主机的 PID。"),
    ("Free host memory", "释放主机内存", "关掉其他程序；如果经常发生，就加内存。"),
    ("Leave the GPU more of the machine's memory", "给 GPU 多留一些内存", "退出占用大量内存的其他应用（活动监视器 → 内存）：在 Apple 芯片上它们和 GPU 用的是同一块内存。另一条路是换统一内存更大的 Mac。"),
    ("Free the GPU", "腾出 GPU", "`nvidia-smi` 会显示占着显存的其他进程（另一个服务、桌面合成器）；关掉它们，或用 CUDA_VISIBLE_DEVICES 换一块卡。"),
    ("Free the GPU from other processes", "让其他进程让出 GPU", "结束占着这块卡的其他进程，或者用 CUDA_VISIBLE_DEVICES 换一块空闲的卡。"),
    ("Free the memory CUDA graphs and profiling take", "释放 CUDA graph 和性能剖析占用的显存", "--enforce-eager 跳过 CUDA graph 捕获（解码变慢，但空间更多）；调低 --max-num-seqs 和 --max-num-batched-tokens 能降低启动时剖析出的激活峰值。"),
    ("Get a native stack trace", "拿到原生调用栈", "在终端里用 `python -X faulthandler train.py` 运行（崩溃时会打印 Python 调用栈），而不是在 IDE 里；在事件查看器 → Windows 日志 → 应用程序里看崩溃的“错误模块”（nvcuda64.dll、cudnn*.dll、扩展的 .pyd 等）。"),
    ("Get the numbers another way", "换一种方式拿到这些数字", "在出错那一步之前打印 torch.cuda.memory_summary()，或运行时用 `nvidia-smi -l 1` 观察。"),
    ("Give XLA's pool more of the GPU", "给 XLA 的显存池更多空间", "调大 XLA_PYTHON_CLIENT_MEM_FRACTION（如 0.9），或设 XLA_PYTHON_CLIENT_PREALLOCATE=false 按需分配。"),
    ("Give the engine more of the GPU", "给推理引擎更多显存", "调高 gpu_memory_utilization（如 0.95），并确保没有其他进程占着这块卡。"),
    ("Install a build for your GPU", "安装支持你这块 GPU 的版本", "运行 `python -c \"import torch; print(torch.cuda.get_arch_list(), torch.cuda.get_device_capability())\"` 对比：你的计算能力（如 (12, 0) = sm_120）必须在列表里。安装用支持这块卡的 CUDA 版本编译的 wheel（RTX 50 系列等 Blackwell 卡需要 CUDA 12.8 或更新的版本）；老卡需要仍然支持它的旧版 PyTorch。"),
    ("Keep fewer activations for the backward pass", "为反向传播少保留一些激活值", "打开梯度检查点（Hugging Face：model.gradient_checkpointing_enable()；原生 PyTorch：torch.utils.checkpoint.checkpoint），并减小 batch 或序列长度——激活值占用随它们增长。"),
    ("Keep the kernel log with the job log", "把内核日志和任务日志一起保存", "在崩溃时间前后运行 `sudo dmesg -T | grep -i xid`（或 journalctl -k）：Xid 代码能区分硬件故障和程序错误。"),
    ("Empty PyTorch's cache before the library call", "在调用库之前清空 PyTorch 的缓存", "cuBLAS、cuDNN、cuSOLVER 和 NCCL 直接用 cudaMalloc 分配，用不上 PyTorch 缓存着的显存。在出错的调用之前调用 torch.cuda.empty_cache()；结束 GPU 上的其他进程（`nvidia-smi`）。给 PyTorch 的缓存设上限（torch.cuda.set_per_process_memory_fraction）需要 PyTorch ≥ 1.8。"),
    ("Leave room outside PyTorch's cache", "在 PyTorch 缓存之外留出空间", "cuBLAS、cuDNN、cuSOLVER 和 NCCL 直接用 cudaMalloc 分配，用不上 PyTorch 缓存着的显存。用 torch.cuda.set_per_process_memory_fraction(0.9) 给 PyTorch 设上限，或在出错的调用之前调用 torch.cuda.empty_cache()；停掉这块卡上的其他进程（`nvidia-smi`）。"),
    ("Leave unified memory to PyTorch", "把统一内存留给 PyTorch", "GPU 和 macOS 共用内存：退出占内存的应用（浏览器、IDE、其他 Python 进程），看活动监视器里的“内存压力”；用 float16 加载模型，占用减半。"),
    ("Let NCCL allocate before the model fills the GPU", "在模型占满 GPU 之前让 NCCL 先分配", "在构建模型和优化器之前先初始化进程组并做一次集合通信（如 dist.barrier(device_ids=[local_rank])），让 NCCL 的缓冲区在 PyTorch 缓存变大之前就分配好；用 torch.cuda.set_per_process_memory_fraction(0.9) 留出余量。NCCL_BUFFSIZE（默认每个通道 4 MiB）和 NCCL_MAX_NCHANNELS 可以缩小 NCCL 自己的缓冲区。"),
    ("Let NCCL say what failed", "让 NCCL 说出哪里出了错", "设 NCCL_DEBUG=INFO（必要时加 NCCL_DEBUG_SUBSYS=ALL）重跑，NCCL 会打印失败的具体原因。"),
    ("Let the allocator grow segments instead of fragmenting them", "让分配器扩展段，而不是切出碎片", "{export}（在 Python 启动前设置，或在第一次 CUDA 调用之前写进 os.environ）：段可以原地变大，不再留下用不上的碎片。Windows 不支持；在 WSL2 和 Jetson 上它本身可能报 `CUDA driver error: out of memory`。"),
    ("Load checkpoints without a full copy in RAM", "加载 checkpoint 时不要在内存里整份复制", "用 torch.load(..., mmap=True) 或 safetensors，加载到 meta 设备再逐层搬运（Hugging Face：low_cpu_mem_usage=True）。"),
    ("Look for memory kept across steps", "找出跨步保留的显存", "如果先跑了一段时间才出错，说明有东西在累积：用张量而不是 float 累加 loss、把输出追加到列表里、不断变大的缓存，或越来越长的序列。"),
    ("Look for tensors kept across steps", "找出跨步保留的张量", "用 loss.item() 累加 loss；不要把带计算图的输出存进列表；评估时包在 torch.no_grad() 里。"),
    ("Lower max_model_len", "调低 max_model_len", "把 max_model_len 设成你实际需要的最长上下文。"),
    ("Make every rank run the same collectives", "让每个 rank 执行同样的集合通信", "放在 `if rank == 0:` 里的评估、日志或保存 checkpoint 如果调用了集合通信（或耗时超过超时时间），其他 rank 就会一直等；数据不均（DistributedSampler 没设 drop_last=True）会让某个 rank 多跑一步。"),
    ("Make the computation need less memory", "让计算需要更少的内存", "减小 batch size；用 jax.checkpoint（jax.remat）包住各个块来重算激活值；用 jax.jit(..., donate_argnums=...) 捐出输入缓冲区，让输出复用它们；参数和激活值用 bfloat16。"),
    ("Make the optimizer state smaller", "减小优化器状态", "Adam 每个参数要额外存两份状态：用 8 位优化器（bitsandbytes），或用 ZeRO/FSDP 把它分片到多张卡上。"),
    ("Make the workload smaller", "缩小工作负载", "把 batch size 减半，缩短序列或降低分辨率，用更低的精度（bfloat16/float16，推理时可用量化模型），或者换更小的模型。"),
    ("Match CUDA, cuDNN and the driver to your PyTorch/TensorFlow build", "让 CUDA、cuDNN 和驱动与 PyTorch/TensorFlow 的版本匹配", "对比 torch.version.cuda（或 tf.sysconfig.get_build_info()）和安装的工具包/cuDNN，并升级 GPU 驱动；pip 和 conda 的 CUDA 库混装是常见原因。"),
    ("Match the native pieces", "让各个原生组件的版本匹配", "用同一个 CUDA 版本编译的 wheel 重装 PyTorch 和所有 CUDA 扩展，把其他 CUDA/cuDNN 的 DLL 目录从 PATH 里去掉，升级 GPU 驱动。"),
    ("Close other programs that use the GPU", "关掉其他占用 GPU 的程序", "另一个模型服务、游戏或浏览器的 GPU 进程也占着显存；用显卡厂商的工具（nvidia-smi、rocm-smi，或 Windows 任务管理器的 GPU 页）查看谁占了多少。"),
    ("Build the engine with smaller limits", "用更小的上限构建 engine", "调小 engine 的最大 batch 和序列长度（优化 profile；TensorRT-LLM 的 max_batch_size、max_input_len、max_seq_len）以及 builder 的 workspace 上限，并在没有其他任务的 GPU 上构建。"),
    ("Offload fewer layers or shrink the context", "少卸载几层到 GPU，或缩短上下文", "减小 -ngl（n_gpu_layers）或上下文长度 -c。"),
    ("Offload less to the host", "少往主机卸载一些", "少往主机内存卸载一些（卸载到主机的激活值或优化器状态、一次性保留的大块设备到主机传输）。"),
    ("Pass contiguous tensors to custom ops", "给自定义算子传连续的张量", "调用前先 x = x.contiguous()。"),
    ("Process in smaller pieces", "分成更小的块处理", "分块处理数据（一次几行或几块），中间数组用完马上删掉（del x），大数组尽量用原地操作（out= 参数）。"),
    ("Put the traceback into the report", "把调用栈也放进报告", "用 @torch.distributed.elastic.multiprocessing.errors.record 装饰入口函数（from torch.distributed.elastic.multiprocessing.errors import record）。"),
    ("Raise PyTorch's MPS limit — knowing the risk", "调高 PyTorch 的 MPS 上限（要清楚风险）", "按报错的提示，在 Python 启动前 export PYTORCH_MPS_HIGH_WATERMARK_RATIO=0.0 可以去掉上限：但 PyTorch 之后可能占用超过 macOS 建议给 GPU 的统一内存，系统会大量换页，甚至卡死或崩溃（\"may cause system failure\"）。设成默认的 1.7 到 2.0（统一内存上允许的最大值）之间，提高上限的风险更小。0.7 这样更低的值则相反——PyTorch 更早失败，macOS 保持流畅；同时把 PYTORCH_MPS_LOW_WATERMARK_RATIO 设得不高于它（如 0.5），否则 PyTorch 会拒绝这个设置。"),
    ("Raise XLA's pinned host-memory limit", "调高 XLA 的锁页主机内存上限", "按报错的提示，启动前 export XLA_PJRT_GPU_HOST_MEMORY_LIMIT_GB=128（或机器能腾出的大小）；默认是 64 GB。"),
    ("Raise or remove the per-process memory limit", "调高或去掉进程级的显存上限", "检查代码里的 torch.cuda.set_per_process_memory_fraction()，以及 PYTORCH_CUDA_ALLOC_CONF 等设置。"),
    ("Raise or remove the pool limit, or release cached blocks", "调高或去掉内存池上限，或释放缓存块", "上限由 cupy.get_default_memory_pool().set_limit(size=...)（或 CUPY_GPU_MEMORY_LIMIT）设置；调高它，或先调用 cupy.get_default_memory_pool().free_all_blocks()——池里还缓存着的已释放块也算在上限里。"),
    ("Raise the Windows paging file", "调大 Windows 页面文件", "系统属性 → 高级 → 性能设置 → 高级 → 虚拟内存：给系统盘设置更大的页面文件，然后重启；也可以减少 DataLoader 的 num_workers。"),
    ("Raise the timeout only for slow but healthy steps", "只有在步骤确实慢但正常时才调大超时", "dist.init_process_group(backend=\"nccl\", timeout=datetime.timedelta(minutes=30)) 只在某一步确实慢的时候有用（第一步的编译、保存大 checkpoint），某个 rank 已经崩溃时没用。"),
    ("Read XLA's buffer report", "看 XLA 的缓冲区报告", "`BufferAssignment OOM Debugging.` 之后的几行列出了程序里最大的缓冲区（Peak buffers）、它们的形状和产生它们的操作：显存就花在这些地方。"),
    ("Read the root-cause rank's own output", "看根因 rank 自己的输出", "torchrun 的汇总只说了哪个 rank 先退出；真正的报错在那个 rank 的标准错误输出里（用 --log-dir 或 --tee 3 保存每个 rank 的输出）。"),
    ("Rebuild extensions for this architecture", "为这个架构重新编译扩展", "如果出错的 kernel 属于某个扩展，设 TORCH_CUDA_ARCH_LIST 为你的计算能力重新编译它（如 TORCH_CUDA_ARCH_LIST=\"8.6\" pip install --no-build-isolation --force-reinstall <package>）。"),
    ("Rebuild or update the extension that owns it", "重新编译或升级出问题的扩展", "重装为你的 PyTorch 和 CUDA 版本编译的自定义 kernel（flash-attn、xformers、bitsandbytes、apex）；排查时换成 PyTorch 自带的 kernel（如 Hugging Face 模型里设 attn_implementation=\"eager\" 或 \"sdpa\"）。"),
    ("Record what each rank was doing", "记录每个 rank 在做什么", "设 TORCH_NCCL_TRACE_BUFFER_SIZE（如 2000）和 TORCH_NCCL_DUMP_ON_TIMEOUT=1，超时时会转储每个 rank 最后的集合通信。"),
    ("Reduce the batch size", "减小 batch size", "把 batch size 减半；用梯度累积保持等效 batch（累积 N 个 micro-batch 后再 optimizer.step()）。激活值占用随之成比例减少。"),
    ("Reduce the workload", "减小工作负载", "减小 batch size、序列长度或模型规模。"),
    ("Release CuPy's cached memory when sharing the GPU", "与其他库共用 GPU 时释放 CuPy 的缓存", "调用 cupy.get_default_memory_pool().free_all_blocks()。"),
    ("Release cached blocks between phases", "在阶段之间释放缓存块", "在训练和评估之间、或加载大模型之前调用 torch.cuda.empty_cache()；它只释放没人用的缓存，不能替代减少显存占用。"),
    ("Release memory Metal holds outside PyTorch's tensors", "释放 Metal 在 PyTorch 张量之外占用的内存", "在阶段之间调用 torch.mps.empty_cache()。"),
    ("Restart the process after fixing it", "改完后重启进程", "kernel 出错后 CUDA 上下文就不可用了，同一进程里的后续 CUDA 调用都会失败；Jupyter 里要重启内核。"),
    ("Rule out DataLoader workers", "排除 DataLoader worker 的影响", "试试 num_workers=0：在 Windows 上每个 worker 都是单独的进程，它们崩溃时就是这样退出的。"),
    ("Rule out memory exhaustion inside native code", "排除原生代码里的内存耗尽", "用更小的 batch 或模型重试：原生库里的分配失败可能以 abort() 结束，而不是抛出 Python 的显存不足错误。"),
    ("Rule out the display watchdog", "排除显示看门狗", "如果这块 GPU 同时接着显示器（以及 Windows 上 WDDM 的 TDR），运行超过约 2 秒的 kernel 会被杀掉：换一块不接显示器的卡、让每个 kernel 处理更小的 batch，或在 Windows 上调大 TdrDelay。"),
    ("Rule out the hardware", "排除硬件问题", "如果出错的位置不固定，查看内核日志（`sudo dmesg | grep -i xid`）里有没有 NVIDIA Xid 错误，并单独运行这块 GPU。"),
    ("Rule out the input itself", "排除输入本身的问题", "如果减小 batch 没用，先把输入变成连续的（x = x.contiguous()），并设 torch.backends.cudnn.enabled = False 试一下：能跑通就说明是输入布局或形状不受支持，不是显存。"),
    ("Run evaluation without autograd", "评估时关闭 autograd", "把评估代码包在 torch.no_grad()（或 torch.inference_mode()）里，并调用 model.eval()。"),
    ("Run under compute-sanitizer", "用 compute-sanitizer 运行", "运行 `compute-sanitizer --tool memcheck python train.py`（很慢，用小输入）找出越界访问的 kernel。"),
    ("See the failing index clearly", "看清楚是哪个索引出错", "设 CUDA_LAUNCH_BLOCKING=1 重跑，或在 CPU 上跑同一个 batch，会得到带具体数值的普通 IndexError。"),
    ("See which tensors hold the memory", "看看是哪些张量占着显存", "在出错前打印 torch.cuda.memory_summary()，或用 torch.cuda.memory._record_memory_history() 记录快照，在 https://pytorch.org/memory_viz 查看。"),
    ("Shorten sequences or shrink inputs", "缩短序列或缩小输入", "注意力和激活值的显存随序列长度（和图像分辨率）增长：限制 max_length 或裁剪输入。"),
    ("Shrink the weights or spread them", "缩小权重或把它们分散到多张卡", "用量化（8 位/4 位）或更小的模型，或用张量并行/流水线并行把权重分到多张卡上。"),
    ("Stop TensorFlow from taking the whole GPU when it shares the card", "与其他框架共用卡时不要让 TensorFlow 占满整块 GPU", "调用 tf.config.experimental.set_memory_growth(gpu, True)，或设 TF_FORCE_GPU_ALLOW_GROWTH=true。"),
    ("Stop frameworks from reserving the whole GPU", "不要让框架预留整块 GPU", "TensorFlow 设 TF_FORCE_GPU_ALLOW_GROWTH=true，JAX 设 XLA_PYTHON_CLIENT_PREALLOCATE=false。"),
    ("Stop other GPU libraries in this process from holding memory", "不要让同进程里的其他 GPU 库占着显存", "TensorFlow 和 JAX 会预先占用大部分显存：TF_FORCE_GPU_ALLOW_GROWTH=true，XLA_PYTHON_CLIENT_PREALLOCATE=false。用 cupy.get_default_memory_pool().free_all_blocks() 释放 CuPy 的池。NCCL 的缓冲区随 NCCL_BUFFSIZE 和通信器的数量增长。"),
    ("Stop the allocator from splitting large blocks", "不要让分配器拆分大块", "{export}：大于 128 MB 的块不再被拆分，用不上的碎片会少一些；可以在 128–512 之间试，值太小可能影响速度。"),
    ("Store the KV cache in 8 bits", "用 8 位存 KV cache", "设 kv_cache_dtype=\"fp8\"，KV cache 的显存减半。"),
    ("Switch to a non-Triton path", "换一条不走 Triton 的路径", "排查时关掉 Triton kernel（如关闭 torch.compile、换一个注意力后端）；batch size 和显存设置对这个错误没有影响。"),
    ("Trade compute for memory with gradient checkpointing", "用梯度检查点以计算换显存", "Hugging Face：model.gradient_checkpointing_enable()；原生 PyTorch：torch.utils.checkpoint.checkpoint。"),
    ("Try CUDA's asynchronous allocator if memory is fragmented", "显存碎片化时试试 CUDA 的异步分配器", "设 PYTORCH_CUDA_ALLOC_CONF=backend:cudaMallocAsync。"),
    ("Turn off expandable segments", "关掉 expandable segments", "从 PYTORCH_CUDA_ALLOC_CONF / PYTORCH_ALLOC_CONF 里去掉 expandable_segments:True：普通分配器会报出带数字的正常显存不足错误（在 WSL2 上 expandable segments 是已知的故障来源）。"),
    ("Turn off expandable segments if you set them", "如果设置了 expandable segments，先关掉", "从 PYTORCH_CUDA_ALLOC_CONF / PYTORCH_ALLOC_CONF 里去掉 expandable_segments:True：它使用的驱动 API 映射在 WSL2 和 Jetson 上即使有空闲显存也会失败。"),
    ("Turn off pinned memory if RAM is tight", "内存紧张时关掉 pin_memory", "DataLoader(pin_memory=False)：锁页内存不能换出。"),
    ("Use a kernel configuration for this GPU", "用适合这块 GPU 的 kernel 配置", "升级提供这个 kernel 的库（vLLM、unsloth、flash-linear-attention 等）：新版本通常带有适配更多 GPU 的配置。如果 kernel 是你自己写的，在它的 triton.Config / autotune 列表里调低 num_stages 或 BLOCK_* 大小。"),
    ("Use fewer DataLoader workers", "减少 DataLoader worker", "调小 DataLoader 的 num_workers：每个 worker 都有自己的一份内存。"),
    ("Use fewer or lighter DataLoader workers", "减少 DataLoader worker 或让它们更轻", "调小 num_workers；不要在 Dataset 里持有大的 Python 列表或张量（每个 worker 都会复制一份），改用 numpy 数组或内存映射文件。"),
    ("Use less memory per request", "让每个请求少用些显存", "用 compute_type=\"int8_float16\"（或 \"int8\"）加载模型，调低 beam_size 和 batch_size，换更小的模型，或者用 device=\"cpu\" 测试。"),
    ("Use less of the GPU than nvidia-smi shows free", "只用比 nvidia-smi 显示的空闲更少的显存", "在 WSL2 上真正能驻留的显存比 nvidia-smi 报告的少：调低框架占用的比例（vLLM --gpu-memory-utilization 0.8、更小的 KV cache）、batch 或模型大小。`dmesg | grep -i make_resident` 会显示驱动的 ENOMEM。"),
    ("Use mixed precision", "使用混合精度", "在 torch.autocast(device_type=\"cuda\", dtype=torch.bfloat16) 下跑前向（或用 float16 配合 torch.amp.GradScaler）：激活值只占一半显存。"),
    ("Give TensorFlow more room if it is slow", "如果变慢了，给 TensorFlow 多留些显存", "退回去的算法可能更慢：更小的 batch、混合精度，或者停掉这块 GPU 上的其他进程，都能给更快的算法腾出空间。"),
    ("Give the compiler more memory", "给编译器更多内存", "减少并行编译任务（make -j1、MAX_JOBS=1），关掉其他程序或加 swap，并且只为你用的 GPU 编译（-gencode / TORCH_CUDA_ARCH_LIST 只写一个架构）。"),
    ("Look for the driver's Xid line", "找驱动的 Xid 记录", "在崩溃时间前后运行 `sudo dmesg -T | grep -i -e xid -e NVRM`，看驱动最先看到的是什么。"),
    ("Make the input contiguous", "让输入连续", "按 PyTorch 的提示，对传给出错的卷积 / RNN 的张量调用 .contiguous()（permute、transpose 或切片之后）。"),
    ("Match cuDNN to the GPU and framework", "让 cuDNN 和 GPU、框架匹配", "用 PyTorch/TensorFlow 发行版自带的 cuDNN；半精度，或者不常见的 stride、groups、dilation，并不是每个算法都支持。"),
    ("Nothing to fix unless the job fails", "任务没失败就不用处理", "TensorFlow 说明调用方会处理这次分配失败（改用一个需要显存更少的算法）。在日志后面找 `OOM when allocating tensor` 或 `ResourceExhaustedError`：只有那才是显存不足错误。"),
    ("Reboot the node and check the hardware", "重启节点并检查硬件", "给机器断电重启；检查电源余量、温度（`nvidia-smi -q -d TEMPERATURE,POWER`）以及 PCIe 插槽或转接卡；同一块 GPU 反复出现就送修。"),
    ("Try a smaller batch, then without cuDNN", "先减小 batch，再试试不用 cuDNN", "张量大到超出 cuDNN 的 32 位索引，或者工作区放不下，也会得到这个状态：把 batch size 减半；设 `torch.backends.cudnn.enabled = False` 可以确认是 cuDNN 拒绝了调用。"),
    ("Use a 64-bit, current CUDA toolkit", "用较新的 64 位 CUDA 工具包", "旧的或 32 位的 ptxas 地址空间很小；较新的 64 位工具包没有这个限制。"),
];

/// English label, Chinese label, Chinese meaning.
const ROWS: &[(&str, &str, &str)] = &[
    (
        "Tried to allocate",
        "尝试分配",
        "分配器向 CUDA 申请的块：张量大小按 2 MiB 向上取整",
    ),
    ("You tried to allocate", "尝试分配", "这次申请的大小"),
    ("Trying to allocate", "尝试分配", "这次申请的大小"),
    ("Allocating", "正在分配", "这次申请的大小"),
    (
        "Total capacity",
        "总容量",
        "这块 GPU 的全部显存（CUDA 报告的值）",
    ),
    (
        "Free",
        "空闲",
        "报错时整块设备上的空闲显存（PyTorch 已先归还了没用的缓存）",
    ),
    (
        "Already allocated",
        "已分配",
        "本进程存活张量占用的显存（按块计，比张量字节数略多）",
    ),
    ("Allocated", "已分配", "本进程存活张量占用的显存"),
    (
        "Reserved in total",
        "总共已预留",
        "PyTorch 缓存分配器从 CUDA 拿到的全部显存：已分配加缓存",
    ),
    (
        "Reserved but unallocated",
        "已预留未分配",
        "PyTorch 缓存着、但没有张量在用的显存",
    ),
    (
        "Reserved (derived)",
        "已预留（推算）",
        "已分配加缓存：PyTorch 从 CUDA 拿到的全部显存",
    ),
    ("Cached", "缓存", "PyTorch 缓存着、但没有张量在用的显存"),
    ("Allowed", "允许上限", "为这个进程设置的显存上限"),
    ("Max allowed", "允许上限", "允许使用的最大内存"),
    ("Limit set to", "上限设为", "设置的内存上限"),
    (
        "Private pools",
        "私有池",
        "CUDA graph 私有池中的空闲空间，只给对应的 graph 用",
    ),
    (
        "This process",
        "本进程",
        "本进程在这块 GPU 上占用的全部显存（含 PyTorch 之外的部分）",
    ),
    (
        "Outside PyTorch (derived)",
        "PyTorch 之外（推算）",
        "总容量 − 空闲 − 已预留：CUDA 上下文、其他库和其他进程加在一起",
    ),
    (
        "Non-PyTorch (derived)",
        "非 PyTorch（推算）",
        "本进程占用减去 PyTorch 预留：CUDA 上下文、库的工作区、NCCL 等",
    ),
    (
        "Outside this process (derived)",
        "本进程之外（推算）",
        "总容量 − 空闲 − 本进程（− 列出的进程）：被其他进程、桌面会话或另一个容器占着",
    ),
    (
        "Held + request (derived)",
        "已持有 + 申请（推算）",
        "PyTorch 持有的加上这次申请，与允许的上限相比",
    ),
    (
        "Other processes (derived)",
        "其他进程（推算）",
        "报错里列出的其他进程占用之和",
    ),
    (
        "Shortfall (derived)",
        "缺口（推算）",
        "申请量 − 空闲：设备上差了多少",
    ),
    (
        "Room under the limit (derived)",
        "上限内剩余（推算）",
        "上限减去已用：还能再分配多少",
    ),
    (
        "Total with request (derived)",
        "加上这次申请（推算）",
        "已用加上这次申请的总量",
    ),
    (
        "Tensor size (derived)",
        "张量大小（推算）",
        "由形状和数据类型算出的大小",
    ),
    ("Shape", "形状", "要分配的张量的形状"),
    ("Type", "类型", "张量的数据类型"),
    ("Device", "设备", "出错的设备"),
    ("Allocator", "分配器", "报错的分配器"),
    ("Allocated so far", "已分配", "此前已分配的总量"),
    ("Other allocations", "其他分配", "其他分配占用的内存"),
    ("MPS allocated", "MPS 已分配", "MPS 后端已分配的内存"),
    ("Killed process", "被杀进程", "内核选中并杀掉的进程"),
    ("KV cache", "KV cache", "KV cache 能放下的 token 数"),
    (
        "KV cache needed",
        "所需 KV cache",
        "一个最长请求需要的 KV cache",
    ),
    (
        "KV cache available",
        "可用 KV cache",
        "加载权重后留给 KV cache 的显存",
    ),
    ("max_model_len", "max_model_len", "配置的最长上下文"),
    (
        "Allocated by PyTorch",
        "PyTorch 已分配",
        "本进程存活张量占用的显存（按块计，比张量字节数略多）",
    ),
    (
        "Currently allocated",
        "当前已分配",
        "通过这个后端分配、仍在使用的张量显存",
    ),
    ("Device limit", "设备上限", "这块设备允许使用的显存上限"),
    ("Parameters", "参数", "编译后程序的输入缓冲区"),
    ("Outputs", "输出", "编译后程序的输出缓冲区"),
    ("Temporaries", "临时缓冲区", "程序运行时的中间结果"),
    (
        "Program total",
        "程序总计",
        "参数、输出和临时缓冲区加在一起",
    ),
    (
        "anon-rss",
        "anon-rss",
        "进程被杀时自己页面里占用的内存：衡量它内存用量的最好指标",
    ),
    (
        "file-rss",
        "file-rss",
        "内存里由文件支撑的页面（映射的文件、库），可以回收",
    ),
    (
        "shmem-rss",
        "shmem-rss",
        "共享内存页面（如 /dev/shm，DataLoader worker 会用）",
    ),
    (
        "total-vm",
        "total-vm",
        "预留的虚拟地址空间，不是实际占用的内存（CUDA 会预留很多）",
    ),
    (
        "Longest that fits",
        "能放下的最长长度",
        "现有 KV cache 能支持的最长上下文",
    ),
];

/// The era evidence `crate::snapshot` writes, in Chinese (key names kept).
const SNAPSHOT_EVIDENCE: &[(&str, &str)] = &[
    (
        "trace events carry `user_metadata`",
        "事件带有 `user_metadata`",
    ),
    (
        "trace events carry `compile_context`, not `user_metadata`",
        "事件带有 `compile_context`，没有 `user_metadata`",
    ),
    (
        "`external_annotations` present",
        "有 `external_annotations`",
    ),
    (
        "trace events without `compile_context`",
        "事件没有 `compile_context`",
    ),
    (
        "no trace events to narrow it further",
        "没有事件记录，无法进一步缩小范围",
    ),
    (
        "`allocator_settings` present, no `external_annotations`",
        "有 `allocator_settings`，没有 `external_annotations`",
    ),
    (
        "trace events carry `time_us`, no `allocator_settings`",
        "事件带有 `time_us`，没有 `allocator_settings`",
    ),
    (
        "blocks carry `history`, not `frames`",
        "块带有 `history`，没有 `frames`",
    ),
    (
        "blocks carry `frames` and `address`",
        "块带有 `frames` 和 `address`",
    ),
    (
        "a bare segment list has no trace to narrow it further",
        "只有段的列表，没有事件记录，无法进一步缩小范围",
    ),
    ("trace events without `time_us`", "事件没有 `time_us`"),
    ("no version-specific key present", "没有哪个版本特有的键"),
    (
        "`segment_map`/`segment_unmap` events (expandable segments)",
        "有 `segment_map`/`segment_unmap` 事件（expandable segments）",
    ),
];

/// The sections a memory snapshot adds to a finding, in Chinese: the same
/// rows and figures as `crate::snapshot::text_sections`.
pub fn snapshot_sections(r: &SnapshotReport) -> Vec<(String, Vec<String>)> {
    let mut out = Vec::new();
    let layout = if r.layout == "segment_list" {
        "torch.cuda.memory_snapshot() 返回的段列表"
    } else {
        "torch.cuda.memory._snapshot()/_dump_snapshot()"
    };
    let evidence: Vec<&str> = r
        .era_evidence
        .iter()
        .map(|e| {
            SNAPSHOT_EVIDENCE
                .iter()
                .find(|(en, _)| en == e)
                .map_or(e.as_str(), |(_, zh)| zh)
        })
        .collect();
    let mut about = vec![
        format!("格式：{layout}，pickle 协议 {}", r.pickle_protocol),
        format!("版本：PyTorch {}（{}）", r.era, evidence.join("；")),
    ];
    if let Some(conf) = &r.alloc_conf {
        let conf = if conf.is_empty() { "（空）" } else { conf };
        about.push(format!("PYTORCH_CUDA_ALLOC_CONF：{conf}"));
    }
    if let Some(o) = &r.oom {
        about.push(match o.state.as_str() {
            "at_oom" if o.events_after == 0 => {
                "状态：OOM 那一刻（快照紧接着 OOM 保存，例如由 OOM 观察者保存）".to_string()
            }
            "at_oom" => format!(
                "状态：OOM 那一刻（之后的 {} 个事件没有改变任何块）",
                o.events_after
            ),
            "rewound" => format!(
                "状态：倒推回 OOM 那一刻（快照晚了 {} 个事件才保存，已把它们撤销）",
                o.events_after
            ),
            _ => format!(
                "状态：OOM 之后（之后的 {} 个事件没能全部撤销）",
                o.events_after
            ),
        });
    }
    out.push(("显存快照".to_string(), about));
    if let Some(o) = &r.oom {
        let pool = match o.pool.as_str() {
            "large" => "大块池",
            "small" => "小块池",
            other => other,
        };
        let rows = [
            (
                "申请",
                o.request_bytes,
                format!(
                    "按 512 字节取整；{pool}；向 cudaMalloc 申请的段为 {}",
                    format_size(o.allocation_bytes)
                ),
                true,
            ),
            (
                "最大可用空洞",
                o.largest_usable_hole_bytes,
                format!(
                    "同一池类型、stream {}、默认池、max_split_size 规则",
                    o.stream
                ),
                true,
            ),
            (
                "可用空洞合计",
                o.usable_class_free_bytes,
                "这一类空闲块加在一起".to_string(),
                false,
            ),
            (
                "设备上空闲",
                o.device_free_bytes.unwrap_or(0),
                "失败时 CUDA 报告的空闲显存".to_string(),
                true,
            ),
            (
                "其他 stream 上的空洞",
                o.largest_other_stream_hole_bytes,
                "最大的一块；这个 stream 不能复用".to_string(),
                false,
            ),
            (
                "私有池里的空洞",
                o.largest_private_pool_hole_bytes,
                "最大的一块；只给 CUDA graph / MemPool 用".to_string(),
                false,
            ),
            (
                "因过大被拒的空洞",
                o.largest_oversize_hole_bytes,
                "最大的一块；max_split_size 规则".to_string(),
                false,
            ),
            (
                "待释放",
                o.pending_free_bytes,
                "已释放，在等其他 stream".to_string(),
                false,
            ),
        ];
        let label_width = rows
            .iter()
            .map(|(label, ..)| unicode_width::UnicodeWidthStr::width(*label))
            .max()
            .unwrap_or(0);
        let mut lines = Vec::new();
        for (label, value, meaning, always) in rows {
            if value == 0 && !always {
                continue;
            }
            let pad = " ".repeat(label_width - unicode_width::UnicodeWidthStr::width(label));
            lines.push(format!(
                "{label}{pad} {:>11}  {meaning}",
                format_size(value)
            ));
        }
        lines.push(if o.largest_usable_hole_bytes >= o.request_bytes {
            "→ 有足够大的可用空洞：这不是失败那一刻的状态".to_string()
        } else {
            "→ 没有一个可用空洞放得下".to_string()
        });
        if !o.stack.is_empty() {
            lines.push(format!("失败的分配位置：{}", o.stack.join(" ← ")));
        }
        out.push((format!("申请与空闲空间（GPU {}）", o.device), lines));
    }
    for d in &r.devices {
        let mut summary = format!(
            "已预留 {}，共 {} 个段{}；活张量 {}（张量实际请求 {}）；空洞里空闲 {}（最大 {}）",
            format_size(d.reserved_bytes),
            d.segments,
            if d.expandable_segments > 0 {
                format!("（{} 个 expandable）", d.expandable_segments)
            } else {
                String::new()
            },
            format_size(d.allocated_bytes),
            format_size(d.tensor_bytes),
            format_size(d.free_in_segments_bytes),
            format_size(d.largest_hole_bytes),
        );
        if d.pending_free_bytes > 0 {
            summary.push_str(&format!("；待释放 {}", format_size(d.pending_free_bytes)));
        }
        if d.private_pool_bytes > 0 {
            summary.push_str(&format!("；私有池里 {}", format_size(d.private_pool_bytes)));
        }
        let mut lines = vec![summary];
        for site in &d.top_sites {
            lines.push(format!(
                "{:>11}  {:>8} 个块  {}",
                format_size(site.bytes),
                site.blocks,
                site.location
            ));
        }
        out.push((
            format!("按分配位置统计的在用显存（GPU {}）", d.device),
            lines,
        ));
    }
    out
}

/// A verdict's Chinese summary for its `explain` page: its detail without
/// the figures of one finding.
pub fn verdict_summary(code: &str) -> Option<&'static str> {
    let (_, _, details) = VERDICTS.iter().find(|(c, _, _)| *c == code)?;
    details.iter().rev().find(|d| !d.contains('{')).copied()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A Chinese page has the English page's sections and cites only what
    /// the English page cites.
    #[test]
    fn chinese_pages_follow_their_english_page() {
        let english: HashMap<&str, &str> =
            crate::explain::docs::EXPLANATIONS.iter().copied().collect();
        let urls = |text: &str| -> Vec<String> {
            text.split_whitespace()
                .filter(|w| w.starts_with("https://"))
                .map(|w| {
                    // A URL ends where Chinese punctuation begins.
                    let url: String = w.chars().take_while(char::is_ascii).collect();
                    url.trim_end_matches([')', ',', '.', ';']).to_string()
                })
                .collect()
        };
        for (code, text) in crate::explain::docs::chinese_pages() {
            let original = english
                .get(code)
                .unwrap_or_else(|| panic!("{code}: no such code"));
            assert!(
                text.starts_with(&format!("# {code}: ")),
                "{code}: title line"
            );
            for section in ["## 示例", "## 为什么会发生", "## 怎么解决", "## 延伸阅读"]
            {
                assert!(text.contains(section), "{code}: missing {section}");
            }
            for url in urls(text) {
                assert!(
                    original.contains(&url),
                    "{code}: {url} is not on the English page"
                );
            }
        }
    }

    /// A headline is Chinese even when a finding states none of the figures.
    #[test]
    fn every_kind_has_a_headline_without_figures() {
        for kind in Kind::ALL {
            let templates = headline_templates(*kind);
            assert!(
                templates.last().is_some_and(|t| !t.contains('{')),
                "{kind:?}"
            );
        }
        for (code, titles, details) in VERDICTS {
            assert!(titles.last().is_some_and(|t| !t.contains('{')), "{code}");
            assert!(details.last().is_some_and(|t| !t.contains('{')), "{code}");
        }
    }

    #[test]
    fn notes_translate_with_their_parts() {
        assert_eq!(
            note("the request is printed rounded (11.96GiB); its byte count is approximate")
                .as_deref(),
            Some("申请量打印时做了取整（11.96GiB）；字节数是近似值")
        );
        assert_eq!(
            note("tried to allocate `99999999999999999999.00 GiB` is too large to be a real byte count").as_deref(),
            Some("tried to allocate `99999999999999999999.00 GiB` 太大，不可能是真实的字节数")
        );
        assert_eq!(note("something else"), None);
    }

    /// A row whose English meaning depends on the figure gets the Chinese
    /// of that meaning: a 20 MiB request is a 1–10 MiB tensor's block.
    #[test]
    fn a_row_follows_the_meaning_the_explainer_chose() {
        let f = fixture_finding("torch_capacity_2_2_kaggle_container.log");
        let rows = crate::explain::field_rows(&f);
        let tried = rows
            .iter()
            .find(|r| r.label == "Tried to allocate")
            .expect("row");
        let (_, meaning) = row(&tried.label, &tried.meaning).expect("Chinese");
        assert!(meaning.contains("1 到 10 MiB"), "{meaning}");
        let (_, plain) = row("Tried to allocate", "the block the allocator asked CUDA for: the tensor's size rounded up to a multiple of 2 MiB").expect("Chinese");
        assert!(plain.contains("2 MiB 向上取整"), "{plain}");
    }

    /// The first finding of a shipped fixture.
    fn fixture_finding(name: &str) -> Finding {
        let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("../../fixtures")
            .join(name);
        let mut analysis = crate::Analysis::new();
        analysis.add(crate::scan(std::fs::File::open(path).unwrap(), name).unwrap());
        analysis.finish().0.remove(0)
    }

    /// A verdict shared with older kinds is worded for the new kind that
    /// gave it, not in the older kinds' terms.
    #[test]
    fn shared_verdicts_speak_of_their_kind() {
        let ptxas = fixture_finding("ptxas_alloc_failure_ccminer.log");
        let (title, detail) = verdict("host_ram_exhausted", &ptxas).unwrap();
        assert_eq!(title, "多半是编译机器的内存用完了");
        assert!(detail.starts_with("ptxas "), "{detail}");
        assert!(detail.contains("它失败了 2 次"), "{detail}");

        let lost = fixture_finding("gpu_fallen_off_bus_dmesg.log");
        let (_, detail) = verdict("hardware_fault", &lost).unwrap();
        assert!(detail.starts_with("据 NVIDIA 内核驱动报告，"), "{detail}");

        let triton = fixture_finding("triton_out_of_resources_shared_memory.log");
        let (_, detail) = verdict("shared_memory_limit", &triton).unwrap();
        assert!(
            detail.contains("要用 65.00 KiB 的 shared memory"),
            "{detail}"
        );
        assert!(detail.contains("上限 64.00 KiB"), "{detail}");

        // The cuDNN wording is picked by the kind, whatever the category.
        let cudnn = fixture_finding("cudnn_not_supported_non_contiguous.log");
        let (title, detail) = verdict("masked_oom", &cudnn).unwrap();
        assert_eq!(title, "多半是换了个名字的显存不足");
        assert!(detail.starts_with("cuDNN 报错附近的日志"), "{detail}");

        // Other kinds keep the general wording.
        let (title, _) = verdict("masked_oom", &triton).unwrap();
        assert_eq!(title, "报错里没说显存不足，但实际上多半就是");
    }

    #[test]
    fn templates_take_the_first_that_fits() {
        let figures: HashMap<String, String> =
            [("requested".to_string(), "2.00 GiB".to_string())].into();
        assert_eq!(
            pick(
                &["{device} {requested}", "分配 {requested} 失败", "失败"],
                &figures
            ),
            Some("分配 2.00 GiB 失败".to_string())
        );
    }
}
