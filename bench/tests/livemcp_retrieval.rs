//! `livemcp_retrieval` on a five-task fixture in LiveMCPBench's file layout, written here, so
//! the loader, the name matching and every figure are checked without the real set.

// The fixture's helpers unwrap like the tests they serve.
#![allow(clippy::unwrap_used)]

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};

use serde_json::{Value, json};
use tinytools::discovery::{DiscoveryBridge, ToolDiscoveryPolicy};
use tinytools_bench::livemcp::{self, TASKS_FILE, TOOLS_FILE, score};

/// Three servers; `read_file` is on two of them.
fn servers() -> Value {
    let tool = |name: &str, description: &str, parameter: Value| json!({"name": name, "description": description, "parameter": parameter});
    json!([
        {"server_name": "weather", "description_embedding": [0.1, 0.2], "tools": [
            tool("get_forecast", "Get the weather forecast for a city.", json!({"city": "(string) City name."})),
            tool("get_alerts", "List severe weather alerts for a region.", json!({"region": "(Optional, string) Region."})),
        ]},
        {"server_name": "files", "tools": [
            tool("read_file", "Read a text file from disk.", json!({"path": "(string) Where it is."})),
            tool("write_file", "Write text to a file on disk.", json!({"path": "(string) Where.", "text": "(string) What."})),
        ]},
        {"server_name": "stocks", "tools": [
            tool("get_stock_price", "Get the current stock price for a ticker symbol.", json!({"symbol": "(string) Ticker."})),
            tool("read_file", "Read a stored stock report file.", json!({})),
        ]},
    ])
}

/// Five tasks: found, found over two steps, a tool no server has, a task sharing no word
/// with any tool, and a gold name two servers share (no steps).
fn tasks() -> Value {
    let task = |id: &str, question: &str, steps: &str, tools: &str| {
        json!({"task_id": id, "Question": question, "answers": "", "category": "work",
               "Annotator Metadata": {"Steps": steps, "Number of steps": "1", "Tools": tools, "Number of tools": "1"}})
    };
    json!([
        task("a", "What is the weather forecast for Paris?", "1. find the forecast", "1. get_forecast"),
        task(
            "b",
            "Save the ACME stock price to a file.",
            "1. look up the stock price\n2. write the price into a file",
            "1. get_stock_price\n2. write_file"
        ),
        task("c", "Tell me a joke.", "1. tell it", "1. tell_joke"),
        task("d", "How are the markets doing today?", "1. check the market news", "1. get_stock_price"),
        task("e", "Read the file notes.txt", "", "1. read_file"),
    ])
}

fn fixture() -> PathBuf {
    static NEXT: AtomicUsize = AtomicUsize::new(0);
    let n = NEXT.fetch_add(1, Ordering::Relaxed);
    let dir = std::env::temp_dir().join(format!("tinytools-livemcp-{}-{n}", std::process::id()));
    for (file, value) in [(TOOLS_FILE, servers()), (TASKS_FILE, tasks())] {
        let path = dir.join(file);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, value.to_string()).unwrap();
    }
    dir
}

fn evaluate(dir: &Path) -> score::Evaluation {
    let data = livemcp::load(dir).unwrap();
    let bridge = DiscoveryBridge::new(&data.catalogue.registry, ToolDiscoveryPolicy::default());
    let runtime = tokio::runtime::Builder::new_current_thread().enable_time().build().unwrap();
    runtime.block_on(score::evaluate(&data, &bridge))
}

#[test]
fn the_fixture_loads_as_an_mcp_import_would_register_it() {
    let dir = fixture();
    let data = livemcp::load(&dir.join("baseline")).unwrap();
    let registered: Vec<&str> = data.catalogue.tools.iter().map(|t| t.registered.as_str()).collect();
    assert_eq!(
        registered,
        [
            "weather__get_forecast",
            "weather__get_alerts",
            "files__read_file",
            "files__write_file",
            "stocks__get_stock_price",
            "stocks__read_file"
        ]
    );
    assert_eq!((data.catalogue.servers, data.catalogue.count_named("read_file")), (3, 2));
    assert_eq!(data.tasks[1].steps, ["look up the stock price", "write the price into a file"]);
    assert_eq!(data.tasks[1].tools, ["get_stock_price", "write_file"]);
    assert!(data.tasks[1].aligned() && !data.tasks[4].aligned());
    let error = livemcp::load(&dir.join("nowhere")).err().unwrap();
    assert!(error.contains("holds no LiveMCPBench data"), "{error}");
    std::fs::remove_dir_all(dir).unwrap();
}

