//! [`AdoptProseCalls`]: a read-only call a reply spelt out in prose instead of making it.

use serde_json::{Map, Value};

use super::view::call_key;
use super::{Aid, Feedback, ReplyAction, RunView, prose};
use crate::model::ToolCall;
use crate::tool::{TOOL_SEARCH, type_signature};

/// Takes a look-up a reply describes instead of making for the call: a reply that names one
/// read-only tool the model may call and holds its arguments (one JSON object, a quoted call
/// `{"name": …, "arguments": …}`, `key="value"` assignments of every required parameter, or
/// the one quoted value of a tool with one required string parameter), or that is only the
/// tool's name. Never a tool with side effects, whatever the prose says: a reply that is only
/// such a tool's name gets its signature back as feedback instead (at most twice a run). Once
/// a tool's output is in the conversation, never an `open_world` tool either: the prose may be
/// repeating that output, and a look-up that reaches the outside world can carry it out (a URL
/// a document planted). A call already made is not taken again. In no preset: opt-in by name (`docs/aids.md`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct AdoptProseCalls;

/// How many signatures this aid sends back in one run.
const MAX_FEEDBACK: usize = 2;

#[async_trait::async_trait]
impl Aid for AdoptProseCalls {
    fn name(&self) -> &'static str {
        "adopt_prose_calls"
    }

    async fn on_reply(&self, view: &RunView<'_>, reply: &str) -> ReplyAction {
        let offered: Vec<&str> = view.offered().collect();
        // Only read-only tools may be taken from a sentence; once a tool's output was read,
        // only those that stay inside.
        let read_output = view.read_tool_output();
        let outside = |name: &str| view.tool(name).is_some_and(|tool| tool.spec().annotations.open_world);
        let protected: Vec<&str> =
            offered.iter().copied().filter(|name| !view.is_read_only(name) || read_output && outside(name)).collect();
        if let Some(name) = prose::bare_name(reply, &offered).filter(|name| !view.ran_ok(name)) {
            return bare(view, name, &protected, view.feedback_sent(self.name()) < MAX_FEEDBACK);
        }
        let described = prose::described_call(reply, &offered, &protected)
            .or_else(|| described_lookup(view, reply, &offered, &protected))
            .or_else(|| described_assignments(view, reply, &offered, &protected));
        let Some((name, arguments)) = described else {
            return ReplyAction::Accept;
        };
        let call = ToolCall { id: format!("adopted_{}", view.turn().0), name, arguments: arguments.to_string() };
        let key = call_key(&call);
        if view.calls().iter().any(|(earlier, _)| call_key(earlier) == key) {
            return ReplyAction::Accept;
        }
        ReplyAction::TakeCall(call)
    }
}

/// A reply that is only a tool's name: a read-only tool that needs no argument is called; any
/// other gets its signature back, so the model can write the call.
fn bare(view: &RunView<'_>, name: &str, protected: &[&str], may_tell: bool) -> ReplyAction {
    let parameters = view.tool(name).map(|tool| tool.schema().parameters.clone());
    let requires = parameters.as_ref().and_then(|p| p.get("required")).and_then(Value::as_array);
    if !protected.contains(&name) && requires.is_none_or(Vec::is_empty) {
        let id = format!("adopted_{}", view.turn().0);
        return ReplyAction::TakeCall(ToolCall { id, name: name.to_owned(), arguments: "{}".to_owned() });
    }
    match parameters {
        Some(parameters) if may_tell => ReplyAction::Feedback(Feedback::new(format!(
            "Your reply named `{name}` but made no call. To call it, make the call; `{name}` takes: {}",
            type_signature(&parameters)
        ))),
        _ => ReplyAction::Accept,
    }
}

/// A look-up described in prose with its one value (``call `jira_search_issues` with the
/// query "status = 'In Progress'"``), as a call: only of a read-only tool whose schema requires
/// exactly one parameter, a string, which takes the value; or of `tool_search`, the value its
/// query. A sentence that names another argument besides is not one look-up.
fn described_lookup(view: &RunView<'_>, answer: &str, offered: &[&str], protected: &[&str]) -> Option<(String, Value)> {
    let (name, value) = prose::described_lookup(answer, offered, protected)?;
    let Some(tool) = view.tool(&name) else {
        let intrinsic =
            name == TOOL_SEARCH && view.discovery_active() && !names_another(answer, &value, &[&name, "query"]);
        return intrinsic.then(|| (name, serde_json::json!({ "query": value })));
    };
    let parameters = &tool.schema().parameters;
    let [Value::String(required)] = parameters.get("required")?.as_array()?.as_slice() else {
        return None;
    };
    let kind = parameters.get("properties")?.get(required)?.get("type")?;
    if kind != "string" || names_another(answer, &value, &[&name, required]) {
        return None;
    }
    let mut arguments = Map::new();
    arguments.insert(required.clone(), Value::String(value));
    Some((name, Value::Object(arguments)))
}

