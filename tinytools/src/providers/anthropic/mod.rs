//! [`Anthropic`]: the Messages API — tools, `tool_use` and `tool_result` blocks, usage with
//! the prompt cache's share, cache breakpoints, and native deferral with Anthropic's tool
//! search (the wire format is `wire.rs`), its paused turns continued (`pause.rs`).

mod pause;
mod stream;
mod wire;

pub use wire::AnthropicToolSearch;

use serde_json::{Value, json};

use super::ConfigError;
use super::capabilities::{ANTHROPIC, profile_for};
use crate::model::{ChatModel, ModelError, ModelProfile, ModelRequest, ModelResponse, ModelStream};
use crate::providers::http::{ApiKey, Http, HttpOptions, MAX_RESPONSE_BYTES, redacted_url};
use crate::providers::usage::anthropic_usage;
use pause::{MAX_CONTINUATIONS, Turn, paused_too_long};
use stream::Segment;
use wire::{Options, read_blocks};

/// An Anthropic Messages client.
///
/// What the model can do comes from its family ([`profile_for`](Self::profile_for)): the
/// models Anthropic lists for tool search (Claude Sonnet 4.5, Opus 4.5, Haiku 4.5 and later)
/// defer natively, so a run asking for provider-native deferral with an older model uses the
/// run's `tool_search` bridge. [`with_profile`](Self::with_profile) replaces it.
///
/// ```
/// use tinytools::providers::Anthropic;
///
/// let claude = Anthropic::new("sk-ant-secret", "claude-haiku-4-5")?;
/// assert!(!format!("{claude:?}").contains("secret"));
/// # Ok::<(), tinytools::providers::ConfigError>(())
/// ```
#[derive(Clone)]
pub struct Anthropic {
    http: Http,
    base_url: String,
    api_key: ApiKey,
    model: String,
    max_tokens: u32,
    caching: bool,
    search: AnthropicToolSearch,
    max_continuations: usize,
    profile: ModelProfile,
}

/// The base URL (without credentials it may carry) and the model only: never the key.
impl std::fmt::Debug for Anthropic {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Anthropic")
            .field("base_url", &redacted_url(&self.base_url))
            .field("model", &self.model)
            .finish_non_exhaustive()
    }
}

impl Anthropic {
    /// A client for `api.anthropic.com`, answering up to 1,024 tokens.
    ///
    /// # Errors
    /// [`ConfigError::Client`] when the HTTP client cannot be built.
    pub fn new(api_key: impl Into<String>, model: impl Into<String>) -> Result<Self, ConfigError> {
        Self::with_base_url("https://api.anthropic.com", api_key, model, HttpOptions::default())
    }

    /// A client for another endpoint (a proxy, a test server).
    ///
    /// # Errors
    /// As [`new`](Self::new).
    pub fn with_base_url(
        base_url: impl Into<String>,
        api_key: impl Into<String>,
        model: impl Into<String>,
        options: HttpOptions,
    ) -> Result<Self, ConfigError> {
        let model = model.into();
        Ok(Self {
            http: Http::new(options)?,
            base_url: base_url.into().trim_end_matches('/').to_owned(),
            api_key: ApiKey::new(api_key),
            profile: Self::profile_for(&model),
            model,
            max_tokens: 1_024,
            caching: true,
            search: AnthropicToolSearch::default(),
            max_continuations: MAX_CONTINUATIONS,
        })
    }

    /// What a Claude model can do, by its family (the table in `docs/native-deferral.md`):
    /// native deferral for the models Anthropic's tool search page lists, reasoning (extended
    /// thinking) from Claude Sonnet 3.7 on, structured output from the 4.5 models on, parallel
    /// tool use for all. A model of no known family can do none of the first three.
    ///
    /// ```
    /// use tinytools::providers::Anthropic;
    ///
    /// assert!(Anthropic::profile_for("claude-haiku-4-5-20251001").native_deferral);
    /// assert!(!Anthropic::profile_for("claude-opus-4-1-20250805").native_deferral);
    /// assert!(!Anthropic::profile_for("claude-3-7-sonnet-20250219").native_deferral);
    /// ```
    pub fn profile_for(model: &str) -> ModelProfile {
        profile_for(ANTHROPIC, model)
    }

