//! `tools/list` when it is long (paged, each page's cursor honoured) and `tool_search`'s
//! manifest when the budget has no room for every name (the count, or names grouped per server
//! with `ManifestNames::Grouped`).

// Test code may unwrap and expect.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use rmcp::model::PaginatedRequestParams;
use serde_json::{Value, json};
use tinytools_gateway::cache::{CACHE_FORMAT, CachedTool, Manifest, config_hash};
use tinytools_gateway::{GatewayConfig, GatewayOptions, ManifestCache, ManifestNames};

use common::*;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_long_tool_list_is_paged_and_every_cursor_is_honoured() {
    let dir = temp_dir("paging");
    // Every tool Direct: tool_search, call_tool and the fixture's tools, all in tools/list.
    let config = write_config(&dir, json!({"fixture": fixture(json!({}), json!({"exposure": "direct"}))}));
    warm(&config, &dir.join("cache")).await;
    let (whole, _gateway) = connect(&config, &dir.join("cache")).await;
    let all = list(&whole).await;
    assert_eq!(all.len(), 2 + fixture_tool_count());
    let first = whole.peer().list_tools(None).await.unwrap();
    assert!(first.next_cursor.is_none(), "under the default page size the list is one page");
    whole.cancel().await.unwrap();

    let options = GatewayOptions::default().with_page_size(10);
    let (client, _gateway) = connect_with_options(&config, &dir.join("cache"), (), options).await;
    let first = client.peer().list_tools(None).await.unwrap();
    assert_eq!(first.tools.len(), 10);
    let cursor = first.next_cursor.clone().expect("a next page");
    let second = client.peer().list_tools(Some(PaginatedRequestParams::default().with_cursor(Some(cursor)))).await;
    assert_eq!(names(&second.unwrap().tools), names(&all[10..20]));
    // The client's own paging (rmcp follows nextCursor) gathers the same list.
    assert_eq!(list(&client).await, all);

    let bogus = PaginatedRequestParams::default().with_cursor(Some("12-0000000000000000".into()));
    let refused = client.peer().list_tools(Some(bogus)).await.unwrap_err().to_string();
    assert!(refused.contains("list again without a cursor"), "{refused}");
    client.cancel().await.unwrap();
}

/// Ten servers of a hundred cached tools each (never started).
fn thousand_tools(dir: &std::path::Path) -> GatewayConfig {
    let servers: serde_json::Map<String, Value> =
        (0..10).map(|i| (format!("server{i}"), json!({"command": "/nonexistent/server"}))).collect();
    let config = write_config(dir, Value::Object(servers));
    let cache = ManifestCache::new(dir.join("cache"));
    for (s, server) in config.servers.values().enumerate() {
        let tools = (0..100)
            .map(|t| CachedTool {
                name: format!("operation_{t}_of_service_{s}"),
                description: Some(format!("Run operation {t} of service {s} on a record.")),
                title: None,
                input_schema: json!({"type": "object", "properties": {"id": {"type": "string"}}, "required": ["id"]}),
                annotations: None,
            })
            .collect();
        let manifest = Manifest {
            format: CACHE_FORMAT,
            config_hash: config_hash(server),
            server_name: None,
            server_version: None,
            instructions: None,
            self_description: None,
            summary: None,
            tools,
        };
        cache.store(server, &manifest).unwrap();
    }
    config
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn grouped_manifest_names_fit_the_budget_beside_the_count() {
    let dir = temp_dir("grouped");
    let config = thousand_tools(&dir);
    let (client, _gateway) = connect(&config, &dir.join("cache")).await;
    let count = list(&client).await[0].description.clone().unwrap().to_string();
    assert!(count.contains("1000 tools are available through search"), "{count}");
    assert!(count.contains("Their families: server0, server1"), "today's line names the servers: {count}");
    assert!(!count.contains("operation_0_of_service_3"), "{count}");
    client.cancel().await.unwrap();

    let options = GatewayOptions::default().with_manifest_names(ManifestNames::Grouped);
    let (client, gateway) = connect_with_options(&config, &dir.join("cache"), (), options).await;
    let tools = list(&client).await;
    let grouped = tools[0].description.clone().unwrap().to_string();
    eprintln!("{grouped}");
    assert!(grouped.contains("1000 tools are available through search"), "{grouped}");
    assert!(grouped.contains("By server (call one as server__tool):"), "{grouped}");
    assert!(grouped.contains("\n- server3 (100): operation_0_of_service_3, "), "{grouped}");
    assert!(grouped.contains(" … +"), "the names left out are counted: {grouped}");
    assert!(!grouped.contains("Their families"), "the grouped names replace the server names: {grouped}");
    let bytes = serde_json::to_vec(&json!({"tools": tools})).unwrap().len();
    assert!(bytes <= 3_000, "{bytes} bytes");
    // A name as the manifest shows it, with its server's prefix, is callable (its admission
    // runs; the server itself cannot start).
    let refused = call_tool(&client, "server3__operation_0_of_service_3", json!({})).await;
    assert!(text(&refused).contains("id"), "admitted against its schema: {}", text(&refused));
    assert!(gateway.supervisor().servers().all(|server| server.starts() == 0));
    client.cancel().await.unwrap();
}
