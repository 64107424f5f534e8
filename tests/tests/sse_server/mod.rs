//! A server on 127.0.0.1 that streams scripted server-sent events the way the providers do
//! (`200`, `text/event-stream`, a chunked body), one script per connection, and can cut a
//! connection mid-body or drip events until the client goes away. What the streaming suites
//! share; no test touches the network.

#![allow(dead_code, unreachable_pub)]

use std::time::{Duration, Instant};

use serde_json::Value;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};
use tokio::task::JoinHandle;

/// One step of a connection's script.
#[derive(Clone, Debug)]
pub enum Step {
    /// Writes these bytes as one chunk of the body.
    Send(String),
    /// Waits.
    Pause(Duration),
    /// Drops the connection without ending the body (no terminating chunk).
    Cut,
    /// Writes this chunk every `every` until a write fails (the client went away) or `for_at_most` passed.
    Drip { chunk: String, every: Duration, for_at_most: Duration },
}

/// How one connection went.
#[derive(Debug)]
pub struct Served {
    /// The request's JSON body.
    pub request: Value,
    /// For a drip: how long after it began the client went away (`None`: it never did).
    pub client_gone_after: Option<Duration>,
}

/// Every event of `events` as SSE text: `event:` (when named) and `data:` lines, then a blank line.
pub fn sse(events: &[(&str, &str)]) -> String {
    events
        .iter()
        .map(
            |(name, data)| {
                if name.is_empty() { format!("data: {data}\n\n") } else { format!("event: {name}\ndata: {data}\n\n") }
            },
        )
        .collect()
}

/// Serves one connection per script, in order; the handle answers how each went.
pub async fn serve(scripts: Vec<Vec<Step>>) -> (String, JoinHandle<Vec<Served>>) {
    let listener = TcpListener::bind("127.0.0.1:0").await.expect("binds");
    let address = listener.local_addr().expect("address");
    let handle = tokio::spawn(async move {
        let mut served = Vec::new();
        for script in scripts {
            let (socket, _) = listener.accept().await.expect("accepts");
            served.push(play(socket, script).await);
        }
        served
    });
    (format!("http://{address}"), handle)
}

async fn play(mut socket: TcpStream, script: Vec<Step>) -> Served {
    let request = read_request(&mut socket).await;
    let head = "HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\ncache-control: no-cache\r\ntransfer-encoding: chunked\r\n\r\n";
    let mut served = Served { request, client_gone_after: None };
    if socket.write_all(head.as_bytes()).await.is_err() {
        return served;
    }
    for step in script {
        match step {
            Step::Send(text) => {
                if write_chunk(&mut socket, &text).await.is_err() {
                    return served;
                }
            }
            Step::Pause(pause) => tokio::time::sleep(pause).await,
            Step::Cut => return served,
            Step::Drip { chunk, every, for_at_most } => {
                let started = Instant::now();
                while started.elapsed() < for_at_most {
                    tokio::time::sleep(every).await;
                    if write_chunk(&mut socket, &chunk).await.is_err() {
                        served.client_gone_after = Some(started.elapsed());
                        return served;
                    }
                }
            }
        }
    }
    let _ = socket.write_all(b"0\r\n\r\n").await;
    let _ = socket.shutdown().await;
    served
}

async fn write_chunk(socket: &mut TcpStream, text: &str) -> std::io::Result<()> {
    socket.write_all(format!("{:x}\r\n{text}\r\n", text.len()).as_bytes()).await?;
    socket.flush().await
}

/// Reads one request's head and its `content-length` body.
async fn read_request(socket: &mut TcpStream) -> Value {
    let mut bytes = Vec::new();
    let mut buffer = [0_u8; 16 * 1024];
    loop {
        let read = socket.read(&mut buffer).await.unwrap_or(0);
        if read == 0 {
            return Value::Null;
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
}
