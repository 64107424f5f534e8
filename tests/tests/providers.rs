//! The provider clients against a local HTTP server on 127.0.0.1 replaying the providers'
//! wire payloads (tool calls, usage, error bodies, rate limits). No test touches the network.

use std::sync::Arc;
use std::time::Duration;

use serde_json::{Value, json};
use tinytools::model::{ChatModel, Message, ModelError, ModelRequest};
use tinytools::providers::{Anthropic, HttpOptions, OpenAiCompatible, Retry};
use tinytools::run::Agent;
use tinytools_examples::catalogue;
use wiremock::matchers::{header, method, path};
use wiremock::{Mock, MockServer, Request, Respond, ResponseTemplate};

fn fast() -> HttpOptions {
    let retry = Retry::default()
        .with_max_retries(2)
        .with_base_delay(Duration::from_millis(10))
        .with_max_delay(Duration::from_millis(50));
    HttpOptions::default().with_timeout(Duration::from_secs(5)).with_retry(retry)
}

fn request() -> ModelRequest {
    let registry = catalogue::registry();
    ModelRequest::new(
        vec![
            Message::system("Use tools."),
            Message::user("What is ACME at?"),
            Message::Assistant {
                content: String::new(),
                tool_calls: vec![tinytools::model::ToolCall::new(
                    "call_1",
                    "tool_search",
                    r#"{"query":"stock price"}"#,
                )],
            },
            Message::Tool {
                call_id: "call_1".into(),
                name: "tool_search".into(),
                content: "{\"matches\":[]}".into(),
                is_error: false,
            },
        ],
        registry.schemas(),
    )
}

/// An OpenAI Chat Completions answer with a tool call, as the API sends it.
fn openai_tool_call() -> Value {
    json!({
        "id": "chatcmpl-AbC123", "object": "chat.completion", "created": 1_733_000_000, "model": "gpt-4.1-mini-2025-04-14",
        "choices": [{"index": 0, "finish_reason": "tool_calls", "logprobs": null, "message": {
            "role": "assistant", "content": null, "refusal": null, "annotations": [],
            "tool_calls": [{"id": "call_Xq7", "type": "function", "function": {"name": "stock_quote", "arguments": "{\"symbol\":\"ACME\",\"options\":{\"limit\":2}}"}}]
        }}],
        "usage": {"prompt_tokens": 878, "completion_tokens": 21, "total_tokens": 899,
                  "prompt_tokens_details": {"cached_tokens": 0, "audio_tokens": 0}},
        "service_tier": "default", "system_fingerprint": "fp_6f2eabb9a5"
    })
}

#[tokio::test]
async fn openai_tool_calls_usage_and_the_request_shape() {
    let server = MockServer::start().await;
    Mock::given(method("POST"))
        .and(path("/v1/chat/completions"))
        .and(header("authorization", "Bearer sk-test-123"))
        .respond_with(ResponseTemplate::new(200).set_body_json(openai_tool_call()))
        .expect(1)
        .mount(&server)
        .await;
    let client = OpenAiCompatible::new(format!("{}/v1", server.uri()), "gpt-4.1-mini", fast())
        .expect("client")
        .with_api_key("sk-test-123");
    let response = client.complete(&request()).await.expect("answers");
    assert_eq!(response.tool_calls.len(), 1);
    assert_eq!(response.tool_calls[0].name, "stock_quote");
    assert_eq!(response.tool_calls[0].id, "call_Xq7");
    assert_eq!(
        serde_json::from_str::<Value>(&response.tool_calls[0].arguments).ok(),
        Some(json!({"symbol": "ACME", "options": {"limit": 2}}))
    );
    assert_eq!(response.usage.map(|u| (u.prompt_tokens, u.completion_tokens)), Some((878, 21)));

    let sent: Value = server.received_requests().await.unwrap_or_default()[0].body_json().expect("JSON");
    assert_eq!(sent["model"], "gpt-4.1-mini");
    assert_eq!(
        sent["tools"][0],
        json!({"type": "function", "function": {"name": "read_note", "description": catalogue::registry().schemas()[0].description, "parameters": catalogue::registry().schemas()[0].parameters}})
    );
    assert_eq!(sent["messages"][2]["tool_calls"][0]["function"]["name"], "tool_search");
    assert_eq!(sent["messages"][2]["content"], Value::Null);
    assert_eq!(sent["messages"][3], json!({"role": "tool", "tool_call_id": "call_1", "content": "{\"matches\":[]}"}));
}

