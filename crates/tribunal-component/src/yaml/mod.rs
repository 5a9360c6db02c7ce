//! Reading YAML sources: the ONLY module that touches `serde_yaml` (its parser,
//! libyaml, is also read by `scan`).
//!
//! `serde_yaml` is deprecated upstream; keeping every use of it here means a
//! maintained fork can be swapped in by editing this module alone. Everything
//! else sees typed manifests, `serde_json::Value`s and `LoadError`s with file,
//! line and column.

pub mod scan;

use std::fmt;
use std::path::{Path, PathBuf};

use serde::de::DeserializeOwned;
use serde_json::Value;

use crate::files::{FileError, PackFiles, MAX_PACK_FILE_BYTES};
use crate::json::{Json, Object};
use scan::{ScanError, MAX_YAML_NODES};

/// A load error: what went wrong, and where (1-based line and column).
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub struct LoadError {
    /// The file the error is in.
    pub file: PathBuf,
    /// Where in the file: 1-based `(line, column)`. `None` when the error is about
    /// the file as a whole (missing, unreadable, too large) or about a `--set`
    /// override rather than a place in the file.
    pub position: Option<(usize, usize)>,
    /// What is wrong.
    pub message: String,
    /// What to do about it, e.g. "did you mean `json_emission`?".
    pub help: Option<String>,
}

impl LoadError {
    pub fn new(file: &Path, position: (usize, usize), message: impl Into<String>) -> Self {
        Self {
            file: file.to_path_buf(),
            position: Some(position),
            message: message.into(),
            help: None,
        }
    }

    /// An error about `file` as a whole, not a place in it.
    pub fn whole_file(file: &Path, message: impl Into<String>) -> Self {
        Self {
            position: None,
            ..Self::new(file, (1, 1), message)
        }
    }

    #[must_use]
    pub fn with_help(mut self, help: Option<String>) -> Self {
        self.help = help;
        self
    }

    #[must_use]
    pub fn suggest(self, suggestion: Option<String>) -> Self {
        self.with_help(suggestion.map(|s| crate::suggest::did_you_mean(&s)))
    }
}

impl fmt::Display for LoadError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.position {
            Some((line, column)) => write!(f, "{}:{line}:{column}: ", self.file.display())?,
            None => write!(f, "{}: ", self.file.display())?,
        }
        f.write_str(&self.message)?;
        if let Some(help) = &self.help {
            write!(f, "\n  help: {help}")?;
        }
        Ok(())
    }
}

/// Every error found while loading a pack (loading never half-succeeds).
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub struct LoadErrors(pub Vec<LoadError>);

impl fmt::Display for LoadErrors {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for (i, error) in self.0.iter().enumerate() {
            if i > 0 {
                writeln!(f)?;
            }
            write!(f, "error: {error}")?;
        }
        Ok(())
    }
}

impl LoadError {
    /// The error as every front end gives it as data (Python's
    /// `PackError.errors`, Node's `PackError.errors`): `{"file", "line",
    /// "column", "message", "help"}`, `line` and `column` null for an error
    /// about the file as a whole, `help` null without one.
    pub fn to_json(&self) -> Json {
        let mut error = Object::with_capacity(5);
        error.push_new("file", self.file.display().to_string().into());
        error.push_new("line", self.position.map(|(line, _)| line).into());
        error.push_new("column", self.position.map(|(_, column)| column).into());
        error.push_new("message", self.message.as_str().into());
        error.push_new("help", self.help.as_deref().into());
        Json::Object(error)
    }
}

impl LoadErrors {
    /// `{"message": the text the command line prints, "errors": [each
    /// error's` [`LoadError::to_json`]`]}`.
    pub fn to_json(&self) -> Json {
        let mut errors = Object::with_capacity(2);
        errors.push_new("message", self.to_string().into());
        errors.push_new(
            "errors",
            Json::Array(self.0.iter().map(LoadError::to_json).collect()),
        );
        Json::Object(errors)
    }
}

impl From<LoadError> for LoadErrors {
    fn from(error: LoadError) -> Self {
        Self(vec![error])
    }
}

