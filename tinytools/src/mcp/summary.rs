//! Where an imported tool lives: what a server says of itself, and an optional paragraph a
//! chat model writes about it once ([`SummaryWriter`]). Both describe the server's family
//! ([`ToolRegistry::describe_family`](crate::ToolRegistry::describe_family)), which discovery
//! ranks with and never shows.

use std::sync::Arc;

use crate::model::{ChatModel, Message, ModelError, ModelRequest, RequestPurpose};

/// The most bytes of a server's own words ([`McpServer::self_description`](super::McpServer::self_description))
/// and summary a family keeps.
pub const MAX_FAMILY_CONTEXT: usize = 2_000;

/// The most bytes of a written summary kept.
pub const MAX_SUMMARY_BYTES: usize = 600;

/// How much of the server's own words the summary model reads.
const MAX_ABOUT_BYTES: usize = 1_000;
/// How many of the server's tools the summary model reads, and how much of each line.
const MAX_TOOLS: usize = 40;
const MAX_TOOL_LINE: usize = 100;

/// The instruction the summary model is given: generic, naming no catalogue or benchmark.
const SYSTEM: &str = "You describe software services in a few plain sentences for a search index.";

/// Why no summary was written. The server's tools are then ranked without one.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum SummaryError {
    /// The model request failed.
    #[error("the summary model failed: {0}; the server's tools are ranked without a summary")]
    Model(#[from] ModelError),
    /// The model answered with nothing usable (fewer than three words once cleaned).
    #[error("the summary model wrote no usable text; the server's tools are ranked without a summary")]
    Empty,
    /// The server could not list its tools.
    #[error(transparent)]
    Mcp(#[from] Box<super::McpError>),
}

/// Writes one short paragraph about an MCP server — what it is for and what a user would ask
/// of it, in everyday words — from its name, its own words and its tools' names and first
/// lines: one request, no tools ([`RequestPurpose::Summary`]).
///
/// Opt-in, like the keyword request of query-aware discovery: a host writes a server's summary
/// once when it imports it, keeps it with whatever it caches of the server, and gives it back
/// with [`McpImport::family_summary`](super::McpImport::family_summary) on later starts. The
/// summary only ever joins the family's ranked text: the model never reads it, so a summary
/// that repeats hostile words from a server's description can misrank, never instruct.
///
/// ```
/// # use std::sync::Arc;
/// # use tinytools::model::{ChatModel, ModelError, ModelRequest, ModelResponse, RequestPurpose};
/// use tinytools::mcp::SummaryWriter;
///
/// struct Writer;
/// #[async_trait::async_trait]
/// impl ChatModel for Writer {
///     async fn complete(&self, request: &ModelRequest) -> Result<ModelResponse, ModelError> {
///         assert_eq!(request.purpose, RequestPurpose::Summary);
///         Ok(ModelResponse::text("**Summary:** Looks up the weather.\n\n- Forecasts for any city."))
///     }
/// }
///
/// # tokio::runtime::Builder::new_current_thread().build().unwrap().block_on(async {
/// let writer = SummaryWriter::new(Arc::new(Writer));
/// let summary = writer.write("weather", Some("Weather data."), &[("forecast", "Get a forecast.")]).await?;
/// assert_eq!(summary, "Looks up the weather. Forecasts for any city.");
/// # Ok::<(), tinytools::mcp::SummaryError>(())
/// # }).unwrap();
/// ```
#[derive(Clone)]
pub struct SummaryWriter {
    model: Arc<dyn ChatModel>,
}

impl std::fmt::Debug for SummaryWriter {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SummaryWriter").field("model", &self.model.model_name()).finish()
    }
}

impl SummaryWriter {
    /// A writer asking `model`.
    pub fn new(model: Arc<dyn ChatModel>) -> Self {
        Self { model }
    }

    /// The summary of server `name`, given what it says of itself (`about`) and its tools as
    /// `(name, description)`: the model's answer with markdown, list marks and line breaks
    /// removed, at most [`MAX_SUMMARY_BYTES`].
    ///
    /// # Errors
    /// [`SummaryError::Model`] when the request fails, [`SummaryError::Empty`] when the answer
    /// holds fewer than three words.
    pub async fn write(&self, name: &str, about: Option<&str>, tools: &[(&str, &str)]) -> Result<String, SummaryError> {
        let request = ModelRequest {
            // The SDK's own words, never the user's: a feedback turn.
            messages: vec![Message::system(SYSTEM), Message::feedback(prompt(name, about, tools))],
            purpose: RequestPurpose::Summary,
            ..ModelRequest::default()
        };
        let response = self.model.complete(&request).await?;
        let summary = clean(&response.content);
        if summary.split_whitespace().count() < 3 {
            return Err(SummaryError::Empty);
        }
        Ok(summary)
    }
}

/// The user turn: the server's name, its words and its tools (each cut short), and the task.
fn prompt(name: &str, about: Option<&str>, tools: &[(&str, &str)]) -> String {
    let mut text = format!("Service: {}\n", clip(name, MAX_TOOL_LINE));
    if let Some(about) = about.map(str::trim).filter(|about| !about.is_empty()) {
        text.push_str(&format!("It says of itself: {}\n", clip(&one_line(about), MAX_ABOUT_BYTES)));
    }
    text.push_str("Its tools:\n");
    for (tool, description) in tools.iter().take(MAX_TOOLS) {
        let first = description.split_terminator(['.', '\n']).next().unwrap_or("").trim();
        text.push_str(&format!("- {}: {}\n", clip(tool, MAX_TOOL_LINE), clip(first, MAX_TOOL_LINE)));
    }
    if tools.len() > MAX_TOOLS {
        text.push_str(&format!("- and {} more\n", tools.len() - MAX_TOOLS));
    }
    text.push_str(
        "\nIn two to four sentences, say what this service is for and what people would ask it \
         to do, in plain everyday words (other words for the same things are welcome). No \
         lists, no headings.",
    );
    text
}

