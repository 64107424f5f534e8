//! `Anthropic::stream` against a local server on 127.0.0.1 replaying Messages streams: text
//! and `tool_use` blocks with `input_json_delta` pieces, `ping`, usage from `message_start` and
//! `message_delta`, an `error` event mid-stream, a connection dropped mid-call, and a slow
//! stream dropped. The fixtures follow the event shapes of Anthropic's "Streaming Messages"
//! documentation (its "basic streaming request" and "streaming request with tool use"
//! examples). No test touches the network.

mod sse_server;

use std::time::Duration;

use serde_json::{Value, json};
use sse_server::{Step, serve, sse};
use tinytools::model::{ChatModel, Message, ModelError, ModelRequest, ModelResponse, StreamEvent, Usage};
use tinytools::providers::{Anthropic, HttpOptions, Retry};

fn fast() -> HttpOptions {
    let retry = Retry::default().with_max_retries(1).with_base_delay(Duration::from_millis(10));
    HttpOptions::default().with_timeout(Duration::from_secs(5)).with_retry(retry)
}

fn request() -> ModelRequest {
    let registry = tinytools_examples::catalogue::registry();
    ModelRequest::new(
        vec![Message::system("Use tools."), Message::user("What are ACME and GLOBX at?")],
        registry.deferred_schemas().into_iter().filter(|t| t.name == "stock_quote").collect(),
    )
}

