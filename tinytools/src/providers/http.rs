//! The HTTP layer both providers share: one request with timeouts, retries with backoff on
//! 429 and 5xx (honouring `Retry-After`), and errors that say what the provider said.

use std::fmt;
use std::time::Duration;

use serde_json::Value;

use super::ConfigError;
use crate::model::ModelError;

/// An API key. Its `Debug` and `Display` never show it.
///
/// ```
/// use tinytools::providers::ApiKey;
///
/// let key = ApiKey::new("sk-live-1234");
/// assert_eq!(format!("{key:?}"), "ApiKey(****)");
/// assert_eq!(key.expose(), "sk-live-1234");
/// ```
#[derive(Clone, PartialEq, Eq)]
pub struct ApiKey(String);

impl ApiKey {
    /// Wraps a key.
    pub fn new(key: impl Into<String>) -> Self {
        Self(key.into())
    }

    /// The key itself, for the request header only.
    pub fn expose(&self) -> &str {
        &self.0
    }
}

impl fmt::Debug for ApiKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("ApiKey(****)")
    }
}

impl fmt::Display for ApiKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("****")
    }
}

/// A base URL as `Debug` may show it: without the user and password of
/// `https://user:secret@host/...` and without its query (`?key=...`), where URLs carry
/// credentials.
pub(crate) fn redacted_url(url: &str) -> String {
    let (scheme, rest) = url.split_once("://").unwrap_or(("", url));
    let authority_end = rest.find(['/', '?', '#']).unwrap_or(rest.len());
    let (authority, path) = rest.split_at(authority_end);
    let host = authority.rsplit_once('@').map_or(authority, |(_, host)| host);
    let path = match path.find(['?', '#']) {
        Some(at) => format!("{}?…", &path[..at]),
        None => path.to_owned(),
    };
    let userinfo = if host.len() < authority.len() { "…@" } else { "" };
    if scheme.is_empty() { format!("{userinfo}{host}{path}") } else { format!("{scheme}://{userinfo}{host}{path}") }
}

/// How failed requests are retried.
///
/// ```
/// use std::time::Duration;
/// use tinytools::providers::{HttpOptions, Retry};
///
/// let retry = Retry::default().with_max_retries(5).with_base_delay(Duration::from_millis(100));
/// let options = HttpOptions::default().with_retry(retry);
/// assert_eq!((options.retry.max_retries, options.retry.max_delay), (5, Duration::from_secs(30)));
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct Retry {
    /// Retries after the first attempt.
    pub max_retries: u32,
    /// The first backoff; it doubles each retry.
    pub base_delay: Duration,
    /// The longest wait, `Retry-After` included.
    pub max_delay: Duration,
    /// Whether a request that ran out of time is sent again. A local server that timed out is
    /// still busy with the same prompt: sending it again only queues a second copy.
    pub retry_timeouts: bool,
}

impl Default for Retry {
    fn default() -> Self {
        Self {
            max_retries: 3,
            base_delay: Duration::from_millis(500),
            max_delay: Duration::from_secs(30),
            retry_timeouts: true,
        }
    }
}

/// Timeouts and retries.
///
/// ```
/// use std::time::Duration;
/// use tinytools::providers::HttpOptions;
///
/// let options = HttpOptions::local().with_timeout(Duration::from_secs(900));
/// assert_eq!(options.timeout.as_secs(), 900);
/// assert!(!options.retry.retry_timeouts);
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct HttpOptions {
    /// The whole request's time limit.
    pub timeout: Duration,
    /// Retry behaviour.
    pub retry: Retry,
}

impl Retry {
    /// Sets the retries after the first attempt.
    #[must_use]
    pub const fn with_max_retries(mut self, max_retries: u32) -> Self {
        self.max_retries = max_retries;
        self
    }

    /// Sets the first backoff.
    #[must_use]
    pub const fn with_base_delay(mut self, base_delay: Duration) -> Self {
        self.base_delay = base_delay;
        self
    }

