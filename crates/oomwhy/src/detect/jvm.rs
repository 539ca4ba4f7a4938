//! The JVM's `java.lang.OutOfMemoryError` with one of the detail messages
//! HotSpot prints (docs/formats.md §10.2). Each names a limit of the JVM's
//! own, not the machine's RAM, so each is the era `jvm` of `host_oom`, with
//! the detail recorded as the fact `jvm_limit`:
//!
//! | detail | `jvm_limit` |
//! |---|---|
//! | `Java heap space` | `heap` |
//! | `GC overhead limit exceeded` | `gc_overhead` |
//! | `Direct buffer memory`, `Cannot reserve N bytes of direct buffer memory (allocated: A, limit: L)` | `direct_buffer` |
//! | `Metaspace` | `metaspace` |
//! | `Compressed class space` | `compressed_class_space` |
//! | `PermGen space` | `permgen` |
//! | `unable to create new native thread`, `unable to create native thread: possibly out of memory or process/resource limits reached` | `native_thread` |
//! | `Requested array size exceeds VM limit` | `array_size` |
//!
//! Any other detail (a native library's own text after the class, such as
//! a GPU library's `Could not allocate native memory`) is left to the
//! general grammar. The stack that ran the JVM (Spark's executors and
//! driver, PySpark, Hadoop, Elasticsearch, DJL, TensorFlow Java, Gradle)
//! is read from the line's prefix and the frames that follow, as the fact
//! `jvm_stack`.

use super::{re, Family, Message};
use crate::record::{fact, Category, Era, Finding, Kind};
use regex::Regex;
use std::sync::OnceLock;

struct Patterns {
    start: Regex,
    direct_sizes: Regex,
    frame: Regex,
    lost_task: Regex,
}

fn patterns() -> &'static Patterns {
    static P: OnceLock<Patterns> = OnceLock::new();
    P.get_or_init(|| Patterns {
        start: re(concat!(
            r"\b(?:java\.lang\.)?OutOfMemoryError: (?i:(Java heap space)|(GC overhead limit exceeded)",
            r"|(Direct buffer memory|Cannot reserve \d+ bytes of direct buffer memory)",
            r"|(Metaspace)\b|(Compressed class space)|(PermGen space)",
            r"|(unable to create (?:new )?native thread)|(Requested array size exceeds VM limit))",
        )),
        direct_sizes: re(
            r"Cannot reserve (\d+) bytes of direct buffer memory \(allocated: (\d+), limit: (\d+)\)",
        ),
        // A frame of a Java stack trace, or its `... N more` and `Caused by:`.
        frame: re(r"^\s+(?:at |\.\.\. \d+ more)|^\s*Caused by: "),
        // Spark's task failure: `Lost task 0.0 in stage 1.0 (TID 1, host,
        // executor 1): java.lang.OutOfMemoryError: ...`.
        lost_task: re(r"\bLost task [\d.]+ in stage [\d.]+ \([^)]*\bexecutor ([\w.-]+)\)"),
    })
}

/// The `jvm_limit` values, in the start pattern's group order.
const LIMITS: [&str; 8] = [
    "heap",
    "gc_overhead",
    "direct_buffer",
    "metaspace",
    "compressed_class_space",
    "permgen",
    "native_thread",
    "array_size",
];

/// `java.lang.OutOfMemoryError` with a detail the JVM prints.
pub struct JvmOom;

impl Family for JvmOom {
    fn triggers(&self) -> &'static [&'static str] {
        // On the piece `OutO` the generic family's `OutOfMemoryError: ` has.
        &["OutOfMemoryError: "]
    }

    fn start(&self, line: &str) -> Option<usize> {
        patterns().start.find(line).map(|m| m.start())
    }

    /// The frames of the stack trace that follows.
    fn continues(&self, lines: &[String], next: &str) -> bool {
        lines.len() < 40 && patterns().frame.is_match(next)
    }

    fn decode(&self, message: &Message<'_>) -> Option<Finding> {
        let p = patterns();
        let first = message.lines.first()?;
        let c = p.start.captures(first)?;
        let limit = (1..=LIMITS.len())
            .find(|&i| c.get(i).is_some())
            .map(|i| LIMITS[i - 1])?;
        let text = message.lines.join("\n");
        let mut finding = message.finding(Kind::HostOom, text.trim_end().to_string());
        finding.category = Category::Oom;
        finding.era = Some(Era::Jvm);
        finding.backend = Some("cpu".into());
        finding.exception = Some("java.lang.OutOfMemoryError".into());
        finding.facts.insert(
            fact::REPORTED_BY.into(),
            "Java VM (java.lang.OutOfMemoryError)".into(),
        );
        finding.facts.insert(fact::MEMORY.into(), "host".into());
        finding.facts.insert("jvm_limit".into(), limit.into());
        let detail = first[c.get(0).map_or(0, |m| m.end())..].trim_end();
        let detail = c
            .iter()
            .skip(1)
            .flatten()
            .next()
            .map_or(String::new(), |m| m.as_str().to_string())
            + detail;
        finding.facts.insert("jvm_detail".into(), detail);
        if let Some(s) = p.direct_sizes.captures(first) {
            let n = |i: usize| s[i].parse::<u64>().ok();
            finding.sizes.requested_bytes = n(1);
            finding.sizes.allocated_bytes = n(2);
            finding.sizes.extra.insert("limit_bytes".into(), n(3));
        }
        let whole = format!("{}{}", message.prefix, text);
        if let Some(stack) = stack(&whole, message.prefix) {
            finding.facts.insert("jvm_stack".into(), stack.into());
        }
        Some(finding)
    }
}

