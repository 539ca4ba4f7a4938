//! The JVM's `java.lang.OutOfMemoryError` at one of its own limits
//! (`host_oom`, era `jvm`): the heap (-Xmx), the garbage collector's
//! overhead limit, direct buffers, Metaspace, the compressed class space,
//! the permanent generation, native threads, the largest array. Each is
//! explained and fixed through the limit it names and the stack that ran
//! the JVM (sources: docs/formats.md §10.2).

use super::catalogue::{Cost, FixSpec};
use super::common::{extra, fact, fix, row, verdict, FieldRow};
use super::docs::Code;
use crate::i18n::Said;
use crate::record::{Era, Finding, Fix, Verdict};
use crate::units::format_size as fmt;
use crate::{say, say_parts};

/// Whether the JVM reported the finding.
pub(super) fn owns(f: &Finding) -> bool {
    f.era == Some(Era::Jvm)
}

fn limit(f: &Finding) -> &str {
    fact(f, "jvm_limit").unwrap_or("heap")
}

fn stack(f: &Finding) -> &str {
    fact(f, "jvm_stack").unwrap_or("")
}

/// The heap, or the collector's limit on a heap that is practically full.
fn heap(f: &Finding) -> bool {
    matches!(limit(f), "heap" | "gc_overhead")
}

pub(super) fn headline(f: &Finding) -> Said {
    match limit(f) {
        "gc_overhead" => say!(
            en: "The JVM's heap is practically full: it spent nearly all its time collecting garbage and freed almost nothing (GC overhead limit exceeded)",
            zh: "JVM 的堆几乎满了：它几乎所有时间都在做垃圾回收，却几乎什么也没回收到（GC overhead limit exceeded）"
        ),
        "direct_buffer" => match (
            f.sizes.requested_bytes,
            f.sizes.allocated_bytes,
            extra(f, "limit_bytes"),
        ) {
            (Some(n), Some(used), Some(limit)) => say!(
                en: "The JVM's direct buffer memory reached its limit: {size} more did not fit ({used} of {limit} in use)",
                zh: "JVM 的直接缓冲区内存达到了上限：再要 {size} 放不下（上限 {limit}，已用 {used}）",
                size = fmt(n),
                used = fmt(used),
                limit = fmt(limit)
            ),
            _ => say!(
                en: "The JVM's direct (off-heap) buffer memory reached its limit (-XX:MaxDirectMemorySize)",
                zh: "JVM 的直接（堆外）缓冲区内存达到了上限（-XX:MaxDirectMemorySize）"
            ),
        },
        "metaspace" => say!(
            en: "The JVM's Metaspace (class metadata) reached its limit (-XX:MaxMetaspaceSize)",
            zh: "JVM 的 Metaspace（类元数据）达到了上限（-XX:MaxMetaspaceSize）"
        ),
        "compressed_class_space" => say!(
            en: "The JVM's compressed class space is full (-XX:CompressedClassSpaceSize)",
            zh: "JVM 的压缩类空间满了（-XX:CompressedClassSpaceSize）"
        ),
        "permgen" => say!(
            en: "The JVM's permanent generation is full (-XX:MaxPermSize, Java 7 and earlier)",
            zh: "JVM 的永久代满了（-XX:MaxPermSize，Java 7 及更早版本）"
        ),
        "native_thread" => say!(
            en: "The JVM could not start another thread: the operating system refused it",
            zh: "JVM 没能再创建线程：操作系统拒绝了"
        ),
        "array_size" => say!(
            en: "An array longer than the JVM can create was requested (a size problem, not memory pressure)",
            zh: "申请的数组比 JVM 能创建的最大数组还长（是大小的问题，不是内存紧张）"
        ),
        _ => say!(
            en: "The Java heap reached its maximum size (-Xmx), not the machine's RAM",
            zh: "Java 堆达到了它的上限（-Xmx），不是机器的内存用完了"
        ),
    }
}