    /// Sets the longest wait, `Retry-After` included.
    #[must_use]
    pub const fn with_max_delay(mut self, max_delay: Duration) -> Self {
        self.max_delay = max_delay;
        self
    }

    /// Sets whether a request that ran out of time is sent again.
    #[must_use]
    pub const fn with_retry_timeouts(mut self, retry_timeouts: bool) -> Self {
        self.retry_timeouts = retry_timeouts;
        self
    }
}

impl Default for HttpOptions {
    fn default() -> Self {
        Self { timeout: Duration::from_secs(120), retry: Retry::default() }
    }
}

impl HttpOptions {
    /// For a model served on this machine (llama.cpp, Ollama, LM Studio): ten minutes a request
    /// (a cold first call of a few thousand prompt tokens takes minutes on two CPU cores), and a
    /// timed-out request is not sent again.
    ///
    /// ```
    /// use tinytools::providers::HttpOptions;
    ///
    /// let local = HttpOptions::local();
    /// assert_eq!(local.timeout.as_secs(), 600);
    /// assert!(!local.retry.retry_timeouts);
    /// ```
    pub fn local() -> Self {
        Self { timeout: Duration::from_secs(600), retry: Retry { retry_timeouts: false, ..Retry::default() } }
    }

    /// Sets the whole request's time limit.
    #[must_use]
    pub const fn with_timeout(mut self, timeout: Duration) -> Self {
        self.timeout = timeout;
        self
    }

    /// Sets the retry behaviour.
    #[must_use]
    pub const fn with_retry(mut self, retry: Retry) -> Self {
        self.retry = retry;
        self
    }
}

/// A configured HTTP client.
#[derive(Clone, Debug)]
pub(crate) struct Http {
    client: reqwest::Client,
    options: HttpOptions,
}

impl Http {
    pub(crate) fn new(options: HttpOptions) -> Result<Self, ConfigError> {
        // rustls needs a process-wide crypto provider; installing it twice is harmless.
        let _ = rustls::crypto::ring::default_provider().install_default();
        let client = reqwest::Client::builder()
            .timeout(options.timeout)
            .build()
            .map_err(|err| ConfigError::Client(err.to_string()))?;
        Ok(Self { client, options })
    }

    /// POSTs a JSON body, retrying 429, 5xx (and 529) and transport failures with backoff. A
    /// response body past `max_bytes` (default [`MAX_RESPONSE_BYTES`]) is an error, found
    /// while it is read (a declared `Content-Length` past it before reading anything).
    pub(crate) async fn post(
        &self,
        url: &str,
        headers: &[(&str, String)],
        body: &Value,
        max_bytes: Option<usize>,
    ) -> Result<Value, ModelError> {
        let max_bytes = max_bytes.unwrap_or(MAX_RESPONSE_BYTES);
        let response = self.send(url, headers, body, max_bytes).await?;
        let text = read_bounded(response, max_bytes).await?;
        serde_json::from_str(&text)
            .map_err(|err| ModelError::Transport(format!("the provider answered with unreadable JSON ({err})")))
    }

