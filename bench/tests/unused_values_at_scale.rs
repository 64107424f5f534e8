//! Values the request spelt out that no call used (the `ask_about_unused_values` aid), over
//! the live benchmark's scale arm: the example catalogue and 1,000 BFCL tools as Deferred
//! distractors ([`tasks::scale_registry`]). The rest of the check's tests, over the 41-tool
//! catalogue alone, are `tests/tests/unused_values.rs`.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::sync::{Arc, Mutex};

use serde_json::json;
use tinytools::ToolRegistry;
use tinytools::discovery::{PrePromotion, ToolDiscoveryPolicy};
use tinytools::model::{Message, ModelResponse};
use tinytools::run::aids::AskAboutUnusedValues;
use tinytools::run::{Agent, AidAction, Aids, Promotion, RunEvent, RunOutcome, RunPolicy, StopReason};
use tinytools::testkit::ScriptedModel;
use tinytools_bench::tasks;

/// Runs `user` over `registry` through `model` under `policy`, with every event recorded.
async fn run(
    registry: ToolRegistry,
    model: &Arc<ScriptedModel>,
    policy: RunPolicy,
    user: &str,
) -> (RunOutcome, Vec<RunEvent>) {
    let events: Arc<Mutex<Vec<RunEvent>>> = Arc::default();
    let sink = events.clone();
    let outcome = Agent::new(Arc::new(registry), model.clone())
        .with_policy(policy)
        .with_events(Arc::new(move |event: &RunEvent| sink.lock().unwrap().push(event.clone())))
        .run(vec![Message::user(user)])
        .await
        .expect("runs");
    let events = events.lock().unwrap().clone();
    (outcome, events)
}

/// `small_model` with the aid under test (in no preset).
fn with_unused_values() -> RunPolicy {
    RunPolicy::default().with_aids(Aids::small_model().with(AskAboutUnusedValues))
}

/// The feedback the run sent.
fn questions(outcome: &RunOutcome) -> Vec<&str> {
    outcome
        .transcript
        .messages
        .iter()
        .filter_map(|message| match message {
            Message::Feedback { content } => Some(content.as_str()),
            _ => None,
        })
        .collect()
}

/// How many times `ask_about_unused_values` asked.
fn asked(events: &[RunEvent]) -> usize {
    events
        .iter()
        .filter(|e| matches!(e, RunEvent::AidActed { aid, action: AidAction::Feedback { .. } } if aid == "ask_about_unused_values"))
        .count()
}

/// The example catalogue and 1,000 BFCL tools, all Deferred (`live_tasks`'s scale arm);
/// `None`, and the test skipped, when the eval sets are not beside the checkout.
fn thousand_tools() -> Option<ToolRegistry> {
    if !tasks::bfcl_tools_path().exists() {
        eprintln!("skipped: the eval sets live in ../shared/eval beside the checkout");
        return None;
    }
    Some(tasks::scale_registry(1_000).unwrap())
}

/// At a thousand tools the request ranks the called tool's kin far down: measured, "let
/// ben@acme.com edit it" with `docs_create_document` called put `drive_share_file` outside the
/// twenty hits a ranking returns, and the question named a promoted `slack_post_message`
/// instead. The kin and the promoted tools are ranked among themselves.
#[tokio::test]
async fn at_a_thousand_tools_the_question_still_names_the_called_tools_kin() {
    let Some(registry) = thousand_tools() else { return };
    let create = ModelResponse::calls([("c1", "docs_create_document", json!({"title": "Launch checklist"}))]);
    let share = ModelResponse::calls([(
        "c2",
        "drive_share_file",
        json!({"file_id": "doc_88", "email": "ben@acme.com", "role": "writer"}),
    )]);
    let model = Arc::new(ScriptedModel::new([
        create,
        ModelResponse::text("I made 'Launch checklist'. Next, share it with ben@acme.com as a writer."),
        share,
        ModelResponse::text("Done."),
    ]));
    let request = "Make me a new doc called 'Launch checklist' and let ben@acme.com edit it.";
    let (outcome, events) = run(registry, &model, with_unused_values(), request).await;
    assert_eq!(asked(&events), 1, "{events:?}");
    let question = questions(&outcome)[0];
    let named: Vec<&str> = question.lines().skip(2).filter_map(|line| line.split('`').nth(1)).collect();
    assert_eq!(named, ["drive_share_file", "crm_log_call"], "{question}");
    assert!(question.starts_with("ben@acme.com from the user's request has not gone into any call."), "{question}");
    assert_eq!((outcome.answer.as_str(), outcome.stop), ("Done.", StopReason::Answered));
}

/// Measured at 1,041 tools: after `stock_quote` the model wrote "Post the current trading price
/// of GLOBX at #markets." and stopped; the question named `stock_quote`'s kin `crypto_price`,
/// and the model wrote about BTC: `slack_post_message` was neither kin nor promoted (the
/// keyword model's words had given its promotion slot to another tool; here, two promoted
/// instead of three leave it out). A tool with a channel parameter takes a `#channel` first.
#[tokio::test]
async fn a_channel_left_over_names_a_tool_that_takes_a_channel_before_the_called_tools_kin() {
    let Some(registry) = thousand_tools() else { return };
    let quote = ModelResponse::calls([("c1", "stock_quote", json!({"symbol": "GLOBX"}))]);
    let model = Arc::new(ScriptedModel::new([
        quote,
        ModelResponse::text("Post the current trading price of GLOBX at #markets."),
        ModelResponse::text("GLOBX is at 685.83."),
    ]));
    let request = "Post what GLOBX is trading at in #markets so the team sees it.";
    let two = PrePromotion::default().with_limit(2);
    let policy = with_unused_values().with_discovery(ToolDiscoveryPolicy::default().with_pre_promotion(two));
    let (outcome, events) = run(registry, &model, policy, request).await;
    assert!(
        !events.iter().any(|e| matches!(e, RunEvent::ToolsPromoted { names, cause: Promotion::UserMessage { .. } }
            if names.iter().any(|n| n == "slack_post_message"))),
        "promoted for the request: {events:?}"
    );
    assert_eq!(asked(&events), 1, "{events:?}");
    let question = questions(&outcome)[0];
    let named: Vec<&str> = question.lines().skip(2).filter_map(|line| line.split('`').nth(1)).collect();
    assert_eq!(named.first(), Some(&"slack_post_message"), "{question}");
    assert!(question.starts_with("#markets from the user's request has not gone into any call."), "{question}");
}
