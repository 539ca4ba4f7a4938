//! PyTorch caching-allocator OOM messages, every era (docs/formats.md §2–3):
//!
//! * `cached`   ≈0.4.1–1.3: `(GPU d; T total capacity; X already allocated; F free; C cached)`
//! * `reserved` ≈1.4–2.0:   `(... F free; [L allowed; ]R reserved in total by PyTorch)` [+ max_split hint]
//! * `capacty`  2.1:        `. GPU d has a total capacty of T of which F is free. {PROC}Of the allocated memory ...`
//! * `capacity` 2.2+:       the same with the typo fixed, later with `allowed`, private pools, new hints
//! * `malloc_async`:        the `cudaMallocAsync` backend's multi-line form
//!
//! Also the `HIP`/`XPU`/device-generic (`Out of memory.`) spellings of the same grammar.

use super::{find_size, Family, Message, SizeReader};
use crate::record::{fact, Era, Finding, Hint, Kind, ProcessUsage};
use regex::Regex;
use std::sync::OnceLock;

struct Patterns {
    anchor: Regex,
    requested: Regex,
    exabyte: Regex,
    paren_device: Regex,
    paren_total: Regex,
    already_allocated: Regex,
    paren_free: Regex,
    allowed: Regex,
    cached: Regex,
    reserved_total: Regex,
    sentence_device: Regex,
    sentence_total: Regex,
    sentence_free: Regex,
    process: Regex,
    this_process: Regex,
    allocated_by_pytorch: Regex,
    private_pools: Regex,
    unallocated: Regex,
    hint_max_split: Regex,
    hint_expandable: Regex,
    hint_env_var_old: Regex,
    hint_tail: Regex,
    docs_url: Regex,
    raised_at: Regex,
    next_anchor: Regex,
}

fn patterns() -> &'static Patterns {
    static P: OnceLock<Patterns> = OnceLock::new();
    P.get_or_init(|| {
        let re = super::re;
        Patterns {
            anchor: re(
                r"(?:\b(CUDA|HIP|XPU|MLU|GCU|NPU|MUSA|DPCPP) )?(?:out|Out) of memory\.\s*Tried\s+to\s+allocate",
            ),
            requested: re(r"^\s*{SIZE}"),
            exabyte: re(r"^\s*more than 1EB memory"),
            // torch_npu (Ascend) prints `(NPU N; ...` in the same form.
            paren_device: re(r"^\s*\S*\s*\((?:GPU|NPU)\s*(\d*)\s*;"),
            paren_total: re(r"{SIZE}\s+total\s+capacity\s*;"),
            already_allocated: re(r"{SIZE}\s+already\s+allocated"),
            paren_free: re(r";\s*{SIZE}\s+free\s*;"),
            allowed: re(r"{SIZE}\s+allowed\s*;"),
            cached: re(r"{SIZE}\s+cached\s*\)"),
            // Only the reserved figure is "in total by PyTorch": a retyped
            // paste that misspells the word before it (`resrved`) still
            // states it.
            reserved_total: re(r"{SIZE}\s+[A-Za-z]{4,12}\s+in\s+total\s+by\s+[Pp]y[Tt]orch"),
            sentence_device: re(r"^\s*\S*\s*\.\s*GPU\b ?(.?)"),
            sentence_total: re(r"has\s+a\s+total\s+(capacty|capacity)\s+of\s+{SIZE}"),
            sentence_free: re(r"of\s+which\s+{SIZE}\s+is\s+free"),
            process: re(r"Process\s+(\d+)\s+has\s+{SIZE}\s+memory\s+in\s+use"),
            this_process: re(r"this\s+process\s+has\s+{SIZE}\s+memory\s+in\s+use"),
            allocated_by_pytorch: re(r"Of\s+the\s+allocated\s+memory\s+{SIZE}\s+is\s+allocated\s+by\s+PyTorch"),
            private_pools: re(r"with\s+{SIZE}\s+allocated\s+in\s+private\s+pools"),
            // The figure is whole before `but`: a paste cut inside
            // `unallocated` still states it.
            unallocated: re(r"and\s+{SIZE}\s+is\s+reserved\s+by\s+PyTorch\s+but\b"),
            hint_max_split: re(r"try\s+setting\s+max_split_size_mb"),
            hint_expandable: re(r"try\s+setting\s+(PYTORCH_\w*ALLOC_CONF)=expandable_segments:True"),
            hint_env_var_old: re(r"Memory\s+Management\s+and\s+(PYTORCH_\w*ALLOC_CONF)"),
            hint_tail: re(
                r"(?:to\s+avoid\s+fragmentation\.?|See\s+documentation\s+for\s+Memory\s+Management|Please use `empty_cache` to release all unoccupied cached memory\.)",
            ),
            docs_url: re(r"\((https?://[^\s)]+)\)"),
            raised_at: re(r"\((\w+) at ([^()]+:\d+)\)"),
            next_anchor: re(r"(?:out|Out) of memory\.\s*Tried\s+to\s+allocate"),
        }
    })
}

/// The native caching allocator's message and its backend/device-generic spellings.
pub struct TorchAllocator;

/// What one attempt at decoding produced; `score` counts how far it got, so
/// the scanner can tell whether a following line continued the message.
struct Decoded {
    finding: Finding,
    score: usize,
}

/// Backend slug from the word before "out of memory".
fn backend_slug(word: Option<&str>) -> Option<String> {
    word.map(|w| w.to_ascii_lowercase())
}

