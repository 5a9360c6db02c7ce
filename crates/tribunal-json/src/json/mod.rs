//! The JSON value the engine reads records into, hands to every component and
//! writes into result records: [`Json`].
//!
//! It holds what `serde_json`'s `Value` (with `preserve_order` and
//! `arbitrary_precision`) holds, with the same meaning: members keep the order
//! they were written in (a name given twice keeps its first place and its last
//! value), numbers keep the text they were written with (the exponent as
//! `serde_json` keeps it: `1E5` is `1e+5`), and two objects are
//! equal when they have the same members in any order. What differs is the cost
//! of building one, which the engine pays for every record: a string, a member
//! name or a number of up to 24 bytes lives inside the value (no allocation),
//! and an object is one vector of members, searched in place while small and
//! through an index once it is large (so a hostile object of a million members
//! costs linear time, not quadratic).
//!
//! `serde_json::Value` converts both ways ([`Json::to_serde`], `From`), for the
//! few places that hand a value to a crate that takes one (JSON Schema).

use std::borrow::Borrow;
use std::collections::HashMap;
use std::fmt;
use std::hash::{Hash, Hasher};
use std::ops::{Deref, Index};
use std::str::FromStr;

use compact_str::{CompactString, ToCompactString};

mod convert;
mod number_text;

pub use number_text::kept_number_text;
pub(crate) use number_text::number_extent;

/// A JSON value: what a record's `id`, `expected` and `meta`, the extracted
/// JSON, and a result's `id` and `json` are.
///
/// It holds what `serde_json::Value` (with `preserve_order` and
/// `arbitrary_precision`) holds, with the same meaning: members keep the order
/// they were written in (a name given twice keeps its first place and its last
/// value), numbers keep their text, and two objects are equal when they have the
/// same members in any order. `serde_json::Value` converts both ways (`From`,
/// [`Json::to_serde`]).
///
/// ```
/// use tribunal_json::json::Json; // `tribunal::Json` in the engine
///
/// let value: Json = serde_json::json!({"b": [1.0, "x"], "a": null}).into();
/// assert_eq!(value["b"][1], "x");
/// assert_eq!(value.pointer("/b/0").and_then(Json::as_f64), Some(1.0));
/// assert_eq!(value.to_string(), r#"{"b":[1.0,"x"],"a":null}"#);
/// ```
#[derive(Clone, Default, PartialEq)]
pub enum Json {
    /// `null`.
    #[default]
    Null,
    /// `true` or `false`.
    Bool(bool),
    /// A number, kept as written.
    Number(Number),
    /// A string.
    String(Str),
    /// An array.
    Array(Vec<Json>),
    /// An object, its members in the order they were written.
    Object(Object),
}

/// A JSON string (or member name): up to 24 bytes are stored inline.
#[derive(Clone, Default, PartialEq, Eq, PartialOrd, Ord)]
pub struct Str(CompactString);

/// A JSON number, kept as the text it was written with (`1.0` stays `1.0`, an
/// integer past 2^53 stays exact; the exponent is written `e+5`, `e-5`); two
/// numbers are equal when their texts are.
#[derive(Clone, PartialEq, Eq)]
pub struct Number(CompactString);

/// A JSON object: its members in order, each name once.
#[derive(Clone, Default)]
pub struct Object {
    entries: Vec<(Str, Json)>,
    /// Where each name is, once the object is large enough to need it. Boxed:
    /// one pointer while absent keeps every value at 32 bytes.
    #[allow(clippy::box_collection)]
    index: Option<Box<HashMap<Str, usize>>>,
}

/// From this many members on, an object keeps an index of its names.
const INDEXED: usize = 16;

/// The longest string a [`Str`] holds in itself, without an allocation.
const INLINE: usize = std::mem::size_of::<CompactString>();

static NULL: Json = Json::Null;

impl Json {
    /// Whether this is `null`.
    pub fn is_null(&self) -> bool {
        matches!(self, Json::Null)
    }

    /// Whether this is `true` or `false`.
    pub fn is_boolean(&self) -> bool {
        matches!(self, Json::Bool(_))
    }

    /// Whether this is a number.
    pub fn is_number(&self) -> bool {
        matches!(self, Json::Number(_))
    }

