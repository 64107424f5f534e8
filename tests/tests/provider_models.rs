//! The models users have (issue 65, point 4): each client asks a model only for what its family
//! can do, against a local server on 127.0.0.1 that answers as the provider does when asked
//! for more — a 400. No test touches the network.
//!
//! - Encrypted reasoning (point 1): `include: ["reasoning.encrypted_content"]` goes only to a
//!   reasoning model; gpt-4o and gpt-4.1 answer it with 400 "Encrypted content is not supported
//!   with this model." (the replay's refusal, in the API's error shape `{"error": {"message",
//!   "type", "param", "code"}}`). The Vercel AI SDK's OpenAI provider adds the field only for
//!   reasoning models (`store === false && isReasoningModel`), o-series and GPT-5.
//! - Native deferral (point 2): OpenAI's Tool search guide says "Only gpt-5.4 and later models
//!   support tool_search"; Anthropic's Tool search tool page lists the models it supports
//!   (Claude Sonnet 4.5, Haiku 4.5, Opus 4.5 and later). A run asking for provider-native
//!   deferral with another model uses tinytools' own `tool_search` instead of a 400, and a
//!   host's `with_profile` says otherwise.
//! - The beta header (point 6): tool search is generally available (the page's `status:
//!   stable`, the tool types in the Python SDK's non-beta `types`, and
//!   `advanced-tool-use-2025-11-20` gone from its list of betas); the replay refuses any
//!   `anthropic-beta` as the API refuses a value it does not know.
//!
//! Payloads: the Responses output items carry their ids and a call its `caller` (the Python
//! SDK's `ResponseFunctionToolCall`: `id`, `call_id`, `caller: {"type": "direct"}`); the
//! Anthropic request is the Tool search tool page's example (claude-opus-4-6, a BM25 search
//! tool, deferred tools).

use std::sync::Arc;

use serde_json::{Value, json};
use tinytools::model::{ChatModel, Message, ModelError, NativeSearch};
use tinytools::providers::{Anthropic, HttpOptions, OpenAiResponses};
use tinytools::run::{Agent, RunOutcome, RunPolicy, StopReason};
use tinytools::{DiscoveryMode, ToolDiscoveryPolicy, ToolRegistry, tool};
use tinytools_examples::catalogue;
use tinytools_examples::wire::{self, Recorded, Replay, Reply, Responder, TASK, responses};

/// Fetch the latest price for a ticker symbol.
#[tool]
async fn quote(
    /** Ticker symbol. */
    symbol: String,
) -> String {
    format!("{symbol} 12.50")
}

fn native() -> RunPolicy {
    let discovery = ToolDiscoveryPolicy::default().with_mode(DiscoveryMode::ProviderNative(NativeSearch::Provider));
    RunPolicy::default().with_discovery(discovery)
}

fn openai_error(message: &str, param: &str) -> Reply {
    Reply::Error {
        status: 400,
        body: json!({"error": {"message": message, "type": "invalid_request_error", "param": param, "code": null}}),
    }
}

fn anthropic_error(message: &str) -> Reply {
    Reply::Error {
        status: 400,
        body: json!({"type": "error", "error": {"type": "invalid_request_error", "message": message}}),
    }
}

/// A function call as the Responses API writes it, with its item id and caller.
fn function_call(call_id: &str, name: &str, arguments: &Value) -> Value {
    json!({"type": "function_call", "id": format!("fc_{call_id}"), "call_id": call_id, "name": name,
           "arguments": arguments.to_string(), "caller": {"type": "direct"}, "status": "completed"})
}

fn responses_client(replay: &Replay, model: &str) -> OpenAiResponses {
    OpenAiResponses::new(format!("{}/v1", replay.base_url), model, HttpOptions::default()).expect("client")
}

fn anthropic_client(replay: &Replay, model: &str) -> Anthropic {
    Anthropic::with_base_url(&replay.base_url, "sk-ant-test", model, HttpOptions::default()).expect("client")
}

fn asks_for_encrypted_reasoning(request: &Recorded) -> bool {
    request.body["include"].as_array().is_some_and(|include| include.iter().any(|i| i == "reasoning.encrypted_content"))
}

/// The Responses API for `model`: encrypted reasoning refused unless `reasoning`; a call of
/// `quote`, then the answer.
fn reasoning_gate(reasoning: bool) -> Arc<Responder> {
    Arc::new(move |request: &Recorded, before: &[Recorded]| {
        if asks_for_encrypted_reasoning(request) && !reasoning {
            return openai_error("Encrypted content is not supported with this model.", "include");
        }
        let output = match before.len() {
            0 => vec![function_call("call_q1", "quote", &json!({"symbol": "ACME"}))],
            _ => vec![responses::message("msg_q2", "ACME trades at 12.50.")],
        };
        Reply::Json(responses::response("resp_q", output, responses::usage(60, 0, 12)))
    })
}

