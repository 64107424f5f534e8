//! `OpenAiCompatible::stream` against a local server on 127.0.0.1 replaying Chat Completions
//! streams: text, parallel tool calls with interleaved argument deltas, usage, llama-server's
//! variant, an error mid-stream, a connection dropped mid-call, the byte cap and the time
//! limit per stream, and a slow stream dropped. No test touches the network.

mod sse_server;

use std::time::{Duration, Instant};

use serde_json::{Value, json};
use sse_server::{Step, serve};
use tinytools::model::{ChatModel, Message, ModelError, ModelRequest, ModelResponse, StreamEvent, Usage};
use tinytools::providers::{HttpOptions, OpenAiCompatible, Retry};
use wiremock::matchers::{method, path};
use wiremock::{Mock, MockServer, ResponseTemplate};

fn fast() -> HttpOptions {
    let retry = Retry::default().with_max_retries(1).with_base_delay(Duration::from_millis(10));
    HttpOptions::default().with_timeout(Duration::from_secs(5)).with_retry(retry)
}

fn request() -> ModelRequest {
    let registry = tinytools_examples::catalogue::registry();
    ModelRequest::new(
        vec![Message::user("What are ACME and GLOBX at?")],
        registry.deferred_schemas().into_iter().filter(|t| t.name == "stock_quote").collect(),
    )
}

/// Reads a whole stream: its events before `Done`, and how it ended.
async fn read(
    client: &OpenAiCompatible,
    request: &ModelRequest,
) -> (Vec<StreamEvent>, Result<ModelResponse, ModelError>) {
    let mut events = Vec::new();
    let mut stream = client.stream(request);
    while let Some(event) = stream.next().await {
        match event {
            Ok(StreamEvent::Done(response)) => return (events, Ok(response)),
            Ok(event) => events.push(event),
            Err(error) => return (events, Err(error)),
        }
    }
    (events, Err(ModelError::Transport("the stream ended without Done or an error".into())))
}

/// A `chat.completion.chunk` with one choice, in the shape of OpenAI's API reference ("The chat
/// completion chunk object") and its function-calling guide's streaming section.
fn chunk(delta: Value, finish_reason: Option<&str>) -> String {
    json!({
        "id": "chatcmpl-BtR8Gq2Zk", "object": "chat.completion.chunk", "created": 1_752_000_000,
        "model": "gpt-4.1-mini-2025-04-14", "service_tier": "default", "system_fingerprint": "fp_6f2eabb9a5",
        "choices": [{"index": 0, "delta": delta, "logprobs": null, "finish_reason": finish_reason}],
        "usage": null
    })
    .to_string()
}

/// The last chunk under `stream_options.include_usage`: no choices, the whole call's usage.
fn usage_chunk(prompt: u64, completion: u64) -> String {
    json!({
        "id": "chatcmpl-BtR8Gq2Zk", "object": "chat.completion.chunk", "created": 1_752_000_000,
        "model": "gpt-4.1-mini-2025-04-14", "system_fingerprint": "fp_6f2eabb9a5", "choices": [],
        "usage": {"prompt_tokens": prompt, "completion_tokens": completion, "total_tokens": prompt + completion,
                  "prompt_tokens_details": {"cached_tokens": 0, "audio_tokens": 0},
                  "completion_tokens_details": {"reasoning_tokens": 0, "audio_tokens": 0,
                                                "accepted_prediction_tokens": 0, "rejected_prediction_tokens": 0}}
    })
    .to_string()
}

fn call_start(index: u64, id: &str, name: &str) -> Value {
    json!({"tool_calls": [{"index": index, "id": id, "type": "function", "function": {"name": name, "arguments": ""}}]})
}

fn call_args(index: u64, piece: &str) -> Value {
    json!({"tool_calls": [{"index": index, "function": {"arguments": piece}}]})
}