/// A file that could not be read, as a load error about the whole file (or at the
/// line where it stops being UTF-8).
pub fn file_error(path: &Path, err: &FileError) -> LoadError {
    match err {
        FileError::NotUtf8 { line, .. } => {
            LoadError::new(path, (*line, 1), "file is not valid UTF-8")
        }
        FileError::Io { source, .. } => {
            LoadError::whole_file(path, format!("cannot read file: {source}"))
        }
        other => LoadError::whole_file(path, other.to_string()),
    }
}

/// One YAML document as read from disk: a `.yaml` file, or the front matter of a
/// Markdown file (whose body is kept as documentation).
#[derive(Debug, Clone)]
pub struct Source {
    pub path: PathBuf,
    /// The YAML text.
    pub yaml: String,
    /// Lines before the YAML text in the file (1 for front matter after `---`).
    pub line_offset: usize,
    /// The Markdown body after the front matter, if any.
    pub body: Option<String>,
    /// Whether errors may quote the text (a short excerpt): only a pack's own files.
    pub quotable: bool,
}

impl Source {
    /// Reads `path` (a regular file of at most [`MAX_PACK_FILE_BYTES`]). Markdown
    /// files (`.md`) must start with `---` front matter.
    pub fn read(path: &Path) -> Result<Self, LoadError> {
        let text = crate::files::read_regular_text(path, MAX_PACK_FILE_BYTES)
            .map_err(|err| file_error(path, &err))?;
        Self::from_text(path, text)
    }

    /// Reads a file a pack names, confined to the folders the pack may read.
    pub fn read_in_pack(files: &PackFiles, path: &Path) -> Result<Self, LoadError> {
        let shown = path.display().to_string();
        let text = files
            .read_text(path, &shown)
            .map_err(|err| file_error(path, &err))?;
        let mut source = Self::from_text(path, text.text)?;
        source.quotable = text.inside_pack;
        Ok(source)
    }

    /// Builds a source from text already in memory (`path` is used in errors).
    pub fn from_text(path: &Path, text: String) -> Result<Self, LoadError> {
        let is_markdown = path
            .extension()
            .is_some_and(|e| e.eq_ignore_ascii_case("md") || e.eq_ignore_ascii_case("markdown"));
        if !is_markdown {
            return Ok(Self {
                path: path.to_path_buf(),
                yaml: text,
                line_offset: 0,
                body: None,
                quotable: true,
            });
        }
        let text = text.strip_prefix('\u{feff}').unwrap_or(&text);
        let mut lines = text.split_inclusive('\n');
        let first = lines.next().unwrap_or("");
        if first.trim_end() != "---" {
            return Err(LoadError::new(
                path,
                (1, 1),
                "a Markdown manifest must start with YAML front matter between `---` lines",
            ));
        }
        let mut yaml = String::new();
        let mut consumed = first.len();
        for line in lines {
            consumed += line.len();
            if line.trim_end() == "---" {
                return Ok(Self {
                    path: path.to_path_buf(),
                    yaml,
                    line_offset: 1,
                    body: Some(text[consumed..].trim().to_owned()),
                    quotable: true,
                });
            }
            yaml.push_str(line);
        }
        Err(LoadError::new(
            path,
            (1, 1),
            "the front matter is not closed by a `---` line",
        ))
    }

    /// Deserialises the YAML into `T`, strictly; errors carry line, column and a suggestion.
    ///
    /// A first pass bounds the document's expanded size and refuses a key written
    /// twice in one map (see [`scan`]).
    pub fn parse<T: DeserializeOwned>(&self) -> Result<T, LoadError> {
        scan::scan(&self.yaml).map_err(|err| self.scan_error(&err))?;
        serde_yaml::from_str(&self.yaml).map_err(|err| self.yaml_error(&err))
    }

