//! The JSON document (see README.md "JSON output" for the contract).

use crate::record::{Finding, Report, Summary, SCHEMA_VERSION};
use std::io::{self, Write};

pub(super) fn render(
    findings: &[Finding],
    summary: &Summary,
    out: &mut dyn Write,
) -> io::Result<()> {
    let report = Report {
        schema_version: SCHEMA_VERSION,
        findings,
        summary,
    };
    serde_json::to_writer_pretty(&mut *out, &report).map_err(io::Error::other)?;
    out.write_all(b"\n")
}
