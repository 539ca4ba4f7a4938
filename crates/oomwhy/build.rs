//! Writes the table of explanation pages, `$OUT_DIR/pages.rs`, from the
//! files in src/explanations/ (English) and src/explanations/zh/ (Chinese),
//! which `explain::docs` includes: a page is registered by being there.
//! Tests check that every kind and verdict code has both pages and that no
//! page is left without its code.

use std::fmt::Write as _;
use std::path::Path;
use std::{env, fs};

fn main() {
    println!("cargo:rerun-if-changed=src/explanations");
    println!("cargo:rerun-if-changed=build.rs");
    let out_dir = env::var_os("OUT_DIR").expect("cargo sets OUT_DIR for build scripts");
    let mut table = String::from("// Written by build.rs from src/explanations/.\n");
    for (name, doc, folder) in [
        (
            "ENGLISH_PAGES",
            "Every page in src/explanations/, by code, sorted by code.",
            "src/explanations",
        ),
        (
            "CHINESE_PAGES",
            "Every page in src/explanations/zh/, by code, sorted by code.",
            "src/explanations/zh",
        ),
    ] {
        let _ = writeln!(table, "\n/// {doc}\nconst {name}: &[(&str, &str)] = &[");
        for code in page_codes(folder) {
            let _ = writeln!(
                table,
                "    ({code:?}, include_str!(concat!(env!(\"CARGO_MANIFEST_DIR\"), {:?}))),",
                format!("/{folder}/{code}.md")
            );
        }
        table.push_str("];\n");
    }
    fs::write(Path::new(&out_dir).join("pages.rs"), table).expect("OUT_DIR is writable");
}

/// The codes of the `.md` pages directly in `folder`, sorted.
fn page_codes(folder: &str) -> Vec<String> {
    let entries = fs::read_dir(folder).unwrap_or_else(|e| panic!("{folder}: {e}"));
    let mut codes: Vec<String> = entries
        .filter_map(|entry| entry.ok())
        .filter(|entry| entry.file_type().is_ok_and(|t| t.is_file()))
        .filter_map(|entry| {
            let file = entry.file_name().to_string_lossy().into_owned();
            file.strip_suffix(".md").map(str::to_string)
        })
        .collect();
    codes.sort();
    codes
}
