//! Index build and search at 100, 1,000 and 10,000 tools: tinytools' BM25 (the `tool_search`
//! ranking) beside the `bm25` crate (the one Codex uses) on the same catalogue, in one run.
//!
//! `cargo bench -p tinytools-bench --bench rank` (reads BFCL's set from `TINYTOOLS_EVAL_DIR`,
//! else `../shared/eval`; `bench/scripts/fetch-eval.sh` fetches it).
//!
//! The catalogue is BFCL's 3,420 tools (name, description, parameter names and descriptions);
//! 10,000 repeats it with renamed copies. Queries cycle through BFCL's first 200. Search asks
//! for 5 hits, `tool_search`'s default.

use std::sync::Arc;

use bm25::{Language, SearchEngineBuilder};
use criterion::{BenchmarkId, Criterion, criterion_group, criterion_main};
use tinytools::ToolSchema;
use tinytools::discovery::DeferredCatalog;
use tinytools_examples::eval::{self, EvalQuery, EvalTool};

const SIZES: [usize; 3] = [100, 1_000, 10_000];

/// Ends the process with `message` as a failure.
fn fail(message: String) -> ! {
    eprintln!("rank: {message}");
    std::process::exit(1);
}

/// `n` tools: BFCL's, repeated under new names past 3,420.
fn catalogue(tools: &[EvalTool], n: usize) -> Vec<(Arc<ToolSchema>, Option<String>)> {
    (0..n)
        .map(|i| {
            let tool = &tools[i % tools.len()];
            let copy = i / tools.len();
            let name = if copy == 0 { tool.id.clone() } else { format!("{}_copy{copy}", tool.id) };
            let schema = ToolSchema::new(name, tool.description.clone(), eval::normalize_schema(&tool.parameters));
            (Arc::new(schema), None)
        })
        .collect()
}

/// The same fields as one text per tool, for the `bm25` crate.
fn corpus(tools: &[(Arc<ToolSchema>, Option<String>)]) -> Vec<String> {
    tools
        .iter()
        .map(|(schema, _)| {
            let mut text = format!("{} {}", schema.name, schema.description);
            if let Some(properties) = schema.parameters["properties"].as_object() {
                for (name, property) in properties {
                    text.push(' ');
                    text.push_str(name);
                    if let Some(description) = property["description"].as_str() {
                        text.push(' ');
                        text.push_str(description);
                    }
                }
            }
            text
        })
        .collect()
}

fn rank(c: &mut Criterion) {
    let dir = eval::bench_set_dir("rank", "bfcl");
    let tools: Vec<EvalTool> = eval::read_jsonl(&dir.join("tools.jsonl")).unwrap_or_else(|err| fail(err));
    let queries: Vec<EvalQuery> = eval::read_jsonl(&dir.join("queries.jsonl")).unwrap_or_else(|err| fail(err));
    if tools.is_empty() || queries.is_empty() {
        fail(format!("{} holds no tools or no queries", dir.display()));
    }
    let queries: Vec<&str> = queries.iter().take(200).map(|q| q.query.as_str()).collect();

    let mut build = c.benchmark_group("build");
    build.sample_size(10);
    for n in SIZES {
        let tools = catalogue(&tools, n);
        let texts = corpus(&tools);
        build.bench_with_input(BenchmarkId::new("tinytools", n), &tools, |b, tools| {
            b.iter(|| DeferredCatalog::from_tools(tools.iter().cloned()));
        });
        build.bench_with_input(BenchmarkId::new("bm25-crate", n), &texts, |b, texts| {
            b.iter(|| SearchEngineBuilder::<u32>::with_corpus(Language::English, texts.iter().cloned()).build());
        });
    }
    build.finish();

    let mut search = c.benchmark_group("search");
    for n in SIZES {
        let tools = catalogue(&tools, n);
        let catalog = DeferredCatalog::from_tools(tools.iter().cloned());
        let engine = SearchEngineBuilder::<u32>::with_corpus(Language::English, corpus(&tools)).build();
        let mut next = 0_usize;
        search.bench_function(BenchmarkId::new("tinytools", n), |b| {
            b.iter(|| {
                next = (next + 1) % queries.len();
                catalog.bm25(queries[next], 5)
            });
        });
        search.bench_function(BenchmarkId::new("bm25-crate", n), |b| {
            b.iter(|| {
                next = (next + 1) % queries.len();
                engine.search(queries[next], 5)
            });
        });
    }
    search.finish();
}

criterion_group!(benches, rank);
criterion_main!(benches);
