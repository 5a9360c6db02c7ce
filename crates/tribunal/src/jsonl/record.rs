//! One input line to one [`Input`]: only the record's four fields are built as
//! values; every other member is checked and skipped without being kept.

use std::fmt;
use std::sync::OnceLock;

use crate::json::Json;
use regex::Regex;
use serde::de::{DeserializeSeed, IgnoredAny, MapAccess, Visitor};

use super::{FieldNames, LineError, Options, RawBody, RawRecord, ReadRecord, OVERSIZE_PREFIX};
use crate::pipeline::Input;
use crate::report::Issue;

/// Turns one raw line into an `Input` (with a warning to add to its result when
/// the line had to be read leniently), or the reason it cannot be evaluated (with
/// whatever id could be recovered).
pub(crate) fn parse_record(record: &RawRecord<'_>, options: &Options) -> ReadRecord {
    let line = record.line;
    let bytes = match record.body {
        RawBody::Bytes(bytes) => bytes,
        RawBody::TooLarge { size, prefix } => {
            return Err(LineError::new(
                recover_id(prefix, &options.fields.id),
                format!(
                    "line {line}: record is {size} bytes, above the limit of {} bytes (raise it with --max-record-bytes)",
                    options.max_record_bytes
                ),
            ))
        }
        RawBody::ReadError(err) => return Err(LineError::new(Json::Null, format!("line {line}: cannot read input: {err}"))),
    };
    let text = std::str::from_utf8(bytes).map_err(|err| {
        LineError::new(
            recover_id(bytes, &options.fields.id),
            format!(
                "line {line}: not valid UTF-8 (at byte {})",
                err.valid_up_to() + 1
            ),
        )
    })?;
    let not_json = |err: serde_json::Error| {
        LineError::new(
            recover_id(bytes, &options.fields.id),
            format!("line {line}: not valid JSON: {err}"),
        )
    };
    let mut note = None;
    let fields = match read_fields(text, &options.fields) {
        Ok(fields) => fields,
        Err(err) => {
            // Python's `json.dumps` writes strings it cannot encode as lone
            // surrogate escapes: read them as U+FFFD, and say so.
            let fixed = crate::text::replace_lone_surrogates(text)
                .ok_or(err)
                .map_err(not_json)?;
            note = Some(Issue::warning(
                "input",
                format!(
                    "line {line}: lone UTF-16 surrogate escapes (e.g. `\\ud800`) in the record were read as U+FFFD"
                ),
            )
            .code(crate::codes::INPUT_LONE_SURROGATE));
            read_fields(&fixed, &options.fields).map_err(not_json)?
        }
    };
    let Some([id, output, expected, meta, messages]) = fields else {
        return Err(LineError::new(
            Json::Null,
            format!("line {line}: a record must be a JSON object"),
        ));
    };
    let input = Input::from_record(
        id.unwrap_or(Json::Null),
        output.unwrap_or(Json::Null),
        expected.unwrap_or(Json::Null),
        meta.unwrap_or(Json::Null),
        messages.unwrap_or(Json::Null),
    )
    .map_err(|missing| {
        LineError::new(
            missing.id,
            format!(
                "line {line}: record has no `{}` field (nor `messages`, an agent's transcript judged on its last assistant turn)",
                options.fields.output
            ),
        )
    })?;
    Ok((input, note))
}

/// Finds `"id": "..."` or `"id": 123` at the start of a record that could not be parsed.
fn recover_id(bytes: &[u8], field: &str) -> Json {
    static PATTERN: OnceLock<Regex> = OnceLock::new();
    let text = String::from_utf8_lossy(&bytes[..bytes.len().min(OVERSIZE_PREFIX)]);
    let pattern = PATTERN.get_or_init(|| {
        Regex::new(r#""((?:[^"\\]|\\.)*)"\s*:\s*("(?:[^"\\]|\\.)*"|-?\d+)"#).expect("valid regex")
    });
    for caps in pattern.captures_iter(&text) {
        let key: Result<String, _> = serde_json::from_str(&format!("\"{}\"", &caps[1]));
        if key.is_ok_and(|k| k == field) {
            return serde_json::from_str(&caps[2]).unwrap_or(Json::Null);
        }
    }
    Json::Null
}

/// The record's `id`, `output`, `expected` and `meta` members (each `None` when
/// absent), or `None` when the line's JSON is not an object. A member named twice
/// counts with its last value, as in a parsed object; a member two of the names
/// share goes to the first of them.
fn read_fields(text: &str, names: &FieldNames) -> serde_json::Result<Option<[Option<Json>; 5]>> {
    if let Some(fields) = fast::read_fields(text, names) {
        return Ok(Some(fields));
    }
    let mut reader = serde_json::Deserializer::from_str(text);
    let fields = RecordSeed { names }.deserialize(&mut reader)?;
    reader.end()?;
    Ok(fields)
}

struct RecordSeed<'a> {
    names: &'a FieldNames,
}

impl<'de> DeserializeSeed<'de> for RecordSeed<'_> {
    type Value = Option<[Option<Json>; 5]>;

    fn deserialize<D: serde::Deserializer<'de>>(self, reader: D) -> Result<Self::Value, D::Error> {
        reader.deserialize_any(self)
    }
}

