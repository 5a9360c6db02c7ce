//! The `tribunal` command line.
use std::process::ExitCode;

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
        .spawn(tribunal::cli::main)
        .map_or_else(
            |_| tribunal::cli::main(),
            |cli| {
                // A panic has printed its message; exit as Rust does after one.
                cli.join().unwrap_or_else(|_| ExitCode::from(101))
            },
        )
}
