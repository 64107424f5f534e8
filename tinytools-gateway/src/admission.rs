//! A `call_tool` checked before it is forwarded: its name resolved to a server, its
//! arguments repaired when a model sent them as JSON text, and the answers a model reads when
//! the call cannot go on: the arguments' violations with the tool's signature, or, for a name
//! no tool has, the tools its words fit.

use serde_json::{Map, Value};
use tinytools::discovery::{MAX_SUGGESTIONS, unknown_call_query, unknown_tool_answer};
use tinytools::mcp::default_prefix;
use tinytools::tool::{argument_notes, type_signature};
use tinytools::{ToolError, ToolSchema};

use crate::catalog::Catalog;
use crate::supervisor::Supervisor;

/// The configured server whose `server__` prefix `name` starts with (the longest, when two
/// do), whether or not its tools are known.
pub fn server_for<'s>(supervisor: &'s Supervisor, name: &str) -> Option<&'s str> {
    supervisor
        .servers()
        .map(|server| server.config().name.as_str())
        .filter(|server| name.starts_with(default_prefix(server).as_str()))
        .max_by_key(|server| server.len())
}

/// What the model reads when admission refuses a call's arguments: every violation, then the
/// tool's compact signature and argument notes, then the call to send again. A client never
/// shows the model a searched tool's schema except inside the search answer, so a model that
/// wrote `arguments` from memory (missing `to`, a wrong type) gets what it needs to fix them
/// here, as the in-process bridge answers a deferred tool called without its schema.
pub fn rejection(catalog: &Catalog, name: &str, error: &ToolError) -> String {
    let mut text = error.to_model_result().to_model_text();
    let Some(tool) = catalog.registry().get(name) else { return text };
    let parameters = &tool.schema().parameters;
    text.push_str(&format!("\n`{name}` takes: {}", type_signature(parameters)));
    let notes = argument_notes(parameters);
    if !notes.is_empty() {
        text.push('\n');
        text.push_str(&notes);
    }
    text.push_str(&format!(
        "\nCall it again through call_tool with {{\"name\": \"{name}\", \"arguments\": {{...}}}} holding every required argument."
    ));
    text
}

/// What the model reads when `call_tool` names no tool of the catalogue: the tools that the
/// name's words and the arguments rank best for, each with its compact signature, and how to
/// call one, as the runtime answers an unknown name while its bridge is active. A tool is
/// named when its confidence reaches the discovery policy's pre-promotion floor, the floor the
/// runtime ranks unknown names under. When nothing ranks, close spellings and the hint to search. The answer never repeats the name it was
/// given, and names only tools that `tool_search` could find.
pub async fn unknown(catalog: &Catalog, name: &str, arguments: &Value) -> String {
    let raw = match arguments {
        Value::String(text) => text.clone(),
        other => other.to_string(),
    };
    let bridge = catalog.bridge();
    let floor = bridge.policy().pre_promotion.min_confidence;
    let outcome = bridge.catalog().rank(bridge.policy(), &unknown_call_query(name, &raw), MAX_SUGGESTIONS).await;
    let fits: Vec<ToolSchema> = outcome
        .matched
        .iter()
        .filter(|hit| hit.confidence.is_some_and(|confidence| confidence >= floor))
        .filter_map(|hit| catalog.registry().get(&hit.name).map(|tool| tool.schema().clone()))
        .collect();
    if fits.is_empty() {
        return unknown_tool_answer(name, catalog.names(), true, &[]).to_model_text();
    }
    let mut text = String::from("No tool by that name is available. These tools may fit:");
    for tool in &fits {
        text.push_str(&format!("\n- `{}` takes {}", tool.name, type_signature(&tool.parameters)));
    }
    text.push_str(
        "\nCall the one that fits through call_tool with {\"name\": \"<its name>\", \"arguments\": {...}}; if none \
         fits, call tool_search with a short description of the task.",
    );
    text
}

/// The arguments as an object: absent is `{}`, and an object sent as a JSON string is parsed.
pub fn repair(arguments: Value) -> Result<Map<String, Value>, String> {
    match arguments {
        Value::Object(map) => Ok(map),
        Value::Null => Ok(Map::new()),
        Value::String(text) if text.trim().is_empty() => Ok(Map::new()),
        Value::String(text) => match serde_json::from_str::<Value>(&text) {
            Ok(Value::Object(map)) => Ok(map),
            _ => Err("\"arguments\" must be a JSON object of the tool's parameters, such as {\"city\": \"Paris\"}; \
                      it was a string that is not a JSON object."
                .to_owned()),
        },
        other => Err(format!(
            "\"arguments\" must be a JSON object of the tool's parameters, not {}; send an object such as {{\"city\": \"Paris\"}}.",
            json_kind(&other)
        )),
    }
}

/// What a JSON value is, with its article, for messages ("an object", "a string").
pub(crate) fn json_kind(value: &Value) -> &'static str {
    match value {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn stringified_arguments_are_parsed_and_others_refused() {
        assert_eq!(repair(json!("{\"a\": 1}")).unwrap(), json!({"a": 1}).as_object().unwrap().clone());
        assert!(repair(Value::Null).unwrap().is_empty());
        assert!(repair(json!("")).unwrap().is_empty());
        assert!(repair(json!("[1]")).unwrap_err().contains("not a JSON object"));
        assert!(repair(json!(3)).unwrap_err().contains("not a number"));
    }

    #[test]
    fn a_name_is_routed_by_its_longest_server_prefix() {
        let text = json!({"mcpServers": {"a": {"command": "x"}, "a__b": {"command": "y"}, "ghost": {"command": "z"}}});
        let config = crate::config::GatewayConfig::parse("c.json", &text.to_string()).unwrap();
        let supervisor = Supervisor::new(&config, None);
        assert_eq!(server_for(&supervisor, "ghost__haunt"), Some("ghost"));
        assert_eq!(server_for(&supervisor, "a__b__c"), Some("a__b"));
        assert_eq!(server_for(&supervisor, "a__c"), Some("a"));
        assert_eq!(server_for(&supervisor, "haunt"), None);
    }
}
