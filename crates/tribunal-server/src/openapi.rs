//! The service's `OpenAPI` document, generated from the route table
//! ([`crate::routes::table::ROUTES`]: each route's path, method, operation id
//! and summary) and three texts in `openapi/`: `base.json` (the document but
//! its paths: info, security, the components' schemas), `common.json` (what
//! routes share, added by rule: the pack-name parameter on every route with
//! `{name}`, 401 on every route but the probes, 404 on every pack route
//! without one of its own, 405 on every route) and `operations.json` (each
//! operation's own description, parameters, body and responses, by id).
//!
//! `GET /openapi.json` and `tribunal serve --print-openapi` give it;
//! docs/openapi.json is a copy a test keeps equal (`UPDATE_DOCS=1 cargo test
//! -p tribunal-server openapi` writes it), and tests/server.rs holds it to what
//! the running server answers.

use std::sync::LazyLock;

use serde_json::{json, Map, Value};

use crate::routes::table::{RouteDef, ROUTES};

const BASE: &str = include_str!("../openapi/base.json");
const COMMON: &str = include_str!("../openapi/common.json");
const OPERATIONS: &str = include_str!("../openapi/operations.json");

static DOCUMENT: LazyLock<String> = LazyLock::new(|| match generate(BASE, COMMON, OPERATIONS) {
    Ok(document) => document,
    // The texts are compiled in, and a test generates the document: a
    // mistake in them cannot reach a release.
    Err(mistake) => panic!("the OpenAPI texts in crates/tribunal-server/openapi/: {mistake}"),
});

/// The document, as pretty-printed JSON with a final newline.
#[must_use]
pub fn document() -> &'static str {
    &DOCUMENT
}

fn object(text: &str, what: &str) -> Result<Map<String, Value>, String> {
    match serde_json::from_str(text) {
        Ok(Value::Object(map)) => Ok(map),
        Ok(_) => Err(format!("{what} is not a JSON object")),
        Err(err) => Err(format!("{what}: {err}")),
    }
}

/// A member of `map` that must be there.
fn member<'a>(map: &'a Map<String, Value>, key: &str, what: &str) -> Result<&'a Value, String> {
    map.get(key).ok_or_else(|| format!("{what} has no `{key}`"))
}

/// The document from the three texts.
fn generate(base: &str, common: &str, operations: &str) -> Result<String, String> {
    let base = object(base, "base.json")?;
    let common = object(common, "common.json")?;
    let mut operations = object(operations, "operations.json")?;
    let mut paths = Map::new();
    for def in &ROUTES {
        let Some(Value::Object(own)) = operations.remove(def.operation_id) else {
            return Err(format!(
                "operations.json has no object for `{}` ({} {})",
                def.operation_id,
                def.method,
                def.path()
            ));
        };
        let operation = operation(def, own, &common)?;
        let methods = paths
            .entry(def.path())
            .or_insert_with(|| Value::Object(Map::new()));
        if let Value::Object(methods) = methods {
            methods.insert(def.method.as_str().to_ascii_lowercase(), operation);
        }
    }
    if let Some(id) = operations.keys().next() {
        return Err(format!(
            "operations.json describes `{id}`, which no route has"
        ));
    }
    // The paths after `security`, before `components`, as OpenAPI documents list them.
    member(&base, "components", "base.json")?;
    let mut document = Map::new();
    for (key, value) in base {
        if key == "components" {
            document.insert(
                "paths".to_owned(),
                Value::Object(std::mem::take(&mut paths)),
            );
        }
        document.insert(key, value);
    }
    let mut text = serde_json::to_string_pretty(&document).map_err(|err| err.to_string())?;
    text.push('\n');
    Ok(text)
}