    /// Whether this is a string.
    pub fn is_string(&self) -> bool {
        matches!(self, Json::String(_))
    }

    /// Whether this is an array.
    pub fn is_array(&self) -> bool {
        matches!(self, Json::Array(_))
    }

    /// Whether this is an object.
    pub fn is_object(&self) -> bool {
        matches!(self, Json::Object(_))
    }

    /// The boolean, if this is one.
    pub fn as_bool(&self) -> Option<bool> {
        match self {
            Json::Bool(b) => Some(*b),
            _ => None,
        }
    }

    /// The string, if this is one.
    pub fn as_str(&self) -> Option<&str> {
        match self {
            Json::String(s) => Some(s),
            _ => None,
        }
    }

    /// The number, if this is one.
    pub fn as_number(&self) -> Option<&Number> {
        match self {
            Json::Number(n) => Some(n),
            _ => None,
        }
    }

    /// The number as a finite `f64`, if this is a number (see [`Number::as_f64`]).
    pub fn as_f64(&self) -> Option<f64> {
        self.as_number().and_then(Number::as_f64)
    }

    /// The number as an `i64`, if this is an integer that fits.
    pub fn as_i64(&self) -> Option<i64> {
        self.as_number().and_then(Number::as_i64)
    }

    /// The number as a `u64`, if this is an integer that fits.
    pub fn as_u64(&self) -> Option<u64> {
        self.as_number().and_then(Number::as_u64)
    }

    /// The elements, if this is an array.
    pub fn as_array(&self) -> Option<&Vec<Json>> {
        match self {
            Json::Array(items) => Some(items),
            _ => None,
        }
    }

    /// The elements, if this is an array.
    pub fn as_array_mut(&mut self) -> Option<&mut Vec<Json>> {
        match self {
            Json::Array(items) => Some(items),
            _ => None,
        }
    }

    /// The members, if this is an object.
    pub fn as_object(&self) -> Option<&Object> {
        match self {
            Json::Object(members) => Some(members),
            _ => None,
        }
    }

    /// The members, if this is an object.
    pub fn as_object_mut(&mut self) -> Option<&mut Object> {
        match self {
            Json::Object(members) => Some(members),
            _ => None,
        }
    }

    /// The member `name`, if this is an object that has one.
    pub fn get(&self, name: &str) -> Option<&Json> {
        self.as_object().and_then(|members| members.get(name))
    }

    /// The value a JSON Pointer (RFC 6901: `/a/0/b`, `~0` for `~`, `~1` for `/`)
    /// points at; `""` is the value itself.
    pub fn pointer(&self, pointer: &str) -> Option<&Json> {
        if pointer.is_empty() {
            return Some(self);
        }
        let rest = pointer.strip_prefix('/')?;
        rest.split('/').try_fold(self, |value, token| {
            let token = unescape_pointer(token)?;
            match value {
                Json::Object(members) => members.get(&token),
                Json::Array(items) => array_index(&token).and_then(|i| items.get(i)),
                _ => None,
            }
        })
    }

    /// The value, leaving `null` in its place.
    #[must_use]
    pub fn take(&mut self) -> Json {
        std::mem::take(self)
    }

    /// The same value as a `serde_json::Value`, for crates that take one.
    pub fn to_serde(&self) -> serde_json::Value {
        match self {
            Json::Null => serde_json::Value::Null,
            Json::Bool(b) => serde_json::Value::Bool(*b),
            Json::Number(n) => serde_json::Value::Number(n.to_serde()),
            Json::String(s) => serde_json::Value::String(s.as_str().to_owned()),
            Json::Array(items) => {
                serde_json::Value::Array(items.iter().map(Json::to_serde).collect())
            }
            Json::Object(members) => serde_json::Value::Object(
                members
                    .iter()
                    .map(|(name, value)| (name.as_str().to_owned(), value.to_serde()))
                    .collect(),
            ),
        }
    }
}

/// One step of a path into a JSON value (a member of an object, an item of
/// an array), as a streaming session builds it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Seg {
    /// A member, by its key.
    Member(String),
    /// An item, by its index.
    Item(usize),
}

/// An array index as JSON Pointer writes it (and a canonical index in a field
/// path): `0`, or digits without a leading zero.
pub fn array_index(token: &str) -> Option<usize> {
    if token.starts_with('+') || (token.len() > 1 && token.starts_with('0')) {
        return None;
    }
    token.parse().ok()
}

