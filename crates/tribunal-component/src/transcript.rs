//! Agent transcripts: a record's `messages`, written in the OpenAI Chat, the
//! Anthropic Messages or the OpenAI Responses format, read into one shape, a
//! list of [`Turn`]s, so that the same conversation gives the same turns
//! whichever format it was written in (apart from the paths, which point into
//! the record as written).
//!
//! - OpenAI Chat: `{"role", "content"}` messages (`content` a string or a list
//!   of `{"type": "text", "text"}` parts), `tool_calls` with JSON-string
//!   `arguments`, and `{"role": "tool", "tool_call_id", "content"}` results.
//! - Anthropic Messages: `content` a string or a list of blocks: `text`,
//!   `tool_use` (`id`, `name`, `input`), `tool_result` (`tool_use_id`,
//!   `content`, `is_error`), `thinking` (skipped).
//! - OpenAI Responses: items `message` (or `{"role", "content"}` alone),
//!   `function_call` (`call_id`, `name`, JSON-string `arguments`),
//!   `function_call_output` (`call_id`, `output`), `reasoning` (skipped).
//!
//! One turn per message, except that a tool result is a turn of its own (an
//! Anthropic user message holding two results is two `tool` turns), and an
//! assistant's calls written as separate items (Responses) join the
//! assistant turn they follow. What cannot be read is an issue at its path,
//! never a lost record: a message without a role, arguments that are not
//! JSON, an unknown block, a result without its call, formats mixed in one
//! transcript.

use serde::Serialize;

use crate::codes;
use crate::json::Json;
use crate::report::Issue;

pub use crate::report::Role;

/// One turn of a conversation.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Turn {
    /// Who wrote it.
    pub role: Role,
    /// Its text (text parts joined by a newline); a tool turn's result.
    pub text: String,
    /// The tools an assistant turn calls, in order.
    pub tool_calls: Vec<ToolCall>,
    /// The call a tool turn answers.
    pub tool_call_id: Option<String>,
    /// Whether a tool turn reports an error (Anthropic's `is_error`).
    pub is_error: bool,
    /// JSON pointer of the message (or item) in the record.
    pub path: String,
}

/// A tool call of an assistant turn.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ToolCall {
    /// The call's id (`id`, `call_id`); empty when it has none.
    pub id: String,
    /// The tool's name.
    pub name: String,
    /// Its arguments, read (`null` when they are not JSON).
    pub arguments: Json,
    /// JSON pointer of the call in the record.
    pub path: String,
    /// JSON pointer of its arguments in the record.
    pub arguments_path: String,
}

/// The format a message is written in, as far as it shows.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Format {
    Chat,
    Anthropic,
    Responses,
}

impl Format {
    fn as_str(self) -> &'static str {
        match self {
            Self::Chat => "OpenAI Chat",
            Self::Anthropic => "Anthropic Messages",
            Self::Responses => "OpenAI Responses",
        }
    }
}

/// A record's transcript, read.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct Transcript {
    /// The turns, in order.
    pub turns: Vec<Turn>,
}

impl Transcript {
    /// Reads a record's `messages` (OpenAI Chat, Anthropic Messages or OpenAI
    /// Responses) into turns, as evaluation does; what cannot be read is left
    /// out (evaluation reports it as issues).
    pub fn from_messages(messages: &Json) -> Self {
        read(messages, "/messages").0
    }

    /// The text of the last assistant turn: what a transcript record is judged
    /// on when it has no `output`.
    pub fn last_assistant_text(&self) -> Option<&str> {
        self.turns
            .iter()
            .rev()
            .find(|turn| turn.role == Role::Assistant)
            .map(|turn| turn.text.as_str())
    }
}

