//! The agent loop end to end, with the scripted model: every sentence of the spec's bridge,
//! promotion, middleware and events sections.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use serde_json::{Value, json};
use tinytools::discovery::ToolDiscoveryPolicy;
use tinytools::middleware::{HostAuthorization, ToolAllowlistMiddleware, ToolPolicyMiddleware};
use tinytools::model::{Message, ModelRequest, ModelResponse};
use tinytools::run::{Agent, Capture, Promotion, RunEvent, RunPolicy, StopReason};
use tinytools::testkit::ScriptedModel;
use tinytools::{ToolExposure, ToolRegistry, tool};
use tinytools_examples::catalogue;
use tinytools_integration_tests::{Recorder, bridge_only, names, spec_script};

fn agent(model: Arc<ScriptedModel>) -> (Agent, Arc<Recorder>) {
    let recorder = Arc::new(Recorder::default());
    let agent =
        Agent::new(Arc::new(catalogue::registry()), model).with_policy(bridge_only()).with_events(recorder.clone());
    (agent, recorder)
}

#[tokio::test]
async fn the_first_request_carries_only_direct_tools_and_the_bridge_and_search_promotes_a_typed_declaration() {
    let model = Arc::new(spec_script());
    let (agent, _) = agent(model.clone());
    let outcome = agent.run(vec![Message::user("What is ACME stock trading at right now?")]).await.expect("runs");
    assert_eq!(outcome.stop, StopReason::Answered);
    assert_eq!((outcome.turns, outcome.usage.prompt_tokens), (3, 4_500));
    let requests = model.requests();
    assert_eq!(names(&requests[0]), ["read_note", "tool_search"]);
    assert_eq!(requests[0].callable_by_name.len(), 40, "the deferred catalogue is callable by name");
    // Every match of the search is promoted, best first, after the first request's tools.
    let promoted: Vec<&str> = outcome.transcript.promoted().collect();
    assert_eq!(promoted[0], "stock_quote");
    assert_eq!(names(&requests[1])[..2], ["read_note", "tool_search"]);
    assert_eq!(names(&requests[1])[2..], promoted[..]);
    assert_eq!(names(&requests[2]), names(&requests[1]), "the prefix stays until another discovery");
    let quote = &requests[1].tools[2];
    assert_eq!(quote.name, "stock_quote");
    assert_eq!(quote.parameters["properties"]["symbol"]["type"], "string", "a typed declaration, not a wrapper");
    let Message::Tool { content, is_error, .. } = &outcome.transcript.messages[4] else { panic!("a tool answer") };
    assert!(!is_error && content.contains("\"symbol\":\"ACME\""), "{content}");
    assert_eq!(outcome.transcript.patches.len(), 1);
    assert_eq!(outcome.transcript.patches[0].added[0].name, "stock_quote");
}

#[tokio::test]
async fn a_second_discovery_changes_the_prefix_once_more() {
    let model = Arc::new(ScriptedModel::new([
        ModelResponse::calls([("c1", "tool_search", json!({"query": "stock price of a ticker", "limit": 1}))]),
        ModelResponse::calls([("c2", "tool_search", json!({"query": "weather forecast for a city", "limit": 1}))]),
        ModelResponse::calls([("c3", "tool_search", json!({"query": "stock price of a ticker", "limit": 1}))]),
        ModelResponse::text("done"),
    ]));
    let (agent, _) = agent(model.clone());
    agent.run(vec![Message::user("go")]).await.expect("runs");
    let requests = model.requests();
    assert_eq!(names(&requests[1]), ["read_note", "tool_search", "stock_quote"]);
    assert_eq!(names(&requests[2]), ["read_note", "tool_search", "stock_quote", "weather_forecast"]);
    assert_eq!(names(&requests[3]), names(&requests[2]), "a repeated discovery adds nothing");
}

