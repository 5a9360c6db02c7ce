//! The fence tier: the first Markdown code fence whose content is a JSON object or array.
//!
//! Fences follow the `CommonMark` rules: an opening fence is a run of three or more backticks or
//! tildes followed by an optional info string (which, for backticks, may not contain a
//! backtick); the block closes at a line holding only a run of the same character at
//! least as long, and a block never closed runs to the end of the text. Blocks do not
//! nest, so a fence of four backticks may hold lines of three.
//!
//! Two leniencies for model output: any indentation is allowed, and a backtick fence may
//! also open in the middle of a line ("Here it is:" then the fence) when nothing before
//! it on the line is a backtick and its info string is JSON-like. The content always
//! starts on the line after the opening fence.

/// A fenced code block.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Block<'a> {
    /// The info string after the opening fence, trimmed (`json`, `python`, or empty).
    pub info: &'a str,
    /// The lines between the fences, untrimmed.
    pub content: &'a str,
    /// Whether a closing fence was found (otherwise the block runs to the end of the text).
    pub closed: bool,
    /// The fence character: `` ` `` or `~`.
    pub fence: char,
}

/// The first fenced block with a JSON-like info string whose trimmed content parses as a
/// JSON object or array.
pub fn extract<D: super::Document>(text: &str) -> Option<D> {
    blocks(text)
        .filter(|block| is_json_info(block.info))
        .find_map(|block| {
            super::parse_container(block.content.trim()).or_else(|| {
                if block.fence != '`' {
                    return None;
                }
                // Models write a closing fence with text after it ("``` Hope that
                // helps!"), which CommonMark does not close on: cut there instead.
                let cut = block
                    .content
                    .find("\n```")
                    .or_else(|| block.content.starts_with("```").then_some(0))?;
                super::parse_container(block.content[..cut].trim())
            })
        })
}

/// Whether a fence's info string announces JSON (or says nothing): the first word,
/// ignoring ASCII case, is empty, `json`, `json5`, `jsonc`, `javascript` or `js`.
pub fn is_json_info(info: &str) -> bool {
    let word = info.split_whitespace().next().unwrap_or("");
    ["", "json", "json5", "jsonc", "javascript", "js"]
        .iter()
        .any(|name| word.eq_ignore_ascii_case(name))
}

/// Every fenced block of the text, in order, whatever its info string.
pub fn blocks(text: &str) -> Blocks<'_> {
    // A fence is a run of backticks or tildes: a text with neither has no block.
    let pos = if memchr::memchr2(b'`', b'~', text.as_bytes()).is_some() {
        0
    } else {
        text.len()
    };
    Blocks { text, pos }
}

/// Iterator over the fenced blocks of a text; see [`blocks`].
#[derive(Debug, Clone)]
pub struct Blocks<'a> {
    text: &'a str,
    pos: usize,
}

impl<'a> Iterator for Blocks<'a> {
    type Item = Block<'a>;

    fn next(&mut self) -> Option<Block<'a>> {
        let text = self.text;
        while self.pos < text.len() {
            let (line, next) = line_at(text, self.pos);
            self.pos = next;
            let Some(open) = opening(line) else {
                continue;
            };
            let content_start = next;
            let mut pos = next;
            while pos < text.len() {
                let (line, after) = line_at(text, pos);
                if is_closing(line, open.fence_char, open.len) {
                    self.pos = after;
                    return Some(Block {
                        info: open.info,
                        content: &text[content_start..pos],
                        closed: true,
                        fence: char::from(open.fence_char),
                    });
                }
                pos = after;
            }
            self.pos = text.len();
            return Some(Block {
                info: open.info,
                content: &text[content_start..],
                closed: false,
                fence: char::from(open.fence_char),
            });
        }
        None
    }
}

/// The line starting at `pos` (without its line break) and the start of the next line.
fn line_at(text: &str, pos: usize) -> (&str, usize) {
    match text[pos..].find('\n') {
        Some(offset) => (&text[pos..pos + offset], pos + offset + 1),
        None => (&text[pos..], text.len()),
    }
}

#[derive(Debug, Clone, Copy)]
struct Opening<'a> {
    fence_char: u8,
    len: usize,
    info: &'a str,
}

