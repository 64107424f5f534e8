//! The OpenAI Responses client against a local server on 127.0.0.1 replaying the Responses
//! API's documented payloads (`tinytools_examples::wire::responses`, whose shapes come from the
//! "Tool search", "Function calling" and streaming pages): function tools, deferred tools in
//! `namespace`s by family, hosted `tool_search` and its items handed back, a client-run
//! `tool_search_call` answered by the run's ranker with `tool_search_output`, usage with the
//! cached share, and a streamed run. No test touches the network.

use std::sync::Arc;
use std::time::Duration;

use serde_json::{Value, json};
use tinytools::model::{ChatModel, Message, ModelRequest, NativeSearch};
use tinytools::providers::{HttpOptions, OpenAiResponses};
use tinytools::run::{Agent, RunEvent, RunOutcome, RunPolicy, RunStreamItem, StopReason};
use tinytools::surface::Subject;
use tinytools::{DiscoveryBridge, DiscoveryMode, ToolDiscoveryPolicy, ToolRegistry, tool};
use tinytools_examples::catalogue;
use tinytools_examples::wire::{self, Recorded, Replay, TASK};
use tinytools_integration_tests::Recorder;

/// Write an audit record (host-only).
#[tool(exposure = "hidden")]
async fn audit_log(
    /** The record. */
    entry: String,
) -> String {
    entry
}

fn registry() -> ToolRegistry {
    let mut registry = catalogue::registry();
    registry.register(AuditLog).expect("registers");
    registry
}

fn native(search: NativeSearch) -> RunPolicy {
    RunPolicy::default().with_discovery(ToolDiscoveryPolicy::default().with_mode(DiscoveryMode::ProviderNative(search)))
}

fn client(replay: &Replay) -> OpenAiResponses {
    OpenAiResponses::new(format!("{}/v1", replay.base_url), "gpt-5.4", HttpOptions::default())
        .expect("client")
        .with_api_key("sk-test")
}

/// The task in `search` mode, with the `github` family narrowed away.
async fn run(search: NativeSearch) -> (Replay, RunOutcome, Vec<RunEvent>) {
    let mode = DiscoveryMode::ProviderNative(search);
    let replay = wire::serve(wire::responses_script(mode, None)).await.expect("serves");
    let recorder = Arc::new(Recorder::default());
    let no_github = |subject: Subject<'_>| subject.tool().is_none_or(|tool| tool.family() != Some("github"));
    let agent = Agent::new(Arc::new(registry()), Arc::new(client(&replay)))
        .with_policy(native(search))
        .with_rule(Arc::new(no_github))
        .with_events(recorder.clone());
    let outcome = agent.run(vec![Message::system("Use tools."), Message::user(TASK)]).await.expect("runs");
    (replay, outcome, recorder.events())
}

/// Every function name a `tools` array declares, namespaces opened.
fn declared(tools: &Value) -> Vec<String> {
    let mut names = Vec::new();
    for tool in tools.as_array().into_iter().flatten() {
        if tool["type"] == "namespace" {
            names.extend(declared(&tool["tools"]));
        } else if let Some(name) = tool["name"].as_str() {
            names.push(name.to_owned());
        }
    }
    names
}

fn items_of<'a>(request: &'a Recorded, kind: &str) -> Vec<&'a Value> {
    request.body["input"].as_array().into_iter().flatten().filter(|item| item["type"] == kind).collect()
}

#[tokio::test]
async fn hosted_tool_search_over_namespaces_of_the_surviving_catalogue() {
    let (replay, outcome, events) = run(NativeSearch::Provider).await;
    assert_eq!((outcome.stop, outcome.answer.as_str()), (StopReason::Answered, wire::ANSWER));
    let requests = replay.requests();
    assert_eq!(requests.len(), 4);
    let first = &requests[0];
    assert_eq!((first.path.as_str(), first.header("authorization")), ("/v1/responses", Some("Bearer sk-test")));
    let tools = &first.body["tools"];
    assert_eq!(
        tools[0],
        json!({"type": "function", "name": "read_note", "description": registry().schemas()[0].description,
               "parameters": registry().schemas()[0].parameters, "strict": false})
    );
    assert_eq!(tools.as_array().and_then(|t| t.last()), Some(&json!({"type": "tool_search"})));
    let namespaces: Vec<&Value> = tools.as_array().into_iter().flatten().filter(|t| t["type"] == "namespace").collect();
    assert!(namespaces.iter().all(|ns| {
        let inside = ns["tools"].as_array().map_or(0, Vec::len);
        (1..=10).contains(&inside) && ns["tools"].as_array().into_iter().flatten().all(|f| f["defer_loading"] == true)
    }));
    let finance = namespaces.iter().find(|ns| ns["name"] == "finance").expect("the finance family's namespace");
    assert!(finance["description"].as_str().is_some_and(|d| d.contains("stock_quote")));
    let names = declared(tools);
    assert!(!names.iter().any(|name| name.starts_with("github") || name == "audit_log" || name == "tool_search"));
    let expected = registry().deferred_schemas().into_iter().filter(|s| !s.name.starts_with("github")).count();
    assert_eq!(names.len(), 1 + expected, "read_note and every surviving deferred tool");
    assert!(requests.iter().all(|request| request.body["tools"] == *tools), "the tools array never changes");

    // The hosted search's items go back as they came, then the call with its namespace.
    let second = &requests[1];
    let searched = items_of(second, "tool_search_call");
    assert_eq!(searched.len(), 1);
    assert_eq!((&searched[0]["execution"], &searched[0]["call_id"]), (&json!("server"), &Value::Null));
    let loaded = items_of(second, "tool_search_output");
    assert_eq!(declared(&loaded[0]["tools"]), ["stock_quote"]);
    let call = items_of(second, "function_call")[0];
    assert_eq!(
        (&call["name"], &call["namespace"], &call["call_id"]),
        (&json!("stock_quote"), &json!("finance"), &json!("call_00"))
    );
    let output = items_of(second, "function_call_output")[0];
    assert!(output["output"].as_str().is_some_and(|o| o.contains("ACME")));

    assert!(events.iter().any(|e| matches!(e, RunEvent::ToolSearched { ranker, matched, call_id, .. }
        if ranker == "openai:tool_search" && matched == &["stock_quote"] && call_id.is_empty())));
    assert!(events.contains(&RunEvent::DeferredToolCall {
        call_id: "call_00".into(),
        tool_name: "stock_quote".into(),
        arguments: None
    }));
    let usage = outcome.usage;
    assert_eq!(
        (usage.prompt_tokens, usage.cache_read_tokens, usage.completion_tokens),
        (1_900 + 3 * 2_000, 3 * 1_792, 240)
    );
}

