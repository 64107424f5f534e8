//! Grounded arguments (`#[grounded]`, checked by the loop's core whatever the aids): a call
//! whose grounded argument holds a value that no user message and no accepted tool result gave (with sources, no result of
//! theirs) is refused before the tool runs; the answer says where the value comes from and a
//! Deferred source is promoted; a Hidden source is never named; refusals never ground a value;
//! a resumed conversation's results do.

use std::sync::Arc;

use serde_json::{Value, json};
use tinytools::model::{Message, ModelResponse};
use tinytools::run::{Agent, Aids, Promotion, RunEvent, RunOutcome, RunPolicy};
use tinytools::testkit::ScriptedModel;
use tinytools::{Grounding, RegistryError, Tool, ToolExposure, ToolRegistry, ToolResult, tool};
use tinytools_integration_tests::{Recorder, bridge_only, calling};

async fn run(
    registry: ToolRegistry,
    model: Arc<ScriptedModel>,
    policy: RunPolicy,
    messages: Vec<Message>,
) -> (RunOutcome, Vec<RunEvent>) {
    let recorder = Arc::new(Recorder::default());
    let outcome = Agent::new(Arc::new(registry), model)
        .with_policy(policy)
        .with_events(recorder.clone())
        .run(messages)
        .await
        .expect("runs");
    (outcome, recorder.events())
}

/// The text of each tool message, in order.
fn tool_answers(outcome: &RunOutcome) -> Vec<(String, String, bool)> {
    outcome
        .transcript
        .messages
        .iter()
        .filter_map(|message| match message {
            Message::Tool { name, content, is_error, .. } => Some((name.clone(), content.clone(), *is_error)),
            _ => None,
        })
        .collect()
}

fn completed(events: &[RunEvent], tool: &str) -> usize {
    events.iter().filter(|e| matches!(e, RunEvent::ToolCompleted { tool_name, .. } if tool_name == tool)).count()
}

const LOG_CALL: &str =
    "I just got off a 15-minute call with Dana Ortiz from Globex about their renewal. Log it on her record.";

#[tokio::test]
async fn an_invented_id_is_refused_its_source_promoted_and_the_looked_up_id_runs() {
    let model = calling(vec![
        ("crm_log_call", json!({"contact_id": "12345", "notes": "renewal", "minutes": 15})),
        ("crm_find_contact", json!({"query": "Dana Ortiz"})),
        ("crm_log_call", json!({"contact_id": "c_12", "notes": "renewal", "minutes": 15})),
    ]);
    let (outcome, events) =
        run(tinytools_examples::catalogue::registry(), model.clone(), bridge_only(), vec![Message::user(LOG_CALL)])
            .await;

    let answers = tool_answers(&outcome);
    let (name, refusal, is_error) = &answers[0];
    assert_eq!(name, "crm_log_call");
    assert!(is_error, "the refusal is an error result");
    assert!(
        refusal
            .contains("`contact_id` \"12345\" is not in the user's words and was not returned by `crm_find_contact`")
            && refusal.contains("Call `crm_find_contact` first"),
        "{refusal}"
    );
    assert!(!answers[1].2 && !answers[2].2, "the look-up and the grounded call run: {answers:?}");
    assert_eq!(completed(&events, "crm_log_call"), 1, "the invented id never reached the tool");
    assert_eq!(outcome.answer, "done");

    let rejected = events
        .iter()
        .find_map(|e| match e {
            RunEvent::ToolRejected { call_id, reason } if call_id == "call_0" => Some(reason.clone()),
            _ => None,
        })
        .expect("the refusal is an event");
    assert!(rejected.contains("ungrounded `contact_id`") && !rejected.contains("12345"), "{rejected}");
    assert!(
        events.iter().any(|e| matches!(e, RunEvent::ToolsPromoted { names, cause: Promotion::GroundingSource }
            if names == &["crm_find_contact"])),
        "the deferred source is promoted: {events:?}"
    );
    let requests = model.requests();
    let offered = |i: usize| requests[i].tools.iter().any(|tool| tool.name == "crm_find_contact");
    assert!(!offered(0) && offered(1), "the source's declaration comes with the request after the refusal");
}

/// Echoes its text (a tool result that holds any value the model chooses).
#[tool(read_only)]
async fn echo(
    /// Anything.
    text: String,
) -> String {
    text
}