/// The opening fence on this line, if any.
fn opening(line: &str) -> Option<Opening<'_>> {
    let body = line.trim_start();
    let first = *body.as_bytes().first()?;
    if first == b'`' || first == b'~' {
        // A line starting with a fence character is a fence or nothing.
        let len = run_length(body, first);
        let info = body[len..].trim();
        if len < 3 || (first == b'`' && info.contains('`')) {
            return None;
        }
        return Some(Opening {
            fence_char: first,
            len,
            info,
        });
    }
    // Mid-line: the first backtick of the line must start a backtick fence.
    let at = body.find('`')?;
    let len = run_length(&body[at..], b'`');
    let info = body[at + len..].trim();
    if len < 3 || info.contains('`') || !is_json_info(info) {
        return None;
    }
    Some(Opening {
        fence_char: b'`',
        len,
        info,
    })
}

/// How many times `byte` repeats at the start of `text`.
fn run_length(text: &str, byte: u8) -> usize {
    text.bytes().take_while(|&b| b == byte).count()
}

/// Whether this line closes a fence of `len` times `fence_char`.
fn is_closing(line: &str, fence_char: u8, len: usize) -> bool {
    let body = line.trim();
    body.len() >= len && body.bytes().all(|b| b == fence_char)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::json::{json, Json};

    /// The value the tier finds.
    fn extract(text: &str) -> Option<Json> {
        super::extract(text)
    }

    #[test]
    fn seed_004() {
        let text = "Here's my response:\n```json\n{\"eval\": null, \"thought\": \"thinking\", \"mood\": \"🤔\", \"confidence\": 0.7, \"monologue\": \"hmm\"}\n```";
        let value = extract(text).unwrap();
        assert_eq!(
            value,
            json!({"eval": null, "thought": "thinking", "mood": "🤔", "confidence": 0.7, "monologue": "hmm"})
        );
        assert_eq!(
            value["mood"].as_str().unwrap().as_bytes(),
            b"\xF0\x9F\xA4\x94"
        );
    }

    #[test]
    fn seed_004_malformed() {
        assert_eq!(extract("I'm not sure what to do {partial json"), None);
    }

    #[test]
    fn info_strings() {
        for info in [
            "json",
            "JSON",
            "",
            "json5",
            "jsonc",
            "javascript",
            "js",
            "Json title=x",
        ] {
            let text = format!("```{info}\n{{\"a\": 1}}\n```");
            assert_eq!(extract(&text), Some(json!({"a": 1})), "{info:?}");
        }
        for info in ["python", "yaml", "text", "jsonl"] {
            let text = format!("```{info}\n{{\"a\": 1}}\n```");
            assert_eq!(extract(&text), None, "{info:?}");
        }
    }

    #[test]
    fn plain_fence() {
        let text = "Result:\n\n```\n[1, 2, 3]\n```\nThanks.";
        assert_eq!(extract(text), Some(json!([1, 2, 3])));
    }

    #[test]
    fn tilde_fence() {
        let text = "~~~json\n{\"a\": \"~~~\"}\n~~~";
        assert_eq!(extract(text), Some(json!({"a": "~~~"})));
        // A tilde fence is not closed by backticks.
        let text = "~~~\n{\"a\": 1}\n```\n~~~";
        assert_eq!(extract(text), None);
    }

    #[test]
    fn four_backticks_with_three_inside_a_string() {
        let text = "````json\n{\"snippet\": \"```js\\nlet x = 1;\\n```\"}\n````";
        assert_eq!(
            extract(text),
            Some(json!({"snippet": "```js\nlet x = 1;\n```"}))
        );
    }

    #[test]
    fn shorter_fence_does_not_close_a_longer_one() {
        let text = "````markdown\nintro\n```json\n{}\n```\n````\nafter";
        let all: Vec<Block> = blocks(text).collect();
        assert_eq!(
            all,
            [Block {
                info: "markdown",
                content: "intro\n```json\n{}\n```\n",
                closed: true,
                fence: '`',
            }]
        );
        // The inner fence belongs to a markdown block, so it is not a JSON block.
        assert_eq!(extract(text), None);
    }

    #[test]
    fn longer_closing_fence_closes() {
        let text = "```json\n{\"a\": 1}\n`````\nrest";
        let all: Vec<Block> = blocks(text).collect();
        assert_eq!(all.len(), 1);
        assert!(all[0].closed);
        assert_eq!(extract(text), Some(json!({"a": 1})));
    }

    #[test]
    fn closing_fence_needs_its_own_line() {
        let text = "```json\n{\"a\": \"```\"}\n```";
        assert_eq!(extract(text), Some(json!({"a": "```"})));
    }

    #[test]
    fn opening_fence_in_the_middle_of_a_line() {
        let text = "Here it is: ```json\n{\"a\": 1}\n```";
        assert_eq!(extract(text), Some(json!({"a": 1})));
        let text = "Here it is: ```\n{\"a\": 1}\n```";
        assert_eq!(extract(text), Some(json!({"a": 1})));
    }

    #[test]
    fn prose_mentioning_fences_does_not_open_one() {
        let text = "I'll wrap it in ``` fences:\n```json\n{\"a\": 1}\n```";
        assert_eq!(extract(text), Some(json!({"a": 1})));
        let text = "Use `code` or ```json``` here:\n```json\n{\"a\": 2}\n```";
        assert_eq!(extract(text), Some(json!({"a": 2})));
    }

    #[test]
    fn inline_triple_backticks_are_not_fences() {
        let text = "```json {\"a\": 1}```";
        assert_eq!(blocks(text).count(), 0);
        assert_eq!(extract(text), None);
    }

    #[test]
    fn first_parsing_block_wins() {
        let text = "```json\nnot json\n```\n```python\n{\"p\": 1}\n```\n```json\n{\"a\": 1}\n```\n```json\n{\"b\": 2}\n```";
        assert_eq!(extract(text), Some(json!({"a": 1})));
    }

    #[test]
    fn non_json_blocks_are_skipped_whole() {
        let text = "```python\nx = 1\n```json\n```\n```json\n[true]\n```";
        assert_eq!(extract(text), Some(json!([true])));
    }

    #[test]
    fn unclosed_fence_runs_to_the_end() {
        let text = "```json\n{\"a\": 1}\n";
        let all: Vec<Block> = blocks(text).collect();
        assert_eq!(
            all,
            [Block {
                info: "json",
                content: "{\"a\": 1}\n",
                closed: false,
                fence: '`',
            }]
        );
        assert_eq!(extract(text), Some(json!({"a": 1})));
        assert_eq!(extract("```json\n{\"a\": 1"), None);
        assert_eq!(extract("```json"), None);
    }

    #[test]
    fn indentation_and_crlf() {
        let text = "Answer:\r\n    ```json\r\n    {\"a\": 1}\r\n    ```\r\n";
        assert_eq!(extract(text), Some(json!({"a": 1})));
    }

    #[test]
    fn scalars_are_rejected() {
        assert_eq!(extract("```json\n42\n```"), None);
        assert_eq!(
            extract("```json\n\"x\"\n```\n```json\n{}\n```"),
            Some(json!({}))
        );
    }

    #[test]
    fn content_must_be_only_json() {
        assert_eq!(extract("```json\n// comment\n{\"a\": 1}\n```"), None);
        assert_eq!(extract("```json\n{\"a\": 1,}\n```"), None);
    }

    #[test]
    fn no_fence() {
        assert_eq!(extract("{\"a\": 1}"), None);
        assert_eq!(
            extract("The mushrooms charge admission to their bioluminescent shows."),
            None
        );
        assert_eq!(extract(""), None);
        assert_eq!(extract("``\n{}\n``"), None);
    }

    #[test]
    fn deep_nesting_fails_without_crashing() {
        let text = format!("```json\n{}\n```", "[".repeat(100_000));
        assert_eq!(extract(&text), None);
        let text = format!(
            "```json\n{}{}\n```",
            "{\"a\":".repeat(100_000),
            "}".repeat(100_000)
        );
        assert_eq!(extract(&text), None);
        assert_eq!(extract(&"{".repeat(100_000)), None);
    }

    #[test]
    fn many_fences_stay_linear() {
        let text = "```\n{\n```\n".repeat(200_000);
        assert_eq!(extract(&text), None);
        let text = "```\n".repeat(1_000_000);
        assert_eq!(extract(&text), None);
        let text = "`".repeat(10 * 1024 * 1024);
        assert_eq!(extract(&text), None);
    }

    #[test]
    fn ten_megabytes_of_braces() {
        assert_eq!(extract(&"{".repeat(10 * 1024 * 1024)), None);
        let text = format!("```json\n{}\n```", "{".repeat(10 * 1024 * 1024));
        assert_eq!(extract(&text), None);
    }

    #[test]
    fn a_closing_fence_with_trailing_text_still_closes() {
        let text = "Here:\n```json\n{\"a\": 1}\n``` Hope that helps!\nBye";
        assert_eq!(extract(text), Some(crate::json::json!({"a": 1})));
        let text = "```\n{\"a\": [1, 2]}\n```end";
        assert_eq!(extract(text), Some(crate::json::json!({"a": [1, 2]})));
    }
}
