//! What a model can do ([`ModelProfile`]): the run reads it to choose how it talks to the
//! model; the bundled providers fill it from a table of model families (see
//! `docs/native-deferral.md`), and a host can replace it.

use serde::{Deserialize, Serialize};

/// What a model can do.
///
/// Build one from [`Default`] (a model that calls tools natively and nothing more) with the
/// `with_` setters; the bundled providers give one per model family
/// (`OpenAiResponses::profile_for`, `Anthropic::profile_for`), which a host replaces with
/// their `with_profile`.
///
/// ```
/// use tinytools::model::ModelProfile;
///
/// assert!(ModelProfile::default().native_tool_calling);
/// let prompted = ModelProfile::default().with_native_tool_calling(false);
/// assert!(!prompted.native_tool_calling);
/// let profile = ModelProfile::default();
/// assert!(!profile.native_deferral && !profile.reasoning_items && !profile.structured_output);
/// assert!(profile.parallel_tool_calls);
/// let reasoning = profile.with_reasoning_items(true).with_parallel_tool_calls(false);
/// assert!(reasoning.reasoning_items && !reasoning.parallel_tool_calls);
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct ModelProfile {
    /// The provider parses tool calls natively (otherwise a prompt dialect is needed).
    pub native_tool_calling: bool,
    /// The provider defers tool declarations itself and loads what a search finds
    /// ([`ModelRequest::native_deferral`](super::ModelRequest::native_deferral)): Anthropic's
    /// `defer_loading`, OpenAI Responses' `tool_search`. A run asked for
    /// `DiscoveryMode::ProviderNative` uses the bridge with a model that cannot.
    #[serde(default)]
    pub native_deferral: bool,
    /// The model writes reasoning that its provider wants handed back in the next request
    /// (OpenAI's `reasoning` items, Anthropic's thinking blocks). The OpenAI Responses client
    /// asks for the items' encrypted content (`include: ["reasoning.encrypted_content"]`) only
    /// for such a model: others answer that request with a 400.
    #[serde(default)]
    pub reasoning_items: bool,
    /// The provider can hold the model's answer to a JSON schema (OpenAI's Structured Outputs,
    /// Anthropic's structured outputs). Recorded only: no request asks for it yet.
    #[serde(default)]
    pub structured_output: bool,
    /// The model may call several tools in one turn (the run answers them all). Recorded only:
    /// no request names it.
    #[serde(default = "yes")]
    pub parallel_tool_calls: bool,
}

const fn yes() -> bool {
    true
}

impl Default for ModelProfile {
    fn default() -> Self {
        Self::new()
    }
}

impl ModelProfile {
    /// [`Default`]'s profile, usable in constants: native tool calling, parallel calls,
    /// nothing else.
    pub const fn new() -> Self {
        Self {
            native_tool_calling: true,
            native_deferral: false,
            reasoning_items: false,
            structured_output: false,
            parallel_tool_calls: true,
        }
    }

    /// Sets whether the provider parses tool calls natively.
    #[must_use]
    pub const fn with_native_tool_calling(mut self, native_tool_calling: bool) -> Self {
        self.native_tool_calling = native_tool_calling;
        self
    }

    /// Sets whether the provider defers tool declarations itself.
    #[must_use]
    pub const fn with_native_deferral(mut self, native_deferral: bool) -> Self {
        self.native_deferral = native_deferral;
        self
    }

    /// Sets whether the model writes reasoning its provider wants handed back.
    #[must_use]
    pub const fn with_reasoning_items(mut self, reasoning_items: bool) -> Self {
        self.reasoning_items = reasoning_items;
        self
    }

    /// Sets whether the provider can hold the answer to a JSON schema.
    #[must_use]
    pub const fn with_structured_output(mut self, structured_output: bool) -> Self {
        self.structured_output = structured_output;
        self
    }

    /// Sets whether the model may call several tools in one turn.
    #[must_use]
    pub const fn with_parallel_tool_calls(mut self, parallel_tool_calls: bool) -> Self {
        self.parallel_tool_calls = parallel_tool_calls;
        self
    }
}
