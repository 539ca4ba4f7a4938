//! Every fix the explainer can offer, as data: a stable id (in the JSON),
//! its title in English and Chinese, where it applies (framework, vendor,
//! PyTorch releases, serving engine, phase) and what it costs. Each family
//! declares its fixes in its own `FIXES`, next to the code that offers them
//! with the finding's figures in both languages (`common::fix`); `fixes.rs`
//! gathers them, and its test checks over every fixture that no fix is
//! offered where its own entry says it cannot apply.

use super::setting::{Framework, Program, Release, Runtime, Setting, Vendor};
use crate::i18n::Said;
use crate::record::{Chinese, Fix};

/// What applying a fix costs. Fixes that follow the same verdict are
/// offered cheapest first.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub(crate) enum Cost {
    /// Look before changing anything: a command or a reading that shows
    /// the cause.
    Look,
    /// A setting, a freed resource or a bug fixed in the user's code:
    /// nothing is lost.
    Free,
    /// Costs speed: recomputation, offloading, smaller steps.
    Speed,
    /// Changes what is computed: precision, model, sequence length,
    /// resolution, batch size.
    Quality,
}

/// The serving engines a fix is for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Engines {
    /// Any workload.
    Any,
    /// Training or plain inference code the user writes, not a serving
    /// engine whose own settings decide its memory (vLLM, SGLang, TGI).
    NotServing,
    /// Only these engines or front ends.
    Only(&'static [Runtime]),
}

/// The phases a fix is for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Phases {
    Any,
    /// While parameters are loaded, moved or converted.
    Loading,
    /// During the work itself (steps, batches, requests).
    NotLoading,
    /// During training steps: not while loading, and not in inference
    /// (generation, pipelines, evaluation, serving), which has no
    /// gradients or optimizer.
    Training,
}

/// One fix of the catalogue.
#[derive(Debug, Clone, Copy)]
pub(crate) struct FixSpec {
    /// Stable id, kebab-case; never reused for other advice.
    pub id: &'static str,
    /// What to do, in one line: English.
    pub title: &'static str,
    /// The same in Chinese.
    pub title_zh: &'static str,
    /// The frameworks whose API the fix names; empty for any.
    pub frameworks: &'static [Framework],
    /// The vendors whose tools or settings the fix names; empty for any.
    pub vendors: &'static [Vendor],
    /// The first PyTorch release with the option or API the fix names.
    pub torch_since: Option<Release>,
    /// The last PyTorch release the fix is for (APIs that were replaced).
    pub torch_until: Option<Release>,
    pub engines: Engines,
    pub phases: Phases,
    pub cost: Cost,
    /// The fix changes a model's workload (batch size, precision, a smaller
    /// or quantised model): not for a program that runs no model.
    pub models_only: bool,
    /// Where the option or API is documented.
    pub sources: &'static [&'static str],
    /// What the paste shows was already done (or makes pointless) that
    /// rules this fix out (see [`Shown`]).
    pub pointless_when: &'static [Shown],
    /// What the paste states that rules this fix out as the first thing to
    /// try (the platform does not allow it; the same job fitted before):
    /// the fix is still offered, after the others.
    pub not_first_when: &'static [Shown],
    /// The settings that show this fix was already applied, as a paste
    /// prints them (`UR_L0_ENABLE_RELAXED_ALLOCATION_LIMITS=1`,
    /// `--enforce-eager`), compared lowercased with the spaces around `=`
    /// removed: where the writer shows one, the fix is not offered again.
    pub applied_when: &'static [&'static str],
}

/// What a paste shows about the run beyond its figures, read once per
/// finding ([`super::common::shown`]): a fix that repeats what was already
/// done is not offered.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Shown {
    /// The batch size is already 1, or the writer lowered it without effect.
    BatchAlreadyLowered,
    /// Gradient (activation) checkpointing is already on.
    CheckpointingOn,
    /// It failed before any batch ran: while the model's variables were
    /// created or its weights loaded.
    BeforeAnyStep,
    /// The model already runs quantised to 4 bits (a Q4 GGUF, bitsandbytes'
    /// load_in_4bit, AWQ, GPTQ): a smaller quantisation saves little more.
    QuantisedTo4Bits,
    /// The writer states that the platform does not let them raise the
    /// shared-memory (/dev/shm) limit ("sagemaker does not support such a
    /// parameter" beside a link about shared memory).
    SharedMemoryFixed,
    /// The writer states that the same job ran the first time and fails
    /// only when run again: the memory is not too small, something from
    /// the earlier run still holds it.
    FittedOnEarlierRun,
    /// The paste shows a setting of the fix with this id already applied
    /// (see [`FixSpec::applied_when`]).
    Applied(&'static str),
}

