//! One record to evaluate ([`Input`]), as a front end or the input reader
//! makes it: its id, the model's output (or a transcript whose last assistant
//! turn is the output), what it is compared with, and what it is judged as.

use crate::json::Json;

/// One record to evaluate.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Input {
    /// The record's id, echoed in the result (`null` when the record has none).
    pub id: Json,
    /// The raw model output.
    pub output: String,
    /// Ground truth, `null` when absent.
    pub expected: Json,
    /// Anything else the components may read (`ctx.meta` in scripts).
    pub meta: Json,
    /// An agent's transcript (`null` when the record has none): a list of
    /// messages in the OpenAI Chat, Anthropic Messages or OpenAI Responses
    /// format, which the components read as `ctx.turns`.
    pub messages: Json,
    /// What the record is judged as: the whole record (the default), or the
    /// tool calls its last assistant message proposes (`Pack::decide` sets
    /// it).
    pub judging: crate::component::Judging,
}

impl Input {
    /// A record of this model output, with no id, ground truth or meta.
    pub fn new(output: impl Into<String>) -> Self {
        Self {
            output: output.into(),
            ..Self::default()
        }
    }

    /// The same record with this id (echoed in its result).
    #[must_use]
    pub fn with_id(mut self, id: impl Into<Json>) -> Self {
        self.id = id.into();
        self
    }

    /// The same record with this ground truth.
    #[must_use]
    pub fn with_expected(mut self, expected: impl Into<Json>) -> Self {
        self.expected = expected.into();
        self
    }

    /// The same record with this meta.
    #[must_use]
    pub fn with_meta(mut self, meta: impl Into<Json>) -> Self {
        self.meta = meta.into();
        self
    }

    /// A record of an agent's transcript, `messages` (a list of messages in
    /// the OpenAI Chat, Anthropic Messages or OpenAI Responses format): its
    /// output is the text of the last assistant turn, and the components read
    /// the turns as `ctx.turns`.
    pub fn from_messages(messages: impl Into<Json>) -> Self {
        let messages = messages.into();
        Self {
            output: last_assistant_text(&messages),
            messages,
            ..Self::default()
        }
    }

    /// A record from the four members of an `eval` input line, each `null` when
    /// absent: the rules every front end applies (the CLI to a JSONL line, the
    /// Python API to a dict). A string `output` is the raw output; any other JSON
    /// value is evaluated as its JSON text (data sets sometimes store the
    /// structured output itself). A record without an output (absent or `null`)
    /// cannot be evaluated: the error gives its id back, for its `ERROR` result.
    pub fn from_members(
        id: Json,
        output: Json,
        expected: Json,
        meta: Json,
    ) -> Result<Self, MissingOutput> {
        Self::from_record(id, output, expected, meta, Json::Null)
    }

    /// As [`from_members`](Self::from_members), with the record's `messages`
    /// too: a record with messages and no output is judged on the text of
    /// its last assistant turn (see [`from_messages`](Self::from_messages)).
    pub fn from_record(
        id: Json,
        output: Json,
        expected: Json,
        meta: Json,
        messages: Json,
    ) -> Result<Self, MissingOutput> {
        let output = match output {
            Json::String(text) => text.into_string(),
            Json::Null if !messages.is_null() => last_assistant_text(&messages),
            Json::Null => return Err(MissingOutput { id }),
            other => other.to_string(),
        };
        Ok(Self {
            id,
            output,
            expected,
            meta,
            messages,
            judging: crate::component::Judging::Whole,
        })
    }
}

/// The text of the last assistant turn of a transcript (empty when it has
/// none): a transcript record's output.
fn last_assistant_text(messages: &Json) -> String {
    let (transcript, _) = crate::transcript::read(messages, "/messages");
    transcript
        .last_assistant_text()
        .unwrap_or_default()
        .to_owned()
}

/// A record with no output (see [`Input::from_members`]); front ends report it
/// as an `ERROR` result, naming their own field.
#[derive(Debug, Clone, PartialEq)]
pub struct MissingOutput {
    /// The record's id (`null` when it has none).
    pub id: Json,
}
