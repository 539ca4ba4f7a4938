//! Unit tests of the scanner.

use super::prefilter::{
    count_newlines, literals_without_piece, prefilter, teddy_order, Prefilter, TEDDY_LIMIT,
};
use super::*;
use crate::record::Kind;

fn scan_str(text: &str) -> ScanOutcome {
    scan(text.as_bytes(), "<test>").unwrap()
}

const SEED: &str = "RuntimeError: CUDA out of memory. Tried to allocate 2.00 GiB (GPU 0; 8.00 GiB total capacity; 6.32 GiB already allocated; 1.56 GiB free; 7.88 GiB reserved in total by PyTorch)";

#[test]
fn finds_a_pasted_message() {
    let out = scan_str(SEED);
    assert_eq!(out.findings.len(), 1);
    assert_eq!(out.findings[0].kind, Kind::TorchAllocatorOom);
    assert_eq!(out.findings[0].source.line, 1);
}

#[test]
fn counts_a_last_line_without_newline() {
    assert_eq!(scan_str(SEED).lines, 1);
    assert_eq!(scan_str(&format!("a\n{SEED}")).lines, 2);
    assert_eq!(scan_str("a\n").lines, 1);
    assert_eq!(scan_str("").lines, 0);
    let long = "x".repeat(2 * MAX_LINE + 5);
    assert_eq!(scan_str(&long).lines, 1);
}

#[test]
fn counts_lines_through_noise() {
    let log = format!("noise\n\x1b[32mmore noise\x1b[0m\r\n[rank1]: {SEED}\nafter\n");
    let out = scan_str(&log);
    assert_eq!(out.findings[0].source.line, 3);
    assert_eq!(out.findings[0].first_rank, Some(1));
    assert_eq!(out.lines, 4);
}

#[test]
fn attaches_traceback_and_step() {
    let log = format!(
        " 45%|████▌     | 450/1000 [02:13<02:43,  3.37it/s]\nTraceback (most recent call last):\n  File \"train.py\", line 3, in <module>\n    loss.backward()\n{SEED}\n"
    );
    let out = scan_str(&log);
    let f = &out.findings[0];
    assert_eq!(f.source.line, 5);
    assert_eq!(f.traceback.as_ref().unwrap().frames.len(), 1);
    assert_eq!(f.phase.name, "backward");
    assert_eq!(f.last_step, Some(450));
}

#[test]
fn folds_ranks_and_repeats() {
    let log = format!("[rank0]: {SEED}\n[rank1]: {SEED}\n[rank0]: {SEED}\n");
    let out = scan_str(&log);
    assert_eq!(out.findings.len(), 1);
    let f = &out.findings[0];
    assert_eq!(f.ranks, vec![0, 1]);
    assert_eq!(f.occurrences, 3);
}

const SMI: &str = "| NVIDIA-SMI 470.82.01    Driver Version: 470.82.01    CUDA Version: 11.4     |\n|   0  Tesla T4            Off  | 00000000:00:04.0 Off |                    0 |\n| N/A   48C    P0    28W /  70W |  15098MiB / 15109MiB |      0%      Default |\n\n| Processes:                                                                  |\n|    0   N/A  N/A      4321      C   /usr/bin/python3                 9000MiB |\n|    0   N/A  N/A       777      C   python                           5800MiB |\n+-----------------------------------------------------------------------------+\n";
const OLD: &str = "RuntimeError: CUDA out of memory. Tried to allocate 2.00 GiB (GPU 0; 14.76 GiB total capacity; 5.20 GiB already allocated; 11.75 MiB free; 5.31 GiB reserved in total by PyTorch)";

#[test]
fn attaches_pasted_diagnostics_nearby_only() {
    // nvidia-smi before the error, within the window.
    let out = scan_str(&format!("{SMI}noise\n{OLD}\n"));
    let f = &out.findings[0];
    let smi = f.diagnostics.as_ref().unwrap().nvidia_smi.as_ref().unwrap();
    assert_eq!(smi.line, 1);
    assert_eq!(smi.processes[0].pid, Some(4321));
    // After the error too, and the nearer of two.
    let out = scan_str(&format!("{SMI}{}{OLD}\n{SMI}", "x\n".repeat(100)));
    let smi = out.findings[0]
        .diagnostics
        .as_ref()
        .unwrap()
        .nvidia_smi
        .as_ref()
        .unwrap();
    assert_eq!(smi.line, 110);
    // Too far away: not attached.
    let out = scan_str(&format!("{SMI}{}{OLD}\n", "x\n".repeat(600)));
    assert_eq!(out.findings[0].diagnostics, None);
    // Not to a crash that is no OOM.
    let out = scan_str(&format!(
        "{SMI}RuntimeError: CUDA error: an illegal memory access was encountered\n"
    ));
    assert_eq!(out.findings[0].diagnostics, None);
}

#[test]
fn old_messages_use_nvidia_smi_for_other_processes() {
    let mut out = scan_str(&format!("{OLD}\n{SMI}"));
    crate::explain::explain_all(&mut out.findings);
    let v = &out.findings[0].diagnosis.verdicts[0];
    assert_eq!(v.code, "other_processes");
    assert!(
        v.detail.contains("PID 4321 (/usr/bin/python3, 8.79 GiB)"),
        "{}",
        v.detail
    );
    assert!(v.detail.contains("another moment"));
    assert!(v.detail.contains("PID 777 holds at least"), "{}", v.detail);
}

#[test]
fn ignores_quoted_messages() {
    let out = scan_str("    if \"CUDA error: out of memory\" in str(e):\n");
    assert!(out.findings.is_empty());
}

#[test]
fn joins_continuation_lines() {
    let log = "RuntimeError: CUDA error: out of memory\nCUDA kernel errors might be asynchronously reported at some other API call, so the stacktrace below might be incorrect.\nFor debugging consider passing CUDA_LAUNCH_BLOCKING=1\nnext\n";
    let out = scan_str(log);
    assert_eq!(out.findings.len(), 1);
    assert_eq!(out.findings[0].text.lines().count(), 3);
}

