//! Every attribute key, every parameter form and every return shape, compiled and run.

use serde::{Deserialize, Serialize};
use serde_json::json;
use tinytools::{SchemaCompaction, Tool, ToolContext, ToolExposure, ToolResult, tool};

#[derive(Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
enum Unit {
    Celsius,
    Fahrenheit,
}

#[derive(Serialize)]
struct Reading {
    city: String,
    degrees: f64,
}

/// Current temperature in a city.
#[tool(
    name = "weather-now",
    exposure = "deferred",
    family = "weather.v2",
    read_only,
    open_world = true,
    compaction = "third_party",
    allow_unknown_arguments,
)]
async fn weather(
    /// City name, such as Lisbon.
    city: String,
    /// Unit of the answer.
    #[serde(default = "celsius")]
    unit: Unit,
) -> Result<Reading, tinytools::Refusal> {
    match unit {
        Unit::Celsius => Ok(Reading { city, degrees: 21.5 }),
        Unit::Fahrenheit => Err("fahrenheit is not supported yet; ask for celsius".into()),
    }
}

fn celsius() -> Unit {
    Unit::Celsius
}

/// Delete a note for good.
///
/// # Arguments
///
/// * `title` - The note's exact title.
#[tool(exposure = "hidden", destructive, idempotent, max_schema_bytes = 2_000, max_description_bytes = 100, blocking)]
fn delete_note(title: String, ctx: &ToolContext) -> ToolResult {
    ToolResult::text(format!("deleted {title} in call {}", ctx.call_id()))
}

/// Say hello.
#[tool(description = "Greets whoever asks.")]
pub async fn hello(ctx: ToolContext, r#type: Option<String>) {
    let _ = (ctx, r#type);
}

fn main() {
    let weather = Weather;
    assert_eq!(weather.name(), "weather-now");
    assert_eq!(weather.exposure(), ToolExposure::Deferred);
    assert_eq!(weather.family(), Some("weather.v2"));
    let annotations = weather.annotations();
    assert_eq!(
        (annotations.read_only, annotations.destructive, annotations.idempotent, annotations.open_world),
        (true, false, true, true)
    );
    assert_eq!(weather.schema_compaction(), Some(SchemaCompaction::THIRD_PARTY));
    let schema = weather.parameters_schema();
    assert_eq!(schema["required"], json!(["city"]));

    let delete = DeleteNote;
    assert_eq!(delete.exposure(), ToolExposure::Hidden);
    assert_eq!(delete.description(), "Delete a note for good.");
    assert_eq!(delete.parameters_schema()["properties"]["title"]["description"], "The note's exact title.");
    let budget = delete.schema_compaction().expect("a budget");
    assert_eq!((budget.max_description_bytes, budget.max_schema_bytes), (Some(100), Some(2_000)));
    assert!(delete.annotations().destructive && delete.annotations().idempotent);
    assert!(delete.blocking() && !weather.blocking());

    let hello = Hello;
    assert_eq!(hello.description(), "Greets whoever asks.");
    assert!(hello.parameters_schema()["properties"].get("type").is_some());
    assert!(hello.parameters_schema()["properties"].get("ctx").is_none());

    let runtime = tokio::runtime::Builder::new_current_thread().build().unwrap();
    runtime.block_on(async {
        let ok = weather.execute(json!({"city": "Lisbon"})).await.unwrap();
        assert_eq!(ok, ToolResult::json(json!({"city": "Lisbon", "degrees": 21.5})));
        let refused = weather.execute(json!({"city": "Lisbon", "unit": "fahrenheit"})).await.unwrap();
        assert!(refused.is_error);

        let ctx = ToolContext::new("call_7");
        let deleted = delete.execute_with(json!({"title": "todo"}), &ctx).await.unwrap();
        assert_eq!(deleted.to_model_text(), "deleted todo in call call_7");

        assert_eq!(hello.execute(json!({})).await.unwrap().to_model_text(), "ok");
    });
}