/// Reads `messages` (the record's member at `at`, `/messages`): the turns, and
/// an issue for each thing that could not be read.
pub fn read(messages: &Json, at: &str) -> (Transcript, Vec<Issue>) {
    let mut reader = Reader::default();
    match messages.as_array() {
        Some(items) => {
            for (index, item) in items.iter().enumerate() {
                reader.message(item, &format!("{at}/{index}"));
            }
        }
        None => reader.issue(
            Issue::error(
                "transcript",
                format!(
                    "`messages` must be a list of messages, got {}",
                    crate::text::json_type_name(messages)
                ),
            )
            .at(at)
            .code(codes::TRANSCRIPT_INVALID),
        ),
    }
    reader.finish()
}

/// An output that is a list of tool calls, read as one assistant turn making
/// them (parallel calls judged without a transcript), with what could not be
/// read as issues; `None` when `json` is not a list holding a call. Each item
/// is a call as a model or an API writes it: `{"name", "arguments"}`
/// (`arguments` an object or a JSON text, an `id` besides), an OpenAI Chat
/// `tool_calls` item (`{"type": "function", "function": {"name",
/// "arguments"}}`), an Anthropic `tool_use` block or an OpenAI Responses
/// `function_call` item. An item that is none of them is an issue, never
/// left unseen. Paths point into the output's JSON (`/0`, `/0/arguments`);
/// the turn's path is `""`.
pub fn output_calls(json: &Json) -> Option<(Turn, Vec<Issue>)> {
    let items = json.as_array()?;
    let read: Vec<Option<OutputCall<'_>>> = items.iter().map(output_call).collect();
    if !read.iter().any(Option::is_some) {
        return None;
    }
    let mut reader = Reader::default();
    let mut calls = Vec::with_capacity(items.len());
    for (index, (item, call)) in items.iter().zip(read).enumerate() {
        let at = format!("/{index}");
        let Some(call) = call else {
            reader.issue(
                Issue::error(
                    "transcript",
                    format!(
                        "item {index} of the output's list of calls is not a call: {} (a call is `{{\"name\", \"arguments\"}}`, an OpenAI `tool_calls` item, an Anthropic `tool_use` block or a Responses `function_call`)",
                        crate::text::json_type_name(item)
                    ),
                )
                .at(&at)
                .code(codes::TRANSCRIPT_INVALID),
            );
            continue;
        };
        let arguments_path = format!("{at}{}", call.arguments_at);
        let arguments = reader.arguments(call.arguments, &arguments_path);
        calls.push(ToolCall {
            id: call.id,
            name: call.name.to_owned(),
            arguments,
            path: at,
            arguments_path,
        });
    }
    let turn = Turn {
        role: Role::Assistant,
        text: String::new(),
        tool_calls: calls,
        tool_call_id: None,
        is_error: false,
        path: String::new(),
    };
    Some((turn, reader.issues))
}

/// A call of an output's list, as written.
struct OutputCall<'j> {
    name: &'j str,
    arguments: Option<&'j Json>,
    /// Where the arguments are, under the item.
    arguments_at: &'static str,
    id: String,
}

/// The call `item` is, in any of the forms [`output_calls`] reads.
fn output_call(item: &Json) -> Option<OutputCall<'_>> {
    fn name(value: &Json) -> Option<&str> {
        value.get("name").and_then(Json::as_str)
    }
    let (name, arguments, arguments_at, id) = match item.get("type").and_then(Json::as_str) {
        Some("function") => {
            let function = item.get("function")?;
            let id = string_at(item, "id");
            (
                name(function)?,
                function.get("arguments"),
                "/function/arguments",
                id,
            )
        }
        Some("tool_use") => (
            name(item)?,
            item.get("input"),
            "/input",
            string_at(item, "id"),
        ),
        Some("function_call") => (
            name(item)?,
            item.get("arguments"),
            "/arguments",
            string_at(item, "call_id"),
        ),
        Some(_) => return None,
        None => {
            // A call is its name and arguments (and an id), nothing else.
            let object = item.as_object()?;
            if object
                .keys()
                .any(|key| !matches!(key.as_str(), "name" | "arguments" | "id"))
            {
                return None;
            }
            (
                name(item)?,
                item.get("arguments"),
                "/arguments",
                string_at(item, "id"),
            )
        }
    };
    Some(OutputCall {
        name,
        arguments,
        arguments_at,
        id,
    })
}

