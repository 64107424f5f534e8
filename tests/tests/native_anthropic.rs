//! Native deferral with the Anthropic client against a local server on 127.0.0.1 replaying
//! the Messages API's documented tool-search payloads (`tinytools_examples::wire::anthropic`,
//! whose shapes come from the "Tool search tool" and "Streaming Messages" pages): the request
//! (deferral flags, the search tool, no beta header, cache breakpoints never on a deferred
//! tool, Hidden and narrowed tools absent), the answer's search blocks handed back, the events,
//! admission of a call to a natively found tool, and a client-run search answered by the run's
//! ranker. No test touches the network.

use std::sync::Arc;
use std::time::Duration;

use serde_json::{Value, json};
use tinytools::model::{Message, NativeSearch};
use tinytools::providers::{Anthropic, HttpOptions};
use tinytools::run::{Agent, RunEvent, RunOutcome, RunPolicy, RunStreamItem, StopReason};
use tinytools::surface::Subject;
use tinytools::{DiscoveryMode, ToolDiscoveryPolicy, ToolExposure, ToolRegistry, tool};
use tinytools_examples::catalogue;
use tinytools_examples::wire::{self, Recorded, Replay, Reply, Responder, TASK, anthropic};
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

/// A run of the task against `responder`, with nothing destructive on the run's surface.
async fn run(responder: Arc<Responder>, policy: RunPolicy) -> (Replay, RunOutcome, Vec<RunEvent>) {
    let replay = wire::serve(responder).await.expect("serves");
    let claude = Anthropic::with_base_url(&replay.base_url, "sk-ant-test", "claude-sonnet-4-5", HttpOptions::default())
        .expect("client");
    let recorder = Arc::new(Recorder::default());
    let safe = |subject: Subject<'_>| subject.tool().is_none_or(|tool| !tool.annotations().destructive);
    let agent = Agent::new(Arc::new(registry()), Arc::new(claude))
        .with_policy(policy)
        .with_rule(Arc::new(safe))
        .with_events(recorder.clone());
    let outcome = agent.run(vec![Message::system("Use tools."), Message::user(TASK)]).await.expect("runs");
    (replay, outcome, recorder.events())
}

fn tools(request: &Recorded) -> Vec<Value> {
    request.body["tools"].as_array().cloned().unwrap_or_default()
}

fn destructive() -> Vec<String> {
    registry().iter().filter(|tool| tool.annotations().destructive).map(|tool| tool.name().to_owned()).collect()
}

