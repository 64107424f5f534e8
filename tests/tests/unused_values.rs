//! Values the request spelt out that no call used (the `ask_about_unused_values` aid, opt-in:
//! in no preset): a run about to end with one left over asks once, in a
//! `Message::Feedback` that speaks of the user's request (never in the user's voice), whether
//! a call still needs it, naming and promoting the deferred tools that may take it; it does not
//! ask when every value went into a call, when no tool was called, when discovery is off, or in
//! a run without the aid (the default). A call the model makes after the question runs only as
//! any call would: one of a tool with side effects described in prose never runs.
//!
//! The same check over a thousand tools (the live benchmark's scale arm) is
//! `bench/tests/unused_values_at_scale.rs`.

use std::sync::Arc;
use tinytools_integration_tests::{every_aid, every_aid_policy};

use serde_json::json;
use tinytools::ToolRegistry;
use tinytools::model::{Message, ModelRequest, ModelResponse};
use tinytools::run::aids::NudgeDescribedCalls;
use tinytools::run::{AidAction, Promotion, RunEvent, RunOutcome, RunPolicy, StopReason};
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
        .filter(|e| {
            matches!(e, RunEvent::AidActed { aid, action: AidAction::Feedback { without_tools: false, final_answer: false } }
                if aid == "ask_about_unused_values")
        })
        .count()
}

/// Whether an aid took a call for a reply.
fn took_a_call(events: &[RunEvent]) -> bool {
    events.iter().any(|e| matches!(e, RunEvent::AidActed { action: AidAction::TookCall { .. }, .. }))
}

#[tokio::test]
async fn a_run_that_restates_its_last_step_is_asked_once_with_the_tools_that_take_the_value() {
    let model = Arc::new(ScriptedModel::new([
        free_slots(),
        ModelResponse::text(RESTATED),
        invite(),
        ModelResponse::text("Booked 'Design sync' at 10:00."),
    ]));
    let (outcome, events) = run(tinytools_examples::catalogue::registry(), &model, every_aid_policy(), BOOK).await;
    assert_eq!(asked(&events), 1);
    let question = questions(&outcome)[0];
    assert!(
        question.starts_with(
            "'Design sync' from the user's request has not gone into any call. If the request still needs a call \
             for it, make that call; if not, answer the user.\nCallable now:\n`calendar_invite` takes: {title: \
             string, start: string, duration_minutes: integer, attendees: string[]"
        ),
        "{question}"
    );
    // Of the called tool's family, never a destructive one (`calendar_cancel_event`).
    let named: Vec<&str> = question.lines().skip(2).filter_map(|line| line.split('`').nth(1)).collect();
    assert_eq!(named, ["calendar_invite", "calendar_list_events"], "{question}");
    let requests: Vec<ModelRequest> = model.requests();
    let declared: Vec<&str> = requests[2].tools.iter().map(|t| t.name.as_str()).collect();
    assert!(declared.contains(&"calendar_invite"), "{declared:?}");
    assert!(
        events.iter().any(|e| matches!(e, RunEvent::ToolsPromoted { names, cause: Promotion::Aid { aid } }
            if aid == "ask_about_unused_values" && names == &["calendar_invite", "calendar_list_events"])),
        "the question promotes the tools it names: {events:?}"
    );
    assert!(
        events.iter().any(|e| matches!(e, RunEvent::ToolCompleted { tool_name, .. } if tool_name == "calendar_invite"))
    );
    assert_eq!((outcome.answer.as_str(), outcome.stop), ("Booked 'Design sync' at 10:00.", StopReason::Answered));

    // The request is the user's, not the run's feedback (the nudge before the call, from the
    // `nudge_described_calls` aid, which is in no preset).
    let model = Arc::new(ScriptedModel::new([
        ModelResponse::text("I'll use `calendar_free_slots` for that."),
        free_slots(),
        ModelResponse::text(RESTATED),
        invite(),
        ModelResponse::text("Booked."),
    ]));
    let nudging = RunPolicy::default().with_aids(every_aid().with(NudgeDescribedCalls));
    let (outcome, events) = run(tinytools_examples::catalogue::registry(), &model, nudging, BOOK).await;
    assert!(
        events.iter().any(|e| matches!(e, RunEvent::AidActed { aid, .. } if aid == "nudge_described_calls")),
        "{events:?}"
    );
    assert_eq!((asked(&events), outcome.answer.as_str()), (1, "Booked."));
    assert!(questions(&outcome)[1].starts_with("'Design sync' from the user's request"), "{:?}", questions(&outcome));

    // Asked once: the same answer again ends the run.
    let model =
        Arc::new(ScriptedModel::new([free_slots(), ModelResponse::text(RESTATED), ModelResponse::text(RESTATED)]));
    let (outcome, events) = run(tinytools_examples::catalogue::registry(), &model, every_aid_policy(), BOOK).await;
    assert_eq!((asked(&events), outcome.answer.as_str(), model.requests().len()), (1, RESTATED, 3));
}

