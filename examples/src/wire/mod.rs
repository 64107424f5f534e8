//! Model providers replayed from 127.0.0.1, for examples that need no key: a recording server
//! ([`serve`]), the documented answer shapes of Anthropic ([`anthropic`]) and the Responses API
//! ([`responses`]), a scripted task that discovers three deferred tools ([`anthropic_script`],
//! [`responses_script`]) in each [`DiscoveryMode`], and the prompt prefix a provider caches
//! ([`prefix`]).
//!
//! The scripts play the model's side of one task — look up ACME's price, convert it to euros,
//! email it — finding each tool the way the mode offers: by calling `tool_search` (the bridge,
//! or a client-run native search), or by the provider's own search, reported in the same
//! answer as the call. Everything else is real: the clients, the wire formats, the run's loop,
//! its gates and the catalogue's tools.

pub mod anthropic;
pub mod prefix;
pub mod responses;
mod server;

use std::sync::Arc;
use std::time::Duration;

use serde_json::{Value, json};
pub use server::{Recorded, Replay, Reply, Responder, serve};
use tinytools::DiscoveryMode;

/// The task the scripts play.
pub const TASK: &str = "What is ACME trading at, in euros? Email the figure to ana@example.com.";

/// One tool the task discovers: what the model searches for, then how it calls it.
#[derive(Clone, Debug)]
pub struct Step {
    /// The tool.
    pub tool: &'static str,
    /// The model's search words.
    pub query: &'static str,
    /// The call's arguments.
    pub arguments: Value,
}

/// The task's three discoveries, in order.
pub fn steps() -> Vec<Step> {
    vec![
        Step { tool: "stock_quote", query: "stock price of a ticker", arguments: json!({"symbol": "ACME"}) },
        Step {
            tool: "currency_convert",
            query: "convert money to another currency",
            arguments: json!({"amount": 512.34, "from": "USD", "to": "EUR"}),
        },
        Step {
            tool: "gmail_send",
            query: "send an email",
            arguments: json!({"to": ["ana@example.com"], "subject": "ACME in euros", "body": "ACME trades at 512.34 USD."}),
        },
    ]
}

/// The model's last words.
pub const ANSWER: &str = "ACME trades at 512.34 USD, about 470 EUR; I emailed the figure to ana@example.com.";

/// What the model does at its `turn` (0-based) of the task in `mode`.
enum Move {
    /// Calls `tool_search` (the bridge's, or the client-run native one).
    Search(Step),
    /// The provider searches, and the model calls the tool it found, in one answer.
    SearchAndCall(Step),
    /// Calls the tool.
    Call(Step),
    /// Answers.
    Answer,
}

fn script(mode: DiscoveryMode, turn: usize) -> Move {
    let steps = steps();
    let hosted = matches!(mode, DiscoveryMode::ProviderNative(tinytools::model::NativeSearch::Provider));
    let (step, phase) = if hosted { (turn, 1) } else { (turn / 2, turn % 2) };
    match steps.get(step).cloned() {
        None => Move::Answer,
        Some(step) if hosted => Move::SearchAndCall(step),
        Some(step) if phase == 0 => Move::Search(step),
        Some(step) => Move::Call(step),
    }
}

/// Whether the model's answer at `turn` (0-based) holds a search, in `mode`: the requests
/// after it are the ones a discovery may change.
pub fn searched_at(mode: DiscoveryMode, turn: usize) -> bool {
    matches!(script(mode, turn), Move::Search(_) | Move::SearchAndCall(_))
}

/// Whether a recorded request is a run's search-keyword request, not a turn: no tools, and
/// the 32-token answer cap the bundled clients give it (`RequestPurpose::Keywords`).
pub fn is_keywords(request: &Recorded) -> bool {
    let body = &request.body;
    body.get("tools").is_none() && (body["max_tokens"] == 32 || body["max_output_tokens"] == 32)
}

/// The line the scripted model writes for a keyword request.
const KEYWORDS: &str = "stock price currency conversion email";