fn decode_allocator(message: &Message<'_>) -> Option<Decoded> {
    let p = patterns();
    let text = message.joined();
    let anchor = p.anchor.captures(&text)?;
    let whole = anchor.get(0)?;
    // Only this message: stop where a second one begins.
    let after_start = whole.end();
    let body_end = p
        .next_anchor
        .find_at(&text, after_start)
        .map_or(text.len(), |m| m.start());
    let body = &text[after_start..body_end];
    let message_text = text[whole.start()..body_end].trim_end().to_string();

    let mut finding = message.finding(Kind::TorchAllocatorOom, message_text);
    let backend_word = anchor.get(1).map(|m| m.as_str());
    finding.backend = backend_slug(backend_word);
    let mut notes = Vec::new();
    let mut sizes = SizeReader::new(&mut notes);
    let mut score = 1;

    if p.exabyte.is_match(body) {
        finding.era = Some(Era::SizeGuard);
        finding
            .facts
            .insert("request".into(), "more than 1 EB".into());
        finding.sizes.requested_bytes = None;
        finding.notes = notes;
        return Some(Decoded { finding, score: 2 });
    }

    let requested = p.requested.captures(body);
    let after_requested = requested
        .as_ref()
        .and_then(|c| c.get(0))
        .map_or(0, |m| m.end());
    if let Some(caps) = &requested {
        finding.sizes.requested_bytes = sizes.read(caps, 1, "Tried to allocate");
        score += 1;
    }
    let rest = &body[after_requested..];

    let mut complete = false;
    if let Some(dev) = p.paren_device.captures(rest) {
        // ≤ 2.0 "(GPU 0; ...)" form.
        score += 1;
        finding.device = dev.get(1).and_then(|m| m.as_str().parse().ok());
        finding.sizes.total_bytes =
            find_size(&p.paren_total, rest, 1, "total capacity", &mut sizes);
        finding.sizes.allocated_bytes = find_size(
            &p.already_allocated,
            rest,
            1,
            "already allocated",
            &mut sizes,
        );
        finding.sizes.free_bytes = find_size(&p.paren_free, rest, 1, "free", &mut sizes);
        finding.sizes.allowed_bytes = find_size(&p.allowed, rest, 1, "allowed", &mut sizes);
        finding.sizes.cached_bytes = find_size(&p.cached, rest, 1, "cached", &mut sizes);
        finding.sizes.reserved_bytes =
            find_size(&p.reserved_total, rest, 1, "reserved", &mut sizes);
        let has = |re: &Regex| re.is_match(rest);
        score += [
            &p.paren_total,
            &p.already_allocated,
            &p.paren_free,
            &p.allowed,
            &p.cached,
            &p.reserved_total,
        ]
        .iter()
        .filter(|re| has(re))
        .count();
        finding.era = Some(if has(&p.cached) {
            Era::Cached
        } else if has(&p.reserved_total) {
            Era::Reserved
        } else {
            Era::Paren
        });
        complete = has(&p.cached) || has(&p.reserved_total);
    } else if let Some(dev) = p.sentence_device.captures(rest) {
        // 2.1+ sentence form.
        score += 1;
        let device_char = dev.get(1).map_or("", |m| m.as_str());
        finding.device = device_char.parse().ok();
        let digits: String = rest
            .trim_start()
            .trim_start_matches(|c: char| c == '.' || c.is_whitespace())
            .trim_start_matches("GPU")
            .trim_start()
            .chars()
            .take_while(char::is_ascii_digit)
            .collect();
        if let Ok(device) = digits.parse() {
            finding.device = Some(device);
        }
        if let Some(caps) = p.sentence_total.captures(rest) {
            score += 1;
            finding.era = Some(if &caps[1] == "capacty" {
                Era::Capacty
            } else {
                Era::Capacity
            });
            finding.sizes.total_bytes = sizes.read(&caps, 2, "total capacity");
        } else {
            finding.era = Some(Era::Sentence);
        }
        finding.sizes.free_bytes = find_size(&p.sentence_free, rest, 1, "free", &mut sizes);
        for caps in p.process.captures_iter(rest) {
            score += 1;
            let pid = caps[1].parse().ok();
            if let (Some(pid), Some(bytes)) = (pid, sizes.read(&caps, 2, "process memory")) {
                finding.processes.push(ProcessUsage {
                    pid,
                    in_use_bytes: bytes,
                });
            }
        }
        finding.sizes.process_in_use_bytes =
            find_size(&p.this_process, rest, 1, "this process", &mut sizes);
        finding.sizes.allowed_bytes = find_size(&p.allowed, rest, 1, "allowed", &mut sizes);
        finding.sizes.allocated_bytes = find_size(
            &p.allocated_by_pytorch,
            rest,
            1,
            "allocated by PyTorch",
            &mut sizes,
        );
        finding.sizes.private_pools_bytes =
            find_size(&p.private_pools, rest, 1, "private pools", &mut sizes);
        finding.sizes.reserved_unallocated_bytes = find_size(
            &p.unallocated,
            rest,
            1,
            "reserved but unallocated",
            &mut sizes,
        );
        score += [
            &p.sentence_free,
            &p.this_process,
            &p.allowed,
            &p.allocated_by_pytorch,
            &p.private_pools,
            &p.unallocated,
        ]
        .iter()
        .filter(|re| re.is_match(rest))
        .count();
        // A paste cut inside `unallocated` states the figure but not the
        // whole message.
        complete = p
            .unallocated
            .find(rest)
            .is_some_and(|m| rest[m.end()..].trim_start().starts_with("unallocated"));
    }

    // The hint is a version fingerprint; each piece of it counts as progress
    // so that a hard-wrapped hint is joined too.
    let mut hint = Hint {
        option: None,
        env_var: None,
        docs_url: None,
    };
    if p.hint_max_split.is_match(rest) {
        hint.option = Some("max_split_size_mb".into());
        score += 1;
    }
    if let Some(caps) = p.hint_expandable.captures(rest) {
        hint.option = Some("expandable_segments".into());
        hint.env_var = Some(caps[1].to_string());
        score += 1;
    }
    if let Some(caps) = p.hint_env_var_old.captures(rest) {
        hint.env_var = Some(caps[1].to_string());
        score += 1;
    }
    if let Some(caps) = p.docs_url.captures(rest) {
        hint.docs_url = Some(caps[1].to_string());
        score += 1;
    }
    if rest.contains("Please use `empty_cache`") {
        hint.option = Some("empty_cache".into());
        score += 1;
    }
    if hint.option.is_some() || hint.env_var.is_some() || hint.docs_url.is_some() {
        finding.hint = Some(hint);
    }
    if let Some(caps) = p.raised_at.captures(rest) {
        finding
            .facts
            .insert("raised_at".into(), format!("{} at {}", &caps[1], &caps[2]));
    }

    let overflowed = sizes.overflowed;
    // The message ends with the last part recognised; text after it on the
    // same line (a progress bar's tail, another log record) is not the message.
    let tails = [
        &p.requested,
        &p.paren_device,
        &p.paren_total,
        &p.already_allocated,
        &p.paren_free,
        &p.allowed,
        &p.cached,
        &p.reserved_total,
        &p.sentence_device,
        &p.sentence_total,
        &p.sentence_free,
        &p.process,
        &p.this_process,
        &p.allocated_by_pytorch,
        &p.private_pools,
        &p.unallocated,
        &p.hint_max_split,
        &p.hint_expandable,
        &p.hint_env_var_old,
        &p.hint_tail,
        &p.docs_url,
        &p.raised_at,
    ];
    let mut end = tails
        .iter()
        .filter_map(|re| re.find_iter(rest).last().map(|m| m.end()))
        .max()
        .unwrap_or(0);
    if let Some(close) = rest[end..].strip_prefix(')').map(|_| end + 1) {
        end = close;
    } else if let Some(offset) = rest[end..].find(|c: char| !c.is_whitespace()) {
        if rest[end + offset..].starts_with(')') || rest[end + offset..].starts_with('.') {
            end += offset + 1;
        }
    }
    // The `reserved` form printed its max_split_size_mb hint on the same
    // line, after the closing parenthesis, from ≈1.10 on. Without the hint,
    // the message is known to have ended (not been cut before the hint) when
    // a quote or markdown mark closes it there, the line ends there, or the
    // native `(malloc at file:line)` suffix, printed after the whole
    // message, follows.
    let closed = rest[..end].trim_end().ends_with(')');
    let tail = rest[end..].trim_start();
    let raised_at_follows = p.raised_at.find(rest).is_some_and(|m| m.end() <= end);
    let ended_without_hint = finding.era == Some(Era::Reserved)
        && finding.hint.is_none()
        && closed
        && (raised_at_follows || tail.is_empty() || tail.starts_with(['"', '\'', '`', '*', '|']));
    let message_end = after_start + after_requested + end;
    finding.text = text[whole.start()..message_end.max(after_start)]
        .trim_end()
        .to_string();

    finding.truncated = !complete;
    if finding.truncated && finding.era == Some(Era::Sentence) {
        notes.push(
            crate::say!(
                en: "the message stops right after `GPU`; PyTorch ≈2.2–2.3 builds cut the message there for GPU 0 (pytorch/pytorch#123984)",
                zh: "报错在 `GPU` 之后就断了；PyTorch ≈2.2–2.3 的构建对 GPU 0 会在这里截断报错（pytorch/pytorch#123984）",
            )
            .into(),
        );
    }
    if overflowed {
        finding.facts.insert(fact::OVERFLOW.into(), "true".into());
    }
    finding.notes = notes;
    finding.version_hint = version_hint(&finding, ended_without_hint);
    Some(Decoded { finding, score })
}

