//! [`RunView`]: what an aid, or the host's dynamic [instructions](super::Instructions), may
//! read of a run.

use std::collections::BTreeMap;

use crate::discovery::{DeferredCatalog, DiscoveryBridge, ToolDiscoveryPolicy};
use crate::model::{Message, ToolCall};
use crate::registry::ToolRegistry;
use crate::schema::TokenCounter;
use crate::surface::SurfaceTool;
use crate::{ToolExposure, ToolSchema};

/// A read-only view of a run, as an [`Aid`](super::aids::Aid) and
/// [`Instructions::dynamic`](super::Instructions::dynamic) see it: the conversation, the user's
/// request, the tools offered this turn, the run's surface (never a Hidden tool), the deferred
/// catalogue, and what aids did so far.
pub struct RunView<'r> {
    pub(crate) messages: &'r [Message],
    pub(crate) request: Option<&'r str>,
    pub(crate) turn: usize,
    pub(crate) max_turns: usize,
    pub(crate) offered: &'r [String],
    pub(crate) registry: &'r ToolRegistry,
    pub(crate) bridge: &'r DiscoveryBridge,
    pub(crate) promoted: &'r [ToolSchema],
    pub(crate) counter: &'r dyn TokenCounter,
    pub(crate) feedback: &'r BTreeMap<&'static str, usize>,
}

impl RunView<'_> {
    /// The conversation so far, the model's latest turn last.
    pub fn messages(&self) -> &[Message] {
        self.messages
    }

    /// The user's request: the last [`Message::User`] of the conversation.
    pub fn request(&self) -> Option<&str> {
        self.request
    }

    /// The model call this is (1-based), and the most the run may make.
    pub fn turn(&self) -> (usize, usize) {
        (self.turn, self.max_turns)
    }

    /// The names the model could call in its latest turn (declared, or callable by name).
    pub fn offered(&self) -> impl Iterator<Item = &str> {
        self.offered.iter().map(String::as_str)
    }

    /// A tool of the run's surface (Direct or Deferred, admitted by every rule); `None` for
    /// any other name, Hidden ones included.
    pub fn tool(&self, name: &str) -> Option<&SurfaceTool> {
        self.bridge.surface().get(name)
    }

    /// Whether calling `name` cannot change anything: a read-only tool of the surface, or the
    /// bridge's own `tool_search`.
    pub fn is_read_only(&self, name: &str) -> bool {
        self.bridge.is_read_only(name)
    }

    /// Whether admission would accept these arguments (JSON text) for the surface tool `name`.
    pub fn admits(&self, name: &str, arguments: &str) -> bool {
        self.tool(name).is_some() && self.registry.admit(name, arguments).is_ok()
    }

    /// Whether the `tool_search` bridge is on for this run (the run answers `tool_search`;
    /// not in provider-native mode with the provider searching).
    pub fn discovery_active(&self) -> bool {
        self.bridge.answers_search()
    }

    /// The run's deferred catalogue (empty while discovery is off).
    pub fn catalog(&self) -> &DeferredCatalog {
        self.bridge.catalog()
    }

    /// The run's discovery policy.
    pub fn discovery(&self) -> &ToolDiscoveryPolicy {
        self.bridge.policy()
    }

    /// Whether `name` is a deferred tool of the surface.
    pub fn is_deferred(&self, name: &str) -> bool {
        self.bridge.surface().exposure(name) == Some(ToolExposure::Deferred)
    }

    /// The tools promoted so far, in order.
    pub fn promoted(&self) -> &[ToolSchema] {
        self.promoted
    }

    /// The declaration the run would send for a deferred tool of the surface.
    pub fn prepared_schema(&self, name: &str) -> Option<ToolSchema> {
        self.bridge.prepared_schema(name)
    }

    /// `query` ranked against the deferred catalogue like a user message: the hits past
    /// query-aware discovery's floor and within its budget and limit; none while it is off.
    pub async fn ranked(&self, query: &str) -> Vec<ToolSchema> {
        super::promotion::ranked(self.bridge, self.counter, query).await
    }

    /// How many feedback messages the aid of that name has sent in this run.
    pub fn feedback_sent(&self, aid: &str) -> usize {
        self.feedback.get(aid).copied().unwrap_or(0)
    }

    /// Whether the surface tool `name` has answered a call without error in this run.
    pub fn ran_ok(&self, name: &str) -> bool {
        self.tool(name).is_some()
            && self
                .messages
                .iter()
                .any(|m| matches!(m, Message::Tool { name: ran, is_error: false, .. } if ran == name))
    }

    /// Whether a surface tool other than `tool_search` has answered (with or without error).
    pub fn read_tool_output(&self) -> bool {
        self.messages.iter().any(|m| matches!(m, Message::Tool { name, .. } if self.tool(name).is_some()))
    }

    /// Every call of the conversation with its answer (`None` while unanswered), in order.
    pub fn calls(&self) -> Vec<(&ToolCall, Option<(&str, bool)>)> {
        let mut calls: Vec<(&ToolCall, Option<(&str, bool)>)> = Vec::new();
        // The calls of the latest assistant turn: results answer them by id.
        let mut open = 0..0;
        for message in self.messages {
            match message {
                Message::Assistant { tool_calls, .. } => {
                    open = calls.len()..calls.len() + tool_calls.len();
                    calls.extend(tool_calls.iter().map(|call| (call, None)));
                }
                Message::Tool { call_id, content, is_error, .. } => {
                    let answered =
                        calls[open.clone()].iter_mut().find(|(call, answer)| call.id == *call_id && answer.is_none());
                    if let Some((_, answer)) = answered {
                        *answer = Some((content.as_str(), *is_error));
                    }
                }
                _ => {}
            }
        }
        calls
    }

    /// How many calls the conversation's latest assistant turn with calls made (the last that
    /// many of [`calls`](Self::calls)).
    pub fn latest_calls(&self) -> usize {
        self.messages
            .iter()
            .rev()
            .find_map(|m| match m {
                Message::Assistant { tool_calls, .. } if !tool_calls.is_empty() => Some(tool_calls.len()),
                _ => None,
            })
            .unwrap_or(0)
    }
}

