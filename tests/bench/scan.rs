//! `cargo bench`: times oomwhy against ripgrep and against itself on the
//! same bytes, side by side in one run, and prints the ratios and oomwhy's
//! peak memory:
//!
//! (a) logs dense with near-misses, each against a clean log of the same
//!     size written by the same generator: a Keras log with TensorFlow's BFC
//!     "not a failure" warning on every other line, and Python source that
//!     quotes out-of-memory messages in conditions, strings and comments on
//!     every fourth line (target: ratio ≤ 3); and 1 GiB of the near-miss
//!     lines `tests/limits.sh` streams, through a pipe (target: ≤ 10 s,
//!     `OOMWHY_BENCH_LIMITS_MB` to change the size);
//! (b) one plain log: `oomwhy --format json LOG` against
//!     `rg --no-mmap -c -e PHRASES LOG`, on all cores (target: ≤ 1.0) and on
//!     one core, both under `taskset -c 0` (target: ≤ 1.2 in wall-clock and
//!     in CPU time); peak RSS ≤ 16 MiB;
//! (c) a tree of 64 logs of 4 MiB, half of them gzip or xz compressed:
//!     `oomwhy --format json DIR` against `rg -z -c -e PHRASES DIR`
//!     (target: ratio ≤ 1.0, peak RSS ≤ 64 MiB);
//! (d) a pipe: `cat LOG | oomwhy --format json` against `cat LOG | wc -l`
//!     (target: within 10 %).
//!
//! PHRASES are the 14 headline phrases a grep user would search for. When
//! `rg` is not installed, the run says so and reports oomwhy's numbers alone.
//!
//! Environment:
//! * `OOMWHY_BENCH_MB` — size of the generated log in MiB (default 256).
//! * `OOMWHY_BENCH_NEAR_MB` — size of each near-miss and clean log (default 96).
//! * `OOMWHY_BENCH_LIMITS_MB` — MiB of near-miss lines piped in (default 1024).
//! * `OOMWHY_BENCH_RUNS` — timed runs per command; the best is reported (default 5).
//! * `OOMWHY_BENCH_ONLY` — the sections to run, comma-separated, of
//!   `near`, `log`, `tree`, `pipe`, `paste` (default: all).
//!
//! The logs are generated once into `target/bench-data/` by seeded
//! generators (the training log: timestamps, tqdm bars redrawn with carriage
//! returns, ANSI colours, warnings, NCCL INFO lines, `[rankN]:` prefixes, and
//! a few crash blocks of different eras near the end, as in a real crashed
//! multi-GPU run).

use std::fs::{self, File};
use std::io::{BufWriter, Write};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::Instant;

/// The 14 headline phrases, as one alternation.
const PHRASES: &str = "out of memory|Out of memory|OutOfMemory|illegal memory access|0xC0000409|-1073740791|CUBLAS_STATUS|CUDNN_STATUS|RESOURCE_EXHAUSTED|Resource exhausted|Killed process|NVRM: Xid|device-side assert|OOM when allocating";

/// Logs in the directory benchmark, and the size of each.
const DIR_LOGS: u64 = 64;
const DIR_LOG_MB: u64 = 4;

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

