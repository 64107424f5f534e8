//! A call spelt out in prose after the answer to an unknown tool name, under the small-model
//! aids: a read-only look-up is taken for its call (that answer is the run's own words, the
//! tools that may fit, loaded), but a tool with side effects never is, whether after an
//! unknown name or after a real tool's output. Measured on Qwen2.5-Coder-1.5B: after
//! `create_document` was answered with `docs_create_document`'s signature, it wrote that call
//! in prose with its JSON; the run now ends on the sentence rather than create a document the
//! model only described.

use std::sync::Arc;
use tinytools_integration_tests::{every_aid, every_aid_policy};

use serde_json::json;
use tinytools::model::{Message, ModelResponse};
use tinytools::run::{AidAction, RunEvent, RunPolicy};
use tinytools::testkit::ScriptedModel;

const PROSE: &str = "To create a Google Docs document with a title and initial text, call the `docs_create_document` \
                     function with the arguments `{\"title\": \"Offsite agenda\", \"content\": \"Day 1: arrivals and \
                     dinner\"}`.";

const USER: &str = "Start a fresh doc called 'Offsite agenda' that begins with 'Day 1: arrivals and dinner'.";

fn ran(events: &[RunEvent], tool: &str) -> bool {
    events.iter().any(|e| matches!(e, RunEvent::ToolStarted { tool_name, .. } if tool_name == tool))
}

fn taken(events: &[RunEvent]) -> Vec<String> {
    events
        .iter()
        .filter_map(|e| match e {
            RunEvent::AidActed { aid, action: AidAction::TookCall { tool_name, .. } } if aid == "adopt_prose_calls" => {
                Some(tool_name.clone())
            }
            _ => None,
        })
        .collect()
}

#[tokio::test]
async fn a_read_only_look_up_in_prose_after_an_unknown_name_is_taken() {
    let registry = Arc::new(tinytools_examples::catalogue::registry());
    let model = Arc::new(ScriptedModel::new([
        ModelResponse::calls([("c", "find_file", json!({"query": "Q3 plan"}))]),
        ModelResponse::text(
            "To find it, call the `drive_search_files` function with the arguments `{\"query\": \"Q3 plan\"}`.",
        ),
        ModelResponse::text("The Q3 plan is f_204."),
    ]));
    let (outcome, events) =
        tinytools_integration_tests::run_recorded(registry, model, every_aid_policy(), "Find the Q3 plan in Drive.")
            .await;
    assert_eq!(taken(&events), ["drive_search_files"], "{events:?}");
    assert!(ran(&events, "drive_search_files"), "{events:?}");
    assert_eq!((outcome.answer.as_str(), outcome.turns), ("The Q3 plan is f_204.", 3));
}

#[tokio::test]
async fn a_side_effect_call_in_prose_is_never_taken_after_an_unknown_name_or_a_tools_output() {
    let registry = Arc::new(tinytools_examples::catalogue::registry());
    // After the unknown name's answer (which loads `docs_create_document`), the sentence is the
    // run's answer: the document is not created from prose.
    let model = Arc::new(ScriptedModel::new([
        ModelResponse::calls([("c", "create_document", json!({"title": "Offsite agenda"}))]),
        ModelResponse::text(PROSE),
    ]));
    let (outcome, events) =
        tinytools_integration_tests::run_recorded(registry.clone(), model.clone(), every_aid_policy(), USER).await;
    let offered = model.requests()[1].tools.iter().any(|tool| tool.name == "docs_create_document");
    assert!(offered, "the unknown name's answer loaded the tool the prose names");
    assert!(taken(&events).is_empty(), "{events:?}");
    assert!(!ran(&events, "docs_create_document"), "{events:?}");
    assert_eq!((outcome.answer.as_str(), outcome.turns), (PROSE, 2));

    // After a real tool's output, the same. With the question about unused values, that question
    // names `docs_create_document` (the values went into no call) and the model spells the call
    // out again: still only a sentence, never a document.
    for (aids, asked) in [(every_aid(), true), (every_aid().without("ask_about_unused_values"), false)] {
        let model = Arc::new(ScriptedModel::new([
            ModelResponse::calls([("c", "read_note", json!({"title": "groceries"}))]),
            ModelResponse::text(PROSE),
            ModelResponse::text(PROSE),
        ]));
        let policy = RunPolicy::default().with_aids(aids);
        let (outcome, events) =
            tinytools_integration_tests::run_recorded(registry.clone(), model.clone(), policy, USER).await;
        assert!(taken(&events).is_empty(), "{events:?}");
        assert!(!ran(&events, "docs_create_document"), "{events:?}");
        assert_eq!((outcome.answer.as_str(), outcome.turns), (PROSE, if asked { 3 } else { 2 }));
        let question = model.requests().get(2).and_then(|request| match request.messages.last() {
            Some(Message::Feedback { content }) => Some(content.clone()),
            _ => None,
        });
        assert_eq!(
            question.as_ref().is_some_and(|q| q.contains("`docs_create_document` takes:")),
            asked,
            "{question:?}"
        );
    }
}
