//! The agent loop with host middleware: exposure middleware never sees a deferred tool,
//! microcompaction charges the tool schemas, and the order of the wire's tools array.

use std::sync::{Arc, Mutex};

use serde_json::json;
use tinytools::model::{Message, ModelRequest, ModelResponse};
use tinytools::run::{Agent, RunEvent};
use tinytools::testkit::ScriptedModel;
use tinytools::{ToolExposure, ToolRegistry, tool};
use tinytools_examples::catalogue;
use tinytools_integration_tests::{Recorder, bridge_only, names, spec_script};

/// Records what `before_model` sees.
#[derive(Default)]
struct Sees(Mutex<Vec<Vec<String>>>);

#[async_trait::async_trait]
impl tinytools::middleware::Middleware for Sees {
    async fn before_model(&self, request: &mut ModelRequest) {
        if let Ok(mut seen) = self.0.lock() {
            seen.push(request.tools.iter().map(|t| t.name.clone()).collect());
        }
    }
}

#[tokio::test]
async fn exposure_middleware_never_sees_a_deferred_tool() {
    use tinytools::middleware::{ContextualToolSelectionMiddleware, DynamicToolSelectionMiddleware};

    let sees = Arc::new(Sees::default());
    let model = Arc::new(spec_script());
    let registry = Arc::new(catalogue::registry());
    Agent::new(registry.clone(), model.clone())
        .with_policy(bridge_only())
        .with_middleware(Arc::new(DynamicToolSelectionMiddleware::new(|_, tool| tool.name != "read_note")))
        .with_middleware(sees.clone())
        .run(vec![Message::user("What is ACME at?")])
        .await
        .expect("runs");
    let seen = sees.0.lock().map(|s| s.clone()).unwrap_or_default();
    assert_eq!(seen.len(), 3);
    for tools in &seen {
        assert_eq!(tools, &["tool_search"], "after the dynamic selection, and never a searched (deferred) tool");
    }
    let requests = model.requests();
    assert_eq!(names(&requests[0]), ["tool_search"]);
    assert!(names(&requests[1]).contains(&"stock_quote"), "searched tools are appended after exposure middleware");

    let all_direct = Arc::new(catalogue::all_direct_registry());
    let model = Arc::new(ScriptedModel::new([ModelResponse::text("sunny")]));
    let contextual = ContextualToolSelectionMiddleware::new(3).always(["read_note"]);
    Agent::new(all_direct, model.clone())
        .with_middleware(Arc::new(contextual))
        .run(vec![Message::user("What's the weather forecast in Lisbon for the next days?")])
        .await
        .expect("runs");
    let offered = names(&model.requests()[0]).into_iter().map(str::to_owned).collect::<Vec<_>>();
    assert!(
        offered.len() <= 4
            && offered.contains(&"weather_forecast".to_owned())
            && offered.contains(&"read_note".to_owned()),
        "{offered:?}"
    );
}

