//! Each provider's `usage` object read into [`Usage`]: every prompt token in
//! `prompt_tokens`, cached or not, and the prompt cache's share beside it.

use serde_json::Value;

use crate::model::Usage;

fn count(value: &Value) -> u64 {
    value.as_u64().unwrap_or(0)
}

/// Chat Completions: `prompt_tokens` (the cached ones included), `completion_tokens`, and
/// `prompt_tokens_details.cached_tokens`, the prompt tokens OpenAI's prompt cache served.
/// `None` when it is not an object.
pub(crate) fn chat_usage(usage: &Value) -> Option<Usage> {
    usage.as_object()?;
    let cached = count(&usage["prompt_tokens_details"]["cached_tokens"]);
    Some(Usage::new(count(&usage["prompt_tokens"]), count(&usage["completion_tokens"])).with_cache(cached, 0))
}

/// Responses: `input_tokens` (the cached ones included), `output_tokens`, and
/// `input_tokens_details.cached_tokens`.
pub(crate) fn responses_usage(usage: &Value) -> Option<Usage> {
    usage.as_object()?;
    let cached = count(&usage["input_tokens_details"]["cached_tokens"]);
    Some(Usage::new(count(&usage["input_tokens"]), count(&usage["output_tokens"])).with_cache(cached, 0))
}

/// Anthropic Messages, over `so_far` (a stream reports usage in pieces: `message_start`'s,
/// then `message_delta`'s cumulative counts): `input_tokens` counts only the prompt tokens
/// after the last cache breakpoint, so the prompt is `input_tokens` +
/// `cache_creation_input_tokens` + `cache_read_input_tokens`. A field absent keeps its value
/// so far. `None` when `usage` is not an object.
pub(crate) fn anthropic_usage(usage: &Value, so_far: Option<Usage>) -> Option<Usage> {
    usage.as_object()?;
    let so_far = so_far.unwrap_or_default();
    let read = usage["cache_read_input_tokens"].as_u64().unwrap_or(so_far.cache_read_tokens);
    let written = usage["cache_creation_input_tokens"].as_u64().unwrap_or(so_far.cache_write_tokens);
    let uncached = so_far.prompt_tokens.saturating_sub(so_far.cache_read_tokens + so_far.cache_write_tokens);
    let input = usage["input_tokens"].as_u64().unwrap_or(uncached);
    let output = usage["output_tokens"].as_u64().unwrap_or(so_far.completion_tokens);
    Some(Usage::new(input + read + written, output).with_cache(read, written))
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn every_provider_counts_the_whole_prompt_and_its_cached_share() {
        let chat =
            json!({"prompt_tokens": 2006, "completion_tokens": 300, "prompt_tokens_details": {"cached_tokens": 1920}});
        assert_eq!(chat_usage(&chat), Some(Usage::new(2006, 300).with_cache(1920, 0)));
        let responses =
            json!({"input_tokens": 120, "input_tokens_details": {"cached_tokens": 80}, "output_tokens": 25});
        assert_eq!(responses_usage(&responses), Some(Usage::new(120, 25).with_cache(80, 0)));
        let start = json!({"input_tokens": 50, "cache_creation_input_tokens": 1200, "cache_read_input_tokens": 3000, "output_tokens": 1});
        let started = anthropic_usage(&start, None);
        assert_eq!(started, Some(Usage::new(4250, 1).with_cache(3000, 1200)));
        // `message_delta` carries only the output so far: the prompt stays as it was.
        assert_eq!(
            anthropic_usage(&json!({"output_tokens": 89}), started),
            Some(Usage::new(4250, 89).with_cache(3000, 1200))
        );
        assert_eq!(chat_usage(&json!(null)), None);
    }
}
