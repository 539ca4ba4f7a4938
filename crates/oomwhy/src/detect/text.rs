//! Text rules shared by the message families: size patterns, joining and
//! growing wrapped messages, exception prefixes, quoted mentions, the
//! boilerplate PyTorch appends to CUDA errors, and folding repeated lines.
//! Family modules import from here, never from each other.

use crate::constant_regex;
use crate::record::Note;
use crate::units::{self, SizeError};
use regex::Regex;
use std::sync::OnceLock;

/// Joins wrapped lines into one paragraph with single spaces.
pub fn join_lines(lines: &[String]) -> String {
    let mut out = String::new();
    for line in lines {
        let line = line.trim();
        if line.is_empty() {
            continue;
        }
        if !out.is_empty() {
            out.push(' ');
        }
        out.push_str(line);
    }
    out
}

/// Returns the exception class named at the end of `prefix`, e.g.
/// `torch.OutOfMemoryError` from `"[stuff] torch.OutOfMemoryError: "`.
pub fn exception_name(prefix: &str) -> Option<String> {
    static RE: std::sync::OnceLock<Regex> = std::sync::OnceLock::new();
    let re = RE.get_or_init(|| {
        constant_regex(r"((?:[A-Za-z_]\w*\.)*[A-Za-z_]\w*(?:Error|Exception|Exit|Interrupt)):\s*$")
    });
    re.captures(prefix).map(|c| c[1].to_string())
}

/// True if the text before a match opens a quotation that mentions the
/// message rather than pastes it. Same as [`is_mention`] with nothing after
/// the match.
#[cfg(test)]
pub fn is_quoted(prefix: &str) -> bool {
    is_mention(prefix, prefix.len())
}

/// Quote characters whose unmatched opening before a message can make it a
/// mention.
const QUOTES: [char; 3] = ['"', '\'', '`'];

/// True if the message starting at `start` of `line` sits in a quotation that
/// only mentions it, as in `if "CUDA out of memory" in str(e):`.
///
/// People paste errors in backticks, quotes, bold and blockquotes too, so an
/// open quote alone is not enough: what surrounds it decides.
/// * Nothing but markdown before the quote (`> `, `- `, `**`, a list number),
///   or prose ending in a colon (`I get this error: "..."`): a paste.
/// * Code before the quote (`if`, `in`, `print(`, `grep`, `=`, `==`, a
///   comma or an opening bracket): a mention, except a `raise X("...")`
///   whose literal has numbers, which is a printed message.
/// * Other prose before the quote: a paste when the quoted text has a
///   number (a real message states sizes or codes), else a mention.
pub fn is_mention(line: &str, start: usize) -> bool {
    let start = start.min(line.len());
    let Some(prefix) = line.get(..start) else {
        return false;
    };
    if in_indented_comment(prefix) || changelog_entry(prefix) {
        return true;
    }
    let open = open_quotes(prefix);
    let Some(&(at, quote)) = open.last() else {
        return unquoted_mention(line, prefix);
    };
    let rest = line.get(start..).unwrap_or("");
    let literal = rest.split(quote).next().unwrap_or(rest);
    let has_number = literal.chars().any(|c| c.is_ascii_digit());
    // A logfmt field (`time=... level=ERROR ... error="..."`, as Go programs
    // such as ollama log) is the program's own report, not code.
    if is_logfmt_field(line, &prefix[..at]) {
        return false;
    }
    // The JSON error body an HTTP API sent back, after the status it came
    // with (`Kobold returned error: 507 INSUFFICIENT STORAGE
    // {"detail":{"msg":"KoboldAI ran out of memory: ..."}}`): the server's
    // own report.
    if is_http_error_body(&prefix[..at]) {
        return false;
    }
    // A quotation the poster introduces as the error they got, bracketed
    // or not (`I get the same error as OP (`"Error: ... signal: killed"`)`):
    // their report, though a bracket opens it as a call would.
    if open
        .first()
        .is_some_and(|&(outer, _)| first_person_error_lead(&prefix[..outer]))
    {
        return false;
    }
    // A quotation listed after one that words introduce as the error
    // (`causes the error "Failed to build OptiX acceleration structure" and
    // "System is out of GPU memory."`) is introduced by the same words, not
    // an operand after `and`.
    if listed_after_error(&prefix[..at]) && !line.trim_start().starts_with('#') {
        return false;
    }
    // Any enclosing quotation opened by code (`logger.info("... 'msg'")`)
    // makes the whole a mention.
    for &(outer, _) in &open {
        let before = prefix[..outer].trim_end();
        if is_code_context(before) {
            let raise = before.contains("raise ") && before.ends_with('(');
            return !((raise || after_constructor(before)) && has_number);
        }
    }
    let before = prefix[..at].trim_end();
    // A CUDA check macro's own line prints the error's string in quotes
    // after its status and where it failed (`Failed: Cuda error
    // custom_all_reduce.cuh:455 'an illegal memory access was
    // encountered'`, NCCL's `Cuda failure 999 'unknown error'`): the
    // program's report, wherever the line goes on.
    if is_check_macro_lead(before) {
        return false;
    }
    // A string literal that is a whole argument on its own line of source
    // code (`    "XPU out of memory. Tried to allocate ",`): the program's
    // text, not its output. A notebook's output lines keep their `\n`.
    let tail = rest.get(literal.len() + 1..).unwrap_or("").trim();
    let argument = matches!(tail, "," | ");" | ")" | ";" | "+" | "<<" | "),")
        || tail.starts_with("<<")
        || tail.starts_with("+ ")
        || commented_argument(tail);
    if before.trim().is_empty() && argument && !literal.ends_with("\\n") {
        return true;
    }
    let markdown_only = before
        .chars()
        .all(|c| c.is_whitespace() || ">*-+_#|~.:0123456789".contains(c));
    if markdown_only {
        return false;
    }
    // Prose before the quote: a paste only when the quotation ends the line
    // (`I get this error: "..."`), not when a sentence goes on after it
    // (`"..." means another rank stopped`).
    let tail = rest.get(literal.len() + 1..).unwrap_or("");
    let tail_empty = tail
        .trim_matches(|c: char| c.is_whitespace() || ".,;:!?*_)".contains(c))
        .is_empty()
        || opens_markdown_heading(tail);
    if tail_empty {
        // An error's name quoted after the word (`HIP driver error
        // 'hipErrorOutOfMemory'`): how a program prints a status.
        let named_status = before.to_ascii_lowercase().ends_with("error")
            && !literal.trim().is_empty()
            && literal
                .trim()
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || c == '_');
        return !(before.ends_with(':') || before.ends_with("**") || has_number || named_status);
    }
    // A sentence that goes on after the quotation: a report of the error
    // when the quoted text has its numbers or codes (`I get "... exit code
    // -1073740791 (0xC0000409)". Is it the GPU?`), except in a docs heading
    // (a `#` title or a whole bold line such as an FAQ question).
    let trimmed = line.trim();
    let heading =
        trimmed.starts_with('#') || (trimmed.starts_with("**") && trimmed.ends_with("**"));
    // The same goes for a quoted exception line after a colon (`the error
    // says: "RuntimeError: ..."`): a printed exception, not a phrase.
    let exception = exception_name(prefix.get(at + 1..).unwrap_or("")).is_some();
    // The quotation named as what the program printed: followed by
    // `error(s)` (`giving me `...` errors`), or after a reporting verb
    // (`VPT threw a "..."`), or holding the exception's class name (`this
    // error which is "RuntimeError: ..."?`).
    let tail_word = tail
        .trim_start_matches(|c: char| c.is_whitespace() || ".,;:!?*_)".contains(c))
        .to_ascii_lowercase();
    let named_error = ["error", "exception", "message", "错误", "报错", "异常"]
        .iter()
        .any(|w| tail_word.starts_with(w));
    // Prose that introduces the quotation as the error (`Getting the error
    // "..."`, `... your code: "...: CUBLAS_STATUS_ALLOC_FAILED". I've ...`).
    // (`I get the following error: "..." . The details ...`: the colon
    // after the word changes nothing.)
    let lead = before.to_ascii_lowercase();
    let lead = lead.trim_end_matches(':').trim_end();
    let introduced = lead.ends_with("error")
        || lead.ends_with("error message")
        || (before.ends_with(':')
            && literal
                .split(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
                .any(is_status_token));
    // Rust's panic message quotes what the program printed (`thread
    // 'main' panicked at 'called `Result::unwrap()` on an `Err` value: ...'`).
    let rust_panic = before.ends_with("panicked at");
    heading
        || !(has_number
            || exception
            || named_error
            || introduced
            || rust_panic
            || after_reporting_verb(before))
}

