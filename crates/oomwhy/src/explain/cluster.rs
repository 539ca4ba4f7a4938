//! Kills and warnings of the resource managers that cluster and data
//! frameworks run their workers under: YARN (Spark, MapReduce), Ray's
//! memory monitor, Dask's nanny and workers (`host_oom_killed`, eras
//! `yarn`, `ray_monitor`, `dask`). Each kills at a limit of its own, so
//! each is explained and fixed through its own settings (sources:
//! docs/formats.md §10.1, docs/fix-versions.md).

use super::catalogue::{Cost, FixSpec};
use super::common::{extra, fact, fix, row, verdict, FieldRow};
use super::docs::Code;
use crate::i18n::Said;
use crate::record::{Category, Era, Finding, Fix, Verdict};
use crate::say;
use crate::units::format_size as fmt;

/// Whether a resource manager of this module reported the finding.
pub(super) fn owns(f: &Finding) -> bool {
    matches!(
        f.era,
        Some(Era::Yarn) | Some(Era::RayMonitor) | Some(Era::Dask)
    )
}

fn warning(f: &Finding) -> bool {
    f.category == Category::Warning
}

fn used_of_limit(f: &Finding) -> Option<(String, String)> {
    let used = extra(f, "used_bytes")?;
    let limit = extra(f, "limit_bytes").or(f.sizes.total_bytes)?;
    Some((fmt(used), fmt(limit)))
}

pub(super) fn headline(f: &Finding) -> Said {
    match (f.era, used_of_limit(f)) {
        (Some(Era::Yarn), Some((used, limit))) => say!(
            en: "YARN killed the container for exceeding its memory limit ({used} used of {limit})",
            zh: "容器超出了内存上限，被 YARN 杀掉（上限 {limit}，用了 {used}）",
            used = used,
            limit = limit
        ),
        (Some(Era::Yarn), None) => say!(
            en: "YARN killed the container for exceeding its memory limit",
            zh: "容器超出了内存上限，被 YARN 杀掉"
        ),
        (Some(Era::RayMonitor), Some((used, total))) => say!(
            en: "Ray's memory monitor killed a worker: the node's memory use ({used} of {total}) crossed its threshold",
            zh: "Ray 的内存监控杀掉了一个 worker：节点的内存用量（{total} 中用了 {used}）超过了它的阈值",
            used = used,
            total = total
        ),
        (Some(Era::RayMonitor), None) => say!(
            en: "Ray's memory monitor killed workers: the node's memory use crossed its threshold",
            zh: "Ray 的内存监控杀掉了 worker：节点的内存用量超过了它的阈值"
        ),
        (Some(Era::Dask), Some((used, limit))) if warning(f) => say!(
            en: "Warning, not a kill yet: a Dask worker's memory ({used}) is close to its limit ({limit})",
            zh: "这是警告，还没有杀进程：一个 Dask worker 的内存（{used}）已经接近它的上限（{limit}）",
            used = used,
            limit = limit
        ),
        (Some(Era::Dask), None) if warning(f) => say!(
            en: "Warning, not a kill yet: a Dask worker's memory is close to its limit",
            zh: "这是警告，还没有杀进程：一个 Dask worker 的内存已经接近它的上限"
        ),
        _ => match fact(f, "terminate_fraction") {
            Some(share) => say!(
                en: "Dask's nanny restarted a worker that used more than {share} of its memory limit",
                zh: "Dask 的 nanny 重启了一个 worker：它用的内存超过了自己内存上限的 {share}",
                share = share
            ),
            None => say!(
                en: "Dask's nanny restarted a worker at its memory limit",
                zh: "Dask 的 nanny 在 worker 到达内存上限时重启了它"
            ),
        },
    }
}

