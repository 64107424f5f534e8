//! Values the request spelt out that no call used (`LoopGuard::ask_about_unused_values`): a
//! run about to end with one left over asks once whether a call still needs it, naming and
//! promoting the deferred tools that may take it; it does not ask when every value went into a
//! call, when no tool was called, when discovery is off, or when the guard says not to.
//!
//! The same check over a thousand tools (the live benchmark's scale arm) is
//! `bench/tests/unused_values_at_scale.rs`.

use std::sync::Arc;

use serde_json::json;
use tinytools::ToolRegistry;
use tinytools::model::{Message, ModelRequest, ModelResponse};
use tinytools::run::{LoopGuard, Promotion, RunEvent, RunOutcome, RunPolicy, StopReason};
use tinytools::testkit::ScriptedModel;
use tinytools_integration_tests::run_recorded;

const BOOK: &str = "Find a 30-minute gap on 17 March 2026 when priya@acme.com and tom@acme.com are both free, \
                    and book the earliest one as 'Design sync' with the two of them.";

/// What Qwen2.5-Coder-1.5B answered after the free slots came back.
const RESTATED: &str = "Book the earliest slot, which is 10:00, as 'Design sync' with Priya and Tom.";

fn free_slots() -> ModelResponse {
    let args = json!({"attendees": ["priya@acme.com", "tom@acme.com"], "date": "2026-03-17", "duration_minutes": 30});
    ModelResponse::calls([("c1", "calendar_free_slots", args)])
}

fn invite() -> ModelResponse {
    let args = json!({"title": "Design sync", "start": "2026-03-17T10:00:00Z", "duration_minutes": 30,
                      "attendees": ["priya@acme.com", "tom@acme.com"]});
    ModelResponse::calls([("c2", "calendar_invite", args)])
}

async fn run(
    registry: ToolRegistry,
    model: &Arc<ScriptedModel>,
    policy: RunPolicy,
    user: &str,
) -> (RunOutcome, Vec<RunEvent>) {
    run_recorded(Arc::new(registry), model.clone(), policy, user).await
}

fn questions(outcome: &RunOutcome) -> Vec<&str> {
    outcome
        .transcript
        .messages
        .iter()
        .skip(1)
        .filter_map(|message| match message {
            Message::User { content } => Some(content.as_str()),
            _ => None,
        })
        .collect()
}

fn asked(events: &[RunEvent]) -> Vec<usize> {
    events
        .iter()
        .filter_map(|e| match e {
            RunEvent::UnusedValues { count } => Some(*count),
            _ => None,
        })
        .collect()
}

#[tokio::test]
async fn a_run_that_restates_its_last_step_is_asked_once_with_the_tools_that_take_the_value() {
    let model = Arc::new(ScriptedModel::new([
        free_slots(),
        ModelResponse::text(RESTATED),
        invite(),
        ModelResponse::text("Booked 'Design sync' at 10:00."),
    ]));
    let (outcome, events) = run(tinytools_examples::catalogue::registry(), &model, RunPolicy::default(), BOOK).await;
    assert_eq!(asked(&events), [1]);
    let question = questions(&outcome)[0];
    assert!(
        question.starts_with(
            "'Design sync' from my request has not gone into any call yet. If my request still needs a call, make \
             it now.\nNow callable:\n`calendar_invite` takes: {title: string, start: string, duration_minutes: \
             integer, attendees: string[]"
        ),
        "{question}"
    );
    // Of the called tool's family, never a destructive one (`calendar_cancel_event`).
    let named: Vec<&str> = question.lines().skip(2).filter_map(|line| line.split('`').nth(1)).collect();
    assert_eq!(named, ["calendar_invite", "calendar_list_events"], "{question}");
    let requests: Vec<ModelRequest> = model.requests();
    let declared: Vec<&str> = requests[2].tools.iter().map(|t| t.name.as_str()).collect();
    assert!(declared.contains(&"calendar_invite"), "{declared:?}");
    assert!(events.iter().any(|e| matches!(e,
        RunEvent::ToolsPromoted { names, cause: Promotion::AfterToolResult { .. } } if names.contains(&"calendar_invite".to_owned()))));
    assert!(
        events.iter().any(|e| matches!(e, RunEvent::ToolCompleted { tool_name, .. } if tool_name == "calendar_invite"))
    );
    assert_eq!((outcome.answer.as_str(), outcome.stop), ("Booked 'Design sync' at 10:00.", StopReason::Answered));

    // The request is the user's, not a request of the loop guard's (the nudge before the call).
    let model = Arc::new(ScriptedModel::new([
        ModelResponse::text("I'll use `calendar_free_slots` for that."),
        free_slots(),
        ModelResponse::text(RESTATED),
        invite(),
        ModelResponse::text("Booked."),
    ]));
    let nudging = RunPolicy::default().with_loop_guard(LoopGuard::default().with_nudge_described_calls(true));
    let (outcome, events) = run(tinytools_examples::catalogue::registry(), &model, nudging, BOOK).await;
    assert!(events.iter().any(|e| matches!(e, RunEvent::Nudged { .. })), "{events:?}");
    assert_eq!((asked(&events).as_slice(), outcome.answer.as_str()), ([1].as_slice(), "Booked."));

    // Asked once: the same answer again ends the run.
    let model =
        Arc::new(ScriptedModel::new([free_slots(), ModelResponse::text(RESTATED), ModelResponse::text(RESTATED)]));
    let (outcome, events) = run(tinytools_examples::catalogue::registry(), &model, RunPolicy::default(), BOOK).await;
    assert_eq!((asked(&events).len(), outcome.answer.as_str(), model.requests().len()), (1, RESTATED, 3));
}

