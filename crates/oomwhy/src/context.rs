//! What surrounds a crash: the Python traceback that ends in it, the training
//! phase that traceback points at, and the last progress counter before it.

use crate::constant_regex;
use crate::record::{ChainedException, Frame, Phase, Traceback};
use regex::Regex;
use std::sync::OnceLock;

/// Frames kept from the start and the end of a very long traceback.
const HEAD_FRAMES: usize = 20;
const TAIL_FRAMES: usize = 40;
/// Chained exceptions kept per traceback.
const MAX_CHAIN: usize = 8;
/// Bytes kept of a frame's file, function or code and of an exception line
/// (hostile input): a finding holds up to 9 × 60 of them, each from a line of up
/// to 1 MiB, so memory grew with the input. Real ones are far shorter.
const MAX_FIELD: usize = 2048;

/// `text`, cut to [`MAX_FIELD`] bytes (at a character boundary) with `…`.
fn clipped(text: &str) -> String {
    if text.len() <= MAX_FIELD {
        return text.to_string();
    }
    let mut end = MAX_FIELD;
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    format!("{}…", &text[..end])
}

fn frame_re() -> &'static Regex {
    static RE: OnceLock<Regex> = OnceLock::new();
    RE.get_or_init(|| constant_regex(r#"^\s*File "([^"]*)", line (\d+)(?:, in (.*))?$"#))
}

/// IPython/Jupyter frames: `Cell In[5], line 3` and `File ~/x.py:42, in f(a, b)`.
fn ipython_frame_re() -> &'static Regex {
    static RE: OnceLock<Regex> = OnceLock::new();
    RE.get_or_init(|| {
        constant_regex(r"^(?:Cell (In\[\d+\]), line (\d+)|File (.+?):(\d+), in ([\w.<>]+))")
    })
}

/// IPython's header: `OutOfMemoryError      Traceback (most recent call last)`.
fn ipython_header_re() -> &'static Regex {
    static RE: OnceLock<Regex> = OnceLock::new();
    RE.get_or_init(|| constant_regex(r"^[\w.]+\s+Traceback \(most recent call last\)"))
}

/// IPython source lines: `----> 4     code` (group 1 = arrow) or `      3     code`.
fn ipython_context_re() -> &'static Regex {
    static RE: OnceLock<Regex> = OnceLock::new();
    RE.get_or_init(|| constant_regex(r"^(?:(-*>)|\s+)\s*\d+ (.*)$"))
}

fn repeated_re() -> &'static Regex {
    static RE: OnceLock<Regex> = OnceLock::new();
    RE.get_or_init(|| constant_regex(r"^\s*\[Previous line repeated (\d+) more times?\]"))
}

#[derive(Debug, Default, Clone, PartialEq, Eq)]
enum TracebackMode {
    /// Not inside a traceback.
    #[default]
    Idle,
    /// Between `Traceback (most recent call last):` and the exception line.
    Frames,
    /// The exception line ended a traceback; it can still be taken by a finding.
    Completed,
}

/// Builds Python tracebacks from lines, one builder per rank.
#[derive(Debug, Default, Clone)]
pub struct TracebackBuilder {
    mode: TracebackMode,
    frames: Vec<Frame>,
    omitted: u64,
    exception: String,
    chain: Vec<ChainedException>,
    pending_relation: Option<&'static str>,
    /// The traceback is IPython's, whose source lines are numbered.
    ipython: bool,
    /// A traceback ended (its exception and frames are kept) and a chained
    /// one ("During handling of the above exception...") may follow.
    has_last: bool,
    /// Lines fed since the current traceback's header (the header not
    /// counted): where it opened, for a message it may follow.
    since_opening: u64,
}

/// What a line meant to the traceback builder.
#[derive(Debug, PartialEq, Eq)]
pub enum TracebackEvent {
    /// The line belongs to the traceback (header, frame, code, marker).
    Consumed,
    /// The line ended a traceback as its exception line; detect messages in it.
    ExceptionLine,
    /// The line has nothing to do with a traceback.
    Unrelated,
}

impl TracebackBuilder {
    /// True while between the header and the exception line.
    pub fn in_frames(&self) -> bool {
        self.mode == TracebackMode::Frames
    }

    /// Feeds one normalised line.
    pub fn feed(&mut self, line: &str) -> TracebackEvent {
        if self.mode != TracebackMode::Idle {
            self.since_opening = self.since_opening.saturating_add(1);
        }
        let trimmed = line.trim();
        match opening(trimmed) {
            Some(Opening::Traceback { ipython }) => {
                self.start();
                self.ipython = ipython;
                return TracebackEvent::Consumed;
            }
            Some(Opening::Chain(relation)) => {
                self.pending_relation = Some(relation);
                return TracebackEvent::Consumed;
            }
            None => {}
        }
        // Any other line outside a traceback changes nothing.
        if self.mode != TracebackMode::Frames {
            return TracebackEvent::Unrelated;
        }
        if let Some(caps) = frame_re().captures(line) {
            self.push_frame(Frame {
                file: clipped(&caps[1]),
                line: caps[2].parse().unwrap_or(0),
                function: clipped(caps.get(3).map_or("", |m| m.as_str()).trim()),
                code: None,
            });
            return TracebackEvent::Consumed;
        }
        if let Some(caps) = ipython_frame_re()
            .captures(trimmed)
            .filter(|_| self.ipython)
        {
            let (file, line_no, function) = match caps.get(1) {
                Some(cell) => (cell.as_str(), &caps[2], "<cell>"),
                None => (
                    caps.get(3).map_or("", |m| m.as_str()),
                    &caps[4],
                    caps.get(5).map_or("", |m| m.as_str()),
                ),
            };
            self.push_frame(Frame {
                file: clipped(file),
                line: line_no.parse().unwrap_or(0),
                function: clipped(function),
                code: None,
            });
            return TracebackEvent::Consumed;
        }
        if trimmed.starts_with("----") && trimmed.chars().all(|c| c == '-') {
            return TracebackEvent::Consumed;
        }
        if let Some(caps) = ipython_context_re().captures(line).filter(|_| self.ipython) {
            // IPython prints numbered source lines around each frame and marks
            // the executing one with an arrow: `----> 3     out = model(x)`.
            if caps.get(1).is_some() {
                if let Some(last) = self.frames.last_mut() {
                    last.code = Some(clipped(caps[2].trim()));
                }
            }
            return TracebackEvent::Consumed;
        }
        if let Some(caps) = repeated_re().captures(line) {
            self.omitted = self.omitted.saturating_add(caps[1].parse().unwrap_or(0));
            return TracebackEvent::Consumed;
        }
        if trimmed.is_empty() {
            return TracebackEvent::Consumed;
        }
        let indented = line.starts_with(' ') || line.starts_with('\t');
        if indented {
            // Python 3.11+ marks the failing expression with a line of ^ and ~.
            let is_marker = trimmed.chars().all(|c| matches!(c, '^' | '~' | ' '));
            if !is_marker {
                if let Some(last) = self.frames.last_mut() {
                    if last.code.is_none() {
                        last.code = Some(clipped(trimmed));
                    }
                }
            }
            return TracebackEvent::Consumed;
        }
        self.exception = clipped(trimmed);
        self.mode = TracebackMode::Completed;
        self.has_last = true;
        TracebackEvent::ExceptionLine
    }

    fn start(&mut self) {
        let relation = self.pending_relation.take();
        match (relation, self.has_last) {
            (Some(relation), true) => {
                if self.chain.len() >= MAX_CHAIN {
                    self.chain.remove(0);
                }
                self.chain.push(ChainedException {
                    relation: relation.to_string(),
                    exception: std::mem::take(&mut self.exception),
                    frames: std::mem::take(&mut self.frames),
                });
            }
            _ => self.chain.clear(),
        }
        self.frames.clear();
        self.omitted = 0;
        self.exception.clear();
        self.has_last = false;
        self.since_opening = 0;
        self.mode = TracebackMode::Frames;
    }

