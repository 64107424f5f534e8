//! Real model providers, behind the `providers` feature: an OpenAI-compatible Chat Completions
//! client (OpenAI, OpenRouter, llama.cpp's `llama-server`, Ollama, LM Studio) and an Anthropic
//! Messages client. Both retry 429 and 5xx answers with backoff, honouring `Retry-After`;
//! report what the provider said on a 4xx; report context-length overflows as such; and never
//! show the API key in `Debug` output, logs or errors.

mod anthropic;
mod http;
mod openai;

pub use anthropic::Anthropic;
pub use http::{ApiKey, HttpOptions, Retry};
pub use openai::OpenAiCompatible;

/// Why a provider client could not be configured.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ConfigError {
    /// A required environment variable is missing.
    #[error("set {0} (and see the README's live-test section for the others)")]
    MissingVariable(&'static str),
    /// The HTTP client could not be built.
    #[error("the HTTP client could not be built: {0}")]
    Client(String),
}
