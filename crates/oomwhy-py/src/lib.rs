//! `oomwhy._oomwhy`, the native module of the Python package.
//!
//! A thin layer over the library: records cross into Python as the JSON of
//! `--format json` (the Python side loads it into dicts), so the two cannot
//! drift apart. Work on input runs with the GIL released. Every failure is a
//! Python exception; nothing here panics on input.
//!
//! It also carries the `oomwhy` command of the wheel: `oomwhy_cli::run`,
//! the same code as the native binary's, started by the console script.

use oomwhy::input::{self, Entry};
use oomwhy::record::{Finding, Summary};
use oomwhy::render::{self, Format, RenderOptions};
use oomwhy::summary::{FleetSummary, InputDigest};
use oomwhy::{Error, Notice, ScanReport};
use pyo3::exceptions::{PyFileNotFoundError, PyOSError, PyPermissionError, PyValueError};
use pyo3::prelude::*;
use std::collections::BTreeSet;
use std::io;

/// A library error as the Python exception a Python user expects.
fn to_py(err: Error) -> PyErr {
    let message = err.to_string();
    match &err {
        Error::Read { source, .. } => match source.kind() {
            io::ErrorKind::NotFound => PyFileNotFoundError::new_err(message),
            io::ErrorKind::PermissionDenied => PyPermissionError::new_err(message),
            _ => PyOSError::new_err(message),
        },
        Error::UnknownCode { .. } | Error::Snapshot { .. } => PyValueError::new_err(message),
    }
}

fn json_err(err: serde_json::Error) -> PyErr {
    PyValueError::new_err(format!("not oomwhy's JSON: {err}"))
}

/// A report as the package's `scan()` takes it: `{"findings": [...],
/// "warnings": [...]}`, the findings as the `--format json` document's.
///
/// An input the caller named alone that could not be read at all raises
/// (FileNotFoundError, PermissionError, ...), as `open()` would; every other
/// error (a file in a directory or an archive, a compressed file cut short
/// after part of it was read) is a warning, and what was read is returned,
/// as the command warns and goes on.
fn report_json(report: ScanReport, named_alone: bool) -> PyResult<String> {
    let nothing_read = report.summary.bytes == 0 && report.findings.is_empty();
    let mut warnings = Vec::new();
    for notice in report.notices {
        match notice {
            Notice::Error(err) if named_alone && nothing_read => return Err(to_py(err)),
            Notice::Error(err) => warnings.push(err.to_string()),
            // Passed over without a word, as `oomwhy --quiet` does: not errors.
            Notice::Binary(_) | Notice::Loop { .. } => {}
        }
    }
    Ok(format!(
        "{{\"findings\":{},\"warnings\":{}}}",
        serde_json::to_string(&report.findings).map_err(json_err)?,
        serde_json::to_string(&warnings).map_err(json_err)?
    ))
}

/// decode_json(text) -> str: the findings in a pasted text, as JSON.
#[pyfunction]
fn decode_json(py: Python<'_>, text: String) -> PyResult<String> {
    py.detach(|| serde_json::to_string(&oomwhy::decode_str(&text)).map_err(json_err))
}

/// scan_path_json(path, name) -> str: reads what the command reads for this
/// path (a file, compressed or not, an archive, a memory snapshot, or every
/// file under a directory), as a report (see `report_json`). Its findings
/// name it `name` (for a directory, `name` stands for the directory's path
/// in the names of the files under it).
#[pyfunction]
fn scan_path_json(py: Python<'_>, path: std::path::PathBuf, name: String) -> PyResult<String> {
    py.detach(|| {
        let mut entries = input::expand(&[&path]);
        let given = path.display().to_string();
        if name != given {
            rename(&mut entries, &given, &name);
        }
        let named_alone = matches!(entries.as_slice(), [Entry::Input(i)] if !i.from_directory);
        report_json(oomwhy::scan_entries(entries), named_alone)
    })
}

/// Names the inputs under `path` after `name` instead.
fn rename(entries: &mut [Entry], path: &str, name: &str) {
    let renamed = |old: &mut String| {
        if let Some(rest) = old.strip_prefix(path) {
            *old = format!("{name}{rest}");
        }
    };
    for entry in entries {
        match entry {
            Entry::Input(input) => renamed(&mut input.name),
            Entry::Error(Error::Read { input, .. }) => renamed(input),
            Entry::Loop { path, .. } => renamed(path),
            Entry::Error(_) => {}
        }
    }
}

