//! [`Endpoint`]: where a bearer-key HTTP API lives, shared by the providers that speak
//! OpenAI's APIs (Chat Completions, Responses).

use serde_json::Value;

use super::ConfigError;
use super::http::{ApiKey, Http, HttpOptions, redacted_url};
use crate::model::ModelError;

/// The HTTP client, the base URL (no trailing `/`), an optional bearer key and the extra
/// headers sent on every request.
#[derive(Clone)]
pub(crate) struct Endpoint {
    http: Http,
    base_url: String,
    api_key: Option<ApiKey>,
    headers: Vec<(String, String)>,
}

impl Endpoint {
    pub(crate) fn new(base_url: impl Into<String>, options: HttpOptions) -> Result<Self, ConfigError> {
        Ok(Self {
            http: Http::new(options)?,
            base_url: base_url.into().trim_end_matches('/').to_owned(),
            api_key: None,
            headers: Vec::new(),
        })
    }

    /// Sends `key` as a bearer token from now on.
    pub(crate) fn set_api_key(&mut self, key: impl Into<String>) {
        self.api_key = Some(ApiKey::new(key));
    }

    /// Sends this header on every request from now on.
    pub(crate) fn add_header(&mut self, name: impl Into<String>, value: impl Into<String>) {
        self.headers.push((name.into(), value.into()));
    }

    /// The base URL without the credentials it may carry: what `Debug` may show.
    pub(crate) fn shown_base_url(&self) -> String {
        redacted_url(&self.base_url)
    }

    /// POSTs `body` to `path` under the base URL and reads the JSON answer ([`Http::post`]).
    pub(crate) async fn post(&self, path: &str, body: &Value, max_bytes: Option<usize>) -> Result<Value, ModelError> {
        self.http.post(&self.url(path), &self.headers(), body, max_bytes).await
    }

    /// POSTs `body` to `path` and returns the response before reading its body ([`Http::send`]).
    pub(crate) async fn send(
        &self,
        path: &str,
        body: &Value,
        max_bytes: usize,
    ) -> Result<reqwest::Response, ModelError> {
        self.http.send(&self.url(path), &self.headers(), body, max_bytes).await
    }

    fn url(&self, path: &str) -> String {
        format!("{}/{path}", self.base_url)
    }

    fn headers(&self) -> Vec<(&str, String)> {
        let mut headers: Vec<(&str, String)> = self.headers.iter().map(|(n, v)| (n.as_str(), v.clone())).collect();
        if let Some(key) = &self.api_key {
            headers.push(("authorization", format!("Bearer {}", key.expose())));
        }
        headers
    }
}
