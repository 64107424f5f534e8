//! JSON-in-tag: `<tool_call>{"name": ..., "arguments": {...}}</tool_call>`.

use serde_json::Value;

use super::envelope::{CALL_CLOSE, CALL_OPEN};
use super::recovery::call_from_json;
use crate::ToolSchema;
use crate::model::ToolCall;

/// The catalogue as prompt text: how to call, a worked example with the last tool offered
/// (the bridge, when there is one), then each tool's description and parameter schema.
pub(crate) fn catalogue(tools: &[ToolSchema]) -> String {
    let mut text = String::from(
        "# Tools\n\nTo call a tool, reply with a <tool_call> block holding JSON with its name and arguments, \
         and nothing else in that reply.",
    );
    if let Some(example) = tools.last() {
        let call = serde_json::json!({"name": example.name, "arguments": example_arguments(example)});
        text.push_str(&format!("\nFor example:\n{CALL_OPEN}{call}{CALL_CLOSE}"));
    }
    text.push_str(
        "\nThe result comes back in a <tool_result> block. Never write a tool's result yourself. \
         When you have the answer, reply in plain text without a <tool_call> block.\n\nAvailable tools:",
    );
    for tool in tools {
        text.push_str(&format!(
            "\n\n## {}\n{}\nParameters (JSON Schema): {}",
            tool.name, tool.description, tool.parameters
        ));
    }
    text
}

/// Placeholder arguments for a tool's required parameters, for a worked example.
pub(crate) fn example_arguments(tool: &ToolSchema) -> Value {
    let required = tool.parameters.get("required").and_then(Value::as_array).cloned().unwrap_or_default();
    let properties = tool.parameters.get("properties").and_then(Value::as_object);
    let mut arguments = serde_json::Map::new();
    for name in required.iter().filter_map(Value::as_str) {
        let ty = properties
            .and_then(|p| p.get(name))
            .and_then(|p| p.get("type"))
            .and_then(Value::as_str)
            .unwrap_or("string");
        let placeholder = match ty {
            "integer" | "number" => serde_json::json!(1),
            "boolean" => serde_json::json!(true),
            "array" => serde_json::json!([]),
            "object" => serde_json::json!({}),
            _ if name == "query" => serde_json::json!("what you want to do"),
            _ => serde_json::json!("..."),
        };
        arguments.insert(name.to_owned(), placeholder);
    }
    Value::Object(arguments)
}

/// A call written the way this dialect asks the model to write it.
pub(crate) fn render_call(call: &ToolCall) -> String {
    let arguments: Value =
        serde_json::from_str(&call.arguments).unwrap_or_else(|_| Value::Object(serde_json::Map::new()));
    format!("{CALL_OPEN}{}{CALL_CLOSE}", serde_json::json!({"name": call.name, "arguments": arguments}))
}

/// Reads one block: the first JSON value in it, if it names an offered tool.
pub(crate) fn parse_block(block: &str, offered: &[&str], protected: &[&str], id: String) -> Option<ToolCall> {
    let start = block.find('{')?;
    let value = serde_json::Deserializer::from_str(&block[start..]).into_iter::<Value>().next()?.ok()?;
    call_from_json(&value, offered, protected, id)
}