#[tokio::test]
async fn a_llama_cpp_answer_with_object_arguments_and_no_usage_is_read() {
    let server = MockServer::start().await;
    let body = json!({"choices": [{"message": {"role": "assistant", "content": "", "tool_calls": [
        {"type": "function", "function": {"name": "tool_search", "arguments": {"query": "stock price"}}}]}}]});
    Mock::given(method("POST")).respond_with(ResponseTemplate::new(200).set_body_json(body)).mount(&server).await;
    let client = OpenAiCompatible::local(format!("{}/v1", server.uri()), "qwen").expect("client");
    let response = client.complete(&request()).await.expect("answers");
    assert_eq!(response.tool_calls[0].id, "call_0", "a missing id is filled");
    assert_eq!(response.tool_calls[0].arguments, r#"{"query":"stock price"}"#);
    assert_eq!(response.usage, None);
}

#[tokio::test]
async fn errors_say_what_the_provider_said_and_context_overflows_are_named() {
    let server = MockServer::start().await;
    Mock::given(method("POST")).and(path("/bad/chat/completions"))
        .respond_with(ResponseTemplate::new(400).set_body_json(json!({"error": {"message": "Invalid schema for function 'stock_quote': None is not of type 'object'.", "type": "invalid_request_error", "param": "tools[0].function.parameters", "code": "invalid_function_parameters"}})))
        .mount(&server).await;
    Mock::given(method("POST")).and(path("/long/chat/completions"))
        .respond_with(ResponseTemplate::new(400).set_body_json(json!({"error": {"message": "This model's maximum context length is 128000 tokens. However, your messages resulted in 130417 tokens.", "type": "invalid_request_error", "param": "messages", "code": "context_length_exceeded"}})))
        .expect(1)
        .mount(&server).await;
    let bad = OpenAiCompatible::new(format!("{}/bad", server.uri()), "m", fast())
        .expect("client")
        .with_api_key("sk-secret-value");
    let err = bad.complete(&request()).await.expect_err("400");
    assert!(
        matches!(&err, ModelError::Provider { status: 400, message } if message.contains("Invalid schema for function")),
        "{err}"
    );
    assert!(!err.to_string().contains("sk-secret-value") && !format!("{bad:?}").contains("sk-secret-value"));
    let long = OpenAiCompatible::new(format!("{}/long", server.uri()), "m", fast()).expect("client");
    let err = long.complete(&request()).await.expect_err("context");
    assert!(matches!(err, ModelError::ContextLength { .. }), "{err}");
}

/// 429 with `Retry-After: 0` once, then the answer.
struct RateLimitedOnce(std::sync::atomic::AtomicUsize);

impl Respond for RateLimitedOnce {
    fn respond(&self, _: &Request) -> ResponseTemplate {
        if self.0.fetch_add(1, std::sync::atomic::Ordering::SeqCst) == 0 {
            ResponseTemplate::new(429).insert_header("retry-after", "0").set_body_json(json!({"error": {"message": "Rate limit reached for gpt-4.1-mini", "type": "requests", "code": "rate_limit_exceeded"}}))
        } else {
            ResponseTemplate::new(200).set_body_json(openai_tool_call())
        }
    }
}

#[tokio::test]
async fn rate_limits_and_server_errors_are_retried_then_reported() {
    let server = MockServer::start().await;
    Mock::given(method("POST"))
        .and(path("/limited/chat/completions"))
        .respond_with(RateLimitedOnce(Default::default()))
        .expect(2)
        .mount(&server)
        .await;
    Mock::given(method("POST"))
        .and(path("/down/chat/completions"))
        .respond_with(ResponseTemplate::new(503).set_body_string("upstream connect error"))
        .expect(3)
        .mount(&server)
        .await;
    let limited = OpenAiCompatible::new(format!("{}/limited", server.uri()), "m", fast()).expect("client");
    assert!(limited.complete(&request()).await.is_ok(), "the 429 was retried");
    let down = OpenAiCompatible::new(format!("{}/down", server.uri()), "m", fast()).expect("client");
    let err = down.complete(&request()).await.expect_err("still down after 2 retries");
    assert!(
        matches!(&err, ModelError::Provider { status: 503, message } if message.contains("upstream connect error")),
        "{err}"
    );
    let closed = OpenAiCompatible::new("http://127.0.0.1:9/v1", "m", fast()).expect("client");
    assert!(matches!(closed.complete(&request()).await, Err(ModelError::Transport(_))));
}

#[tokio::test]
async fn anthropic_tool_use_usage_request_shape_and_errors() {
    let server = MockServer::start().await;
    let answer = json!({
        "id": "msg_01XFDUDYJgAACzvnptvVoYEL", "type": "message", "role": "assistant", "model": "claude-haiku-4-5-20251001",
        "content": [{"type": "text", "text": "Let me look that up."},
                    {"type": "tool_use", "id": "toolu_01A09q90qw90lq917835lq9", "name": "stock_quote", "input": {"symbol": "ACME"}}],
        "stop_reason": "tool_use", "stop_sequence": null,
        "usage": {"input_tokens": 1582, "output_tokens": 61, "cache_creation_input_tokens": 0, "cache_read_input_tokens": 0}
    });
    Mock::given(method("POST"))
        .and(path("/v1/messages"))
        .and(header("x-api-key", "sk-ant-test"))
        .and(header("anthropic-version", "2023-06-01"))
        .respond_with(ResponseTemplate::new(200).set_body_json(answer))
        .mount(&server)
        .await;
    let claude = Anthropic::with_base_url(server.uri(), "sk-ant-test", "claude-haiku-4-5", fast()).expect("client");
    let response = claude.complete(&request()).await.expect("answers");
    assert_eq!(response.content, "Let me look that up.");
    assert_eq!(response.tool_calls[0].name, "stock_quote");
    assert_eq!(response.tool_calls[0].arguments, r#"{"symbol":"ACME"}"#);
    assert_eq!(response.usage.map(|u| u.prompt_tokens), Some(1582));
    let received = server.received_requests().await.unwrap_or_default();
    assert!(received[0].headers.get("anthropic-beta").is_none(), "no beta without native deferral");
    let sent: Value = received[0].body_json().expect("JSON");
    // Cache breakpoints: the system prompt, the last tool, the conversation's last block.
    assert_eq!(sent["system"], json!([{"type": "text", "text": "Use tools.", "cache_control": {"type": "ephemeral"}}]));
    let tools = sent["tools"].as_array().expect("tools");
    assert_eq!(tools.iter().filter(|tool| tool.get("cache_control").is_some()).count(), 1);
    assert_eq!(tools.last().map(|tool| &tool["cache_control"]), Some(&json!({"type": "ephemeral"})));
    assert_eq!(sent["messages"][2]["content"][0]["cache_control"], json!({"type": "ephemeral"}));
    let plain = claude.clone().with_prompt_caching(false).body(&request());
    assert_eq!(plain["system"], "Use tools.");
    assert!(!plain.to_string().contains("cache_control"));
    assert_eq!(
        sent["messages"][1]["content"][0],
        json!({"type": "tool_use", "id": "call_1", "name": "tool_search", "input": {"query": "stock price"}})
    );
    assert_eq!(sent["messages"][2]["content"][0]["type"], "tool_result");
    assert_eq!(sent["tools"][0]["input_schema"]["type"], "object");

    let overloaded = MockServer::start().await;
    Mock::given(method("POST"))
        .respond_with(
            ResponseTemplate::new(529).set_body_json(
                json!({"type": "error", "error": {"type": "overloaded_error", "message": "Overloaded"}}),
            ),
        )
        .expect(3)
        .mount(&overloaded)
        .await;
    let claude = Anthropic::with_base_url(overloaded.uri(), "k", "m", fast()).expect("client");
    assert!(matches!(claude.complete(&request()).await, Err(ModelError::Provider { status: 529, .. })));
}

/// A Chat Completions server that plays the spec's task from what it is sent, and answers the
/// run's search-keyword request (two messages, no tools, a 32-token cap) with a line.
struct SpecTask;

impl Respond for SpecTask {
    fn respond(&self, request: &Request) -> ResponseTemplate {
        let body: Value = request.body_json().unwrap_or(Value::Null);
        let turns = body["messages"].as_array().map_or(0, Vec::len);
        let has_quote = body["tools"].as_array().into_iter().flatten().any(|t| t["function"]["name"] == "stock_quote");
        let keywords = turns == 2 && body.get("tools").is_none() && body["max_tokens"] == 32;
        let message = match turns {
            2 if keywords => json!({"role": "assistant", "content": "stock price quote"}),
            1 => {
                json!({"role": "assistant", "content": null, "tool_calls": [{"id": "a", "type": "function", "function": {"name": "tool_search", "arguments": "{\"query\":\"stock price\"}"}}]})
            }
            3 if has_quote => {
                json!({"role": "assistant", "content": null, "tool_calls": [{"id": "b", "type": "function", "function": {"name": "stock_quote", "arguments": "{\"symbol\":\"ACME\"}"}}]})
            }
            _ => json!({"role": "assistant", "content": "ACME is at its latest price."}),
        };
        ResponseTemplate::new(200).set_body_json(
            json!({"choices": [{"message": message}], "usage": {"prompt_tokens": 100 * turns, "completion_tokens": 5}}),
        )
    }
}

#[tokio::test]
async fn an_agent_runs_the_spec_task_against_a_chat_completions_server() {
    let server = MockServer::start().await;
    Mock::given(method("POST")).respond_with(SpecTask).mount(&server).await;
    let model = OpenAiCompatible::local(format!("{}/v1", server.uri()), "local").expect("client");
    let outcome = Agent::new(Arc::new(catalogue::registry()), Arc::new(model))
        .run(vec![Message::user("What is ACME at?")])
        .await
        .expect("runs");
    assert_eq!(outcome.answer, "ACME is at its latest price.");
    assert_eq!(outcome.turns, 3);
    // One request per turn, nothing else: the turns' requests hold one, three and five messages.
    assert_eq!(outcome.usage.prompt_tokens, 100 + 300 + 500);
    assert_eq!(outcome.usage.completion_tokens, 3 * 5);
    let requests = server.received_requests().await.unwrap_or_default();
    assert_eq!(requests.len(), 3, "exactly one model request per turn");
}

#[tokio::test]
async fn a_provider_that_hangs_times_out_with_a_clear_error_and_no_secret() {
    let server = MockServer::start().await;
    Mock::given(method("POST"))
        .respond_with(ResponseTemplate::new(200).set_body_json(openai_tool_call()).set_delay(Duration::from_secs(3)))
        .mount(&server)
        .await;
    let retry = Retry::default()
        .with_max_retries(1)
        .with_base_delay(Duration::from_millis(10))
        .with_max_delay(Duration::from_millis(10));
    let options = HttpOptions::default().with_timeout(Duration::from_millis(200)).with_retry(retry);
    let client =
        OpenAiCompatible::new(format!("{}/v1", server.uri()), "m", options).expect("client").with_api_key("sk-hidden");
    let started = std::time::Instant::now();
    let err = client.complete(&request()).await.expect_err("times out");
    assert!(matches!(&err, ModelError::Transport(message) if message.starts_with("timed out")), "{err}");
    assert!(!err.to_string().contains("sk-hidden"));
    assert!(started.elapsed() < Duration::from_secs(3), "two attempts of 200 ms, not the server's 3 s");
    assert_eq!(server.received_requests().await.map_or(0, |r| r.len()), 2, "retried once");

    // A local server's timed-out request is not sent again: it is still computing the first.
    let local = HttpOptions::local().with_timeout(Duration::from_millis(200));
    let client = OpenAiCompatible::new(format!("{}/v1", server.uri()), "m", local).expect("client");
    let err = client.complete(&request()).await.expect_err("times out");
    assert!(matches!(&err, ModelError::Transport(message) if message.starts_with("timed out")), "{err}");
    assert_eq!(server.received_requests().await.map_or(0, |r| r.len()), 3, "one more request, no retry");
}

#[tokio::test]
async fn a_response_body_past_the_cap_is_refused_as_it_is_read() {
    let server = MockServer::start().await;
    let padding = "x".repeat(64 * 1024);
    let body = json!({
        "id": "chatcmpl-1", "object": "chat.completion", "model": "m",
        "choices": [{"index": 0, "message": {"role": "assistant", "content": padding}, "finish_reason": "stop"}],
    });
    Mock::given(method("POST"))
        .and(path("/v1/chat/completions"))
        .respond_with(ResponseTemplate::new(200).set_body_json(body))
        .mount(&server)
        .await;
    let client = OpenAiCompatible::new(format!("{}/v1", server.uri()), "m", fast()).expect("client");
    let capped = request().with_max_response_bytes(Some(16 * 1024));
    let err = client.complete(&capped).await.expect_err("too large");
    assert!(matches!(err, ModelError::ResponseTooLarge { limit: 16_384 }), "{err}");
    assert!(err.to_string().contains("max_response_bytes"), "{err}");
    // Under the cap (the run's default among them) the same answer reads.
    let roomy = request().with_max_response_bytes(Some(1 << 20));
    assert_eq!(client.complete(&roomy).await.expect("reads").content.len(), 64 * 1024);
    assert_eq!(server.received_requests().await.map_or(0, |r| r.len()), 2, "a refused body is not retried");
}

#[tokio::test]
async fn a_streamed_200_mb_body_is_refused_once_it_passes_the_cap_never_read_whole() {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    // A server that answers 200 OK with a chunked body and no Content-Length: 200 MB of JSON
    // string, written as long as the client reads.
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.expect("binds");
    let address = listener.local_addr().expect("address");
    let server = tokio::spawn(async move {
        let (mut socket, _) = listener.accept().await.expect("accepts");
        let mut request = vec![0_u8; 64 * 1024];
        let _ = socket.read(&mut request).await;
        let head = "HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ntransfer-encoding: chunked\r\n\r\n";
        let mut written = 0_usize;
        if socket.write_all(head.as_bytes()).await.is_err() {
            return written;
        }
        let chunk = "x".repeat(1 << 20);
        let framed = format!("{:x}\r\n{chunk}\r\n", chunk.len());
        let opening = r#"{"choices": [{"message": {"role": "assistant", "content": ""#;
        let first = format!("{:x}\r\n{opening}\r\n", opening.len());
        if socket.write_all(first.as_bytes()).await.is_err() {
            return written;
        }
        while written < 200 << 20 {
            if socket.write_all(framed.as_bytes()).await.is_err() {
                break;
            }
            written += chunk.len();
        }
        written
    });
    let client = OpenAiCompatible::new(format!("http://{address}/v1"), "m", fast()).expect("client");
    let err = client.complete(&request()).await.expect_err("too large");
    assert!(matches!(err, ModelError::ResponseTooLarge { limit } if limit == 8 << 20), "{err}");
    drop(client);
    let written = server.await.expect("server ran");
    assert!(written < 100 << 20, "the client stopped reading: the server wrote {} MB", written >> 20);
}
