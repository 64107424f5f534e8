//! MCP import and export over an in-process pipe: our exported catalogue listed and called by
//! rmcp's client (through `McpServer`), and an rmcp server written here to misbehave on purpose
//! (pages, colliding and over-long names, a hang, a refusal, a list that changes, a crash).
//! The same paths against real reference servers are in `mcp_peers.rs`.

use std::borrow::Cow;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, ContentBlock, ListToolsResult, PaginatedRequestParams,
    ServerCapabilities, ServerConfig, Tool as RemoteTool, ToolAnnotations as RemoteAnnotations,
};
use rmcp::service::{NotificationContext, RequestContext};
use rmcp::{ErrorData, RoleServer, ServerHandler, ServiceExt};
use serde_json::{Value, json};
use tinytools::mcp::{McpError, McpImport, McpServer, McpToolServer};
use tinytools::model::{Message, ModelResponse};
use tinytools::run::{Agent, RunEvent};
use tinytools::schema::ProviderProfile;
use tinytools::testkit::ScriptedModel;
use tinytools::{SchemaCompaction, SchemaPreparation, ToolError, ToolExposure, ToolRegistry};
use tinytools_examples::catalogue;

/// Runs a server on one end of an in-process pipe; returns the client's end.
fn serve_in_process<S: ServerHandler>(server: S) -> (tokio::io::DuplexStream, tokio::task::JoinHandle<()>) {
    let (server_end, client_end) = tokio::io::duplex(1 << 16);
    let handle = tokio::spawn(async move {
        if let Ok(running) = server.serve(server_end).await {
            let _ = running.waiting().await;
        }
    });
    (client_end, handle)
}

/// Connects an import to a server running on the other end of an in-process pipe.
async fn connect<S: ServerHandler>(server: S, import: McpImport) -> (McpServer, tokio::task::JoinHandle<()>) {
    let (client_end, handle) = serve_in_process(server);
    let client = McpServer::connect(import, client_end).await.expect("handshake");
    (client, handle)
}

fn object(value: Value) -> serde_json::Map<String, Value> {
    match value {
        Value::Object(map) => map,
        _ => unreachable!("schemas and arguments here are objects"),
    }
}

// ---------------------------------------------------------------------------------------------
// Export, then import: the 41-tool catalogue through MCP and back.

fn catalogue_with_a_hidden_tool() -> ToolRegistry {
    let mut registry = catalogue::registry();
    let hidden = registry.remove("calendar_cancel_event").expect("the catalogue has it");
    registry.register_as(hidden, ToolExposure::Hidden).expect("re-registers");
    registry
}

#[tokio::test]
async fn an_exported_registry_lists_every_visible_tool_with_its_derived_schema_and_classification() {
    let registry = Arc::new(catalogue_with_a_hidden_tool());
    let server = McpToolServer::new(Arc::clone(&registry)).with_instructions("Made-up data only.");
    let (client, _server) = connect(server, McpImport::new("catalogue").prefix("")).await;
    assert_eq!(client.instructions().as_deref(), Some("Made-up data only."));
    let (tools, skipped) = client.tools().await.expect("lists");
    assert!(skipped.is_empty(), "{skipped:?}");
    assert_eq!(tools.len(), 40, "41 tools, one Hidden");
    assert!(tools.iter().all(|t| t.remote_name() != "calendar_cancel_event"), "a Hidden tool is never listed");
    for tool in &tools {
        let original = registry.get(tool.remote_name()).expect("listed tools are registered");
        use tinytools::Tool;
        assert_eq!(tool.parameters_schema(), original.schema().parameters, "{}: the macro's schema", tool.name());
        assert_eq!(tool.description(), original.schema().description);
        assert_eq!(tool.annotations(), original.annotations(), "{}: the classification survives", tool.name());
    }
}