/// `text` lowercased, with the spaces around `=` removed, as
/// [`FixSpec::applied_when`] compares it.
pub(crate) fn settings_form(text: &str) -> String {
    let lower = text.to_lowercase();
    let mut out = String::with_capacity(lower.len());
    let mut chars = lower.chars().peekable();
    while let Some(c) = chars.next() {
        if c == ' ' || c == '\t' {
            // Drop a run of blanks that an `=` follows or precedes.
            let mut run = String::from(c);
            while let Some(&n) = chars.peek() {
                if n == ' ' || n == '\t' {
                    run.push(n);
                    chars.next();
                } else {
                    break;
                }
            }
            if chars.peek() == Some(&'=') || out.ends_with('=') {
                continue;
            }
            out.push_str(&run);
        } else {
            out.push(c);
        }
    }
    out
}

/// Whether `form` (see [`settings_form`]) shows `setting` set by the
/// writer, not advised: the message's own hint ("try setting
/// PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True") is advice.
pub(crate) fn shows_applied(form: &str, setting: &str) -> bool {
    let setting = setting.to_lowercase();
    form.match_indices(&setting).any(|(at, _)| {
        let mut from = at.saturating_sub(40);
        while !form.is_char_boundary(from) {
            from -= 1;
        }
        let before = &form[from..at];
        ![
            "try setting",
            "consider setting",
            "try using",
            "recommend",
            "you can set",
            "try ",
        ]
        .iter()
        .any(|advice| before.contains(advice))
    })
}

/// A 4-bit quantisation named as what runs: GGUF's Q4 and IQ4 types
/// (`Q4_K_M`, `Q4_0`, `IQ4_XS`), bitsandbytes' `load_in_4bit=True` and its
/// `bnb-4bit` checkpoints, AWQ and GPTQ checkpoints or options. `4bit=False`
/// and a Q5/Q8 type are none.
pub(crate) fn four_bit_pattern() -> &'static crate::GatedRegex {
    static RE: crate::GatedRegex = crate::GatedRegex::new(
        &["q4_", "load_in_4bit", "bnb", "awq", "gptq"],
        r"(?i)\b(?:i?q4_(?:k_[msl]|[01]|k|nl|xs))\b|\bload_in_4bit\s*[=:]\s*true\b|\bbnb[-_]4bit\b|\b(?:awq|gptq)\b",
    );
    &RE
}