#[tokio::test]
async fn with_sources_another_tools_result_does_not_ground_a_value_and_a_refusal_never_does() {
    let mut registry = tinytools_examples::catalogue::registry();
    registry.register(Echo).expect("registers");
    let model = calling(vec![
        ("echo", json!({"text": "c_99"})),
        ("crm_log_call", json!({"contact_id": "c_99", "notes": "renewal"})),
        // Not a repeat (other arguments), and the value is now in the refusal's own text too.
        ("crm_log_call", json!({"contact_id": "c_99", "notes": "renewal", "minutes": 15})),
        // The user's words always count.
        ("crm_log_call", json!({"contact_id": "Dana Ortiz", "notes": "renewal", "minutes": 15})),
    ]);
    let (outcome, events) = run(registry, model, bridge_only(), vec![Message::user(LOG_CALL)]).await;
    let answers = tool_answers(&outcome);
    assert!(!answers[0].2, "{answers:?}");
    for (_, text, is_error) in &answers[1..3] {
        assert!(
            *is_error && text.contains("is not in the user's words and was not returned by `crm_find_contact`"),
            "{text}"
        );
    }
    assert!(!answers[3].2, "{answers:?}");
    assert_eq!(completed(&events, "crm_log_call"), 1);
}

#[tokio::test]
async fn without_sources_the_users_words_or_any_result_ground_a_value() {
    let mut registry = tinytools_examples::catalogue::registry();
    registry.register(Echo).expect("registers");
    let model = calling(vec![
        ("crm_update_deal", json!({"deal_id": "d_100", "stage": "closed won"})),
        ("crm_update_deal", json!({"deal_id": "d_3", "stage": "closed won"})),
        ("echo", json!({"text": "the Globex deal is d_100"})),
        ("crm_update_deal", json!({"deal_id": "d_100", "stage": "negotiation"})),
    ]);
    let user = "The Globex renewal closed: mark deal d_3, or whichever deal is Globex's, as closed won.";
    let (outcome, events) = run(registry, model, bridge_only(), vec![Message::user(user)]).await;
    let answers = tool_answers(&outcome);
    assert!(answers[0].2, "d_100 is nowhere yet: {answers:?}");
    assert!(
        answers[0].1.contains("appears neither in the user's words nor in any tool result")
            && answers[0].1.contains("`tool_search` finds one"),
        "{}",
        answers[0].1
    );
    assert!(!answers[1].2, "d_3 is in the user's words: {answers:?}");
    assert!(!answers[3].2, "d_100 is in a tool's result now: {answers:?}");
    assert_eq!(completed(&events, "crm_update_deal"), 2);
}

#[tokio::test]
async fn a_value_in_other_letter_case_is_refused_with_the_conversations_spelling() {
    let model = calling(vec![
        ("gmail_read_thread", json!({"thread_id": "T_5530"})),
        ("gmail_read_thread", json!({"thread_id": "t_5530"})),
    ]);
    let user = "Can you pull up the whole back-and-forth in conversation t_5530? Oldest first is fine.";
    let (outcome, events) =
        run(tinytools_examples::catalogue::registry(), model, bridge_only(), vec![Message::user(user)]).await;
    let answers = tool_answers(&outcome);
    let (_, refusal, is_error) = &answers[0];
    assert!(
        *is_error
            && refusal.contains("`thread_id` \"T_5530\" is not spelled as in this conversation, which has \"t_5530\"")
            && refusal.contains("call `gmail_read_thread` again with `thread_id` \"t_5530\", exactly as written"),
        "{refusal}"
    );
    assert!(!refusal.contains("gmail_search"), "the value is here: no look-up to send the model to: {refusal}");
    assert!(!events.iter().any(|e| matches!(e, RunEvent::ToolsPromoted { .. })), "nothing to promote: {events:?}");
    assert!(!answers[1].2, "the conversation's spelling runs: {answers:?}");
    assert_eq!(completed(&events, "gmail_read_thread"), 1);
}

#[tokio::test]
async fn a_refused_call_is_checked_again_when_repeated_and_runs_once_the_look_up_grounds_it() {
    // Under the default aids and the small-model ones alike: a refusal is never replayed (only
    // a call that worked is), so each repeat meets the gate again.
    for policy in [bridge_only(), bridge_only().with_aids(Aids::small_model())] {
        let log = json!({"contact_id": "c_12", "notes": "renewal", "minutes": 15});
        let model = calling(vec![
            ("crm_log_call", log.clone()),
            ("crm_log_call", log.clone()),
            ("crm_find_contact", json!({"query": "Dana Ortiz"})),
            ("crm_log_call", log.clone()),
        ]);
        let aids = format!("{:?}", policy.aids);
        let (outcome, events) =
            run(tinytools_examples::catalogue::registry(), model, policy, vec![Message::user(LOG_CALL)]).await;
        let answers = tool_answers(&outcome);
        assert!(answers[0].2 && answers[0].1.contains("Call `crm_find_contact` first"), "{aids}: {answers:?}");
        assert_eq!(answers[1], answers[0], "{aids}: still ungrounded, the same call is refused again by the gate");
        let rejected = events.iter().filter(|e| matches!(e, RunEvent::ToolRejected { .. })).count();
        assert_eq!(rejected, 2, "{aids}: {events:?}");
        assert!(!events.iter().any(|e| matches!(e, RunEvent::AidActed { .. })), "{aids}: {events:?}");
        assert!(
            !answers[3].2 && answers[3].1.contains("logged a 15-minute call with c_12"),
            "{aids}: after the look-up the same call runs: {answers:?}"
        );
        assert_eq!(completed(&events, "crm_log_call"), 1, "{aids}");
    }
}