/// scan_bytes_json(data, name) -> str: reads bytes held in memory as the
/// command reads a file of them, as a report (see `report_json`).
#[pyfunction]
fn scan_bytes_json(py: Python<'_>, data: Vec<u8>, name: String) -> PyResult<String> {
    py.detach(|| {
        let scanned = input::scan_bytes(&data, &name);
        report_json(ScanReport::from_scanned(scanned, &name), true)
    })
}

/// explain(code) -> str: the long explanation of a code.
#[pyfunction]
fn explain(code: &str) -> PyResult<String> {
    let (_, text) = oomwhy::explain::docs::lookup(code).map_err(to_py)?;
    Ok(text.to_string())
}

/// codes() -> list[tuple[str, str]]: every code with its title.
#[pyfunction]
fn codes() -> Vec<(&'static str, &'static str)> {
    oomwhy::explain::docs::list()
}

fn parse_format(format: &str) -> PyResult<Format> {
    Ok(match format {
        "text" => Format::Text,
        "json" => Format::Json,
        "ndjson" => Format::Ndjson,
        "markdown" => Format::Markdown,
        "github" => Format::Github,
        other => {
            return Err(PyValueError::new_err(format!(
                "unknown format `{other}`; use text, json, ndjson, markdown or github"
            )))
        }
    })
}

/// render_json(findings_json, format, color) -> str: writes findings (a JSON
/// array of records) in a format. Counts for the JSON document and the
/// NDJSON summary line come from the findings; lines and bytes read are
/// not known here and count 0. Text and Markdown carry no closing count line.
#[pyfunction]
fn render_json(
    py: Python<'_>,
    findings_json: String,
    format: &str,
    color: bool,
) -> PyResult<String> {
    let format = parse_format(format)?;
    py.detach(|| {
        let findings: Vec<Finding> = serde_json::from_str(&findings_json).map_err(json_err)?;
        let inputs: BTreeSet<&str> = findings.iter().map(|f| f.source.input.as_str()).collect();
        let mut summary = Summary {
            findings: findings.len(),
            inputs: inputs.len(),
            ..Summary::default()
        };
        for f in &findings {
            summary.count(f.category);
        }
        // The text renderer colours through `colored`'s process-wide switch,
        // as the command sets it from --color.
        colored::control::set_override(color);
        let options = RenderOptions {
            color,
            ..RenderOptions::default()
        };
        let mut out = Vec::new();
        let written = match format {
            Format::Json | Format::Ndjson => {
                render::render(format, &findings, &summary, options, &mut out)
            }
            _ => findings
                .iter()
                .try_for_each(|f| render::render_finding(format, f, options, &mut out)),
        };
        written.map_err(|e| PyOSError::new_err(e.to_string()))?;
        String::from_utf8(out).map_err(|e| PyValueError::new_err(e.to_string()))
    })
}

/// digest_bytes_json(data, name) -> str: what one input contributes to a
/// fleet summary (the map step), as JSON.
#[pyfunction]
fn digest_bytes_json(py: Python<'_>, data: Vec<u8>, name: String) -> PyResult<String> {
    py.detach(|| serde_json::to_string(&InputDigest::from_bytes(&data, &name)).map_err(json_err))
}

/// digest_path_json(path, name) -> str: the same for a file; a file that
/// cannot be read gives an error digest, as in `oomwhy --summary`.
#[pyfunction]
fn digest_path_json(py: Python<'_>, path: std::path::PathBuf, name: String) -> PyResult<String> {
    py.detach(|| {
        let digest = match std::fs::File::open(&path).and_then(|f| {
            if f.metadata()?.is_dir() {
                Err(io::Error::other("is a directory"))
            } else {
                Ok(f)
            }
        }) {
            Ok(file) => InputDigest::from_file(file, &name),
            Err(source) => InputDigest::from_error(
                &Error::Read {
                    input: name.clone(),
                    source,
                },
                &name,
            ),
        };
        serde_json::to_string(&digest).map_err(json_err)
    })
}

