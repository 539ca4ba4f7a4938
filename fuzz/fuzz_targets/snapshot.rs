//! The memory-snapshot path on arbitrary bytes: the data-only pickle reader,
//! the snapshot model, the analysis and the join, then both renderers.
//! Oracles: no panic, no unbounded memory (libFuzzer's -rss_limit_mb and
//! -malloc_limit_mb), the JSON parses, and a pickle with a code opcode is
//! never accepted. Seeds: the generated scenarios of tests/snapshots/.
#![no_main]

use libfuzzer_sys::fuzz_target;
use oomwhy::render::{render, Format, RenderOptions};
use oomwhy::Analysis;

fuzz_target!(|data: &[u8]| {
    // Reader alone: any byte string, whatever its header.
    if let Ok(p) = oomwhy::pickle::read(data) {
        let _ = p.root();
    }
    // The input path as the CLI takes it, joined with a log OOM of the same device.
    let mut analysis = Analysis::new();
    match oomwhy::scan(data, "fuzz.pickle") {
        Ok(outcome) => analysis.add(outcome),
        Err(e) => {
            let _ = e.to_string();
            return;
        }
    }
    let log = "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 260.00 MiB. GPU 0 has a total capacity of 2.00 GiB of which 248.00 MiB is free. Of the allocated memory 870.00 MiB is allocated by PyTorch, and 630.00 MiB is reserved by PyTorch but unallocated.";
    if let Ok(outcome) = oomwhy::scan(log.as_bytes(), "train.log") {
        analysis.add(outcome);
    }
    let (findings, summary) = analysis.finish();
    let mut json = Vec::new();
    render(Format::Json, &findings, &summary, RenderOptions::default(), &mut json)
        .expect("rendering to a Vec cannot fail");
    serde_json::from_slice::<serde_json::Value>(&json).expect("JSON output is valid JSON");
    let mut text = Vec::new();
    render(Format::Text, &findings, &summary, RenderOptions::default(), &mut text)
        .expect("rendering to a Vec cannot fail");
});
