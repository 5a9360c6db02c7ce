//! The packs as the service shows them (`/v1/packs`), and what a reload
//! did, on the service's log: the engine serves and reloads the packs; this
//! says so.

use serde_json::{json, Value};
use tribunal::{Engine, PackEvent, PackEventKind, Served};

use crate::metrics::Metrics;
use crate::Log;

/// What the service does with what a reload did: a log line, and the
/// reload counters (a problem with the folders is only logged).
pub fn on_pack_event(metrics: &Metrics, log: &Log, event: &PackEvent) {
    match event.kind {
        PackEventKind::Loaded | PackEventKind::Removed => metrics.reload(true),
        PackEventKind::Failed => metrics.reload(false),
        _ => {}
    }
    log.line(&event.message);
}

/// What `/v1/packs` says of each pack, by name.
pub fn describe_all(engine: &Engine) -> Value {
    Value::Array(
        engine
            .packs()
            .iter()
            .map(|served| describe(engine, served))
            .collect(),
    )
}

/// What `/v1/packs/{name}` says of a pack.
pub fn describe(engine: &Engine, served: &Served) -> Value {
    let pack = served.pack();
    let metrics: Vec<Value> = pack
        .metric_steps()
        .map(|(name, weight)| json!({"name": name, "weight": weight}))
        .collect();
    let failure = engine
        .reload_failure(served)
        .map(|f| json!({"message": f.message, "at": crate::time::rfc3339(f.at)}));
    json!({
        "name": pack.name(),
        "version": pack.version(),
        "revision": pack.revision(),
        "description": pack.description(),
        "metrics": metrics,
        "has_contract": pack.json_schema().is_some(),
        "dir": served.dir().display().to_string(),
        "loaded_at": crate::time::rfc3339(served.loaded_at()),
        "reload_error": failure,
    })
}

/// Each pack served, by name, with the revision it serves.
pub fn revisions(engine: &Engine) -> Vec<(String, String)> {
    engine
        .packs()
        .iter()
        .map(|s| (s.pack().name().to_owned(), s.pack().revision().to_owned()))
        .collect()
}
