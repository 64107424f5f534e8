//! A family description is part of what is embedded for a tool: a change re-embeds the
//! family's tools, and nothing else does.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use super::{EmbeddingError, EmbeddingRanker, TextEmbedder};
use crate::rank::{DeferredCatalog, RankRequest, ToolRanker};

/// Counts the texts it embeds.
struct Counting(AtomicUsize);

impl TextEmbedder for Counting {
    fn name(&self) -> &str {
        "counting"
    }
    fn embed(&self, texts: &[&str]) -> Result<Vec<Vec<f32>>, EmbeddingError> {
        self.0.fetch_add(texts.len(), Ordering::SeqCst);
        Ok(super::length_vectors(texts))
    }
}

/// A deferred stub in a family (`rank` may not reach up into `discovery`'s test tools).
struct InFamily(&'static str, &'static str);

#[async_trait::async_trait]
impl crate::Tool for InFamily {
    fn name(&self) -> &str {
        self.0
    }
    fn description(&self) -> &str {
        "Create one."
    }
    fn parameters_schema(&self) -> serde_json::Value {
        serde_json::json!({"type": "object"})
    }
    fn exposure(&self) -> crate::ToolExposure {
        crate::ToolExposure::Deferred
    }
    fn family(&self) -> Option<&str> {
        Some(self.1)
    }
    async fn execute(&self, _args: serde_json::Value) -> anyhow::Result<crate::ToolResult> {
        Ok(crate::ToolResult::text("ok"))
    }
}

#[tokio::test]
async fn a_tool_is_embedded_again_when_its_family_description_changes_and_only_then() {
    const CRM: &str = "Customer accounts, sales leads and deals.";
    let registry = || {
        let mut registry = crate::ToolRegistry::new();
        for (name, family) in
            [("create_record", "crm"), ("create_note", "notes"), ("create_event", "calendar"), ("list_records", "crm")]
        {
            registry.register(InFamily(name, family)).map(|_| ()).unwrap_or_else(|e| panic!("{e}"));
        }
        registry
    };
    let embedder = Arc::new(Counting(0.into()));
    let ranker = EmbeddingRanker::new(embedder.clone());
    let context = crate::rank::RankContext::default();
    let embedded_after = |registry: &crate::ToolRegistry| {
        let catalog = DeferredCatalog::new(registry, |_| true);
        let (ranker, context, embedder) = (&ranker, &context, &embedder);
        async move {
            let _ = ranker.rank(RankRequest { query: "x", limit: 5, catalog: &catalog, context }).await;
            embedder.0.load(Ordering::SeqCst)
        }
    };
    let mut registry = registry();
    assert_eq!(embedded_after(&registry).await, 5, "four tools and the query");
    assert_eq!(embedded_after(&registry).await, 6, "a new catalogue of the same tools: the query only");
    registry.describe_family("crm", CRM).expect("valid");
    assert_eq!(embedded_after(&registry).await, 9, "the two crm tools again, and the query");
    assert_eq!(embedded_after(&registry).await, 10, "then the query only");
    registry.describe_family("crm", "").expect("valid");
    assert_eq!(embedded_after(&registry).await, 13, "undescribed: the crm tools again");
}
