//! Calls a reply spells out in prose instead of making, adopted as calls under
//! [`LoopGuard::adopt_described_calls`](super::LoopGuard::adopt_described_calls): which shapes
//! are read (`dialect/prose.rs` reads the text) and which tools may be taken from a sentence.

use serde_json::{Map, Value};

use super::agent::Run;
use crate::dialect::prose;
use crate::model::Message;
use crate::tool::TOOL_SEARCH;

impl Run<'_> {
    /// The call `answer` spells out, if one may be adopted: the tool alone, a described call
    /// with a JSON object, a look-up with its one value, or arguments written as assignments;
    /// never of a tool [`Run::not_adoptable`] protects. `offered` is every tool the model may
    /// call; `just_named`, the tools the unused-value question named if `answer` replies to it.
    pub(super) fn described_call(
        &self,
        answer: &str,
        offered: &[&str],
        destructive: &[String],
        just_named: &[String],
    ) -> Option<(String, Value)> {
        let protected = self.not_adoptable(offered, destructive, just_named);
        self.bare_call(answer, offered, &protected)
            .or_else(|| prose::described_call(answer, offered, &protected))
            .or_else(|| self.described_lookup(answer, offered, &protected))
            .or_else(|| self.described_assignments(answer, offered, &protected))
    }

    /// A reply that is only a tool — its name, or its declaration copied back from the request —
    /// as a call of it without arguments. Measured on Qwen2.5-Coder-1.5B: after `tool_search`
    /// found `crm_log_call` it replied "crm_log_call", and again after the nudge; after a
    /// refusal it copied back the declarations it had been sent. Answered with the tool's
    /// signature (admission refuses the empty arguments), it wrote the whole call. Taken only
    /// when the tool requires an argument, so the call cannot run, or may be adopted at all;
    /// never a tool that has already run without error ([`Run::echoes_a_tool_that_ran`]).
    fn bare_call(&self, answer: &str, offered: &[&str], protected: &[&str]) -> Option<(String, Value)> {
        let name = prose::bare_name(answer, offered).filter(|name| !self.ran(name))?;
        let requires_arguments = self.agent.registry.get(name).is_some_and(|tool| {
            tool.schema()
                .parameters
                .get("required")
                .and_then(Value::as_array)
                .is_some_and(|required| !required.is_empty())
        });
        (requires_arguments || !protected.contains(&name))
            .then(|| (name.to_owned(), Value::Object(serde_json::Map::new())))
    }

    /// A look-up described in prose with its one value (``call `jira_search_issues` with the
    /// query "status = 'In Progress'"``), as a call: only of a read-only tool whose schema
    /// requires exactly one parameter, a string, which takes the value. Measured on
    /// Qwen2.5-Coder-1.5B with 41 tools declared: told to look an id up first, it wrote such a
    /// sentence, and again after the nudge, instead of the call. The bridge's own `tool_search`
    /// is such a look-up, its value the query: with no tool declared yet for "When could
    /// priya@acme.com and tom@acme.com both do a 45-minute chat?", the model wrote "you can call
    /// the `tool_search` function with the query \"chat times Priya Tom 45 minutes ...\"", and
    /// again after the nudge.
    ///
    /// A sentence that names another argument besides the value's is not one look-up: measured
    /// on the same model, after `stock_quote` had run without the `vs_currency` it does not take,
    /// its restatement of that call was adopted as `stock_quote` of "USD".
    fn described_lookup(&self, answer: &str, offered: &[&str], protected: &[&str]) -> Option<(String, Value)> {
        let (name, value) = prose::described_lookup(answer, offered, protected)?;
        let Some(tool) = self.agent.registry.get(&name) else {
            let intrinsic =
                name == TOOL_SEARCH && self.bridge.is_active() && !names_another(answer, &value, &[&name, "query"]);
            return intrinsic.then(|| (name, serde_json::json!({ "query": value })));
        };
        if tool.annotations().has_side_effects() {
            return None;
        }
        let parameters = &tool.schema().parameters;
        let [Value::String(required)] = parameters.get("required")?.as_array()?.as_slice() else {
            return None;
        };
        let kind = parameters.get("properties")?.get(required)?.get("type")?;
        if kind != "string" || names_another(answer, &value, &[&name, required]) {
            return None;
        }
        let mut arguments = serde_json::Map::new();
        arguments.insert(required.clone(), Value::String(value));
        Some((name, Value::Object(arguments)))
    }

    /// The offered tools a call spelt out in prose may not be taken for: the destructive ones
    /// always; once any tool other than `tool_search` has answered (the answer to a name no
    /// tool has does not count: measured on Qwen2.5-Coder-1.5B, after `create_document` was
    /// answered with the tools that may fit, it wrote `docs_create_document`'s call in prose
    /// with its JSON, and the run ended there), every tool with side effects too — from then
    /// on the prose may repeat what a tool's output told the model to do, and only a read-only
    /// call is adopted from it — except, in the reply to the
    /// unused-value question, the tools it named (`just_named`, never destructive): that
    /// question asked for their call. Measured on Qwen2.5-Coder-1.5B at 1,041 tools: asked
    /// with `drive_share_file` named first, it answered "you can use the `drive_share_file`
    /// function with the following arguments:" and the call's JSON, and the run ended there.
    fn not_adoptable<'a>(&self, offered: &[&'a str], destructive: &'a [String], just_named: &[String]) -> Vec<&'a str> {
        let mut protected: Vec<&str> = destructive.iter().map(String::as_str).collect();
        let registry = &self.agent.registry;
        // The answer to a name no tool has is the run's own (it loads the tools that may fit),
        // not a tool's output.
        let read_output =
            self.transcript.messages.iter().any(
                |m| matches!(m, Message::Tool { name, .. } if name != TOOL_SEARCH && registry.get(name).is_some()),
            );
        if read_output {
            protected.extend(offered.iter().filter(|name| {
                !just_named.iter().any(|named| named == *name)
                    && registry.get(name).is_none_or(|tool| tool.annotations().has_side_effects())
            }));
        }
        protected
    }

    /// Whether `answer` is only the name (or copied declaration) of a tool that has already run
    /// without error: an echo, not a call, which the loop treats as an empty reply. Measured on
    /// Qwen2.5-Coder-1.5B: after `slack_post_message` had posted, it replied with the tool
    /// alone; taken for a call without arguments, refused, it made the post again and answered
    /// "Sorry, but I can't assist with that."
    pub(super) fn echoes_a_tool_that_ran(&self, answer: &str, offered: &[&str]) -> bool {
        prose::bare_name(answer, offered).is_some_and(|name| self.ran(name))
    }

    /// Whether the model gave `answer` before its last reply, word for word: then the reply
    /// repeats itself and answers nothing asked since. Measured on Qwen2.5-Coder-1.5B at 1,041
    /// tools: asked about two addresses left over in "When could priya@acme.com and
    /// tom@acme.com both do a 45-minute chat?", it sent back its earlier sentence describing a
    /// `calendar_invite` for a "Standup"; adopted, that booked a meeting nobody asked for.
    pub(super) fn said_before(&self, answer: &str) -> bool {
        let answer = answer.trim();
        let earlier = self.transcript.messages.len().saturating_sub(1);
        self.transcript.messages[..earlier]
            .iter()
            .any(|m| matches!(m, Message::Assistant { content, .. } if content.trim() == answer))
    }

    /// Whether `name` has answered a call without error in this run.
    fn ran(&self, name: &str) -> bool {
        self.transcript
            .messages
            .iter()
            .any(|m| matches!(m, Message::Tool { name: ran, is_error: false, .. } if ran == name))
    }

    /// A call whose arguments the prose writes as assignments (``file_id="doc_88"``,
    /// `email: 'ben@acme.com'`, `limit=5`) of the one tool it names, when it holds no JSON
    /// object: every required parameter assigned one value, of its type (a string's value in
    /// quotes; a number, integer or boolean's bare or quoted), and no parameter given two.
    /// Measured on Qwen2.5-Coder-1.5B at 1,041 tools: asked about an address left over with
    /// `drive_share_file` named, it answered "I have called the `drive_share_file` function
    /// with the arguments `file_id="doc_88"`, `email="ben@acme.com"`, and `role="writer"`."
    fn described_assignments(&self, answer: &str, offered: &[&str], protected: &[&str]) -> Option<(String, Value)> {
        let name = prose::assignment_target(answer, offered, protected)?;
        let parameters = &self.agent.registry.get(name)?.schema().parameters;
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
}