/// Which turn of the task a request is: the turns before it, keyword requests not counted.
fn turn_of(before: &[Recorded]) -> usize {
    before.iter().filter(|request| !is_keywords(request)).count()
}

/// How replies are sent: whole, or as event streams written `pace` apart.
fn reply(body: Value, stream: Option<Duration>, events: fn(&Value) -> Vec<String>) -> Reply {
    match stream {
        Some(pace) => Reply::Sse { events: events(&body), pace },
        None => Reply::Json(body),
    }
}

/// The task as Anthropic's model plays it in `mode`; answers streamed when `stream` gives a
/// pace. Usage reports a prompt cache that holds the prefix.
pub fn anthropic_script(mode: DiscoveryMode, stream: Option<Duration>) -> Arc<Responder> {
    Arc::new(move |request: &Recorded, before: &[Recorded]| {
        let turn = turn_of(before);
        let id = |kind: &str| format!("{kind}_{turn:02}");
        if is_keywords(request) {
            let usage = anthropic::usage(30, 6, 0, 0);
            return reply(
                anthropic::message(&id("msg_kw"), vec![anthropic::text(KEYWORDS)], usage),
                None,
                anthropic::events,
            );
        }
        let content = match script(mode, turn) {
            Move::Search(step) => {
                vec![anthropic::tool_use(&id("toolu"), "tool_search", json!({"query": step.query}))]
            }
            Move::SearchAndCall(step) => {
                let mut blocks = vec![anthropic::text(&format!("Let me find a tool for: {}.", step.query))];
                blocks.extend(anthropic::tool_search(&id("srvtoolu"), step.query, &[step.tool]));
                blocks.push(anthropic::tool_use(&id("toolu"), step.tool, step.arguments));
                blocks
            }
            Move::Call(step) => vec![anthropic::tool_use(&id("toolu"), step.tool, step.arguments)],
            Move::Answer => vec![anthropic::text(ANSWER)],
        };
        let usage = if turn == 0 { anthropic::usage(40, 60, 0, 1_800) } else { anthropic::usage(120, 60, 1_800, 0) };
        reply(anthropic::message(&id("msg"), content, usage), stream, anthropic::events)
    })
}

/// The task as an OpenAI model on the Responses API plays it in `mode`; answers streamed when
/// `stream` gives a pace.
pub fn responses_script(mode: DiscoveryMode, stream: Option<Duration>) -> Arc<Responder> {
    Arc::new(move |request: &Recorded, before: &[Recorded]| {
        let turn = turn_of(before);
        let id = |kind: &str| format!("{kind}_{turn:02}");
        if is_keywords(request) {
            let output = vec![responses::message(&id("msg_kw"), KEYWORDS)];
            return reply(
                responses::response(&id("resp_kw"), output, responses::usage(30, 0, 6)),
                None,
                responses::events,
            );
        }
        let body = &request.body;
        let call = |step: &Step| {
            let namespace = responses::namespace_of(body, step.tool);
            responses::function_call(&id("call"), step.tool, namespace.as_deref(), &step.arguments)
        };
        let output = match script(mode, turn) {
            Move::Search(step) if matches!(mode, DiscoveryMode::Bridge) => {
                vec![responses::function_call(&id("call"), "tool_search", None, &json!({"query": step.query}))]
            }
            Move::Search(step) => vec![responses::client_search(&id("call"), step.query)],
            Move::SearchAndCall(step) => {
                let mut items = responses::hosted_search(body, &[step.tool]).to_vec();
                items.push(call(&step));
                items
            }
            Move::Call(step) => vec![call(&step)],
            Move::Answer => vec![responses::message(&id("msg"), ANSWER)],
        };
        let usage = if turn == 0 { responses::usage(1_900, 0, 60) } else { responses::usage(2_000, 1_792, 60) };
        reply(responses::response(&id("resp"), output, usage), stream, responses::events)
    })
}
