//! What the explainer says, in the language the user reads. The explainer
//! writes every sentence in both languages and the record carries the
//! Chinese next to the English; this picks one. Codes never change.

use crate::explain::FieldRow;
use crate::i18n::{zh, Lang};
use crate::record::{Finding, Kind};

/// The finding with its headline, field rows, verdicts, fixes and notes in
/// `lang` (codes unchanged), for every format, JSON included. Localizing a
/// localized finding again changes nothing.
pub fn localize(f: &Finding, lang: Lang) -> std::borrow::Cow<'_, Finding> {
    if lang == Lang::En {
        return std::borrow::Cow::Borrowed(f);
    }
    let mut out = f.clone();
    let d = &mut out.diagnosis;
    if let Some(chinese) = d.headline_zh.clone() {
        d.headline = chinese;
    }
    for row in &mut d.fields {
        translate_row(row);
    }
    for v in &mut d.verdicts {
        if let Some(chinese) = v.zh.clone() {
            v.title = chinese.title;
            v.detail = chinese.text;
        }
    }
    for fix in &mut d.fixes {
        if let Some(chinese) = fix.zh.clone() {
            fix.title = chinese.title;
            fix.how = chinese.text;
        }
    }
    for note in &mut out.notes {
        if let Some(chinese) = note.zh.clone() {
            note.text = chinese;
        }
    }
    std::borrow::Cow::Owned(out)
}

/// The one-line headline in `lang`: the record's, or computed for a
/// finding that was not explained.
pub fn headline(f: &Finding, lang: Lang) -> String {
    let d = &f.diagnosis;
    if d.headline.is_empty() {
        let said = crate::explain::headline_said(f);
        return said.get(lang).to_string();
    }
    match lang {
        Lang::En => d.headline.clone(),
        Lang::Zh => d.headline_zh.clone().unwrap_or_else(|| d.headline.clone()),
    }
}

/// The field rows in `lang`: the record's, or computed for a finding that
/// was not explained.
pub fn field_rows(f: &Finding, lang: Lang) -> Vec<FieldRow> {
    let mut rows = if f.diagnosis.headline.is_empty() {
        crate::explain::field_rows(f)
    } else {
        f.diagnosis.fields.clone()
    };
    if lang == Lang::Zh {
        for r in &mut rows {
            translate_row(r);
        }
    }
    rows
}

fn translate_row(r: &mut FieldRow) {
    if let Some(chinese) = &r.zh {
        r.label = chinese.title.clone();
        r.meaning = chinese.text.clone();
    }
}

/// The reserved-versus-allocated paragraph in `lang`.
pub fn reserved_gap(f: &Finding, lang: Lang) -> Option<String> {
    crate::explain::reserved_gap(f).map(|gap| match lang {
        Lang::Zh => gap.zh,
        Lang::En => gap.en,
    })
}

/// The name of a training phase in `lang`.
pub fn phase(name: &str, lang: Lang) -> String {
    match lang {
        Lang::Zh => zh::phase(name).map_or_else(|| name.replace('_', " "), str::to_string),
        Lang::En => name.replace('_', " "),
    }
}

/// A phase confidence in `lang`.
pub fn confidence(level: &str, lang: Lang) -> String {
    match lang {
        Lang::Zh => zh::confidence(level).unwrap_or(level).to_string(),
        Lang::En => level.to_string(),
    }
}

/// The label of a fact key in `lang` (`error_name` → "error name" / "错误名").
pub fn fact_label(key: &str, lang: Lang) -> String {
    match lang {
        Lang::Zh => zh::fact_label(key).map_or_else(|| key.replace('_', " "), str::to_string),
        Lang::En => key.replace('_', " "),
    }
}

/// Whether the finding is about host memory (RAM) rather than GPU memory:
/// the one decision the label (内存 vs 显存) and the Details' memory row
/// both follow.
pub fn host_memory(f: &Finding) -> bool {
    // A paging file and /dev/shm (a bus error in a DataLoader worker) are
    // host memory.
    // So is any finding whose top verdict says the machine's RAM ran out
    // (ptxas, a grammar finding about host memory).
    matches!(
        f.kind,
        Kind::HostOom | Kind::HostOomKilled | Kind::WindowsPagingFile | Kind::FatalSignal
    ) || f
        .diagnosis
        .verdicts
        .first()
        .is_some_and(|v| v.code == "host_ram_exhausted")
        // A detector that names host memory, or a worker ended by SIGKILL
        // (the kernel's out-of-memory killer, which frees host RAM), named
        // by its signal or by torchelastic's exit code -9.
        || f.facts.get("memory").is_some_and(|m| m == "host")
        || f.facts.get("root_cause_signal").is_some_and(|s| s == "SIGKILL")
        || f.facts.get("root_cause_exitcode").is_some_and(|c| c.trim() == "-9")
}