#[tokio::test]
async fn a_servers_instructions_describe_the_imported_family_for_ranking_only() {
    let registry = Arc::new(catalogue_with_a_hidden_tool());
    let words = "Made-up data only: a tutoring desk for homework questions.";
    let server = McpToolServer::new(Arc::clone(&registry)).with_instructions(words);
    let (client, _server) = connect(server, McpImport::new("catalogue").exposure(ToolExposure::Deferred)).await;
    assert_eq!(client.self_description().as_deref(), Some(words));
    let mut imported = ToolRegistry::new();
    let report = client.register_into(&mut imported).await.expect("registers");
    assert_eq!(report.imported.len(), 40);
    assert_eq!(imported.family_description("catalogue"), Some(words), "the server's words describe its family");
    // Only the instructions say "homework": the family's tools are found by it, and the
    // answer shows their declarations as they are, without the server's words.
    let bridge = tinytools::discovery::DiscoveryBridge::new(&imported, Default::default());
    let answer = bridge.search(&json!({"query": "homework"})).await;
    let text = answer.result.to_model_text();
    assert!(text.contains("catalogue__"), "{text}");
    assert!(!text.contains("tutoring") && !text.contains("homework"), "{text}");
    let manifest = bridge.schema(&tinytools::schema::EstimatedTokens).description;
    assert!(!manifest.contains("tutoring"), "{manifest}");
}

#[tokio::test]
async fn an_exported_tool_called_through_mcp_answers_as_it_does_directly() {
    let registry = Arc::new(catalogue_with_a_hidden_tool());
    let (client, _server) = connect(McpToolServer::new(Arc::clone(&registry)), McpImport::new("catalogue")).await;
    let mut imported = ToolRegistry::new();
    let report = client.register_into(&mut imported).await.expect("imports");
    assert_eq!(report.imported.len(), 40);
    assert!(imported.iter().all(|t| t.exposure() == ToolExposure::Deferred && t.family() == Some("catalogue")));

    let args = json!({"symbol": "ACME"});
    let direct = registry.dispatch("stock_quote", args.clone()).await.expect("runs");
    let through_mcp = imported.dispatch("catalogue__stock_quote", args).await.expect("runs over MCP");
    assert_eq!(through_mcp.to_model_text(), direct.to_model_text());
    assert!(!through_mcp.is_error);

    // Admission runs on the importing side against the server's schema: nothing bad is sent.
    let err = imported.dispatch("catalogue__stock_quote", json!({"symbol": 7})).await.expect_err("rejected");
    assert!(matches!(err, ToolError::InvalidArguments { .. }), "{err}");
}

#[tokio::test]
async fn a_hidden_tool_gets_exactly_the_unknown_tool_answer_from_the_exported_server() {
    let registry = Arc::new(catalogue_with_a_hidden_tool());
    let (client_end, _server) = serve_in_process(McpToolServer::new(registry));
    let client = ().serve(client_end).await.expect("handshake");
    let call = |name: &'static str| {
        let request = CallToolRequestParams::new(name).with_arguments(object(json!({"title": "x"})));
        client.peer().call_tool(request)
    };
    let hidden = call("calendar_cancel_event").await.expect_err("refused").to_string();
    let unknown = call("no_such_tool").await.expect_err("refused").to_string();
    assert_eq!(hidden.replace("calendar_cancel_event", "NAME"), unknown.replace("no_such_tool", "NAME"));

    // A bad call is a tool error listing what is wrong, which the client's model can fix.
    let bad = client
        .peer()
        .call_tool(CallToolRequestParams::new("stock_quote").with_arguments(object(json!({}))))
        .await
        .expect("answered");
    assert_eq!(bad.is_error, Some(true));
    let ContentBlock::Text(text) = &bad.content[0] else { panic!("text") };
    assert!(text.text.contains("symbol"), "{}", text.text);
}

// ---------------------------------------------------------------------------------------------
// A server written to misbehave.

#[derive(Clone, Default)]
struct Awkward {
    /// After `grow`, the list has one more tool (and the server says so).
    grown: Arc<AtomicBool>,
}

