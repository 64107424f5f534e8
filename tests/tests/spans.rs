//! The run's `tracing` spans (`docs/tracing.md`), seen by an in-memory subscriber: the tree
//! (run > turn > model request / tool call), the GenAI attribute names and their values, a
//! tool's own events inside its call's span (the call runs as a spawned task), and content
//! (prompts, arguments, results) only under `RunPolicy::capture`.

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex};

use serde_json::json;
use tinytools::discovery::{PrePromotion, ToolDiscoveryPolicy};
use tinytools::model::{Message, ModelResponse, Usage};
use tinytools::run::{Agent, Capture, RunPolicy};
use tinytools::testkit::ScriptedModel;
use tinytools::{ToolRegistry, tool};
use tinytools_integration_tests::bridge_only;
use tracing::field::{Field, Visit};
use tracing::span::{Attributes, Id, Record};
use tracing::{Event, Subscriber};
use tracing_subscriber::layer::{Context, Layer, SubscriberExt};
use tracing_subscriber::registry::LookupSpan;

/// One span as the subscriber saw it: its name, its parent (an index into the list), and
/// every field recorded, as text.
#[derive(Clone, Debug)]
struct Seen {
    id: u64,
    name: &'static str,
    parent: Option<usize>,
    fields: BTreeMap<String, String>,
}

/// An event's message, and the span it was in (an index into the list).
type SeenEvent = (String, Option<usize>);

/// What the layer records: every span, and every event with the span it was in.
#[derive(Clone, Default)]
struct Spans {
    spans: Arc<Mutex<Vec<Seen>>>,
    events: Arc<Mutex<Vec<SeenEvent>>>,
}

struct Fields<'a>(&'a mut BTreeMap<String, String>);

impl Visit for Fields<'_> {
    fn record_str(&mut self, field: &Field, value: &str) {
        self.0.insert(field.name().to_owned(), value.to_owned());
    }

    fn record_debug(&mut self, field: &Field, value: &dyn std::fmt::Debug) {
        self.0.insert(field.name().to_owned(), format!("{value:?}"));
    }
}

impl Spans {
    /// The newest span with this id (the registry reuses the ids of closed spans).
    fn index(spans: &[Seen], id: &Id) -> Option<usize> {
        spans.iter().rposition(|seen| seen.id == id.into_u64())
    }

    fn all(&self) -> Vec<Seen> {
        self.spans.lock().unwrap().clone()
    }
}

impl<S: Subscriber + for<'a> LookupSpan<'a>> Layer<S> for Spans {
    fn on_new_span(&self, attrs: &Attributes<'_>, id: &Id, ctx: Context<'_, S>) {
        let mut fields = BTreeMap::new();
        attrs.record(&mut Fields(&mut fields));
        let mut spans = self.spans.lock().unwrap();
        let parent = ctx.span(id).and_then(|span| span.parent()).and_then(|parent| Self::index(&spans, &parent.id()));
        spans.push(Seen { id: id.into_u64(), name: attrs.metadata().name(), parent, fields });
    }

    fn on_record(&self, id: &Id, values: &Record<'_>, _: Context<'_, S>) {
        let mut spans = self.spans.lock().unwrap();
        if let Some(index) = Self::index(&spans, id) {
            values.record(&mut Fields(&mut spans[index].fields));
        }
    }

    fn on_event(&self, event: &Event<'_>, ctx: Context<'_, S>) {
        let mut fields = BTreeMap::new();
        event.record(&mut Fields(&mut fields));
        let spans = self.spans.lock().unwrap();
        let within = ctx.event_span(event).and_then(|span| Self::index(&spans, &span.id()));
        let message = fields.remove("message").unwrap_or_default();
        self.events.lock().unwrap().push((message, within));
    }
}

/// Fetch the latest price for a ticker symbol.
#[tool(exposure = "deferred")]
async fn stock_quote(
    /** Ticker symbol. */
    symbol: String,
) -> String {
    tokio::task::yield_now().await;
    tracing::info!("quoting the ticker");
    format!("{symbol} 12.50")
}

/// Read a note by its title.
#[tool(read_only)]
async fn read_note(
    /** The title. */
    title: String,
) -> String {
    format!("note {title}")
}

fn registry() -> Arc<ToolRegistry> {
    let mut registry = ToolRegistry::new();
    registry.register(StockQuote).unwrap();
    registry.register(ReadNote).unwrap();
    Arc::new(registry)
}