#[tokio::test]
async fn events_fire_once_each_with_the_documented_fields() {
    let model = Arc::new(spec_script());
    let (agent, recorder) = agent(model.clone());
    agent.run(vec![Message::user("What is ACME at?")]).await.expect("runs");
    let events = recorder.events();
    let first_request_bytes = serde_json::to_string(&model.requests()[0].tools).map_or(0, |t| t.len());
    assert_eq!(
        events[0],
        RunEvent::ToolsAdvertised { direct: 1, deferred: 40, schema_bytes: first_request_bytes, native: false }
    );
    assert_eq!(events.iter().filter(|e| matches!(e, RunEvent::ToolsAdvertised { .. })).count(), 1);
    let searched: Vec<&RunEvent> = events.iter().filter(|e| matches!(e, RunEvent::ToolSearched { .. })).collect();
    let RunEvent::ToolSearched { call_id, query, matched, ranker, top_confidence, fallback, shadow_matched, .. } =
        searched[0]
    else {
        unreachable!()
    };
    assert_eq!((call_id.as_str(), query, ranker.as_str()), ("c1", &None, "bm25"), "no query without capture.tool_io");
    assert_eq!(matched[0], "stock_quote");
    assert!(top_confidence.is_some() && fallback.is_none() && shadow_matched.is_none());
    assert!(events.contains(&RunEvent::DeferredToolCall {
        call_id: "c2".into(),
        tool_name: "stock_quote".into(),
        arguments: None
    }));
    assert!(
        events.contains(&RunEvent::ToolsPromoted { names: matched.clone(), cause: Promotion::Searched }),
        "every match is promoted"
    );
    let started: Vec<&RunEvent> = events.iter().filter(|e| matches!(e, RunEvent::ToolStarted { .. })).collect();
    assert_eq!(
        started,
        [&RunEvent::ToolStarted { call_id: "c2".into(), tool_name: "stock_quote".into(), arguments: None }],
        "the bridge is not a tool"
    );
    assert!(events.contains(&RunEvent::ToolCompleted {
        call_id: "c2".into(),
        tool_name: "stock_quote".into(),
        is_error: false
    }));
    let calls: Vec<&RunEvent> = events.iter().filter(|e| matches!(e, RunEvent::ModelCalled { .. })).collect();
    assert_eq!(calls.len(), 3);

    let captured = Agent::new(Arc::new(catalogue::registry()), Arc::new(spec_script()))
        .with_policy(RunPolicy::default().with_capture(Capture::default().with_tool_io(true)));
    let recorder = Arc::new(Recorder::default());
    captured.with_events(recorder.clone()).run(vec![Message::user("go")]).await.expect("runs");
    assert!(
        recorder
            .events()
            .iter()
            .any(|e| matches!(e, RunEvent::ToolSearched { query: Some(q), .. } if q == "stock price of a ticker"))
    );
}

#[tokio::test]
async fn strict_policy_without_the_exemption_makes_deferred_tools_undiscoverable_and_with_it_they_work() {
    let registry = Arc::new(catalogue::registry());
    for exempt in [false, true] {
        let model = Arc::new(spec_script());
        let policy = ToolPolicyMiddleware::strict(registry.policies()).exempt_discovery_bridge(exempt);
        let agent =
            Agent::new(registry.clone(), model.clone()).with_policy(bridge_only()).with_middleware(Arc::new(policy));
        let outcome = agent.run(vec![Message::user("What is ACME at?")]).await.expect("runs");
        let requests = model.requests();
        let Message::Tool { is_error, content, .. } = &outcome.transcript.messages[2] else { panic!() };
        if exempt {
            assert_eq!(names(&requests[0]), ["read_note", "tool_search"]);
            assert!(!is_error && names(&requests[1]).contains(&"stock_quote"));
        } else {
            assert_eq!(names(&requests[0]), ["read_note"], "strict removes the unclassified bridge");
            assert!(requests[0].callable_by_name.is_empty(), "no manifest, so nothing is named");
            assert!(*is_error && content.starts_with("No tool by that name"), "{content}");
            assert!(!names(&requests[1]).contains(&"stock_quote"), "nothing was discovered");
        }
    }
}

/// The host's own search (takes the reserved name by hand: `#[tool]` refuses it).
struct HostSearch;

#[async_trait::async_trait]
impl tinytools::Tool for HostSearch {
    fn name(&self) -> &str {
        "tool_search"
    }
    fn description(&self) -> &str {
        "The host's own search over its documents."
    }
    fn parameters_schema(&self) -> Value {
        json!({"type": "object", "properties": {"query": {"type": "string"}}, "required": ["query"]})
    }
    fn annotations(&self) -> tinytools::ToolAnnotations {
        tinytools::ToolAnnotations::UNCLASSIFIED
    }
    async fn execute(&self, _args: Value) -> anyhow::Result<tinytools::ToolResult> {
        Ok(tinytools::ToolResult::text("host results"))
    }
}

