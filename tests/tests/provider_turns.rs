//! Turns and items sent back in the order and shape the providers' documentation requires
//! (issue 65, point 4), against a local server on 127.0.0.1. No test touches the network.
//!
//! - A call of a deferred function outside any namespace (point 3): the Responses API writes
//!   it with `"namespace": "<its own name>"`. Payload: the Vercel AI SDK's recording of a
//!   hosted tool search (`packages/openai/src/responses/__fixtures__/openai-tool-search.1.json`,
//!   model gpt-5.4-2026-03-05): `tool_search_call` `tsc_…` (`paths: ["get_weather"]`),
//!   `tool_search_output` `tso_…` with the loaded function, `function_call` `fc_…` with
//!   `"namespace": "get_weather"`; the Tool search guide describes the same flow.
//! - A turn goes back unchanged (point 4): Anthropic's "Server tools" page ("pass the paused
//!   response back as-is") and its tool search page's response format, with a search that
//!   failed (`tool_search_tool_result_error`, `error_code: "unavailable"`, one of the Python
//!   SDK's `ToolSearchToolResultErrorCode`s) and blocks with `caller: {"type": "direct"}` (the
//!   SDK's `ToolUseBlock.caller`); OpenAI's reasoning items stay between the calls and text
//!   they came between (the `ResponseReasoningItem` docstring: include them in `input` when
//!   managing context; the cookbook appends the whole `response.output`).
//! - Items never cross providers (point 5): a transcript resumed on the other provider carries
//!   none of the first provider's search blocks or items; the replays refuse an item or block
//!   type they do not know, with each API's error shape.

use std::sync::Arc;
use std::time::Duration;

use serde_json::{Value, json};
use tinytools::model::{DeferredTool, Message, ModelRequest, NativeDeferral, NativeSearch, ToolCall};
use tinytools::providers::{Anthropic, HttpOptions, OpenAiResponses};
use tinytools::run::{Agent, RunEvent, RunOutcome, RunPolicy, StopReason};
use tinytools::{DiscoveryMode, ToolDiscoveryPolicy, ToolRegistry, ToolSchema, tool};
use tinytools_examples::catalogue;
use tinytools_examples::wire::{self, Recorded, Replay, Reply, Responder, TASK, anthropic, responses};
use tinytools_integration_tests::Recorder;

/// Fetch the latest price for a ticker symbol.
#[tool]
async fn quote(
    /** Ticker symbol. */
    symbol: String,
) -> String {
    format!("{symbol} 12.50")
}

/// Get the current weather at a specific location
#[tool(exposure = "deferred")]
async fn get_weather(
    /** The city and state, e.g. San Francisco, CA */
    location: String,
    /** Temperature unit */
    unit: String,
) -> String {
    format!("{location}: 64 {unit}")
}

fn native(search: NativeSearch) -> RunPolicy {
    RunPolicy::default().with_discovery(ToolDiscoveryPolicy::default().with_mode(DiscoveryMode::ProviderNative(search)))
}

fn gpt(replay: &Replay) -> OpenAiResponses {
    OpenAiResponses::new(format!("{}/v1", replay.base_url), "gpt-5.4", HttpOptions::default()).expect("client")
}

fn claude(replay: &Replay) -> Anthropic {
    Anthropic::with_base_url(&replay.base_url, "sk-ant-test", "claude-sonnet-4-5", HttpOptions::default())
        .expect("client")
}

fn input(request: &Recorded) -> Vec<Value> {
    request.body["input"].as_array().cloned().unwrap_or_default()
}

fn kinds(items: &[Value]) -> Vec<&str> {
    items.iter().map(|item| item["type"].as_str().or_else(|| item["role"].as_str()).unwrap_or("?")).collect()
}

fn reply(body: Value, stream: bool, events: fn(&Value) -> Vec<String>) -> Reply {
    if stream { Reply::Sse { events: events(&body), pace: Duration::ZERO } } else { Reply::Json(body) }
}

async fn run(agent: &Agent, messages: Vec<Message>, stream: bool) -> RunOutcome {
    if stream { agent.stream(messages).finish().await.expect("runs") } else { agent.run(messages).await.expect("runs") }
}