/// digest_paths_json(paths) -> list[str]: the digests `oomwhy --summary
/// PATH...` folds: one per file (files under a directory and in an archive
/// each count), an error digest for what cannot be read.
#[pyfunction]
fn digest_paths_json(py: Python<'_>, paths: Vec<std::path::PathBuf>) -> PyResult<Vec<String>> {
    py.detach(|| {
        let mut digests = Vec::new();
        let mut inputs = Vec::new();
        for entry in input::expand(&paths) {
            match entry {
                Entry::Input(input) => inputs.push(input),
                Entry::Loop { .. } => {}
                Entry::Error(err) => {
                    let name = err.input().unwrap_or_default().to_string();
                    digests.push(InputDigest::from_error(&err, &name));
                }
            }
        }
        let scanned = input::scan_inputs(&inputs, input::default_threads());
        for (input, scanned) in inputs.iter().zip(scanned) {
            for (name, scanned) in scanned.into_members(&input.name) {
                digests.push(InputDigest::from_scanned(scanned, &name));
            }
        }
        digests
            .iter()
            .map(|d| serde_json::to_string(d).map_err(json_err))
            .collect()
    })
}

/// summarize_json(digests) -> str: folds digests (JSON each) into the fleet
/// summary (the reduce step), as JSON.
#[pyfunction]
fn summarize_json(py: Python<'_>, digests: Vec<String>) -> PyResult<String> {
    py.detach(|| {
        let digests = digests
            .iter()
            .map(|d| serde_json::from_str::<InputDigest>(d))
            .collect::<Result<Vec<_>, _>>()
            .map_err(json_err)?;
        serde_json::to_string(&FleetSummary::from_digests(digests)).map_err(json_err)
    })
}

/// render_summary_json(summary_json, format) -> str: the fleet summary as
/// `oomwhy --summary` writes it (text or json).
#[pyfunction]
fn render_summary_json(summary_json: &str, format: &str) -> PyResult<String> {
    let summary: FleetSummary = serde_json::from_str(summary_json).map_err(json_err)?;
    let mut out = Vec::new();
    match format {
        "text" => summary.write_text(&mut out),
        "json" => summary.write_json(&mut out),
        other => {
            return Err(PyValueError::new_err(format!(
                "unknown summary format `{other}`; use text or json"
            )))
        }
    }
    .map_err(|e| PyOSError::new_err(e.to_string()))?;
    String::from_utf8(out).map_err(|e| PyValueError::new_err(e.to_string()))
}

/// schema(which) -> str: a shipped JSON Schema: "report", "ndjson" or "summary".
#[pyfunction]
fn schema(which: &str) -> PyResult<&'static str> {
    match which {
        "report" => Ok(oomwhy::schema::REPORT),
        "ndjson" => Ok(oomwhy::schema::NDJSON),
        "summary" => Ok(oomwhy::schema::SUMMARY),
        other => Err(PyValueError::new_err(format!(
            "unknown schema `{other}`; use report, ndjson or summary"
        ))),
    }
}

/// run_cli(argv) -> int: runs the `oomwhy` command with these arguments
/// (argv[0] first) and returns its exit status.
#[pyfunction]
fn run_cli(py: Python<'_>, argv: Vec<std::ffi::OsString>) -> i32 {
    py.detach(|| oomwhy_cli::run(argv))
}

/// The native module.
#[pymodule]
fn _oomwhy(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add("__version__", env!("CARGO_PKG_VERSION"))?;
    m.add("SCHEMA_VERSION", oomwhy::record::SCHEMA_VERSION)?;
    m.add_function(wrap_pyfunction!(decode_json, m)?)?;
    m.add_function(wrap_pyfunction!(scan_path_json, m)?)?;
    m.add_function(wrap_pyfunction!(scan_bytes_json, m)?)?;
    m.add_function(wrap_pyfunction!(explain, m)?)?;
    m.add_function(wrap_pyfunction!(codes, m)?)?;
    m.add_function(wrap_pyfunction!(render_json, m)?)?;
    m.add_function(wrap_pyfunction!(digest_bytes_json, m)?)?;
    m.add_function(wrap_pyfunction!(digest_path_json, m)?)?;
    m.add_function(wrap_pyfunction!(digest_paths_json, m)?)?;
    m.add_function(wrap_pyfunction!(summarize_json, m)?)?;
    m.add_function(wrap_pyfunction!(render_summary_json, m)?)?;
    m.add_function(wrap_pyfunction!(schema, m)?)?;
    m.add_function(wrap_pyfunction!(run_cli, m)?)?;
    Ok(())
}