pub(super) fn field_rows(f: &Finding) -> Vec<FieldRow> {
    let mut rows = Vec::new();
    if let Some(n) = f.sizes.requested_bytes {
        rows.push(row(
            say!(en: "Requested", zh: "申请"),
            format!("{} ({n} bytes)", fmt(n)),
            say!(
                en: "the direct buffer the program asked for",
                zh: "程序申请的直接缓冲区大小"
            ),
            false,
        ));
    }
    if let Some(n) = f.sizes.allocated_bytes {
        rows.push(row(
            say!(en: "In use", zh: "已用"),
            fmt(n),
            say!(
                en: "direct buffer memory the JVM had already reserved",
                zh: "JVM 已经预留的直接缓冲区内存"
            ),
            false,
        ));
    }
    if let Some(n) = extra(f, "limit_bytes") {
        rows.push(row(
            say!(en: "Limit", zh: "上限"),
            fmt(n),
            say!(
                en: "-XX:MaxDirectMemorySize (by default the maximum heap size)",
                zh: "-XX:MaxDirectMemorySize（默认等于堆的上限）"
            ),
            false,
        ));
    }
    rows
}

/// Where the heap's size is set for the stack that ran the JVM.
fn heap_setting(f: &Finding) -> Option<Said> {
    Some(match stack(f) {
        "spark_executor" => say!(
            en: "For a Spark executor the heap is spark.executor.memory, shared by the tasks it runs at once (spark.executor.cores).",
            zh: "对 Spark executor 来说，堆就是 spark.executor.memory，由它同时运行的各个任务（spark.executor.cores）共用。"
        ),
        "spark_driver" | "pyspark_driver" => say!(
            en: "This is the Spark driver's heap, spark.driver.memory: results brought back with collect(), toPandas() or a large take(), and broadcast variables and broadcast join tables, are built there.",
            zh: "这是 Spark driver 的堆，即 spark.driver.memory：用 collect()、toPandas() 或大的 take() 取回的结果，以及广播变量和广播 join 的表，都在这里生成。"
        ),
        "spark_local" => say!(
            en: "In Spark's local mode the tasks run inside the driver's JVM, so the heap is spark.driver.memory; spark.executor.memory has no effect there.",
            zh: "在 Spark 的 local 模式下，任务在 driver 的 JVM 里运行，所以堆是 spark.driver.memory；spark.executor.memory 在这里不起作用。"
        ),
        "spark" => say!(
            en: "In Spark the heap is spark.executor.memory for an executor and spark.driver.memory for the driver; the frames show which one failed (an executor's task runner, or the driver's collect or broadcast).",
            zh: "在 Spark 里，executor 的堆是 spark.executor.memory，driver 的堆是 spark.driver.memory；调用栈能看出是哪一个出错（executor 的任务线程，还是 driver 的 collect 或广播）。"
        ),
        "hadoop_mapreduce" => say!(
            en: "For a MapReduce task the heap is the -Xmx in mapreduce.map.java.opts or mapreduce.reduce.java.opts.",
            zh: "对 MapReduce 任务来说，堆是 mapreduce.map.java.opts 或 mapreduce.reduce.java.opts 里的 -Xmx。"
        ),
        "elasticsearch" => say!(
            en: "Elasticsearch's heap is set with -Xms and -Xmx in its jvm.options (or ES_JAVA_OPTS).",
            zh: "Elasticsearch 的堆由它 jvm.options 里的 -Xms 和 -Xmx（或 ES_JAVA_OPTS）设定。"
        ),
        "gradle" => say!(
            en: "The Gradle daemon's heap is set by org.gradle.jvmargs in gradle.properties.",
            zh: "Gradle daemon 的堆由 gradle.properties 里的 org.gradle.jvmargs 设定。"
        ),
        _ => return None,
    })
}

fn with(base: Said, more: Option<Said>) -> Said {
    match more {
        Some(more) => say_parts!(en: "{base} {more}", zh: "{base}{more}", base = base, more = more),
        None => base,
    }
}

