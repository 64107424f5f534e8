//! A typed run's output schema ([`ModelRequest::output`](crate::model::ModelRequest::output))
//! in each provider's own field, in strict form: every object closed, every property required
//! and the optional ones nullable, as the providers' structured output demands.

use serde_json::{Value, json};

use crate::ToolSchema;
use crate::model::OutputSchema;
use crate::schema::{ProviderProfile, SchemaPreparation};

/// `output`'s schema as `profile` takes it in strict mode.
fn strict(output: &OutputSchema, profile: ProviderProfile) -> Value {
    let schema = ToolSchema::new(output.name.clone(), String::new(), output.schema.clone());
    SchemaPreparation::new(profile).with_strict(true).prepare(&schema, None).schema.parameters
}

/// Chat Completions' `response_format`.
pub(super) fn chat_response_format(output: &OutputSchema) -> Value {
    json!({"type": "json_schema", "json_schema": {"name": output.name, "strict": true, "schema": strict(output, ProviderProfile::OPENAI)}})
}

/// The Responses API's `text` (its `format`).
pub(super) fn responses_text(output: &OutputSchema) -> Value {
    json!({"format": {"type": "json_schema", "name": output.name, "strict": true, "schema": strict(output, ProviderProfile::OPENAI)}})
}

/// Anthropic's `output_config` (generally available; no beta header).
pub(super) fn anthropic_output_config(output: &OutputSchema) -> Value {
    json!({"format": {"type": "json_schema", "schema": strict(output, ProviderProfile::ANTHROPIC)}})
}