#[tokio::test]
async fn no_question_when_every_value_went_into_a_call_no_tool_ran_discovery_is_off_or_the_guard_says_not_to() {
    let catalogue = tinytools_examples::catalogue::registry;
    // Every value used: 'Design sync' went into the invitation.
    let model = Arc::new(ScriptedModel::new([free_slots(), invite(), ModelResponse::text("Booked.")]));
    let (outcome, events) = run(catalogue(), &model, RunPolicy::default(), BOOK).await;
    assert!(asked(&events).is_empty() && questions(&outcome).is_empty(), "{events:?}");
    // No tool called: the model answered straight away.
    let model = Arc::new(ScriptedModel::new([ModelResponse::text("I cannot book meetings.")]));
    let (_, events) = run(catalogue(), &model, RunPolicy::default(), BOOK).await;
    assert!(asked(&events).is_empty());
    // Only `tool_search` called: a search is not a use.
    let search = ModelResponse::calls([("s", "tool_search", json!({"query": "calendar booking"}))]);
    let model = Arc::new(ScriptedModel::new([search, ModelResponse::text(RESTATED)]));
    let (_, events) = run(catalogue(), &model, RunPolicy::default(), BOOK).await;
    assert!(asked(&events).is_empty());
    // Off track: the only tool called is one the request does not rank, and so are its kin.
    let convert =
        ModelResponse::calls([("c", "unit_convert", json!({"value": 10, "from_unit": "mi", "to_unit": "km"}))]);
    let model = Arc::new(ScriptedModel::new([convert, ModelResponse::text("16.09344 km")]));
    let (_, events) =
        run(catalogue(), &model, RunPolicy::default(), "lee@acme.com needs to be able to edit f_310, sort that out?")
            .await;
    assert!(asked(&events).is_empty(), "{events:?}");
    // No call ran without error: the only one was refused (measured: asked after such a run
    // had apologised, the model emailed the address in the request). With the call answered,
    // the same run asks (the first test).
    let refused = ModelResponse::calls([("c1", "calendar_free_slots", json!({"date": "2026-03-17"}))]);
    let model = Arc::new(ScriptedModel::new([refused, ModelResponse::text(RESTATED)]));
    let (outcome, events) = run(catalogue(), &model, RunPolicy::default(), BOOK).await;
    assert!(
        events.iter().any(|e| matches!(e, RunEvent::ToolRejected { .. }))
            && asked(&events).is_empty()
            && outcome.answer == RESTATED,
        "{events:?}"
    );
    // Not at the last turn: the run ends answered, as before.
    let model = Arc::new(ScriptedModel::new([free_slots(), ModelResponse::text(RESTATED)]));
    let (outcome, events) = run(catalogue(), &model, RunPolicy::default().with_max_turns(2), BOOK).await;
    assert!(asked(&events).is_empty() && outcome.stop == StopReason::Answered, "{events:?}");
    // The guard off.
    let model = Arc::new(ScriptedModel::new([free_slots(), ModelResponse::text(RESTATED)]));
    let policy = RunPolicy::default().with_loop_guard(LoopGuard::default().with_ask_about_unused_values(false));
    let (outcome, events) = run(catalogue(), &model, policy, BOOK).await;
    assert!(asked(&events).is_empty() && outcome.answer == RESTATED);
    // Every tool Direct: no tool to name, no question (measured: with 41 tools declared the
    // model answered such a question in prose).
    let direct = tinytools_examples::catalogue::all_direct_registry();
    let model = Arc::new(ScriptedModel::new([free_slots(), ModelResponse::text(RESTATED)]));
    let (outcome, events) = run(direct, &model, RunPolicy::default(), BOOK).await;
    assert!(asked(&events).is_empty() && outcome.answer == RESTATED, "{events:?}");
}