/// Two parallel calls whose argument pieces interleave, then the usage chunk and `[DONE]`.
fn parallel_calls_stream() -> String {
    let data = [
        chunk(json!({"role": "assistant", "content": null, "refusal": null}), None),
        chunk(call_start(0, "call_q0Acme", "stock_quote"), None),
        chunk(call_args(0, "{\"sym"), None),
        chunk(call_start(1, "call_q1Globx", "stock_quote"), None),
        chunk(call_args(1, "{\"symbol\": "), None),
        chunk(call_args(0, "bol\": \"AC"), None),
        chunk(call_args(1, "\"GLOBX\"}"), None),
        chunk(call_args(0, "ME\"}"), None),
        chunk(json!({}), Some("tool_calls")),
        usage_chunk(91, 40),
        "[DONE]".to_owned(),
    ];
    data.iter().map(|d| format!("data: {d}\n\n")).collect()
}

#[tokio::test]
async fn text_arrives_in_deltas_with_usage_and_the_request_asks_for_a_stream() {
    let server = MockServer::start().await;
    let data = [
        chunk(json!({"role": "assistant", "content": "", "refusal": null}), None),
        chunk(json!({"content": "ACME trades"}), None),
        chunk(json!({"content": " at 12.50"}), None),
        chunk(json!({"content": "."}), None),
        chunk(json!({}), Some("stop")),
        usage_chunk(52, 7),
        "[DONE]".to_owned(),
    ];
    let body: String = data.iter().map(|d| format!("data: {d}\n\n")).collect();
    Mock::given(method("POST"))
        .and(path("/v1/chat/completions"))
        .respond_with(ResponseTemplate::new(200).set_body_raw(body, "text/event-stream"))
        .mount(&server)
        .await;
    let client = OpenAiCompatible::new(format!("{}/v1", server.uri()), "gpt-4.1-mini", fast()).expect("client");
    let (events, response) = read(&client, &request()).await;
    let response = response.expect("complete");
    assert_eq!(
        events,
        [
            StreamEvent::TextDelta("ACME trades".into()),
            StreamEvent::TextDelta(" at 12.50".into()),
            StreamEvent::TextDelta(".".into()),
            StreamEvent::Usage(Usage::new(52, 7)),
        ]
    );
    assert_eq!(response, ModelResponse::text("ACME trades at 12.50.").with_usage(52, 7));
    let sent: Value = server.received_requests().await.unwrap_or_default()[0].body_json().expect("JSON");
    assert_eq!((&sent["stream"], &sent["stream_options"]), (&json!(true), &json!({"include_usage": true})));
    assert_eq!(sent["tools"][0]["function"]["name"], "stock_quote");
}

#[tokio::test]
async fn parallel_calls_with_interleaved_argument_deltas_are_assembled_by_index() {
    let server = MockServer::start().await;
    Mock::given(method("POST"))
        .respond_with(ResponseTemplate::new(200).set_body_raw(parallel_calls_stream(), "text/event-stream"))
        .mount(&server)
        .await;
    let client = OpenAiCompatible::new(format!("{}/v1", server.uri()), "m", fast()).expect("client");
    let (events, response) = read(&client, &request()).await;
    let response = response.expect("complete");
    let calls: Vec<(&str, &str, Value)> = response
        .tool_calls
        .iter()
        .map(|c| (c.id.as_str(), c.name.as_str(), serde_json::from_str(&c.arguments).expect("whole JSON")))
        .collect();
    assert_eq!(
        calls,
        [
            ("call_q0Acme", "stock_quote", json!({"symbol": "ACME"})),
            ("call_q1Globx", "stock_quote", json!({"symbol": "GLOBX"}))
        ]
    );
    assert_eq!(response.usage, Some(Usage::new(91, 40)));
    // Each call is announced before its first piece; the pieces keep their call's index.
    let started: Vec<usize> = events
        .iter()
        .filter_map(|e| match e {
            StreamEvent::ToolCallStarted { index, .. } => Some(*index),
            _ => None,
        })
        .collect();
    assert_eq!(started, [0, 1]);
    let pieces_of = |wanted: usize| -> String {
        events
            .iter()
            .filter_map(|e| match e {
                StreamEvent::ToolCallDelta { index, arguments } if *index == wanted => Some(arguments.as_str()),
                _ => None,
            })
            .collect()
    };
    assert_eq!(pieces_of(0), response.tool_calls[0].arguments);
    assert_eq!(pieces_of(1), response.tool_calls[1].arguments);
    // Read without looking at the events, the stream gives the same answer.
    let whole = client.stream(&request()).into_response().await.expect("complete");
    assert_eq!(whole, response);
}

