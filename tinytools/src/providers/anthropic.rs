//! [`Anthropic`]: the Messages API — tools, `tool_use` and `tool_result` blocks, usage.

use serde_json::{Value, json};

use super::ConfigError;
use super::anthropic_stream::MessageEvents;
use super::http::{ApiKey, Http, HttpOptions, MAX_RESPONSE_BYTES, redacted_url};
use super::stream::sse_stream;
use crate::model::{ChatModel, Message, ModelError, ModelRequest, ModelResponse, ModelStream, ToolCall, Usage};

/// An Anthropic Messages client.
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
        Ok(Self {
            http: Http::new(options)?,
            base_url: base_url.into().trim_end_matches('/').to_owned(),
            api_key: ApiKey::new(api_key),
            model: model.into(),
            max_tokens: 1_024,
        })
    }

    /// Sets the answer's token limit.
    #[must_use]
    pub fn with_max_tokens(mut self, max_tokens: u32) -> Self {
        self.max_tokens = max_tokens;
        self
    }

    /// The request body: system text apart, consecutive same-role turns merged (the API wants
    /// them alternating), tool results as `tool_result` blocks of a user turn.
    pub fn body(&self, request: &ModelRequest) -> Value {
        let mut system = Vec::new();
        let mut turns: Vec<(&str, Vec<Value>)> = Vec::new();
        for message in &request.messages {
            let (role, blocks) = match message {
                Message::System { content } => {
                    system.push(content.clone());
                    continue;
                }
                Message::User { content } | Message::Feedback { content } => {
                    ("user", vec![json!({"type": "text", "text": content})])
                }
                Message::Assistant { content, tool_calls } => {
                    let mut blocks = Vec::new();
                    if !content.is_empty() {
                        blocks.push(json!({"type": "text", "text": content}));
                    }
                    for call in tool_calls {
                        let input: Value = serde_json::from_str(&call.arguments)
                            .ok()
                            .filter(Value::is_object)
                            .unwrap_or_else(|| json!({}));
                        blocks.push(json!({"type": "tool_use", "id": call.id, "name": call.name, "input": input}));
                    }
                    ("assistant", blocks)
                }
                Message::Tool { call_id, content, is_error, .. } => (
                    "user",
                    vec![
                        json!({"type": "tool_result", "tool_use_id": call_id, "content": content, "is_error": is_error}),
                    ],
                ),
            };
            match turns.last_mut() {
                Some((last, existing)) if *last == role => existing.extend(blocks),
                _ => turns.push((role, blocks)),
            }
        }
        let messages: Vec<Value> =
            turns.into_iter().map(|(role, content)| json!({"role": role, "content": content})).collect();
        let mut body = json!({"model": self.model, "max_tokens": self.max_tokens, "messages": messages});
        if !system.is_empty() {
            body["system"] = json!(system.join("\n\n"));
        }
        if !request.tools.is_empty() {
            let tools: Vec<Value> = request
                .tools
                .iter()
                .map(
                    |tool| json!({"name": tool.name, "description": tool.description, "input_schema": tool.parameters}),
                )
                .collect();
            body["tools"] = Value::Array(tools);
        }
        body
    }
}

fn response(body: &Value) -> Result<ModelResponse, ModelError> {
    let Some(blocks) = body["content"].as_array() else {
        return Err(ModelError::Transport(format!(
            "the response has no content: {}",
            body.to_string().chars().take(300).collect::<String>()
        )));
    };
    let mut content = String::new();
    let mut tool_calls = Vec::new();
    for block in blocks {
        match block["type"].as_str() {
            Some("text") => content.push_str(block["text"].as_str().unwrap_or_default()),
            Some("tool_use") => tool_calls.push(ToolCall {
                id: block["id"].as_str().unwrap_or_default().to_owned(),
                name: block["name"].as_str().unwrap_or_default().to_owned(),
                arguments: block["input"].to_string(),
            }),
            _ => {}
        }
    }
    let usage = body["usage"].as_object().map(|usage| Usage {
        prompt_tokens: usage.get("input_tokens").and_then(Value::as_u64).unwrap_or(0),
        completion_tokens: usage.get("output_tokens").and_then(Value::as_u64).unwrap_or(0),
    });
    Ok(ModelResponse { content, tool_calls, usage })
}

impl Anthropic {
    fn headers(&self) -> [(&'static str, String); 2] {
        [("x-api-key", self.api_key.expose().to_owned()), ("anthropic-version", "2023-06-01".to_owned())]
    }

    fn url(&self) -> String {
        format!("{}/v1/messages", self.base_url)
    }
}

#[async_trait::async_trait]
impl ChatModel for Anthropic {
    async fn complete(&self, request: &ModelRequest) -> Result<ModelResponse, ModelError> {
        let body =
            self.http.post(&self.url(), &self.headers(), &self.body(request), request.max_response_bytes).await?;
        response(&body)
    }

    /// Streams the answer (`stream: true`): text and `input_json_delta` pieces as they come;
    /// see [`ChatModel::stream`].
    fn stream<'a>(&'a self, request: &'a ModelRequest) -> ModelStream<'a> {
        let mut body = self.body(request);
        body["stream"] = json!(true);
        let max_bytes = request.max_response_bytes.unwrap_or(MAX_RESPONSE_BYTES);
        let connect = async move { self.http.send(&self.url(), &self.headers(), &body, max_bytes).await };
        sse_stream(connect, max_bytes, MessageEvents::default())
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
}
