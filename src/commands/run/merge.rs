//! Scans a command's stdout and stderr as one log, line by line in the
//! order the lines arrived, so that a progress counter printed on stdout and
//! the traceback on stderr belong together. A line is handed to the scanner
//! only once it is complete, so the two streams never cut into each other's
//! lines.

use oomwhy::{Finding, ScanOutcome, Stream};

/// A line without its newline longer than this is scanned as it is: memory
/// stays bounded (the scanner cuts such lines too).
const MAX_PARTIAL: usize = 1 << 20;

pub struct Merge {
    stream: Stream,
    /// Each pipe's unfinished last line.
    partial: Vec<Vec<u8>>,
    /// Which pipes are still open.
    open: Vec<bool>,
}

impl Merge {
    /// Merges `pipes` pipes into one input named `input`.
    pub fn new(input: &str, pipes: usize) -> Self {
        Merge {
            stream: Stream::new(input),
            partial: vec![Vec::new(); pipes],
            open: vec![true; pipes],
        }
    }

    /// Scans the complete lines in `bytes` from pipe `index`; keeps the rest.
    pub fn feed(&mut self, index: usize, bytes: &[u8], on_finding: &mut dyn FnMut(Finding)) {
        let Some(partial) = self.partial.get_mut(index) else {
            return;
        };
        match memchr::memrchr(b'\n', bytes) {
            Some(last) => {
                if !partial.is_empty() {
                    self.stream.feed(partial, on_finding);
                    partial.clear();
                }
                self.stream.feed(&bytes[..=last], on_finding);
                partial.extend_from_slice(&bytes[last + 1..]);
            }
            None => partial.extend_from_slice(bytes),
        }
        if partial.len() >= MAX_PARTIAL {
            self.stream.feed(partial, on_finding);
            partial.clear();
        }
    }

    /// Pipe `index` ended: its unfinished line is scanned as a line of its
    /// own (ended here if another pipe could still add to it).
    pub fn end(&mut self, index: usize, on_finding: &mut dyn FnMut(Finding)) {
        let Some(partial) = self.partial.get_mut(index) else {
            return;
        };
        if let Some(open) = self.open.get_mut(index) {
            *open = false;
        }
        if partial.is_empty() {
            return;
        }
        let mut line = std::mem::take(partial);
        if self.open.iter().any(|&open| open) {
            line.push(b'\n');
        }
        self.stream.feed(&line, on_finding);
    }

    /// Hands out the findings that are complete (see [`Stream::settle`]).
    pub fn settle(&mut self, on_finding: &mut dyn FnMut(Finding)) {
        self.stream.settle(on_finding);
    }

    /// Ends the log: what is left of every pipe, then every finding.
    pub fn finish(mut self, on_finding: &mut dyn FnMut(Finding)) -> ScanOutcome {
        for index in 0..self.partial.len() {
            self.end(index, on_finding);
        }
        self.stream.finish(on_finding)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn findings(merge: Merge) -> Vec<Finding> {
        let mut found = Vec::new();
        merge.finish(&mut |f| found.push(f));
        found
    }

    #[test]
    fn lines_of_two_pipes_do_not_cut_into_each_other() {
        let mut merge = Merge::new("<output>", 2);
        let mut none = |_: Finding| panic!("nothing is complete yet");
        merge.feed(0, b"step 41\nstep 4", &mut none);
        merge.feed(1, b"RuntimeError: CUDA error: out of ", &mut none);
        merge.feed(0, b"2\n", &mut none);
        merge.feed(1, b"memory\n", &mut none);
        let found = findings(merge);
        assert_eq!(found.len(), 1);
        assert_eq!(found[0].kind.slug(), "cuda_runtime_oom");
        // stdout's two lines, then stderr's: line 3, with stdout's counter.
        assert_eq!(found[0].source.line, 3);
        assert_eq!(found[0].last_step, Some(42));
    }

    #[test]
    fn an_unfinished_last_line_is_scanned() {
        let mut merge = Merge::new("<output>", 2);
        merge.feed(1, b"RuntimeError: CUDA error: out of memory", &mut |_| {});
        merge.end(1, &mut |_| {});
        merge.feed(0, b"more", &mut |_| {});
        let found = findings(merge);
        assert_eq!(found.len(), 1);
    }
}
