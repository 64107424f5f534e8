//! A run's spans exported through OpenTelemetry: the runtime emits `tracing` spans named and
//! attributed after OpenTelemetry's GenAI conventions (`docs/tracing.md`), and
//! `tracing-opentelemetry` turns them into OpenTelemetry spans. Here they go to stdout
//! (`opentelemetry-stdout`, no collector needed), each printed as it ends; then the example
//! prints the trace as a tree: `invoke_agent` > `tinytools.turn` > `chat {model}` /
//! `execute_tool {tool}`.
//!
//! The model is scripted (no key needed): over the 41-tool catalogue it searches, calls the
//! deferred tool it found, and answers; the tools, search, promotion and spans are real.
//!
//! ```text
//! cargo run -p tinytools-examples --features otel --example otel_traces              # no content on the spans
//! cargo run -p tinytools-examples --features otel --example otel_traces -- --capture # prompts, arguments, results too
//! ```
//!
//! To send the spans to a collector (Jaeger, Tempo, Honeycomb, an OpenTelemetry Collector)
//! over OTLP instead, add `opentelemetry-otlp` of the same line as `opentelemetry` (0.33, with
//! its `grpc-tonic` feature, or the default HTTP one) and build the provider with its exporter
//! in place of the stdout one, batched:
//!
//! ```ignore
//! let exporter = opentelemetry_otlp::SpanExporter::builder().with_tonic().build()?; // or .with_http()
//! let provider = SdkTracerProvider::builder().with_batch_exporter(exporter).with_resource(resource).build();
//! ```
//!
//! The exporter reads the standard variables (`OTEL_EXPORTER_OTLP_ENDPOINT`, by default
//! `http://localhost:4317` for gRPC and `http://localhost:4318` for HTTP); call
//! `provider.shutdown()` before the process exits so the last batch is sent.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::SystemTime;

use opentelemetry::trace::{SpanId, TracerProvider as _};
use opentelemetry_sdk::Resource;
use opentelemetry_sdk::error::OTelSdkResult;
use opentelemetry_sdk::trace::{SdkTracerProvider, SpanData, SpanExporter};
use serde_json::json;
use tinytools::model::{Message, ModelResponse, Usage};
use tinytools::run::{Agent, Capture, RunPolicy};
use tinytools::testkit::ScriptedModel;
use tinytools_examples::catalogue;
use tracing_subscriber::layer::SubscriberExt;

/// One ended span, as the tree shows it.
struct Ended {
    id: SpanId,
    parent: SpanId,
    start: SystemTime,
    name: String,
    millis: f64,
    attributes: Vec<String>,
}

impl Ended {
    fn of(span: &SpanData) -> Self {
        let took = span.end_time.duration_since(span.start_time).unwrap_or_default();
        let attributes = span
            .attributes
            .iter()
            .filter(|kv| kv.key.as_str().starts_with("gen_ai.") || kv.key.as_str().starts_with("tinytools."))
            .filter(|kv| kv.key.as_str() != "gen_ai.tool.description")
            .map(|kv| {
                let value = kv.value.to_string();
                let shown: String = value.chars().take(100).collect();
                let more = if shown.len() < value.len() { "…" } else { "" };
                format!("{}={shown}{more}", kv.key)
            })
            .collect();
        Self {
            id: span.span_context.span_id(),
            parent: span.parent_span_id,
            start: span.start_time,
            name: span.name.to_string(),
            millis: took.as_secs_f64() * 1_000.0,
            attributes,
        }
    }
}

/// The stdout exporter, keeping what it exported for the tree.
#[derive(Debug)]
struct Tee {
    stdout: opentelemetry_stdout::SpanExporter,
    ended: Arc<Mutex<Vec<Ended>>>,
}

impl std::fmt::Debug for Ended {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.name)
    }
}

impl SpanExporter for Tee {
    async fn export(&self, batch: Vec<SpanData>) -> OTelSdkResult {
        if let Ok(mut ended) = self.ended.lock() {
            ended.extend(batch.iter().map(Ended::of));
        }
        self.stdout.export(batch).await
    }

    fn set_resource(&mut self, resource: &Resource) {
        self.stdout.set_resource(resource);
    }
}

fn main() -> anyhow::Result<()> {
    let capture = std::env::args().any(|arg| arg == "--capture");
    let ended = Arc::new(Mutex::new(Vec::new()));
    let exporter = Tee { stdout: opentelemetry_stdout::SpanExporter::default(), ended: Arc::clone(&ended) };
    let provider = SdkTracerProvider::builder()
        .with_simple_exporter(exporter)
        .with_resource(Resource::builder().with_service_name("tinytools-otel-example").build())
        .build();
    let layer = tracing_opentelemetry::layer()
        .with_tracer(provider.tracer("tinytools"))
        .with_location(false)
        .with_threads(false)
        .with_tracked_inactivity(false);
    tracing::subscriber::set_global_default(tracing_subscriber::registry().with(layer))?;

    let runtime = tokio::runtime::Builder::new_current_thread().enable_time().build()?;
    let answer = runtime.block_on(run(capture))?;
    provider.shutdown()?;

    println!("\nThe answer: {answer}");
    println!("\nThe trace as a tree (span, duration, its gen_ai.* and tinytools.* attributes):\n");
    let ended = ended.lock().map_err(|_| anyhow::anyhow!("the exporter's record is poisoned"))?;
    print_tree(&ended);
    Ok(())
}

/// The run: search, call what was found, answer, as a scripted model plays it.
async fn run(capture: bool) -> anyhow::Result<String> {
    let mut search = ModelResponse::calls([("call_1", "tool_search", json!({"query": "stock price for a ticker"}))]);
    search.usage = Some(Usage::new(1_180, 22).with_cache(1_024, 0));
    let model = ScriptedModel::new([
        search,
        ModelResponse::calls([("call_2", "stock_quote", json!({"symbol": "ACME"}))]).with_usage(1_730, 18),
        ModelResponse::text("ACME last traded at the price the tool reported.").with_usage(1_910, 14),
    ])
    .named("tinytools.scripted", "scripted-model");
    let mut policy = RunPolicy::default();
    if capture {
        policy = policy.with_capture(Capture::default().with_tool_io(true).with_messages(true));
    }
    let agent = Agent::new(Arc::new(catalogue::registry()), Arc::new(model)).with_policy(policy);
    let outcome = agent.run(vec![Message::user("What is ACME trading at?")]).await?;
    Ok(outcome.answer)
}

/// The ended spans as a tree, children in the order they started.
fn print_tree(ended: &[Ended]) {
    let mut children: HashMap<SpanId, Vec<&Ended>> = HashMap::new();
    let known: Vec<SpanId> = ended.iter().map(|span| span.id).collect();
    let mut roots = Vec::new();
    for span in ended {
        match known.contains(&span.parent) {
            true => children.entry(span.parent).or_default().push(span),
            false => roots.push(span),
        }
    }
    for spans in children.values_mut() {
        spans.sort_by_key(|span| span.start);
    }
    fn walk(span: &Ended, depth: usize, children: &HashMap<SpanId, Vec<&Ended>>) {
        println!("{}{} ({:.2} ms)", "  ".repeat(depth), span.name, span.millis);
        for attribute in &span.attributes {
            println!("{}    {attribute}", "  ".repeat(depth));
        }
        for child in children.get(&span.id).into_iter().flatten() {
            walk(child, depth + 1, children);
        }
    }
    for root in roots {
        walk(root, 0, &children);
    }
}
