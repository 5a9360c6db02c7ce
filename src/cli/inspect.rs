//! `tribunal list`, `explain` and `prompt`: what a pack holds and asks for.

use super::{note_not_loaded, plural, write_out, OnePack, PackOptions, EXIT_OK};
use clap::Args;
use std::path::PathBuf;
use tribunal::Pack;

#[derive(Debug, Args)]
#[command(
    override_usage = "tribunal explain [OPTIONS] [PACK] <NAME>",
    after_help = "Examples:\n  tribunal explain json_compare\n  tribunal explain fuzzy\n  tribunal explain my-pack triage_match"
)]
pub(super) struct ExplainArgs {
    /// `[PACK] NAME`: a component of the pack (the pack first, as every
    /// command takes it, or with --pack), or a built-in rule or strategy.
    #[arg(value_name = "PACK NAME", num_args = 1..=2, required = true)]
    words: Vec<String>,
    #[command(flatten)]
    pack: PackOptions,
}

impl ExplainArgs {
    /// The pack (if any) and the name: `PACK NAME`, or `NAME` alone (with
    /// --pack or none). `NAME PACK`, the older order, is still understood
    /// when only the second word is a pack.
    fn pack_and_name(&self) -> Result<(Option<PathBuf>, &str), String> {
        let is_pack = |word: &str| {
            let path = std::path::Path::new(word);
            path.join("pack.yaml").is_file()
                || (path.is_file() && path.file_name().is_some_and(|f| f == "pack.yaml"))
        };
        match self.words.as_slice() {
            [name] => Ok((None, name.as_str())),
            [first, second] if self.pack.path(None).is_some() => Err(format!(
                "explain takes one name with --pack, got `{first}` and `{second}`"
            )),
            [first, second] => {
                // The pack is the word that is one; when neither is, the one
                // that looks like a path (its load error then says why).
                let looks_like_path = |word: &str| word.contains(['/', '\\', '.']);
                let second_is_pack = !is_pack(first)
                    && (is_pack(second) || (looks_like_path(second) && !looks_like_path(first)));
                let (pack, name) = if second_is_pack {
                    (second, first)
                } else {
                    (first, second)
                };
                Ok((Some(PathBuf::from(pack)), name.as_str()))
            }
            _ => Err("explain takes `[PACK] NAME`".to_owned()),
        }
    }
}

#[derive(Debug, Args)]
#[command(
    after_help = "Examples:\n  tribunal prompt rules/structured-output\n  tribunal prompt rules/structured-output --schema > schema.json\n  tribunal prompt examples/packs/rag-citations --schema --strict   # for OpenAI's strict mode\n  tribunal prompt examples/packs/support-agent --tools openai       # the pack's tools, for the API"
)]
pub(super) struct PromptArgs {
    #[command(flatten)]
    pack: OnePack,
    /// Print a JSON Schema (draft 2020-12) of the contract instead.
    #[arg(long)]
    schema: bool,
    /// With --schema: the subset OpenAI's Structured Outputs take with
    /// `strict: true` (every object closed, every property required, optional
    /// ones nullable; string lengths and `unique_items` become description text).
    #[arg(long, requires = "schema")]
    strict: bool,
    /// Print the tools the pack's `tool_calls` step lets a model call, as the
    /// tool definitions of an API (`openai`: Chat Completions `tools`;
    /// `anthropic`: Messages `tools`), parameters from the argument rules.
    #[arg(long, value_name = "API", conflicts_with = "schema")]
    tools: Option<ToolsApi>,
}

/// Whose tool definitions `prompt --tools` writes.
#[derive(Debug, Clone, Copy, clap::ValueEnum)]
pub(super) enum ToolsApi {
    Openai,
    Anthropic,
}