    /// Lines fed since the header of the traceback open or just completed
    /// (the header not counted; the exception line counted).
    pub fn lines_since_opening(&self) -> u64 {
        self.since_opening
    }

    fn push_frame(&mut self, frame: Frame) {
        if self.frames.len() >= HEAD_FRAMES + TAIL_FRAMES {
            self.frames.remove(HEAD_FRAMES);
            self.omitted = self.omitted.saturating_add(1);
        }
        self.frames.push(frame);
    }

    /// The traceback that ended with the current exception line, if the last
    /// line fed was that line.
    pub fn take_completed(&mut self) -> Option<Traceback> {
        if self.mode != TracebackMode::Completed {
            return None;
        }
        self.mode = TracebackMode::Idle;
        Some(Traceback {
            frames: self.frames.clone(),
            omitted_frames: self.omitted,
            chained: self.chain.clone(),
        })
    }

    /// The frames of a traceback still open (its exception line not yet
    /// seen, e.g. cut off by the end of the input), if any.
    pub fn open_traceback(&self) -> Option<Traceback> {
        (self.mode == TracebackMode::Frames && !self.frames.is_empty()).then(|| Traceback {
            frames: self.frames.clone(),
            omitted_frames: self.omitted,
            chained: Vec::new(),
        })
    }

    /// Called after a line that was not part of a traceback and not a
    /// finding: a completed traceback is no longer takeable, but stays
    /// available as the start of a chain.
    pub fn settle(&mut self) {
        if self.mode == TracebackMode::Completed {
            self.mode = TracebackMode::Idle;
        }
    }
}

/// A line that opens a traceback, or says that the next one is chained.
enum Opening {
    Traceback { ipython: bool },
    Chain(&'static str),
}

fn opening(trimmed: &str) -> Option<Opening> {
    if trimmed.starts_with("Traceback (most recent call last):") {
        return Some(Opening::Traceback { ipython: false });
    }
    if ipython_header_re().is_match(trimmed) {
        return Some(Opening::Traceback { ipython: true });
    }
    if trimmed.starts_with("During handling of the above exception, another exception occurred") {
        return Some(Opening::Chain("during_handling"));
    }
    if trimmed.starts_with("The above exception was the direct cause of the following exception") {
        return Some(Opening::Chain("direct_cause"));
    }
    None
}

/// Whether [`TracebackBuilder::feed`] reads `line` whatever state it is in:
/// a traceback's header or a chaining sentence. Any other line means
/// nothing to a builder that is not between a header and its exception.
pub fn opens_or_chains_traceback(line: &str) -> bool {
    opening(line.trim()).is_some()
}

struct PhaseRule {
    name: &'static str,
    /// Matched against the frame's file path.
    files: &'static [&'static str],
    /// Matched against the function name (exact).
    functions: &'static [&'static str],
    /// Matched against the code line (substring).
    code: &'static [&'static str],
    /// A function of one file (path substring, exact function name): for
    /// files that hold other phases' functions too (`Module.to` and
    /// `Module._call_impl` share `torch/nn/modules/module.py`). Strong
    /// evidence, like a file.
    in_file: &'static [(&'static str, &'static str)],
}

/// In priority order: a backward pass that recomputes a forward (activation
/// checkpointing) is still the backward pass, and an evaluation loop's
/// forward is evaluation.
/// The phases the rules below can name, for the translations' test.
#[cfg(test)]
pub(crate) fn phase_names() -> impl Iterator<Item = &'static str> {
    PHASE_RULES.iter().map(|rule| rule.name)
}

const PHASE_RULES: &[PhaseRule] = &[
    PhaseRule {
        name: "compile",
        files: &[
            "torch/_inductor/",
            "torch/_dynamo/convert_frame",
            "torch/_functorch/aot_autograd",
            "compile_fx",
        ],
        functions: &[
            "compile_fx",
            "compile_fx_inner",
            "_compile",
            "codegen_and_compile",
        ],
        code: &["torch.compile("],
        in_file: &[],
    },
    PhaseRule {
        name: "backward",
        files: &["torch/autograd/", "torch/_tensor.py"],
        functions: &["backward", "_engine_run_backward", "run_backward"],
        code: &[".backward(", "backward(loss", "autograd.grad("],
        in_file: &[],
    },
    PhaseRule {
        name: "optimizer_step",
        files: &["torch/optim/", "bitsandbytes/optim/", "apex/optimizers/"],
        functions: &[
            "_multi_tensor_adam",
            "_single_tensor_adam",
            "_multi_tensor_adamw",
            "_init_group",
            "optimizer_step",
        ],
        code: &[
            "optimizer.step(",
            "optim.step(",
            "opt.step(",
            "scaler.step(",
        ],
        in_file: &[],
    },
    PhaseRule {
        name: "checkpoint",
        files: &["torch/serialization.py", "safetensors/"],
        functions: &[
            "save_checkpoint",
            "load_checkpoint",
            "_save_checkpoint",
            "_load_from_checkpoint",
        ],
        code: &[
            "torch.save(",
            "torch.load(",
            "save_checkpoint(",
            "load_checkpoint(",
            "load_file(",
        ],
        in_file: &[],
    },
    PhaseRule {
        name: "model_load",
        files: &[
            "transformers/modeling_utils.py",
            "accelerate/utils/modeling.py",
        ],
        functions: &[
            "from_pretrained",
            "from_preset",
            "load_model",
            "load_pretrained",
            "load_state_dict",
            "_load_state_dict_into_meta_model",
            "prepare_model",
            "dispatch_model",
            "load_checkpoint_and_dispatch",
            "set_module_tensor_to_device",
            "_apply",
            "cuda",
            "to",
        ],
        code: &[
            "from_pretrained(",
            "from_preset(",
            "load_model(",
            "load_pretrained(",
            "load_state_dict(",
            ".to(device",
            ".to('cuda",
            ".to(\"cuda",
            ".cuda()",
            "model.to(",
            "accelerator.prepare(",
            "deepspeed.initialize(",
        ],
        // Placing a model on its devices: accelerate's `prepare_model`
        // (inside `Accelerator.prepare`), DeepSpeed's engine and FSDP
        // wrapping a module (both move and shard its parameters in their
        // constructors), Hugging Face's `pipeline()` factory and
        // diffusers' loaders, and `Module.to`/`.cuda()`/`.half()`, which
        // convert every parameter through `_apply`.
        in_file: &[
            ("accelerate/accelerator.py", "prepare_model"),
            ("accelerate/big_modeling.py", "dispatch_model"),
            ("accelerate/big_modeling.py", "load_checkpoint_and_dispatch"),
            ("deepspeed/runtime/engine.py", "__init__"),
            (
                "deepspeed/runtime/engine.py",
                "_configure_distributed_model",
            ),
            ("deepspeed/__init__.py", "initialize"),
            ("fsdp/fully_sharded_data_parallel.py", "__init__"),
            ("fsdp/_init_utils.py", "_init_param_handle_from_module"),
            ("fsdp/_init_utils.py", "_move_module_to_device"),
            ("transformers/pipelines/__init__.py", "pipeline"),
            ("diffusers/pipelines/pipeline_utils.py", "from_pretrained"),
            ("diffusers/pipelines/pipeline_utils.py", "to"),
            (
                "diffusers/pipelines/pipeline_loading_utils.py",
                "load_sub_model",
            ),
            ("diffusers/models/modeling_utils.py", "from_pretrained"),
            (
                "diffusers/models/model_loading_utils.py",
                "load_model_dict_into_meta",
            ),
            ("torch/nn/modules/module.py", "to"),
            ("torch/nn/modules/module.py", "cuda"),
            ("torch/nn/modules/module.py", "half"),
            ("torch/nn/modules/module.py", "_apply"),
            ("torch/nn/modules/module.py", "convert"),
        ],
    },
    PhaseRule {
        name: "data_loading",
        files: &["torch/utils/data/", "datasets/"],
        functions: &[
            "__getitem__",
            "collate_fn",
            "_next_data",
            "pin_memory",
            "default_collate",
        ],
        code: &["next(iter(", "for batch in", "DataLoader("],
        in_file: &[],
    },
    PhaseRule {
        name: "evaluation",
        files: &["transformers/generation/", "generation/utils.py"],
        functions: &[
            "evaluate",
            "validate",
            "validation_step",
            "test_step",
            "eval_step",
            "predict",
            "predict_step",
            "generate",
            "evaluation_loop",
            "prediction_step",
            "eval_epoch",
            "run_eval",
        ],
        code: &[
            "torch.no_grad",
            "inference_mode",
            ".generate(",
            "model.eval()",
            "evaluate(",
            "validate(",
        ],
        in_file: &[],
    },
    PhaseRule {
        name: "forward",
        files: &["torch/nn/modules/", "torch/nn/functional.py"],
        functions: &[
            "forward",
            "_call_impl",
            "_wrapped_call_impl",
            "training_step",
            "compute_loss",
        ],
        code: &["model(", "self.model(", "outputs = ", "logits = "],
        in_file: &[],
    },
];