impl<'de> Visitor<'de> for RecordSeed<'_> {
    type Value = Option<[Option<Json>; 5]>;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a JSON object")
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Self::Value, A::Error> {
        let mut fields: [Option<Json>; 5] = Default::default();
        while let Some(which) = map.next_key_seed(KeySeed { names: self.names })? {
            match which {
                Some(index) => fields[index] = Some(map.next_value()?),
                None => {
                    map.next_value::<IgnoredAny>()?;
                }
            }
        }
        Ok(Some(fields))
    }

    // Anything else is valid JSON but not a record.
    fn visit_seq<A: serde::de::SeqAccess<'de>>(self, mut seq: A) -> Result<Self::Value, A::Error> {
        while seq.next_element::<IgnoredAny>()?.is_some() {}
        Ok(None)
    }

    fn visit_str<E>(self, _: &str) -> Result<Self::Value, E> {
        Ok(None)
    }

    fn visit_bool<E>(self, _: bool) -> Result<Self::Value, E> {
        Ok(None)
    }

    fn visit_i64<E>(self, _: i64) -> Result<Self::Value, E> {
        Ok(None)
    }

    fn visit_u64<E>(self, _: u64) -> Result<Self::Value, E> {
        Ok(None)
    }

    fn visit_f64<E>(self, _: f64) -> Result<Self::Value, E> {
        Ok(None)
    }

    fn visit_unit<E>(self) -> Result<Self::Value, E> {
        Ok(None)
    }
}

/// A member name, compared with the four field names without being kept:
/// which of `id`, `output`, `expected`, `meta` it is (an index), if any.
struct KeySeed<'a> {
    names: &'a FieldNames,
}

impl<'de> DeserializeSeed<'de> for KeySeed<'_> {
    type Value = Option<usize>;

    fn deserialize<D: serde::Deserializer<'de>>(self, reader: D) -> Result<Self::Value, D::Error> {
        reader.deserialize_str(self)
    }
}

impl Visitor<'_> for KeySeed<'_> {
    type Value = Option<usize>;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a member name")
    }

    fn visit_str<E>(self, key: &str) -> Result<Self::Value, E> {
        let names = self.names;
        Ok(names.all().iter().position(|name| *name == key))
    }
}

/// For the fuzz targets: whatever line the fast reader reads, it reads as a
/// parsed object gives its members (with the default field names).
#[cfg(feature = "fuzzing")]
pub(crate) fn check_fast_record_reader(text: &str) {
    let names = FieldNames::default();
    let Some(fields) = fast::read_fields(text, &names) else {
        return;
    };
    let value: Json = serde_json::from_str(text).expect("the fast reader read JSON");
    let Json::Object(mut object) = value else {
        panic!("the fast reader read a line that is not an object");
    };
    let members = names.all().map(|name| object.shift_remove(name));
    assert_eq!(fields, members, "the fast reader and serde_json disagree");
}

/// The usual record, read in one pass by `json_read` (`serde_json` copies a string
/// through its scratch buffer one escape at a time, and a model output's JSON
/// escapes every quote), without building the record as an object. A line
/// `json_read` refuses gives `None`, and the general reader reads it (or says why
/// it cannot): what this reader accepts, it reads exactly as that reader does.
mod fast {
    use crate::json::Json;

    use crate::json_read;
    use crate::jsonl::FieldNames;

