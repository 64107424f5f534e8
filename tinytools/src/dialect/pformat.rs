//! P-Format: a compact positional call, `read_file[0|notes.txt|1|20]`.
//!
//! Each tool has a signature, `read_file[0|<path>|1|<limit>]`: required parameters first,
//! then the optional ones. A call sends only the slots it needs, as `slot|value` pairs;
//! `|`, `]` and `\` in a value are escaped with `\`. Values are read by the parameter's type;
//! a nested object or array is written as JSON in its slot, and a whole call may be written
//! as JSON inside the same tag.

use serde_json::{Map, Value};

use super::envelope::{CALL_CLOSE, CALL_OPEN};
use super::json_tag;
use super::recovery::repair_name;
use crate::ToolSchema;
use crate::model::ToolCall;
use crate::tool::{argument_notes, ordered_properties};

/// A tool's parameters in slot order.
fn slots(tool: &ToolSchema) -> Vec<(&str, &Value)> {
    ordered_properties(&tool.parameters)
}

/// `name[0|<a>|1|<b>]`.
pub(crate) fn signature(tool: &ToolSchema) -> String {
    let slots: Vec<String> = slots(tool).iter().enumerate().map(|(i, (name, _))| format!("{i}|<{name}>")).collect();
    format!("{}[{}]", tool.name, slots.join("|"))
}

/// The catalogue as prompt text: each tool's signature, description and argument notes.
pub(crate) fn catalogue(tools: &[ToolSchema]) -> String {
    let mut text = String::from(
        "# Tools\n\nTo call a tool, reply with <tool_call>name[slot|value|slot|value]</tool_call> using the slot \
         numbers of its signature, and nothing else in that reply; send only the slots you need (required ones \
         come first). Escape |, ] and \\ in a value with \\. Write an object or list value as JSON.",
    );
    if let Some(example) = tools.last() {
        let arguments = json_tag::example_arguments(example);
        let call = ToolCall { id: String::new(), name: example.name.clone(), arguments: arguments.to_string() };
        text.push_str(&format!("\nFor example:\n{}", render_call(&call, Some(example))));
    }
    text.push_str(
        "\nThe result comes back in a <tool_result> block. Never write a tool's result yourself. When you have \
         the answer, reply in plain text without a <tool_call>.\n\nAvailable tools:",
    );
    for tool in tools {
        text.push_str(&format!("\n\n{} — {}", signature(tool), tool.description));
        let notes = argument_notes(&tool.parameters);
        if !notes.is_empty() {
            text.push('\n');
            text.push_str(&notes);
        }
    }
    text
}

/// A call in P-Format, or as JSON in the tag when its arguments name no slot.
pub(crate) fn render_call(call: &ToolCall, tool: Option<&ToolSchema>) -> String {
    let arguments: Map<String, Value> = serde_json::from_str(&call.arguments).unwrap_or_default();
    let Some(tool) = tool else {
        return json_tag::render_call(call);
    };
    let slots = slots(tool);
    if arguments.keys().any(|key| !slots.iter().any(|(name, _)| name == key)) {
        return json_tag::render_call(call);
    }
    let mut parts = Vec::new();
    for (index, (name, _)) in slots.iter().enumerate() {
        if let Some(value) = arguments.get(*name) {
            let text = match value {
                Value::String(text) => text.clone(),
                other => other.to_string(),
            };
            parts.push(format!("{index}|{}", escape(&text)));
        }
    }
    format!("{CALL_OPEN}{}[{}]{CALL_CLOSE}", call.name, parts.join("|"))
}

fn escape(value: &str) -> String {
    let mut out = String::with_capacity(value.len());
    for c in value.chars() {
        if matches!(c, '|' | ']' | '\\') {
            out.push('\\');
        }
        out.push(c);
    }
    out
}

