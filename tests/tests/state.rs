//! Host state through `State<T>`: carried by the registry, checked when a tool registers, found
//! whether it was given as `T` or `Arc<T>`, overridden per run by `Agent::with_tool_state`, and
//! passed to tools served over MCP.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use serde_json::json;
use tinytools::mcp::{McpImport, McpServer, McpToolServer};
use tinytools::model::{Message, ModelResponse};
use tinytools::run::Agent;
use tinytools::testkit::ScriptedModel;
use tinytools::{RegistryError, State, Tool, ToolContext, ToolError, ToolRegistry, tool};

/// A stand-in for a connection pool: counts its queries.
#[derive(Debug, Default)]
struct Db {
    queries: AtomicUsize,
}

impl Db {
    fn price(&self, symbol: &str) -> String {
        let n = self.queries.fetch_add(1, Ordering::SeqCst) + 1;
        format!("{symbol} 12.50 (query {n})")
    }
}

/// Which desk a run serves: per-run state.
#[derive(Debug)]
struct Desk(&'static str);

/// Fetch the latest price for a ticker symbol.
#[tool(read_only)]
async fn stock_quote(
    /// Ticker symbol, such as ACME.
    symbol: String,
    db: State<Db>,
) -> String {
    db.price(&symbol)
}

/// Count the queries so far (a sync fn: it runs on the blocking pool, with its state).
#[tool(read_only)]
fn query_count(db: State<Db>, ctx: &ToolContext) -> String {
    let desk = ctx.state::<Desk>().map_or("no desk", |desk| desk.0);
    format!("{} queries, {desk}", db.queries.load(Ordering::SeqCst))
}

#[tokio::test]
async fn state_given_as_a_value_or_an_arc_reaches_the_tool() {
    let mut by_value = ToolRegistry::new().with_state(Db::default());
    by_value.register(StockQuote).expect("the state is there");
    let quote = by_value.dispatch("stock_quote", json!({"symbol": "ACME"})).await.expect("runs");
    assert_eq!(quote.to_model_text(), "ACME 12.50 (query 1)");
    let schema = &by_value.schemas()[0];
    assert!(schema.parameters["properties"].get("db").is_none(), "state is not an argument: {schema:?}");

    let shared = Arc::new(Db::default());
    let mut by_arc = ToolRegistry::new().with_state(Arc::clone(&shared));
    by_arc.register(StockQuote).and_then(|r| r.register(QueryCount)).expect("an Arc<Db> meets State<Db>");
    by_arc.dispatch("stock_quote", json!({"symbol": "ACME"})).await.expect("runs");
    by_arc.dispatch("stock_quote", json!({"symbol": "INIT"})).await.expect("runs");
    assert_eq!(shared.queries.load(Ordering::SeqCst), 2, "the host's own Arc is the one the tool used");
    let count = by_arc.dispatch("query_count", json!({})).await.expect("runs");
    assert_eq!(count.to_model_text(), "2 queries, no desk");
}

#[test]
fn a_tool_whose_state_is_missing_does_not_register() {
    let mut registry = ToolRegistry::new().with_state(Desk("equities"));
    let error = registry.register(StockQuote).map(|_| ()).expect_err("no Db");
    let RegistryError::MissingState { tool, type_name } = &error else { panic!("{error}") };
    assert_eq!(tool, "stock_quote");
    assert!(type_name.ends_with("Db"), "{type_name}");
    assert!(error.to_string().contains("with_state"), "the message says how: {error}");
    assert!(registry.is_empty());
    assert_eq!(StockQuote.required_state().len(), 1);
}

#[tokio::test]
async fn executed_outside_a_registry_the_tool_fails_with_what_it_needs() {
    let error = StockQuote.execute(json!({"symbol": "ACME"})).await.expect_err("no registry, no state");
    assert!(error.to_string().contains("State<") && error.to_string().contains("with_state"), "{error}");
}

#[tokio::test]
async fn a_run_adds_its_own_state_over_the_registry_s() {
    let shared = Arc::new(Db::default());
    let mut registry = ToolRegistry::new().with_state(Arc::clone(&shared));
    registry.register(StockQuote).and_then(|r| r.register(QueryCount)).expect("registers");
    let model = Arc::new(ScriptedModel::new([
        ModelResponse::calls([("c1", "stock_quote", json!({"symbol": "ACME"}))]),
        ModelResponse::calls([("c2", "query_count", json!({}))]),
        ModelResponse::text("done"),
    ]));
    let agent = Agent::new(Arc::new(registry), model).with_tool_state(|ctx| ctx.with_state(Desk("equities")));
    let outcome = agent.run(vec![Message::user("ACME?")]).await.expect("runs");
    let answers: Vec<&str> = outcome
        .transcript
        .messages
        .iter()
        .filter_map(|m| match m {
            Message::Tool { content, .. } => Some(content.as_str()),
            _ => None,
        })
        .collect();
    assert_eq!(answers, ["ACME 12.50 (query 1)", "1 queries, equities"]);
}

#[tokio::test]
async fn a_tool_served_over_mcp_reads_the_registry_s_state() {
    let shared = Arc::new(Db::default());
    let mut registry = ToolRegistry::new().with_state(Arc::clone(&shared));
    registry.register(StockQuote).expect("registers");
    let (server_end, client_end) = tokio::io::duplex(1 << 16);
    let server = McpToolServer::new(Arc::new(registry));
    tokio::spawn(async move {
        use rmcp::ServiceExt;
        if let Ok(running) = server.serve(server_end).await {
            let _ = running.waiting().await;
        }
    });
    let client = McpServer::connect(McpImport::new("quotes"), client_end).await.expect("handshake");
    let mut imported = ToolRegistry::new();
    client.register_into(&mut imported).await.expect("imports");
    let quote = imported.dispatch("quotes__stock_quote", json!({"symbol": "ACME"})).await.expect("runs over MCP");
    assert_eq!(quote.to_model_text(), "ACME 12.50 (query 1)");
    assert_eq!(shared.queries.load(Ordering::SeqCst), 1);
    let missing = imported.dispatch("quotes__stock_quote", json!({})).await.expect_err("admission first");
    assert!(matches!(missing, ToolError::InvalidArguments { .. }), "{missing}");
}