/// Whether `before` ends with quotations listed after the words that
/// introduce them as the error (`the error "A" and`, `the errors "A", "B"
/// or`, `error message "A",`).
fn listed_after_error(before: &str) -> bool {
    static RE: OnceLock<Regex> = OnceLock::new();
    RE.get_or_init(|| {
        constant_regex(
            r#"(?i)\b(?:errors?|error messages?)\s*:?(?:\s*"[^"]+"\s*(?:,\s*and|,\s*or|,|and|or))+\s*$"#,
        )
    })
    .is_match(before)
}

/// Whether the text after a quotation starts a markdown heading (` ##
/// Upstream Status ...`): a paste whose line breaks were lost, where the
/// quotation ended its line and its section (`## Problem FA3 kernels crash
/// on RTX 5090: `no kernel image ...` ## Upstream Status - ...`).
fn opens_markdown_heading(tail: &str) -> bool {
    let rest = tail.trim_start_matches(|c: char| c.is_whitespace() || ".,;:!?*_)".contains(c));
    // `# ` alone is as often a comment after code.
    let marks = rest.len() - rest.trim_start_matches('#').len();
    (2..=6).contains(&marks) && rest[marks..].starts_with(' ')
}

/// Whether the clause before a quotation is the poster saying, in the
/// first person, that they got the error it holds: a subject (`I`, `we`), a
/// verb of meeting it (`get`, `got`, `see`, `hit`, ...), then `error`,
/// `message` or `exception` (`the same error as OP`, `the following
/// error`), and only a bracket or a colon before the quotation. Not a
/// question, a condition or a negation (`if I get the error (`, `why do I
/// get this error:`, `I no longer get the error (`).
fn first_person_error_lead(before: &str) -> bool {
    static RE: OnceLock<(Regex, Regex)> = OnceLock::new();
    let (lead, unsaid) = RE.get_or_init(|| {
        (
            crate::constant_regex(concat!(
                r"(?i)(?:^|[^\w'])(?:I|we)\s+((?:[a-z']+\s+){0,2}?)",
                r"(?:get|got|getting|see|saw|seeing|hit|hitting|receive|received|encounter|encountered|have|had)\s+",
                r"(?:the\s+|an?\s+|this\s+)?(?:same\s+|following\s+|exact\s+)?(?:error|message|exception)",
                r"(?:\s+as\s+(?:the\s+)?\w+(?:\s+\w+)?)?$",
            )),
            crate::constant_regex(
                r"(?i)\b(?:if|when|whenever|unless|why|how|whether|not|never|no|longer|avoid|don't|didn't|won't|can't|cannot|would|could|should|might|may)\b|n't\b",
            ),
        )
    });
    // The bracket or colon that opens the quotation, then the clause: a
    // condition in an earlier clause (`if I run it, I get the error (`)
    // leaves the report a report.
    let before = before.trim_end_matches(|c: char| c.is_whitespace() || c == '(' || c == ':');
    let clause = before
        .rfind(['.', ',', ';', ':', '!', '?'])
        .map_or(before, |end| &before[end + 1..]);
    lead.captures(clause).is_some_and(|c| {
        let whole = c.get(0).map_or("", |m| m.as_str());
        let start = c.get(0).map_or(0, |m| m.start());
        !unsaid.is_match(&clause[..start]) && !unsaid.is_match(whole)
    })
}

