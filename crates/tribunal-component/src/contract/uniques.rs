//! `unique_items`: the items of an array so far, and which earlier one a new
//! item equals.

use std::borrow::Cow;
use std::collections::hash_map::{Entry, HashMap};

use crate::decimal;
use crate::json::Json;

/// The items of an array so far, to find each that equals an earlier one
/// (`unique_items`): compared one by one while the array is short, then
/// through an index of their canonical text (an object's members in name
/// order, as objects are equal whatever their order), so that a long array
/// costs time linear in its length, read whole or streamed item by item.
#[derive(Debug, Default)]
pub struct Uniques<'v> {
    /// The items, while there are at most [`Uniques::SHORT`].
    short: Vec<Cow<'v, Json>>,
    /// The first index of each item's canonical text, from then on.
    index: HashMap<Vec<u8>, usize>,
    count: usize,
}

impl<'v> Uniques<'v> {
    const SHORT: usize = 16;

    /// Whether no item was added.
    pub fn is_empty(&self) -> bool {
        self.count == 0
    }

    /// Adds the next item: the index of the first earlier item equal to it,
    /// if there is one.
    pub fn add(&mut self, item: Cow<'v, Json>) -> Option<usize> {
        let at = self.count;
        self.count += 1;
        if at < Self::SHORT {
            let first = self
                .short
                .iter()
                .position(|earlier| decimal::equal_values(earlier, &item));
            self.short.push(item);
            return first;
        }
        if at == Self::SHORT {
            for (i, earlier) in std::mem::take(&mut self.short).iter().enumerate() {
                self.index.entry(decimal::value_key(earlier)).or_insert(i);
            }
        }
        match self.index.entry(decimal::value_key(&item)) {
            Entry::Occupied(first) => Some(*first.get()),
            Entry::Vacant(slot) => {
                slot.insert(at);
                None
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use std::borrow::Cow;

    use super::Uniques;
    use crate::json::Json;

    /// The first earlier equal item of each item, compared one by one.
    fn by_hand(items: &[Json]) -> Vec<Option<usize>> {
        (0..items.len())
            .map(|later| {
                items[..later]
                    .iter()
                    .position(|e| crate::decimal::equal_values(e, &items[later]))
            })
            .collect()
    }

    fn by_uniques(items: &[Json]) -> Vec<Option<usize>> {
        let mut uniques = Uniques::default();
        items
            .iter()
            .map(|item| uniques.add(Cow::Borrowed(item)))
            .collect()
    }

    #[test]
    fn repeats_are_found_as_json_equality_finds_them_short_or_long() {
        // Values that are equal or not in the ways JSON equality decides:
        // member order and a number's writing (1, 1.0) do not count, item
        // order does.
        let pool: Vec<Json> = [
            r#"{"a": 1, "b": [1, 2]}"#,
            r#"{"b": [1, 2], "a": 1}"#,
            r#"{"b": [2, 1], "a": 1}"#,
            r#"{"a": 1.0, "b": [1, 2]}"#,
            r#""1""#,
            "1",
            "1.0",
            "10e-1",
            "1.0000000000000000000001",
            "null",
            "true",
            r#"{"a": {"y": "x", "z": null}}"#,
            r#"{"a": {"z": null, "y": "x"}}"#,
            r#"["a\"b", {}]"#,
            r#"["a\"b", []]"#,
        ]
        .iter()
        .map(|text| Json::from(serde_json::from_str::<serde_json::Value>(text).unwrap()))
        .collect();
        let mut state = 0x2545_f491_4f6c_dd1d_u64;
        for length in [0, 1, 5, 16, 17, 40, 300] {
            for _ in 0..20 {
                let items: Vec<Json> = (0..length)
                    .map(|i: i32| {
                        state ^= state << 13;
                        state ^= state >> 7;
                        state ^= state << 17;
                        // Mostly distinct numbers, with pool values mixed in.
                        if state.is_multiple_of(4) {
                            pool[usize::try_from(state % 15).unwrap()].clone()
                        } else {
                            Json::from(i64::from(i % 97))
                        }
                    })
                    .collect();
                assert_eq!(by_uniques(&items), by_hand(&items), "{items:?}");
            }
        }
    }
}
