//! A call an aid took for a reply is the aid's (issue 64): the transcript keeps it as a
//! `Message::AidCall` after the model's reply (whose own calls stay empty), hosts see it as
//! such, and every provider is sent it as a note of the run in a user turn, never as a call
//! the model made.

use std::sync::Arc;
use std::time::Duration;

use serde_json::{Value, json};
use tinytools::model::{ChatModel, Message, ModelRequest, ModelResponse, ToolCall};
use tinytools::providers::{Anthropic, HttpOptions, OpenAiCompatible, OpenAiResponses, Retry};
use tinytools::run::aids::{Aid, Aids, ReplyAction, RunView};
use tinytools::run::{Agent, AidAction, RunEvent, RunPolicy};
use tinytools::testkit::ScriptedModel;
use tinytools::{ToolRegistry, tool};
use tinytools_integration_tests::Recorder;
use wiremock::matchers::method;
use wiremock::{Mock, MockServer, ResponseTemplate};

/// The weather in a city.
#[tool(read_only)]
async fn weather(
    /// The city.
    city: String,
) -> String {
    format!("21 C in {city}")
}

/// Takes a weather look-up for any reply that names a city without calling a tool.
struct TakeWeather;

#[async_trait::async_trait]
impl Aid for TakeWeather {
    fn name(&self) -> &'static str {
        "take_weather"
    }

    async fn on_reply(&self, view: &RunView<'_>, reply: &str) -> ReplyAction {
        if reply.contains("Lisbon") && view.feedback_sent(self.name()) == 0 && view.turn().0 == 1 {
            return ReplyAction::TakeCall(ToolCall::new("aid_1", "weather", r#"{"city":"Lisbon"}"#));
        }
        ReplyAction::Accept
    }
}

fn the_conversation() -> Vec<Message> {
    vec![
        Message::user("Weather in Lisbon?"),
        Message::Assistant { content: "I will look up Lisbon.".into(), tool_calls: Vec::new() },
        Message::AidCall {
            aid: "take_weather".into(),
            call: ToolCall::new("aid_1", "weather", r#"{"city":"Lisbon"}"#),
        },
        Message::Tool {
            call_id: "aid_1".into(),
            name: "weather".into(),
            content: "21 C in Lisbon".into(),
            is_error: false,
        },
    ]
}

#[tokio::test]
async fn the_transcript_keeps_the_aids_call_as_the_aids() {
    let mut registry = ToolRegistry::new();
    registry.register(Weather).expect("registers");
    let model =
        Arc::new(ScriptedModel::new([ModelResponse::text("I will look up Lisbon."), ModelResponse::text("21 C.")]));
    let events = Arc::new(Recorder::default());
    let agent = Agent::new(Arc::new(registry), model.clone())
        .with_policy(RunPolicy::default().with_aids(Aids::none().with(TakeWeather)))
        .with_events(events.clone());
    let outcome = agent.run(vec![Message::user("Weather in Lisbon?")]).await.expect("the run ends");
    assert_eq!(outcome.answer, "21 C.");
    let messages = &outcome.transcript.messages;
    assert_eq!(messages[1], Message::Assistant { content: "I will look up Lisbon.".into(), tool_calls: Vec::new() });
    let Message::AidCall { aid, call } = &messages[2] else { panic!("{messages:?}") };
    assert_eq!((aid.as_str(), call.name.as_str()), ("take_weather", "weather"));
    assert!(matches!(&messages[3], Message::Tool { call_id, .. } if *call_id == call.id));
    // The next request carries it typed; the model's own reply never gained the call.
    assert_eq!(model.requests()[1].messages[..4], messages[..4]);
    let took = events.events().into_iter().any(|event| {
        matches!(event, RunEvent::AidActed { aid, action: AidAction::TookCall { .. } } if aid == "take_weather")
    });
    assert!(took);
}

/// What a provider client sent for `the_conversation`, read off a local server that refuses it.
async fn sent_by(client: impl FnOnce(&str) -> Box<dyn ChatModel>) -> Value {
    let server = MockServer::start().await;
    Mock::given(method("POST"))
        .respond_with(ResponseTemplate::new(400).set_body_json(json!({"error": {"message": "refused for the test"}})))
        .mount(&server)
        .await;
    let model = client(&server.uri());
    let request = ModelRequest::new(the_conversation(), Vec::new());
    assert!(model.complete(&request).await.is_err());
    let received = server.received_requests().await.unwrap_or_default();
    received.first().and_then(|request| request.body_json().ok()).expect("one JSON request")
}

fn options() -> HttpOptions {
    HttpOptions::default().with_timeout(Duration::from_secs(5)).with_retry(Retry::default().with_max_retries(0))
}

/// The run's note, as every provider must carry it.
fn is_the_note(text: &str) -> bool {
    text.contains("The run called `weather`")
        && text.contains("you did not call it")
        && text.ends_with("21 C in Lisbon")
}

#[tokio::test]
async fn chat_completions_gets_a_user_note_not_a_tool_call() {
    let sent =
        sent_by(|uri| Box::new(OpenAiCompatible::new(format!("{uri}/v1"), "gpt-4.1-mini", options()).expect("client")))
            .await;
    let messages = sent["messages"].as_array().cloned().unwrap_or_default();
    let roles: Vec<&str> = messages.iter().map(|m| m["role"].as_str().unwrap_or("?")).collect();
    assert_eq!(roles, ["user", "assistant", "user"], "{sent}");
    assert!(messages[1].get("tool_calls").is_none());
    assert!(is_the_note(messages[2]["content"].as_str().unwrap_or_default()), "{sent}");
}

#[tokio::test]
async fn anthropic_gets_a_user_note_not_a_tool_use() {
    let sent = sent_by(|uri| {
        Box::new(
            Anthropic::with_base_url(uri.to_owned(), "sk-ant-test", "claude-haiku-4-5", options()).expect("client"),
        )
    })
    .await;
    let text = sent.to_string();
    assert!(!text.contains("tool_use") && !text.contains("tool_result"), "{sent}");
    let messages = sent["messages"].as_array().cloned().unwrap_or_default();
    let roles: Vec<&str> = messages.iter().map(|m| m["role"].as_str().unwrap_or("?")).collect();
    assert_eq!(roles, ["user", "assistant", "user"], "{sent}");
    assert!(is_the_note(messages[2]["content"][0]["text"].as_str().unwrap_or_default()), "{sent}");
}

#[tokio::test]
async fn responses_gets_a_user_note_not_a_function_call() {
    let sent = sent_by(|uri| {
        Box::new(OpenAiResponses::new(format!("{uri}/v1"), "gpt-5.4", options()).expect("client").with_api_key("sk"))
    })
    .await;
    let text = sent.to_string();
    assert!(!text.contains("function_call"), "{sent}");
    let input = sent["input"].as_array().cloned().unwrap_or_default();
    let last = input.last().cloned().unwrap_or(Value::Null);
    assert_eq!(last["role"], "user", "{sent}");
    assert!(is_the_note(last["content"].as_str().unwrap_or_default()), "{sent}");
}