/// Which PyTorch releases print this exact form (docs/formats.md §2.3).
/// `ended_without_hint`: a `reserved` message seen to its end without the
/// max_split_size_mb hint, which releases from ≈1.10 print.
fn version_hint(f: &Finding, ended_without_hint: bool) -> Option<String> {
    let exception = f.exception.as_deref().unwrap_or("");
    let hint = f.hint.as_ref();
    let env_var = hint.and_then(|h| h.env_var.as_deref());
    let url = hint.and_then(|h| h.docs_url.as_deref()).unwrap_or("");
    // Other backends and the device-generic form have no known release mapping.
    if f.backend.as_deref() != Some("cuda") {
        return None;
    }
    let v = match f.era? {
        Era::Cached => "PyTorch ≈0.4.1–1.3",
        // `torch.cuda.OutOfMemoryError` came with 1.13 (pytorch/pytorch#83146);
        // IPython and some loggers print its bare class name.
        Era::Reserved if is_oom_class(exception) => "PyTorch 1.13–2.0",
        // Before 1.13 the same message was a plain RuntimeError.
        Era::Reserved if hint.is_some() && exception == "RuntimeError" => "PyTorch ≈1.10–1.12",
        Era::Reserved if hint.is_some() => "PyTorch ≈1.10–2.0",
        Era::Reserved if ended_without_hint => "PyTorch ≈1.4–1.9",
        Era::Reserved if exception == "RuntimeError" => "PyTorch ≈1.4–1.12",
        Era::Reserved => "PyTorch ≈1.4–2.0",
        Era::Capacty => "PyTorch 2.1",
        Era::Capacity if url.contains("docs.pytorch.org") => "PyTorch ≈2.11 or later",
        Era::Capacity if env_var == Some("PYTORCH_ALLOC_CONF") => "PyTorch ≈2.9–2.10",
        Era::Capacity if exception == "torch.cuda.OutOfMemoryError" => "PyTorch 2.2–2.3",
        Era::Capacity
            if exception == "torch.OutOfMemoryError"
                || f.sizes.private_pools_bytes.is_some()
                || f.sizes.allowed_bytes.is_some() =>
        {
            "PyTorch ≈2.4–2.8"
        }
        Era::Capacity => "PyTorch ≈2.2–2.8",
        _ => return None,
    };
    Some(v.to_string())
}

