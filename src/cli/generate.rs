//! `tribunal completions`, `tribunal man` and `tribunal schema`: shell completion
//! scripts and man pages generated from the clap definition that parses the command
//! line, and JSON Schemas generated from the types that parse pack files (so none
//! can drift from what they describe).

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
    #[arg(value_parser = clap::builder::PossibleValuesParser::new(tribunal::frontend::manifest::SCHEMA_NAMES))]
    name: String,
}

pub(super) fn schema(args: &SchemaArgs) -> Result<u8, String> {
    let schema = tribunal::frontend::manifest::schema(&args.name)
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
        let staging =
            tribunal::frontend::files::create_temporary_dir(dir, "man").map_err(cannot)?;
        let written = clap_mangen::generate_to(command, &staging)
            .and_then(|()| tribunal::frontend::files::move_into(&staging, dir));
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