/// Whether what follows a string literal ends an argument on its line of
/// source code and comments on it (`"CUDA out of memory.",  # CUDA OOM`).
fn commented_argument(tail: &str) -> bool {
    let Some(after) = tail.strip_prefix(',').or_else(|| tail.strip_prefix("),")) else {
        return false;
    };
    let after = after.trim_start();
    after.starts_with('#') || after.starts_with("//")
}

/// Whether `prefix` (the text before a message) is an entry of a changelog
/// or a pull request's list of changes: a list item whose first word says
/// what a change does (`- update the lib to catch RuntimeError: ...`,
/// `* Fixed ...`). A user's list of what they tried reads differently
/// (`- Tried a smaller batch: ...`).
fn changelog_entry(prefix: &str) -> bool {
    let item = prefix.trim_start();
    let Some(item) = ["- ", "* ", "• "].iter().find_map(|m| item.strip_prefix(m)) else {
        return false;
    };
    let verb = item
        .split(|c: char| !c.is_alphabetic())
        .next()
        .unwrap_or("")
        .to_ascii_lowercase();
    matches!(
        verb.as_str(),
        "fix"
            | "fixes"
            | "fixed"
            | "add"
            | "adds"
            | "added"
            | "update"
            | "updates"
            | "updated"
            | "catch"
            | "catches"
            | "handle"
            | "handles"
            | "improve"
            | "improves"
            | "improved"
            | "support"
            | "supports"
            | "avoid"
            | "avoids"
            | "prevent"
            | "prevents"
            | "document"
            | "documents"
            | "bump"
            | "bumps"
    )
}

/// Every quotation still open at the end of `prefix` (a quote character
/// that occurs an odd number of times, at its last occurrence), innermost
/// last.
fn open_quotes(prefix: &str) -> Vec<(usize, char)> {
    let mut open: Vec<(usize, char)> = QUOTES
        .iter()
        .filter_map(|&q| {
            let marks: Vec<usize> = prefix
                .match_indices(q)
                .map(|(at, _)| at)
                .filter(|&at| !(q == '\'' && is_apostrophe(prefix, at)))
                .collect();
            (marks.len() % 2 == 1).then(|| marks.last().map(|&at| (at, q)))?
        })
        .collect();
    open.sort_unstable();
    open
}

/// Whether the `'` at byte `at` joins two letters (`i'm`, `don't`, `GPU's`):
/// an apostrophe in prose, not a quotation mark. Python's string prefixes
/// (`f'...'`, `rb'...'`) open a quotation.
fn is_apostrophe(text: &str, at: usize) -> bool {
    let (Some(head), Some(tail)) = (text.get(..at), text.get(at + 1..)) else {
        return false;
    };
    let word_start = head
        .char_indices()
        .rev()
        .take_while(|(_, c)| c.is_alphabetic())
        .last()
        .map_or(at, |(i, _)| i);
    let word = head[word_start..].to_ascii_lowercase();
    let string_prefix = matches!(
        word.as_str(),
        "f" | "r" | "b" | "u" | "fr" | "rf" | "br" | "rb"
    );
    !word.is_empty() && !string_prefix && tail.chars().next().is_some_and(char::is_alphabetic)
}

/// Whether `prefix` (the text before a message) opens a comment on an
/// indented line of code: `    # torch.OutOfMemoryError: ...`, `  // ...`.
/// Indented, because a `#` at the start of a line is as often a heading, or
/// a comment in which a script's author pasted the error they got.
fn in_indented_comment(prefix: &str) -> bool {
    let code = prefix.trim_start_matches([' ', '\t']);
    code.len() < prefix.len()
        && ["# ", "// "]
            .iter()
            .any(|mark| code.starts_with(mark) || code == mark.trim_end())
}

