//! One narrowing model: every rule that refuses a tool — the host allow-list, the allow-list
//! middleware, strict policy classification, `refuse_destructive`, a host predicate — is
//! evaluated once per run, and a refused deferred tool is absent from the manifest, search,
//! promotion (searched or pre-promoted), resume, unknown-tool suggestions, execution and MCP
//! `tools/list` alike. Per-turn selection only subsets what the rules allow.

use std::sync::{Arc, Mutex};

use serde_json::json;
use tinytools::middleware::{
    DynamicToolSelectionMiddleware, Middleware, ToolAllowlistMiddleware, ToolPolicyMiddleware,
};
use tinytools::model::{Message, ModelRequest, ModelResponse};
use tinytools::run::{Agent, RunEvent, RunPolicy, Transcript};
use tinytools::surface::Subject;
use tinytools::testkit::ScriptedModel;
use tinytools::{ToolPolicies, ToolRegistry};
use tinytools_examples::catalogue;
use tinytools_integration_tests::{Recorder, bridge_only};

/// The deferred, destructive tool every mechanism below refuses.
const REFUSED: &str = "calendar_cancel_event";
/// A user message that would pre-promote it.
const ASK: &str = "Cancel the calendar event evt_2291 and notify its attendees.";

/// Searches for it, calls it, calls a near miss of it, answers.
fn script() -> Arc<ScriptedModel> {
    Arc::new(ScriptedModel::new([
        ModelResponse::calls([(
            "s",
            "tool_search",
            json!({"query": "cancel a calendar event and notify", "limit": 20}),
        )]),
        ModelResponse::calls([("c", REFUSED, json!({"event_id": "evt_2291"}))]),
        ModelResponse::calls([("n", "calendar_cancel_events", json!({"event_id": "evt_2291"}))]),
        ModelResponse::text("done"),
    ]))
}

enum Mechanism {
    None,
    HostAllowList,
    AllowListMiddleware,
    StrictSnapshot,
    RefuseDestructive,
    HostPredicate,
}