/// `torch.cuda.OutOfMemoryError` as a traceback or a notebook prints it.
fn is_oom_class(exception: &str) -> bool {
    exception == "OutOfMemoryError" || exception.ends_with("cuda.OutOfMemoryError")
}

impl Family for TorchAllocator {
    fn triggers(&self) -> &'static [&'static str] {
        &["out of memory. Tried", "Out of memory. Tried"]
    }

    fn start(&self, line: &str) -> Option<usize> {
        patterns()
            .anchor
            .find_iter(line)
            .find(|m| !is_placeholder(&line[m.end()..]))
            .map(|m| m.start())
    }

    /// None: the start pattern matches digits as a class.
    fn start_figure_phrases(&self) -> Option<&'static [&'static str]> {
        Some(&[])
    }

    fn continues(&self, lines: &[String], next: &str) -> bool {
        super::text::grows(lines, next, 12, allocator_score)
    }

    fn glues(&self, lines: &[String], next: &str) -> bool {
        super::text::glues_by_score(lines, next, 12, allocator_score)
    }

    fn decode(&self, message: &Message<'_>) -> Option<Finding> {
        decode_allocator(message).map(|d| d.finding)
    }
}

/// The allocator's message whose headline (`torch.OutOfMemoryError: HIP
/// out of memory.`) ended a line of its own: a paste wrapped at the
/// sentence's stop, the `Tried to allocate` sentence on the next line.
/// Another family that took the headline reads the whole message here.
pub(super) fn decode_wrapped(message: &Message<'_>) -> Option<Finding> {
    let first = message.lines.first()?;
    if message.lines.len() < 2 || p_headline_alone().find(first).is_none() {
        return None;
    }
    decode_allocator(message).map(|d| d.finding)
}

/// Whether `next` goes on with the allocator's message that `lines` hold
/// (headline first): the joined text reads further.
pub(super) fn continues_wrapped(lines: &[String], next: &str) -> bool {
    lines
        .first()
        .is_some_and(|first| p_headline_alone().is_match(first))
        && super::text::grows(lines, next, 12, allocator_score)
}

/// The allocator's headline and nothing after it on the line.
fn p_headline_alone() -> &'static Regex {
    static P: OnceLock<Regex> = OnceLock::new();
    P.get_or_init(|| super::re(r"^\s*(?:CUDA|HIP|XPU|MLU|GCU|NPU|MUSA|DPCPP) out of memory\.\s*$"))
}

/// How far the allocator grammar gets in `text` (for joining wrapped lines).
fn allocator_score(text: &str) -> usize {
    let lines = [text.to_string()];
    let message = Message {
        input: "",
        line: 0,
        prefix: "",
        lines: &lines,
    };
    decode_allocator(&message).map_or(0, |d| d.score)
}

fn fragment_start() -> &'static Regex {
    static P: OnceLock<Regex> = OnceLock::new();
    P.get_or_init(|| {
        super::re(
            r"^[\s>*`\x22'-]*(?:Tried\s+to\s+allocate\s+{SIZE}|\(GPU\s*\d+\s*;\s*{SIZE}\s+total\s+capacity\s*;)|\bout\s+of\s+the\s+memory\.\s+Tried\s+to\s+allocate\s+{SIZE}",
        )
    })
}

/// The hint that ends PyTorch's allocator message (`... try setting
/// max_split_size_mb to avoid fragmentation.  See documentation for Memory
/// Management and PYTORCH_CUDA_ALLOC_CONF`), pasted without the rest.
fn hint_only() -> &'static Regex {
    static P: OnceLock<Regex> = OnceLock::new();
    P.get_or_init(|| super::re(r"(?:\S*\s+)?try setting max_split_size_mb to avoid fragmentation"))
}

/// A PyTorch allocator message pasted from the middle: it starts at
/// `Tried to allocate X (GPU N; ...` or at `(GPU N; X total capacity; ...`
/// with no `CUDA out of memory.` headline (a shortened paste, or the headline
/// left on a line the person did not copy). Every number there is read; a
/// note says what is missing.
pub struct TorchFragment;

impl Family for TorchFragment {
    fn triggers(&self) -> &'static [&'static str] {
        &[
            "Tried to allocate",
            "total capacity;",
            "max_split_size_mb to avoid fragmentation",
        ]
    }

    fn start(&self, line: &str) -> Option<usize> {
        // At the line's start (after markdown) only: a message cut in two
        // by a line-length limit is not a paste. Also after a headline the
        // person mistyped (`CUDA out of the memory.`).
        if let Some(m) = hint_only().find(line) {
            if fragment_start().find(line).is_none() {
                return Some(m.start());
            }
        }
        let m = fragment_start().find(line)?;
        let skipped = line[m.start()..m.end()].find(['T', '(']).unwrap_or(0);
        Some(m.start() + skipped)
    }

    fn continues(&self, lines: &[String], next: &str) -> bool {
        super::text::grows(lines, next, 12, fragment_score)
    }

    fn decode(&self, message: &Message<'_>) -> Option<Finding> {
        let first = message.lines.first()?;
        if hint_only().find(first).is_some_and(|m| m.start() == 0) {
            // Only the message's closing hint: it names the allocator, no number.
            let mut finding = message.finding(
                crate::record::Kind::TorchAllocatorOom,
                message.lines.join("\n").trim_end().to_string(),
            );
            finding.backend = Some("cuda".into());
            finding.truncated = true;
            finding.notes.push(
                crate::say!(
                    en: "only the end of the message was pasted (its `max_split_size_mb` hint): every number is missing",
                    zh: "只贴了报错的结尾（`max_split_size_mb` 的提示）：所有数字都缺失",
                )
                .into(),
            );
            return Some(finding);
        }
        // Read it with the full message's grammar: give it back the
        // headline it lost (and the `Tried to allocate` words, when the
        // paste starts at the parenthesis).
        let head = lost_headline(first);
        let mut lines = message.lines.to_vec();
        lines[0] = format!("{head}{first}");
        let whole = Message {
            input: message.input,
            line: message.line,
            prefix: message.prefix,
            lines: &lines,
        };
        let mut finding = decode_allocator(&whole)?.finding;
        finding.text = message.lines.join("\n").trim_end().to_string();
        finding.truncated = true;
        finding.notes.push(
            crate::say!(
                en: "the paste starts mid-message: the `CUDA out of memory.` headline is missing",
                zh: "贴出的内容从报错中间开始：缺了开头的 `CUDA out of memory.`",
            )
            .into(),
        );
        if head.ends_with("allocate ") {
            finding.notes.push(
                crate::say!(
                    en: "the requested size (`Tried to allocate ...`) is missing",
                    zh: "缺了申请量（`Tried to allocate ...`）",
                )
                .into(),
            );
        }
        Some(finding)
    }
}

