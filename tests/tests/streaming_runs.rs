//! `Agent::stream`: the run's text deltas and events in order, ending with the outcome `run`
//! returns — over a scripted model (and resumed: `Agent::resume_stream`), over a Chat Completions server on 127.0.0.1 that streams
//! when asked to, through a prompt dialect — and a streamed run whose model stream is cut
//! mid-call or cancelled. No test touches the network.

mod sse_server;

use std::sync::Arc;
use std::time::{Duration, Instant};

use serde_json::{Value, json};
use sse_server::{Step, serve};
use tinytools::dialect::Dialect;
use tinytools::discovery::{PrePromotion, ToolDiscoveryPolicy};
use tinytools::model::{ChatModel, Message, ModelError, ModelRequest, ModelResponse, StreamEvent};
use tinytools::providers::OpenAiCompatible;
use tinytools::run::{Agent, RunEvent, RunFailure, RunOutcome, RunPolicy, RunStreamItem, StopReason};
use tinytools::testkit::ScriptedModel;
use tinytools::{CancellationToken, ToolRegistry};
use tinytools_examples::catalogue;
use tinytools_integration_tests::Recorder;
use wiremock::{Mock, MockServer, Request, Respond, ResponseTemplate};

/// The spec's task in three turns: search, call what the search found, answer.
fn script() -> Vec<ModelResponse> {
    vec![
        ModelResponse::calls([("call_1", "tool_search", json!({"query": "stock price"}))]).with_usage(300, 12),
        ModelResponse::calls([("call_2", "stock_quote", json!({"symbol": "ACME"}))]).with_usage(520, 14),
        ModelResponse::text("ACME trades at its latest price.").with_usage(700, 9),
    ]
}

/// `stream` over `model`: every item, the outcome, and what the event sink received.
async fn streamed(model: Arc<dyn ChatModel>) -> (Vec<RunStreamItem>, RunOutcome, Vec<RunEvent>) {
    let recorder = Arc::new(Recorder::default());
    let agent = Agent::new(Arc::new(catalogue::registry()), model).with_events(recorder.clone());
    let mut stream = agent.stream(vec![Message::user("What is ACME at?")]);
    assert_send(&stream);
    let mut items = Vec::new();
    while let Some(item) = stream.next().await {
        items.push(item);
    }
    let outcome = stream.finish().await.expect("runs");
    (items, outcome, timeless(recorder.events()))
}

/// A streamed run can be moved to another task.
fn assert_send<T: Send>(_: &T) {}

/// `run` over `model`: the outcome and the events.
async fn ran(model: Arc<dyn ChatModel>) -> (RunOutcome, Vec<RunEvent>) {
    let recorder = Arc::new(Recorder::default());
    let agent = Agent::new(Arc::new(catalogue::registry()), model).with_events(recorder.clone());
    let outcome = agent.run(vec![Message::user("What is ACME at?")]).await.expect("runs");
    (outcome, timeless(recorder.events()))
}

fn events_of(items: &[RunStreamItem]) -> Vec<RunEvent> {
    let events = items.iter().filter_map(|item| match item {
        RunStreamItem::Event(event) => Some(event.clone()),
        _ => None,
    });
    timeless(events.collect())
}

/// The events without their measured ranking times, which no two runs share.
fn timeless(mut events: Vec<RunEvent>) -> Vec<RunEvent> {
    for event in &mut events {
        if let RunEvent::ToolSearched { latency_ms, .. } = event {
            *latency_ms = 0.0;
        }
    }
    events
}

/// Where the `ModelCalled` event of `turn` is among `items`.
fn model_called_at(items: &[RunStreamItem], turn: usize) -> usize {
    items
        .iter()
        .position(|item| matches!(item, RunStreamItem::Event(RunEvent::ModelCalled { turn: t, .. }) if *t == turn))
        .expect("the turn's ModelCalled")
}

/// Checks what a streamed run of `script()` reported, in order.
fn assert_streamed_in_order(items: &[RunStreamItem], outcome: &RunOutcome) {
    for turn in 1..=3 {
        let called = model_called_at(items, turn);
        let previous = if turn == 1 { 0 } else { model_called_at(items, turn - 1) };
        for (at, item) in items.iter().enumerate() {
            let of_turn = match item {
                RunStreamItem::TextDelta { turn: t, .. } | RunStreamItem::ToolCallStarted { turn: t, .. } => *t == turn,
                _ => false,
            };
            if of_turn {
                assert!(
                    previous < at && at < called,
                    "turn {turn}'s stream between the turn before and its ModelCalled"
                );
            }
        }
    }
    let text: String = items
        .iter()
        .filter_map(|item| match item {
            RunStreamItem::TextDelta { turn: 3, text } => Some(text.as_str()),
            _ => None,
        })
        .collect();
    assert_eq!(text, outcome.answer);
    let started: Vec<(usize, &str)> = items
        .iter()
        .filter_map(|item| match item {
            RunStreamItem::ToolCallStarted { turn, name, .. } => Some((*turn, name.as_str())),
            _ => None,
        })
        .collect();
    assert_eq!(started, [(1, "tool_search"), (2, "stock_quote")]);
    // The quote runs after the turn that made it: started, then completed.
    let tool_started = items
        .iter()
        .position(|i| matches!(i, RunStreamItem::Event(RunEvent::ToolStarted { tool_name, .. }) if tool_name == "stock_quote"))
        .expect("the quote ran");
    assert!(model_called_at(items, 2) < tool_started && tool_started < model_called_at(items, 3));
}