#[tokio::test]
async fn a_host_tool_search_wins_and_is_judged_by_its_own_policy_entry() {
    let mut registry = catalogue::registry();
    registry.register(HostSearch).expect("registers");
    let registry = Arc::new(registry);
    let script = || {
        ScriptedModel::new([
            ModelResponse::calls([("c1", "tool_search", json!({"query": "docs"}))]),
            ModelResponse::text("ok"),
        ])
    };

    let model = Arc::new(script());
    let outcome = Agent::new(registry.clone(), model.clone()).run(vec![Message::user("go")]).await.expect("runs");
    let Message::Tool { content, .. } = &outcome.transcript.messages[2] else { panic!() };
    assert_eq!(content, "host results");
    assert_eq!(model.requests()[0].tools.iter().filter(|t| t.name == "tool_search").count(), 1);

    // Its entry says destructive: refused even though the bridge exemption is on — absent from
    // the run (the intrinsic bridge does not take its place), and the host learns why.
    let strict =
        ToolPolicyMiddleware::strict(registry.policies()).exempt_discovery_bridge(true).refuse_destructive(true);
    let recorder = Arc::new(Recorder::default());
    let model = Arc::new(script());
    let outcome = Agent::new(registry.clone(), model.clone())
        .with_middleware(Arc::new(strict))
        .with_events(recorder.clone())
        .run(vec![Message::user("go")])
        .await
        .expect("runs");
    assert_eq!(names(&model.requests()[0]), ["read_note", "tool_search"], "the intrinsic bridge serves instead");
    let Message::Tool { content, .. } = &outcome.transcript.messages[2] else { panic!() };
    assert!(content.starts_with(r#"{"matches""#) && !content.contains("host results"), "{content}");
}

/// A catalogue that happens to hold a function called `tool_search` (BFCL's pool does), with
/// everything Deferred: the bridge must not go dark. Only a Direct host `tool_search` replaces
/// it; a Deferred one is refused by the surface, and the host's search is not what answers.
#[tokio::test]
async fn a_deferred_host_tool_search_does_not_switch_the_bridge_off() {
    let mut registry = catalogue::registry();
    registry.register_as(Arc::new(HostSearch), ToolExposure::Deferred).expect("registers");
    let model = Arc::new(ScriptedModel::new([
        ModelResponse::calls([("c1", "tool_search", json!({"query": "stock quote"}))]),
        ModelResponse::text("ok"),
    ]));
    let outcome = Agent::new(Arc::new(registry), model.clone()).run(vec![Message::user("go")]).await.expect("runs");
    assert_eq!(names(&model.requests()[0]), ["read_note", "tool_search"]);
    assert!(model.requests()[0].tools[1].description.contains("stock_quote"), "the bridge's manifest is there");
    let Message::Tool { content, .. } = &outcome.transcript.messages[2] else { panic!() };
    assert!(content.contains("stock_quote") && !content.contains("host results"), "{content}");
    let surface = tinytools::surface::Surface::all(&{
        let mut registry = ToolRegistry::new();
        registry.register_as(Arc::new(HostSearch), ToolExposure::Deferred).expect("registers");
        registry
    });
    assert!(!surface.admits("tool_search"));
    assert_eq!(surface.refusal("tool_search"), Some(tinytools::surface::DEFERRED_TOOL_SEARCH));
}

#[tokio::test]
async fn with_discovery_disabled_a_direct_call_by_name_still_runs() {
    let model = Arc::new(ScriptedModel::new([
        ModelResponse::calls([("c1", "stock_quote", json!({"symbol": "ACME"}))]),
        ModelResponse::text("done"),
    ]));
    let policy = RunPolicy::default().with_discovery(ToolDiscoveryPolicy::disabled());
    let (agent, recorder) = agent(model.clone());
    let outcome = agent.with_policy(policy).run(vec![Message::user("go")]).await.expect("runs");
    assert_eq!(names(&model.requests()[0]), ["read_note"]);
    assert!(model.requests()[0].callable_by_name.is_empty(), "nothing is advertised by name");
    let Message::Tool { is_error, .. } = &outcome.transcript.messages[2] else { panic!() };
    assert!(!is_error);
    assert!(recorder.events().contains(&RunEvent::ToolsAdvertised {
        direct: 1,
        deferred: 0,
        schema_bytes: serde_json::to_string(&model.requests()[0].tools).map_or(0, |t| t.len()),
        native: false,
    }));
}

#[tokio::test]
async fn resume_restores_only_promoted_tools_the_allow_list_still_admits() {
    let model = Arc::new(ScriptedModel::new([
        ModelResponse::calls([
            ("c1", "tool_search", json!({"query": "stock price of a ticker", "limit": 1})),
            ("c2", "tool_search", json!({"query": "weather forecast for a city", "limit": 1})),
        ]),
        ModelResponse::text("paused"),
    ]));
    let (agent, _) = agent(model.clone());
    let first = agent.run(vec![Message::user("go")]).await.expect("runs");
    let promoted: Vec<&str> = first.transcript.promoted().collect();
    assert_eq!(promoted, ["stock_quote", "weather_forecast"]);

    let saved = serde_json::to_string(&first.transcript).expect("serialisable");
    let mut transcript: tinytools::run::Transcript = serde_json::from_str(&saved).expect("deserialisable");
    assert_eq!(transcript, first.transcript);
    transcript.messages.push(Message::user("and now?"));

    let next = Arc::new(ScriptedModel::new([ModelResponse::text("resumed")]));
    let policy = RunPolicy::default().allow_only(["read_note", "weather_forecast"]);
    let resumed = Agent::new(Arc::new(catalogue::registry()), next.clone())
        .with_policy(policy)
        .resume(transcript)
        .await
        .expect("runs");
    assert_eq!(resumed.answer, "resumed");
    assert_eq!(names(&next.requests()[0]), ["read_note", "tool_search", "weather_forecast"]);
}

/// Panics on purpose.
#[tool]
async fn explode() -> String {
    panic!("tool bug")
}

/// Never finishes in time.
#[tool]
async fn slow(
    /// Milliseconds to sleep.
    millis: u64,
) -> String {
    tokio::time::sleep(Duration::from_millis(millis)).await;
    format!("slept {millis}")
}

#[tokio::test]
async fn panics_timeouts_bad_arguments_and_unknown_names_are_answered_and_the_run_goes_on() {
    let mut registry = catalogue::registry();
    registry.register(Explode).and_then(|r| r.register(Slow)).expect("registers");
    let model = Arc::new(ScriptedModel::new([
        ModelResponse::calls([
            ("a", "explode", json!({})),
            ("b", "slow", json!({"millis": 60_000})),
            ("c", "slow", json!({"millis": 1})),
            ("d", "stock_quote", json!({"symbol": 7})),
            ("e", "no_such_tool", json!({})),
        ]),
        ModelResponse::text("still here"),
    ]));
    let recorder = Arc::new(Recorder::default());
    // Every call races its timeout in real time (tools run off the run's task): a panic's
    // report, with a backtrace, must not be mistaken for a hang.
    let policy = RunPolicy::default().with_tool_timeout(Duration::from_secs(2));
    let agent = Agent::new(Arc::new(registry), model).with_policy(policy).with_events(recorder.clone());
    let outcome = agent.run(vec![Message::user("go")]).await.expect("the run goes on");
    assert_eq!(outcome.answer, "still here");
    let answers: Vec<(&str, bool, &str)> = outcome.transcript.messages[2..7]
        .iter()
        .map(|m| match m {
            Message::Tool { call_id, is_error, content, .. } => (call_id.as_str(), *is_error, content.as_str()),
            _ => ("?", false, ""),
        })
        .collect();
    assert_eq!(answers.iter().map(|a| a.0).collect::<Vec<_>>(), ["a", "b", "c", "d", "e"], "results keep call order");
    assert!(answers[0].1 && answers[0].2.contains("crashed"), "{answers:?}");
    assert!(answers[1].1 && answers[1].2.contains("did not finish in time"), "{answers:?}");
    assert_eq!((answers[2].1, answers[2].2), (false, "slept 1"));
    assert!(answers[3].1 && answers[3].2.contains("/symbol"), "{answers:?}");
    assert!(answers[4].1 && answers[4].2.contains("No tool by that name"), "{answers:?}");

    let events = recorder.events();
    let started: Vec<String> = events
        .iter()
        .filter_map(|e| match e {
            RunEvent::ToolStarted { call_id, .. } => Some(call_id.clone()),
            _ => None,
        })
        .collect();
    assert_eq!(started, ["a", "b", "c"], "only admitted calls start");
    for id in &started {
        let terminal = events.iter().filter(|e| matches!(e, RunEvent::ToolCompleted { call_id, .. } | RunEvent::ToolFailed { call_id, .. } if call_id == id)).count();
        assert_eq!(terminal, 1, "exactly one terminal event for {id}");
    }
}

#[tokio::test]
async fn hidden_and_non_admitted_tools_get_the_unknown_tool_answer() {
    let mut registry = catalogue::registry();
    registry.register_as(Arc::new(HostSearch), ToolExposure::Hidden).expect("registers");
    let model = Arc::new(ScriptedModel::new([
        ModelResponse::calls([("h", "tool_search", json!({"query": "x"})), ("n", "gmail_send", json!({}))]),
        ModelResponse::text("ok"),
    ]));
    let policy = RunPolicy::default().allow_only(["read_note", "stock_quote"]);
    let outcome = Agent::new(Arc::new(registry), model.clone())
        .with_policy(policy)
        .run(vec![Message::user("go")])
        .await
        .expect("runs");
    // A Hidden host tool under the reserved name neither turns discovery off nor runs: the
    // intrinsic bridge answers `tool_search`, and a name the allow-list refuses is unknown.
    assert_eq!(names(&model.requests()[0]), ["read_note", "tool_search"]);
    assert_eq!(model.requests()[0].callable_by_name, ["stock_quote"]);
    let Message::Tool { content, .. } = &outcome.transcript.messages[2] else { panic!() };
    assert!(content.starts_with(r#"{"matches""#) && !content.contains("host results"), "{content}");
    let Message::Tool { content, is_error, .. } = &outcome.transcript.messages[3] else { panic!() };
    assert!(*is_error && content.starts_with("No tool by that name"), "{content}");
    assert!(!content.contains("gmail"), "{content}");
}

#[tokio::test]
async fn execution_gates_see_the_real_name_of_a_deferred_tool() {
    let seen = Arc::new(Mutex::new(Vec::new()));
    let log = seen.clone();
    let gate = HostAuthorization::new(move |call: &tinytools::model::ToolCall| {
        if let Ok(mut log) = log.lock() {
            log.push(call.name.clone());
        }
        call.name != "stock_quote"
    });
    let model = Arc::new(spec_script());
    let outcome = Agent::new(Arc::new(catalogue::registry()), model)
        .with_middleware(Arc::new(gate))
        .run(vec![Message::user("go")])
        .await
        .expect("runs");
    assert_eq!(seen.lock().map(|s| s.clone()).unwrap_or_default(), ["tool_search", "stock_quote"]);
    let Message::Tool { content, is_error, .. } = &outcome.transcript.messages[4] else { panic!() };
    assert!(*is_error && content.contains("did not authorize"), "{content}");

    let allowlist = ToolAllowlistMiddleware::new(["read_note"]);
    let model = Arc::new(spec_script());
    let outcome = Agent::new(Arc::new(catalogue::registry()), model.clone())
        .with_middleware(Arc::new(allowlist))
        .run(vec![Message::user("go")])
        .await
        .expect("runs");
    assert_eq!(names(&model.requests()[0]), ["read_note"]);
    let Message::Tool { is_error, .. } = &outcome.transcript.messages[2] else { panic!() };
    assert!(is_error);
}

#[tokio::test]
async fn the_turn_limit_cancellation_and_model_errors_end_a_run_cleanly() {
    let looping = Arc::new(ScriptedModel::dynamic(
        (0..5)
            .map(|_| {
                Box::new(|_: &ModelRequest| ModelResponse::calls([("x", "read_note", json!({"title": "groceries"}))]))
                    as _
            })
            .collect(),
    ));
    let policy = RunPolicy::default().with_max_turns(3);
    let outcome = Agent::new(Arc::new(catalogue::registry()), looping)
        .with_policy(policy)
        .run(vec![Message::user("go")])
        .await
        .expect("runs");
    assert_eq!((outcome.stop, outcome.turns), (StopReason::TurnLimit, 3));

    let cancel = tinytools::CancellationToken::new();
    cancel.cancel();
    let outcome = Agent::new(Arc::new(catalogue::registry()), Arc::new(spec_script()))
        .run_until_cancelled(vec![Message::user("go")], cancel)
        .await
        .expect("runs");
    assert_eq!((outcome.stop, outcome.turns), (StopReason::Cancelled, 0));

    let short =
        Arc::new(ScriptedModel::new([ModelResponse::calls([("c1", "read_note", json!({"title": "groceries"}))])]));
    let err = Agent::new(Arc::new(catalogue::registry()), short)
        .run(vec![Message::user("go")])
        .await
        .expect_err("script ends");
    assert_eq!(err.turns, 2);
    assert_eq!(err.transcript.messages.len(), 3, "the transcript so far is kept for resuming");
}

#[tokio::test]
async fn with_a_host_owned_tool_search_nothing_is_advertised_as_deferred() {
    let mut registry = catalogue::registry();
    registry.register(HostSearch).expect("registers");
    let model = Arc::new(ScriptedModel::new([ModelResponse::text("ok")]));
    let recorder = Arc::new(Recorder::default());
    Agent::new(Arc::new(registry), model.clone())
        .with_events(recorder.clone())
        .run(vec![Message::user("go")])
        .await
        .expect("runs");
    let bytes = serde_json::to_string(&model.requests()[0].tools).map_or(0, |t| t.len());
    assert_eq!(names(&model.requests()[0]), ["read_note", "tool_search"]);
    assert_eq!(
        recorder.events()[0],
        RunEvent::ToolsAdvertised { direct: 2, deferred: 0, schema_bytes: bytes, native: false }
    );
}
