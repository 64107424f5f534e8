//! The sentence encoder's own speed, a query at a time, steadied against a noisy machine.
//!
//! ```text
//! .ci/models
//! cargo run --release -p tinytools-bench --bin encoder_speed -- --queries ../shared/eval/bfcl/queries.jsonl
//! ```
//!
//! `--queries` defaults to BFCL's in the eval sets' directory (`TINYTOOLS_EVAL_DIR`, else
//! `../shared/eval`; `bench/scripts/fetch-eval.sh` fetches it).
//! Embeds every `--every N`th query (default 10) of the file `--repeats R` times (default 5)
//! through `TextEmbedder::embed_query`, the path a search takes (reading the query's first
//! `--query-tokens N` word pieces, by default `BertEmbedder::DEFAULT_QUERY_TOKENS`), and keeps each query's fastest
//! time: on a shared machine the fastest of a few tries is the encoder's cost and the rest is
//! the neighbours'. Prints one JSON object: the p50/p99 over queries of those fastest times,
//! the same of every try (what a user sees on this machine today), and the word pieces per
//! query. `retrieval_eval` measures a whole search (encoder and scoring) once per query.

use std::path::PathBuf;
use std::time::Instant;

use serde_json::json;
use tinytools::rank::embedding::TextEmbedder;
use tinytools_bench::cli::whole_number;
use tinytools_bench::percentile::{percentile, sorted};
use tinytools_examples::eval::{self, EvalQuery};
use tinytools_examples::models;

fn main() {
    if let Err(message) = run() {
        eprintln!("encoder_speed: {message}");
        std::process::exit(2);
    }
}

fn run() -> Result<(), String> {
    let Args { queries, every, repeats, query_tokens } = parse_args(std::env::args().skip(1))?;
    let queries = match queries {
        Some(file) => file,
        None => eval::set_file("bfcl", "queries.jsonl")?,
    };
    let queries: Vec<EvalQuery> = eval::read_jsonl(&queries)?;
    let Some(encoder) = models::minilm() else { return Err("the model is not installed (run .ci/models)".into()) };
    let encoder = match query_tokens {
        Some(tokens) => encoder.with_query_tokens(tokens),
        None => encoder,
    };
    let texts: Vec<&str> = queries.iter().step_by(every).map(|q| q.query.as_str()).collect();
    encoder.embed_one("warm up the pool and the caches");
    let (mut fastest, mut all, mut pieces) = (Vec::new(), Vec::new(), Vec::new());
    for text in &texts {
        let mut best = f64::INFINITY;
        for _ in 0..repeats {
            let started = Instant::now();
            std::hint::black_box(encoder.embed_query(text).map_err(|e| e.to_string())?);
            let ms = started.elapsed().as_secs_f64() * 1e3;
            best = best.min(ms);
            all.push(ms);
        }
        fastest.push(best);
        pieces.push(encoder.query_token_ids(text).len() as f64);
    }
    let [fastest, all, pieces] = [fastest, all, pieces].map(sorted);
    let report = json!({
        "queries": texts.len(),
        "repeats": repeats,
        "threads": rayon_threads(),
        "fastest_ms_p50": at(&fastest, 0.5),
        "fastest_ms_p99": at(&fastest, 0.99),
        "every_try_ms_p50": at(&all, 0.5),
        "every_try_ms_p99": at(&all, 0.99),
        "pieces_p50": at(&pieces, 0.5),
        "pieces_p99": at(&pieces, 0.99),
    });
    println!("{report}");
    Ok(())
}

/// The threads a query's products are shared over (`RAYON_NUM_THREADS`, else the cores).
fn rayon_threads() -> usize {
    std::env::var("RAYON_NUM_THREADS")
        .ok()
        .and_then(|n| n.parse().ok())
        .unwrap_or_else(|| std::thread::available_parallelism().map_or(1, usize::from))
}

/// The `p` quantile of `sorted`, rounded to 0.01 (0 for none).
fn at(sorted: &[f64], p: f64) -> f64 {
    percentile(sorted, p).map_or(0.0, |v| (v * 100.0).round() / 100.0)
}

/// The command line.
struct Args {
    queries: Option<PathBuf>,
    every: usize,
    repeats: usize,
    query_tokens: Option<usize>,
}

fn parse_args(mut args: impl Iterator<Item = String>) -> Result<Args, String> {
    let (mut queries, mut every, mut repeats) = (None, 10, 5);
    let mut query_tokens = None;
    while let Some(arg) = args.next() {
        let mut value = || args.next().ok_or_else(|| format!("{arg} needs a value"));
        match arg.as_str() {
            "--queries" => queries = Some(PathBuf::from(value()?)),
            "--every" => every = whole_number(&arg, &value()?)?,
            "--repeats" => repeats = whole_number(&arg, &value()?)?,
            "--query-tokens" => query_tokens = Some(whole_number(&arg, &value()?)?),
            other => {
                return Err(format!(
                    "unknown option `{other}`: --queries FILE, --every N, --repeats R, --query-tokens N"
                ));
            }
        }
    }
    Ok(Args { queries, every: every.max(1), repeats: repeats.max(1), query_tokens })
}