#[tokio::test]
async fn a_streamed_run_yields_deltas_and_events_in_order_and_ends_like_run() {
    let (outcome, events) = ran(Arc::new(ScriptedModel::new(script()))).await;
    let model = Arc::new(ScriptedModel::new(script()).streaming_in_pieces(4));
    let (items, streamed_outcome, sink_events) = streamed(model).await;
    assert_eq!(streamed_outcome, outcome);
    assert_eq!(events_of(&items), events, "every event of run, in order");
    assert_eq!(sink_events, events, "the event sink still receives them");
    assert!(items.iter().filter(|i| matches!(i, RunStreamItem::TextDelta { .. })).count() >= 8, "in pieces");
    assert_streamed_in_order(&items, &streamed_outcome);
}

/// A Chat Completions server playing `script()`: it streams (chunks of a few characters, then
/// usage and `[DONE]`) when the request says `stream: true`, and answers whole otherwise; the
/// run's search-keyword request (no tools, a 32-token cap) gets a line of keywords.
struct Scripted;

impl Respond for Scripted {
    fn respond(&self, request: &Request) -> ResponseTemplate {
        let body: Value = request.body_json().unwrap_or(Value::Null);
        if body.get("tools").is_none() && body["max_tokens"] == 32 {
            let message = json!({"role": "assistant", "content": "stock quote"});
            let usage = json!({"prompt_tokens": 60, "completion_tokens": 3});
            return ResponseTemplate::new(200)
                .set_body_json(json!({"choices": [{"message": message}], "usage": usage}));
        }
        let turn = body["messages"].as_array().map_or(0, |m| m.iter().filter(|m| m["role"] == "assistant").count());
        let answer = script().swap_remove(turn.min(2));
        let usage =
            answer.usage.map(|u| json!({"prompt_tokens": u.prompt_tokens, "completion_tokens": u.completion_tokens}));
        let calls: Vec<Value> = answer
            .tool_calls
            .iter()
            .map(|c| json!({"id": c.id, "type": "function", "function": {"name": c.name, "arguments": c.arguments}}))
            .collect();
        if body["stream"] != json!(true) {
            let message = json!({"role": "assistant", "content": answer.content, "tool_calls": calls});
            return ResponseTemplate::new(200)
                .set_body_json(json!({"choices": [{"message": message}], "usage": usage}));
        }
        let chunk =
            |delta: Value, finish: Value| json!({"choices": [{"index": 0, "delta": delta, "finish_reason": finish}]});
        let mut chunks = vec![chunk(json!({"role": "assistant"}), Value::Null)];
        let characters: Vec<char> = answer.content.chars().collect();
        chunks
            .extend(characters.chunks(5).map(|p| chunk(json!({"content": p.iter().collect::<String>()}), Value::Null)));
        for (index, call) in answer.tool_calls.iter().enumerate() {
            let (head, tail) = call.arguments.split_at(call.arguments.len() / 2);
            let first = json!({"index": index, "id": call.id, "type": "function", "function": {"name": call.name, "arguments": head}});
            chunks.push(chunk(json!({"tool_calls": [first]}), Value::Null));
            chunks.push(chunk(json!({"tool_calls": [{"index": index, "function": {"arguments": tail}}]}), Value::Null));
        }
        chunks.push(chunk(json!({}), json!(if calls.is_empty() { "stop" } else { "tool_calls" })));
        chunks.push(json!({"choices": [], "usage": usage}));
        let mut sse: String = chunks.iter().map(|c| format!("data: {c}\n\n")).collect();
        sse.push_str("data: [DONE]\n\n");
        ResponseTemplate::new(200).set_body_raw(sse, "text/event-stream")
    }
}

