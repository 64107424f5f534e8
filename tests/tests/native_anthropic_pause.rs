//! Anthropic's paused turns against a local server on 127.0.0.1: a turn that stops with
//! `stop_reason: "pause_turn"` is continued by sending its content back as it came, whole or
//! streamed, and the run sees one answer; a turn that keeps pausing ends in a clear error
//! after the client's continuations. No test touches the network.
//!
//! Payloads: the paused message is a Messages answer (`tinytools_examples::wire::anthropic`)
//! whose `stop_reason` is `"pause_turn"` and whose last block is a `server_tool_use` still
//! without its result, as Anthropic's "Server tools" page describes the server-side loop and
//! `pause_turn` ("pass the paused response back as-is in a subsequent request to let Claude
//! continue its turn") and its "Stop reasons and fallback" page lists it ("a server-tool loop
//! reached its iteration limit; send the assistant content back to continue"). The part that
//! continues it brings the search's `tool_search_tool_result` (the "Tool search tool" page's
//! response format) and the call. Streams are the same messages told as "Streaming Messages"
//! events, `stop_reason` in `message_delta`.

use std::sync::Arc;
use std::time::Duration;

use serde_json::{Value, json};
use tinytools::model::{ChatModel, Message, ModelError, ModelRequest, NativeSearch, StreamEvent};
use tinytools::providers::{Anthropic, HttpOptions};
use tinytools::run::{Agent, RunEvent, RunPolicy, RunStreamItem, StopReason};
use tinytools::{DiscoveryMode, ToolDiscoveryPolicy};
use tinytools_examples::catalogue;
use tinytools_examples::wire::{self, Recorded, Reply, Responder, anthropic};
use tinytools_integration_tests::Recorder;

const QUERY: &str = "stock price of a ticker";

/// The first part: text, then Anthropic's search begun, paused before its result.
fn paused() -> Value {
    let [used, _] = anthropic::tool_search("srvtoolu_01", QUERY, &["stock_quote"]);
    let mut message = anthropic::message(
        "msg_01",
        vec![anthropic::text("Let me look for a tool."), used],
        anthropic::usage(50, 20, 0, 0),
    );
    message["stop_reason"] = json!("pause_turn");
    message
}

/// The part that continues it: the search's result, then the call of what it found.
fn continued() -> Value {
    let [_, result] = anthropic::tool_search("srvtoolu_01", QUERY, &["stock_quote"]);
    let call = anthropic::tool_use("toolu_01", "stock_quote", json!({"symbol": "ACME"}));
    anthropic::message("msg_02", vec![result, anthropic::text(" Found it."), call], anthropic::usage(70, 15, 0, 0))
}

fn answer() -> Value {
    anthropic::message("msg_03", vec![anthropic::text("ACME trades at 512.34.")], anthropic::usage(90, 9, 0, 0))
}

fn reply(message: Value, stream: bool) -> Reply {
    if stream { Reply::Sse { events: anthropic::events(&message), pace: Duration::ZERO } } else { Reply::Json(message) }
}

/// Paused, continued, then (after the call's result) the answer.
fn script(stream: bool) -> Arc<Responder> {
    Arc::new(move |_: &Recorded, before: &[Recorded]| match before.len() {
        0 => reply(paused(), stream),
        1 => reply(continued(), stream),
        _ => reply(answer(), stream),
    })
}

fn native() -> RunPolicy {
    let discovery = ToolDiscoveryPolicy::default().with_mode(DiscoveryMode::ProviderNative(NativeSearch::Provider));
    RunPolicy::default().with_discovery(discovery)
}

fn client(base_url: &str) -> Anthropic {
    Anthropic::with_base_url(base_url, "sk-ant-test", "claude-sonnet-4-5", HttpOptions::default()).expect("client")
}

fn without_stream(request: &Recorded) -> Value {
    let mut body = request.body.clone();
    body.as_object_mut().map(|fields| fields.remove("stream"));
    body
}

/// The continuation is the first request with the paused content as its last, assistant,
/// turn: nothing else changes.
fn assert_continues(first: &Recorded, second: &Recorded) {
    let (first, second) = (without_stream(first), without_stream(second));
    let (sent, again) =
        (first["messages"].as_array().expect("messages"), second["messages"].as_array().expect("messages"));
    assert_eq!(again.len(), sent.len() + 1);
    assert_eq!(again[..sent.len()], sent[..], "the conversation before the paused turn is unchanged");
    assert_eq!(again[sent.len()], json!({"role": "assistant", "content": paused()["content"]}), "sent back as it came");
    for field in ["tools", "system", "model", "max_tokens"] {
        assert_eq!(first[field], second[field], "{field} is unchanged");
    }
}