#[test]
fn cuts_very_long_lines() {
    let mut log = "x".repeat(3 * MAX_LINE + 17);
    log.push_str(SEED);
    log.push('\n');
    let out = scan_str(&log);
    assert_eq!(out.long_lines, 1);
    assert_eq!(out.lines, 1);
}

/// Every prefilter hit sends a line down the slow path: ordinary log
/// lines must not hit, or whole-log scanning slows down tenfold.
#[test]
fn ordinary_log_lines_miss_the_prefilter() {
    let noise = [
        "2025-03-01T00:00:00.362845Z [rank6]:Epoch 3:  13%|█▎        | 137/1000 [02:13<02:43,  3.37it/s, loss=0.5000]",
        "node1:4002:4102 [2] NCCL INFO Channel 05/32 : 2 -> 3 via P2P/CUMEM/read",
        "[rank0]: {'loss': 0.4137, 'grad_norm': 1.137, 'learning_rate': 2.4e-05, 'epoch': 0.37}",
        "INFO step=1370 throughput=1843.2 tokens/s mem_allocated=61.34GiB mem_reserved=70.02GiB",
        "iter 500 | loss 1.5 | tokens/s 1843 | allocated memory stays below the limit",
        "/opt/conda/lib/python3.10/site-packages/torch/utils/checkpoint.py:464: UserWarning: torch.utils.checkpoint: the use_reentrant parameter should be passed explicitly.",
        "[2025-03-01 12:00:00,123] [INFO] [logging.py:96:log_dist] [Rank 0] step=137, skipped=0, lr=[2.4e-05], mom=[(0.9, 0.95)]",
        "Saving checkpoint to /ckpt/step_137 after 137 steps; 1073740791 bytes written",
    ];
    for line in noise {
        assert!(
            !prefilter().is_match(line.as_bytes()),
            "prefilter hits: {line}"
        );
    }
}

/// Teddy slows down as patterns are added: each new literal must earn its
/// place, and the pieces searched for stay within `TEDDY_LIMIT`.
#[test]
fn prefilter_stays_small() {
    let literals = prefilter_literals();
    // 78: one rare prefix each for cuFFT, NPP, rocBLAS and MIOpen names, and
    // one rare anchor each for Ollama's, Ray's and Kubernetes' statements;
    // 86: one prefix shared by cuFFT and hipFFT, torch-directml's out of
    // memory, ONNX Runtime's arena at its limit, Ray's worker exit detail,
    // nvgpu's MMU fault, Windows' TDR (two spellings), WSL2's dxgkrnl, ggml's
    // Vulkan size line, each holding a piece already searched for;
    // 90: the TPU runtime's reservation, OpenCL's CL_OUT_OF_HOST_MEMORY,
    // Spark's task failure line and ROCr's memory access fault (three of
    // them on pieces of their own: 66 pieces);
    // 92: ncnn's `vkAllocateMemory failed -2` (` failed -`, on a piece
    // already searched for) and an Xid named in prose (`Xid `, a piece of
    // its own); 93: TensorRT's builder skipping a tactic for memory
    // (`Skipping tactic`, a warning, on a piece of its own);
    // 95: a first-person report of a kill in prose (`killed`, on the
    // piece `ille`) and vLLM's KV-cache check's frame
    // (`check_enough_kv_cache_memory`, on `noug`); 98: OpenVINO's size
    // check (` is `), TensorFlow-DirectML's `HRESULT failed with` (` fai`)
    // and Direct3D 12's `Removing Device` (`3D12`, a piece of its own);
    // 100: text-generation-inference's launcher naming the signal that
    // ended its child (`signaled to shutdown with signal`, on `led `) and
    // TensorRT-LLM's executor refusing a component (`failed due to
    // insufficient`, on ` fai`): no new piece; 101: the CUDA runtime's
    // `driver version is insufficient` after a caller's own words (` is `),
    // while `exceeded` (MLX's allocator limit, Dask's nanny, the host
    // family's `exceeded memory limit`) and `actic` (both TensorRT tactic
    // lines) each stand for what were separate literals;
    // 104: cuda-gdb's stop on a CUDA exception (`signal CUDA_EXCEPTION_`,
    // on `_EXC`) and an exit status after a poster's form of the verb
    // (`xits with`, `xiting `, on `xits` and `xiti`): three rare pieces;
    // 106: a failed check on a Direct3D 12 allocation's HRESULT (`CHECK
    // failed: `, `Check failed: `, on ` fai`): no new piece;
    // 107: resource managers' own kills and warnings (Hadoop's ` is running
    // beyond`, Ray's `memory pressure (OOM)`, Dask's `emory use is high`;
    // YARN's `killed by YARN` falls under `kille`), each on a piece the
    // prefilter already searches for;
    // 110: libstdc++'s terminate line (whose quoted class may state the
    // failure, Paddle's BadAlloc) and Intel's compute runtime's `Abort was
    // called at` on one literal (`called a`, on `led `), the CUDA driver's
    // core dump on a GPU exception (`... environment variable`, on `able`)
    // and Visual Studio's `Exception thrown: ` (on `ion `): no new piece;
    // 111: DeepSpeed's launcher killing its ranks (`sigkill_handler]`);
    // 112: CANN's `Memory_Allocation_Failure` without its sentence
    // (`Insufficient ` now stands for two literals); 114: c10d's watchdog
    // work named without its lead words (`WorkNCCL(`) and the CUDA
    // runtime's illegal-address string cut at a line's end (`: an ille`).
    // A report in prose in its short form (`I get OOM which ...`) on
    // `OOM w`, which stands for TensorFlow's `OOM when allocating tensor`
    // too: no new literal. The pieces and buckets were then chosen again
    // for all of them.
    assert!(
        literals.len() <= 114,
        "{} literals: {literals:?}",
        literals.len()
    );
    let Prefilter::Pieces {
        literals: by_piece, ..
    } = prefilter()
    else {
        // Teddy needs SSSE3 (or NEON); without it, the automaton searches.
        #[cfg(target_arch = "x86_64")]
        assert!(
            !std::is_x86_feature_detected!("ssse3"),
            "Teddy was not used"
        );
        return;
    };
    // Teddy gets at most TEDDY_LIMIT patterns (pieces, and the repeats that
    // lay them out in their buckets); what each piece costs is measured by
    // `cargo bench --bench scan` (near-miss logs against clean ones).
    assert!(by_piece.len() <= TEDDY_LIMIT, "{} patterns", by_piece.len());
    // And they lie in the buckets chosen for them: a layout that does not
    // fit leaves the grouping to Teddy, which cost a quarter of the speed.
    assert!(
        super::prefilter::LAID_OUT.load(std::sync::atomic::Ordering::Relaxed),
        "BUCKETS no longer fit Teddy's places: choose the pieces and buckets again (tests/bench/teddy_buckets.rs)"
    );
    // A new literal's piece and bucket are chosen, not left to its first
    // bytes, which may be common in text.
    assert_eq!(literals_without_piece(), Vec::<&str>::new());
}

