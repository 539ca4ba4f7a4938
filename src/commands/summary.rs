//! `--summary`: one report over many inputs. Each input is read with the
//! same `open` as the default mode, digested on its own, and the digests
//! are folded by the library ([`oomwhy::summary`]), the same code that the
//! Python package runs on a cluster.

use super::scan::open;
use crate::cli::{FormatArg, ScanArgs};
use anyhow::{bail, Context};
use oomwhy::summary::{FleetSummary, InputDigest};
use std::io::{self, Write};
use std::path::Path;

/// `oomwhy --summary FILE...`: exit 0 if anything was found, 1 if nothing
/// was, 2 if an input could not be read (the summary is written all the same).
pub fn summary(args: &ScanArgs) -> anyhow::Result<i32> {
    if !matches!(args.format, FormatArg::Text | FormatArg::Json) {
        bail!("--summary writes text or json: use --format text or --format json");
    }
    let stdin = [Path::new("-")];
    let inputs: Vec<&Path> = if args.files.is_empty() {
        stdin.to_vec()
    } else {
        args.files.iter().map(|p| p.as_path()).collect()
    };
    let mut digests = Vec::with_capacity(inputs.len());
    for path in inputs {
        // No progress bar per input: a summary reads many small files.
        let digest = match open(path, true) {
            Ok((reader, name, _)) => InputDigest::from_reader(reader, &name),
            Err(err) => InputDigest::from_error(&err, &path.display().to_string()),
        };
        if let (Some(error), false) = (&digest.error, args.quiet) {
            warn!(
                "oomwhy: {}: {error}",
                oomwhy::render::sanitize(&digest.input)
            );
        }
        digests.push(digest);
    }
    let summary = FleetSummary::from_digests(digests);
    if !args.quiet {
        let mut out = io::BufWriter::new(io::stdout().lock());
        match args.format {
            FormatArg::Json => summary.write_json(&mut out),
            _ => summary.write_text(&mut out),
        }
        .and_then(|()| out.flush())
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
