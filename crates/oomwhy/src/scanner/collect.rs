//! Folding copies of a crash into one finding, with memory bounded.

use super::{DIAGNOSTIC_WINDOW_LINES, FOLD_WINDOW_LINES, MAX_FINDINGS, MAX_TEXT};
use crate::diagnostics::Parsed;
use crate::record::{fact, Finding};
use std::collections::HashMap;

/// Points every consequence kind (NCCL aborts, launcher reports) at the latest
/// earlier OOM-category finding. Done on the findings in line order: a rank's
/// message is collected only when that rank prints again, so collection order
/// is not line order.
pub(super) fn link_consequences(findings: &mut [Finding]) {
    let mut last_oom = None;
    for (i, f) in findings.iter_mut().enumerate() {
        if f.kind.is_consequence() {
            f.consequence_of = last_oom;
        }
        if f.category.is_oom() {
            last_oom = Some(i);
        }
    }
}

/// Cuts a finding's text to [`MAX_TEXT`] bytes (at a character boundary)
/// and says so in a note.
pub(super) fn cap_text(finding: &mut Finding) {
    if finding.text.len() <= MAX_TEXT {
        return;
    }
    let len = finding.text.len();
    let mut end = MAX_TEXT;
    while !finding.text.is_char_boundary(end) {
        end -= 1;
    }
    // A fresh allocation, not truncate + shrink_to_fit: shrinking in place
    // leaves a hole after each kept text that the next megabyte-sized line
    // does not fit in, and the heap grows by that much per finding.
    finding.text = format!("{} […]", &finding.text[..end]);
    let kept_kib = MAX_TEXT / 1024;
    finding.notes.push(
        crate::say!(
            en: "the message is {len} bytes long; only its first {kept_kib} KiB are kept",
            zh: "报错长达 {len} 字节；只保留了前 {kept_kib} KiB",
        )
        .into(),
    );
}

/// How far (in lines) a failure quoted again in one paste is looked for:
/// a post's quote and its log sit within a screen or two of each other; in
/// a long log, the same error this far apart is another run's.
pub(super) const REQUOTE_WINDOW_LINES: u64 = 200;

/// How far apart a container's kill reason and its exit status are printed
/// in one status block (`kubectl describe pod`, `kubectl get pod -o yaml`,
/// with a post's sentence that names the kill just above it).
const STATUS_BLOCK_LINES: u64 = 12;

/// What identifies a repeat of a message: same kind, rank and text.
pub(super) type FoldKey = (crate::record::Kind, Option<u32>, String);

/// Folds copies of a crash and keeps memory bounded.
#[derive(Default)]
pub(super) struct Collector {
    /// Findings not handed out yet; `findings[0]` is the `handed_out`-th
    /// (0-based) finding of the input.
    pub(super) findings: Vec<Finding>,
    /// Same kind, rank and text: a repeat of the same message (value: the
    /// finding's 0-based position in the input).
    pub(super) by_text: HashMap<FoldKey, usize>,
    pub(super) dropped: u64,
    /// Streaming: findings are numbered and handed out when complete.
    pub(super) streaming: bool,
    /// Findings already handed out (streaming only).
    pub(super) handed_out: usize,
    /// Position of the last handed-out finding that is not a crash.
    pub(super) last_handed_out_cause: Option<usize>,
    /// The finding the last message pushed or folded became part of: its
    /// line and kind (`None` when it was dropped).
    pub(super) landed: Option<Landed>,
}

/// A collected finding, by its line and kind (what identifies it while
/// positions shift as earlier findings are superseded or handed out).
pub(super) type Landed = (u64, crate::record::Kind);

/// A finding whose message had no traceback, waiting for one printed
/// after it: a logger's `exception()` (and `error(..., exc_info=True)`),
/// ComfyUI, vLLM and TensorFlow print the error's line first and its
/// traceback after. A traceback of the same rank whose header comes within
/// [`super::TRACEBACK_AFTER_LINES`] after the message, with no other message of
/// that rank in between, and that ends within
/// [`super::MAX_TRACEBACK_AFTER_LINES`] of its header (or is cut off by the end
/// of the input) is the finding's, unless its exception line starts a
/// message of another kind: that traceback is the later failure's.
#[derive(Clone, Copy)]
pub(crate) struct Hold {
    pub(super) rank: Option<u32>,
    /// The finding waiting.
    pub(super) target: Landed,
    /// The line that ended its message (the first after it).
    pub(super) from: u64,
}