fn generate(path: &Path, megabytes: u64, seed: u64) -> std::io::Result<()> {
    let target = megabytes << 20;
    let mut out = BufWriter::with_capacity(1 << 20, File::create(path)?);
    let mut rng = Rng(0x9E37_79B9_7F4A_7C15 ^ seed);
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

/// TensorFlow's BFC warning for a retried allocation: a message family's
/// trigger phrase, decoded as a warning, not an error.
const BFC_WARNING: &str = "W tensorflow/tsl/framework/bfc_allocator.cc:296] Allocator (GPU_0_bfc) ran out of memory trying to allocate {size} with freed_by_count=0. The caller indicates that this is not a failure, but may mean that there could be performance gains if more memory were available.";
/// An ordinary TensorFlow log line of about the same length, for the clean log.
const TF_INFO: &str = "I tensorflow/core/common_runtime/executor.cc:1197] [/device:CPU:0] (DEBUG INFO) Executor start aborting (this does not indicate an error and you can ignore this message): INVALID_ARGUMENT: You must feed a value for placeholder tensor 'Placeholder/_{size}' with dtype int32";
const BFC_SIZES: &[&str] = &["2.14GiB", "1.07GiB", "3.52GiB", "585.94MiB"];

/// A Keras training log (`model.fit`, one progress line per batch); with
/// `warnings`, TensorFlow's BFC "not a failure" warning on every other line,
/// its size one of four.
fn generate_keras(path: &Path, megabytes: u64, warnings: bool) -> std::io::Result<()> {
    let target = megabytes << 20;
    let mut out = BufWriter::with_capacity(1 << 20, File::create(path)?);
    let mut counter = CountingWriter {
        inner: &mut out,
        count: 0,
    };
    let mut rng = Rng(0x005E_ED0F_CAFE);
    let mut line = 0u64;
    while counter.count < target {
        let batch = line % 1875;
        if batch == 0 {
            writeln!(counter, "Epoch {}/50", line / 1875 + 1)?;
        }
        let done = (batch * 30 / 1875) as usize;
        writeln!(
            counter,
            "{:>4}/1875 [{}>{}] - ETA: {}:{:02} - loss: {:.4} - accuracy: {:.4}",
            batch + 1,
            "=".repeat(done),
            ".".repeat(29 - done),
            (1875 - batch) / 900,
            (1875 - batch) / 15 % 60,
            1.0 / (1.0 + (line % 97) as f64),
            0.5 + (line % 89) as f64 / 200.0
        )?;
        let ts = format!(
            "2023-10-02 {:02}:{:02}:{:02}.{:06}",
            line / 3_600_000 % 24,
            line / 60_000 % 60,
            line / 1_000 % 60,
            rng.below(1_000_000)
        );
        let size = BFC_SIZES[(line % BFC_SIZES.len() as u64) as usize];
        let text = if warnings {
            BFC_WARNING.replace("{size}", size)
        } else {
            TF_INFO.replace("{size}", &(line % 1000).to_string())
        };
        writeln!(counter, "{ts}: {text}")?;
        line += 1;
    }
    counter.flush()
}

/// A block of Python source; with `quotes`, every fourth line quotes an
/// out-of-memory message in a condition, a string or a comment (`{n}`: a
/// number that differs per copy).
const SOURCE_QUOTING: &[&str] = &[
    "def train_step_{n}(model, batch, optimizer, scaler):",
    "    \"\"\"One optimisation step; retries once with a smaller batch.\"\"\"",
    "    try:",
    "        # torch.OutOfMemoryError: CUDA out of memory. Tried to allocate {n}.00 MiB. GPU 0 has a total capacity of 79.15 GiB",
    "        loss = model(**batch).loss / {n}",
    "        scaler.scale(loss).backward()",
    "        scaler.step(optimizer)",
    "    except RuntimeError as e:  # torch < 2.1 raised RuntimeError",
    "        if \"CUDA out of memory. Tried to allocate\" in str(e):",
    "            torch.cuda.empty_cache()",
    "            return train_step_{n}(model, halve(batch), optimizer, scaler)",
    "        raise",
    "    logger.warning(\"CUDA error: out of memory while logging step %d\", {n})",
    "    optimizer.zero_grad(set_to_none=True)",
    "    return loss.detach()",
    "",
    "def check_{n}(err):",
    "    return err == \"cudaErrorMemoryAllocation\" or \"CUDA_ERROR_OUT_OF_MEMORY\" in err",
];

/// The same block without the quotations: ordinary code of about the same length.
const SOURCE_CLEAN: &[&str] = &[
    "def train_step_{n}(model, batch, optimizer, scaler):",
    "    \"\"\"One optimisation step; retries once with a smaller batch.\"\"\"",
    "    try:",
    "        # Scale the loss so that gradients accumulated over {n} micro-batches keep their magnitude",
    "        loss = model(**batch).loss / {n}",
    "        scaler.scale(loss).backward()",
    "        scaler.step(optimizer)",
    "    except RuntimeError as e:  # torch < 2.1 raised RuntimeError",
    "        if \"expected scalar type\" in str(e) and not batch_is_half:",
    "            torch.cuda.empty_cache()",
    "            return train_step_{n}(model, halve(batch), optimizer, scaler)",
    "        raise",
    "    logger.warning(\"loss scale fell below the minimum at step %d\", {n})",
    "    optimizer.zero_grad(set_to_none=True)",
    "    return loss.detach()",
    "",
    "def check_{n}(err):",
    "    return err == \"cudaSuccess\" or \"NOT_INITIALIZED\" in err.upper()",
];

/// Python source, the block above repeated with a different number in each copy.
fn generate_source(path: &Path, megabytes: u64, quotes: bool) -> std::io::Result<()> {
    let target = megabytes << 20;
    let mut out = BufWriter::with_capacity(1 << 20, File::create(path)?);
    let mut counter = CountingWriter {
        inner: &mut out,
        count: 0,
    };
    let block = if quotes { SOURCE_QUOTING } else { SOURCE_CLEAN };
    let mut copy = 0u64;
    while counter.count < target {
        let n = (copy % 4096 + 1).to_string();
        for line in block {
            writeln!(counter, "{}", line.replace("{n}", &n))?;
        }
        copy += 1;
    }
    counter.flush()
}

/// What `runs` runs of one command measured.
#[derive(Clone, Copy)]
struct Timing {
    /// Best wall-clock time (s).
    wall: f64,
    /// Least CPU time, user + system (s), via GNU time: steadier than the
    /// wall clock on a machine shared with other work.
    cpu: Option<f64>,
    /// Largest peak RSS (KiB) over all runs, via GNU time: a bound must
    /// hold on every run, not only on the fastest.
    rss: Option<u64>,
}

/// Runs a shell command line `runs` times.
fn time_shell(line: &str, runs: usize) -> Option<Timing> {
    let gnu_time = Path::new("/usr/bin/time").exists();
    let mut best: Option<Timing> = None;
    for _ in 0..runs {
        let mut cmd = if gnu_time {
            let mut c = Command::new("/usr/bin/time");
            c.args(["-f", "%U %S %M", "sh", "-c", line]);
            c
        } else {
            let mut c = Command::new("sh");
            c.args(["-c", line]);
            c
        };
        let start = Instant::now();
        let output = cmd
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .output()
            .ok()?;
        let wall = start.elapsed().as_secs_f64();
        // GNU time reports the largest RSS among the processes it waited
        // for (the biggest of a pipeline) and their summed CPU time.
        let stderr = String::from_utf8_lossy(&output.stderr);
        let fields: Vec<f64> = stderr
            .lines()
            .last()
            .unwrap_or("")
            .split_whitespace()
            .filter_map(|f| f.parse().ok())
            .collect();
        let (cpu, rss) = match fields.as_slice() {
            [user, system, rss] if gnu_time => (Some(user + system), Some(*rss as u64)),
            _ => (None, None),
        };
        best = Some(match best {
            None => Timing { wall, cpu, rss },
            Some(b) => Timing {
                wall: b.wall.min(wall),
                cpu: match (b.cpu, cpu) {
                    (Some(x), Some(y)) => Some(x.min(y)),
                    (x, y) => x.or(y),
                },
                rss: b.rss.max(rss),
            },
        });
    }
    best
}

/// The most a ratio may be: in wall-clock time, and in CPU time and
/// oomwhy's peak RSS (MiB) where given.
#[derive(Clone, Copy)]
struct Target {
    wall: f64,
    cpu: Option<f64>,
    rss_mib: Option<f64>,
}

impl Target {
    fn wall(wall: f64) -> Self {
        Target {
            wall,
            cpu: None,
            rss_mib: None,
        }
    }
}

fn have(program: &str) -> bool {
    Command::new(program)
        .arg("--version")
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .is_ok_and(|s| s.success())
}

/// Shell-quotes a path.
fn quote(path: &Path) -> String {
    format!("'{}'", path.to_string_lossy().replace('\'', "'\\''"))
}

/// The directory of DIR_LOGS logs, a quarter gzip, a quarter xz.
fn generate_dir(dir: &Path) {
    if dir.join("done").exists() {
        return;
    }
    eprintln!("generating {} ...", dir.display());
    let _ = fs::remove_dir_all(dir);
    fs::create_dir_all(dir).expect("create the log directory");
    for i in 0..DIR_LOGS {
        let plain = dir.join(format!("job{i:02}.log"));
        generate(&plain, DIR_LOG_MB, i + 1).expect("generate a log");
        let bytes = fs::read(&plain).expect("read a log");
        match i % 4 {
            1 => {
                let mut e = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::new(6));
                e.write_all(&bytes).expect("gzip");
                fs::write(plain.with_extension("log.gz"), e.finish().expect("gzip"))
                    .expect("write");
                fs::remove_file(&plain).expect("remove");
            }
            3 => {
                let mut e = liblzma::write::XzEncoder::new(Vec::new(), 3);
                e.write_all(&bytes).expect("xz");
                fs::write(plain.with_extension("log.xz"), e.finish().expect("xz")).expect("write");
                fs::remove_file(&plain).expect("remove");
            }
            _ => {}
        }
    }
    fs::write(dir.join("done"), "").expect("mark the directory done");
}

