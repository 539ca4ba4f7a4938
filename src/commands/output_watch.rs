//! Noticing that nobody reads our output any more while there is nothing to
//! write. A live mode (`oomwhy --follow log | head -1`) would otherwise only
//! find out at its next write, which on a quiet log may be never; `tail -f`
//! exits at once. `poll(2)` asked for no events still reports POLLERR on the
//! write end of a pipe whose reader has closed (Linux), POLLHUP there on
//! FreeBSD, and POLLHUP on a socket whose peer has gone, and wakes for
//! nothing else.

use std::io;
use std::time::{Duration, Instant};

/// Which of our output streams to watch.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Output {
    Stdout,
    Stderr,
}

/// What [`OutputWatch::wait_for_input`] found.
#[cfg(unix)]
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Ready {
    /// The input has bytes, reached its end or failed: read it.
    Input,
    /// Our output's reader has gone.
    OutputClosed,
}

/// Watches one of our output streams for its reader going away.
#[derive(Debug, Clone, Copy)]
pub struct OutputWatch {
    output: Output,
    /// Only a pipe or a socket loses its reader: a terminal that goes away
    /// sends SIGHUP, and a file or `/dev/null` is never closed under us.
    watched: bool,
}

impl OutputWatch {
    /// Watches `output` if it is a pipe or a socket.
    pub fn new(output: Output) -> Self {
        OutputWatch {
            output,
            watched: can_lose_its_reader(output),
        }
    }

    /// Whether the reader has gone, without waiting.
    pub fn is_closed(&self) -> bool {
        self.sleep(Duration::ZERO)
    }

    /// Waits `duration`, or less if the reader goes away meanwhile; returns
    /// whether it has gone.
    pub fn sleep(&self, duration: Duration) -> bool {
        if !self.watched {
            std::thread::sleep(duration);
            return false;
        }
        #[cfg(unix)]
        {
            self.wait(None, duration) == Some(Ready::OutputClosed)
        }
        #[cfg(not(unix))]
        {
            false
        }
    }

    /// Blocks until `input` can be read (bytes, its end or an error) or
    /// our output's reader has gone, whichever comes first; when both, the
    /// closed output wins, since what is read could not be passed on.
    #[cfg(unix)]
    pub fn wait_for_input(&self, input: std::os::fd::BorrowedFd<'_>) -> Ready {
        // With no timeout, nothing but a ready descriptor ends the wait.
        self.wait(Some(input), Duration::MAX)
            .unwrap_or(Ready::Input)
    }

    /// Polls our output (if watched) and `input` (if any) for up to
    /// `limit`; `None` when nothing happened in that time.
    #[cfg(unix)]
    fn wait(&self, input: Option<std::os::fd::BorrowedFd<'_>>, limit: Duration) -> Option<Ready> {
        use nix::errno::Errno;
        use nix::poll::{poll, PollFd, PollFlags, PollTimeout};
        use std::os::fd::AsFd;

        let (stdout, stderr) = (io::stdout(), io::stderr());
        let output = match self.output {
            Output::Stdout => stdout.as_fd(),
            Output::Stderr => stderr.as_fd(),
        };
        let deadline = Instant::now().checked_add(limit);
        loop {
            let left = deadline.map(|d| d.saturating_duration_since(Instant::now()));
            let timeout = match left {
                // Far enough away to be "never", or beyond poll's range.
                None => PollTimeout::NONE,
                Some(left) => PollTimeout::try_from(left).unwrap_or(PollTimeout::MAX),
            };
            let mut fds = Vec::with_capacity(2);
            if self.watched {
                fds.push(PollFd::new(output, PollFlags::empty()));
            }
            if let Some(input) = input {
                fds.push(PollFd::new(input, PollFlags::POLLIN));
            }
            match poll(&mut fds, timeout) {
                Ok(0) => return None,
                Ok(_) => {}
                // A caught signal (`oomwhy run` forwards them): wait on.
                Err(Errno::EINTR) => continue,
                // Polling failed: let the caller read (and fail) as before.
                Err(_) => return input.map(|_| Ready::Input),
            }
            // Asked for no events, the output reports only POLLERR, POLLHUP
            // or POLLNVAL (no longer open): each means it is gone. Flags
            // nix does not know count as fired, so that no wait spins.
            let fired = |fd: &PollFd<'_>| fd.revents().is_none_or(|revents| !revents.is_empty());
            let mut fds = fds.iter();
            if self.watched && fds.next().is_some_and(fired) {
                return Some(Ready::OutputClosed);
            }
            return match fds.next() {
                Some(fd) if fired(fd) => Some(Ready::Input),
                _ => None,
            };
        }
    }
}

/// Whether `output` is a pipe or a socket.
#[cfg(unix)]
fn can_lose_its_reader(output: Output) -> bool {
    use nix::sys::stat::{fstat, SFlag};
    use std::os::fd::AsFd;
    let stat = match output {
        Output::Stdout => fstat(io::stdout().as_fd()),
        Output::Stderr => fstat(io::stderr().as_fd()),
    };
    stat.is_ok_and(|stat| {
        let kind = SFlag::from_bits_truncate(stat.st_mode) & SFlag::S_IFMT;
        kind == SFlag::S_IFIFO || kind == SFlag::S_IFSOCK
    })
}

#[cfg(not(unix))]
fn can_lose_its_reader(_: Output) -> bool {
    false
}

/// The error a live mode stops with when its reader has gone: a broken
/// pipe, which ends the command quietly like a failed write to it would.
pub fn reader_gone() -> io::Error {
    io::Error::new(
        io::ErrorKind::BrokenPipe,
        "the reader of the output has gone",
    )
}