pub(super) fn field_rows(f: &Finding) -> Vec<FieldRow> {
    let mut rows = Vec::new();
    let (used_meaning, limit_meaning) = match f.era {
        Some(Era::Yarn) => (
            say!(
                en: "what the container's processes held, as YARN's NodeManager measured it",
                zh: "YARN 的 NodeManager 测得的容器内各进程占用的内存"
            ),
            say!(
                en: "the container's limit: for a Spark executor, spark.executor.memory plus its memory overhead",
                zh: "容器的上限：对 Spark executor 来说是 spark.executor.memory 加上它的 memory overhead"
            ),
        ),
        Some(Era::RayMonitor) => (
            say!(
                en: "memory in use on the whole node (all tasks, actors, the object store and Ray itself)",
                zh: "整个节点上在用的内存（所有任务、actor、object store 和 Ray 自己）"
            ),
            say!(en: "the node's memory", zh: "节点的内存总量"),
        ),
        _ => (
            say!(
                en: "the worker process's memory (its RSS)",
                zh: "worker 进程的内存（RSS）"
            ),
            say!(
                en: "the worker's memory_limit",
                zh: "worker 的 memory_limit"
            ),
        ),
    };
    if let Some(used) = extra(f, "used_bytes") {
        rows.push(row(
            say!(en: "Used", zh: "已用"),
            fmt(used),
            used_meaning,
            false,
        ));
    }
    let limit = extra(f, "limit_bytes").or(f.sizes.total_bytes);
    if let Some(limit) = limit {
        let label = if f.era == Some(Era::RayMonitor) {
            say!(en: "Node memory", zh: "节点内存")
        } else {
            say!(en: "Limit", zh: "上限")
        };
        rows.push(row(label, fmt(limit), limit_meaning, false));
    }
    if let Some(threshold) = fact(f, "threshold") {
        rows.push(row(
            say!(en: "Threshold", zh: "阈值"),
            threshold.to_string(),
            say!(
                en: "the share of the node's memory at which the monitor kills (RAY_memory_usage_threshold)",
                zh: "内存监控开始杀进程时节点内存的占比（RAY_memory_usage_threshold）"
            ),
            false,
        ));
    }
    rows
}

pub(super) fn verdicts(f: &Finding, out: &mut Vec<Verdict>) {
    if warning(f) {
        return;
    }
    match f.era {
        Some(Era::Yarn) => {
            let virtual_memory = fact(f, "memory") == Some("virtual");
            let detail = if virtual_memory {
                say!(
                    en: "YARN's NodeManager checks each container's memory and kills the container when it goes over: here its virtual memory went over the physical limit times yarn.nodemanager.vmem-pmem-ratio (2.1 by default). Virtual memory is address space, not RAM: a JVM reserves far more than it uses. This is host memory, not GPU memory.",
                    zh: "YARN 的 NodeManager 会检查每个容器的内存，超出就杀掉容器：这里是虚拟内存超过了物理上限乘以 yarn.nodemanager.vmem-pmem-ratio（默认 2.1）。虚拟内存是地址空间，不是内存：JVM 预留的远比它用的多。这是主机内存，不是显存。"
                )
            } else {
                say!(
                    en: "YARN's NodeManager checks each container's physical memory (RSS of all its processes) and kills the container when it goes over the size it was granted. For a Spark executor that size is spark.executor.memory (the JVM heap) plus the memory overhead (off-heap buffers, thread stacks, Python workers, native libraries): it is the overhead, not the heap, that runs out here, since a full heap raises java.lang.OutOfMemoryError instead. This is host memory, not GPU memory.",
                    zh: "YARN 的 NodeManager 会检查每个容器的物理内存（容器内所有进程的 RSS），超过分配给它的大小就杀掉容器。对 Spark executor 来说，这个大小是 spark.executor.memory（JVM 堆）加上 memory overhead（堆外缓冲区、线程栈、Python worker、本地库）：这里用完的是 overhead，不是堆，因为堆满了会抛 java.lang.OutOfMemoryError。这是主机内存，不是显存。"
                )
            };
            out.push(verdict(
                Code::HostMemoryLimit,
                say!(
                    en: "The container went over the memory YARN granted it",
                    zh: "容器用的内存超过了 YARN 分配给它的量"
                ),
                detail,
            ));
        }
        Some(Era::RayMonitor) => out.push(verdict(
            Code::HostRamExhausted,
            say!(
                en: "Ray's memory monitor killed workers before the node's RAM ran out (host memory, not GPU memory)",
                zh: "Ray 的内存监控在节点内存耗尽之前杀掉了 worker（是主机内存，不是显存）"
            ),
            say!(
                en: "Nothing failed to allocate: the raylet's memory monitor checks the node's memory use (every RAY_memory_monitor_refresh_ms, 250 ms by default) and, when it crosses RAY_memory_usage_threshold (0.95 of the node's memory by default), kills a worker itself before the kernel's out-of-memory killer would. Ray retries a task it killed this way; a task or actor that cannot be retried raises ray.exceptions.OutOfMemoryError. The tasks and actors on the node together used nearly all of its RAM.",
                zh: "并没有哪次分配失败：raylet 的内存监控会检查节点的内存使用（每隔 RAY_memory_monitor_refresh_ms，默认 250 毫秒），一旦超过 RAY_memory_usage_threshold（默认是节点内存的 0.95），它就抢在内核的 OOM killer 之前自己杀掉一个 worker。这样被杀的任务 Ray 会重试；不能重试的任务或 actor 会抛出 ray.exceptions.OutOfMemoryError。节点上的任务和 actor 加起来用掉了几乎全部内存。"
            ),
        )),
        _ => out.push(verdict(
            Code::HostMemoryLimit,
            say!(
                en: "The Dask worker went over its memory limit",
                zh: "Dask worker 用的内存超过了它的上限"
            ),
            say!(
                en: "Dask's nanny watches its worker's memory (RSS) against the worker's memory_limit and terminates and restarts the worker past the terminate fraction (distributed.worker.memory.terminate, 0.95 by default); the tasks it ran are lost and rerun, and a task that kills several workers fails with KilledWorker. This is host memory, not GPU memory.",
                zh: "Dask 的 nanny 会拿 worker 的内存（RSS）和它的 memory_limit 比较，超过 terminate 比例（distributed.worker.memory.terminate，默认 0.95）就终止并重启 worker；它正在跑的任务会丢失并重跑，一个任务弄死好几个 worker 之后会以 KilledWorker 失败。这是主机内存，不是显存。"
            ),
        )),
    }
}