async fn quote_run(model: &str, reasoning: bool) -> (Replay, Result<RunOutcome, String>) {
    let replay = wire::serve(reasoning_gate(reasoning)).await.expect("serves");
    let mut registry = ToolRegistry::new();
    registry.register(Quote).expect("registers");
    let agent = Agent::new(Arc::new(registry), Arc::new(responses_client(&replay, model)));
    let outcome = agent.run(vec![Message::user("What is ACME at?")]).await.map_err(|error| error.to_string());
    (replay, outcome)
}

#[tokio::test]
async fn only_a_reasoning_model_is_asked_for_encrypted_reasoning() {
    for model in ["gpt-4o", "gpt-4.1", "gpt-4.1-mini-2025-04-14", "gpt-5-chat-latest"] {
        let (replay, outcome) = quote_run(model, false).await;
        let outcome = outcome.unwrap_or_else(|error| panic!("{model}: {error}"));
        assert_eq!((outcome.stop, outcome.answer.as_str()), (StopReason::Answered, "ACME trades at 12.50."), "{model}");
        for request in replay.requests() {
            assert!(!asks_for_encrypted_reasoning(&request), "{model}: {}", request.body);
            assert_eq!(request.body["store"], false, "{model}: still stateless");
        }
    }
    for model in ["gpt-5.4", "gpt-5-mini", "o4-mini", "o3-2025-04-16"] {
        let (replay, outcome) = quote_run(model, true).await;
        assert_eq!(outcome.map(|o| o.stop), Ok(StopReason::Answered), "{model}");
        assert!(replay.requests().iter().all(asks_for_encrypted_reasoning), "{model}");
    }
}

/// The Responses API for a model without tool search: any `tool_search` tool or deferred
/// declaration is refused; otherwise the bridge's scripted task.
fn without_openai_tool_search(model: &'static str) -> Arc<Responder> {
    let script = wire::responses_script(DiscoveryMode::Bridge, None);
    Arc::new(move |request: &Recorded, before: &[Recorded]| {
        let text = request.body["tools"].to_string();
        if text.contains(r#""type":"tool_search""#) || text.contains("defer_loading") || text.contains("namespace") {
            return openai_error(&format!("Tool 'tool_search' is not supported with {model}."), "tools");
        }
        script(request, before)
    })
}

/// Anthropic's API for a model without tool search, likewise.
fn without_anthropic_tool_search(model: &'static str) -> Arc<Responder> {
    let script = wire::anthropic_script(DiscoveryMode::Bridge, None);
    Arc::new(move |request: &Recorded, before: &[Recorded]| {
        let text = request.body["tools"].to_string();
        if text.contains("tool_search_tool_") || text.contains("defer_loading") {
            return anthropic_error(&format!("tool search is not supported by the model {model}"));
        }
        script(request, before)
    })
}

fn searched_with_the_bridge(outcome: RunOutcome, requests: &[Recorded]) {
    assert_eq!((outcome.stop, outcome.answer.as_str()), (StopReason::Answered, wire::ANSWER));
    let first = requests[0].body["tools"].as_array().cloned().unwrap_or_default();
    assert!(first.iter().any(|tool| tool["name"] == "tool_search"), "tinytools' own tool_search is offered");
    assert!(requests.iter().all(|request| !request.body["tools"].to_string().contains("defer_loading")));
}

#[tokio::test]
async fn a_model_without_tool_search_gets_the_bridge_instead_of_a_400() {
    for model in ["gpt-4.1", "gpt-5.2", "o3"] {
        let replay = wire::serve(without_openai_tool_search(model)).await.expect("serves");
        let gpt = Arc::new(responses_client(&replay, model));
        let agent = Agent::new(Arc::new(catalogue::registry()), gpt.clone()).with_policy(native());
        let outcome = agent.run(vec![Message::user(TASK)]).await.unwrap_or_else(|error| panic!("{model}: {error}"));
        searched_with_the_bridge(outcome, &replay.requests());
        assert!(!gpt.profile().native_deferral, "{model}");
    }
    for model in ["claude-opus-4-1-20250805", "claude-sonnet-4-20250514", "claude-3-7-sonnet-20250219"] {
        let replay = wire::serve(without_anthropic_tool_search(model)).await.expect("serves");
        let claude = Arc::new(anthropic_client(&replay, model));
        let agent = Agent::new(Arc::new(catalogue::registry()), claude.clone()).with_policy(native());
        let outcome = agent.run(vec![Message::user(TASK)]).await.unwrap_or_else(|error| panic!("{model}: {error}"));
        searched_with_the_bridge(outcome, &replay.requests());
        assert!(!claude.profile().native_deferral, "{model}");
    }
}

