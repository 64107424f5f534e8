//! Our exported server as a real process on stdio, listed and called by rmcp's client (through
//! `McpServer`) and by the official TypeScript SDK's client (when the npm peers are installed).

use std::sync::Arc;

use serde_json::{Value, json};
use tinytools::mcp::{McpImport, McpServer};
use tinytools::{ToolExposure, ToolRegistry};
use tinytools_examples::catalogue;
use tinytools_examples::mcp_peers::{peers_required, peers_root};

const SERVER: &str = env!("CARGO_BIN_EXE_mcp_catalogue_server");

#[tokio::test]
async fn rmcp_client_lists_and_calls_the_exported_catalogue_over_stdio() {
    let server = McpServer::connect_stdio(McpImport::new("cat").prefix(""), tokio::process::Command::new(SERVER))
        .await
        .expect("handshake");
    assert_eq!(server.server_info().map(|(name, _)| name).as_deref(), Some("tinytools-catalogue"));
    assert_eq!(server.instructions(), None, "the fixture sends none");
    let mut registry = ToolRegistry::new();
    let report = server.register_into(&mut registry).await.expect("imports");
    assert_eq!(report.imported.len(), 40, "41 tools, one Hidden");
    assert!(!registry.contains("calendar_cancel_event"));

    let original = catalogue::registry();
    let imported = registry.get("stock_quote").expect("listed");
    let local = original.get("stock_quote").expect("registered");
    assert_eq!(imported.tool().parameters_schema(), local.schema().parameters);
    assert_eq!(imported.annotations(), local.annotations());
    assert_eq!(imported.exposure(), ToolExposure::Deferred);

    let args = json!({"symbol": "ACME"});
    let remote = registry.dispatch("stock_quote", args.clone()).await.expect("runs over MCP");
    let here = original.dispatch("stock_quote", args).await.expect("runs");
    assert_eq!(remote.to_model_text(), here.to_model_text());
    server.close().await;
}

#[tokio::test]
async fn the_typescript_sdk_client_lists_and_calls_the_exported_catalogue() {
    let modules = peers_root().join("node_modules");
    if !modules.join("@modelcontextprotocol/sdk").exists() || which("node").is_none() {
        assert!(!peers_required(), "TINYTOOLS_MCP_PEERS_REQUIRED=1 but the npm SDK is not in {}", modules.display());
        eprintln!("skipped: node or the npm MCP SDK is missing (run `.ci/mcp-peers`)");
        return;
    }
    let script = concat!(env!("CARGO_MANIFEST_DIR"), "/mcp/sdk_client.cjs");
    let output = tokio::process::Command::new("node")
        .args([script])
        .arg(&modules)
        .arg(SERVER)
        .output()
        .await
        .expect("node runs");
    assert!(output.status.success(), "{}", String::from_utf8_lossy(&output.stderr));
    let report: Value = serde_json::from_slice(&output.stdout).expect("one JSON object");

    assert_eq!(report["info"]["name"], "tinytools-catalogue");
    let tools = report["tools"].as_array().expect("tools");
    assert_eq!(tools.len(), 40);
    assert!(tools.iter().all(|t| t["name"] != "calendar_cancel_event"), "Hidden is never listed");
    let quote = tools.iter().find(|t| t["name"] == "stock_quote").expect("listed");
    let local = Arc::new(catalogue::registry());
    assert_eq!(quote["inputSchema"], local.get("stock_quote").expect("registered").schema().parameters);
    assert_eq!(quote["annotations"]["readOnlyHint"], true);

    let expected = local.dispatch("stock_quote", json!({"symbol": "ACME"})).await.expect("runs");
    assert_eq!(report["quote"]["content"][0]["text"], expected.to_model_text());
    assert_eq!(report["quote"]["isError"], false);
    assert_eq!(report["bad"]["isError"], true);
    assert!(report["bad"]["content"][0]["text"].as_str().is_some_and(|t| t.contains("/symbol")), "{}", report["bad"]);
    let hidden = report["hidden"]["protocolError"].as_str().expect("a protocol error, as for any unknown name");
    assert!(hidden.contains("unknown tool"), "{hidden}");
}

fn which(program: &str) -> Option<std::path::PathBuf> {
    std::env::var_os("PATH")?
        .to_str()?
        .split(':')
        .map(|dir| std::path::Path::new(dir).join(program))
        .find(|p| p.exists())
}
