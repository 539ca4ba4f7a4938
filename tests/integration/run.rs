//! `oomwhy run` in front of real commands (sh and python3): signals, a
//! closed output, processes left behind, the order and buffering of output,
//! the exit status as evidence, reports and global options. Every wait is
//! bounded and every process group started is killed at the end.
#![cfg(unix)]

use crate::live::{first_line_within, oomwhy, Live, PATIENCE, RUNTIME_OOM, SEED};
use nix::sys::signal::Signal;
use serde_json::Value;
use std::fs;
use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::time::{Duration, Instant};

fn temp_dir(name: &str) -> PathBuf {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join(format!("run-{name}"));
    let _ = fs::remove_dir_all(&dir);
    fs::create_dir_all(&dir).unwrap();
    dir
}

/// Python that waits about 30 s in short sleeps. One long `time.sleep`
/// would race with the test: a signal that arrives after `ready` is
/// printed but before the sleep starts only sets Python's flag, and its
/// handler would run when the whole sleep is over.
const PY_WAIT: &str = "for _ in range(600): time.sleep(0.05)";

/// A Python script that prints `pid N` and `ready`, then waits; `setup`
/// installs handlers run when a signal arrives (`signum` is set).
fn python_waiting(setup: &str) -> Vec<String> {
    let script = format!(
        "import os, signal, sys, time\n{setup}\nprint('pid', os.getpid())\nprint('ready')\n{PY_WAIT}\nprint('slept through')\n"
    );
    vec!["python3".into(), "-c".into(), script]
}

/// Whether `signal` is ignored in this process (Linux: `SigIgn` in
/// /proc/self/status); elsewhere assumed not.
fn ignored_at_start(signal: Signal) -> bool {
    let Ok(status) = fs::read_to_string("/proc/self/status") else {
        return false;
    };
    status
        .lines()
        .find_map(|l| l.strip_prefix("SigIgn:"))
        .and_then(|mask| u64::from_str_radix(mask.trim(), 16).ok())
        .is_some_and(|mask| mask & (1 << (signal as i32 - 1)) != 0)
}

#[test]
fn every_forwarded_signal_reaches_the_command_and_oomwhy_waits() {
    let setup = "def on_signal(signum, frame):\n    time.sleep(0.3)\n    print('handled', signal.Signals(signum).name)\n    sys.exit(40 + signum)\nfor s in (signal.SIGTERM, signal.SIGHUP, signal.SIGQUIT, signal.SIGUSR1, signal.SIGUSR2):\n    signal.signal(s, on_signal)";
    for signal in [
        Signal::SIGTERM,
        Signal::SIGHUP,
        Signal::SIGQUIT,
        Signal::SIGUSR1,
        Signal::SIGUSR2,
    ] {
        // A signal this test was started with ignored (under `nohup`, say)
        // stays ignored for oomwhy and the command, as documented: nothing
        // to forward then.
        if ignored_at_start(signal) {
            eprintln!("{signal:?} is ignored in this test process: not checked");
            continue;
        }
        let mut run = Live::piped(oomwhy().arg("run").arg("--").args(python_waiting(setup)));
        run.command_group();
        run.stdout_line("ready", |l| l == "ready");
        run.signal(signal);
        let status = run.exit_within(PATIENCE);
        // oomwhy waited for the handler (0.3 s) and exits as the command did.
        assert_eq!(status.code(), Some(40 + signal as i32), "{signal:?}");
        let (out, _) = run.rest();
        assert!(
            out.contains(&format!("handled {}", signal.as_str())),
            "{signal:?}: {out:?}"
        );
    }
}

