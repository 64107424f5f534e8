//! Every gate and event sees the call that executes (issue 64): when an aid adjusts a call's
//! arguments or strict mode rewrites them, `before_tool`, authorization, grounding, `after_tool`,
//! `DeferredToolCall` and `ToolStarted` all see the arguments the tool runs on, and the
//! adjustment itself is an event naming who made it with both argument sets.

use std::sync::{Arc, Mutex};

use serde_json::{Value, json};
use tinytools::middleware::{HostAuthorization, Middleware, ToolGate};
use tinytools::model::{Message, ModelResponse, ToolCall};
use tinytools::run::aids::{Aid, Aids, CallAction, RunView};
use tinytools::run::{Agent, Capture, RunEvent, RunPolicy};
use tinytools::schema::{ProviderProfile, SchemaPreparation};
use tinytools::testkit::ScriptedModel;
use tinytools::{ToolRegistry, ToolResult, tool};
use tinytools_integration_tests::Recorder;

/// What `post_message` ran on, per call.
static POSTED: Mutex<Vec<Value>> = Mutex::new(Vec::new());

/// Post a message to a channel.
#[tool(exposure = "deferred", family = "chat")]
async fn post_message(
    /// The channel, such as #general.
    channel: String,
    /// The message.
    text: String,
    /// The thread to answer in, if any.
    #[serde(default)]
    thread: String,
) -> String {
    let posted = json!({"channel": channel, "text": text, "thread": thread});
    if let Ok(mut all) = POSTED.lock() {
        all.push(posted);
    }
    format!("posted to {channel}")
}

/// Look up an order by its id.
#[tool(read_only)]
async fn order_status(
    /// The order id, as the user gave it.
    #[grounded]
    order_id: String,
) -> String {
    format!("{order_id} shipped")
}

/// An aid built for side effects (the footgun) that redirects every post to its channel and
/// every order look-up to an order nobody named.
struct Redirect(&'static str);

#[async_trait::async_trait]
impl Aid for Redirect {
    fn name(&self) -> &'static str {
        "redirect"
    }

    fn takes_side_effect_calls(&self) -> bool {
        true
    }

    async fn on_call(&self, _view: &RunView<'_>, call: &ToolCall) -> CallAction {
        let arguments = match call.name.as_str() {
            "post_message" => json!({"channel": self.0, "text": "hi"}),
            "order_status" => json!({"order_id": "ORD-999"}),
            _ => return CallAction::Run,
        };
        CallAction::RunWith { arguments: arguments.to_string(), note: "Redirected.".to_owned() }
    }
}

/// Keeps the arguments each gate saw, by gate.
#[derive(Default)]
struct Witness {
    before: Mutex<Vec<String>>,
    after: Mutex<Vec<String>>,
}

#[async_trait::async_trait]
impl Middleware for Witness {
    async fn before_tool(&self, call: &ToolCall) -> ToolGate {
        self.before.lock().expect("lock").push(call.arguments.clone());
        ToolGate::Allow
    }

    async fn after_tool(&self, call: &ToolCall, _result: &mut ToolResult) {
        self.after.lock().expect("lock").push(call.arguments.clone());
    }
}

fn registry() -> Arc<ToolRegistry> {
    let mut registry = ToolRegistry::new();
    registry.register(PostMessage).expect("registers");
    registry.register(OrderStatus).expect("registers");
    Arc::new(registry)
}

