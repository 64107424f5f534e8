//! The gateway end to end, in process: an rmcp client on one end of a duplex pipe, the
//! gateway on the other, fronting the fixture server (the example catalogue) as a child.

// Test code may unwrap and expect.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use serde_json::{Value, json};
use tinytools_examples::catalogue;
use tinytools_gateway::{GatewayConfig, GatewayOptions};

use common::*;

fn fixture_config(dir: &std::path::Path, gateway: Value) -> GatewayConfig {
    let starts = dir.join("starts");
    write_config(dir, json!({"fixture": fixture(json!({"FIXTURE_STARTS": starts}), gateway)}))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_first_tools_list_is_tool_search_and_call_tool_within_3000_bytes() {
    let dir = temp_dir("first-list");
    let config = fixture_config(&dir, json!({}));
    let (client, gateway) = connect(&config, &dir.join("cache")).await;
    let tools = list(&client).await;
    assert_eq!(names(&tools), ["tool_search", "call_tool"]);
    let bytes = serde_json::to_vec(&json!({"tools": tools})).unwrap().len();
    eprintln!("first tools/list: {bytes} bytes for 42 downstream tools");
    assert!(bytes <= 3_000, "{bytes} bytes");
    let description = tools[0].description.as_deref().unwrap_or_default();
    assert!(description.contains("fixture__"), "the manifest names downstream tools: {description}");
    assert!(description.contains("call_tool"), "{description}");
    assert!(!description.contains("calendar_cancel_event"), "the server's Hidden tool is never listed");
    // The listing was cached, under the server's name.
    let cached: Vec<_> = std::fs::read_dir(dir.join("cache")).unwrap().filter_map(Result::ok).collect();
    assert_eq!(cached.len(), 1, "one manifest and no cache write in flight: {cached:?}");
    assert_eq!(gateway.supervisor().server("fixture").unwrap().starts(), 1, "the server was started once");
    client.cancel().await.unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_warm_cache_lists_and_searches_without_starting_the_server() {
    let dir = temp_dir("warm");
    let config = fixture_config(&dir, json!({}));
    let starts = dir.join("starts");
    let (client, _gateway) = connect(&config, &dir.join("cache")).await;
    assert_eq!(list(&client).await.len(), 2);
    client.cancel().await.unwrap();
    assert_eq!(lines(&starts), 1, "the cold start listed the tools once");

    let (client, gateway) = connect(&config, &dir.join("cache")).await;
    assert_eq!(names(&list(&client).await), ["tool_search", "call_tool"]);
    let answer = search(&client, "stock price for a ticker symbol").await;
    let first = &answer["matches"][0];
    assert_eq!(first["name"], "fixture__stock_quote");
    assert!(first["parameters"]["properties"]["symbol"].is_object(), "{answer}");
    assert!(answer["note"].as_str().unwrap().contains("call_tool"));
    assert_eq!(lines(&starts), 1, "listing and searching started nothing");
    assert_eq!(gateway.supervisor().server("fixture").unwrap().starts(), 0);

    let result = call_tool(&client, "fixture__stock_quote", json!({"symbol": "ACME"})).await;
    assert_eq!(result.is_error, Some(false), "{}", text(&result));
    assert_eq!(lines(&starts), 2, "the first call started the server");
    client.cancel().await.unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_servers_instructions_rank_its_tools_and_stay_out_of_search_answers() {
    let dir = temp_dir("instructions");
    let words = "Made-up data for a tutoring desk.";
    let config = write_config(&dir, json!({"fixture": fixture(json!({"FIXTURE_INSTRUCTIONS": words}), json!({}))}));
    let (client, _gateway) = connect(&config, &dir.join("cache")).await;
    list(&client).await;
    // Only the server's instructions say "tutoring": its tools are found by them.
    let answer = search(&client, "tutoring").await;
    let first = answer["matches"][0]["name"].as_str().unwrap_or_default();
    assert!(first.starts_with("fixture__"), "{answer}");
    assert!(!answer.to_string().contains("tutoring"), "the answer holds declarations only: {answer}");
    client.cancel().await.unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_warm_cache_serves_even_when_the_command_cannot_start() {
    let dir = temp_dir("broken-command");
    let good = fixture_config(&dir, json!({}));
    let (client, _gateway) = connect(&good, &dir.join("cache")).await;
    list(&client).await;
    client.cancel().await.unwrap();
    // The same tools, cached for a config whose command does not exist.
    let broken = write_config(&dir, json!({"fixture": {"command": "/nonexistent/tinytools-fixture"}}));
    let cache = tinytools_gateway::ManifestCache::new(dir.join("cache"));
    let mut manifest = cache.load(&good.servers["fixture"]).unwrap();
    manifest.config_hash = tinytools_gateway::cache::config_hash(&broken.servers["fixture"]);
    cache.store(&broken.servers["fixture"], &manifest).unwrap();

    let (client, _gateway) = connect(&broken, &dir.join("cache")).await;
    assert_eq!(names(&list(&client).await), ["tool_search", "call_tool"]);
    assert_eq!(search(&client, "convert currency").await["matches"][0]["name"], "fixture__currency_convert");
    let result = call_tool(&client, "fixture__stock_quote", json!({"symbol": "ACME"})).await;
    assert_eq!(result.is_error, Some(true));
    let message = text(&result);
    assert!(message.contains("`fixture` server could not be started"), "{message}");
    // The command by its file name, never its path (or the config file's).
    assert!(message.contains("command `tinytools-fixture` not found") && message.contains("PATH"), "{message}");
    assert!(!message.contains("/nonexistent") && !message.contains(&*dir.to_string_lossy()), "{message}");
    client.cancel().await.unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn call_tool_forwards_and_relays_content_and_structured_content() {
    let dir = temp_dir("relay");
    let (client, _gateway) = connect(&fixture_config(&dir, json!({})), &dir.join("cache")).await;
    let result = call_tool(&client, "fixture__stock_quote", json!({"symbol": "ACME"})).await;
    let local = catalogue::registry().dispatch("stock_quote", json!({"symbol": "ACME"})).await.unwrap();
    assert_eq!(result.is_error, Some(false));
    assert_eq!(text(&result), local.to_model_text());
    assert_eq!(result.structured_content.as_ref().unwrap()["symbol"], "ACME");
    // A refusal of the downstream tool is relayed as its error result.
    let refused = call_tool(&client, "fixture__stock_quote", json!({"symbol": "!!"})).await;
    assert_eq!(refused.is_error, Some(true));
    assert!(text(&refused).contains("ticker symbol"), "{}", text(&refused));
    client.cancel().await.unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn bad_arguments_name_every_violation_and_stringified_ones_are_repaired() {
    let dir = temp_dir("admission");
    let (client, gateway) = connect(&fixture_config(&dir, json!({})), &dir.join("cache")).await;
    let result = call_tool(&client, "fixture__currency_convert", json!({"amount": "ten", "from": 3})).await;
    assert_eq!(result.is_error, Some(true));
    let message = text(&result);
    for field in ["amount", "from", "to"] {
        assert!(message.contains(field), "`{field}` is named: {message}");
    }
    // The refusal carries what the model needs to write the call again.
    let signature = "`fixture__currency_convert` takes: {amount: number, from: string, to: string";
    assert!(message.contains(signature), "{message}");
    assert!(message.contains("- to: "), "the argument notes: {message}");
    assert!(message.contains(r#"{"name": "fixture__currency_convert", "arguments": {...}}"#), "{message}");
    let starts = gateway.supervisor().server("fixture").unwrap().starts();

    let repaired =
        call(&client, "call_tool", json!({"name": "fixture__stock_quote", "arguments": "{\"symbol\": \"ACME\"}"}))
            .await;
    assert_eq!(repaired.is_error, Some(false), "{}", text(&repaired));
    assert!(text(&repaired).contains("ACME"));
    assert_eq!(gateway.supervisor().server("fixture").unwrap().starts(), starts, "the refused call reached no server");

    let missing = call(&client, "call_tool", json!({"arguments": {}})).await;
    assert_eq!(missing.is_error, Some(true));
    assert!(text(&missing).contains("\"name\""), "{}", text(&missing));
    client.cancel().await.unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn hidden_and_unknown_names_get_the_same_answer_and_direct_tools_are_listed() {
    let dir = temp_dir("exposure");
    let gateway_keys = json!({"deny": ["crypto_*"], "tools": {"stock_quote": "hidden", "currency_convert": "direct"}});
    let (client, _gateway) = connect(&fixture_config(&dir, gateway_keys), &dir.join("cache")).await;
    let tools = list(&client).await;
    assert_eq!(names(&tools), ["tool_search", "call_tool", "fixture__currency_convert"]);
    let manifest = tools[0].description.as_deref().unwrap_or_default();
    assert!(!manifest.contains("stock_quote") && !manifest.contains("crypto_price"), "{manifest}");

    for hidden in ["fixture__stock_quote", "fixture__crypto_price", "fixture__calendar_cancel_event", "fixture__nope"] {
        let result = call_tool(&client, hidden, json!({"symbol": "ACME"})).await;
        assert_eq!(result.is_error, Some(true));
        let message = text(&result);
        assert!(message.starts_with("No tool by that name is available."), "{message}");
        for name in ["stock_quote", "crypto_price", "calendar_cancel_event", "nope"] {
            assert!(!message.contains(name), "{hidden}: {message}");
        }
    }
    let answer = search(&client, "stock quote price ticker").await;
    assert!(!answer.to_string().contains("stock_quote"), "{answer}");

    let direct = call(&client, "fixture__currency_convert", json!({"amount": 10, "from": "EUR", "to": "JPY"})).await;
    assert_eq!(direct.is_error, Some(false), "{}", text(&direct));
    client.cancel().await.unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_invented_name_is_answered_with_the_tools_its_words_and_arguments_fit() {
    let dir = temp_dir("invented");
    let gateway_keys = json!({"tools": {"crypto_price": "hidden"}});
    let (client, gateway) = connect(&fixture_config(&dir, gateway_keys), &dir.join("cache")).await;
    list(&client).await; // the server's tools are listed (it was started once for that)
    let starts = gateway.supervisor().server("fixture").unwrap().starts();

    let invented = call_tool(&client, "get_stock_price", json!({"ticker": "ACME"})).await;
    assert_eq!(invented.is_error, Some(true));
    let message = text(&invented);
    assert!(message.starts_with("No tool by that name is available. These tools may fit:"), "{message}");
    assert!(message.contains("- `fixture__stock_quote` takes {symbol: string"), "{message}");
    assert!(message.contains(r#"call_tool with {"name": "<its name>", "arguments": {...}}"#), "{message}");
    assert!(!message.contains("get_stock_price"), "the name is not repeated: {message}");
    assert!(!message.contains("crypto_price"), "a Hidden tool is never named: {message}");
    assert!(message.lines().filter(|line| line.starts_with("- `")).count() <= 3, "{message}");

    // Arguments sent as JSON text are ranked as the object they encode.
    let encoded = call_tool(&client, "convert", json!("{\"from_currency\": \"EUR\"}")).await;
    assert!(text(&encoded).contains("`fixture__currency_convert` takes"), "{}", text(&encoded));

    // Nothing shares a word with the call: the plain answer, which points to tool_search.
    let nothing = call_tool(&client, "zzqx", json!({})).await;
    let message = text(&nothing);
    assert!(message.starts_with("No tool by that name is available."), "{message}");
    assert!(!message.contains("may fit"), "{message}");
    assert!(message.contains("tool_search"), "{message}");
    assert_eq!(gateway.supervisor().server("fixture").unwrap().starts(), starts, "no call reached a server");
    client.cancel().await.unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_crash_is_an_error_result_and_the_next_call_restarts_the_server() {
    let dir = temp_dir("crash");
    let (client, gateway) = connect(&fixture_config(&dir, json!({})), &dir.join("cache")).await;
    let crashed = call_tool(&client, "fixture__fixture_crash", json!({})).await;
    assert_eq!(crashed.is_error, Some(true));
    let message = text(&crashed);
    assert!(message.contains("`fixture` server stopped answering"), "{message}");
    assert!(message.contains("started again on the next call"), "{message}");
    let next = call_tool(&client, "fixture__stock_quote", json!({"symbol": "ACME"})).await;
    assert_eq!(next.is_error, Some(false), "{}", text(&next));
    assert_eq!(gateway.supervisor().server("fixture").unwrap().starts(), 2);
    client.cancel().await.unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_hang_past_the_call_timeout_is_an_error_result_and_the_next_call_works() {
    let dir = temp_dir("hang");
    let (client, _gateway) = connect(&fixture_config(&dir, json!({"call_timeout_secs": 1})), &dir.join("cache")).await;
    let started = std::time::Instant::now();
    let hung = call_tool(&client, "fixture__fixture_sleep", json!({"secs": 60})).await;
    assert!(started.elapsed() < std::time::Duration::from_secs(20), "{:?}", started.elapsed());
    assert_eq!(hung.is_error, Some(true));
    let message = text(&hung);
    assert!(message.contains("did not answer `fixture_sleep` within 1 s"), "{message}");
    let next = call_tool(&client, "fixture__stock_quote", json!({"symbol": "ACME"})).await;
    assert_eq!(next.is_error, Some(false), "{}", text(&next));
    client.cancel().await.unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_server_that_exits_at_start_answers_with_an_error_then_works_once_fixed() {
    let dir = temp_dir("exit-at-start");
    let marker = dir.join("ready");
    std::fs::write(&marker, "").unwrap();
    let config = write_config(&dir, json!({"fixture": fixture(json!({"FIXTURE_EXIT_UNLESS": marker}), json!({}))}));
    let (client, _gateway) = connect(&config, &dir.join("cache")).await;
    assert_eq!(list(&client).await.len(), 2, "warms the cache");
    client.cancel().await.unwrap();

    std::fs::remove_file(&marker).unwrap();
    let (client, gateway) = connect(&config, &dir.join("cache")).await;
    let failed = call_tool(&client, "fixture__stock_quote", json!({"symbol": "ACME"})).await;
    assert_eq!(failed.is_error, Some(true));
    let message = text(&failed);
    assert!(message.contains("`fixture` server"), "{message}");
    assert!(message.contains("could not be started: exited during the MCP handshake"), "{message}");
    assert!(!message.contains(&*dir.to_string_lossy()), "no path: {message}");
    std::fs::write(&marker, "").unwrap();
    let next = call_tool(&client, "fixture__stock_quote", json!({"symbol": "ACME"})).await;
    assert_eq!(next.is_error, Some(false), "{}", text(&next));
    assert_eq!(gateway.supervisor().server("fixture").unwrap().starts(), 2);
    client.cancel().await.unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_crash_in_one_server_leaves_the_others_alone() {
    let dir = temp_dir("two-servers");
    let config = write_config(&dir, json!({"a": fixture(json!({}), json!({})), "b": fixture(json!({}), json!({}))}));
    let (client, gateway) = connect(&config, &dir.join("cache")).await;
    let before = call_tool(&client, "b__stock_quote", json!({"symbol": "ACME"})).await;
    assert_eq!(before.is_error, Some(false), "{}", text(&before));
    let crashed = call_tool(&client, "a__fixture_crash", json!({})).await;
    assert!(text(&crashed).contains("`a` server stopped answering"), "{}", text(&crashed));
    let after = call_tool(&client, "b__stock_quote", json!({"symbol": "ACME"})).await;
    assert_eq!(after.is_error, Some(false), "{}", text(&after));
    assert_eq!(gateway.supervisor().server("b").unwrap().starts(), 1, "b was never restarted");
    client.cancel().await.unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_first_tools_list_stays_within_3000_bytes_at_1000_tools() {
    let dir = temp_dir("thousand");
    let servers: serde_json::Map<String, Value> =
        (0..10).map(|i| (format!("server{i}"), json!({"command": "/nonexistent/server"}))).collect();
    let config = write_config(&dir, Value::Object(servers));
    let cache = tinytools_gateway::ManifestCache::new(dir.join("cache"));
    for (s, server) in config.servers.values().enumerate() {
        let tools = (0..100)
            .map(|t| tinytools_gateway::cache::CachedTool {
                name: format!("operation_{t}_of_service_{s}"),
                description: Some(format!("Run operation {t} of service {s} on a record, with its options and filters.")),
                title: None,
                input_schema: json!({"type": "object", "properties": {"id": {"type": "string", "description": "The record."}}, "required": ["id"]}),
                annotations: None,
            })
            .collect();
        let manifest = tinytools_gateway::cache::Manifest {
            format: tinytools_gateway::cache::CACHE_FORMAT,
            config_hash: tinytools_gateway::cache::config_hash(server),
            server_name: None,
            server_version: None,
            instructions: None,
            self_description: None,
            summary: None,
            tools,
        };
        cache.store(server, &manifest).unwrap();
    }
    let (client, gateway) = connect(&config, &dir.join("cache")).await;
    let tools = list(&client).await;
    assert_eq!(names(&tools), ["tool_search", "call_tool"]);
    let bytes = serde_json::to_vec(&json!({"tools": tools})).unwrap().len();
    eprintln!("first tools/list: {bytes} bytes for 1,000 downstream tools");
    assert!(bytes <= 3_000, "{bytes} bytes");
    assert_eq!(
        search(&client, "operation 7 of service 3").await["matches"][0]["name"],
        "server3__operation_7_of_service_3"
    );
    assert!(gateway.supervisor().servers().all(|server| server.starts() == 0));
    client.cancel().await.unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_compaction_budget_shrinks_what_tool_search_returns_for_that_tool_only() {
    let query = "convert an amount of money between currencies";
    let found = |answer: &Value, name: &str| {
        answer["matches"].as_array().unwrap().iter().find(|m| m["name"] == name).cloned().unwrap_or(Value::Null)
    };
    let dir = temp_dir("compaction-wide");
    let (client, _gateway) = connect(&fixture_config(&dir, json!({})), &dir.join("cache")).await;
    let wide = found(&search(&client, query).await, "fixture__currency_convert");
    client.cancel().await.unwrap();

    let dir = temp_dir("compaction-tight");
    let keys = json!({"tool_compaction": {"currency_convert": {"max_description_bytes": 40}}});
    let (client, gateway) = connect(&fixture_config(&dir, keys), &dir.join("cache")).await;
    let tight = found(&search(&client, query).await, "fixture__currency_convert");
    let wide_text = wide["description"].as_str().unwrap();
    let tight_text = tight["description"].as_str().unwrap();
    assert!(wide_text.len() > 40, "{wide}");
    assert!(tight_text.len() <= 40 && tight_text.ends_with('…'), "{tight}");
    // Only that tool's budget changed, and admission still uses the full schema.
    let other = search(&client, "stock price for a ticker symbol").await;
    assert!(found(&other, "fixture__stock_quote")["description"].as_str().unwrap().len() > 40, "{other}");
    let refused = call_tool(&client, "fixture__currency_convert", json!({"amount": "ten"})).await;
    assert_eq!(refused.is_error, Some(true));
    assert!(text(&refused).contains("from"), "{}", text(&refused));
    assert_eq!(gateway.supervisor().server("fixture").unwrap().starts(), 1);
    client.cancel().await.unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_name_without_its_server_prefix_is_called_when_one_server_has_it() {
    let dir = temp_dir("bare-names");
    // Two servers of the same catalogue, split by allow-list: `stock_quote` only on `a`,
    // `crypto_price` on both.
    let config = write_config(
        &dir,
        json!({
            "a": fixture(json!({}), json!({"allow": ["stock_quote", "crypto_price"]})),
            "b": fixture(json!({}), json!({"allow": ["crypto_price"]})),
        }),
    );
    let (client, _gateway) = connect(&config, &dir.join("cache")).await;
    let unique = call(&client, "call_tool", json!({"name": "stock_quote", "arguments": {"symbol": "ACME"}})).await;
    assert_eq!(unique.is_error, Some(false), "{}", text(&unique));
    assert!(text(&unique).contains("ACME"), "{}", text(&unique));

    let ambiguous = call(&client, "call_tool", json!({"name": "crypto_price", "arguments": {"coin": "BTC"}})).await;
    assert_eq!(ambiguous.is_error, Some(true), "two servers have it: the name must say which");
    assert!(text(&ambiguous).contains("tool_search"), "{}", text(&ambiguous));

    let hidden = call(&client, "call_tool", json!({"name": "calendar_cancel_event", "arguments": {}})).await;
    assert_eq!(hidden.is_error, Some(true), "a tool no server exposes is unknown, prefix or not");
    client.cancel().await.unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn tool_search_answers_in_two_stages_and_a_candidate_is_called_through_call_tool() {
    let dir = temp_dir("two-stage");
    let options = GatewayOptions::default().with_search_candidates(10, 1_500);
    let (client, _gateway) =
        connect_with_options(&fixture_config(&dir, json!({})), &dir.join("cache"), (), options).await;
    let result =
        call(&client, "tool_search", json!({"query": "price of a stock or a coin in another currency", "limit": 1}))
            .await;
    let answer: Value = serde_json::from_str(&text(&result)).expect("a JSON answer");
    let matches = answer["matches"].as_array().expect("full matches");
    assert_eq!(matches.len(), 1, "{answer}");
    assert!(matches[0]["parameters"].is_object(), "a full match keeps its schema");
    let candidates: Vec<&str> =
        answer["candidates"].as_array().expect("candidates").iter().filter_map(|c| c["name"].as_str()).collect();
    assert!(!candidates.is_empty() && !candidates.contains(&matches[0]["name"].as_str().unwrap_or("")), "{answer}");
    assert!(answer["candidates"][0]["line"].is_string(), "a name and one line: {answer}");
    assert!(answer["note"].as_str().unwrap().contains("A candidate is called the same way"), "{answer}");
    // Called by its name through call_tool: valid arguments run, wrong ones get its schema.
    let (name, valid, wrong, signature) = if candidates.contains(&"fixture__stock_quote") {
        ("fixture__stock_quote", json!({"symbol": "ACME"}), json!({"ticker": "ACME"}), "{symbol: string")
    } else {
        ("fixture__crypto_price", json!({"coin": "BTC"}), json!({"symbol": "BTC"}), "{coin: string")
    };
    assert!(candidates.contains(&name), "{answer}");
    let ran = call_tool(&client, name, valid).await;
    assert_eq!(ran.is_error, Some(false), "{}", text(&ran));
    let refused = call_tool(&client, name, wrong).await;
    assert_eq!(refused.is_error, Some(true));
    assert!(text(&refused).contains(&format!("`{name}` takes: {signature}")), "{}", text(&refused));
    client.cancel().await.unwrap();
}