#[tokio::test]
async fn a_streamed_run_over_a_chat_completions_server_ends_like_its_run() {
    let server = MockServer::start().await;
    Mock::given(wiremock::matchers::method("POST")).respond_with(Scripted).mount(&server).await;
    let model = || Arc::new(OpenAiCompatible::local(format!("{}/v1", server.uri()), "local").expect("client"));
    let (outcome, events) = ran(model()).await;
    let (items, streamed_outcome, _) = streamed(model()).await;
    assert_eq!(outcome.answer, "ACME trades at its latest price.");
    assert_eq!(outcome.usage.prompt_tokens, 300 + 520 + 700, "one request per turn, no keyword request");
    assert_eq!(streamed_outcome, outcome);
    assert_eq!(events_of(&items), events);
    assert_streamed_in_order(&items, &streamed_outcome);
    let requests = server.received_requests().await.unwrap_or_default();
    let streamed_requests =
        requests.iter().filter(|r| r.body_json::<Value>().is_ok_and(|b| b["stream"] == json!(true)));
    assert_eq!(streamed_requests.count(), 3, "run asks for whole answers, stream for streams");
}

/// The first turn's call of `stock_quote`, cut inside its arguments.
fn cut_call() -> String {
    let start = json!({"choices": [{"index": 0, "delta": {"role": "assistant", "tool_calls": [{"index": 0, "id": "call_q",
        "type": "function", "function": {"name": "stock_quote", "arguments": "{\"symbol\": \"AC"}}]}, "finish_reason": null}]});
    format!("data: {start}\n\n")
}

#[tokio::test]
async fn a_model_stream_cut_mid_call_fails_the_run_and_runs_no_tool() {
    let (base, _) = serve(vec![vec![Step::Send(cut_call()), Step::Cut]]).await;
    let model = Arc::new(OpenAiCompatible::local(format!("{base}/v1"), "local").expect("client"));
    let registry = Arc::new(catalogue::registry());
    // This server scripts one connection, the streamed turn's: no keyword request before it.
    let pre = PrePromotion::default().with_model_keywords(false);
    let policy = RunPolicy::default().with_discovery(ToolDiscoveryPolicy::default().with_pre_promotion(pre));
    let agent = Agent::new(registry, model).with_policy(policy);
    let mut stream = agent.stream(vec![Message::user("What is ACME at? Use stock_quote.")]);
    let mut items = Vec::new();
    while let Some(item) = stream.next().await {
        items.push(item);
    }
    let error = stream.finish().await.expect_err("the model call failed");
    assert!(matches!(&error.source, RunFailure::Model(ModelError::Interrupted { .. })), "{error}");
    assert!(items.iter().any(|i| matches!(i, RunStreamItem::ToolCallStarted { name, .. } if name == "stock_quote")));
    assert!(
        !items
            .iter()
            .any(|i| matches!(i, RunStreamItem::Event(RunEvent::ToolStarted { .. } | RunEvent::ModelCalled { .. }))),
        "no call ran: {items:?}"
    );
    assert!(!error.transcript.messages.iter().any(|m| matches!(m, Message::Assistant { .. } | Message::Tool { .. })));
}

#[tokio::test]
async fn cancelling_a_streamed_run_closes_the_model_stream_promptly() {
    let chunk = |text: &str| {
        format!("data: {}\n\n", json!({"choices": [{"index": 0, "delta": {"content": text}, "finish_reason": null}]}))
    };
    let script = vec![
        Step::Send(chunk("Once")),
        Step::Drip { chunk: chunk(" upon"), every: Duration::from_millis(20), for_at_most: Duration::from_secs(20) },
    ];
    let (base, server) = serve(vec![script]).await;
    let model = Arc::new(OpenAiCompatible::local(format!("{base}/v1"), "local").expect("client"));
    let agent = Agent::new(Arc::new(ToolRegistry::new()), model);
    let cancel = CancellationToken::new();
    let mut stream = agent.stream_until_cancelled(vec![Message::user("Tell me a story.")], cancel.clone());
    let mut cancelled_at = None;
    while let Some(item) = stream.next().await {
        if matches!(item, RunStreamItem::TextDelta { .. }) && cancelled_at.is_none() {
            cancel.cancel();
            cancelled_at = Some(Instant::now());
        }
    }
    let outcome = stream.finish().await.expect("a cancelled run is an outcome");
    let cancelled_at = cancelled_at.expect("a delta came");
    assert_eq!(outcome.stop, StopReason::Cancelled);
    assert!(cancelled_at.elapsed() < Duration::from_secs(2), "the run ended promptly");
    let served =
        tokio::time::timeout(Duration::from_secs(5), server).await.expect("the server saw the client go").expect("ran");
    assert!(served[0].client_gone_after.is_some_and(|gone| gone < Duration::from_secs(2)), "the connection was closed");
}

