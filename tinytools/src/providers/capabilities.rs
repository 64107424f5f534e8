//! What each model family can do, by provider: the table a client reads its
//! [`ModelProfile`] from (`OpenAiResponses::profile_for`, `Anthropic::profile_for`). A model
//! belongs to the family of the longest prefix its id starts with, the prefix followed by the
//! id's end or `-`, `.` or `@` (`gpt-5.4-mini` is of `gpt-5.4`, `claude-opus-4-1-20250805` of
//! `claude-opus-4-1`); a model of no family gets the provider's `unknown` row, which asks for
//! nothing a model may refuse (a host that knows better says so with `with_profile`).
//!
//! The rows, and the documentation each column comes from, are listed in
//! `docs/native-deferral.md` ("Which models can do what").

use crate::model::ModelProfile;

/// One family: the model ids it covers start with `prefix`.
pub(crate) struct Family {
    prefix: &'static str,
    profile: ModelProfile,
}

/// A row: native deferral, reasoning items, structured output, parallel tool calls.
const fn family(prefix: &'static str, deferral: bool, reasoning: bool, structured: bool, parallel: bool) -> Family {
    let profile = ModelProfile::new()
        .with_native_deferral(deferral)
        .with_reasoning_items(reasoning)
        .with_structured_output(structured)
        .with_parallel_tool_calls(parallel);
    Family { prefix, profile }
}

/// OpenAI's models on the Responses API. Tool search: "Only gpt-5.4 and later models support
/// tool_search" (the Tool search guide). Reasoning: the o-series and the GPT-5 families except
/// `gpt-5-chat` (OpenAI's model pages, as the Vercel AI SDK's and Pydantic AI's OpenAI
/// profiles read them). Structured Outputs: `gpt-4o-2024-08-06` and later, `gpt-4o-mini`,
/// GPT-4.1, `o1` (not `o1-mini` nor `o1-preview`), `o3`, `o4-mini`, GPT-5 (the Structured
/// Outputs guide). Parallel calls: not the o-series, which answer `parallel_tool_calls` with
/// "not supported with this model".
pub(crate) const OPENAI: &[Family] = &[
    family("gpt-4o", false, false, true, true),
    family("gpt-4o-2024-05-13", false, false, false, true),
    family("gpt-4.1", false, false, true, true),
    family("o1", false, true, true, false),
    family("o1-mini", false, true, false, false),
    family("o1-preview", false, true, false, false),
    family("o3", false, true, true, false),
    family("o4-mini", false, true, true, false),
    family("gpt-5", false, true, true, true),
    family("gpt-5-chat", false, false, true, true),
    family("gpt-5.1", false, true, true, true),
    family("gpt-5.2", false, true, true, true),
    family("gpt-5.3", false, true, true, true),
    family("gpt-5.4", true, true, true, true),
    family("gpt-5.5", true, true, true, true),
    family("gpt-5.6", true, true, true, true),
];

/// Claude on the Messages API. Tool search: the models the Tool search tool page lists
/// (Claude Sonnet 4.5, Opus 4.5 and Haiku 4.5 onwards, and every Claude 5). Reasoning
/// (extended thinking): Claude Sonnet 3.7 and every Claude 4 and 5. Structured outputs: generally
/// available from the 4.5 models on (Opus 4.1 had it only in beta). Parallel tool use: every
/// Claude model (the Parallel tool use page).
pub(crate) const ANTHROPIC: &[Family] = &[
    family("claude-3", false, false, false, true),
    family("claude-3-7-sonnet", false, true, false, true),
    family("claude-sonnet-4", false, true, false, true),
    family("claude-opus-4", false, true, false, true),
    family("claude-opus-4-1", false, true, false, true),
    family("claude-sonnet-4-5", true, true, true, true),
    family("claude-sonnet-4-6", true, true, true, true),
    family("claude-haiku-4-5", true, true, true, true),
    family("claude-opus-4-5", true, true, true, true),
    family("claude-opus-4-6", true, true, true, true),
    family("claude-opus-4-7", true, true, true, true),
    family("claude-opus-4-8", true, true, true, true),
    family("claude-haiku-5", true, true, true, true),
    family("claude-sonnet-5", true, true, true, true),
    family("claude-opus-5", true, true, true, true),
    family("claude-fable-5", true, true, true, true),
    family("claude-mythos-5", true, true, true, true),
    family("claude-mythos-preview", true, true, true, true),
];

