//! The opt-in `list_changed` profile: off, a search changes nothing; on, the tools it found
//! join `tools/list`, callable by name, and the client is told the list changed.

// Test code may unwrap and expect.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use serde_json::json;
use tinytools_gateway::GatewayOptions;

use common::*;

/// The notifications once `at_least` have come (or after 30 s).
async fn settle(counter: &Counter, at_least: usize) -> usize {
    eventually(|| counter.count() >= at_least).await;
    counter.count()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn by_default_a_search_changes_neither_the_list_nor_the_capabilities() {
    let dir = temp_dir("promotion-off");
    let config = write_config(&dir, json!({"fixture": fixture(json!({}), json!({}))}));
    // Warm: a cold start says list_changed (it notifies once its servers are listed).
    warm(&config, &dir.join("cache")).await;
    let counter = Counter::default();
    let (client, _gateway) = connect_with(&config, &dir.join("cache"), counter.clone()).await;
    let info = client.peer().peer_info().unwrap();
    assert!(info.capabilities.tools.as_ref().unwrap().list_changed != Some(true), "{info:?}");
    let before = list(&client).await;
    assert_eq!(search(&client, "stock price for a ticker symbol").await["matches"][0]["name"], "fixture__stock_quote");
    assert_eq!(list(&client).await, before);
    tokio::time::sleep(std::time::Duration::from_millis(200)).await;
    assert_eq!(counter.count(), 0);
    client.cancel().await.unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn with_the_profile_found_tools_join_the_list_and_the_client_is_told() {
    let dir = temp_dir("promotion-on");
    let config = write_config(&dir, json!({"fixture": fixture(json!({}), json!({}))}));
    warm(&config, &dir.join("cache")).await;
    let counter = Counter::default();
    let options = GatewayOptions::default().with_list_changed(true).with_promotion_limit(4);
    let (client, gateway) = connect_with_options(&config, &dir.join("cache"), counter.clone(), options).await;
    let info = client.peer().peer_info().unwrap();
    assert_eq!(info.capabilities.tools.as_ref().unwrap().list_changed, Some(true), "{info:?}");
    assert_eq!(names(&list(&client).await), ["tool_search", "call_tool"]);

    let found = search(&client, "stock price for a ticker symbol").await;
    assert_eq!(settle(&counter, 1).await, 1, "one list_changed for one search");
    let listed = names(&list(&client).await);
    assert_eq!(&listed[..2], ["tool_search", "call_tool"]);
    assert!(listed.contains(&"fixture__stock_quote".to_owned()), "{listed:?}");
    let matched = found["matches"].as_array().unwrap().len();
    assert_eq!(listed.len(), 2 + matched.min(4), "{listed:?}");
    let promoted = list(&client).await.into_iter().find(|t| t.name == "fixture__stock_quote").unwrap();
    assert!(promoted.input_schema.get("properties").is_some_and(|p| p.get("symbol").is_some()), "{promoted:?}");

    // Callable by its own name.
    let direct = call(&client, "fixture__stock_quote", json!({"symbol": "ACME"})).await;
    assert_eq!(direct.is_error, Some(false), "{}", text(&direct));

    // The same search again promotes nothing new and says nothing.
    search(&client, "stock price for a ticker symbol").await;
    tokio::time::sleep(std::time::Duration::from_millis(200)).await;
    assert_eq!(counter.count(), 1);
    // A new session starts from the stable surface.
    assert!(gateway.session().promoted().is_empty());
    assert_eq!(gateway.promoted().len(), matched.min(4));
    client.cancel().await.unwrap();
}
