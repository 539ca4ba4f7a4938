//! `oomwhy::decode_str` on arbitrary text (the bytes decoded lossily, as a
//! paste would be), then both renderers. Oracles: no panic, the JSON parses,
//! and the text output holds no raw control character from the input.
#![no_main]

use libfuzzer_sys::fuzz_target;
use oomwhy::render::{render, Format, RenderOptions};
use oomwhy::Summary;

fuzz_target!(|data: &[u8]| {
    let text = String::from_utf8_lossy(data);
    let findings = oomwhy::decode_str(&text);
    check_output(&findings);
});

fn check_output(findings: &[oomwhy::Finding]) {
    let summary = Summary::default();
    let mut json = Vec::new();
    render(
        Format::Json,
        findings,
        &summary,
        RenderOptions::default(),
        &mut json,
    )
    .expect("rendering to a Vec cannot fail");
    serde_json::from_slice::<serde_json::Value>(&json).expect("JSON output is valid JSON");
    let mut text = Vec::new();
    render(
        Format::Text,
        findings,
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
}
