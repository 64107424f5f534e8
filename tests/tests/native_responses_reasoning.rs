//! A reasoning model's `reasoning` items through the OpenAI Responses client, against a local
//! server on 127.0.0.1: asked for statelessly (`store: false`, `include:
//! ["reasoning.encrypted_content"]`), kept in the conversation out of the answer's text, and
//! handed back in the next request's `input`, in order, before the items they preceded — whole
//! or streamed, with a hosted search between them. Other providers pass over them. No test
//! touches the network.
//!
//! Payloads: the reasoning item is the API reference's output item `{"type": "reasoning", "id":
//! "rs_…", "summary": [{"type": "summary_text", "text"}], "encrypted_content"}` (its
//! `encrypted_content` "populated when a response is generated with
//! `reasoning.encrypted_content` in the `include` parameter"); the `include` parameter and
//! OpenAI's cookbook "Better performance from reasoning models using the Responses API" say to
//! pass the items back in `input` when the API is used statelessly. The rest of each response
//! (`message`, `function_call`, the hosted search's items, the event stream) comes from
//! `tinytools_examples::wire::responses`.

use std::sync::Arc;
use std::time::Duration;

use serde_json::{Value, json};
use tinytools::model::{Message, ModelRequest, NativeSearch, ProviderItems};
use tinytools::providers::{Anthropic, HttpOptions, OpenAiCompatible, OpenAiResponses};
use tinytools::run::{Agent, RunOutcome, RunPolicy, StopReason};
use tinytools::{DiscoveryMode, ToolDiscoveryPolicy, ToolRegistry, tool};
use tinytools_examples::catalogue;
use tinytools_examples::wire::{self, Recorded, Replay, Reply, Responder, responses};

/// Fetch the latest price for a ticker symbol.
#[tool]
async fn quote(
    /** Ticker symbol. */
    symbol: String,
) -> String {
    format!("{symbol} 12.50")
}

/// A reasoning item with its summary and encrypted content.
fn reasoning(id: &str, summary: &str) -> Value {
    json!({"type": "reasoning", "id": id, "summary": [{"type": "summary_text", "text": summary}],
           "encrypted_content": format!("gAAAAB{id}-opaque==")})
}

fn reply(response: Value, stream: bool) -> Reply {
    if stream {
        Reply::Sse { events: responses::events(&response), pace: Duration::ZERO }
    } else {
        Reply::Json(response)
    }
}

fn client(replay: &Replay) -> OpenAiResponses {
    OpenAiResponses::new(format!("{}/v1", replay.base_url), "gpt-5.4", HttpOptions::default()).expect("client")
}

async fn run(agent: &Agent, stream: bool) -> RunOutcome {
    let messages = vec![Message::user("What is ACME at?")];
    if stream { agent.stream(messages).finish().await.expect("runs") } else { agent.run(messages).await.expect("runs") }
}

fn types(items: &[Value]) -> Vec<&str> {
    items.iter().map(|item| item["type"].as_str().or_else(|| item["role"].as_str()).unwrap_or("?")).collect()
}

#[tokio::test]
async fn reasoning_items_go_back_in_order_before_the_call_they_preceded() {
    let mut transcripts = Vec::new();
    for stream in [false, true] {
        let script: Arc<Responder> = Arc::new(move |_: &Recorded, before: &[Recorded]| {
            let call = responses::function_call("call_1", "quote", None, &json!({"symbol": "ACME"}));
            let output = match before.len() {
                0 => vec![reasoning("rs_1", "The user wants a price: call quote."), call],
                _ => vec![reasoning("rs_2", "Report the price."), responses::message("msg_1", "ACME trades at 12.50.")],
            };
            reply(responses::response("resp_1", output, responses::usage(80, 0, 30)), stream)
        });
        let replay = wire::serve(script).await.expect("serves");
        let mut registry = ToolRegistry::new();
        registry.register(Quote).expect("registers");
        let agent = Agent::new(Arc::new(registry), Arc::new(client(&replay)));
        let outcome = run(&agent, stream).await;
        assert_eq!((outcome.stop, outcome.answer.as_str()), (StopReason::Answered, "ACME trades at 12.50."));

        let requests = replay.requests();
        assert_eq!(requests.len(), 2);
        for request in &requests {
            assert_eq!(request.body["store"], false);
            assert_eq!(request.body["include"], json!(["reasoning.encrypted_content"]));
        }
        let input = requests[1].body["input"].as_array().cloned().expect("input");
        assert_eq!(types(&input), ["user", "reasoning", "function_call", "function_call_output"]);
        assert_eq!(input[1], reasoning("rs_1", "The user wants a price: call quote."), "handed back as it came");
        assert_eq!(input[2]["call_id"], "call_1");

        // Kept in the conversation just before its turn, never as its text.
        let messages = &outcome.transcript.messages;
        let kinds: Vec<&str> = messages
            .iter()
            .map(|m| match m {
                Message::User { .. } => "user",
                Message::ProviderItems(_) => "items",
                Message::Assistant { .. } => "assistant",
                Message::Tool { .. } => "tool",
                _ => "other",
            })
            .collect();
        assert_eq!(kinds, ["user", "items", "assistant", "tool", "items", "assistant"]);
        let Message::ProviderItems(items) = &messages[1] else { unreachable!() };
        assert!(items.is_from("openai:responses"));
        assert!(
            messages.iter().all(|m| !matches!(m, Message::Assistant { content, .. } if content.contains("call quote")))
        );
        transcripts.push(outcome.transcript.messages);
    }
    assert_eq!(transcripts[0], transcripts[1], "streamed or not, the same conversation");
}