#[tokio::test]
async fn the_host_overrides_what_its_family_says() {
    // A fine-tune of a model with tool search: no family the table knows, so the bridge, until
    // the host says what it is.
    let model = "ft:gpt-5.4:acme::t00ls";
    let mode = DiscoveryMode::ProviderNative(NativeSearch::Provider);
    let replay = wire::serve(wire::responses_script(mode, None)).await.expect("serves");
    let gpt = responses_client(&replay, model);
    assert!(!gpt.profile().native_deferral && !gpt.profile().reasoning_items);
    let gpt = gpt.with_profile(OpenAiResponses::profile_for("gpt-5.4"));
    let agent = Agent::new(Arc::new(catalogue::registry()), Arc::new(gpt)).with_policy(native());
    let outcome = agent.run(vec![Message::user(TASK)]).await.expect("runs");
    assert_eq!(outcome.stop, StopReason::Answered);
    let first = &replay.requests()[0];
    assert!(first.body["tools"].as_array().is_some_and(|tools| tools.contains(&json!({"type": "tool_search"}))));
    assert!(asks_for_encrypted_reasoning(first));

    // And the other way: a supported model kept on the bridge.
    let replay = wire::serve(without_anthropic_tool_search("claude-sonnet-4-5")).await.expect("serves");
    let claude = anthropic_client(&replay, "claude-sonnet-4-5");
    assert!(claude.profile().native_deferral);
    let claude = claude.with_profile(Anthropic::profile_for("claude-sonnet-4-5").with_native_deferral(false));
    let agent = Agent::new(Arc::new(catalogue::registry()), Arc::new(claude)).with_policy(native());
    let outcome = agent.run(vec![Message::user(TASK)]).await.expect("runs");
    searched_with_the_bridge(outcome, &replay.requests());
}

/// Anthropic's API refusing any beta it does not know, as it refused a stale one.
fn no_beta_header() -> Arc<Responder> {
    let script = wire::anthropic_script(DiscoveryMode::ProviderNative(NativeSearch::Provider), None);
    Arc::new(move |request: &Recorded, before: &[Recorded]| match request.header("anthropic-beta") {
        Some(beta) => anthropic_error(&format!(
            "Unexpected value(s) `{beta}` for the `anthropic-beta` header. Please consult our documentation at docs.anthropic.com or try again without the header."
        )),
        None => script(request, before),
    })
}

#[tokio::test]
async fn generally_available_tool_search_is_asked_for_without_a_beta_header() {
    let replay = wire::serve(no_beta_header()).await.expect("serves");
    let claude = anthropic_client(&replay, "claude-opus-4-6");
    let agent = Agent::new(Arc::new(catalogue::registry()), Arc::new(claude)).with_policy(native());
    let outcome = agent.run(vec![Message::user(TASK)]).await.expect("runs without a beta header");
    assert_eq!((outcome.stop, outcome.answer.as_str()), (StopReason::Answered, wire::ANSWER));
    let requests = replay.requests();
    assert_eq!(requests.len(), 4);
    for request in &requests {
        assert_eq!(request.header("anthropic-beta"), None);
        assert_eq!(request.header("anthropic-version"), Some("2023-06-01"));
    }
    let tools = requests[0].body["tools"].as_array().cloned().unwrap_or_default();
    assert_eq!(tools[0], json!({"type": "tool_search_tool_bm25_20251119", "name": "tool_search_tool_bm25"}));
    assert!(tools.iter().any(|tool| tool["defer_loading"] == true));
}

#[tokio::test]
async fn a_refusal_is_reported_as_the_providers_400() {
    // What a host sees when it overrides a family wrongly: the provider's words, not a retry.
    let replay = wire::serve(reasoning_gate(false)).await.expect("serves");
    let gpt = responses_client(&replay, "gpt-4o").with_profile(OpenAiResponses::profile_for("o3"));
    let request = tinytools::model::ModelRequest::new(vec![Message::user("Hi")], Vec::new());
    let error = gpt.complete(&request).await.expect_err("refused");
    assert!(
        matches!(&error, ModelError::Provider { status: 400, message } if message.contains("Encrypted content is not supported")),
        "{error:?}"
    );
    assert_eq!(replay.requests().len(), 1, "a 400 is not retried");
}
