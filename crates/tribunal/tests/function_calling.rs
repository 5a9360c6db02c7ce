//! Function-calling verdicts as the public benchmarks judge them, with
//! built-ins only: generated cases (function definitions, expected calls with
//! lists of accepted values and optional arguments, single, multiple-choice,
//! parallel and parallel-multiple) and every mutant class of a candidate
//! (wrong name, missing or extra argument, wrong type, a float for an integer,
//! a value not accepted, swapped, dropped or repeated parallel calls, an
//! alternative accepted value, an optional argument left out, a `null`, case
//! and punctuation changes) are judged by a `tool_calls` pack and by a small
//! reference grader written here from the rules the authoring guide states;
//! they agree on every candidate, whether the calls come in a transcript or
//! as the output itself (a list of calls in any of four forms).

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::path::Path;

use serde_json::Value;
use tribunal::{Input, Pack, Status};

#[path = "../../../tests/support/rng.rs"]
mod rng;
use rng::Rng;

#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Ty {
    Str,
    Int,
    Num,
    Bool,
    StrList,
}

struct Param {
    name: &'static str,
    ty: Ty,
    required: bool,
}

struct Func {
    name: &'static str,
    params: Vec<Param>,
}

fn p(name: &'static str, ty: Ty, required: bool) -> Param {
    Param { name, ty, required }
}

fn functions() -> Vec<Func> {
    use Ty::*;
    vec![
        Func {
            name: "get_weather",
            params: vec![p("city", Str, true), p("unit", Str, false)],
        },
        Func {
            name: "book_table",
            params: vec![
                p("restaurant", Str, true),
                p("people", Int, true),
                p("time", Str, true),
                p("notes", Str, false),
            ],
        },
        Func {
            name: "convert",
            params: vec![
                p("amount", Num, true),
                p("from", Str, true),
                p("to", Str, true),
            ],
        },
        Func {
            name: "set_alarm",
            params: vec![
                p("hour", Int, true),
                p("minute", Int, false),
                p("repeat", Bool, false),
            ],
        },
        Func {
            name: "tag_items",
            params: vec![p("tags", StrList, true), p("urgent", Bool, false)],
        },
    ]
}

/// The pack: every function's argument rules, closed; NORMALIZED strings,
/// strict numbers; `mode` the matching.
fn write_pack(dir: &Path, mode: &str) -> Pack {
    let mut arguments = String::new();
    for func in functions() {
        writeln!(arguments, "          {}:", func.name).unwrap();
        for param in &func.params {
            let ty = match param.ty {
                Ty::Str => "type: string".to_owned(),
                Ty::Int => "type: integer".to_owned(),
                Ty::Num => "type: number".to_owned(),
                Ty::Bool => "type: boolean".to_owned(),
                Ty::StrList => "type: array, items: string".to_owned(),
            };
            writeln!(
                arguments,
                "            {}: {{ {ty}, required: {} }}",
                param.name, param.required
            )
            .unwrap();
        }
    }
    let names: Vec<&str> = functions().iter().map(|f| f.name).collect();
    let yaml = format!(
        "name: function-calling-{mode}\nversion: 1.0.0\npipeline:\n  postprocessors:\n    - use: tool_calls\n      with:\n        allowed: [{}]\n        match: {mode}\n        numbers: strict\n        additional_arguments: false\n        argument_strategies: {{ \"*\": NORMALIZED }}\n        arguments:\n{arguments}",
        names.join(", ")
    );
    std::fs::write(dir.join("pack.yaml"), yaml).unwrap();
    Pack::load(dir).unwrap_or_else(|e| panic!("{e}"))
}

/// An expected argument: its accepted values (JSON texts), and whether it may
/// be left out.
#[derive(Clone)]
struct Accepted {
    values: Vec<String>,
    optional: bool,
}