#[derive(Default)]
struct Reader {
    turns: Vec<Turn>,
    issues: Vec<Issue>,
    /// The first message whose format shows, and where it is.
    format: Option<(Format, String)>,
    /// Whether the last item was an assistant's (Responses): its calls join it.
    open_assistant: bool,
    /// Ids of the calls made so far.
    calls: std::collections::HashSet<String>,
}

impl Reader {
    fn issue(&mut self, issue: Issue) {
        self.issues.push(issue);
    }

    /// The transcript, and the issues, each placed at the turn it is about
    /// (the turn whose message, or one of whose calls, holds its path).
    fn finish(self) -> (Transcript, Vec<Issue>) {
        let Self {
            turns, mut issues, ..
        } = self;
        if !issues.is_empty() {
            let mut at: std::collections::HashMap<&str, usize> = std::collections::HashMap::new();
            for (index, turn) in turns.iter().enumerate() {
                at.entry(turn.path.as_str()).or_insert(index);
                for call in &turn.tool_calls {
                    at.entry(call.path.as_str()).or_insert(index);
                }
            }
            for issue in &mut issues {
                let mut path = issue.path.as_deref().unwrap_or_default();
                issue.turn = loop {
                    if let Some(&index) = at.get(path) {
                        break Some(index);
                    }
                    match path.rfind('/') {
                        Some(cut) if cut > 0 => path = &path[..cut],
                        _ => break None,
                    }
                };
            }
        }
        (Transcript { turns }, issues)
    }

    /// Notes the format a message shows; a second one is an issue.
    fn shows(&mut self, format: Format, path: &str) {
        match &self.format {
            None => self.format = Some((format, path.to_owned())),
            Some((first, _)) if *first == format => {}
            Some((first, first_path)) => {
                let message = format!(
                    "the transcript mixes formats: {path} is written as {}, {first_path} as {}",
                    format.as_str(),
                    first.as_str()
                );
                self.issue(
                    Issue::error("transcript", message)
                        .at(path)
                        .code(codes::TRANSCRIPT_MIXED_FORMATS),
                );
                // Said once.
                self.format = Some((format, path.to_owned()));
            }
        }
    }

    fn message(&mut self, item: &Json, path: &str) {
        let Some(object) = item.as_object() else {
            self.issue(
                Issue::error(
                    "transcript",
                    format!(
                        "a message must be an object, got {}",
                        crate::text::json_type_name(item)
                    ),
                )
                .at(path)
                .code(codes::TRANSCRIPT_INVALID),
            );
            self.open_assistant = false;
            return;
        };
        if self.typed_item(item, path) {
            return;
        }
        let Some(role_text) = object.get("role").and_then(Json::as_str) else {
            self.issue(
                Issue::error("transcript", "a message without a `role`".to_owned())
                    .at(path)
                    .code(codes::TRANSCRIPT_NO_ROLE),
            );
            self.open_assistant = false;
            return;
        };
        let Some(role) = Role::parse(role_text) else {
            self.issue(
                Issue::error(
                    "transcript",
                    format!(
                        "a message with the role `{role_text}` (system, developer, user, assistant or tool)"
                    ),
                )
                .at(format!("{path}/role"))
                .code(codes::TRANSCRIPT_NO_ROLE),
            );
            self.open_assistant = false;
            return;
        };
        if role == Role::Tool {
            // OpenAI Chat's tool result.
            self.shows(Format::Chat, path);
            let id = string_at(item, "tool_call_id");
            let text = content_text(item.get("content"), path, "content", self);
            self.result(id, text, false, path);
            return;
        }
        if object.get("tool_calls").is_some() {
            self.shows(Format::Chat, path);
        }
        let mut turn = Turn {
            role,
            text: String::new(),
            tool_calls: Vec::new(),
            tool_call_id: None,
            is_error: false,
            path: path.to_owned(),
        };
        let mut texts: Vec<String> = Vec::new();
        let mut results: Vec<Turn> = Vec::new();
        match object.get("content") {
            None | Some(Json::Null) => {}
            Some(Json::String(text)) => texts.push(text.to_string()),
            Some(Json::Array(blocks)) => {
                for (index, block) in blocks.iter().enumerate() {
                    let at = format!("{path}/content/{index}");
                    self.block(block, &at, &mut texts, &mut turn, &mut results);
                }
            }
            Some(other) => self.issue(
                Issue::error(
                    "transcript",
                    format!(
                        "a message's `content` must be a string or a list, got {}",
                        crate::text::json_type_name(other)
                    ),
                )
                .at(format!("{path}/content"))
                .code(codes::TRANSCRIPT_INVALID),
            ),
        }
        turn.text = texts.join("\n");
        if let Some(Json::Array(calls)) = object.get("tool_calls") {
            self.chat_calls(calls, path, &mut turn);
        }
        // An Anthropic user message holding results: each result is a turn,
        // then the message's own text, if any.
        let only_results = !results.is_empty() && texts.is_empty();
        for result in results {
            self.turns.push(result);
        }
        if only_results {
            self.open_assistant = false;
        } else {
            self.open_assistant = role == Role::Assistant;
            self.turns.push(turn);
        }
    }