pub(super) fn verdicts(f: &Finding, out: &mut Vec<Verdict>) {
    let (title, detail) = match limit(f) {
        "gc_overhead" => (
            say!(
                en: "The JVM's garbage collector hit its overhead limit: the heap is practically full",
                zh: "JVM 的垃圾回收达到了开销上限：堆实际上已经满了"
            ),
            with(
                say!(
                    en: "HotSpot throws this when, over several collections in a row, more than 98% of the time went to garbage collection and less than 2% of the heap was recovered: the live data nearly fills the heap's maximum size (-Xmx). The check can be turned off (-XX:-UseGCOverheadLimit), which only delays an error of Java heap space. It is the JVM's own limit, not the machine's RAM running out.",
                    zh: "HotSpot 在连续几次回收中，超过 98% 的时间都花在垃圾回收上、却只回收了不到 2% 的堆时抛出这个错误：存活的数据几乎占满了堆的上限（-Xmx）。这项检查可以关掉（-XX:-UseGCOverheadLimit），但那只会把错误推迟成 Java heap space。这是 JVM 自己的上限，不是机器的内存用完了。"
                ),
                heap_setting(f),
            ),
        ),
        "direct_buffer" => (
            say!(
                en: "The JVM's direct buffer memory reached its limit (off the heap, not the machine's RAM)",
                zh: "JVM 的直接缓冲区内存达到了上限（在堆外，不是机器的内存用完了）"
            ),
            say!(
                en: "Direct buffers (ByteBuffer.allocateDirect, used by NIO and by netty, which Spark's shuffle and network layers use) live outside the heap, and the JVM counts them against -XX:MaxDirectMemorySize, whose default is the maximum heap size. At that limit it runs a garbage collection to free unreachable buffers and, if that is not enough, refuses the new one, however much RAM is free.",
                zh: "直接缓冲区（ByteBuffer.allocateDirect，NIO 和 netty 都用它，Spark 的 shuffle 和网络层用的就是 netty）在堆外，JVM 把它们计入 -XX:MaxDirectMemorySize，默认等于堆的上限。到了上限，JVM 会先做一次垃圾回收来释放不再可达的缓冲区，还不够就拒绝新的申请，不管机器上还有多少空闲内存。"
            ),
        ),
        "metaspace" => (
            say!(
                en: "The JVM's Metaspace reached -XX:MaxMetaspaceSize (class metadata, not the heap)",
                zh: "JVM 的 Metaspace 达到了 -XX:MaxMetaspaceSize（类元数据，不是堆）"
            ),
            say!(
                en: "The classes the JVM loads keep their metadata in Metaspace, native memory outside the heap. It has no limit unless -XX:MaxMetaspaceSize is set (Gradle sets one for its daemon), and this error means it reached that setting: many classes loaded (generated code, many plugins or class loaders), or class loaders that are created again and again and never freed.",
                zh: "JVM 加载的类把元数据放在 Metaspace 里，这是堆外的本地内存。除非设置了 -XX:MaxMetaspaceSize（Gradle 会给它的 daemon 设一个），它没有上限；这个错误说明达到了这个设置：加载的类很多（生成的代码、很多插件或类加载器），或者类加载器被反复创建却从不释放。"
            ),
        ),
        "compressed_class_space" => (
            say!(
                en: "The JVM's compressed class space is full (class metadata, not the heap)",
                zh: "JVM 的压缩类空间满了（类元数据，不是堆）"
            ),
            say!(
                en: "With compressed class pointers (the default on 64-bit HotSpot), the class part of the metadata lives in a space of fixed size, -XX:CompressedClassSpaceSize (1 GB by default); too many classes were loaded to fit it.",
                zh: "开启压缩类指针时（64 位 HotSpot 的默认设置），类元数据中的类结构放在一块固定大小的空间里，即 -XX:CompressedClassSpaceSize（默认 1 GB）；加载的类太多，放不下了。"
            ),
        ),
        "permgen" => (
            say!(
                en: "The JVM's permanent generation is full (class metadata, not the heap)",
                zh: "JVM 的永久代满了（类元数据，不是堆）"
            ),
            say!(
                en: "Before Java 8, the JVM kept class metadata and interned strings in the permanent generation, whose size is capped by -XX:MaxPermSize; it filled up. Java 8 replaced it with Metaspace.",
                zh: "Java 8 之前，JVM 把类元数据和 intern 的字符串放在永久代里，它的大小受 -XX:MaxPermSize 限制；这次它满了。Java 8 用 Metaspace 取代了永久代。"
            ),
        ),
        "native_thread" => (
            say!(
                en: "The operating system refused the JVM a new thread (a thread or process limit, not the heap)",
                zh: "操作系统拒绝给 JVM 新的线程（是线程或进程数的限制，不是堆）"
            ),
            say!(
                en: "Nothing ran out in the heap: the JVM asked the operating system for a new native thread and was refused. The usual cause is a limit on threads or processes — the user's ulimit -u (nproc), a container's pids limit, the kernel's threads-max — or, less often, no memory or address space left for another thread's stack. A larger heap does not help.",
                zh: "堆里并没有什么用完：JVM 向操作系统申请一个新的本地线程，被拒绝了。常见原因是线程或进程数的限制——用户的 ulimit -u（nproc）、容器的 pids 上限、内核的 threads-max——少数情况下是没有内存或地址空间再放一个线程栈。加大堆没有用。"
            ),
        ),
        "array_size" => (
            say!(
                en: "An array longer than the JVM allows was requested (a size bug, not memory pressure)",
                zh: "申请的数组超过了 JVM 允许的长度（是大小算错了，不是内存紧张）"
            ),
            say!(
                en: "The program asked for an array with more elements than the JVM allows in one array (just under 2^31, Integer.MAX_VALUE less a few header words). No heap setting satisfies that: usually one buffer grew past 2 GB — a serialized task result, a broadcast, a huge record, a ByteArrayOutputStream that kept growing.",
                zh: "程序申请的数组元素个数超过了 JVM 允许单个数组有的数量（略少于 2^31，即 Integer.MAX_VALUE 减去几个头部字）。任何堆设置都满足不了：通常是某个缓冲区超过了 2 GB——序列化后的任务结果、一个广播、一条超大的记录、一个不停增长的 ByteArrayOutputStream。"
            ),
        ),
        _ => (
            say!(
                en: "The Java heap reached its maximum size (-Xmx): the JVM's limit, not the machine's RAM",
                zh: "Java 堆达到了它的上限（-Xmx）：是 JVM 自己的上限，不是机器的内存用完了"
            ),
            with(
                say!(
                    en: "java.lang.OutOfMemoryError: Java heap space means an object could not be allocated in the Java heap and the heap could not grow past its maximum size (-Xmx; without it, a default the JVM derives from the memory it sees). The JVM refuses at that limit however much RAM the machine has free. It is not necessarily a leak: the heap may simply be too small for the data the program keeps alive.",
                    zh: "java.lang.OutOfMemoryError: Java heap space 的意思是 Java 堆里放不下一个对象，而堆也不能再超过它的上限（-Xmx；不设时是 JVM 根据它看到的内存算出的默认值）。不管机器上还有多少空闲内存，JVM 到了这个上限都会拒绝。这不一定是内存泄漏：也可能只是堆对程序要保留的数据来说太小了。"
                ),
                heap_setting(f),
            ),
        ),
    };
    out.push(verdict(Code::JvmLimit, title, detail));
}

