//! `cargo bench`: times oomwhy on a large synthetic training log against
//! `grep -E` and (where installed) `rg --no-mmap -c` searching the same file
//! for the trigger phrases, and prints the ratios and oomwhy's peak memory.
//!
//! Environment:
//! * `OOMWHY_BENCH_MB` — size of the generated log in MiB (default 1024).
//! * `OOMWHY_BENCH_RUNS` — timed runs per tool; the best is reported (default 3).
//!
//! The log is generated once into `target/bench-data/` by a seeded generator
//! (timestamps, tqdm bars redrawn with carriage returns, ANSI colours,
//! warnings, NCCL INFO lines, `[rankN]:` prefixes, and a few crash blocks of
//! different eras near the end, as in a real crashed multi-GPU run).

use std::fs::{self, File};
use std::io::{BufWriter, Write};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::Instant;

/// Phrases a grep user would search for to find these crashes.
const TRIGGERS: &str = "out of memory|would exceed allowed memory|illegal memory access|cudaErrorIllegalAddress|0xC0000409|-1073740791|Traceback \\(most recent call last\\)";

/// A small deterministic PRNG (xorshift64*), so every run writes the same log.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }
    fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }
}

const CRASHES: &[&str] = &[
    "Traceback (most recent call last):\n  File \"/workspace/train.py\", line 412, in <module>\n    main()\n  File \"/workspace/train.py\", line 377, in main\n    loss.backward()\n  File \"/opt/conda/lib/python3.10/site-packages/torch/_tensor.py\", line 522, in backward\n    torch.autograd.backward(\ntorch.OutOfMemoryError: CUDA out of memory. Tried to allocate 1.95 GiB. GPU {rank} has a total capacity of 79.15 GiB of which 1.21 GiB is free. Including non-PyTorch memory, this process has 77.93 GiB memory in use. Of the allocated memory 70.12 GiB is allocated by PyTorch, and 6.88 GiB is reserved by PyTorch but unallocated. If reserved but unallocated memory is large try setting PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True to avoid fragmentation.  See documentation for Memory Management  (https://pytorch.org/docs/stable/notes/cuda.html#environment-variables)\n",
    "RuntimeError: CUDA out of memory. Tried to allocate 2.00 GiB (GPU 0; 8.00 GiB total capacity; 6.32 GiB already allocated; 1.56 GiB free; 7.88 GiB reserved in total by PyTorch)\n",
    "RuntimeError: CUDA error: an illegal memory access was encountered\nCUDA kernel errors might be asynchronously reported at some other API call, so the stacktrace below might be incorrect.\nFor debugging consider passing CUDA_LAUNCH_BLOCKING=1\nCompile with `TORCH_USE_CUDA_DSA` to enable device-side assertions.\n",
    "torch.cuda.OutOfMemoryError: CUDA out of memory. Tried to allocate 172.00 MiB. GPU 0 has a total capacty of 23.65 GiB of which 21.06 MiB is free. Including non-PyTorch memory, this process has 23.62 GiB memory in use. Of the allocated memory 22.41 GiB is allocated by PyTorch, and 768.93 MiB is reserved by PyTorch but unallocated. If reserved but unallocated memory is large try setting max_split_size_mb to avoid fragmentation.  See documentation for Memory Management and PYTORCH_CUDA_ALLOC_CONF\n",
];

