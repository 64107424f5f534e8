//! Typed output: an answer validated against `T`'s schema, one feedback turn per miss up to
//! the retries, then a typed error with the last answer; the schema natively for a model that
//! takes it, in words otherwise; composed with deferral and streaming; a type strict output
//! cannot take refused before any request.

use std::sync::Arc;

use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::json;
use tinytools::model::{Message, ModelProfile, ModelResponse, OutputSchemaError};
use tinytools::run::{Agent, RunEvent, RunFailure, RunPolicy, RunStreamItem, StopReason, UsageLimits};
use tinytools::testkit::ScriptedModel;
use tinytools::tool;

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

/// Fetch the latest price for a ticker symbol.
#[tool(exposure = "deferred", family = "finance", read_only)]
async fn stock_quote(
    /** Ticker symbol. */
    symbol: String,
) -> String {
    format!("{symbol} 12.50")
}

/// A quote, as the answer.
#[derive(Debug, Deserialize, JsonSchema, PartialEq)]
struct Quote {
    /// Ticker symbol.
    symbol: String,
    /// Price in dollars.
    price: f64,
}

fn feedback_texts(messages: &[Message]) -> Vec<&str> {
    messages
        .iter()
        .filter_map(|message| match message {
            Message::Feedback { content } => Some(content.as_str()),
            _ => None,
        })
        .collect()
}