pub(super) fn fixes(f: &Finding, out: &mut Vec<Fix>) {
    let stack = stack(f);
    match limit(f) {
        _ if heap(f) => heap_fixes(stack, out),
        "direct_buffer" => out.push(fix(
            &JVM_DIRECT_MEMORY,
            say!(
                en: "Raise -XX:MaxDirectMemorySize (for Spark: in spark.executor.extraJavaOptions or spark.driver.extraJavaOptions), or hold fewer direct buffers at once; release pooled buffers you no longer need. In a container, direct memory counts against the container's limit too (for Spark on YARN or Kubernetes, spark.executor.memoryOverhead must cover it).",
                zh: "调大 -XX:MaxDirectMemorySize（Spark 的话写在 spark.executor.extraJavaOptions 或 spark.driver.extraJavaOptions 里），或者同时少占一些直接缓冲区；不再需要的池化缓冲区要释放。在容器里，直接内存也计入容器的上限（Spark on YARN 或 Kubernetes 上要由 spark.executor.memoryOverhead 覆盖）。"
            ),
        )),
        "metaspace" | "compressed_class_space" | "permgen" if stack == "gradle" => out.push(fix(
            &GRADLE_JVMARGS,
            say!(
                en: "Set the daemon's limits in gradle.properties: org.gradle.jvmargs=-Xmx4g -XX:MaxMetaspaceSize=1g (setting org.gradle.jvmargs replaces Gradle's defaults, so name both). Many plugins or build logic that is reloaded on every build can fill Metaspace; stopping the daemon (gradle --stop) frees it.",
                zh: "在 gradle.properties 里设定 daemon 的上限：org.gradle.jvmargs=-Xmx4g -XX:MaxMetaspaceSize=1g（设了 org.gradle.jvmargs 就会替换 Gradle 的默认值，所以两项都要写）。插件很多、或每次构建都重新加载构建逻辑，都会占满 Metaspace；停掉 daemon（gradle --stop）可以释放它。"
            ),
        )),
        "metaspace" | "compressed_class_space" | "permgen" => out.push(fix(
            &JVM_METASPACE,
            match limit(f) {
                "compressed_class_space" => say!(
                    en: "Raise -XX:CompressedClassSpaceSize (1 GB by default, at most 3 GB), or load fewer classes; if the count keeps growing, look for class loaders that are created repeatedly and never freed.",
                    zh: "调大 -XX:CompressedClassSpaceSize（默认 1 GB，最多 3 GB），或者少加载一些类；如果类的数量一直在涨，找找被反复创建却从不释放的类加载器。"
                ),
                "permgen" => say!(
                    en: "Raise -XX:MaxPermSize, or move to Java 8 or later, where Metaspace replaced the permanent generation; if it keeps growing, look for class loaders that are never freed (redeployed applications).",
                    zh: "调大 -XX:MaxPermSize，或者换到 Java 8 及以后（那里 Metaspace 取代了永久代）；如果它一直在涨，找找从不释放的类加载器（反复重新部署的应用）。"
                ),
                _ => say!(
                    en: "Raise -XX:MaxMetaspaceSize (or remove it: Metaspace has no limit by default); if it keeps growing over time, look for class loaders that are created repeatedly and never freed (jcmd <pid> VM.classloader_stats, or a heap dump).",
                    zh: "调大 -XX:MaxMetaspaceSize（或者去掉它：Metaspace 默认没有上限）；如果它随时间一直在涨，找找被反复创建却从不释放的类加载器（jcmd <pid> VM.classloader_stats，或者堆转储）。"
                ),
            },
        )),
        "native_thread" => out.push(fix(
            &NATIVE_THREADS,
            say!(
                en: "Check the limits on threads: ulimit -u for the user that runs the JVM (raise nproc in /etc/security/limits.conf or the service's LimitNPROC), a container's pids limit, and how many threads the JVM has (jcmd <pid> Thread.print, or ls /proc/<pid>/task | wc -l). Then use fewer threads (bounded thread pools, fewer concurrent tasks), or smaller stacks (-Xss) if memory for stacks is what ran out.",
                zh: "检查线程数的限制：运行 JVM 的用户的 ulimit -u（在 /etc/security/limits.conf 里调高 nproc，或服务的 LimitNPROC）、容器的 pids 上限，以及 JVM 现在有多少线程（jcmd <pid> Thread.print，或 ls /proc/<pid>/task | wc -l）。然后减少线程（用有上限的线程池、少跑几个并发任务），如果是线程栈的内存不够，就把栈调小（-Xss）。"
            ),
        )),
        _ => out.push(fix(
            &SPLIT_HUGE_ARRAY,
            if stack.starts_with("spark") || stack == "pyspark_driver" {
                say!(
                    en: "Keep every single object under 2 GB: more, smaller partitions (repartition, spark.sql.shuffle.partitions), no huge record or row (split large arrays or blobs), smaller broadcasts and task results; more memory does not help.",
                    zh: "让每个单独的对象都小于 2 GB：更多、更小的分区（repartition、spark.sql.shuffle.partitions），不要有超大的记录或行（把大数组或大块数据拆开），广播和任务结果都要小一些；加内存没有用。"
                )
            } else {
                say!(
                    en: "Find what builds one array or buffer of 2 GB or more and split it into chunks (stream it, or write it in pieces); more memory does not help.",
                    zh: "找出是什么在生成一个 2 GB 及以上的数组或缓冲区，把它拆成小块（流式处理，或分段写出）；加内存没有用。"
                )
            },
        )),
    }
}