    /// POSTs a JSON body as [`post`](Self::post) does, retries included, and returns the
    /// successful response before reading its body (a stream's). Its body is read within the
    /// client's timeout: the whole request's time limit covers the stream to its end.
    pub(crate) async fn send(
        &self,
        url: &str,
        headers: &[(&str, String)],
        body: &Value,
        max_bytes: usize,
    ) -> Result<reqwest::Response, ModelError> {
        let mut attempt = 0;
        loop {
            let mut request = self.client.post(url).header("content-type", "application/json");
            for (name, value) in headers {
                request = request.header(*name, value);
            }
            let outcome = request.body(body.to_string()).send().await;
            let retryable = attempt < self.options.retry.max_retries;
            match outcome {
                Err(err) => {
                    if !retryable || (err.is_timeout() && !self.options.retry.retry_timeouts) {
                        return Err(ModelError::Transport(transport_message(&err)));
                    }
                    tracing::warn!(target: "tinytools::providers", attempt, error = %transport_message(&err), "retrying");
                    tokio::time::sleep(self.backoff(attempt, None)).await;
                }
                Ok(response) if response.status().is_success() => return Ok(response),
                Ok(response) => {
                    let status = response.status().as_u16();
                    let retry_after = response
                        .headers()
                        .get("retry-after")
                        .and_then(|v| v.to_str().ok())
                        .and_then(|v| v.trim().parse::<u64>().ok());
                    let error = provider_error(status, &read_bounded(response, max_bytes).await?);
                    let transient = status == 429 || status >= 500;
                    if !transient || !retryable || matches!(error, ModelError::ContextLength { .. }) {
                        return Err(error);
                    }
                    tracing::warn!(target: "tinytools::providers", attempt, status, "retrying");
                    tokio::time::sleep(self.backoff(attempt, retry_after)).await;
                }
            }
            attempt += 1;
        }
    }

    fn backoff(&self, attempt: u32, retry_after: Option<u64>) -> Duration {
        let retry = self.options.retry;
        let exponential = retry.base_delay.saturating_mul(2_u32.saturating_pow(attempt));
        retry_after.map_or(exponential, Duration::from_secs).min(retry.max_delay)
    }
}

/// The largest response body read when the request names no cap: 8 MiB.
pub(crate) const MAX_RESPONSE_BYTES: usize = 8 << 20;

/// Reads a response body chunk by chunk, refusing it once it passes `max_bytes`.
async fn read_bounded(mut response: reqwest::Response, max_bytes: usize) -> Result<String, ModelError> {
    let too_large = || ModelError::ResponseTooLarge { limit: max_bytes };
    if response.content_length().is_some_and(|declared| declared > max_bytes as u64) {
        return Err(too_large());
    }
    let mut body: Vec<u8> = Vec::new();
    while let Some(chunk) = response.chunk().await.map_err(|err| ModelError::Transport(transport_message(&err)))? {
        if body.len() + chunk.len() > max_bytes {
            return Err(too_large());
        }
        body.extend_from_slice(&chunk);
    }
    Ok(String::from_utf8_lossy(&body).into_owned())
}

/// What the provider said, from the error bodies OpenAI, OpenRouter, llama.cpp and Anthropic
/// send (`{"error": {"message": ...}}`, `{"error": "..."}`, `{"message": ...}`).
pub(crate) fn provider_error(status: u16, body: &str) -> ModelError {
    let json: Value = serde_json::from_str(body).unwrap_or(Value::Null);
    let error = &json["error"];
    let message = error["message"]
        .as_str()
        .or_else(|| error.as_str())
        .or_else(|| json["message"].as_str())
        .map_or_else(|| body.chars().take(500).collect::<String>(), str::to_owned);
    let code = error["code"].as_str().or_else(|| error["type"].as_str()).unwrap_or_default();
    let lower = message.to_ascii_lowercase();
    let context = code == "context_length_exceeded"
        || lower.contains("context length")
        || lower.contains("context window")
        || lower.contains("prompt is too long")
        || lower.contains("too many tokens")
        || lower.contains("exceeds the available context")
        || lower.contains("context size has been exceeded");
    if !context {
        return ModelError::Provider { status, message };
    }
    // llama-server states the counts beside its message: keep them, the run shrinks by them.
    match (error["n_prompt_tokens"].as_u64(), error["n_ctx"].as_u64()) {
        (Some(prompt), Some(window)) => {
            ModelError::ContextLength { message: format!("{message} (n_prompt_tokens {prompt}, n_ctx {window})") }
        }
        _ => ModelError::ContextLength { message },
    }
}

