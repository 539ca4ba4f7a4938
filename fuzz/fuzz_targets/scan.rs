//! The log scanner (`oomwhy::scan_log`) on arbitrary bytes (invalid UTF-8,
//! NULs, CR, anything), explained and rendered like the CLI does, and the
//! front door (`oomwhy::scan`, which may refuse them) on the same bytes.
//! Oracles: no panic, valid JSON, no raw control character in the text output.
#![no_main]

use libfuzzer_sys::fuzz_target;
use oomwhy::render::{render, Format, RenderOptions};
use oomwhy::Analysis;

fuzz_target!(|data: &[u8]| {
    // Bytes that start like a compressed stream or a pickle may be refused.
    if let Err(e) = oomwhy::scan(data, "fuzz\x1b]0;name\x07.log") {
        let _ = e.to_string();
    }
    let outcome =
        oomwhy::scan_log(data, "fuzz\x1b]0;name\x07.log").expect("a slice reads without error");
    let mut analysis = Analysis::new();
    analysis.add(outcome);
    let (findings, summary) = analysis.finish();
    let mut json = Vec::new();
    render(
        Format::Json,
        &findings,
        &summary,
        RenderOptions::default(),
        &mut json,
    )
    .expect("rendering to a Vec cannot fail");
    serde_json::from_slice::<serde_json::Value>(&json).expect("JSON output is valid JSON");
    let mut text = Vec::new();
    render(
        Format::Text,
        &findings,
        &summary,
        RenderOptions::default(),
        &mut text,
    )
    .expect("rendering to a Vec cannot fail");
    let text = String::from_utf8(text).expect("text output is UTF-8");
    if let Some(c) = text.chars().find(|&c| {
        c.is_control() && c != '\n'
            || matches!(c, '\u{202a}'..='\u{202e}' | '\u{2066}'..='\u{2069}')
    }) {
        panic!("raw control character {c:?} in text output:\n{text}");
    }
});
