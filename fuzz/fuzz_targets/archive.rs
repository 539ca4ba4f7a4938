//! Archives on arbitrary bytes: a tar (plain, or behind one of the
//! decompressors), a zip (its directory, and its local headers when the
//! directory is damaged) and the files inside them, as the fleet digest and
//! the input scanner read them. Oracles: no panic, no unbounded memory
//! (libFuzzer's -rss_limit_mb and -malloc_limit_mb), the digest serialises.
//! Seeds: small tar and zip archives of the fixtures (fuzz/seed.sh).
#![no_main]

use libfuzzer_sys::fuzz_target;
use oomwhy::input::{scan_archive, scan_zip_from};
use oomwhy::summary::InputDigest;

fuzz_target!(|data: &[u8]| {
    // The way `--summary` and the Python API read bytes: told by content.
    let digest = InputDigest::from_bytes(data, "fuzz.archive");
    let _ = serde_json::to_string(&digest);
    // Each archive reader on the bytes whatever their header says.
    for (name, scanned) in scan_archive(data, "fuzz.tar") {
        let _ = (name.len(), scanned.outcome().map(|o| o.lines));
    }
    for (name, scanned) in
        scan_zip_from(std::io::Cursor::new(data), "fuzz.zip").into_members("fuzz.zip")
    {
        let _ = (name.len(), scanned.outcome().map(|o| o.findings.len()));
    }
});