/// Teddy's rule for buckets, as aho-corasick applies it: pattern `i` opens
/// bucket `n - 1 - i % n` unless an earlier pattern had the same low halves.
fn teddy_buckets(order: &[&[u8]], n: usize) -> Vec<usize> {
    let low = |p: &[u8]| p.iter().map(|b| b & 0x0f).collect::<Vec<u8>>();
    let mut opened: Vec<(Vec<u8>, usize)> = Vec::new();
    order
        .iter()
        .enumerate()
        .map(|(i, p)| match opened.iter().find(|(k, _)| *k == low(p)) {
            Some(&(_, bucket)) => bucket,
            None => {
                opened.push((low(p), n - 1 - i % n));
                n - 1 - i % n
            }
        })
        .collect()
}

/// The layout puts each group's pieces in one bucket of their own, repeats
/// pieces only where a place must be filled, and refuses what cannot fit.
#[test]
fn teddy_order_keeps_each_group_in_its_bucket() {
    let groups: Vec<Vec<&[u8]>> = vec![
        // `AAAA` has the low halves of `aaaa` (0x41, 0x61): it joins the
        // bucket `aaaa` opened and opens none.
        vec![b"aaaa", b"bbbb", b"cccc", b"AAAA"],
        vec![b"dddd"],
        vec![b"eeee"],
        vec![b"ffff", b"gggg"],
    ];
    fn grouped<'a>(groups: &[Vec<&'a [u8]>]) -> (Vec<&'a [u8]>, Vec<usize>) {
        let order = teddy_order(groups, 4, 64).unwrap();
        let buckets = teddy_buckets(&order, 4);
        for group in groups {
            for piece in group {
                assert!(order.contains(piece));
            }
        }
        (order, buckets)
    }
    let (order, buckets) = grouped(&groups[..2]);
    let bucket = |piece: &[u8]| buckets[order.iter().position(|p| *p == piece).unwrap()];
    assert!(["bbbb", "cccc"]
        .iter()
        .all(|p| bucket(p.as_bytes()) == bucket(b"aaaa")));
    assert_ne!(bucket(b"dddd"), bucket(b"aaaa"));
    // Three openings in one bucket of four: places 0, 4 and 8, the places
    // between filled by `dddd`, `AAAA` once `aaaa` is placed, and repeats.
    assert_eq!(order.len(), 9);
    let (order, buckets) = grouped(&groups);
    let bucket = |piece: &[u8]| buckets[order.iter().position(|p| *p == piece).unwrap()];
    for group in &groups {
        let first = bucket(group[0]);
        for piece in group {
            assert_eq!(bucket(piece), first, "{:?}", String::from_utf8_lossy(piece));
        }
    }
    let distinct: std::collections::BTreeSet<usize> = groups.iter().map(|g| bucket(g[0])).collect();
    assert_eq!(distinct.len(), groups.len());
    assert_eq!(order.len(), 9);
    assert!(teddy_order(&groups, 4, 8).is_none());
    let five: Vec<Vec<&[u8]>> = [b"aaaa", b"bbbb", b"cccc", b"dddd", b"eeee"]
        .iter()
        .map(|p| vec![&p[..]])
        .collect();
    assert!(teddy_order(&five, 4, 64).is_none());
}

/// The pieces stand for the literals exactly: a line has a hit if and only
/// if it contains a literal, and the hit is one.
#[test]
fn pieces_find_exactly_the_literals() {
    let literals = prefilter_literals();
    let fixtures = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../fixtures");
    let mut lines = 0;
    for entry in std::fs::read_dir(&fixtures).unwrap() {
        let path = entry.unwrap().path();
        if path.extension().is_none_or(|e| e != "log") {
            continue;
        }
        let text = std::fs::read(&path).unwrap();
        for line in text.split(|&b| b == b'\n') {
            lines += 1;
            let want = literals
                .iter()
                .any(|l| memchr::memmem::find(line, l.as_bytes()).is_some());
            let got = prefilter().find_at(line, 0);
            assert_eq!(got.is_some(), want, "{}", String::from_utf8_lossy(line));
            if let Some(at) = got {
                assert!(literals
                    .iter()
                    .any(|l| line[at..].starts_with(l.as_bytes())));
            }
        }
    }
    assert!(lines > 1000);
}