    pub(super) fn read_fields(text: &str, names: &FieldNames) -> Option<[Option<Json>; 5]> {
        let mut fields: [Option<Json>; 5] = Default::default();
        json_read::parse_members(text, |name, value| {
            // A member two of the names share goes to the first of them; a
            // member named twice counts with its last value.
            let index = names.all().iter().position(|field| *field == name);
            if let Some(index) = index {
                fields[index] = Some(value);
            }
        })?;
        Some(fields)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// What reading the whole record as a value and taking the five members gives.
    fn by_value(text: &str, names: &FieldNames) -> Result<Option<[Option<Json>; 5]>, String> {
        let value: Json = serde_json::from_str(text).map_err(|e| e.to_string())?;
        let Json::Object(mut object) = value else {
            return Ok(None);
        };
        Ok(Some(names.all().map(|name| object.shift_remove(name))))
    }

    #[test]
    fn members_are_read_as_a_parsed_object_would_give_them() {
        let renamed = FieldNames {
            id: "key".into(),
            output: "text".into(),
            expected: "text".into(),
            meta: "m".into(),
            messages: "turns".into(),
        };
        let lines = [
            r#"{"id": 1, "output": "x", "expected": {"a": [1, 2.50]}, "meta": null}"#,
            r#"{"output": "first", "other": {"deep": [[[]]]}, "output": "last"}"#,
            r#"{"\u0069d": "escaped key", "out\u0070ut": "y", "key": 3, "text": "t", "m": {}}"#,
            r#"{"id": 123456789012345678901234567890, "output": {"structured": true}}"#,
            "{}",
            r#"[1, {"id": 2}]"#,
            r#""a string""#,
            "42",
            "null",
            "true",
            r#"{"id": 1, "output": "x"} trailing"#,
            r#"{"id": 1, "output": "x",}"#,
            r#"{"id": 1, "skipped": [1, 2, }"#,
            r#"{"id": 1 "output": "x"}"#,
            // Escapes, read by the fast reader.
            r#"{"id": "a\"b\\c\/d\b\f\n\r\t\u00e9\ud83d\ude00", "output": "\n\n"}"#,
            r#"  { "id" :1 ,"output":"x" , "other": "\u0041\"", "meta": [{"a": "\\"}] }  "#,
            r#"{"output": "", "expected": "", "meta": "é ✓ 😀"}"#,
            // What only the general reader reads (or refuses).
            r#"{"output": "abc\"#,
            r#"{"output": "abc"#,
            r#"{"output" "x"}"#,
            r#"{"output": "x""#,
            r#"{"output": "x"}}"#,
            r#"{"id": 1x, "output": "x"}"#,
            r#"{"id": tru, "output": "x"}"#,
            r#"{"output": "x", "id": -0.5e3}"#,
        ];
        for names in [FieldNames::default(), renamed] {
            for line in lines {
                let ours = read_fields(line, &names).map_err(|e| e.to_string());
                assert_eq!(ours, by_value(line, &names), "{line}");
            }
        }
        // Escapes that are not JSON, in a member that is read (in a member that is
        // skipped, `serde_json` does not look inside `\u` escapes).
        for line in [
            r#"{"output": "\ud800"}"#,
            r#"{"output": "\udc00 low first"}"#,
            r#"{"output": "\ud800\u0041"}"#,
            r#"{"output": "\u12"}"#,
            r#"{"output": "\u12"} "}"#,
            r#"{"output": "\x"}"#,
        ] {
            let names = FieldNames::default();
            let ours = read_fields(line, &names).map_err(|e| e.to_string());
            assert_eq!(ours, by_value(line, &names), "{line}");
        }
    }

    #[test]
    fn the_usual_record_takes_the_fast_reader() {
        let names = FieldNames::default();
        for line in [
            r#"{"id": "ksi-0", "output": "{\"event\": \"a:b\", \"data\": {}}"}"#,
            r#"{"id": 7, "output": "x", "expected": {"a": [1, 2.50]}, "meta": {"k": null}}"#,
            r#"{"output": "\ud83d\ude00 \u00e9", "extra": "\\"}"#,
        ] {
            assert!(fast::read_fields(line, &names).is_some(), "{line}");
        }
        // Control characters JSON forbids in a string are left to the general
        // reader, which refuses them.
        for line in ["{\"output\": \"a\u{1}b\"}", "{\"out\u{1f}put\": \"x\"}"] {
            assert!(fast::read_fields(line, &names).is_none());
            assert!(read_fields(line, &names).is_err());
        }
        // A member nested as deep as serde_json's limit allows is read; deeper,
        // both refuse it.
        for depth in [125, 126, 127, 128] {
            let deep = format!(
                r#"{{"output": "x", "meta": {}{}}}"#,
                "[".repeat(depth),
                "]".repeat(depth)
            );
            let fast = fast::read_fields(&deep, &names);
            assert_eq!(fast.is_some(), depth <= 126, "{depth}");
            assert_eq!(
                read_fields(&deep, &names).map_err(|e| e.to_string()),
                by_value(&deep, &names)
            );
        }
    }

    /// Generated records, whole and cut at every length, with strings of every kind
    /// of character: whatever the fast reader accepts, it reads as `serde_json` does.
    #[test]
    fn the_fast_reader_agrees_with_serde_json_on_generated_records() {
        let names = FieldNames::default();
        let mut next = crate::json::numbers(0x9e37_79b9_7f4a_7c15);
        let alphabet: Vec<char> = "ab \"\\/\u{0}\u{1}\u{1f}\n\t\u{7f}é😀{}[]:,u"
            .chars()
            .collect();
        let mut read = 0;
        for _ in 0..300 {
            let mut text = || -> String {
                let len = next() % 12;
                (0..len)
                    .map(|_| alphabet[(next() % alphabet.len() as u64) as usize])
                    .collect()
            };
            let record = serde_json::json!({"id": text(), "output": text(), "other": text(), "meta": {"k": text()}});
            let mut line = serde_json::to_string(&record).unwrap();
            if next().is_multiple_of(2) {
                // Escapes serde_json never writes, as other writers do.
                line = line.replace('é', "\\u00e9").replace('😀', "\\ud83d\\ude00");
            }
            for cut in (0..=line.len()).filter(|&cut| line.is_char_boundary(cut)) {
                let part = &line[..cut];
                if let Some(fields) = fast::read_fields(part, &names) {
                    read += 1;
                    assert_eq!(Ok(Some(fields)), by_value(part, &names), "{part}");
                }
                assert_eq!(
                    read_fields(part, &names).map_err(|e| e.to_string()),
                    by_value(part, &names),
                    "{part}"
                );
            }
        }
        assert!(
            read >= 300,
            "the fast reader read {read} of the whole records"
        );
    }
}
