//! Text-call recovery on long replies without a newline: plain prose that quotes data, and
//! brace-heavy text, at 0.25, 1 and 2 MB, through the public [`Dialect::parse`] (a native
//! model's reply is read for calls written as text).
//!
//! `cargo bench -p tinytools-bench --bench recovery -- recovery --warm-up-time 1 --measurement-time 3`
//!
//! Neither reply holds a call: the whole reply is read and comes back as its text. Linear
//! reading shows as the same throughput at every size.

use criterion::{BenchmarkId, Criterion, Throughput, criterion_group, criterion_main};
use serde_json::json;
use tinytools::ToolSchema;
use tinytools::dialect::Dialect;

/// Reply sizes in bytes, with their labels.
const SIZES: [(usize, &str); 3] = [(250_000, "0.25MB"), (1_000_000, "1MB"), (2_000_000, "2MB")];

/// Prose quoting data: a small JSON object and a citation in every sentence, on one line.
const PLAIN: &str = "The quote was {\"price\": 12} and see [1] for more detail on the market today. ";

/// Brace-heavy text: objects and arrays opened and never closed, on one line.
const BRACES: &str = "{\"a\": [1, {\"b\": [2, ";

/// `unit` repeated to exactly `len` bytes (the units are ASCII).
fn reply(unit: &str, len: usize) -> String {
    let mut text = unit.repeat(len / unit.len() + 1);
    text.truncate(len);
    text
}

fn recovery(c: &mut Criterion) {
    let tools = [ToolSchema::new(
        "stock_quote",
        "Fetch a price.",
        json!({"type": "object", "properties": {"symbol": {"type": "string"}}}),
    )];
    let mut group = c.benchmark_group("recovery");
    group.sample_size(10);
    for (name, unit) in [("plain", PLAIN), ("braces", BRACES)] {
        for (len, label) in SIZES {
            let text = reply(unit, len);
            let (calls, kept) = Dialect::Native.parse(&text, &tools);
            assert!(calls.is_empty() && kept == text.trim(), "{name} {label}: no call, the text unchanged");
            group.throughput(Throughput::Bytes(len as u64));
            group.bench_with_input(BenchmarkId::new(name, label), &text, |b, text| {
                b.iter(|| Dialect::Native.parse(text, &tools).0.len());
            });
        }
    }
    group.finish();
}

criterion_group!(benches, recovery);
criterion_main!(benches);
