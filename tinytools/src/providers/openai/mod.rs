//! [`OpenAiCompatible`]: the Chat Completions API, as OpenAI, OpenRouter, llama.cpp's
//! `llama-server`, Ollama and LM Studio serve it.

mod stream;

use serde_json::{Value, json};

use super::ConfigError;
use crate::model::{
    ChatModel, Message, ModelError, ModelProfile, ModelRequest, ModelResponse, ModelStream, ToolCall,
    aid_calls_as_notes,
};
use crate::providers::capabilities;
use crate::providers::endpoint::Endpoint;
use crate::providers::http::{HttpOptions, MAX_RESPONSE_BYTES};
use crate::providers::stream::sse_stream;
use crate::providers::usage::chat_usage;
use stream::ChatChunks;

/// A Chat Completions client.
///
/// ```
/// use tinytools::providers::OpenAiCompatible;
///
/// let local = OpenAiCompatible::local("http://127.0.0.1:8091/v1", "qwen2.5-coder-0.5b")?;
/// assert_eq!(local.model(), "qwen2.5-coder-0.5b");
/// let openrouter = OpenAiCompatible::openrouter("sk-or-secret", "openai/gpt-4.1-mini")?;
/// assert!(!format!("{openrouter:?}").contains("secret"));
/// # Ok::<(), tinytools::providers::ConfigError>(())
/// ```
#[derive(Clone)]
pub struct OpenAiCompatible {
    endpoint: Endpoint,
    model: String,
    max_tokens: Option<u32>,
    temperature: Option<f32>,
    profile: ModelProfile,
}

/// The base URL (without credentials it may carry) and the model only: never the key, nor
/// the extra headers, which often hold credentials too.
impl std::fmt::Debug for OpenAiCompatible {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("OpenAiCompatible")
            .field("base_url", &self.endpoint.shown_base_url())
            .field("model", &self.model)
            .finish_non_exhaustive()
    }
}

