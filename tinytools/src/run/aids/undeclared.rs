//! [`DropUndeclaredArguments`]: a read-only call refused only for arguments its tool does not
//! declare.

use serde_json::Value;

use super::{Aid, CallAction, RunView, listed};
use crate::model::ToolCall;

/// Runs a read-only tool's call whose only fault is top-level arguments the tool does not
/// declare without them, its answer led by a line naming what was left out, instead of
/// refusing it. A tool with side effects is never run on arguments other than the model's.
/// In no preset: opt-in by name (`docs/aids.md`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct DropUndeclaredArguments;

#[async_trait::async_trait]
impl Aid for DropUndeclaredArguments {
    fn name(&self) -> &'static str {
        "drop_undeclared_arguments"
    }

    async fn on_call(&self, view: &RunView<'_>, call: &ToolCall) -> CallAction {
        let Some(tool) = view.tool(&call.name) else {
            return CallAction::Run;
        };
        if !view.is_read_only(&call.name) {
            return CallAction::Run;
        }
        let Ok(Value::Object(mut arguments)) = serde_json::from_str::<Value>(&call.arguments) else {
            return CallAction::Run;
        };
        let declared = tool.schema().parameters.get("properties").and_then(Value::as_object);
        let names: Vec<String> = arguments
            .keys()
            .filter(|key| declared.is_none_or(|declared| !declared.contains_key(*key)))
            .cloned()
            .collect();
        // Admission runs only for a call with undeclared keys: every other call is the core's.
        if names.is_empty() || view.admits(&call.name, &call.arguments) {
            return CallAction::Run;
        }
        arguments.retain(|key, _| !names.contains(key));
        let kept = Value::Object(arguments).to_string();
        if !view.admits(&call.name, &kept) {
            return CallAction::Run;
        }
        let named: Vec<String> = names.iter().map(|name| format!("`{name}`")).collect();
        let them = if named.len() == 1 { "it" } else { "them" };
        let note = format!("`{}` does not take {}, so it ran without {them}:", call.name, listed(&named));
        CallAction::RunWith { arguments: kept, note }
    }
}
