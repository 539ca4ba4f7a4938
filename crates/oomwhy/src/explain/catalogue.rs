//! Every fix the explainer can offer, as data: a stable id (in the JSON),
//! its title in English and Chinese, where it applies (framework, vendor,
//! PyTorch releases, serving engine, phase) and what it costs. Each family
//! declares its fixes in its own `FIXES`, next to the code that offers them
//! with the finding's figures in both languages (`common::fix`); [`ALL`]
//! gathers them, and a test checks over every fixture that no fix is
//! offered where its own entry says it cannot apply.

use super::setting::{Framework, Release, Runtime, Setting, Vendor};

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
    /// Where the option or API is documented.
    pub sources: &'static [&'static str],
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
            sources: &[],
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
    pub(crate) const fn sources(mut self, sources: &'static [&'static str]) -> FixSpec {
        self.sources = sources;
        self
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
            _ => None,
        }
    }
}

/// Every family's fixes.
pub(crate) const ALL: &[&[FixSpec]] = &[
    super::common::FIXES,
    super::cuda::FIXES,
    super::cudnn::FIXES,
    super::cupy::FIXES,
    super::disguised::FIXES,
    super::generic::FIXES,
    super::gpu_crash::FIXES,
    super::gpu_lost::FIXES,
    super::host::FIXES,
    super::inference::FIXES,
    super::mps::FIXES,
    super::nccl::FIXES,
    super::signal::FIXES,
    super::status::FIXES,
    super::tensorflow::FIXES,
    super::tf_warning::FIXES,
    super::toolchain::FIXES,
    super::torch::FIXES,
    super::windows::FIXES,
    super::xid::FIXES,
    super::xla::FIXES,
];

/// The catalogue entry of a fix id.
pub(crate) fn spec(id: &str) -> Option<&'static FixSpec> {
    ALL.iter()
        .flat_map(|fixes| fixes.iter())
        .find(|s| s.id == id)
}

/// The Chinese title of a fix, by its English title (`--summary` groups
/// fixes by title).
pub(crate) fn title_zh(title: &str) -> Option<&'static str> {
    ALL.iter()
        .flat_map(|fixes| fixes.iter())
        .find(|s| s.title == title)
        .map(|s| s.title_zh)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_are_unique_and_kebab_case() {
        let mut seen = std::collections::HashSet::new();
        let mut titles = std::collections::HashMap::new();
        for spec in ALL.iter().flat_map(|fixes| fixes.iter()) {
            assert!(seen.insert(spec.id), "{} twice in the catalogue", spec.id);
            // One advice can have several entries (its API differs by
            // framework or release), but one title has one Chinese title.
            if let Some(zh) = titles.insert(spec.title, spec.title_zh) {
                assert_eq!(zh, spec.title_zh, "{:?} has two Chinese titles", spec.title);
            }
            assert!(
                spec.title_zh
                    .chars()
                    .any(|c| ('\u{4e00}'..='\u{9fff}').contains(&c)),
                "{}: the Chinese title has no Chinese",
                spec.id
            );
            assert!(
                !spec.id.is_empty()
                    && spec
                        .id
                        .chars()
                        .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-'),
                "{} is not kebab-case",
                spec.id
            );
        }
    }
}

/// The catalogue checked against what oomwhy really says: over every
/// fixture and every real paste in `fixtures/wild`, no fix is offered where
/// its own entry says it cannot apply.
#[cfg(test)]
mod over_the_fixtures {
    use super::*;
    use std::path::Path;

    fn texts() -> Vec<(String, String)> {
        let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../fixtures");
        let mut out = Vec::new();
        for dir in [root.clone(), root.join("wild")] {
            let Ok(entries) = std::fs::read_dir(&dir) else {
                continue;
            };
            for entry in entries.flatten() {
                let path = entry.path();
                let wanted = matches!(
                    path.extension().and_then(|e| e.to_str()),
                    Some("log" | "txt")
                ) && !path.to_string_lossy().ends_with(".zh.txt");
                // The goldens beside each fixture are oomwhy's own output.
                let golden = dir == root && path.extension().is_some_and(|e| e == "txt");
                if !wanted || golden {
                    continue;
                }
                if let Ok(bytes) = std::fs::read(&path) {
                    out.push((
                        path.display().to_string(),
                        String::from_utf8_lossy(&bytes).into_owned(),
                    ));
                }
            }
        }
        out
    }

    #[test]
    fn no_fix_is_offered_where_its_entry_says_it_cannot_apply() {
        let texts = texts();
        assert!(texts.len() > 500, "fixtures not found: {}", texts.len());
        let mut wrong = Vec::new();
        for (path, text) in &texts {
            for f in crate::decode_str(text) {
                let setting = Setting::of(&f);
                // What the family offers, before the explainer's own check.
                for fix in &crate::explain::offered_fixes(&f, &f.diagnosis) {
                    if let Some(why) = spec(&fix.id).and_then(|s| s.contradiction(&setting)) {
                        wrong.push(format!("{path}: {} ({why})", fix.id));
                    }
                }
            }
        }
        assert!(wrong.is_empty(), "{}", wrong.join("\n"));
    }
}