/// Writes one ordinary line of a training log.
fn noise_line(rng: &mut Rng, step: u64, out: &mut impl Write) -> std::io::Result<()> {
    let rank = rng.below(8);
    let ts = format!(
        "2025-03-{:02}T{:02}:{:02}:{:02}.{:06}Z",
        1 + step / 2_000_000 % 28,
        step / 90_000 % 24,
        step / 1_500 % 60,
        step / 25 % 60,
        rng.below(1_000_000)
    );
    match rng.below(20) {
        0..=7 => {
            // tqdm redraws its bar with carriage returns on one physical line.
            write!(out, "{ts} [rank{rank}]:")?;
            for k in 0..4 {
                let done = (step + k) % 1000;
                write!(out, "\rEpoch 3:  {:>2}%|{:<10}| {done}/1000 [02:13<02:43,  3.37it/s, loss={:.4}]", done / 10, "█".repeat((done / 100) as usize), 1.0 / (1.0 + (step % 97) as f64))?;
            }
            writeln!(out)
        }
        8..=11 => writeln!(out, "{ts} [rank{rank}]: {{'loss': {:.4}, 'grad_norm': {:.3}, 'learning_rate': 2.4e-05, 'epoch': {:.2}}}", 2.0 / (1.0 + (step % 89) as f64), (step % 13) as f64 / 7.0, step as f64 / 1e6),
        12..=14 => writeln!(out, "node{}:{}:{} [{rank}] NCCL INFO Channel {:02}/32 : {} -> {} via P2P/CUMEM/read", rng.below(4), 4000 + rank, 4100 + rank, rng.below(32), rank, (rank + 1) % 8),
        15 => writeln!(out, "{ts} [rank{rank}]: \x1b[33mWARNING\x1b[0m /opt/conda/lib/python3.10/site-packages/torch/utils/checkpoint.py:464: UserWarning: torch.utils.checkpoint: the use_reentrant parameter should be passed explicitly."),
        16 => writeln!(out, "{ts} [rank{rank}]: \x1b[32mINFO\x1b[0m step={step} throughput=1843.2 tokens/s mem_allocated=61.34GiB mem_reserved=70.02GiB"),
        17 => writeln!(out, "{ts} [rank{rank}]: [2025-03-01 12:00:00,123] [INFO] [logging.py:96:log_dist] [Rank {rank}] step={step}, skipped=0, lr=[2.4e-05], mom=[(0.9, 0.95)]"),
        _ => writeln!(out, "{ts} [rank{rank}]: iter {step} | loss {:.4} | tokens/s 1843 | allocated memory stays below the limit", 1.5 / (1.0 + (step % 53) as f64)),
    }
}

fn generate(path: &Path, megabytes: u64) -> std::io::Result<()> {
    let target = megabytes << 20;
    let mut out = BufWriter::with_capacity(1 << 20, File::create(path)?);
    let mut rng = Rng(0x9E37_79B9_7F4A_7C15);
    let mut written: u64 = 0;
    let mut step = 0u64;
    // A few crash blocks in the last 2 % of the file, after the noise.
    let crash_at: Vec<u64> = (0..CRASHES.len() as u64)
        .map(|i| target - target / 50 + i * target / 250)
        .collect();
    let mut next_crash = 0;
    let mut counter = CountingWriter {
        inner: &mut out,
        count: 0,
    };
    while written < target {
        noise_line(&mut rng, step, &mut counter)?;
        step += 1;
        if next_crash < crash_at.len() && counter.count >= crash_at[next_crash] {
            let block = CRASHES[next_crash].replace("{rank}", &(next_crash % 8).to_string());
            for line in block.lines() {
                writeln!(counter, "[rank{}]: {line}", next_crash % 8)?;
            }
            next_crash += 1;
        }
        written = counter.count;
    }
    counter.flush()
}

struct CountingWriter<'a, W: Write> {
    inner: &'a mut W,
    count: u64,
}

impl<W: Write> Write for CountingWriter<'_, W> {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        let n = self.inner.write(buf)?;
        self.count += n as u64;
        Ok(n)
    }
    fn flush(&mut self) -> std::io::Result<()> {
        self.inner.flush()
    }
}

/// Best wall time (s) and, via GNU time, peak RSS (KiB) over `runs` runs.
fn time_command(program: &str, args: &[&str], runs: usize) -> Option<(f64, Option<u64>)> {
    let gnu_time = Path::new("/usr/bin/time").exists();
    let mut best: Option<(f64, Option<u64>)> = None;
    for _ in 0..runs {
        let mut cmd = if gnu_time {
            let mut c = Command::new("/usr/bin/time");
            c.arg("-f").arg("%M").arg(program).args(args);
            c
        } else {
            let mut c = Command::new(program);
            c.args(args);
            c
        };
        let start = Instant::now();
        let output = cmd
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .output()
            .ok()?;
        let elapsed = start.elapsed().as_secs_f64();
        let rss = if gnu_time {
            String::from_utf8_lossy(&output.stderr)
                .lines()
                .last()
                .and_then(|l| l.trim().parse().ok())
        } else {
            None
        };
        if best.is_none_or(|(t, _)| elapsed < t) {
            best = Some((elapsed, rss));
        }
    }
    best
}