impl Awkward {
    fn page(&self, page: usize) -> (Vec<RemoteTool>, Option<String>) {
        let schema = || object(json!({"type": "object", "properties": {"text": {"type": "string"}}}));
        let long = "x".repeat(90);
        let read_only = RemoteAnnotations::new().read_only(true);
        match page {
            0 => (
                vec![
                    RemoteTool::new("echo", "Echo the text back.", schema()).with_annotations(read_only),
                    RemoteTool::new("files.read", "Read a file by path.", schema()),
                    RemoteTool::new("files_read", "Also read a file (a collision).", schema()),
                    RemoteTool::new(
                        "tool_search",
                        "A server's own search, which must not replace the bridge.",
                        schema(),
                    ),
                ],
                Some("page-1".into()),
            ),
            _ => {
                let mut tools = vec![
                    RemoteTool::new("hang", "Never answers.", schema()),
                    RemoteTool::new("refuse", "Always refuses.", schema()),
                    RemoteTool::new("grow", "Adds a tool and announces the change.", schema()),
                    RemoteTool::new(Cow::Owned(long), "A name far over the provider limit.", schema()),
                    RemoteTool::new("describe", "A huge description. ".repeat(200), schema()),
                ];
                if self.grown.load(Ordering::SeqCst) {
                    tools.push(RemoteTool::new("sprouted", "Appeared after grow.", schema()));
                }
                (tools, None)
            }
        }
    }
}

impl ServerHandler for Awkward {
    fn get_info(&self) -> ServerConfig {
        ServerConfig::new(ServerCapabilities::builder().enable_tools().enable_tool_list_changed().build())
    }

    async fn list_tools(
        &self,
        request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, ErrorData> {
        let page = usize::from(request.and_then(|r| r.cursor).is_some());
        let (tools, next) = self.page(page);
        let mut result = ListToolsResult::with_all_items(tools);
        result.next_cursor = next;
        Ok(result)
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        let text = request.arguments.as_ref().and_then(|a| a.get("text")).and_then(Value::as_str).unwrap_or("");
        let result = match request.name.as_ref() {
            "echo" => CallToolResult::success(vec![ContentBlock::text(format!("echo: {text}"))]),
            "refuse" => CallToolResult::error(vec![ContentBlock::text("refused: not today")]),
            "hang" => {
                tokio::time::sleep(Duration::from_secs(3_600)).await;
                CallToolResult::success(vec![])
            }
            "grow" => {
                self.grown.store(true, Ordering::SeqCst);
                let _ = context.peer.notify_tool_list_changed().await;
                CallToolResult::success(vec![ContentBlock::text("grown")])
            }
            other => return Err(ErrorData::invalid_params(format!("no tool {other}"), None)),
        };
        Ok(result.into())
    }

    fn on_initialized(
        &self,
        _context: NotificationContext<RoleServer>,
    ) -> impl Future<Output = ()> + rmcp::service::MaybeSendFuture + '_ {
        std::future::ready(())
    }
}

#[tokio::test]
async fn every_page_is_imported_and_names_are_namespaced_safely_with_collisions_reported() {
    let (client, _server) = connect(Awkward::default(), McpImport::new("awk")).await;
    let mut registry = ToolRegistry::new();
    let report = client.register_into(&mut registry).await.expect("imports");
    assert!(report.imported.contains(&"awk__hang".to_owned()), "the second page was followed: {report:?}");
    assert!(report.imported.contains(&"awk__files_read".to_owned()));
    assert_eq!(report.skipped.len(), 1, "{report:?}");
    assert_eq!(report.skipped[0].remote_name, "files_read");
    assert!(report.skipped[0].reason.contains("`files.read`"), "{}", report.skipped[0].reason);
    let long = report.imported.iter().find(|n| n.starts_with("awk__xxx")).expect("the long name is imported");
    assert_eq!(long.len(), 64);
    for name in &report.imported {
        assert!(tinytools::tool::check_tool_name(name).is_ok(), "{name}");
    }
    let echo = registry.get("awk__echo").expect("registered");
    assert_eq!((echo.exposure(), echo.family()), (ToolExposure::Deferred, Some("awk")));
    assert!(echo.annotations().read_only && !echo.annotations().destructive);
    let files = registry.get("awk__files_read").expect("registered");
    assert_eq!(files.annotations(), tinytools::ToolAnnotations::UNCLASSIFIED, "no hints: MCP's worst-case defaults");
    assert_eq!(files.compaction(), Some(SchemaCompaction::THIRD_PARTY));

    // A name the registry already holds is reported, never replaced.
    let again = client.register_into(&mut registry).await.expect("lists");
    assert!(again.imported.is_empty());
    assert!(again.skipped.iter().any(|s| s.name == "awk__echo" && s.reason.contains("already registered")));
}