/// Generates `path` once with `write` (into a temporary name, renamed when
/// complete, so an interrupted run never leaves a short log behind).
fn generate_once(path: &Path, write: impl FnOnce(&Path) -> std::io::Result<()>) {
    if path.exists() {
        return;
    }
    eprintln!("generating {} ...", path.display());
    let tmp = path.with_extension("tmp");
    write(&tmp).expect("generate a log");
    fs::rename(&tmp, path).expect("rename the log");
}

/// The near-miss lines `tests/limits.sh` streams: its `NEAR='...'`
/// assignment, with the shell's `'"'"'` (a quote inside quotes) undone.
fn near_lines_of(script: &str) -> Option<String> {
    let start = script.find("NEAR='")? + "NEAR='".len();
    let mut out = String::new();
    let mut rest = &script[start..];
    loop {
        if let Some(after) = rest.strip_prefix("'\"'\"'") {
            out.push('\'');
            rest = after;
        } else if rest.starts_with('\'') {
            return Some(out);
        } else {
            let c = rest.chars().next()?;
            out.push(c);
            rest = &rest[c.len_utf8()..];
        }
    }
}

/// Whether the section named `name` was asked for (`OOMWHY_BENCH_ONLY`).
fn wanted(name: &str) -> bool {
    match std::env::var("OOMWHY_BENCH_ONLY") {
        Ok(only) if !only.trim().is_empty() => only.split(',').any(|s| s.trim() == name),
        _ => true,
    }
}

