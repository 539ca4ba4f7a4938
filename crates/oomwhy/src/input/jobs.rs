//! The per-rank files of one job: torchrun's `--log-dir` (one directory per
//! local rank), Slurm's `%t` in `--output`, DeepSpeed's and launchers'
//! `rank0.log … rank7.log`. Their paths differ only by a rank, worker or
//! node number; the copies of one crash in them fold into one finding, as
//! copies from several ranks in one file already do.

use crate::record::Finding;
use crate::scanner::ScanOutcome;
use std::collections::BTreeMap;

/// Words that, just before a number in a file name, say it numbers a rank,
/// a worker or a node (compared in lowercase, separators `_-.` trimmed).
const RANK_WORDS: &[&str] = &[
    "rank", "worker", "node", "proc", "process", "task", "gpu", "device", "dev", "host",
];

/// Suffixes that name a compressed copy of a file. A job's ranks can be
/// compressed apart (`rank0.log` still written, `rank1.log.gz` rotated), and
/// the file inside is the same log either way.
const COMPRESSION_SUFFIXES: &[&str] = &[".gz", ".xz", ".zst", ".zstd", ".bz2"];

/// The path without one compression suffix, compared in lowercase.
fn uncompressed_name(path: &str) -> &str {
    COMPRESSION_SUFFIXES
        .iter()
        .find(|suffix| {
            path.len() > suffix.len()
                && path.is_char_boundary(path.len() - suffix.len())
                && path[path.len() - suffix.len()..].eq_ignore_ascii_case(suffix)
        })
        .map_or(path, |suffix| &path[..path.len() - suffix.len()])
}

/// A path cut into the text between numbers and the numbers.
struct Shape<'a> {
    texts: Vec<&'a str>,
    numbers: Vec<&'a str>,
}

fn shape(path: &str) -> Shape<'_> {
    let mut texts = Vec::new();
    let mut numbers = Vec::new();
    let mut rest = path;
    while !rest.is_empty() {
        let text_len = rest
            .find(|c: char| c.is_ascii_digit())
            .unwrap_or(rest.len());
        texts.push(&rest[..text_len]);
        rest = &rest[text_len..];
        let number_len = rest
            .find(|c: char| !c.is_ascii_digit())
            .unwrap_or(rest.len());
        if number_len > 0 {
            numbers.push(&rest[..number_len]);
        }
        rest = &rest[number_len..];
    }
    Shape { texts, numbers }
}

/// Whether the number after `before` (and before `after`) reads as a rank:
/// a rank word just before it, or a whole path component (torchrun's
/// `attempt_0/3/stderr.log`).
fn rank_like(before: &str, after: &str) -> bool {
    let component =
        before.ends_with(['/', '\\']) && (after.is_empty() || after.starts_with(['/', '\\', '.']));
    let word = before
        .trim_end_matches(['_', '-', '.'])
        .to_ascii_lowercase();
    component || RANK_WORDS.iter().any(|w| word.ends_with(w))
}

/// The rank a path numbers, when the path reads like one of per-rank files
/// (`logs/rank3.log`, `out/worker_3.txt`, `run/attempt_0/3/stderr.log`):
/// the last number that follows a rank word or makes a whole path component.
///
/// ```
/// use oomwhy::input::rank_of_path;
/// assert_eq!(rank_of_path("logs/rank3.log"), Some(3));
/// assert_eq!(rank_of_path("job/attempt_0/3/stderr.log"), Some(3));
/// assert_eq!(rank_of_path("slurm-81234.out"), None);
/// ```
pub fn rank_of_path(path: &str) -> Option<u32> {
    let s = shape(path);
    (0..s.numbers.len())
        .rev()
        .find(|&i| rank_like(s.texts[i], s.texts.get(i + 1).copied().unwrap_or("")))
        .and_then(|i| s.numbers[i].parse().ok())
}

/// The job a per-rank file belongs to: its path with the rank number left
/// out. Files of one job share it; so do only files whose paths differ in
/// that number alone, so files of different jobs (another job id, another
/// attempt, another directory) never do. A compression suffix is left out
/// too.
fn job_key(path: &str) -> Option<(String, u32)> {
    let path = uncompressed_name(path);
    let s = shape(path);
    let i = (0..s.numbers.len())
        .rev()
        .find(|&i| rank_like(s.texts[i], s.texts.get(i + 1).copied().unwrap_or("")))?;
    let rank = s.numbers[i].parse().ok()?;
    let mut key = String::with_capacity(path.len());
    for (j, text) in s.texts.iter().enumerate() {
        key.push_str(text);
        if let Some(number) = s.numbers.get(j) {
            // The rank is left out; every other number stays.
            key.push_str(if j == i { "\u{0}" } else { number });
        }
    }
    Some((key, rank))
}