#[test]
fn ctrl_c_lets_the_command_save_its_checkpoint() {
    // The command catches KeyboardInterrupt, takes a while to save, and
    // prints after the interrupt: the pipe must still be there.
    let script = format!("import os, time\nprint('pid', os.getpid())\ntry:\n    print('ready')\n    {PY_WAIT}\nexcept KeyboardInterrupt:\n    time.sleep(0.5)\n    print('checkpoint saved')\n");
    let mut run = Live::piped(oomwhy().args(["run", "--", "python3", "-c", &script]));
    run.command_group();
    run.stdout_line("ready", |l| l == "ready");
    run.signal(Signal::SIGINT);
    let status = run.exit_within(PATIENCE);
    assert_eq!(status.code(), Some(0));
    let (out, _) = run.rest();
    assert_eq!(out, ["checkpoint saved"]);
}

/// Runs oomwhy under a pseudo-terminal (Python's `pty`), interrupts it
/// once the command is ready (`ctrl-c`: from the terminal; `kill`: SIGINT
/// to oomwhy's PID) and prints what came back and the status.
const PTY_DRIVER: &str = r#"
import os, pty, select, signal, sys, time
oomwhy, script, how = sys.argv[1], sys.argv[2], sys.argv[3]
pid, fd = pty.fork()
if pid == 0:
    os.execv(oomwhy, [oomwhy, "run", "--", sys.executable, "-c", script])
print("pid", pid, flush=True)
output, pressed, deadline = b"", False, time.time() + 20
try:
    while time.time() < deadline:
        ready, _, _ = select.select([fd], [], [], 0.1)
        if ready:
            try:
                chunk = os.read(fd, 4096)
            except OSError:
                break
            if not chunk:
                break
            output += chunk
        if not pressed and b"ready" in output:
            if how == "ctrl-c":
                os.write(fd, b"\x03")
            else:
                os.kill(pid, signal.SIGINT)
            pressed = True
    _, status = os.waitpid(pid, os.WNOHANG)
    if status == 0 and time.time() < deadline:
        _, status = os.waitpid(pid, 0)
    print("status", os.waitstatus_to_exitcode(status), flush=True)
    print(output.decode(errors="replace").replace("\r\n", "\n"), flush=True)
finally:
    try:
        os.killpg(pid, signal.SIGKILL)
    except OSError:
        pass
"#;

#[test]
fn under_a_terminal_an_interrupt_reaches_the_command_once() {
    // The command counts the interrupts that arrive while it saves.
    let script = &format!("import signal, sys, time\ncount = 0\ndef on_int(*_):\n    global count\n    count += 1\ntry:\n    print('ready')\n    {PY_WAIT}\nexcept KeyboardInterrupt:\n    signal.signal(signal.SIGINT, on_int)\n    time.sleep(1)\n    print('interrupts after the first:', count)\n    sys.exit(5)\n");
    // From the terminal, SIGINT reaches the command directly and is not
    // passed on again; sent to oomwhy's PID, it is passed on. Once each way.
    for how in ["ctrl-c", "kill"] {
        let mut run = Live::piped(
            std::process::Command::new("python3")
                .args(["-c", PTY_DRIVER, env!("CARGO_BIN_EXE_oomwhy"), script, how])
                .env_remove("PYTHONUNBUFFERED"),
        );
        run.command_group();
        let status = run.stdout_line("the status", |l| l.starts_with("status "));
        let (out, _) = run.rest();
        assert_eq!(status, "status 5", "{how}: {out:?}");
        assert!(
            // The terminal echoes `^C` in front of it.
            out.iter()
                .any(|l| l.ends_with("interrupts after the first: 0")),
            "{how}: {out:?}"
        );
    }
}

#[test]
fn a_signal_ignored_like_nohup_stays_ignored() {
    // `nohup oomwhy run -- CMD`: SIGHUP is ignored for oomwhy, so it must be
    // for the command too, and a hangup must not be passed on.
    let script = "import os, signal, time\nprint('pid', os.getpid())\nprint('hup ignored:', signal.getsignal(signal.SIGHUP) == signal.SIG_IGN)\ntime.sleep(1)\nprint('still here')\n";
    let wrapper = format!(
        "trap '' HUP; exec '{}' run -- python3 -c \"{script}\"",
        env!("CARGO_BIN_EXE_oomwhy")
    );
    let mut run = Live::piped(
        std::process::Command::new("sh")
            .args(["-c", &wrapper])
            .env_remove("PYTHONUNBUFFERED"),
    );
    run.command_group();
    run.stdout_line("the disposition", |l| l == "hup ignored: True");
    run.signal(Signal::SIGHUP);
    assert_eq!(run.exit_within(PATIENCE).code(), Some(0));
    let (out, _) = run.rest();
    assert_eq!(out, ["still here"]);
}