/// Whether the size after `Tried to allocate` is a template's placeholder
/// (`XXX MiB`, `X GiB`, `{size}`, `<N>`, `%s`): a page about the message,
/// not a paste of one.
fn is_placeholder(after: &str) -> bool {
    static P: OnceLock<Regex> = OnceLock::new();
    P.get_or_init(|| {
        super::re(r"^\s*(?:X{1,3}|x{1,3}|N|\?+|\{[^}]*\}|<[^>]*>|%\w+|\.\.\.)(?:\s|$|[.,;)])")
    })
    .is_match(after)
}

/// The words a fragment lost before its first line.
fn lost_headline(first: &str) -> &'static str {
    if first.trim_start().starts_with('(') {
        "out of memory. Tried to allocate "
    } else {
        "out of memory. "
    }
}

/// How far the allocator grammar gets in a fragment's text, its lost
/// headline given back: a fragment wrapped over lines grows as the whole
/// message does.
fn fragment_score(text: &str) -> usize {
    allocator_score(&format!("{}{text}", lost_headline(text)))
}

/// The `cudaMallocAsync` backend's message (docs/formats.md §2.5).
pub struct MallocAsync;

fn malloc_async_patterns() -> &'static [Regex; 8] {
    static P: OnceLock<[Regex; 8]> = OnceLock::new();
    P.get_or_init(|| {
        let re = super::re;
        [
            re(r"Allocation on device\s*(\d*)\s*would exceed allowed memory"),
            // ComfyUI prints only the first words of this message (its error
            // report's `Exception Message:` line, its `!!! Exception during
            // processing !!!` line), with nothing after them.
            re(r"(?:OutOfMemoryError:?\s*|Exception Message:\**\s*|!!!\s*|^\s*)(Allocation on device)\s*$|OutOfMemoryError:?\s+(Allocation on device)\b"),
            re(r"Currently allocated\s*:\s*{SIZE}"),
            re(r"Requested\s*:\s*{SIZE}"),
            re(r"Device limit\s*:\s*{SIZE}"),
            re(r"Free \(according to CUDA\)\s*:\s*{SIZE}"),
            re(r"PyTorch limit \(set by user-supplied memory fraction\)\s*:\s*{SIZE}"),
            re(r"^\s*(?:Currently allocated|Requested|Device limit|Free \(according to CUDA\)|PyTorch limit|:)"),
        ]
    })
}

impl Family for MallocAsync {
    fn triggers(&self) -> &'static [&'static str] {
        &["would exceed allowed memory", "Allocation on device"]
    }

    fn start(&self, line: &str) -> Option<usize> {
        let p = malloc_async_patterns();
        if let Some(m) = p[0].find(line) {
            return Some(m.start());
        }
        let c = p[1].captures(line)?;
        c.get(1).or_else(|| c.get(2)).map(|m| m.start())
    }

    fn continues(&self, lines: &[String], next: &str) -> bool {
        lines.len() < 10 && malloc_async_patterns()[7].is_match(next)
    }

    fn decode(&self, message: &Message<'_>) -> Option<Finding> {
        let [anchor, _, allocated, requested, limit, free, fraction, _] = malloc_async_patterns();
        let text = message.lines.join("\n");
        let joined = message.joined();
        let mut finding = message.finding(Kind::TorchAllocatorOom, text);
        finding.backend = Some("cuda".into());
        finding.era = Some(Era::MallocAsync);
        finding
            .facts
            .insert("allocator_backend".into(), "cudaMallocAsync".into());
        finding.device = anchor
            .captures(&joined)
            .and_then(|c| c.get(1))
            .and_then(|m| m.as_str().parse().ok());
        let mut notes = Vec::new();
        let mut sizes = SizeReader::new(&mut notes);
        finding.sizes.allocated_bytes =
            find_size(allocated, &joined, 1, "Currently allocated", &mut sizes);
        finding.sizes.requested_bytes = find_size(requested, &joined, 1, "Requested", &mut sizes);
        finding.sizes.total_bytes = find_size(limit, &joined, 1, "Device limit", &mut sizes);
        finding.sizes.free_bytes = find_size(free, &joined, 1, "Free", &mut sizes);
        if let Some(caps) = fraction.captures(&joined) {
            // With no fraction set PyTorch prints its "unlimited" value,
            // 2^64 bytes (17179869184.00 GiB): that is no limit, not a number.
            let unlimited = &caps[2] == "GiB" && caps[1].starts_with("17179869184");
            if unlimited {
                finding.facts.insert("pytorch_limit".into(), "none".into());
            } else {
                finding.sizes.allowed_bytes = sizes.read(&caps, 1, "PyTorch limit");
            }
        }
        finding.truncated = !fraction.is_match(&joined);
        if !anchor.is_match(&joined) {
            notes.push(
                crate::say!(
                    en: "only the message's first words were printed (ComfyUI shortens it): no sizes",
                    zh: "只打印了报错开头的几个词（ComfyUI 会截短它）：没有大小",
                )
                .into(),
            );
        }
        finding.notes = notes;
        Some(finding)
    }
}

