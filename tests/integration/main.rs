//! oomwhy's integration tests: one test binary, one module per area (as
//! ripgrep's), so the suite links once. Run one area by name, for example
//! `cargo test --test integration golden::` or `cargo test --test integration wild::`.

#[cfg(unix)]
mod live;
mod support;

mod adversarial;
mod cli;
mod codes;
#[cfg(unix)]
mod follow;
mod fuzz_regressions;
mod golden;
mod hostile;
mod i18n;
mod inputs;
mod properties;
mod regressions;
#[cfg(unix)]
mod run;
mod schema;
mod snapshots;
mod summary;
mod wild;
mod wild_fixes;
mod zh_english;