/// One route's operation: its own text, with the table's id and summary and
/// the shared parameters and responses.
fn operation(
    def: &RouteDef,
    mut own: Map<String, Value>,
    common: &Map<String, Value>,
) -> Result<Value, String> {
    let what = format!("operations.json's `{}`", def.operation_id);
    let section = |key: &str| match member(common, key, "common.json")? {
        Value::Object(map) => Ok(map),
        _ => Err(format!("common.json's `{key}` is not an object")),
    };
    let (shared_parameters, shared_responses) = (section("parameters")?, section("responses")?);
    let mut operation = Map::new();
    operation.insert("summary".to_owned(), json!(def.summary));
    operation.insert("operationId".to_owned(), json!(def.operation_id));
    if let Some(description) = own.remove("description") {
        operation.insert("description".to_owned(), description);
    }
    if !def.route.needs_token() {
        // The probes answer without the token.
        operation.insert("security".to_owned(), json!([{}]));
    }
    let mut parameters = Vec::new();
    if def.names_a_pack() {
        parameters.push(member(shared_parameters, "name", "common.json's parameters")?.clone());
    }
    match own.remove("parameters") {
        Some(Value::Array(more)) => parameters.extend(more),
        Some(_) => return Err(format!("{what}: `parameters` is not a list")),
        None => {}
    }
    parameters.push(json!({"$ref": "#/components/parameters/RequestId"}));
    parameters.push(json!({"$ref": "#/components/parameters/Traceparent"}));
    operation.insert("parameters".to_owned(), Value::Array(parameters));
    if let Some(body) = own.remove("requestBody") {
        operation.insert("requestBody".to_owned(), body);
    }
    let Some(Value::Object(mut responses)) = own.remove("responses") else {
        return Err(format!("{what} has no `responses` object"));
    };
    let shared = |code: &str| member(shared_responses, code, "common.json's responses").cloned();
    if def.route.needs_token() {
        responses.entry("401").or_insert(shared("401")?);
    }
    if def.names_a_pack() {
        responses.entry("404").or_insert(shared("404")?);
    }
    responses.insert("405".to_owned(), shared("405")?);
    operation.insert("responses".to_owned(), Value::Object(responses));
    if let Some(key) = own.keys().next() {
        return Err(format!(
            "{what}: `{key}` is not one of description, parameters, requestBody, responses"
        ));
    }
    Ok(Value::Object(operation))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn docs_openapi_json_is_the_generated_document() {
        let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../docs/openapi.json");
        let generated = generate(BASE, COMMON, OPERATIONS).unwrap();
        if std::env::var_os("UPDATE_DOCS").is_some() {
            std::fs::write(&path, &generated).unwrap();
        }
        let committed = std::fs::read_to_string(&path).unwrap();
        assert!(
            committed == generated,
            "docs/openapi.json is not the generated document: run `UPDATE_DOCS=1 cargo test -p tribunal-server openapi`"
        );
    }

    #[test]
    fn every_route_has_every_shared_answer() {
        let document: Value = serde_json::from_str(document()).unwrap();
        for def in &ROUTES {
            let operation =
                &document["paths"][def.path()][def.method.as_str().to_ascii_lowercase()];
            assert_eq!(operation["operationId"], def.operation_id);
            let responses = operation["responses"].as_object().unwrap();
            assert!(responses.contains_key("200"), "{}", def.path());
            assert!(responses.contains_key("405"), "{}", def.path());
            assert_eq!(
                responses.contains_key("401"),
                def.route.needs_token(),
                "{}",
                def.path()
            );
            assert_eq!(
                operation["parameters"][0]["name"] == "name",
                def.names_a_pack(),
                "{}",
                def.path()
            );
        }
    }

    #[test]
    fn a_text_without_a_route_or_a_route_without_a_text_is_refused() {
        let operations = object(OPERATIONS, "operations.json").unwrap();
        let with = |change: &dyn Fn(&mut Map<String, Value>)| {
            let mut changed = operations.clone();
            change(&mut changed);
            generate(BASE, COMMON, &Value::Object(changed).to_string()).unwrap_err()
        };
        let err = with(&|ops| {
            ops.remove("check");
        });
        assert!(err.contains("no object for `check`"), "{err}");
        let err = with(&|ops| {
            ops.insert("nope".to_owned(), json!({"responses": {}}));
        });
        assert!(err.contains("`nope`, which no route has"), "{err}");
        let err = with(&|ops| {
            ops["check"]["summry"] = json!("a typo");
        });
        assert!(err.contains("`summry` is not one of"), "{err}");
        let err = with(&|ops| {
            ops["check"].as_object_mut().unwrap().remove("responses");
        });
        assert!(err.contains("`check` has no `responses`"), "{err}");
    }
}
