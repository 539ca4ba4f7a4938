//! NVIDIA's kernel-driver Xid events as data (`xid.tsv`): each code's title,
//! what it means and what to do, in English and Chinese side by side, with
//! its source. The explainer (`explain/xid.rs`) reads it; a row missing a
//! column or a language is dropped, and a test checks that none is.

use super::advice::{has_chinese, Both};
use std::sync::OnceLock;

/// One Xid.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Entry {
    /// The code as the driver prints it (`79`).
    pub xid: &'static str,
    pub title: Both,
    pub meaning: Both,
    pub action: Both,
    /// The GPU, its memory, links or firmware failed, not the program.
    pub hardware: bool,
    /// The id of the fix that carries out `action` (a fix of `explain/xid.rs`).
    pub fix: &'static str,
    /// Where it was read.
    pub source: &'static str,
}

const TEXT: &str = include_str!("xid.tsv");

fn rows() -> impl Iterator<Item = &'static str> {
    TEXT.lines()
        .filter(|l| !l.trim().is_empty() && !l.starts_with('#'))
}

fn parse_row(line: &'static str) -> Option<Entry> {
    let columns: Vec<&'static str> = line.split('\t').map(str::trim).collect();
    let [xid, title_en, title_zh, meaning_en, meaning_zh, action_en, action_zh, hardware, fix, source] =
        columns[..]
    else {
        return None;
    };
    let both = |en: &'static str, zh: &'static str| {
        (!en.is_empty() && has_chinese(zh)).then_some(Both { en, zh })
    };
    let hardware = match hardware {
        "yes" => true,
        "no" => false,
        _ => return None,
    };
    let entry = Entry {
        xid,
        title: both(title_en, title_zh)?,
        meaning: both(meaning_en, meaning_zh)?,
        action: both(action_en, action_zh)?,
        hardware,
        fix,
        source,
    };
    let complete = xid.parse::<u32>().is_ok() && !fix.is_empty() && !source.is_empty();
    complete.then_some(entry)
}

/// Every row, parsed once, in the file's order.
pub fn all() -> &'static [Entry] {
    static ALL: OnceLock<Vec<Entry>> = OnceLock::new();
    ALL.get_or_init(|| rows().filter_map(parse_row).collect())
}

/// The entry of an Xid, as the driver prints its number.
pub fn get(xid: &str) -> Option<&'static Entry> {
    all().iter().find(|e| e.xid == xid)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_row_is_complete_in_both_languages() {
        assert_eq!(
            all().len(),
            rows().count(),
            "a row lacks a column or a half"
        );
        let mut seen = std::collections::HashSet::new();
        for entry in all() {
            assert!(seen.insert(entry.xid), "Xid {} twice", entry.xid);
            for half in [entry.title, entry.meaning, entry.action] {
                assert!(
                    !has_chinese(half.en),
                    "Xid {}: Chinese in English",
                    entry.xid
                );
            }
        }
    }

    #[test]
    fn the_xids_jobs_meet_most_are_described() {
        for xid in [
            "13", "31", "32", "43", "45", "48", "61", "62", "63", "64", "68", "69", "74", "79",
            "92", "94", "95", "109", "119", "120", "154",
        ] {
            assert!(get(xid).is_some(), "Xid {xid}");
        }
        assert!(get("150").is_none());
    }
}
