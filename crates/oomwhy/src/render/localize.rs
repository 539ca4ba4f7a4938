//! What the explainer says, in the language the user reads: the Chinese
//! catalogue's text where it has an entry, the explainer's English otherwise.

use crate::explain::FieldRow;
use crate::i18n::{zh, Lang};
use crate::record::Finding;

/// The finding with its verdict titles and details, fixes and notes in `lang`
/// (codes unchanged), for every format, JSON included.
pub fn localize(f: &Finding, lang: Lang) -> std::borrow::Cow<'_, Finding> {
    if lang == Lang::En {
        return std::borrow::Cow::Borrowed(f);
    }
    let mut out = f.clone();
    for v in &mut out.diagnosis.verdicts {
        if let Some(chinese) = v.zh.take() {
            v.title = chinese.title;
            v.detail = chinese.text;
        } else if let Some((title, detail)) = zh::verdict(&v.code, f) {
            v.title = title;
            v.detail = detail;
        }
    }
    // Kept (not taken): the renderers ask `headline` of the localized
    // finding again, which must not fall back to the catalogue's template.
    if let Some(chinese) = out.diagnosis.headline_zh.clone() {
        out.diagnosis.headline = chinese;
    } else if let Some(chinese) = zh::headline(f) {
        out.diagnosis.headline = chinese;
    }
    for row in &mut out.diagnosis.fields {
        translate_row(row);
    }
    for note in &mut out.notes {
        if let Some(chinese) = zh::note(note) {
            *note = chinese;
        }
    }
    for fix in &mut out.diagnosis.fixes {
        if let Some(chinese) = fix.zh.take() {
            fix.title = chinese.title;
            fix.how = chinese.text;
        } else if let Some((title, how)) = zh::fix(&fix.title, &fix.how) {
            fix.title = title;
            fix.how = how;
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
        return match lang {
            Lang::Zh if said.zh.is_empty() => zh::headline(f).unwrap_or(said.en),
            Lang::Zh => said.zh,
            Lang::En => said.en,
        };
    }
    match lang {
        Lang::En => d.headline.clone(),
        Lang::Zh => d
            .headline_zh
            .clone()
            .or_else(|| zh::headline(f))
            .unwrap_or_else(|| d.headline.clone()),
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

/// Idempotent: the renderers translate the rows of a localized finding
/// again, and a row written in both languages keeps its own Chinese (a
/// label such as `anon-rss` reads the same in both and would otherwise be
/// looked up in the catalogue).
fn translate_row(r: &mut FieldRow) {
    if let Some(chinese) = r.zh.clone() {
        r.label = chinese.title;
        r.meaning = chinese.text;
    } else if let Some((label, meaning)) = zh::row(&r.label, &r.meaning) {
        r.label = label;
        r.meaning = meaning.to_string();
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
