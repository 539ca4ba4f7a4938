//! Paging a tall text report on a terminal, as git does. One finding's
//! report runs to about 80–95 lines: printed straight to a terminal, its
//! first lines, the answer (headline, why, first fix), scroll away.
//!
//! When standard output is a terminal and the report does not fit in its
//! window, the report goes through `$PAGER`, or `less`, with `LESS=FRX` set
//! when `LESS` is not (git's default, also `LV=-c` for `lv`): less then
//! opens at the top, keeps the colours (`-R`), leaves the text on the screen
//! when it quits (`-X`) and quits by itself if the text fits after all
//! (`-F`). An empty `PAGER` or `PAGER=cat` means no pager, as for git. Never
//! for output that is not a terminal, a dumb terminal (`TERM=dumb`: an
//! editor's shell), with `--no-pager`, or in a live mode (`--follow`, `run`:
//! they do not come here). A pager that cannot be started leaves the report
//! printed directly.

use std::ffi::{OsStr, OsString};
use std::io::{self, IsTerminal, Write};
use std::process::{Command, Stdio};

/// The terminal standard output is, if it is one and its size is known.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Window {
    pub rows: usize,
    pub columns: usize,
}

impl Window {
    fn of_stdout() -> Option<Window> {
        let stdout = io::stdout();
        if !stdout.is_terminal() {
            return None;
        }
        let (width, height) = terminal_size::terminal_size_of(stdout)?;
        Some(Window {
            rows: usize::from(height.0),
            columns: usize::from(width.0),
        })
    }
}

/// Whether a report `report_rows` rows tall goes through a pager: not when
/// paging is `disabled` (`--no-pager`, `TERM=dumb`, no pager configured),
/// nor when the output is not a terminal (`window` is `None`), nor when it
/// fits above the prompt that follows it (one row less than the window).
pub fn should_page(disabled: bool, window: Option<Window>, report_rows: usize) -> bool {
    !disabled && window.is_some_and(|window| report_rows >= window.rows)
}

/// The pager's command line: `$PAGER`, else `less`. `None` when `PAGER` is
/// set to nothing or to `cat`: git's ways of saying "no pager".
pub fn pager_command(pager: Option<&OsStr>) -> Option<OsString> {
    match pager {
        None => Some("less".into()),
        Some(pager) => {
            let trimmed = pager.to_str().map(str::trim);
            if pager.is_empty() || trimmed == Some("") || trimmed == Some("cat") {
                None
            } else {
                Some(pager.to_os_string())
            }
        }
    }
}

/// The variables set for the pager where the user has not set them, as git
/// does: `LESS=FRX` (see the top of this file) and `LV=-c` (colours in lv).
pub fn pager_env(get: impl Fn(&str) -> Option<OsString>) -> Vec<(&'static str, &'static str)> {
    [("LESS", "FRX"), ("LV", "-c")]
        .into_iter()
        .filter(|(name, _)| get(name).is_none())
        .collect()
}

/// How many rows `text` takes on a terminal `columns` wide: one per line,
/// more for a line wider than the terminal (colour codes take no room).
pub fn rows(text: &str, columns: usize) -> usize {
    let columns = columns.max(1);
    text.lines()
        .map(|line| visible_width(line).div_ceil(columns).max(1))
        .sum()
}

/// The width of `line` on a terminal, without its colour codes (CSI
/// sequences: ESC `[`, parameters, a final byte from `@` to `~`).
fn visible_width(line: &str) -> usize {
    use unicode_width::UnicodeWidthChar;
    let mut width = 0;
    let mut chars = line.chars();
    while let Some(c) = chars.next() {
        if c == '\x1b' {
            if chars.next() == Some('[') {
                for c in chars.by_ref() {
                    if ('@'..='~').contains(&c) {
                        break;
                    }
                }
            }
            continue;
        }
        width += c.width().unwrap_or(0);
    }
    width
}

/// Writes a text report, drawn by `render`, to standard output: through
/// the pager when [`should_page`] says so, else directly.
pub fn write_report(
    no_pager: bool,
    render: impl FnOnce(&mut dyn Write) -> io::Result<()>,
) -> io::Result<()> {
    let command = pager_command(std::env::var_os("PAGER").as_deref());
    let dumb = std::env::var_os("TERM").is_some_and(|term| term == "dumb");
    let disabled = no_pager || dumb || command.is_none();
    let window = Window::of_stdout();
    let (Some(command), Some(columns), false) = (command, window.map(|w| w.columns), disabled)
    else {
        // Never paged: stream the report as it is drawn.
        let mut out = io::BufWriter::new(io::stdout().lock());
        render(&mut out)?;
        return out.flush();
    };
    let mut report = Vec::new();
    render(&mut report)?;
    let report_rows = rows(&String::from_utf8_lossy(&report), columns);
    if should_page(disabled, window, report_rows) && page(&report, &command) {
        return Ok(());
    }
    let mut out = io::stdout().lock();
    out.write_all(&report)?;
    out.flush()
}