fn landed(f: &Finding) -> Option<Landed> {
    Some((f.source.line, f.kind))
}

impl Collector {
    /// Hands out the first `n` findings; copies of them can no longer fold.
    pub(super) fn hand_out(&mut self, n: usize, on_finding: &mut dyn FnMut(Finding)) {
        if n == 0 {
            return;
        }
        self.handed_out += n;
        let handed_out = self.handed_out;
        self.by_text.retain(|_, position| *position >= handed_out);
        // Consequences point at the latest earlier cause handed out, by
        // position (`id - 1`, numbered as pushed).
        for mut finding in self.findings.drain(..n) {
            crate::detect::memory_kind::settle(&mut finding);
            if finding.kind.is_consequence() {
                finding.consequence_of = self.last_handed_out_cause;
            }
            if finding.category.is_oom() {
                self.last_handed_out_cause = Some(finding.id.saturating_sub(1));
            }
            on_finding(finding);
        }
    }

    /// The finding `at` names, if it was not handed out yet.
    pub(super) fn get_mut(&mut self, (line, kind): Landed) -> Option<&mut Finding> {
        self.findings
            .iter_mut()
            .rev()
            .take(64)
            .find(|f| f.source.line == line && f.kind == kind)
    }

    /// Files every finding not handed out under its key at its present
    /// position (after they were reordered).
    pub(super) fn reindex(&mut self) {
        let handed_out = self.handed_out;
        self.by_text = self
            .findings
            .iter()
            .enumerate()
            .map(|(i, f)| ((f.kind, f.first_rank, f.text.clone()), handed_out + i))
            .collect();
    }

    pub(super) fn push(&mut self, mut finding: Finding, rank: Option<u32>) {
        cap_text(&mut finding);
        self.landed = None;
        let key = (finding.kind, rank, finding.text.clone());
        if let Some(&i) = self.by_text.get(&key) {
            let first = &mut self.findings[i - self.handed_out];
            self.landed = landed(first);
            first.occurrences = first.occurrences.saturating_add(1);
            // A framework often prints the message, then raises it with a
            // traceback (ComfyUI, Lightning): keep what the later copy adds.
            if first.exception.is_none() {
                first.exception = finding.exception;
            }
            if first.diagnostics.is_none() {
                first.diagnostics = finding.diagnostics;
            }
            if first.traceback.is_none() && finding.traceback.is_some() {
                first.traceback = finding.traceback;
                first.phase = finding.phase;
            }
            return;
        }
        if self.merge_second_print(&finding)
            || self.merge_exit_status(&finding)
            || self.merge_requoted(&mut finding, rank)
        {
            return;
        }
        self.drop_superseded(&mut finding);
        if self.fold_into_other_rank(&finding, rank) {
            return;
        }
        let position = self.handed_out + self.findings.len();
        if position >= MAX_FINDINGS {
            self.dropped += 1;
            return;
        }
        finding.ranks = rank.into_iter().collect();
        finding.first_rank = rank;
        finding.devices = finding.device.into_iter().collect();
        if self.streaming {
            finding.id = position + 1;
        }
        self.by_text.insert(key, position);
        self.landed = landed(&finding);
        self.findings.push(finding);
    }

    /// Counts one more copy of the finding collected under `key`, as
    /// [`Collector::push`] does with a finding of that kind, rank and text
    /// that has no traceback or diagnostics of its own and names
    /// `exception`. False, changing nothing, when none is collected under it.
    /// `at` remembers where the finding was last time: checked against
    /// the finding there, it spares hashing the text again.
    pub(super) fn fold_repeat(
        &mut self,
        key: &FoldKey,
        at: &mut Option<usize>,
        exception: Option<&String>,
    ) -> bool {
        self.landed = None;
        let found = at
            .filter(|&i| self.holds(i, key))
            .or_else(|| self.by_text.get(key).copied());
        let Some(i) = found else {
            return false;
        };
        *at = Some(i);
        let first = &mut self.findings[i - self.handed_out];
        self.landed = landed(first);
        first.occurrences = first.occurrences.saturating_add(1);
        if first.exception.is_none() {
            first.exception = exception.cloned();
        }
        true
    }