/// A call whose arguments the prose writes as assignments (``file_id="f_1"``, `limit=5`) of
/// the one tool it names, when it holds no JSON object: every required parameter assigned one
/// value, of its type, and no parameter given two.
fn described_assignments(
    view: &RunView<'_>,
    answer: &str,
    offered: &[&str],
    protected: &[&str],
) -> Option<(String, Value)> {
    let name = prose::assignment_target(answer, offered, protected)?;
    let parameters = &view.tool(name)?.schema().parameters;
    let mut arguments = Map::new();
    for (parameter, property) in parameters.get("properties")?.as_object()? {
        match prose::assigned(answer, parameter) {
            Ok(None) => {}
            Ok(Some(value)) => {
                arguments.insert(parameter.clone(), of_type(value, property)?);
            }
            Err(prose::TwoValues) => return None,
        }
    }
    let required = parameters.get("required").and_then(Value::as_array).map(Vec::as_slice).unwrap_or_default();
    let complete = required.iter().all(|name| name.as_str().is_some_and(|name| arguments.contains_key(name)));
    (complete && !arguments.is_empty()).then(|| (name.to_owned(), Value::Object(arguments)))
}

/// Whether `text`, its quoted `value` aside, names an identifier other than `known` (the tool
/// and the parameter the value is for): a word in backticks, or one with an underscore, is an
/// argument's name or value the sentence gives besides.
fn names_another(text: &str, value: &str, known: &[&str]) -> bool {
    let text = text.replacen(value, " ", 1);
    text.split(|c: char| !(c.is_alphanumeric() || c == '_' || c == '`')).any(|token| {
        let bare = token.trim_matches('`');
        let ticked = token.len() > bare.len() + 1 && token.starts_with('`') && token.ends_with('`');
        !bare.is_empty() && (ticked || bare.contains('_')) && !known.contains(&bare)
    })
}

/// `value` as `property`'s type takes it: a string for a string, a number or boolean from its
/// text; `None` when it cannot be.
fn of_type(value: Value, property: &Value) -> Option<Value> {
    let types: Vec<&str> = match property.get("type") {
        Some(Value::String(one)) => vec![one.as_str()],
        Some(Value::Array(many)) => many.iter().filter_map(Value::as_str).collect(),
        _ => Vec::new(),
    };
    let takes = |kind: &str| types.contains(&kind);
    match value {
        Value::String(text) if takes("string") => Some(Value::String(text)),
        Value::String(text) => {
            let parsed: Value = serde_json::from_str(text.trim()).ok()?;
            (!parsed.is_string()).then_some(parsed).and_then(|parsed| of_type(parsed, property))
        }
        Value::Number(number) if takes("number") || takes("integer") && (number.is_i64() || number.is_u64()) => {
            Some(Value::Number(number))
        }
        Value::Number(number) => takes("string").then(|| Value::String(number.to_string())),
        Value::Bool(flag) => takes("boolean").then_some(Value::Bool(flag)),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::{names_another, of_type};

    #[test]
    fn a_look_up_sentence_names_no_other_argument() {
        let known = ["stock_quote", "symbol"];
        for text in
            ["Call `stock_quote` with the `symbol` \"ACME\".", "Use the stock_quote function with the symbol \"ACME\"."]
        {
            assert!(!names_another(text, "ACME", &known), "{text}");
        }
        let known = ["jira_search_issues", "jql"];
        assert!(!names_another("Call `jira_search_issues` with `\"project = OPS_1\"`.", "project = OPS_1", &known));
        let known = ["stock_quote", "symbol"];
        for text in [
            "Use `stock_quote` with the `symbol` 'ACME' and the `vs_currency` parameter set to \"USD\".",
            "Use stock_quote with symbol ACME and vs_currency \"USD\".",
            "Use `stock_quote` with `ACME` and \"USD\".",
        ] {
            assert!(names_another(text, "USD", &known), "{text}");
        }
    }

    #[test]
    fn a_value_takes_its_parameters_type_or_none() {
        let of = |value: serde_json::Value, kind: serde_json::Value| of_type(value, &json!({"type": kind}));
        assert_eq!(of(json!("f_1"), json!("string")), Some(json!("f_1")));
        assert_eq!(of(json!(5), json!("integer")), Some(json!(5)));
        assert_eq!(of(json!("5"), json!(["integer", "null"])), Some(json!(5)));
        assert_eq!(of(json!(2.5), json!("number")), Some(json!(2.5)));
        assert_eq!(of(json!("true"), json!("boolean")), Some(json!(true)));
        assert_eq!(of(json!(310), json!("string")), Some(json!("310")));
        assert_eq!(of(json!(2.5), json!("integer")), None);
        assert_eq!(of(json!("five"), json!("integer")), None);
        assert_eq!(of_type(json!("x"), &json!({"anyOf": [{"type": "string"}]})), None);
    }
}