fn heap_fixes(stack: &str, out: &mut Vec<Fix>) {
    let executor = say!(
        en: "Give each executor more heap, or fewer tasks sharing it: raise spark.executor.memory (spark-submit --executor-memory), or lower spark.executor.cores so fewer tasks run in one executor at once. On YARN or Kubernetes the container also needs room for spark.executor.memoryOverhead.",
        zh: "给每个 executor 更多堆，或者让更少的任务共用它：调大 spark.executor.memory（spark-submit --executor-memory），或者调低 spark.executor.cores，让一个 executor 里同时跑的任务少一些。在 YARN 或 Kubernetes 上，容器还要留出 spark.executor.memoryOverhead 的空间。"
    );
    let driver = say!(
        en: "Give the driver more heap: spark-submit --driver-memory 8g, or spark.driver.memory in spark-defaults.conf. It must be set before the driver's JVM starts: in a notebook, SparkSession.builder.config(\"spark.driver.memory\", \"8g\") works only when no session is running yet (restart the kernel first).",
        zh: "给 driver 更多堆：spark-submit --driver-memory 8g，或在 spark-defaults.conf 里设 spark.driver.memory。它必须在 driver 的 JVM 启动前设定：在 notebook 里，SparkSession.builder.config(\"spark.driver.memory\", \"8g\") 只有在还没有 session 运行时才生效（先重启内核）。"
    );
    let partitions = say!(
        en: "Make each task hold less: more, smaller partitions (repartition(n), spark.sql.shuffle.partitions, smaller input splits), and avoid skewed keys that put most of the data in one task.",
        zh: "让每个任务少占一些：更多、更小的分区（repartition(n)、spark.sql.shuffle.partitions、更小的输入分片），并避免让大部分数据落到一个任务里的倾斜 key。"
    );
    let collect = say!(
        en: "Do not bring a large result to the driver: write it out (df.write...), aggregate or filter on the cluster first, or use take(n), limit(n) or toLocalIterator() instead of collect() and toPandas(); lower spark.sql.autoBroadcastJoinThreshold (or set it to -1) if a broadcast join builds a large table on the driver.",
        zh: "不要把大的结果取回 driver：直接写出去（df.write...），先在集群上聚合或过滤，或者用 take(n)、limit(n)、toLocalIterator() 代替 collect() 和 toPandas()；如果广播 join 在 driver 上构建了很大的表，调低 spark.sql.autoBroadcastJoinThreshold（或设为 -1）。"
    );
    match stack {
        "spark_executor" => {
            out.push(fix(&SPARK_EXECUTOR_MEMORY, executor));
            out.push(fix(&SPARK_MORE_PARTITIONS, partitions));
        }
        "spark_driver" | "pyspark_driver" => {
            out.push(fix(&SPARK_AVOID_COLLECT, collect));
            out.push(fix(&SPARK_DRIVER_MEMORY, driver));
        }
        "spark_local" => {
            out.push(fix(&SPARK_DRIVER_MEMORY, driver));
            out.push(fix(&SPARK_MORE_PARTITIONS, partitions));
            out.push(fix(&SPARK_AVOID_COLLECT, collect));
        }
        "spark" => {
            out.push(fix(&SPARK_EXECUTOR_MEMORY, executor));
            out.push(fix(&SPARK_DRIVER_MEMORY, driver));
            out.push(fix(&SPARK_MORE_PARTITIONS, partitions));
        }
        "hadoop_mapreduce" => out.push(fix(
            &HADOOP_TASK_HEAP,
            say!(
                en: "Raise the task's heap in mapreduce.map.java.opts or mapreduce.reduce.java.opts (-Xmx), keeping it below the task's container size (mapreduce.map.memory.mb, mapreduce.reduce.memory.mb), which may need raising with it.",
                zh: "在 mapreduce.map.java.opts 或 mapreduce.reduce.java.opts 里调大任务的堆（-Xmx），并让它小于任务的容器大小（mapreduce.map.memory.mb、mapreduce.reduce.memory.mb），必要时把容器大小一起调大。"
            ),
        )),
        "elasticsearch" => out.push(fix(
            &ELASTICSEARCH_HEAP,
            say!(
                en: "Set the heap in a file under config/jvm.options.d/ (or ES_JAVA_OPTS) with -Xms equal to -Xmx, at most half of the node's RAM; or make requests hold less (smaller aggregations and result pages, fewer shards per node).",
                zh: "在 config/jvm.options.d/ 下的文件里（或 ES_JAVA_OPTS）设定堆，-Xms 与 -Xmx 相同，最多为节点内存的一半；或者让请求少占一些（更小的聚合和结果页、每个节点更少的分片）。"
            ),
        )),
        "gradle" => out.push(fix(
            &GRADLE_JVMARGS,
            say!(
                en: "Raise the daemon's heap in gradle.properties: org.gradle.jvmargs=-Xmx4g -XX:MaxMetaspaceSize=1g (setting org.gradle.jvmargs replaces Gradle's defaults, so name both). A compiler or test worker has its own heap (the task's maxHeapSize, or kotlin.daemon.jvmargs).",
                zh: "在 gradle.properties 里调大 daemon 的堆：org.gradle.jvmargs=-Xmx4g -XX:MaxMetaspaceSize=1g（设了 org.gradle.jvmargs 就会替换 Gradle 的默认值，所以两项都要写）。编译器或测试 worker 有自己的堆（任务的 maxHeapSize，或 kotlin.daemon.jvmargs）。"
            ),
        )),
        _ => out.push(fix(
            &JVM_MAX_HEAP,
            say!(
                en: "Start the JVM with a larger maximum heap: java -Xmx8g ... (or JAVA_TOOL_OPTIONS=-Xmx8g for a JVM you do not start yourself; -XX:MaxRAMPercentage in a container), below the RAM the machine or container has; or make the program keep less alive at once (stream the data instead of loading it whole).",
                zh: "用更大的堆上限启动 JVM：java -Xmx8g ...（不是你自己启动的 JVM，可以用 JAVA_TOOL_OPTIONS=-Xmx8g；在容器里用 -XX:MaxRAMPercentage），并低于机器或容器的内存；或者让程序同时保留的数据少一些（流式处理数据，而不是整个读进来）。"
            ),
        )),
    }
    out.push(fix(
        &HEAP_DUMP,
        say!(
            en: "See what fills the heap: run with -XX:+HeapDumpOnOutOfMemoryError (and -XX:HeapDumpPath=...) and open the dump in Eclipse MAT or VisualVM; a heap that keeps growing over a long run points to references kept by mistake (a leak) rather than a heap too small.",
            zh: "看看是什么占满了堆：加上 -XX:+HeapDumpOnOutOfMemoryError（和 -XX:HeapDumpPath=...）运行，用 Eclipse MAT 或 VisualVM 打开转储；如果堆在长时间运行中一直增长，说明是误留的引用（泄漏），而不是堆太小。"
        ),
    ));
}