/// Whether byte `at` of `line` is in a comment on an indented line of code
/// (`    # torch.OutOfMemoryError: CUDA out of memory. ...`): source code
/// quoting a message, not a program reporting it. Where this holds,
/// [`is_mention`] holds too; the scanner asks it about every trigger phrase
/// on a line before trying the families' patterns. It reads no figure.
pub fn in_comment(line: &str, at: usize) -> bool {
    line.get(..at.min(line.len()))
        .is_some_and(in_indented_comment)
}

/// An upper-case status constant such as `CUBLAS_STATUS_ALLOC_FAILED`.
fn is_status_token(word: &str) -> bool {
    word.len() > 6
        && word.contains('_')
        && word
            .chars()
            .all(|c| c.is_ascii_uppercase() || c.is_ascii_digit() || c == '_')
}

/// Whether the text before a `("` is a printed constructor such as
/// `Generation("...")` or `ValueError('...')`: a value's printed form (Rust
/// `Debug`, Python `repr`), not a call in source code.
fn after_constructor(before: &str) -> bool {
    let Some(head) = before.strip_suffix('(') else {
        return false;
    };
    let name = head
        .rsplit(|c: char| !(c.is_alphanumeric() || c == '_'))
        .next()
        .unwrap_or("");
    name.starts_with(|c: char| c.is_ascii_uppercase()) && !head.trim_end().ends_with("raise")
}

/// A message that is not quoted but still not printed by a program: on a
/// line a diff adds (`+> NVRM: Xid ...` in a patch to the docs), or as the
/// subject of a sentence about it (`A CUDA error: device-side assert
/// triggered is an error that ...`).
fn unquoted_mention(line: &str, prefix: &str) -> bool {
    let diff = line.starts_with('+')
        && !line.starts_with("++")
        && line[1..].starts_with(|c: char| !c.is_whitespace());
    let rest = &line[prefix.len()..];
    let about = [
        " is an error",
        " is a common",
        " is often",
        " is caused",
        " occurs when",
        " happens when",
        " means that",
    ];
    let article = prefix
        .split_whitespace()
        .next()
        .is_some_and(|w| matches!(w, "A" | "An" | "The"));
    diff || (article && prefix.len() < 40 && about.iter().any(|a| rest.contains(a)))
        || said_absent(rest)
}

/// Whether the sentence starting at a code says the code itself is missing
/// from where codes are listed (`Xid 109 does not even exist in nvidia's
/// documentation??`, `error 719 isn't documented`): the code is the subject
/// (a name of at most three words) of a negated being or listing verb. A
/// sentence about the code, not a report of it happening; a negation about
/// the event (`Xid 79 does not go away`) is still a report.
fn said_absent(rest: &str) -> bool {
    const ABSENT: [&[&str]; 10] = [
        &["does", "not", "exist"],
        &["does", "not", "even", "exist"],
        &["doesn't", "exist"],
        &["doesn't", "even", "exist"],
        &["is", "not", "documented"],
        &["isn't", "documented"],
        &["is", "undocumented"],
        &["is", "not", "listed"],
        &["isn't", "listed"],
        &["is", "not", "even", "listed"],
    ];
    let lower = rest.to_ascii_lowercase().replace('\u{2019}', "'");
    let words: Vec<&str> = lower.split_whitespace().take(8).collect();
    (1..=3).any(|subject| {
        let verb = words.get(subject..).unwrap_or(&[]);
        ABSENT.iter().any(|phrase| {
            verb.len() >= phrase.len()
                && phrase.iter().zip(verb).all(|(want, word)| {
                    word.trim_end_matches(|c: char| !c.is_alphanumeric()) == *want
                })
        })
    })
}

/// Whether prose before a quotation ends with a verb that introduces what a
/// program printed (`threw a`, `I get`, `it says`), perhaps with an article.
fn after_reporting_verb(before: &str) -> bool {
    let mut words = before
        .rsplit(|c: char| !c.is_alphanumeric())
        .filter(|w| !w.is_empty());
    let mut last = words.next().unwrap_or("").to_ascii_lowercase();
    if matches!(last.as_str(), "a" | "an" | "the" | "this" | "that") {
        last = words.next().unwrap_or("").to_ascii_lowercase();
    }
    matches!(
        last.as_str(),
        "threw"
            | "throws"
            | "throw"
            | "get"
            | "gets"
            | "got"
            | "getting"
            | "gives"
            | "gave"
            | "giving"
            | "shows"
            | "showed"
            | "showing"
            | "says"
            | "said"
            | "saying"
            | "raised"
            | "raises"
            | "reports"
            | "reported"
            | "encountered"
            | "encounter"
            | "hit"
            | "returns"
            | "returned"
    )
}

/// Whether the text before a quote reads as a statement of code or shell.
/// `key=` right before the quote on a logfmt line: one that starts with
/// `time=` or `ts=` and has a `level=` field.
/// Whether the text before a quotation ends as a CUDA or HIP check macro
/// prints its status: `Cuda error FILE:LINE` (the `CUDACHECK` macro of
/// NCCL's tests, vLLM's custom all-reduce and many CUDA samples) or `Cuda
/// failure N` (NCCL's `WARN("Cuda failure %d '%s'", ...)`).
fn is_check_macro_lead(before: &str) -> bool {
    static RE: OnceLock<Regex> = OnceLock::new();
    RE.get_or_init(|| constant_regex(r"\b(?:CUDA|Cuda|HIP|Hip) (?:error|failure) (?:\S+:\d+|\d+)$"))
        .is_match(before)
}

