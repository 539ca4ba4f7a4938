//! Turning finished messages into findings: progress look-back, decoding,
//! diagnostics, and handing findings out.

use super::collect::link_consequences;
use super::lines::{Pending, Scanner};
use super::{ScanOutcome, FOLD_WINDOW_LINES, LOOKBACK, MAX_RECENT_DIAGNOSTICS};
use crate::context;
use crate::detect::Message;
use crate::diagnostics;
use crate::record::{fact, Finding};

impl Scanner {
    /// The last progress counter in the LOOKBACK bytes before the current
    /// line (`before`, starting at absolute `offset`, preceded by the retired
    /// blocks). Each byte is searched at most once over the whole input.
    pub(super) fn progress_before(&mut self, before: &[u8], offset: u64) -> Option<u64> {
        let line_start = offset + before.len() as u64;
        let window_start = line_start.saturating_sub(LOOKBACK as u64);
        let from = window_start.max(self.progress_until);
        if from > self.progress_until {
            // A gap since the last search: the old counter may be stale.
            self.last_step = None;
        }
        if from < line_start {
            // Assemble [from, line_start) from the retired blocks and the
            // current data, each byte once, in order.
            let mut bytes = Vec::new();
            let mut next = from;
            let pieces = self
                .recent
                .iter()
                .map(|b| (b.offset, b.bytes()))
                .chain(std::iter::once((offset, before)));
            for (start, data) in pieces {
                let end = (start + data.len() as u64).min(line_start);
                if next >= start && next < end {
                    bytes.extend_from_slice(&data[(next - start) as usize..(end - start) as usize]);
                    next = end;
                }
            }
            if let Some(step) = context::last_step(&String::from_utf8_lossy(&bytes)) {
                self.last_step = Some(step);
            }
            self.progress_until = line_start;
        }
        self.last_step
    }

    pub(super) fn finish_pending(&mut self, pending: Pending, rank: Option<u32>) {
        let message = Message {
            input: &self.input,
            line: pending.line,
            prefix: &pending.prefix,
            lines: &pending.lines,
        };
        let Some(mut finding) = pending.family.decode(&message) else {
            return;
        };
        // A family that consumed the traceback itself may have rebuilt it.
        let traceback = pending.traceback.or(finding.traceback.take());
        finding.phase = context::infer_phase(traceback.as_ref());
        finding.traceback = traceback;
        finding.last_step = pending.last_step;
        finding.time = pending.time;
        if let Some(engine) = pending.engine {
            finding
                .facts
                .entry(fact::ENGINE.to_string())
                .or_insert_with(|| engine.to_string());
        }
        self.collector.push(finding, rank);
        for (parsed, claimed) in &mut self.recent_diagnostics {
            if !*claimed {
                *claimed = self.collector.offer(parsed);
            }
        }
    }

    /// Parses a finished diagnostic block and gives it to the nearest OOM
    /// finding collected so far; unclaimed, it waits for a later finding.
    pub(super) fn finish_diagnostic(&mut self, block: &diagnostics::Block) {
        let Some(parsed) = block.parse() else {
            return;
        };
        let claimed = self.collector.offer(&parsed);
        let line_no = self.line_no;
        self.recent_diagnostics
            .retain(|(p, _)| line_no.saturating_sub(p.line()) <= FOLD_WINDOW_LINES);
        if self.recent_diagnostics.len() >= MAX_RECENT_DIAGNOSTICS {
            self.recent_diagnostics.pop_front();
        }
        self.recent_diagnostics.push_back((parsed, claimed));
    }

    /// Finishes every message still collecting lines, in line order.
    pub(super) fn finish_pendings(&mut self) {
        if let Some(block) = self.diagnostic.take() {
            self.finish_diagnostic(&block);
        }
        let mut pendings: Vec<_> = self
            .ranks
            .iter_mut()
            .filter_map(|(rank, state)| state.pending.take().map(|p| (*rank, p)))
            .collect();
        // In the order the messages started: two can start on one line (a
        // `\r` redraw for another rank), and the map's order is random.
        pendings.sort_by_key(|(_, pending)| pending.seq);
        for (rank, pending) in pendings {
            self.finish_pending(pending, rank);
        }
    }

    /// [`Stream::settle`]: finishes, in start order, the messages of ranks
    /// whose last line came before line `mark`.
    pub(super) fn finish_pendings_quiet_since(&mut self, mark: u64) {
        let mut pendings: Vec<_> = self
            .ranks
            .iter_mut()
            .filter(|(_, state)| state.last_line < mark)
            .filter_map(|(rank, state)| state.pending.take().map(|p| (*rank, p)))
            .collect();
        pendings.sort_by_key(|(_, pending)| pending.seq);
        for (rank, pending) in pendings {
            self.finish_pending(pending, rank);
        }
    }

    /// Streaming: hands out the findings that no later line can change.
    pub(super) fn emit_ready(&mut self, on_finding: &mut dyn FnMut(Finding)) {
        if !self.collector.streaming {
            return;
        }
        // No finding still to come can start before this line.
        let earliest_next = self
            .ranks
            .values()
            .filter_map(|state| state.pending.as_ref().map(|p| p.line))
            .fold(self.line_no, u64::min);
        let ready = self
            .collector
            .findings
            .iter()
            .take_while(|f| earliest_next.saturating_sub(f.source.line) > FOLD_WINDOW_LINES)
            .count();
        self.collector.hand_out(ready, on_finding);
    }

    /// Streaming: hands out every finding collected, in line order.
    pub(super) fn emit_all(&mut self, on_finding: &mut dyn FnMut(Finding)) {
        self.collector.findings.sort_by_key(|f| f.source.line);
        let all = self.collector.findings.len();
        self.collector.hand_out(all, on_finding);
    }

    pub(super) fn finish(mut self) -> ScanOutcome {
        self.finish_pendings();
        let mut outcome = self.outcome;
        outcome.dropped_findings = self.collector.dropped;
        let mut findings = self.collector.findings;
        // Pendings finished at the end can be out of line order.
        findings.sort_by_key(|f| f.source.line);
        link_consequences(&mut findings);
        outcome.findings = findings;
        outcome
    }
}
