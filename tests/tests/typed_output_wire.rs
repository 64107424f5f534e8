//! Typed output on each provider's wire, against a local server on 127.0.0.1 answering as the
//! provider does: the schema in the provider's own structured-output field, in strict form
//! (objects closed, every property required, the optional ones nullable), for a model whose
//! family takes it; in words for one that does not. No test touches the network.
//!
//! Field shapes: Chat Completions' `response_format: {"type": "json_schema", "json_schema":
//! {"name", "strict", "schema"}}` and the Responses API's `text: {"format": {"type":
//! "json_schema", "name", "strict", "schema"}}` (OpenAI's Structured Outputs guide); Anthropic's
//! generally available `output_config: {"format": {"type": "json_schema", "schema"}}` (its
//! Structured outputs page), with no beta header.

use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::{Value, json};
use tinytools::model::Message;
use tinytools::providers::{Anthropic, HttpOptions, OpenAiCompatible, OpenAiResponses};
use tinytools::run::Agent;
use wiremock::matchers::{method, path};
use wiremock::{Mock, MockServer, ResponseTemplate};

/// A contact found in a text.
#[derive(Debug, Deserialize, JsonSchema, PartialEq)]
struct Contact {
    /// Full name.
    name: String,
    /// Age in years.
    age: u32,
    /// Email address, when the text gives one.
    email: Option<String>,
}

const ANSWER: &str = r#"{"name":"Ada Lovelace","age":36,"email":null}"#;

fn ada() -> Contact {
    Contact { name: "Ada Lovelace".into(), age: 36, email: None }
}

async fn server(route: &str, answer: Value) -> MockServer {
    let server = MockServer::start().await;
    Mock::given(method("POST"))
        .and(path(route))
        .respond_with(ResponseTemplate::new(200).set_body_json(answer))
        .mount(&server)
        .await;
    server
}

async fn sent(server: &MockServer) -> Vec<Value> {
    let requests = server.received_requests().await.unwrap_or_default();
    requests.iter().filter_map(|request| serde_json::from_slice(&request.body).ok()).collect()
}

/// The strict form every provider gets: closed, all required, `email` nullable.
fn assert_strict(schema: &Value) {
    assert_eq!(schema["type"], "object", "{schema}");
    assert_eq!(schema["additionalProperties"], false, "{schema}");
    assert_eq!(schema["required"], json!(["name", "age", "email"]), "{schema}");
    assert!(schema["properties"]["email"]["type"].as_array().is_some_and(|t| t.contains(&json!("null"))), "{schema}");
}

fn system_text(messages: &Value) -> String {
    messages
        .as_array()
        .into_iter()
        .flatten()
        .filter(|message| message["role"] == "system")
        .filter_map(|message| message["content"].as_str())
        .collect()
}

/// Anthropic's `system`: a string, or text blocks (with cache breakpoints).
fn anthropic_system(body: &Value) -> String {
    match &body["system"] {
        Value::String(text) => text.clone(),
        Value::Array(blocks) => blocks.iter().filter_map(|block| block["text"].as_str()).collect(),
        _ => String::new(),
    }
}

fn chat_answer(model: &str) -> Value {
    json!({
        "id": "chatcmpl-B9MHDbslfkBeAs8l4bebGdFOJ6PeG", "object": "chat.completion", "created": 1_741_570_283, "model": model,
        "choices": [{"index": 0, "finish_reason": "stop", "logprobs": null,
                     "message": {"role": "assistant", "content": ANSWER, "refusal": null, "annotations": []}}],
        "usage": {"prompt_tokens": 81, "completion_tokens": 12, "total_tokens": 93,
                  "prompt_tokens_details": {"cached_tokens": 0, "audio_tokens": 0}},
        "service_tier": "default", "system_fingerprint": "fp_fc9f1d7035"
    })
}

#[tokio::test]
async fn chat_completions_sends_response_format_to_an_openai_family() {
    let server = server("/v1/chat/completions", chat_answer("gpt-4.1-mini-2025-04-14")).await;
    let client = OpenAiCompatible::new(format!("{}/v1", server.uri()), "gpt-4.1-mini", HttpOptions::default())
        .expect("client")
        .with_api_key("sk-test");
    let agent = Agent::builder(client).instructions("Extract the contact.").build().expect("builds");
    let typed = agent.run_typed::<Contact>(vec![Message::user("Ada Lovelace, 36")]).await.expect("typed");
    assert_eq!(typed.output, ada());
    let body = &sent(&server).await[0];
    let format = &body["response_format"];
    assert_eq!(
        (format["type"].as_str(), format["json_schema"]["name"].as_str()),
        (Some("json_schema"), Some("Contact"))
    );
    assert_eq!(format["json_schema"]["strict"], true);
    assert_strict(&format["json_schema"]["schema"]);
    assert_eq!(system_text(&body["messages"]), "Extract the contact.", "no schema in words when it goes natively");
}

