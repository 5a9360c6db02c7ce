//! Field rules by number: each rule of a contract has a [`RuleId`], and each
//! object shape its members' ids, so that a reader that keeps its place
//! without holding a reference (a streaming session may own its pack) keeps a
//! number, not a path it copies at every value, and finds the rule again in
//! one step.

use super::{Contract, FieldRule, Variant};

/// A field rule of one contract (see [`Contract::rule`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RuleId(u32);

/// The rules of an object's members: its common fields, in order, and each
/// variant's own fields (`variants[v][i]` is the `i`th field of variant `v`).
#[derive(Debug, Default, Clone)]
pub struct Members {
    pub fields: Vec<RuleId>,
    pub variants: Vec<Vec<RuleId>>,
}

#[derive(Debug, Clone)]
struct Node {
    /// A copy of the rule (a contract's rules are few: each copy holds the
    /// rules under it again, so that the rule is one step away).
    rule: FieldRule,
    members: Members,
    item: Option<RuleId>,
}

/// Every rule of a contract, numbered in document order.
#[derive(Debug, Default, Clone)]
pub(super) struct RuleIndex {
    nodes: Vec<Node>,
    top: Members,
}

impl RuleIndex {
    pub(super) fn of(contract: &Contract) -> Self {
        let mut index = Self::default();
        index.top = index.members(&contract.fields, &contract.variants);
        index
    }

    fn members(&mut self, fields: &[FieldRule], variants: &[Variant]) -> Members {
        let mut members = Members::default();
        for field in fields {
            members.fields.push(self.add(field));
        }
        for variant in variants {
            let ids = variant.fields.iter().map(|field| self.add(field)).collect();
            members.variants.push(ids);
        }
        members
    }

    fn add(&mut self, rule: &FieldRule) -> RuleId {
        let id = RuleId(u32::try_from(self.nodes.len()).expect("fewer than 2^32 rules"));
        self.nodes.push(Node {
            rule: rule.clone(),
            members: Members::default(),
            item: None,
        });
        let members = self.members(&rule.children, &rule.variants);
        let item = rule.item.as_deref().map(|item| self.add(item));
        let node = &mut self.nodes[id.0 as usize];
        node.members = members;
        node.item = item;
        id
    }
}

impl Contract {
    fn index(&self) -> &RuleIndex {
        self.index.get_or_init(|| RuleIndex::of(self))
    }

    /// The rule `id` names.
    pub fn rule(&self, id: RuleId) -> &FieldRule {
        &self.index().nodes[id.0 as usize].rule
    }

    /// The rules of the members of an object that follows `rule` (`None`:
    /// the top-level object).
    pub fn member_ids(&self, rule: Option<RuleId>) -> &Members {
        let index = self.index();
        match rule {
            None => &index.top,
            Some(id) => &index.nodes[id.0 as usize].members,
        }
    }

    /// The rule of every item of an array that follows `rule`.
    pub fn item_id(&self, rule: RuleId) -> Option<RuleId> {
        self.index().nodes[rule.0 as usize].item
    }
}

#[cfg(test)]
mod tests {
    use crate::contract::{Contract, ContractSpec};

    #[test]
    fn every_rule_has_an_id_that_finds_it_again() {
        let spec: ContractSpec = serde_yaml::from_str(
            "fields:\n  a: { type: string }\n  b:\n    type: array\n    items:\n      type: object\n      fields:\n        c: { type: integer }\n        d: { type: array, items: string }\nvariants:\n  x: { fields: { e: { type: object, fields: { f: { type: boolean } } } } }\n  y: { fields: { g: { type: number } } }\n",
        )
        .unwrap();
        let contract = Contract::compile(&spec).unwrap();
        let top = contract.member_ids(None);
        let names: Vec<&str> = top
            .fields
            .iter()
            .map(|id| contract.rule(*id).name.as_str())
            .collect();
        assert_eq!(names, ["kind", "a", "b"]);
        let items = contract.item_id(top.fields[2]).unwrap();
        let inner = contract.member_ids(Some(items));
        assert_eq!(contract.rule(inner.fields[0]).name, "c");
        let d_items = contract.item_id(inner.fields[1]).unwrap();
        assert_eq!(contract.rule(d_items).label, "b[].d[]");
        let e = top.variants[0][0];
        assert_eq!(contract.rule(e).name, "e");
        let f = contract.member_ids(Some(e)).fields[0];
        assert_eq!(contract.rule(f).name, "f");
        assert_eq!(contract.rule(top.variants[1][0]).name, "g");
        assert_eq!(contract.item_id(top.fields[1]), None);
    }
}
