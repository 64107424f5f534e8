//! A model provider replayed from 127.0.0.1: every request is recorded (path, headers, JSON
//! body) and answered by the host's function, with a JSON body or a server-sent event stream
//! written event by event. One request per connection (`connection: close`).

use std::sync::{Arc, Mutex};
use std::time::Duration;

use serde_json::Value;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};

/// One request the server received.
#[derive(Clone, Debug, PartialEq)]
pub struct Recorded {
    /// The request's path, such as `/v1/messages`.
    pub path: String,
    /// Its headers, names lower-case.
    pub headers: Vec<(String, String)>,
    /// Its JSON body (`null` when it was not JSON).
    pub body: Value,
}

impl Recorded {
    /// The value of a header, by lower-case name.
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers.iter().find(|(known, _)| known == name).map(|(_, value)| value.as_str())
    }
}

/// How the server answers one request.
#[derive(Clone, Debug, PartialEq)]
pub enum Reply {
    /// `200` with this JSON body.
    Json(Value),
    /// An error status (such as `400`) with this JSON body, as the provider refuses a request.
    Error {
        /// The HTTP status.
        status: u16,
        /// The provider's error body.
        body: Value,
    },
    /// `200` with `text/event-stream`: each string one event (its `event:`/`data:` lines and
    /// blank line), written `pace` apart.
    Sse {
        /// The events, as SSE text.
        events: Vec<String>,
        /// The pause before each event.
        pace: Duration,
    },
}

/// What answers: the request (with those before it) to the reply.
pub type Responder = dyn Fn(&Recorded, &[Recorded]) -> Reply + Send + Sync;

/// A running replay server.
#[derive(Clone)]
pub struct Replay {
    /// `http://127.0.0.1:PORT`.
    pub base_url: String,
    requests: Arc<Mutex<Vec<Recorded>>>,
}

impl Replay {
    /// Every request received so far, in order.
    pub fn requests(&self) -> Vec<Recorded> {
        self.requests.lock().map(|requests| requests.clone()).unwrap_or_default()
    }
}

/// Starts a server on 127.0.0.1 (a free port) answering with `responder`, on the current
/// Tokio runtime, until the runtime ends.
///
/// # Errors
/// When no port can be bound.
pub async fn serve(responder: Arc<Responder>) -> std::io::Result<Replay> {
    let listener = TcpListener::bind("127.0.0.1:0").await?;
    let base_url = format!("http://{}", listener.local_addr()?);
    let requests: Arc<Mutex<Vec<Recorded>>> = Arc::default();
    let recorded = Arc::clone(&requests);
    tokio::spawn(async move {
        while let Ok((socket, _)) = listener.accept().await {
            tokio::spawn(answer(socket, Arc::clone(&responder), Arc::clone(&recorded)));
        }
    });
    Ok(Replay { base_url, requests })
}

async fn answer(mut socket: TcpStream, responder: Arc<Responder>, requests: Arc<Mutex<Vec<Recorded>>>) {
    let Some(request) = read_request(&mut socket).await else { return };
    let reply = {
        let Ok(mut seen) = requests.lock() else { return };
        let reply = responder(&request, &seen);
        seen.push(request);
        reply
    };
    match reply {
        Reply::Json(body) => write_json(&mut socket, "200 OK", &body).await,
        Reply::Error { status, body } => write_json(&mut socket, &format!("{status} Error"), &body).await,
        Reply::Sse { events, pace } => {
            let head = "HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\ncache-control: no-cache\r\nconnection: close\r\n\r\n";
            if socket.write_all(head.as_bytes()).await.is_err() {
                return;
            }
            for event in events {
                tokio::time::sleep(pace).await;
                if socket.write_all(event.as_bytes()).await.is_err() {
                    return;
                }
            }
        }
    }
    let _ = socket.shutdown().await;
}

async fn write_json(socket: &mut TcpStream, status: &str, body: &Value) {
    let body = body.to_string();
    let head = format!(
        "HTTP/1.1 {status}\r\ncontent-type: application/json\r\ncontent-length: {}\r\nconnection: close\r\n\r\n",
        body.len()
    );
    let _ = socket.write_all(format!("{head}{body}").as_bytes()).await;
}

/// One request: its head (path, headers) and its `content-length` JSON body.
async fn read_request(socket: &mut TcpStream) -> Option<Recorded> {
    let mut bytes = Vec::new();
    let mut buffer = [0_u8; 16 * 1024];
    loop {
        let read = socket.read(&mut buffer).await.ok().filter(|read| *read > 0)?;
        bytes.extend_from_slice(&buffer[..read]);
        let Some(end) = bytes.windows(4).position(|w| w == b"\r\n\r\n") else { continue };
        let head = String::from_utf8_lossy(&bytes[..end]).into_owned();
        let mut lines = head.lines();
        let path = lines.next()?.split_whitespace().nth(1)?.to_owned();
        let headers: Vec<(String, String)> = lines
            .filter_map(|line| line.split_once(':'))
            .map(|(name, value)| (name.trim().to_ascii_lowercase(), value.trim().to_owned()))
            .collect();
        let length = headers.iter().find(|(name, _)| name == "content-length").and_then(|(_, v)| v.parse().ok());
        let length: usize = length.unwrap_or(0);
        if bytes.len() >= end + 4 + length {
            let body = serde_json::from_slice(&bytes[end + 4..end + 4 + length]).unwrap_or(Value::Null);
            return Some(Recorded { path, headers, body });
        }
    }
}