#[tokio::test]
async fn a_local_model_is_asked_in_words_and_sent_no_response_format() {
    let server = server("/v1/chat/completions", chat_answer("qwen2.5-coder-1.5b")).await;
    let client = OpenAiCompatible::local(format!("{}/v1", server.uri()), "qwen2.5-coder-1.5b").expect("client");
    let agent = Agent::builder(client).build().expect("builds");
    let typed = agent.run_typed::<Contact>(vec![Message::user("Ada Lovelace, 36")]).await.expect("typed");
    assert_eq!(typed.output, ada());
    let body = &sent(&server).await[0];
    assert!(body.get("response_format").is_none(), "{body}");
    assert!(system_text(&body["messages"]).contains("JSON Schema"), "{body}");
}

#[tokio::test]
async fn responses_sends_text_format() {
    let answer = json!({
        "id": "resp_67ccd3a9da748190baa7f1570fe91ac604becb25c45c1d41", "object": "response", "created_at": 1_741_476_777,
        "status": "completed", "error": null, "incomplete_details": null, "model": "gpt-4.1-2025-04-14",
        "output": [{"id": "msg_67ccd3acc8d48190a77525dc6de64b4104becb25c45c1d41", "type": "message", "status": "completed",
                    "role": "assistant", "content": [{"type": "output_text", "text": ANSWER, "annotations": []}]}],
        "usage": {"input_tokens": 75, "input_tokens_details": {"cached_tokens": 0}, "output_tokens": 14,
                  "output_tokens_details": {"reasoning_tokens": 0}, "total_tokens": 89}
    });
    let server = server("/v1/responses", answer).await;
    let client =
        OpenAiResponses::new(format!("{}/v1", server.uri()), "gpt-4.1", HttpOptions::default()).expect("client");
    let agent = Agent::builder(client).instructions("Extract the contact.").build().expect("builds");
    let typed = agent.run_typed::<Contact>(vec![Message::user("Ada Lovelace, 36")]).await.expect("typed");
    assert_eq!(typed.output, ada());
    let body = &sent(&server).await[0];
    let format = &body["text"]["format"];
    assert_eq!(
        (format["type"].as_str(), format["name"].as_str(), format["strict"].as_bool()),
        (Some("json_schema"), Some("Contact"), Some(true))
    );
    assert_strict(&format["schema"]);
}

#[tokio::test]
async fn anthropic_sends_output_config_without_a_beta_header() {
    let answer = json!({
        "id": "msg_01XFDUDYJgAACzvnptvVoYEL", "type": "message", "role": "assistant", "model": "claude-sonnet-4-5-20250929",
        "content": [{"type": "text", "text": ANSWER}], "stop_reason": "end_turn", "stop_sequence": null,
        "usage": {"input_tokens": 180, "output_tokens": 20, "cache_creation_input_tokens": 0, "cache_read_input_tokens": 0}
    });
    let server = server("/v1/messages", answer).await;
    let client = Anthropic::with_base_url(server.uri(), "sk-ant-test", "claude-sonnet-4-5", HttpOptions::default())
        .expect("client");
    let agent = Agent::builder(client).instructions("Extract the contact.").build().expect("builds");
    let typed = agent.run_typed::<Contact>(vec![Message::user("Ada Lovelace, 36")]).await.expect("typed");
    assert_eq!(typed.output, ada());
    let requests = server.received_requests().await.unwrap_or_default();
    assert!(requests[0].headers.get("anthropic-beta").is_none(), "structured output is generally available");
    let body: Value = serde_json::from_slice(&requests[0].body).expect("json body");
    assert_eq!(body["output_config"]["format"]["type"], "json_schema");
    assert_strict(&body["output_config"]["format"]["schema"]);
    assert_eq!(anthropic_system(&body), "Extract the contact.", "no schema in words when it goes natively");
}

#[tokio::test]
async fn an_anthropic_model_without_structured_output_is_asked_in_words() {
    let answer = json!({
        "id": "msg_01", "type": "message", "role": "assistant", "model": "claude-3-5-haiku-20241022",
        "content": [{"type": "text", "text": ANSWER}], "stop_reason": "end_turn", "stop_sequence": null,
        "usage": {"input_tokens": 180, "output_tokens": 20}
    });
    let server = server("/v1/messages", answer).await;
    let client =
        Anthropic::with_base_url(server.uri(), "sk-ant-test", "claude-3-5-haiku-20241022", HttpOptions::default())
            .expect("client");
    let agent = Agent::builder(client).build().expect("builds");
    agent.run_typed::<Contact>(vec![Message::user("Ada Lovelace, 36")]).await.expect("typed");
    let body = &sent(&server).await[0];
    assert!(body.get("output_config").is_none(), "{body}");
    assert!(anthropic_system(body).contains("JSON Schema"), "{body}");
}