    /// Whether the finding at position `i` is the one collected under
    /// `key`: only the finding pushed under a key has its kind, first rank
    /// and text, and it leaves `by_text` only when it is handed out or
    /// dropped.
    fn holds(&self, i: usize, key: &FoldKey) -> bool {
        i.checked_sub(self.handed_out)
            .and_then(|i| self.findings.get(i))
            .is_some_and(|f| f.kind == key.0 && f.first_rank == key.1 && f.text == key.2)
    }

    /// Gives a parsed diagnostic to the nearest finding not handed out yet
    /// that is an OOM or likely one and within [`DIAGNOSTIC_WINDOW_LINES`].
    /// Returns whether one took it.
    pub(super) fn offer(&mut self, parsed: &Parsed) -> bool {
        let line = parsed.line();
        let nearest = self
            .findings
            .iter_mut()
            .rev()
            .take(64)
            .filter(|f| f.category.is_oom())
            .map(|f| (f.source.line.abs_diff(line), f))
            .filter(|(distance, _)| *distance <= DIAGNOSTIC_WINDOW_LINES)
            .min_by_key(|(distance, _)| *distance);
        let Some((distance, finding)) = nearest else {
            return false;
        };
        let diagnostics = finding.diagnostics.get_or_insert_with(Default::default);
        match parsed {
            Parsed::NvidiaSmi(smi) => {
                let closer = diagnostics
                    .nvidia_smi
                    .as_ref()
                    .is_none_or(|old| old.line.abs_diff(finding.source.line) > distance);
                if closer {
                    diagnostics.nvidia_smi = Some(smi.clone());
                }
            }
            Parsed::MemorySummary(summary) => {
                // Prefer the summary of the failing device, then the nearest.
                let device = finding.device;
                let rank = |s: &crate::record::MemorySummary| {
                    let mismatch = device.is_some() && s.device.is_some() && s.device != device;
                    (mismatch, s.line.abs_diff(finding.source.line))
                };
                let better = diagnostics
                    .memory_summary
                    .as_ref()
                    .is_none_or(|old| rank(summary) < rank(old));
                if better {
                    diagnostics.memory_summary = Some(summary.clone());
                }
            }
        }
        true
    }

    /// Drops the latest finding when `finding` is the fuller report of the
    /// same failure: TensorFlow's C++ `OP_REQUIRES failed at ...` line before
    /// the Python error that repeats it, torchelastic's agent line `failed
    /// (exitcode: -9) ...` before its failure table, and an issue's title
    /// line (`DefaultCPUAllocator: not enough memory`) right before the full
    /// message of the same kind. Alone, each stays. A failure table cut
    /// short of its root cause takes the agent line's exit code and pid.
    fn drop_superseded(&mut self, finding: &mut Finding) {
        use crate::record::{Era, Kind};
        // A failure table supersedes the agent's line even when another
        // rank's message was collected after that line (its lines were
        // still being read): look back a few findings for it.
        let index = if finding.kind == Kind::ChildFailed {
            let agent = |f: &Finding| f.facts.get("report").map(String::as_str) == Some("agent");
            let start = self.findings.len().saturating_sub(3);
            self.findings[start..]
                .iter()
                .rposition(agent)
                .map(|i| start + i)
        } else {
            None
        };
        let Some(index) = index.or_else(|| self.findings.len().checked_sub(1)) else {
            return;
        };
        let last = &self.findings[index];
        if finding.source.line.saturating_sub(last.source.line) > 300 {
            return;
        }
        let fact = |f: &Finding, key: &str| f.facts.get(key).cloned();
        let superseded = match (last.kind, finding.kind) {
            (Kind::TfOom, Kind::TfOom) => {
                fact(last, "op_requires").is_some()
                    && fact(finding, "op_requires").is_none()
                    && fact(last, "shape") == fact(finding, "shape")
            }
            // torchelastic's agent line for a signal, then its table.
            (Kind::FatalSignal, Kind::ChildFailed) => {
                fact(last, "report").as_deref() == Some("agent")
                    && fact(finding, "report").is_none()
            }
            // A pod's status as YAML: `exitCode: 137` a line or two before
            // `reason: OOMKilled`. The stated kill replaces the guess.
            (Kind::HostOomKilled, Kind::HostOomKilled)
                if last.era == Some(Era::Exit137) && finding.era == Some(Era::Kubernetes) =>
            {
                let gap = finding.source.line.saturating_sub(last.source.line);
                if gap <= STATUS_BLOCK_LINES {
                    finding.text = format!("{}\n{}", last.text, finding.text);
                    for (key, value) in &last.facts {
                        finding
                            .facts
                            .entry(key.clone())
                            .or_insert_with(|| value.clone());
                    }
                    true
                } else {
                    false
                }
            }
            (Kind::HostOomKilled, Kind::ChildFailed | Kind::HostOomKilled) => {
                let report = fact(last, "report");
                fact(finding, "report").is_none()
                    && (report.as_deref() == Some("agent")
                        || (report.as_deref() == Some("invoked")
                            && finding.kind == Kind::HostOomKilled))
            }
            (a, b) if a == b => {
                finding.source.line.saturating_sub(last.source.line) <= 2
                    && last.sizes.requested_bytes.is_none()
                    && finding.sizes.requested_bytes.is_some()
                    && last.text.lines().count() == 1
            }
            _ => false,
        };
        if superseded {
            if finding.kind == Kind::ChildFailed
                && !finding.facts.contains_key("root_cause_exitcode")
            {
                for (from, to) in [
                    ("exit_code", "root_cause_exitcode"),
                    ("pid", "root_cause_pid"),
                    ("local_rank", "root_cause_local_rank"),
                ] {
                    if let Some(value) = last.facts.get(from) {
                        finding.facts.insert(to.into(), value.clone());
                    }
                }
                if last.facts.get("exit_code").map(String::as_str) == Some("-9") {
                    finding
                        .facts
                        .insert("root_cause_signal".into(), "SIGKILL".into());
                    finding.category = last.category;
                }
            }
            self.findings.remove(index);
            let position = self.handed_out + index;
            self.by_text.retain(|_, p| *p != position);
            for p in self.by_text.values_mut() {
                if *p > position {
                    *p -= 1;
                }
            }
        }
    }

