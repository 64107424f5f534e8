//! The sentence encoders side by side, on this machine, in one run (feature `encoder-compare`):
//! the kept `BertEmbedder` and candle-transformers' BERT on the same all-MiniLM-L6-v2 files.
//!
//! ```text
//! .ci/models
//! cargo build --release -p tinytools-bench --features encoder-compare --bins
//! target/release/encoder_compare [--rounds N] [--metatool-every N] [--eval DIR]
//! ```
//!
//! Each measurement is one `retrieval_eval --ranker minilm|minilm-candle` process (so peak
//! memory is the encoder's own), run for one set after the other encoder's on the same set, the
//! order alternating between rounds, so that both see the same load on the machine. Prints one
//! JSON object: per set and encoder, name-level recall@5, query p50/p99 (ms, the whole
//! search: the query's embedding, the cosines and the BM25 blend), catalogue embedding time
//! (ms, on both cores), peak resident memory; and how far apart the two encoders' vectors are.
//!
//! Measured 2026-12-05 beside a running live benchmark on this 2-core machine (absolute times
//! inflated, both encoders alike; recall@5 with a ranked list of 10, where BFCL's repeated names
//! leave fewer than 5 distinct ones for some queries: 0.906 with the default 50):
//!
//! | | BFCL R@5 | BFCL p50 / p99 | 3,420 tools | MetaTool R@5 (every 5th) | MetaTool p50 / p99 | 199 tools | peak RSS | binary |
//! |---|---|---|---|---|---|---|---|---|
//! | `BertEmbedder` (kept) | 0.8912 | 20.3 / 67.0 ms | 41.7 s | 0.7908 | 25.1 / 81.6 ms | 2.5 s | 263 MB | 9.4 MB |
//! | candle-transformers 0.11 | 0.8912 | 30.8 / 163.4 ms | 99.2 s | 0.7908 | 23.8 / 107.0 ms | 6.9 s | 424 MB | +3.7 MB |
//!
//! The vectors agree to `1 − cosine` ≤ 7·10⁻⁷ over 64 texts, so recall is identical; candle
//! pads each batch to its longest text and spreads every product over threads of its own,
//! where `BertEmbedder` stacks unpadded texts and gives each core whole batches.

use std::path::{Path, PathBuf};
use std::process::Command;

use serde_json::{Value, json};
use tinytools::rank::embedding::{BertEmbedder, CandleBert, TextEmbedder};
use tinytools_examples::eval::{self, EvalTool};
use tinytools_examples::models;

const ENCODERS: [&str; 2] = ["minilm", "minilm-candle"];

fn main() {
    if let Err(message) = run() {
        eprintln!("encoder_compare: {message}");
        std::process::exit(2);
    }
}

fn run() -> Result<(), String> {
    let (mut rounds, mut metatool_every, mut eval_dir) = (1_usize, 5_usize, PathBuf::from("../shared/eval"));
    let mut args = std::env::args().skip(1);
    while let Some(flag) = args.next() {
        let value = args.next().ok_or_else(|| format!("{flag} needs a value"))?;
        let whole = || value.parse::<usize>().map_err(|_| format!("{flag} takes a whole number"));
        match flag.as_str() {
            "--rounds" => rounds = whole()?,
            "--metatool-every" => metatool_every = whole()?,
            "--eval" => eval_dir = value.into(),
            other => return Err(format!("unknown option `{other}`; see the binary's header")),
        }
    }
    let eval_binary = std::env::current_exe()
        .map_err(|e| e.to_string())?
        .with_file_name(format!("retrieval_eval{}", std::env::consts::EXE_SUFFIX));
    let mut report = json!({"fidelity": fidelity(&eval_dir.join("bfcl/tools.jsonl"))?, "runs": []});
    for round in 0..rounds {
        for (set, every) in [("bfcl", 1), ("metatool", metatool_every)] {
            let mut order = ENCODERS;
            if round % 2 == 1 {
                order.reverse();
            }
            for encoder in order {
                let run = measure(&eval_binary, &eval_dir.join(set), encoder, every)?;
                eprintln!("round {round}, {set}, {encoder}: {run}");
                if let Some(runs) = report["runs"].as_array_mut() {
                    runs.push(json!({"round": round, "set": set, "every": every, "encoder": encoder, "result": run}));
                }
            }
        }
    }
    println!("{report}");
    Ok(())
}

/// One `retrieval_eval` process: the figures of one encoder on one set.
fn measure(binary: &Path, set: &Path, encoder: &str, every: usize) -> Result<Value, String> {
    let output = Command::new(binary)
        .arg("--tools")
        .arg(set.join("tools.jsonl"))
        .arg("--queries")
        .arg(set.join("queries.jsonl"))
        .args(["--ranker", encoder, "--every", &every.to_string()])
        .output()
        .map_err(|e| format!("cannot run {}: {e} (build with --bins)", binary.display()))?;
    if !output.status.success() {
        return Err(format!("{encoder} on {}: {}", set.display(), String::from_utf8_lossy(&output.stderr)));
    }
    let full: Value = serde_json::from_slice(&output.stdout).map_err(|e| format!("retrieval_eval's output: {e}"))?;
    let ms = |key: &str| full[key].as_f64().map(|us| (us / 100.0).round() / 10.0);
    Ok(json!({
        "recall@5": full["name_level"]["recall@5"],
        "query_ms_p50": ms("search_us_p50"),
        "query_ms_p99": ms("search_us_p99"),
        "catalogue_ms": full["embed_ms"],
        "tools": full["tools"],
        "queries": full["queries"],
        "peak_rss_mb": full["peak_rss_mb"],
    }))
}

/// How far candle's vectors are from ours on the first 64 tools of `tools`: the largest
/// `1 − cosine` between the two encoders' vectors of one text.
fn fidelity(tools: &Path) -> Result<Value, String> {
    let dir = models::minilm_dir();
    let ours = BertEmbedder::load(&dir).map_err(|e| format!("{e} (run .ci/models)"))?;
    let candle = CandleBert::load(&dir).map_err(|e| e.to_string())?;
    let tools: Vec<EvalTool> = eval::read_jsonl(tools)?;
    let texts: Vec<String> = tools.iter().take(64).map(|tool| format!("{}: {}", tool.name, tool.description)).collect();
    let texts: Vec<&str> = texts.iter().map(String::as_str).collect();
    let (a, b) = (ours.embed(&texts).map_err(|e| e.to_string())?, candle.embed(&texts).map_err(|e| e.to_string())?);
    let worst =
        a.iter().zip(&b).map(|(x, y)| 1.0 - x.iter().zip(y).map(|(p, q)| p * q).sum::<f32>()).fold(0.0_f32, f32::max);
    Ok(json!({"texts": texts.len(), "max_one_minus_cosine": worst}))
}