impl OpenAiCompatible {
    /// A client for any compatible server: `base_url` ends before `/chat/completions`.
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
            max_tokens: None,
            temperature: None,
        })
    }

    /// What `model` can do over Chat Completions: an OpenAI family's structured output and
    /// parallel calls (an OpenRouter `openai/` id too), by the table of
    /// `docs/native-deferral.md`; never native deferral or reasoning items, which Chat
    /// Completions does not carry. Any other model (a local server's, say) calls tools natively
    /// and nothing more: a typed run asks it for its answer's shape in words.
    ///
    /// ```
    /// use tinytools::providers::OpenAiCompatible;
    ///
    /// assert!(OpenAiCompatible::profile_for("gpt-4.1-mini").structured_output);
    /// assert!(OpenAiCompatible::profile_for("openai/gpt-4o").structured_output);
    /// assert!(!OpenAiCompatible::profile_for("gpt-5.4").native_deferral);
    /// assert!(!OpenAiCompatible::profile_for("my-local-model").structured_output);
    /// ```
    pub fn profile_for(model: &str) -> ModelProfile {
        let family = model.strip_prefix("openai/").unwrap_or(model);
        capabilities::profile_for(capabilities::OPENAI, family).with_native_deferral(false).with_reasoning_items(false)
    }

    /// Replaces what the model can do (by default [`profile_for`](Self::profile_for)): a
    /// local server that constrains answers to a schema itself, for example.
    #[must_use]
    pub fn with_profile(mut self, profile: ModelProfile) -> Self {
        self.profile = profile;
        self
    }

    /// OpenAI.
    ///
    /// # Errors
    /// As [`new`](Self::new).
    pub fn openai(api_key: impl Into<String>, model: impl Into<String>) -> Result<Self, ConfigError> {
        Ok(Self::new("https://api.openai.com/v1", model, HttpOptions::default())?.with_api_key(api_key))
    }

    /// OpenRouter.
    ///
    /// # Errors
    /// As [`new`](Self::new).
    pub fn openrouter(api_key: impl Into<String>, model: impl Into<String>) -> Result<Self, ConfigError> {
        let client = Self::new("https://openrouter.ai/api/v1", model, HttpOptions::default())?.with_api_key(api_key);
        Ok(client.with_header("X-Title", "tinytools"))
    }

    /// A local server: llama.cpp's `llama-server` (`http://127.0.0.1:8080/v1`), Ollama
    /// (`http://127.0.0.1:11434/v1`), LM Studio (`http://127.0.0.1:1234/v1`). No key;
    /// [`HttpOptions::local`] timeouts.
    ///
    /// # Errors
    /// As [`new`](Self::new).
    pub fn local(base_url: impl Into<String>, model: impl Into<String>) -> Result<Self, ConfigError> {
        Self::new(base_url, model, HttpOptions::local())
    }

    /// From the environment: `OPENROUTER_API_KEY` (with `TINYTOOLS_MODEL`, default
    /// `openai/gpt-4.1-mini`), else `TINYTOOLS_BASE_URL` (with `TINYTOOLS_MODEL` and an optional
    /// `TINYTOOLS_API_KEY`), else `OPENAI_API_KEY` (default model `gpt-4.1-mini`).
    ///
    /// # Errors
    /// [`ConfigError::MissingVariable`] when none is set.
    pub fn from_env() -> Result<Self, ConfigError> {
        let var = |name: &str| std::env::var(name).ok().filter(|value| !value.trim().is_empty());
        let model = |default: &str| var("TINYTOOLS_MODEL").unwrap_or_else(|| default.to_owned());
        if let Some(key) = var("OPENROUTER_API_KEY") {
            return Self::openrouter(key, model("openai/gpt-4.1-mini"));
        }
        if let Some(base_url) = var("TINYTOOLS_BASE_URL") {
            let client = Self::local(base_url, model("local"))?;
            return Ok(match var("TINYTOOLS_API_KEY") {
                Some(key) => client.with_api_key(key),
                None => client,
            });
        }
        if let Some(key) = var("OPENAI_API_KEY") {
            return Self::openai(key, model("gpt-4.1-mini"));
        }
        Err(ConfigError::MissingVariable("OPENROUTER_API_KEY, TINYTOOLS_BASE_URL or OPENAI_API_KEY"))
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

    /// Caps every answer at this many tokens (`max_tokens`): a small model that starts
    /// repeating itself stops there instead of at the server's context limit.
    ///
    /// ```
    /// use tinytools::providers::OpenAiCompatible;
    ///
    /// let client = OpenAiCompatible::local("http://127.0.0.1:8091/v1", "qwen")?.with_max_tokens(512);
    /// let body = client.with_temperature(0.0).body(&Default::default());
    /// assert_eq!((body["max_tokens"].as_u64(), body["temperature"].as_f64()), (Some(512), Some(0.0)));
    /// # Ok::<(), tinytools::providers::ConfigError>(())
    /// ```
    #[must_use]
    pub fn with_max_tokens(mut self, max_tokens: u32) -> Self {
        self.max_tokens = Some(max_tokens);
        self
    }

    /// Samples at this temperature (`0.0`: greedy, the same answer for the same request);
    /// without it the server's default applies.
    #[must_use]
    pub fn with_temperature(mut self, temperature: f32) -> Self {
        self.temperature = Some(temperature).filter(|t| t.is_finite() && *t >= 0.0);
        self
    }

    /// The model asked for.
    pub fn model(&self) -> &str {
        &self.model
    }

    /// The request body for a model request.
    pub fn body(&self, request: &ModelRequest) -> Value {
        let messages: Vec<Value> = aid_calls_as_notes(&request.messages).iter().filter_map(message).collect();
        let mut body = json!({"model": self.model, "messages": messages});
        if !request.tools.is_empty() {
            let tools: Vec<Value> = request
                .tools
                .iter()
                .map(|tool| json!({"type": "function", "function": {"name": tool.name, "description": tool.description, "parameters": tool.parameters}}))
                .collect();
            body["tools"] = Value::Array(tools);
        }
        if let Some(max_tokens) = request.purpose.cap(self.max_tokens) {
            body["max_tokens"] = json!(max_tokens);
        }
        if let Some(temperature) = self.temperature {
            body["temperature"] = json!(temperature);
        }
        if let Some(output) = &request.output {
            body["response_format"] = super::output::chat_response_format(output);
        }
        body
    }
}

/// A message as Chat Completions takes it; a provider's own search (which Chat Completions
/// cannot run) has no form and is passed over.
fn message(message: &Message) -> Option<Value> {
    Some(match message {
        Message::System { content } => json!({"role": "system", "content": content}),
        Message::User { content } | Message::Feedback { content } => json!({"role": "user", "content": content}),
        Message::Assistant { content, tool_calls } if tool_calls.is_empty() => {
            json!({"role": "assistant", "content": content})
        }
        Message::Assistant { content, tool_calls } => {
            let calls: Vec<Value> = tool_calls
                .iter()
                .map(|call| json!({"id": call.id, "type": "function", "function": {"name": call.name, "arguments": call.arguments}}))
                .collect();
            let content = if content.is_empty() { Value::Null } else { json!(content) };
            json!({"role": "assistant", "content": content, "tool_calls": calls})
        }
        Message::Tool { call_id, content, .. } => json!({"role": "tool", "tool_call_id": call_id, "content": content}),
        // An aid's call is a note by now (`aid_calls_as_notes`).
        Message::ProviderSearch(_) | Message::ProviderItems(_) | Message::AidCall { .. } => return None,
    })
}