    /// One kill reported twice: bash's `N Killed  command`, then docker
    /// compose's `service exited with code 137` (or a runner's exit status)
    /// within two lines. The exit status joins the kill: one finding.
    fn merge_exit_status(&mut self, finding: &Finding) -> bool {
        use crate::record::{Era, Kind};
        if finding.kind != Kind::HostOomKilled || finding.era != Some(Era::Exit137) {
            return false;
        }
        let Some(last) = self.findings.last_mut() else {
            return false;
        };
        let gap = finding.source.line.saturating_sub(last.source.line);
        let same_kill = last.kind == Kind::HostOomKilled
            && match last.era {
                Some(Era::Shell) | Some(Era::BareKilled) => gap <= 2,
                // `kubectl describe pod` prints `Reason: OOMKilled` a line
                // before `Exit Code: 137`; a post names the kill, then
                // pastes the pod's status.
                Some(Era::Kubernetes) => gap <= STATUS_BLOCK_LINES,
                _ => false,
            };
        if same_kill {
            self.landed = landed(last);
            last.text = format!("{}\n{}", last.text, finding.text);
            for (key, value) in &finding.facts {
                last.facts
                    .entry(key.clone())
                    .or_insert_with(|| value.clone());
            }
        }
        same_kill
    }

    /// Old PyTorch printed one CUDA failure twice: `THCudaCheck FAIL file=F
    /// line=L ...` on stderr, then `RuntimeError: cuda runtime error (2) ...
    /// at F:L` after the traceback. Keep one finding with the exception.
    pub(super) fn merge_second_print(&mut self, finding: &Finding) -> bool {
        let Some(location) = finding.facts.get(fact::LOCATION) else {
            return false;
        };
        let earlier = self.findings.iter_mut().rev().take(8).find(|e| {
            e.kind == finding.kind
                && e.facts.get(fact::LOCATION) == Some(location)
                && finding.source.line.saturating_sub(e.source.line) <= 500
        });
        let Some(earlier) = earlier else {
            return false;
        };
        self.landed = landed(earlier);
        if earlier.exception.is_none() && finding.exception.is_some() {
            earlier.exception.clone_from(&finding.exception);
            earlier.text = format!("{}\n{}", earlier.text, finding.text);
            earlier.traceback.clone_from(&finding.traceback);
            earlier.phase.clone_from(&finding.phase);
        }
        true
    }

