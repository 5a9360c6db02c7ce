//! The keys that sign bundles: Ed25519, in two small text files.
//!
//! ```text
//! # Tribunal bundle signing key (Ed25519): keep it secret. Key id 3f9a0c4d2b1e8f70
//! tribunal-ed25519-secret-key 9Tq0bY…(the 32-byte seed, base64)
//! ```
//!
//! ```text
//! # Tribunal bundle verifying key (Ed25519). Key id 3f9a0c4d2b1e8f70
//! tribunal-ed25519-public-key q1Lw…(the 32-byte public key, base64)
//! ```
//!
//! Lines starting with `#` and blank lines are comments. A key's id is the
//! first 16 hex digits of the SHA-256 of its public key's 32 bytes.

use std::path::Path;

use base64::Engine as _;
use ed25519_dalek::{Signer, Verifier};
use sha2::{Digest, Sha256};

use super::BundleError;

const SECRET_TAG: &str = "tribunal-ed25519-secret-key";
const PUBLIC_TAG: &str = "tribunal-ed25519-public-key";

/// A key that signs bundles (`tribunal bundle keygen`).
pub struct SecretKey(ed25519_dalek::SigningKey);

impl std::fmt::Debug for SecretKey {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "SecretKey({})", self.public().id())
    }
}

/// A key that verifies bundles' signatures (`--trust FILE`).
#[derive(Clone, PartialEq, Eq)]
pub struct PublicKey(ed25519_dalek::VerifyingKey);

impl std::fmt::Debug for PublicKey {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "PublicKey({})", self.id())
    }
}

impl SecretKey {
    /// A new key, from the system's randomness.
    pub fn generate() -> Result<Self, BundleError> {
        let mut seed = [0u8; 32];
        getrandom::fill(&mut seed)
            .map_err(|err| BundleError::Key(format!("no randomness for a key: {err}")))?;
        Ok(Self(ed25519_dalek::SigningKey::from_bytes(&seed)))
    }

    /// Its verifying key.
    pub fn public(&self) -> PublicKey {
        PublicKey(self.0.verifying_key())
    }

    /// The key file's text.
    pub fn to_text(&self) -> String {
        format!(
            "# Tribunal bundle signing key (Ed25519): keep it secret. Key id {}\n{SECRET_TAG} {}\n",
            self.public().id(),
            base64::engine::general_purpose::STANDARD.encode(self.0.to_bytes())
        )
    }

    /// The key in a key file's text (`shown` names the file in errors).
    pub fn from_text(text: &str, shown: &str) -> Result<Self, BundleError> {
        let seed = key_bytes(text, SECRET_TAG, shown)?;
        Ok(Self(ed25519_dalek::SigningKey::from_bytes(&seed)))
    }

    /// The key in the file at `path`.
    pub fn read(path: &Path) -> Result<Self, BundleError> {
        Self::from_text(&read_key_file(path)?, &path.display().to_string())
    }

    pub(super) fn sign(&self, message: &[u8]) -> [u8; 64] {
        self.0.sign(message).to_bytes()
    }
}

impl PublicKey {
    /// Its id: the first 16 hex digits of the SHA-256 of its 32 bytes.
    pub fn id(&self) -> String {
        let digest = Sha256::digest(self.0.as_bytes());
        super::hex(&digest[..8])
    }

    /// The key file's text.
    pub fn to_text(&self) -> String {
        format!(
            "# Tribunal bundle verifying key (Ed25519). Key id {}\n{PUBLIC_TAG} {}\n",
            self.id(),
            base64::engine::general_purpose::STANDARD.encode(self.0.as_bytes())
        )
    }

    /// The key in a key file's text (`shown` names the file in errors).
    pub fn from_text(text: &str, shown: &str) -> Result<Self, BundleError> {
        let bytes = key_bytes(text, PUBLIC_TAG, shown)?;
        ed25519_dalek::VerifyingKey::from_bytes(&bytes)
            .map(Self)
            .map_err(|_| BundleError::Key(format!("{shown}: not an Ed25519 public key")))
    }