/// Reads a Chat Completions response.
pub(crate) fn response(body: &Value) -> Result<ModelResponse, ModelError> {
    let Some(choice) = body["choices"].get(0) else {
        return Err(ModelError::Transport(format!("the response has no choices: {}", excerpt(body))));
    };
    let message = &choice["message"];
    let content = message["content"].as_str().unwrap_or_default().to_owned();
    let tool_calls = message["tool_calls"]
        .as_array()
        .into_iter()
        .flatten()
        .enumerate()
        .map(|(i, call)| {
            let function = &call["function"];
            let arguments = match &function["arguments"] {
                Value::String(text) => text.clone(),
                Value::Null => String::new(),
                other => other.to_string(),
            };
            ToolCall {
                id: call["id"].as_str().map_or_else(|| format!("call_{i}"), str::to_owned),
                name: function["name"].as_str().unwrap_or_default().to_owned(),
                arguments,
            }
        })
        .collect();
    let usage = body.get("usage").and_then(chat_usage);
    Ok(ModelResponse { content, tool_calls, usage, searches: Vec::new(), provider_items: None })
}

fn excerpt(body: &Value) -> String {
    body.to_string().chars().take(300).collect()
}

/// Where Chat Completions answers, under the base URL.
const PATH: &str = "chat/completions";

#[async_trait::async_trait]
impl ChatModel for OpenAiCompatible {
    fn profile(&self) -> ModelProfile {
        self.profile
    }

    fn model_name(&self) -> Option<&str> {
        Some(&self.model)
    }

    /// `openai` or `openrouter` by the base URL; any other server (a local one, say) is not
    /// named.
    fn provider_name(&self) -> Option<&str> {
        let base = self.endpoint.shown_base_url();
        if base.contains("api.openai.com") {
            Some("openai")
        } else if base.contains("openrouter.ai") {
            Some("openrouter")
        } else {
            None
        }
    }

    async fn complete(&self, request: &ModelRequest) -> Result<ModelResponse, ModelError> {
        response(&self.endpoint.post(PATH, &self.body(request), request.max_response_bytes).await?)
    }

    /// Streams the answer (`stream: true`, with `stream_options.include_usage`), its tool
    /// calls assembled by index; see [`ChatModel::stream`].
    fn stream<'a>(&'a self, request: &'a ModelRequest) -> ModelStream<'a> {
        let mut body = self.body(request);
        body["stream"] = json!(true);
        body["stream_options"] = json!({"include_usage": true});
        let max_bytes = request.max_response_bytes.unwrap_or(MAX_RESPONSE_BYTES);
        let connect = async move { self.endpoint.send(PATH, &body, max_bytes).await };
        sse_stream(connect, max_bytes, ChatChunks::default())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn debug_shows_the_endpoint_and_model_but_no_key_or_header() -> Result<(), ConfigError> {
        let client = OpenAiCompatible::new("https://proxy.example/v1/", "gpt-4.1-mini", HttpOptions::default())?
            .with_api_key("sk-live-KEY123")
            .with_header("X-Proxy-Token", "hdr-SECRET456")
            .with_header("X-Title", "tinytools");
        let shown = format!("{client:?}");
        assert_eq!(shown, r#"OpenAiCompatible { base_url: "https://proxy.example/v1", model: "gpt-4.1-mini", .. }"#);
        let pretty = format!("{client:#?}");
        for secret in ["KEY123", "SECRET456", "X-Proxy-Token", "X-Title"] {
            assert!(!shown.contains(secret) && !pretty.contains(secret), "{secret} in {pretty}");
        }
        let with_credentials = OpenAiCompatible::local("http://user:pa55@127.0.0.1:8080/v1?key=QUERYKEY", "local")?;
        let shown = format!("{with_credentials:?}");
        assert!(!shown.contains("pa55") && !shown.contains("QUERYKEY"), "{shown}");
        assert!(shown.contains("127.0.0.1:8080/v1"), "{shown}");
        Ok(())
    }

    #[test]
    fn a_keyword_request_s_answer_is_capped_below_the_client_s_cap() -> Result<(), ConfigError> {
        use crate::model::RequestPurpose;
        let keywords = ModelRequest { purpose: RequestPurpose::Keywords, ..ModelRequest::default() };
        let uncapped = OpenAiCompatible::local("http://127.0.0.1:8091/v1", "local")?;
        assert_eq!(uncapped.body(&keywords)["max_tokens"], 32);
        assert!(uncapped.body(&ModelRequest::default()).get("max_tokens").is_none(), "a turn keeps the server's");
        let small = uncapped.clone().with_max_tokens(16);
        assert_eq!(small.body(&keywords)["max_tokens"], 16, "a smaller cap of the client's stands");
        let large = uncapped.with_max_tokens(512);
        assert_eq!(
            (large.body(&keywords)["max_tokens"].as_u64(), large.body(&ModelRequest::default())["max_tokens"].as_u64()),
            (Some(32), Some(512))
        );
        Ok(())
    }
}