#[tokio::test]
async fn arguments_of_the_wrong_shape_holding_a_made_up_id_are_told_both_at_once() {
    let model = calling(vec![(
        "crm_log_call",
        json!({"contact_id": "GLOBX-1234", "notes": "Renewal call", "minutes": 15, "amount": 5}),
    )]);
    let (outcome, events) =
        run(tinytools_examples::catalogue::registry(), model, bridge_only(), vec![Message::user(LOG_CALL)]).await;
    let answers = tool_answers(&outcome);
    let (_, answer, is_error) = &answers[0];
    assert!(*is_error, "{answer}");
    let shape = answer.find("'amount' was unexpected").expect("the shape's problem is told");
    let grounding = answer.find("`contact_id` \"GLOBX-1234\" is not in the user's words").expect("so is the id's");
    assert!(shape < grounding && answer.contains("Call `crm_find_contact` first"), "{answer}");
    let reason = events
        .iter()
        .find_map(|e| match e {
            RunEvent::ToolRejected { reason, .. } => Some(reason.clone()),
            _ => None,
        })
        .expect("one rejection event");
    assert!(reason.contains("ungrounded `contact_id`") && !reason.contains("GLOBX-1234"), "{reason}");
    let promoted: Vec<(&Vec<String>, &Promotion)> = events
        .iter()
        .filter_map(|e| match e {
            RunEvent::ToolsPromoted { names, cause } => Some((names, cause)),
            _ => None,
        })
        .collect();
    assert!(
        matches!(promoted.as_slice(), [(a, Promotion::RejectedCall), (b, Promotion::GroundingSource)]
            if a.as_slice() == ["crm_log_call"] && b.as_slice() == ["crm_find_contact"]),
        "{promoted:?}"
    );
}

#[tokio::test]
async fn a_resumed_conversations_results_ground_a_value_and_no_choice_of_aids_turns_the_gate_off() {
    let earlier = vec![
        Message::user("Who is Dana Ortiz in the CRM?"),
        Message::Assistant {
            content: String::new(),
            tool_calls: ModelResponse::calls([("c0", "crm_find_contact", json!({"query": "Dana Ortiz"}))]).tool_calls,
        },
        Message::Tool {
            call_id: "c0".into(),
            name: "crm_find_contact".into(),
            content: r#"{"contacts": [{"id": "c_12", "name": "Dana Ortiz"}]}"#.into(),
            is_error: false,
        },
        Message::Assistant { content: "She is contact c_12 at Globex.".into(), tool_calls: Vec::new() },
        Message::user("Log a 15-minute call with her about the renewal."),
    ];
    let model = calling(vec![("crm_log_call", json!({"contact_id": "c_12", "notes": "renewal", "minutes": 15}))]);
    let (_, events) = run(tinytools_examples::catalogue::registry(), model, bridge_only(), earlier).await;
    assert_eq!(completed(&events, "crm_log_call"), 1, "the earlier result grounds c_12");

    // The gate is the core's, not an aid's: with no aid at all an invented id is still refused.
    let model = calling(vec![("crm_log_call", json!({"contact_id": "12345", "notes": "renewal"}))]);
    let bare = bridge_only().with_aids(Aids::none());
    let (outcome, events) =
        run(tinytools_examples::catalogue::registry(), model, bare, vec![Message::user(LOG_CALL)]).await;
    assert_eq!(completed(&events, "crm_log_call"), 0, "the invented id never reached the tool");
    let answers = tool_answers(&outcome);
    assert!(answers[0].2 && answers[0].1.contains("Call `crm_find_contact` first"), "{answers:?}");
}

/// Reads a secret record's id. Hidden: the model must never learn it exists.
#[tool(exposure = "hidden", read_only)]
async fn lookup_record(
    /// Anything.
    query: String,
) -> String {
    format!("record r_7 for {query}")
}

/// Archive a record.
#[tool(destructive = false)]
async fn archive_record(
    /// The record's id.
    #[grounded(from = "lookup_record")]
    record_id: String,
) -> String {
    format!("archived {record_id}")
}

