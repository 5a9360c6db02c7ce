//! Using Tribunal as a library: load a pack once, evaluate one output (as in a
//! retry loop), then a batch in parallel.
//!
//! Run with `cargo run --example evaluate`.

use std::error::Error;

use tribunal::{Input, Pack, Status};

fn main() -> Result<(), Box<dyn Error>> {
    // Loading compiles everything once; the pack is immutable and Send + Sync.
    let pack = Pack::load(concat!(env!("CARGO_MANIFEST_DIR"), "/rules/ksi-emission"))?;
    println!("loaded {} (revision {})", pack.label(), pack.revision());

    // One output, e.g. inside an agent's retry loop.
    let attempts = [
        "I would emit an agent:status event when ready.",
        r#"Ready. {"event": "agent:status", "data": {"status": "ready"}}"#,
    ];
    for (attempt, output) in attempts.iter().enumerate() {
        let report = pack.evaluate(&Input::new(*output).with_id(attempt));
        println!(
            "attempt {attempt}: {} score {:?}",
            report.status(),
            report.score
        );
        if report.status() == Status::Pass {
            break;
        }
        if let Some(feedback) = &report.feedback {
            println!("  re-ask with: {feedback}");
        }
    }

    // A batch: evaluated on all cores, results handed back in input order.
    let inputs = (0..1_000).map(|i| {
        let output = if i % 3 == 0 {
            format!(r#"{{"event": "message:send", "data": {{"n": {i}}}}}"#)
        } else {
            format!("step {i}: nothing to emit")
        };
        Input::new(output).with_id(i)
    });
    let mut passed = 0;
    let mut total = 0;
    pack.evaluate_batch(inputs, 0, |report| {
        total += 1;
        passed += usize::from(report.passed());
    });
    println!("batch: {passed} of {total} passed");
    Ok(())
}