/// Infers the phase from the frames: the first rule (in priority order) with
/// evidence wins; confidence is high when a code line or a framework file
/// gives it, medium for a function name alone, low when only generic
/// `forward` frames point at it.
pub fn infer_phase(traceback: Option<&Traceback>) -> Phase {
    let Some(tb) = traceback else {
        return Phase::default();
    };
    for rule in PHASE_RULES {
        let mut evidence = Vec::new();
        let mut strong = false;
        for frame in &tb.frames {
            let file = frame.file.replace('\\', "/");
            let code = frame.code.as_deref().unwrap_or("");
            if rule.code.iter().any(|c| code.contains(c)) {
                strong = true;
                evidence.push(format!("{}:{} `{}`", short_path(&file), frame.line, code));
            } else if rule.files.iter().any(|f| file.contains(f))
                || rule
                    .in_file
                    .iter()
                    .any(|(f, function)| frame.function == *function && file.contains(f))
            {
                strong = true;
                evidence.push(format!(
                    "{}:{} in {}",
                    short_path(&file),
                    frame.line,
                    frame.function
                ));
            } else if rule.functions.contains(&frame.function.as_str()) {
                evidence.push(format!(
                    "{}:{} in {}",
                    short_path(&file),
                    frame.line,
                    frame.function
                ));
            }
        }
        if evidence.is_empty() {
            continue;
        }
        evidence.truncate(3);
        let confidence = match (rule.name, strong) {
            ("forward", _) => "low",
            (_, true) => "high",
            (_, false) => "medium",
        };
        return Phase {
            name: rule.name.to_string(),
            confidence: confidence.to_string(),
            evidence,
        };
    }
    Phase::default()
}

/// The phase of one finding, read once for it: the frames of its own
/// traceback; without one, the traceback another rank of the same job
/// left open when the input ended (said with medium confidence); and where
/// no frames tell it, the writer's lines just before the message (`before`:
/// [`nearby_lines_in`] of them, and of the message line's own prefix)
/// showing a checkpoint being written ("Saving model checkpoint to ...",
/// Lightning's "Summoning checkpoint.", "SAVING CHECKPOINT...",
/// `torch.save(`): `checkpoint_saving`, medium confidence. Lines printed
/// after the message do not count: a save that follows a failure is not
/// what failed.
pub fn phase_of(own: Option<&Traceback>, other_rank: Option<&Traceback>, before: &str) -> Phase {
    let phase = infer_phase(own);
    if phase.name != "unknown" {
        return phase;
    }
    if own.is_none() {
        let nearby = infer_phase(other_rank);
        if nearby.name != "unknown" {
            return Phase {
                confidence: "medium".into(),
                evidence: nearby
                    .evidence
                    .into_iter()
                    .map(|e| format!("another rank's traceback: {e}"))
                    .collect(),
                ..nearby
            };
        }
    }
    saving_checkpoint_in(before).unwrap_or(phase)
}

/// A traceback printed after its message (a logger's `exception()`, a
/// launcher's report): its frames decide the phase where they tell one;
/// else what was read for the finding before (`earlier`) stands.
pub fn phase_after(traceback: &Traceback, earlier: &Phase) -> Phase {
    let phase = infer_phase(Some(traceback));
    if phase.name != "unknown" {
        return phase;
    }
    earlier.clone()
}

/// The checkpoint save that the lines before a message show (see
/// [`phase_of`]), with the line that shows it as evidence.
fn saving_checkpoint_in(before: &str) -> Option<Phase> {
    static RE: OnceLock<Regex> = OnceLock::new();
    if before.is_empty() {
        return None;
    }
    let re = RE.get_or_init(|| {
        constant_regex(
            r"(?i)\b(?:saving|summoning)\b[^\n]{0,40}\b(?:checkpoints?|ckpt)\b|\btorch\.save\(",
        )
    });
    let line = before.lines().rev().find(|line| re.is_match(line))?;
    Some(Phase {
        name: "checkpoint_saving".into(),
        confidence: "medium".into(),
        evidence: vec![format!("a line before it: {}", line.trim())],
    })
}

/// The last two components of a path, enough to recognise it.
fn short_path(path: &str) -> String {
    let parts: Vec<&str> = path.rsplit('/').take(3).collect();
    parts.into_iter().rev().collect::<Vec<_>>().join("/")
}

/// The progress counters, as two patterns that never match overlapping
/// text: a tqdm bar's count (`| 450/1000 [02:13<02:43`), found from its
/// `|`, and the counters named by a word (`step=1200`, `global_step: 1200`,
/// `Step 1200/5000`, `iter 500`, `Iteration 500`, `batch 300/1000`), found
/// from the word. As one pattern, the search had to stop at every letter
/// any of them starts with.
struct Progress {
    bar: regex::bytes::Regex,
    named: regex::bytes::Regex,
}

#[allow(clippy::expect_used)] // constant patterns, built by every test
fn progress() -> &'static Progress {
    static RE: OnceLock<Progress> = OnceLock::new();
    RE.get_or_init(|| {
        // Digits as `[0-9]`: ASCII, as the crate's other patterns read them
        // (see `constant_regex`), on bytes rather than text.
        let bytes = |pattern: &str| regex::bytes::Regex::new(pattern).expect("a constant pattern");
        Progress {
            bar: bytes(r"\|\s*([0-9]+)/[0-9]+\s*\["),
            // (ASCII word boundaries: Unicode ones stop the fast engine at
            // the first non-ASCII byte, and progress bars are full of them.)
            named: bytes(concat!(
                // A count may group its thousands (`iter:  10,100`).
                r"(?-u:\b)(?:global_step|step|Step|STEP|iteration|Iteration|iter|Iter|ITER)\s*[=:]?\s*\[?\s*([0-9]{1,3}(?:,[0-9]{3})+|[0-9]+)(?-u:\b)",
                r"|(?-u:\b)(?:batch|Batch)\s+([0-9]+)\s*/\s*[0-9]+"
            )),
        }
    })
}

