//! The `live_tasks` benchmark's gateway arm (`tinytools_bench::gateway_arm`) through the real
//! `tinytools-gateway` binary: scripted models search and call through `call_tool`, and the
//! task judge counts each forwarded call as the catalogue tool it names.
//!
//! The arm runs the binaries the `live_tasks` binary would: `tinytools-gateway` and the
//! `mcp_serve` example (one server per family, `--family`), from this test's profile directory
//! (`target/debug`). This package cannot name another package's binaries, so they are built
//! beforehand: `cargo test --workspace` builds both (the gateway for its own tests, every
//! example); alone, `cargo build -p tinytools-gateway -p tinytools-examples --bin
//! tinytools-gateway --example mcp_serve` first. When they are missing the tests are skipped
//! with a note, or fail when `TINYTOOLS_GATEWAY_ARM_REQUIRED=1` (`.ci/run` sets it).

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::sync::Arc;

use serde_json::{Value, json};
use tinytools::model::{ChatModel, Message, ModelError, ModelRequest, ModelResponse};
use tinytools_bench::tasks::{self, Task};
use tinytools_bench::{
    self as bench, AidsChoice, ArmKind, ArmSpec, CALL_TOOL, GatewayBinaries, GatewaySetup, KeywordModel, PreSearch,
};

/// The gateway and the catalogue server beside this test, or `None` (the test skipped, with a
/// note) when they are not built and not required.
fn binaries() -> Option<GatewayBinaries> {
    let mut binaries = GatewayBinaries::beside_current_exe().expect("the test executable has a directory");
    // This package's own binary: cargo names it to its integration tests.
    binaries.distractor_server = env!("CARGO_BIN_EXE_bfcl_serve").into();
    match binaries.check(true) {
        Ok(()) => Some(binaries),
        Err(why) if std::env::var("TINYTOOLS_GATEWAY_ARM_REQUIRED").is_ok_and(|v| v == "1") => panic!("{why}"),
        Err(why) => {
            eprintln!("skipped: {why}");
            None
        }
    }
}

/// The arm over the built binaries, or `None` when they are not there (see [`binaries`]).
async fn arm() -> Option<ArmSpec> {
    let binaries = binaries()?;
    let setup = GatewaySetup { aids: AidsChoice::Standard, ..GatewaySetup::default() };
    Some(bench::gateway_arm(&binaries, &setup).await.expect("the gateway arm starts"))
}