/// A call's identity: its name and its arguments with object keys sorted (text that is not
/// JSON stands for itself).
pub(crate) fn call_key(call: &ToolCall) -> String {
    let arguments = match serde_json::from_str::<serde_json::Value>(&call.arguments) {
        Ok(value) => canonical(&value),
        Err(_) => call.arguments.trim().to_owned(),
    };
    format!("{}\u{0}{arguments}", call.name)
}

/// JSON with every object's keys sorted, whatever the map's own order.
fn canonical(value: &serde_json::Value) -> String {
    use serde_json::Value;
    match value {
        Value::Object(map) => {
            let mut entries: Vec<(&String, &Value)> = map.iter().collect();
            entries.sort_by(|a, b| a.0.cmp(b.0));
            let inner: Vec<String> =
                entries.iter().map(|(k, v)| format!("{}:{}", Value::String((*k).clone()), canonical(v))).collect();
            format!("{{{}}}", inner.join(","))
        }
        Value::Array(items) => format!("[{}]", items.iter().map(canonical).collect::<Vec<_>>().join(",")),
        other => other.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::call_key;
    use crate::model::ToolCall;

    fn call(name: &str, arguments: &str) -> ToolCall {
        ToolCall { id: "c".into(), name: name.into(), arguments: arguments.into() }
    }

    #[test]
    fn a_call_is_the_same_whatever_its_key_order_or_spacing() {
        let a = call_key(&call("t", r#"{"b": 1, "a": {"y": [1, 2], "x": null}}"#));
        let b = call_key(&call("t", r#"{"a":{"x":null,"y":[1,2]},"b":1}"#));
        assert_eq!(a, b);
        assert_ne!(a, call_key(&call("u", r#"{"a":{"x":null,"y":[1,2]},"b":1}"#)));
        assert_ne!(a, call_key(&call("t", r#"{"a":{"x":null,"y":[2,1]},"b":1}"#)));
    }
}
