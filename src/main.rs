//! The `tribunal` command line.
use std::process::ExitCode;

fn main() -> ExitCode {
    tribunal::cli::main()
}
