//! [`KeywordModel`]: an offline stand-in that exercises every path of the benchmark without
//! knowing any task.

use serde_json::{Map, Value, json};
use tinytools::model::{ChatModel, Message, ModelError, ModelRequest, ModelResponse};
use tinytools::rank::{Bm25Index, FieldWeights, ToolDocument};
use tinytools::tool::TOOL_SEARCH;

use tinytools::mcp::CALL_TOOL;

/// A deterministic, task-blind model: it calls the offered tool whose declaration best matches
/// the user's words (BM25), else searches with those words and calls the first match (through
/// a gateway's `call_tool` when that is offered and the match is not); every argument it sends
/// is a placeholder of the schema's type; after a tool's answer it replies in text. It proves
/// the benchmark runs end to end (CI runs it); its score measures nothing.
#[derive(Clone, Copy, Debug, Default)]
pub struct KeywordModel;

#[async_trait::async_trait]
impl ChatModel for KeywordModel {
    async fn complete(&self, request: &ModelRequest) -> Result<ModelResponse, ModelError> {
        let id = format!("kw_{}", request.messages.len());
        let Some(last) = request.messages.last() else {
            return Ok(ModelResponse::text("Nothing was asked."));
        };
        match last {
            Message::Tool { name, content, .. } if name == TOOL_SEARCH => {
                let found: Value = serde_json::from_str(content).unwrap_or(Value::Null);
                let first = &found["matches"][0];
                let Some(name) = first["name"].as_str() else {
                    return Ok(ModelResponse::text("No tool fits this request."));
                };
                let arguments = placeholder(&first["parameters"], 0);
                let offered = |wanted: &str| request.tools.iter().any(|tool| tool.name == wanted);
                Ok(if !offered(name) && offered(CALL_TOOL) {
                    let forwarded = json!({"name": name, "arguments": arguments});
                    ModelResponse::calls([(id.as_str(), CALL_TOOL, forwarded)])
                } else {
                    ModelResponse::calls([(id.as_str(), name, arguments)])
                })
            }
            Message::Tool { content, .. } => {
                Ok(ModelResponse::text(format!("Done: {}", content.chars().take(80).collect::<String>())))
            }
            _ => {
                let query = latest_user_text(request);
                // `tool_search` and a gateway's `call_tool` do no task themselves.
                let offered: Vec<_> =
                    request.tools.iter().filter(|tool| tool.name != TOOL_SEARCH && tool.name != CALL_TOOL).collect();
                let documents: Vec<ToolDocument<'_>> =
                    offered.iter().map(|tool| ToolDocument::new(tool, None)).collect();
                let index = Bm25Index::with_fields(documents.iter().map(|d| d.fields(FieldWeights::default())));
                if let Some(hit) = index.search(query, 1).first() {
                    let tool = offered[hit.doc];
                    return Ok(ModelResponse::calls([(
                        id.as_str(),
                        tool.name.as_str(),
                        placeholder(&tool.parameters, 0),
                    )]));
                }
                if request.tools.iter().any(|tool| tool.name == TOOL_SEARCH) {
                    return Ok(ModelResponse::calls([(id.as_str(), TOOL_SEARCH, json!({"query": query}))]));
                }
                Ok(ModelResponse::text("I have no tool for that."))
            }
        }
    }
}

fn latest_user_text(request: &ModelRequest) -> &str {
    request
        .messages
        .iter()
        .rev()
        .find_map(|message| match message {
            Message::User { content } => Some(content.as_str()),
            _ => None,
        })
        .unwrap_or_default()
}

/// A value of the schema's type for every required property (first enum value, `"x"`, `1`,
/// `true`, one-element arrays), nested objects three levels deep.
fn placeholder(schema: &Value, depth: usize) -> Value {
    if let Some(first) = schema.get("enum").and_then(Value::as_array).and_then(|values| values.first()) {
        return first.clone();
    }
    let ty = match schema.get("type") {
        Some(Value::String(ty)) => ty.as_str(),
        Some(Value::Array(types)) => types.iter().filter_map(Value::as_str).find(|t| *t != "null").unwrap_or("string"),
        _ if schema.get("properties").is_some() => "object",
        _ => "string",
    };
    match ty {
        "object" if depth < 3 => {
            let required: Vec<&str> = schema
                .get("required")
                .and_then(Value::as_array)
                .into_iter()
                .flatten()
                .filter_map(Value::as_str)
                .collect();
            let properties = schema.get("properties").and_then(Value::as_object);
            let object: Map<String, Value> = required
                .iter()
                .map(|name| {
                    let property = properties.and_then(|p| p.get(*name)).unwrap_or(&Value::Null);
                    ((*name).to_owned(), placeholder(property, depth + 1))
                })
                .collect();
            Value::Object(object)
        }
        "array" if depth < 3 => json!([placeholder(schema.get("items").unwrap_or(&Value::Null), depth + 1)]),
        "integer" | "number" => json!(1),
        "boolean" => json!(true),
        "object" => json!({}),
        "array" => json!([]),
        _ => json!("x"),
    }
}