/// A C++ exception's stack from PyTorch (`Exception raised from F at
/// file:line (most recent call first):` and its `frame #N:` lines) pasted
/// without the message above it. The stack alone still says two things:
/// thrown by `c10d::ProcessGroupNCCL::WorkNCCL::checkTimeout`, a collective
/// timed out (the watchdog's check); raised from
/// `c10_cuda_check_implementation`, a CUDA call failed (PyTorch's
/// C10_CUDA_CHECK). Any other stack says nothing and is left alone. The
/// message is cut, so the finding is marked so.
pub struct CutStack;

fn cut_stack_start() -> &'static Regex {
    static RE: OnceLock<Regex> = OnceLock::new();
    RE.get_or_init(|| {
        super::re(r"^\s*(?:Exception raised from \w+ at \S+:\d+ \(most recent call first\):|frame #0: c10::Error::Error\()")
    })
}

/// What a cut stack says failed, from its frames.
fn cut_stack_kind(lines: &[String]) -> Option<Kind> {
    let has = |needle: &str| lines.iter().any(|l| l.contains(needle));
    if has("c10d::ProcessGroupNCCL::WorkNCCL::checkTimeout(")
        || has("Exception raised from checkTimeout at")
    {
        Some(Kind::NcclTimeout)
    } else if has("c10::cuda::c10_cuda_check_implementation(")
        || has("Exception raised from c10_cuda_check_implementation at")
    {
        Some(Kind::GpuRuntimeError)
    } else {
        None
    }
}