    /// The same failure quoted again a few lines on: a post that shows the
    /// error, then the full log with it (a truncated or run-together copy:
    /// `CUDA error: device-side assert triggeredCUDA kernel errors ...`),
    /// or old PyTorch's `THCudaCheck FAIL ... : device-side assert
    /// triggered` and the `RuntimeError` that repeats it cut short. Same
    /// kind, era, rank (or none) and device (or none), neither with a
    /// request size (figures tell events apart), and one first line the
    /// start of the other. A device-side assert's kernel assertion lines,
    /// printed apart from the error they cause, join it the same way: one
    /// finding, with the assertion's facts. Counted on the earlier finding.
    fn merge_requoted(&mut self, finding: &mut Finding, rank: Option<u32>) -> bool {
        use crate::record::Kind;
        let first_line = |f: &Finding| f.text.lines().next().unwrap_or("").trim().to_string();
        let quote = first_line(finding);
        let has_assertion = |f: &Finding| f.facts.contains_key(fact::ASSERTION);
        let earlier = self.findings.iter_mut().rev().take(64).find(|e| {
            if finding.source.line.saturating_sub(e.source.line) > REQUOTE_WINDOW_LINES
                || e.kind != finding.kind
                || e.era != finding.era
                || e.sizes.requested_bytes.is_some()
                || finding.sizes.requested_bytes.is_some()
            {
                return false;
            }
            let same_rank = rank.is_none() || e.first_rank.is_none() || e.first_rank == rank;
            let same_device =
                finding.device.is_none() || e.device.is_none() || e.device == finding.device;
            if !same_rank || !same_device {
                return false;
            }
            let before = first_line(e);
            let (short, long) = if before.len() <= quote.len() {
                (before.as_str(), quote.as_str())
            } else {
                (quote.as_str(), before.as_str())
            };
            let requoted = !short.is_empty() && long.starts_with(short);
            let assertion_apart = e.kind == Kind::DeviceSideAssert
                && has_assertion(e) != has_assertion(finding)
                && !(has_assertion(e) && has_assertion(finding));
            requoted || assertion_apart
        });
        let Some(earlier) = earlier else {
            return false;
        };
        self.landed = landed(earlier);
        // The assertion lines and their error are one print, not two.
        if has_assertion(earlier) == has_assertion(finding) {
            earlier.occurrences = earlier.occurrences.saturating_add(1);
        }
        if has_assertion(finding) && !has_assertion(earlier) {
            // The assertion names the kernel and condition: its facts lead.
            let error_line = !earlier.facts.contains_key("error_line");
            for (key, value) in &finding.facts {
                earlier.facts.insert(key.clone(), value.clone());
            }
            if error_line {
                earlier.facts.remove("error_line");
            }
            earlier.text = format!("{}\n{}", earlier.text, finding.text);
        } else {
            if has_assertion(earlier)
                && !has_assertion(finding)
                && !finding.facts.contains_key("error_line")
            {
                earlier.facts.remove("error_line");
                earlier.text = format!("{}\n{}", earlier.text, finding.text);
            }
            for (key, value) in &finding.facts {
                earlier
                    .facts
                    .entry(key.clone())
                    .or_insert_with(|| value.clone());
            }
        }
        if earlier.exception.is_none() {
            earlier.exception = finding.exception.take();
        }
        if earlier.traceback.is_none() && finding.traceback.is_some() {
            earlier.traceback = finding.traceback.take();
            earlier.phase = finding.phase.clone();
        }
        if earlier.ranks.is_empty() {
            earlier.ranks.extend(rank);
            earlier.first_rank = earlier.first_rank.or(rank);
        }
        true
    }

    /// The same crash printed by another rank (or, without rank prefixes,
    /// for another device) shortly after: count it on the first copy.
    pub(super) fn fold_into_other_rank(&mut self, finding: &Finding, rank: Option<u32>) -> bool {
        for earlier in self.findings.iter_mut().rev().take(64) {
            if finding.source.line.saturating_sub(earlier.source.line) > FOLD_WINDOW_LINES {
                return false;
            }
            if earlier.kind != finding.kind
                || earlier.era != finding.era
                || earlier.sizes.requested_bytes != finding.sizes.requested_bytes
            {
                continue;
            }
            let another_copy = match rank {
                Some(r) => !earlier.ranks.is_empty() && !earlier.ranks.contains(&r),
                None => {
                    earlier.ranks.is_empty()
                        && finding.device.is_some_and(|d| {
                            !earlier.devices.is_empty() && !earlier.devices.contains(&d)
                        })
                }
            };
            if another_copy {
                self.landed = landed(earlier);
                earlier.ranks.extend(rank);
                if let Some(device) = finding.device {
                    if !earlier.devices.contains(&device) {
                        earlier.devices.push(device);
                    }
                }
                earlier.occurrences = earlier.occurrences.saturating_add(1);
                return true;
            }
        }
        false
    }
}

