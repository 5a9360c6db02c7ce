//! [`Json`] made from Rust values and from `serde_json`'s, turned back into
//! `serde_json`'s, compared with them, and serialised: each conversion gives
//! what `serde_json` would (numbers as written, members in order).

use serde::{Deserialize, Serialize};

use super::{Json, Number, Object, Str};

impl From<bool> for Json {
    fn from(value: bool) -> Self {
        Json::Bool(value)
    }
}

impl From<i64> for Json {
    fn from(value: i64) -> Self {
        Json::Number(value.into())
    }
}

impl From<u64> for Json {
    fn from(value: u64) -> Self {
        Json::Number(value.into())
    }
}

/// The other integer types, through `i64` and `u64`.
macro_rules! from_integer {
    ($($small:ty => $wide:ty),*) => {$(
        impl From<$small> for Json {
            fn from(value: $small) -> Self {
                Json::Number(<$wide>::from(value).into())
            }
        }
    )*};
}

from_integer!(i8 => i64, i16 => i64, i32 => i64, u8 => u64, u16 => u64, u32 => u64);

impl From<usize> for Json {
    fn from(value: usize) -> Self {
        Json::Number((value as u64).into())
    }
}

impl From<isize> for Json {
    fn from(value: isize) -> Self {
        Json::Number((value as i64).into())
    }
}

/// A finite float as a number; NaN and the infinities become `null` (as
/// `serde_json` makes them).
impl From<f64> for Json {
    fn from(value: f64) -> Self {
        Number::from_f64(value).map_or(Json::Null, Json::Number)
    }
}

impl From<&str> for Json {
    fn from(value: &str) -> Self {
        Json::String(value.into())
    }
}

impl From<String> for Json {
    fn from(value: String) -> Self {
        Json::String(value.into())
    }
}

impl From<Str> for Json {
    fn from(value: Str) -> Self {
        Json::String(value)
    }
}

impl From<Number> for Json {
    fn from(value: Number) -> Self {
        Json::Number(value)
    }
}

impl From<Vec<Json>> for Json {
    fn from(value: Vec<Json>) -> Self {
        Json::Array(value)
    }
}

impl From<Object> for Json {
    fn from(value: Object) -> Self {
        Json::Object(value)
    }
}

impl<T: Into<Json>> From<Option<T>> for Json {
    fn from(value: Option<T>) -> Self {
        value.map_or(Json::Null, Into::into)
    }
}

impl From<&serde_json::Value> for Json {
    fn from(value: &serde_json::Value) -> Self {
        match value {
            serde_json::Value::Null => Json::Null,
            serde_json::Value::Bool(b) => Json::Bool(*b),
            serde_json::Value::Number(n) => Json::Number(n.into()),
            serde_json::Value::String(s) => Json::String(s.as_str().into()),
            serde_json::Value::Array(items) => Json::Array(items.iter().map(Json::from).collect()),
            serde_json::Value::Object(members) => Json::Object(
                members
                    .iter()
                    .map(|(name, value)| (name.as_str(), Json::from(value)))
                    .collect(),
            ),
        }
    }
}

impl From<serde_json::Value> for Json {
    fn from(value: serde_json::Value) -> Self {
        match value {
            serde_json::Value::String(s) => Json::String(s.into()),
            serde_json::Value::Array(items) => {
                Json::Array(items.into_iter().map(Json::from).collect())
            }
            serde_json::Value::Object(members) => Json::Object(
                members
                    .into_iter()
                    .map(|(name, value)| (name, Json::from(value)))
                    .collect(),
            ),
            other => Json::from(&other),
        }
    }
}

impl From<&Json> for serde_json::Value {
    fn from(value: &Json) -> Self {
        value.to_serde()
    }
}

impl From<Json> for serde_json::Value {
    fn from(value: Json) -> Self {
        value.to_serde()
    }
}

/// The same value as `serde_json`'s (numbers by their text, objects in any order).
impl PartialEq<serde_json::Value> for Json {
    fn eq(&self, other: &serde_json::Value) -> bool {
        match (self, other) {
            (Json::Null, serde_json::Value::Null) => true,
            (Json::Bool(a), serde_json::Value::Bool(b)) => a == b,
            (Json::Number(a), serde_json::Value::Number(b)) => a.as_str() == b.to_string(),
            (Json::String(a), serde_json::Value::String(b)) => a.as_str() == b,
            (Json::Array(a), serde_json::Value::Array(b)) => {
                a.len() == b.len() && a.iter().zip(b).all(|(a, b)| a == b)
            }
            (Json::Object(a), serde_json::Value::Object(b)) => {
                a.len() == b.len()
                    && b.iter()
                        .all(|(name, value)| a.get(name).is_some_and(|v| v == value))
            }
            _ => false,
        }
    }
}

impl PartialEq<Json> for serde_json::Value {
    fn eq(&self, other: &Json) -> bool {
        other == self
    }
}

impl PartialEq<str> for Json {
    fn eq(&self, other: &str) -> bool {
        self.as_str() == Some(other)
    }
}

impl PartialEq<&str> for Json {
    fn eq(&self, other: &&str) -> bool {
        self.as_str() == Some(*other)
    }
}

impl PartialEq<bool> for Json {
    fn eq(&self, other: &bool) -> bool {
        self.as_bool() == Some(*other)
    }
}

impl Serialize for Json {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        use serde::ser::{SerializeMap, SerializeSeq};
        match self {
            Json::Null => serializer.serialize_unit(),
            Json::Bool(b) => serializer.serialize_bool(*b),
            Json::Number(n) => n.to_serde().serialize(serializer),
            Json::String(s) => serializer.serialize_str(s),
            Json::Array(items) => {
                let mut seq = serializer.serialize_seq(Some(items.len()))?;
                for item in items {
                    seq.serialize_element(item)?;
                }
                seq.end()
            }
            Json::Object(members) => {
                let mut map = serializer.serialize_map(Some(members.len()))?;
                for (name, value) in members {
                    map.serialize_entry(name.as_str(), value)?;
                }
                map.end()
            }
        }
    }
}

impl Serialize for Str {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_str(self)
    }
}

impl<'de> Deserialize<'de> for Json {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        serde_json::Value::deserialize(deserializer).map(Json::from)
    }
}