#[tokio::test]
async fn anthropics_own_search_gets_the_surviving_catalogue_deferred_and_the_prefix_never_moves() {
    let mode = DiscoveryMode::ProviderNative(NativeSearch::Provider);
    let (replay, outcome, events) = run(wire::anthropic_script(mode, None), native(NativeSearch::Provider)).await;
    assert_eq!((outcome.stop, outcome.answer.as_str()), (StopReason::Answered, wire::ANSWER));
    let requests = replay.requests();
    assert_eq!(requests.len(), 4, "three search-and-call turns, then the answer");
    let first = &requests[0];
    assert_eq!(first.path, "/v1/messages");
    assert_eq!(first.header("anthropic-beta"), None, "tool search is generally available");
    let tools = tools(first);
    assert_eq!(tools[0], json!({"type": "tool_search_tool_bm25_20251119", "name": "tool_search_tool_bm25"}));
    assert_eq!(tools[1]["name"], "read_note");
    assert_eq!(
        tools[1]["cache_control"],
        json!({"type": "ephemeral"}),
        "the last tool not deferred holds the breakpoint"
    );
    assert!(tools[..2].iter().all(|tool| tool.get("defer_loading").is_none()));
    let deferred: Vec<&str> = tools[2..].iter().filter_map(|tool| tool["name"].as_str()).collect();
    assert!(tools[2..].iter().all(|tool| tool["defer_loading"] == true && tool.get("cache_control").is_none()));
    let expected: Vec<String> = registry()
        .deferred_schemas()
        .into_iter()
        .map(|schema| schema.name)
        .filter(|name| !destructive().contains(name))
        .collect();
    assert_eq!(deferred, expected);
    let text = first.body.to_string();
    for absent in destructive().iter().map(String::as_str).chain(["audit_log", "\"tool_search\""]) {
        assert!(!text.contains(absent), "{absent} reached the wire");
    }
    assert_eq!(first.body["system"][0]["cache_control"]["type"], "ephemeral");
    assert!(requests.iter().all(|request| tools == self::tools(request)), "the tools array never changes");

    // The answer goes back as it came: its text, the search blocks, the call they served.
    let turn = &requests[1].body["messages"][1];
    assert_eq!(turn["role"], "assistant");
    let [used, result] = anthropic::tool_search("srvtoolu_00", "stock price of a ticker", &["stock_quote"]);
    let blocks = turn["content"].as_array().expect("blocks");
    assert_eq!(blocks.len(), 4);
    assert_eq!(blocks[0], anthropic::text("Let me find a tool for: stock price of a ticker."));
    assert_eq!((&blocks[1], &blocks[2]), (&used, &result));
    assert_eq!(blocks[3]["name"], "stock_quote");
    let answered = requests[1].body["messages"][2]["content"].as_array().cloned().unwrap_or_default();
    let ids: Vec<&Value> = answered.iter().map(|block| &block["tool_use_id"]).collect();
    assert_eq!(ids, [&json!("toolu_00")], "never a tool_result for the server's own search");
    assert_eq!(answered[0]["cache_control"]["type"], "ephemeral", "the conversation's last block");

    let searched: Vec<(&str, &[String])> = events
        .iter()
        .filter_map(|e| match e {
            RunEvent::ToolSearched { ranker, matched, .. } => Some((ranker.as_str(), matched.as_slice())),
            _ => None,
        })
        .collect();
    assert_eq!(searched.len(), 3);
    assert!(searched.iter().all(|(ranker, _)| *ranker == "anthropic:tool_search_tool_bm25"));
    assert_eq!(searched[0].1, ["stock_quote"]);
    assert!(events.contains(&RunEvent::DeferredToolCall {
        call_id: "toolu_00".into(),
        tool_name: "stock_quote".into(),
        arguments: None
    }));
    let advertised = events.iter().find(|e| matches!(e, RunEvent::ToolsAdvertised { .. }));
    assert!(
        matches!(advertised, Some(RunEvent::ToolsAdvertised { direct: 1, deferred, native: true, .. }) if *deferred == expected.len())
    );
    assert!(
        !events.iter().any(|e| matches!(e, RunEvent::ToolsPromoted { .. })),
        "the provider loads, nothing is promoted"
    );
    let usage = outcome.usage;
    assert_eq!((usage.cache_read_tokens, usage.cache_write_tokens), (3 * 1_800, 1_800));
    assert_eq!(usage.prompt_tokens, (40 + 1_800) + 3 * (120 + 1_800), "every prompt token, cached or not");
    assert!(outcome.transcript.messages.iter().any(|m| matches!(m, Message::ProviderSearch(_))));
}

#[tokio::test]
async fn admission_still_refuses_a_bad_call_to_a_tool_anthropic_found() {
    let responder: Arc<Responder> = Arc::new(|_: &Recorded, before: &[Recorded]| {
        let content = if before.is_empty() {
            let mut blocks = anthropic::tool_search("srvtoolu_01", "stock price", &["stock_quote"]).to_vec();
            blocks.push(anthropic::tool_use("toolu_bad", "stock_quote", json!({"ticker": 7})));
            blocks
        } else {
            vec![anthropic::text("I could not get the quote.")]
        };
        Reply::Json(anthropic::message("msg_01", content, anthropic::usage(30, 10, 0, 0)))
    });
    let (replay, outcome, events) = run(responder, native(NativeSearch::Provider)).await;
    assert_eq!(outcome.stop, StopReason::Answered);
    assert!(events.iter().any(|e| matches!(e, RunEvent::ToolRejected { call_id, .. } if call_id == "toolu_bad")));
    assert!(!events.iter().any(|e| matches!(e, RunEvent::ToolStarted { .. })), "the tool never ran");
    let result = &replay.requests()[1].body["messages"][2]["content"][0];
    assert_eq!((&result["tool_use_id"], &result["is_error"]), (&json!("toolu_bad"), &json!(true)));
    assert!(result["content"].as_str().is_some_and(|text| text.contains("symbol")), "{result}");
}

