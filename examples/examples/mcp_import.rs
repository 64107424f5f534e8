//! Import real MCP servers as Deferred families and find their tools through `tool_search`.
//!
//! Starts every reference server `.ci/mcp-peers` installed (npm `server-everything`,
//! `server-filesystem` on a temp dir, PyPI `mcp-server-time`), imports each with one line, and
//! reports per server the tools and schema bytes before and after `SchemaCompaction::THIRD_PARTY`,
//! then what the first request costs with every imported tool Direct versus Deferred. Last, a
//! scripted run asks for the time in Tokyo: the model searches, the bridge promotes the time
//! server's tool, the call goes to the real server.
//!
//! ```text
//! .ci/mcp-peers                                                     # once: install the servers
//! cargo run -p tinytools-examples --features mcp --example mcp_import              # a report
//! cargo run -p tinytools-examples --features mcp --example mcp_import -- --json    # the figures as JSON
//! ```

use serde_json::{Value, json};
use tinytools::discovery::{DiscoveryBridge, ToolDiscoveryPolicy};
use tinytools::model::Message;
use tinytools::run::{Agent, RunPolicy};
use tinytools::schema::{EstimatedTokens, ProviderProfile};
use tinytools::{SchemaPreparation, ToolRegistry};
use tinytools_examples::mcp_peers::Peer;
use tinytools_examples::scripted;
use tinytools_examples::surface::{self, Surface};

#[tokio::main(flavor = "current_thread")]
async fn main() {
    let json_output = std::env::args().any(|arg| arg == "--json");
    let dir = std::env::temp_dir().join(format!("tinytools-mcp-example-{}", std::process::id()));
    if let Err(err) = std::fs::create_dir_all(&dir).and_then(|()| std::fs::write(dir.join("todo.txt"), "ship MCP\n")) {
        eprintln!("mcp_import: cannot prepare {}: {err}", dir.display());
        std::process::exit(1);
    }
    let preparation = SchemaPreparation::new(ProviderProfile::OPENAI);

    let mut registry = ToolRegistry::new();
    let mut servers = Vec::new();
    let mut per_server = Vec::new();
    for peer in Peer::ALL {
        // Connect, list, register (Deferred, THIRD_PARTY, namespaced): `McpServer::connect_stdio`
        // and `register_into`, one line each.
        let imported = match peer.connect(&dir).await {
            Ok(server) => {
                server.register_into(&mut registry).await.map(|report| (server, report)).map_err(|e| e.to_string())
            }
            Err(why) => Err(why),
        };
        match imported {
            Ok((server, report)) => {
                per_server.push(server_figures(peer.name(), &registry, &report.imported, &preparation));
                servers.push(server);
            }
            Err(err) => eprintln!("mcp_import: {err}"),
        }
    }
    if servers.is_empty() {
        eprintln!("mcp_import: no reference server is installed; run `.ci/mcp-peers` first");
        std::process::exit(1);
    }

    let direct = first_request(&surface::all_direct(&registry), &preparation);
    let deferred = first_request(&registry, &preparation);
    let run = scripted_run(registry.clone(), preparation).await;

    let report = json!({
        "servers": per_server,
        "first_request": {"all_direct": direct, "deferred": deferred},
        "run": run,
    });
    if json_output {
        println!("{report}");
    } else {
        println!("Imported MCP servers (declaration bytes: as listed -> OpenAI profile -> + THIRD_PARTY)");
        for server in &per_server {
            println!(
                "  {:<11} {:>3} tools  {:>6} B -> {:>6} B -> {:>6} B",
                server["server"].as_str().unwrap_or_default(),
                server["tools"],
                server["schema_bytes"],
                server["profile_only_bytes"],
                server["wire_schema_bytes"]
            );
        }
        println!("First request, every imported tool Direct: {} tools, {} B", direct["tools"], direct["schema_bytes"]);
        println!(
            "First request, imported tools Deferred:   {} tools, {} B",
            deferred["tools"], deferred["schema_bytes"]
        );
        println!("Scripted run: {}", serde_json::to_string_pretty(&run).unwrap_or_default());
    }
    for server in servers {
        server.close().await;
    }
    let _ = std::fs::remove_dir_all(&dir);
}

/// A server's tools and schema bytes as listed, and as the wire carries them.
fn server_figures(name: &str, registry: &ToolRegistry, imported: &[String], preparation: &SchemaPreparation) -> Value {
    let tools: Vec<_> = imported.iter().filter_map(|n| registry.get(n)).collect();
    let listed: usize = tools.iter().map(|t| t.schema().byte_len()).sum();
    let profile_only: usize = tools.iter().map(|t| preparation.prepare(t.schema(), None).schema.byte_len()).sum();
    let wire: usize = tools.iter().map(|t| preparation.prepare(t.schema(), t.compaction()).schema.byte_len()).sum();
    json!({
        "server": name,
        "tools": tools.len(),
        "schema_bytes": listed,
        "profile_only_bytes": profile_only,
        "wire_schema_bytes": wire,
        "largest_parameters_bytes": tools.iter().map(|t| t.schema().parameters.to_string().len()).max(),
        "largest_description_bytes": tools.iter().map(|t| t.schema().description.len()).max(),
    })
}

/// The tools array of a run's first request, as the run prepares it.
fn first_request(registry: &ToolRegistry, preparation: &SchemaPreparation) -> Value {
    let bridge = DiscoveryBridge::new(registry, ToolDiscoveryPolicy::default()).with_preparation(Some(*preparation));
    Surface::of(&bridge, &EstimatedTokens).to_json()
}

/// "What time is it in Tokyo?": search, call the best match, answer from its result.
async fn scripted_run(registry: ToolRegistry, preparation: SchemaPreparation) -> Value {
    if !registry.contains("time__get_current_time") {
        return json!({"skipped": "the time server is not installed"});
    }
    let model = scripted::search_call_answer("current time in a timezone", json!({"timezone": "Asia/Tokyo"}), |time| {
        format!("In Tokyo it is {}.", time.and_then(|t| t["datetime"].as_str()).unwrap_or("unknown"))
    });
    let policy = RunPolicy::default().with_tool_schemas(preparation);
    let agent = match Agent::builder(model).registry(registry).policy(policy).build() {
        Ok(agent) => agent,
        Err(err) => return json!({"error": err.to_string()}),
    };
    match agent.run(vec![Message::user("What time is it in Tokyo?")]).await {
        Ok(outcome) => json!({
            "promoted": outcome.transcript.promoted().collect::<Vec<_>>(),
            "answer": outcome.answer,
            "turns": outcome.turns,
        }),
        Err(err) => json!({"error": err.to_string()}),
    }
}
