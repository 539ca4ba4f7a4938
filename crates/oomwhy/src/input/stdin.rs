//! Standard input, read so that the end of input counts once.
//!
//! On a terminal, Ctrl-D makes one `read` return 0 and the next `read` waits
//! for more typing. The layers of the front door (sniffing, decompressing,
//! routing, scanning) each read until they see 0, so without a latch a user
//! had to press Ctrl-D once per layer. After the first 0 this reader returns
//! 0 for good; on a pipe or a file, where the end is final anyway, that
//! changes nothing.

use std::io::{self, Read};
use std::sync::atomic::{AtomicBool, Ordering};

/// Whether the last byte read from standard input was not a newline: a
/// paste typed to a terminal ended mid-line, and the report should start on
/// a line of its own. Standard input is one per process, and so is this.
static ENDED_MID_LINE: AtomicBool = AtomicBool::new(false);

/// Standard input with its end latched (see the module's documentation).
pub(super) struct Stdin {
    inner: io::Stdin,
    ended: bool,
}

impl Stdin {
    pub(super) fn new(inner: io::Stdin) -> Self {
        Stdin {
            inner,
            ended: false,
        }
    }
}

impl Read for Stdin {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        if self.ended || buf.is_empty() {
            return Ok(0);
        }
        let n = self.inner.read(buf)?;
        match buf[..n].last() {
            None => self.ended = true,
            Some(&last) => ENDED_MID_LINE.store(last != b'\n', Ordering::Relaxed),
        }
        Ok(n)
    }
}

/// True when the bytes read from standard input so far end without a
/// newline. The command checks it after a paste to a terminal, so that its
/// report does not start on the line the paste left unfinished.
pub fn stdin_ended_mid_line() -> bool {
    ENDED_MID_LINE.load(Ordering::Relaxed)
}
