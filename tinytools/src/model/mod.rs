//! Talking to a model: the [`ChatModel`] trait and the messages, requests and responses it
//! exchanges, and the [`ModelStream`] of an answer as it is written. Provider clients implement
//! it; `testkit::ScriptedModel` replays turns for tests.

mod aid_call;
mod items;
mod native;
mod output;
mod profile;
mod stream;

use serde::{Deserialize, Serialize};

pub use aid_call::aid_calls_as_notes;
pub use items::ProviderItems;
pub use native::{DeferredTool, NativeDeferral, NativeSearch, ProviderSearch};
pub use output::{OutputSchema, OutputSchemaError};
pub use profile::ModelProfile;
pub use stream::{ModelStream, StreamEvent};

use crate::ToolSchema;

/// One tool call the model made.
///
/// ```
/// use tinytools::model::ToolCall;
///
/// let call = ToolCall::new("call_1", "stock_quote", r#"{"symbol":"ACME"}"#);
/// assert_eq!((call.id.as_str(), call.name.as_str()), ("call_1", "stock_quote"));
/// assert_eq!(call.arguments, r#"{"symbol":"ACME"}"#);
/// ```
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct ToolCall {
    /// The provider's id for the call; tool results answer it.
    pub id: String,
    /// The tool's name.
    pub name: String,
    /// The arguments as the provider sent them: JSON text (possibly malformed).
    pub arguments: String,
}

impl ToolCall {
    /// A call of tool `name` with the provider's `id` and `arguments` (JSON text, as the
    /// provider sent it).
    pub fn new(id: impl Into<String>, name: impl Into<String>, arguments: impl Into<String>) -> Self {
        Self { id: id.into(), name: name.into(), arguments: arguments.into() }
    }
}

/// A message of the conversation.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "role", rename_all = "snake_case")]
#[non_exhaustive]
pub enum Message {
    /// Instructions from the host.
    System {
        /// The text.
        content: String,
    },
    /// The user's words: only what the user wrote. The run never writes one.
    User {
        /// The text.
        content: String,
    },
    /// Text the run itself wrote to the model (an [aid](crate::run::aids)'s request, the
    /// request for a final answer): never the user's words. Providers send it as their API
    /// demands (a user turn on the OpenAI and Anthropic wires); context shrinking, grounding
    /// and host UIs tell it from the user's messages.
    Feedback {
        /// The text.
        content: String,
    },
    /// The model's turn: text and/or tool calls.
    Assistant {
        /// Its text (may be empty).
        content: String,
        /// Its tool calls, in order.
        #[serde(default, skip_serializing_if = "Vec::is_empty")]
        tool_calls: Vec<ToolCall>,
    },
    /// A tool's answer to one call.
    Tool {
        /// The call it answers.
        call_id: String,
        /// The tool's name.
        name: String,
        /// What the model reads.
        content: String,
        /// Whether the tool refused or failed.
        #[serde(default)]
        is_error: bool,
    },
    /// A search the provider ran itself (native deferral with [`NativeSearch::Provider`]),
    /// just before the model's turn that it served: providers hand it back as they received
    /// it, and other providers pass over it.
    ProviderSearch(ProviderSearch),
    /// Items of the model's next turn that only its provider reads (OpenAI Responses'
    /// `reasoning` items, or the turn's whole output in its order: see [`ProviderItems`]), just
    /// before that turn: the provider that wrote them hands them back as they came, and other
    /// providers pass over them.
    ProviderItems(ProviderItems),
    /// A call the run made for the model's reply just before it (an
    /// [aid](crate::run::aids)'s [`TakeCall`](crate::run::aids::ReplyAction::TakeCall)): the
    /// model did not emit it. Its result follows as the [`Message::Tool`] answering `call.id`.
    /// Providers send the two as one note of the run in a user turn, never as the model's own
    /// call ([`aid_calls_as_notes`]); hosts tell it from the model's calls.
    AidCall {
        /// The aid that took it.
        aid: String,
        /// The call, with the id the run gave it.
        call: ToolCall,
    },
}

impl Message {
    /// A user message.
    pub fn user(content: impl Into<String>) -> Self {
        Self::User { content: content.into() }
    }

    /// A message the run wrote to the model (see [`Message::Feedback`]).
    pub fn feedback(content: impl Into<String>) -> Self {
        Self::Feedback { content: content.into() }
    }

    /// A system message.
    pub fn system(content: impl Into<String>) -> Self {
        Self::System { content: content.into() }
    }
}

