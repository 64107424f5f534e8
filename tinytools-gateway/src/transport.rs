//! Remote downstream servers: a config's `url` and `headers`, expanded ([`Remote`]), and the
//! streamable-HTTP connection the supervisor makes to them.
//!
//! The expanded URL and header values are secrets as much as a stdio server's env: they are
//! held as [`Secret`]s, marked sensitive in the request, scrubbed from every failure text
//! ([`Remote::redact`]) before it reaches the client or the cache, and registered with
//! [`crate::redact`] so the binary's log scrubs them from what the HTTP stack logs.

use std::cell::RefCell;
use std::collections::HashMap;
use std::path::Path;
use std::time::Duration;

use http::{HeaderName, HeaderValue};
use rmcp::ServiceExt;
use rmcp::transport::StreamableHttpClientTransport;
use rmcp::transport::streamable_http_client::StreamableHttpClientTransportConfig;

use crate::config::{ConfigError, ServerConfig, Transport};
use crate::failure::{CallFailure, Failed, StartFailure};
use crate::relay::{Connection, ProgressRelay};
use crate::template::{Secret, Template};

/// Headers the MCP transport sets itself; a config may not override them.
const RESERVED: [&str; 4] = ["accept", "content-type", "mcp-session-id", "last-event-id"];

/// A remote server's endpoint, expanded: its `Debug` shows no value.
#[derive(Clone)]
pub struct Remote {
    url: Secret,
    raw_url: String,
    headers: Vec<(String, Secret)>,
    /// Each secret and its replacement, longest first.
    secrets: Vec<(String, String)>,
}

/// Variable values in a URL shorter than this (a port, a path word) are left readable.
const MIN_URL_SECRET: usize = 8;
/// Header values shorter than this are left readable.
const MIN_HEADER_SECRET: usize = 4;

impl std::fmt::Debug for Remote {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let names: Vec<&str> = self.headers.iter().map(|(name, _)| name.as_str()).collect();
        f.debug_struct("Remote").field("url", &self.raw_url).field("headers", &names).finish()
    }
}

impl Remote {
    /// Expands a remote server's `url` and `headers` from the environment `lookup` reads;
    /// `Ok(None)` for a stdio server.
    ///
    /// # Errors
    /// [`ConfigError::MissingVariable`] naming `file`, the server, the key (`url` or
    /// `headers.<name>`) and the variable.
    pub fn expand(
        config: &ServerConfig,
        file: &Path,
        lookup: impl Fn(&str) -> Option<String>,
    ) -> Result<Option<Self>, ConfigError> {
        let Transport::Http { url, headers } = &config.transport else {
            return Ok(None);
        };
        // The values substituted for references, as they are looked up.
        let substituted = RefCell::new(Vec::new());
        let recording = |name: &str| {
            let value = lookup(name);
            if let Some(value) = &value {
                substituted.borrow_mut().push(value.clone());
            }
            value
        };
        let expand = |template: &Template, key: String| {
            template.expand(recording).map_err(|variable| ConfigError::MissingVariable {
                file: file.to_owned(),
                server: config.name.clone(),
                key,
                variable,
            })
        };
        let expanded_url = expand(url, "url".into())?;
        let url_values = substituted.take();
        let headers: Vec<(String, Secret)> = headers
            .iter()
            .map(|(name, value)| Ok((name.clone(), expand(value, format!("headers.{name}"))?)))
            .collect::<Result<_, ConfigError>>()?;
        let mut secrets = vec![(expanded_url.expose().to_owned(), url.raw().to_owned())];
        let redacted = || "<redacted>".to_owned();
        secrets.extend(url_values.into_iter().filter(|v| v.trim().len() >= MIN_URL_SECRET).map(|v| (v, redacted())));
        let header_values = substituted.take().into_iter().chain(headers.iter().map(|(_, v)| v.expose().to_owned()));
        for value in header_values {
            let value = value.trim();
            if value.len() >= MIN_HEADER_SECRET {
                secrets.push((value.to_owned(), redacted()));
            }
            // `Bearer <token>` may be reported without its scheme.
            if let Some((_, token)) = value.split_once(' ')
                && token.trim().len() >= MIN_HEADER_SECRET
            {
                secrets.push((token.trim().to_owned(), redacted()));
            }
        }
        secrets.retain(|(secret, replacement)| !secret.is_empty() && secret != replacement);
        secrets.sort_by_key(|(secret, _)| std::cmp::Reverse(secret.len()));
        secrets.dedup_by(|a, b| a.0 == b.0);
        for (secret, replacement) in &secrets {
            crate::redact::register(secret, replacement);
        }
        Ok(Some(Self { url: expanded_url, raw_url: url.raw().to_owned(), headers, secrets }))
    }

