//! A family's description ranks, and only ranks: the manifest and `tool_search` answers stay
//! byte for byte what they were without it.

use std::sync::Arc;

use serde_json::{Value, json};

use super::{DeferredCatalog, DiscoveryBridge, ToolDiscoveryPolicy};
use crate::rank::FieldWeights;
use crate::schema::EstimatedTokens;
use crate::{Tool, ToolExposure, ToolRegistry, ToolResult};

/// A deferred stub in a family.
struct Stub {
    name: &'static str,
    description: &'static str,
    family: &'static str,
}

#[async_trait::async_trait]
impl Tool for Stub {
    fn name(&self) -> &str {
        self.name
    }
    fn description(&self) -> &str {
        self.description
    }
    fn parameters_schema(&self) -> Value {
        json!({"type": "object", "properties": {"title": {"type": "string", "description": "A title."}}})
    }
    fn exposure(&self) -> ToolExposure {
        ToolExposure::Deferred
    }
    fn family(&self) -> Option<&str> {
        Some(self.family)
    }
    async fn execute(&self, _args: Value) -> anyhow::Result<ToolResult> {
        Ok(ToolResult::text("ok"))
    }
}

fn registry() -> ToolRegistry {
    let mut registry = ToolRegistry::new();
    for (name, description, family) in [
        ("create_record", "Create a record.", "crm"),
        ("create_note", "Create a note.", "notes"),
        ("create_event", "Create an event.", "calendar"),
        ("list_records", "List records.", "crm"),
    ] {
        registry.register_arc(Arc::new(Stub { name, description, family })).expect("registers");
    }
    registry
}

const CRM: &str = "Customer accounts, sales leads and deals.";

fn names(catalog: &DeferredCatalog, query: &str) -> Vec<String> {
    catalog.bm25(query, 4).into_iter().map(|hit| hit.name).collect()
}

#[test]
fn a_query_only_the_family_description_matches_finds_the_familys_tools() {
    let plain = registry();
    let mut described = registry();
    described.describe_family("crm", CRM).expect("a valid family");
    let before = DeferredCatalog::new(&plain, |_| true);
    let after = DeferredCatalog::new(&described, |_| true);
    assert!(names(&before, "sales leads").is_empty(), "no tool's own text says it");
    assert_eq!(names(&after, "sales leads"), ["create_record", "list_records"]);
    // "create" ties the three create_ tools; the description breaks the tie for the crm one.
    assert_eq!(names(&after, "create a lead")[0], "create_record");
    // A query the tools' own words answer keeps its answer.
    assert_eq!(names(&after, "create a note")[0], "create_note");
    // Described again with nothing: as if never described.
    described.describe_family("crm", " ").expect("valid");
    assert_eq!(described.family_description("crm"), None);
    assert!(names(&DeferredCatalog::new(&described, |_| true), "sales leads").is_empty());
    assert!(described.describe_family("not a family", CRM).is_err());
}

#[test]
fn the_family_descriptions_weight_scales_its_pull_and_zero_turns_it_off() {
    let mut registry = registry();
    registry.describe_family("crm", CRM).expect("valid");
    registry.describe_family("notes", "Notes and records of meetings.").expect("valid");
    let surface = crate::surface::Surface::all(&registry);
    let weighted = |weight: f32| {
        DeferredCatalog::of_surface_weighted(&surface, &FieldWeights::default().with_family_description(weight))
    };
    assert!(names(&weighted(0.0), "sales leads").is_empty(), "weight 0 leaves the field out");
    let score = |weight: f32| {
        let catalog = weighted(weight);
        catalog.bm25_at("deals", 1).first().map(|&(at, confidence)| (at, confidence))
    };
    let (low, high) = (score(0.3).expect("found"), score(1.0).expect("found"));
    assert_eq!(low.0, high.0, "the same tool");
    assert!(high.1 > low.1, "a heavier field scores higher: {low:?} {high:?}");
    // The description counts below the tool's own words: "meetings" is only in the notes
    // family's description, "note" in create_note's own name.
    assert_eq!(names(&weighted(0.3), "meetings"), ["create_note"]);
}

#[tokio::test]
async fn the_manifest_and_search_answers_do_not_grow() {
    let plain = registry();
    let mut described = registry();
    described.describe_family("crm", CRM).expect("valid");
    described.describe_family("notes", "Notes of meetings, kept in folders.").expect("valid");
    let policy = ToolDiscoveryPolicy::default;
    let (before, after) = (DiscoveryBridge::new(&plain, policy()), DiscoveryBridge::new(&described, policy()));
    assert_eq!(before.schema(&EstimatedTokens), after.schema(&EstimatedTokens), "the manifest");
    assert_eq!(before.advertised(&EstimatedTokens), after.advertised(&EstimatedTokens));
    for query in ["create a note", "create", "list records"] {
        let args = json!({"query": query});
        let (a, b) = (before.search(&args).await, after.search(&args).await);
        assert_eq!(a.result, b.result, "{query}: the same answer");
    }
    // A query only the description matches is answered with schemas as they always are.
    let answer = after.search(&json!({"query": "sales leads"})).await;
    let text = answer.result.to_model_text();
    assert!(text.contains("create_record") && !text.contains("leads"), "{text}");
    let bytes_alone = serde_json::to_string(&after.prepared_schema("create_record")).unwrap_or_default();
    assert!(!bytes_alone.contains("Customer"));
}