/// Token usage a provider reported for one call (or, summed, for a run).
///
/// `prompt_tokens` counts every token of the request, cached or not; the cache counts say how
/// many of them the provider's prompt cache served (`cache_read_tokens`: Anthropic's
/// `cache_read_input_tokens`, OpenAI's `cached_tokens`) and how many it stored
/// (`cache_write_tokens`: Anthropic's `cache_creation_input_tokens`).
///
/// ```
/// use tinytools::model::Usage;
///
/// let mut run = Usage::new(1_200, 40).with_cache(1_000, 0);
/// run += Usage::new(1_300, 20).with_cache(1_000, 200);
/// assert_eq!((run.prompt_tokens, run.completion_tokens), (2_500, 60));
/// assert_eq!((run.cache_read_tokens, run.cache_write_tokens), (2_000, 200));
/// ```
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct Usage {
    /// Tokens of the request, the cached ones included.
    pub prompt_tokens: u64,
    /// Tokens of the answer.
    pub completion_tokens: u64,
    /// Tokens of the request read from the provider's prompt cache.
    #[serde(default)]
    pub cache_read_tokens: u64,
    /// Tokens of the request written to the provider's prompt cache.
    #[serde(default)]
    pub cache_write_tokens: u64,
}

impl Usage {
    /// Usage of `prompt_tokens` and `completion_tokens`, nothing cached.
    pub const fn new(prompt_tokens: u64, completion_tokens: u64) -> Self {
        Self { prompt_tokens, completion_tokens, cache_read_tokens: 0, cache_write_tokens: 0 }
    }

    /// The same usage with the tokens the prompt cache served (`read`) and stored (`written`).
    #[must_use]
    pub const fn with_cache(mut self, read: u64, written: u64) -> Self {
        self.cache_read_tokens = read;
        self.cache_write_tokens = written;
        self
    }
}

impl std::ops::AddAssign for Usage {
    fn add_assign(&mut self, other: Self) {
        self.prompt_tokens += other.prompt_tokens;
        self.completion_tokens += other.completion_tokens;
        self.cache_read_tokens += other.cache_read_tokens;
        self.cache_write_tokens += other.cache_write_tokens;
    }
}

/// Why the run sends a request: a turn of the conversation, or the short side request for a
/// user message's search keywords
/// ([`PrePromotion::model_keywords`](crate::discovery::PrePromotion::model_keywords)). The
/// bundled providers cap a keyword request's answer at [`max_output_tokens`](Self::max_output_tokens);
/// a test double or a recorder can tell the two apart.
///
/// ```
/// use tinytools::model::{ModelRequest, RequestPurpose};
///
/// assert_eq!(ModelRequest::default().purpose, RequestPurpose::Turn);
/// assert_eq!(RequestPurpose::Turn.max_output_tokens(), None);
/// assert_eq!(RequestPurpose::Keywords.max_output_tokens(), Some(32));
/// ```
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
#[non_exhaustive]
pub enum RequestPurpose {
    /// A turn of the conversation.
    #[default]
    Turn,
    /// Search keywords for a user message: one line, no tools.
    Keywords,
    /// A short paragraph about an MCP server for the search index (`tinytools::mcp::SummaryWriter`,
    /// cargo feature `mcp`): no tools.
    Summary,
}

impl RequestPurpose {
    /// The most answer tokens a request of this purpose needs (`None`: the client's own cap).
    pub const fn max_output_tokens(self) -> Option<u32> {
        match self {
            Self::Turn => None,
            Self::Keywords => Some(32),
            Self::Summary => Some(200),
        }
    }

    /// Whether this is a turn of the conversation.
    pub const fn is_turn(&self) -> bool {
        matches!(self, Self::Turn)
    }

    /// `configured` (a client's cap), lowered to what this purpose needs.
    #[cfg(feature = "providers")]
    pub(crate) fn cap(self, configured: Option<u32>) -> Option<u32> {
        match (configured, self.max_output_tokens()) {
            (Some(configured), Some(needed)) => Some(configured.min(needed)),
            (configured, needed) => configured.or(needed),
        }
    }
}

