//! Serving a registry: [`McpToolServer`], an MCP server over a [`ToolRegistry`].

use std::sync::Arc;

use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, ContentBlock, Implementation, ListToolsResult,
    PaginatedRequestParams, ServerCapabilities, ServerConfig, Tool as RemoteTool, ToolAnnotations as RemoteAnnotations,
};
use rmcp::service::RequestContext;
use rmcp::{ErrorData, RoleServer, ServerHandler, ServiceExt};
use serde_json::Value;

use super::McpError;
use crate::surface::{Rule, Surface};
use crate::{RegisteredTool, ToolContent, ToolContext, ToolError, ToolRegistry, ToolResult};

/// An MCP server whose tools are a [`ToolRegistry`]'s.
///
/// Direct and Deferred tools are listed, name-sorted, with the schema the registry holds (the
/// one `#[tool]` derived) and the classification as MCP annotations. Hidden tools, and tools a
/// narrowing [rule](crate::surface::Rule) refuses ([`with_rule`](Self::with_rule), the same
/// rules an agent run takes), are neither listed nor callable: a call to one gets exactly the
/// answer an unknown name gets. Arguments
/// go through the registry's admission, so a bad call is answered with every violation as a
/// tool error the client's model can fix; a tool that fails or panics answers with an error
/// result that keeps the cause on this side.
///
/// ```
/// use std::sync::Arc;
/// use tinytools::{ToolRegistry, tool};
/// use tinytools::mcp::McpToolServer;
///
/// /// Add two numbers.
/// #[tool(read_only)]
/// async fn add(a: i64, b: i64) -> i64 { a + b }
///
/// /// Delete everything.
/// #[tool(exposure = "hidden", destructive)]
/// async fn wipe() {}
///
/// let mut registry = ToolRegistry::new();
/// registry.register(Add)?.register(Wipe)?;
/// let server = McpToolServer::new(Arc::new(registry));
/// let listed = server.listed_tools();
/// assert_eq!(listed.iter().map(|t| t.name.as_ref()).collect::<Vec<_>>(), ["add"]);
/// assert_eq!(listed[0].annotations.as_ref().and_then(|a| a.read_only_hint), Some(true));
/// # Ok::<(), tinytools::RegistryError>(())
/// ```
#[derive(Clone)]
pub struct McpToolServer {
    registry: Arc<ToolRegistry>,
    rules: Vec<Arc<dyn Rule>>,
    surface: Arc<Surface>,
    info: Implementation,
    instructions: Option<String>,
}

impl McpToolServer {
    /// Serves this registry, introducing itself as `tinytools` at this crate's version.
    pub fn new(registry: Arc<ToolRegistry>) -> Self {
        let surface = Arc::new(Surface::all(&registry));
        let info = Implementation::new("tinytools", env!("CARGO_PKG_VERSION"));
        Self { registry, rules: Vec::new(), surface, info, instructions: None }
    }

    /// Narrows what is served with a rule (evaluated now, with the rules added before): a tool
    /// it refuses is neither listed nor callable.
    ///
    /// ```
    /// use std::sync::Arc;
    /// use tinytools::mcp::McpToolServer;
    /// use tinytools::middleware::ToolPolicyMiddleware;
    /// use tinytools::{ToolRegistry, tool};
    ///
    /// /// Read a note.
    /// #[tool(read_only)]
    /// async fn read_note(title: String) -> String { title }
    ///
    /// /// Delete a note.
    /// #[tool(destructive)]
    /// async fn delete_note(title: String) {}
    ///
    /// let mut registry = ToolRegistry::new();
    /// registry.register(ReadNote)?.register(DeleteNote)?;
    /// let policy = ToolPolicyMiddleware::strict(registry.policies()).refuse_destructive(true);
    /// let server = McpToolServer::new(Arc::new(registry)).with_rule(Arc::new(policy));
    /// assert_eq!(server.listed_tools().iter().map(|t| t.name.as_ref()).collect::<Vec<_>>(), ["read_note"]);
    /// # Ok::<(), tinytools::RegistryError>(())
    /// ```
    #[must_use]
    pub fn with_rule(mut self, rule: Arc<dyn Rule>) -> Self {
        self.rules.push(rule);
        let rules: Vec<&dyn Rule> = self.rules.iter().map(AsRef::as_ref).collect();
        self.surface = Arc::new(Surface::new(&self.registry, &rules));
        self
    }