/// Reads one block: JSON inside the tag, or `name[slot|value|...]`.
///
/// A call cut off before its closing `]` (a reply that ran out of tokens) is no call: its
/// last value may be cut short too.
pub(crate) fn parse_block(
    block: &str,
    tools: &[ToolSchema],
    offered: &[&str],
    protected: &[&str],
    id: String,
) -> Option<ToolCall> {
    if block.trim_start().starts_with('{') {
        return json_tag::parse_block(block, offered, protected, id);
    }
    let open = block.find('[')?;
    let declared: Vec<&str> = tools.iter().map(|tool| tool.name.as_str()).collect();
    let name = repair_name(block[..open].trim(), &declared, protected)?;
    let tool = tools.iter().find(|tool| tool.name == name)?;
    let slots = slots(tool);
    let fields = split(&block[open + 1..])?;
    let mut arguments = Map::new();
    for pair in fields.chunks(2) {
        let [slot, value] = pair else { continue };
        let Some((param, schema)) = slot.trim().parse::<usize>().ok().and_then(|i| slots.get(i)) else { continue };
        arguments.insert((*param).to_owned(), coerce(value, schema));
    }
    Some(ToolCall { id, name, arguments: Value::Object(arguments).to_string() })
}

/// Splits a slot list at unescaped `|`, up to the first unescaped `]`, unescaping as it goes.
/// `None` when there is no closing `]`.
fn split(body: &str) -> Option<Vec<String>> {
    let mut fields = vec![String::new()];
    let mut closed = false;
    let mut chars = body.chars();
    while let Some(c) = chars.next() {
        match c {
            '\\' => {
                if let (Some(next), Some(field)) = (chars.next(), fields.last_mut()) {
                    field.push(next);
                }
            }
            '|' => fields.push(String::new()),
            ']' => {
                closed = true;
                break;
            }
            other => {
                if let Some(field) = fields.last_mut() {
                    field.push(other);
                }
            }
        }
    }
    if !closed {
        return None;
    }
    Some(if fields.len() == 1 && fields[0].is_empty() { Vec::new() } else { fields })
}

/// Reads a slot's text as its parameter's type.
fn coerce(text: &str, schema: &Value) -> Value {
    let ty = match schema.get("type") {
        Some(Value::String(ty)) => ty.as_str(),
        Some(Value::Array(types)) => types.iter().filter_map(Value::as_str).find(|t| *t != "null").unwrap_or("string"),
        _ => "",
    };
    let trimmed = text.trim();
    // Declared values come first: a schema may type a parameter `boolean` yet list "True".
    let as_json = serde_json::from_str::<Value>(trimmed).ok();
    if let Some(Value::Array(values)) = schema.get("enum")
        && let Some(value) = values.iter().find(|v| v.as_str() == Some(text) || as_json.as_ref() == Some(*v))
    {
        return value.clone();
    }
    let nullable = schema.get("type").and_then(Value::as_array).is_some_and(|types| types.iter().any(|t| t == "null"));
    if nullable && trimmed == "null" {
        return Value::Null;
    }
    let json = || serde_json::from_str::<Value>(trimmed).ok();
    match ty {
        "integer" => trimmed.parse::<i64>().map(Value::from).ok().or_else(json),
        "number" => {
            trimmed.parse::<f64>().ok().and_then(|n| serde_json::Number::from_f64(n).map(Value::Number)).or_else(json)
        }
        "boolean" => match trimmed.to_ascii_lowercase().as_str() {
            "true" => Some(Value::Bool(true)),
            "false" => Some(Value::Bool(false)),
            _ => None,
        },
        "array" | "object" => json(),
        "string" => Some(Value::String(text.to_owned())),
        // No declared type: a JSON value if it reads as one, else text.
        _ => json(),
    }
    .unwrap_or_else(|| Value::String(text.to_owned()))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn read_file() -> ToolSchema {
        ToolSchema {
            name: "read_file".into(),
            description: "Read a file.".into(),
            parameters: json!({"type": "object", "properties": {"path": {"type": "string"}, "limit": {"type": "integer"}}, "required": ["path"]}),
        }
    }

    #[test]
    fn a_call_cut_off_before_its_closing_bracket_is_no_call() {
        let tools = [read_file()];
        let whole = parse_block("read_file[0|notes.txt|1|20]", &tools, &["read_file"], &[], "c".into());
        assert_eq!(whole.map(|call| call.arguments), Some(json!({"path": "notes.txt", "limit": 20}).to_string()));
        assert!(parse_block("read_file[0|notes.t", &tools, &["read_file"], &[], "c".into()).is_none());
        assert!(
            parse_block("read_file[0|a\\]", &tools, &["read_file"], &[], "c".into()).is_none(),
            "an escaped ] does not close"
        );
    }
}