/// What is sent to the model.
///
/// Build one with [`new`](Self::new) (or [`Default`]) and the `with_` setters:
///
/// ```
/// use tinytools::ToolSchema;
/// use tinytools::model::{Message, ModelRequest, RequestPurpose};
///
/// let quote =
///     ToolSchema::new("stock_quote", "Fetch the latest price for a ticker symbol.", serde_json::json!({"type": "object"}));
/// let request = ModelRequest::new(vec![Message::user("What is ACME at?")], vec![quote])
///     .with_callable_by_name(vec!["read_note".into()])
///     .with_max_response_bytes(Some(64 * 1024));
/// assert_eq!((request.messages.len(), request.tools.len()), (1, 1));
/// assert_eq!(request.max_response_bytes, Some(64 * 1024));
/// assert_eq!(request.purpose, RequestPurpose::Turn);
/// ```
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct ModelRequest {
    /// The conversation so far.
    pub messages: Vec<Message>,
    /// The tools it may call this turn.
    pub tools: Vec<ToolSchema>,
    /// Tools the model may also call by name though their declarations are not in `tools`:
    /// the run's admitted deferred catalogue, named in `tool_search`'s manifest. Never Hidden
    /// or non-admitted tools. Not sent to providers; prompt dialects accept text calls of them.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub callable_by_name: Vec<String>,
    /// The largest response body the provider client may read for this request
    /// (`RunPolicy::caps`); `None` leaves it to the client (the bundled providers: 8 MiB).
    #[serde(skip)]
    pub max_response_bytes: Option<usize>,
    /// The tools of this request (declared or callable by name) annotated destructive: text
    /// recovery never repairs a misspelt name to one of them. Not sent to providers.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub destructive: Vec<String>,
    /// The deferred tools the provider is to defer itself (`DiscoveryMode::ProviderNative` with
    /// a model whose [profile](ModelProfile::native_deferral) can): sent with the provider's
    /// deferral flag and search tool. `None` in bridge mode; providers that cannot defer
    /// natively pass over it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub native_deferral: Option<NativeDeferral>,
    /// Why the run sends it: a turn (the default) or a side request for search keywords.
    #[serde(default, skip_serializing_if = "RequestPurpose::is_turn")]
    pub purpose: RequestPurpose,
    /// The shape the final answer must have (a typed run,
    /// [`Agent::run_typed`](crate::run::Agent::run_typed)), when the model's
    /// [profile](ModelProfile::structured_output) takes structured output natively: the
    /// provider sends it in its own field. `None` otherwise (a model without it is asked in
    /// words, in the request's messages).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub output: Option<OutputSchema>,
}

impl ModelRequest {
    /// A request of `messages`, offering `tools`; everything else as [`Default`] has it.
    pub fn new(messages: Vec<Message>, tools: Vec<ToolSchema>) -> Self {
        Self { messages, tools, ..Self::default() }
    }

    /// The same request with tools the model may also call by name (see
    /// [`callable_by_name`](Self::callable_by_name)).
    #[must_use]
    pub fn with_callable_by_name(mut self, names: Vec<String>) -> Self {
        self.callable_by_name = names;
        self
    }

    /// The same request with the largest response body the client may read (see
    /// [`max_response_bytes`](Self::max_response_bytes)).
    #[must_use]
    pub fn with_max_response_bytes(mut self, limit: Option<usize>) -> Self {
        self.max_response_bytes = limit;
        self
    }

    /// The same request with the tools annotated destructive (see
    /// [`destructive`](Self::destructive)).
    #[must_use]
    pub fn with_destructive(mut self, names: Vec<String>) -> Self {
        self.destructive = names;
        self
    }

    /// The same request with the tools the provider is to defer itself (see
    /// [`native_deferral`](Self::native_deferral)).
    #[must_use]
    pub fn with_native_deferral(mut self, deferral: Option<NativeDeferral>) -> Self {
        self.native_deferral = deferral;
        self
    }

    /// The same request sent for `purpose`.
    #[must_use]
    pub fn with_purpose(mut self, purpose: RequestPurpose) -> Self {
        self.purpose = purpose;
        self
    }

    /// The same request with the shape its answer must have (see [`output`](Self::output)).
    #[must_use]
    pub fn with_output(mut self, output: Option<OutputSchema>) -> Self {
        self.output = output;
        self
    }
}

