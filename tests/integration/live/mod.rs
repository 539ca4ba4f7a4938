//! Driving the binary as a live process in tests: output read on threads,
//! every wait bounded, and the process groups of everything started killed
//! when the test ends, passed or failed.
#![allow(dead_code)] // each area uses a different subset

use nix::errno::Errno;
use nix::poll::{poll, PollFd, PollFlags, PollTimeout};
use nix::sys::signal::{kill, killpg, Signal};
use nix::unistd::Pid;
use std::io::{BufRead, BufReader, Read};
use std::os::fd::AsFd;
use std::os::unix::process::CommandExt;
use std::process::{Child, ChildStdout, Command, ExitStatus, Stdio};
use std::sync::mpsc;
use std::thread;
use std::time::{Duration, Instant};

/// Longest wait for something that should happen.
pub const PATIENCE: Duration = Duration::from_secs(20);

pub const SEED: &str = "RuntimeError: CUDA out of memory. Tried to allocate 2.00 GiB (GPU 0; 8.00 GiB total capacity; 6.32 GiB already allocated; 1.56 GiB free; 7.88 GiB reserved in total by PyTorch)";
pub const RUNTIME_OOM: &str = "RuntimeError: CUDA error: out of memory";
pub const ILLEGAL: &str = "RuntimeError: CUDA error: an illegal memory access was encountered";

/// The binary, with a fixed environment.
pub fn oomwhy() -> Command {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_oomwhy"));
    cmd.env_remove("NO_COLOR")
        .env_remove("PYTHONUNBUFFERED")
        .env("TERM", "dumb");
    cmd
}

/// Reads `from` line by line on a thread.
fn lines<R: Read + Send + 'static>(from: R) -> mpsc::Receiver<String> {
    let (tx, rx) = mpsc::channel();
    thread::spawn(move || {
        for line in BufReader::new(from).lines() {
            let Ok(line) = line else { return };
            if tx.send(line).is_err() {
                return;
            }
        }
    });
    rx
}

/// A started process in a process group of its own.
pub struct Live {
    pub child: Child,
    pub stdout: Option<mpsc::Receiver<String>>,
    pub stderr: Option<mpsc::Receiver<String>>,
    /// Lines read so far, for failure messages.
    pub seen: Vec<String>,
    /// Further process groups to kill at the end (the wrapped command's).
    pub groups: Vec<i32>,
}

impl Live {
    /// Starts `cmd` in its own process group with stdout and stderr piped
    /// (unless the caller set them) and stdin as given.
    pub fn start(cmd: &mut Command, stdin: Stdio) -> Live {
        let mut child = cmd
            .stdin(stdin)
            .process_group(0)
            .spawn()
            .expect("the binary starts");
        let stdout = child.stdout.take().map(lines);
        let stderr = child.stderr.take().map(lines);
        Live {
            child,
            stdout,
            stderr,
            seen: Vec::new(),
            groups: Vec::new(),
        }
    }

    /// Starts `cmd` like [`Live::start`] with both outputs piped, but hands
    /// its stdout back unread: the test is the reader (`| head -1`) and
    /// closes it when it likes (see [`first_line_within`]).
    pub fn with_raw_stdout(cmd: &mut Command, stdin: Stdio) -> (Live, ChildStdout) {
        let mut child = cmd
            .stdin(stdin)
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .process_group(0)
            .spawn()
            .expect("the binary starts");
        let stdout = child.stdout.take().expect("stdout is piped");
        let stderr = child.stderr.take().map(lines);
        let live = Live {
            child,
            stdout: None,
            stderr,
            seen: Vec::new(),
            groups: Vec::new(),
        };
        (live, stdout)
    }

    /// Starts `cmd` with both outputs piped.
    pub fn piped(cmd: &mut Command) -> Live {
        Live::start(
            cmd.stdout(Stdio::piped()).stderr(Stdio::piped()),
            Stdio::null(),
        )
    }

    pub fn pid(&self) -> Pid {
        Pid::from_raw(self.child.id() as i32)
    }

    /// Sends `signal` to the process itself (not its group).
    pub fn signal(&self, signal: Signal) {
        kill(self.pid(), signal).expect("the process is there");
    }

    /// Waits for a stdout line that satisfies `wanted` and returns it.
    pub fn stdout_line(&mut self, what: &str, wanted: impl Fn(&str) -> bool) -> String {
        match self.stdout_line_within(PATIENCE, wanted) {
            Some(line) => line,
            None => panic!("no stdout line: {what}; seen {:?}", self.seen),
        }
    }

    /// Waits at most `limit` for a stdout line that satisfies `wanted`.
    pub fn stdout_line_within(
        &mut self,
        limit: Duration,
        wanted: impl Fn(&str) -> bool,
    ) -> Option<String> {
        let rx = self.stdout.as_ref().expect("stdout is piped");
        let deadline = Instant::now() + limit;
        loop {
            let left = deadline.saturating_duration_since(Instant::now());
            let line = rx.recv_timeout(left).ok()?;
            self.seen.push(line.clone());
            if wanted(&line) {
                return Some(line);
            }
        }
    }

    /// Waits for the line `pid N` and registers N's process group.
    pub fn command_group(&mut self) -> i32 {
        let line = self.stdout_line("the command's pid", |l| l.starts_with("pid "));
        let pid: i32 = line[4..].trim().parse().expect("a pid");
        self.groups.push(pid);
        pid
    }