#[tokio::test]
async fn an_unprefixed_server_cannot_take_the_bridges_name() {
    let (client, _server) = connect(Awkward::default(), McpImport::new("awk").prefix("")).await;
    let mut registry = ToolRegistry::new();
    let report = client.register_into(&mut registry).await.expect("imports");
    assert!(!registry.contains("tool_search"));
    let skip = report.skipped.iter().find(|s| s.remote_name == "tool_search").expect("reported");
    assert!(skip.reason.contains("discovery bridge"), "{}", skip.reason);
    assert!(registry.contains("echo") && registry.contains("files_read"), "the rest is imported as named");
}

#[tokio::test]
async fn per_tool_exposure_overrides_and_third_party_compaction_on_the_wire() {
    let import = McpImport::new("awk").expose("echo", ToolExposure::Direct).expose("refuse", ToolExposure::Hidden);
    let (client, _server) = connect(Awkward::default(), import).await;
    let mut registry = ToolRegistry::new();
    client.register_into(&mut registry).await.expect("imports");
    assert_eq!(registry.get("awk__echo").map(|t| t.exposure()), Some(ToolExposure::Direct));
    assert_eq!(registry.get("awk__refuse").map(|t| t.exposure()), Some(ToolExposure::Hidden));

    // The tool's budget is applied wherever the run projects schemas (`RunPolicy::tool_schemas`).
    let preparation = SchemaPreparation::new(ProviderProfile::PORTABLE);
    let bridge = tinytools::DiscoveryBridge::new(&registry, Default::default()).with_preparation(Some(preparation));
    let described = bridge.prepared_schema("awk__describe").expect("deferred and admitted");
    assert!(described.description.len() <= 1_000, "THIRD_PARTY clips a 4,000-byte description");
    assert!(registry.get("awk__describe").expect("registered").schema().description.len() > 3_000);
}

#[tokio::test]
async fn a_refusal_text_and_a_server_side_error_reach_the_model_as_tool_errors() {
    let (client, _server) = connect(Awkward::default(), McpImport::new("awk")).await;
    let mut registry = ToolRegistry::new();
    client.register_into(&mut registry).await.expect("imports");
    let echo = registry.dispatch("awk__echo", json!({"text": "hi"})).await.expect("runs");
    assert_eq!((echo.to_model_text().as_str(), echo.is_error), ("echo: hi", false));
    let refused = registry.dispatch("awk__refuse", json!({})).await.expect("runs");
    assert_eq!((refused.to_model_text().as_str(), refused.is_error), ("refused: not today", true));
    // The server lists `describe` but cannot call it: a JSON-RPC error, read by the model.
    let error = registry.dispatch("awk__describe", json!({})).await.expect("answered");
    assert!(error.is_error && error.to_model_text().contains("no tool describe"), "{}", error.to_model_text());
}

