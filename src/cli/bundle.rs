//! `tribunal bundle`: packs as one signed archive (build, sign, verify,
//! keygen), for servers that pull them (`serve --bundle`) and any command
//! that reads a pack.

use std::io::Write as _;
use std::path::{Path, PathBuf};

use clap::{Args, Subcommand};
use tribunal::{Bundle, PublicKey, SecretKey};

use super::{LoadFlags, EXIT_NOT_PASSED, EXIT_OK};

#[derive(Debug, Args)]
pub(crate) struct BundleArgs {
    #[command(subcommand)]
    command: BundleCommand,
}

#[derive(Debug, Subcommand)]
enum BundleCommand {
    /// Write one bundle of packs (reproducible: the same packs give the same bytes).
    Build(BuildArgs),
    /// Sign a bundle with a key (in place, or into --output).
    Sign(SignArgs),
    /// Check a bundle's files against its manifest, and its signature against trusted keys.
    Verify(VerifyArgs),
    /// Make a signing key (NAME.key, kept secret) and its verifying key (NAME.pub).
    Keygen(KeygenArgs),
}

#[derive(Debug, Args)]
struct BuildArgs {
    /// Pack folders (each becomes a folder of the bundle, under its name).
    #[arg(required = true, value_name = "PACK")]
    packs: Vec<PathBuf>,
    /// The bundle to write (a .tar.gz).
    #[arg(long, short, value_name = "FILE")]
    output: PathBuf,
    #[command(flatten)]
    load: LoadFlags,
}

#[derive(Debug, Args)]
struct SignArgs {
    /// The bundle.
    #[arg(value_name = "FILE")]
    bundle: PathBuf,
    /// The signing key (`tribunal bundle keygen`).
    #[arg(long, value_name = "KEY")]
    key: PathBuf,
    /// Write the signed bundle here instead of over FILE.
    #[arg(long, short, value_name = "FILE")]
    output: Option<PathBuf>,
}

#[derive(Debug, Args)]
struct VerifyArgs {
    /// The bundle.
    #[arg(value_name = "FILE")]
    bundle: PathBuf,
    /// A trusted verifying key (repeatable): one of them must have signed it.
    #[arg(long = "pub", value_name = "PUB")]
    public: Vec<PathBuf>,
}

#[derive(Debug, Args)]
struct KeygenArgs {
    /// Writes NAME.key and NAME.pub (neither may exist).
    #[arg(long, short, value_name = "NAME")]
    output: PathBuf,
}

pub(crate) fn bundle(args: &BundleArgs) -> Result<u8, String> {
    match &args.command {
        BundleCommand::Build(args) => build(args),
        BundleCommand::Sign(args) => sign(args),
        BundleCommand::Verify(args) => verify(args),
        BundleCommand::Keygen(args) => keygen(args),
    }
}

fn build(args: &BuildArgs) -> Result<u8, String> {
    let runtime = args.load.runtime(Vec::new())?;
    let bytes = Bundle::build(&args.packs, &runtime, &args.load.options()?)
        .map_err(|err| err.to_string())?;
    let bundle = Bundle::read(&bytes, u64::MAX).map_err(|err| err.to_string())?;
    write_new(&args.output, &bytes, false, false)?;
    let manifest = bundle.manifest();
    println!(
        "{}: revision {}, {} pack(s) ({}), {} file(s){}",
        args.output.display(),
        bundle.revision(),
        manifest.packs.len(),
        manifest
            .packs
            .iter()
            .map(|p| format!("{}@{}", p.name, p.version))
            .collect::<Vec<_>>()
            .join(", "),
        manifest.files.len(),
        if bundle.has_plugins() {
            ", plugin libraries (they load only from a signed bundle)"
        } else {
            ""
        }
    );
    Ok(EXIT_OK)
}