fn is_logfmt_field(line: &str, before: &str) -> bool {
    let line = line.trim_start();
    let key = before
        .strip_suffix('=')
        .and_then(|b| b.rsplit(' ').next())
        .is_some_and(|k| !k.is_empty() && k.chars().all(|c| c.is_ascii_alphanumeric() || c == '_'));
    key && (line.starts_with("time=") || line.starts_with("ts=")) && line.contains(" level=")
}

/// Whether `before` ends where a JSON error body opens its message's string
/// (`"msg":`, `"message":`, `"error":`, `"detail":`, `"reason":`, in the
/// object or one nested in it), right after an HTTP error status (`507
/// INSUFFICIENT STORAGE`, `HTTP/1.1 500 Internal Server Error`, `status
/// 503`): how a client prints the response it got.
fn is_http_error_body(before: &str) -> bool {
    static RE: OnceLock<Regex> = OnceLock::new();
    RE.get_or_init(|| {
        constant_regex(concat!(
            r#"(?:\bHTTP/\d(?:\.\d)? [45]\d\d\b|\b(?i:status|code|error)\W{0,3}[45]\d\d\b|\b[45]\d\d(?: [A-Z][A-Za-z]*)+)"#,
            r#"[^{}"]{0,40}\{\s*(?:"\w+":\s*\{\s*)*"(?:msg|message|error|detail|reason)":\s*$"#,
        ))
    })
    .is_match(before)
}

fn is_code_context(before: &str) -> bool {
    if before.ends_with(['(', '=', ',', '[', '{', '+', '%']) || before.ends_with("==") {
        return true;
    }
    let last = before
        .rsplit(|c: char| !(c.is_alphanumeric() || c == '_' || c == '-'))
        .find(|w| !w.is_empty())
        .unwrap_or("");
    matches!(
        last,
        "if" | "elif"
            | "in"
            | "not"
            | "and"
            | "or"
            | "return"
            | "grep"
            | "rg"
            | "echo"
            | "print"
            | "assert"
            | "match"
            | "case"
            | "contains"
            | "startswith"
            | "-e"
            | "-E"
            | "-F"
            | "=~"
    )
}

/// Compiles a constant pattern after substituting `{SIZE}` (PyTorch sizes)
/// and `{TF_SIZE}` (TensorFlow/XLA sizes).
pub fn re(pattern: &str) -> Regex {
    crate::constant_regex(
        &pattern
            .replace("{TF_SIZE}", TF_SIZE)
            .replace("{SIZE}", SIZE),
    )
}

/// A size regex fragment with two groups (number, unit) for PyTorch's format.
pub const SIZE: &str = r"(\d+(?:\.\d+)?)\s*(bytes|KiB|MiB|GiB|TiB|KB|MB|GB)";

/// Collects sizes from regex captures, recording a note for any value that
/// cannot be represented instead of failing the whole finding.
pub struct SizeReader<'f> {
    notes: &'f mut Vec<Note>,
    /// Set when a printed value was too large for 64 bits.
    pub overflowed: bool,
}

impl<'f> SizeReader<'f> {
    /// A reader that writes its notes to `notes`.
    pub fn new(notes: &'f mut Vec<Note>) -> Self {
        SizeReader {
            notes,
            overflowed: false,
        }
    }

    /// Reads the size in groups `at` (number) and `at + 1` (unit) of `caps`.
    pub fn read(&mut self, caps: &regex::Captures<'_>, at: usize, what: &str) -> Option<u64> {
        let number = caps.get(at)?.as_str();
        let unit = caps.get(at + 1)?.as_str();
        self.read_parts(number, unit, what)
    }

    /// Reads a size given as its number and unit label.
    pub fn read_parts(&mut self, number: &str, unit: &str, what: &str) -> Option<u64> {
        match units::to_bytes(number, unit) {
            Ok(bytes) => Some(bytes),
            Err(SizeError::TooLarge(text)) => {
                self.overflowed = true;
                self.notes.push(
                    crate::say!(
                        en: "{what} `{text}` is too large to be a real byte count",
                        zh: "{what} `{text}` 太大，不可能是真实的字节数",
                    )
                    .into(),
                );
                None
            }
            Err(SizeError::Malformed(text)) => {
                self.notes.push(
                    crate::say!(
                        en: "{what} `{text}` could not be read",
                        zh: "{what} `{text}` 无法读取",
                    )
                    .into(),
                );
                None
            }
        }
    }
}

/// Finds the first match of `re` in `text` and reads its size at group `at`.
pub fn find_size(
    re: &Regex,
    text: &str,
    at: usize,
    what: &str,
    sizes: &mut SizeReader<'_>,
) -> Option<u64> {
    re.captures(text)
        .and_then(|caps| sizes.read(&caps, at, what))
}

/// TensorFlow/XLA `HumanReadableNumBytes` (docs/formats.md §1.3):
/// `512B`, `1.5KiB`, `11.77MiB`, `2.00GiB`, no space before the unit.
/// Two groups: number, unit.
pub const TF_SIZE: &str = r"(\d+(?:\.\d+)?)(B|KiB|MiB|GiB|TiB|PiB|EiB)\b";