#[tokio::test]
async fn a_hidden_source_is_never_named_and_then_any_result_or_the_users_words_ground_the_value() {
    let mut registry = ToolRegistry::new();
    registry.register(LookupRecord).expect("registers").register(ArchiveRecord).expect("registers");
    let model = calling(vec![
        ("archive_record", json!({"record_id": "r_1"})),
        ("archive_record", json!({"record_id": "r_42"})),
    ]);
    let (outcome, events) =
        run(registry, model.clone(), RunPolicy::default(), vec![Message::user("Archive record r_42.")]).await;
    let answers = tool_answers(&outcome);
    assert!(answers[0].2 && answers[0].1.contains("appears neither in the user's words"), "{answers:?}");
    assert!(!answers[1].2, "with no source it can offer, the user's words ground the value: {answers:?}");
    assert_eq!(completed(&events, "archive_record"), 1);
    let seen = serde_json::to_string(&model.requests().iter().map(|r| &r.messages).collect::<Vec<_>>()).expect("json");
    assert!(!seen.contains("lookup_record"), "a Hidden source's name reached the model");
}

/// A hand-written tool whose grounding names an argument its schema does not have.
struct Misnamed;

#[async_trait::async_trait]
impl Tool for Misnamed {
    fn name(&self) -> &str {
        "archive"
    }
    fn description(&self) -> &str {
        "Archive a record."
    }
    fn parameters_schema(&self) -> Value {
        json!({"type": "object", "properties": {"record_id": {"type": "string"}}, "required": ["record_id"]})
    }
    fn grounding(&self) -> &'static [Grounding] {
        const GROUNDING: &[Grounding] = &[Grounding::new("recordId")];
        GROUNDING
    }
    async fn execute(&self, _: Value) -> anyhow::Result<ToolResult> {
        Ok(ToolResult::text("archived"))
    }
}

#[test]
fn registering_a_grounding_that_names_no_argument_is_an_error() {
    let error = ToolRegistry::new().register_as(Arc::new(Misnamed), ToolExposure::Direct).map(|_| ()).unwrap_err();
    assert!(
        matches!(&error, RegistryError::UnknownGroundedArgument { tool, argument } if tool == "archive" && *argument == "recordId")
    );
    assert!(error.to_string().contains("has no property `recordId`"), "{error}");
}

/// Adds a line to a note, optionally under an earlier line.
#[tool(destructive = false)]
async fn note_add_line(
    /// The line.
    text: String,
    /// The line to indent it under, if any.
    #[grounded]
    under: Option<String>,
) -> String {
    format!("added {text} under {under:?}")
}

const POST: &str = "Let everyone in #general know the office is closed this Friday.";

#[tokio::test]
async fn an_optional_guess_is_refused_with_leave_it_out_its_source_not_promoted_and_runs_without_it() {
    let post = |thread: Option<&str>| {
        let mut args = json!({"channel": "#general", "text": "The office is closed this Friday."});
        if let Some(ts) = thread {
            args["thread_ts"] = json!(ts);
        }
        ("slack_post_message", args)
    };
    let model = calling(vec![
        post(Some("1700000000.000100")),
        post(None),
        ("slack_search_messages", json!({"query": "in:#ops deploy"})),
        post(Some("1733009000.000200")),
    ]);
    let registry = tinytools_examples::catalogue::registry();
    let (outcome, events) = run(registry, model, bridge_only(), vec![Message::user(POST)]).await;
    let answers = tool_answers(&outcome);
    assert_eq!(
        (answers[0].1.as_str(), answers[0].2),
        (
            "`thread_ts` \"1700000000.000100\" is not in the user's words and was not returned by \
             `slack_search_messages` in this conversation, so it is a guess. `thread_ts` is optional: call \
             `slack_post_message` again without it. Only if the request needs one, call `slack_search_messages` \
             first and use the value from its result.",
            true
        )
    );
    assert!(
        !events.iter().any(
            |e| matches!(e, RunEvent::ToolsPromoted { names, .. } if names.iter().any(|n| n == "slack_search_messages"))
        ),
        "an optional guess is left out, not looked up: {events:?}"
    );
    assert!(!answers[1].2 && !answers[3].2, "left out, and a ts a search returned: {answers:?}");
    assert_eq!(completed(&events, "slack_post_message"), 2);

    // Without sources: the same, with "look it up" as the second way.
    let mut registry = ToolRegistry::new();
    registry.register(NoteAddLine).expect("registers");
    let model = calling(vec![("note_add_line", json!({"text": "buy milk", "under": "line 7"}))]);
    let (outcome, _) = run(registry, model, bridge_only(), vec![Message::user("Add 'buy milk'.")]).await;
    let refusal = &tool_answers(&outcome)[0];
    assert!(
        refusal.2
            && refusal.1.ends_with(
                "so it is a guess. `under` is optional: call `note_add_line` again without it. Only if the request \
                 needs one, look it up with a tool first or ask the user for it."
            ),
        "{refusal:?}"
    );
}
