//! Writes one golden `#[test]` per fixture (`fixtures/<name>.log`) into
//! `$OUT_DIR/golden_tests.rs`, which tests/integration/golden.rs includes,
//! so that a new fixture is checked without a line to add, and one fixture
//! or family still runs by name (`cargo test --test integration
//! golden::torch_`). The command and the library do not use it.

use std::fmt::Write as _;
use std::path::Path;
use std::{env, fs};

fn main() {
    // Cargo scans the folder: a fixture added, removed or renamed reruns
    // this script (so does any file written there, which costs a rebuild
    // of this package, not of the library).
    println!("cargo:rerun-if-changed=fixtures");
    println!("cargo:rerun-if-changed=build.rs");
    let out_dir = env::var_os("OUT_DIR").expect("cargo sets OUT_DIR for build scripts");
    let mut names: Vec<String> = match fs::read_dir("fixtures") {
        Ok(entries) => entries
            .filter_map(|entry| entry.ok())
            .filter_map(|entry| {
                let file = entry.file_name().to_string_lossy().into_owned();
                file.strip_suffix(".log").map(str::to_string)
            })
            .collect(),
        // A packaged crate has no fixtures/: no golden tests to write.
        Err(_) => Vec::new(),
    };
    names.sort();
    let mut tests = String::from(
        "// Written by build.rs from fixtures/*.log: one golden test per fixture.\n\n\
         /// Every fixture a golden test was written for.\n\
         const GOLDEN_FIXTURES: &[&str] = &[\n",
    );
    for name in &names {
        let _ = writeln!(tests, "    {name:?},");
    }
    tests.push_str("];\n");
    for name in &names {
        if is_identifier(name) {
            let _ = write!(
                tests,
                "\n#[test]\nfn {name}() {{\n    check_fixture({name:?});\n}}\n"
            );
        } else {
            // A test must be named after its fixture; stop the build with
            // the reason rather than skip the fixture.
            let _ = write!(
                tests,
                "\ncompile_error!({:?});\n",
                format!(
                    "fixtures/{name}.log: a fixture's name (before the first '.') must be a \
                     Rust identifier (lowercase letters, digits, '_'), since its golden test \
                     is named after it"
                )
            );
        }
    }
    let path = Path::new(&out_dir).join("golden_tests.rs");
    fs::write(&path, tests).expect("OUT_DIR is writable");
}

/// A name usable as a test function: ASCII lowercase, digits and `_`, not
/// starting with a digit, and not a keyword a fixture could plausibly take.
fn is_identifier(name: &str) -> bool {
    let starts_well = name
        .chars()
        .next()
        .is_some_and(|c| c.is_ascii_lowercase() || c == '_');
    starts_well
        && name
            .chars()
            .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '_')
        && !matches!(
            name,
            "as" | "break"
                | "const"
                | "continue"
                | "crate"
                | "else"
                | "enum"
                | "extern"
                | "false"
                | "fn"
                | "for"
                | "if"
                | "impl"
                | "in"
                | "let"
                | "loop"
                | "match"
                | "mod"
                | "move"
                | "mut"
                | "pub"
                | "ref"
                | "return"
                | "self"
                | "static"
                | "struct"
                | "super"
                | "trait"
                | "true"
                | "type"
                | "unsafe"
                | "use"
                | "where"
                | "while"
                | "async"
                | "await"
                | "dyn"
                | "_"
        )
}