/// What the model answered.
///
/// Build one with [`text`](Self::text), [`calls`](Self::calls) or [`new`](Self::new) (or
/// [`Default`]: no text, no calls) and the `with_` setters:
///
/// ```
/// use tinytools::model::{ModelResponse, ToolCall, Usage};
///
/// let call = ToolCall::new("call_1", "stock_quote", r#"{"symbol":"ACME"}"#);
/// let response = ModelResponse::new("Let me look.", vec![call.clone()])
///     .with_reported_usage(Usage::new(120, 9).with_cache(100, 0));
/// assert_eq!(response.tool_calls, [call]);
/// assert_eq!(response.usage.map(|u| u.cache_read_tokens), Some(100));
///
/// let called = ModelResponse::default().with_tool_calls(response.tool_calls.clone());
/// assert!(called.content.is_empty() && called.usage.is_none());
/// assert_eq!(called.tool_calls.len(), 1);
/// ```
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct ModelResponse {
    /// Its text.
    pub content: String,
    /// Its tool calls, in order.
    pub tool_calls: Vec<ToolCall>,
    /// Usage, when the provider reports it.
    pub usage: Option<Usage>,
    /// Searches the provider ran itself before this answer (native deferral), in order.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub searches: Vec<ProviderSearch>,
    /// Items of this answer that only its provider reads (the answer's whole output in its
    /// order, when the text and calls alone would not say it: OpenAI Responses' `reasoning`
    /// items, Anthropic's search blocks): the run keeps them in the conversation just before
    /// the answer's turn ([`Message::ProviderItems`]) and the provider hands them back. Never
    /// part of `content`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub provider_items: Option<ProviderItems>,
}

impl ModelResponse {
    /// An answer of `content` and `tool_calls` (either may be empty), with no usage.
    pub fn new(content: impl Into<String>, tool_calls: Vec<ToolCall>) -> Self {
        Self { content: content.into(), tool_calls, ..Self::default() }
    }

    /// A plain text answer (ends a run).
    pub fn text(content: impl Into<String>) -> Self {
        Self::new(content, Vec::new())
    }

    /// An answer that calls tools: `(id, name, arguments JSON)`.
    pub fn calls<'a>(calls: impl IntoIterator<Item = (&'a str, &'a str, serde_json::Value)>) -> Self {
        let tool_calls =
            calls.into_iter().map(|(id, name, arguments)| ToolCall::new(id, name, arguments.to_string())).collect();
        Self::new(String::new(), tool_calls)
    }

    /// The same response with its text replaced by `content`.
    #[must_use]
    pub fn with_content(mut self, content: impl Into<String>) -> Self {
        self.content = content.into();
        self
    }

    /// The same response with its tool calls replaced by `tool_calls`.
    #[must_use]
    pub fn with_tool_calls(mut self, tool_calls: Vec<ToolCall>) -> Self {
        self.tool_calls = tool_calls;
        self
    }

    /// The same response with usage.
    #[must_use]
    pub fn with_usage(mut self, prompt_tokens: u64, completion_tokens: u64) -> Self {
        self.usage = Some(Usage::new(prompt_tokens, completion_tokens));
        self
    }

    /// The same response with the usage the provider reported, cache counts and all.
    #[must_use]
    pub fn with_reported_usage(mut self, usage: Usage) -> Self {
        self.usage = Some(usage);
        self
    }

    /// The same response with items only its provider reads (see
    /// [`provider_items`](Self::provider_items)).
    #[must_use]
    pub fn with_provider_items(mut self, items: ProviderItems) -> Self {
        self.provider_items = Some(items);
        self
    }

    /// The same response after a search the provider ran itself (native deferral).
    #[must_use]
    pub fn with_search(mut self, search: ProviderSearch) -> Self {
        self.searches.push(search);
        self
    }
}

/// Why a model call failed.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ModelError {
    /// The request does not fit the model's context window.
    #[error("the request does not fit the model's context window: {message}")]
    ContextLength {
        /// What the provider said.
        message: String,
    },
    /// The provider refused or failed the request.
    #[error("the model provider answered {status}: {message}")]
    Provider {
        /// HTTP-like status.
        status: u16,
        /// What the provider said.
        message: String,
    },
    /// The provider could not be reached or answered something unreadable.
    #[error("the model provider could not be reached: {0}")]
    Transport(String),
    /// The provider's response body was larger than the request allowed
    /// (`RunPolicy::caps.max_response_bytes`); it was not read further.
    #[error(
        "the model provider's response is larger than {limit} bytes (RunPolicy::caps.max_response_bytes); raise the cap or ask for a shorter answer"
    )]
    ResponseTooLarge {
        /// The cap.
        limit: usize,
    },
    /// The provider's stream stopped before the answer was complete: the connection closed or
    /// timed out mid-answer, or the stream ended without its closing event. The partial answer
    /// is not returned, so no call in it can run.
    #[error(
        "the model provider's stream stopped {during} ({reason}); the partial answer was discarded and no call in it was run: send the request again"
    )]
    Interrupted {
        /// Where the answer was, such as "in tool call 2 (`stock_quote`)".
        during: String,
        /// What stopped it.
        reason: String,
    },
    /// The provider paused its turn (Anthropic's `stop_reason: "pause_turn"`, a server-side
    /// tool loop that had not finished) more times than the client continues it. Nothing in the
    /// turn ran.
    #[error(
        "the model provider paused its turn (pause_turn) {continuations} times in a row and its server-side tools never finished; no call in it was run: raise Anthropic::with_max_continuations or ask for less"
    )]
    TurnPaused {
        /// The continuations sent before giving up (the client's cap).
        continuations: usize,
    },
    /// A scripted model ran out of turns (tests).
    #[error("the scripted model has no turn {0}: the run made more model calls than the script has")]
    ScriptExhausted(usize),
}