fn quote_request() -> ModelRequest {
    let registry = catalogue::registry();
    ModelRequest::new(
        vec![Message::system("Use tools."), Message::user("What is ACME at?")],
        registry.deferred_schemas().into_iter().filter(|t| t.name == "stock_quote").collect(),
    )
}

#[tokio::test]
async fn a_text_dialect_streams_its_text_and_parses_calls_at_the_end_of_the_turn() {
    let reply =
        "Checking the price. <tool_call>{\"name\": \"stock_quote\", \"arguments\": {\"symbol\": \"ACME\"}}</tool_call>";
    let whole = Dialect::JsonInTag.wrap(Arc::new(ScriptedModel::new([ModelResponse::text(reply)])));
    let expected = whole.complete(&quote_request()).await.expect("answers");
    assert_eq!(expected.tool_calls[0].name, "stock_quote");
    let inner = Arc::new(ScriptedModel::new([ModelResponse::text(reply)]).streaming_in_pieces(3));
    let speaking = Dialect::JsonInTag.wrap(inner.clone());
    let request = quote_request();
    let mut events = Vec::new();
    let response = speaking.stream(&request).into_response_with(|e| events.push(e.clone())).await.expect("answers");
    assert_eq!(response, expected, "the same answer as complete");
    let text: String = events
        .iter()
        .filter_map(|e| match e {
            StreamEvent::TextDelta(text) => Some(text.as_str()),
            _ => None,
        })
        .collect();
    assert_eq!(text, "Checking the price. ", "no call syntax in the deltas");
    assert_eq!(
        events.last(),
        Some(&StreamEvent::ToolCallDelta { index: 0, arguments: expected.tool_calls[0].arguments.clone() })
    );
    assert!(inner.requests()[0].tools.is_empty(), "the catalogue went into the prompt");
}

#[tokio::test]
async fn a_native_model_s_call_written_as_text_is_recovered_and_announced_at_the_end() {
    let reply = "{\"name\": \"stock_quote\", \"arguments\": {\"symbol\": \"ACME\"}}";
    let inner = Arc::new(ScriptedModel::new([ModelResponse::text(reply)]).streaming_in_pieces(7));
    let model = Dialect::Native.wrap(inner);
    let request = quote_request();
    let mut events = Vec::new();
    let response = model.stream(&request).into_response_with(|e| events.push(e.clone())).await.expect("answers");
    assert_eq!(response.tool_calls[0].name, "stock_quote");
    let started = events
        .iter()
        .position(|e| matches!(e, StreamEvent::ToolCallStarted { index: 0, name, .. } if name == "stock_quote"));
    let last_text = events.iter().rposition(|e| matches!(e, StreamEvent::TextDelta(_)));
    assert!(started > last_text, "announced once the text is complete: {events:?}");
}

#[tokio::test]
async fn a_resumed_run_streams_through_the_same_loop_as_resume() {
    let first = Agent::new(Arc::new(catalogue::registry()), Arc::new(ScriptedModel::new(script())));
    let mut transcript = first.run(vec![Message::user("What is ACME at?")]).await.expect("runs").transcript;
    transcript.messages.push(Message::user("And GLOBX?"));
    let later = || {
        vec![
            ModelResponse::calls([("call_3", "stock_quote", json!({"symbol": "GLOBX"}))]),
            ModelResponse::text("GLOBX trades at its latest price."),
        ]
    };
    let model = Arc::new(ScriptedModel::new(later()).streaming_in_pieces(5));
    let recorder = Arc::new(Recorder::default());
    let agent = Agent::new(Arc::new(catalogue::registry()), model.clone()).with_events(recorder.clone());
    let mut stream = agent.resume_stream(transcript.clone());
    assert_send(&stream);
    let mut items = Vec::new();
    while let Some(item) = stream.next().await {
        items.push(item);
    }
    let outcome = stream.finish().await.expect("resumes");
    let resumed = Agent::new(Arc::new(catalogue::registry()), Arc::new(ScriptedModel::new(later())))
        .resume(transcript)
        .await
        .expect("resumes");
    assert_eq!(
        (&outcome.answer, &outcome.transcript, outcome.stop),
        (&resumed.answer, &resumed.transcript, resumed.stop)
    );
    let shown: String = items
        .iter()
        .filter_map(|item| match item {
            RunStreamItem::TextDelta { text, .. } => Some(text.as_str()),
            _ => None,
        })
        .collect();
    assert_eq!(shown, "GLOBX trades at its latest price.");
    assert_eq!(events_of(&items), timeless(recorder.events()), "every event, in order");
    let offered: Vec<String> = model.requests()[0].tools.iter().map(|tool| tool.name.clone()).collect();
    assert!(
        offered.iter().any(|name| name == "stock_quote"),
        "the promotion came back with the transcript: {offered:?}"
    );
}
