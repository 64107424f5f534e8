//! The typed-output suite ([`tinytools_bench::typed`]) against a live OpenAI-compatible model:
//! how often the first answer validates, how often one does within the retries, and how often
//! the value is right, on the dev two thirds and the held-out third.
//!
//! ```text
//! TINYTOOLS_LLM_SIZE=1.5b ../shared/live/local-model.sh start
//! cargo run --release -p tinytools-bench --bin typed_output -- --model qwen2.5-coder-1.5b --temperature 0 --json
//! ```
//!
//! Options: `--base-url URL` (default `http://127.0.0.1:$TINYTOOLS_LLM_PORT/v1`, port 8091),
//! `--model NAME`, `--temperature X`, `--retries N` (default 2, `RunPolicy::output_retries`),
//! `--split dev|held-out|all` (default all), `--lanes N` (default 2), `--structured-output`
//! (send the schema natively, `response_format`, instead of asking in words), `--json`.

use std::sync::Arc;
use std::time::{Duration, Instant};

use futures_util::stream::{self, StreamExt};
use serde_json::json;
use tinytools::model::ChatModel;
use tinytools::providers::{HttpOptions, OpenAiCompatible};
use tinytools_bench::cli::{self, whole_number};
use tinytools_bench::typed::{self, Outcome};

struct Options {
    base_url: String,
    model: String,
    temperature: Option<f32>,
    retries: usize,
    split: String,
    lanes: usize,
    structured_output: bool,
    json: bool,
}

fn parse(args: impl Iterator<Item = String>) -> Result<Options, String> {
    let port = std::env::var("TINYTOOLS_LLM_PORT").unwrap_or_else(|_| "8091".to_owned());
    let mut options = Options {
        base_url: format!("http://127.0.0.1:{port}/v1"),
        model: "qwen2.5-coder-1.5b".to_owned(),
        temperature: None,
        retries: 2,
        split: "all".to_owned(),
        lanes: 2,
        structured_output: false,
        json: false,
    };
    let mut args = args.peekable();
    while let Some(arg) = args.next() {
        let mut value = || args.next().ok_or_else(|| format!("{arg} needs a value"));
        match arg.as_str() {
            "--base-url" => options.base_url = value()?,
            "--model" => options.model = value()?,
            "--temperature" => {
                options.temperature = Some(value()?.parse().map_err(|_| "--temperature takes a number".to_owned())?);
            }
            "--retries" => options.retries = whole_number("--retries", &value()?)?,
            "--lanes" => options.lanes = whole_number("--lanes", &value()?)?.max(1),
            "--split" => {
                options.split = value()?;
                if !["dev", "held-out", "all"].contains(&options.split.as_str()) {
                    return Err("--split is dev, held-out or all".to_owned());
                }
            }
            "--structured-output" => options.structured_output = true,
            "--json" => options.json = true,
            other => return Err(format!("unknown option {other}")),
        }
    }
    Ok(options)
}

fn main() {
    cli::main("typed_output", parse, run);
}

async fn run(options: Options) -> Result<(), String> {
    let http = HttpOptions::local().with_timeout(Duration::from_secs(300));
    let client = OpenAiCompatible::new(&options.base_url, &options.model, http).map_err(|e| e.to_string())?;
    let client = match options.temperature {
        Some(temperature) => client.with_temperature(temperature),
        None => client,
    };
    let profile = OpenAiCompatible::profile_for(&options.model).with_structured_output(options.structured_output);
    let model: Arc<dyn ChatModel> = Arc::new(client.with_profile(profile));
    let tasks: Vec<(usize, typed::Task)> = typed::tasks()
        .into_iter()
        .enumerate()
        .filter(|(index, task)| match options.split.as_str() {
            "dev" => !task.held_out(*index),
            "held-out" => task.held_out(*index),
            _ => true,
        })
        .collect();
    let started = Instant::now();
    let outcomes: Vec<Outcome> = stream::iter(tasks.iter())
        .map(|(index, task)| typed::run(task, *index, Arc::clone(&model), options.retries))
        .buffered(options.lanes)
        .collect()
        .await;
    let wall_s = started.elapsed().as_secs_f64();
    let summary = |held_out: bool| {
        let part: Vec<&Outcome> = outcomes.iter().filter(|o| o.held_out == held_out).collect();
        let count = |keep: fn(&Outcome) -> bool| part.iter().filter(|o| keep(o)).count();
        json!({"tasks": part.len(), "first_valid": count(|o| o.first_valid), "valid": count(|o| o.valid),
               "correct": count(|o| o.correct), "requests": part.iter().map(|o| o.requests).sum::<usize>()})
    };
    let report = json!({
        "model": options.model, "base_url": options.base_url, "temperature": options.temperature,
        "retries": options.retries, "structured_output": options.structured_output, "wall_s": wall_s,
        "dev": summary(false), "held_out": summary(true), "tasks": outcomes,
    });
    if options.json {
        println!("{report:#}");
    } else {
        for outcome in &outcomes {
            println!(
                "{:<10} {} first_valid={} valid={} correct={} requests={}",
                outcome.id,
                if outcome.held_out { "held-out" } else { "dev     " },
                outcome.first_valid,
                outcome.valid,
                outcome.correct,
                outcome.requests
            );
        }
        println!("dev: {}\nheld-out: {}\nwall: {wall_s:.0} s", report["dev"], report["held_out"]);
    }
    Ok(())
}
