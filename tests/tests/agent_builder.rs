//! The agent builder and the host's instructions: one way to make an agent, and instructions
//! sent first on every request of every kind of run without being a message the caller keeps.

use std::sync::Arc;

use serde_json::json;
use tinytools::model::{Message, ModelResponse};
use tinytools::run::{Agent, Instructions, RunEvent, RunPolicy};
use tinytools::testkit::ScriptedModel;
use tinytools::{RegistryError, ToolRegistry, tool};

/// Fetch the latest price for a ticker symbol.
#[tool(exposure = "deferred", family = "finance", read_only)]
async fn stock_quote(
    /** Ticker symbol. */
    symbol: String,
) -> String {
    format!("{symbol} 12.50")
}

/// Read a note by its title.
#[tool(read_only)]
async fn read_note(
    /** The note's title. */
    title: String,
) -> String {
    format!("note {title}: buy low")
}

fn system_texts(messages: &[Message]) -> Vec<&str> {
    messages
        .iter()
        .filter_map(|message| match message {
            Message::System { content } => Some(content.as_str()),
            _ => None,
        })
        .collect()
}

fn quote_then_answer() -> ScriptedModel {
    ScriptedModel::new([
        ModelResponse::calls([("c1", "stock_quote", json!({"symbol": "ACME"}))]),
        ModelResponse::text("ACME trades at 12.50."),
    ])
}

#[tokio::test]
async fn instructions_lead_every_request_and_never_enter_the_transcript() {
    let model = Arc::new(quote_then_answer());
    let agent = Agent::builder(model.clone())
        .instructions("Answer in one sentence.")
        .tool(StockQuote)
        .tool(ReadNote)
        .build()
        .expect("builds");
    let outcome = agent.run(vec![Message::user("What is ACME trading at?")]).await.expect("runs");
    assert_eq!(outcome.answer, "ACME trades at 12.50.");
    let requests = model.requests();
    assert_eq!(requests.len(), 2);
    for request in &requests {
        assert_eq!(request.messages[0], Message::system("Answer in one sentence."));
        assert_eq!(system_texts(&request.messages), ["Answer in one sentence."]);
    }
    assert!(system_texts(&outcome.transcript.messages).is_empty(), "the caller never holds the instructions");
    let names: Vec<&str> = requests[0].tools.iter().map(|tool| tool.name.as_str()).collect();
    assert_eq!(names, ["read_note", "tool_search"], "the direct tool, and the deferred one behind the bridge");
    assert!(requests[0].callable_by_name.iter().any(|name| name == "stock_quote"));
}

#[tokio::test]
async fn resumed_and_streamed_runs_get_the_instructions_once() {
    let model = Arc::new(
        ScriptedModel::new([ModelResponse::text("First."), ModelResponse::text("Second.")]).streaming_in_pieces(3),
    );
    let agent = Agent::builder(model.clone()).instructions("Be brief.").build().expect("builds");
    let mut stream = agent.stream(vec![Message::user("one")]);
    while stream.next().await.is_some() {}
    let first = stream.finish().await.expect("first run");
    let mut transcript = first.transcript;
    transcript.messages.push(Message::user("two"));
    let second = agent.resume_stream(transcript).finish().await.expect("resumed");
    assert_eq!(second.answer, "Second.");
    let requests = model.requests();
    assert_eq!(requests.len(), 2);
    for request in &requests {
        assert_eq!(system_texts(&request.messages), ["Be brief."], "exactly once, first");
        assert_eq!(request.messages[0], Message::system("Be brief."));
    }
    assert!(system_texts(&second.transcript.messages).is_empty());
}

#[tokio::test]
async fn dynamic_instructions_see_the_run_as_it_is_on_each_request() {
    let model = Arc::new(quote_then_answer());
    let agent = Agent::builder(model.clone())
        .instructions(Instructions::dynamic(|run| {
            format!("Turn {} of {}; the user asked: {}", run.turn().0, run.turn().1, run.request().unwrap_or("-"))
        }))
        .tool(StockQuote)
        .policy(RunPolicy::default().with_max_turns(4))
        .build()
        .expect("builds");
    agent.run(vec![Message::user("ACME?")]).await.expect("runs");
    let requests = model.requests();
    assert_eq!(requests[0].messages[0], Message::system("Turn 1 of 4; the user asked: ACME?"));
    assert_eq!(requests[1].messages[0], Message::system("Turn 2 of 4; the user asked: ACME?"));
}

#[tokio::test]
async fn a_host_system_message_in_the_conversation_is_kept_after_the_instructions() {
    let model = Arc::new(ScriptedModel::new([ModelResponse::text("ok")]));
    let agent = Agent::new(Arc::new(ToolRegistry::new()), model.clone()).with_instructions("From the builder path.");
    agent.run(vec![Message::system("The caller's own."), Message::user("hi")]).await.expect("runs");
    assert_eq!(system_texts(&model.requests()[0].messages), ["From the builder path.", "The caller's own."]);
}

#[tokio::test]
async fn the_builder_sets_policy_events_middleware_and_state() {
    let model = Arc::new(quote_then_answer());
    let seen = Arc::new(std::sync::Mutex::new(Vec::new()));
    let sink = Arc::clone(&seen);
    let agent = Agent::builder(model.clone())
        .tool(StockQuote)
        .for_small_model()
        .on_event(move |event: &RunEvent| {
            if let RunEvent::ToolCompleted { tool_name, .. } = event {
                sink.lock().expect("events").push(tool_name.clone());
            }
        })
        .build()
        .expect("builds");
    assert!(agent.policy().discovery.pre_promotion.model_keywords, "the small-model profile");
    agent.run(vec![Message::user("ACME?")]).await.expect("runs");
    assert_eq!(*seen.lock().expect("events"), ["stock_quote"]);
}

#[test]
fn build_reports_the_first_registration_error() {
    let model = ScriptedModel::new([]);
    let error = Agent::builder(model).tool(StockQuote).tool(ReadNote).tool(StockQuote).build().err();
    assert!(matches!(error, Some(RegistryError::DuplicateName { ref name, .. }) if name == "stock_quote"), "{error:?}");
}

#[tokio::test]
async fn a_registry_and_added_tools_join() {
    let mut registry = ToolRegistry::new();
    registry.register(ReadNote).expect("registers");
    let model = Arc::new(ScriptedModel::new([ModelResponse::text("ok")]));
    let agent = Agent::builder(model.clone()).registry(registry).tool(StockQuote).build().expect("builds");
    agent.run(vec![Message::user("hi")]).await.expect("runs");
    let requests = model.requests();
    let names: Vec<&str> = requests[0].tools.iter().map(|tool| tool.name.as_str()).collect();
    assert!(names.contains(&"read_note") && names.contains(&"tool_search"), "{names:?}");
}