#[tokio::test]
async fn no_question_when_every_value_went_into_a_call_no_tool_ran_discovery_is_off_or_the_aid_is_not_used() {
    let catalogue = tinytools_examples::catalogue::registry;
    // Every value used: 'Design sync' went into the invitation.
    let model = Arc::new(ScriptedModel::new([free_slots(), invite(), ModelResponse::text("Booked.")]));
    let (outcome, events) = run(catalogue(), &model, every_aid_policy(), BOOK).await;
    assert!(asked(&events) == 0 && questions(&outcome).is_empty(), "{events:?}");
    // No tool called: the model answered straight away.
    let model = Arc::new(ScriptedModel::new([ModelResponse::text("I cannot book meetings.")]));
    let (_, events) = run(catalogue(), &model, every_aid_policy(), BOOK).await;
    assert!(asked(&events) == 0);
    // Only `tool_search` called: a search is not a use.
    let search = ModelResponse::calls([("s", "tool_search", json!({"query": "calendar booking"}))]);
    let model = Arc::new(ScriptedModel::new([search, ModelResponse::text(RESTATED)]));
    let (_, events) = run(catalogue(), &model, every_aid_policy(), BOOK).await;
    assert!(asked(&events) == 0);
    // Off track: the only tool called is one the request does not rank, and so are its kin.
    let convert =
        ModelResponse::calls([("c", "unit_convert", json!({"value": 10, "from_unit": "mi", "to_unit": "km"}))]);
    let model = Arc::new(ScriptedModel::new([convert, ModelResponse::text("16.09344 km")]));
    let (_, events) =
        run(catalogue(), &model, every_aid_policy(), "lee@acme.com needs to be able to edit f_310, sort that out?")
            .await;
    assert!(asked(&events) == 0, "{events:?}");
    // No call ran without error: the only one was refused (measured: asked after such a run
    // had apologised, the model emailed the address in the request). With the call answered,
    // the same run asks (the first test).
    let refused = ModelResponse::calls([("c1", "calendar_free_slots", json!({"date": "2026-03-17"}))]);
    let model = Arc::new(ScriptedModel::new([refused, ModelResponse::text(RESTATED)]));
    let (outcome, events) = run(catalogue(), &model, every_aid_policy(), BOOK).await;
    assert!(
        events.iter().any(|e| matches!(e, RunEvent::ToolRejected { .. }))
            && asked(&events) == 0
            && outcome.answer == RESTATED,
        "{events:?}"
    );
    // Not at the last turn: the run ends answered, as before.
    let model = Arc::new(ScriptedModel::new([free_slots(), ModelResponse::text(RESTATED)]));
    let (outcome, events) = run(catalogue(), &model, every_aid_policy().with_max_turns(2), BOOK).await;
    assert!(asked(&events) == 0 && outcome.stop == StopReason::Answered, "{events:?}");
    // The default aids, or the small-model ones without it.
    let without = RunPolicy::default().with_aids(every_aid().without("ask_about_unused_values"));
    for policy in [RunPolicy::default(), without] {
        let model = Arc::new(ScriptedModel::new([free_slots(), ModelResponse::text(RESTATED)]));
        let (outcome, events) = run(catalogue(), &model, policy, BOOK).await;
        assert!(asked(&events) == 0 && outcome.answer == RESTATED && questions(&outcome).is_empty(), "{events:?}");
    }
    // Every tool Direct: no tool to name, no question (measured: with 41 tools declared the
    // model answered such a question in prose).
    let direct = tinytools_examples::catalogue::all_direct_registry();
    let model = Arc::new(ScriptedModel::new([free_slots(), ModelResponse::text(RESTATED)]));
    let (outcome, events) = run(direct, &model, every_aid_policy(), BOOK).await;
    assert!(asked(&events) == 0 && outcome.answer == RESTATED, "{events:?}");
}

