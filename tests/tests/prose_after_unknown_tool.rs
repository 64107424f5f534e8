//! A call spelt out in prose after the answer to an unknown tool name is adopted as before any
//! tool answered: that answer is the run's own words (the tools that may fit, loaded), not a
//! tool's output. Measured on Qwen2.5-Coder-1.5B: after `create_document` was answered with
//! `docs_create_document`'s signature, it wrote that call in prose with its JSON, and the run
//! ended on the sentence.

use std::sync::Arc;

use serde_json::json;
use tinytools::model::ModelResponse;
use tinytools::run::{LoopGuard, RunEvent, RunPolicy};
use tinytools::testkit::ScriptedModel;

const PROSE: &str = "To create a Google Docs document with a title and initial text, call the `docs_create_document` \
                     function with the arguments `{\"title\": \"Offsite agenda\", \"content\": \"Day 1: arrivals and \
                     dinner\"}`.";

const USER: &str = "Start a fresh doc called 'Offsite agenda' that begins with 'Day 1: arrivals and dinner'.";

fn ran(events: &[RunEvent], tool: &str) -> bool {
    events.iter().any(|e| matches!(e, RunEvent::ToolCompleted { tool_name, .. } if tool_name == tool))
}

#[tokio::test]
async fn prose_after_an_unknown_name_is_adopted_but_not_after_a_tools_output() {
    let registry = Arc::new(tinytools_examples::catalogue::registry());
    let model = Arc::new(ScriptedModel::new([
        ModelResponse::calls([("c", "create_document", json!({"title": "Offsite agenda"}))]),
        ModelResponse::text(PROSE),
        ModelResponse::text("Created 'Offsite agenda'."),
    ]));
    let (outcome, events) =
        tinytools_integration_tests::run_recorded(registry.clone(), model, RunPolicy::default(), USER).await;
    assert!(
        events
            .iter()
            .any(|e| matches!(e, RunEvent::CallAdopted { tool_name, .. } if tool_name == "docs_create_document")),
        "{events:?}"
    );
    assert!(ran(&events, "docs_create_document"), "{events:?}");
    assert_eq!(outcome.answer, "Created 'Offsite agenda'.");

    // After a real tool's output, a tool with side effects is not taken from prose (the
    // question about unused values, which would name it, left out here).
    let policy = RunPolicy::default().with_loop_guard(LoopGuard::default().with_ask_about_unused_values(false));
    let model = Arc::new(ScriptedModel::new([
        ModelResponse::calls([("c", "read_note", json!({"title": "groceries"}))]),
        ModelResponse::text(PROSE),
    ]));
    let (outcome, events) = tinytools_integration_tests::run_recorded(registry, model, policy, USER).await;
    assert!(!events.iter().any(|e| matches!(e, RunEvent::CallAdopted { .. })), "{events:?}");
    assert!(!ran(&events, "docs_create_document"));
    assert_eq!(outcome.answer, PROSE);
}