#[tokio::test]
async fn a_paused_turn_is_continued_and_the_run_sees_one_answer() {
    for stream in [false, true] {
        let replay = wire::serve(script(stream)).await.expect("serves");
        let recorder = Arc::new(Recorder::default());
        let agent = Agent::new(Arc::new(catalogue::registry()), Arc::new(client(&replay.base_url)))
            .with_policy(native())
            .with_events(recorder.clone());
        let messages = vec![Message::system("Use tools."), Message::user("What is ACME at?")];
        let (outcome, items) = if stream {
            let mut run = agent.stream(messages);
            let mut items = Vec::new();
            while let Some(item) = run.next().await {
                items.push(item);
            }
            (run.finish().await.expect("runs"), items)
        } else {
            (agent.run(messages).await.expect("runs"), Vec::new())
        };
        assert_eq!((outcome.stop, outcome.answer.as_str()), (StopReason::Answered, "ACME trades at 512.34."));
        assert_eq!(outcome.turns, 2, "the paused turn and its continuation are one model turn");
        let requests = replay.requests();
        assert_eq!(requests.len(), 3, "paused, continued, answered");
        assert_continues(&requests[0], &requests[1]);

        // The turn the run kept goes back unchanged: every part's blocks, in their order.
        let turn = &requests[2].body["messages"][1];
        assert_eq!(turn["role"], "assistant");
        let mut blocks = paused()["content"].as_array().cloned().expect("blocks");
        blocks.extend(continued()["content"].as_array().cloned().expect("blocks"));
        assert_eq!(turn["content"], Value::Array(blocks), "as the parts came");
        let events = recorder.events();
        let searched: Vec<(&str, &[String])> = events
            .iter()
            .filter_map(|e| match e {
                RunEvent::ToolSearched { ranker, matched, .. } => Some((ranker.as_str(), matched.as_slice())),
                _ => None,
            })
            .collect();
        assert_eq!(searched, [("anthropic:tool_search_tool_bm25", &["stock_quote".to_owned()][..])]);
        assert_eq!((outcome.usage.prompt_tokens, outcome.usage.completion_tokens), (50 + 70 + 90, 20 + 15 + 9));
        if stream {
            let started: Vec<(usize, &str)> = items
                .iter()
                .filter_map(|item| match item {
                    RunStreamItem::ToolCallStarted { index, id, .. } => Some((*index, id.as_str())),
                    _ => None,
                })
                .collect();
            assert_eq!(started, [(0, "toolu_01")]);
        }
    }
}

#[tokio::test]
async fn a_streamed_paused_turn_tells_one_answer_with_the_usage_summed() {
    let replay = wire::serve(script(true)).await.expect("serves");
    let claude = client(&replay.base_url);
    let request = ModelRequest::new(vec![Message::user("What is ACME at?")], Vec::new());
    let mut stream = claude.stream(&request);
    let (mut text, mut usages, mut done) = (String::new(), Vec::new(), None);
    while let Some(event) = stream.next().await {
        match event.expect("streams") {
            StreamEvent::TextDelta(piece) => text.push_str(&piece),
            StreamEvent::Usage(usage) => usages.push((usage.prompt_tokens, usage.completion_tokens)),
            StreamEvent::Done(response) => done = Some(response),
            _ => {}
        }
    }
    let response = done.expect("Done");
    assert_eq!(text, "Let me look for a tool. Found it.");
    assert_eq!(response.content, text);
    assert_eq!(response.tool_calls.len(), 1);
    assert_eq!(response.searches.len(), 1);
    assert_eq!(response.searches[0].found, ["stock_quote"]);
    assert_eq!(usages.last(), Some(&(50 + 70, 20 + 15)), "a later report replaces an earlier one: the sum");
    assert_eq!(response.usage.map(|u| (u.prompt_tokens, u.completion_tokens)), Some((120, 35)));
    let requests = replay.requests();
    assert_eq!(requests.len(), 2);
    assert_continues(&requests[0], &requests[1]);
    assert_eq!(requests[1].body["stream"], true);
}

#[tokio::test]
async fn a_turn_that_keeps_pausing_ends_in_a_clear_error_after_the_continuations() {
    for stream in [false, true] {
        let always: Arc<Responder> = Arc::new(move |_: &Recorded, _: &[Recorded]| reply(paused(), stream));
        let replay = wire::serve(always).await.expect("serves");
        let claude = client(&replay.base_url).with_max_continuations(2);
        let request = ModelRequest::new(vec![Message::user("What is ACME at?")], Vec::new());
        let error = if stream {
            claude.stream(&request).into_response().await.expect_err("still paused")
        } else {
            claude.complete(&request).await.expect_err("still paused")
        };
        assert!(matches!(error, ModelError::TurnPaused { continuations: 2 }), "{error:?}");
        let message = error.to_string();
        assert!(message.contains("2 times in a row"), "{message}");
        assert!(message.contains("pause_turn") && message.contains("with_max_continuations"), "{message}");
        let requests = replay.requests();
        assert_eq!(requests.len(), 3, "the first request and two continuations, no more");
        let last = requests[2].body["messages"].as_array().expect("messages").last().cloned().expect("a turn");
        let content = last["content"].as_array().expect("blocks");
        assert_eq!(content.len(), 4, "both paused parts, in order, in one assistant turn");
        assert_eq!(content[..2], content[2..]);
    }
}

#[tokio::test]
async fn no_continuation_is_sent_when_the_client_allows_none() {
    let always: Arc<Responder> = Arc::new(|_: &Recorded, _: &[Recorded]| Reply::Json(paused()));
    let replay = wire::serve(always).await.expect("serves");
    let claude = client(&replay.base_url).with_max_continuations(0);
    let request = ModelRequest::new(vec![Message::user("What is ACME at?")], Vec::new());
    let error = claude.complete(&request).await.expect_err("paused");
    assert!(matches!(error, ModelError::TurnPaused { continuations: 0 }), "{error:?}");
    assert_eq!(replay.requests().len(), 1);
}
