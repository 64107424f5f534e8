//! Prompt dialects: tool calling for models without it, and recovery for models whose server
//! does not parse their calls.
//!
//! A dialect is one unit — how the catalogue is rendered, the call syntax the model writes,
//! how results come back, how history is replayed — wrapped around a [`ChatModel`] so the
//! agent loop does not change. `tool_search` and searched tools go through the same renderer
//! as every other tool.

mod envelope;
mod json_tag;
mod pformat;

mod readings;
mod recovery;
pub(crate) mod relaxed_json;
mod streaming;

use std::sync::Arc;

use crate::ToolSchema;
use crate::model::{
    ChatModel, Message, ModelError, ModelProfile, ModelRequest, ModelResponse, ModelStream, ToolCall,
    aid_calls_as_notes,
};

/// How tools reach the model and calls come back.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
#[non_exhaustive]
pub enum Dialect {
    /// Native when the model's profile supports tool calling, else JSON-in-tag.
    #[default]
    Auto,
    /// The provider's own tool calling; a call written as bare or fenced JSON in the text is
    /// still recovered.
    Native,
    /// `<tool_call>{"name": ..., "arguments": {...}}</tool_call>`; the prompt lists each tool's
    /// parameter schema.
    JsonInTag,
    /// `<tool_call>read_file[0|notes.txt|1|20]</tool_call>`; the prompt lists compact
    /// positional signatures.
    PFormat,
}

impl Dialect {
    /// Wraps a model so it speaks this dialect.
    ///
    /// ```
    /// use std::sync::Arc;
    /// use tinytools::dialect::Dialect;
    /// use tinytools::model::{ChatModel, ModelRequest, ModelResponse};
    /// use tinytools::testkit::ScriptedModel;
    ///
    /// let model = Arc::new(ScriptedModel::new([ModelResponse::text(
    ///     "Checking. <tool_call>stock_quote[0|ACME]</tool_call>",
    /// )]));
    /// let speaking = Dialect::PFormat.wrap(model.clone());
    /// # tokio::runtime::Builder::new_current_thread().build().unwrap().block_on(async {
    /// let tool = tinytools::ToolSchema::new(
    ///     "stock_quote",
    ///     "Fetch a price.",
    ///     serde_json::json!({"type": "object", "required": ["symbol"], "properties": {"symbol": {"type": "string"}}}),
    /// );
    /// let request = ModelRequest::new(vec![tinytools::model::Message::user("ACME?")], vec![tool]);
    /// let response = speaking.complete(&request).await.unwrap();
    /// assert_eq!(response.content, "Checking.");
    /// assert_eq!(response.tool_calls[0].arguments, r#"{"symbol":"ACME"}"#);
    /// assert!(model.requests()[0].tools.is_empty(), "the catalogue went into the prompt");
    /// # });
    /// ```
    pub fn wrap(self, model: Arc<dyn ChatModel>) -> Arc<dyn ChatModel> {
        let resolved = match self {
            Self::Auto if model.profile().native_tool_calling => Self::Native,
            Self::Auto => Self::JsonInTag,
            other => other,
        };
        Arc::new(DialectModel { inner: model, dialect: resolved })
    }

    /// The catalogue as this dialect writes it into the system prompt (empty for native).
    pub fn render_catalogue(self, tools: &[ToolSchema]) -> String {
        match self {
            Self::JsonInTag => json_tag::catalogue(tools),
            Self::PFormat => pformat::catalogue(tools),
            Self::Auto | Self::Native => String::new(),
        }
    }

    /// Reads the calls in a reply written in this dialect, with the text around them.
    ///
    /// A name is only ever changed to an offered tool: a misspelt one is repaired to a unique
    /// close match. A call-shaped JSON object (a string `name` and an `arguments` or
    /// `parameters` member) naming no offered tool is returned under its name exactly as
    /// written, for the caller to refuse — the agent loop answers it with the unknown-tool
    /// answer, which points the model to `tool_search`. Other JSON stays text. Text recovery
    /// also reads the OpenAI wrapper (`{"type": "function", "function": {...}}`), lists of
    /// calls (`{"tool_calls": [...]}`, `[...]`), and `//` / `/* */` comments and trailing
    /// commas in the JSON.
    pub fn parse(self, reply: &str, tools: &[ToolSchema]) -> (Vec<ToolCall>, String) {
        self.parse_offered(reply, tools, &[])
    }

    /// [`parse`](Self::parse), where `callable_by_name` also counts as offered (the deferred
    /// tools a request lists in [`ModelRequest::callable_by_name`]).
    pub fn parse_offered(
        self,
        reply: &str,
        tools: &[ToolSchema],
        callable_by_name: &[String],
    ) -> (Vec<ToolCall>, String) {
        self.parse_with(reply, tools, callable_by_name, &[])
    }

    /// [`parse_offered`](Self::parse_offered) with everything the request says: its tools,
    /// the deferred tools callable by name, and its destructive tools, to which a misspelt
    /// name is never repaired ([`ModelRequest::destructive`]).
    pub fn parse_request(self, reply: &str, request: &ModelRequest) -> (Vec<ToolCall>, String) {
        let protected: Vec<&str> = request.destructive.iter().map(String::as_str).collect();
        self.parse_with(reply, &request.tools, &request.callable_by_name, &protected)
    }