/// Whether appending `next` to `lines` lets `score` read more of the message:
/// the rule for hard-wrapped messages. Stops at `max_lines` and at lines that
/// start something else (a traceback, another exception).
pub fn grows(lines: &[String], next: &str, max_lines: usize, score: fn(&str) -> usize) -> bool {
    if lines.len() >= max_lines || looks_like_new_record(next) {
        return false;
    }
    let joined = join_lines(lines);
    let before = score(&joined);
    let after = score(&format!("{joined} {}", next.trim()));
    after > before
}

/// Whether `next` continues the last of `lines` without a space: a terminal
/// or a page that wrapped at a fixed column cut a word in two (`KV cach` /
/// `e is needed`). Only a cut inside a word (letters or digits on both
/// sides), and only where the glued text lets `score` read more of the
/// message than the text with a space, or without `next`, does.
pub fn glues_by_score(
    lines: &[String],
    next: &str,
    max_lines: usize,
    score: fn(&str) -> usize,
) -> bool {
    let Some(last) = lines.last() else {
        return false;
    };
    let cut_in_word = last.ends_with(|c: char| c.is_ascii_alphanumeric() || c == '.')
        && next.starts_with(|c: char| c.is_ascii_alphanumeric());
    if lines.len() >= max_lines || !cut_in_word || looks_like_new_record(next) {
        return false;
    }
    let joined = join_lines(lines);
    let next = next.trim_end();
    score(&format!("{joined}{next}")) > score(&format!("{joined} {next}")).max(score(&joined))
}

/// An integer group of the first match, parsed.
pub fn int<T: std::str::FromStr>(re: &Regex, text: &str, at: usize) -> Option<T> {
    re.captures(text)?
        .get(at)?
        .as_str()
        .replace(',', "")
        .parse()
        .ok()
}

/// A line that starts something else: a traceback, a frame, another exception.
pub fn looks_like_new_record(line: &str) -> bool {
    let t = line.trim_start();
    t.is_empty()
        || t.starts_with("Traceback (most recent call last)")
        || t.starts_with("File \"")
        || t.starts_with("During handling of the above exception")
        || t.starts_with("The above exception was the direct cause")
        || exception_name(t.split_once(": ").map_or("", |(head, _)| head).trim_end())
            .is_some_and(|_| t.contains(": ") && !t.starts_with(|c: char| c.is_ascii_digit()))
}

/// Boilerplate lines PyTorch prints after `CUDA error: ...` in its various
/// releases, and the C++ stack PyTorch can append; they belong to the message.
pub(crate) fn is_boilerplate(line: &str) -> bool {
    static RE: OnceLock<Regex> = OnceLock::new();
    let re = RE.get_or_init(|| {
        constant_regex(concat!(
            r"^\s*(?:CUDA kernel errors might be asynchronously reported",
            r"|HIP kernel errors might be asynchronously reported",
            r"|For debugging consider passing (?:CUDA|HIP|AMD)_LAUNCH_BLOCKING",
            r"|Compile with `TORCH_USE_(?:CUDA|HIP)_DSA` to enable device-side assertions",
            r"|Device-side assertions were explicitly omitted",
            r"|Search for `\w+' in https?://",
            r"|For more detailed error information, run with CUDA_LOG_FILE",
            r"|Exception raised from \S+ at ",
            r"|frame #\d+: )"
        ))
    });
    re.is_match(line)
}

/// Whether `next` is boilerplate that continues a `CUDA error: ...` message.
pub(crate) fn continues_with_boilerplate(lines: &[String], next: &str) -> bool {
    lines.len() < 200 && is_boilerplate(next)
}

/// Keeps the message and its boilerplate, without the C++ frame lines.
pub(crate) fn message_text(lines: &[String]) -> String {
    lines
        .iter()
        .filter(|l| !l.trim_start().starts_with("frame #"))
        .map(|l| l.trim_end())
        .collect::<Vec<_>>()
        .join("\n")
}

/// True when an error token at byte `at` of `line` is reported rather than
/// mentioned: it starts the text or follows `:`, ` - `, `error `, `failed with ` or
/// `results in `. Source code (`case cudaErrorMemoryAllocation:`,
/// `err == ...`) and prose (`retry on ...`) fail this test.
pub(crate) fn reported_token(line: &str, at: usize) -> bool {
    if is_definition(line, at) {
        return false;
    }
    let before = &line[..at];
    // A name in quotes after the word that says it is an error (`error
    // 'hipErrorOutOfMemory'`) is reported as a bare one would be.
    let before = before
        .strip_suffix(['\'', '"', '`'])
        .filter(|b| b.ends_with(' '))
        .unwrap_or(before);
    let trimmed = before.trim_end();
    // `handle - CUBLAS_STATUS_ALLOC_FAILED`: a dash as the separator.
    if trimmed.is_empty() || trimmed.ends_with(':') || trimmed.ends_with(" -") {
        return true;
    }
    let lower = trimmed.to_ascii_lowercase();
    before.ends_with(' ')
        && ["error", "failed with", "results in"]
            .iter()
            .any(|w| lower.ends_with(w))
}

