//! What a provider returns beside a turn that only it reads ([`ProviderItems`]), kept in the
//! conversation so the next request hands it back.

use serde::{Deserialize, Serialize};
use serde_json::Value;

/// Items of a model's answer that only its provider reads — OpenAI Responses' `reasoning`
/// items, with their `encrypted_content` — kept in the conversation
/// ([`Message::ProviderItems`](super::Message::ProviderItems)) just before the turn they came
/// with, so that the next request hands them back as they came. They are never the answer's
/// text; a provider hands back only the items it wrote (`provider`) and passes over others.
///
/// ```
/// use serde_json::json;
/// use tinytools::model::ProviderItems;
///
/// let reasoning = json!({"type": "reasoning", "id": "rs_1", "summary": [], "encrypted_content": "gAAAA…"});
/// let items = ProviderItems::new("openai:responses", vec![reasoning.clone()]);
/// assert!(items.is_from("openai:responses"));
/// assert_eq!(items.items, [reasoning]);
/// ```
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct ProviderItems {
    /// Who wrote them, such as `openai:responses`: only that provider reads them back.
    pub provider: String,
    /// The items, in the provider's order, exactly as it sent them.
    pub items: Vec<Value>,
}

impl ProviderItems {
    /// `items` written by `provider`.
    pub fn new(provider: impl Into<String>, items: Vec<Value>) -> Self {
        Self { provider: provider.into(), items }
    }

    /// Whether `provider` wrote them.
    pub fn is_from(&self, provider: &str) -> bool {
        self.provider == provider
    }
}
