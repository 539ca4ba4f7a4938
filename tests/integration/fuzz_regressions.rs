//! Inputs the CI fuzz smoke run found, kept as tests: each must decode and
//! render without a panic and without raw control characters in the text.

use oomwhy::render::{render, Format, RenderOptions};
use oomwhy::Summary;

fn check(data: &[u8]) {
    let text = String::from_utf8_lossy(data);
    let findings = oomwhy::decode_str(&text);
    let mut out = Vec::new();
    render(
        Format::Text,
        &findings,
        &Summary::default(),
        RenderOptions::default(),
        &mut out,
    )
    .unwrap();
    let out = String::from_utf8(out).unwrap();
    if let Some(c) = out.chars().find(|&c| {
        c.is_control() && c != '\n'
            || matches!(c, '\u{202a}'..='\u{202e}' | '\u{2066}'..='\u{2069}')
    }) {
        panic!("raw control character {c:?} in text output:\n{out}");
    }
}

/// A vLLM start-up log whose timestamp holds invalid UTF-8 and whose
/// `# GPU blocks` line holds mangled bytes.
#[test]
fn fz_vllm_log_with_mangled_bytes() {
    check(include_bytes!(
        "../fuzz_regressions/vllm_mangled_blocks.txt"
    ));
}