#[tokio::test]
async fn reasoning_before_a_hosted_search_goes_back_with_it_and_the_rest_before_the_call() {
    for stream in [false, true] {
        let script: Arc<Responder> = Arc::new(move |request: &Recorded, before: &[Recorded]| {
            let output = if before.is_empty() {
                let [searched, loaded] = responses::hosted_search(&request.body, &["stock_quote"]);
                let namespace = responses::namespace_of(&request.body, "stock_quote");
                let call =
                    responses::function_call("call_1", "stock_quote", namespace.as_deref(), &json!({"symbol": "ACME"}));
                vec![reasoning("rs_1", "Find a quote tool."), searched, loaded, reasoning("rs_2", "Call it."), call]
            } else {
                vec![responses::message("msg_1", "ACME trades at 512.34.")]
            };
            reply(responses::response("resp_1", output, responses::usage(200, 0, 40)), stream)
        });
        let replay = wire::serve(script).await.expect("serves");
        let discovery = ToolDiscoveryPolicy::default().with_mode(DiscoveryMode::ProviderNative(NativeSearch::Provider));
        let agent = Agent::new(Arc::new(catalogue::registry()), Arc::new(client(&replay)))
            .with_policy(RunPolicy::default().with_discovery(discovery));
        let outcome = run(&agent, stream).await;
        assert_eq!(outcome.stop, StopReason::Answered);
        let first = replay.requests()[0].body["input"].as_array().map_or(0, Vec::len);
        let input = replay.requests()[1].body["input"].as_array().cloned().expect("input");
        assert_eq!(
            types(&input[first..]),
            [
                "reasoning",
                "tool_search_call",
                "tool_search_output",
                "reasoning",
                "function_call",
                "function_call_output"
            ],
            "the output's order"
        );
        assert_eq!(input[first], reasoning("rs_1", "Find a quote tool."));
        assert_eq!(input[first + 3], reasoning("rs_2", "Call it."));
    }
}

#[tokio::test]
async fn without_encrypted_reasoning_neither_field_is_sent_and_other_providers_pass_over_the_items() {
    let items = ProviderItems::new("openai:responses", vec![reasoning("rs_1", "secret plan")]);
    let request = ModelRequest::new(
        vec![
            Message::user("What is ACME at?"),
            Message::ProviderItems(items),
            Message::Assistant { content: "ACME trades at 12.50.".into(), tool_calls: Vec::new() },
        ],
        Vec::new(),
    );
    let gpt = OpenAiResponses::openai("sk-test", "gpt-5.4").expect("client");
    let body = gpt.clone().with_encrypted_reasoning(false).body(&request);
    assert!(body.get("store").is_none() && body.get("include").is_none(), "{body}");
    assert_eq!(types(body["input"].as_array().expect("input")), ["user", "reasoning", "assistant"]);
    let claude = Anthropic::new("sk-ant-test", "claude-sonnet-4-5").expect("client").body(&request);
    let chat = OpenAiCompatible::local("http://127.0.0.1:9", "qwen").expect("client").body(&request);
    for (provider, body) in [("anthropic", claude), ("chat completions", chat)] {
        let text = body.to_string();
        assert!(!text.contains("rs_1") && !text.contains("secret plan"), "{provider}: {text}");
        assert!(text.contains("ACME trades at 12.50."), "{provider}: {text}");
    }
}
