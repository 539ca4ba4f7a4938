//! JSON Schemas (draft 2020-12) of the machine-readable outputs, shipped in
//! `src/schema/` and printed by `oomwhy schema [--ndjson]`.
//!
//! `schema_version` ([`crate::record::SCHEMA_VERSION`]) is raised only when
//! an existing field changes meaning or is removed. New fields, new `sizes`
//! quantities (always `*_bytes`), new kinds, verdict codes and NDJSON line
//! types can appear without it, so the schemas do not reject unknown
//! properties.

/// Schema of the `--format json` document.
pub const REPORT: &str = include_str!("schema/report.schema.json");

/// Schema of one `--format ndjson` line.
pub const NDJSON: &str = include_str!("schema/ndjson.schema.json");

/// Schema of the `--summary --format json` document
/// ([`crate::summary::FleetSummary`]).
pub const SUMMARY: &str = include_str!("schema/summary.schema.json");