const ORACLE_GUIDE: &str =
    "Oracle Java SE Troubleshooting Guide: Understand the OutOfMemoryError Exception";

/// The JVM's maximum heap.
const JVM_MAX_HEAP: FixSpec = FixSpec::new(
    "jvm-max-heap",
    "Give the JVM a larger maximum heap (-Xmx)",
    "给 JVM 更大的堆上限（-Xmx）",
)
.sources(&[
    ORACLE_GUIDE,
    "java command reference: -Xmx, -XX:MaxRAMPercentage",
]);

/// What fills the heap.
const HEAP_DUMP: FixSpec = FixSpec::new(
    "jvm-heap-dump",
    "Dump the heap when it fills, and see what holds it",
    "在堆满时转储，看看是什么占着它",
)
.cost(Cost::Look)
.sources(&[
    ORACLE_GUIDE,
    "java command reference: -XX:+HeapDumpOnOutOfMemoryError",
]);

/// Spark's executor heap and tasks per executor.
const SPARK_EXECUTOR_MEMORY: FixSpec = FixSpec::new(
    "spark-executor-memory",
    "Give Spark executors more heap, or fewer tasks each",
    "给 Spark executor 更多堆，或者让每个 executor 少跑几个任务",
)
.sources(&[
    "Apache Spark documentation: Configuration (spark.executor.memory, spark.executor.cores)",
]);