#[test]
fn counts_newlines_exactly() {
    let mut text = Vec::new();
    for i in 0..100_000u32 {
        text.extend(std::iter::repeat_n(b'x', (i % 97) as usize));
        text.push(b'\n');
    }
    assert_eq!(count_newlines(&text), 100_000);
    assert_eq!(count_newlines(b""), 0);
    assert_eq!(count_newlines(&[b'\n'; 255 * 32 * 2 + 5]), 255 * 32 * 2 + 5);
}

/// A reader that returns pseudo-random chunk sizes up to `max`.
struct Chunked<'a> {
    data: &'a [u8],
    state: u64,
    max: usize,
}

impl Read for Chunked<'_> {
    fn read(&mut self, out: &mut [u8]) -> std::io::Result<usize> {
        self.state ^= self.state << 13;
        self.state ^= self.state >> 7;
        self.state ^= self.state << 17;
        let n = (1 + self.state as usize % self.max)
            .min(self.data.len())
            .min(out.len());
        out[..n].copy_from_slice(&self.data[..n]);
        self.data = &self.data[n..];
        Ok(n)
    }
}

#[test]
fn long_lines_and_random_chunks_give_the_same_findings() {
    let mut log = Vec::new();
    log.extend_from_slice(b" 10%|# | 100/1000 [00:01<00:09]\n");
    // A message inside a line longer than MAX_LINE, then one that spans a cut.
    log.extend(std::iter::repeat_n(b'x', MAX_LINE / 2));
    log.extend_from_slice(SEED.as_bytes());
    log.extend(std::iter::repeat_n(
        b'y',
        MAX_LINE - 40 - SEED.len() - MAX_LINE / 2,
    ));
    log.extend_from_slice(SEED.as_bytes());
    log.extend(std::iter::repeat_n(b'z', MAX_LINE + 17));
    log.extend_from_slice(
        b"\r\n[rank2]: RuntimeError: CUDA error: out of memory\n\xff\xfe\x00junk\r\n",
    );
    log.extend_from_slice(format!("step 7\nTraceback (most recent call last):\n  File \"a.py\", line 1, in f\n    loss.backward()\n{SEED}").as_bytes());
    let whole = scan(log.as_slice(), "t").unwrap();
    // The first and last copies of SEED fold into one finding; the copy cut
    // in two at MAX_LINE is not recognised (a documented limit).
    assert_eq!(whole.findings.len(), 2);
    assert_eq!(whole.findings[0].occurrences, 2);
    assert_eq!(whole.findings[1].first_rank, Some(2));
    assert_eq!(whole.long_lines, 1);
    for (seed, max) in [(1u64, 7usize), (2, 4096), (3, 65_536), (4, 300_000), (5, 3)] {
        let split = scan(
            Chunked {
                data: &log,
                state: seed * 0x9E37_79B9,
                max,
            },
            "t",
        )
        .unwrap();
        assert_eq!(split.findings, whole.findings, "chunks up to {max}");
        assert_eq!(
            (split.lines, split.bytes, split.long_lines),
            (whole.lines, whole.bytes, whole.long_lines)
        );
    }
}

fn stream_all(log: &str, piece: usize) -> (Vec<Finding>, ScanOutcome) {
    let mut found = Vec::new();
    let mut stream = Stream::new("t");
    for chunk in log.as_bytes().chunks(piece) {
        stream.feed(chunk, &mut |f| found.push(f));
    }
    let outcome = stream.finish(&mut |f| found.push(f));
    (found, outcome)
}

#[test]
fn streaming_finds_what_scan_finds() {
    let log = format!(
        "a\r\n[rank0]: {SEED}\r\n[rank1]: {SEED}\nRuntimeError: CUDA error: out of memory\nCUDA kernel errors might be asynchronously reported\nx\n{SEED}"
    );
    let batch = scan(log.as_bytes(), "t").unwrap();
    for piece in [1, 5, 64, log.len()] {
        let (streamed, outcome) = stream_all(&log, piece);
        // Numbered as collected; handed out in line order.
        let mut numbered: Vec<usize> = streamed.iter().map(|f| f.id).collect();
        numbered.sort_unstable();
        assert_eq!(numbered, [1, 2, 3], "piece {piece}");
        let unnumbered: Vec<Finding> = streamed
            .into_iter()
            .map(|f| Finding { id: 0, ..f })
            .collect();
        assert_eq!(unnumbered, batch.findings, "piece {piece}");
        assert_eq!(outcome.lines, batch.lines);
        assert_eq!(outcome.bytes, batch.bytes);
        assert!(outcome.findings.is_empty());
    }
}

#[test]
fn streaming_hands_out_findings_once_past_the_fold_window() {
    let mut stream = Stream::new("t");
    let mut found = Vec::new();
    stream.feed(format!("{SEED}\n").as_bytes(), &mut |f| found.push(f));
    assert!(found.is_empty(), "a copy from another rank may still come");
    // Fed bytes are scanned a block (READ_SIZE) at a time.
    let noise_lines = FOLD_WINDOW_LINES as usize + READ_SIZE / 5 + 1;
    let noise = "step\n".repeat(noise_lines);
    stream.feed(noise.as_bytes(), &mut |f| found.push(f));
    assert_eq!(found.len(), 1);
    // A repeat after it was handed out is a new finding.
    stream.feed(format!("{SEED}\n").as_bytes(), &mut |f| found.push(f));
    let outcome = stream.finish(&mut |f| found.push(f));
    assert_eq!(found.len(), 2);
    assert_eq!(found[1].id, 2);
    assert_eq!(outcome.lines, noise_lines as u64 + 2);
    // Whereas scan folds every identical repeat.
    let whole = format!("{SEED}\n{noise}{SEED}\n");
    assert_eq!(scan(whole.as_bytes(), "t").unwrap().findings.len(), 1);
}