    fn scan_error(&self, err: &ScanError) -> LoadError {
        match err {
            ScanError::TooManyNodes { line, column } => LoadError::new(
                &self.path,
                (line + self.line_offset, *column),
                format!(
                    "the YAML expands to more than {MAX_YAML_NODES} nodes (aliases count as the \
                     nodes they repeat)"
                ),
            ),
            ScanError::DuplicateKey {
                key,
                line,
                column,
                first_line,
            } => {
                let first_line = first_line + self.line_offset;
                let message = if self.quotable {
                    format!(
                        "duplicate key `{}` (first written at line {first_line})",
                        crate::files::excerpt(key)
                    )
                } else {
                    format!("duplicate key (first written at line {first_line})")
                };
                LoadError::new(&self.path, (line + self.line_offset, *column), message)
            }
            ScanError::Rounded {
                text,
                read_as,
                line,
                column,
            } => LoadError::new(
                &self.path,
                (line + self.line_offset, *column),
                format!(
                    "`{}` would be read as {read_as}: YAML numbers are 64-bit floats, which \
                     cannot hold this one exactly; write it with fewer digits, or quote it \
                     if you mean the text",
                    crate::files::excerpt(text)
                ),
            ),
            ScanError::NotFinite { text, line, column } => LoadError::new(
                &self.path,
                (line + self.line_offset, *column),
                format!(
                    "`{text}` is not a number JSON can hold; quote it (`'{text}'`) if you mean \
                     the text"
                ),
            ),
        }
    }

    fn yaml_error(&self, err: &serde_yaml::Error) -> LoadError {
        let (line, column) = err.location().map_or((1, 1), |l| (l.line(), l.column()));
        let mut message = err.to_string();
        if let Some(cut) = message.rfind(" at line ") {
            message.truncate(cut);
        }
        let suggestion = crate::suggest::parse_unknown_field(&message)
            .or_else(|| crate::suggest::parse_unknown_variant(&message))
            .and_then(|(wrong, expected)| {
                crate::suggest::nearest(&wrong, expected.iter().map(String::as_str))
            });
        let message = message.replacen("unknown variant", "unknown value", 1);
        // serde quotes the offending value: a whole file, when a file that is not a
        // manifest (a private key, say) is read as one.
        let message = crate::files::redact_quotes(&message, self.quotable);
        LoadError::new(&self.path, (line + self.line_offset, column), message).suggest(suggestion)
    }

    /// Where an error about `path` (a chain of keys, e.g. `["pipeline", "metrics"]`)
    /// or about the scalar `value` under it should point: the best position found
    /// by scanning the text, falling back to the file's first line.
    pub fn locate(&self, keys: &[&str], value: Option<&str>) -> (usize, usize) {
        let mut from = 0;
        let mut found = None;
        // Where the key found last ends: the next is looked for after it, on
        // its own line too, where a flow mapping holds the next key
        // (`max_calls: { refnd: 1 }`).
        let mut after = (0, 0);
        for key in keys {
            if let Some((line, column)) = find_token_from(&self.yaml, key, after, true) {
                found = Some((line, column));
                from = line;
                let start = self.yaml.lines().nth(line - 1).map_or(0, |text| {
                    text.char_indices().nth(column - 1).map_or(0, |(at, _)| at)
                });
                after = (line - 1, start + key.len());
            }
        }
        if let Some(value) = value {
            if let Some(at) = find_token(&self.yaml, value, from.saturating_sub(1), false) {
                found = Some(at);
            } else if let Some(at) = find_token(&self.yaml, value, 0, false) {
                found = Some(at);
            }
        }
        let (line, column) = found.unwrap_or((1, 1));
        (line + self.line_offset, column)
    }
}

/// Finds `token` as a whole YAML word (a key when `as_key`, then followed by `:`)
/// on or after 0-based line `from_line`; returns its 1-based line (relative to
/// the YAML text) and column.
fn find_token(text: &str, token: &str, from_line: usize, as_key: bool) -> Option<(usize, usize)> {
    find_token_from(text, token, (from_line, 0), as_key)
}