/// The program that ran the JVM, from the line's prefix and the frames.
/// Spark's role decides which memory setting applies: a task's failure on
/// an executor (`Lost task ... executor 1)`, the executor's task runner in
/// the frames), the driver (Py4J's `: ` before the class as PySpark raises
/// it, the driver's collect or broadcast in the frames), or local mode, where
/// the tasks run in the driver's JVM (`executor driver`).
fn stack(text: &str, prefix: &str) -> Option<&'static str> {
    let p = patterns();
    if let Some(c) = p.lost_task.captures(text) {
        return Some(if &c[1] == "driver" {
            "spark_local"
        } else {
            "spark_executor"
        });
    }
    let pyspark = prefix.trim() == ":" || text.contains("at py4j.");
    if text.contains("org.apache.spark.executor.Executor$TaskRunner")
        || text.contains("Executor task launch worker")
    {
        return Some("spark_executor");
    }
    if pyspark {
        return Some("pyspark_driver");
    }
    if text.contains("org.apache.spark.") {
        let driver = [
            "org.apache.spark.sql.Dataset.collect",
            ".executeCollect(",
            "org.apache.spark.rdd.RDD.collect",
            "TorrentBroadcast",
            "BroadcastExchangeExec",
            "org.apache.spark.SparkContext",
        ]
        .iter()
        .any(|s| text.contains(s));
        return Some(if driver { "spark_driver" } else { "spark" });
    }
    [
        ("org.apache.hadoop.mapred", "hadoop_mapreduce"),
        ("elasticsearch", "elasticsearch"),
        ("ai.djl.", "djl"),
        ("org.tensorflow.", "tensorflow_java"),
        ("org.gradle.", "gradle"),
    ]
    .iter()
    .find(|(needle, _)| text.contains(needle))
    .map(|(_, name)| *name)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::detect::decode_lines;

    fn decode(lines: &[&str]) -> Finding {
        decode_lines(&JvmOom, lines).expect("a JVM finding")
    }

    #[test]
    fn each_detail_names_its_limit() {
        for (line, limit) in [
            ("Exception in thread \"main\" java.lang.OutOfMemoryError: Java heap space", "heap"),
            ("java.lang.OutOfMemoryError: GC overhead limit exceeded", "gc_overhead"),
            ("Caused by: java.lang.OutOfMemoryError: Direct buffer memory", "direct_buffer"),
            ("java.lang.OutOfMemoryError: Metaspace", "metaspace"),
            ("java.lang.OutOfMemoryError: Compressed class space", "compressed_class_space"),
            ("java.lang.OutOfMemoryError: PermGen space", "permgen"),
            ("java.lang.OutOfMemoryError: unable to create new native thread", "native_thread"),
            ("Exception in thread \"cling-2\" java.lang.OutOfMemoryError: unable to create native thread: possibly out of memory or process/resource limits reached", "native_thread"),
            ("java.lang.OutOfMemoryError: Requested array size exceeds VM limit", "array_size"),
        ] {
            let f = decode(&[line]);
            assert_eq!((f.kind, f.era), (Kind::HostOom, Some(Era::Jvm)), "{line}");
            assert_eq!(f.facts["jvm_limit"], limit, "{line}");
        }
    }

    #[test]
    fn other_details_are_not_the_jvm_s() {
        for line in [
            "java.lang.OutOfMemoryError: Could not allocate native memory: std::bad_alloc: out_of_memory: RMM failure",
            "java.lang.OutOfMemoryError",
            "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB",
        ] {
            assert!(JvmOom.start(line).is_none(), "{line}");
        }
    }

    #[test]
    fn direct_buffer_figures() {
        let f = decode(&["java.lang.OutOfMemoryError: Cannot reserve 16777216 bytes of direct buffer memory (allocated: 1065353216, limit: 1073741824)"]);
        assert_eq!(f.sizes.requested_bytes, Some(16_777_216));
        assert_eq!(f.sizes.allocated_bytes, Some(1_065_353_216));
        assert_eq!(f.sizes.extra.get("limit_bytes"), Some(&Some(1_073_741_824)));
    }

    #[test]
    fn the_stack_from_prefix_and_frames() {
        let f = decode(&[
            "Lost task 1972.0 in stage 0.0 (TID 1973, 10.2.15.90, executor 1): java.lang.OutOfMemoryError: GC overhead limit exceeded",
        ]);
        assert_eq!(f.facts["jvm_stack"], "spark_executor");
        let f = decode(&[
            "most recent failure: Lost task 0.0 in stage 1.0 (TID 1, localhost, executor driver): java.lang.OutOfMemoryError: Java heap space",
        ]);
        assert_eq!(f.facts["jvm_stack"], "spark_local");
        let f = decode(&[": java.lang.OutOfMemoryError: Java heap space"]);
        assert_eq!(f.facts["jvm_stack"], "pyspark_driver");
        let f = decode(&[
            "java.lang.OutOfMemoryError: GC overhead limit exceeded",
            "\tat java.util.Arrays.copyOfRange(Arrays.java:3664)",
            "\tat org.apache.spark.executor.Executor$TaskRunner.run(Executor.scala:338)",
        ]);
        assert_eq!(f.facts["jvm_stack"], "spark_executor");
        assert_eq!(f.text.lines().count(), 3);
        let f = decode(&[
            "java.lang.OutOfMemoryError: Metaspace",
            "\tat org.gradle.internal.Foo.bar(Foo.java:1)",
        ]);
        assert_eq!(f.facts["jvm_stack"], "gradle");
        let f = decode(&["java.lang.OutOfMemoryError: Java heap space"]);
        assert!(!f.facts.contains_key("jvm_stack"));
    }
}