    /// `text` with the expanded URL written as configured (its `${VAR}`s unexpanded), and
    /// every header value (of four characters or more) and every long value substituted
    /// into the URL replaced by `<redacted>`.
    pub fn redact(&self, text: &str) -> String {
        let mut text = text.to_owned();
        for (secret, replacement) in &self.secrets {
            if text.contains(secret.as_str()) {
                text = text.replace(secret.as_str(), replacement);
            }
        }
        text
    }

    /// The rmcp transport to it: a reqwest client that follows no redirect (a redirect would
    /// carry the headers to wherever it points), with the headers marked sensitive.
    fn transport(
        &self,
        server: &str,
        connect_timeout: Duration,
    ) -> Result<StreamableHttpClientTransport<reqwest::Client>, CallFailure> {
        let mut headers = HashMap::new();
        for (name, value) in &self.headers {
            if RESERVED.contains(&name.to_ascii_lowercase().as_str()) {
                return Err(CallFailure(format!(
                    "the `{server}` server's headers.{name} is set by the MCP transport itself; remove it from the config"
                )));
            }
            let header = HeaderName::from_bytes(name.as_bytes()).map_err(|_| {
                CallFailure(format!(
                    "the `{server}` server's headers.{name}: not a valid HTTP header name; use letters, digits and `-`"
                ))
            })?;
            let mut value = HeaderValue::from_str(value.expose()).map_err(|_| {
                CallFailure(format!(
                    "the `{server}` server's headers.{name}: its expanded value is not a valid HTTP header value \
                     (it must be visible ASCII, without line breaks); check the value or the variable it references"
                ))
            })?;
            value.set_sensitive(true);
            headers.insert(header, value);
        }
        // rustls needs a process-wide crypto provider for https URLs; installing it twice is harmless.
        let _ = rustls::crypto::ring::default_provider().install_default();
        let client = reqwest::Client::builder()
            .pool_max_idle_per_host(0)
            .redirect(reqwest::redirect::Policy::none())
            .connect_timeout(connect_timeout)
            .build()
            .map_err(|error| {
                CallFailure(format!(
                    "could not set up an HTTP client for the `{server}` server ({}); report this as a bug",
                    self.redact(&chain(&error))
                ))
            })?;
        let config = StreamableHttpClientTransportConfig::with_uri(self.url.expose()).custom_headers(headers);
        Ok(StreamableHttpClientTransport::with_client(client, config))
    }
}

/// Connects to a remote server and completes the MCP handshake within its start timeout;
/// `relay` handles the connection's notifications, as for a stdio server.
pub(crate) async fn connect_remote(
    config: &ServerConfig,
    remote: &Remote,
    relay: ProgressRelay,
) -> Result<Connection, Failed> {
    let name = &config.name;
    let after = config.policy.start_timeout;
    let transport = remote.transport(name, after).map_err(|failure| {
        Failed::with_message(StartFailure::Misconfigured("its \"headers\" cannot be sent".into()), failure)
    })?;
    let target = config.describe();
    let transport = relay.counted(transport);
    match tokio::time::timeout(after, relay.serve(transport)).await {
        Ok(Ok(connection)) => Ok(connection),
        Ok(Err(error)) => Err(Failed::with_message(
            StartFailure::Unreachable,
            CallFailure(format!(
                "the `{name}` server ({target}) could not be reached or failed the MCP handshake ({}); {}. It \
                 will be connected again on the next call.",
                remote.redact(&plain(&error)),
                StartFailure::Unreachable.advice()
            )),
        )),
        Err(_) => Err(Failed::with_message(
            StartFailure::TimedOut { after },
            CallFailure(format!(
                "the `{name}` server ({target}) did not answer `initialize` within {} s; check that it is running and \
                 reachable, or raise gateway.start_timeout_secs for it.",
                after.as_secs_f64()
            )),
        )),
    }
}