/// Measured at 1,041 tools: asked with `drive_share_file` named first, Qwen2.5-Coder-1.5B
/// answered with the call's JSON inside a sentence. The question is the run's, not the user's:
/// it reopens nothing, and a tool with side effects is never taken from prose, whether the
/// question named it or not. Only a read-only look-up described in the reply is made.
#[tokio::test]
async fn the_reply_to_the_question_never_makes_a_call_with_side_effects_from_prose() {
    let create = || ModelResponse::calls([("c1", "docs_create_document", json!({"title": "Launch checklist"}))]);
    let made = || ModelResponse::text("I made 'Launch checklist' (doc_88).");
    let described = |tool: &str| {
        format!(
            "To let ben@acme.com edit it, you can use the `{tool}` function with the following arguments:\n```json\n\
             {{\"file_id\": \"doc_88\", \"email\": \"ben@acme.com\", \"role\": \"writer\"}}\n```"
        )
    };
    let request = "Make me a new doc called 'Launch checklist' and let ben@acme.com edit it.";
    let started = |events: &[RunEvent], tool: &str| {
        events.iter().any(|e| matches!(e, RunEvent::ToolStarted { tool_name, .. } if tool_name == tool))
    };
    // The question names `drive_share_file` (and promotes it); the reply describes its call
    // with JSON, or (measured at 1,041 tools) as assignments claimed done, or only in part: the
    // sentence is the answer and nothing is shared.
    let claimed = "I have called the `drive_share_file` function with the arguments `file_id=\"doc_88\"`, \
                   `email=\"ben@acme.com\"`, and `role=\"writer\"`.";
    let partial = "I have called `drive_share_file` with `file_id=\"doc_88\"`, `email=\"ben@acme.com\"`.";
    for reply in [described("drive_share_file"), claimed.to_owned(), partial.to_owned()] {
        let model = Arc::new(ScriptedModel::new([create(), made(), ModelResponse::text(reply.clone())]));
        let (outcome, events) =
            run(tinytools_examples::catalogue::registry(), &model, every_aid_policy(), request).await;
        assert_eq!(asked(&events), 1, "{events:?}");
        let named: Vec<&str> =
            questions(&outcome)[0].lines().skip(2).filter_map(|line| line.split('`').nth(1)).collect();
        assert_eq!(named.first(), Some(&"drive_share_file"), "{named:?}");
        assert!(model.requests()[2].tools.iter().any(|t| t.name == "drive_share_file"), "promoted with the question");
        assert!(!took_a_call(&events) && !started(&events, "drive_share_file"), "{reply}: {events:?}");
        assert_eq!((outcome.answer.as_str(), outcome.stop, outcome.turns), (reply.as_str(), StopReason::Answered, 3));
    }

    // The reply before the question sent back word for word, a tool the question did not name,
    // or a later reply: never run either.
    for script in [
        vec![
            create(),
            ModelResponse::text(described("drive_share_file")),
            ModelResponse::text(described("drive_share_file")),
        ],
        vec![create(), made(), ModelResponse::text(described("gmail_send"))],
        vec![
            create(),
            made(),
            ModelResponse::calls([("c2", "drive_search_files", json!({"query": "Launch checklist"}))]),
            ModelResponse::text(described("drive_share_file")),
        ],
    ] {
        let model = Arc::new(ScriptedModel::new(script));
        let (outcome, events) =
            run(tinytools_examples::catalogue::registry(), &model, every_aid_policy(), request).await;
        assert_eq!(asked(&events), 1, "{events:?}");
        assert!(!took_a_call(&events), "{events:?}");
        assert!(!started(&events, "drive_share_file") && !started(&events, "gmail_send"), "{events:?}");
        assert!(outcome.answer.contains("function with the following arguments"), "{}", outcome.answer);
    }

    // A read-only look-up the question named, described in the reply, is made.
    let model = Arc::new(ScriptedModel::new([
        free_slots(),
        ModelResponse::text(RESTATED),
        ModelResponse::text(
            "First check the day: call `calendar_list_events` with {\"from\": \"2026-03-17\", \"to\": \"2026-03-17\"}.",
        ),
        ModelResponse::text("Only the standup is on that day."),
    ]));
    let (outcome, events) = run(tinytools_examples::catalogue::registry(), &model, every_aid_policy(), BOOK).await;
    assert_eq!(asked(&events), 1, "{events:?}");
    assert!(questions(&outcome)[0].contains("`calendar_list_events` takes:"), "{:?}", questions(&outcome));
    assert!(
        events.iter().any(|e| matches!(e, RunEvent::AidActed { aid, action: AidAction::TookCall { tool_name, .. } }
            if aid == "adopt_prose_calls" && tool_name == "calendar_list_events")),
        "{events:?}"
    );
    assert!(started(&events, "calendar_list_events"), "{events:?}");
    assert_eq!(outcome.answer, "Only the standup is on that day.");
}