    /// The name and version sent in the handshake.
    pub fn with_server_info(mut self, name: impl Into<String>, version: impl Into<String>) -> Self {
        self.info = Implementation::new(name, version);
        self
    }

    /// Instructions sent in the handshake, for the client's model.
    pub fn with_instructions(mut self, instructions: impl Into<String>) -> Self {
        self.instructions = Some(instructions.into());
        self
    }

    /// The tools `tools/list` answers with.
    pub fn listed_tools(&self) -> Vec<RemoteTool> {
        self.registry.iter().filter(|tool| self.surface.admits(tool.name())).map(listed).collect()
    }

    /// Serves on this process's stdin and stdout until the client disconnects.
    ///
    /// # Errors
    /// [`McpError::Serve`] when the handshake fails or the session ends abnormally.
    pub async fn serve_stdio(self) -> Result<(), McpError> {
        let running = self
            .serve(rmcp::transport::stdio())
            .await
            .map_err(|error| McpError::Serve { reason: error.to_string() })?;
        running.waiting().await.map_err(|error| McpError::Serve { reason: error.to_string() })?;
        Ok(())
    }

    /// Runs one call: the registry's admission and dispatch, never reaching a Hidden tool.
    async fn call(&self, name: &str, args: Value, ctx: &ToolContext) -> Result<ToolResult, ErrorData> {
        if !self.surface.admits(name) {
            return Err(ErrorData::invalid_params(
                format!("unknown tool `{name}`; call tools/list for the names"),
                None,
            ));
        }
        match self.registry.dispatch_with(name, args, ctx).await {
            Ok(result) => Ok(result),
            Err(error @ (ToolError::Failed { .. } | ToolError::Panicked { .. })) => {
                tracing::warn!(tool = name, error = %error, "exported tool failed");
                Ok(error.to_model_result())
            }
            Err(error) => Ok(error.to_model_result()),
        }
    }
}

impl std::fmt::Debug for McpToolServer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("McpToolServer").field("tools", &self.registry.len()).finish_non_exhaustive()
    }
}

impl ServerHandler for McpToolServer {
    fn get_info(&self) -> ServerConfig {
        let config =
            ServerConfig::new(ServerCapabilities::builder().enable_tools().build()).with_server_info(self.info.clone());
        match &self.instructions {
            Some(instructions) => config.with_instructions(instructions.clone()),
            None => config,
        }
    }

    async fn list_tools(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, ErrorData> {
        Ok(ListToolsResult::with_all_items(self.listed_tools()))
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        let args = request.arguments.map_or(Value::Object(Default::default()), Value::Object);
        let ctx = ToolContext::new(context.id.to_string()).with_cancellation(context.ct.clone());
        let result = self.call(&request.name, args, &ctx).await?;
        Ok(call_result(result).into())
    }
}

fn listed(tool: &RegisteredTool) -> RemoteTool {
    let schema = tool.schema();
    let input = match &schema.parameters {
        Value::Object(map) => map.clone(),
        _ => Default::default(),
    };
    let classification = tool.annotations();
    let annotations = RemoteAnnotations::new()
        .read_only(classification.read_only)
        .destructive(classification.destructive)
        .idempotent(classification.idempotent)
        .open_world(classification.open_world);
    RemoteTool::new(schema.name.clone(), schema.description.clone(), Arc::new(input)).with_annotations(annotations)
}

/// A single JSON part is also sent as `structuredContent`; every part as a content block.
fn call_result(result: ToolResult) -> CallToolResult {
    let structured = match result.content.as_slice() {
        [ToolContent::Json(value)] => Some(value.clone()),
        _ => None,
    };
    let content = result
        .content
        .into_iter()
        .map(|part| match part {
            ToolContent::Text(text) => ContentBlock::text(text),
            ToolContent::Json(value) => ContentBlock::text(value.to_string()),
        })
        .collect();
    let mut answer = if result.is_error { CallToolResult::error(content) } else { CallToolResult::success(content) };
    answer.structured_content = structured;
    answer
}