#[test]
fn a_signal_death_is_passed_on_as_128_plus_n() {
    let mut run = Live::piped(oomwhy().arg("run").arg("--").args(python_waiting("")));
    run.command_group();
    run.stdout_line("ready", |l| l == "ready");
    run.signal(Signal::SIGTERM);
    assert_eq!(run.exit_within(PATIENCE).code(), Some(143));
    let (_, err) = run.rest();
    assert!(
        err.iter().any(|l| l.contains("signal 15 (SIGTERM")),
        "{err:?}"
    );
}

#[test]
fn a_second_interrupt_kills_the_command() {
    let setup = "signal.signal(signal.SIGINT, signal.SIG_IGN)";
    let mut run = Live::piped(oomwhy().arg("run").arg("--").args(python_waiting(setup)));
    run.command_group();
    run.stdout_line("ready", |l| l == "ready");
    run.signal(Signal::SIGINT);
    std::thread::sleep(Duration::from_millis(200));
    run.signal(Signal::SIGINT);
    assert_eq!(run.exit_within(PATIENCE).code(), Some(137));
    let (_, err) = run.rest();
    let err = err.join("\n");
    assert!(err.contains("interrupted twice"), "{err}");
    // oomwhy's own SIGKILL is not taken for the out-of-memory killer's.
    assert!(!err.contains("host_oom_killed"), "{err}");
    assert!(!err.contains("most likely by the kernel"), "{err}");
}

#[test]
fn signals_reach_the_commands_own_children() {
    // A launcher (sh) that ignores SIGTERM and waits for its worker: the
    // worker gets the signal too, as it would from a job scheduler.
    let worker = format!("import signal, sys, time\ndef on_term(*_):\n    print('worker stopped', flush=True)\n    sys.exit(3)\nsignal.signal(signal.SIGTERM, on_term)\nprint('ready', flush=True)\n{PY_WAIT}\n");
    let launcher = format!("trap '' TERM; echo pid $$; python3 -c \"{worker}\" & wait $!");
    let mut run = Live::piped(oomwhy().args(["run", "--", "sh", "-c", &launcher]));
    run.command_group();
    run.stdout_line("ready", |l| l == "ready");
    run.signal(Signal::SIGTERM);
    assert_eq!(run.exit_within(PATIENCE).code(), Some(3));
    let (out, _) = run.rest();
    assert_eq!(out, ["worker stopped"]);
}

#[test]
fn a_closed_output_stops_the_command() {
    // `oomwhy run -- CMD | head -1`: once the reader is gone the command
    // must see a closed pipe and oomwhy must end.
    let mut run = Live::piped(oomwhy().args([
        "run",
        "--",
        "sh",
        "-c",
        "echo pid $$; while :; do echo line; done",
    ]));
    run.command_group();
    run.stdout_line("a line", |l| l == "line");
    run.stdout = None; // closes our end of oomwhy's stdout
    let status = run.exit_within(PATIENCE);
    // sh died of SIGPIPE, as without oomwhy; that is no crash to report.
    assert_eq!(status.code(), Some(141));
    let (_, err) = run.rest();
    assert!(err.is_empty(), "{err:?}");
}

