//! The offline stand-in for a model that the examples share: search, call the best match, answer.

use serde_json::{Value, json};
use tinytools::model::{Message, ModelRequest, ModelResponse};
use tinytools::testkit::ScriptedModel;

/// A three-turn model: `tool_search` with `query`; a call of whatever the search ranked first,
/// with `args`; then the text `answer` makes of that call's JSON result (`None` when the result
/// was not JSON).
pub fn search_call_answer(
    query: &str,
    args: Value,
    answer: impl Fn(Option<&Value>) -> String + Send + Sync + 'static,
) -> ScriptedModel {
    let query = query.to_owned();
    ScriptedModel::dynamic(vec![
        Box::new(move |_: &ModelRequest| ModelResponse::calls([("call_1", "tool_search", json!({"query": query}))])),
        Box::new(move |request: &ModelRequest| {
            let found = last_tool_json(request, Some("tool_search"))
                .and_then(|answer| answer["matches"][0]["name"].as_str().map(str::to_owned))
                .unwrap_or_default();
            ModelResponse::calls([("call_2", found.as_str(), args.clone())])
        }),
        Box::new(move |request: &ModelRequest| ModelResponse::text(answer(last_tool_json(request, None).as_ref()))),
    ])
}

/// The latest tool answer in the request (of the named tool, if given), parsed as JSON.
fn last_tool_json(request: &ModelRequest, tool: Option<&str>) -> Option<Value> {
    request.messages.iter().rev().find_map(|m| match m {
        Message::Tool { name, content, .. } if tool.is_none_or(|t| t == name) => serde_json::from_str(content).ok(),
        _ => None,
    })
}
