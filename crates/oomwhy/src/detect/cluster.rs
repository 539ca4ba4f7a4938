//! Memory kills and warnings of the resource managers that cluster and data
//! frameworks run their workers under (docs/formats.md §10.1). Each kills at
//! a limit of its own, not the kernel's, so each is its own era of
//! `host_oom_killed`:
//!
//! | spelling | era | category |
//! |---|---|---|
//! | Spark on YARN `Container killed by YARN for exceeding [physical] memory limits. 16.9 GB of 16 GB physical memory used.`; Hadoop's NodeManager `is running beyond physical memory limits. Current usage: A of B physical memory used` | `yarn` | `oom` |
//! | Ray's raylet `N Workers (tasks / actors) killed due to memory pressure (OOM)` (with `Memory on the node (...) was A / B (F), which exceeds the memory usage threshold of T` when it follows; wrapped before `killed`, its pair of clauses `killed due to memory pressure (OOM), M Workers crashed due to other reasons`, which only the raylet writes), its advice `address the out of memory issue` | `ray_monitor` | `oom` |
//!
//! The exception a killed task raises (`ray.exceptions.OutOfMemoryError:
//! Task was killed due to the node running low on memory`) stays the general
//! grammar's, which weighs whether it is reported.
//! | Dask's nanny `Worker exceeded 95% memory budget. Restarting` | `dask` | `oom` |
//! | Dask's worker `Memory use is high but worker has no data to store to disk`, `Unmanaged memory use is high` (`Process memory: A -- Worker memory limit: B`) | `dask` | `warning` |
//!
//! YARN prints its sizes in binary units (`16.9 GB` = 16.9 × 2³⁰ bytes);
//! Dask before its binary units (`GiB`) printed powers of 1000 (`3.70 GB`
//! = 3.70 × 10⁹ bytes), recorded as the fact `size_units: decimal`.

use super::{re, Family, Message, SizeReader};
use crate::record::{fact, Category, Era, Finding, Kind};
use regex::Regex;
use std::sync::OnceLock;

struct Patterns {
    anchor: Regex,
    yarn_spark: Regex,
    yarn_node_manager: Regex,
    overhead: Regex,
    ray_count: Regex,
    ray_usage: Regex,
    ray_task: Regex,
    dask_budget: Regex,
    dask_high: Regex,
    dask_sizes: Regex,
}

const SIZE: &str = r"(\d+(?:\.\d+)?) ?([KMGTP]i?B|kB|B)";

fn patterns() -> &'static Patterns {
    static P: OnceLock<Patterns> = OnceLock::new();
    P.get_or_init(|| Patterns {
        anchor: re(concat!(
            r"Container killed by YARN for exceeding (?:physical |virtual )?memory limits",
            r"|\bis running beyond (?:physical|virtual) memory limits",
            r"|\b\d+ Workers \(tasks / actors\) killed due to memory pressure \(OOM\)",
            // The same report wrapped by a terminal before its kill: only
            // the raylet pairs these two clauses.
            r"|\bkilled due to memory pressure \(OOM\), \d+ Workers crashed due to other reasons\b",
            r"|Refer to the documentation on how to address the out of memory issue: https://docs\.ray\.io/",
            r"|\bWorker (?:\S+ \(pid=\d+\) )?exceeded \d+% memory budget",
            r"|\b(?:Memory use is high but worker has no data to store to disk|Unmanaged memory use is high)",
        )),
        yarn_spark: re(&format!(
            r"Container killed by YARN for exceeding (?:(physical|virtual) )?memory limits\.\s*(?:{SIZE} of {SIZE} (physical|virtual) memory used)?"
        )),
        yarn_node_manager: re(&format!(
            r"is running beyond (physical|virtual) memory limits\. Current usage: {SIZE} of {SIZE} physical memory used; {SIZE} of {SIZE} virtual memory used"
        )),
        overhead: re(r"Consider boosting (spark\.[\w.]*memoryOverhead)"),
        ray_count: re(r"\b(\d+) Workers \(tasks / actors\) killed due to memory pressure"),
        ray_usage: re(
            r"was (\d+(?:\.\d+)?)(GB) / (\d+(?:\.\d+)?)(GB) \((\d(?:\.\d+)?)\),\s*which exceeds the memory usage threshold of (\d(?:\.\d+)?)",
        ),
        ray_task: re(r"\bname=([^,()]+), pid=(\d+), memory used=(\d+(?:\.\d+)?)(GB)"),
        dask_budget: re(r"\bWorker (?:\S+ \(pid=(\d+)\) )?exceeded (\d+)% memory budget"),
        dask_high: re(r"\b(?:Memory use is high but worker has no data to store to disk|Unmanaged memory use is high)"),
        dask_sizes: re(&format!(
            r"(?:Process|Unmanaged) memory: {SIZE} -- Worker memory limit: {SIZE}"
        )),
    })
}