/// Spark's driver heap.
const SPARK_DRIVER_MEMORY: FixSpec = FixSpec::new(
    "spark-driver-memory",
    "Give the Spark driver more heap (spark.driver.memory)",
    "给 Spark driver 更多堆（spark.driver.memory）",
)
.sources(&["Apache Spark documentation: Configuration (spark.driver.memory: in client mode it must be set before the driver's JVM starts)"]);

/// Smaller tasks.
const SPARK_MORE_PARTITIONS: FixSpec = FixSpec::new(
    "spark-more-partitions",
    "Use more, smaller Spark partitions",
    "用更多、更小的 Spark 分区",
)
.cost(Cost::Speed)
.sources(&["Apache Spark documentation: Tuning Spark (Memory Tuning, Level of Parallelism); SQL Performance Tuning (spark.sql.shuffle.partitions)"]);

/// Results and broadcasts built on the driver.
const SPARK_AVOID_COLLECT: FixSpec = FixSpec::new(
    "spark-avoid-collect",
    "Do not collect large results or broadcasts to the Spark driver",
    "不要把大的结果或广播收集到 Spark driver 上",
)
.sources(&["Apache Spark documentation: RDD Programming Guide (Printing elements of an RDD: collect() can make the driver run out of memory); SQL Performance Tuning (spark.sql.autoBroadcastJoinThreshold)"]);