/// The recorded hosted search of a deferred function outside any namespace, then its call.
fn hosted_weather_search(request: &Value) -> Vec<Value> {
    let declared = request["tools"].as_array().into_iter().flatten().find(|tool| tool["name"] == "get_weather");
    vec![
        json!({"id": "tsc_04bd69550b37ba26", "type": "tool_search_call", "status": "completed",
               "arguments": {"paths": ["get_weather"]}, "call_id": null, "execution": "server"}),
        json!({"id": "tso_04bd69550b37ba26", "type": "tool_search_output", "status": "completed", "call_id": null,
               "execution": "server", "tools": declared.into_iter().cloned().collect::<Vec<_>>()}),
        json!({"id": "fc_04bd69550b37ba26", "type": "function_call", "status": "completed",
               "arguments": "{\"location\":\"San Francisco, CA\",\"unit\":\"fahrenheit\"}",
               "call_id": "call_ytqozXvUXG8NN1b0IODxzUaE", "name": "get_weather", "namespace": "get_weather"}),
    ]
}

#[tokio::test]
async fn a_deferred_function_of_no_namespace_is_called_back_with_its_own_name() {
    for stream in [false, true] {
        let script: Arc<Responder> = Arc::new(move |request: &Recorded, before: &[Recorded]| {
            let output = match before.len() {
                0 => hosted_weather_search(&request.body),
                _ => vec![responses::message("msg_w2", "It is 64°F in San Francisco.")],
            };
            reply(responses::response("resp_w", output, responses::usage(640, 0, 46)), stream, responses::events)
        });
        let replay = wire::serve(script).await.expect("serves");
        let mut registry = ToolRegistry::new();
        registry.register(Quote).expect("registers");
        registry.register(GetWeather).expect("registers");
        let agent = Agent::new(Arc::new(registry), Arc::new(gpt(&replay))).with_policy(native(NativeSearch::Provider));
        let outcome = run(&agent, vec![Message::user("What's the weather in San Francisco?")], stream).await;
        assert_eq!(outcome.stop, StopReason::Answered);
        let requests = replay.requests();
        let tools = requests[0].body["tools"].as_array().cloned().unwrap_or_default();
        let declared = tools.iter().find(|tool| tool["name"] == "get_weather").expect("declared");
        assert_eq!((&declared["type"], &declared["defer_loading"]), (&json!("function"), &json!(true)), "no namespace");

        let sent = input(&requests[1]);
        assert_eq!(
            kinds(&sent),
            ["user", "tool_search_call", "tool_search_output", "function_call", "function_call_output"]
        );
        assert_eq!(sent[1..4], hosted_weather_search(&requests[0].body)[..], "as the API wrote them, ids and all");
        assert_eq!((&sent[3]["name"], &sent[3]["namespace"]), (&json!("get_weather"), &json!("get_weather")));
    }
}