/// Measured at 1,041 tools: asked with `drive_share_file` named first, Qwen2.5-Coder-1.5B
/// answered with the call's JSON inside a sentence, and the run ended there — after a tool has
/// answered, a call described in prose is adopted only for a read-only tool. The reply to the
/// question may make a call of a tool the question named; only that reply, and only those tools.
#[tokio::test]
async fn the_reply_to_the_question_may_describe_a_call_of_a_tool_it_named() {
    let create = || ModelResponse::calls([("c1", "docs_create_document", json!({"title": "Launch checklist"}))]);
    let made = || ModelResponse::text("I made 'Launch checklist' (doc_88).");
    let described = |tool: &str| {
        ModelResponse::text(format!(
            "To let ben@acme.com edit it, you can use the `{tool}` function with the following arguments:\n```json\n\
             {{\"file_id\": \"doc_88\", \"email\": \"ben@acme.com\", \"role\": \"writer\"}}\n```"
        ))
    };
    let request = "Make me a new doc called 'Launch checklist' and let ben@acme.com edit it.";
    let completed = |events: &[RunEvent], tool: &str| {
        events.iter().any(|e| matches!(e, RunEvent::ToolCompleted { tool_name, .. } if tool_name == tool))
    };
    let model =
        Arc::new(ScriptedModel::new([create(), made(), described("drive_share_file"), ModelResponse::text("Shared.")]));
    let (outcome, events) = run(tinytools_examples::catalogue::registry(), &model, RunPolicy::default(), request).await;
    assert_eq!(asked(&events), [1], "{events:?}");
    let named: Vec<&str> = questions(&outcome)[0].lines().skip(2).filter_map(|line| line.split('`').nth(1)).collect();
    assert_eq!(named.first(), Some(&"drive_share_file"), "{named:?}");
    assert!(
        events.iter().any(|e| matches!(e, RunEvent::CallAdopted { tool_name, .. } if tool_name == "drive_share_file"))
    );
    assert!(completed(&events, "drive_share_file"), "{events:?}");
    assert_eq!((outcome.answer.as_str(), outcome.stop), ("Shared.", StopReason::Answered));

    // Measured at 1,041 tools: the arguments as assignments, the call claimed done.
    let claimed = ModelResponse::text(
        "I have called the `drive_share_file` function with the arguments `file_id=\"doc_88\"`, \
         `email=\"ben@acme.com\"`, and `role=\"writer\"`.",
    );
    let model = Arc::new(ScriptedModel::new([create(), made(), claimed, ModelResponse::text("Shared.")]));
    let (_, events) = run(tinytools_examples::catalogue::registry(), &model, RunPolicy::default(), request).await;
    assert!(completed(&events, "drive_share_file"), "{events:?}");
    let shared = &model.requests()[3].messages;
    assert!(
        matches!(shared.last(), Some(Message::Tool { content, .. }) if content == "shared doc_88 with ben@acme.com as writer"),
        "{shared:?}"
    );

    // Every required parameter or nothing: without `role` the sentence stays prose.
    let partial =
        ModelResponse::text("I have called `drive_share_file` with `file_id=\"doc_88\"`, `email=\"ben@acme.com\"`.");
    let model = Arc::new(ScriptedModel::new([create(), made(), partial]));
    let (_, events) = run(tinytools_examples::catalogue::registry(), &model, RunPolicy::default(), request).await;
    assert!(!events.iter().any(|e| matches!(e, RunEvent::CallAdopted { .. })), "{events:?}");

    // Not the reply before the question sent back word for word: it answers nothing asked
    // (measured: a described `calendar_invite` for a "Standup", repeated, booked a meeting).
    let model = Arc::new(ScriptedModel::new([create(), described("drive_share_file"), described("drive_share_file")]));
    let (_, events) = run(tinytools_examples::catalogue::registry(), &model, RunPolicy::default(), request).await;
    assert_eq!(asked(&events), [1]);
    assert!(!completed(&events, "drive_share_file"), "{events:?}");

    // Not a tool the question did not name: `gmail_send` has side effects and stays prose.
    let model = Arc::new(ScriptedModel::new([create(), made(), described("gmail_send")]));
    let (_, events) = run(tinytools_examples::catalogue::registry(), &model, RunPolicy::default(), request).await;
    assert_eq!(asked(&events), [1]);
    assert!(!events.iter().any(|e| matches!(e, RunEvent::CallAdopted { .. })), "{events:?}");
    // Not a later reply: once the question has had its answer, the old rule holds.
    let model = Arc::new(ScriptedModel::new([
        create(),
        made(),
        ModelResponse::calls([("c2", "drive_search_files", json!({"query": "Launch checklist"}))]),
        described("drive_share_file"),
    ]));
    let (outcome, events) = run(tinytools_examples::catalogue::registry(), &model, RunPolicy::default(), request).await;
    assert_eq!(asked(&events), [1]);
    assert!(!completed(&events, "drive_share_file"), "{events:?}");
    assert!(outcome.answer.contains("`drive_share_file` function"), "{}", outcome.answer);
}