/// Whether a progress counter can start in `line`: it holds a `|` or one of
/// the words that name a counter (each match of [`last_step_in_bytes`]'s
/// patterns starts with one). Counters read from a line depend on its
/// figures, but whether one can start there does not.
pub fn may_start_progress(line: &[u8]) -> bool {
    memchr::memchr(b'|', line).is_some()
        || [
            "step", "Step", "STEP", "iter", "Iter", "ITER", "batch", "Batch",
        ]
        .iter()
        .any(|word| memchr::memmem::find(line, word.as_bytes()).is_some())
}

/// What the lines just before a message state about its job: the serving
/// engine a pasted command line launched, and the card size the writer
/// gives ("RX6800 with 16gb", "显存是2G").
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct Stated {
    pub engine: Option<&'static str>,
    pub card_bytes: Option<u64>,
    /// The lines that may tell how the job ran ([`nearby_lines_in`]).
    pub lines: Vec<String>,
}

/// Bytes before a message that [`stated_before`] reads: a few lines.
pub const STATED_LOOKBACK: usize = 1024;

/// The serving engine a command line launches: `$ sglang serve`,
/// `python -m sglang.launch_server`, `vllm serve`,
/// `python -m vllm.entrypoints...`.
fn engine_pattern() -> &'static Regex {
    static RE: OnceLock<Regex> = OnceLock::new();
    RE.get_or_init(|| {
        constant_regex(
            r"(?m)^\s*(?:\$\s*)?(?:python3?\s+-m\s+)?(vllm|sglang)(?:\s+serve\b|\.launch_server\b|\.entrypoints\.)",
        )
    })
}

/// A GPU's name or the word for its memory, then its size in GB:
/// `RX6800 with 16gb`, `RTX 3060 12GB`, `显存是2G`, `16 GB VRAM`. Compiled
/// only when a card's word is seen: case-blind with Unicode classes, it
/// took 35 ms and nearly 3 MiB to compile, more than any other pattern a
/// crash needs.
fn card_pattern() -> &'static Regex {
    static RE: OnceLock<Regex> = OnceLock::new();
    RE.get_or_init(|| {
        constant_regex(
            r"(?i)(?:\b(?:RX|RTX|GTX|Radeon|GeForce|Tesla|Quadro)\s?[\w -]{0,20}?(?:with\s+)?|显存(?:是|为|只有|有)?\s*)(\d{1,3})\s?(?:GB|GiB|G)\b",
        )
    })
}

#[cfg(test)]
/// [`Stated`] from the text before a message (its last
/// [`STATED_LOOKBACK`] bytes are read).
pub fn stated_before(before: &[u8]) -> Stated {
    let start = before.len().saturating_sub(STATED_LOOKBACK);
    let found = stated_in(&before[start..]);
    Stated {
        engine: found.engine.map(|(_, engine)| engine),
        card_bytes: found.card_bytes.map(|(_, bytes)| bytes),
        lines: nearby_lines_in(&before[start..])
            .into_iter()
            .map(|(_, line)| line)
            .collect(),
    }
}

/// What `text` states, each with where its last statement starts in it.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub struct StatedAt {
    pub engine: Option<(usize, &'static str)>,
    pub card_bytes: Option<(usize, u64)>,
}

/// The last engine and card size `text` states. Most text states neither:
/// the engine's words and a card's are looked for as bytes first, so a log
/// whose every other line starts a message costs no regex search.
pub fn stated_in(text: &[u8]) -> StatedAt {
    let engine_words = engine_marks().is_match(text);
    let card_words = card_marks().is_match(text);
    if !engine_words && !card_words {
        return StatedAt::default();
    }
    let decoded = String::from_utf8_lossy(text);
    let engine = engine_words
        .then(|| {
            engine_pattern()
                .captures_iter(&decoded)
                .last()
                .and_then(|c| {
                    let at = c.get(0).map_or(0, |m| m.start());
                    match &c[1] {
                        "vllm" => Some((at, "vllm")),
                        "sglang" => Some((at, "sglang")),
                        _ => None,
                    }
                })
        })
        .flatten();
    let card_bytes = card_words
        .then(|| {
            card_pattern().captures_iter(&decoded).last().and_then(|c| {
                let at = c.get(0).map_or(0, |m| m.start());
                c[1].parse::<u64>()
                    .ok()
                    .filter(|gb| (1..=512).contains(gb))
                    .map(|gb| (at, gb << 30))
            })
        })
        .flatten();
    StatedAt { engine, card_bytes }
}

/// The words of a line that may tell how the job ran: an inference engine
/// or front end, a demo or chat script, `generate(`, a pipeline, a model
/// being loaded, training, a batch size or generation length the writer
/// already set. Exact literals in the cases people write them (see
/// [`card_marks`]); the explainer reads the lines they find with its own
/// rules (`explain::setting`).
fn nearby_marks() -> &'static Marks {
    static MARKS: OnceLock<Marks> = OnceLock::new();
    MARKS.get_or_init(|| {
        marks(&[
            "vllm",
            "vLLM",
            "VLLM",
            "sglang",
            "SGLang",
            "text-generation",
            "text_generation",
            "demo",
            "generate",
            "pipeline",
            "llama",
            "Llama",
            "LLaMA",
            "ollama",
            "Ollama",
            "mlc",
            "MLC",
            "omfyUI",
            "omfyui",
            "shards",
            "train",
            "Train",
            "batch",
            "Batch",
            "bs=",
            "bs =",
            "new_tokens",
            "new-tokens",
            "inference",
            "Inference",
            "推理",
            "训练",
            // The platform and a crash's recurrence (explain/platform.rs).
            "Windows",
            "Ubuntu",
            "Linux",
            "random",
            "Random",
            "ntermittent",
            "reboot",
            "restart the computer",
            "busy or unavailable",
            // What the writer states that rules a first fix out: the same
            // job ran the first time, the platform does not let them raise
            // shared memory (explain/common.rs: `shown`).
            "first time",
            "First time",
            "shared memory",
            "shared-memory",
            "shared_memory",
            "shm",
            "not support",
            "n't support",
            "not allow",
            "n't allow",
            "not permit",
            "n't permit",
            "cannot change",
            "can't change",
            // Settings that show a fix already applied (explain/catalogue.rs:
            // `FixSpec::applied_when`).
            "expandable_segments",
            "RELAXED_ALLOCATION_LIMITS",
            "allow_growth",
            "ALLOW_GROWTH",
            "set_memory_growth",
            "PREALLOCATE",
            "enforce_eager",
            "enforce-eager",
            "pin_memory",
            "num_workers",
            "lowvram",
            "novram",
            "kv-cache-dtype",
            "kv_cache_dtype",
            // What likely filled the memory where the message gives no
            // size (explain/common.rs: `allocation_failed_title`): a prompt
            // cache's logged size, TensorRT's engine build.
            "Prompt Cache",
            "prompt cache",
            "getBestTactic",
            "timeReformat",
            "TensorRT Engine",
            "TensorRT engine",
            // A checkpoint being written just before a bare `Killed`
            // (explain/setting.rs: `saving_checkpoint`).
            "Saving",
            "saving",
            "SAVING",
            "Summoning checkpoint",
            "torch.save",
            // DeepSpeed's reading of host memory before its launcher's
            // kills (detect/launcher.rs).
            "CPU Virtual Memory",
            // The program that ran, where the message itself does not name
            // it (explain/setting.rs: `Framework::of`): CuPy, ONNX Runtime
            // and its TensorRT execution provider.
            "cupy",
            "CuPy",
            // TensorFlow's modules, package and op-node annotation
            // (record.rs: `Framework::of`), each as that pattern reads it:
            // `tensorflow` alone is on every line of TensorFlow's own log
            // (`W tensorflow/tsl/framework/bfc_allocator.cc:296]`), which
            // would then all be read before each of its warnings.
            "tensorflow.python.",
            "packages/tensorflow",
            "packages\\tensorflow",
            "tensorflow/core/",
            "tensorflow\\core\\",
            "tensorflow/stream_executor/",
            "tensorflow\\stream_executor\\",
            "tensorflow/compiler/",
            "tensorflow\\compiler\\",
            "errors_impl",
            "{{node ",
            "onnxruntime",
            "OnnxRuntime",
            "ONNXRuntime",
            "TensorrtExecutionProvider",
            // The GPU's name: a GeForce card has no data-centre tools
            // (explain/xid.rs: `gpu_class_of`).
            "GeForce",
            "RTX",
            "GTX",
            "Tesla",
            // The call that failed, where the writer names it before the
            // status (detect/memory_kind.rs): host-pinning calls, and a
            // kernel's work-group local memory.
            "HostRegister",
            "HostAlloc",
            "MallocHost",
            "HostMalloc",
            "work_group_static",
            "local_accessor",
            "group_local_memory",
            // CUDA C/C++ projects' error-check helpers (explain/gpu_crash.rs).
            "checkCudaErrors",
            "cudaCheckError",
            "CudaCheckError",
            "CUDA_CHECK",
            "cudaSafeCall",
            "cutilSafeCall",
            "HANDLE_ERROR",
            "gpuErrchk",
            "GPUassert",
            // darknet's run and ncnn's named upscalers, where the message
            // does not name them (explain/setting.rs: `darknet_shows`,
            // `ncnn_upscaler_named`).
            "darknet",
            "Darknet",
            "yolo",
            "YOLO",
            "subdivision",
            "CUDA status Error",
            "esrgan",
            "ESRGAN",
            "waifu2x",
            "cugan",
            "CUGAN",
            "realsr-ncnn",
            "srmd-ncnn",
            "upscayl",
            "Upscayl",
            // A Mac's own paths and names, where a kill's report does not
            // say which system sent it (explain/platform.rs).
            "/Users/",
            "macOS",
            "MacBook",
            "/opt/homebrew",
            "Python.framework",
            // A file the program failed to read just before a bare
            // `std::bad_alloc` (explain/disguised.rs: `after_failed_read`).
            "ould not open",
            "ouldn't open",
            "annot open",
            "nable to open",
            "nable to read",
            "ailed to open",
            "ailed to read",
            "rror reading",
            "rror opening",
            "o such file",
            " error!",
        ])
    })
}