    /// Waits at most `limit` for the process to exit.
    pub fn exit_within(&mut self, limit: Duration) -> ExitStatus {
        let deadline = Instant::now() + limit;
        loop {
            if let Some(status) = self.child.try_wait().expect("try_wait") {
                return status;
            }
            if Instant::now() >= deadline {
                panic!("still running after {limit:?}; seen {:?}", self.seen);
            }
            // Fine enough to measure how soon a process exits.
            thread::sleep(Duration::from_millis(2));
        }
    }

    /// Whether the process is still running.
    pub fn running(&mut self) -> bool {
        self.child.try_wait().expect("try_wait").is_none()
    }

    /// Everything left on stdout and stderr (after the process exited).
    pub fn rest(&mut self) -> (Vec<String>, Vec<String>) {
        let drain = |rx: &Option<mpsc::Receiver<String>>| -> Vec<String> {
            let Some(rx) = rx else { return Vec::new() };
            let mut all = Vec::new();
            while let Ok(line) = rx.recv_timeout(Duration::from_secs(5)) {
                all.push(line);
            }
            all
        };
        (drain(&self.stdout), drain(&self.stderr))
    }
}

/// Reads what `head -1` reads: the first line, waiting at most `limit`;
/// `None` if no whole line came (the read end stays open either way).
pub fn first_line_within(out: &mut ChildStdout, limit: Duration) -> Option<String> {
    let deadline = Instant::now() + limit;
    let mut line = Vec::new();
    let mut buf = [0u8; 4096];
    loop {
        let left = deadline.saturating_duration_since(Instant::now());
        let timeout = PollTimeout::try_from(left).unwrap_or(PollTimeout::MAX);
        let mut fds = [PollFd::new(out.as_fd(), PollFlags::POLLIN)];
        match poll(&mut fds, timeout) {
            Ok(0) => return None,
            Ok(_) => {}
            Err(Errno::EINTR) => continue,
            Err(err) => panic!("cannot poll the output: {err}"),
        }
        let n = out.read(&mut buf).ok()?;
        if n == 0 {
            return None;
        }
        line.extend_from_slice(&buf[..n]);
        if let Some(end) = line.iter().position(|&b| b == b'\n') {
            return Some(String::from_utf8_lossy(&line[..end]).into_owned());
        }
    }
}

impl Drop for Live {
    fn drop(&mut self) {
        for group in &self.groups {
            let _ = killpg(Pid::from_raw(*group), Signal::SIGKILL);
        }
        let _ = killpg(self.pid(), Signal::SIGKILL);
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Runs a program under a pseudo-terminal of a given size (Python's `pty`),
/// reads what it shows until it exits and prints `status N`, then that.
/// Presses Ctrl-C once the terminal shows a given text (unless it is empty).
const PTY_SCREEN: &str = r#"
import fcntl, os, pty, select, signal, struct, sys, termios, time
rows, columns, interrupt_on = int(sys.argv[1]), int(sys.argv[2]), sys.argv[3].encode()
argv = sys.argv[4:]
pid, fd = pty.fork()
if pid == 0:
    fcntl.ioctl(1, termios.TIOCSWINSZ, struct.pack("HHHH", rows, columns, 0, 0))
    os.execv(argv[0], argv)
print("pid", pid, flush=True)
output, deadline = b"", time.time() + 20
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
        if interrupt_on and interrupt_on in output:
            os.write(fd, b"\x03")
            interrupt_on = b""
    reaped, status = os.waitpid(pid, os.WNOHANG)
    if reaped == 0 and time.time() < deadline:
        reaped, status = os.waitpid(pid, 0)
    code = os.waitstatus_to_exitcode(status) if reaped else "still running"
    print("status", code, flush=True)
    print(output.decode(errors="replace").replace("\r\n", "\n"), flush=True)
finally:
    try:
        os.killpg(pid, signal.SIGKILL)
    except OSError:
        pass
"#;

/// A terminal for [`on_a_terminal`].
pub struct Terminal<'a> {
    pub rows: u16,
    pub columns: u16,
    /// Ctrl-C is pressed once the terminal shows this (if not empty).
    pub interrupt_on: &'a str,
}

/// Runs the binary with `args` on `terminal`, with `TERM=xterm`, no PAGER,
/// LESS, COLUMNS or NO_COLOR unless `env` sets them; returns its exit
/// status (minus the signal's number if one killed it) and what the
/// terminal showed (both of its outputs).
pub fn on_a_terminal(
    args: &[&std::ffi::OsStr],
    env: &[(&str, &std::ffi::OsStr)],
    terminal: Terminal<'_>,
) -> (i32, String) {
    let mut driver = Command::new("python3");
    driver
        .args(["-c", PTY_SCREEN])
        .arg(terminal.rows.to_string())
        .arg(terminal.columns.to_string())
        .arg(terminal.interrupt_on)
        .arg(env!("CARGO_BIN_EXE_oomwhy"))
        .args(args)
        .env("TERM", "xterm");
    for name in ["PAGER", "LESS", "LV", "COLUMNS", "LINES", "NO_COLOR"] {
        driver.env_remove(name);
    }
    driver.envs(env.iter().copied());
    let mut run = Live::piped(&mut driver);
    run.command_group();
    let Some(status) = run.stdout_line_within(PATIENCE, |l| l.starts_with("status ")) else {
        let (_, err) = run.rest();
        panic!(
            "no status from the terminal; seen {:?}, stderr {err:?}",
            run.seen
        );
    };
    let status = status[7..]
        .trim()
        .parse()
        .unwrap_or_else(|_| panic!("{status}; seen {:?}", run.seen));
    let (screen, _) = run.rest();
    (status, screen.join("\n"))
}
