//! The OUTPUT FORMAT block a prompt ends with: the schema line, the rules, an example.

use serde_json::Value;

use crate::text::python_json;

use super::{
    display_value, items_phrase, sentences_phrase, Contract, FieldRule, JsonType, Variant,
};

impl Contract {
    /// The OUTPUT FORMAT block to append to a prompt: the schema, the rules, an example.
    pub fn format_block(&self) -> &str {
        self.format_block.get_or_init(|| self.render_format_block())
    }

    fn render_format_block(&self) -> String {
        let mut lines = vec!["OUTPUT FORMAT".to_owned(), self.instructions.clone()];
        if !self.fields.is_empty() {
            lines.push(format!("Schema: {}", self.object_hint(&self.fields)));
        }
        self.rule_lines(&self.fields, "", &mut lines);
        self.variant_lines(&self.variants, &self.kind_field, "", &mut lines);
        if let Some(example) = &self.example {
            lines.push(format!("Example: {}", python_json(example)));
        }
        lines.join("\n")
    }

    /// `Each KIND has fields of its own:` and a line per variant with its
    /// shape and, indented, its members' rule lines. `owner` names the object
    /// (`citations[].` for variants under a field; empty at the top).
    fn variant_lines(
        &self,
        variants: &[Variant],
        kind_field: &str,
        owner: &str,
        lines: &mut Vec<String>,
    ) {
        if variants.is_empty() {
            return;
        }
        lines.push(format!("Each {owner}{kind_field} has fields of its own:"));
        for variant in variants {
            let kind = Value::String(variant.kind.clone()).to_string();
            let about = variant
                .description
                .as_deref()
                .map_or_else(String::new, |d| format!(" ({})", d.trim()));
            let shape = if variant.fields.is_empty() {
                "no other fields".to_owned()
            } else {
                self.object_hint(&variant.fields)
            };
            lines.push(format!("- {kind}{about}: {shape}"));
            self.rule_lines(&variant.fields, "  ", lines);
        }
    }

    /// Each field's rule line (its own `prompt:`, or one made from its
    /// `enum`/`sentences`/item counts), then its members', items' and
    /// variants', each line after `indent`.
    fn rule_lines(&self, fields: &[FieldRule], indent: &str, lines: &mut Vec<String>) {
        for field in fields {
            self.field_lines(field, indent, lines);
        }
    }

    fn field_lines(&self, field: &FieldRule, indent: &str, lines: &mut Vec<String>) {
        if let Some(line) = &field.spec.prompt {
            lines.push(format!("{indent}{line}"));
        } else if let Some(line) = self.generated_rule_line(field) {
            lines.push(format!("{indent}{line}"));
        }
        self.rule_lines(&field.children, indent, lines);
        if let Some(item) = &field.item {
            self.field_lines(item, indent, lines);
        }
        let owner = format!("{}.", field.label);
        self.variant_lines(&field.variants, &field.kind_field, &owner, lines);
    }

    /// `{"a": hint, "b": hint}` for an object's fields.
    fn object_hint(&self, fields: &[FieldRule]) -> String {
        let slots: Vec<String> = fields
            .iter()
            .map(|f| {
                let key = Value::String(f.name.clone()).to_string();
                format!("{key}: {}", self.hint(f))
            })
            .collect();
        format!("{{{}}}", slots.join(", "))
    }

    fn hint(&self, field: &FieldRule) -> String {
        if let Some(hint) = &field.spec.hint {
            return hint.clone();
        }
        let non_null: Vec<JsonType> = field
            .types
            .iter()
            .copied()
            .filter(|t| *t != JsonType::Null)
            .collect();
        let base = match non_null.first() {
            None | Some(JsonType::Object) if !field.children.is_empty() => {
                self.object_hint(&field.children)
            }
            // Items with a shape of their own show it; items of a plain type
            // keep the `[]` such fields always had.
            None | Some(JsonType::Array)
                if field.item.as_deref().is_some_and(FieldRule::has_shape) =>
            {
                let item = field.item.as_deref().map(|item| self.hint(item));
                format!("[{}]", item.unwrap_or_default())
            }
            None => JsonType::String.default_hint().to_owned(),
            Some(JsonType::Number | JsonType::Integer)
                if field.spec.min.is_some() && field.spec.max.is_some() =>
            {
                format!(
                    "{}-{}",
                    field.spec.min.unwrap_or_default(),
                    field.spec.max.unwrap_or_default()
                )
            }
            Some(JsonType::Object) if field.spec.values.is_some() => {
                let inner = field.spec.values.map_or("\"...\"", JsonType::default_hint);
                format!("{{\"<key>\": {inner}}}")
            }
            Some(t) => t.default_hint().to_owned(),
        };
        if field.types.contains(&JsonType::Null)
            && non_null.len() == field.types.len() - 1
            && !non_null.is_empty()
        {
            format!("{base} or null")
        } else {
            base
        }
    }

    fn generated_rule_line(&self, field: &FieldRule) -> Option<String> {
        let name = &field.label;
        if *name == self.kind_field {
            if let Some(may_emit) = &self.may_emit {
                return Some(format!("{name} must be one of: {}", may_emit.join(" | ")));
            }
        }
        if let Some(allowed) = &field.spec.one_of {
            let list: Vec<String> = allowed.iter().map(display_value).collect();
            return Some(format!("{name} must be one of: {}", list.join(" | ")));
        }
        if let Some((lo, hi)) = field.sentences {
            return Some(format!("{name} must be {}.", sentences_phrase(lo, hi)));
        }
        if let Some(pattern) = &field.spec.pattern {
            return Some(format!(
                "{name} must match the regular expression {pattern}"
            ));
        }
        let spec = &field.spec;
        let count = match (spec.min_items, spec.max_items) {
            (Some(lo), Some(hi)) if lo == hi => Some(format!("exactly {}", items_phrase(lo))),
            (Some(lo), Some(hi)) => Some(format!("{lo} to {hi} items")),
            (Some(lo), None) => Some(format!("at least {}", items_phrase(lo))),
            (None, Some(hi)) => Some(format!("at most {}", items_phrase(hi))),
            (None, None) => None,
        };
        let unique = spec.unique_items.then_some("no item twice");
        match (count, unique) {
            (Some(count), Some(unique)) => Some(format!("{name} must have {count}, {unique}.")),
            (Some(count), None) => Some(format!("{name} must have {count}.")),
            (None, Some(unique)) => Some(format!("{name} must have {unique}.")),
            (None, None) => None,
        }
    }
}