#[test]
fn flush_hands_out_everything_now() {
    let mut stream = Stream::new("t");
    let mut found = Vec::new();
    let log = "RuntimeError: CUDA error: out of memory\nCUDA kernel errors might be asynchronously reported at some other API call, so the stacktrace below might be incorrect.\n";
    stream.feed(log.as_bytes(), &mut |f| found.push(f));
    assert!(found.is_empty(), "the message may go on");
    stream.flush(&mut |f| found.push(f));
    assert_eq!(found.len(), 1);
    assert_eq!(found[0].text.lines().count(), 2);
    let outcome = stream.finish(&mut |f| found.push(f));
    assert_eq!(found.len(), 1);
    assert_eq!(outcome.lines, 2);
}

#[test]
fn chunking_does_not_change_findings() {
    struct Trickle<'a>(&'a [u8], usize);
    impl Read for Trickle<'_> {
        fn read(&mut self, out: &mut [u8]) -> std::io::Result<usize> {
            let n = self.1.min(self.0.len()).min(out.len());
            out[..n].copy_from_slice(&self.0[..n]);
            self.0 = &self.0[n..];
            Ok(n)
        }
    }
    let log = format!(
        "a\r\nb\n[rank0]: {SEED}\r\n[rank1]: {SEED}\nRuntimeError: CUDA error: out of memory\n"
    );
    let whole = scan(log.as_bytes(), "t").unwrap();
    for size in [1, 2, 3, 7, 64] {
        let split = scan(Trickle(log.as_bytes(), size), "t").unwrap();
        assert_eq!(split.findings, whole.findings, "read size {size}");
        assert_eq!(split.lines, whole.lines);
    }
}

#[test]
fn look_back_memory_is_bounded_by_bytes_not_blocks() {
    // A followed log read from its start (full blocks, whose buffers are
    // then reused), then quiet after every line: each flush makes a short
    // block, which must not keep a whole reused buffer.
    let mut stream = Stream::new("t");
    stream.feed("step\n".repeat(READ_SIZE).as_bytes(), &mut |_| {});
    for i in 0..3_000 {
        stream.feed(format!("step {i}\n").as_bytes(), &mut |_| {});
        stream.flush(&mut |_| {});
    }
    let kept: usize = stream
        .scanner
        .recent
        .iter()
        .map(|b| b.data.capacity())
        .sum();
    assert!(kept <= LOOKBACK + 2 * READ_SIZE, "{kept} bytes kept");
}

#[test]
fn leading_times_compare_as_text() {
    use super::lines::leading_time;
    let t = |raw: &str| leading_time(raw.as_bytes());
    assert_eq!(
        t("2025-03-01T12:00:03.25Z [rank1]: x").as_deref(),
        Some("2025-03-01 12:00:03.250000000")
    );
    assert_eq!(
        t("[2025-03-01 12:00:03,250] ERROR x").as_deref(),
        Some("2025-03-01 12:00:03.250000000")
    );
    assert_eq!(
        t("2025-03-01 12:00:04 x").as_deref(),
        Some("2025-03-01 12:00:04.000000000")
    );
    assert!(t("2025-03-01 12:00:03.9") < t("2025-03-01 12:00:04"));
    assert_eq!(t("step 2025-03-01 12:00:03"), None);
    assert_eq!(t("Jun  1 12:00:00 node7 x"), None);
    assert_eq!(t("2025-03-01"), None);
}

#[test]
fn a_printed_copy_after_a_mention_on_the_same_line_is_found() {
    let line = "raise ValueError(\"No available memory for the cache blocks. \" ValueError: No available memory for the cache blocks. Try increasing `gpu_memory_utilization` when initializing the engine.\n";
    let out = scan_str(line);
    assert_eq!(out.findings.len(), 1);
    assert_eq!(out.findings[0].kind, Kind::KvCacheOom);
    assert_eq!(out.findings[0].exception.as_deref(), Some("ValueError"));
}

#[test]
fn a_lone_report_gives_way_to_the_fuller_one() {
    let agent = "[2023-10-13 17:40:02,544] torch.distributed.elastic.multiprocessing.api: [ERROR] failed (exitcode: -9) local_rank: 0 (pid: 62498) of binary: /usr/bin/python\n";
    let alone = scan_str(agent);
    assert_eq!(alone.findings.len(), 1);
    assert_eq!(alone.findings[0].kind, Kind::HostOomKilled);
    let table = "torch.distributed.elastic.multiprocessing.errors.ChildFailedError: \n============================================================\ntrain.py FAILED\n------------------------------------------------------------\nFailures:\n  <NO_OTHER_FAILURES>\n------------------------------------------------------------\nRoot Cause (first observed failure):\n[0]:\n  time      : 2023-10-13_17:40:02\n  host      : node\n  rank      : 0 (local_rank: 0)\n  exitcode  : -9 (pid: 62498)\n  error_file: <N/A>\n  traceback : Signal 9 (SIGKILL) received by PID 62498\n============================================================\n";
    let both = scan_str(&format!("{agent}{table}"));
    let kinds: Vec<Kind> = both.findings.iter().map(|f| f.kind).collect();
    assert_eq!(kinds, vec![Kind::ChildFailed]);
    let op = "2018-06-08 17:26:00.908130: W tensorflow/core/framework/op_kernel.cc:1202] OP_REQUIRES failed at tile_ops.cc:123 : Resource exhausted: OOM when allocating tensor with shape[16,1,892800,8,4,2,2] and type float on /job:localhost/replica:0/task:0/device:GPU:0 by allocator GPU_0_bfc\n";
    let python = "tensorflow.python.framework.errors_impl.ResourceExhaustedError: OOM when allocating tensor with shape[16,1,892800,8,4,2,2] and type float on /job:localhost/replica:0/task:0/device:GPU:0 by allocator GPU_0_bfc\n";
    assert_eq!(scan_str(op).findings.len(), 1);
    let both = scan_str(&format!(
        "{op}Traceback (most recent call last):\n  File \"t.py\", line 1, in <module>\n{python}"
    ));
    assert_eq!(both.findings.len(), 1);
    assert!(both.findings[0].exception.is_some());
}