#[tokio::test]
async fn a_valid_first_answer_is_the_output_in_one_request() {
    let model = Arc::new(ScriptedModel::new([ModelResponse::text(r#"{"name": "Ada", "age": 36, "email": null}"#)]));
    let agent = Agent::builder(model.clone()).build().expect("builds");
    let typed = agent.run_typed::<Contact>(vec![Message::user("Ada, 36")]).await.expect("typed");
    assert_eq!(typed.output, Contact { name: "Ada".into(), age: 36, email: None });
    assert_eq!((typed.outcome.turns, typed.outcome.stop), (1, StopReason::Answered));
    assert_eq!(typed.outcome.output, Some(json!({"name": "Ada", "age": 36, "email": null})));
}

#[tokio::test]
async fn a_model_without_structured_output_is_asked_in_words_and_not_sent_the_field() {
    let model = Arc::new(ScriptedModel::new([ModelResponse::text(r#"{"name": "Ada", "age": 36}"#)]));
    let agent = Agent::builder(model.clone()).instructions("Extract the contact.").build().expect("builds");
    agent.run_typed::<Contact>(vec![Message::user("Ada, 36")]).await.expect("typed");
    let request = &model.requests()[0];
    assert!(request.output.is_none());
    let Message::System { content } = &request.messages[0] else { panic!("no system message first") };
    assert!(content.starts_with("Extract the contact.\n\n"), "{content}");
    assert!(content.contains("JSON Schema") && content.contains("\"age\""), "{content}");
}

#[tokio::test]
async fn a_model_with_structured_output_gets_the_schema_in_the_request_not_in_words() {
    let model = ScriptedModel::new([ModelResponse::text(r#"{"name": "Ada", "age": 36, "email": null}"#)])
        .with_profile(ModelProfile::default().with_structured_output(true));
    let model = Arc::new(model);
    let agent = Agent::builder(model.clone()).instructions("Extract the contact.").build().expect("builds");
    agent.run_typed::<Contact>(vec![Message::user("Ada, 36")]).await.expect("typed");
    let request = &model.requests()[0];
    let output = request.output.as_ref().expect("the schema goes natively");
    assert_eq!(output.name, "Contact");
    assert_eq!(request.messages[0], Message::system("Extract the contact."));
}

#[tokio::test]
async fn a_miss_gets_feedback_with_the_errors_and_the_next_answer_counts() {
    let model = Arc::new(ScriptedModel::new([
        ModelResponse::text(r#"Sure! {"name": "Ada", "age": "thirty-six"}"#),
        ModelResponse::text(r#"{"name": "Ada", "age": 36}"#),
    ]));
    let rejected = Arc::new(std::sync::Mutex::new(Vec::new()));
    let sink = Arc::clone(&rejected);
    let agent = Agent::builder(model.clone())
        .on_event(move |event: &RunEvent| {
            if let RunEvent::OutputRejected { turn, errors } = event {
                sink.lock().expect("events").push((*turn, errors.clone()));
            }
        })
        .build()
        .expect("builds");
    let typed = agent.run_typed::<Contact>(vec![Message::user("Ada, 36")]).await.expect("typed");
    assert_eq!(typed.output.age, 36);
    let feedback = feedback_texts(&typed.outcome.transcript.messages);
    assert_eq!(feedback.len(), 1);
    assert!(feedback[0].contains("/age") && feedback[0].contains("Contact"), "{}", feedback[0]);
    let rejected = rejected.lock().expect("events");
    assert_eq!(rejected.len(), 1);
    assert_eq!(rejected[0].0, 1);
    // The second request carries the miss and the feedback, as a user turn of the run's own.
    let second = &model.requests()[1];
    assert!(matches!(second.messages.last(), Some(Message::Feedback { .. })));
}

#[tokio::test]
async fn an_answer_that_never_validates_ends_with_the_last_answer_after_the_retries() {
    let model = Arc::new(ScriptedModel::new([
        ModelResponse::text("Ada is 36."),
        ModelResponse::text(r#"{"name": "Ada"}"#),
        ModelResponse::text(r#"{"age": 36}"#),
        ModelResponse::text("never asked"),
    ]));
    let agent =
        Agent::builder(model.clone()).policy(RunPolicy::default().with_output_retries(2)).build().expect("builds");
    let error = agent.run_typed::<Contact>(vec![Message::user("Ada, 36")]).await.expect_err("never valid");
    let RunFailure::Output(invalid) = &error.source else { panic!("not an output error: {error}") };
    assert_eq!((invalid.attempts, invalid.answer.as_str()), (3, r#"{"age": 36}"#));
    assert!(invalid.errors.iter().any(|e| e.contains("name")), "{:?}", invalid.errors);
    assert_eq!((error.turns, model.requests().len()), (3, 3));
    assert_eq!(feedback_texts(&error.transcript.messages).len(), 2);
    assert!(error.to_string().contains("output_retries"), "{error}");
}

#[tokio::test]
async fn feedback_turns_count_against_the_turn_and_usage_limits() {
    let misses = (0..5).map(|_| ModelResponse::text("no json").with_usage(10, 5));
    let model = Arc::new(ScriptedModel::new(misses));
    let agent = Agent::builder(model.clone())
        .policy(RunPolicy::default().with_output_retries(10).with_max_turns(2))
        .build()
        .expect("builds");
    let error = agent.run_typed::<Contact>(vec![Message::user("Ada")]).await.expect_err("turn limit");
    let RunFailure::Output(invalid) = &error.source else { panic!("{error}") };
    assert!(invalid.errors[0].contains("TurnLimit"), "{:?}", invalid.errors);
    assert_eq!(model.requests().len(), 2);

    let model = Arc::new(ScriptedModel::new((0..5).map(|_| ModelResponse::text("no json").with_usage(10, 5))));
    let limits = UsageLimits::default().with_max_requests(2);
    let agent = Agent::builder(model.clone())
        .policy(RunPolicy::default().with_output_retries(10).with_usage_limits(limits))
        .build()
        .expect("builds");
    let error = agent.run_typed::<Contact>(vec![Message::user("Ada")]).await.expect_err("request limit");
    assert!(matches!(error.source, RunFailure::UsageLimit(_)), "{error}");
    assert_eq!(model.requests().len(), 2);
}

#[tokio::test]
async fn a_type_strict_output_cannot_take_is_refused_before_any_request() {
    #[derive(Debug, Deserialize, JsonSchema)]
    #[allow(dead_code)]
    struct Thread {
        text: String,
        replies: Vec<Thread>,
    }
    #[derive(Debug, Deserialize, JsonSchema)]
    #[allow(dead_code)]
    enum Shape {
        Circle { radius: f64 },
        Square { side: f64 },
    }
    let model = Arc::new(ScriptedModel::new([ModelResponse::text("{}")]));
    let agent = Agent::builder(model.clone()).build().expect("builds");
    let error = agent.run_typed::<Thread>(vec![Message::user("x")]).await.expect_err("recursive");
    assert!(matches!(error.source, RunFailure::OutputSchema(OutputSchemaError::Recursive { .. })), "{error}");
    assert!(error.to_string().contains("recursive"), "{error}");
    let error = agent.run_typed::<Shape>(vec![Message::user("x")]).await.expect_err("a root oneOf");
    assert!(matches!(error.source, RunFailure::OutputSchema(OutputSchemaError::NotAnObject { .. })), "{error}");
    assert!(error.to_string().contains("wrap it in a struct"), "{error}");
    let error = agent.run_typed::<Vec<String>>(vec![Message::user("x")]).await.expect_err("an array");
    assert!(matches!(error.source, RunFailure::OutputSchema(_)), "{error}");
    assert_eq!((error.turns, model.requests().len()), (0, 0), "no request was made");
}

#[tokio::test]
async fn a_typed_run_calls_deferred_tools_and_streams_its_answer() {
    let model = ScriptedModel::new([
        ModelResponse::calls([("c1", "tool_search", json!({"query": "stock price"}))]),
        ModelResponse::calls([("c2", "stock_quote", json!({"symbol": "ACME"}))]),
        ModelResponse::text(r#"{"symbol": "ACME", "price": 12.5}"#),
    ])
    .streaming_in_pieces(4);
    let model = Arc::new(model);
    let agent = Agent::builder(model.clone()).tool(StockQuote).build().expect("builds");
    let mut stream = agent.stream_typed::<Quote>(vec![Message::user("What is ACME at? Answer as JSON.")]);
    let mut text = String::new();
    while let Some(item) = stream.next().await {
        if let RunStreamItem::TextDelta { text: piece, .. } = item {
            text.push_str(&piece);
        }
    }
    let typed = stream.finish().await.expect("typed");
    assert_eq!(typed.output, Quote { symbol: "ACME".into(), price: 12.5 });
    assert_eq!(text, r#"{"symbol": "ACME", "price": 12.5}"#);
    let requests = model.requests();
    assert_eq!(requests.len(), 3);
    assert!(requests[2].tools.iter().any(|tool| tool.name == "stock_quote"), "promoted by the search");
}

#[tokio::test]
async fn a_streamed_typed_run_reports_a_bad_type_at_finish() {
    #[derive(Debug, Deserialize, JsonSchema)]
    #[allow(dead_code)]
    struct Node {
        next: Option<Box<Node>>,
    }
    let model = Arc::new(ScriptedModel::new([ModelResponse::text("{}")]));
    let agent = Agent::builder(model.clone()).build().expect("builds");
    let error = agent.stream_typed::<Node>(vec![Message::user("x")]).finish().await.expect_err("recursive");
    assert!(matches!(error.source, RunFailure::OutputSchema(_)), "{error}");
    assert!(model.requests().is_empty());
}
