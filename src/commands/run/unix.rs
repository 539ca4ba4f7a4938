//! Unix process plumbing for `oomwhy run`: one pipe for both streams, the
//! command's process group and signal forwarding.
//!
//! Which process group the command runs in decides who gets a signal:
//!
//! * Under a terminal (oomwhy is in the terminal's foreground process
//!   group), the command stays in oomwhy's group, so that it can read the
//!   terminal and job control keeps working. Ctrl-C, Ctrl-\ and a closed
//!   terminal then reach the command directly; oomwhy passes on only
//!   signals sent to its own PID by another process (`kill`), so each
//!   reaches the command once.
//! * Otherwise (a batch job, a container, a pipeline) the command gets a
//!   process group of its own, and every signal oomwhy receives is sent to
//!   that whole group: its DataLoader workers and launcher children too.
//!
//! A second SIGINT within [`ESCALATE_WITHIN`] of the first kills the
//! command's group (or the command) with SIGKILL.

use nix::fcntl::{fcntl, FcntlArg, FdFlag};
use nix::sys::signal::{kill, killpg, Signal};
use nix::unistd::{getpgrp, tcgetpgrp, Pid};
use oomwhy::i18n::{Lang, Msg};
use signal_hook::consts::{SIGHUP, SIGINT, SIGQUIT, SIGTERM, SIGUSR1, SIGUSR2};
use signal_hook::iterator::exfiltrator::origin::{Origin, WithOrigin};
use signal_hook::iterator::{Handle, SignalsInfo};
use signal_hook::low_level::siginfo::Cause;
use std::fs::File;
use std::io;
use std::os::fd::{AsFd, OwnedFd};
use std::os::unix::process::CommandExt;
use std::process::Command;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// The signals passed on to the command.
pub const FORWARDED: &[i32] = &[SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGUSR1, SIGUSR2];
/// A second SIGINT this soon after the first kills the command.
const ESCALATE_WITHIN: Duration = Duration::from_secs(2);

/// Whether our stdout and stderr are one file (`> log 2>&1`, one terminal, one pipe).
pub fn stdout_is_stderr() -> bool {
    let id = |fd: std::os::fd::BorrowedFd<'_>| {
        nix::sys::stat::fstat(fd)
            .ok()
            .map(|s| (s.st_dev, s.st_ino, s.st_rdev))
    };
    match (id(io::stdout().as_fd()), id(io::stderr().as_fd())) {
        (Some(out), Some(err)) => out == err,
        _ => false,
    }
}

/// A pipe whose ends are not inherited by the command: only the write end,
/// as its stdout and stderr, is.
pub fn pipe() -> io::Result<(File, OwnedFd)> {
    let (reader, writer) = nix::unistd::pipe()?;
    for fd in [&reader, &writer] {
        fcntl(fd, FcntlArg::F_SETFD(FdFlag::FD_CLOEXEC))?;
    }
    Ok((File::from(reader), writer))
}

/// The set of ignored signals (bit N − 1 for signal N), from Linux's
/// `/proc/self/status`; empty where that cannot be read.
fn ignored_signals() -> u64 {
    let Ok(status) = std::fs::read_to_string("/proc/self/status") else {
        return 0;
    };
    parse_ignored(&status)
}

/// Whether `signal` is ignored in this process now (Linux; elsewhere false).
pub fn signal_is_ignored(signal: i32) -> bool {
    is_ignored(ignored_signals(), signal)
}

fn parse_ignored(status: &str) -> u64 {
    status
        .lines()
        .find_map(|line| line.strip_prefix("SigIgn:"))
        .and_then(|mask| u64::from_str_radix(mask.trim(), 16).ok())
        .unwrap_or(0)
}

fn is_ignored(mask: u64, signal: i32) -> bool {
    u32::try_from(signal - 1)
        .ok()
        .and_then(|bit| mask.checked_shr(bit))
        .is_some_and(|m| m & 1 == 1)
}

/// Whether oomwhy runs in the foreground of a terminal.
fn in_terminal_foreground() -> bool {
    let ours = getpgrp();
    [
        io::stdin().as_fd(),
        io::stdout().as_fd(),
        io::stderr().as_fd(),
    ]
    .into_iter()
    .any(|fd| tcgetpgrp(fd).is_ok_and(|group| group == ours))
}

/// Receives the signals oomwhy is sent and passes them on to the command.
pub struct Forwarder {
    signals: SignalsInfo<WithOrigin>,
    /// The command has a process group of its own.
    own_group: bool,
    exited: Arc<AtomicBool>,
    escalated: Arc<AtomicBool>,
}

