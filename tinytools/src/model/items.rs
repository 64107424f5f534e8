//! What a provider returns beside a turn that only it reads ([`ProviderItems`]), kept in the
//! conversation so the next request hands it back.

use serde::{Deserialize, Serialize};
use serde_json::Value;

/// Items of a model's answer that only its provider reads, kept in the conversation
/// ([`Message::ProviderItems`](super::Message::ProviderItems)) just before the turn they came
/// with, so that the next request hands them back as they came. They are never the answer's
/// text; a provider hands back only the items it wrote (`provider`) and passes over others.
///
/// Two kinds: the turn's whole output, in the provider's order ([`turn`](Self::turn):
/// Anthropic's content blocks with its search and thinking blocks where they came, OpenAI
/// Responses' output items with their `reasoning` items between the calls), which the provider
/// sends back in place of the turn while the turn's text and calls still match it; or only the
/// items the turn's text and calls do not carry ([`new`](Self::new): OpenAI's `reasoning` items
/// of an earlier transcript).
///
/// ```
/// use serde_json::json;
/// use tinytools::model::ProviderItems;
///
/// let reasoning = json!({"type": "reasoning", "id": "rs_1", "summary": [], "encrypted_content": "gAAAA…"});
/// let items = ProviderItems::new("openai:responses", vec![reasoning.clone()]);
/// assert!(items.is_from("openai:responses") && !items.whole_turn);
/// assert_eq!(items.items, [reasoning]);
/// let call = json!({"type": "function_call", "call_id": "call_1", "name": "stock_quote", "arguments": "{}"});
/// assert!(ProviderItems::turn("openai:responses", vec![call]).whole_turn);
/// ```
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct ProviderItems {
    /// Who wrote them, such as `openai:responses` or `anthropic:messages`: only that provider
    /// reads them back.
    pub provider: String,
    /// The items, in the provider's order, exactly as it sent them.
    pub items: Vec<Value>,
    /// Whether `items` is the turn's whole output (its text and calls included), to be sent
    /// back in place of the turn.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub whole_turn: bool,
}

impl ProviderItems {
    /// `items` written by `provider`, beside the turn's text and calls.
    pub fn new(provider: impl Into<String>, items: Vec<Value>) -> Self {
        Self { provider: provider.into(), items, whole_turn: false }
    }

    /// The whole output of a turn written by `provider`, in its order.
    pub fn turn(provider: impl Into<String>, items: Vec<Value>) -> Self {
        Self { provider: provider.into(), items, whole_turn: true }
    }

    /// Whether `provider` wrote them.
    pub fn is_from(&self, provider: &str) -> bool {
        self.provider == provider
    }
}