    /// A Responses item other than a message (a call, a result, reasoning,
    /// an unknown type): read, and `true`; `false` for a message.
    fn typed_item(&mut self, item: &Json, path: &str) -> bool {
        match item.get("type").and_then(Json::as_str) {
            Some("function_call") => {
                self.shows(Format::Responses, path);
                self.responses_call(item, path);
            }
            Some("function_call_output") => {
                self.shows(Format::Responses, path);
                let id = string_at(item, "call_id");
                let text = content_text(item.get("output"), path, "output", self);
                self.result(id, text, false, path);
            }
            Some("reasoning") => self.shows(Format::Responses, path),
            Some("message") => {
                self.shows(Format::Responses, path);
                return false;
            }
            Some(other) if item.get("role").is_none() => {
                self.unknown(&format!("an item of type `{other}`"), path);
                self.open_assistant = false;
            }
            _ => return false,
        }
        true
    }

    /// The calls of an OpenAI Chat assistant message (`tool_calls`).
    fn chat_calls(&mut self, calls: &[Json], path: &str, turn: &mut Turn) {
        for (index, call) in calls.iter().enumerate() {
            let at = format!("{path}/tool_calls/{index}");
            let id = string_at(call, "id");
            let function = call.get("function");
            let name = function.map(|f| string_at(f, "name")).unwrap_or_default();
            let arguments_path = format!("{at}/function/arguments");
            let arguments =
                self.arguments(function.and_then(|f| f.get("arguments")), &arguments_path);
            self.calls.insert(id.clone());
            turn.tool_calls.push(ToolCall {
                id,
                name,
                arguments,
                path: at,
                arguments_path,
            });
        }
    }

    /// One block of a message's `content`.
    fn block(
        &mut self,
        block: &Json,
        path: &str,
        texts: &mut Vec<String>,
        turn: &mut Turn,
        results: &mut Vec<Turn>,
    ) {
        if let Json::String(text) = block {
            texts.push(text.to_string());
            return;
        }
        let kind = block.get("type").and_then(Json::as_str).unwrap_or_default();
        match kind {
            "text" | "input_text" | "output_text" => {
                if matches!(kind, "input_text" | "output_text") {
                    self.shows(Format::Responses, path);
                }
                texts.push(string_at(block, "text"));
            }
            "refusal" => texts.push(string_at(block, "refusal")),
            "tool_use" => {
                self.shows(Format::Anthropic, path);
                let id = string_at(block, "id");
                self.calls.insert(id.clone());
                turn.tool_calls.push(ToolCall {
                    id,
                    name: string_at(block, "name"),
                    arguments: block.get("input").cloned().unwrap_or(Json::Null),
                    path: path.to_owned(),
                    arguments_path: format!("{path}/input"),
                });
            }
            "tool_result" => {
                self.shows(Format::Anthropic, path);
                let id = string_at(block, "tool_use_id");
                let text = content_text(block.get("content"), path, "content", self);
                let is_error = block.get("is_error").and_then(Json::as_bool) == Some(true);
                results.push(self.result_turn(id, text, is_error, path));
            }
            "thinking" | "redacted_thinking" => self.shows(Format::Anthropic, path),
            // Media: nothing to judge as text.
            "image" | "image_url" | "input_image" | "input_audio" | "document" | "file"
            | "input_file" => {}
            "" => self.unknown("a content block without a `type`", path),
            other => self.unknown(&format!("a content block of type `{other}`"), path),
        }
    }

