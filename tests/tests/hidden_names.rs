//! Property: no Hidden (or non-admitted) tool's name ever reaches the model — not in the tools
//! array, the manifest, a search answer, or an unknown-tool answer — whatever the registry
//! and whatever the model asks, including asking for the hidden name itself.

use std::sync::Arc;

use proptest::prelude::*;
use serde_json::{Value, json};
use tinytools::discovery::{DiscoveryBridge, ToolDiscoveryPolicy};
use tinytools::schema::EstimatedTokens;
use tinytools::{Tool, ToolExposure, ToolRegistry, ToolResult};

/// Words of visible tools; hidden tools use a disjoint vocabulary, so a hidden name can never
/// be a substring of anything visible by accident.
const VISIBLE: &[&str] = &["stock", "quote", "weather", "email", "send", "list", "file", "note", "calendar", "issue"];
const HIDDEN: &[&str] = &["zorblax", "quimby", "vextor", "plonk", "fizzgig", "wuggle"];

struct Declared {
    name: String,
    description: String,
    family: Option<String>,
}

#[async_trait::async_trait]
impl Tool for Declared {
    fn name(&self) -> &str {
        &self.name
    }
    fn description(&self) -> &str {
        &self.description
    }
    fn parameters_schema(&self) -> Value {
        json!({"type": "object", "properties": {"query": {"type": "string", "description": self.description}}})
    }
    fn family(&self) -> Option<&str> {
        self.family.as_deref()
    }
    async fn execute(&self, _args: Value) -> anyhow::Result<ToolResult> {
        Ok(ToolResult::text("ok"))
    }
}

#[derive(Clone, Debug)]
struct Spec {
    words: (usize, usize),
    exposure: u8,
    admitted: bool,
}

fn spec() -> impl Strategy<Value = Spec> {
    ((0..VISIBLE.len(), 0..VISIBLE.len()), 0_u8..3, prop::bool::weighted(0.8))
        .prop_map(|(words, exposure, admitted)| Spec { words, exposure, admitted })
}

fn query() -> impl Strategy<Value = String> {
    prop::collection::vec(prop::sample::select([VISIBLE, HIDDEN].concat()), 0..5).prop_map(|words| words.join(" "))
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(96))]

    #[test]
    fn hidden_and_non_admitted_names_never_reach_the_model(
        specs in prop::collection::vec(spec(), 1..14),
        hidden_words in prop::collection::vec((0..HIDDEN.len(), 0..HIDDEN.len()), 1..4),
        queries in prop::collection::vec(query(), 1..6),
        limit in prop::option::of(0_i64..30),
        budget in prop::sample::select(vec![0_usize, 5, 40, 4_000]),
    ) {
        let mut registry = ToolRegistry::new();
        let mut secret: Vec<String> = Vec::new();
        let mut admitted: Vec<String> = Vec::new();
        for (i, spec) in specs.iter().enumerate() {
            let name = format!("{}_{}_{i:02}", VISIBLE[spec.words.0], VISIBLE[spec.words.1]);
            let description = format!("{} the {} of the user.", VISIBLE[spec.words.1], VISIBLE[spec.words.0]);
            let exposure = [ToolExposure::Direct, ToolExposure::Deferred, ToolExposure::Hidden][spec.exposure as usize];
            let tool = Declared { name: name.clone(), description, family: Some(VISIBLE[spec.words.0].to_owned()) };
            registry.register_as(Arc::new(tool), exposure).expect("unique names");
            if exposure == ToolExposure::Hidden || !spec.admitted {
                secret.push(name);
            } else {
                admitted.push(name);
            }
        }
        for (i, (a, b)) in hidden_words.iter().enumerate() {
            let name = format!("{}_{}_{i:02}", HIDDEN[*a], HIDDEN[*b]);
            let description = format!("{} every {} in the {} store.", HIDDEN[*a], HIDDEN[*b], VISIBLE[i % VISIBLE.len()]);
            let tool = Declared { name: name.clone(), description, family: Some(HIDDEN[*b].to_owned()) };
            registry.register_as(Arc::new(tool), ToolExposure::Hidden).expect("unique names");
            secret.push(name);
        }
        let allowed = |name: &str| admitted.iter().any(|a| a == name) || HIDDEN.iter().any(|h| name.starts_with(h));
        let policy = ToolDiscoveryPolicy { manifest_token_budget: budget, ..Default::default() };
        let bridge = DiscoveryBridge::new(&registry, policy, allowed);

        let mut said: Vec<String> = Vec::new();
        said.push(serde_json::to_string(&bridge.advertised(&registry, allowed, &EstimatedTokens)).unwrap_or_default());
        let runtime = tokio::runtime::Builder::new_current_thread().enable_time().build().expect("runtime");
        for query in &queries {
            let args = match limit {
                Some(limit) => json!({"query": query, "limit": limit}),
                None => json!({"query": query}),
            };
            said.push(runtime.block_on(bridge.search(&args)).result.to_model_text());
        }
        let mut requests: Vec<String> = secret.clone();
        requests.extend(queries.iter().map(|q| q.replace(' ', "_")));
        requests.extend(secret.iter().map(|s| format!("{s}x")));
        for requested in &requests {
            said.push(bridge.unknown_tool(requested, &registry, allowed).to_model_text());
        }

        for text in &said {
            for name in &secret {
                prop_assert!(!text.contains(name.as_str()), "`{}` reached the model in: {}", name, text);
            }
            for word in HIDDEN {
                prop_assert!(!text.contains(word), "hidden word `{}` reached the model in: {}", word, text);
            }
        }
    }
}
