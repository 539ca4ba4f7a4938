//! NDJSON (JSON Lines): one compact JSON object per line, written as soon as
//! each finding is complete.
//!
//! # Format
//!
//! Every line is an object with a `type` and the `schema_version` of the
//! JSON document (see `crates/oomwhy/src/schema/ndjson.schema.json`):
//!
//! * `{"type":"finding","schema_version":1,"finding":{...}}`: one finding,
//!   exactly as in the `findings` array of `--format json`.
//! * `{"type":"summary","schema_version":1,"summary":{...}}`: the last line,
//!   the same counts as the JSON document's `summary`.
//!
//! More line types may be added; readers skip types they do not know.

use crate::record::{Finding, Summary, SCHEMA_VERSION};
use serde::Serialize;
use std::io::{self, Write};

#[derive(Serialize)]
struct FindingLine<'a> {
    #[serde(rename = "type")]
    line_type: &'static str,
    schema_version: u32,
    finding: &'a Finding,
}

#[derive(Serialize)]
struct SummaryLine<'a> {
    #[serde(rename = "type")]
    line_type: &'static str,
    schema_version: u32,
    summary: &'a Summary,
}

fn write_line(value: &impl Serialize, out: &mut dyn Write) -> io::Result<()> {
    serde_json::to_writer(&mut *out, value).map_err(io::Error::other)?;
    out.write_all(b"\n")?;
    // A reader may be waiting for this line (`--follow`, `oomwhy run`).
    out.flush()
}

pub(super) fn finding(f: &Finding, out: &mut dyn Write) -> io::Result<()> {
    write_line(
        &FindingLine {
            line_type: "finding",
            schema_version: SCHEMA_VERSION,
            finding: f,
        },
        out,
    )
}

pub(super) fn summary(s: &Summary, out: &mut dyn Write) -> io::Result<()> {
    write_line(
        &SummaryLine {
            line_type: "summary",
            schema_version: SCHEMA_VERSION,
            summary: s,
        },
        out,
    )
}