pub(super) fn list(pack: &Pack) -> u8 {
    out!("{}  (revision {})", pack.label(), pack.revision());
    if let Some(description) = pack.description() {
        out!("{}", description.trim());
    }
    out!("\ncomponents:");
    if pack.components().is_empty() {
        out!("  (none: the pipeline uses built-ins directly)");
    }
    for c in pack.components() {
        out!(
            "  {:<24} {:<13} {:<28} {}",
            c.name,
            c.kind.as_str(),
            c.implementation.to_string(),
            c.description.as_deref().unwrap_or("").trim()
        );
    }
    let mut tiers: Vec<&str> = pack.ladder().iter().map(|t| t.as_str()).collect();
    if pack.has_fallback() {
        tiers.push("fallback");
    }
    out!("\nextraction: {}", tiers.join(" → "));
    out!(
        "postprocessors: {}",
        pack.postprocessor_names().collect::<Vec<_>>().join(", ")
    );
    let metrics: Vec<String> = pack
        .metric_steps()
        .map(|(n, w)| format!("{n} (weight {w})"))
        .collect();
    out!("metrics: {}", metrics.join(", "));
    let s = pack.scoring();
    out!(
        "scoring: PASS ≤ {} errors, NEEDS_IMPROVEMENT ≤ {}, min_score {}",
        s.pass_max_issues,
        s.needs_improvement_max_issues,
        s.min_score
            .map_or_else(|| "none".to_owned(), |m| m.to_string())
    );
    out!("tests: {}", plural(pack.test_files().len(), "file"));
    note_not_loaded(pack);
    EXIT_OK
}

pub(super) fn explain(args: &ExplainArgs) -> Result<u8, String> {
    let (pack_arg, name) = args.pack_and_name()?;
    if args.pack.path(pack_arg.as_ref()).is_some() {
        let pack = args.pack.inspect(pack_arg.as_ref())?;
        if let Some(c) = pack.component(name) {
            out!("# {} ({}, {})", c.name, c.kind, c.implementation);
            if let Some(description) = &c.description {
                out!("\n{}", description.trim());
            }
            if let (true, Some(serde_json::Value::Object(config))) = (c.is_script(), &c.config) {
                // The keys `with:` and `--set` may set, each with its default: a
                // script takes exactly these, of these types. (A built-in's and
                // a plugin's config are in their own docs, printed below.)
                out!("\nconfig (the keys the script takes, with their defaults):");
                for (key, default) in config {
                    out!("  {key}: {default}");
                }
            }
            if let Some(docs) = &c.docs {
                out!("\n{docs}");
            }
            if let Some(docs) = c.code_docs() {
                out!("\n---\n\n{docs}");
            }
            note_not_loaded(&pack);
            return Ok(EXIT_OK);
        }
    }
    if let Some(docs) = tribunal::builtin_docs(name) {
        out!("{}", docs.trim());
        return Ok(EXIT_OK);
    }
    let (names, strategy_names) = tribunal::builtin_names();
    let every = names.iter().chain(&strategy_names).copied();
    let hint = tribunal_base::suggest::nearest(name, every)
        .map_or_else(String::new, |s| format!("; did you mean `{s}`?"));
    Err(format!(
        "no component, built-in or strategy named `{name}`{hint} (built-ins: {}; strategies: {})",
        names.join(", "),
        strategy_names.join(", ")
    ))
}

/// `tools` as `api`'s tool definitions.
fn tool_definitions(tools: &[tribunal::ToolDefinition], api: ToolsApi) -> serde_json::Value {
    let each = tools.iter().map(|tool| {
        let mut definition = serde_json::Map::new();
        definition.insert("name".into(), tool.name.clone().into());
        if let Some(description) = &tool.description {
            definition.insert("description".into(), description.trim().into());
        }
        match api {
            ToolsApi::Openai => {
                definition.insert("parameters".into(), tool.parameters.clone());
                serde_json::json!({"type": "function", "function": definition})
            }
            ToolsApi::Anthropic => {
                definition.insert("input_schema".into(), tool.parameters.clone());
                serde_json::Value::Object(definition)
            }
        }
    });
    serde_json::Value::Array(each.collect())
}

pub(super) fn prompt(args: &PromptArgs) -> Result<u8, String> {
    let pack = args.pack.inspect()?;
    note_not_loaded(&pack);
    let no_contract = || format!("pack `{}` has no `contract:` section", pack.label());
    if let Some(api) = args.tools {
        let tools = pack.tools();
        if tools.is_empty() {
            return Err(format!(
                "pack `{}` names no tools: `prompt --tools` writes the `allowed` tools (or those `arguments` describes) of its `tool_calls` step",
                pack.label()
            ));
        }
        out_json!(&tool_definitions(&tools, api));
    } else if args.strict {
        let schema = pack.json_schema_strict().ok_or_else(no_contract)?;
        out_json!(&schema.map_err(|err| err.to_string())?);
    } else if args.schema {
        out_json!(&pack.json_schema().ok_or_else(no_contract)?);
    } else {
        out!("{}", pack.prompt().ok_or_else(no_contract)?);
    }
    Ok(EXIT_OK)
}