/// Whether the name at `at` is being defined, not reported: a header's enum
/// member or a constant (`hipErrorOutOfMemory = 2,`,
/// `CUDA_ERROR_OUT_OF_MEMORY = 2`), which a pasted header shows next to a
/// real report without being one.
fn is_definition(line: &str, at: usize) -> bool {
    let Some(rest) = line.get(at..) else {
        return false;
    };
    let name = rest
        .find(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
        .unwrap_or(rest.len());
    let after = rest[name..].trim_start();
    let Some(value) = after.strip_prefix('=') else {
        return false;
    };
    let value = value.trim_start();
    let value = value.strip_prefix('-').unwrap_or(value);
    !value.starts_with('=') && value.starts_with(|c: char| c.is_ascii_digit())
}

/// Keeps the first line and the non-frame boilerplate lines; counts the lines
/// for which `is_repeat` holds (copies of the first that a library prints again).
pub(crate) fn collapse_repeats(
    lines: &[String],
    is_repeat: impl Fn(&str) -> bool,
) -> (String, usize) {
    let mut kept: Vec<&str> = Vec::new();
    let mut repeats = 0;
    for (i, line) in lines.iter().enumerate() {
        let trimmed = line.trim_end();
        if i > 0 && is_repeat(line) {
            repeats += 1;
            continue;
        }
        if trimmed.trim_start().starts_with("frame #") || trimmed.trim().is_empty() {
            continue;
        }
        if !kept.contains(&trimmed) {
            kept.push(trimmed);
        }
    }
    (kept.join("\n"), repeats)
}

/// The number a CUDA runtime check printed before the runtime's string
/// (THC's `error=77 : an illegal memory access was encountered`, PyTorch's
/// `cuda runtime error (59) : device-side assert triggered`), where it is
/// `name`'s number before CUDA 10.1 rather than its number since.
pub fn old_number_for(text: &str, name: &str) -> Option<i64> {
    static RE: OnceLock<Regex> = OnceLock::new();
    RE.get_or_init(|| re(r"(?i)\b(?:error=|cuda runtime error \(|cuda error )(\d{1,3})\)?\s*:"))
        .captures_iter(text)
        .filter_map(|c| c[1].parse::<i64>().ok())
        .find(|&n| crate::codes::cuda_runtime_before_10_1(n) == Some(name))
}

/// A CUDA runtime number printed in the numbering before CUDA 10.1 (the
/// runtime's string or the message shows which error it is): the number
/// stays as printed, with the number CUDA 10.1 and later give the error.
pub fn numbered_before_10_1(
    finding: &mut crate::record::Finding,
    printed: i64,
    name: &str,
    now: &str,
) {
    finding
        .facts
        .insert("error_code".into(), printed.to_string());
    finding
        .facts
        .insert("numbering".into(), "CUDA before 10.1".into());
    finding.facts.insert("renumbered_code".into(), now.into());
    finding.notes.push(
            crate::say!(
                en: "{printed} is CUDA's number for {name} before CUDA 10.1, which renumbered the runtime's errors; CUDA 10.1 and later number it {now}.",
                zh: "{printed} 是 CUDA 10.1 之前 {name} 的编号；CUDA 10.1 重新编排了运行时的错误码，之后的版本把它编为 {now}。",
                printed = printed,
                name = name,
                now = now
            )
            .into(),
        );
}

#[cfg(test)]
mod tests {
    use super::{find_size, is_mention, re, SizeReader};

    /// A JSON error body after the HTTP status it came with is the
    /// server's report (a real paste: KoboldAI's API answering 507); the
    /// same object without a status stays a quotation.
    #[test]
    fn an_http_error_body_is_a_report() {
        let line = r#"Kobold returned error: 507 INSUFFICIENT STORAGE {"detail":{"msg":"KoboldAI ran out of memory: CUDA error: out of memory","type":"out_of_memory.unknown.unknown"}}"#;
        assert!(!is_mention(line, line.find("CUDA error").unwrap()));
        let bare = r#"{"detail":{"msg":"KoboldAI ran out of memory: CUDA error: out of memory","type":"out_of_memory.unknown.unknown"}}"#;
        assert!(is_mention(bare, bare.find("CUDA error").unwrap()));
    }

    /// Quotations listed after the words that introduce them as the error
    /// (a real Blender question): each is a report, the sentence going on
    /// after the last or not; the same quotation after other words is not.
    #[test]
    fn quotations_listed_after_the_error_are_each_introduced() {
        let line = r#"Rendering in Optix+Motion blur on causes the error "Failed to build OptiX acceleration structure" and "System is out of GPU memory." Turning off motion blur fixes this problem."#;
        assert!(!is_mention(line, line.find("System is").unwrap()));
        let mention = r#"if "Failed to build OptiX acceleration structure" and "System is out of GPU memory." in log:"#;
        assert!(is_mention(mention, mention.find("System is").unwrap()));
    }

    #[test]
    fn logfmt_fields_are_reports_and_code_is_not() {
        let log = r#"time=2025-03-12T12:14:22.015Z level=ERROR source=sched.go:456 msg="error loading llama server" error="llama runner process has terminated: signal: killed""#;
        assert!(!is_mention(log, log.find("signal: killed").unwrap()));
        let code = r#"    err = "llama runner process has terminated: signal: killed""#;
        assert!(is_mention(code, code.find("signal: killed").unwrap()));
    }

    #[test]
    fn a_quotation_introduced_as_the_error_after_a_colon_is_a_report() {
        // A wild paste: the sentence goes on after the quotation.
        let line = r#"However, I get the following error: "no kernel image is available for execution on the device". The details of the system are as follows:"#;
        let at = line.find("no kernel").unwrap();
        assert!(!is_mention(line, at));
        // Without the word `error` before the colon, a quoted phrase in a
        // sentence stays a mention.
        let line = r#"The docs say: "no kernel image is available for execution on the device" means a wrong build."#;
        let at = line.find("no kernel").unwrap();
        assert!(is_mention(line, at));
    }

    #[test]
    fn changelog_entries_mention_and_tried_fixes_report() {
        // A pull request's list of changes (real description).
        let entry =
            "- update stable-diffusion-task lib to catch RuntimeError: CUDA error: out of memory";
        assert!(is_mention(entry, entry.find("RuntimeError").unwrap()));
        // A user's list of what they tried is a report.
        let tried = "- Tried a smaller batch: RuntimeError: CUDA error: out of memory";
        assert!(!is_mention(tried, tried.find("RuntimeError").unwrap()));
        // Without a list marker the verb alone decides nothing.
        let plain = "Fixed seed, then RuntimeError: CUDA error: out of memory";
        assert!(!is_mention(plain, plain.find("RuntimeError").unwrap()));
    }

    #[test]
    fn a_commented_literal_argument_is_code() {
        // Accelerate's list of messages that mean "reduce the batch size".
        let code = r#"        "CUDA out of memory.",  # CUDA OOM"#;
        assert!(is_mention(code, code.find("CUDA").unwrap()));
        // A quoted paste followed by prose after a comma is still a paste.
        let paste = r#""CUDA out of memory. Tried to allocate 2.00 GiB", which I get"#;
        assert!(!is_mention(paste, paste.find("CUDA").unwrap()));
    }

    #[test]
    fn a_check_macro_quotes_the_error_string_it_prints() {
        // vLLM's custom all-reduce (`printf("Failed: Cuda error %s:%d
        // '%s'\n", ...)`) on a paste whose lines were run together, and
        // NCCL's `WARN("Cuda failure %d '%s'", ...)`.
        let glued = "143/147 Failed: Cuda error /csrc/custom_all_reduce.cuh:455 'an illegal memory access was encountered' (EngineCore) ERROR Worker proc VllmWorker-7 died unexpectedly";
        assert!(!is_mention(glued, glued.find("an illegal").unwrap()));
        let nccl = "misc/cudawrap.cc:188 NCCL WARN Cuda failure 999 'unknown error'";
        assert!(!is_mention(nccl, nccl.find("unknown").unwrap()));
        // Prose naming an error in quotes is still a mention.
        let prose = "a Cuda error like 'an illegal memory access was encountered' means";
        assert!(is_mention(prose, prose.find("an illegal").unwrap()));
    }

    #[test]
    fn an_apostrophe_in_prose_opens_no_quotation() {
        // A wild paste: `i'm` is a contraction, not a quote opened before
        // the status name.
        let line = "But while your precompiled demo is running well on my machine i'm getting VK_ERROR_OUT_OF_DEVICE_MEMORY from";
        assert!(!is_mention(line, line.find("VK_ERROR").unwrap()));
        // Quotation marks still quote, Python's prefixed strings included.
        let quoted = "if 'CUDA out of memory' in str(e):";
        assert!(is_mention(quoted, quoted.find("CUDA").unwrap()));
        let fstring = "    print(f'Error: CUDA out of memory on {device}')";
        assert!(is_mention(fstring, fstring.find("CUDA").unwrap()));
        let contraction = "    don't retry: if 'CUDA out of memory' in str(e):";
        assert!(is_mention(contraction, contraction.find("CUDA").unwrap()));
    }

    #[test]
    fn a_quotation_that_ends_a_flattened_markdown_section_ends_its_line() {
        // A wild paste whose line breaks were lost: the next `##` heading
        // follows the quotation.
        let line = "## Problem FA3 kernels crash on RTX 5090 (Blackwell, SM 12.0): `no kernel image is available for execution on the device` ## Upstream Status - Dao-AILab/flash-attention#2268: SM 12.0 support split into PRs";
        assert!(!is_mention(line, line.find("no kernel").unwrap()));
        // A docs heading that goes on after the quotation stays a mention,
        // and so does a quoted phrase followed by a comment.
        let heading =
            "## Fixing `no kernel image is available for execution on the device` on new GPUs";
        assert!(is_mention(heading, heading.find("no kernel").unwrap()));
        let code = "    if 'no kernel image is available' in msg:  # retry on CPU";
        assert!(is_mention(code, code.find("no kernel").unwrap()));
    }

    #[test]
    fn tf_sizes_need_no_space() {
        let r = re(r"allocate {TF_SIZE}");
        let c = r.captures("allocate 11.77MiB").unwrap();
        assert_eq!((&c[1], &c[2]), ("11.77", "MiB"));
        assert!(r.captures("allocate 512B").is_some());
        assert!(r.captures("allocate 2.00 GiB").is_none());
    }

    #[test]
    fn raw_counts_read_as_bytes() {
        let r = re(r"allocating ([\d,]+) (bytes)");
        let mut notes = Vec::new();
        let mut sizes = SizeReader::new(&mut notes);
        assert_eq!(
            find_size(&r, "allocating 1,073,741,824 bytes", 1, "x", &mut sizes),
            Some(1 << 30)
        );
        assert_eq!(
            find_size(
                &r,
                "allocating 99999999999999999999999 bytes",
                1,
                "x",
                &mut sizes
            ),
            None
        );
        assert!(sizes.overflowed);
    }
}
