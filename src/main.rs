//! The `tribunal` command line: a thin front end over the engine (the
//! `tribunal` crate, crates/tribunal).
use std::process::ExitCode;

mod cli;
mod diff;
mod html_report;
mod junit;
mod result_file;

/// Counts each thread's allocations, so a Rhai script call can be held to
/// `limits.max_memory` (see `tribunal::CountingAllocator`).
#[global_allocator]
static ALLOC: tribunal::CountingAllocator = tribunal::CountingAllocator;

fn main() -> ExitCode {
    // Records evaluated without worker threads (`--jobs 1`, `check`, `test`) run
    // on this thread: give it the workers' deep stack (see `tribunal::STACK_SIZE`).
    std::thread::Builder::new()
        .name("main".into())
        .stack_size(tribunal::STACK_SIZE)
        .spawn(cli::main)
        .map_or_else(
            |_| cli::main(),
            |cli| {
                // A panic has printed its message; exit as Rust does after one.
                cli.join().unwrap_or_else(|_| ExitCode::from(101))
            },
        )
}