impl Str {
    /// The string.
    pub fn as_str(&self) -> &str {
        self.0.as_str()
    }

    /// The string, as an owned `String`.
    pub fn into_string(self) -> String {
        self.0.into_string()
    }
}

impl Deref for Str {
    type Target = str;
    fn deref(&self) -> &str {
        self.0.as_str()
    }
}

impl AsRef<str> for Str {
    fn as_ref(&self) -> &str {
        self.0.as_str()
    }
}

impl Borrow<str> for Str {
    fn borrow(&self) -> &str {
        self.0.as_str()
    }
}

impl Hash for Str {
    fn hash<H: Hasher>(&self, state: &mut H) {
        self.0.as_str().hash(state);
    }
}

impl From<&str> for Str {
    fn from(text: &str) -> Self {
        Str(CompactString::new(text))
    }
}

impl From<String> for Str {
    fn from(text: String) -> Self {
        Str(CompactString::from(text))
    }
}

impl From<std::borrow::Cow<'_, str>> for Str {
    fn from(text: std::borrow::Cow<'_, str>) -> Self {
        match text {
            std::borrow::Cow::Borrowed(text) => Str::from(text),
            std::borrow::Cow::Owned(text) => Str::from(text),
        }
    }
}

impl PartialEq<str> for Str {
    fn eq(&self, other: &str) -> bool {
        self.as_str() == other
    }
}

impl PartialEq<&str> for Str {
    fn eq(&self, other: &&str) -> bool {
        self.as_str() == *other
    }
}

impl PartialEq<String> for Str {
    fn eq(&self, other: &String) -> bool {
        self.as_str() == other
    }
}

impl PartialEq<Str> for String {
    fn eq(&self, other: &Str) -> bool {
        self == other.as_str()
    }
}

impl PartialEq<Str> for str {
    fn eq(&self, other: &Str) -> bool {
        self == other.as_str()
    }
}

impl PartialEq<Str> for &str {
    fn eq(&self, other: &Str) -> bool {
        *self == other.as_str()
    }
}

impl fmt::Display for Str {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self)
    }
}

impl fmt::Debug for Str {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Debug::fmt(self.as_str(), f)
    }
}

impl Number {
    /// A number from its text, which the caller has read as a JSON number: kept
    /// as written, but for the exponent, which is written as `serde_json` keeps
    /// it (`e`, then its sign: `1E5` is `1e+5`).
    pub fn from_json_text(text: &str) -> Number {
        let [mantissa, mark, exponent] = kept_number_text(text);
        if mark.is_empty() {
            return Number(CompactString::new(text));
        }
        let mut kept = CompactString::with_capacity(text.len() + 1);
        kept.push_str(mantissa);
        kept.push_str(mark);
        kept.push_str(exponent);
        Number(kept)
    }

    /// The number `text` holds from byte `start` on, as the JSON reader reads
    /// it (kept as written, the exponent as [`Number::from_json_text`] keeps
    /// it), and where its text ends; `None` when no number starts there. Its
    /// text is read once: one without an exponent is kept as it is, not
    /// looked at again for one.
    #[inline]
    pub fn read_at(text: &str, start: usize) -> Option<(Number, usize)> {
        let (end, exponent) = number_extent(text.as_bytes(), start)?;
        let digits = &text[start..end];
        let number = if exponent {
            Number::from_json_text(digits)
        } else {
            Number::without_exponent(digits)
        };
        Some((number, end))
    }

    /// [`Number::from_json_text`] of a number the caller has read as one
    /// without an exponent ([`number_extent`]): its text as it is.
    pub(crate) fn without_exponent(text: &str) -> Number {
        debug_assert!(number_extent(text.as_bytes(), 0) == Some((text.len(), false)));
        Number(CompactString::new(text))
    }

    /// The shortest text that reads back as `value` (as `serde_json` writes a
    /// float: `1.0`, `0.1`, `1e300`); `None` for NaN and the infinities.
    pub fn from_f64(value: f64) -> Option<Number> {
        value
            .is_finite()
            .then(|| Number(CompactString::new(zmij::Buffer::new().format_finite(value))))
    }