/// The profile of a model of no known family: native tool calling and parallel calls only.
pub(crate) const UNKNOWN: ModelProfile = ModelProfile::new();

/// The profile of `model` by `table`: its family's, or [`UNKNOWN`].
pub(crate) fn profile_for(table: &[Family], model: &str) -> ModelProfile {
    table
        .iter()
        .filter(|family| in_family(model, family.prefix))
        .max_by_key(|family| family.prefix.len())
        .map_or(UNKNOWN, |family| family.profile)
}

/// Whether `model` starts with `prefix` followed by its end or a separator.
fn in_family(model: &str, prefix: &str) -> bool {
    model.strip_prefix(prefix).is_some_and(|rest| rest.is_empty() || rest.starts_with(['-', '.', '@']))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn row(table: &[Family], model: &str) -> (bool, bool, bool, bool) {
        let p = profile_for(table, model);
        (p.native_deferral, p.reasoning_items, p.structured_output, p.parallel_tool_calls)
    }

    #[test]
    fn openai_models_take_their_familys_row() {
        assert_eq!(row(OPENAI, "gpt-4o"), (false, false, true, true));
        assert_eq!(row(OPENAI, "gpt-4o-2024-05-13"), (false, false, false, true));
        assert_eq!(row(OPENAI, "gpt-4o-mini-2024-07-18"), (false, false, true, true));
        assert_eq!(row(OPENAI, "gpt-4.1-nano"), (false, false, true, true));
        assert_eq!(row(OPENAI, "o3-mini-2025-01-31"), (false, true, true, false));
        assert_eq!(row(OPENAI, "o1-mini"), (false, true, false, false));
        assert_eq!(row(OPENAI, "gpt-5-chat-latest"), (false, false, true, true));
        assert_eq!(row(OPENAI, "gpt-5-mini"), (false, true, true, true));
        assert_eq!(row(OPENAI, "gpt-5.2-2025-12-11"), (false, true, true, true));
        assert_eq!(row(OPENAI, "gpt-5.4-mini-2026-03-17"), (true, true, true, true));
        assert_eq!(row(OPENAI, "gpt-5.6-luna"), (true, true, true, true));
        for unknown in ["gpt-50", "o10", "ft:gpt-4o-2024-08-06:org::abc", "openai/gpt-5.4", "my-local-model"] {
            assert_eq!(profile_for(OPENAI, unknown), UNKNOWN, "{unknown}");
        }
    }

    #[test]
    fn claude_models_take_their_familys_row() {
        assert_eq!(row(ANTHROPIC, "claude-3-5-haiku-20241022"), (false, false, false, true));
        assert_eq!(row(ANTHROPIC, "claude-3-7-sonnet-20250219"), (false, true, false, true));
        assert_eq!(row(ANTHROPIC, "claude-sonnet-4-20250514"), (false, true, false, true));
        assert_eq!(row(ANTHROPIC, "claude-opus-4-1-20250805"), (false, true, false, true));
        assert_eq!(row(ANTHROPIC, "claude-opus-4-0"), (false, true, false, true));
        for supported in [
            "claude-sonnet-4-5",
            "claude-sonnet-4-5-20250929",
            "claude-haiku-4-5-20251001",
            "claude-opus-4-5@20251101",
            "claude-opus-4-6",
            "claude-opus-5-5",
            "claude-mythos-preview",
        ] {
            assert_eq!(row(ANTHROPIC, supported), (true, true, true, true), "{supported}");
        }
        assert_eq!(profile_for(ANTHROPIC, "claude-2.1"), UNKNOWN);
    }
}
