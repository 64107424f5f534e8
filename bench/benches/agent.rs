//! Loop overhead: runs per second with a model that answers at once.
//!
//! `cargo bench -p tinytools-bench --bench agent`
//!
//! A run is the spec's three turns over the 41-tool catalogue: `tool_search`, a call of the
//! found tool, an answer. Everything but the model is real: the bridge, ranking, promotion,
//! admission, the tool, events. By default the run first asks the model for the message's
//! search keywords; the second figure is the same run without that request.

use std::sync::Arc;

use criterion::{Criterion, criterion_group, criterion_main};
use serde_json::json;
use tinytools::discovery::{PrePromotion, ToolDiscoveryPolicy};
use tinytools::model::{ChatModel, Message, ModelError, ModelRequest, ModelResponse};
use tinytools::run::{Agent, RunPolicy};
use tinytools_examples::catalogue;

struct Immediate;

#[async_trait::async_trait]
impl ChatModel for Immediate {
    async fn complete(&self, request: &ModelRequest) -> Result<ModelResponse, ModelError> {
        Ok(match request.messages.len() {
            1 => ModelResponse::calls([("s", "tool_search", json!({"query": "stock price of a ticker", "limit": 1}))]),
            3 => ModelResponse::calls([("q", "stock_quote", json!({"symbol": "ACME"}))]),
            // The answer, and the line of the run's search-keyword request (two messages).
            _ => ModelResponse::text("done"),
        })
    }
}

fn agent(c: &mut Criterion) {
    let runtime = match tokio::runtime::Builder::new_current_thread().enable_time().build() {
        Ok(runtime) => runtime,
        Err(err) => panic!("{err}"),
    };
    let agent = Agent::new(Arc::new(catalogue::registry()), Arc::new(Immediate));
    c.bench_function("agent run: search, call, answer (41 tools)", |b| {
        b.to_async(&runtime).iter(|| async { agent.run(vec![Message::user("What is ACME at?")]).await.is_ok() });
    });
    let pre = PrePromotion::default().with_model_keywords(false);
    let plain = RunPolicy::default().with_discovery(ToolDiscoveryPolicy::default().with_pre_promotion(pre));
    let agent = Agent::new(Arc::new(catalogue::registry()), Arc::new(Immediate)).with_policy(plain);
    c.bench_function("agent run without the keyword request", |b| {
        b.to_async(&runtime).iter(|| async { agent.run(vec![Message::user("What is ACME at?")]).await.is_ok() });
    });
}

criterion_group!(benches, agent);
criterion_main!(benches);