/// One device's memory as a writer states it on a line of its own after a
/// message (`GPU 0: 357 MiB free, 45.7 GB used`, either figure alone or
/// first): the device's index and the figures, in bytes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct DeviceState {
    pub device: u32,
    pub free_bytes: Option<u64>,
    pub used_bytes: Option<u64>,
}

/// A writer's line that states one device's free or used memory, read
/// after a message for the device the message names. Nothing else on the
/// line: a sentence that mentions a device's memory may be of another run.
pub fn device_state_line(line: &[u8]) -> Option<DeviceState> {
    static RE: OnceLock<Regex> = OnceLock::new();
    if !(line.windows(5).any(|w| w == b" free") || line.windows(5).any(|w| w == b" used")) {
        return None;
    }
    let re = RE.get_or_init(|| {
        constant_regex(
            r"^\s*GPU\s?(\d{1,3})\s*:\s*(\d+(?:\.\d+)?)\s*(KiB|MiB|GiB|TiB|KB|MB|GB|TB)\s+(free|used)(?:\s*,\s*(\d+(?:\.\d+)?)\s*(KiB|MiB|GiB|TiB|KB|MB|GB|TB)\s+(free|used))?\s*$",
        )
    });
    let text = std::str::from_utf8(line).ok()?;
    let c = re.captures(text)?;
    let mut state = DeviceState {
        device: c[1].parse().ok()?,
        free_bytes: None,
        used_bytes: None,
    };
    for at in [2, 5] {
        let (Some(number), Some(unit), Some(what)) = (c.get(at), c.get(at + 1), c.get(at + 2))
        else {
            continue;
        };
        let bytes = crate::units::to_bytes(number.as_str(), unit.as_str()).ok();
        match what.as_str() {
            "free" => state.free_bytes = state.free_bytes.or(bytes),
            _ => state.used_bytes = state.used_bytes.or(bytes),
        }
    }
    Some(state)
}

/// Bytes of nearby lines kept with one finding, and of one such line.
pub const NEARBY_MAX: usize = 1024;
const NEARBY_LINE_MAX: usize = 320;

/// Lines read after a message for the writer's words about the run.
pub const NEARBY_AFTER_LINES: u32 = 6;

/// The lines of `text` that hold a [`nearby_marks`] word, each with where
/// it starts in `text` (each cut to [`NEARBY_LINE_MAX`] bytes, at most
/// [`NEARBY_MAX`] bytes in all, the last ones kept). Most text holds none:
/// the words are looked for as bytes first.
pub fn nearby_lines_in(text: &[u8]) -> Vec<(usize, String)> {
    if !nearby_marks().is_match(text) {
        return Vec::new();
    }
    let mut lines = Vec::new();
    let mut start = 0;
    for line in text.split(|&b| b == b'\n') {
        let at = start;
        start += line.len() + 1;
        if line.is_empty() || !nearby_marks().is_match(line) {
            continue;
        }
        let line = &line[..line.len().min(NEARBY_LINE_MAX)];
        lines.push((at, String::from_utf8_lossy(line).trim().to_string()));
    }
    let mut kept = 0;
    let first = lines
        .iter()
        .rposition(|(_, l)| {
            kept += l.len() + 1;
            kept > NEARBY_MAX
        })
        .map_or(0, |i| i + 1);
    lines.split_off(first)
}

/// Whether `line` holds a word that [`stated_in`] or [`nearby_lines_in`]
/// reads. None of those words holds a digit, so lines that differ only in
/// their figures answer alike: the scanner decides it once per line shape.
pub fn may_state(line: &[u8]) -> bool {
    nearby_marks().is_match(line) || card_marks().is_match(line) || engine_marks().is_match(line)
}

/// The nearby lines before a message and its own line's prefix, joined.
pub fn stated_nearby(lines: Vec<String>, prefix: &str) -> String {
    let mut nearby = lines.join("\n");
    for (_, words) in nearby_lines_in(prefix.as_bytes()) {
        nearby.push('\n');
        nearby.push_str(&words);
    }
    nearby
}

/// The words the card pattern starts with, in the cases people write them
/// (exact literals: a case-blind automaton over every byte before every
/// message cost more than the rest of a near-miss log's scan).
fn card_marks() -> &'static Marks {
    static MARKS: OnceLock<Marks> = OnceLock::new();
    MARKS.get_or_init(|| {
        marks(&[
            "RX", "RTX", "rtx", "GTX", "gtx", "Radeon", "radeon", "GeForce", "Geforce", "geforce",
            "Tesla", "tesla", "Quadro", "quadro", "显存",
        ])
    })
}

/// The engine pattern's names.
fn engine_marks() -> &'static Marks {
    static MARKS: OnceLock<Marks> = OnceLock::new();
    MARKS.get_or_init(|| marks(&["vllm", "sglang"]))
}

/// Literals searched with SIMD (Teddy) where the CPU has it: an automaton
/// walks every byte, and these are looked for before every message. Teddy
/// takes at most [`TEDDY_WORDS`] literals, so a longer list is searched as
/// several packed searchers, each over a share of it, rather than falling
/// back to the automaton as a whole.
enum Marks {
    Packed(Vec<aho_corasick::packed::Searcher>),
    Automaton(aho_corasick::AhoCorasick),
}