/// Solves a task the way a good model would through the gateway: each step's tool found with
/// `tool_search` (or offered, like `notes__read_note`), called through `call_tool` with the
/// step's example arguments; then a text answer.
struct Oracle(&'static Task);

#[async_trait::async_trait]
impl ChatModel for Oracle {
    async fn complete(&self, request: &ModelRequest) -> Result<ModelResponse, ModelError> {
        let id = format!("o_{}", request.messages.len());
        let done = request
            .messages
            .iter()
            .filter(|m| matches!(m, Message::Tool { name, is_error: false, .. } if name != "tool_search"))
            .count();
        let Some(step) = self.0.steps().get(done) else {
            return Ok(ModelResponse::text("Done."));
        };
        let arguments: Value = serde_json::from_str(step.example).expect("examples are JSON");
        let suffix = format!("__{}", step.tool);
        if let Some(offered) = request.tools.iter().find(|tool| tool.name == step.tool || tool.name.ends_with(&suffix))
        {
            return Ok(ModelResponse::calls([(id.as_str(), offered.name.as_str(), arguments)]));
        }
        if let Some(Message::Tool { name, content, .. }) = request.messages.last()
            && name == "tool_search"
        {
            let found: Value = serde_json::from_str(content).unwrap_or(Value::Null);
            let matches = found["matches"].as_array().cloned().unwrap_or_default();
            let Some(name) = matches.iter().filter_map(|m| m["name"].as_str()).find(|n| n.ends_with(&suffix)) else {
                return Ok(ModelResponse::text(format!("The search did not find {}: {content}", step.tool)));
            };
            let forwarded = json!({"name": name, "arguments": arguments});
            return Ok(ModelResponse::calls([(id.as_str(), CALL_TOOL, forwarded)]));
        }
        let query = step.tool.replace('_', " ");
        Ok(ModelResponse::calls([(id.as_str(), "tool_search", json!({"query": query}))]))
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_model_sees_the_gateways_tools_and_calls_through_it_are_judged_as_the_tools_they_forward() {
    let Some(spec) = arm().await else { return };
    assert_eq!(spec.kind, ArmKind::Gateway);
    let mut offered: Vec<String> = spec.registry.schemas().into_iter().map(|schema| schema.name).collect();
    offered.sort();
    assert_eq!(offered, ["call_tool", "notes__read_note", "tool_search"]);
    assert!(spec.registry.deferred_schemas().is_empty(), "the run's own bridge stays off");
    assert_eq!(spec.tools(), 41, "mcp_serve serves the whole catalogue, one family per server");
    assert!(spec.system_prompt.contains("call_tool"), "the gateway's instructions: {}", spec.system_prompt);

    for id in ["finance-share-price", "notes-biggest-holding-price", "jira-comment-on-found"] {
        let task = tasks::get(id).expect("a task of the suite");
        let result = bench::run_task(Arc::new(Oracle(task)), &spec, task).await;
        assert!(result.success, "{id}: {} (calls {:?}, error {:?})", result.reason, result.calls, result.error);
        let expected: Vec<&str> = task.steps().iter().map(|step| step.tool).collect();
        let called: Vec<&str> = result.calls.iter().map(String::as_str).filter(|n| *n != "tool_search").collect();
        assert_eq!(called, expected, "{id}");
        assert!(result.first_call_tool_bytes > 0);
    }
    if let Some(gateway) = &spec.gateway {
        gateway.close().await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_scripted_keyword_model_runs_the_gateway_arm_end_to_end() {
    let Some(spec) = arm().await else { return };
    let chosen = ["finance-premarket-trades", "none-capital-australia", "calendar-week-agenda"];
    let tasks: Vec<&Task> = chosen.iter().map(|id| tasks::get(id).expect("a task of the suite")).collect();
    let reports = bench::run_arms(Arc::new(KeywordModel), std::slice::from_ref(&spec), &tasks, 1, 2, |_, _| {}).await;
    let report = &reports[0];
    assert_eq!(report.arm, "gateway");
    assert_eq!(report.tools, 41);
    for result in &report.results {
        assert!(result.error.is_none(), "{}: {:?}", result.id, result.error);
    }
    // Search, then call_tool: judged as stock_quote, whose placeholder symbol is wrong.
    let premarket = &report.results[0];
    assert_eq!(premarket.calls, ["tool_search", "stock_quote"], "{}", premarket.reason);
    assert_eq!(premarket.search_calls, 1);
    assert!(premarket.reason.contains("argument symbol"), "{}", premarket.reason);
    assert!(report.results[1].success, "{}", report.results[1].reason);
    assert_eq!(report.searched_runs(), 3);
    if let Some(gateway) = &spec.gateway {
        gateway.close().await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_pre_searching_host_offers_what_the_gateway_finds_for_the_task_and_calls_it_through_the_gateway() {
    let Some(mut spec) = arm().await else { return };
    let missing = PreSearch::new(&tinytools::ToolRegistry::new(), 3, 320).unwrap_err().to_string();
    assert!(missing.contains("`tool_search`"), "{missing}");
    spec.pre_search = Some(PreSearch::new(&spec.registry, 3, 320).unwrap());
    // The host's pre-search asks for keywords under the small-model profile, as live_tasks runs.
    spec.policy.discovery.pre_promotion = tinytools::run::RunPolicy::small_model().discovery.pre_promotion;

    for id in ["finance-premarket-trades", "finance-retirement-today"] {
        let task = tasks::get(id).expect("a task of the suite");
        let result = bench::run_task(Arc::new(Oracle(task)), &spec, task).await;
        // Offered under its bare name: no other found tool has it.
        let gold = task.steps()[0].tool.to_owned();
        assert!(result.pre_promoted.contains(&gold), "{id}: {:?}", result.pre_promoted);
        assert!(result.pre_promoted.iter().all(|name| !name.contains("__")), "{id}: {:?}", result.pre_promoted);
        assert!(result.pre_promoted.len() <= 3, "{id}: {:?}", result.pre_promoted);
        // Offered before the first call, so the model called it by name without searching,
        // and the call went through the gateway to the catalogue server.
        assert!(result.success, "{id}: {} (calls {:?})", result.reason, result.calls);
        assert_eq!(result.calls, [task.steps()[0].tool], "{id}");
        assert_eq!(result.search_calls, 0, "{id}");
        // The host asked the model for search keywords first, as a run's pre-promotion does,
        // and the request is counted apart from the conversation's turns.
        assert_eq!(result.keyword_calls, 1, "{id}");
    }
    let plain = spec.policy.discovery.pre_promotion.with_model_keywords(false);
    spec.policy.discovery.pre_promotion = plain;
    let task = tasks::get("finance-premarket-trades").expect("a task of the suite");
    let result = bench::run_task(Arc::new(Oracle(task)), &spec, task).await;
    assert_eq!((result.keyword_calls, result.success), (0, true), "{}", result.reason);
    assert_eq!(spec.registry.len(), 3, "each run's additions stay with that run");

    // The token budget is honoured: no declaration fits in 10 tokens, so nothing is offered and
    // the model searches as it would without the host's pre-search.
    spec.pre_search = Some(PreSearch::new(&spec.registry, 3, 10).unwrap());
    let task = tasks::get("finance-premarket-trades").expect("a task of the suite");
    let result = bench::run_task(Arc::new(Oracle(task)), &spec, task).await;
    assert!(result.pre_promoted.is_empty(), "{:?}", result.pre_promoted);
    assert_eq!(result.calls, ["tool_search", "stock_quote"], "{}", result.reason);
    if let Some(gateway) = &spec.gateway {
        gateway.close().await;
    }
}

/// Calls an invented name first, then the step's tool by its bare name, neither offered.
struct Guesser(&'static Task);

#[async_trait::async_trait]
impl ChatModel for Guesser {
    async fn complete(&self, request: &ModelRequest) -> Result<ModelResponse, ModelError> {
        let id = format!("g_{}", request.messages.len());
        let answered = request.messages.iter().filter(|m| matches!(m, Message::Tool { .. })).count();
        let step = &self.0.steps()[0];
        let arguments: Value = serde_json::from_str(step.example).expect("examples are JSON");
        Ok(match answered {
            0 => ModelResponse::calls([(id.as_str(), "get_stock_price", json!({"ticker": "ACME"}))]),
            1 => ModelResponse::calls([(id.as_str(), step.tool, arguments)]),
            _ => ModelResponse::text("Done."),
        })
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_pre_searching_host_sends_names_it_does_not_offer_to_the_gateway() {
    let Some(mut spec) = arm().await else { return };
    // Nothing offered, so every name the model writes but `tool_search` is the gateway's to answer.
    spec.pre_search = Some(PreSearch::new(&spec.registry, 0, 320).unwrap());
    let task = tasks::get("finance-premarket-trades").expect("a task of the suite");
    let result = bench::run_task(Arc::new(Guesser(task)), &spec, task).await;
    assert!(result.pre_promoted.is_empty(), "{:?}", result.pre_promoted);
    assert_eq!(result.calls, ["get_stock_price", "stock_quote"], "{}", result.reason);
    // The invented name reached the gateway, which named the tool that fits, with its signature.
    let answers: Vec<(&str, &str, bool)> = result
        .messages
        .iter()
        .filter_map(|m| match m {
            Message::Tool { name, content, is_error, .. } => Some((name.as_str(), content.as_str(), *is_error)),
            _ => None,
        })
        .collect();
    assert_eq!(answers.len(), 2, "{answers:?}");
    let (name, first, is_error) = answers[0];
    assert_eq!(name, CALL_TOOL);
    assert!(is_error);
    assert!(first.contains("`finance__stock_quote` takes {symbol: string"), "{first}");
    // The bare name of a tool one server has was resolved by the gateway and ran.
    assert!(!answers[1].2, "{}", answers[1].1);
    assert!(result.success, "{} (calls {:?})", result.reason, result.calls);

    // Without the host's pre-search, the run answers an unknown name itself.
    spec.pre_search = None;
    let result = bench::run_task(Arc::new(Guesser(task)), &spec, task).await;
    assert!(!result.success, "{}", result.reason);
    if let Some(gateway) = &spec.gateway {
        gateway.close().await;
    }
}

/// The arm with `distractors` BFCL tools behind the gateway and the manifest names `names`,
/// or `None` when the binaries or the eval sets are not there.
async fn arm_with_distractors(distractors: usize, names: &str) -> Option<ArmSpec> {
    tinytools_examples::eval::sets_or_skip(&["bfcl"])?;
    let binaries = binaries()?;
    let setup = GatewaySetup {
        distractors,
        serve_args: vec!["--manifest-names".to_owned(), names.to_owned()],
        ..GatewaySetup::default()
    };
    Some(bench::gateway_arm(&binaries, &setup).await.expect("the gateway arm starts"))
}

/// The `tool_search` declaration's description, as the gateway listed it to the run.
fn search_description(spec: &ArmSpec) -> String {
    let schemas = spec.registry.schemas();
    let search = schemas.iter().find(|schema| schema.name == "tool_search").expect("the gateway lists tool_search");
    search.description.clone()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn distractor_servers_put_bfcl_tools_behind_the_gateway_and_the_manifest_groups_them_on_request() {
    let Some(count) = arm_with_distractors(90, "count").await else { return };
    let Some(grouped) = arm_with_distractors(90, "grouped").await else { return };
    assert_eq!(count.tools(), 41 + 90, "the catalogue's 41 and 90 distractors, 40 to a server");
    assert_eq!(grouped.tools(), 131);
    let distractor = tasks::bfcl_distractors(1).unwrap().remove(0);
    let first = distractor.name().to_owned();

    let counted = search_description(&count);
    assert!(counted.contains("bfcl3"), "the count form names the servers: {counted}");
    assert!(!counted.contains(&first), "the count form names no tool: {counted}");
    let by_server = search_description(&grouped);
    assert!(by_server.contains("bfcl1 (40):"), "the grouped form counts each server's tools: {by_server}");
    assert!(by_server.contains("bfcl3 (10):"), "the last server holds the remainder: {by_server}");
    assert!(by_server.contains(&first), "the grouped form names tools: {by_server}");

    // A distractor is a real tool behind the gateway: search finds it, call_tool runs it.
    let search = count.registry.get("tool_search").expect("offered").tool();
    let query = first.replace('_', " ");
    let text = search.execute(json!({"query": query})).await.expect("the search answers").to_model_text();
    assert!(text.contains(&format!("bfcl1__{first}")), "{text}");
    let call = count.registry.get(CALL_TOOL).expect("offered").tool();
    let arguments = required_arguments(&distractor.parameters_schema());
    let forwarded = json!({"name": format!("bfcl1__{first}"), "arguments": arguments});
    let answer = call.execute(forwarded).await.expect("the call answers");
    assert!(!answer.is_error, "{}", answer.to_model_text());
    assert_eq!(answer.to_model_text(), "ok", "the stub's answer, through the gateway");
    for spec in [&count, &grouped] {
        if let Some(gateway) = &spec.gateway {
            gateway.close().await;
        }
    }
}

/// A value of its type for every required property of `schema`.
fn required_arguments(schema: &Value) -> Value {
    let mut arguments = serde_json::Map::new();
    for name in schema["required"].as_array().into_iter().flatten().filter_map(Value::as_str) {
        let value = match schema["properties"][name]["type"].as_str() {
            Some("integer") => json!(1),
            Some("number") => json!(1.5),
            Some("boolean") => json!(true),
            Some("array") => json!([]),
            Some("object") => json!({}),
            _ => json!("x"),
        };
        arguments.insert(name.to_owned(), value);
    }
    Value::Object(arguments)
}