#[test]
fn a_quiet_command_has_its_output_closed_as_soon_as_the_reader_goes() {
    // `oomwhy run -- CMD | head -1` where CMD then prints nothing for a
    // long time: its pipe is closed at once, not at its next write, so that
    // write fails as it would without oomwhy. The command watches its own
    // stdout for that (poll: POLLERR when nobody reads it), tries a write,
    // and says on stderr, which oomwhy still passes on, what happened.
    let script = "import os, select, sys\np = select.poll()\np.register(1, 0)\nprint('pid', os.getpid())\nclosed = p.poll(20000)\ntry:\n    print('late')\n    sys.stderr.write('the late write worked\\n')\nexcept BrokenPipeError:\n    sys.stderr.write('the late write met a closed pipe\\n')\nsys.stderr.flush()\nos._exit(7 if closed else 8)\n";
    let (mut run, mut out) = Live::with_raw_stdout(
        oomwhy().args(["run", "--", "python3", "-c", script]),
        Stdio::null(),
    );
    let pid = first_line_within(&mut out, PATIENCE).expect("the command's pid");
    run.groups.push(pid[4..].trim().parse().expect("a pid"));
    drop(out);
    let closed = Instant::now();
    let status = run.exit_within(PATIENCE);
    eprintln!(
        "oomwhy run exited {:?} after its reader closed",
        closed.elapsed()
    );
    // 7: the command saw its pipe closed while it was quiet (8: it waited
    // 20 s in vain); oomwhy waited for it and exits as it did.
    assert_eq!(status.code(), Some(7));
    let (_, err) = run.rest();
    assert!(
        err.iter().any(|l| l == "the late write met a closed pipe"),
        "{err:?}"
    );
}

#[test]
fn processes_left_running_do_not_keep_oomwhy_waiting() {
    let started = Instant::now();
    let mut run = Live::piped(oomwhy().args([
        "run",
        "--",
        "sh",
        "-c",
        "echo pid $$; sleep 60 & echo started; exit 3",
    ]));
    run.command_group();
    assert_eq!(run.exit_within(PATIENCE).code(), Some(3));
    // The grace period is a few seconds at most, far less than the sleep.
    assert!(started.elapsed() < Duration::from_secs(30));
    let (out, _) = run.rest();
    assert_eq!(out, ["started"]);
}

#[test]
fn one_file_for_both_streams_keeps_their_order() {
    let dir = temp_dir("order");
    let log = dir.join("both.log");
    let file = fs::File::create(&log).unwrap();
    let script = "i=0; while [ $i -lt 300 ]; do echo out$i; echo err$i >&2; i=$((i+1)); done";
    let mut run = Live::start(
        oomwhy()
            .args(["run", "--", "sh", "-c", script])
            .stdout(file.try_clone().unwrap())
            .stderr(file),
        Stdio::null(),
    );
    assert_eq!(run.exit_within(PATIENCE).code(), Some(0));
    let expected: String = (0..300).map(|i| format!("out{i}\nerr{i}\n")).collect();
    assert_eq!(fs::read_to_string(&log).unwrap(), expected);

    // Two files: each stream stays in its own.
    let (out_log, err_log) = (dir.join("out.log"), dir.join("err.log"));
    let mut run = Live::start(
        oomwhy()
            .args(["run", "--", "sh", "-c", script])
            .stdout(fs::File::create(&out_log).unwrap())
            .stderr(fs::File::create(&err_log).unwrap()),
        Stdio::null(),
    );
    assert_eq!(run.exit_within(PATIENCE).code(), Some(0));
    let only = |prefix: &str| -> String { (0..300).map(|i| format!("{prefix}{i}\n")).collect() };
    assert_eq!(fs::read_to_string(&out_log).unwrap(), only("out"));
    assert_eq!(fs::read_to_string(&err_log).unwrap(), only("err"));
}

#[test]
fn python_output_arrives_while_it_runs() {
    let script = "import os, time\nprint('pid', os.getpid())\nprint('unbuffered:', os.environ.get('PYTHONUNBUFFERED'))\ntime.sleep(30)\n";
    // No flush in the script: the line comes only because Python runs unbuffered.
    let mut run = Live::piped(oomwhy().args(["run", "--", "python3", "-c", script]));
    run.command_group();
    run.stdout_line("the setting", |l| l == "unbuffered: 1");

    // A value the user chose is kept.
    let mut run = Live::piped(
        oomwhy()
            .env("PYTHONUNBUFFERED", "x")
            .args(["run", "--", "python3", "-c", script]),
    );
    run.command_group();
    run.stdout_line("the user's setting", |l| l == "unbuffered: x");
}