#[test]
fn two_threads_find_what_one_finds_in_order() {
    // Many blocks, a message every few hundred KiB, some astride a block
    // boundary: whichever thread reads a block, it is decoded in order.
    let mut log = String::new();
    let mut i = 0u64;
    while log.len() < 3 << 20 {
        log.push_str(&format!("step {i} loss 0.{i}\n"));
        if i % 9_000 == 8_999 {
            log.push_str(&format!(
                "[rank{}]: RuntimeError: CUDA error: out of memory\n",
                i % 7
            ));
            log.push_str(
                &format!("{SEED}\n").replace("2.00 GiB", &format!("{}.00 GiB", i % 5 + 1)),
            );
        }
        i += 1;
    }
    let (serial, error) = scan_serial(log.as_bytes(), "t");
    assert!(error.is_none());
    assert!(serial.findings.len() > 5, "{}", serial.findings.len());
    let threaded = scan(log.as_bytes(), "t").unwrap();
    assert_eq!(threaded.findings, serial.findings);
    assert_eq!(
        (threaded.lines, threaded.bytes),
        (serial.lines, serial.bytes)
    );
}

/// Scans `log` deciding every line and message afresh, as before lines were
/// remembered.
fn scan_afresh(log: &str) -> ScanOutcome {
    let mut stream = Stream::with_collector("<test>", Collector::default());
    stream.scanner.remember = false;
    stream.feed(log.as_bytes(), &mut |_| {});
    stream.finish_batch()
}

/// A log of lines that repeat with other figures (timestamps, sizes, ranks,
/// exit codes, error numbers, hex addresses), mixed at random: remembering
/// lines by text and by shape, and decoded messages, must find exactly what
/// deciding each afresh finds.
#[test]
fn remembered_lines_decide_as_fresh_ones_do() {
    let templates: &[&str] = &[
        "Process exited with exit code {c}",
        "[rank{r}]: torch.OutOfMemoryError: CUDA out of memory. Tried to allocate {n}.00 MiB. GPU {r} has a total capacity of 79.15 GiB of which {n}.00 MiB is free.",
        "2023-10-02 16:{m}:{s}.{f}: W tensorflow/tsl/framework/bfc_allocator.cc:296] Allocator (GPU_{r}_bfc) ran out of memory trying to allocate {n}.{n}GiB with freed_by_count=0. The caller indicates that this is not a failure, but may mean that there could be performance gains if more memory were available.",
        "2023-10-02 16:{m}:{s}.{f}: W tensorflow/core/common_runtime/bfc_allocator.cc:275] Allocator (GPU_0_bfc) ran out of memory trying to allocate {n}.{n}MiB (rounded to {f}).  Current allocation summary follows.",
        "2023-10-02 16:{m}:{s}.{f}: W tensorflow/tsl/framework/bfc_allocator.cc:296] Allocator (GPU_{r}_bfc) ran out of memory trying to allocate {n}.{n}GiB with freed_by_count=0. The caller",
        "  {n}/1875 [====>.....] - ETA: 0:0{r} - loss: 0.{n}",
        "indicates that this is not a failure, but may mean that there could be performance gains if more memory were available.",
        "Windows fatal exception: code 0xC000{h}",
        "error: process exited with status {c} (exit code {c})",
        "node{r}:{f}:{f} [{r}] NCCL WARN Cuda failure 'out of memory'",
        "node{r}:{f}:{f} [{r}] NCCL INFO Channel 0{r}/32 : {r} -> {r} via P2P",
        "    if \"CUDA out of memory. Tried to allocate {n}\" in str(e):",
        "    raise RuntimeError(\"CUDA out of memory. Tried to allocate {n}.00 MiB\")",
        "        # torch.OutOfMemoryError: CUDA out of memory. Tried to allocate {n}.00 MiB",
        "    logger.warning(\"CUDA error: out of memory at step %d\", {n})",
        "step {f} loss 0.{n}",
        " {n}% | {n}/100 [00:0{r}<00:0{r}, 3.{n}it/s]",
        "[rank{r}]: RuntimeError: CUDA error: out of memory",
        "[rank{r}]: CUDA kernel errors might be asynchronously reported at some other API call, so the stacktrace below might be incorrect.",
        "CUDA error {c} at /src/ggml-cuda.cu:{f}: out of memory",
        // Numbers after a status word, and figures elsewhere on such lines.
        "cudaGetDeviceCount returned {c}",
        "CUDA error = ({c}) in step {n}",
        "    logger.warning(\"CUDA error: %d\", {c})",
        "2023-10-02 16:{m}:{s}.{f}: I tensorflow/core/common_runtime/executor.cc:1197] Executor start aborting (this does not indicate an error and you can ignore this message): INVALID_ARGUMENT: placeholder tensor 'Placeholder/_{n}' with dtype int32",
        "Killed",
        "[{f}.{f}] Out of memory: Killed process {f} (python) total-vm:{f}kB, anon-rss:{f}kB, file-rss:0kB, shmem-rss:0kB",
        "NVRM: Xid (PCI:0000:{n}:00): {c}, pid={f}, name=python",
        "torch.distributed.elastic.multiprocessing.api: [ERROR] failed (exitcode: -{c}) local_rank: {r} (pid: {f}) of binary: /usr/bin/python",
        "Traceback (most recent call last):",
        "  File \"train.py\", line {n}, in main",
        "    loss.backward()",
        "cudaErrorMemoryAllocation: out of memory at 0x7f{h}",
        "CUDA failure {c} 'an illegal memory access'",
        "id=-10737{c}91 step {r}",
        "# GPU blocks: {c}, # CPU blocks: {n}",
        "ERROR 06-01 12:{m}:{s} [engine.py:{n}] ValueError: No available memory for the cache blocks.",
        "| NVIDIA-SMI 535.{n}    Driver Version: 535.{n}    CUDA Version: 12.{r}     |",
        "",
    ];
    for seed in 1..=3_u64 {
        let log = mixed_log(templates, seed);
        let fresh = scan_afresh(&log);
        let remembered = scan_str(&log);
        assert!(fresh.findings.len() > 100, "{}", fresh.findings.len());
        let first_difference = remembered
            .findings
            .iter()
            .zip(&fresh.findings)
            .position(|(a, b)| a != b);
        if let Some(i) = first_difference {
            panic!(
                "seed {seed}: finding {i} differs:\n{:?}\n{:?}",
                remembered.findings[i], fresh.findings[i]
            );
        }
        assert_eq!(remembered.findings.len(), fresh.findings.len());
        assert_eq!(remembered.lines, fresh.lines);
    }
}