    /// Replaces what the model can do (by default its family's, [`profile_for`](Self::profile_for)).
    ///
    /// ```
    /// use tinytools::model::{ChatModel, ModelProfile};
    /// use tinytools::providers::Anthropic;
    ///
    /// let claude = Anthropic::new("sk-ant-test", "claude-sonnet-4-5")?;
    /// assert!(claude.profile().native_deferral);
    /// let bridged = claude.with_profile(ModelProfile::default());
    /// assert!(!bridged.profile().native_deferral);
    /// # Ok::<(), tinytools::providers::ConfigError>(())
    /// ```
    #[must_use]
    pub fn with_profile(mut self, profile: ModelProfile) -> Self {
        self.profile = profile;
        self
    }

    /// Sets the answer's token limit.
    #[must_use]
    pub fn with_max_tokens(mut self, max_tokens: u32) -> Self {
        self.max_tokens = max_tokens;
        self
    }

    /// Writes cache breakpoints (`cache_control`) on the last tool that is not deferred, on
    /// the system prompt and on the conversation's last block (default on): every request of
    /// a run reads the one before it from Anthropic's prompt cache, and with native deferral a
    /// discovery changes nothing before the new turn. A deferred tool never carries one.
    #[must_use]
    pub fn with_prompt_caching(mut self, caching: bool) -> Self {
        self.caching = caching;
        self
    }

    /// Sets which tool search a natively deferred request carries (default
    /// [`AnthropicToolSearch::Bm25`]).
    #[must_use]
    pub fn with_tool_search(mut self, search: AnthropicToolSearch) -> Self {
        self.search = search;
        self
    }

    /// Sets how many times one paused turn is continued (default 5). With server tools (the
    /// hosted tool search) Anthropic may stop a long turn with `stop_reason: "pause_turn"`;
    /// the client sends the turn's content back as it came and the answer goes on.
    /// [`complete`](ChatModel::complete) and [`stream`](ChatModel::stream) do so and return
    /// the whole turn as one answer (its parts' text, calls and searches in order, the usage
    /// summed); a turn still paused after this many continuations is
    /// [`ModelError::TurnPaused`], and no call in it runs. `0` never continues.
    #[must_use]
    pub fn with_max_continuations(mut self, max_continuations: usize) -> Self {
        self.max_continuations = max_continuations;
        self
    }

    /// The request body: system text apart, consecutive same-role turns merged (the API wants
    /// them alternating), tool results as `tool_result` blocks of a user turn, cache
    /// breakpoints on the last tool that is not deferred, the system prompt and the last block. A natively
    /// deferred request ([`ModelRequest::native_deferral`]) also carries every deferred tool
    /// with `defer_loading: true` and, unless the run answers the searches, Anthropic's tool
    /// search tool.
    ///
    /// ```
    /// use tinytools::model::{Message, ModelRequest};
    /// use tinytools::providers::Anthropic;
    ///
    /// let claude = Anthropic::new("sk-ant-secret", "claude-haiku-4-5")?;
    /// let request = ModelRequest::new(vec![Message::system("Use tools."), Message::user("Hi")], Vec::new());
    /// let body = claude.body(&request);
    /// assert_eq!(body["system"][0]["cache_control"]["type"], "ephemeral");
    /// assert_eq!(claude.with_prompt_caching(false).body(&request)["system"], "Use tools.");
    /// # Ok::<(), tinytools::providers::ConfigError>(())
    /// ```
    pub fn body(&self, request: &ModelRequest) -> Value {
        let max_tokens = request.purpose.cap(Some(self.max_tokens)).unwrap_or(self.max_tokens);
        let options = Options { model: &self.model, max_tokens, caching: self.caching, search: self.search };
        wire::body(request, &options)
    }
}