/// The most literals one packed searcher takes (aho-corasick gives up on
/// Teddy above this).
const TEDDY_WORDS: usize = 64;

impl Marks {
    fn is_match(&self, text: &[u8]) -> bool {
        match self {
            Marks::Packed(searchers) => searchers.iter().any(|s| s.find(text).is_some()),
            Marks::Automaton(automaton) => automaton.is_match(text),
        }
    }

    #[cfg(test)]
    fn is_packed(&self) -> bool {
        matches!(self, Marks::Packed(_))
    }
}

#[allow(clippy::expect_used)] // constant literals always build
fn marks(words: &[&str]) -> Marks {
    // Equal shares, each within Teddy's limit.
    let shares = words.len().div_ceil(TEDDY_WORDS).max(1);
    let share = words.len().div_ceil(shares).max(1);
    let packed: Option<Vec<_>> = words
        .chunks(share)
        .map(aho_corasick::packed::Searcher::new)
        .collect();
    match packed {
        Some(searchers) => Marks::Packed(searchers),
        None => Marks::Automaton(aho_corasick::AhoCorasick::new(words).expect("constant literals")),
    }
}

/// [`last_step_in_bytes`] on text.
#[cfg(test)]
pub fn last_step(text: &str) -> Option<u64> {
    last_step_in_bytes(text.as_bytes())
}

/// The last progress counter in `text` (the bytes before a crash).
///
/// The counter nearest the crash is wanted, and it is usually a few lines
/// before it: the last 4 KiB are searched first, then the last 32 KiB, and
/// all of `text` only when those hold none (each window starts at a line).
/// Bytes are searched as they are: a line that is not UTF-8 needs no
/// decoded copy (its invalid bytes match nothing).
pub fn last_step_in_bytes(text: &[u8]) -> Option<u64> {
    for window in [4 * 1024, 32 * 1024] {
        let Some(cut) = text.len().checked_sub(window) else {
            break;
        };
        // After a newline: the start of a line.
        let Some(nl) = memchr::memchr(b'\n', &text[cut..]) else {
            continue;
        };
        if let Some(step) = last_step_in(&text[cut + nl + 1..]) {
            return Some(step);
        }
    }
    last_step_in(text)
}