/// 6000 lines drawn from `templates` with their figures filled in.
fn mixed_log(templates: &[&str], seed: u64) -> String {
    let mut state = 0x2545_f491_4f6c_dd1d_u64 ^ seed.wrapping_mul(0x9e37_79b9_7f4a_7c15);
    let mut next = move |n: u64| {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        state % n
    };
    let mut log = String::new();
    for _ in 0..6000 {
        let template = templates[next(templates.len() as u64) as usize];
        let mut line = String::new();
        let mut rest = template;
        while let Some(at) = rest.find('{') {
            line.push_str(&rest[..at]);
            let figure = match &rest[at..at + 3] {
                "{r}" => next(4).to_string(),
                "{n}" => next(100).to_string(),
                "{m}" => format!("{:02}", next(60)),
                "{s}" => format!("{:02}", next(60)),
                "{f}" => format!("{:06}", next(1_000_000)),
                "{c}" => {
                    ["0", "1", "2", "9", "137", "143", "700", "716"][next(8) as usize].to_string()
                }
                _ => format!("{:04x}", next(0x1_0000)),
            };
            line.push_str(&figure);
            rest = &rest[at + 3..];
        }
        line.push_str(rest);
        log.push_str(&line);
        log.push('\n');
    }
    log
}

/// Python source quoting messages, each line twice with other figures (the
/// benchmark's near-miss source): every line is decided once per shape, so
/// a log of such source costs little more than clean source.
#[test]
fn quoting_source_is_decided_once_per_shape() {
    use super::shape::KeyKind;
    for (one, other) in [
        (
            "    logger.warning(\"CUDA error: out of memory while logging step %d\", 123)",
            "    logger.warning(\"CUDA error: out of memory while logging step %d\", 456)",
        ),
        (
            "        # torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 12.00 MiB. GPU 0 has a total capacity of 79.15 GiB",
            "        # torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 34.00 MiB. GPU 0 has a total capacity of 79.15 GiB",
        ),
        // TensorFlow's executor note: `an error`, an ordinary log line.
        (
            "2023-10-02 00:00:01.123456: I tensorflow/core/common_runtime/executor.cc:1197] [/device:CPU:0] (DEBUG INFO) Executor start aborting (this does not indicate an error and you can ignore this message): INVALID_ARGUMENT: You must feed a value for placeholder tensor 'Placeholder/_12' with dtype int32",
            "2023-10-02 00:00:02.654321: I tensorflow/core/common_runtime/executor.cc:1197] [/device:CPU:0] (DEBUG INFO) Executor start aborting (this does not indicate an error and you can ignore this message): INVALID_ARGUMENT: You must feed a value for placeholder tensor 'Placeholder/_98' with dtype int32",
        ),
    ] {
        for line in [one, other] {
            let mut scanner = lines::Scanner::new("<test>");
            let keys = scanner.shapes.keys(line.as_bytes());
            assert!(!keys.unusual);
            let (kind, known) = scanner.decide(line);
            assert_eq!(kind, KeyKind::Shape, "{line}");
            assert!(known.is_some_and(|k| k.start.is_none()), "{line}");
        }
    }
    // A status number after its word is read by its value: by the text.
    let mut scanner = lines::Scanner::new("<test>");
    let line = "CUDA error 2 at train.cu:12";
    scanner.shapes.keys(line.as_bytes());
    let (kind, known) = scanner.decide(line);
    assert_eq!(kind, KeyKind::Exact);
    assert!(known.is_some_and(|k| k.start.is_some()));
}

/// The status families read figures' values only in their figure phrases
/// and after their words: every name and message they look for that holds
/// a digit is under one of the phrases.
#[test]
fn status_figure_phrases_cover_the_tables() {
    use crate::detect::Family;
    let phrases = crate::detect::status::StatusCode
        .start_figure_phrases()
        .unwrap_or_default();
    for table in crate::codes::scanned_tables() {
        for entry in &table.entries {
            for text in [entry.name, entry.message] {
                if text.bytes().any(|b| b.is_ascii_digit()) {
                    assert!(
                        phrases
                            .iter()
                            .any(|p| text.to_ascii_lowercase().contains(&p.to_ascii_lowercase())),
                        "{text} is not under a figure phrase"
                    );
                }
            }
        }
    }
}