/// YARN, Ray's memory monitor and Dask's nanny: a manager's own kill at its
/// own limit, and Dask's warning before it.
pub struct ResourceManager;

impl Family for ResourceManager {
    fn triggers(&self) -> &'static [&'static str] {
        &[
            // One rare anchor per phrase, each holding a piece the
            // prefilter already searches for (`ille`, ` is `, `w on`,
            // `(OOM`, `exce`; Ray's advice is under `ut of memory`).
            "killed by YARN",
            // The space before `is` takes the prefilter's ` is ` piece.
            " is running beyond",
            "memory pressure (OOM)",
            "address the out of memory issue",
            "exceeded",
            "emory use is high",
        ]
    }

    fn start(&self, line: &str) -> Option<usize> {
        patterns().anchor.find(line).map(|m| m.start())
    }

    /// `start` reads where the figures are (`\d+ Workers`, `exceeded \d+%`),
    /// never their values.
    fn start_figure_phrases(&self) -> Option<&'static [&'static str]> {
        Some(&[])
    }

    /// Ray's exception and the raylet's report go on over the next lines
    /// (`Memory on the node (...) was A / B (F), which exceeds ...`); Dask's
    /// and YARN's lines wrapped by a terminal end with their figures.
    fn continues(&self, lines: &[String], next: &str) -> bool {
        let p = patterns();
        let so_far = super::text::join_lines(lines);
        if lines.len() >= 4 || next.trim().is_empty() {
            return false;
        }
        let first = lines.first().map_or("", String::as_str);
        let ray = first.contains("running low on memory") || first.contains("memory pressure");
        if ray && !p.ray_usage.is_match(&so_far) {
            let next = next.trim_start();
            return next.starts_with("Memory on the node")
                || next.starts_with("which exceeds the memory usage threshold")
                || (lines.len() > 1 && p.ray_usage.is_match(&format!("{so_far} {next}")));
        }
        false
    }

    fn decode(&self, message: &Message<'_>) -> Option<Finding> {
        let p = patterns();
        let text = message.lines.join("\n");
        let joined = message.joined();
        let mut finding = message.finding(Kind::HostOomKilled, text.trim_end().to_string());
        finding.backend = Some("cpu".into());
        finding.category = Category::Oom;
        let mut notes = Vec::new();
        let mut sizes = SizeReader::new(&mut notes);
        if let Some(c) = p.yarn_spark.captures(&joined) {
            finding.era = Some(Era::Yarn);
            finding.facts.insert("manager".into(), "YARN".into());
            finding.facts.insert("reported_via".into(), "Spark".into());
            let memory = c.get(6).or(c.get(1)).map_or("physical", |m| m.as_str());
            finding.facts.insert("memory".into(), memory.to_string());
            if c.get(2).is_some() {
                let used = sizes.read(&c, 2, "memory used");
                let limit = sizes.read(&c, 4, "memory limit");
                finding.sizes.extra.insert("used_bytes".into(), used);
                finding.sizes.extra.insert("limit_bytes".into(), limit);
            }
        } else if let Some(c) = p.yarn_node_manager.captures(&joined) {
            finding.era = Some(Era::Yarn);
            finding.facts.insert("manager".into(), "YARN".into());
            let memory = &c[1];
            finding.facts.insert("memory".into(), memory.to_string());
            let at = if memory == "physical" { 2 } else { 6 };
            let used = sizes.read(&c, at, "memory used");
            let limit = sizes.read(&c, at + 2, "memory limit");
            finding.sizes.extra.insert("used_bytes".into(), used);
            finding.sizes.extra.insert("limit_bytes".into(), limit);
        } else if let Some(c) = p.dask_budget.captures(&joined) {
            finding.era = Some(Era::Dask);
            finding.facts.insert("manager".into(), "Dask nanny".into());
            finding
                .facts
                .insert("terminate_fraction".into(), format!("{}%", &c[2]));
            if let Some(pid) = c.get(1) {
                finding
                    .facts
                    .insert(fact::PID.into(), pid.as_str().to_string());
            }
        } else if p.dask_high.is_match(&joined) {
            finding.era = Some(Era::Dask);
            finding.category = Category::Warning;
            finding.facts.insert("manager".into(), "Dask worker".into());
            if let Some(c) = p.dask_sizes.captures(&joined) {
                // `GiB` since Dask's binary units; `GB` before them meant 10⁹.
                let binary = c[2].contains('i') || c[4].contains('i');
                let read = |sizes: &mut SizeReader<'_>, at: usize, what: &str| {
                    if binary {
                        sizes.read(&c, at, what)
                    } else {
                        crate::units::to_bytes_decimal(&c[at], &c[at + 1]).ok()
                    }
                };
                let used = read(&mut sizes, 1, "process memory");
                let limit = read(&mut sizes, 3, "worker memory limit");
                finding.sizes.extra.insert("used_bytes".into(), used);
                finding.sizes.extra.insert("limit_bytes".into(), limit);
                if !binary {
                    finding.facts.insert("size_units".into(), "decimal".into());
                }
            }
        } else {
            finding.era = Some(Era::RayMonitor);
            finding.facts.insert("manager".into(), "Ray".into());
            if let Some(c) = p.ray_count.captures(&joined) {
                finding
                    .facts
                    .insert(fact::KILLED_PROCESSES.into(), c[1].to_string());
            }
            if let Some(c) = p.ray_usage.captures(&joined) {
                let used = sizes.read(&c, 1, "node memory used");
                let total = sizes.read(&c, 3, "node memory");
                finding.sizes.extra.insert("used_bytes".into(), used);
                finding.sizes.total_bytes = total;
                finding
                    .facts
                    .insert("usage_fraction".into(), c[5].to_string());
                finding.facts.insert("threshold".into(), c[6].to_string());
            }
            if let Some(c) = p.ray_task.captures(&joined) {
                finding
                    .facts
                    .insert(fact::PROCESS.into(), c[1].trim().to_string());
                finding.facts.insert(fact::PID.into(), c[2].to_string());
                let task = sizes.read(&c, 3, "task memory used");
                finding.sizes.extra.insert("task_used_bytes".into(), task);
            }
        }
        if let Some(c) = p.overhead.captures(&joined) {
            finding.facts.insert("setting".into(), c[1].to_string());
        }
        finding.notes = notes;
        Some(finding)
    }
}