/// Folds the copies of one crash found in the per-rank files of one job.
///
/// `outcomes` are the scans of several inputs, each named by its path (the
/// name its findings carry). Files whose paths differ only by a rank,
/// worker or node number ([`rank_of_path`]) form a job when at least two
/// of them are listed. In a job, a finding without a rank prefix gets the
/// file's rank; then a finding of the same kind, era and requested size as
/// one in an earlier file of the job, from ranks that one does not list
/// yet, is folded into it (`ranks`, `devices`, `occurrences`). The copy
/// kept is the earliest by the timestamp of its line when every copy has
/// one; otherwise the first by path, and `first_rank` is left unknown with
/// a note, since nothing tells which rank failed first.
///
/// Findings are only removed from the outcomes; a consequence pointing at
/// a removed finding points at nothing.
pub fn fold_rank_files(outcomes: &mut [ScanOutcome]) {
    let mut jobs: BTreeMap<String, Vec<(usize, u32)>> = BTreeMap::new();
    for (i, outcome) in outcomes.iter().enumerate() {
        let Some(first) = outcome.findings.first() else {
            continue;
        };
        if let Some((key, rank)) = job_key(&first.source.input) {
            jobs.entry(key).or_default().push((i, rank));
        }
    }
    for members in jobs.values().filter(|m| m.len() >= 2) {
        fold_job(outcomes, members);
    }
}

/// Where a kept finding is: (outcome, position).
type At = (usize, usize);

fn fold_job(outcomes: &mut [ScanOutcome], members: &[(usize, u32)]) {
    for &(i, rank) in members {
        for f in &mut outcomes[i].findings {
            if f.ranks.is_empty() {
                f.ranks.push(rank);
                f.first_rank = Some(rank);
            }
        }
    }
    // Group the copies: each group's first element is where it was first seen.
    let mut groups: Vec<Vec<At>> = Vec::new();
    for &(i, _) in members {
        for (j, f) in outcomes[i].findings.iter().enumerate() {
            let same = groups.iter_mut().find(|group| {
                let (gi, gj) = group[0];
                let g = &outcomes[gi].findings[gj];
                gi != i
                    && g.kind == f.kind
                    && g.era == f.era
                    && g.sizes.requested_bytes == f.sizes.requested_bytes
                    && group.iter().all(|&(ci, cj)| {
                        ci != i
                            && outcomes[ci].findings[cj]
                                .ranks
                                .iter()
                                .all(|r| !f.ranks.contains(r))
                    })
            });
            match same {
                Some(group) => group.push((i, j)),
                None => groups.push(vec![(i, j)]),
            }
        }
    }
    let mut removed: Vec<Vec<bool>> = outcomes
        .iter()
        .map(|o| vec![false; o.findings.len()])
        .collect();
    for group in groups.iter().filter(|g| g.len() >= 2) {
        let timed = group
            .iter()
            .all(|&(i, j)| outcomes[i].findings[j].time.is_some());
        let keep = if timed {
            // Earliest time; the first by path among equal times.
            *group
                .iter()
                .min_by(|a, b| {
                    let ta = &outcomes[a.0].findings[a.1].time;
                    let tb = &outcomes[b.0].findings[b.1].time;
                    ta.cmp(tb)
                })
                .unwrap_or(&group[0])
        } else {
            group[0]
        };
        let copies: Vec<Finding> = group
            .iter()
            .filter(|&&at| at != keep)
            .map(|&(i, j)| outcomes[i].findings[j].clone())
            .collect();
        let kept = &mut outcomes[keep.0].findings[keep.1];
        for copy in copies {
            for r in copy.ranks {
                if !kept.ranks.contains(&r) {
                    kept.ranks.push(r);
                }
            }
            for d in copy.devices {
                if !kept.devices.contains(&d) {
                    kept.devices.push(d);
                }
            }
            kept.occurrences = kept.occurrences.saturating_add(copy.occurrences);
        }
        kept.ranks.sort_unstable();
        kept.devices.sort_unstable();
        if !timed {
            kept.first_rank = None;
            let files = group.len();
            kept.notes.push(
                crate::say!(
                    en: "the same crash is in {files} per-rank files; without timestamps on their lines, which rank failed first is unknown",
                    zh: "同一个崩溃出现在 {files} 个按 rank 分开的文件里；这些行没有时间戳，无法知道哪个 rank 先出错",
                )
                .into(),
            );
        }
        for &(i, j) in group.iter().filter(|&&at| at != keep) {
            removed[i][j] = true;
        }
    }
    for (outcome, removed) in outcomes.iter_mut().zip(removed) {
        remove(outcome, &removed);
    }
}

/// Removes the marked findings and renumbers `consequence_of`.
fn remove(outcome: &mut ScanOutcome, removed: &[bool]) {
    if !removed.contains(&true) {
        return;
    }
    let mut new_index = Vec::with_capacity(removed.len());
    let mut next = 0;
    for &gone in removed {
        new_index.push((!gone).then_some(next));
        next += usize::from(!gone);
    }
    let findings = std::mem::take(&mut outcome.findings);
    outcome.findings = findings
        .into_iter()
        .zip(removed)
        .filter(|(_, &gone)| !gone)
        .map(|(mut f, _)| {
            f.consequence_of = f
                .consequence_of
                .and_then(|c| new_index.get(c).copied().flatten());
            f
        })
        .collect();
}