/// llama-server's stream: usage and `timings` on the chunk with the `finish_reason` (the shape
/// `llama-server` writes, as recorded from its `/v1/chat/completions`), then `[DONE]`; an older
/// build reports only `timings` and may end the body without `[DONE]`.
#[tokio::test]
async fn llama_server_usage_comes_with_its_finish_chunk_or_from_timings() {
    let first = json!({"choices": [{"finish_reason": null, "index": 0, "delta": {"role": "assistant", "content": null}}],
        "created": 1_754_523_863, "id": "chatcmpl-X6urH4f6", "model": "qwen2.5-coder-1.5b", "system_fingerprint": "b6097-9515c613",
        "object": "chat.completion.chunk"});
    let call = json!({"choices": [{"finish_reason": null, "index": 0, "delta": {"tool_calls": [{"index": 0,
        "id": "Zr1qV4", "type": "function", "function": {"name": "stock_quote", "arguments": "{\"symbol\":\"ACME\"}"}}]}}],
        "object": "chat.completion.chunk"});
    let last = json!({"choices": [{"finish_reason": "tool_calls", "index": 0, "delta": {}}], "object": "chat.completion.chunk",
        "usage": {"completion_tokens": 19, "prompt_tokens": 1085, "total_tokens": 1104},
        "timings": {"prompt_n": 1085, "prompt_ms": 203.4, "predicted_n": 19, "predicted_ms": 933.6}});
    let older = json!({"choices": [{"finish_reason": "tool_calls", "index": 0, "delta": {}}], "object": "chat.completion.chunk",
        "timings": {"prompt_n": 640, "predicted_n": 12}});
    let current = format!("data: {first}\n\ndata: {call}\n\ndata: {last}\n\ndata: [DONE]\n\n");
    let legacy = format!("data: {first}\n\ndata: {call}\n\ndata: {older}\n\n");
    for (body, usage) in [(current, (1085, 19)), (legacy, (640, 12))] {
        let (base, _) = serve(vec![vec![Step::Send(body)]]).await;
        let client = OpenAiCompatible::local(format!("{base}/v1"), "local").expect("client");
        let response = client.stream(&request()).into_response().await.expect("complete");
        assert_eq!(response.tool_calls[0].arguments, r#"{"symbol":"ACME"}"#);
        assert_eq!(response.usage.map(|u| (u.prompt_tokens, u.completion_tokens)), Some(usage));
    }
}

#[tokio::test]
async fn an_error_mid_stream_is_the_providers_error_and_ends_the_stream() {
    // OpenAI and current llama-server write it as a data chunk; older llama-server as an `error:` line.
    let text = format!("data: {}\n\n", chunk(json!({"content": "Let me"}), None));
    let openai = r#"data: {"error": {"message": "The server had an error while processing your request. Sorry about that!", "type": "server_error", "param": null, "code": null}}"#;
    let llama = r#"error: {"code": 503, "message": "Loading model", "type": "unavailable_error"}"#;
    for (error, status, says) in [(openai, 500, "Sorry about that"), (llama, 503, "Loading model")] {
        let (base, _) = serve(vec![vec![Step::Send(format!("{text}{error}\n\n"))]]).await;
        let client = OpenAiCompatible::new(format!("{base}/v1"), "m", fast()).expect("client");
        let (events, response) = read(&client, &request()).await;
        assert_eq!(events, [StreamEvent::TextDelta("Let me".into())]);
        let error = response.expect_err("the provider's error");
        assert!(
            matches!(&error, ModelError::Provider { status: s, message } if *s == status && message.contains(says)),
            "{error}"
        );
    }
}

#[tokio::test]
async fn a_connection_dropped_mid_call_is_an_interruption_never_a_call() {
    let events = parallel_calls_stream();
    // Cut inside the first call's arguments: the body stops mid-chunk, or ends cleanly too early.
    let cut_at = events.find("bol").expect("fixture");
    for ending in [Step::Cut, Step::Pause(Duration::ZERO)] {
        let (base, _) = serve(vec![vec![Step::Send(events[..cut_at].to_owned()), ending]]).await;
        let client = OpenAiCompatible::new(format!("{base}/v1"), "m", fast()).expect("client");
        let (seen, response) = read(&client, &request()).await;
        assert!(seen.iter().any(|e| matches!(e, StreamEvent::ToolCallStarted { .. })), "the call had begun");
        let error = response.expect_err("interrupted");
        assert!(
            matches!(&error, ModelError::Interrupted { during, .. } if during == "in tool call 2 (`stock_quote`)"),
            "{error}"
        );
        assert!(error.to_string().contains("no call in it was run"), "{error}");
    }
    // Cut after the `finish_reason` (before the usage chunk and `[DONE]`): every call is whole.
    let cut_at = events.find("\"usage\":{").and_then(|at| events[..at].rfind("data:")).expect("fixture");
    let (base, _) = serve(vec![vec![Step::Send(events[..cut_at].to_owned()), Step::Cut]]).await;
    let client = OpenAiCompatible::new(format!("{base}/v1"), "m", fast()).expect("client");
    let response = client.stream(&request()).into_response().await.expect("the answer stands");
    assert_eq!((response.tool_calls.len(), response.usage), (2, None));
}

#[tokio::test]
async fn the_byte_cap_and_the_time_limit_hold_for_a_stream() {
    let piece = format!("data: {}\n\n", chunk(json!({"content": "x".repeat(1_000)}), None));
    let (base, _) = serve(vec![vec![Step::Drip {
        chunk: piece,
        every: Duration::from_millis(1),
        for_at_most: Duration::from_secs(20),
    }]])
    .await;
    let client = OpenAiCompatible::new(format!("{base}/v1"), "m", fast()).expect("client");
    let capped = request().with_max_response_bytes(Some(64 * 1024));
    let (events, response) = read(&client, &capped).await;
    assert!(matches!(response, Err(ModelError::ResponseTooLarge { limit: 65_536 })), "{response:?}");
    assert!(events.len() < 70, "stopped at the cap: {} deltas", events.len());

    let first = format!("data: {}\n\n", chunk(json!({"content": "Thinking"}), None));
    let (base, _) = serve(vec![vec![Step::Send(first), Step::Pause(Duration::from_secs(10))]]).await;
    let options = fast().with_timeout(Duration::from_millis(400));
    let client = OpenAiCompatible::new(format!("{base}/v1"), "m", options).expect("client");
    let started = Instant::now();
    let (events, response) = read(&client, &request()).await;
    assert_eq!(events, [StreamEvent::TextDelta("Thinking".into())]);
    let error = response.expect_err("timed out");
    assert!(
        matches!(&error, ModelError::Interrupted { during, reason } if during == "in the answer's text" && reason.starts_with("timed out")),
        "{error}"
    );
    assert!(started.elapsed() < Duration::from_secs(3), "the stream's time limit, not the server's 10 s pause");
}

#[tokio::test]
async fn dropping_a_slow_stream_closes_its_connection_promptly() {
    let first = format!("data: {}\n\n", chunk(json!({"content": "Once"}), None));
    let drip = format!("data: {}\n\n", chunk(json!({"content": " upon"}), None));
    let script = vec![
        Step::Send(first),
        Step::Drip { chunk: drip, every: Duration::from_millis(20), for_at_most: Duration::from_secs(20) },
    ];
    let (base, server) = serve(vec![script]).await;
    let client = OpenAiCompatible::new(format!("{base}/v1"), "m", fast()).expect("client");
    let request = request();
    let mut stream = client.stream(&request);
    let first = stream.next().await.expect("an event").expect("no error");
    assert_eq!(first, StreamEvent::TextDelta("Once".into()));
    drop(stream);
    let served =
        tokio::time::timeout(Duration::from_secs(5), server).await.expect("the server saw the client go").expect("ran");
    let gone = served[0].client_gone_after.expect("the client went away");
    assert!(gone < Duration::from_secs(2), "the connection closed {gone:?} after the drip began");
}