fn last_step_in(text: &[u8]) -> Option<u64> {
    // Finding the matches needs no capture groups, so the fast engine does
    // it; only the last ones are parsed (profiling a directory of logs with
    // a crash every MiB found captures_iter over the whole window a fifth of
    // the time). The counter wanted is nearly always the last match.
    let p = progress();
    let mut starts: Vec<(usize, &regex::bytes::Regex)> = p
        .bar
        .find_iter(text)
        .map(|m| (m.start(), &p.bar))
        .chain(p.named.find_iter(text).map(|m| (m.start(), &p.named)))
        .collect();
    starts.sort_unstable_by_key(|&(start, _)| start);
    // A bar that counts files being loaded or fetched (`Loading checkpoint
    // shards: 100%|...| 4/4 [`) counts no steps of the job.
    let loading_bar = |start: usize| {
        let line_start = memchr::memrchr(b'\n', &text[..start]).map_or(0, |i| i + 1);
        let head = &text[line_start..start];
        [&b"Loading"[..], b"Downloading", b"Fetching"]
            .iter()
            .any(|word| memchr::memmem::find(head, word).is_some())
    };
    // A counter's word inside a path (`engines/model--step5--vae/unet`)
    // names a file, not progress: the text before it in its
    // whitespace-separated word holds a path separator.
    let in_path = |start: usize| {
        let word_start = text[..start]
            .iter()
            .rposition(|b| b.is_ascii_whitespace())
            .map_or(0, |i| i + 1);
        text[word_start..start]
            .iter()
            .any(|&b| b == b'/' || b == b'\\')
    };
    starts
        .iter()
        .rev()
        .filter(|&&(start, re)| !(std::ptr::eq(re, &p.bar) && loading_bar(start)))
        .filter(|&&(start, re)| !(std::ptr::eq(re, &p.named) && in_path(start)))
        .find_map(|&(start, re)| {
            re.captures_at(text, start)?
                .iter()
                .skip(1)
                .flatten()
                .next()
                .and_then(|m| {
                    let digits: String = std::str::from_utf8(m.as_bytes())
                        .ok()?
                        .chars()
                        .filter(|c| *c != ',')
                        .collect();
                    digits.parse().ok()
                })
        })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_writers_device_state_line_gives_its_figures() {
        let state = device_state_line(b"GPU 0: 357 MiB free, 45.7 GB used").unwrap();
        assert_eq!(state.device, 0);
        assert_eq!(state.free_bytes, Some(357 << 20));
        assert_eq!(state.used_bytes, Some(49_070_001_357)); // round(45.7 × 2^30)
        let state = device_state_line(b"  GPU 1: 21 GB free").unwrap();
        assert_eq!(
            (state.device, state.free_bytes, state.used_bytes),
            (1, Some(21 << 30), None)
        );
        // Prose around the figures is not such a line.
        assert_eq!(
            device_state_line(b"GPU 0: 357 MiB free, so I tried a smaller model"),
            None
        );
        assert_eq!(device_state_line(b"nothing here"), None);
    }

    #[test]
    fn the_failing_devices_state_after_a_message_is_read() {
        // An Ollama issue: the writer's device table under a heading, after
        // blank lines.
        let text = "Error: 500 Internal Server Error: llama runner process has terminated:\nerror loading model: unable to allocate CUDA0 buffer\n\nGPU state before error:\n\nGPU 0: 357 MiB free, 45.7 GB used\nGPU 1: 21 GB free, 25 GB used\n";
        let found = crate::decode_str(text);
        assert_eq!(found.len(), 1);
        assert_eq!(found[0].device, Some(0));
        assert_eq!(found[0].sizes.free_bytes, Some(357 << 20));
        assert_eq!(
            found[0].sizes.extra.get("used_bytes").copied().flatten(),
            Some(49_070_001_357)
        );
        // Another device's line is not the failing one's.
        let text =
            "error loading model: unable to allocate CUDA0 buffer\nGPU 1: 21 GB free, 25 GB used\n";
        assert_eq!(crate::decode_str(text)[0].sizes.free_bytes, None);
    }

    /// The words looked for before messages stay on Teddy wherever the CPU
    /// has it, however long their lists grow.
    #[test]
    #[cfg(target_arch = "x86_64")]
    fn marks_stay_packed_on_simd_cpus() {
        if !std::arch::is_x86_feature_detected!("ssse3") {
            return;
        }
        assert!(nearby_marks().is_packed());
        assert!(card_marks().is_packed());
        assert!(engine_marks().is_packed());
    }

    /// The lines a near-miss log repeats state nothing about the job, so the
    /// lookback before each of its messages skips them (a word that matched
    /// every line of TensorFlow's own log made each be read again).
    #[test]
    fn a_frameworks_own_log_lines_state_nothing() {
        for line in [
            "2023-10-02 00:00:00.179011: W tensorflow/tsl/framework/bfc_allocator.cc:296] Allocator (GPU_0_bfc) ran out of memory trying to allocate 2.14GiB with freed_by_count=0. The caller indicates that this is not a failure, but may mean that there could be performance gains if more memory were available.",
            "   2/1875 [>.............................] - ETA: 2:04 - loss: 0.5000 - accuracy: 0.5050",
        ] {
            assert!(!may_state(line.as_bytes()), "{line}");
        }
        assert!(may_state(b"  File \"/usr/lib/python3/site-packages/tensorflow/python/client/session.py\", line 1365"));
    }

    #[test]
    fn marks_split_over_searchers_find_every_word() {
        let words: Vec<String> = (0..150).map(|i| format!("word{i:03}x")).collect();
        let refs: Vec<&str> = words.iter().map(String::as_str).collect();
        let found = marks(&refs);
        for word in &words {
            assert!(
                found.is_match(format!("a line with {word} in it").as_bytes()),
                "{word}"
            );
        }
        assert!(!found.is_match(b"a line with word15 and nothing else"));
    }

    fn feed_all(builder: &mut TracebackBuilder, lines: &[&str]) -> Vec<TracebackEvent> {
        lines.iter().map(|l| builder.feed(l)).collect()
    }

    #[test]
    fn builds_frames_and_code() {
        let mut b = TracebackBuilder::default();
        let events = feed_all(
            &mut b,
            &[
                "Traceback (most recent call last):",
                "  File \"train.py\", line 42, in <module>",
                "    loss.backward()",
                "    ~~~~~~~~~~~~~^^",
                "  File \"/usr/lib/python3/site-packages/torch/_tensor.py\", line 522, in backward",
                "    torch.autograd.backward(",
                "torch.OutOfMemoryError: CUDA out of memory.",
            ],
        );
        assert_eq!(events.last(), Some(&TracebackEvent::ExceptionLine));
        let tb = b.take_completed().unwrap();
        assert_eq!(tb.frames.len(), 2);
        assert_eq!(tb.frames[0].code.as_deref(), Some("loss.backward()"));
        assert_eq!(tb.frames[1].function, "backward");
        let phase = infer_phase(Some(&tb));
        assert_eq!(phase.name, "backward");
        assert_eq!(phase.confidence, "high");
    }

    #[test]
    fn chains_exceptions() {
        let mut b = TracebackBuilder::default();
        feed_all(
            &mut b,
            &[
                "Traceback (most recent call last):",
                "  File \"a.py\", line 1, in f",
                "RuntimeError: CUDA out of memory.",
            ],
        );
        b.settle();
        feed_all(
            &mut b,
            &[
                "",
                "During handling of the above exception, another exception occurred:",
                "",
                "Traceback (most recent call last):",
                "  File \"a.py\", line 9, in g",
                "RuntimeError: CUDA error: out of memory",
            ],
        );
        let tb = b.take_completed().unwrap();
        assert_eq!(tb.chained.len(), 1);
        assert_eq!(tb.chained[0].relation, "during_handling");
        // The first traceback may itself have been taken by a finding.
        let mut b = TracebackBuilder::default();
        feed_all(
            &mut b,
            &[
                "Traceback (most recent call last):",
                "  File \"a.py\", line 1, in f",
                "RuntimeError: CUDA out of memory.",
            ],
        );
        assert!(b.take_completed().is_some());
        feed_all(
            &mut b,
            &[
                "",
                "The above exception was the direct cause of the following exception:",
                "",
                "Traceback (most recent call last):",
                "  File \"b.py\", line 2, in g",
                "ValueError: wrapped",
            ],
        );
        let tb = b.take_completed().unwrap();
        assert_eq!(tb.chained.len(), 1);
        assert_eq!(tb.chained[0].relation, "direct_cause");
        assert_eq!(tb.chained[0].exception, "RuntimeError: CUDA out of memory.");
        assert_eq!(tb.frames[0].function, "g");
    }

    #[test]
    fn reads_ipython_tracebacks() {
        let mut b = TracebackBuilder::default();
        let events = feed_all(
            &mut b,
            &[
                "---------------------------------------------------------------------------",
                "OutOfMemoryError                          Traceback (most recent call last)",
                "Cell In[7], line 4",
                "      2 for batch in loader:",
                "      3     optimizer.zero_grad()",
                "----> 4     loss = model(batch).loss",
                "      5     loss.backward()",
                "",
                "File ~/venv/lib/python3.10/site-packages/torch/nn/modules/module.py:1501, in Module._call_impl(self, *args, **kwargs)",
                "   1496 # If we don't have any hooks, we want to skip the rest of the logic in",
                "-> 1501     return forward_call(*args, **kwargs)",
                "OutOfMemoryError: CUDA out of memory.",
            ],
        );
        assert_eq!(events.last(), Some(&TracebackEvent::ExceptionLine));
        let tb = b.take_completed().unwrap();
        assert_eq!(tb.frames.len(), 2);
        assert_eq!(
            tb.frames[0].code.as_deref(),
            Some("loss = model(batch).loss")
        );
        assert_eq!(tb.frames[1].function, "Module._call_impl");
        assert_eq!(tb.frames[1].line, 1501);
    }

    #[test]
    fn bounds_long_tracebacks() {
        let mut b = TracebackBuilder::default();
        b.feed("Traceback (most recent call last):");
        for i in 0..100_000 {
            b.feed(&format!("  File \"r.py\", line {i}, in f"));
        }
        b.feed("[Previous line repeated 996 more times]");
        b.feed("RecursionError: maximum recursion depth exceeded");
        let tb = b.take_completed().unwrap();
        assert_eq!(tb.frames.len(), HEAD_FRAMES + TAIL_FRAMES);
        assert_eq!(tb.omitted_frames, 100_000 - 60 + 996);
        assert_eq!(tb.frames.last().unwrap().line, 99_999);
    }

    #[test]
    fn phases_from_code_and_functions() {
        let tb = |frames: &[(&str, &str, &str)]| Traceback {
            frames: frames
                .iter()
                .map(|(file, function, code)| Frame {
                    file: file.to_string(),
                    line: 1,
                    function: function.to_string(),
                    code: Some(code.to_string()),
                })
                .collect(),
            omitted_frames: 0,
            chained: vec![],
        };
        let eval = tb(&[
            ("train.py", "validate", "out = model(x)"),
            (
                "torch/nn/modules/module.py",
                "_call_impl",
                "return forward_call(*args)",
            ),
        ]);
        assert_eq!(infer_phase(Some(&eval)).name, "evaluation");
        let step = tb(&[
            ("train.py", "main", "optimizer.step()"),
            ("torch/optim/adam.py", "step", "adam("),
        ]);
        assert_eq!(infer_phase(Some(&step)).name, "optimizer_step");
        let load = tb(&[(
            "train.py",
            "main",
            "model = AutoModel.from_pretrained(name).to(device)",
        )]);
        assert_eq!(infer_phase(Some(&load)).name, "model_load");
        let fwd = tb(&[
            ("train.py", "main", "out = net(x)"),
            (
                "torch/nn/modules/linear.py",
                "forward",
                "return F.linear(input, self.weight, self.bias)",
            ),
        ]);
        let phase = infer_phase(Some(&fwd));
        assert_eq!(
            (phase.name.as_str(), phase.confidence.as_str()),
            ("forward", "low")
        );
        assert_eq!(infer_phase(None).name, "unknown");
    }

    /// Placing a model on its devices, as real pastes' frames show it:
    /// accelerate's `prepare_model` under `accelerator.prepare(` in a LoRA
    /// training script (cut before its exception line), and `Module.to`
    /// converting every parameter (fixtures/wild/1741.txt); frames of the
    /// same file in a forward pass are no placement.
    #[test]
    fn model_placement_frames_are_model_load() {
        let tb = |frames: &[(&str, &str, &str)]| Traceback {
            frames: frames
                .iter()
                .map(|(file, function, code)| Frame {
                    file: file.to_string(),
                    line: 1,
                    function: function.to_string(),
                    code: (!code.is_empty()).then(|| code.to_string()),
                })
                .collect(),
            omitted_frames: 0,
            chained: vec![],
        };
        let prepare = tb(&[
            (
                "D:\\lora-scripts\\sd-scripts\\train_network.py",
                "train",
                "unet, text_encoder, network, optimizer, train_dataloader, lr_scheduler = accelerator.prepare(",
            ),
            (
                "D:\\lora-scripts\\venv\\lib\\site-packages\\accelerate\\accelerator.py",
                "_prepare_one",
                "return self.prepare_model(obj, device_placement=device_placement)",
            ),
            (
                "D:\\lora-scripts\\venv\\lib\\site-packages\\accelerate\\accelerator.py",
                "prepare_model",
                "model",
            ),
        ]);
        let phase = infer_phase(Some(&prepare));
        assert_eq!(
            (phase.name.as_str(), phase.confidence.as_str()),
            ("model_load", "high")
        );
        // Without the caller's line, the frame in accelerate still says it.
        let inner = tb(&[(
            "site-packages/accelerate/accelerator.py",
            "prepare_model",
            "model",
        )]);
        assert_eq!(infer_phase(Some(&inner)).confidence, "high");
        let to = tb(&[
            (
                "whisper\\__init__.py",
                "load_model",
                "return model.to(device)",
            ),
            (
                "torch\\nn\\modules\\module.py",
                "to",
                "return self._apply(convert)",
            ),
            (
                "torch\\nn\\modules\\module.py",
                "_apply",
                "module._apply(fn)",
            ),
        ]);
        assert_eq!(infer_phase(Some(&to)).name, "model_load");
        let engine = tb(&[
            (
                "train.py",
                "main",
                "model_engine, optimizer, _, _ = deepspeed.initialize(",
            ),
            ("deepspeed/runtime/engine.py", "__init__", ""),
        ]);
        assert_eq!(infer_phase(Some(&engine)).name, "model_load");
        let forward = tb(&[
            ("train.py", "step", "out = net(x)"),
            (
                "torch/nn/modules/module.py",
                "_call_impl",
                "return forward_call(*args)",
            ),
            (
                "deepspeed/runtime/engine.py",
                "forward",
                "loss = self.module(*inputs)",
            ),
        ]);
        assert_eq!(infer_phase(Some(&forward)).name, "forward");
    }

    /// The engine a pasted command line launched (an SGLang paste,
    /// fixtures/wild) and the card size a writer states (fixtures/wild/1546.txt,
    /// a Chinese paste); prose that names neither states nothing.
    /// The writer's lines before a message show a checkpoint being
    /// written; frames that tell a phase come first.
    #[test]
    fn a_save_before_the_message_is_its_phase() {
        let save = phase_of(
            None,
            None,
            "Saving model checkpoint to ./out/checkpoint-500",
        );
        assert_eq!(save.name, "checkpoint_saving");
        assert_eq!(save.confidence, "medium");
        assert_eq!(
            phase_of(None, None, "SAVING CHECKPOINT...").name,
            "checkpoint_saving"
        );
        assert_eq!(
            phase_of(None, None, "Summoning checkpoint.").name,
            "checkpoint_saving"
        );
        assert_eq!(phase_of(None, None, "loss=0.0685").name, "unknown");
        assert_eq!(phase_of(None, None, "saving tokenizer").name, "unknown");
        let backward = Traceback {
            frames: vec![Frame {
                file: "train.py".into(),
                line: 9,
                function: "step".into(),
                code: Some("loss.backward()".into()),
            }],
            omitted_frames: 0,
            chained: Vec::new(),
        };
        let framed = phase_of(Some(&backward), None, "Saving model checkpoint to ./out");
        assert_eq!(framed.name, "backward");
        assert_eq!(phase_after(&backward, &save).name, "backward");
        let silent = Traceback {
            frames: Vec::new(),
            ..backward
        };
        assert_eq!(phase_after(&silent, &save).name, "checkpoint_saving");
    }

    #[test]
    fn reads_what_the_lines_before_state() {
        let sglang = stated_before(b"$ sglang serve --model-path black-forest-labs/FLUX.1-dev --port 30010 --num-gpus 1\n\n");
        assert_eq!(sglang.engine, Some("sglang"));
        let vllm = stated_before(b"python -m vllm.entrypoints.openai.api_server --model x\n");
        assert_eq!(vllm.engine, Some("vllm"));
        let mention = stated_before(b"I read the sglang docs and tried vllm too\n");
        assert_eq!(mention.engine, None);
        let card = stated_before(b"12gb branch not worked on RX6800 with 16gb too.\n");
        assert_eq!(card.card_bytes, Some(16 << 30));
        let zh = stated_before("显存是2G，在训练时报错\n".as_bytes());
        assert_eq!(zh.card_bytes, Some(2 << 30));
        let none = stated_before(b"the batch has 16 images and 12 layers\n");
        assert_eq!(none.card_bytes, None);
    }

    /// Hugging Face's shard-loading bar (a Qwen2 generate paste,
    /// fixtures/wild) counts files, not steps; a training bar is read.
    #[test]
    fn a_loading_bar_is_no_step_counter() {
        let loading = "Loading checkpoint shards: 100%|██████████| 4/4 [00:07<00:00,  1.81s/it]\n";
        assert_eq!(last_step(loading), None);
        let training = "Training:  40%|████      | 4/10 [00:07<00:10,  1.81s/it]\n";
        assert_eq!(last_step(training), Some(4));
        assert_eq!(last_step(&format!("{training}{loading}")), Some(4));
    }

    #[test]
    fn reads_progress_counters() {
        assert_eq!(
            last_step("Epoch 1:  45%|████▌     | 450/1000 [02:13<02:43,  3.37it/s]"),
            Some(450)
        );
        assert_eq!(
            last_step("step=1200 loss=0.3\nstep=1201 loss=0.3"),
            Some(1201)
        );
        assert_eq!(last_step("[iter 500] loss 2.1"), Some(500));
        assert_eq!(last_step("Epoch 3 done"), None);
        assert_eq!(last_step("global_step: 77"), Some(77));
        // Thousands grouped with commas (a BasicSR log line); a comma that
        // only ends the number does not join the next figure.
        assert_eq!(
            last_step("INFO: <epoch:  5, iter:  10,100, lr:1.992e-04> l_pix: 1.8082e-02"),
            Some(10100)
        );
        assert_eq!(last_step("step 5, loss 0.3"), Some(5));
        assert_eq!(last_step("iter 10,1000"), Some(10));
        // A counter's word inside a path names a file (a TensorRT engine
        // directory), not progress; the same word standing alone counts.
        assert_eq!(
            last_step("[I] Loading bytes from engines/disneyPixarCartoon_v10--lcm--step5--tiny_vae-True--h-512--w-512/unet/unet.plan"),
            None
        );
        assert_eq!(last_step("[I] lcm step5 done"), Some(5));
        assert_eq!(last_step("Step 5/100 loss 0.2"), Some(5));
    }

    #[test]
    fn the_counter_nearest_the_crash_wins_whatever_the_window() {
        let filler = "x".repeat(100);
        // A counter only far back: found by the whole-text search.
        let far = format!("step 7\n{}", format!("{filler}\n").repeat(1000));
        assert_eq!(last_step(&far), Some(7));
        // Counters far back and near: the near one, from the first window.
        let near = format!("{far}step 8\n{filler}\n");
        assert_eq!(last_step(&near), Some(8));
        // Between the windows (10 KiB back): from the second window.
        let middle = format!("{far}step 9\n{}", format!("{filler}\n").repeat(100));
        assert_eq!(last_step(&middle), Some(9));
        // A window cut inside a multi-byte character starts at the next line.
        let wide = format!("step 5\n{}", "█".repeat(3000));
        assert_eq!(last_step(&wide), Some(5));
    }
}