fn agent(mechanism: &Mechanism, model: Arc<ScriptedModel>, registry: &Arc<ToolRegistry>) -> Agent {
    let every_other: Vec<String> = registry.iter().map(|t| t.name().to_owned()).filter(|n| n != REFUSED).collect();
    let agent = Agent::new(registry.clone(), model);
    match mechanism {
        Mechanism::None => agent,
        Mechanism::HostAllowList => agent.with_policy(RunPolicy::default().allow_only(every_other)),
        Mechanism::AllowListMiddleware => {
            let mut listed = every_other;
            listed.push("tool_search".into());
            agent.with_middleware(Arc::new(ToolAllowlistMiddleware::new(listed)))
        }
        Mechanism::StrictSnapshot => {
            let snapshot: ToolPolicies =
                registry.policies().iter().filter(|(n, _)| *n != REFUSED).map(|(n, p)| (n.to_owned(), *p)).collect();
            agent.with_middleware(Arc::new(ToolPolicyMiddleware::strict(snapshot).exempt_discovery_bridge(true)))
        }
        Mechanism::RefuseDestructive => agent.with_middleware(Arc::new(
            ToolPolicyMiddleware::strict(registry.policies()).exempt_discovery_bridge(true).refuse_destructive(true),
        )),
        Mechanism::HostPredicate => agent.with_rule(Arc::new(|subject: Subject<'_>| subject.name() != REFUSED)),
    }
}

/// Everything the run showed the model, as text: every request's tools, names callable by
/// name, and messages — but the model's own turns, which may name anything it likes.
fn model_facing(requests: &[ModelRequest]) -> String {
    let mut text = String::new();
    for request in requests {
        text.push_str(&serde_json::to_string(&request.tools).unwrap_or_default());
        text.push_str(&request.callable_by_name.join(","));
        for message in &request.messages {
            match message {
                // The model's own turn, and the name of the call a result answers, are its words.
                Message::Assistant { .. } => {}
                Message::Tool { content, .. } => text.push_str(content),
                other => text.push_str(&serde_json::to_string(other).unwrap_or_default()),
            }
        }
    }
    text
}

#[tokio::test]
async fn every_rule_hides_a_refused_deferred_tool_from_every_surface() {
    let registry = Arc::new(catalogue::registry());
    let mechanisms = [
        Mechanism::HostAllowList,
        Mechanism::AllowListMiddleware,
        Mechanism::StrictSnapshot,
        Mechanism::RefuseDestructive,
        Mechanism::HostPredicate,
    ];
    // Without a rule the tool is in the manifest, pre-promoted, found, and runs: the checks
    // below can fail.
    let model = script();
    let outcome = agent(&Mechanism::None, model.clone(), &registry).run(vec![Message::user(ASK)]).await.expect("runs");
    let requests = model.requests();
    assert!(requests[0].tools.iter().any(|t| t.name == REFUSED), "pre-promoted without a rule");
    assert!(requests[0].callable_by_name.iter().any(|n| n == REFUSED));
    let Message::Tool { is_error, .. } = &outcome.transcript.messages[4] else { panic!() };
    assert!(!is_error, "it ran");
    let unrestricted = outcome.transcript;

    for (i, mechanism) in mechanisms.iter().enumerate() {
        let model = script();
        let recorder = Arc::new(Recorder::default());
        let outcome = agent(mechanism, model.clone(), &registry)
            .with_events(recorder.clone())
            .run(vec![Message::user(ASK)])
            .await
            .expect("runs");
        let requests = model.requests();
        // Tools array, manifest, search answer, unknown-tool answer, names callable by name: the
        // model's own call and near miss are in its turns, and nothing the run said names it.
        let shown = model_facing(&requests);
        assert!(!shown.contains(REFUSED), "mechanism {i}: the model was shown it: {shown}");
        assert_eq!(
            requests[0].tools.iter().map(|t| t.name.as_str()).collect::<Vec<_>>()[..2],
            ["read_note", "tool_search"]
        );
        assert!(!outcome.transcript.promoted().any(|n| n == REFUSED), "mechanism {i}: never promoted");
        let events = recorder.events();
        assert!(
            !events.iter().any(|e| matches!(e, RunEvent::ToolStarted { tool_name, .. } if tool_name == REFUSED)),
            "mechanism {i}: it never ran"
        );
        let refused = events.iter().any(|e| matches!(e, RunEvent::ToolRejected { call_id, reason } if call_id == "c" && reason.starts_with("refused by the run's rules")));
        assert!(refused, "mechanism {i}: the host learns why: {events:?}");
        let Message::Tool { content, is_error, .. } = &outcome.transcript.messages[4] else { panic!() };
        assert!(*is_error && content.starts_with("No tool by that name"), "mechanism {i}: {content}");

        // Resume, under the rule, of a transcript that promoted it: not restored (the history
        // itself is what the model saw before, and is replayed as it was).
        let resumed_model = Arc::new(ScriptedModel::new([ModelResponse::text("ok")]));
        let mut transcript: Transcript = unrestricted.clone();
        assert!(transcript.promoted().any(|n| n == REFUSED));
        transcript.messages.push(Message::user("anything else?"));
        agent(mechanism, resumed_model.clone(), &registry).resume(transcript).await.expect("resumes");
        let resumed = &resumed_model.requests()[0];
        let surfaces = serde_json::to_string(&resumed.tools).unwrap_or_default() + &resumed.callable_by_name.join(",");
        assert!(!surfaces.contains(REFUSED), "mechanism {i}: resume restored it");
    }
}

#[tokio::test]
async fn the_rules_are_evaluated_once_per_run() {
    let calls = Arc::new(Mutex::new(0_usize));
    let counted = calls.clone();
    let rule = move |_: Subject<'_>| {
        if let Ok(mut n) = counted.lock() {
            *n += 1;
        }
        true
    };
    let registry = Arc::new(catalogue::registry());
    let agent = Agent::new(registry.clone(), script()).with_rule(Arc::new(rule));
    agent.run(vec![Message::user(ASK)]).await.expect("runs");
    // Once for each of the 41 tools and once for the bridge, however many turns ran.
    assert_eq!(calls.lock().map(|n| *n).unwrap_or_default(), registry.len() + 1);
}

#[tokio::test]
async fn per_turn_selection_only_subsets_what_the_rules_allow() {
    // A selection that would keep everything, refused tool included, cannot bring it back.
    let keep_all = DynamicToolSelectionMiddleware::new(|_, _| true);
    let model = script();
    let registry = Arc::new(catalogue::registry());
    agent(&Mechanism::HostPredicate, model.clone(), &registry)
        .with_middleware(Arc::new(keep_all))
        .run(vec![Message::user(ASK)])
        .await
        .expect("runs");
    assert!(!model_facing(&model.requests()).contains(REFUSED));
    // A selection that drops the bridge from one request's array shrinks only that request.
    let model = script();
    let no_bridge_on_turn_one =
        DynamicToolSelectionMiddleware::new(|request, tool| tool.name != "tool_search" || request.messages.len() > 1);
    Agent::new(registry, model.clone())
        .with_policy(bridge_only())
        .with_middleware(Arc::new(no_bridge_on_turn_one))
        .run(vec![Message::user(ASK)])
        .await
        .expect("runs");
    let requests = model.requests();
    assert_eq!(requests[0].tools.iter().map(|t| t.name.as_str()).collect::<Vec<_>>(), ["read_note"]);
    assert!(requests[1].tools.iter().any(|t| t.name == REFUSED), "the search still answered and promoted");
}

#[test]
fn middleware_rules_are_what_the_allow_list_and_policy_middleware_narrow_with() {
    let registry = catalogue::registry();
    let allow = ToolAllowlistMiddleware::new(["read_note"]);
    let rule = allow.rule().expect("a rule");
    let tool = registry.get("stock_quote").expect("registered");
    assert!(!rule.admit(Subject::Tool(tool)).is_allow());
    assert!(!rule.admit(Subject::Bridge).is_allow(), "tool_search must be listed to keep discovery");
    let strict = ToolPolicyMiddleware::strict(registry.policies());
    assert!(strict.rule().is_some_and(|rule| rule.admit(Subject::Tool(tool)).is_allow()));
}

#[test]
fn mcp_tools_list_reads_the_same_rules() {
    let registry = Arc::new(catalogue::registry());
    let policy = ToolPolicyMiddleware::strict(registry.policies()).refuse_destructive(true);
    let server = tinytools::mcp::McpToolServer::new(registry.clone()).with_rule(Arc::new(policy));
    let listed: Vec<String> = server.listed_tools().iter().map(|t| t.name.to_string()).collect();
    assert!(!listed.iter().any(|n| n == REFUSED), "{listed:?}");
    assert!(listed.iter().any(|n| n == "calendar_invite"));
    let unrestricted = tinytools::mcp::McpToolServer::new(registry).listed_tools();
    assert!(unrestricted.iter().any(|t| t.name == REFUSED));
}
