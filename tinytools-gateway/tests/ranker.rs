//! What ranks `tool_search`: a host's ranker in `GatewayOptions` (and BM25 when it fails), and
//! the binary's `--embedding-model`, the sentence-embedding ranker over the MiniLM model
//! `.ci/models` installs.

// Test code may unwrap and expect.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use std::sync::Arc;
use std::time::Duration;

use rmcp::ServiceExt;
use rmcp::transport::TokioChildProcess;
use serde_json::{Value, json};
use tinytools::ToolRanker;
use tinytools::rank::{RankRequest, RankedTool, RankerError};
use tinytools_gateway::GatewayOptions;

use common::*;

const GATEWAY: &str = env!("CARGO_BIN_EXE_tinytools-gateway");

/// Ranks one tool first whatever the query, or fails.
struct Fixed(Option<&'static str>);

#[async_trait::async_trait]
impl ToolRanker for Fixed {
    fn name(&self) -> &str {
        "fixed"
    }

    async fn rank(&self, request: RankRequest<'_>) -> Result<Vec<RankedTool>, RankerError> {
        let name = self.0.ok_or_else(|| RankerError::unavailable("this test's ranker always fails"))?;
        let _ = request;
        Ok(vec![RankedTool::new(name, Some(0.9))])
    }
}

fn first_match(answer: &Value) -> &str {
    answer["matches"][0]["name"].as_str().unwrap_or_default()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_hosts_ranker_orders_tool_search_and_a_failing_one_falls_back_to_bm25() {
    let dir = temp_dir("ranker-host");
    let config = write_config(&dir, json!({"fixture": fixture(json!({}), json!({}))}));
    let query = "convert 250 euros into yen";

    let fixed: Arc<dyn ToolRanker> = Arc::new(Fixed(Some("fixture__crypto_price")));
    let options = GatewayOptions::default().with_ranker(fixed, Duration::from_secs(5));
    let (client, _gateway) = connect_with_options(&config, &dir.join("cache"), (), options).await;
    let answer = search(&client, query).await;
    assert_eq!(first_match(&answer), "fixture__crypto_price", "{answer}");
    assert_eq!(answer["matches"].as_array().unwrap().len(), 1, "only what the ranker returned: {answer}");
    client.cancel().await.unwrap();

    let failing: Arc<dyn ToolRanker> = Arc::new(Fixed(None));
    let options = GatewayOptions::default().with_ranker(failing, Duration::from_secs(5));
    let (client, _gateway) = connect_with_options(&config, &dir.join("cache"), (), options).await;
    let answer = search(&client, query).await;
    assert_eq!(first_match(&answer), "fixture__currency_convert", "BM25's answer: {answer}");
    assert!(!answer.to_string().contains("always fails"), "the ranker's failure stays with the host: {answer}");
    client.cancel().await.unwrap();
}

/// Records the size of every catalogue it is asked to rank, and ranks nothing.
#[derive(Default)]
struct Recording(std::sync::Mutex<Vec<usize>>);

#[async_trait::async_trait]
impl ToolRanker for Recording {
    fn name(&self) -> &str {
        "recording"
    }

    async fn rank(&self, request: RankRequest<'_>) -> Result<Vec<RankedTool>, RankerError> {
        self.0.lock().unwrap().push(request.catalog.len());
        Ok(Vec::new())
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_hosts_ranker_sees_the_whole_catalogue_once_before_any_search() {
    let dir = temp_dir("ranker-prime");
    let config = write_config(&dir, json!({"fixture": fixture(json!({}), json!({}))}));
    let recording = Arc::new(Recording::default());
    let options = GatewayOptions::default().with_ranker(recording.clone(), Duration::from_secs(5));
    // A cold cache: the fixture is still starting when the gateway is built.
    let (client, _gateway) = connect_with_options(&config, &dir.join("cache"), (), options).await;
    let seen = || recording.0.lock().unwrap().clone();
    assert!(eventually(|| !seen().is_empty()).await, "never primed");
    assert_eq!(seen(), [fixture_tool_count()], "once, over every tool, with no search sent");
    search(&client, "convert 250 euros into yen").await;
    assert_eq!(seen().len(), 2, "then once a search: {:?}", seen());
    client.cancel().await.unwrap();
}

/// The MiniLM model `.ci/models` unpacks, if it is there (required when
/// `TINYTOOLS_MODELS_REQUIRED=1`).
fn minilm() -> Option<std::path::PathBuf> {
    let dir = tinytools_examples::models::minilm_dir();
    if dir.join("model.safetensors").exists() {
        return Some(dir);
    }
    assert!(!tinytools_examples::models::models_required(), "{} is missing: run .ci/models", dir.display());
    eprintln!("skipped: {} is not installed (run .ci/models)", dir.display());
    None
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_binarys_embedding_model_ranks_by_meaning() {
    let Some(model) = minilm() else { return };
    let dir = temp_dir("ranker-binary");
    write_config(&dir, json!({"fixture": fixture(json!({}), json!({}))}));
    // Words BM25 cannot match to `calendar_free_slots` ("free", "slots", "busy" appear in none).
    let query = "when could Ana and Bo both get together for half an hour";
    let mut answers = Vec::new();
    for embedding in [false, true] {
        let mut command = tokio::process::Command::new(GATEWAY);
        command.arg("--config").arg(dir.join("config.json")).arg("--cache-dir").arg(dir.join("cache"));
        if embedding {
            command.arg("--embedding-model").arg(&model);
        }
        let client = ().serve(TokioChildProcess::new(command).unwrap()).await.expect("handshake with the binary");
        answers.push(search(&client, query).await);
        client.cancel().await.unwrap();
    }
    assert_ne!(first_match(&answers[0]), "fixture__calendar_free_slots", "BM25: {}", answers[0]);
    assert_eq!(first_match(&answers[1]), "fixture__calendar_free_slots", "{}", answers[1]);
    assert_ne!(answers[0], answers[1], "the embedding ranker changed the answer");
}

/// One launch of the binary with `--embedding-model`: the first match for `query`, and stderr.
async fn search_once(dir: &std::path::Path, model: &std::path::Path, query: &str) -> (String, String) {
    let mut command = tokio::process::Command::new(GATEWAY);
    command.arg("--config").arg(dir.join("config.json")).arg("--cache-dir").arg(dir.join("cache"));
    command.arg("--embedding-model").arg(model);
    let (transport, stderr) =
        TokioChildProcess::builder(command).stderr(std::process::Stdio::piped()).spawn().expect("start the binary");
    let client = ().serve(transport).await.expect("handshake with the binary");
    let first = first_match(&search(&client, query).await).to_owned();
    client.cancel().await.unwrap();
    let mut log = String::new();
    if let Some(mut stderr) = stderr {
        tokio::io::AsyncReadExt::read_to_string(&mut stderr, &mut log).await.ok();
    }
    (first, log)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_binary_keeps_the_tools_vectors_in_its_cache_and_replaces_a_damaged_file() {
    let Some(model) = minilm() else { return };
    let dir = temp_dir("ranker-vectors");
    write_config(&dir, json!({"fixture": fixture(json!({}), json!({}))}));
    let query = "when could Ana and Bo both get together for half an hour";
    let file = dir.join("cache").join("vectors").join(format!("{}.vec", model.file_name().unwrap().to_string_lossy()));

    let (first, _) = search_once(&dir, &model, query).await;
    assert_eq!(first, "fixture__calendar_free_slots");
    let written = std::fs::metadata(&file).expect("the first search wrote the vectors").modified().unwrap();
    assert!(std::fs::read(&file).unwrap().starts_with(b"TTVEC"));

    // A restart over the same tools loads them: the same answer, and nothing to write.
    let (again, log) = search_once(&dir, &model, query).await;
    assert_eq!(again, "fixture__calendar_free_slots", "{log}");
    assert_eq!(std::fs::metadata(&file).unwrap().modified().unwrap(), written, "not written again: {log}");

    // A damaged file is not trusted: said once on stderr, the catalogue embedded afresh, the
    // file replaced.
    std::fs::write(&file, b"TTVEC and then nothing that makes sense").unwrap();
    let (replaced, log) = search_once(&dir, &model, query).await;
    assert_eq!(replaced, "fixture__calendar_free_slots", "{log}");
    assert_eq!(log.matches("saved tool vectors ignored").count(), 1, "{log}");
    assert!(std::fs::read(&file).unwrap().len() > 1_000, "replaced by a whole file");
}

#[test]
fn a_missing_embedding_model_is_refused_at_startup_naming_the_directory() {
    let dir = temp_dir("ranker-missing");
    write_config(&dir, json!({"fixture": fixture(json!({}), json!({}))}));
    let output = std::process::Command::new(GATEWAY)
        .arg("--config")
        .arg(dir.join("config.json"))
        .arg("--embedding-model")
        .arg(dir.join("no-such-model"))
        .stdin(std::process::Stdio::null())
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(2));
    let message = String::from_utf8_lossy(&output.stderr);
    assert!(message.contains("--embedding-model") && message.contains("no-such-model"), "{message}");
}