fn main() {
    // `cargo bench` passes --bench; nothing else is accepted.
    let megabytes: u64 = std::env::var("OOMWHY_BENCH_MB")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(1024);
    let runs: usize = std::env::var("OOMWHY_BENCH_RUNS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(3);
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
    let data_dir = root.join("target").join("bench-data");
    fs::create_dir_all(&data_dir).expect("create target/bench-data");
    let log = data_dir.join(format!("train-{megabytes}MiB.log"));
    if !log.exists() {
        eprintln!("generating {} ...", log.display());
        let tmp = log.with_extension("tmp");
        generate(&tmp, megabytes).expect("generate the log");
        fs::rename(&tmp, &log).expect("rename the log");
    }
    let log_arg = log.to_string_lossy().to_string();

    // Benchmark the release binary; build it if needed.
    let status = Command::new(env!("CARGO"))
        .args(["build", "--release", "--quiet", "--bin", "oomwhy"])
        .current_dir(&root)
        .status()
        .expect("run cargo build");
    assert!(status.success(), "cargo build --release failed");
    let oomwhy = root.join("target").join("release").join("oomwhy");
    let oomwhy = oomwhy.to_string_lossy().to_string();

    // Warm the page cache so every tool reads from memory.
    let _ = Command::new("cat")
        .arg(&log_arg)
        .stdout(Stdio::null())
        .status();

    // The trigger phrases: the literals of oomwhy's own prefilter, as fixed
    // strings, so that rg and grep search for exactly what oomwhy searches for.
    let phrases = oomwhy::scanner::prefilter_literals();
    let phrase_file = data_dir.join("trigger-phrases.txt");
    fs::write(&phrase_file, phrases.join("\n") + "\n").expect("write the phrase list");
    let phrase_arg = phrase_file.to_string_lossy().to_string();

    println!(
        "log: {} ({megabytes} MiB), best of {runs} runs",
        log.display()
    );
    println!(
        "trigger phrases: {} literals in {}",
        phrases.len(),
        phrase_file.display()
    );
    let ours = time_command(
        &oomwhy,
        &["--format", "json", "--color", "never", &log_arg],
        runs,
    )
    .expect("oomwhy runs");
    let grep = time_command("grep", &["-F", "-c", "-f", &phrase_arg, &log_arg], runs);
    let rg = time_command(
        "rg",
        &["--no-mmap", "-c", "-F", "-f", &phrase_arg, &log_arg],
        runs,
    );
    let rg_few = time_command("rg", &["--no-mmap", "-c", TRIGGERS, &log_arg], runs);
    let seed = root.join("fixtures").join("torch_reserved_era_seed.log");
    let tiny = time_command(&oomwhy, &[&seed.to_string_lossy()], runs.max(5));

    let mib_per_s = |t: f64| megabytes as f64 / t;
    let rss =
        |r: Option<u64>| r.map_or("?".to_string(), |k| format!("{:.1} MiB", k as f64 / 1024.0));
    println!(
        "{:<40} {:>8} {:>8} {:>10}",
        "tool", "seconds", "MiB/s", "peak RSS"
    );
    let row = |name: &str, t: f64, r: Option<u64>| {
        println!("{name:<40} {t:>8.3} {:>8.0} {:>10}", mib_per_s(t), rss(r));
    };
    row("oomwhy --format json", ours.0, ours.1);
    if let Some((t, r)) = grep {
        row("grep -F -c -f phrases", t, r);
    }
    if let Some((t, r)) = rg {
        row("rg --no-mmap -c -F -f phrases", t, r);
    }
    if let Some((t, r)) = rg_few {
        row("rg --no-mmap -c (7 headline phrases)", t, r);
    }
    println!();
    match rg {
        Some((t, _)) => println!(
            "oomwhy / rg   = {:.2}  (same phrases; target <= 1.25)",
            ours.0 / t
        ),
        None => println!("rg not installed: no rg ratio"),
    }
    if let Some((t, _)) = rg_few {
        println!(
            "oomwhy / rg   = {:.2}  (rg with 7 headline phrases only, for reference)",
            ours.0 / t
        );
    }
    if let Some((t, _)) = grep {
        println!(
            "oomwhy / grep = {:.2}  (same phrases; target < 1)",
            ours.0 / t
        );
    }
    if let Some((t, r)) = tiny {
        println!(
            "one pasted message: {:.1} ms, peak RSS {}",
            t * 1000.0,
            rss(r)
        );
    }
}