/// The model's answer as one paragraph: markdown emphasis, headings, list marks and a leading
/// "Summary:" removed, whitespace collapsed, cut to [`MAX_SUMMARY_BYTES`] at a word.
fn clean(answer: &str) -> String {
    let mut words: Vec<&str> = Vec::new();
    for line in answer.lines() {
        let line = line.trim().trim_start_matches(['#', '-', '*', '>', '•']).trim();
        words.extend(line.split_whitespace().map(|word| word.trim_matches(['*', '_', '`'])).filter(|w| !w.is_empty()));
    }
    if words.first().is_some_and(|word| word.eq_ignore_ascii_case("summary:")) {
        words.remove(0);
    }
    let mut text = String::new();
    for word in words {
        if text.len() + word.len() + 1 > MAX_SUMMARY_BYTES {
            break;
        }
        if !text.is_empty() {
            text.push(' ');
        }
        text.push_str(word);
    }
    text
}

fn one_line(text: &str) -> String {
    text.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// `text` cut to at most `max` bytes on a character boundary.
fn clip(text: &str, max: usize) -> &str {
    let mut end = text.len().min(max);
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    &text[..end]
}

/// The non-empty parts, trimmed, each once, joined by a space and cut to
/// [`MAX_FAMILY_CONTEXT`] bytes on a character boundary.
pub(crate) fn family_context<'a>(parts: impl IntoIterator<Item = Option<&'a str>>) -> Option<String> {
    let mut text = String::new();
    for part in parts.into_iter().flatten().map(str::trim).filter(|part| !part.is_empty()) {
        if text.contains(part) {
            continue;
        }
        if !text.is_empty() {
            text.push(' ');
        }
        text.push_str(part);
    }
    let end = clip(&text, MAX_FAMILY_CONTEXT).len();
    text.truncate(end);
    (!text.is_empty()).then_some(text)
}

/// What a server says of itself in its handshake: its title and description (MCP's
/// `Implementation`), then its `instructions`, each once, at most [`MAX_FAMILY_CONTEXT`]
/// bytes in all. The gateway and [`McpServer::self_description`](super::McpServer::self_description)
/// both read it this way.
///
/// ```
/// use tinytools::mcp::rmcp::model::{Implementation, ProtocolVersion, ServerCapabilities, ServerPeerInfo};
/// use tinytools::mcp::self_description;
///
/// let info = ServerPeerInfo::new(ProtocolVersion::default(), ServerCapabilities::default())
///     .with_server_info(Implementation::new("clock", "1.0").with_title("Clock").with_description("Time zones."))
///     .with_instructions("Ask for the time anywhere.");
/// assert_eq!(self_description(&info).as_deref(), Some("Clock Time zones. Ask for the time anywhere."));
/// ```
pub fn self_description(info: &rmcp::model::ServerPeerInfo) -> Option<String> {
    let server = info.server_info.as_ref();
    let parts = [
        server.and_then(|server| server.title.as_deref()),
        server.and_then(|server| server.description.as_deref()),
        info.instructions.as_deref(),
    ];
    family_context(parts)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_servers_words_are_joined_once_and_capped() {
        assert_eq!(family_context([None, Some("  "), None]), None);
        let joined = family_context([Some("Time"), Some("Clock and time zones."), Some("Use it for dates.")]);
        assert_eq!(joined.as_deref(), Some("Time Clock and time zones. Use it for dates."));
        let repeated = family_context([Some("Clock and time zones."), Some("Clock and time zones.")]);
        assert_eq!(repeated.as_deref(), Some("Clock and time zones."));
        let long = family_context([Some("é".repeat(MAX_FAMILY_CONTEXT).as_str())]).unwrap_or_default();
        assert!(long.len() <= MAX_FAMILY_CONTEXT && long.len() >= MAX_FAMILY_CONTEXT - 1);
    }

    #[test]
    fn an_answer_becomes_one_clean_paragraph() {
        assert_eq!(clean("Summary: Sends mail.\n\n* Reads **inbox** too."), "Sends mail. Reads inbox too.");
        assert_eq!(clean("## Weather\n- `forecast` data"), "Weather forecast data");
        let long = clean(&"word ".repeat(400));
        assert!(long.len() <= MAX_SUMMARY_BYTES && long.ends_with("word"));
        assert_eq!(clean(" \n**\n"), "");
    }

    #[test]
    fn the_prompt_is_bounded_and_names_no_more_than_it_is_given() {
        let tools: Vec<(String, String)> = (0..60)
            .map(|i| (format!("tool_{i}"), format!("Does thing {i}. More detail {}", "x".repeat(500))))
            .collect();
        let borrowed: Vec<(&str, &str)> = tools.iter().map(|(a, b)| (a.as_str(), b.as_str())).collect();
        let text = prompt("svc", Some(&"é".repeat(2_000)), &borrowed);
        assert!(text.contains("- tool_39: Does thing 39\n"));
        assert!(!text.contains("tool_40:"));
        assert!(text.contains("- and 20 more"));
        assert!(!text.contains("More detail"));
        assert!(text.len() < 8_000, "{}", text.len());
        assert!(!prompt("svc", Some("  "), &[]).contains("says of itself"));
    }
}