/// A chat model with tool calling.
#[async_trait::async_trait]
pub trait ChatModel: Send + Sync {
    /// What the model can do.
    fn profile(&self) -> ModelProfile {
        ModelProfile::default()
    }

    /// The model's name as its provider knows it (`gpt-4.1-mini`), for telemetry: the run's
    /// spans name their model requests `chat {model}` and record it as `gen_ai.request.model`
    /// (see `docs/tracing.md`). `None` (the default) leaves it out.
    fn model_name(&self) -> Option<&str> {
        None
    }

    /// The provider as OpenTelemetry's GenAI conventions name it (`openai`, `anthropic`,
    /// `gcp.gemini`, or a name of the host's own), for telemetry: the run's spans record it as
    /// `gen_ai.provider.name`. `None` (the default) leaves it out.
    fn provider_name(&self) -> Option<&str> {
        None
    }

    /// One model call.
    async fn complete(&self, request: &ModelRequest) -> Result<ModelResponse, ModelError>;

    /// One model call, streamed: the answer's text and calls as they are written, then the
    /// whole answer ([`StreamEvent::Done`]). Dropping the stream abandons the call.
    ///
    /// The default awaits [`complete`](Self::complete) and replays its response
    /// ([`StreamEvent::replay`]), so every model streams; the bundled providers stream
    /// from the wire.
    ///
    /// ```
    /// use tinytools::model::{ChatModel, ModelRequest, ModelResponse, StreamEvent};
    /// use tinytools::testkit::ScriptedModel;
    ///
    /// let model = ScriptedModel::new([ModelResponse::text("hello")]);
    /// # tokio::runtime::Builder::new_current_thread().build().unwrap().block_on(async {
    /// let request = ModelRequest::default();
    /// let mut deltas = Vec::new();
    /// let response = model
    ///     .stream(&request)
    ///     .into_response_with(|event| if let StreamEvent::TextDelta(text) = event { deltas.push(text.clone()) })
    ///     .await?;
    /// assert_eq!((deltas, response.content), (vec!["hello".to_owned()], "hello".to_owned()));
    /// # Ok::<(), tinytools::model::ModelError>(())
    /// # }).unwrap();
    /// ```
    fn stream<'a>(&'a self, request: &'a ModelRequest) -> ModelStream<'a> {
        use futures_util::stream::{self, StreamExt};
        let events = stream::once(self.complete(request)).flat_map(|outcome| {
            let events: Vec<Result<StreamEvent, ModelError>> = match outcome {
                Ok(response) => StreamEvent::replay(response).into_iter().map(Ok).collect(),
                Err(error) => vec![Err(error)],
            };
            stream::iter(events)
        });
        ModelStream::new(events)
    }
}

/// A shared model is a model: `Agent::builder(model.clone())` keeps a handle on it.
#[async_trait::async_trait]
impl<M: ChatModel + ?Sized> ChatModel for std::sync::Arc<M> {
    fn profile(&self) -> ModelProfile {
        (**self).profile()
    }

    fn model_name(&self) -> Option<&str> {
        (**self).model_name()
    }

    fn provider_name(&self) -> Option<&str> {
        (**self).provider_name()
    }

    async fn complete(&self, request: &ModelRequest) -> Result<ModelResponse, ModelError> {
        (**self).complete(request).await
    }

    fn stream<'a>(&'a self, request: &'a ModelRequest) -> ModelStream<'a> {
        (**self).stream(request)
    }
}

impl Message {
    /// What this message costs, as `counter` counts its JSON: the measure the run's context
    /// budgets (microcompaction's gate, context-overflow shrinking) share.
    pub(crate) fn count_tokens(&self, counter: &dyn crate::schema::TokenCounter) -> usize {
        counter.count(&serde_json::to_string(self).unwrap_or_default())
    }
}
