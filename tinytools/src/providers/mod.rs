//! Real model providers, behind the `providers` feature: an OpenAI-compatible Chat Completions
//! client (OpenAI, OpenRouter, llama.cpp's `llama-server`, Ollama, LM Studio), an Anthropic
//! Messages client, and an OpenAI Responses client. All retry 429 and 5xx answers with
//! backoff, honouring `Retry-After`; report what the provider said on a 4xx; report
//! context-length overflows as such; and never show the API key in `Debug` output, logs or
//! errors. Each reports the prompt cache's share of the usage (`usage.rs`).
//!
//! `Anthropic` and `OpenAiResponses` defer tools natively
//! ([`ModelRequest::native_deferral`](crate::model::ModelRequest::native_deferral), asked for
//! with `DiscoveryMode::ProviderNative`): Anthropic's `defer_loading` with its tool search
//! tool, the Responses API's `namespace`s with `tool_search`. Anthropic also writes cache
//! breakpoints on the system prompt and the last tool that is not deferred, and continues a
//! turn its server-side tools paused (`stop_reason: "pause_turn"`, `anthropic/pause.rs`);
//! `OpenAiResponses` keeps a reasoning model's `reasoning` items across requests
//! ([`ProviderItems`](crate::model::ProviderItems)).
//!
//! What a model can do ([`ModelProfile`](crate::model::ModelProfile): native deferral,
//! reasoning items, structured output, parallel calls) comes from a table of model families per
//! provider (`capabilities.rs`), which a host overrides with `with_profile`: a model whose
//! family cannot defer natively gets the run's `tool_search` bridge, and only a reasoning model
//! is asked for encrypted reasoning. A turn goes back as the provider wrote it, in its order
//! (`turns.rs`), and a provider's own items (searches, reasoning) never go to another provider.
//!
//! All stream ([`ChatModel::stream`](crate::model::ChatModel::stream)) over server-sent
//! events (`sse.rs` decodes them, `stream.rs` reads the body within the caps, and each
//! provider's own `stream.rs` assembles its events). One module per provider (`openai/`,
//! `anthropic/`, `responses/`: the client, its wire format, its stream); what they share
//! (`http.rs`, `sse.rs`, `stream.rs`, `usage.rs`) sits beside them. A stream is
//! held to the same byte cap and time limit as a whole answer; one that stops before the
//! provider's closing event is [`ModelError::Interrupted`](crate::model::ModelError::Interrupted),
//! and dropping it closes the connection.

mod anthropic;
mod capabilities;
mod endpoint;
mod http;
mod openai;
mod output;
mod responses;
mod sse;
mod stream;
mod turns;
mod usage;

pub use anthropic::Anthropic;
pub use anthropic::AnthropicToolSearch;
pub use http::{ApiKey, HttpOptions, Retry};
pub use openai::OpenAiCompatible;
pub use responses::{NAMESPACE_LIMIT, OpenAiResponses};

/// Why a provider client could not be configured.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ConfigError {
    /// A required environment variable is missing.
    #[error("set {0} (docs/guide/providers.md lists the others)")]
    MissingVariable(&'static str),
    /// The HTTP client could not be built.
    #[error("the HTTP client could not be built: {0}")]
    Client(String),
}