#[derive(Clone)]
struct Expected {
    name: &'static str,
    arguments: Vec<(&'static str, Accepted)>,
}

/// A call as made: its name, and its arguments as JSON texts in order.
#[derive(Clone, Debug)]
struct Call {
    name: String,
    arguments: Vec<(String, String)>,
}

const CITIES: [&[&str]; 4] = [
    &["New York", "NY", "New York, NY"],
    &["San Francisco", "SF"],
    &["Oslo"],
    &["Saint-Étienne", "St. Etienne"],
];
const WORDS: [&str; 8] = [
    "celsius",
    "fahrenheit",
    "window seat",
    "7:30 pm",
    "USD",
    "EUR",
    "gluten-free",
    "urgent_fix",
];

fn quoted(text: &str) -> String {
    serde_json::to_string(text).unwrap()
}

/// Accepted values for a parameter of type `ty`.
fn accepted_values(rng: &mut Rng, ty: Ty, name: &str) -> Vec<String> {
    let count = 1 + rng.below(2);
    match ty {
        Ty::Str if name == "city" => CITIES[rng.below(CITIES.len())]
            .iter()
            .map(|c| quoted(c))
            .collect(),
        Ty::Str => (0..count)
            .map(|_| quoted(WORDS[rng.below(WORDS.len())]))
            .collect(),
        Ty::Int => (0..count).map(|_| (rng.below(24)).to_string()).collect(),
        Ty::Num => (0..count)
            .map(|_| ["10", "2.5", "100.0", "0.25", "7"][rng.below(5)].to_owned())
            .collect(),
        Ty::Bool => vec![["true", "false"][rng.below(2)].to_owned()],
        Ty::StrList => (0..count)
            .map(|_| {
                let items: Vec<String> = (0..=rng.below(2))
                    .map(|_| quoted(WORDS[rng.below(WORDS.len())]))
                    .collect();
                format!("[{}]", items.join(", "))
            })
            .collect(),
    }
}

fn expected_call(rng: &mut Rng, func: &Func) -> Expected {
    let mut arguments = Vec::new();
    for param in &func.params {
        // Some optional arguments are not expected at all.
        if !param.required && rng.below(3) == 0 {
            continue;
        }
        arguments.push((
            param.name,
            Accepted {
                values: accepted_values(rng, param.ty, param.name),
                optional: !param.required,
            },
        ));
    }
    Expected {
        name: func.name,
        arguments,
    }
}

/// The expected argument as the record writes it: a value, or matchers.
fn expected_text(rng: &mut Rng, accepted: &Accepted) -> String {
    let values = if accepted.values.len() == 1 && rng.below(2) == 0 {
        accepted.values[0].clone()
    } else {
        format!("{{\"any_of\": [{}]}}", accepted.values.join(", "))
    };
    if accepted.optional {
        format!("{{\"optional\": {values}}}")
    } else {
        values
    }
}

/// A string written another way that graders accept: case, spaces and
/// punctuation changed.
fn restyled(rng: &mut Rng, text: &str) -> String {
    let inner: String = serde_json::from_str(text).unwrap();
    let changed = match rng.below(4) {
        0 => inner.to_uppercase(),
        1 => inner.to_lowercase(),
        2 => inner.replace(' ', ""),
        _ => inner.replace(' ', "_").replace(',', ""),
    };
    quoted(&changed)
}

/// A call that meets `expected`, choosing among the accepted values and
/// their accepted spellings, leaving optional arguments out at times.
fn correct_call(rng: &mut Rng, expected: &Expected) -> Call {
    let mut arguments = Vec::new();
    for (name, accepted) in &expected.arguments {
        if accepted.optional && rng.below(3) == 0 {
            continue;
        }
        let mut value = accepted.values[rng.below(accepted.values.len())].clone();
        if value.starts_with('"') && rng.below(2) == 0 {
            value = restyled(rng, &value);
        }
        // A number expected as `100.0` may come as `100`.
        if value.ends_with(".0") && rng.below(2) == 0 {
            value.truncate(value.len() - 2);
        }
        arguments.push(((*name).to_owned(), value));
    }
    Call {
        name: expected.name.to_owned(),
        arguments,
    }
}

const CLASSES: [&str; 12] = [
    "as expected",
    "wrong name",
    "missing argument",
    "extra argument",
    "wrong type",
    "float for an integer",
    "value not accepted",
    "calls swapped",
    "call dropped",
    "call repeated",
    "null argument",
    "unknown tool",
];

/// `calls` with one mutation of class `class` (some leave them as they are
/// when they do not apply).
fn mutate(rng: &mut Rng, class: usize, calls: &mut Vec<Call>, funcs: &[Func]) {
    let at = rng.below(calls.len());
    let func = funcs.iter().find(|f| f.name == calls[at].name).unwrap();
    match CLASSES[class] {
        "wrong name" => {
            let other = funcs[rng.below(funcs.len())].name;
            other.clone_into(&mut calls[at].name);
        }
        "missing argument" => {
            let required: Vec<&Param> = func.params.iter().filter(|p| p.required).collect();
            let name = required[rng.below(required.len())].name;
            calls[at].arguments.retain(|(n, _)| n != name);
        }
        "extra argument" => calls[at]
            .arguments
            .push(("extra_note".to_owned(), "\"hi\"".to_owned())),
        "wrong type" | "float for an integer" | "value not accepted" | "null argument" => {
            let Some(index) =
                (!calls[at].arguments.is_empty()).then(|| rng.below(calls[at].arguments.len()))
            else {
                return;
            };
            let (name, value) = calls[at].arguments[index].clone();
            let ty = func.params.iter().find(|p| p.name == name).unwrap().ty;
            let new = match (CLASSES[class], ty) {
                ("null argument", _) => "null".to_owned(),
                ("float for an integer", Ty::Int | Ty::Num) if !value.contains('.') => {
                    format!("{value}.0")
                }
                ("float for an integer", _) => return,
                ("wrong type", Ty::Str | Ty::StrList) => "5".to_owned(),
                ("wrong type", Ty::Int | Ty::Num) => quoted(&value),
                ("wrong type", Ty::Bool) => "\"yes\"".to_owned(),
                (_, Ty::Str) => quoted("Zanzibar"),
                (_, Ty::Int) => "97".to_owned(),
                (_, Ty::Num) => "3.75".to_owned(),
                (_, Ty::Bool) => if value == "true" { "false" } else { "true" }.to_owned(),
                (_, Ty::StrList) => "[\"nothing\"]".to_owned(),
            };
            calls[at].arguments[index].1 = new;
        }
        "calls swapped" => calls.reverse(),
        "call dropped" if calls.len() > 1 => {
            calls.remove(at);
        }
        "call repeated" => {
            let call = calls[at].clone();
            calls.push(call);
        }
        "unknown tool" => "get_wether".clone_into(&mut calls[at].name),
        _ => {}
    }
}

// ---- The reference grader: the rules as the guide states them. ----

fn normalize(text: &str) -> String {
    text.chars()
        .filter(|c| !c.is_whitespace() && !",./-_*^".contains(*c))
        .flat_map(char::to_lowercase)
        .collect()
}

fn is_integer_text(text: &str) -> bool {
    !text.contains(['.', 'e', 'E'])
}

/// Whether the value as written has the parameter's type (strict integers).
fn has_type(ty: Ty, text: &str) -> bool {
    let value: Value = serde_json::from_str(text).unwrap();
    match ty {
        Ty::Str => value.is_string(),
        Ty::Int => value.is_number() && is_integer_text(text.trim()),
        Ty::Num => value.is_number(),
        Ty::Bool => value.is_boolean(),
        Ty::StrList => value
            .as_array()
            .is_some_and(|a| a.iter().all(Value::is_string)),
    }
}

/// NORMALIZED equality with strict numbers, on values as written.
fn same(expected: &Value, actual: &Value) -> bool {
    match (expected, actual) {
        (Value::String(e), Value::String(a)) => normalize(e) == normalize(a),
        (Value::Number(e), Value::Number(a)) => {
            let (e, a) = (e.to_string(), a.to_string());
            if is_integer_text(&e) && !is_integer_text(&a) {
                return false;
            }
            let (e, a) = (e.parse::<f64>().unwrap(), a.parse::<f64>().unwrap());
            e.partial_cmp(&a) == Some(std::cmp::Ordering::Equal)
        }
        (Value::Array(e), Value::Array(a)) => {
            e.len() == a.len() && e.iter().zip(a).all(|(e, a)| same(e, a))
        }
        _ => expected == actual,
    }
}

fn call_matches(expected: &Expected, call: &Call) -> bool {
    if expected.name != call.name {
        return false;
    }
    expected.arguments.iter().all(|(name, accepted)| {
        match call.arguments.iter().find(|(n, _)| n == name) {
            None => accepted.optional,
            Some((_, actual)) => {
                let actual: Value = serde_json::from_str(actual).unwrap();
                accepted
                    .values
                    .iter()
                    .any(|v| same(&serde_json::from_str(v).unwrap(), &actual))
            }
        }
    })
}

/// Whether each expected call can be given its own matching call (by trying
/// every assignment).
fn assignable(expected: &[Expected], calls: &[Call], used: &mut Vec<bool>) -> bool {
    let Some((first, rest)) = expected.split_first() else {
        return true;
    };
    for index in 0..calls.len() {
        if !used[index] && call_matches(first, &calls[index]) {
            used[index] = true;
            if assignable(rest, calls, used) {
                return true;
            }
            used[index] = false;
        }
    }
    false
}

fn reference(funcs: &[Func], any_order: bool, expected: &[Expected], calls: &[Call]) -> bool {
    for call in calls {
        let Some(func) = funcs.iter().find(|f| f.name == call.name) else {
            return false;
        };
        for (name, value) in &call.arguments {
            match func.params.iter().find(|p| p.name == name) {
                Some(param) if has_type(param.ty, value) => {}
                _ => return false,
            }
        }
        let passed = |name: &str| call.arguments.iter().any(|(n, _)| n == name);
        if func.params.iter().any(|p| p.required && !passed(p.name)) {
            return false;
        }
    }
    if any_order {
        assignable(expected, calls, &mut vec![false; calls.len()])
    } else {
        calls.len() == expected.len() && expected.iter().zip(calls).all(|(e, c)| call_matches(e, c))
    }
}

/// A call as an output's list item writes it: `{name, arguments}` (form 0),
/// an OpenAI Chat `tool_calls` item (1), an Anthropic `tool_use` block (2) or
/// an OpenAI Responses `function_call` (3).
fn call_as_output(form: usize, index: usize, call: &Call) -> String {
    let arguments: Vec<String> = call
        .arguments
        .iter()
        .map(|(n, v)| format!("{}: {v}", quoted(n)))
        .collect();
    let object = format!("{{{}}}", arguments.join(", "));
    let name = quoted(&call.name);
    match form {
        0 => format!("{{\"name\": {name}, \"arguments\": {object}}}"),
        1 => format!(
            "{{\"id\": \"c{index}\", \"type\": \"function\", \"function\": {{\"name\": {name}, \"arguments\": {}}}}}",
            quoted(&object)
        ),
        2 => format!("{{\"type\": \"tool_use\", \"id\": \"t{index}\", \"name\": {name}, \"input\": {object}}}"),
        _ => format!(
            "{{\"type\": \"function_call\", \"call_id\": \"c{index}\", \"name\": {name}, \"arguments\": {}}}",
            quoted(&object)
        ),
    }
}

fn record(rng: &mut Rng, expected: &[Expected], calls: &[Call]) -> Value {
    let made: Vec<String> = calls
        .iter()
        .enumerate()
        .map(|(i, call)| {
            let arguments: Vec<String> = call
                .arguments
                .iter()
                .map(|(n, v)| format!("{}: {v}", quoted(n)))
                .collect();
            format!(
                "{{\"id\": \"c{i}\", \"type\": \"function\", \"function\": {{\"name\": {}, \"arguments\": {}}}}}",
                quoted(&call.name),
                quoted(&format!("{{{}}}", arguments.join(", ")))
            )
        })
        .collect();
    let wanted: Vec<String> = expected
        .iter()
        .map(|e| {
            let arguments: Vec<String> = e
                .arguments
                .iter()
                .map(|(n, a)| format!("{}: {}", quoted(n), expected_text(rng, a)))
                .collect();
            format!(
                "{{\"name\": {}, \"arguments\": {{{}}}}}",
                quoted(e.name),
                arguments.join(", ")
            )
        })
        .collect();
    let text = format!(
        "{{\"messages\": [{{\"role\": \"user\", \"content\": \"Please help.\"}}, {{\"role\": \"assistant\", \"content\": null, \"tool_calls\": [{}]}}], \"expected\": {{\"tool_calls\": [{}]}}}}",
        made.join(", "),
        wanted.join(", ")
    );
    serde_json::from_str(&text).unwrap()
}

#[test]
fn built_ins_judge_function_calls_as_the_reference_grader_does() {
    let funcs = functions();
    let dir = tempfile::tempdir().unwrap();
    let (exact_dir, any_dir) = (dir.path().join("exact"), dir.path().join("any"));
    std::fs::create_dir_all(&exact_dir).unwrap();
    std::fs::create_dir_all(&any_dir).unwrap();
    let exact = write_pack(&exact_dir, "exact");
    let any_order = write_pack(&any_dir, "any_order");
    let mut rng = Rng(0x5DEE_CE66_D1CE_4E5B);
    // (passes, fails) by class and by category.
    let mut tally: BTreeMap<String, (usize, usize)> = BTreeMap::new();
    for case in 0..2400 {
        let category = ["single", "multiple", "parallel", "parallel_multiple"][case % 4];
        let expected: Vec<Expected> = match category {
            "single" | "multiple" => {
                let func = &funcs[rng.below(funcs.len())];
                vec![expected_call(&mut rng, func)]
            }
            "parallel" => {
                let func = &funcs[rng.below(funcs.len())];
                (0..2 + rng.below(2))
                    .map(|_| expected_call(&mut rng, func))
                    .collect()
            }
            _ => (0..2 + rng.below(2))
                .map(|_| {
                    let func = &funcs[rng.below(funcs.len())];
                    expected_call(&mut rng, func)
                })
                .collect(),
        };
        let mut calls: Vec<Call> = expected.iter().map(|e| correct_call(&mut rng, e)).collect();
        let class = rng.below(CLASSES.len());
        mutate(&mut rng, class, &mut calls, &funcs);
        let parallel = category.starts_with("parallel");
        let want = reference(&funcs, parallel, &expected, &calls);
        let record = record(&mut rng, &expected, &calls);
        let input = Input::from_messages(record["messages"].clone())
            .with_expected(record["expected"].clone());
        let pack = if parallel { &any_order } else { &exact };
        let report = pack.evaluate(&input);
        assert_ne!(
            report.status(),
            Status::Error,
            "case {case}: {record}\n{report:?}"
        );
        assert_eq!(
            report.status() == Status::Pass,
            want,
            "case {case} ({category}, {}): the reference says {}\n{record}\n{:#?}",
            CLASSES[class],
            if want { "PASS" } else { "FAIL" },
            report.issues
        );
        // The same calls as the output itself, a list in one of the forms
        // models and APIs write: the same verdict, without a transcript.
        let form = rng.below(4);
        let output = format!(
            "[{}]",
            calls
                .iter()
                .enumerate()
                .map(|(i, c)| call_as_output(form, i, c))
                .collect::<Vec<_>>()
                .join(", ")
        );
        let alone =
            pack.evaluate(&Input::new(output.clone()).with_expected(record["expected"].clone()));
        assert_eq!(
            alone.status() == Status::Pass,
            want,
            "case {case} ({category}, {}, as output in form {form}): the reference says {}\n{output}\n{:#?}",
            CLASSES[class],
            if want { "PASS" } else { "FAIL" },
            alone.issues
        );
        for key in [CLASSES[class].to_owned(), category.to_owned()] {
            let entry = tally.entry(key).or_default();
            if want {
                entry.0 += 1;
            } else {
                entry.1 += 1;
            }
        }
    }
    // Every class is met, and each that can go both ways does.
    for (key, (passes, fails)) in &tally {
        eprintln!("{key:24} pass {passes:4} fail {fails:4}");
    }
    for class in CLASSES {
        let (passes, fails) = tally[class];
        match class {
            "as expected" | "calls swapped" => assert!(passes > 50 && fails == 0, "{class}"),
            "wrong type" | "extra argument" | "unknown tool" | "null argument" => {
                assert!(fails > 50 && passes == 0, "{class}: {passes} {fails}");
            }
            _ => assert!(fails > 20, "{class}: {passes} {fails}"),
        }
    }
}

/// A pack of `yaml` (after its name) in a fresh folder.
fn pack_of(dir: &Path, yaml: &str) -> Pack {
    std::fs::write(
        dir.join("pack.yaml"),
        format!("name: t\nversion: 1.0.0\n{yaml}"),
    )
    .unwrap();
    Pack::load(dir).unwrap_or_else(|e| panic!("{e}"))
}

fn codes(pack: &Pack, input: &Input) -> Vec<String> {
    pack.evaluate(input)
        .issues
        .iter()
        .map(|issue| issue.code.to_string())
        .collect()
}

fn one_call(name: &str, arguments: &str) -> Value {
    serde_json::json!([
        {"role": "user", "content": "hi"},
        {"role": "assistant", "content": null, "tool_calls": [
            {"id": "c0", "type": "function", "function": {"name": name, "arguments": arguments}}]}
    ])
}

#[test]
fn strict_numbers_are_one_sided_in_the_contract_and_its_enum() {
    let dir = tempfile::tempdir().unwrap();
    let pack = pack_of(
        dir.path(),
        "contract:\n  numbers: [strict, finite]\n  fields:\n    n: { type: integer }\n    m: { type: number, enum: [5, 2.0] }\n    k: { type: number }\n",
    );
    let judged = |output: &str| codes(&pack, &Input::new(output));
    assert_eq!(
        judged(r#"{"n": 5, "m": 5, "k": 1.5}"#),
        Vec::<String>::new()
    );
    assert_eq!(judged(r#"{"n": 5.0}"#), ["contract.type"]);
    assert_eq!(judged(r#"{"n": 5e0}"#), ["contract.type"]);
    assert_eq!(
        judged(r#"{"m": 5.0}"#),
        ["contract.one-of"],
        "5.0 is not a listed 5"
    );
    assert_eq!(
        judged(r#"{"m": 2}"#),
        Vec::<String>::new(),
        "2 is a listed 2.0"
    );
    assert_eq!(
        judged(r#"{"k": 1e400}"#),
        ["contract.range"],
        "finite still holds"
    );
    // Without `strict`, by value.
    let dir = tempfile::tempdir().unwrap();
    let by_value = pack_of(
        dir.path(),
        "contract:\n  fields:\n    n: { type: integer, enum: [5] }\n",
    );
    assert!(codes(&by_value, &Input::new(r#"{"n": 5.0}"#)).is_empty());
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(
        dir.path().join("pack.yaml"),
        "name: t\nversion: 1.0.0\ncontract:\n  numbers: strcit\n",
    )
    .unwrap();
    let error = Pack::load(dir.path()).err().unwrap().to_string();
    assert!(
        error.contains("strcit") && error.contains("strict"),
        "{error}"
    );
}

#[test]
fn an_argument_s_enum_compares_under_its_named_strategy_and_normalize_sets_the_stripped_characters()
{
    let rules = "      with:\n        arguments:\n          set_unit:\n            unit: { type: string, enum: [\"Degrees Celsius\"] }\n            count: { type: integer }\n";
    let with = |extra: &str| {
        let dir = tempfile::tempdir().unwrap();
        let pack = pack_of(
            dir.path(),
            &format!("pipeline:\n  postprocessors:\n    - use: tool_calls\n{rules}{extra}"),
        );
        let judge = |arguments: &str| {
            codes(
                &pack,
                &Input::from_messages(one_call("set_unit", arguments)),
            )
        };
        (
            judge(r#"{"unit": "degrees-celsius"}"#),
            judge(r#"{"unit": "DEGREES CELSIUS"}"#),
            judge(r#"{"unit": "Degrees Celsius", "count": 2.0}"#),
        )
    };
    let none: Vec<String> = Vec::new();
    let one_of = vec!["contract.one-of".to_owned()];
    // By value: only the listed text.
    assert_eq!(with(""), (one_of.clone(), one_of.clone(), none.clone()));
    // EXACT: case-insensitive.
    assert_eq!(
        with("        argument_strategies: { unit: EXACT }\n"),
        (one_of.clone(), none.clone(), none.clone())
    );
    // NORMALIZED: case, spaces and `-` ignored; `*` names every argument.
    assert_eq!(
        with("        argument_strategies: { \"*\": NORMALIZED }\n"),
        (none.clone(), none.clone(), none.clone())
    );
    // `normalize.strip` without `-`: the hyphen counts.
    assert_eq!(
        with("        argument_strategies: { set_unit.unit: NORMALIZED }\n        normalize: { strip: \",\" }\n"),
        (one_of.clone(), none.clone(), none.clone())
    );
    // `numbers: strict` on the rule: `2.0` is no integer.
    assert_eq!(
        with("        numbers: strict\n").2,
        vec!["contract.type".to_owned()]
    );
}

#[test]
fn a_list_of_calls_is_judged_by_the_contract_s_variants_and_by_tool_calls() {
    let dir = tempfile::tempdir().unwrap();
    let pack = pack_of(
        dir.path(),
        "contract:\n  kind_field: name\n  additional_fields: false\n  fields:\n    name: { type: string, required: true }\n  variants:\n    get_weather:\n      fields:\n        arguments:\n          type: object\n          required: true\n          additional_fields: false\n          fields:\n            city: { type: string, required: true }\npipeline:\n  postprocessors:\n    - use: tool_calls\n      with: { arguments: contract, arguments_field: arguments, required: [get_weather], max_calls: 2 }\n",
    );
    let judged = |output: &str| {
        let report = pack.evaluate(&Input::new(output));
        assert!(report.turns.is_none(), "no transcript, no turns");
        assert!(report.issues.iter().all(|i| i.turn.is_none()), "{report:?}");
        report
            .issues
            .iter()
            .map(|i| format!("{} {}", i.code, i.path.as_deref().unwrap_or("")))
            .collect::<Vec<_>>()
    };
    let none: Vec<String> = Vec::new();
    assert_eq!(
        judged(
            r#"[{"name": "get_weather", "arguments": {"city": "Oslo"}}, {"name": "get_weather", "arguments": {"city": "NY"}}]"#
        ),
        none
    );
    // The contract judges each item as an output of its own.
    assert_eq!(
        judged(
            r#"[{"name": "get_weather", "arguments": {"town": "Oslo"}}, {"name": "get_time", "arguments": {}}, 7]"#
        ),
        [
            "transcript.invalid /2",
            "contract.missing-field /0/arguments/city",
            "contract.unexpected-field /0/arguments/town",
            "contract.kind-not-allowed /1/name",
            "contract.not-an-object /2",
            // (`tool_calls`' `arguments: contract` holds the call to its
            // variant too.)
            "contract.missing-field /0/arguments/city",
            "contract.unexpected-field /0/arguments/town",
        ]
    );
    // Calls as the APIs write them: the contract judges the tool, and
    // `tool_calls` the arguments (against the variant), the count and
    // `required`, at their paths in the output.
    assert_eq!(
        judged(
            r#"[{"type": "tool_use", "id": "t1", "name": "get_weather", "input": {"city": 5}}, {"type": "function", "function": {"name": "get_time", "arguments": "{}"}}, {"type": "function_call", "call_id": "c", "name": "get_weather", "arguments": "{\"city\": \"x\"}"}]"#
        ),
        [
            "contract.kind-not-allowed /1/function/name",
            "contract.type /0/input/city",
            "tool.too-many /2",
        ]
    );
    assert_eq!(
        judged(r#"[{"type": "function", "function": {"name": "get_time", "arguments": "{"}}]"#),
        [
            "transcript.arguments-not-json /0/function/arguments",
            "contract.kind-not-allowed /0/function/name",
            "tool.missing ",
        ]
    );
    assert_eq!(judged("[]"), ["contract.not-an-object "]);
    // An object is an output as before.
    assert_eq!(
        judged(r#"{"name": "get_weather", "arguments": {"city": "Oslo"}}"#),
        none
    );
}