/// Points a consequence (an NCCL abort or timeout, a launcher's report)
/// that found no cause in its own file at the out-of-memory finding of
/// another rank file of the same job that caused it: the latest one before
/// it when both lines carry a timestamp, else the job's only one. Within one
/// file the scanner links them by line order already.
///
/// `findings` are numbered (`id` = position + 1) and `consequence_of` holds
/// ids, as [`crate::Analysis`] keeps them.
pub(crate) fn link_across_ranks(findings: &mut [Finding]) {
    let jobs: Vec<Option<String>> = findings
        .iter()
        .map(|f| job_key(&f.source.input).map(|(key, _)| key))
        .collect();
    for i in 0..findings.len() {
        let f = &findings[i];
        if !f.kind.is_consequence() || f.consequence_of.is_some() {
            continue;
        }
        let Some(job) = &jobs[i] else {
            continue;
        };
        let causes: Vec<usize> = (0..findings.len())
            .filter(|&j| j != i && jobs[j].as_ref() == Some(job))
            .filter(|&j| findings[j].category.is_oom())
            .collect();
        let before = |j: usize| match (&findings[j].time, &f.time) {
            (Some(cause), Some(this)) => Some(cause <= this),
            _ => None,
        };
        let timed = causes
            .iter()
            .copied()
            .filter(|&j| before(j) == Some(true))
            .max_by(|&a, &b| findings[a].time.cmp(&findings[b].time));
        let only_other_file = match causes.as_slice() {
            [j] if before(*j).is_none() && findings[*j].source.input != f.source.input => Some(*j),
            _ => None,
        };
        if let Some(cause) = timed.or(only_other_file) {
            findings[i].consequence_of = Some(findings[cause].id);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn finding(kind: crate::record::Kind, input: &str, id: usize, time: Option<&str>) -> Finding {
        let mut f = Finding::new(kind, input, 1, String::new());
        f.id = id;
        f.time = time.map(str::to_string);
        f
    }

    #[test]
    fn a_timeout_in_one_rank_file_follows_the_oom_in_another() {
        use crate::record::Kind;
        let mut findings = vec![
            finding(
                Kind::NcclTimeout,
                "job/rank1.log",
                1,
                Some("2024-05-01T10:20:00"),
            ),
            finding(
                Kind::TorchAllocatorOom,
                "job/rank0.log",
                2,
                Some("2024-05-01T10:10:00"),
            ),
            finding(
                Kind::TorchAllocatorOom,
                "other/rank0.log",
                3,
                Some("2024-05-01T10:15:00"),
            ),
        ];
        link_across_ranks(&mut findings);
        assert_eq!(findings[0].consequence_of, Some(2));

        // An OOM that came after the timeout did not cause it.
        let mut later = vec![
            finding(
                Kind::NcclTimeout,
                "job/rank1.log",
                1,
                Some("2024-05-01T10:20:00"),
            ),
            finding(
                Kind::TorchAllocatorOom,
                "job/rank0.log",
                2,
                Some("2024-05-01T10:30:00"),
            ),
        ];
        link_across_ranks(&mut later);
        assert_eq!(later[0].consequence_of, None);

        // Without timestamps, the job's only OOM in another file.
        let mut untimed = vec![
            finding(Kind::ProcessGroupAborted, "run/worker-1.txt", 1, None),
            finding(Kind::TorchAllocatorOom, "run/worker-0.txt", 2, None),
        ];
        link_across_ranks(&mut untimed);
        assert_eq!(untimed[0].consequence_of, Some(2));
    }

    #[test]
    fn ranks_in_names_and_components() {
        assert_eq!(rank_of_path("logs/train_rank12.log"), Some(12));
        assert_eq!(rank_of_path("out/worker-3.txt"), Some(3));
        assert_eq!(rank_of_path("run/node01.out"), Some(1));
        assert_eq!(rank_of_path("t/attempt_0/7/stderr.log"), Some(7));
        assert_eq!(rank_of_path("train.log"), None);
        assert_eq!(rank_of_path("epoch3.log"), None);
    }

    #[test]
    fn different_jobs_get_different_keys() {
        let key = |p| job_key(p).map(|(k, _)| k);
        assert_eq!(key("a/rank0.log"), key("a/rank1.log"));
        assert_ne!(key("a/rank0.log"), key("b/rank1.log"));
        assert_ne!(key("job7_rank0.log"), key("job8_rank1.log"));
        assert_ne!(key("t/attempt_0/0/x.log"), key("t/attempt_1/1/x.log"));
        assert_eq!(key("slurm-123.out"), None);
    }

    #[test]
    fn compressed_ranks_belong_to_their_job() {
        let key = |p| job_key(p).map(|(k, _)| k);
        assert_eq!(key("a/rank0.log"), key("a/rank1.log.gz"));
        assert_eq!(key("a/rank0.log.XZ"), key("a/rank1.log.zst"));
        assert_eq!(job_key("a/rank3.log.bz2").map(|(_, r)| r), Some(3));
        assert_ne!(key("a/rank0.log"), key("a/rank1.txt.gz"));
        assert_eq!(uncompressed_name(".gz"), ".gz");
        assert_eq!(uncompressed_name("é.gz"), "é");
    }
}
