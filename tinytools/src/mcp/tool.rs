//! One imported MCP tool: [`McpTool`], a [`Tool`] whose execution is a `tools/call`.

use std::sync::Arc;
use std::time::Duration;

use rmcp::model::{CallToolRequestParams, CallToolResult, ContentBlock, ResourceContents};
use rmcp::{Peer, RoleClient, ServiceError};
use serde_json::{Map, Value};

use super::McpError;
use crate::{SchemaCompaction, Tool, ToolAnnotations, ToolContent, ToolContext, ToolExposure, ToolResult, ToolSpec};

/// A tool an MCP server lists, as a tinytools [`Tool`].
///
/// Built by [`McpServer::tools`](super::McpServer::tools); the registry validates each call's
/// arguments against the server's `inputSchema` before the call is sent.
pub struct McpTool {
    /// Name (namespaced), description, exposure, family (the server), annotations, budget.
    pub(super) spec: ToolSpec,
    pub(super) remote_name: String,
    pub(super) parameters: Value,
    pub(super) server: Arc<str>,
    pub(super) peer: Peer<RoleClient>,
    pub(super) call_timeout: Duration,
}

impl McpTool {
    /// The name the server knows the tool by (its registry name is namespaced).
    pub fn remote_name(&self) -> &str {
        &self.remote_name
    }

    /// The server it calls, by the name the host gave it.
    pub fn server(&self) -> &str {
        &self.server
    }

    /// Sends one `tools/call` and maps the answer.
    async fn call(&self, args: Value) -> Result<ToolResult, McpError> {
        let arguments = match args {
            Value::Object(map) => map,
            Value::Null => Map::new(),
            other => {
                return Ok(ToolResult::error(format!(
                    "the arguments must be a JSON object, not {other}; send an object with the tool's parameters"
                )));
            }
        };
        let request = CallToolRequestParams::new(self.remote_name.clone()).with_arguments(arguments);
        let answer = tokio::time::timeout(self.call_timeout, self.peer.call_tool(request)).await;
        match answer {
            Ok(Ok(result)) => Ok(tool_result(result)),
            // The server answered with a JSON-RPC error (unknown tool, invalid params): a refusal
            // the model can read and act on.
            Ok(Err(ServiceError::McpError(error))) => {
                Ok(ToolResult::error(format!("the {} server refused the call: {}", self.server, error.message)))
            }
            Ok(Err(source)) => Err(McpError::Call { server: self.server.to_string(), source }),
            Err(_) => Err(McpError::CallTimedOut { server: self.server.to_string(), after: self.call_timeout }),
        }
    }
}

#[async_trait::async_trait]
impl Tool for McpTool {
    fn name(&self) -> &str {
        &self.spec.name
    }

    fn description(&self) -> &str {
        &self.spec.description
    }

    fn parameters_schema(&self) -> Value {
        self.parameters.clone()
    }

    fn exposure(&self) -> ToolExposure {
        self.spec.exposure
    }

    fn family(&self) -> Option<&str> {
        self.spec.family.as_deref()
    }

    fn annotations(&self) -> ToolAnnotations {
        self.spec.annotations
    }

    fn schema_compaction(&self) -> Option<SchemaCompaction> {
        self.spec.compaction
    }

    async fn execute(&self, args: Value) -> anyhow::Result<ToolResult> {
        Ok(self.call(args).await?)
    }

    async fn execute_with(&self, args: Value, ctx: &ToolContext) -> anyhow::Result<ToolResult> {
        tokio::select! {
            result = self.call(args) => Ok(result?),
            () = ctx.cancellation().cancelled() => Err(McpError::Cancelled { server: self.server.to_string() }.into()),
        }
    }
}

impl std::fmt::Debug for McpTool {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("McpTool")
            .field("name", &self.spec.name)
            .field("remote_name", &self.remote_name)
            .field("server", &self.server)
            .field("exposure", &self.spec.exposure)
            .finish_non_exhaustive()
    }
}

/// Maps a `tools/call` result: each content block in order (text as written; images, audio and
/// blobs as a one-line note, since the model reads text; embedded text resources as their text;
/// resource links as their URI), `structuredContent` as JSON only when the server sent no
/// content (MCP asks servers to mirror structured output as text, and sending both pays twice),
/// and `isError` as the refusal flag.
pub(crate) fn tool_result(result: CallToolResult) -> ToolResult {
    let mut content: Vec<ToolContent> = result.content.into_iter().map(content_part).collect();
    if content.is_empty()
        && let Some(structured) = result.structured_content
    {
        content.push(ToolContent::Json(structured));
    }
    ToolResult { content, is_error: result.is_error.unwrap_or(false) }
}

fn content_part(block: ContentBlock) -> ToolContent {
    match block {
        ContentBlock::Text(text) => ToolContent::Text(text.text),
        ContentBlock::Image(image) => {
            ToolContent::Text(format!("[image: {}, {} bytes base64]", image.mime_type, image.data.len()))
        }
        ContentBlock::Audio(audio) => {
            ToolContent::Text(format!("[audio: {}, {} bytes base64]", audio.mime_type, audio.data.len()))
        }
        ContentBlock::Resource(embedded) => match embedded.resource {
            ResourceContents::TextResourceContents { text, .. } => ToolContent::Text(text),
            ResourceContents::BlobResourceContents { uri, mime_type, blob, .. } => ToolContent::Text(format!(
                "[resource {uri}: {}, {} bytes base64]",
                mime_type.as_deref().unwrap_or("binary"),
                blob.len()
            )),
            other => ToolContent::Json(serde_json::to_value(other).unwrap_or(Value::Null)),
        },
        ContentBlock::ResourceLink(link) => ToolContent::Text(format!("[resource link: {} ({})]", link.uri, link.name)),
        other => ToolContent::Json(serde_json::to_value(other).unwrap_or(Value::Null)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn parse(wire: Value) -> CallToolResult {
        serde_json::from_value(wire).unwrap()
    }

    #[test]
    fn text_and_error_flag_carry_over() {
        let result =
            tool_result(parse(json!({"content": [{"type": "text", "text": "no such file"}], "isError": true})));
        assert_eq!(result, ToolResult::error("no such file"));
    }

    #[test]
    fn structured_content_is_used_only_without_content() {
        let only = tool_result(parse(json!({"content": [], "structuredContent": {"t": 1}})));
        assert_eq!(only.content, vec![ToolContent::Json(json!({"t": 1}))]);
        let both = tool_result(parse(
            json!({"content": [{"type": "text", "text": "{\"t\":1}"}], "structuredContent": {"t": 1}}),
        ));
        assert_eq!(both.to_model_text(), "{\"t\":1}");
    }

    #[test]
    fn binary_parts_become_short_notes() {
        let result = tool_result(parse(json!({"content": [
            {"type": "image", "data": "AAAA", "mimeType": "image/png"},
            {"type": "resource", "resource": {"uri": "file:///a.txt", "text": "hello"}},
            {"type": "resource_link", "uri": "file:///b", "name": "b"}
        ]})));
        assert_eq!(result.to_model_text(), "[image: image/png, 4 bytes base64]\nhello\n[resource link: file:///b (b)]");
    }
}