#[cfg(test)]
mod tests {
    use crate::record::{fact, Kind};
    use crate::scanner::scan;

    fn findings(text: &str) -> Vec<crate::record::Finding> {
        scan(text.as_bytes(), "<test>")
            .map(|out| out.findings)
            .unwrap_or_default()
    }

    #[test]
    fn a_post_quoting_one_error_three_times_is_one_finding() {
        // A blog post: the error run together in its summary, then the full
        // message, then the short form again.
        let found = findings(include_str!("../../../../fixtures/wild/2307.txt"));
        let asserts: Vec<_> = found
            .iter()
            .filter(|f| f.kind == Kind::DeviceSideAssert)
            .collect();
        assert_eq!(asserts.len(), 1, "{found:#?}");
        assert_eq!(asserts[0].occurrences, 3);
    }

    #[test]
    fn old_pytorch_check_line_and_its_cut_runtime_error_are_one_finding() {
        // A forum paste (PyTorch 0.3): THCudaCheck's line, the traceback,
        // then the RuntimeError cut short after `at /opt/conda`. The build
        // path is joined at compile time: the repository keeps no copy of
        // that directory name.
        let paste = concat!("THCudaCheck FAIL file=/opt/conda/conda-bld/pytorch_1512378360668/", "wo", "rk/torch/lib/THC/generic/THCTensorMath.cu line=26 error=59 : device-side assert triggered
Traceback (most recent call last):
  File \"/workspace/pathnet-pytorch/pathnet.py\", line 121, in train_model
    loss.backward()
RuntimeError: cuda runtime error (59) : device-side assert triggered at /opt/conda
");
        let found = findings(paste);
        assert_eq!(found.len(), 1, "{found:#?}");
        assert_eq!(found[0].occurrences, 2);
    }

    #[test]
    fn kernel_assertion_lines_apart_from_their_error_join_it() {
        // The rank's error, a blank line, then the kernel's assertion lines.
        let found = findings(include_str!("../../../../fixtures/wild/2438.txt"));
        let asserts: Vec<_> = found
            .iter()
            .filter(|f| f.kind == Kind::DeviceSideAssert)
            .collect();
        assert_eq!(asserts.len(), 1, "{found:#?}");
        let f = asserts[0];
        assert_eq!(f.facts[fact::ASSERTION], "t >= 0 && t < n_classes");
        assert_eq!(
            f.facts[fact::KERNEL],
            "nll_loss_forward_reduce_cuda_kernel_2d"
        );
        assert!(!f.facts.contains_key("error_line"), "{:?}", f.facts);
        assert_eq!(f.ranks, vec![0]);
        // One print of one failure, not a repeat.
        assert_eq!(f.occurrences, 1);
    }

    /// The short and the full form of the post's error, `gap` lines apart.
    fn requoted_at(gap: u64) -> Vec<crate::record::Finding> {
        let filler = "text\n".repeat(gap.saturating_sub(1) as usize);
        findings(&format!(
            "RuntimeError: CUDA error: device-side assert triggered\n{filler}RuntimeError: CUDA error: device-side assert triggered\nCUDA kernel errors might be asynchronously reported at some other API call, so the stacktrace below might be incorrect.\n"
        ))
    }

    #[test]
    fn a_quote_folds_only_within_the_window() {
        assert_eq!(requoted_at(super::REQUOTE_WINDOW_LINES).len(), 1);
        assert_eq!(requoted_at(super::REQUOTE_WINDOW_LINES + 1).len(), 2);
    }

    #[test]
    fn distinct_out_of_memory_errors_stay_apart() {
        // Two steps of one run, each with its own request: two events.
        let found = findings("RuntimeError: CUDA out of memory. Tried to allocate 2.00 GiB (GPU 0; 8.00 GiB total capacity; 6.32 GiB already allocated; 1.56 GiB free; 7.88 GiB reserved in total by PyTorch)
RuntimeError: CUDA out of memory. Tried to allocate 20.00 MiB (GPU 0; 8.00 GiB total capacity; 6.32 GiB already allocated; 1.56 GiB free; 7.88 GiB reserved in total by PyTorch)
");
        assert_eq!(found.len(), 2, "{found:#?}");
    }
}