#[cfg(test)]
mod tests {
    use super::super::decode_lines;
    use super::*;

    fn one(lines: &[&str]) -> Finding {
        decode_lines(&ResourceManager, lines).expect("decodes")
    }

    /// The raylet's report wrapped by a terminal before `killed` (a real
    /// paste, its colours written by syslog): its second line starts
    /// Ray's message, since only the raylet pairs its two clauses.
    #[test]
    fn a_raylet_report_wrapped_before_its_kill() {
        let text = "#033[2m#033[33m(raylet)#033[0m [DATE] (raylet) node_manager.cc:3007: 2 Workers (tasks /\n actors) killed due to memory pressure (OOM), 0 Workers crashed due to other reasons at node (ID: abd406d415bd2b74a5\ne281968fd76aa200d56e4529fd1c1cd4373840, IP: 10.0.167.26) over the last time period. To see more information about th\n";
        let found = crate::scan(text.as_bytes(), "t")
            .map(|r| r.findings)
            .unwrap_or_default();
        assert_eq!(found.len(), 1);
        assert_eq!(
            (found[0].kind, found[0].era),
            (Kind::HostOomKilled, Some(Era::RayMonitor))
        );
        // One clause alone is not the raylet's.
        assert!(ResourceManager
            .start(" actors) killed due to memory pressure (OOM)")
            .is_none());
    }