    fn parse_with(
        self,
        reply: &str,
        tools: &[ToolSchema],
        callable_by_name: &[String],
        protected: &[&str],
    ) -> (Vec<ToolCall>, String) {
        let mut offered: Vec<&str> = tools.iter().map(|tool| tool.name.as_str()).collect();
        offered.extend(callable_by_name.iter().map(String::as_str));
        let mut counter = 0;
        let mut next_id = || {
            counter += 1;
            format!("call_text_{counter}")
        };
        let (blocks, text) = match self {
            Self::JsonInTag | Self::PFormat => envelope::call_blocks(reply),
            Self::Auto | Self::Native => (Vec::new(), reply.trim().to_owned()),
        };
        let mut calls: Vec<ToolCall> = blocks
            .iter()
            .filter_map(|block| match self {
                Self::PFormat => pformat::parse_block(block, tools, &offered, protected, next_id()),
                _ => json_tag::parse_block(block, &offered, protected, next_id()),
            })
            .collect();
        if !calls.is_empty() {
            return (calls, text);
        }
        let (recovered, text) = recovery::recover(&text, &offered, protected, &mut next_id);
        calls.extend(recovered);
        (calls, text)
    }

    /// A call written in this dialect (how history is replayed to the model).
    pub fn render_call(self, call: &ToolCall, tools: &[ToolSchema]) -> String {
        match self {
            Self::PFormat => pformat::render_call(call, tools.iter().find(|tool| tool.name == call.name)),
            _ => json_tag::render_call(call),
        }
    }

    /// A tool's result as the model reads it in a text dialect.
    pub fn render_result(name: &str, is_error: bool, content: &str) -> String {
        envelope::result_block(name, is_error, content)
    }

    /// The request a text dialect sends: the catalogue in the system prompt, calls and results
    /// as text, no native tools.
    pub fn render_request(self, request: &ModelRequest) -> ModelRequest {
        let catalogue = self.render_catalogue(&request.tools);
        let mut messages: Vec<Message> = Vec::new();
        let mut system_done = catalogue.is_empty();
        // Whether the last message pushed holds tool results: the next result joins it. Known
        // by construction, never read back from the text (a user's message may start with
        // anything).
        let mut after_results = false;
        for message in aid_calls_as_notes(&request.messages).iter() {
            let is_result = matches!(message, Message::Tool { .. });
            match message {
                Message::System { content } if !system_done => {
                    messages.push(Message::system(format!("{content}\n\n{catalogue}")));
                    system_done = true;
                }
                Message::Assistant { content, tool_calls } => {
                    let mut text = content.clone();
                    for call in tool_calls {
                        if !text.is_empty() {
                            text.push('\n');
                        }
                        text.push_str(&self.render_call(call, &request.tools));
                    }
                    messages.push(Message::Assistant { content: text, tool_calls: Vec::new() });
                }
                Message::Tool { name, content, is_error, .. } => {
                    let block = Self::render_result(name, *is_error, content);
                    match messages.last_mut() {
                        Some(Message::User { content }) if after_results => {
                            content.push('\n');
                            content.push_str(&block);
                        }
                        _ => messages.push(Message::user(block)),
                    }
                }
                other => messages.push(other.clone()),
            }
            after_results = is_result;
        }
        if !system_done {
            messages.insert(0, Message::system(catalogue));
        }
        ModelRequest {
            messages,
            max_response_bytes: request.max_response_bytes,
            destructive: request.destructive.clone(),
            purpose: request.purpose,
            ..ModelRequest::default()
        }
    }
}

/// A model wrapped in a dialect.
struct DialectModel {
    inner: Arc<dyn ChatModel>,
    dialect: Dialect,
}

impl DialectModel {
    /// Whether the inner model is sent the request as it is (only text dialects rewrite it).
    fn native(&self) -> bool {
        matches!(self.dialect, Dialect::Native | Dialect::Auto)
    }

    /// The inner model's whole answer read in this dialect: calls parsed from its text (for a
    /// native model, only when it made none natively), the text around them left.
    fn read_answer(&self, request: &ModelRequest, mut response: ModelResponse) -> ModelResponse {
        if !self.native() || response.tool_calls.is_empty() {
            let (calls, text) = self.dialect.parse_request(&response.content, request);
            if !calls.is_empty() {
                let turn = request.messages.iter().filter(|m| matches!(m, Message::Assistant { .. })).count();
                response.tool_calls = calls
                    .into_iter()
                    .enumerate()
                    .map(|(i, call)| ToolCall { id: format!("call_{turn}_{i}"), ..call })
                    .collect();
                response.content = text;
            }
        }
        if !response.tool_calls.is_empty() {
            response.content = recovery::without_residue(&response.content);
        }
        response
    }
}

#[async_trait::async_trait]
impl ChatModel for DialectModel {
    /// The inner model's, except that a text dialect cannot defer tools natively (it sends no
    /// native tools at all) nor constrain the answer to a schema (a constrained answer could
    /// not carry its text calls): a typed run asks for the shape in words.
    fn profile(&self) -> ModelProfile {
        let inner = self.inner.profile();
        inner
            .with_native_deferral(inner.native_deferral && self.native())
            .with_structured_output(inner.structured_output && self.native())
    }

    fn model_name(&self) -> Option<&str> {
        self.inner.model_name()
    }

    fn provider_name(&self) -> Option<&str> {
        self.inner.provider_name()
    }

    async fn complete(&self, request: &ModelRequest) -> Result<ModelResponse, ModelError> {
        let response = if self.native() {
            self.inner.complete(request).await?
        } else {
            self.inner.complete(&self.dialect.render_request(request)).await?
        };
        Ok(self.read_answer(request, response))
    }

    /// Streams the inner model's text (a text dialect's up to its first `<tool_call>`) and
    /// parses the calls at the end of the turn, announcing each before `Done`.
    fn stream<'a>(&'a self, request: &'a ModelRequest) -> ModelStream<'a> {
        streaming::stream(self, request)
    }
}