    /// The key in the file at `path`.
    pub fn read(path: &Path) -> Result<Self, BundleError> {
        Self::from_text(&read_key_file(path)?, &path.display().to_string())
    }

    pub(super) fn verifies(&self, message: &[u8], signature: &[u8]) -> bool {
        let Ok(signature) = ed25519_dalek::Signature::from_slice(signature) else {
            return false;
        };
        self.0.verify_strict(message, &signature).is_ok()
            && self.0.verify(message, &signature).is_ok()
    }
}

/// A key file's text (at most 4 KiB).
fn read_key_file(path: &Path) -> Result<String, BundleError> {
    crate::files::read_regular_text(path, 4096).map_err(|err| BundleError::Key(err.to_string()))
}

/// The 32 bytes of the key line tagged `tag`.
fn key_bytes(text: &str, tag: &str, shown: &str) -> Result<[u8; 32], BundleError> {
    let mut lines = text
        .lines()
        .enumerate()
        .filter(|(_, line)| !line.trim().is_empty() && !line.trim_start().starts_with('#'));
    let Some((number, line)) = lines.next() else {
        return Err(BundleError::Key(format!("{shown}: no key in the file")));
    };
    let at = || format!("{shown}:{}", number + 1);
    let Some(encoded) = line.trim().strip_prefix(tag).map(str::trim) else {
        let other = if tag == SECRET_TAG {
            PUBLIC_TAG
        } else {
            SECRET_TAG
        };
        let why = if line.trim().starts_with(other) {
            format!(
                "this is a {} key, where a {} key is wanted",
                kind(other),
                kind(tag)
            )
        } else {
            format!("expected `{tag} BASE64`")
        };
        return Err(BundleError::Key(format!("{}: {why}", at())));
    };
    let bytes = base64::engine::general_purpose::STANDARD
        .decode(encoded)
        .map_err(|err| BundleError::Key(format!("{}: the key is not base64: {err}", at())))?;
    let bytes: [u8; 32] = bytes.try_into().map_err(|bytes: Vec<u8>| {
        BundleError::Key(format!("{}: a key is 32 bytes, not {}", at(), bytes.len()))
    })?;
    if lines.next().is_some() {
        return Err(BundleError::Key(format!("{shown}: more than one key line")));
    }
    Ok(bytes)
}

fn kind(tag: &str) -> &'static str {
    if tag == SECRET_TAG {
        "secret (signing)"
    } else {
        "public (verifying)"
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keys_round_trip_through_their_files_and_say_what_is_wrong() {
        let key = SecretKey::generate().unwrap();
        let again = SecretKey::from_text(&key.to_text(), "k").unwrap();
        assert_eq!(key.public(), again.public());
        let public = PublicKey::from_text(&key.public().to_text(), "p").unwrap();
        assert_eq!(public, key.public());
        assert_eq!(public.id().len(), 16);
        let signature = key.sign(b"message");
        assert!(public.verifies(b"message", &signature));
        assert!(!public.verifies(b"messagE", &signature));
        assert!(!public.verifies(b"message", &signature[..63]));
        let other = SecretKey::generate().unwrap().public();
        assert!(!other.verifies(b"message", &signature));
        // Errors say where and what.
        let err = PublicKey::from_text(&key.to_text(), "trust.pub").unwrap_err();
        assert!(
            err.to_string()
                .contains("trust.pub:2: this is a secret (signing) key"),
            "{err}"
        );
        let err = PublicKey::from_text("# nothing\n", "p").unwrap_err();
        assert!(err.to_string().contains("no key"), "{err}");
        let err = PublicKey::from_text("tribunal-ed25519-public-key AAAA\n", "p").unwrap_err();
        assert!(err.to_string().contains("32 bytes, not 3"), "{err}");
        let err = SecretKey::from_text("tribunal-ed25519-secret-key !!\n", "k").unwrap_err();
        assert!(err.to_string().contains("not base64"), "{err}");
    }
}