/// The failure of a call whose remote server broke the connection or could not be reached.
/// Its text is scrubbed of every registered secret.
pub(crate) fn lost_remote(config: &ServerConfig, error: &rmcp::ServiceError) -> CallFailure {
    CallFailure(crate::redact::scrub(&format!(
        "the `{}` server ({}) stopped answering or could not be reached ({}). It will be connected again on the \
         next call: retry once, and if it fails again check that the server is running.",
        config.name,
        config.describe(),
        plain(error)
    )))
}

/// What an rmcp transport error says, without the transport's Rust type name
/// (`Transport [rmcp::transport::worker::WorkerTransport<…>] error: `).
fn plain(error: &dyn std::error::Error) -> String {
    let text = chain(error);
    match text.rfind("] error: ") {
        Some(at) => text[at + "] error: ".len()..].to_owned(),
        None => text,
    }
}

/// An error and its sources, each once, joined by `: `.
pub(crate) fn chain(error: &dyn std::error::Error) -> String {
    let mut parts: Vec<String> = vec![error.to_string()];
    let mut source = error.source();
    while let Some(cause) = source {
        let text = cause.to_string();
        if !parts.iter().any(|part| part.contains(&text)) {
            parts.push(text);
        }
        source = cause.source();
    }
    parts.join(": ")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::GatewayConfig;

    fn server(entry: serde_json::Value) -> ServerConfig {
        let text = serde_json::json!({"mcpServers": {"remote": entry}}).to_string();
        GatewayConfig::parse("test.json", &text).unwrap().servers.remove("remote").unwrap()
    }

    #[test]
    fn expansion_names_the_key_and_redaction_hides_every_value() {
        let config = server(serde_json::json!({
            "url": "https://example.invalid/mcp?key=${KEY}",
            "headers": {"Authorization": "Bearer ${TOKEN}", "X-Plain": "on"}
        }));
        let only_key = |name: &str| (name == "KEY").then(|| "k".to_owned());
        let missing = Remote::expand(&config, Path::new("c.json"), only_key).unwrap_err().to_string();
        assert!(missing.contains("headers.Authorization") && missing.contains("TOKEN"), "{missing}");
        let lookup = |name: &str| Some(format!("{name}-s3cret-value"));
        let remote = Remote::expand(&config, Path::new("c.json"), lookup).unwrap().unwrap();
        assert!(!format!("{remote:?}").contains("s3cret"));
        let text = "error sending request for url (https://example.invalid/mcp?key=KEY-s3cret-value): \
                    got TOKEN-s3cret-value, Bearer TOKEN-s3cret-value";
        let redacted = remote.redact(text);
        assert!(!redacted.contains("s3cret"), "{redacted}");
        assert!(redacted.contains("key=${KEY}"), "{redacted}");
    }

    #[test]
    fn reserved_and_malformed_headers_are_refused_by_name() {
        let lookup = |_: &str| Some("line\nbreak".to_owned());
        for (headers, expected) in [
            (serde_json::json!({"Accept": "x"}), "set by the MCP transport"),
            (serde_json::json!({"bad name": "x"}), "not a valid HTTP header name"),
            (serde_json::json!({"X-Token": "${T}"}), "not a valid HTTP header value"),
        ] {
            let config = server(serde_json::json!({"url": "http://127.0.0.1:9/mcp", "headers": headers}));
            let remote = Remote::expand(&config, Path::new("c.json"), lookup).unwrap().unwrap();
            let failure = remote.transport("remote", Duration::from_secs(1)).err().unwrap().to_string();
            assert!(failure.contains(expected), "{failure}");
            assert!(!failure.contains("line\nbreak"), "{failure}");
        }
    }
}