/// Search, call the found (deferred, now promoted) tool, answer; the first answer reports
/// cached tokens.
fn searching_model() -> ScriptedModel {
    let mut first = ModelResponse::calls([("c1", "tool_search", json!({"query": "stock price"}))]);
    first.usage = Some(Usage::new(900, 20).with_cache(600, 0));
    ScriptedModel::new([
        first,
        ModelResponse::calls([("c2", "stock_quote", json!({"symbol": "ACME"}))]).with_usage(1_700, 25),
        ModelResponse::text("ACME trades at 12.50.").with_usage(1_900, 12),
    ])
    .named("acme.ai", "acme-mini")
}

const PROMPT: &str = "What is ACME trading at?";

/// Runs `model` with `capture` under the recording subscriber (streamed when `stream`).
async fn traced(model: ScriptedModel, capture: Capture, stream: bool) -> Spans {
    let spans = Spans::default();
    let subscriber = tracing_subscriber::registry().with(spans.clone());
    let _default = tracing::subscriber::set_default(subscriber);
    let agent = Agent::new(registry(), Arc::new(model)).with_policy(bridge_only().with_capture(capture));
    let outcome = match stream {
        true => agent.stream(vec![Message::user(PROMPT)]).finish().await,
        false => agent.run(vec![Message::user(PROMPT)]).await,
    };
    assert_eq!(outcome.unwrap().answer, "ACME trades at 12.50.");
    spans
}

fn field<'a>(seen: &'a Seen, name: &str) -> &'a str {
    seen.fields.get(name).map_or("<absent>", String::as_str)
}

fn children(spans: &[Seen], parent: usize) -> Vec<usize> {
    (0..spans.len()).filter(|&i| spans[i].parent == Some(parent)).collect()
}

/// The run's tree as `name` lines indented by depth, each with its `otel.name` when set.
fn tree(spans: &[Seen]) -> Vec<String> {
    fn walk(spans: &[Seen], at: usize, depth: usize, out: &mut Vec<String>) {
        let seen = &spans[at];
        let shown = seen.fields.get("otel.name").map_or(seen.name, String::as_str);
        out.push(format!("{}{shown}", "  ".repeat(depth)));
        for child in children(spans, at) {
            walk(spans, child, depth + 1, out);
        }
    }
    let mut out = Vec::new();
    for root in (0..spans.len()).filter(|&i| spans[i].parent.is_none()) {
        walk(spans, root, 0, &mut out);
    }
    out
}