fn sign(args: &SignArgs) -> Result<u8, String> {
    let key = SecretKey::read(&args.key).map_err(|err| err.to_string())?;
    let bundle = Bundle::read_file(&args.bundle).map_err(|err| err.to_string())?;
    let signed = bundle.sign(&key);
    let output = args.output.as_ref().unwrap_or(&args.bundle);
    write_new(output, &signed, args.output.is_none(), false)?;
    println!(
        "{}: revision {} signed by key {}",
        output.display(),
        bundle.revision(),
        key.public().id()
    );
    Ok(EXIT_OK)
}

fn verify(args: &VerifyArgs) -> Result<u8, String> {
    let trusted = read_public_keys(&args.public)?;
    let bundle = Bundle::read_file(&args.bundle).map_err(|err| err.to_string())?;
    let shown = args.bundle.display();
    if trusted.is_empty() {
        println!(
            "{shown}: revision {}: its files match its manifest ({}; give --pub to check a signature)",
            bundle.revision(),
            if bundle.is_signed() { "signed" } else { "not signed" }
        );
        return Ok(EXIT_OK);
    }
    match bundle.verify(&trusted) {
        Ok(signer) => {
            println!(
                "{shown}: revision {}: its files match its manifest, signed by trusted key {signer}",
                bundle.revision()
            );
            Ok(EXIT_OK)
        }
        Err(err) => {
            eprintln!("error: {shown}: {err}");
            Ok(EXIT_NOT_PASSED)
        }
    }
}

fn keygen(args: &KeygenArgs) -> Result<u8, String> {
    let key = SecretKey::generate().map_err(|err| err.to_string())?;
    let secret = with_extension(&args.output, "key");
    let public = with_extension(&args.output, "pub");
    for path in [&secret, &public] {
        if path.exists() {
            return Err(format!("{} exists: not written over", path.display()));
        }
    }
    write_new(&secret, key.to_text().as_bytes(), false, true)?;
    write_new(&public, key.public().to_text().as_bytes(), false, false)?;
    println!(
        "key {}: {} (secret: keep it so) and {} (give it to servers: --trust)",
        key.public().id(),
        secret.display(),
        public.display()
    );
    Ok(EXIT_OK)
}

/// `NAME.ext`, keeping any dots in NAME.
fn with_extension(name: &Path, extension: &str) -> PathBuf {
    let mut text = name.as_os_str().to_owned();
    text.push(".");
    text.push(extension);
    PathBuf::from(text)
}

/// The verifying keys in `paths`.
pub(crate) fn read_public_keys(paths: &[PathBuf]) -> Result<Vec<PublicKey>, String> {
    paths
        .iter()
        .map(|path| PublicKey::read(path).map_err(|err| err.to_string()))
        .collect()
}

/// Writes `bytes` to `path` whole or not at all: beside it, then renamed
/// over it (`replace`: it may exist; else it must not); `private`: a file
/// only its owner may read (a secret key).
fn write_new(path: &Path, bytes: &[u8], replace: bool, private: bool) -> Result<(), String> {
    if !replace && path.exists() {
        return Err(format!("{} exists: not written over", path.display()));
    }
    let folder = match path.parent() {
        Some(parent) if !parent.as_os_str().is_empty() => parent.to_path_buf(),
        _ => PathBuf::from("."),
    };
    let failed = |err: std::io::Error| format!("cannot write {}: {err}", path.display());
    let (temporary, mut file) =
        tribunal_base::files::create_temporary(&folder, "bundle").map_err(failed)?;
    let restricted = if private {
        use std::os::unix::fs::PermissionsExt as _;
        file.set_permissions(std::fs::Permissions::from_mode(0o600))
    } else {
        Ok(())
    };
    let written = restricted
        .and_then(|()| file.write_all(bytes))
        .and_then(|()| file.sync_all())
        .and_then(|()| std::fs::rename(&temporary, path));
    if let Err(err) = written {
        let _ = std::fs::remove_file(&temporary);
        return Err(failed(err));
    }
    Ok(())
}
