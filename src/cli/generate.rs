//! `tribunal completions`, `tribunal man` and `tribunal schema`: shell completion
//! scripts and man pages generated from the clap definition that parses the command
//! line, and JSON Schemas generated from the types that parse pack files (so none
//! can drift from what they describe).

use std::fmt::Write as _;
use std::path::PathBuf;

use clap::{Args, CommandFactory};

use super::{write_out, Cli, EXIT_OK};

#[derive(Debug, Args)]
#[command(after_help = "Examples:\n  \
    tribunal completions bash > ~/.local/share/bash-completion/completions/tribunal\n  \
    tribunal completions zsh > ~/.zfunc/_tribunal\n  \
    tribunal completions fish > ~/.config/fish/completions/tribunal.fish")]
pub(super) struct CompletionsArgs {
    /// The shell to complete for.
    shell: clap_complete::Shell,
}

#[derive(Debug, Args)]
#[command(after_help = "Examples:\n  \
    tribunal man | man -l -\n  \
    tribunal man --out-dir ~/.local/share/man/man1")]
pub(super) struct ManArgs {
    /// Write one page per command (tribunal.1, tribunal-check.1, …) into this
    /// folder instead of printing the main page.
    #[arg(long, value_name = "DIR")]
    out_dir: Option<PathBuf>,
}

