//! Arguments a tool does not declare: the core refuses the call and names the ones that exist
//! (under every preset). An aid may run a call on other arguments (`CallAction::RunWith`), its
//! answer led by the aid's note, but only a read-only tool's: the core ignores the adjustment
//! of a call with side effects unless the aid was built for it, and that call meets admission
//! as the model wrote it.

use std::sync::Arc;

use serde_json::{Value, json};
use tinytools::model::{Message, ToolCall};
use tinytools::run::aids::{Aid, CallAction, RunView};
use tinytools::run::{AidAction, Aids, RunEvent, RunOutcome, RunPolicy};
use tinytools_integration_tests::{calling, run_recorded, small_model_policy};

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

/// The calls an aid ran on adjusted arguments, by tool.
fn adjusted(events: &[RunEvent]) -> Vec<String> {
    events
        .iter()
        .filter_map(|event| match event {
            RunEvent::AidActed { action: AidAction::AdjustedCall { tool_name, .. }, .. } => Some(tool_name.clone()),
            _ => None,
        })
        .collect()
}

fn completed(events: &[RunEvent], tool: &str) -> usize {
    events.iter().filter(|e| matches!(e, RunEvent::ToolCompleted { tool_name, .. } if tool_name == tool)).count()
}

async fn run(call: (&'static str, Value), policy: RunPolicy, user: &str) -> (RunOutcome, Vec<RunEvent>) {
    let registry = Arc::new(tinytools_examples::catalogue::registry());
    run_recorded(registry, calling(vec![call]), policy, user).await
}

/// An aid of the host's that runs every call holding the argument `key` without it, its answer
/// led by a note; `for_side_effects` says whether it was built to adjust calls of tools with
/// side effects.
struct RunsWithout {
    key: &'static str,
    for_side_effects: bool,
}

#[async_trait::async_trait]
impl Aid for RunsWithout {
    fn name(&self) -> &'static str {
        "runs_without"
    }

    fn takes_side_effect_calls(&self) -> bool {
        self.for_side_effects
    }

    async fn on_call(&self, _view: &RunView<'_>, call: &ToolCall) -> CallAction {
        let Ok(Value::Object(mut arguments)) = serde_json::from_str::<Value>(&call.arguments) else {
            return CallAction::Run;
        };
        if arguments.remove(self.key).is_none() {
            return CallAction::Run;
        }
        let note = format!("`{}` ran without `{}`:", call.name, self.key);
        CallAction::RunWith { arguments: Value::Object(arguments).to_string(), note }
    }
}

fn runs_without(key: &'static str, for_side_effects: bool) -> RunPolicy {
    RunPolicy::default().with_aids(Aids::none().with(RunsWithout { key, for_side_effects }))
}

#[tokio::test]
async fn an_undeclared_argument_is_refused_under_every_preset_with_the_ones_that_exist() {
    for policy in [RunPolicy::default(), small_model_policy(), RunPolicy::default().with_aids(Aids::none())] {
        let aids = format!("{:?}", policy.aids);
        let call = ("stock_quote", json!({"ticker": "GLOBX", "vs_currency": "USD"}));
        let (outcome, events) = run(call, policy, "How much is one share of GLOBX going for?").await;
        let answers = answers_of(&outcome);
        let (answer, is_error) = &answers[0];
        assert!(*is_error && answer.contains("\"symbol\" is a required property"), "{aids}: {answer}");
        assert!(
            answer.contains("'ticker', 'vs_currency' were unexpected")
                && answer.contains("`stock_quote` takes: {symbol: string"),
            "{aids}: {answer}"
        );
        assert!(adjusted(&events).is_empty() && completed(&events, "stock_quote") == 0, "{aids}: {events:?}");
    }
}

#[tokio::test]
async fn an_aid_may_run_a_read_only_call_on_other_arguments_its_answer_led_by_the_aids_note() {
    // Measured: the 1.5B model sent `stock_quote` the `vs_currency` of the promoted
    // `crypto_price`, and sent it again after each refusal.
    let call = ("stock_quote", json!({"symbol": "GLOBX", "vs_currency": "USD"}));
    let (outcome, events) =
        run(call, runs_without("vs_currency", false), "How much is one share of GLOBX going for?").await;
    let answers = answers_of(&outcome);
    let (answer, is_error) = &answers[0];
    assert!(!is_error, "{answer}");
    assert!(answer.starts_with("`stock_quote` ran without `vs_currency`:\n"), "{answer}");
    assert!(answer.contains(r#""symbol":"GLOBX""#) && answer.contains(r#""price":"#), "the quote follows: {answer}");
    assert_eq!(adjusted(&events), ["stock_quote"]);
    assert_eq!(completed(&events, "stock_quote"), 1);
    assert!(!events.iter().any(|e| matches!(e, RunEvent::ToolRejected { .. })), "{events:?}");
}

#[tokio::test]
async fn a_call_with_side_effects_runs_on_other_arguments_only_for_an_aid_built_for_it() {
    let call = || ("slack_post_message", json!({"channel": "#markets", "text": "GLOBX is up", "urgent": true}));
    let (outcome, events) = run(call(), runs_without("urgent", false), "Tell #markets that GLOBX is up.").await;
    let answers = answers_of(&outcome);
    assert!(answers[0].1 && answers[0].0.contains("'urgent' was unexpected"), "{answers:?}");
    assert!(adjusted(&events).is_empty() && completed(&events, "slack_post_message") == 0, "{events:?}");

    let (outcome, events) = run(call(), runs_without("urgent", true), "Tell #markets that GLOBX is up.").await;
    let answers = answers_of(&outcome);
    assert!(!answers[0].1 && answers[0].0.starts_with("`slack_post_message` ran without `urgent`:"), "{answers:?}");
    assert_eq!((adjusted(&events), completed(&events, "slack_post_message")), (vec!["slack_post_message".into()], 1));
}