/// [`find_token`] from 0-based line and byte column `(line, column)`: on that
/// line only past the column, then on the lines after it.
fn find_token_from(
    text: &str,
    token: &str,
    (from_line, from_column): (usize, usize),
    as_key: bool,
) -> Option<(usize, usize)> {
    if token.is_empty() {
        return None;
    }
    let is_word = |c: char| c.is_alphanumeric() || matches!(c, '_' | '-' | '.' | '/' | '$');
    for (index, line) in text.lines().enumerate().skip(from_line) {
        let content = line.split(" #").next().unwrap_or(line);
        let mut start = if index == from_line {
            // (A byte column inside a character: from the next one.)
            let mut column = from_column.min(content.len());
            while !content.is_char_boundary(column) {
                column += 1;
            }
            column
        } else {
            0
        };
        while let Some(pos) = content[start..].find(token) {
            let begin = start + pos;
            let end = begin + token.len();
            let before = content[..begin].chars().next_back();
            let after = content[end..].chars().next();
            let bounded_before = before.is_none_or(|c| !is_word(c));
            let bounded_after = after.is_none_or(|c| !is_word(c) || (c == '.' && !as_key));
            let after_rest = content[end..].trim_start_matches(['"', '\'']).trim_start();
            let key_ok = !as_key || after_rest.starts_with(':');
            if bounded_before && bounded_after && key_ok {
                let column = content[..begin].chars().count() + 1;
                return Some((index + 1, column));
            }
            start = begin + token.len().max(1);
        }
    }
    None
}

/// Parses a YAML (or JSON) text into a JSON value: used for `--set` values, test
/// files and data files. `origin` names the text in errors.
pub fn yaml_to_value(text: &str, origin: &Path) -> Result<Value, LoadError> {
    let source = Source {
        path: origin.to_path_buf(),
        yaml: text.to_owned(),
        line_offset: 0,
        body: None,
        quotable: true,
    };
    source.parse::<Value>()
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde::Deserialize;

    #[derive(Debug, Deserialize)]
    #[serde(deny_unknown_fields)]
    #[allow(dead_code)]
    struct Demo {
        name: String,
        #[serde(default)]
        weight: f64,
    }

    #[test]
    fn unknown_key_is_located_and_suggested() {
        let src = Source::from_text(Path::new("x.yaml"), "name: a\nwieght: 2\n".into()).unwrap();
        let err = src.parse::<Demo>().unwrap_err();
        assert_eq!(err.position, Some((2, 1)), "{err}");
        assert!(err.message.contains("unknown field `wieght`"), "{err}");
        assert_eq!(err.help.as_deref(), Some("did you mean `weight`?"));
    }

    #[test]
    fn wrong_type_is_located() {
        let src =
            Source::from_text(Path::new("x.yaml"), "name: a\nweight: heavy\n".into()).unwrap();
        let err = src.parse::<Demo>().unwrap_err();
        assert_eq!(err.position.map(|p| p.0), Some(2), "{err}");
        assert!(err.message.contains("invalid type"), "{err}");
    }

    #[test]
    fn front_matter_is_split_and_lines_offset() {
        let text = "---\nname: a\nbogus: 1\n---\n# Title\nBody.\n";
        let src = Source::from_text(Path::new("c.md"), text.into()).unwrap();
        assert_eq!(src.body.as_deref(), Some("# Title\nBody."));
        let err = src.parse::<Demo>().unwrap_err();
        assert_eq!(err.position.map(|p| p.0), Some(3), "{err}");
    }

    #[test]
    fn unclosed_front_matter_is_an_error() {
        let err = Source::from_text(Path::new("c.md"), "---\nname: a\n".into()).unwrap_err();
        assert!(err.message.contains("not closed"));
    }

    #[test]
    fn locate_finds_keys_and_values() {
        let text = "name: p\npipeline:\n  metrics:\n    - use: json_emision\n      weight: 1\n";
        let src = Source::from_text(Path::new("pack.yaml"), text.into()).unwrap();
        assert_eq!(
            src.locate(&["pipeline", "metrics"], Some("json_emision")),
            (4, 12)
        );
        assert_eq!(src.locate(&["pipeline"], None), (2, 1));
    }
}