    /// The text the number was written with.
    pub fn as_str(&self) -> &str {
        self.0.as_str()
    }

    /// The number as a finite `f64` (the nearest one; `None` when the number is
    /// beyond `f64`'s range).
    pub fn as_f64(&self) -> Option<f64> {
        self.0.parse::<f64>().ok().filter(|f| f.is_finite())
    }

    /// The number as an `i64`, if it is written as an integer that fits.
    pub fn as_i64(&self) -> Option<i64> {
        self.0.parse().ok()
    }

    /// The number as a `u64`, if it is written as an integer that fits.
    pub fn as_u64(&self) -> Option<u64> {
        self.0.parse().ok()
    }

    /// Whether it is an integer that fits an `i64`.
    pub fn is_i64(&self) -> bool {
        self.as_i64().is_some()
    }

    /// Whether it is an integer that fits a `u64`.
    pub fn is_u64(&self) -> bool {
        self.as_u64().is_some()
    }

    /// Whether it is written with a fraction or an exponent and is within `f64`'s
    /// range (what `serde_json` calls a float).
    pub fn is_f64(&self) -> bool {
        self.0.contains(['.', 'e', 'E']) && self.as_f64().is_some()
    }

    /// The same number as a `serde_json::Number`.
    pub fn to_serde(&self) -> serde_json::Number {
        serde_json::Number::from_str(self.as_str()).expect("a JSON number's text")
    }
}

impl From<i64> for Number {
    fn from(value: i64) -> Self {
        Number(value.to_compact_string())
    }
}

impl From<u64> for Number {
    fn from(value: u64) -> Self {
        Number(value.to_compact_string())
    }
}

impl From<&serde_json::Number> for Number {
    fn from(number: &serde_json::Number) -> Self {
        Number(CompactString::new(number.to_string()))
    }
}

impl FromStr for Number {
    type Err = NotANumber;

    /// A number written as JSON writes one (`-1`, `0.5`, `2e10`): the whole text.
    fn from_str(text: &str) -> Result<Self, NotANumber> {
        match Number::read_at(text, 0) {
            Some((number, end)) if end == text.len() => Ok(number),
            _ => Err(NotANumber),
        }
    }
}

/// The text is not a number as JSON writes one.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct NotANumber;

impl fmt::Display for NotANumber {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("not a JSON number")
    }
}

impl std::error::Error for NotANumber {}

impl fmt::Display for Number {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl fmt::Debug for Number {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl Object {
    /// An empty object.
    pub fn new() -> Object {
        Object::default()
    }

    /// An empty object with room for `capacity` members.
    pub fn with_capacity(capacity: usize) -> Object {
        Object {
            entries: Vec::with_capacity(capacity),
            index: None,
        }
    }

    /// How many members it has.
    pub fn len(&self) -> usize {
        self.entries.len()
    }

    /// Whether it has no member.
    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    fn position(&self, name: &str) -> Option<usize> {
        if let Some(index) = &self.index {
            return index.get(name).copied();
        }
        // Names of one object often share a length (`type1`..`type4`): their
        // last bytes tell most apart without comparing the rest.
        let last = name.as_bytes().last();
        self.entries.iter().position(|(key, _)| {
            let key = key.as_bytes();
            key.len() == name.len() && key.last() == last && key == name.as_bytes()
        })
    }

    /// The value of member `name`.
    pub fn get(&self, name: &str) -> Option<&Json> {
        self.position(name).map(|at| &self.entries[at].1)
    }

    /// The value of member `name`, looked for first at place `at`: where a
    /// caller walking two objects written in the same order (a ground truth and
    /// an output) expects it, found without a search.
    pub fn get_near(&self, name: &str, at: usize) -> Option<&Json> {
        match self.entries.get(at) {
            Some((key, value)) if key.as_str() == name => Some(value),
            _ => self.get(name),
        }
    }

    /// The value of member `name`.
    pub fn get_mut(&mut self, name: &str) -> Option<&mut Json> {
        self.position(name).map(|at| &mut self.entries[at].1)
    }

    /// Whether it has a member `name`.
    pub fn contains_key(&self, name: &str) -> bool {
        self.position(name).is_some()
    }

