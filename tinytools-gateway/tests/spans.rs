//! Each `tools/call` the gateway answers is an `execute_tool {tool}` span with the GenAI
//! attributes (`docs/tracing.md`), seen by an in-memory subscriber: the tool it reached, how,
//! the server that answered, the outcome, and never the arguments.

// Test code may unwrap and expect.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex};

use serde_json::{Map, Value, json};
use tokio_util::sync::CancellationToken;
use tracing::Subscriber;
use tracing::field::{Field, Visit};
use tracing::span::{Attributes, Id, Record};
use tracing_subscriber::layer::{Context, Layer, SubscriberExt};

use common::*;

/// One span: its id, its name, its fields as text.
type Seen = (u64, &'static str, BTreeMap<String, String>);

/// Every span, in the order opened.
#[derive(Clone, Default)]
struct Spans(Arc<Mutex<Vec<Seen>>>);

struct Fields<'a>(&'a mut BTreeMap<String, String>);

impl Visit for Fields<'_> {
    fn record_str(&mut self, field: &Field, value: &str) {
        self.0.insert(field.name().to_owned(), value.to_owned());
    }

    fn record_debug(&mut self, field: &Field, value: &dyn std::fmt::Debug) {
        self.0.insert(field.name().to_owned(), format!("{value:?}"));
    }
}

impl<S: Subscriber> Layer<S> for Spans {
    fn on_new_span(&self, attrs: &Attributes<'_>, id: &Id, _: Context<'_, S>) {
        let mut fields = BTreeMap::new();
        attrs.record(&mut Fields(&mut fields));
        self.0.lock().unwrap().push((id.into_u64(), attrs.metadata().name(), fields));
    }

    fn on_record(&self, id: &Id, values: &Record<'_>, _: Context<'_, S>) {
        let mut spans = self.0.lock().unwrap();
        if let Some((_, _, fields)) = spans.iter_mut().rev().find(|(seen, _, _)| *seen == id.into_u64()) {
            values.record(&mut Fields(fields));
        }
    }
}

fn arguments(value: Value) -> Option<Map<String, Value>> {
    value.as_object().cloned()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_call_is_an_execute_tool_span() {
    let dir = temp_dir("spans");
    let config = write_config(&dir, json!({"fixture": fixture(json!({}), json!({}))}));
    let (client, gateway) = connect(&config, &dir.join("cache")).await;
    let spans = Spans::default();
    let _default = tracing::subscriber::set_default(tracing_subscriber::registry().with(spans.clone()));
    let cancel = CancellationToken::new();
    let found =
        gateway.call("tool_search", arguments(json!({"query": "stock price for a ticker"})), None, &cancel).await;
    assert_ne!(found.is_error, Some(true));
    let quote = json!({"name": "fixture__stock_quote", "arguments": {"symbol": "ACME"}});
    assert_eq!(gateway.call("call_tool", arguments(quote), None, &cancel).await.is_error, Some(false));
    let unknown = json!({"name": "no_such_tool", "arguments": {"symbol": "ACME"}});
    assert_eq!(gateway.call("call_tool", arguments(unknown), None, &cancel).await.is_error, Some(true));

    let seen: Vec<_> = spans.0.lock().unwrap().iter().filter(|(_, name, _)| *name == "execute_tool").cloned().collect();
    let field = |at: usize, name: &str| seen[at].2.get(name).cloned().unwrap_or_default();
    let names: Vec<String> = (0..seen.len()).map(|at| field(at, "otel.name")).collect();
    assert_eq!(names, ["execute_tool tool_search", "execute_tool fixture__stock_quote", "execute_tool no_such_tool"]);
    for (at, span) in seen.iter().enumerate() {
        assert_eq!(field(at, "gen_ai.operation.name"), "execute_tool");
        assert_eq!(field(at, "mcp.method.name"), "tools/call");
        assert!(span.2.values().all(|value| !value.contains("ACME")), "arguments on {span:?}");
    }
    assert_eq!(
        (field(0, "tinytools.tool.exposure"), field(0, "tinytools.tool.outcome")),
        ("intrinsic".into(), "ok".into())
    );
    assert_eq!(field(1, "gen_ai.tool.name"), "fixture__stock_quote");
    assert_eq!(field(1, "gen_ai.tool.type"), "extension");
    assert_eq!(field(1, "tinytools.tool.exposure"), "deferred");
    assert_eq!(field(1, "tinytools.gateway.server"), "fixture");
    assert_eq!(field(1, "tinytools.tool.outcome"), "ok");
    assert_eq!(field(2, "tinytools.tool.outcome"), "unknown");
    client.cancel().await.unwrap();
}