    fn unknown(&mut self, what: &str, path: &str) {
        self.issue(
            Issue::warning(
                "transcript",
                format!("{what} is not read (left out of the turns)"),
            )
            .at(path)
            .code(codes::TRANSCRIPT_UNKNOWN_BLOCK),
        );
    }

    /// A Responses `function_call` item: a call of the assistant turn it
    /// follows, or of a new one.
    fn responses_call(&mut self, item: &Json, path: &str) {
        let id = string_at(item, "call_id");
        let arguments_path = format!("{path}/arguments");
        let arguments = self.arguments(item.get("arguments"), &arguments_path);
        self.calls.insert(id.clone());
        let call = ToolCall {
            id,
            name: string_at(item, "name"),
            arguments,
            path: path.to_owned(),
            arguments_path,
        };
        match self.turns.last_mut() {
            Some(turn) if self.open_assistant => turn.tool_calls.push(call),
            _ => {
                self.turns.push(Turn {
                    role: Role::Assistant,
                    text: String::new(),
                    tool_calls: vec![call],
                    tool_call_id: None,
                    is_error: false,
                    path: path.to_owned(),
                });
                self.open_assistant = true;
            }
        }
    }

    /// A tool call's arguments: a JSON object written as text (OpenAI), or
    /// the value itself.
    fn arguments(&mut self, arguments: Option<&Json>, path: &str) -> Json {
        match arguments {
            None | Some(Json::Null) => Json::Null,
            Some(Json::String(text)) if text.trim().is_empty() => Json::Null,
            Some(Json::String(text)) => match serde_json::from_str::<serde_json::Value>(text) {
                Ok(value) => Json::from(value),
                Err(err) => {
                    self.issue(
                        Issue::error(
                            "transcript",
                            format!("the call's arguments are not JSON: {err}"),
                        )
                        .at(path)
                        .code(codes::TRANSCRIPT_ARGUMENTS_NOT_JSON),
                    );
                    Json::Null
                }
            },
            Some(other) => other.clone(),
        }
    }

    /// A tool result (OpenAI Chat's tool message, Responses'
    /// `function_call_output`): its own turn.
    fn result(&mut self, id: String, text: String, is_error: bool, path: &str) {
        let turn = self.result_turn(id, text, is_error, path);
        self.turns.push(turn);
        self.open_assistant = false;
    }

    fn result_turn(&mut self, id: String, text: String, is_error: bool, path: &str) -> Turn {
        if !self.calls.contains(&id) {
            let message = if id.is_empty() {
                "a tool result without the id of its call".to_owned()
            } else {
                format!("a tool result for `{id}`, a call not made before it")
            };
            self.issue(
                Issue::warning("transcript", message)
                    .at(path)
                    .code(codes::TRANSCRIPT_ORPHAN_RESULT),
            );
        }
        Turn {
            role: Role::Tool,
            text,
            tool_calls: Vec::new(),
            tool_call_id: Some(id),
            is_error,
            path: path.to_owned(),
        }
    }
}

/// The string member `name` of `value`, or empty.
fn string_at(value: &Json, name: &str) -> String {
    value
        .get(name)
        .and_then(Json::as_str)
        .unwrap_or_default()
        .to_owned()
}