pub(super) fn fixes(f: &Finding, out: &mut Vec<Fix>) {
    match f.era {
        Some(Era::Yarn) if fact(f, "memory") == Some("virtual") => out.push(fix(
            &YARN_VMEM_CHECK,
            say!(
                en: "Virtual memory is not RAM: raise yarn.nodemanager.vmem-pmem-ratio or turn the check off (yarn.nodemanager.vmem-check-enabled=false) in yarn-site.xml; Spark's own message suggests it because of YARN-4714.",
                zh: "虚拟内存不是内存：在 yarn-site.xml 里调高 yarn.nodemanager.vmem-pmem-ratio，或者关掉这项检查（yarn.nodemanager.vmem-check-enabled=false）；Spark 自己的报错也因为 YARN-4714 这么建议。"
            ),
        )),
        Some(Era::Yarn) => out.push(fix(
            &YARN_MEMORY_OVERHEAD,
            say!(
                en: "Give the executor more memory outside its heap: spark.executor.memoryOverhead (Spark 2.3 and later; spark.yarn.executor.memoryOverhead before), whose default is 10% of spark.executor.memory with at least 384 MiB; PySpark workers, Arrow and native libraries live there. Or make each executor hold less at once: fewer cores per executor (spark.executor.cores), so fewer tasks share its container, and more, smaller partitions (repartition, spark.sql.shuffle.partitions).",
                zh: "给 executor 堆外更多内存：spark.executor.memoryOverhead（Spark 2.3 及以后；之前叫 spark.yarn.executor.memoryOverhead），默认是 spark.executor.memory 的 10%，至少 384 MiB；PySpark worker、Arrow 和本地库都用这块内存。或者让每个 executor 同时少处理一些：每个 executor 少几个核（spark.executor.cores），共用一个容器的任务就少了；再用更多、更小的分区（repartition、spark.sql.shuffle.partitions）。"
            ),
        )),
        Some(Era::RayMonitor) => out.push(fix(
            &RAY_FEWER_AT_ONCE,
            say!(
                en: "Run fewer tasks or actors side by side on a node: give them a memory request (@ray.remote(memory=...) in bytes, or more num_cpus each) so Ray schedules fewer at once; keep large results in the object store (ray.put), which spills to disk when full, rather than in the workers' heaps; see what each holds with `ray memory` or the dashboard; or use nodes with more RAM. Raising RAY_memory_usage_threshold or turning the monitor off (RAY_memory_monitor_refresh_ms=0) only leaves the kill to the kernel.",
                zh: "让一个节点上同时运行的任务或 actor 少一些：给它们设内存需求（@ray.remote(memory=...)，单位是字节，或给每个多分几个 num_cpus），Ray 就会少并排调度几个；大的结果放进 object store（ray.put），它满了会溢写到磁盘，而不是留在 worker 的堆里；用 `ray memory` 或 dashboard 看每个占了多少；或者换内存更大的节点。调高 RAY_memory_usage_threshold 或关掉监控（RAY_memory_monitor_refresh_ms=0）只会把杀进程的事交给内核。"
            ),
        )),
        _ if warning(f) => out.push(fix(
            &DASK_WORKER_MEMORY,
            say!(
                en: "Dask has nothing of its own to spill: the memory is held outside the data it manages (a library's buffers, a leak, or freed memory the allocator has not returned to the system). Find which tasks grow it (the dashboard's worker memory bars); give each worker more memory_limit (fewer workers per machine), fewer threads per worker, or smaller chunks and partitions so each task holds less.",
                zh: "Dask 没有自己能溢写的数据：内存被它管理的数据之外的东西占着（某个库的缓冲区、内存泄漏，或者已经释放但分配器还没还给系统的内存）。找出是哪些任务让它增长的（dashboard 里 worker 的内存条）；给每个 worker 更大的 memory_limit（每台机器少开几个 worker）、每个 worker 少几个线程，或者用更小的 chunk 和分区，让每个任务少占一些。"
            ),
        )),
        _ => out.push(fix(
            &DASK_WORKER_MEMORY,
            say!(
                en: "Give each worker more memory or make its tasks hold less: a larger memory_limit (fewer workers per machine, e.g. LocalCluster(n_workers=..., memory_limit=...)), fewer threads per worker, smaller chunks or partitions; Dask spills its own data to disk from the spill fraction (distributed.worker.memory.spill, 0.7 by default) and pauses the worker at the pause fraction (0.8), so what crosses the terminate fraction is usually memory a task holds while it runs.",
                zh: "给每个 worker 更多内存，或者让它的任务少占一些：更大的 memory_limit（每台机器少开几个 worker，例如 LocalCluster(n_workers=..., memory_limit=...)）、每个 worker 少几个线程、更小的 chunk 或分区；Dask 从 spill 比例（distributed.worker.memory.spill，默认 0.7）开始把自己的数据溢写到磁盘，到 pause 比例（0.8）会暂停 worker，所以越过 terminate 比例的通常是任务运行时自己占着的内存。"
            ),
        )),
    }
}