/// Direct buffers.
const JVM_DIRECT_MEMORY: FixSpec = FixSpec::new(
    "jvm-max-direct-memory",
    "Raise the JVM's direct memory limit, or hold fewer direct buffers",
    "调大 JVM 的直接内存上限，或者少占一些直接缓冲区",
)
.sources(&[
    "java command reference: -XX:MaxDirectMemorySize",
    "OpenJDK java.nio.Bits.reserveMemory",
]);

/// Class metadata.
const JVM_METASPACE: FixSpec = FixSpec::new(
    "jvm-metaspace",
    "Raise the JVM's class metadata limit, or find the class loaders that leak",
    "调大 JVM 的类元数据上限，或者找出泄漏的类加载器",
)
.sources(&[
    ORACLE_GUIDE,
    "java command reference: -XX:MaxMetaspaceSize, -XX:CompressedClassSpaceSize",
]);

/// Threads.
const NATIVE_THREADS: FixSpec = FixSpec::new(
    "jvm-native-thread-limits",
    "Check the thread limits (ulimit -u, pids) and use fewer threads",
    "检查线程数的限制（ulimit -u、pids），并减少线程",
)
.sources(&["Oracle Java SE Troubleshooting Guide: Troubleshoot Memory Leaks (native memory, threads)", "OpenJDK hotspot: unable to create native thread: possibly out of memory or process/resource limits reached"]);

/// Arrays at the JVM's maximum length.
const SPLIT_HUGE_ARRAY: FixSpec = FixSpec::new(
    "jvm-split-huge-array",
    "Split the data so that no single array reaches 2 GB",
    "把数据拆开，让单个数组不到 2 GB",
)
.sources(&[
    ORACLE_GUIDE,
    "OpenJDK jdk.internal.util.ArraysSupport (the largest array length)",
]);

/// Hadoop MapReduce's task heap.
const HADOOP_TASK_HEAP: FixSpec = FixSpec::new(
    "hadoop-task-heap",
    "Raise the MapReduce task's heap inside its container",
    "在容器大小之内调大 MapReduce 任务的堆",
)
.sources(&["Apache Hadoop documentation: mapred-default.xml (mapreduce.map.java.opts, mapreduce.map.memory.mb)"]);

/// Elasticsearch's heap.
const ELASTICSEARCH_HEAP: FixSpec = FixSpec::new(
    "elasticsearch-heap",
    "Size Elasticsearch's heap (jvm.options), or make requests hold less",
    "设定 Elasticsearch 的堆大小（jvm.options），或者让请求少占一些",
)
.sources(&["Elasticsearch documentation: Advanced configuration (Set the JVM heap size)"]);

/// Gradle's daemon.
const GRADLE_JVMARGS: FixSpec = FixSpec::new(
    "gradle-jvmargs",
    "Raise the Gradle daemon's memory limits (org.gradle.jvmargs)",
    "调大 Gradle daemon 的内存上限（org.gradle.jvmargs）",
)
.sources(&["Gradle documentation: Build Environment (org.gradle.jvmargs; its defaults are replaced when it is set)"]);

/// This module's fixes, for the catalogue (`explain::ALL_FIXES`).
pub(super) const FIXES: &[FixSpec] = &[
    JVM_MAX_HEAP,
    HEAP_DUMP,
    SPARK_EXECUTOR_MEMORY,
    SPARK_DRIVER_MEMORY,
    SPARK_MORE_PARTITIONS,
    SPARK_AVOID_COLLECT,
    JVM_DIRECT_MEMORY,
    JVM_METASPACE,
    NATIVE_THREADS,
    SPLIT_HUGE_ARRAY,
    HADOOP_TASK_HEAP,
    ELASTICSEARCH_HEAP,
    GRADLE_JVMARGS,
];