impl Forwarder {
    /// Takes over the forwarded signals (from now on they no longer stop
    /// oomwhy; one arriving before [`Forwarder::start`] waits for it) and
    /// sets up the command's process group.
    pub fn prepare(command: &mut Command) -> io::Result<Forwarder> {
        // A signal oomwhy was started with ignored (`nohup`, `cmd &` in a
        // script) stays ignored, so that the command inherits that too.
        let ignored = ignored_signals();
        let caught: Vec<i32> = FORWARDED
            .iter()
            .copied()
            .filter(|&signal| !is_ignored(ignored, signal))
            .collect();
        let signals = SignalsInfo::<WithOrigin>::new(&caught)?;
        let own_group = !in_terminal_foreground();
        if own_group {
            command.process_group(0);
        }
        Ok(Forwarder {
            signals,
            own_group,
            exited: Arc::new(AtomicBool::new(false)),
            escalated: Arc::new(AtomicBool::new(false)),
        })
    }

    /// Starts passing signals on to the command `pid` (and its group).
    pub fn start(self, pid: u32, lang: Lang) -> Forwarding {
        let handle = self.signals.handle();
        let forwarding = Forwarding {
            handle,
            exited: Arc::clone(&self.exited),
            escalated: Arc::clone(&self.escalated),
        };
        let own_group = self.own_group;
        let Ok(pid) = i32::try_from(pid).map(Pid::from_raw) else {
            return forwarding;
        };
        let mut signals = self.signals;
        let exited = self.exited;
        let escalated = self.escalated;
        let spawned = std::thread::Builder::new()
            .name("signals".into())
            .spawn(move || {
                let mut last_interrupt: Option<Instant> = None;
                for origin in signals.forever() {
                    let send = |signal: Signal| {
                        // After the command is reaped its PID may be reused;
                        // its group lives on while any member does.
                        if own_group {
                            let _ = killpg(pid, signal);
                        } else if !exited.load(Ordering::SeqCst) {
                            let _ = kill(pid, signal);
                        }
                    };
                    if origin.signal == SIGINT {
                        let now = Instant::now();
                        if last_interrupt.is_some_and(|t| now.duration_since(t) < ESCALATE_WITHIN) {
                            warn!("oomwhy: {}", Msg::InterruptedTwice.text(lang));
                            escalated.store(true, Ordering::SeqCst);
                            send(Signal::SIGKILL);
                            continue;
                        }
                        last_interrupt = Some(now);
                    }
                    if reached_the_command(&origin, own_group) {
                        continue;
                    }
                    if let Ok(signal) = Signal::try_from(origin.signal) {
                        send(signal);
                    }
                }
            });
        if spawned.is_err() {
            warn!("oomwhy: {}", Msg::NoSignalThread.text(lang));
        }
        forwarding
    }
}

/// Whether a signal already reached the command by itself: in the process
/// group it shares with oomwhy, anything but a signal a process sent to
/// oomwhy (the terminal's Ctrl-C comes from the kernel). Where the origin is
/// not known (macOS leaves it out), nothing is passed on twice.
fn reached_the_command(origin: &Origin, own_group: bool) -> bool {
    !own_group && !matches!(origin.cause, Cause::Sent(_))
}

/// A running [`Forwarder`].
pub struct Forwarding {
    handle: Handle,
    exited: Arc<AtomicBool>,
    escalated: Arc<AtomicBool>,
}

impl Forwarding {
    /// The command has exited: its PID is no longer its own.
    pub fn exited(&self) {
        self.exited.store(true, Ordering::SeqCst);
    }

    /// Whether oomwhy itself killed the command (a second interrupt).
    pub fn escalated(&self) -> bool {
        self.escalated.load(Ordering::SeqCst)
    }
}

impl Drop for Forwarding {
    fn drop(&mut self) {
        // The thread ends; signals that arrive later are still caught and
        // ignored while oomwhy writes its report.
        self.handle.close();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_the_ignored_signals() {
        let status =
            "Name:\toomwhy\nSigBlk:\t0000000000000000\nSigIgn:\t0000000000001001\nSigCgt:\t0\n";
        let mask = parse_ignored(status);
        assert!(is_ignored(mask, SIGHUP));
        assert!(is_ignored(mask, 13)); // SIGPIPE
        assert!(!is_ignored(mask, SIGINT) && !is_ignored(mask, SIGTERM));
        assert_eq!(parse_ignored("no such line"), 0);
    }
}
