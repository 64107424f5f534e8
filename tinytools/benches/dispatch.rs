//! Admission + dispatch of a 3-argument tool: schema validation, deserialization, the call,
//! and output conversion. Target: ≤ 1 µs p50 on the 2-core CI machine.
//!
//! `cargo bench -p tinytools-sdk --bench dispatch`

use criterion::{Criterion, criterion_group, criterion_main};
use serde_json::json;
use tinytools::{ToolContext, ToolRegistry, tool};

/// Fetch the latest price for a ticker symbol.
#[tool(read_only)]
async fn stock_quote(
    /// Ticker symbol.
    symbol: String,
    /// Recent trades to include.
    limit: u32,
    /// Include after-hours trading.
    extended_hours: bool,
) -> String {
    if extended_hours { format!("{symbol} 12.50 ({limit} trades, extended)") } else { format!("{symbol} 12.50") }
}

fn dispatch(c: &mut Criterion) {
    let mut registry = ToolRegistry::new();
    if let Err(err) = registry.register(StockQuote) {
        panic!("{err}");
    }
    let runtime = match tokio::runtime::Builder::new_current_thread().build() {
        Ok(runtime) => runtime,
        Err(err) => panic!("{err}"),
    };
    let args = json!({"symbol": "ACME", "limit": 5, "extended_hours": false});
    let ctx = ToolContext::new("call_1");

    c.bench_function("dispatch/3-arg tool (admission + deserialize + call)", |b| {
        b.to_async(&runtime).iter(|| async {
            std::hint::black_box(registry.dispatch_with("stock_quote", args.clone(), &ctx).await.is_ok())
        });
    });
    c.bench_function("dispatch_raw/3-arg tool (JSON text in)", |b| {
        let raw = args.to_string();
        b.to_async(&runtime)
            .iter(|| async { std::hint::black_box(registry.dispatch_raw("stock_quote", &raw, &ctx).await.is_ok()) });
    });
    c.bench_function("admission rejects 3 violations", |b| {
        let bad = json!({"symbol": 7, "limit": "five"});
        b.to_async(&runtime).iter(|| async {
            std::hint::black_box(registry.dispatch_with("stock_quote", bad.clone(), &ctx).await.is_err())
        });
    });
}

criterion_group!(benches, dispatch);
criterion_main!(benches);