/// Ray's own levers: memory requests, concurrency, node size.
pub(super) const RAY_FEWER_AT_ONCE: FixSpec = FixSpec::new(
    "ray-fewer-tasks-per-node",
    "Run fewer Ray tasks or actors per node",
    "让每个节点上同时运行的 Ray 任务或 actor 少一些",
)
.cost(Cost::Speed)
.sources(&[
    "Ray documentation: Out-Of-Memory Prevention (memory monitor, RAY_memory_usage_threshold)",
]);

/// YARN's container size for a Spark executor: its memory overhead.
pub(super) const YARN_MEMORY_OVERHEAD: FixSpec = FixSpec::new(
    "spark-yarn-memory-overhead",
    "Give the Spark executor more memory overhead, or fewer cores",
    "给 Spark executor 更多 memory overhead，或者更少的核",
)
.cost(Cost::Speed)
.sources(&[
    "Apache Spark documentation: Running on YARN and Configuration (spark.executor.memoryOverhead, since 2.3; spark.yarn.executor.memoryOverhead before)",
]);

/// YARN's virtual-memory check.
pub(super) const YARN_VMEM_CHECK: FixSpec = FixSpec::new(
    "yarn-vmem-check",
    "Relax YARN's virtual-memory check",
    "放宽 YARN 的虚拟内存检查",
)
.cost(Cost::Free)
.sources(&["Apache Hadoop documentation: yarn-default.xml (yarn.nodemanager.vmem-check-enabled, yarn.nodemanager.vmem-pmem-ratio)"]);

/// Dask's worker memory limit, threads and chunk sizes.
pub(super) const DASK_WORKER_MEMORY: FixSpec = FixSpec::new(
    "dask-worker-memory",
    "Give Dask workers more memory, or make their tasks hold less",
    "给 Dask worker 更多内存，或者让它的任务少占一些",
)
.cost(Cost::Speed)
.sources(&["Dask distributed documentation: Worker Memory Management (memory_limit, target, spill, pause, terminate)"]);

/// This module's fixes, for the catalogue (`explain::ALL_FIXES`).
pub(super) const FIXES: &[FixSpec] = &[
    RAY_FEWER_AT_ONCE,
    YARN_MEMORY_OVERHEAD,
    YARN_VMEM_CHECK,
    DASK_WORKER_MEMORY,
];
