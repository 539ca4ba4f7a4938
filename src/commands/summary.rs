//! `--summary`: one report over many inputs. The inputs are expanded and
//! read as in the default mode (directories walked, compressed files
//! decompressed, snapshots analysed, several side by side), each digested
//! on its own, and the digests folded by the library ([`oomwhy::summary`]),
//! the same code that the Python package runs on a cluster. Per-rank files
//! are not folded here: each file is one input of the fleet.

use crate::cli::{FormatArg, ScanArgs};
use anyhow::{bail, Context};
use oomwhy::i18n::Lang;
use oomwhy::input::{self, Entry, Input};
use oomwhy::summary::{FleetSummary, InputDigest};
use std::io::{self, Write};

/// `oomwhy --summary FILE...`: exit 0 if anything was found, 1 if nothing
/// was, 2 if an input could not be read (the summary is written all the same).
pub fn summary(args: &ScanArgs, lang: Lang) -> anyhow::Result<i32> {
    if !matches!(args.format, FormatArg::Text | FormatArg::Json) {
        bail!("--summary writes text or json: use --format text or --format json");
    }
    let expanded = if args.files.is_empty() {
        vec![Entry::Input(Input::stdin())]
    } else {
        input::expand(&args.files)
    };
    let mut digests = Vec::new();
    let mut inputs = Vec::new();
    for entry in expanded {
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
        // A tar archive's files are inputs of their own.
        for (name, scanned) in scanned.into_members(&input.name) {
            digests.push(InputDigest::from_scanned(scanned, &name));
        }
    }
    for digest in &digests {
        if let (Some(error), false) = (&digest.error, args.quiet) {
            warn!(
                "oomwhy: {}: {error}",
                oomwhy::render::sanitize(&digest.input)
            );
        }
    }
    let summary = FleetSummary::from_digests(digests);
    if !args.quiet {
        match args.format {
            FormatArg::Json => {
                let mut out = io::BufWriter::new(io::stdout().lock());
                summary.write_json(&mut out).and_then(|()| out.flush())
            }
            // Paged when taller than the terminal, as the scan's report.
            _ => super::pager::write_report(args.no_pager, |out| summary.write_text_in(out, lang)),
        }
        .context("cannot write the output")?;
    }
    Ok(if !summary.input_errors.is_empty() {
        2
    } else if summary.findings == 0 {
        1
    } else {
        0
    })
}