impl FixSpec {
    /// A fix for any setting, free, with no source.
    pub(crate) const fn new(
        id: &'static str,
        title: &'static str,
        title_zh: &'static str,
    ) -> FixSpec {
        FixSpec {
            id,
            title,
            title_zh,
            frameworks: &[],
            vendors: &[],
            torch_since: None,
            torch_until: None,
            engines: Engines::Any,
            phases: Phases::Any,
            cost: Cost::Free,
            models_only: false,
            sources: &[],
            pointless_when: &[],
            not_first_when: &[],
            applied_when: &[],
        }
    }
    pub(crate) const fn frameworks(mut self, frameworks: &'static [Framework]) -> FixSpec {
        self.frameworks = frameworks;
        self
    }
    pub(crate) const fn vendors(mut self, vendors: &'static [Vendor]) -> FixSpec {
        self.vendors = vendors;
        self
    }
    pub(crate) const fn torch_since(mut self, release: Release) -> FixSpec {
        self.torch_since = Some(release);
        self
    }
    pub(crate) const fn torch_until(mut self, release: Release) -> FixSpec {
        self.torch_until = Some(release);
        self
    }
    pub(crate) const fn engines(mut self, engines: Engines) -> FixSpec {
        self.engines = engines;
        self
    }
    pub(crate) const fn phases(mut self, phases: Phases) -> FixSpec {
        self.phases = phases;
        self
    }
    pub(crate) const fn cost(mut self, cost: Cost) -> FixSpec {
        self.cost = cost;
        self
    }
    pub(crate) const fn models_only(mut self) -> FixSpec {
        self.models_only = true;
        self
    }
    pub(crate) const fn sources(mut self, sources: &'static [&'static str]) -> FixSpec {
        self.sources = sources;
        self
    }
    pub(crate) const fn pointless_when(mut self, shown: &'static [Shown]) -> FixSpec {
        self.pointless_when = shown;
        self
    }

    pub(crate) const fn applied_when(mut self, settings: &'static [&'static str]) -> FixSpec {
        self.applied_when = settings;
        self
    }

    pub(crate) const fn not_first_when(mut self, shown: &'static [Shown]) -> FixSpec {
        self.not_first_when = shown;
        self
    }

    /// Whether what the paste states rules this fix out as the first one.
    pub(crate) fn not_first(&self, shown: &[Shown]) -> bool {
        self.not_first_when.iter().any(|s| shown.contains(s))
    }

    /// Whether what the paste shows rules this fix out.
    pub(crate) fn pointless(&self, shown: &[Shown]) -> bool {
        self.pointless_when.iter().any(|s| shown.contains(s))
            || shown.contains(&Shown::Applied(self.id))
    }

    /// Why this fix cannot apply to a finding that ran in `s`; `None` when
    /// nothing the finding shows contradicts it. What the finding does not
    /// show (an unknown framework or vendor) contradicts nothing.
    pub(crate) fn contradiction(&self, s: &Setting) -> Option<String> {
        if !self.frameworks.is_empty()
            && s.framework != Framework::Unknown
            && !self.frameworks.contains(&s.framework)
        {
            return Some(format!(
                "for {:?}, the finding is {:?}",
                self.frameworks, s.framework
            ));
        }
        // A native program that names itself runs no Python framework: a
        // framework's API is not for it, though its framework is unknown.
        if !self.frameworks.is_empty()
            && s.program.is_native()
            && !self.frameworks.contains(&s.framework)
        {
            return Some(format!(
                "for {:?}, the finding is {:?}",
                self.frameworks, s.program
            ));
        }
        // PyTorch's API only where PyTorch can be running: not for a
        // traceback through another library that shows no PyTorch.
        if !self.frameworks.is_empty()
            && self.frameworks.iter().all(|f| *f == Framework::PyTorch)
            && s.python_without_torch
        {
            return Some("for PyTorch, the traceback shows Python without PyTorch".into());
        }
        if self.models_only && s.program == Program::NoModel {
            return Some("for a model's workload, the program runs no model".into());
        }
        if !self.vendors.is_empty()
            && s.vendor != Vendor::Unknown
            && !self.vendors.contains(&s.vendor)
        {
            return Some(format!(
                "for {:?}, the finding is {:?}",
                self.vendors, s.vendor
            ));
        }
        let (first, last) = s.torch;
        if let (Some(since), Some(last)) = (self.torch_since, last) {
            if last < since {
                return Some(format!(
                    "needs PyTorch ≥ {since:?}, the message form ends at {last:?}"
                ));
            }
        }
        if let Some(until) = self.torch_until {
            if first > until {
                return Some(format!(
                    "for PyTorch ≤ {until:?}, the message form starts at {first:?}"
                ));
            }
        }
        match (self.engines, s.runtime) {
            (Engines::NotServing, Some(r)) if r.is_engine() => {
                return Some(format!(
                    "not for a serving engine, the finding ran in {r:?}"
                ))
            }
            (Engines::Only(engines), Some(r)) if !engines.contains(&r) => {
                return Some(format!("for {engines:?}, the finding ran in {r:?}"))
            }
            (Engines::Only(engines), None) => {
                return Some(format!("for {engines:?}, the finding ran in none"))
            }
            _ => {}
        }
        match self.phases {
            Phases::Loading if !s.loading => {
                Some("for loading, the finding was not loading".into())
            }
            Phases::NotLoading if s.loading => {
                Some("not for loading, the finding was loading".into())
            }
            Phases::Training if s.loading => Some("for training, the finding was loading".into()),
            Phases::Training if s.inference => {
                Some("for training, the finding was inference".into())
            }
            _ => None,
        }
    }
}

