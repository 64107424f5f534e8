//! A third-party tool's budget bounds every wire form of it, even in a run that prepares no
//! schemas (`RunPolicy::tool_schemas` unset): an imported tool with a 1 MB description never
//! reaches the model whole.

use std::sync::Arc;

use serde_json::json;
use tinytools::discovery::PrePromotion;
use tinytools::model::{Message, ModelResponse};
use tinytools::run::{Agent, RunPolicy};
use tinytools::testkit::ScriptedModel;
use tinytools::{SchemaCompaction, Tool, ToolExposure, ToolRegistry, ToolResult};

/// What an MCP import registers: a Deferred tool under the `THIRD_PARTY` budget, here with a
/// description a hostile or careless server could send.
struct Imported {
    name: &'static str,
    exposure: ToolExposure,
    description: String,
}

#[async_trait::async_trait]
impl Tool for Imported {
    fn name(&self) -> &str {
        self.name
    }
    fn description(&self) -> &str {
        &self.description
    }
    fn parameters_schema(&self) -> serde_json::Value {
        json!({"type": "object", "properties": {"city": {"type": "string", "description": "x".repeat(100_000)}}, "required": ["city"]})
    }
    fn exposure(&self) -> ToolExposure {
        self.exposure
    }
    fn schema_compaction(&self) -> Option<SchemaCompaction> {
        Some(SchemaCompaction::THIRD_PARTY)
    }
    async fn execute(&self, _args: serde_json::Value) -> anyhow::Result<ToolResult> {
        Ok(ToolResult::text("sunny"))
    }
}

#[tokio::test]
async fn a_one_megabyte_description_is_bounded_in_the_manifest_search_promotion_and_direct_array() {
    let huge = format!("Weather forecast for a city. {}", "Lorem ipsum dolor sit amet. ".repeat(40_000));
    assert!(huge.len() > 1_000_000);
    let mut registry = ToolRegistry::new();
    for (name, exposure) in [("weather_forecast", ToolExposure::Deferred), ("weather_now", ToolExposure::Direct)] {
        registry.register(Imported { name, exposure, description: huge.clone() }).expect("registers");
    }
    let model = Arc::new(ScriptedModel::new([
        ModelResponse::calls([("c1", "tool_search", json!({"query": "weather forecast"}))]),
        ModelResponse::text("done"),
    ]));
    let mut policy = RunPolicy::default();
    policy.discovery.pre_promotion = PrePromotion::off();
    assert!(policy.tool_schemas.is_none());
    let agent = Agent::new(Arc::new(registry), model.clone()).with_policy(policy);
    let outcome = agent.run(vec![Message::user("forecast for Lisbon")]).await.expect("runs");

    let budget = SchemaCompaction::THIRD_PARTY;
    let max_description = budget.max_description_bytes.expect("a description budget");
    let max_schema = budget.max_schema_bytes.expect("a schema budget");
    let requests = model.requests();
    for (turn, request) in requests.iter().enumerate() {
        for tool in &request.tools {
            let bytes = serde_json::to_string(tool).expect("serialises").len();
            let cap = if tool.name == "tool_search" { 20_000 } else { max_schema + 200 };
            assert!(bytes <= cap, "turn {turn}: `{}` is {bytes} bytes on the wire", tool.name);
            if tool.name != "tool_search" {
                assert!(tool.description.len() <= max_description, "turn {turn}: {}", tool.name);
            }
        }
    }
    assert!(requests[1].tools.iter().any(|t| t.name == "weather_forecast"), "the search promoted it");
    let answer = outcome
        .transcript
        .messages
        .iter()
        .find_map(|m| match m {
            Message::Tool { name, content, .. } if name == "tool_search" => Some(content.clone()),
            _ => None,
        })
        .expect("the search answered");
    assert!(answer.contains("weather_forecast") && answer.len() < max_schema + 1_000, "{} bytes", answer.len());
}