impl Family for CutStack {
    // Under the `rror` literal: every such stack's first frame is c10's
    // `Error::Error`, so the stack starts there when its `Exception raised
    // from` line has no literal of its own.
    fn triggers(&self) -> &'static [&'static str] {
        &["frame #0: c10::Error::Error("]
    }

    fn start(&self, line: &str) -> Option<usize> {
        cut_stack_start().find(line).map(|m| m.start())
    }

    fn continues(&self, lines: &[String], next: &str) -> bool {
        let t = next.trim_start();
        lines.len() < 200
            && (t.starts_with("frame #")
                || t.starts_with("Exception raised from ")
                || (next.trim().is_empty()
                    && lines
                        .last()
                        .is_some_and(|l| l.trim_start().starts_with("frame #"))))
    }

    fn decode(&self, message: &Message<'_>) -> Option<Finding> {
        let kind = cut_stack_kind(message.lines)?;
        let text: Vec<&str> = message
            .lines
            .iter()
            .map(|l| l.trim_end())
            .filter(|l| !l.is_empty())
            .take(8)
            .collect();
        let mut finding = message.finding(kind, text.join("\n"));
        finding.truncated = true;
        if kind == Kind::NcclTimeout {
            finding.backend = Some("nccl".into());
        } else {
            finding.backend = Some("cuda".into());
            finding
                .facts
                .insert(fact::CALL.into(), "C10_CUDA_CHECK".into());
        }
        finding
            .facts
            .insert(fact::REPORTED_BY.into(), "PyTorch".into());
        Some(finding)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    use crate::units::{GIB, MIB};

    fn decode_line(line: &str) -> Finding {
        let start = TorchAllocator.start(line).expect("anchor");
        let lines = vec![line[start..].to_string()];
        let message = Message {
            input: "<test>",
            line: 1,
            prefix: &line[..start],
            lines: &lines,
        };
        TorchAllocator.decode(&message).expect("decodes")
    }

    fn gib(x: f64) -> u64 {
        (x * GIB as f64).round() as u64
    }

    #[test]
    fn seed_example_reserved_era() {
        let f = decode_line("RuntimeError: CUDA out of memory. Tried to allocate 2.00 GiB (GPU 0; 8.00 GiB total capacity; 6.32 GiB already allocated; 1.56 GiB free; 7.88 GiB reserved in total by PyTorch)");
        assert_eq!(f.era, Some(Era::Reserved));
        assert_eq!(f.exception.as_deref(), Some("RuntimeError"));
        assert_eq!(f.backend.as_deref(), Some("cuda"));
        assert_eq!(f.device, Some(0));
        assert_eq!(f.sizes.requested_bytes, Some(2 * GIB));
        assert_eq!(f.sizes.total_bytes, Some(8 * GIB));
        assert_eq!(f.sizes.allocated_bytes, Some(gib(6.32)));
        assert_eq!(f.sizes.free_bytes, Some(gib(1.56)));
        assert_eq!(f.sizes.reserved_bytes, Some(gib(7.88)));
        assert!(!f.truncated);
    }

    #[test]
    fn cached_era_with_malloc_tail() {
        let f = decode_line(
            r"RuntimeError: CUDA out of memory. Tried to allocate 12.50 MiB (GPU 0; 10.92 GiB total capacity; 8.57 MiB already allocated; 9.28 GiB free; 4.68 MiB cached) (malloc at ..\c10\cuda\CUDACachingAllocator.cpp:267)",
        );
        assert_eq!(f.era, Some(Era::Cached));
        assert_eq!(
            f.sizes.cached_bytes,
            Some((4.68 * MIB as f64).round() as u64)
        );
        assert_eq!(f.sizes.reserved_bytes, None);
        assert_eq!(
            f.facts.get("raised_at").map(String::as_str),
            Some(r"malloc at ..\c10\cuda\CUDACachingAllocator.cpp:267")
        );
    }

    #[test]
    fn retyped_and_cut_figures() {
        // Retyped by hand with a misspelled word (1821).
        let f = decode_line("RuntimeError: CUDA out of memory. Tried to allocate 2.97GiB (GPU 0; 10.92GiB total capacity; 5.99GiB already allocated; 1.7GiB free; 8.63GiB resrved in total by Pytorch)]");
        assert_eq!(f.sizes.reserved_bytes, Some(gib(8.63)));
        let f = decode_line("RuntimeError: CUDA out of memory. Tried to allocate 2.97 GiB (GPU 0; 10.92 GiB total capacity; 5.99 GiB already allocated; 1.7 GiB free; 8.63 GiB in total by PyTorch)");
        assert_eq!(f.sizes.reserved_bytes, None);
        // Cut inside `unallocated` (1822): the figure is read, the message
        // is not whole.
        let cut = "OutOfMemoryError: HIP out of memory. Tried to allocate 5.70 GiB. GPU 0 has a total capacty of 19.98 GiB of which 5.66 GiB is free. Of the allocated memory 8.05 GiB is allocated by PyTorch, and 5.92 GiB is reserved by PyTorch but unal";
        let f = decode_line(cut);
        assert_eq!(f.sizes.reserved_unallocated_bytes, Some(gib(5.92)));
        assert!(f.truncated);
        let f = decode_line(&cut.replace(" but unal", ""));
        assert_eq!(f.sizes.reserved_unallocated_bytes, None);
    }

    #[test]
    fn capacty_typo_era() {
        let f = decode_line("torch.cuda.OutOfMemoryError: CUDA out of memory. Tried to allocate 20.00 MiB. GPU 0 has a total capacty of 7.79 GiB of which 9.38 MiB is free. Including non-PyTorch memory, this process has 7.77 GiB memory in use. Of the allocated memory 7.32 GiB is allocated by PyTorch, and 341.15 MiB is reserved by PyTorch but unallocated. If reserved but unallocated memory is large try setting max_split_size_mb to avoid fragmentation.  See documentation for Memory Management and PYTORCH_CUDA_ALLOC_CONF");
        assert_eq!(f.era, Some(Era::Capacty));
        assert_eq!(f.version_hint.as_deref(), Some("PyTorch 2.1"));
        assert_eq!(f.sizes.process_in_use_bytes, Some(gib(7.77)));
        let hint = f.hint.unwrap();
        assert_eq!(hint.option.as_deref(), Some("max_split_size_mb"));
        assert_eq!(hint.env_var.as_deref(), Some("PYTORCH_CUDA_ALLOC_CONF"));
    }

    #[test]
    fn capacity_era_with_processes_allowed_and_pools() {
        let f = decode_line("torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 4.39 GiB. GPU 3 has a total capacity of 22.30 GiB of which 2.94 GiB is free. Process 48849 has 19.36 GiB memory in use. Process 1234 has 512.00 MiB memory in use. 20.00 GiB allowed; Of the allocated memory 9.83 GiB is allocated by PyTorch, with 1.00 GiB allocated in private pools (e.g., CUDA Graphs), and 9.20 GiB is reserved by PyTorch but unallocated. If reserved but unallocated memory is large try setting PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True to avoid fragmentation.  See documentation for Memory Management  (https://pytorch.org/docs/stable/notes/cuda.html#environment-variables)");
        assert_eq!(f.era, Some(Era::Capacity));
        assert_eq!(f.device, Some(3));
        assert_eq!(f.processes.len(), 2);
        assert_eq!(f.processes[0].pid, 48849);
        assert_eq!(f.processes[1].in_use_bytes, 512 * MIB);
        assert_eq!(f.sizes.allowed_bytes, Some(20 * GIB));
        assert_eq!(f.sizes.private_pools_bytes, Some(GIB));
        assert_eq!(f.sizes.reserved_unallocated_bytes, Some(gib(9.20)));
        assert_eq!(f.version_hint.as_deref(), Some("PyTorch ≈2.4–2.8"));
        assert_eq!(
            f.hint.unwrap().docs_url.as_deref(),
            Some("https://pytorch.org/docs/stable/notes/cuda.html#environment-variables")
        );
    }

    #[test]
    fn truncated_after_gpu() {
        let f = decode_line(
            "torch.cuda.OutOfMemoryError: CUDA out of memory. Tried to allocate 3725.29 GiB. GPU ",
        );
        assert!(f.truncated);
        assert_eq!(f.sizes.requested_bytes, Some(gib(3725.29)));
        assert_eq!(f.device, None);
        assert_eq!(f.era, Some(Era::Sentence));
    }

    #[test]
    fn hip_and_generic_and_xpu_spellings() {
        let hip = decode_line("HIP out of memory. Tried to allocate 978.00 MiB. GPU 0 has a total capacity of 15.98 GiB of which 630.00 MiB is free. Of the allocated memory 0 bytes is allocated by PyTorch, and 0 bytes is reserved by PyTorch but unallocated.");
        assert_eq!(hip.backend.as_deref(), Some("hip"));
        assert_eq!(hip.sizes.allocated_bytes, Some(0));
        let generic = decode_line("Out of memory. Tried to allocate 2.00 MiB. GPU 0 has a total capacity of 1.00 GiB of which 0 bytes is free. Of the allocated memory 1.00 GiB is allocated by PyTorch, and 0 bytes is reserved by PyTorch but unallocated.");
        assert_eq!(generic.backend, None);
        let legacy = decode_line("XPU out of memory. Tried to allocate 2.00 GiB (GPU 0; 15.56 GiB total capacity; 12.00 GiB already allocated; 13.00 GiB reserved in total by PyTorch)");
        assert_eq!(legacy.backend.as_deref(), Some("xpu"));
        assert_eq!(legacy.era, Some(Era::Reserved));
        assert_eq!(legacy.sizes.free_bytes, None);
    }

    #[test]
    fn overflowing_value_is_a_note_not_a_panic() {
        let f = decode_line("CUDA out of memory. Tried to allocate 99999999999999999999.00 GiB. GPU 0 has a total capacity of 8.00 GiB of which 1.00 GiB is free.");
        assert_eq!(f.sizes.requested_bytes, None);
        assert!(f.notes[0].text.contains("too large"));
        assert_eq!(f.facts.get("overflow").map(String::as_str), Some("true"));
    }

    #[test]
    fn malloc_async_form() {
        let lines: Vec<String> = [
            "Allocation on device 0 would exceed allowed memory. (out of memory)",
            "Currently allocated     : 9.43 GiB",
            "Requested               : 50.00 MiB",
            "Device limit            : 10.00 GiB",
            "Free (according to CUDA): 0 bytes",
            "PyTorch limit (set by user-supplied memory fraction)",
            "                        : 17179869184.00 GiB",
        ]
        .iter()
        .map(|s| s.to_string())
        .collect();
        for n in 1..lines.len() {
            assert!(MallocAsync.continues(&lines[..n], &lines[n]), "line {n}");
        }
        let message = Message {
            input: "<test>",
            line: 1,
            prefix: "torch.OutOfMemoryError: ",
            lines: &lines,
        };
        let f = MallocAsync.decode(&message).unwrap();
        assert_eq!(f.era, Some(Era::MallocAsync));
        assert_eq!(f.sizes.requested_bytes, Some(50 * MIB));
        assert_eq!(f.sizes.free_bytes, Some(0));
        assert_eq!(f.sizes.allowed_bytes, None);
        assert_eq!(
            f.facts.get("pytorch_limit").map(String::as_str),
            Some("none")
        );
        assert!(!f.truncated);
    }

    #[test]
    fn words_cut_at_the_terminal_edge_are_glued() {
        let first = vec![
            "RuntimeError: CUDA out of memory. Tried to allocate 2.00 GiB (GPU 0; 15.90 G"
                .to_string(),
        ];
        assert!(TorchAllocator.glues(&first, "iB total capacity; 12.15 GiB already allocated; 1.53 GiB free; 13.61 GiB reserved in total by PyTorch)"));
        let whole =
            vec!["CUDA out of memory. Tried to allocate 2.00 GiB (GPU 0; 15.90 GiB".to_string()];
        assert!(!TorchAllocator.glues(&whole, "total capacity; 12.15 GiB already allocated;"));
    }

    #[test]
    fn wrapped_message_continues_only_when_it_adds_fields() {
        let first = vec![
            "CUDA out of memory. Tried to allocate 2.00 GiB (GPU 0; 8.00 GiB total".to_string(),
        ];
        assert!(TorchAllocator.continues(
            &first,
            "capacity; 6.32 GiB already allocated; 1.56 GiB free; 7.88"
        ));
        assert!(!TorchAllocator.continues(&first, "Epoch 3: loss 0.25"));
        assert!(!TorchAllocator.continues(&first, "Traceback (most recent call last):"));
    }
}