    #[test]
    fn yarn_states_used_and_limit_in_binary_units() {
        let f = one(&["18/02/05 ERROR YarnScheduler: Lost executor 7 on host: Container killed by YARN for exceeding memory limits. 16.9 GB of 16 GB physical memory used. Consider boosting spark.yarn.executor.memoryOverhead."]);
        assert_eq!(f.era, Some(Era::Yarn));
        assert_eq!(f.category, Category::Oom);
        assert_eq!(f.sizes.extra["limit_bytes"], Some(16 << 30));
        assert_eq!(f.facts["setting"], "spark.yarn.executor.memoryOverhead");
        assert_eq!(f.facts["memory"], "physical");
    }

    #[test]
    fn node_manager_reads_the_exceeded_kind_of_memory() {
        let f = one(&["Container [pid=1234,containerID=container_1_0001_01_000002] is running beyond virtual memory limits. Current usage: 1.1 GB of 2 GB physical memory used; 4.6 GB of 4.2 GB virtual memory used. Killing container."]);
        assert_eq!(f.facts["memory"], "virtual");
        assert_eq!(
            f.sizes.extra["used_bytes"],
            crate::units::to_bytes("4.6", "GB").ok()
        );
    }

    #[test]
    fn ray_reads_node_usage_threshold_and_task() {
        let f = one(&[
            "[2023-04-19 16:22:19,798 E 329 329] (raylet) node_manager.cc:3069: 1 Workers (tasks / actors) killed due to memory pressure (OOM), 0 Workers crashed due to other reasons at node (ID: 2f1e)",
            "Memory on the node (IP: 10.0.62.231, ID: e5d9) where the task (task ID: 4353, name=allocate_memory, pid=11362, memory used=1.25GB) was running was 27.71GB / 28.80GB (0.962273), which exceeds the memory usage threshold of 0.95. Ray killed this worker (ID: 6f2e) because it was the most recently scheduled task",
        ]);
        assert_eq!(f.era, Some(Era::RayMonitor));
        assert_eq!(f.facts["threshold"], "0.95");
        assert_eq!(f.facts[fact::PID], "11362");
        assert_eq!(
            f.sizes.total_bytes,
            crate::units::to_bytes("28.80", "GB").ok()
        );
    }

    #[test]
    fn dask_warning_is_a_warning_in_decimal_units() {
        let f = one(&["distributed.worker - WARNING - Memory use is high but worker has no data to store to disk.  Perhaps some other process is leaking memory?  Process memory: 3.70 GB -- Worker memory limit: 4.00 GB"]);
        assert_eq!(f.category, Category::Warning);
        assert_eq!(f.sizes.extra["used_bytes"], Some(3_700_000_000));
        let f = one(&["distributed.nanny.memory - WARNING - Worker tcp://127.0.0.1:49477 (pid=59029) exceeded 95% memory budget. Restarting..."]);
        assert_eq!((f.era, f.category), (Some(Era::Dask), Category::Oom));
        assert_eq!(f.facts[fact::PID], "59029");
    }

    #[test]
    fn prose_about_a_limit_is_not_a_kill() {
        assert!(ResourceManager
            .start("the limit was exceeded yesterday")
            .is_none());
    }
}