#[test]
fn a_counter_on_stdout_belongs_to_the_traceback_on_stderr() {
    let dir = temp_dir("counter");
    let report = dir.join("report.json");
    // Two pipes order lines by arrival: the pause stands for the time a
    // training step takes (lines microseconds apart may swap).
    let script = format!(
        "import sys, time\nfor step in range(1, 13):\n    print(f'step {{step}} loss 0.5')\ntime.sleep(0.3)\nprint('''Traceback (most recent call last):\n  File \"train.py\", line 88, in <module>\n    loss.backward()\n{SEED}''', file=sys.stderr)\nsys.exit(1)\n"
    );
    let mut run = Live::piped(
        oomwhy()
            .args(["run", "--format", "json", "--report"])
            .arg(&report)
            .args(["--", "python3", "-c", &script]),
    );
    assert_eq!(run.exit_within(PATIENCE).code(), Some(1));
    let json: Value = serde_json::from_str(&fs::read_to_string(&report).unwrap()).unwrap();
    let finding = &json["findings"][0];
    assert_eq!(finding["kind"], "torch_allocator_oom");
    assert_eq!(finding["source"]["input"], "<output>");
    assert_eq!(finding["last_step"], 12, "{finding}");
    assert_eq!(finding["phase"]["name"], "backward", "{finding}");
}

/// Runs `oomwhy --format json run --report PATH -- sh -c SCRIPT`, checks
/// its exit status and returns the report.
fn json_report_of(name: &str, script: &str, status: i32) -> Value {
    let report = temp_dir(name).join("report.json");
    let mut run = Live::piped(
        oomwhy()
            .args(["--format", "json", "run", "--report"])
            .arg(&report)
            .args(["--", "sh", "-c", script]),
    );
    assert_eq!(run.exit_within(PATIENCE).code(), Some(status));
    serde_json::from_str(&fs::read_to_string(&report).unwrap()).unwrap()
}

/// Runs `oomwhy run -- sh -c SCRIPT` (text), checks its exit status and
/// returns what it wrote on standard error.
fn text_stderr_of(script: &str, status: i32) -> String {
    let mut run = Live::piped(oomwhy().args(["run", "--", "sh", "-c", script]));
    assert_eq!(run.exit_within(PATIENCE).code(), Some(status));
    run.rest().1.join("\n")
}

#[test]
fn a_sigkill_death_is_a_likely_oom_finding() {
    let json = json_report_of("sigkill", "echo step 7; kill -9 $$", 137);
    let finding = &json["findings"][0];
    assert_eq!(finding["kind"], "host_oom_killed");
    assert_eq!(finding["category"], "likely_oom");
    assert_eq!(finding["source"]["input"], "<exit status>");
    assert_eq!(finding["facts"]["signal"], "SIGKILL (9)");
    assert_eq!(finding["facts"]["process"], "sh");
    assert_eq!(
        finding["diagnosis"]["verdicts"][0]["code"],
        "killed_by_sigkill"
    );
    assert_eq!(json["summary"]["likely_oom"], 1);

    // In text, the finding is explained on stderr.
    let err = text_stderr_of("kill -9 $$", 137);
    assert!(
        err.contains("More: oomwhy explain host_oom_killed"),
        "{err}"
    );
    assert!(err.contains("1 finding: 1 likely out-of-memory"), "{err}");
}

#[test]
fn a_crash_signal_death_is_a_fatal_signal_finding() {
    let json = json_report_of("sigsegv", "kill -SEGV $$", 139);
    let finding = &json["findings"][0];
    assert_eq!(finding["kind"], "fatal_signal");
    assert_eq!(finding["category"], "crash");
    assert_eq!(finding["source"]["input"], "<exit status>");
    assert_eq!(finding["facts"]["signal"], "SIGSEGV (11)");
    assert_eq!(finding["diagnosis"]["verdicts"][0]["code"], "native_crash");

    // In text, the signal is named and explained on stderr.
    let err = text_stderr_of("kill -SEGV $$", 139);
    assert!(err.contains("signal 11 (SIGSEGV"), "{err}");
    assert!(err.contains("More: oomwhy explain fatal_signal"), "{err}");
}