#[tokio::test]
async fn a_hung_server_times_out_into_a_failed_call_and_the_run_goes_on() {
    let import = McpImport::new("awk").call_timeout(Duration::from_millis(200));
    let (client, _server) = connect(Awkward::default(), import).await;
    let mut registry = ToolRegistry::new();
    client.register_into(&mut registry).await.expect("imports");
    let err = registry.dispatch("awk__hang", json!({})).await.expect_err("times out");
    assert!(matches!(&err, ToolError::Failed { .. }), "{err}");
    assert!(format!("{err}").contains("did not answer within"), "{err}");

    // In a run: the model reads a short failure note, the host a ToolFailed event, and the
    // run answers.
    let model = Arc::new(ScriptedModel::new([
        ModelResponse::calls([("c1", "awk__hang", json!({}))]),
        ModelResponse::calls([("c2", "awk__echo", json!({"text": "still here"}))]),
        ModelResponse::text("done"),
    ]));
    let events = Arc::new(std::sync::Mutex::new(Vec::new()));
    let sink = Arc::clone(&events);
    let agent = Agent::new(Arc::new(registry), model)
        .with_events(Arc::new(move |event: &RunEvent| sink.lock().unwrap().push(event.clone())));
    let outcome = agent.run(vec![Message::user("hang then echo")]).await.expect("the run survives");
    let texts: Vec<String> = outcome
        .transcript
        .messages
        .iter()
        .filter_map(|m| match m {
            Message::Tool { content, .. } => Some(content.clone()),
            _ => None,
        })
        .collect();
    assert!(texts[0].contains("failed while running") && !texts[0].contains("hung"), "{texts:?}");
    assert_eq!(texts[1], "echo: still here");
    let failed = events
        .lock()
        .unwrap()
        .iter()
        .any(|e| matches!(e, RunEvent::ToolFailed { error, .. } if error.contains("did not answer within")));
    assert!(failed, "the host sees why");
}

#[tokio::test]
async fn a_server_that_goes_away_gives_failed_calls_with_a_clear_cause() {
    let (client, server) = connect(Awkward::default(), McpImport::new("awk")).await;
    let mut registry = ToolRegistry::new();
    client.register_into(&mut registry).await.expect("imports");
    server.abort();
    let _ = server.await;
    let err = registry.dispatch("awk__echo", json!({"text": "hi"})).await.expect_err("the server is gone");
    let message = format!("{err}");
    assert!(message.contains("could not be reached") || message.contains("did not answer"), "{message}");
    assert!(matches!(client.refresh(&mut registry).await, Err(McpError::List { .. } | McpError::CallTimedOut { .. })));
    assert!(registry.contains("awk__echo"), "a failed refresh leaves the registry as it was");
}

#[tokio::test]
async fn list_changed_is_noticed_and_a_refresh_swaps_the_catalogue_between_runs() {
    let (client, _server) = connect(Awkward::default(), McpImport::new("awk")).await;
    let mut registry = ToolRegistry::new();
    let first = client.register_into(&mut registry).await.expect("imports");
    assert!(!client.tools_changed());
    assert!(!registry.contains("awk__sprouted"));
    assert_eq!(client.refresh_if_changed(&mut registry).await.expect("no-op"), None, "nothing changed yet");

    registry.dispatch("awk__grow", json!({})).await.expect("runs");
    let mut waited = 0;
    while !client.tools_changed() && waited < 100 {
        tokio::time::sleep(Duration::from_millis(20)).await;
        waited += 1;
    }
    assert!(client.tools_changed(), "the notification was seen");

    let refreshed = client.refresh_if_changed(&mut registry).await.expect("re-lists").expect("it changed");
    assert!(!client.tools_changed());
    assert_eq!(refreshed.removed, first.imported, "the previous import is taken out, all of it");
    assert!(refreshed.imported.contains(&"awk__sprouted".to_owned()));
    assert_eq!(registry.len(), first.imported.len() + 1);
    assert!(refreshed.skipped.iter().all(|s| !s.reason.contains("already registered")), "{refreshed:?}");
}

