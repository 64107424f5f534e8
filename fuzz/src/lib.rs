//! What the fuzz targets share: a small catalogue of realistic tools.

use serde_json::{Value, json};
use tinytools::{Tool, ToolExposure, ToolRegistry, ToolResult, ToolSchema};

/// A tool with a given schema that answers "ok".
pub struct Fixed {
    /// Its declaration.
    pub schema: ToolSchema,
    /// Its exposure.
    pub exposure: ToolExposure,
}

#[async_trait::async_trait]
impl Tool for Fixed {
    fn name(&self) -> &str {
        &self.schema.name
    }
    fn description(&self) -> &str {
        &self.schema.description
    }
    fn parameters_schema(&self) -> Value {
        self.schema.parameters.clone()
    }
    fn exposure(&self) -> ToolExposure {
        self.exposure
    }
    async fn execute(&self, _args: Value) -> anyhow::Result<ToolResult> {
        Ok(ToolResult::text("ok"))
    }
}

/// Declarations of a few tools of different shapes.
pub fn schemas() -> Vec<ToolSchema> {
    let tool = |name: &str, description: &str, parameters: Value| ToolSchema::new(name, description, parameters);
    vec![
        tool(
            "stock_quote",
            "Fetch the latest price for a ticker symbol.",
            json!({"type": "object", "properties": {"symbol": {"type": "string", "description": "Ticker."}, "limit": {"type": "integer", "minimum": 0}}, "required": ["symbol"]}),
        ),
        tool(
            "read_file",
            "Read a file from the workspace.",
            json!({"type": "object", "properties": {"path": {"type": "string"}, "limit": {"type": ["integer", "null"]}}, "required": ["path"]}),
        ),
        tool(
            "calendar_invite",
            "Invite people to a meeting.",
            json!({"type": "object", "properties": {"title": {"type": "string"}, "attendees": {"type": "array", "items": {"type": "string", "format": "email"}}, "when": {"type": "object", "properties": {"start": {"type": "string"}, "minutes": {"type": "integer"}}, "required": ["start"]}}, "required": ["title", "attendees"]}),
        ),
        tool(
            "delete_file",
            "Delete a file.",
            json!({"type": "object", "properties": {"path": {"type": "string"}}, "required": ["path"]}),
        ),
        tool(
            "weather_forecast",
            "Forecast the weather for a city.",
            json!({"type": "object", "properties": {"city": {"type": "string"}, "days": {"type": "integer", "enum": [1, 3, 7]}}, "required": ["city"]}),
        ),
    ]
}

/// The same tools registered, all but the first Deferred.
pub fn registry() -> ToolRegistry {
    let mut registry = ToolRegistry::new();
    for (i, schema) in schemas().into_iter().enumerate() {
        let exposure = if i == 0 { ToolExposure::Direct } else { ToolExposure::Deferred };
        let _ = registry.register(Fixed { schema, exposure });
    }
    registry
}
