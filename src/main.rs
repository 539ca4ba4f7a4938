//! The `oomwhy` command; everything it does is in this package's library,
//! `oomwhy_cli`.
fn main() -> std::process::ExitCode {
    oomwhy_cli::main(std::env::args_os())
}