#[tokio::test]
async fn a_program_that_cannot_start_or_does_not_speak_mcp_is_a_clear_host_error() {
    let missing = tokio::process::Command::new("/nonexistent/mcp-server");
    let err = McpServer::connect_stdio(McpImport::new("ghost"), missing).await.expect_err("cannot start");
    assert!(matches!(err, McpError::Spawn { .. }), "{err}");
    assert!(err.to_string().contains("ghost") && err.to_string().contains("on PATH"), "{err}");

    let mut silent = tokio::process::Command::new("sleep");
    silent.arg("30");
    let import = McpImport::new("silent").connect_timeout(Duration::from_millis(300));
    let err = McpServer::connect_stdio(import, silent).await.expect_err("never answers");
    assert!(matches!(err, McpError::ConnectTimedOut { .. }), "{err}");

    let mut talks_nonsense = tokio::process::Command::new("sh");
    talks_nonsense.args(["-c", "echo 'not json-rpc'; sleep 1"]);
    let import = McpImport::new("noise").connect_timeout(Duration::from_secs(5));
    let err = McpServer::connect_stdio(import, talks_nonsense).await.expect_err("no handshake");
    assert!(matches!(err, McpError::Connect { .. } | McpError::ConnectTimedOut { .. }), "{err}");
}

#[tokio::test]
async fn a_host_cancellation_stops_a_call_that_is_waiting_on_the_server() {
    let (client, _server) = connect(Awkward::default(), McpImport::new("awk")).await;
    let mut registry = ToolRegistry::new();
    client.register_into(&mut registry).await.expect("imports");
    let ctx = tinytools::ToolContext::new("c1");
    let token = ctx.cancellation().clone();
    tokio::spawn(async move {
        tokio::time::sleep(Duration::from_millis(100)).await;
        token.cancel();
    });
    let started = std::time::Instant::now();
    let err = registry.dispatch_with("awk__hang", json!({}), &ctx).await.expect_err("cancelled");
    assert!(format!("{err}").contains("was cancelled"), "{err}");
    assert!(started.elapsed() < Duration::from_secs(30), "the default 60 s call timeout was not what ended it");
}

/// A tool that cannot run, and one that panics, behind the exported server.
mod broken {
    use tinytools::tool;

    /// Could not run: its `execute` returns `Err` (a `#[tool]` fn's `Err` is a refusal instead).
    pub struct LookupSecret;

    #[async_trait::async_trait]
    impl tinytools::Tool for LookupSecret {
        fn name(&self) -> &str {
            "lookup_secret"
        }
        fn description(&self) -> &str {
            "Look up a secret record."
        }
        fn parameters_schema(&self) -> serde_json::Value {
            serde_json::json!({"type": "object", "properties": {}})
        }
        async fn execute(&self, _args: serde_json::Value) -> anyhow::Result<tinytools::ToolResult> {
            Err(anyhow::anyhow!("database password s3cr3t rejected"))
        }
    }

    /// Divide by zero.
    #[tool(read_only)]
    pub async fn divide_by_zero() -> i64 {
        panic!("the internal state at 0xdeadbeef")
    }
}

#[tokio::test]
async fn an_exported_tool_that_fails_or_panics_answers_with_an_error_and_keeps_the_cause() {
    let mut registry = ToolRegistry::new();
    registry.register(broken::LookupSecret).unwrap().register(broken::DivideByZero).unwrap();
    let (client, _server) = connect(McpToolServer::new(Arc::new(registry)), McpImport::new("b").prefix("")).await;
    let mut imported = ToolRegistry::new();
    client.register_into(&mut imported).await.expect("imports");
    for name in ["lookup_secret", "divide_by_zero"] {
        let answer = imported.dispatch(name, json!({})).await.expect("answered, not a dead server");
        let text = answer.to_model_text();
        assert!(answer.is_error, "{name}: {text}");
        assert!(!text.contains("s3cr3t") && !text.contains("deadbeef"), "{name} leaked its cause: {text}");
    }
    // The server is still serving.
    assert_eq!(client.tools().await.expect("lists").0.len(), 2);
}