/// One message of the API, read whole (a part of the turn, when it paused).
fn segment(body: &Value) -> Result<Segment, ModelError> {
    let Some(blocks) = body["content"].as_array() else {
        return Err(ModelError::Transport(format!(
            "the response has no content: {}",
            body.to_string().chars().take(300).collect::<String>()
        )));
    };
    let (content, calls, _) = read_blocks(blocks);
    let usage = anthropic_usage(&body["usage"], None);
    let stop_reason = body["stop_reason"].as_str().map(str::to_owned);
    Ok(Segment { content, calls, usage, blocks: blocks.clone(), stop_reason })
}

impl Anthropic {
    /// The key and the API version. Tool search is generally available: no `anthropic-beta`.
    fn headers(&self) -> Vec<(&'static str, String)> {
        vec![("x-api-key", self.api_key.expose().to_owned()), ("anthropic-version", "2023-06-01".to_owned())]
    }

    fn url(&self) -> String {
        format!("{}/v1/messages", self.base_url)
    }
}

#[async_trait::async_trait]
impl ChatModel for Anthropic {
    /// The model's family's profile ([`Anthropic::profile_for`]) or the host's
    /// ([`Anthropic::with_profile`]).
    fn profile(&self) -> ModelProfile {
        self.profile
    }

    fn model_name(&self) -> Option<&str> {
        Some(&self.model)
    }

    fn provider_name(&self) -> Option<&str> {
        Some("anthropic")
    }

    /// One answer; a paused turn is continued (see
    /// [`with_max_continuations`](Anthropic::with_max_continuations)).
    async fn complete(&self, request: &ModelRequest) -> Result<ModelResponse, ModelError> {
        let headers = self.headers();
        let base = self.body(request);
        let mut turn = Turn::default();
        for _ in 0..=self.max_continuations {
            let body = turn.request(&base);
            let part = segment(&self.http.post(&self.url(), &headers, &body, request.max_response_bytes).await?)?;
            if !part.paused() {
                return Ok(turn.finish(part));
            }
            turn.add(part);
        }
        Err(paused_too_long(self.max_continuations))
    }

    /// Streams the answer (`stream: true`): text and `input_json_delta` pieces as they come,
    /// a paused turn continued in the same stream; see [`ChatModel::stream`].
    fn stream<'a>(&'a self, request: &'a ModelRequest) -> ModelStream<'a> {
        let mut base = self.body(request);
        base["stream"] = json!(true);
        let max_bytes = request.max_response_bytes.unwrap_or(MAX_RESPONSE_BYTES);
        let headers = self.headers();
        let send = move |body: Value| {
            let headers = headers.clone();
            async move { self.http.send(&self.url(), &headers, &body, max_bytes).await }
        };
        pause::stream(base, self.max_continuations, max_bytes, send)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn debug_shows_the_endpoint_and_model_but_no_key() -> Result<(), ConfigError> {
        let client = Anthropic::new("sk-ant-KEY123", "claude-haiku-4-5")?.with_max_tokens(64);
        let shown = format!("{client:?}");
        assert_eq!(shown, r#"Anthropic { base_url: "https://api.anthropic.com", model: "claude-haiku-4-5", .. }"#);
        assert!(!format!("{client:#?}").contains("KEY123"));
        Ok(())
    }

    #[test]
    fn a_keyword_request_s_answer_is_capped_at_32_tokens() -> Result<(), ConfigError> {
        use crate::model::RequestPurpose;
        let keywords = ModelRequest { purpose: RequestPurpose::Keywords, ..ModelRequest::default() };
        let client = Anthropic::new("k", "claude-haiku-4-5")?;
        assert_eq!(
            (
                client.body(&keywords)["max_tokens"].as_u64(),
                client.body(&ModelRequest::default())["max_tokens"].as_u64()
            ),
            (Some(32), Some(1_024))
        );
        assert_eq!(client.with_max_tokens(16).body(&keywords)["max_tokens"], 16);
        Ok(())
    }
}
