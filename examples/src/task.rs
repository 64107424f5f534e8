//! The spec's live-proof task over the catalogue: the user's words, the system prompt and the
//! manifest budget every example and arm runs it with.

/// The spec's task.
pub const TASK: &str = "What is ACME stock trading at right now?";

/// The system prompt both arms run with.
pub const SYSTEM_PROMPT: &str = "You are a helpful assistant. You cannot know live data such as \
prices, the weather or the user's accounts: get it with a tool, never guess it. When no tool in \
your list fits, call tool_search with a few words describing what you need, then call the tool \
it returns by its own name. Reply in one short sentence once you have the result.";

/// The manifest budget the deferred arm uses: with it the first request's tools stay under
/// 2,500 bytes (the manifest degrades from summaries to names).
pub const MANIFEST_TOKEN_BUDGET: usize = 400;