#[tokio::test]
async fn microcompaction_charges_tool_schemas_and_compacts_a_quarter_earlier() {
    use tinytools::middleware::{MicrocompactMiddleware, Middleware};
    use tinytools::schema::{EstimatedTokens, TokenCounter};

    let long_result = "x".repeat(4_500); // ≈ 1,000 estimated tokens
    let messages: Vec<Message> = (0..4)
        .map(|i| Message::Tool {
            call_id: format!("c{i}"),
            name: "read_note".into(),
            content: long_result.clone(),
            is_error: false,
        })
        .collect();
    let conversation: usize =
        messages.iter().map(|m| EstimatedTokens.count(&serde_json::to_string(m).unwrap_or_default())).sum();
    let threshold = conversation * 4 / 3; // the conversation alone uses three quarters of it
    let small = vec![tinytools::ToolSchema::new("t", "tiny", json!({"type": "object"}))];
    let quarter =
        vec![tinytools::ToolSchema::new("t", "word ".repeat(threshold * 9 / 20 + 50), json!({"type": "object"}))];

    let compact = MicrocompactMiddleware::new(threshold).keep_recent(1);
    assert!(!compact.gate(&messages, &small));
    assert!(compact.gate(&messages, &quarter), "schemas that eat a quarter of the budget trip the gate");
    let mut sent = messages.clone();
    compact.before_send(&mut sent, &quarter).await;
    let elided = sent
        .iter()
        .filter(|m| matches!(m, Message::Tool { content, .. } if content.starts_with("[earlier tool result elided")))
        .count();
    assert_eq!(elided, 3, "all but the latest result");

    // In a run: the request is compacted, the transcript keeps everything.
    let model = Arc::new(ScriptedModel::new([
        ModelResponse::calls([("a", "stock_quote", json!({"symbol": "ACME", "options": {"limit": 5}}))]),
        ModelResponse::calls([("b", "stock_quote", json!({"symbol": "GLOBX", "options": {"limit": 5}}))]),
        ModelResponse::text("done"),
    ]));
    let outcome = Agent::new(Arc::new(catalogue::registry()), model.clone())
        .with_middleware(Arc::new(MicrocompactMiddleware::new(1).keep_recent(1)))
        .run(vec![Message::user("go")])
        .await
        .expect("runs");
    let last = &model.requests()[2].messages;
    assert!(
        matches!(&last[2], Message::Tool { content, .. } if content.starts_with("[earlier tool result elided")),
        "{:?}",
        last[2]
    );
    assert!(
        matches!(&last[4], Message::Tool { content, .. } if content.contains("\"trades\"")),
        "the latest result stays whole"
    );
    assert!(
        matches!(&outcome.transcript.messages[2], Message::Tool { content, .. } if content.contains("\"trades\"")),
        "the transcript keeps everything"
    );
}

/// Sorts after `tool_search`.
#[tool(read_only)]
async fn zeta_report() -> &'static str {
    "zeta"
}

/// Sorts before every catalogue tool.
#[tool(read_only)]
async fn alpha_lookup(
    /// What to look up.
    key: String,
) -> String {
    key
}

#[tokio::test]
async fn tool_search_comes_after_the_name_sorted_direct_set_and_a_direct_call_is_not_a_deferred_one() {
    // Registered out of order, with a Direct name that sorts after `tool_search`.
    let mut registry = ToolRegistry::new();
    registry.register(ZetaReport).and_then(|r| r.register(catalogue::notes::ReadNote)).expect("registers");
    registry.register(AlphaLookup).expect("registers");
    for tool in catalogue::tools().into_iter().filter(|t| t.exposure() == ToolExposure::Deferred) {
        registry.register_arc(tool).expect("registers");
    }
    let model = Arc::new(ScriptedModel::new([
        ModelResponse::calls([("d", "alpha_lookup", json!({"key": "k"}))]),
        ModelResponse::calls([("f", "stock_quote", json!({"symbol": "ACME"}))]),
        ModelResponse::text("done"),
    ]));
    let recorder = Arc::new(Recorder::default());
    Agent::new(Arc::new(registry), model.clone())
        .with_policy(bridge_only())
        .with_events(recorder.clone())
        .run(vec![Message::user("go")])
        .await
        .expect("runs");
    assert_eq!(names(&model.requests()[0]), ["alpha_lookup", "read_note", "zeta_report", "tool_search"]);
    let events = recorder.events();
    let deferred: Vec<&RunEvent> = events.iter().filter(|e| matches!(e, RunEvent::DeferredToolCall { .. })).collect();
    assert_eq!(
        deferred,
        [&RunEvent::DeferredToolCall { call_id: "f".into(), tool_name: "stock_quote".into(), arguments: None }]
    );
    assert!(events.contains(&RunEvent::ToolStarted {
        call_id: "d".into(),
        tool_name: "alpha_lookup".into(),
        arguments: None
    }));
}
