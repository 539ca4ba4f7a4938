//! The `oomwhy` command; everything it does is in the `oomwhy-cli` crate.
fn main() -> std::process::ExitCode {
    oomwhy_cli::main(std::env::args_os())
}
