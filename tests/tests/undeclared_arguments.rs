//! A read-only tool's call whose only fault is an argument the tool does not declare runs
//! without it, and its answer says so (the `drop_undeclared_arguments` aid, opt-in:
//! in no preset); a call with side effects, a call with another fault, or any call in a
//! run without the aid (the default) is refused as before.

use std::sync::Arc;
use tinytools_integration_tests::{every_aid, every_aid_policy};

use serde_json::json;
use tinytools::model::Message;
use tinytools::run::{AidAction, RunEvent, RunOutcome, RunPolicy};
use tinytools_integration_tests::{calling, run_recorded};

/// The answers to the run's tool calls: (content, is_error), in order.
fn answers_of(outcome: &RunOutcome) -> Vec<(String, bool)> {
    outcome
        .transcript
        .messages
        .iter()
        .filter_map(|message| match message {
            Message::Tool { content, is_error, .. } => Some((content.clone(), *is_error)),
            _ => None,
        })
        .collect()
}

/// The calls `drop_undeclared_arguments` ran on adjusted arguments, by tool.
fn dropped(events: &[RunEvent]) -> Vec<String> {
    events
        .iter()
        .filter_map(|event| match event {
            RunEvent::AidActed { aid, action: AidAction::AdjustedCall { tool_name, .. } }
                if aid == "drop_undeclared_arguments" =>
            {
                Some(tool_name.clone())
            }
            _ => None,
        })
        .collect()
}

fn completed(events: &[RunEvent], tool: &str) -> usize {
    events.iter().filter(|e| matches!(e, RunEvent::ToolCompleted { tool_name, .. } if tool_name == tool)).count()
}

async fn run(call: (&'static str, serde_json::Value), policy: RunPolicy, user: &str) -> (RunOutcome, Vec<RunEvent>) {
    let registry = Arc::new(tinytools_examples::catalogue::registry());
    run_recorded(registry, calling(vec![call]), policy, user).await
}

#[tokio::test]
async fn a_read_only_call_runs_without_the_arguments_its_tool_does_not_take() {
    // Measured: the 1.5B model sent `stock_quote` the `vs_currency` of the promoted
    // `crypto_price`, and sent it again after each refusal.
    let call = ("stock_quote", json!({"symbol": "GLOBX", "vs_currency": "USD", "market": "NYSE"}));
    let (outcome, events) = run(call, every_aid_policy(), "How much is one share of GLOBX going for?").await;
    let answers = answers_of(&outcome);
    let (answer, is_error) = &answers[0];
    assert!(!is_error, "{answer}");
    assert!(
        answer.starts_with("`stock_quote` does not take `market` and `vs_currency`, so it ran without them:\n"),
        "{answer}"
    );
    assert!(answer.contains(r#""symbol":"GLOBX""#) && answer.contains(r#""price":"#), "the quote follows: {answer}");
    assert_eq!(dropped(&events), ["stock_quote"]);
    assert_eq!(completed(&events, "stock_quote"), 1);
    assert!(!events.iter().any(|e| matches!(e, RunEvent::ToolRejected { .. })), "{events:?}");
}

#[tokio::test]
async fn a_call_with_side_effects_is_never_run_on_other_arguments_than_the_models() {
    let call = ("slack_post_message", json!({"channel": "#markets", "text": "GLOBX is up", "urgent": true}));
    let (outcome, events) = run(call, every_aid_policy(), "Tell #markets that GLOBX is up.").await;
    let answers = answers_of(&outcome);
    assert!(answers[0].1 && answers[0].0.contains("'urgent' was unexpected"), "{answers:?}");
    assert!(dropped(&events).is_empty() && completed(&events, "slack_post_message") == 0, "{events:?}");
}

#[tokio::test]
async fn another_fault_or_a_run_without_the_aid_keeps_the_refusal() {
    // Without `symbol` the call is refused even with `vs_currency` left out: every problem is told.
    let call = ("stock_quote", json!({"ticker": "GLOBX", "vs_currency": "USD"}));
    let (outcome, events) = run(call, every_aid_policy(), "How much is one share of GLOBX going for?").await;
    let answers = answers_of(&outcome);
    let (answer, is_error) = &answers[0];
    assert!(*is_error && answer.contains("\"symbol\" is a required property"), "{answer}");
    assert!(
        answer.contains("'ticker', 'vs_currency' were unexpected")
            && answer.contains("`stock_quote` takes: {symbol: string"),
        "{answer}"
    );
    assert!(dropped(&events).is_empty() && completed(&events, "stock_quote") == 0, "{events:?}");

    // The default aids, and the small-model ones without it, refuse the extra argument.
    let without = RunPolicy::default().with_aids(every_aid().without("drop_undeclared_arguments"));
    for policy in [RunPolicy::default(), without] {
        let aids = format!("{:?}", policy.aids);
        let call = ("stock_quote", json!({"symbol": "GLOBX", "vs_currency": "USD"}));
        let (outcome, events) = run(call, policy, "How much is one share of GLOBX going for?").await;
        let answers = answers_of(&outcome);
        assert!(answers[0].1 && answers[0].0.contains("'vs_currency' was unexpected"), "{aids}: {answers:?}");
        assert!(dropped(&events).is_empty() && completed(&events, "stock_quote") == 0, "{aids}: {events:?}");
    }
}
