//! Writes the table of explanation pages, `$OUT_DIR/pages.rs`, from the
//! files in src/explanations/, which `explain::docs` includes: a page is
//! registered by being there.
//!
//! One file per code holds both languages, split where
//! `src/explain/page_halves.rs` says; the build refuses a file that does
//! not split into an English and a Chinese page, so no code ships without
//! its Chinese. Tests check that every kind and verdict code has a page and
//! that no page is left without its code.

use std::fmt::Write as _;
use std::path::Path;
use std::{env, fs};

// The split, shared with the library's tests of it.
#[path = "src/explain/page_halves.rs"]
mod page_halves;
use page_halves::{halves, CHINESE_FOLLOWS};

/// The folder of the pages, relative to the crate.
const FOLDER: &str = "src/explanations";

fn main() {
    println!("cargo:rerun-if-changed={FOLDER}");
    println!("cargo:rerun-if-changed=build.rs");
    println!("cargo:rerun-if-changed=src/explain/page_halves.rs");
    let out_dir = env::var_os("OUT_DIR").expect("cargo sets OUT_DIR for build scripts");
    let pages: Vec<(String, String, String)> = page_codes()
        .into_iter()
        .map(|code| {
            let path = format!("{FOLDER}/{code}.md");
            let text = fs::read_to_string(&path).unwrap_or_else(|e| panic!("{path}: {e}"));
            let (english, chinese) =
                halves(&text).unwrap_or_else(|problem| panic!("{path}: {problem}"));
            (code, english, chinese)
        })
        .collect();
    let mut table = String::from("// Written by build.rs from src/explanations/.\n");
    for (name, doc, chinese) in [
        (
            "ENGLISH_PAGES",
            "Every English page (the part before `<!-- zh -->`), by code, sorted by code.",
            false,
        ),
        (
            "CHINESE_PAGES",
            "Every Chinese page (the part after `<!-- zh -->`), by code, sorted by code.",
            true,
        ),
    ] {
        let _ = writeln!(table, "\n/// {doc}\nconst {name}: &[(&str, &str)] = &[");
        for (code, english, zh) in &pages {
            let text = if chinese { zh } else { english };
            // `{:?}` of a str is a valid Rust string literal of the same text.
            let _ = writeln!(table, "    ({code:?}, {text:?}),");
        }
        table.push_str("];\n");
    }
    fs::write(Path::new(&out_dir).join("pages.rs"), table).expect("OUT_DIR is writable");
}

/// The codes of the `.md` pages directly in the folder, sorted. A folder
/// there is refused: the Chinese pages once lived in `zh/`, and a page
/// left in it would be silently ignored.
fn page_codes() -> Vec<String> {
    let entries = fs::read_dir(FOLDER).unwrap_or_else(|e| panic!("{FOLDER}: {e}"));
    let mut codes = Vec::new();
    for entry in entries.filter_map(|entry| entry.ok()) {
        let file = entry.file_name().to_string_lossy().into_owned();
        if entry.file_type().is_ok_and(|t| t.is_dir()) {
            panic!(
                "{FOLDER}/{file}/: pages are files of {FOLDER}/, each with its Chinese \
                 after a line `{CHINESE_FOLLOWS}`"
            );
        }
        if let Some(code) = file.strip_suffix(".md") {
            codes.push(code.to_string());
        }
    }
    codes.sort();
    codes
}
