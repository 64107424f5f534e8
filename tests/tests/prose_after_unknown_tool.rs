//! A call spelt out in prose after the answer to an unknown tool name: a tool with side effects
//! never runs from it, under the default aids or the small-model ones. Measured on
//! Qwen2.5-Coder-1.5B: after `create_document` was answered with `docs_create_document`'s
//! signature, it wrote that call in prose with its JSON; the run ends on the sentence rather
//! than create a document the model only described.

use std::sync::Arc;

use serde_json::json;
use tinytools::model::ModelResponse;
use tinytools::run::{RunEvent, RunPolicy};
use tinytools::testkit::ScriptedModel;
use tinytools_integration_tests::small_model_policy;

const PROSE: &str = "To create a Google Docs document with a title and initial text, call the `docs_create_document` \
                     function with the arguments `{\"title\": \"Offsite agenda\", \"content\": \"Day 1: arrivals and \
                     dinner\"}`.";

const USER: &str = "Start a fresh doc called 'Offsite agenda' that begins with 'Day 1: arrivals and dinner'.";

fn ran(events: &[RunEvent], tool: &str) -> bool {
    events.iter().any(|e| matches!(e, RunEvent::ToolStarted { tool_name, .. } if tool_name == tool))
}

#[tokio::test]
async fn a_side_effect_call_in_prose_after_an_unknown_name_is_the_answer() {
    let registry = Arc::new(tinytools_examples::catalogue::registry());
    for policy in [RunPolicy::default(), small_model_policy()] {
        let aids = format!("{:?}", policy.aids);
        // The unknown name's answer loads `docs_create_document`; the sentence that follows is
        // the run's answer: the document is not created from prose.
        let model = Arc::new(ScriptedModel::new([
            ModelResponse::calls([("c", "create_document", json!({"title": "Offsite agenda"}))]),
            ModelResponse::text(PROSE),
        ]));
        let (outcome, events) =
            tinytools_integration_tests::run_recorded(registry.clone(), model.clone(), policy, USER).await;
        let offered = model.requests()[1].tools.iter().any(|tool| tool.name == "docs_create_document");
        assert!(offered, "{aids}: the unknown name's answer loaded the tool the prose names");
        assert!(!events.iter().any(|e| matches!(e, RunEvent::AidActed { .. })), "{aids}: {events:?}");
        assert!(!ran(&events, "docs_create_document"), "{aids}: {events:?}");
        assert_eq!((outcome.answer.as_str(), outcome.turns), (PROSE, 2), "{aids}");
    }
}