#[cfg(test)]
mod cut_stack_tests {
    use crate::record::{Finding, Kind};

    fn scan(text: &str) -> Vec<Finding> {
        crate::scan(text.as_bytes(), "t").unwrap().findings
    }

    #[test]
    fn a_stack_without_its_message_says_what_threw() {
        // A wild paste: only the frames of the watchdog's timeout check.
        let timeout = "frame #0: c10::Error::Error(c10::SourceLocation, std::string) + 0x96 (0x1554e8b12f86 in lib/libc10.so)\nframe #1: c10d::ProcessGroupNCCL::WorkNCCL::checkTimeout(std::optional<std::chrono::duration<long, std::ratio<1l, 1000l> > >) + 0x1d2 (0x1554e9e0f8f2 in lib/libtorch_cuda.so)\nframe #2: c10d::ProcessGroupNCCL::watchdogHandler() + 0x233 (0x1554e9e16333 in lib/libtorch_cuda.so)\n";
        let found = scan(timeout);
        assert_eq!(found.len(), 1);
        assert_eq!(found[0].kind, Kind::NcclTimeout);
        assert!(found[0].truncated);
        // A wild paste: raised by PyTorch's CUDA check.
        let cuda = "Exception raised from c10_cuda_check_implementation at ../c10/cuda/CUDAException.cpp:43 (most recent call first):\nframe #0: c10::Error::Error(c10::SourceLocation, std::string) + 0x96 (0x7ff69c16c446 in lib/libc10.so)\nframe #2: c10::cuda::c10_cuda_check_implementation(int, char const*, char const*, int, bool) + 0x118 (0x7ff69c544a18 in lib/libc10_cuda.so)\n";
        let found = scan(cuda);
        assert_eq!(found.len(), 1);
        assert_eq!(found[0].kind, Kind::GpuRuntimeError);
        // Any other stack says nothing.
        let other = "Exception raised from operator() at ../torch/csrc/autograd/engine.cpp:12 (most recent call first):\nframe #0: c10::Error::Error(c10::SourceLocation, std::string) + 0x96 (0x7f in lib/libc10.so)\nframe #1: torch::autograd::Engine::thread_main() + 0x1 (0x7f in lib/libtorch.so)\n";
        assert!(scan(other).is_empty());
    }
}
