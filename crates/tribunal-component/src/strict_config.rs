//! Reading a component's JSON config into its typed struct, strictly.
//!
//! `serde_json::from_value` accepts a list for a struct, filling its fields by
//! position: `--set json_compare.weights=[1,2]` would set `accuracy` and
//! `completeness` without naming them. Configs are maps written by people; here a
//! struct is read only from a map, at every depth. Everything else is read as
//! `serde_json` reads it, with the same error messages (so "unknown field `x`,
//! expected one of …" still drives the did-you-mean suggestions).

use serde::de::{self, DeserializeOwned, IntoDeserializer, Visitor};
use serde::forward_to_deserialize_any;
use serde_json::{Map, Value};

/// Deserialises `value` into `T`; a struct must be written as a map.
pub fn from_value<T: DeserializeOwned>(value: Value) -> Result<T, serde_json::Error> {
    T::deserialize(Strict(value))
}

/// A JSON value as a deserialiser that refuses a list where a struct is wanted.
struct Strict(Value);

impl<'de> de::Deserializer<'de> for Strict {
    type Error = serde_json::Error;

    fn deserialize_any<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Self::Error> {
        match self.0 {
            Value::Array(items) => visitor.visit_seq(Items(items.into_iter())),
            Value::Object(map) => visitor.visit_map(Entries::new(map)),
            other => other.deserialize_any(visitor),
        }
    }

    fn deserialize_option<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Self::Error> {
        match self.0 {
            Value::Null => visitor.visit_none(),
            other => visitor.visit_some(Strict(other)),
        }
    }

    fn deserialize_newtype_struct<V: Visitor<'de>>(
        self,
        _name: &'static str,
        visitor: V,
    ) -> Result<V::Value, Self::Error> {
        visitor.visit_newtype_struct(self)
    }

    fn deserialize_struct<V: Visitor<'de>>(
        self,
        _name: &'static str,
        _fields: &'static [&'static str],
        visitor: V,
    ) -> Result<V::Value, Self::Error> {
        match self.0 {
            Value::Object(map) => visitor.visit_map(Entries::new(map)),
            Value::Array(_) => Err(de::Error::custom(
                "invalid type: a list, expected a map of named keys",
            )),
            other => other.deserialize_any(visitor),
        }
    }

    fn deserialize_enum<V: Visitor<'de>>(
        self,
        name: &'static str,
        variants: &'static [&'static str],
        visitor: V,
    ) -> Result<V::Value, Self::Error> {
        self.0.deserialize_enum(name, variants, visitor)
    }

    forward_to_deserialize_any! {
        bool i8 i16 i32 i64 i128 u8 u16 u32 u64 u128 f32 f64 char str string
        bytes byte_buf unit unit_struct seq tuple tuple_struct map identifier ignored_any
    }
}

impl IntoDeserializer<'_, serde_json::Error> for Strict {
    type Deserializer = Self;

    fn into_deserializer(self) -> Self {
        self
    }
}

struct Items(std::vec::IntoIter<Value>);

impl<'de> de::SeqAccess<'de> for Items {
    type Error = serde_json::Error;

    fn next_element_seed<T: de::DeserializeSeed<'de>>(
        &mut self,
        seed: T,
    ) -> Result<Option<T::Value>, Self::Error> {
        self.0
            .next()
            .map(|v| seed.deserialize(Strict(v)))
            .transpose()
    }

    fn size_hint(&self) -> Option<usize> {
        Some(self.0.len())
    }
}

struct Entries {
    entries: serde_json::map::IntoIter,
    value: Option<Value>,
}

impl Entries {
    fn new(map: Map<String, Value>) -> Self {
        Self {
            entries: map.into_iter(),
            value: None,
        }
    }
}

impl<'de> de::MapAccess<'de> for Entries {
    type Error = serde_json::Error;

    fn next_key_seed<K: de::DeserializeSeed<'de>>(
        &mut self,
        seed: K,
    ) -> Result<Option<K::Value>, Self::Error> {
        let Some((key, value)) = self.entries.next() else {
            return Ok(None);
        };
        self.value = Some(value);
        seed.deserialize(Value::String(key)).map(Some)
    }

    fn next_value_seed<V: de::DeserializeSeed<'de>>(
        &mut self,
        seed: V,
    ) -> Result<V::Value, Self::Error> {
        let value = self
            .value
            .take()
            .ok_or_else(|| de::Error::custom("a value was asked for before its key"))?;
        seed.deserialize(Strict(value))
    }

    fn size_hint(&self) -> Option<usize> {
        Some(self.entries.len())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde::Deserialize;
    use serde_json::json;
    use std::collections::BTreeMap;

    #[derive(Debug, Deserialize, PartialEq)]
    #[serde(deny_unknown_fields)]
    struct Weights {
        a: f64,
        #[serde(default)]
        b: f64,
    }

    #[derive(Debug, Deserialize, PartialEq)]
    #[serde(deny_unknown_fields)]
    struct Config {
        #[serde(default)]
        weights: Option<Weights>,
        #[serde(default)]
        names: Vec<String>,
        #[serde(default)]
        by_name: BTreeMap<String, Weights>,
        #[serde(default)]
        mode: Option<Mode>,
    }

    #[derive(Debug, Deserialize, PartialEq)]
    #[serde(rename_all = "lowercase")]
    enum Mode {
        Fast,
    }

    #[test]
    fn maps_lists_and_enums_read_as_serde_json_reads_them() {
        let config: Config = from_value(json!({
            "weights": {"a": 1, "b": 2},
            "names": ["x", "y"],
            "by_name": {"k": {"a": 0.5}},
            "mode": "fast",
        }))
        .unwrap();
        assert_eq!(config.weights, Some(Weights { a: 1.0, b: 2.0 }));
        assert_eq!(config.names, ["x", "y"]);
        assert_eq!(config.by_name["k"], Weights { a: 0.5, b: 0.0 });
        assert_eq!(config.mode, Some(Mode::Fast));
    }

    #[test]
    fn a_list_is_not_a_struct_at_any_depth() {
        for config in [
            json!({"weights": [1, 2]}),
            json!({"by_name": {"k": [1, 2]}}),
        ] {
            let err = from_value::<Config>(config).unwrap_err().to_string();
            assert!(err.contains("expected a map of named keys"), "{err}");
        }
    }

    #[test]
    fn unknown_keys_keep_serde_s_message() {
        let err = from_value::<Config>(json!({"weights": {"a": 1, "c": 2}}))
            .unwrap_err()
            .to_string();
        assert!(
            err.contains("unknown field `c`, expected `a` or `b`"),
            "{err}"
        );
    }
}