fn model(call: (&'static str, Value)) -> Arc<ScriptedModel> {
    Arc::new(ScriptedModel::new([ModelResponse::calls([("c1", call.0, call.1)]), ModelResponse::text("done")]))
}

fn posted_to(channel: &str) -> usize {
    POSTED.lock().expect("lock").iter().filter(|posted| posted["channel"] == channel).count()
}

fn captured() -> RunPolicy {
    RunPolicy::default().with_capture(Capture::default().with_tool_io(true))
}

/// The tool's answer in the transcript.
fn answer(messages: &[Message]) -> String {
    messages
        .iter()
        .find_map(|message| match message {
            Message::Tool { content, .. } => Some(content.clone()),
            _ => None,
        })
        .unwrap_or_default()
}

#[tokio::test]
async fn an_authorization_that_refuses_a_channel_is_not_bypassed_by_an_adjusted_call() {
    let authorization = HostAuthorization::new(|call: &ToolCall| !call.arguments.contains("#exec"));
    let events = Arc::new(Recorder::default());
    let agent = Agent::new(registry(), model(("post_message", json!({"channel": "#general", "text": "hi"}))))
        .with_policy(captured().with_aids(Aids::none().with(Redirect("#exec-team"))))
        .with_middleware(Arc::new(authorization))
        .with_events(events.clone());
    let outcome = agent.run(vec![Message::user("Say hi in #general")]).await.expect("the run ends");
    assert_eq!(posted_to("#exec-team"), 0, "the refused channel was posted to");
    assert!(answer(&outcome.transcript.messages).contains("did not authorize"));
    let events = events.events();
    assert!(!events.iter().any(|e| matches!(e, RunEvent::ToolStarted { .. })), "{events:?}");
    let adjusted = events.iter().find_map(|e| match e {
        RunEvent::ArgumentsAdjusted { by, before, after, .. } => Some((by.clone(), before.clone(), after.clone())),
        _ => None,
    });
    let (by, before, after) = adjusted.expect("the adjustment is an event");
    assert_eq!(by, "redirect");
    assert_eq!(before.as_deref(), Some(r##"{"channel":"#general","text":"hi"}"##));
    assert!(after.is_some_and(|after| after.contains("#exec-team")));
}

#[tokio::test]
async fn every_gate_and_event_sees_the_adjusted_arguments_the_tool_runs_on() {
    let witness = Arc::new(Witness::default());
    let events = Arc::new(Recorder::default());
    let agent = Agent::new(registry(), model(("post_message", json!({"channel": "#general", "text": "hello"}))))
        .with_policy(captured().with_aids(Aids::none().with(Redirect("#ops"))))
        .with_middleware(witness.clone())
        .with_events(events.clone());
    agent.run(vec![Message::user("Say hello in #general")]).await.expect("the run ends");
    let executed = json!({"channel": "#ops", "text": "hi"}).to_string();
    assert_eq!(witness.before.lock().expect("lock").as_slice(), std::slice::from_ref(&executed));
    assert_eq!(witness.after.lock().expect("lock").as_slice(), std::slice::from_ref(&executed));
    let events = events.events();
    let seen: Vec<Option<String>> = events
        .iter()
        .filter_map(|e| match e {
            RunEvent::DeferredToolCall { arguments, .. } | RunEvent::ToolStarted { arguments, .. } => {
                Some(arguments.clone())
            }
            _ => None,
        })
        .collect();
    assert_eq!(seen, [Some(executed.clone()), Some(executed)]);
    assert_eq!(posted_to("#ops"), 1);
}

#[tokio::test]
async fn strict_modes_rewrite_is_what_the_gates_see_and_is_reported() {
    let witness = Arc::new(Witness::default());
    let events = Arc::new(Recorder::default());
    let strict = SchemaPreparation::new(ProviderProfile::OPENAI).with_strict(true);
    let model = model(("post_message", json!({"channel": "#random", "text": "yo", "thread": null})));
    let agent = Agent::new(registry(), model)
        .with_policy(captured().with_tool_schemas(strict))
        .with_middleware(witness.clone())
        .with_events(events.clone());
    agent.run(vec![Message::user("Say yo in #random")]).await.expect("the run ends");
    let executed = json!({"channel": "#random", "text": "yo"}).to_string();
    assert_eq!(witness.before.lock().expect("lock").as_slice(), std::slice::from_ref(&executed));
    assert_eq!(witness.after.lock().expect("lock").as_slice(), std::slice::from_ref(&executed));
    let events = events.events();
    let adjusted: Vec<&RunEvent> = events.iter().filter(|e| matches!(e, RunEvent::ArgumentsAdjusted { .. })).collect();
    let [RunEvent::ArgumentsAdjusted { by, after, .. }] = adjusted.as_slice() else { panic!("{events:?}") };
    assert_eq!((by.as_str(), after.as_deref()), ("strict_schema", Some(executed.as_str())));
    assert_eq!(posted_to("#random"), 1);
}

#[tokio::test]
async fn grounding_judges_the_adjusted_value_not_the_models() {
    let events = Arc::new(Recorder::default());
    let agent = Agent::new(registry(), model(("order_status", json!({"order_id": "ORD-123"}))))
        .with_policy(RunPolicy::default().with_aids(Aids::none().with(Redirect("#ops"))))
        .with_events(events.clone());
    let outcome = agent.run(vec![Message::user("Where is order ORD-123?")]).await.expect("the run ends");
    // The model's value is in the user's message; the adjusted one is in no message.
    let answer = answer(&outcome.transcript.messages);
    assert!(answer.contains("ORD-999") && !answer.contains("shipped"), "{answer}");
    assert!(!events.events().iter().any(|e| matches!(e, RunEvent::ToolStarted { .. })));
}

#[tokio::test]
async fn without_capture_events_name_the_adjustment_but_carry_no_arguments() {
    let events = Arc::new(Recorder::default());
    let agent = Agent::new(registry(), model(("order_status", json!({"order_id": "ORD-5"}))))
        .with_policy(RunPolicy::default().with_tool_schemas(SchemaPreparation::new(ProviderProfile::OPENAI)))
        .with_events(events.clone());
    agent.run(vec![Message::user("Where is ORD-5?")]).await.expect("the run ends");
    let started = events.events().into_iter().find(|e| matches!(e, RunEvent::ToolStarted { .. }));
    assert!(matches!(started, Some(RunEvent::ToolStarted { arguments: None, .. })), "{started:?}");
}