/// A transport error without its URL's user, password, query or anything else that could
/// carry a secret; the port stays, so a host running several servers knows which one failed.
pub(crate) fn transport_message(err: &reqwest::Error) -> String {
    let kind = if err.is_timeout() {
        "timed out"
    } else if err.is_connect() {
        "could not connect"
    } else {
        "request failed"
    };
    match err.url() {
        Some(url) => {
            // The URL less what can carry a secret; everything else (the port too) stays.
            let mut shown = url.clone();
            let _ = shown.set_username("");
            let _ = shown.set_password(None);
            shown.set_query(None);
            shown.set_fragment(None);
            format!("{kind} ({shown})")
        }
        None => kind.to_owned(),
    }
}

#[cfg(test)]
mod tests {
    #[tokio::test]
    async fn a_transport_error_names_the_port_and_not_the_credentials() {
        // A port nothing listens on: bound, then released.
        let port = std::net::TcpListener::bind("127.0.0.1:0").and_then(|l| l.local_addr()).map(|a| a.port()).unwrap();
        let url = format!("http://user:secret@127.0.0.1:{port}/v1/chat/completions?key=secret");
        let options = super::HttpOptions::local().with_retry(super::Retry::default().with_max_retries(0));
        let http = super::Http::new(options).unwrap();
        let err = http.post(&url, &[], &serde_json::json!({}), None).await.unwrap_err();
        let shown = format!("could not connect (http://127.0.0.1:{port}/v1/chat/completions)");
        assert!(matches!(&err, crate::model::ModelError::Transport(message) if *message == shown), "{err}");
    }

    #[test]
    fn urls_in_debug_lose_their_credentials() {
        for (url, shown) in [
            ("https://api.openai.com/v1", "https://api.openai.com/v1"),
            ("https://user:secret@host.example/v1", "https://…@host.example/v1"),
            ("https://host.example/v1beta?key=secret#frag", "https://host.example/v1beta?…"),
            ("http://token@127.0.0.1:8080?key=secret", "http://…@127.0.0.1:8080?…"),
            ("host.example/v1", "host.example/v1"),
        ] {
            assert_eq!(super::redacted_url(url), shown, "{url}");
        }
    }

    use super::*;

    #[test]
    fn error_bodies_of_every_provider_are_read() {
        let openai = r#"{"error": {"message": "Invalid 'tools[0].function.name'", "type": "invalid_request_error", "code": null}}"#;
        assert!(
            matches!(provider_error(400, openai), ModelError::Provider { status: 400, message } if message.contains("tools[0]"))
        );
        let context = r#"{"error": {"message": "This model's maximum context length is 8192 tokens.", "code": "context_length_exceeded"}}"#;
        assert!(matches!(provider_error(400, context), ModelError::ContextLength { .. }));
        let anthropic = r#"{"type": "error", "error": {"type": "invalid_request_error", "message": "prompt is too long: 210000 tokens > 200000 maximum"}}"#;
        assert!(matches!(provider_error(400, anthropic), ModelError::ContextLength { .. }));
        let llama = r#"{"error": {"code": 400, "message": "the request exceeds the available context size", "type": "exceed_context_size_error"}}"#;
        assert!(matches!(provider_error(400, llama), ModelError::ContextLength { .. }));
        let counted = r#"{"error": {"code": 400, "message": "the request exceeds the available context size, try increasing it", "type": "exceed_context_size_error", "n_prompt_tokens": 8804, "n_ctx": 8192}}"#;
        assert!(
            matches!(provider_error(400, counted), ModelError::ContextLength { message } if message.ends_with("(n_prompt_tokens 8804, n_ctx 8192)"))
        );
        // llama-server when its slots share one context and generation runs out of it.
        let shared =
            r#"{"error": {"code": 500, "message": "Context size has been exceeded.", "type": "server_error"}}"#;
        assert!(matches!(provider_error(500, shared), ModelError::ContextLength { .. }));
        assert!(
            matches!(provider_error(502, "<html>bad gateway</html>"), ModelError::Provider { status: 502, message } if message.contains("bad gateway"))
        );
    }
}
