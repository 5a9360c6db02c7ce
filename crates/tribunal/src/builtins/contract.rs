//! The `contract` postprocessor: validates the extracted JSON against the pack's
//! contract (the component layer's `contract` module holds the contract itself).

use std::sync::Arc;

use serde_json::{Map, Value};

use crate::build::BuildCtx;
use crate::builtins::Builtin;
use crate::component::{
    BuildError, Compiled, Context, Early, EvalError, Kind, PostOutput, Postprocessor, RecordMemo,
};
use crate::contract::Contract;

/// The `contract` postprocessor: validates the extracted JSON against the pack's contract.
#[derive(Debug)]
struct ContractCheck {
    contract: Arc<Contract>,
}

impl Postprocessor for ContractCheck {
    /// It judges the final answer, which a proposal does not have yet.
    fn on_proposal(&self) -> bool {
        false
    }

    fn process(&self, ctx: &Context<'_>) -> Result<PostOutput, EvalError> {
        // A streaming session ran these checks on this document as it was
        // written, and they found nothing: that is what they would find now.
        if ctx.turn.is_none() && ctx.memo.is_some_and(RecordMemo::take_contract_judged) {
            return Ok(PostOutput {
                issues: Vec::new(),
                json: None,
            });
        }
        let (issues, json) = self.contract.validate(ctx.json, ctx.output);
        Ok(PostOutput { issues, json })
    }

    fn early(&self) -> Early {
        Early::Contract
    }
}

fn build(config: &Value, ctx: &BuildCtx<'_>) -> Result<Compiled, BuildError> {
    if !(config.is_null() || config.as_object().is_some_and(Map::is_empty)) {
        return Err(BuildError::new(
            "contract: takes no config; describe the contract under `contract:` in pack.yaml",
        ));
    }
    let contract = ctx.contract.ok_or_else(|| {
        BuildError::new("the `contract` postprocessor needs a `contract:` section in pack.yaml")
    })?;
    Ok(Compiled::Postprocessor(Arc::new(ContractCheck {
        contract: Arc::clone(contract),
    })))
}

pub const BUILTIN: Builtin = Builtin {
    name: "contract",
    kind: Kind::Postprocessor,
    summary: "validates the extracted JSON against the pack's contract",
    streaming: "as each value completes: types, ranges, allowed values, lengths, sentences, kinds, unknown members, repeated items; a container's own checks at its close",
    applies: super::Applies {
        conversation: "applied",
        single_output: "applied",
        proposal: "not applied: it judges the final answer",
    },
    docs: include_str!("../../../../docs/builtins/contract.md"),
    build,
};
