//! JSON-in-tag: `<tool_call>{"name": ..., "arguments": {...}}</tool_call>`.

use serde_json::Value;

use super::envelope::{CALL_CLOSE, CALL_OPEN};
use super::recovery::call_from_json;
use crate::ToolSchema;
use crate::model::ToolCall;

/// The catalogue as prompt text: each tool's description and parameter schema.
pub(crate) fn catalogue(tools: &[ToolSchema]) -> String {
    let mut text = String::from(
        "# Tools\n\nTo call a tool, write a block with its name and arguments as JSON:\n\
         <tool_call>{\"name\": \"tool_name\", \"arguments\": {\"arg\": \"value\"}}</tool_call>\n\
         You may write several blocks in one reply. Each result comes back in a <tool_result> block. \
         When you have the answer, reply without a <tool_call> block.\n\nAvailable tools:",
    );
    for tool in tools {
        text.push_str(&format!(
            "\n\n## {}\n{}\nParameters (JSON Schema): {}",
            tool.name, tool.description, tool.parameters
        ));
    }
    text
}

/// A call written the way this dialect asks the model to write it.
pub(crate) fn render_call(call: &ToolCall) -> String {
    let arguments: Value =
        serde_json::from_str(&call.arguments).unwrap_or_else(|_| Value::Object(serde_json::Map::new()));
    format!("{CALL_OPEN}{}{CALL_CLOSE}", serde_json::json!({"name": call.name, "arguments": arguments}))
}

/// Reads one block: the first JSON value in it, if it names an offered tool.
pub(crate) fn parse_block(block: &str, offered: &[&str], id: String) -> Option<ToolCall> {
    let start = block.find('{')?;
    let value = serde_json::Deserializer::from_str(&block[start..]).into_iter::<Value>().next()?.ok()?;
    call_from_json(&value, offered, id)
}