#[test]
fn a_call_written_anew_names_its_own_name_as_namespace_too() {
    let weather =
        ToolSchema::new("get_weather", "Get the current weather at a specific location", json!({"type": "object"}));
    let quote = ToolSchema::new("stock_quote", "Fetch the latest price.", json!({"type": "object"}));
    let deferral = NativeDeferral::new(
        vec![DeferredTool::new(weather, None), DeferredTool::new(quote, Some("finance".into()))],
        NativeSearch::Client,
    );
    let calls = vec![
        ToolCall::new("call_1", "get_weather", r#"{"location":"Paris"}"#),
        ToolCall::new("call_2", "stock_quote", r#"{"symbol":"ACME"}"#),
    ];
    let request = ModelRequest::new(
        vec![Message::user("Weather and ACME?"), Message::Assistant { content: String::new(), tool_calls: calls }],
        Vec::new(),
    )
    .with_native_deferral(Some(deferral));
    let body = OpenAiResponses::openai("sk-test", "gpt-5.4").expect("client").body(&request);
    let namespaces: Vec<&Value> =
        body["input"].as_array().into_iter().flatten().map(|item| &item["namespace"]).collect();
    assert_eq!(namespaces, [&Value::Null, &json!("get_weather"), &json!("finance")]);
}

/// Anthropic's turn: text, a search that failed, text, a search that found `stock_quote`, the
/// call — each block as the API writes it.
fn searched_twice() -> Vec<Value> {
    let direct = json!({"type": "direct"});
    let [found_use, found] = anthropic::tool_search("srvtoolu_02", "stock price of a ticker", &["stock_quote"]);
    let mut found_use = found_use;
    found_use["caller"] = direct.clone();
    let mut call = anthropic::tool_use("toolu_01", "stock_quote", json!({"symbol": "ACME"}));
    call["caller"] = direct.clone();
    vec![
        anthropic::text("I'll look for a quote tool."),
        json!({"type": "server_tool_use", "id": "srvtoolu_01", "name": "tool_search_tool_bm25",
               "input": {"query": "quote"}, "caller": direct}),
        json!({"type": "tool_search_tool_result", "tool_use_id": "srvtoolu_01",
               "content": {"type": "tool_search_tool_result_error", "error_code": "unavailable"}}),
        anthropic::text(" That search failed; once more."),
        found_use,
        found,
        call,
    ]
}

#[tokio::test]
async fn an_anthropic_turn_goes_back_unchanged_failed_search_and_all() {
    for stream in [false, true] {
        let script: Arc<Responder> = Arc::new(move |_: &Recorded, before: &[Recorded]| {
            let content = match before.len() {
                0 => searched_twice(),
                _ => vec![anthropic::text("ACME trades at 512.34.")],
            };
            reply(anthropic::message("msg_01", content, anthropic::usage(80, 30, 0, 0)), stream, anthropic::events)
        });
        let replay = wire::serve(script).await.expect("serves");
        let recorder = Arc::new(Recorder::default());
        let agent = Agent::new(Arc::new(catalogue::registry()), Arc::new(claude(&replay)))
            .with_policy(native(NativeSearch::Provider))
            .with_events(recorder.clone());
        let outcome = run(&agent, vec![Message::user("What is ACME at?")], stream).await;
        assert_eq!((outcome.stop, outcome.answer.as_str()), (StopReason::Answered, "ACME trades at 512.34."));
        let messages = replay.requests()[1].body["messages"].as_array().cloned().expect("messages");
        assert_eq!(messages.len(), 3, "user, the turn, its tool result");
        assert_eq!(messages[1], json!({"role": "assistant", "content": searched_twice()}), "stream {stream}");
        let found: Vec<Vec<String>> = recorder
            .events()
            .into_iter()
            .filter_map(|event| match event {
                RunEvent::ToolSearched { matched, .. } => Some(matched),
                _ => None,
            })
            .collect();
        assert_eq!(found, [Vec::new(), vec!["stock_quote".to_owned()]], "the failed search found nothing");
    }
}

fn reasoning(id: &str) -> Value {
    json!({"type": "reasoning", "id": id, "summary": [], "encrypted_content": format!("gAAAAB{id}==")})
}

fn call(call_id: &str, symbol: &str) -> Value {
    json!({"type": "function_call", "id": format!("fc_{call_id}"), "call_id": call_id, "name": "quote",
           "arguments": json!({"symbol": symbol}).to_string(), "caller": {"type": "direct"}, "status": "completed"})
}

/// Reasoning between a message and two calls, as a reasoning model may write them.
fn interleaved() -> Vec<Value> {
    vec![
        reasoning("rs_1"),
        responses::message("msg_1", "Let me check both."),
        call("call_1", "ACME"),
        reasoning("rs_2"),
        call("call_2", "BETA"),
    ]
}

#[tokio::test]
async fn reasoning_items_stay_between_the_text_and_calls_they_came_between() {
    for stream in [false, true] {
        let script: Arc<Responder> = Arc::new(move |_: &Recorded, before: &[Recorded]| {
            let output = match before.len() {
                0 => interleaved(),
                _ => vec![reasoning("rs_3"), responses::message("msg_2", "ACME and BETA trade at 12.50.")],
            };
            reply(responses::response("resp_r", output, responses::usage(90, 0, 30)), stream, responses::events)
        });
        let replay = wire::serve(script).await.expect("serves");
        let mut registry = ToolRegistry::new();
        registry.register(Quote).expect("registers");
        let agent = Agent::new(Arc::new(registry), Arc::new(gpt(&replay)));
        let outcome = run(&agent, vec![Message::user("ACME and BETA?")], stream).await;
        assert_eq!(outcome.answer, "ACME and BETA trade at 12.50.");
        let sent = input(&replay.requests()[1]);
        assert_eq!(
            kinds(&sent),
            [
                "user",
                "reasoning",
                "message",
                "function_call",
                "reasoning",
                "function_call",
                "function_call_output",
                "function_call_output"
            ]
        );
        assert_eq!(sent[1..6], interleaved()[..], "in the output's order, as it came (stream {stream})");
    }
}

/// How many calls a conversation's turns made.
fn calls_in(messages: &[Message]) -> usize {
    let calls =
        messages.iter().map(|m| if let Message::Assistant { tool_calls, .. } = m { tool_calls.len() } else { 0 });
    let calls = calls.sum();
    assert!(calls > 0);
    calls
}

/// Whether a body carries anything of Anthropic's own.
fn has_anthropic_items(body: &Value) -> bool {
    let text = body.to_string();
    ["server_tool_use", "tool_search_tool_result", "srvtoolu_", "tool_reference"].iter().any(|mark| text.contains(mark))
}

/// Whether a body carries anything of the Responses API's own.
fn has_openai_items(body: &Value) -> bool {
    let text = body.to_string();
    ["tool_search_call", "tool_search_output", "\"reasoning\"", "\"namespace\""].iter().any(|mark| text.contains(mark))
}

#[tokio::test]
async fn an_anthropic_transcript_resumed_on_openai_carries_none_of_anthropics_items() {
    let mode = DiscoveryMode::ProviderNative(NativeSearch::Provider);
    let first = wire::serve(wire::anthropic_script(mode, None)).await.expect("serves");
    let agent = Agent::new(Arc::new(catalogue::registry()), Arc::new(claude(&first)))
        .with_policy(native(NativeSearch::Provider));
    let mut transcript = agent.run(vec![Message::user(TASK)]).await.expect("runs").transcript;
    assert!(transcript.messages.iter().any(|m| matches!(m, Message::ProviderSearch(_))), "Anthropic searched");
    let calls = calls_in(&transcript.messages);
    transcript.messages.push(Message::user("And in yen?"));

    let refusing: Arc<Responder> = Arc::new(|request: &Recorded, _: &[Recorded]| {
        if has_anthropic_items(&request.body["input"]) {
            let message = "Invalid value: 'server_tool_use'. Supported values are: 'message', 'function_call', 'function_call_output', 'reasoning', 'tool_search_call', 'tool_search_output'.";
            return Reply::Error {
                status: 400,
                body: json!({"error": {"message": message, "type": "invalid_request_error", "param": "input", "code": "invalid_value"}}),
            };
        }
        Reply::Json(responses::response(
            "resp_y",
            vec![responses::message("msg_y", "About 75,000 JPY.")],
            responses::usage(900, 0, 9),
        ))
    });
    let second = wire::serve(refusing).await.expect("serves");
    let agent =
        Agent::new(Arc::new(catalogue::registry()), Arc::new(gpt(&second))).with_policy(native(NativeSearch::Provider));
    let outcome = agent.resume(transcript).await.expect("resumes on OpenAI");
    assert_eq!(outcome.answer, "About 75,000 JPY.");
    let sent = input(&second.requests()[0]);
    assert!(!has_anthropic_items(&Value::Array(sent.clone())));
    assert_eq!(sent.iter().filter(|item| item["type"] == "function_call").count(), calls, "the calls, as OpenAI's");
}

#[tokio::test]
async fn an_openai_transcript_resumed_on_anthropic_carries_none_of_openais_items() {
    let script = wire::responses_script(DiscoveryMode::ProviderNative(NativeSearch::Provider), None);
    let with_reasoning: Arc<Responder> =
        Arc::new(move |request: &Recorded, before: &[Recorded]| match script(request, before) {
            Reply::Json(mut body) => {
                if let Some(output) = body["output"].as_array_mut() {
                    output.insert(0, reasoning(&format!("rs_{}", before.len())));
                }
                Reply::Json(body)
            }
            other => other,
        });
    let first = wire::serve(with_reasoning).await.expect("serves");
    let agent =
        Agent::new(Arc::new(catalogue::registry()), Arc::new(gpt(&first))).with_policy(native(NativeSearch::Provider));
    let mut transcript = agent.run(vec![Message::user(TASK)]).await.expect("runs").transcript;
    assert!(transcript.messages.iter().any(|m| matches!(m, Message::ProviderSearch(_))), "OpenAI searched");
    let calls = calls_in(&transcript.messages);
    transcript.messages.push(Message::user("And in yen?"));

    let refusing: Arc<Responder> = Arc::new(|request: &Recorded, _: &[Recorded]| {
        if has_openai_items(&request.body["messages"]) {
            let message = "messages.1.content.0: Input tag 'tool_search_call' found using 'type' does not match any of the expected tags";
            return Reply::Error {
                status: 400,
                body: json!({"type": "error", "error": {"type": "invalid_request_error", "message": message}}),
            };
        }
        let answer =
            anthropic::message("msg_y", vec![anthropic::text("About 75,000 JPY.")], anthropic::usage(900, 9, 0, 0));
        Reply::Json(answer)
    });
    let second = wire::serve(refusing).await.expect("serves");
    let agent = Agent::new(Arc::new(catalogue::registry()), Arc::new(claude(&second)))
        .with_policy(native(NativeSearch::Provider));
    let outcome = agent.resume(transcript).await.expect("resumes on Anthropic");
    assert_eq!(outcome.answer, "About 75,000 JPY.");
    let messages = &second.requests()[0].body["messages"];
    assert!(!has_openai_items(messages));
    let uses = messages.to_string().matches("\"tool_use\"").count();
    assert_eq!(uses, calls, "the calls, as Anthropic's");
}
