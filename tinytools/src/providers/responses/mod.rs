//! [`OpenAiResponses`]: OpenAI's Responses API (`/v1/responses`) — function tools, deferred
//! tools in `namespace`s mapped from their family, and `tool_search` hosted or answered by the
//! run's ranker (the wire format is `wire.rs`, the stream `stream.rs`).

mod stream;
mod wire;

use serde_json::{Value, json};

use super::ConfigError;
use super::capabilities::{OPENAI, profile_for};
use crate::model::{ChatModel, ModelError, ModelProfile, ModelRequest, ModelResponse, ModelStream};
use crate::providers::endpoint::Endpoint;
use crate::providers::http::{HttpOptions, MAX_RESPONSE_BYTES};
use crate::providers::stream::sse_stream;
use stream::ResponseEvents;
use wire::{Namespaces, response};

/// The most functions one `namespace` holds: OpenAI advises fewer than about ten.
pub const NAMESPACE_LIMIT: usize = 10;

/// A Responses API client. Chat Completions servers take [`OpenAiCompatible`](crate::providers::OpenAiCompatible).
///
/// With native deferral ([`ModelRequest::native_deferral`]), each deferred tool is a function
/// with `defer_loading: true` inside the `namespace` of its family (at most
/// [`NAMESPACE_LIMIT`] a namespace: a larger family is split into `family`, `family_2`, …;
/// a tool of no family is a deferred function of its own), beside `{"type": "tool_search"}`
/// when OpenAI searches, or the run's `tool_search` as the client-executed search tool
/// (`execution: "client"`), whose `tool_search_call`s the run's ranker answers with a
/// `tool_search_output` of the tools it found. The conversation goes as `input` items every
/// time, and nothing is stored between requests (`store: false`). A reasoning model's
/// `reasoning` items come with their encrypted content (`include:
/// ["reasoning.encrypted_content"]`, asked only of a model whose profile has
/// [`reasoning_items`](ModelProfile::reasoning_items): others answer it with a 400); a turn
/// with reasoning or a hosted search is kept whole, in the order of its output
/// ([`ModelResponse::provider_items`], [`Message::ProviderItems`](crate::model::Message::ProviderItems))
/// and handed back in that order, so the model keeps its reasoning across a turn's tool calls;
/// [`with_encrypted_reasoning(false)`](Self::with_encrypted_reasoning) sends neither field, for
/// servers that refuse them.
///
/// What the model can do comes from its family ([`profile_for`](Self::profile_for)): only
/// `gpt-5.4` and later defer natively, so a run asking for provider-native deferral with
/// another model uses the run's `tool_search` bridge. [`with_profile`](Self::with_profile)
/// replaces it.
///
/// ```
/// use tinytools::model::{Message, ModelRequest};
/// use tinytools::providers::OpenAiResponses;
///
/// let gpt = OpenAiResponses::openai("sk-secret", "gpt-5.4")?.with_max_output_tokens(512);
/// assert!(!format!("{gpt:?}").contains("secret"));
/// let request = ModelRequest::new(vec![Message::user("Hi")], Vec::new());
/// let body = gpt.body(&request);
/// assert_eq!(body["input"][0], serde_json::json!({"role": "user", "content": "Hi"}));
/// assert_eq!(body["max_output_tokens"], 512);
/// assert_eq!((&body["store"], &body["include"][0]), (&serde_json::json!(false), &serde_json::json!("reasoning.encrypted_content")));
/// let older = OpenAiResponses::openai("sk-secret", "gpt-4.1")?.body(&request);
/// assert!(older.get("include").is_none(), "not a reasoning model");
/// # Ok::<(), tinytools::providers::ConfigError>(())
/// ```
#[derive(Clone)]
pub struct OpenAiResponses {
    endpoint: Endpoint,
    model: String,
    max_output_tokens: Option<u32>,
    namespace_limit: usize,
    encrypted_reasoning: bool,
    profile: ModelProfile,
}

/// The base URL (without credentials it may carry) and the model only: never the key nor the
/// extra headers.
impl std::fmt::Debug for OpenAiResponses {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("OpenAiResponses")
            .field("base_url", &self.endpoint.shown_base_url())
            .field("model", &self.model)
            .finish_non_exhaustive()
    }
}

impl OpenAiResponses {
    /// A client for any server of the Responses API: `base_url` ends before `/responses`.
    ///
    /// # Errors
    /// [`ConfigError::Client`] when the HTTP client cannot be built.
    pub fn new(
        base_url: impl Into<String>,
        model: impl Into<String>,
        options: HttpOptions,
    ) -> Result<Self, ConfigError> {
        let model = model.into();
        Ok(Self {
            endpoint: Endpoint::new(base_url, options)?,
            profile: Self::profile_for(&model),
            model,
            max_output_tokens: None,
            namespace_limit: NAMESPACE_LIMIT,
            encrypted_reasoning: true,
        })
    }

    /// OpenAI (`https://api.openai.com/v1`).
    ///
    /// # Errors
    /// As [`new`](Self::new).
    pub fn openai(api_key: impl Into<String>, model: impl Into<String>) -> Result<Self, ConfigError> {
        Ok(Self::new("https://api.openai.com/v1", model, HttpOptions::default())?.with_api_key(api_key))
    }

    /// Sends this key as a bearer token.
    #[must_use]
    pub fn with_api_key(mut self, key: impl Into<String>) -> Self {
        self.endpoint.set_api_key(key);
        self
    }

