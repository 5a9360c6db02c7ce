//! Replays every committed fuzz input (`fuzz/corpus/TARGET/*` and the crash
//! files `fuzz/artifacts/TARGET/*`) through the fuzz targets' bodies on stable
//! Rust, so a regression is caught without the fuzzer (which needs nightly:
//! `scripts/fuzz`).

use std::fs;
use std::path::Path;
use std::time::Instant;

type Target = fn(&[u8]);

const TARGETS: [(&str, Target); 7] = [
    ("extraction", tribunal::fuzzing::extraction),
    ("pack_loader", tribunal::fuzzing::pack_loader),
    ("contract", tribunal::fuzzing::contract),
    ("script", tribunal::fuzzing::script),
    ("plugin_reply", tribunal::fuzzing::plugin_reply),
    ("stream", tribunal::fuzzing::stream),
    ("transcript", tribunal::fuzzing::transcript),
];

#[test]
fn every_committed_fuzz_input_passes_its_target() {
    let fuzz = Path::new(env!("CARGO_MANIFEST_DIR")).join("fuzz");
    let mut report = Vec::new();
    for (name, target) in TARGETS {
        let started = Instant::now();
        let mut count = 0;
        for folder in ["corpus", "artifacts"] {
            let Ok(entries) = fs::read_dir(fuzz.join(folder).join(name)) else {
                continue;
            };
            let mut files: Vec<_> = entries.flatten().map(|e| e.path()).collect();
            files.sort();
            for file in files {
                let data = fs::read(&file).unwrap();
                // A failing input names itself before the panic's message.
                eprintln!("replaying {}", file.display());
                target(&data);
                count += 1;
            }
        }
        assert!(
            count > 0 || name == "none",
            "no committed input for the fuzz target `{name}`"
        );
        report.push(format!(
            "{name} {count} ({:.1}s)",
            started.elapsed().as_secs_f64()
        ));
    }
    println!("fuzz inputs replayed: {}", report.join(", "));
}