#[test]
fn machine_readable_reports_need_a_path() {
    let dir = temp_dir("report_path");
    let marker = dir.join("ran");
    for format in ["json", "ndjson"] {
        let mut run = Live::piped(
            oomwhy()
                .args(["run", "--format", format, "--", "touch"])
                .arg(&marker),
        );
        assert_eq!(run.exit_within(PATIENCE).code(), Some(2));
        let (out, err) = run.rest();
        assert!(out.is_empty());
        assert!(err.join("\n").contains("needs --report PATH"), "{err:?}");
        assert!(!marker.exists(), "the command must not run");
    }
}

#[test]
fn a_report_that_cannot_be_written_is_an_error() {
    if !Path::new("/dev/full").exists() {
        return;
    }
    let script = format!("echo '{RUNTIME_OOM}' >&2; exit 5");
    for (code, expected) in [("5", 5), ("0", 2)] {
        let script = script.replace("exit 5", &format!("exit {code}"));
        let mut run = Live::piped(oomwhy().args([
            "run",
            "--format",
            "json",
            "--report",
            "/dev/full",
            "--",
            "sh",
            "-c",
            &script,
        ]));
        assert_eq!(run.exit_within(PATIENCE).code(), Some(expected));
        let (_, err) = run.rest();
        assert!(
            err.iter().any(|l| l.contains("cannot write the report")),
            "{err:?}"
        );
    }
}

#[test]
fn output_that_cannot_be_passed_on_is_an_error() {
    if !Path::new("/dev/full").exists() {
        return;
    }
    for (code, expected) in [("0", 2), ("6", 6)] {
        let mut run = Live::start(
            oomwhy()
                .args(["run", "--", "sh", "-c", &format!("echo hi; exit {code}")])
                .stdout(
                    fs::OpenOptions::new()
                        .write(true)
                        .open("/dev/full")
                        .unwrap(),
                )
                .stderr(Stdio::piped()),
            Stdio::null(),
        );
        assert_eq!(run.exit_within(PATIENCE).code(), Some(expected));
        let (_, err) = run.rest();
        assert!(
            err.iter()
                .any(|l| l.contains("cannot pass the command's output on")),
            "{err:?}"
        );
    }
}

#[test]
fn completions_to_a_full_disk_fail_cleanly() {
    if !Path::new("/dev/full").exists() {
        return;
    }
    let mut run = Live::start(
        oomwhy()
            .args(["completions", "bash"])
            .stdout(
                fs::OpenOptions::new()
                    .write(true)
                    .open("/dev/full")
                    .unwrap(),
            )
            .stderr(Stdio::piped()),
        Stdio::null(),
    );
    assert_eq!(run.exit_within(PATIENCE).code(), Some(2));
    let (_, err) = run.rest();
    assert!(
        err.iter().any(|l| l.contains("cannot write the output")),
        "{err:?}"
    );
}

#[test]
fn global_options_go_before_the_subcommand() {
    let mut run = Live::piped(oomwhy().args([
        "--quiet",
        "run",
        "--",
        "sh",
        "-c",
        &format!("echo '{RUNTIME_OOM}' >&2; exit 4"),
    ]));
    assert_eq!(run.exit_within(PATIENCE).code(), Some(4));
    let (_, err) = run.rest();
    assert_eq!(err, [RUNTIME_OOM], "quiet: only the command's own output");

    let mut run = Live::piped(oomwhy().args(["--color", "never", "explain", "fragmentation"]));
    assert_eq!(run.exit_within(PATIENCE).code(), Some(0));

    let mut run = Live::piped(oomwhy().args(["--follow", "run", "--", "true"]));
    assert_eq!(run.exit_within(PATIENCE).code(), Some(2));
}
