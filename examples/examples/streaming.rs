//! A streamed run: the model's text printed as it is written, the run's events as they happen,
//! against an OpenAI-compatible server — by default the local model of
//! `../shared/live/local-model.sh start` on `http://127.0.0.1:8091/v1`.
//!
//! ```text
//! cargo run -p tinytools-examples --features providers --example streaming                  # the local model
//! cargo run -p tinytools-examples --features providers --example streaming -- --base-url http://127.0.0.1:8080/v1 --model qwen
//! cargo run -p tinytools-examples --features providers --example streaming -- --replay      # no model: a replayed stream
//! cargo run -p tinytools-examples --features providers --example streaming -- --dialect native  # calls written as text read at the turn's end
//! ```
//!
//! `TINYTOOLS_BASE_URL` and `TINYTOOLS_MODEL` stand in for the flags. `--replay` serves recorded
//! llama-server streams from 127.0.0.1 (a call of `stock_quote`, then an answer in small
//! pieces that quotes the tool's result), so it runs anywhere, CI included: the client,
//! the SSE parsing, the loop and the tools are real; only the model's words are replayed.

use std::io::Write;
use std::sync::Arc;
use std::time::{Duration, Instant};

use tinytools::dialect::Dialect;
use tinytools::model::Message;
use tinytools::providers::OpenAiCompatible;
use tinytools::run::{Agent, RunEvent, RunStreamItem};
use tinytools_examples::catalogue;
use tinytools_examples::live::{self, SYSTEM_PROMPT, TASK};

/// The command line.
struct Options {
    base_url: String,
    model: String,
    replay: bool,
    question: String,
    dialect: Dialect,
}

fn options() -> Result<Options, String> {
    let env = |name: &str, default: &str| std::env::var(name).unwrap_or_else(|_| default.to_owned());
    let mut options = Options {
        base_url: env("TINYTOOLS_BASE_URL", "http://127.0.0.1:8091/v1"),
        model: env("TINYTOOLS_MODEL", "local"),
        replay: false,
        question: TASK.to_owned(),
        dialect: Dialect::Auto,
    };
    let mut args = std::env::args().skip(1);
    while let Some(arg) = args.next() {
        let mut value = || args.next().ok_or_else(|| format!("{arg} needs a value"));
        match arg.as_str() {
            "--base-url" => options.base_url = value()?,
            "--model" => options.model = value()?,
            "--question" => options.question = value()?,
            "--replay" => options.replay = true,
            "--dialect" => options.dialect = live::dialect(&value()?)?,
            other => {
                return Err(format!(
                    "unknown argument {other}: use --base-url, --model, --question, --dialect or --replay"
                ));
            }
        }
    }
    Ok(options)
}

#[tokio::main(flavor = "current_thread")]
async fn main() {
    if let Err(message) = run().await {
        eprintln!("streaming: {message}");
        std::process::exit(1);
    }
}

async fn run() -> Result<(), String> {
    let mut options = options()?;
    if options.replay {
        options.base_url = replay::serve().await.map_err(|e| format!("the replay server did not start: {e}"))?;
        eprintln!("REPLAY — the model's words come from recorded llama-server streams on {}", options.base_url);
    }
    let client = OpenAiCompatible::local(&options.base_url, &options.model)
        .map_err(|e| e.to_string())?
        .with_temperature(0.0)
        .with_max_tokens(512);
    // The dialect reads calls a model writes as text (a small local model often does) at the
    // end of each turn; its text still streams.
    let agent = Agent::builder(options.dialect.wrap(Arc::new(client)))
        .instructions(SYSTEM_PROMPT)
        .registry(catalogue::registry())
        .build()
        .map_err(|e| e.to_string())?;
    let started = Instant::now();
    let mut first_text: Option<Duration> = None;
    let mut stream = agent.stream(vec![Message::user(&options.question)]);
    while let Some(item) = stream.next().await {
        match item {
            RunStreamItem::TextDelta { text, .. } => {
                first_text.get_or_insert(started.elapsed());
                print!("{text}");
                let _ = std::io::stdout().flush();
            }
            RunStreamItem::ToolCallStarted { name, .. } => eprintln!("\n[the model is calling {name}]"),
            RunStreamItem::Event(event) => report(&event, started),
            _ => {}
        }
    }
    let outcome = stream.finish().await.map_err(|e| format!("the run failed: {e}"))?;
    let first = first_text.map_or_else(|| "no text".to_owned(), |at| format!("first text at {} ms", at.as_millis()));
    println!();
    eprintln!(
        "[{:?} after {} model calls; {first}, the run took {} ms; {} prompt + {} completion tokens]",
        outcome.stop,
        outcome.turns,
        started.elapsed().as_millis(),
        outcome.usage.prompt_tokens,
        outcome.usage.completion_tokens
    );
    Ok(())
}

/// The events a reader of the answer cares about, on stderr.
fn report(event: &RunEvent, started: Instant) {
    let at = started.elapsed().as_millis();
    match event {
        RunEvent::KeywordsWritten { error: None, .. } => {
            eprintln!("[{at} ms: search keywords written for the message]")
        }
        RunEvent::KeywordsWritten { error: Some(error), .. } => eprintln!("[{at} ms: no search keywords: {error}]"),
        RunEvent::ToolsPromoted { names, .. } => eprintln!("[{at} ms: promoted {}]", names.join(", ")),
        RunEvent::ModelCalled { turn, usage, .. } => {
            let tokens =
                usage.map_or_else(String::new, |u| format!(", {} + {} tokens", u.prompt_tokens, u.completion_tokens));
            eprintln!("\n[{at} ms: model call {turn} done{tokens}]");
        }
        RunEvent::ToolCompleted { tool_name, is_error, .. } => {
            eprintln!("[{at} ms: {tool_name} {}]", if *is_error { "refused" } else { "answered" });
        }
        RunEvent::ToolFailed { tool_name, error, .. } => eprintln!("[{at} ms: {tool_name} failed: {error}]"),
        RunEvent::ToolRejected { reason, .. } => eprintln!("[{at} ms: a call was rejected: {reason}]"),
        _ => {}
    }
}