async fn read(client: &Anthropic, request: &ModelRequest) -> (Vec<StreamEvent>, Result<ModelResponse, ModelError>) {
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

const MESSAGE_START: &str = r#"{"type":"message_start","message":{"id":"msg_014p7gG3wDgGV9EUtLvnow3U","type":"message","role":"assistant","model":"claude-haiku-4-5-20251001","stop_sequence":null,"usage":{"input_tokens":472,"output_tokens":2,"cache_creation_input_tokens":0,"cache_read_input_tokens":0},"content":[],"stop_reason":null}}"#;

/// Text, then two `tool_use` blocks whose inputs come in `input_json_delta` pieces (the first
/// piece empty, as Anthropic sends it), a `ping`, the final usage and `message_stop`.
fn tool_use_stream() -> Vec<(&'static str, String)> {
    let delta = |index: u64, piece: &str| {
        json!({"type": "content_block_delta", "index": index, "delta": {"type": "input_json_delta", "partial_json": piece}})
            .to_string()
    };
    let tool = |index: u64, id: &str| {
        json!({"type": "content_block_start", "index": index, "content_block": {"type": "tool_use", "id": id, "name": "stock_quote", "input": {}}}).to_string()
    };
    vec![
        ("message_start", MESSAGE_START.to_owned()),
        ("content_block_start", r#"{"type":"content_block_start","index":0,"content_block":{"type":"text","text":""}}"#.to_owned()),
        ("ping", r#"{"type": "ping"}"#.to_owned()),
        ("content_block_delta", r#"{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"Let me look"}}"#.to_owned()),
        ("content_block_delta", r#"{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":" both up."}}"#.to_owned()),
        ("content_block_stop", r#"{"type":"content_block_stop","index":0}"#.to_owned()),
        ("content_block_start", tool(1, "toolu_01T1x1fJ34qAmk2tNTrN7Up6")),
        ("content_block_delta", delta(1, "")),
        ("content_block_delta", delta(1, "{\"symbol\": \"AC")),
        ("content_block_delta", delta(1, "ME\"}")),
        ("content_block_stop", r#"{"type":"content_block_stop","index":1}"#.to_owned()),
        ("content_block_start", tool(2, "toolu_01HmQ3Zb8cCq4pR7vWyGx2Lk")),
        ("content_block_delta", delta(2, "{\"symbol\":")),
        ("content_block_delta", delta(2, " \"GLOBX\"}")),
        ("content_block_stop", r#"{"type":"content_block_stop","index":2}"#.to_owned()),
        ("message_delta", r#"{"type":"message_delta","delta":{"stop_reason":"tool_use","stop_sequence":null},"usage":{"output_tokens":89}}"#.to_owned()),
        ("message_stop", r#"{"type":"message_stop"}"#.to_owned()),
    ]
}

fn body(events: &[(&'static str, String)]) -> String {
    let events: Vec<(&str, &str)> = events.iter().map(|(name, data)| (*name, data.as_str())).collect();
    sse(&events)
}

#[tokio::test]
async fn text_and_tool_use_blocks_stream_and_read_like_the_whole_answer() {
    let (base, server) = serve(vec![vec![Step::Send(body(&tool_use_stream()))]]).await;
    let claude = Anthropic::with_base_url(base, "sk-ant-test", "claude-haiku-4-5", fast()).expect("client");
    let (events, response) = read(&claude, &request()).await;
    let response = response.expect("complete");
    assert_eq!(response.content, "Let me look both up.");
    let calls: Vec<(&str, &str)> = response.tool_calls.iter().map(|c| (c.id.as_str(), c.arguments.as_str())).collect();
    // Compact JSON, as the non-streamed answer's `input` object gives it.
    assert_eq!(
        calls,
        [
            ("toolu_01T1x1fJ34qAmk2tNTrN7Up6", r#"{"symbol":"ACME"}"#),
            ("toolu_01HmQ3Zb8cCq4pR7vWyGx2Lk", r#"{"symbol":"GLOBX"}"#)
        ]
    );
    assert_eq!(response.usage, Some(Usage::new(472, 89)));
    let shown: Vec<String> = events
        .iter()
        .filter_map(|e| match e {
            StreamEvent::TextDelta(text) => Some(format!("text {text}")),
            StreamEvent::ToolCallStarted { index, id, .. } => Some(format!("call {index} {id}")),
            StreamEvent::ToolCallDelta { index, arguments } => Some(format!("args {index} {arguments}")),
            _ => None,
        })
        .collect();
    assert_eq!(
        shown,
        [
            "text Let me look",
            "text  both up.",
            "call 0 toolu_01T1x1fJ34qAmk2tNTrN7Up6",
            "args 0 {\"symbol\": \"AC",
            "args 0 ME\"}",
            "call 1 toolu_01HmQ3Zb8cCq4pR7vWyGx2Lk",
            "args 1 {\"symbol\":",
            "args 1  \"GLOBX\"}",
        ]
    );
    let sent = &server.await.expect("served")[0].request;
    assert_eq!((&sent["stream"], &sent["system"][0]["text"]), (&json!(true), &json!("Use tools.")));
    assert_eq!(sent["tools"][0]["name"], "stock_quote");
}

#[tokio::test]
async fn an_error_event_mid_stream_is_the_providers_error() {
    let mut events = tool_use_stream()[..5].to_vec();
    events.push((
        "error",
        r#"{"type": "error", "error": {"type": "overloaded_error", "message": "Overloaded"}}"#.to_owned(),
    ));
    let (base, _) = serve(vec![vec![Step::Send(body(&events))]]).await;
    let claude = Anthropic::with_base_url(base, "k", "m", fast()).expect("client");
    let (seen, response) = read(&claude, &request()).await;
    assert!(seen.contains(&StreamEvent::TextDelta(" both up.".into())));
    let error = response.expect_err("overloaded");
    assert!(matches!(&error, ModelError::Provider { status: 529, message } if message == "Overloaded"), "{error}");
}

#[tokio::test]
async fn a_connection_dropped_mid_call_is_an_interruption_never_a_call() {
    let events = tool_use_stream();
    // Cut after the first input piece of the first call (before its `content_block_stop`), and
    // after both calls closed but before `message_stop`.
    for (upto, during) in [(9, "in tool call 1 (`stock_quote`)"), (15, "before the message's end")] {
        for ending in [Step::Cut, Step::Pause(Duration::ZERO)] {
            let (base, _) = serve(vec![vec![Step::Send(body(&events[..upto])), ending]]).await;
            let claude = Anthropic::with_base_url(base, "k", "m", fast()).expect("client");
            let (_, response) = read(&claude, &request()).await;
            let error = response.expect_err("interrupted");
            assert!(matches!(&error, ModelError::Interrupted { during: d, .. } if d == during), "{error}");
        }
    }
}

#[tokio::test]
async fn dropping_a_slow_stream_closes_its_connection_promptly() {
    let events = tool_use_stream();
    let ping = sse(&[("ping", r#"{"type": "ping"}"#)]);
    let script = vec![
        Step::Send(body(&events[..4])),
        Step::Drip { chunk: ping, every: Duration::from_millis(20), for_at_most: Duration::from_secs(20) },
    ];
    let (base, server) = serve(vec![script]).await;
    let claude = Anthropic::with_base_url(base, "k", "m", fast()).expect("client");
    let request = request();
    let mut stream = claude.stream(&request);
    let first = stream.next().await.expect("an event").expect("no error");
    assert_eq!(first, StreamEvent::Usage(Usage::new(472, 2)));
    assert_eq!(stream.next().await.expect("an event").expect("no error"), StreamEvent::TextDelta("Let me look".into()));
    drop(stream);
    let served =
        tokio::time::timeout(Duration::from_secs(5), server).await.expect("the server saw the client go").expect("ran");
    let gone = served[0].client_gone_after.expect("the client went away");
    assert!(gone < Duration::from_secs(2), "the connection closed {gone:?} after the drip began");
}

#[tokio::test]
async fn a_tool_without_arguments_reads_as_an_empty_object() {
    let events = vec![
        ("message_start", MESSAGE_START.to_owned()),
        ("content_block_start", r#"{"type":"content_block_start","index":0,"content_block":{"type":"tool_use","id":"toolu_1","name":"list_notes","input":{}}}"#.to_owned()),
        ("content_block_delta", r#"{"type":"content_block_delta","index":0,"delta":{"type":"input_json_delta","partial_json":""}}"#.to_owned()),
        ("content_block_stop", r#"{"type":"content_block_stop","index":0}"#.to_owned()),
        ("message_delta", r#"{"type":"message_delta","delta":{"stop_reason":"tool_use","stop_sequence":null},"usage":{"output_tokens":12}}"#.to_owned()),
        ("message_stop", r#"{"type":"message_stop"}"#.to_owned()),
    ];
    let (base, _) = serve(vec![vec![Step::Send(body(&events))]]).await;
    let claude = Anthropic::with_base_url(base, "k", "m", fast()).expect("client");
    let response = claude.stream(&request()).into_response().await.expect("complete");
    let input: Value = serde_json::from_str(&response.tool_calls[0].arguments).expect("JSON");
    assert_eq!(input, json!({}));
}