/// Runs the pager `command` with `report` on its standard input and waits
/// for it to end; false if it could not be started (nothing was shown).
fn page(report: &[u8], command: &OsStr) -> bool {
    let mut pager = shell(command);
    for (name, value) in pager_env(|name| std::env::var_os(name)) {
        pager.env(name, value);
    }
    // Ctrl-C while the pager runs is the pager's (less stops a search
    // with it): oomwhy ending then would hand the terminal back to the
    // shell while less still reads it. (The pager gets the default action
    // back when it starts, as every caught signal does across exec.)
    let _interrupts = InterruptsWait::start();
    let Ok(mut child) = pager.stdin(Stdio::piped()).spawn() else {
        return false;
    };
    if let Some(mut input) = child.stdin.take() {
        // Quitting before the end (`q`) closes the pipe: nothing to report,
        // as is any other failure to feed the pager, which shows what it got.
        let _ = input.write_all(report);
    }
    match child.wait() {
        // The shell could not find (127) or run (126) the pager: it showed
        // nothing.
        Ok(status) => !matches!(status.code(), Some(126 | 127)),
        Err(_) => true,
    }
}

/// The pager's command line run as git runs it: by the shell, so that
/// `PAGER='less -S'` works.
#[cfg(unix)]
fn shell(command: &OsStr) -> Command {
    let mut shell = Command::new("sh");
    shell.arg("-c").arg(command);
    shell
}

/// Elsewhere the command line is split at spaces.
#[cfg(not(unix))]
fn shell(command: &OsStr) -> Command {
    let command = command.to_string_lossy();
    let mut words = command.split_whitespace();
    let mut pager = Command::new(words.next().unwrap_or("less"));
    pager.args(words);
    pager
}

/// SIGINT does nothing to oomwhy while this lives (it stays with the
/// pager), then its default action (ending oomwhy) is back. A SIGINT that
/// oomwhy was started with ignored stays ignored.
struct InterruptsWait {
    #[cfg(unix)]
    restore_default: Option<std::sync::Arc<std::sync::atomic::AtomicBool>>,
}

impl InterruptsWait {
    #[cfg(unix)]
    fn start() -> Self {
        use signal_hook::consts::SIGINT;
        use std::sync::atomic::AtomicBool;
        use std::sync::Arc;
        if super::run::signal_is_ignored(SIGINT) {
            return InterruptsWait {
                restore_default: None,
            };
        }
        let armed = Arc::new(AtomicBool::new(false));
        let registered =
            signal_hook::flag::register_conditional_default(SIGINT, Arc::clone(&armed));
        InterruptsWait {
            restore_default: registered.ok().map(|_| armed),
        }
    }

    #[cfg(not(unix))]
    fn start() -> Self {
        InterruptsWait {}
    }
}

impl Drop for InterruptsWait {
    fn drop(&mut self) {
        #[cfg(unix)]
        if let Some(armed) = &self.restore_default {
            armed.store(true, std::sync::atomic::Ordering::SeqCst);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const WINDOW: Window = Window {
        rows: 24,
        columns: 80,
    };

    #[test]
    fn pages_only_a_terminal_too_small_for_the_report_when_allowed() {
        assert!(should_page(false, Some(WINDOW), 90));
        // Fits above the prompt: printed.
        assert!(!should_page(false, Some(WINDOW), 23));
        // Needs the prompt's row too: paged (less -F prints it and quits).
        assert!(should_page(false, Some(WINDOW), 24));
        // --no-pager, or not a terminal.
        assert!(!should_page(true, Some(WINDOW), 90));
        assert!(!should_page(false, None, 90));
    }

    #[test]
    fn the_pager_is_pager_or_less_and_empty_or_cat_turn_it_off() {
        assert_eq!(pager_command(None), Some("less".into()));
        assert_eq!(
            pager_command(Some(OsStr::new("less -S"))),
            Some("less -S".into())
        );
        assert_eq!(pager_command(Some(OsStr::new("most"))), Some("most".into()));
        assert_eq!(pager_command(Some(OsStr::new(""))), None);
        assert_eq!(pager_command(Some(OsStr::new(" "))), None);
        assert_eq!(pager_command(Some(OsStr::new("cat"))), None);
    }

    #[test]
    fn less_gets_frx_unless_the_user_set_less() {
        let unset = |_: &str| None;
        assert_eq!(pager_env(unset), [("LESS", "FRX"), ("LV", "-c")]);
        let less_set = |name: &str| (name == "LESS").then(|| OsString::from("-S"));
        assert_eq!(pager_env(less_set), [("LV", "-c")]);
        // Set but empty is the user's choice too (git's setenv without overwrite).
        let empty = |_: &str| Some(OsString::new());
        assert!(pager_env(empty).is_empty());
    }

    #[test]
    fn counts_rows_as_the_terminal_shows_them() {
        assert_eq!(rows("", 80), 0);
        assert_eq!(rows("a\nb\n", 80), 2);
        // An empty line takes a row.
        assert_eq!(rows("a\n\nb\n", 80), 3);
        // A line of 100 columns wraps to two rows of an 80-column terminal.
        assert_eq!(rows(&"x".repeat(100), 80), 2);
        assert_eq!(rows(&"x".repeat(80), 80), 1);
        // Colour codes take no room; wide characters take two columns.
        let coloured = format!("\x1b[1;31m{}\x1b[0m", "x".repeat(80));
        assert_eq!(rows(&coloured, 80), 1);
        assert_eq!(rows(&"显存".repeat(20), 80), 1);
        assert_eq!(rows(&"显存".repeat(21), 80), 2);
    }
}