#[tokio::test]
async fn a_run_is_one_tree_of_genai_spans() {
    let spans = traced(searching_model(), Capture::default(), false).await;
    let all = spans.all();
    assert_eq!(
        tree(&all),
        [
            "invoke_agent",
            "  tinytools.turn",
            "    chat acme-mini",
            "    execute_tool tool_search",
            "  tinytools.turn",
            "    chat acme-mini",
            "    execute_tool stock_quote",
            "  tinytools.turn",
            "    chat acme-mini",
        ]
    );

    let run = &all[0];
    assert_eq!(field(run, "gen_ai.operation.name"), "invoke_agent");
    assert_eq!(field(run, "gen_ai.provider.name"), "acme.ai");
    assert_eq!(field(run, "gen_ai.request.model"), "acme-mini");
    assert_eq!(field(run, "gen_ai.usage.input_tokens"), "4500");
    assert_eq!(field(run, "gen_ai.usage.output_tokens"), "57");
    assert_eq!(field(run, "tinytools.run.turns"), "3");
    assert_eq!(field(run, "tinytools.run.stop_reason"), "answered");
    assert_eq!((field(run, "tinytools.tools.direct"), field(run, "tinytools.tools.deferred")), ("1", "1"));

    let turns = children(&all, 0);
    let numbers: Vec<&str> = turns.iter().map(|&t| field(&all[t], "tinytools.turn.number")).collect();
    assert_eq!(numbers, ["1", "2", "3"]);
    let calls: Vec<&str> = turns.iter().map(|&t| field(&all[t], "tinytools.turn.tool_calls")).collect();
    assert_eq!(calls, ["1", "1", "<absent>"]);

    let chats: Vec<&Seen> = all.iter().filter(|seen| seen.name == "chat").collect();
    for chat in &chats {
        assert_eq!(field(chat, "gen_ai.operation.name"), "chat");
        assert_eq!(field(chat, "gen_ai.provider.name"), "acme.ai");
        assert_eq!(field(chat, "gen_ai.request.model"), "acme-mini");
        assert_eq!(field(chat, "gen_ai.request.stream"), "false");
        assert_eq!(field(chat, "otel.kind"), "client");
        assert!(field(chat, "tinytools.latency_ms").parse::<f64>().is_ok(), "{chat:?}");
    }
    let usage: Vec<(&str, &str, &str)> = chats
        .iter()
        .map(|chat| {
            (
                field(chat, "gen_ai.usage.input_tokens"),
                field(chat, "gen_ai.usage.output_tokens"),
                field(chat, "gen_ai.response.finish_reasons"),
            )
        })
        .collect();
    assert_eq!(
        usage,
        [("900", "20", r#"["tool_call"]"#), ("1700", "25", r#"["tool_call"]"#), ("1900", "12", r#"["stop"]"#)]
    );
    assert_eq!(field(chats[0], "gen_ai.usage.cache_read.input_tokens"), "600");

    let tools: Vec<&Seen> = all.iter().filter(|seen| seen.name == "execute_tool").collect();
    let search = tools[0];
    assert_eq!(field(search, "gen_ai.tool.name"), "tool_search");
    assert_eq!(field(search, "tinytools.tool.exposure"), "intrinsic");
    assert_eq!(field(search, "tinytools.tool.outcome"), "ok");
    let quote = tools[1];
    assert_eq!(field(quote, "gen_ai.operation.name"), "execute_tool");
    assert_eq!(field(quote, "gen_ai.tool.name"), "stock_quote");
    assert_eq!(field(quote, "gen_ai.tool.call.id"), "c2");
    assert_eq!(field(quote, "gen_ai.tool.type"), "function");
    assert_eq!(field(quote, "gen_ai.tool.description"), "Fetch the latest price for a ticker symbol.");
    assert_eq!(field(quote, "tinytools.tool.exposure"), "deferred");
    assert_eq!(field(quote, "tinytools.tool.promoted"), "true", "the search promoted it");
    assert_eq!(field(quote, "tinytools.tool.outcome"), "ok");

    // The tool runs as a spawned task: what it traces is inside its call's span.
    let quote_at =
        all.iter().position(|seen| seen.name == "execute_tool" && field(seen, "gen_ai.tool.name") == "stock_quote");
    let events = spans.events.lock().unwrap().clone();
    let quoting = events.iter().find(|(message, _)| message == "quoting the ticker").expect("the tool's event");
    assert_eq!(quoting.1, quote_at);
}

/// No prompt, argument or result text on any span without capture.
#[tokio::test]
async fn without_capture_no_content_is_recorded() {
    let all = traced(searching_model(), Capture::default(), false).await.all();
    let content =
        ["gen_ai.input.messages", "gen_ai.output.messages", "gen_ai.tool.call.arguments", "gen_ai.tool.call.result"];
    for seen in &all {
        for name in content {
            assert!(!seen.fields.contains_key(name), "{name} recorded on {seen:?}");
        }
        for value in seen.fields.values() {
            assert!(!value.contains("ACME") && !value.contains("stock price"), "content on {seen:?}");
        }
    }
}

#[tokio::test]
async fn capture_records_the_conversation_and_the_calls_content() {
    let capture = Capture::default().with_tool_io(true).with_messages(true);
    let all = traced(searching_model(), capture, false).await.all();
    let chats: Vec<&Seen> = all.iter().filter(|seen| seen.name == "chat").collect();
    let input: serde_json::Value = serde_json::from_str(field(chats[0], "gen_ai.input.messages")).unwrap();
    assert_eq!(input, json!([{"role": "user", "parts": [{"type": "text", "content": PROMPT}]}]));
    let output: serde_json::Value = serde_json::from_str(field(chats[1], "gen_ai.output.messages")).unwrap();
    assert_eq!(
        output,
        json!([{
            "role": "assistant",
            "parts": [{"type": "tool_call", "id": "c2", "name": "stock_quote", "arguments": {"symbol": "ACME"}}],
            "finish_reason": "tool_call",
        }])
    );
    let later: serde_json::Value = serde_json::from_str(field(chats[2], "gen_ai.input.messages")).unwrap();
    assert_eq!(
        later[4],
        json!({"role": "tool", "parts": [{"type": "tool_call_response", "id": "c2", "response": "ACME 12.50"}]})
    );
    let quote = all.iter().find(|seen| field(seen, "gen_ai.tool.name") == "stock_quote").unwrap();
    assert_eq!(field(quote, "gen_ai.tool.call.arguments"), r#"{"symbol":"ACME"}"#);
    assert_eq!(field(quote, "gen_ai.tool.call.result"), "ACME 12.50");
}

/// A deferred tool called by its name before any search: Deferred, not promoted.
#[tokio::test]
async fn a_deferred_call_by_name_is_not_promoted() {
    let model = ScriptedModel::new([
        ModelResponse::calls([("c1", "stock_quote", json!({"symbol": "ACME"}))]),
        ModelResponse::text("ACME trades at 12.50."),
    ]);
    let all = traced(model, Capture::default(), false).await.all();
    let quote = all.iter().find(|seen| seen.name == "execute_tool").unwrap();
    assert_eq!(field(quote, "otel.name"), "execute_tool stock_quote");
    assert_eq!(field(quote, "tinytools.tool.exposure"), "deferred");
    assert_eq!(field(quote, "tinytools.tool.promoted"), "false");
    let chat = all.iter().find(|seen| seen.name == "chat").unwrap();
    assert_eq!(field(chat, "otel.name"), "chat", "a model without a name: the operation alone");
    assert_eq!(field(chat, "gen_ai.request.model"), "<absent>");
}

#[tokio::test]
async fn a_streamed_run_has_the_same_tree() {
    let all = traced(searching_model().streaming_in_pieces(4), Capture::default(), true).await.all();
    let names: Vec<&str> = all.iter().map(|seen| seen.name).collect();
    assert_eq!(
        names,
        [
            "invoke_agent",
            "tinytools.turn",
            "chat",
            "execute_tool",
            "tinytools.turn",
            "chat",
            "execute_tool",
            "tinytools.turn",
            "chat"
        ]
    );
    assert_eq!(tree(&all).len(), all.len(), "every span under the run");
    for chat in all.iter().filter(|seen| seen.name == "chat") {
        assert_eq!(field(chat, "gen_ai.request.stream"), "true");
        assert!(field(chat, "gen_ai.response.time_to_first_chunk").parse::<f64>().is_ok(), "{chat:?}");
    }
}

/// The run's search-keyword request is a model request of the run, before its first turn.
#[tokio::test]
async fn the_keyword_request_is_a_chat_span_of_the_run() {
    let spans = Spans::default();
    let _default = tracing::subscriber::set_default(tracing_subscriber::registry().with(spans.clone()));
    let pre = PrePromotion::default().with_model_keywords(true);
    let policy = RunPolicy::default().with_discovery(ToolDiscoveryPolicy::default().with_pre_promotion(pre));
    let model = ScriptedModel::new([ModelResponse::text("ACME trades at 12.50.")]).with_keywords(["stock quote price"]);
    let agent = Agent::new(registry(), Arc::new(model.named("acme.ai", "acme-mini"))).with_policy(policy);
    agent.run(vec![Message::user(PROMPT)]).await.unwrap();
    let all = spans.all();
    assert_eq!(tree(&all), ["invoke_agent", "  chat acme-mini", "  tinytools.turn", "    chat acme-mini"]);
    assert_eq!(field(&all[1], "tinytools.request.purpose"), "keywords");
    assert_eq!(field(&all[3], "tinytools.request.purpose"), "turn");
}

#[tokio::test]
async fn a_named_agent_names_its_run_span() {
    let spans = Spans::default();
    let subscriber = tracing_subscriber::registry().with(spans.clone());
    let _default = tracing::subscriber::set_default(subscriber);
    let agent = Agent::builder(searching_model())
        .name("quotes")
        .registry(Arc::try_unwrap(registry()).unwrap_or_else(|_| panic!("the registry is shared")))
        .policy(bridge_only())
        .build()
        .expect("builds");
    agent.run(vec![Message::user(PROMPT)]).await.expect("runs");
    let all = spans.all();
    assert_eq!(field(&all[0], "otel.name"), "invoke_agent quotes");
    assert_eq!(field(&all[0], "gen_ai.agent.name"), "quotes");
}