/// A local server that replays llama-server's `/v1/chat/completions` streams (the chunk shapes
/// `llama-server` writes: `chat.completion.chunk`s, `usage` and `timings` on the last, then
/// `data: [DONE]`), a chunk every 40 ms; a request that does not ask for a stream (the run's
/// search-keyword request) gets a whole `chat.completion` with one line of keywords.
mod replay {
    use std::time::Duration;

    use serde_json::{Value, json};
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    use tokio::net::{TcpListener, TcpStream};

    /// Starts the server; its base URL.
    pub(super) async fn serve() -> std::io::Result<String> {
        let listener = TcpListener::bind("127.0.0.1:0").await?;
        let address = listener.local_addr()?;
        tokio::spawn(async move {
            while let Ok((socket, _)) = listener.accept().await {
                tokio::spawn(answer(socket));
            }
        });
        Ok(format!("http://{address}/v1"))
    }

    async fn answer(mut socket: TcpStream) {
        let request = read_request(&mut socket).await;
        if request["stream"] != json!(true) {
            let message = json!({"role": "assistant", "content": "stock price quote"});
            let body = json!({"choices": [{"finish_reason": "stop", "index": 0, "message": message}],
                "id": "chatcmpl-replay", "model": "qwen2.5-coder-1.5b", "object": "chat.completion",
                "usage": {"completion_tokens": 4, "prompt_tokens": 60, "total_tokens": 64}})
            .to_string();
            let head = format!(
                "HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: {}\r\nconnection: close\r\n\r\n",
                body.len()
            );
            let _ = socket.write_all(format!("{head}{body}").as_bytes()).await;
            return;
        }
        let head = "HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\ncache-control: no-cache\r\nconnection: close\r\n\r\n";
        if socket.write_all(head.as_bytes()).await.is_err() {
            return;
        }
        for chunk in chunks(&request) {
            tokio::time::sleep(Duration::from_millis(40)).await;
            if socket.write_all(format!("data: {chunk}\n\n").as_bytes()).await.is_err() {
                return;
            }
        }
        let _ = socket.write_all(b"data: [DONE]\n\n").await;
    }

    /// The turn's chunks: a `stock_quote` call until a tool has answered, then the answer,
    /// quoting the price the tool returned.
    fn chunks(request: &Value) -> Vec<Value> {
        let messages = request["messages"].as_array().cloned().unwrap_or_default();
        let quote = messages.iter().rev().find(|m| m["role"] == "tool").map(|m| m["content"].clone());
        let chunk = |delta: Value, finish: Value| {
            json!({"choices": [{"finish_reason": finish, "index": 0, "delta": delta}], "created": 1_754_523_863,
                   "id": "chatcmpl-replay", "model": "qwen2.5-coder-1.5b", "object": "chat.completion.chunk"})
        };
        let mut chunks = vec![chunk(json!({"role": "assistant", "content": null}), Value::Null)];
        let finish = match quote {
            None => {
                let call = json!({"index": 0, "id": "replay_call_0", "type": "function", "function": {"name": "stock_quote", "arguments": "{\"symbol\":"}});
                chunks.push(chunk(json!({"tool_calls": [call]}), Value::Null));
                let rest = json!({"index": 0, "function": {"arguments": " \"ACME\"}"}});
                chunks.push(chunk(json!({"tool_calls": [rest]}), Value::Null));
                "tool_calls"
            }
            Some(content) => {
                let result: Value = serde_json::from_str(content.as_str().unwrap_or_default()).unwrap_or(Value::Null);
                let price =
                    result["price"].as_f64().map_or_else(|| "its latest price".to_owned(), |p| format!("${p:.2}"));
                let text = format!("ACME is trading at {price} right now, according to the latest quote.");
                let words: Vec<&str> = text.split_inclusive(' ').collect();
                chunks.extend(words.into_iter().map(|word| chunk(json!({"content": word}), Value::Null)));
                "stop"
            }
        };
        let mut last = chunk(json!({}), json!(finish));
        last["usage"] =
            json!({"completion_tokens": chunks.len(), "prompt_tokens": 900, "total_tokens": 900 + chunks.len()});
        last["timings"] = json!({"prompt_n": 900, "predicted_n": chunks.len()});
        chunks.push(last);
        chunks
    }

    /// One request's JSON body (after its head, `content-length` bytes).
    async fn read_request(socket: &mut TcpStream) -> Value {
        let mut bytes = Vec::new();
        let mut buffer = [0_u8; 16 * 1024];
        while let Ok(read) = socket.read(&mut buffer).await {
            if read == 0 {
                break;
            }
            bytes.extend_from_slice(&buffer[..read]);
            let Some(end) = bytes.windows(4).position(|w| w == b"\r\n\r\n") else { continue };
            let head = String::from_utf8_lossy(&bytes[..end]).to_ascii_lowercase();
            let length = head
                .lines()
                .find_map(|line| line.strip_prefix("content-length:"))
                .and_then(|value| value.trim().parse::<usize>().ok())
                .unwrap_or(0);
            if bytes.len() >= end + 4 + length {
                return serde_json::from_slice(&bytes[end + 4..end + 4 + length]).unwrap_or(Value::Null);
            }
        }
        Value::Null
    }
}