#[tokio::test]
async fn a_client_run_search_is_answered_with_tool_search_output_by_the_runs_ranker() {
    let (replay, outcome, events) = run(NativeSearch::Client).await;
    assert_eq!(outcome.stop, StopReason::Answered);
    let requests = replay.requests();
    let tools = requests[0].body["tools"].as_array().cloned().unwrap_or_default();
    let search = tools.iter().find(|t| t["type"] == "tool_search").expect("the client-executed search tool");
    assert_eq!(search["execution"], "client");
    assert_eq!(search["parameters"]["required"], json!(["query"]));
    assert!(!tools.iter().any(|t| t["type"] == "function" && t["name"] == "tool_search"));
    let second = &requests[1];
    let call = items_of(second, "tool_search_call")[0];
    assert_eq!((&call["execution"], &call["call_id"]), (&json!("client"), &json!("call_00")));
    assert_eq!(call["arguments"], json!({"query": "stock price of a ticker"}));
    let answer = items_of(second, "tool_search_output")[0];
    assert_eq!((&answer["call_id"], &answer["execution"]), (&json!("call_00"), &json!("client")));
    let loaded = declared(&answer["tools"]);
    assert!(loaded.iter().any(|name| name == "stock_quote"), "{loaded:?}");
    assert!(loaded.iter().all(|name| !name.starts_with("github")));
    assert!(answer["tools"][0]["tools"][0]["defer_loading"] == true, "loaded as declared: {answer}");
    assert!(items_of(second, "function_call_output").is_empty(), "the search is not a function call");
    assert!(events.iter().any(|e| matches!(e, RunEvent::ToolSearched { ranker, .. } if ranker == "bm25")));
    assert!(requests.iter().all(|request| request.body["tools"] == requests[0].body["tools"]));
}

#[tokio::test]
async fn a_family_larger_than_the_namespace_limit_is_split() {
    let bridge = DiscoveryBridge::new(&catalogue::registry(), ToolDiscoveryPolicy::default())
        .with_native(Some(NativeSearch::Provider));
    let request = ModelRequest::default().with_native_deferral(bridge.native_deferral());
    let gpt = OpenAiResponses::new("http://127.0.0.1:9/v1", "gpt-5.4", HttpOptions::default())
        .expect("client")
        .with_namespace_limit(2);
    let body = gpt.body(&request);
    let finance: Vec<(String, usize)> = body["tools"]
        .as_array()
        .into_iter()
        .flatten()
        .filter(|t| t["name"].as_str().is_some_and(|n| n.starts_with("finance")))
        .map(|t| (t["name"].as_str().unwrap_or_default().to_owned(), t["tools"].as_array().map_or(0, Vec::len)))
        .collect();
    assert_eq!(finance[..2], [("finance".to_owned(), 2), ("finance_2".to_owned(), 2)]);
    assert!(finance.iter().all(|(_, size)| *size <= 2));
    let count = catalogue::registry().iter().filter(|t| t.family() == Some("finance")).count();
    assert_eq!(finance.iter().map(|(_, size)| size).sum::<usize>(), count);
    assert!(gpt.profile().native_deferral);
}

#[tokio::test]
async fn a_streamed_run_shows_text_and_calls_and_reads_the_closing_response() {
    let mode = DiscoveryMode::ProviderNative(NativeSearch::Provider);
    let replay = wire::serve(wire::responses_script(mode, Some(Duration::ZERO))).await.expect("serves");
    let agent = Agent::new(Arc::new(catalogue::registry()), Arc::new(client(&replay)))
        .with_policy(native(NativeSearch::Provider));
    let mut stream = agent.stream(vec![Message::user(TASK)]);
    let (mut text, mut started) = (String::new(), Vec::new());
    while let Some(item) = stream.next().await {
        match item {
            RunStreamItem::TextDelta { text: piece, .. } => text.push_str(&piece),
            RunStreamItem::ToolCallStarted { name, .. } => started.push(name),
            _ => {}
        }
    }
    let outcome = stream.finish().await.expect("runs");
    assert_eq!((outcome.stop, text.as_str()), (StopReason::Answered, wire::ANSWER));
    assert_eq!(started, ["stock_quote", "currency_convert", "gmail_send"]);
    assert!(replay.requests().iter().all(|request| request.body["stream"] == true));
    assert_eq!(items_of(&replay.requests()[1], "tool_search_output").len(), 1, "the hosted search's items kept");
}