/// A result's content as text: a string, or the texts of its blocks.
fn content_text(content: Option<&Json>, path: &str, member: &str, reader: &mut Reader) -> String {
    match content {
        None | Some(Json::Null) => String::new(),
        Some(Json::String(text)) => text.to_string(),
        Some(Json::Array(blocks)) => blocks
            .iter()
            .filter_map(|block| match block {
                Json::String(text) => Some(text.to_string()),
                _ => block.get("text").and_then(Json::as_str).map(str::to_owned),
            })
            .collect::<Vec<_>>()
            .join("\n"),
        Some(other) => {
            reader.issue(
                Issue::error(
                    "transcript",
                    format!(
                        "a tool result's `{member}` must be a string or a list, got {}",
                        crate::text::json_type_name(other)
                    ),
                )
                .at(format!("{path}/{member}"))
                .code(codes::TRANSCRIPT_INVALID),
            );
            String::new()
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn read_value(messages: &serde_json::Value) -> (Transcript, Vec<Issue>) {
        read(&Json::from(messages.clone()), "/messages")
    }

    /// The turns without their paths (which point into the record as written).
    fn pathless(mut transcript: Transcript) -> Vec<Turn> {
        for turn in &mut transcript.turns {
            turn.path.clear();
            for call in &mut turn.tool_calls {
                call.path.clear();
                call.arguments_path.clear();
            }
        }
        transcript.turns
    }

    fn booking_in_three_formats() -> [serde_json::Value; 3] {
        let chat = json!([
            {"role": "user", "content": "Book me a flight to Oslo on 2027-01-02."},
            {"role": "assistant", "content": "Searching.", "tool_calls": [
                {"id": "c1", "type": "function", "function": {"name": "search_flights", "arguments": "{\"to\": \"OSL\", \"date\": \"2027-01-02\"}"}}]},
            {"role": "tool", "tool_call_id": "c1", "content": "[{\"flight\": \"SK1\"}]"},
            {"role": "assistant", "content": null, "tool_calls": [
                {"id": "c2", "type": "function", "function": {"name": "book_flight", "arguments": "{\"flight\": \"SK1\"}"}}]},
            {"role": "tool", "tool_call_id": "c2", "content": [{"type": "text", "text": "booked"}]},
            {"role": "assistant", "content": [{"type": "text", "text": "Booked SK1."}]}
        ]);
        let anthropic = json!([
            {"role": "user", "content": [{"type": "text", "text": "Book me a flight to Oslo on 2027-01-02."}]},
            {"role": "assistant", "content": [
                {"type": "thinking", "thinking": "search first", "signature": "x"},
                {"type": "text", "text": "Searching."},
                {"type": "tool_use", "id": "c1", "name": "search_flights", "input": {"to": "OSL", "date": "2027-01-02"}}]},
            {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "c1", "content": "[{\"flight\": \"SK1\"}]"}]},
            {"role": "assistant", "content": [{"type": "tool_use", "id": "c2", "name": "book_flight", "input": {"flight": "SK1"}}]},
            {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "c2", "content": [{"type": "text", "text": "booked"}]}]},
            {"role": "assistant", "content": "Booked SK1."}
        ]);
        let responses = json!([
            {"role": "user", "content": "Book me a flight to Oslo on 2027-01-02."},
            {"type": "reasoning", "id": "r1", "summary": []},
            {"type": "message", "role": "assistant", "content": [{"type": "output_text", "text": "Searching."}]},
            {"type": "function_call", "call_id": "c1", "name": "search_flights", "arguments": "{\"to\":\"OSL\",\"date\":\"2027-01-02\"}"},
            {"type": "function_call_output", "call_id": "c1", "output": "[{\"flight\": \"SK1\"}]"},
            {"type": "function_call", "call_id": "c2", "name": "book_flight", "arguments": "{\"flight\":\"SK1\"}"},
            {"type": "function_call_output", "call_id": "c2", "output": "booked"},
            {"type": "message", "role": "assistant", "content": [{"type": "output_text", "text": "Booked SK1."}]}
        ]);
        [chat, anthropic, responses]
    }

    #[test]
    fn the_three_formats_give_the_same_turns() {
        let [chat, anthropic, responses] = booking_in_three_formats();
        let (first, issues) = read_value(&chat);
        assert!(issues.is_empty(), "{issues:?}");
        assert_eq!(first.last_assistant_text(), Some("Booked SK1."));
        let roles: Vec<&str> = first.turns.iter().map(|t| t.role.as_str()).collect();
        assert_eq!(
            roles,
            [
                "user",
                "assistant",
                "tool",
                "assistant",
                "tool",
                "assistant"
            ]
        );
        assert_eq!(
            first.turns[1].tool_calls[0].arguments.to_serde(),
            json!({"to": "OSL", "date": "2027-01-02"})
        );
        assert_eq!(
            first.turns[1].tool_calls[0].arguments_path,
            "/messages/1/tool_calls/0/function/arguments"
        );
        assert_eq!(first.turns[4].text, "booked");
        for other in [&anthropic, &responses] {
            let (transcript, issues) = read_value(other);
            assert!(issues.is_empty(), "{issues:?}");
            assert_eq!(pathless(transcript), pathless(first.clone()), "{other}");
        }
        // Paths point into the record as written.
        let (responses, _) = read_value(&responses);
        assert_eq!(responses.turns[3].tool_calls[0].path, "/messages/5");
        let (anthropic, _) = read_value(&anthropic);
        assert_eq!(anthropic.turns[2].path, "/messages/2/content/0");
        assert_eq!(
            anthropic.turns[1].tool_calls[0].arguments_path,
            "/messages/1/content/2/input"
        );
    }

    #[test]
    fn what_cannot_be_read_is_an_issue_at_its_path() {
        let (transcript, issues) = read_value(&json!([
            {"content": "no role"},
            "not an object",
            {"role": "wizard", "content": "x"},
            {"role": "assistant", "content": 5},
            {"role": "assistant", "content": [{"type": "hologram"}], "tool_calls": [
                {"id": "a", "function": {"name": "f", "arguments": "{broken"}}]},
            {"role": "tool", "tool_call_id": "zz", "content": "late"},
            {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "a", "content": {"x": 1}}]},
            {"type": "function_call_output", "call_id": "a", "output": "mixed"},
            {"type": "widget"}
        ]));
        let found: Vec<(&str, &str)> = issues
            .iter()
            .map(|i| (i.code.as_ref(), i.path.as_deref().unwrap_or("")))
            .collect();
        assert_eq!(
            found,
            [
                ("transcript.no-role", "/messages/0"),
                ("transcript.invalid", "/messages/1"),
                ("transcript.no-role", "/messages/2/role"),
                ("transcript.invalid", "/messages/3/content"),
                ("transcript.unknown-block", "/messages/4/content/0"),
                (
                    "transcript.arguments-not-json",
                    "/messages/4/tool_calls/0/function/arguments"
                ),
                ("transcript.orphan-result", "/messages/5"),
                ("transcript.mixed-formats", "/messages/6/content/0"),
                ("transcript.invalid", "/messages/6/content/0/content"),
                ("transcript.mixed-formats", "/messages/7"),
                ("transcript.unknown-block", "/messages/8"),
            ],
            "{issues:#?}"
        );
        // Nothing is lost that can be read.
        assert_eq!(transcript.turns.len(), 5);
        let (_, issues) = read_value(&json!({"role": "user"}));
        assert_eq!(issues[0].code, "transcript.invalid");
        assert_eq!(
            issues[0].message,
            "`messages` must be a list of messages, got an object"
        );
    }

    #[test]
    fn ten_thousand_turns_are_read_in_linear_time() {
        let turn = json!({"role": "assistant", "content": "x", "tool_calls": [
            {"id": "c", "function": {"name": "f", "arguments": "{\"a\": 1}"}}]});
        let many = serde_json::Value::Array(vec![turn; 10_000]);
        let (transcript, issues) = read_value(&many);
        assert_eq!(transcript.turns.len(), 10_000);
        assert!(issues.is_empty());
    }
}