    /// Sets member `name`: a new name goes last, a name it has keeps its place
    /// and gets the new value (the old one is returned).
    pub fn insert(&mut self, name: impl Into<Str>, value: Json) -> Option<Json> {
        let name = name.into();
        if let Some(at) = self.position(&name) {
            return Some(std::mem::replace(&mut self.entries[at].1, value));
        }
        self.push_new(name, value);
        None
    }

    /// Adds member `name` last; the caller knows the object does not have it.
    pub fn push_new(&mut self, name: impl Into<Str>, value: Json) {
        let name = name.into();
        debug_assert!(!self.contains_key(&name), "push_new of a name it has");
        if let Some(index) = &mut self.index {
            index.insert(name.clone(), self.entries.len());
        }
        self.entries.push((name, value));
        if self.index.is_none() && self.entries.len() >= INDEXED {
            self.reindex();
        }
    }

    /// [`Object::push_new`] for a name as a reader has it: a short name is
    /// copied straight into its place. (Built aside and then moved, its bytes,
    /// copied a few at a time, were read back as words before the copy had
    /// landed: a stall on every member, 2-3% of a context-agent record.)
    pub fn push_new_read(&mut self, name: std::borrow::Cow<'_, str>, value: Json) {
        match name {
            std::borrow::Cow::Borrowed(text)
                if text.len() <= INLINE && self.entries.len() + 1 < INDEXED =>
            {
                debug_assert!(!self.contains_key(text), "push_new of a name it has");
                self.entries.push((Str::default(), value));
                let last = self.entries.len() - 1;
                self.entries[last].0 .0.push_str(text);
            }
            name => self.push_new(name, value),
        }
    }

    /// Removes member `name`, the members after it moving up one place.
    pub fn shift_remove(&mut self, name: &str) -> Option<Json> {
        let at = self.position(name)?;
        let (_, value) = self.entries.remove(at);
        self.reindex();
        Some(value)
    }

    /// Removes member `name`, the last member taking its place (what
    /// `serde_json`'s `Map::remove` does with `preserve_order`).
    pub fn swap_remove(&mut self, name: &str) -> Option<Json> {
        let at = self.position(name)?;
        let (_, value) = self.entries.swap_remove(at);
        self.reindex();
        Some(value)
    }

    /// Keeps the members `keep` says yes to, in order.
    pub fn retain(&mut self, mut keep: impl FnMut(&Str, &mut Json) -> bool) {
        self.entries.retain_mut(|(name, value)| keep(name, value));
        self.reindex();
    }

    /// Rebuilds the index from the members (none while the object is small).
    fn reindex(&mut self) {
        if self.entries.len() < INDEXED {
            self.index = None;
            return;
        }
        let index = self
            .entries
            .iter()
            .enumerate()
            .map(|(at, (name, _))| (name.clone(), at))
            .collect();
        self.index = Some(Box::new(index));
    }

    /// The members in order.
    pub fn iter(&self) -> impl DoubleEndedIterator<Item = (&Str, &Json)> + ExactSizeIterator {
        self.entries.iter().map(|(name, value)| (name, value))
    }

    /// The members in order, their values mutable.
    pub fn iter_mut(
        &mut self,
    ) -> impl DoubleEndedIterator<Item = (&Str, &mut Json)> + ExactSizeIterator {
        self.entries.iter_mut().map(|(name, value)| (&*name, value))
    }

    /// The member names in order.
    pub fn keys(&self) -> impl DoubleEndedIterator<Item = &Str> + ExactSizeIterator {
        self.entries.iter().map(|(name, _)| name)
    }

    /// The member values in order.
    pub fn values(&self) -> impl DoubleEndedIterator<Item = &Json> + ExactSizeIterator {
        self.entries.iter().map(|(_, value)| value)
    }