fn main() {
    // `cargo bench` passes --bench; nothing else is accepted.
    let env_number = |name: &str, default: u64| {
        std::env::var(name)
            .ok()
            .and_then(|v| v.parse().ok())
            .unwrap_or(default)
    };
    let megabytes = env_number("OOMWHY_BENCH_MB", 256);
    let near_mb = env_number("OOMWHY_BENCH_NEAR_MB", 96);
    let runs = env_number("OOMWHY_BENCH_RUNS", 5) as usize;
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
    let data_dir = root.join("target").join("bench-data");
    fs::create_dir_all(&data_dir).expect("create target/bench-data");
    let log = data_dir.join(format!("train-{megabytes}MiB.log"));
    let dir = data_dir.join(format!("logs-{DIR_LOGS}x{DIR_LOG_MB}MiB"));
    let near = |name: &str| data_dir.join(format!("{name}-{near_mb}MiB.log"));
    let (keras_warn, keras_clean) = (near("keras-bfc-warnings"), near("keras-clean"));
    let (source_quotes, source_clean) = (near("source-quoting-oom"), near("source-clean"));
    if wanted("near") {
        generate_once(&keras_warn, |p| generate_keras(p, near_mb, true));
        generate_once(&keras_clean, |p| generate_keras(p, near_mb, false));
        generate_once(&source_quotes, |p| generate_source(p, near_mb, true));
        generate_once(&source_clean, |p| generate_source(p, near_mb, false));
    }
    if wanted("log") || wanted("pipe") {
        generate_once(&log, |p| generate(p, megabytes, 0));
    }
    if wanted("tree") {
        generate_dir(&dir);
    }

    // Benchmark the release binary; build it if needed.
    let status = Command::new(env!("CARGO"))
        .args(["build", "--release", "--quiet", "--bin", "oomwhy"])
        .current_dir(&root)
        .status()
        .expect("run cargo build");
    assert!(status.success(), "cargo build --release failed");
    let oomwhy = quote(&root.join("target").join("release").join("oomwhy"));
    let (log_q, dir_q) = (quote(&log), quote(&dir));

    let rg = have("rg");
    let taskset = have("taskset");
    let load = fs::read_to_string("/proc/loadavg").unwrap_or_default();
    println!(
        "best of {runs} runs; {} cores; load average before: {}",
        std::thread::available_parallelism().map_or(1, |n| n.get()),
        load.split_whitespace()
            .take(3)
            .collect::<Vec<_>>()
            .join(" ")
    );
    if !rg {
        println!("rg (ripgrep) is not installed: the ratios to rg are not measured");
    }
    let rss =
        |r: Option<u64>| r.map_or("?".to_string(), |k| format!("{:.1} MiB", k as f64 / 1024.0));
    let cpu = |c: Option<f64>| c.map_or("?".to_string(), |c| format!("{c:.3} s"));
    println!("  {:<44} {:>9} {:>9} {:>11}", "", "wall", "CPU", "peak RSS");
    let row = |name: &str, t: Timing| {
        println!(
            "  {name:<44} {:>7.3} s {:>9} {:>11}",
            t.wall,
            cpu(t.cpu),
            rss(t.rss)
        );
    };
    // Prints a ratio against its targets (wall clock, and CPU time and
    // oomwhy's peak RSS where given), each marked met or MISSED.
    let ratio = |what: &str, ours: Timing, theirs: Option<Timing>, target: Target| {
        let Some(t) = theirs else { return };
        let verdict = |ok: bool| if ok { "met" } else { "MISSED" };
        let wall = ours.wall / t.wall;
        let mut line = format!(
            "  {what} = {wall:.2} wall-clock (target <= {:.2}: {})",
            target.wall,
            verdict(wall <= target.wall)
        );
        if let (Some(a), Some(b)) = (ours.cpu, t.cpu) {
            let by_cpu = a / b.max(1e-3);
            match target.cpu {
                Some(max) => line.push_str(&format!(
                    ", CPU time {by_cpu:.2} (target <= {max:.2}: {})",
                    verdict(by_cpu <= max)
                )),
                None => line.push_str(&format!(", CPU time {by_cpu:.2}")),
            }
        }
        if let (Some(max_mib), Some(kib)) = (target.rss_mib, ours.rss) {
            let mib = kib as f64 / 1024.0;
            line.push_str(&format!(
                ", peak RSS {mib:.1} MiB (target <= {max_mib:.0} MiB: {})",
                verdict(mib <= max_mib)
            ));
        }
        println!("{line}");
    };
    let time = |line: String| time_shell(&line, runs).expect("the command runs");
    // Warm the page cache so every tool reads from memory.
    let warm = |paths: &[&Path]| {
        for path in paths {
            let _ = time_shell(&format!("cat -- {} > /dev/null", quote(path)), 1);
        }
    };

    if wanted("near") {
        println!("\n(a) logs dense with near-misses against a clean log of the same size ({near_mb} MiB)");
        for (label, dense, clean) in [
            ("BFC warning every other line", &keras_warn, &keras_clean),
            ("source quoting OOM messages", &source_quotes, &source_clean),
        ] {
            warm(&[dense, clean]);
            let ours = time(format!("{oomwhy} --format json {}", quote(dense)));
            row(&format!("oomwhy: {label}"), ours);
            let base = time(format!("{oomwhy} --format json {}", quote(clean)));
            row("oomwhy: the clean log", base);
            ratio("near-miss / clean", ours, Some(base), Target::wall(3.0));
        }
        // The near-miss lines of `tests/limits.sh`, streamed as it does.
        let limits_mb = env_number("OOMWHY_BENCH_LIMITS_MB", 1024);
        let script = fs::read_to_string(root.join("tests").join("limits.sh")).unwrap_or_default();
        match near_lines_of(&script) {
            Some(lines) => {
                let file = data_dir.join("limits-near-lines.txt");
                fs::write(&file, lines).expect("write the near-miss lines");
                let bytes = limits_mb << 20;
                let line = format!(
                    "yes \"$(cat {})\" | head -c {bytes} | {oomwhy} --format json",
                    quote(&file)
                );
                let t = time_shell(&line, 1).expect("the command runs");
                row(
                    &format!("{limits_mb} MiB of tests/limits.sh's near-misses"),
                    t,
                );
                let target = 10.0 * limits_mb as f64 / 1024.0;
                println!(
                    "  in {:.2} s wall-clock (target <= {target:.1} s: {})",
                    t.wall,
                    if t.wall <= target { "met" } else { "MISSED" }
                );
            }
            None => println!("  tests/limits.sh has no NEAR lines: that case is not measured"),
        }
    }

    if wanted("log") {
        warm(&[&log]);
        println!("\n(b) one plain log: {} ({megabytes} MiB)", log.display());
        let ours = time(format!("{oomwhy} --format json {log_q}"));
        row("oomwhy --format json LOG", ours);
        let theirs = rg.then(|| time(format!("rg --no-mmap -c -e '{PHRASES}' {log_q}")));
        if let Some(t) = theirs {
            row("rg --no-mmap -c -e PHRASES LOG", t);
        }
        ratio(
            "oomwhy / rg, all cores",
            ours,
            theirs,
            Target {
                rss_mib: Some(16.0),
                ..Target::wall(1.0)
            },
        );
        if taskset {
            let ours = time(format!("taskset -c 0 {oomwhy} --format json {log_q}"));
            row("taskset -c 0 oomwhy --format json LOG", ours);
            let theirs = rg.then(|| {
                time(format!(
                    "taskset -c 0 rg --no-mmap -c -e '{PHRASES}' {log_q}"
                ))
            });
            if let Some(t) = theirs {
                row("taskset -c 0 rg --no-mmap -c -e PHRASES LOG", t);
            }
            ratio(
                "oomwhy / rg, one core",
                ours,
                theirs,
                Target {
                    wall: 1.2,
                    cpu: Some(1.2),
                    rss_mib: Some(16.0),
                },
            );
        } else {
            println!("  taskset is not installed: the one-core ratio is not measured");
        }
    }

    if wanted("tree") {
        println!(
            "\n(c) a tree of logs: {} ({DIR_LOGS} logs of {DIR_LOG_MB} MiB, half gzip/xz)",
            dir.display()
        );
        let _ = time_shell(&format!("cat {dir_q}/* > /dev/null"), 1);
        let ours = time(format!("{oomwhy} --format json {dir_q}"));
        row("oomwhy --format json DIR", ours);
        let theirs = rg.then(|| time(format!("rg -z -c -e '{PHRASES}' {dir_q}")));
        if let Some(t) = theirs {
            row("rg -z -c -e PHRASES DIR", t);
        }
        ratio(
            "oomwhy / rg",
            ours,
            theirs,
            Target {
                rss_mib: Some(64.0),
                ..Target::wall(1.0)
            },
        );
    }

    if wanted("pipe") {
        warm(&[&log]);
        println!("\n(d) a pipe");
        let ours = time(format!("cat {log_q} | {oomwhy} --format json"));
        row("cat LOG | oomwhy --format json", ours);
        let wc = time_shell(&format!("cat {log_q} | wc -l"), runs);
        if let Some(t) = wc {
            row("cat LOG | wc -l", t);
        }
        ratio("oomwhy / wc -l", ours, wc, Target::wall(1.1));
    }

    if wanted("paste") {
        let seed = quote(&root.join("fixtures").join("torch_reserved_era_seed.log"));
        if let Some(t) = time_shell(&format!("{oomwhy} {seed}"), runs.max(5)) {
            println!(
                "\none pasted message: {:.1} ms, peak RSS {}",
                t.wall * 1000.0,
                rss(t.rss)
            );
        }
    }
}