/// The fix `spec` of the catalogue with how to apply it here, in both
/// languages.
pub(super) fn fix(spec: &FixSpec, how: Said) -> Fix {
    Fix {
        id: spec.id.to_string(),
        title: spec.title.to_string(),
        how: how.en,
        zh: Some(Chinese {
            title: spec.title_zh.to_string(),
            text: how.zh,
        }),
    }
}

/// The program decides the advice, checked over every fixture and every
/// real paste in `fixtures/wild`: a finding whose program names itself as
/// native gets no Python framework's API, and one whose program runs no
/// model gets no model-workload advice, in any fix it is given.
#[cfg(test)]
mod program_fixes_over_the_fixtures {
    use crate::explain::setting::{Program, Setting};

    /// Words that only a Python framework's advice uses.
    const FRAMEWORK_WORDS: &[&str] = &[
        "torch",
        "PYTORCH_",
        "TORCH_CUDA_ARCH_LIST",
        "python ",
        "DataLoader",
        "XLA_PYTHON",
        "tf.config",
    ];

    /// Words of advice about a model's workload.
    const MODEL_WORDS: &[&str] = &["batch size", "quantised model", "gradient", "bfloat16"];

    #[test]
    fn a_native_program_gets_its_own_fixes() {
        let pastes = crate::explain::test_support::fixture_pastes();
        assert!(pastes.len() > 500, "fixtures not found: {}", pastes.len());
        let mut wrong = Vec::new();
        let mut native = 0;
        for (path, text) in &pastes {
            for f in crate::decode_str(text) {
                let program = Setting::of(&f).program;
                if !program.is_native() {
                    continue;
                }
                native += 1;
                for fix in &f.diagnosis.fixes {
                    let said = format!("{} {}", fix.title, fix.how);
                    let mut words: Vec<&str> = FRAMEWORK_WORDS.to_vec();
                    if program == Program::NoModel {
                        words.extend(MODEL_WORDS);
                    }
                    for word in words.iter().filter(|w| said.contains(*w)) {
                        wrong.push(format!("{path}: {} says {word:?} ({program:?})", fix.id));
                    }
                }
            }
        }
        // FFmpeg's NVENC, darknet, llama.cpp, TensorRT, Blender's Cycles,
        // deviceQuery and the OOM killer's perl are all among the pastes.
        assert!(native >= 20, "only {native} native findings");
        assert!(wrong.is_empty(), "{}", wrong.join("\n"));
    }

    /// Words of training advice: no gradients or optimizer exist in
    /// inference.
    const TRAINING_WORDS: &[&str] = &[
        "gradient accumulation",
        "GradScaler",
        "gradient_checkpointing_enable",
        "optimizer.step",
    ];

    /// A finding whose surrounding lines show inference (a chat demo,
    /// generation, an engine's version line) and whose traceback shows no
    /// backward pass gets no training advice, in any fix, over every
    /// fixture and real paste.
    #[test]
    fn inference_shown_around_a_message_gets_no_training_advice() {
        use crate::explain::setting::{run_nearby, RunNearby};
        let pastes = crate::explain::test_support::fixture_pastes();
        let mut wrong = Vec::new();
        let mut shown = 0;
        for (path, text) in &pastes {
            for f in crate::decode_str(text) {
                let training_frames =
                    matches!(f.phase.name.as_str(), "backward" | "optimizer_step");
                if run_nearby(&f) != Some(RunNearby::Inference) || training_frames {
                    continue;
                }
                shown += 1;
                assert!(Setting::of(&f).inference, "{path}: {:?}", f.nearby);
                for fix in &f.diagnosis.fixes {
                    let said = format!("{} {}", fix.title, fix.how);
                    for word in TRAINING_WORDS.iter().filter(|w| said.contains(*w)) {
                        wrong.push(format!("{path}: {} says {word:?}", fix.id));
                    }
                }
            }
        }
        // Chat and web demos, generate() scripts and engines' logs are
        // among the pastes.
        assert!(
            shown >= 10,
            "only {shown} findings show inference around them"
        );
        assert!(wrong.is_empty(), "{}", wrong.join("\n"));
    }
}