#[derive(Debug, Args)]
#[command(after_help = "Examples:\n  \
    tribunal schema pack > pack.schema.json\n  \
    tribunal schema component\n\n\
    The same files are shipped as docs/schemas/pack.schema.json and\n\
    docs/schemas/component.schema.json. With the YAML language server (VS Code's\n\
    YAML extension and others), the first line of a file selects its schema:\n  \
    # yaml-language-server: $schema=../docs/schemas/pack.schema.json")]
pub(super) struct SchemaArgs {
    /// Which file: `pack` (pack.yaml) or `component` (a component manifest).
    #[arg(value_parser = clap::builder::PossibleValuesParser::new(tribunal::MANIFEST_SCHEMAS))]
    name: String,
}

pub(super) fn schema(args: &SchemaArgs) -> Result<u8, String> {
    let schema = tribunal::manifest_schema(&args.name)
        .ok_or_else(|| format!("no schema named `{}`", args.name))?;
    out_json!(&schema);
    Ok(EXIT_OK)
}

pub(super) fn completions(args: &CompletionsArgs) -> u8 {
    let mut script = Vec::new();
    clap_complete::generate(args.shell, &mut Cli::command(), "tribunal", &mut script);
    print_generated(&script);
    EXIT_OK
}

pub(super) fn man(args: &ManArgs) -> Result<u8, String> {
    let command = Cli::command();
    if let Some(dir) = &args.out_dir {
        std::fs::create_dir_all(dir)
            .map_err(|e| format!("cannot create {}: {e}", dir.display()))?;
        // Written in a folder of our own, then renamed into place: a link
        // planted at a page's name is replaced, never written through.
        let cannot =
            |e: std::io::Error| format!("cannot write man pages into {}: {e}", dir.display());
        let staging = tribunal_base::files::create_temporary_dir(dir, "man").map_err(cannot)?;
        let written = clap_mangen::generate_to(command, &staging)
            .and_then(|()| tribunal_base::files::move_into(&staging, dir));
        if let Err(err) = written {
            let _ = std::fs::remove_dir_all(&staging);
            return Err(cannot(err));
        }
    } else {
        let mut page = Vec::new();
        clap_mangen::Man::new(command)
            .render(&mut page)
            .map_err(|e| format!("cannot render the man page: {e}"))?;
        print_generated(&page);
    }
    Ok(EXIT_OK)
}

/// Prints generated text as it is (no escaping: it is ours, not a pack's), through
/// `write_out` so that a closed stdout (`| head`) ends the process quietly.
fn print_generated(text: &[u8]) {
    let text = String::from_utf8_lossy(text);
    write_out(text.strip_suffix('\n').unwrap_or(&text));
}

#[derive(Debug, Args)]
pub(super) struct NewArgs {
    #[command(subcommand)]
    what: NewWhat,
}

#[derive(Debug, clap::Subcommand)]
enum NewWhat {
    /// Print a pack whose `tool_calls` step holds the argument rules of the
    /// tools an OpenAI or Anthropic tools file declares.
    #[command(after_help = "Examples:\n  \
        tribunal new tools --from tools.json > my-agent/pack.yaml\n  \
        tribunal new tools --from anthropic-tools.json --name booking-agent > booking/pack.yaml\n\n\
        The file is a list of tools (or {\"tools\": [...]}) in OpenAI Chat, OpenAI\n\
        Responses or Anthropic form. Schema keywords no rule says (format, anyOf,\n\
        exclusiveMinimum, ...) are listed on stderr and as comments in the pack.")]
    Tools(NewToolsArgs),
}

#[derive(Debug, Args)]
struct NewToolsArgs {
    /// The tools file (JSON).
    #[arg(long, value_name = "FILE")]
    from: PathBuf,
    /// The pack's name.
    #[arg(long, default_value = "tools")]
    name: String,
}

pub(super) fn new(args: &NewArgs) -> Result<u8, String> {
    let NewWhat::Tools(args) = &args.what;
    let shown = args.from.display();
    let text = std::fs::read_to_string(&args.from).map_err(|err| format!("{shown}: {err}"))?;
    let file: serde_json::Value = serde_json::from_str(&text)
        .map_err(|err| format!("{shown}:{}:{}: not JSON: {err}", err.line(), err.column()))?;
    let tools = tribunal::tools_from_file(&file).map_err(|why| format!("{shown}: {why}"))?;
    if tools.is_empty() {
        return Err(format!("{shown}: the file declares no tools"));
    }
    for tool in &tools {
        for dropped in &tool.dropped {
            eprintln!("warning: {shown}: `{dropped}` has no rule: left out of the pack");
        }
    }
    write_out(tools_pack(&args.name, &shown.to_string(), &tools).trim_end());
    Ok(EXIT_OK)
}

/// The pack `new tools` writes: YAML, each rule in JSON's flow form (which
/// YAML reads as written).
fn tools_pack(name: &str, from: &str, tools: &[tribunal::ToolRules]) -> String {
    let json = |value: &serde_json::Value| serde_json::to_string(value).unwrap_or_default();
    let names: Vec<String> = tools
        .iter()
        .map(|tool| json(&tool.name.clone().into()))
        .collect();
    let closed = tools.iter().all(|tool| tool.closed);
    let mut out = format!(
        "# Written by `tribunal new tools --from {from}`.\n\
         # The argument rules of its tools, for the `tool_calls` step\n\
         # (docs/authoring.md, \"Grading function calls\").\n\
         name: {}\nversion: 0.1.0\npipeline:\n  postprocessors:\n    \
         - use: tool_calls\n      with:\n        allowed: [{}]\n",
        json(&name.into()),
        names.join(", ")
    );

    if closed {
        out.push_str("        additional_arguments: false\n");
    } else if tools.iter().any(|tool| tool.closed) {
        out.push_str(
            "        # Some tools take no argument they do not name, others do: \
             `additional_arguments` is one setting for all, left open.\n",
        );
    }
    out.push_str("        arguments:\n");
    for tool in tools {
        let lines = tool
            .description
            .iter()
            .flat_map(|description| description.lines())
            .filter(|line| !line.trim().is_empty());
        for line in lines {
            let _ = writeln!(out, "          # {}", line.trim());
        }
        for dropped in &tool.dropped {
            let _ = writeln!(out, "          # not a rule here: {dropped}");
        }
        let name = json(&tool.name.clone().into());
        if tool.fields.is_empty() {
            let _ = writeln!(out, "          {name}: {{}}");
            continue;
        }
        let _ = writeln!(out, "          {name}:");
        for (argument, rule) in &tool.fields {
            let _ = writeln!(
                out,
                "            {}: {}",
                json(&argument.clone().into()),
                json(rule)
            );
        }
    }
    out
}