    /// The member values in order, mutable.
    pub fn values_mut(&mut self) -> impl DoubleEndedIterator<Item = &mut Json> + ExactSizeIterator {
        self.entries.iter_mut().map(|(_, value)| value)
    }
}

impl IntoIterator for Object {
    type Item = (Str, Json);
    type IntoIter = std::vec::IntoIter<(Str, Json)>;
    fn into_iter(self) -> Self::IntoIter {
        self.entries.into_iter()
    }
}

impl<'a> IntoIterator for &'a Object {
    type Item = (&'a Str, &'a Json);
    type IntoIter = std::iter::Map<
        std::slice::Iter<'a, (Str, Json)>,
        fn(&'a (Str, Json)) -> (&'a Str, &'a Json),
    >;
    fn into_iter(self) -> Self::IntoIter {
        self.entries.iter().map(|(name, value)| (name, value))
    }
}

impl<K: Into<Str>> FromIterator<(K, Json)> for Object {
    fn from_iter<I: IntoIterator<Item = (K, Json)>>(members: I) -> Self {
        let mut object = Object::new();
        object.extend(members);
        object
    }
}

impl<K: Into<Str>> Extend<(K, Json)> for Object {
    fn extend<I: IntoIterator<Item = (K, Json)>>(&mut self, members: I) {
        for (name, value) in members {
            self.insert(name, value);
        }
    }
}

/// Equal when they have the same members, in any order (as `serde_json`'s).
impl PartialEq for Object {
    fn eq(&self, other: &Object) -> bool {
        self.len() == other.len()
            && self
                .iter()
                .all(|(name, value)| other.get(name).is_some_and(|v| v == value))
    }
}

impl Index<&str> for Json {
    type Output = Json;
    /// The member `name`, `null` when there is none or this is not an object.
    fn index(&self, name: &str) -> &Json {
        self.get(name).unwrap_or(&NULL)
    }
}

impl Index<usize> for Json {
    type Output = Json;
    /// The element at `at`, `null` when there is none or this is not an array.
    fn index(&self, at: usize) -> &Json {
        self.as_array()
            .and_then(|items| items.get(at))
            .unwrap_or(&NULL)
    }
}

impl Index<&str> for Object {
    type Output = Json;
    /// The member `name`, `null` when there is none.
    fn index(&self, name: &str) -> &Json {
        self.get(name).unwrap_or(&NULL)
    }
}

/// `serde_json::json!`, as a [`Json`] (for tests: the engine's too).
#[doc(hidden)]
#[macro_export]
macro_rules! json {
    ($($value:tt)+) => {
        $crate::json::Json::from($crate::json::__serde_json::json!($($value)+))
    };
}
#[doc(hidden)]
pub use crate::json;
// What `json!` expands to, wherever it is used.
#[doc(hidden)]
pub use serde_json as __serde_json;

/// `serde_json`'s nesting limit, the one every reader and writer of nested
/// values in the engine is held to: the 128th array or object opened inside
/// one another is refused (the JSON reader, the repair tier, a script's return
/// value). The plugin wire allows more (`tribunal_plugin::wire::MAX_DEPTH`),
/// to wrap values this deep in its envelopes.
pub const NESTING_LIMIT: usize = 128;

/// Escapes one key for a JSON Pointer (RFC 6901): `~` → `~0`, `/` → `~1`.
pub fn escape_pointer(key: &str) -> String {
    key.replace('~', "~0").replace('/', "~1")
}

/// The key one JSON Pointer token names (RFC 6901): `~1` → `/`, `~0` → `~`;
/// `None` when a `~` is followed by anything else. Borrowed when there is
/// nothing to unescape.
pub fn unescape_pointer(token: &str) -> Option<std::borrow::Cow<'_, str>> {
    if !token.contains('~') {
        return Some(std::borrow::Cow::Borrowed(token));
    }
    let mut out = String::with_capacity(token.len());
    let mut chars = token.chars();
    while let Some(c) = chars.next() {
        if c == '~' {
            match chars.next() {
                Some('0') => out.push('~'),
                Some('1') => out.push('/'),
                _ => return None,
            }
        } else {
            out.push(c);
        }
    }
    Some(std::borrow::Cow::Owned(out))
}

/// A seeded stream of pseudo-random numbers (xorshift), for generated test
/// cases (here and in the engine's tests).
#[doc(hidden)]
pub fn numbers(seed: u64) -> impl FnMut() -> u64 {
    let mut state = seed;
    move || {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        state
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Number texts made of every piece a JSON number has and a few it must
    /// not (a leading zero, a bare `-`, `.`, `e` without digits, `+` first),
    /// with what may follow one: the reader's end, exponent flag and kept
    /// text agree with `serde_json`'s reading and with `from_json_text`.
    #[test]
    fn a_numbers_extent_says_where_it_ends_and_whether_it_has_an_exponent() {
        let signs = ["", "-", "+", "--"];
        let integers = [
            "0",
            "7",
            "10",
            "00",
            "0123",
            "123456789012345678901234567890",
            "",
        ];
        let fractions = ["", ".5", ".", ".000", ".25e", "."];
        let exponents = ["", "e5", "E5", "e+5", "E-05", "e", "e+", "E-", "e99999"];
        let after = ["", ",", "}", " ", "x", "e", "."];
        let mut checked = 0;
        for sign in signs {
            for integer in integers {
                for fraction in fractions {
                    for exponent in exponents {
                        let number = format!("{sign}{integer}{fraction}{exponent}");
                        let valid = serde_json::from_str::<serde_json::Number>(&number).is_ok();
                        for tail in after {
                            let text = format!("{number}{tail}");
                            let extent = number_extent(text.as_bytes(), 0);
                            // Read whole: the number its text is, and where it ends.
                            assert_eq!(
                                Number::read_at(&text, 0),
                                extent.map(|(end, _)| {
                                    (Number::from_json_text(&text[..end]), end)
                                }),
                                "{text:?}"
                            );
                            // After other text too.
                            let later = format!("[{text}");
                            assert_eq!(
                                Number::read_at(&later, 1),
                                extent.map(|(end, _)| (
                                    Number::from_json_text(&text[..end]),
                                    end + 1
                                )),
                                "{text:?}"
                            );
                            let Some((end, has_exponent)) = extent else {
                                // Refused: not a number, or one a tail of
                                // `e` or `.` leaves unfinished.
                                assert!(!valid || matches!(tail, "e" | "."), "{text:?}");
                                continue;
                            };
                            let read = &text[..end];
                            assert!(
                                serde_json::from_str::<serde_json::Number>(read).is_ok(),
                                "{text:?}"
                            );
                            assert_eq!(has_exponent, read.contains(['e', 'E']), "{text:?}");
                            if valid {
                                assert_eq!(read, number, "{text:?}");
                            }
                            if !has_exponent {
                                assert_eq!(
                                    Number::without_exponent(read),
                                    Number::from_json_text(read)
                                );
                            }
                            checked += 1;
                        }
                    }
                }
            }
        }
        assert!(checked > 1000, "{checked}");
    }

    #[test]
    fn one_pointer_escape_pair_round_trips_and_refuses_bad_escapes() {
        for key in ["plain", "a/b", "~", "~1", "a~/b~0/", ""] {
            let escaped = escape_pointer(key);
            assert!(!escaped.contains('/'), "{escaped}");
            assert_eq!(unescape_pointer(&escaped).as_deref(), Some(key));
        }
        assert!(matches!(
            unescape_pointer("plain"),
            Some(std::borrow::Cow::Borrowed("plain"))
        ));
        for bad in ["~", "~2", "a~", "~~0"] {
            assert_eq!(unescape_pointer(bad), None, "{bad}");
        }
        let value = json!({"a/b": {"~": [1, 2]}});
        assert_eq!(value.pointer("/a~1b/~0/1"), Some(&json!(2)));
        assert_eq!(value.pointer("/a~2b"), None);
    }

    #[test]
    fn a_name_given_again_keeps_its_place_and_takes_the_new_value() {
        let mut object = Object::new();
        object.insert("a", 1i64.into());
        object.insert("b", 2i64.into());
        assert_eq!(object.insert("a", 3i64.into()), Some(Json::from(1i64)));
        let names: Vec<&str> = object.keys().map(Str::as_str).collect();
        assert_eq!(names, ["a", "b"]);
        assert_eq!(object["a"], Json::from(3i64));
        assert_eq!(object.get_near("b", 1), Some(&Json::from(2i64)));
        assert_eq!(object.get_near("b", 0), Some(&Json::from(2i64)));
        assert_eq!(object.get_near("b", 9), Some(&Json::from(2i64)));
        assert_eq!(object.get_near("c", 1), None);
    }

    #[test]
    fn large_objects_are_indexed_and_stay_consistent() {
        let mut object = Object::new();
        for i in 0..100u64 {
            object.insert(format!("k{i}"), i.into());
        }
        assert!(object.index.is_some());
        assert_eq!(object.get("k57"), Some(&Json::from(57u64)));
        // A name it has keeps its place, through the index too.
        assert_eq!(object.insert("k57", 570u64.into()), Some(Json::from(57u64)));
        assert_eq!(object.keys().nth(57).map(Str::as_str), Some("k57"));
        assert_eq!(object.get("k57"), Some(&Json::from(570u64)));
        assert_eq!(object.len(), 100);
        assert_eq!(object.swap_remove("k3"), Some(Json::from(3u64)));
        assert_eq!(object.keys().nth(3).map(Str::as_str), Some("k99"));
        assert_eq!(object.get("k99"), Some(&Json::from(99u64)));
        assert_eq!(object.shift_remove("k0"), Some(Json::from(0u64)));
        assert_eq!(object.keys().next().map(Str::as_str), Some("k1"));
        assert_eq!(object.get("k1"), Some(&Json::from(1u64)));
        object.retain(|name, _| name.len() == 2);
        assert_eq!(object.len(), 8);
        assert!(object.index.is_none());
        assert_eq!(object.get("k9"), Some(&Json::from(9u64)));
        assert!(!object.contains_key("k10"));
        for i in 0..20u64 {
            object.insert(format!("n{i}"), i.into());
        }
        assert_eq!(object.get("n19"), Some(&Json::from(19u64)));
        assert_eq!(object.get("k5"), Some(&Json::from(5u64)));
    }

    #[test]
    fn objects_are_equal_in_any_order_and_numbers_by_their_text() {
        let a: Json = serde_json::json!({"a": 1, "b": [1.0, "x"]}).into();
        let b: Json = serde_json::json!({"b": [1.0, "x"], "a": 1}).into();
        assert_eq!(a, b);
        assert_ne!(a, Json::from(serde_json::json!({"a": 1, "b": [1, "x"]})));
        assert_eq!(a, serde_json::json!({"b": [1.0, "x"], "a": 1}));
        assert_eq!(a.to_serde(), serde_json::json!({"a": 1, "b": [1.0, "x"]}));
    }

    #[test]
    fn numbers_convert_as_serde_json_converts_them() {
        for text in [
            "0",
            "-0",
            "1.0",
            "1e400",
            "123456789012345678901234567890",
            "-2.5E-3",
        ] {
            let number: Number = text.parse().unwrap();
            let serde: serde_json::Number = text.parse().unwrap();
            assert_eq!(number.as_str(), serde.to_string());
            assert_eq!(number.as_f64(), serde.as_f64(), "{text}");
            assert_eq!(number.as_i64(), serde.as_i64(), "{text}");
            assert_eq!(number.as_u64(), serde.as_u64(), "{text}");
            assert_eq!(number.is_f64(), serde.is_f64(), "{text}");
        }
        for text in ["", "-", "01", "1.", ".5", "+1", "1e", "0x1", "1 "] {
            assert!(text.parse::<Number>().is_err(), "{text:?}");
        }
        for value in [0.1, 1.0, -0.0, 1e300, 5e-324, 123_456.789] {
            let ours = Number::from_f64(value).unwrap();
            let serde = serde_json::Number::from_f64(value).unwrap();
            assert_eq!(ours.as_str(), serde.to_string());
        }
        assert!(Number::from_f64(f64::NAN).is_none());
        assert_eq!(Json::from(f64::INFINITY), Json::Null);
    }

    #[test]
    fn pointers_follow_rfc_6901() {
        let value: Json = serde_json::json!({"a/b": [10, {"~x": true}], "": 1}).into();
        assert_eq!(value.pointer(""), Some(&value));
        assert_eq!(value.pointer("/a~1b/1/~0x"), Some(&Json::Bool(true)));
        assert_eq!(value.pointer("/"), Some(&Json::from(1i64)));
        assert_eq!(value.pointer("/a~1b/01"), None);
        assert_eq!(value.pointer("a"), None);
        assert_eq!(value.pointer("/a~1b/2"), None);
    }

    #[test]
    fn short_strings_live_inline() {
        assert_eq!(std::mem::size_of::<Json>(), 32);
        let Json::String(short) = Json::from("agent:status") else {
            unreachable!()
        };
        assert!(!short.0.is_heap_allocated());
    }
}