/// A fact's value as the "Details" lines show it in `lang`, or `None` when
/// the line has no place there. JSON keeps every value as the detector
/// wrote it; the Chinese lines say in Chinese what oomwhy itself wrote (who
/// reported it, which memory, what kind of code) and leave out a code's
/// meaning that its table has only in English (the verdict says it).
pub fn fact_value(f: &Finding, key: &str, value: &str, lang: Lang) -> Option<String> {
    // The memory row follows the finding's host/device decision, so a
    // prose report's "device" does not stand under a host-RAM headline.
    let value = if key == "memory" && value == "device" && host_memory(f) {
        "host"
    } else {
        value
    };
    if lang == Lang::En {
        return Some(value.to_string());
    }
    match key {
        "reported_by" | "table_title" => Some(crate::i18n::reporter::zh(value)),
        "meaning" => {
            let table = f.facts.get("table").and_then(|t| crate::codes::table(t))?;
            let name = f.facts.get("error_name")?;
            table
                .entries
                .iter()
                .find(|e| e.name == name)
                .map(|e| e.zh)
                .filter(|zh| !zh.is_empty())
                .map(str::to_string)
        }
        _ => Some(zh::fact_value(key, value).unwrap_or(value).to_string()),
    }
}

/// The headline as it follows the finding's label: without a lead that
/// only repeats the label ("Out of memory: " after OUT OF MEMORY, "显存不足："
/// after 显存不足).
pub fn headline_after(f: &Finding, label: &str, lang: Lang) -> String {
    let headline = headline(f, lang);
    let lead = headline
        .split_once([':', '：'])
        .map(|(lead, _)| lead.trim())
        .filter(|lead| !lead.is_empty());
    match lead {
        Some(lead)
            if label.len() >= lead.len()
                && label.is_char_boundary(label.len() - lead.len())
                && label[label.len() - lead.len()..].eq_ignore_ascii_case(lead) =>
        {
            let rest = &headline[lead.len()..];
            let rest = rest
                .trim_start()
                .trim_start_matches([':', '：'])
                .trim_start();
            // The sentence now starts the line: English capitalises its
            // article, never a program's own name (torch-directml).
            let article = ["a ", "an ", "the "].iter().any(|a| rest.starts_with(a));
            let mut chars = rest.chars();
            match chars.next() {
                Some(first) if lang == Lang::En && article => {
                    first.to_uppercase().chain(chars).collect()
                }
                _ => rest.to_string(),
            }
        }
        _ => headline,
    }
}

/// The sections a memory snapshot adds to a finding, in `lang`.
pub(super) fn snapshot_sections(
    report: &crate::record::SnapshotReport,
    lang: Lang,
) -> Vec<(String, Vec<String>)> {
    match lang {
        Lang::En => crate::snapshot::text_sections(report),
        Lang::Zh => zh::snapshot_sections(report),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::record::Finding;

    fn finding(headline: &str, headline_zh: &str) -> Finding {
        let mut f = Finding::new(crate::record::Kind::GenericOom, "a.log", 1, String::new());
        f.diagnosis.headline = headline.into();
        f.diagnosis.headline_zh = Some(headline_zh.into());
        f
    }

    #[test]
    fn a_headline_does_not_repeat_its_label() {
        let f = finding(
            "Out of memory: an allocation failed (CTranslate2)",
            "显存不足：CTranslate2 报告一次分配失败了",
        );
        assert_eq!(
            headline_after(&f, "OUT OF MEMORY", Lang::En),
            "An allocation failed (CTranslate2)"
        );
        assert_eq!(
            headline_after(&f, "显存不足", Lang::Zh),
            "CTranslate2 报告一次分配失败了"
        );
        // "Probably out of memory" ends with the same words.
        assert_eq!(
            headline_after(&f, "很可能是显存不足", Lang::Zh),
            "CTranslate2 报告一次分配失败了"
        );
        let named = finding(
            "Out of memory: torch-directml could not allocate 1 GiB",
            "显存不足：torch-directml 无法分配 1 GiB",
        );
        assert_eq!(
            headline_after(&named, "Out of memory", Lang::En),
            "torch-directml could not allocate 1 GiB"
        );
        // A lead that is not the label stays.
        let other = finding(
            "A Triton kernel needs 1 KiB: too much",
            "Triton kernel 需要 1 KiB：太多",
        );
        assert_eq!(
            headline_after(&other, "OUT OF MEMORY", Lang::En),
            "A Triton kernel needs 1 KiB: too much"
        );
        assert_eq!(
            headline_after(&f, "内存不足", Lang::Zh),
            "显存不足：CTranslate2 报告一次分配失败了"
        );
    }
}
