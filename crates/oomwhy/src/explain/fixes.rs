//! The fix catalogue looked up: every family's `FIXES` (each a
//! [`FixSpec`], see `catalogue.rs`, gathered in `explain::ALL_FIXES` next to
//! the list of explainers) by id or title, and the tests over all of them.

use super::catalogue::FixSpec;
use super::ALL_FIXES as ALL;

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
    use crate::explain::setting::Setting;

    #[test]
    fn no_fix_is_offered_where_its_entry_says_it_cannot_apply() {
        let texts = crate::explain::test_support::fixture_pastes();
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