/// Whether `text`, its quoted `value` aside, names an identifier other than `known` (the tool
/// and the parameter the value is for): a word in backticks, or one with an underscore
/// (`vs_currency`), is an argument's name or value the sentence gives besides.
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
        for text in [
            "Call `stock_quote` with the `symbol` \"GLOBX\".",
            "Use the stock_quote function with the symbol \"GLOBX\".",
            "To find the ticket, call `jira_search_issues` with `\"project = OPS_1\"`.",
        ] {
            let value = if text.contains("OPS_1") { "project = OPS_1" } else { "GLOBX" };
            let known = if text.contains("jira") { ["jira_search_issues", "jql"] } else { known };
            assert!(!names_another(text, value, &known), "{text}");
        }
        for text in [
            "Use `stock_quote` with the `symbol` 'GLOBX' and the `vs_currency` parameter set to \"USD\".",
            "Use stock_quote with symbol GLOBX and vs_currency \"USD\".",
            "Use `stock_quote` with `GLOBX` and \"USD\".",
        ] {
            assert!(names_another(text, "USD", &known), "{text}");
        }
    }

    #[test]
    fn a_value_takes_its_parameters_type_or_none() {
        let of = |value: serde_json::Value, kind: serde_json::Value| of_type(value, &json!({"type": kind}));
        assert_eq!(of(json!("doc_88"), json!("string")), Some(json!("doc_88")));
        assert_eq!(of(json!(5), json!("integer")), Some(json!(5)));
        assert_eq!(of(json!("5"), json!(["integer", "null"])), Some(json!(5)));
        assert_eq!(of(json!(2.5), json!("number")), Some(json!(2.5)));
        assert_eq!(of(json!("true"), json!("boolean")), Some(json!(true)));
        assert_eq!(of(json!(310), json!("string")), Some(json!("310")));
        // A fraction is no integer, a word no number, and a parameter without a type takes nothing.
        assert_eq!(of(json!(2.5), json!("integer")), None);
        assert_eq!(of(json!("five"), json!("integer")), None);
        assert_eq!(of_type(json!("x"), &json!({"anyOf": [{"type": "string"}]})), None);
    }
}
