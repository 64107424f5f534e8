//! Exposure middleware: narrowing `request.tools` per turn.
//!
//! Both run in `before_model`, before searched tools are appended, so neither ever sees a
//! deferred tool: narrowing deferred tools is done at registration or with the run's
//! allow-list.

use super::Middleware;
use crate::ToolSchema;
use crate::model::{Message, ModelRequest};
use crate::rank::{Bm25Index, FieldWeights, ToolDocument};

/// Keeps the tools most related to the latest user message (BM25 over the tools offered this
/// turn), plus any tool named in `always`.
///
/// ```
/// use tinytools::middleware::ContextualToolSelectionMiddleware;
///
/// let selection = ContextualToolSelectionMiddleware::new(8).always(["ask_user", "tool_search"]);
/// # let _ = selection;
/// ```
#[derive(Clone, Debug)]
pub struct ContextualToolSelectionMiddleware {
    keep: usize,
    always: Vec<String>,
}

impl ContextualToolSelectionMiddleware {
    /// Keeps at most `keep` tools chosen by relevance (besides the `always` ones).
    pub fn new(keep: usize) -> Self {
        Self { keep, always: Vec::new() }
    }

    /// Tools kept whatever the context (an ask-the-user tool, `tool_search`).
    #[must_use]
    pub fn always<S: Into<String>>(mut self, names: impl IntoIterator<Item = S>) -> Self {
        self.always = names.into_iter().map(Into::into).collect();
        self
    }
}

#[async_trait::async_trait]
impl Middleware for ContextualToolSelectionMiddleware {
    async fn before_model(&self, request: &mut ModelRequest) {
        let Some(latest) = request.messages.iter().rev().find_map(|message| match message {
            Message::User { content } => Some(content.as_str()),
            _ => None,
        }) else {
            return;
        };
        let documents: Vec<ToolDocument<'_>> = request.tools.iter().map(|tool| ToolDocument::new(tool, None)).collect();
        let index = Bm25Index::with_fields(documents.iter().map(|d| d.fields(FieldWeights::default())));
        let chosen: Vec<usize> = index.search(latest, self.keep).into_iter().map(|hit| hit.doc).collect();
        let keep: Vec<bool> = request
            .tools
            .iter()
            .enumerate()
            .map(|(i, tool)| chosen.contains(&i) || self.always.contains(&tool.name))
            .collect();
        let mut index = 0;
        request.tools.retain(|_| {
            index += 1;
            keep[index - 1]
        });
    }
}

type Select = dyn Fn(&ModelRequest, &ToolSchema) -> bool + Send + Sync;

/// Keeps the tools a host function selects each turn, looking at the whole request.
///
/// ```
/// use tinytools::middleware::DynamicToolSelectionMiddleware;
///
/// // No shell tool once the conversation is long.
/// let selection = DynamicToolSelectionMiddleware::new(|request, tool| tool.name != "shell" || request.messages.len() < 20);
/// # let _ = selection;
/// ```
pub struct DynamicToolSelectionMiddleware {
    select: Box<Select>,
}

impl DynamicToolSelectionMiddleware {
    /// `select(request, tool)` says whether `tool` stays this turn.
    pub fn new(select: impl Fn(&ModelRequest, &ToolSchema) -> bool + Send + Sync + 'static) -> Self {
        Self { select: Box::new(select) }
    }
}

#[async_trait::async_trait]
impl Middleware for DynamicToolSelectionMiddleware {
    async fn before_model(&self, request: &mut ModelRequest) {
        let keep: Vec<bool> = request.tools.iter().map(|tool| (self.select)(request, tool)).collect();
        let mut index = 0;
        request.tools.retain(|_| {
            index += 1;
            keep[index - 1]
        });
    }
}