/// A traceback printed after its message (a logger's `exception()`,
/// ComfyUI, a chained `During handling of the above exception`) is the
/// message's: its frames tell the phase and the program.
#[test]
fn a_traceback_after_its_message_is_its_own() {
    // The OOM's own traceback starts cut; the chained one runs through the
    // caller's forward (a real paste, fixtures/wild/3013.txt).
    let chained = include_str!("../../../../fixtures/wild/3013.txt");
    let found = scan_str(chained).findings;
    assert_eq!(found.len(), 1, "{found:#?}");
    let f = &found[0];
    let frames = &f.traceback.as_ref().expect("the chained traceback").frames;
    assert_eq!(frames[0].file, "memtestcase.py");
    assert_eq!(f.phase.name, "forward");
    // ComfyUI logs the exception's line, then its traceback.
    let comfy = include_str!("../../../../fixtures/wild/3011.txt");
    let found = scan_str(comfy).findings;
    let frames = &found[0]
        .traceback
        .as_ref()
        .expect("ComfyUI's traceback")
        .frames;
    assert!(frames[0].file.ends_with("execution.py"), "{frames:?}");
    // Read in pieces of any size, the same findings.
    for log in [chained, comfy] {
        let batch = scan(log.as_bytes(), "t").unwrap().findings;
        for piece in [1, 7, 100] {
            let (streamed, _) = stream_all(log, piece);
            let streamed: Vec<Finding> = streamed
                .into_iter()
                .map(|f| Finding { id: 0, ..f })
                .collect();
            assert_eq!(streamed, batch, "piece {piece}");
        }
    }
}

/// The rule's bounds: a traceback that opens more than
/// TRACEBACK_AFTER_LINES after the message, or one that ends in another
/// kind's message (a later failure), is not the message's; one that ends in
/// the same failure raised is both copies'.
#[test]
fn a_traceback_far_after_or_of_another_failure_is_not_the_message_s() {
    let traceback = "Traceback (most recent call last):\n  File \"train.py\", line 9, in step\n    loss.backward()\n";
    let ended = format!("{SEED}\n{traceback}KeyboardInterrupt\n");
    assert_eq!(scan_str(&ended).findings[0].phase.name, "backward");
    let gap = "noise\n".repeat(TRACEBACK_AFTER_LINES as usize);
    let far = format!("{SEED}\n{gap}{traceback}KeyboardInterrupt\n");
    assert!(scan_str(&far).findings[0].traceback.is_none());
    let near = format!(
        "{SEED}\n{}{traceback}KeyboardInterrupt\n",
        "noise\n".repeat(TRACEBACK_AFTER_LINES as usize - 1)
    );
    assert!(scan_str(&near).findings[0].traceback.is_some());
    let fault = "RuntimeError: CUDA error: an illegal memory access was encountered";
    let other = scan_str(&format!("{SEED}\n{traceback}{fault}\n")).findings;
    assert_eq!(other.len(), 2, "{other:#?}");
    assert!(other[0].traceback.is_none());
    assert!(other[1].traceback.is_some());
    // Another message of the rank in between: the traceback is not the first's.
    let between = scan_str(&format!("{SEED}\n{fault}\n{traceback}KeyboardInterrupt\n")).findings;
    assert!(between[0].traceback.is_none(), "{between:#?}");
    // The same failure logged, then raised with its traceback: one finding.
    let logged = format!("ERROR:root:{SEED}\n{traceback}{SEED}\n");
    let same = scan_str(&logged).findings;
    assert_eq!(same.len(), 1, "{same:#?}");
    assert_eq!(same[0].phase.name, "backward");
    // Remembered messages and lines decide as fresh ones do.
    let repeated = format!("{logged}{ended}{far}{ended}");
    assert_eq!(
        scan_afresh(&repeated).findings,
        scan_str(&repeated).findings
    );
}

/// While its rank still prints the traceback, a settled stream keeps the
/// finding (and those after it) back; once the rank is quiet it goes out
/// with the frames printed so far.
#[test]
fn settle_waits_for_a_traceback_being_printed() {
    let mut stream = Stream::new("live");
    let mut found = Vec::new();
    stream.feed(
        format!("{SEED}\nTraceback (most recent call last):\n").as_bytes(),
        &mut |f| found.push(f),
    );
    stream.settle(&mut |f| found.push(f));
    assert!(found.is_empty());
    stream.feed(
        b"  File \"train.py\", line 9, in step\n    loss.backward()\n",
        &mut |f| found.push(f),
    );
    stream.settle(&mut |f| found.push(f));
    assert!(found.is_empty(), "the traceback is still being printed");
    stream.settle(&mut |f| found.push(f));
    assert_eq!(found.len(), 1);
    assert_eq!(found[0].phase.name, "backward");
}

#[test]
fn a_pods_kill_reason_and_its_exit_status_are_one_finding() {
    // `kubectl get pod -o yaml`: the exit code is printed before the reason.
    let yaml = "containerID: containerd://0f30d47b321c\nexitCode: 137\nfinishedAt: \"2025-12-17T10:56:44Z\"\nreason: OOMKilled\nstartedAt: \"2025-12-17T10:56:35Z\"\n";
    // `kubectl describe pod`: the reason first.
    let describe = "    Last State:     Terminated\n      Reason:       OOMKilled\n      Exit Code:    137\n      Started:      Tue, 09 Jan 2024 10:02:11 +0000\n";
    for log in [yaml, describe] {
        let findings = scan_str(log).findings;
        assert_eq!(findings.len(), 1, "{log}: {findings:#?}");
        assert_eq!(
            findings[0].era,
            Some(crate::record::Era::Kubernetes),
            "{log}"
        );
        assert!(findings[0].category.is_oom(), "{log}");
    }
    // A separate run's exit status, far below, is its own finding.
    let apart = format!(
        "{describe}{}trainer-1 exited with code 137\n",
        "step\n".repeat(40)
    );
    assert_eq!(scan_str(&apart).findings.len(), 2);
}

#[test]
fn a_message_on_a_last_line_without_newline_reads_the_lines_before_it() {
    // A paste often ends without a newline; the message on its last line is
    // carried past the block's end and must still see the writer's lines.
    let log = format!("I run it with the batch size set to 1 on Windows\n{SEED}");
    let unterminated = scan_str(&log).findings;
    let terminated = scan_str(&format!("{log}\n")).findings;
    assert_eq!(unterminated.len(), 1);
    assert!(!terminated[0].nearby.is_empty());
    assert_eq!(unterminated[0].nearby, terminated[0].nearby);
}