    /// Sends an extra header on every request.
    #[must_use]
    pub fn with_header(mut self, name: impl Into<String>, value: impl Into<String>) -> Self {
        self.endpoint.add_header(name, value);
        self
    }

    /// Caps every answer at this many tokens (`max_output_tokens`).
    #[must_use]
    pub fn with_max_output_tokens(mut self, max_output_tokens: u32) -> Self {
        self.max_output_tokens = Some(max_output_tokens);
        self
    }

    /// Sets the most deferred functions one `namespace` holds (default [`NAMESPACE_LIMIT`];
    /// at least 1).
    #[must_use]
    pub fn with_namespace_limit(mut self, limit: usize) -> Self {
        self.namespace_limit = limit.max(1);
        self
    }

    /// Whether requests say `store: false` and, for a reasoning model, ask for reasoning items'
    /// encrypted content (`include: ["reasoning.encrypted_content"]`), the stateless way to
    /// keep a reasoning model's reasoning across requests (default on). Off, neither field is
    /// sent (the server decides what it stores); reasoning items that come back are still
    /// handed back.
    #[must_use]
    pub fn with_encrypted_reasoning(mut self, encrypted_reasoning: bool) -> Self {
        self.encrypted_reasoning = encrypted_reasoning;
        self
    }

    /// What a model of OpenAI's can do on this API, by its family (the table in
    /// `docs/native-deferral.md`): native deferral for `gpt-5.4` and later, reasoning items for
    /// the o-series and GPT-5 (not `gpt-5-chat`), structured output, parallel calls. A model of
    /// no known family can do none of the first three.
    ///
    /// ```
    /// use tinytools::providers::OpenAiResponses;
    ///
    /// let newest = OpenAiResponses::profile_for("gpt-5.4-mini");
    /// assert!(newest.native_deferral && newest.reasoning_items);
    /// let older = OpenAiResponses::profile_for("gpt-4.1");
    /// assert!(!older.native_deferral && !older.reasoning_items && older.structured_output);
    /// assert!(!OpenAiResponses::profile_for("o3").parallel_tool_calls);
    /// assert!(!OpenAiResponses::profile_for("my-fine-tune").native_deferral);
    /// ```
    pub fn profile_for(model: &str) -> ModelProfile {
        profile_for(OPENAI, model)
    }

    /// Replaces what the model can do (by default its family's, [`profile_for`](Self::profile_for)):
    /// for a model the table does not know, or a server that serves more or less than OpenAI.
    ///
    /// ```
    /// use tinytools::model::ChatModel;
    /// use tinytools::providers::OpenAiResponses;
    ///
    /// let tuned = OpenAiResponses::openai("sk-test", "ft:gpt-5.4:acme::x1")?;
    /// assert!(!tuned.profile().native_deferral);
    /// let tuned = tuned.with_profile(OpenAiResponses::profile_for("gpt-5.4"));
    /// assert!(tuned.profile().native_deferral && tuned.profile().reasoning_items);
    /// # Ok::<(), tinytools::providers::ConfigError>(())
    /// ```
    #[must_use]
    pub fn with_profile(mut self, profile: ModelProfile) -> Self {
        self.profile = profile;
        self
    }

    /// The model asked for.
    pub fn model(&self) -> &str {
        &self.model
    }

    /// The request body for a model request.
    pub fn body(&self, request: &ModelRequest) -> Value {
        let namespaces = request.native_deferral.as_ref().map(|native| Namespaces::of(native, self.namespace_limit));
        let stateless = self.encrypted_reasoning;
        let mut body = json!({"model": self.model, "input": wire::input(request, namespaces.as_ref(), stateless)});
        let tools = wire::tools(request, namespaces.as_ref());
        if !tools.is_empty() {
            body["tools"] = Value::Array(tools);
        }
        if let Some(max) = request.purpose.cap(self.max_output_tokens) {
            body["max_output_tokens"] = json!(max);
        }
        if let Some(output) = &request.output {
            body["text"] = super::output::responses_text(output);
        }
        if stateless {
            body["store"] = json!(false);
            if self.profile.reasoning_items {
                body["include"] = json!(["reasoning.encrypted_content"]);
            }
        }
        body
    }
}

/// Where the Responses API answers, under the base URL.
const PATH: &str = "responses";

#[async_trait::async_trait]
impl ChatModel for OpenAiResponses {
    /// The model's family's profile ([`OpenAiResponses::profile_for`]) or the host's
    /// ([`OpenAiResponses::with_profile`]).
    fn profile(&self) -> ModelProfile {
        self.profile
    }

    fn model_name(&self) -> Option<&str> {
        Some(&self.model)
    }

    fn provider_name(&self) -> Option<&str> {
        Some("openai")
    }

    async fn complete(&self, request: &ModelRequest) -> Result<ModelResponse, ModelError> {
        response(&self.endpoint.post(PATH, &self.body(request), request.max_response_bytes).await?)
    }

    /// Streams the answer (`stream: true`): text and call arguments as they come, the whole
    /// answer from `response.completed`; see [`ChatModel::stream`].
    fn stream<'a>(&'a self, request: &'a ModelRequest) -> ModelStream<'a> {
        let mut body = self.body(request);
        body["stream"] = json!(true);
        let max_bytes = request.max_response_bytes.unwrap_or(MAX_RESPONSE_BYTES);
        let connect = async move { self.endpoint.send(PATH, &body, max_bytes).await };
        sse_stream(connect, max_bytes, ResponseEvents::default())
    }
}