#[test]
fn recall_and_pre_promotion_on_the_fixture_are_exact() {
    let dir = fixture();
    let evaluation = evaluate(&dir);
    std::fs::remove_dir_all(dir).unwrap();

    let unmatched: Vec<(&str, &str)> =
        evaluation.unmatched.iter().map(|u| (u.task.as_str(), u.name.as_str())).collect();
    assert_eq!(unmatched, [("c", "tell_joke")]);
    assert_eq!((evaluation.gold_names, evaluation.ambiguous), (6, 1));
    // a, b and e find all their gold; d shares no word with any tool.
    assert_eq!(evaluation.task_level.len(), 4);
    let report = evaluation.to_json();
    assert_eq!(report["task_level"]["recall@5"], 0.75);
    assert_eq!(report["task_level"]["recall@10"], 0.75);
    // c's unmatched tool counts as missed: 3 of 5.
    assert_eq!(report["task_level_unmatched_as_missed"]["recall@5"], 0.6);
    // a's step, b's two, d's one; d's misses.
    assert_eq!(report["step_level"]["aligned"]["tasks"], 3);
    assert_eq!(report["step_level"]["aligned"]["steps"], 4);
    assert_eq!(report["step_level"]["aligned"]["scores"]["recall@5"], 0.75);
    assert_eq!(report["step_level"]["union"]["tasks"], 3);
    assert_eq!(report["step_level"]["union"]["recall@10"], 0.6667);
    // a's and b's chains are whole in their steps' top 10, d's is not.
    assert_eq!(report["step_level"]["chain"]["recall@10"], 0.6667);
    // d's step shares no word with its tool, and its chain has no other: unrelated, not mis-paired.
    assert_eq!(report["step_level"]["mispaired_steps"], json!([]));
    assert_eq!(report["step_level"]["unrelated_steps"], json!(["d#1"]));
    assert_eq!(report["step_level"]["aligned_without_mispaired"]["steps"], 4);
    // b's question promotes its three best hits, get_stock_price and both read_files: its
    // write_file waits for the step that asks to write; d's question promotes nothing.
    let question = &report["pre_promotion"]["question"];
    assert_eq!((question["tasks"].as_u64(), question["messages"].as_u64()), (Some(4), Some(4)));
    assert_eq!(question["tasks_all_gold_loaded"], 0.5);
    assert_eq!(question["gold_loaded"], 0.6);
    let then_steps = &report["pre_promotion"]["question_then_steps"];
    assert_eq!(then_steps["messages"], 8);
    assert_eq!(then_steps["tasks_all_gold_loaded"], 0.75);
    assert_eq!(then_steps["gold_loaded"], 0.8);
    // 4 questions and 4 steps ranked for scores (c is ranked too, for the missed figure).
    assert_eq!(report["queries"], 9);
    assert!(evaluation.fallbacks.is_empty());
}

#[test]
fn the_binary_prints_the_figures_as_one_json_object() {
    let dir = fixture();
    let output = std::process::Command::new(env!("CARGO_BIN_EXE_livemcp_retrieval"))
        .args(["--data".as_ref(), dir.as_os_str(), "--json".as_ref()])
        .output()
        .unwrap();
    std::fs::remove_dir_all(dir).unwrap();
    assert!(output.status.success(), "{}", String::from_utf8_lossy(&output.stderr));
    let report: Value = serde_json::from_slice(&output.stdout).unwrap();
    assert_eq!((report["tools"].as_u64(), report["tasks"].as_u64()), (Some(6), Some(5)));
    assert_eq!(report["task_level"]["recall@5"], 0.75);
    assert_eq!(report["gold"]["unmatched"], 1);
    assert!(String::from_utf8_lossy(&output.stderr).contains("gold tool `tell_joke` is in no server's tool list"));

    let missing = std::process::Command::new(env!("CARGO_BIN_EXE_livemcp_retrieval"))
        .args(["--data", "/nonexistent/livemcpbench"])
        .output()
        .unwrap();
    assert_eq!(missing.status.code(), Some(2));
}