#[tokio::test]
async fn a_client_run_search_is_answered_by_the_runs_ranker_with_tool_references() {
    let mode = DiscoveryMode::ProviderNative(NativeSearch::Client);
    let (replay, outcome, events) = run(wire::anthropic_script(mode, None), native(NativeSearch::Client)).await;
    assert_eq!(outcome.stop, StopReason::Answered);
    let requests = replay.requests();
    let tools = tools(&requests[0]);
    let names: Vec<&str> = tools.iter().filter_map(|tool| tool["name"].as_str()).collect();
    assert_eq!(names[..2], ["read_note", "tool_search"], "the run's own search tool, not Anthropic's");
    assert_eq!(tools[1]["cache_control"]["type"], "ephemeral");
    assert!(tools.iter().all(|tool| tool.get("type").is_none()), "no server tool");
    assert!(tools[2..].iter().all(|tool| tool["defer_loading"] == true));
    let result = &requests[1].body["messages"][2]["content"][0];
    assert_eq!(result["tool_use_id"], "toolu_00");
    let references = result["content"].as_array().expect("tool_reference blocks");
    assert!(references.iter().all(|block| block["type"] == "tool_reference"));
    assert_eq!(references[0]["tool_name"], "stock_quote", "BM25's best hit first");
    assert!(events.iter().any(
        |e| matches!(e, RunEvent::ToolSearched { ranker, matched, .. } if ranker == "bm25" && matched[0] == "stock_quote")
    ));
    assert!(requests.iter().all(|request| tools == self::tools(request)), "the tools array never changes");
}

#[tokio::test]
async fn a_streamed_run_keeps_the_search_blocks_anthropic_streamed() {
    let mode = DiscoveryMode::ProviderNative(NativeSearch::Provider);
    let streamed = wire::serve(wire::anthropic_script(mode, Some(Duration::ZERO))).await.expect("serves");
    let whole = wire::serve(wire::anthropic_script(mode, None)).await.expect("serves");
    let mut transcripts = Vec::new();
    for (replay, stream) in [(&streamed, true), (&whole, false)] {
        let claude = Anthropic::with_base_url(&replay.base_url, "k", "claude-sonnet-4-5", HttpOptions::default())
            .expect("client");
        let agent =
            Agent::new(Arc::new(catalogue::registry()), Arc::new(claude)).with_policy(native(NativeSearch::Provider));
        let messages = vec![Message::user(TASK)];
        let outcome = if stream {
            let mut run = agent.stream(messages);
            let mut text = String::new();
            while let Some(item) = run.next().await {
                if let RunStreamItem::TextDelta { text: piece, .. } = item {
                    text.push_str(&piece);
                }
            }
            assert!(text.contains("Let me find a tool"), "{text}");
            run.finish().await.expect("runs")
        } else {
            agent.run(messages).await.expect("runs")
        };
        transcripts.push(outcome.transcript.messages);
    }
    assert_eq!(transcripts[0], transcripts[1], "streamed or not, the same conversation");
    let (streamed, whole) = (streamed.requests(), whole.requests());
    assert_eq!(streamed.len(), whole.len());
    for (a, b) in streamed.iter().zip(&whole) {
        let mut a = a.body.clone();
        a.as_object_mut().map(|fields| fields.remove("stream"));
        assert_eq!(a, b.body, "the same requests, search blocks included");
    }
}

#[tokio::test]
async fn a_model_that_cannot_defer_natively_gets_the_bridge() {
    use tinytools::model::ModelResponse;
    use tinytools::testkit::ScriptedModel;
    let model = Arc::new(ScriptedModel::new([ModelResponse::text("Hello.")]));
    let recorder = Arc::new(Recorder::default());
    let agent = Agent::new(Arc::new(registry()), model.clone())
        .with_policy(native(NativeSearch::Provider))
        .with_events(recorder.clone());
    agent.run(vec![Message::user("Hi")]).await.expect("runs");
    let request = &model.requests()[0];
    assert!(request.native_deferral.is_none());
    assert!(request.tools.iter().any(|tool| tool.name == "tool_search"));
    assert!(matches!(recorder.events()[0], RunEvent::ToolsAdvertised { native: false, .. }));
    assert_eq!(registry().get("audit_log").map(|tool| tool.exposure()), Some(ToolExposure::Hidden));
}
