//! Progress and cancellation through the gateway: a downstream tool's progress reaches the
//! client under the client's token, and the client's `notifications/cancelled` for a
//! forwarded call cancels the downstream request.

// Test code may unwrap and expect.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use std::sync::{Arc, Mutex};
use std::time::Duration;

use rmcp::model::{CallToolRequest, CallToolRequestParams, ClientRequest, ProgressNotificationParam, ServerResult};
use rmcp::service::{NotificationContext, PeerRequestOptions};
use rmcp::{ClientHandler, RoleClient};
use serde_json::json;

use common::*;

/// Records every progress notification the gateway sends.
#[derive(Clone, Default)]
struct Recorder(Arc<Mutex<Vec<ProgressNotificationParam>>>);

impl ClientHandler for Recorder {
    async fn on_progress(&self, params: ProgressNotificationParam, _context: NotificationContext<RoleClient>) {
        self.0.lock().unwrap().push(params);
    }
}

fn forwarded(name: &str, arguments: serde_json::Value) -> ClientRequest {
    let arguments = json!({"name": name, "arguments": arguments}).as_object().unwrap().clone();
    ClientRequest::CallToolRequest(CallToolRequest::new(
        CallToolRequestParams::new("call_tool").with_arguments(arguments),
    ))
}

/// Polls `check` every 20 ms for up to 10 s.
async fn eventually(mut check: impl FnMut() -> bool) -> bool {
    for _ in 0..500 {
        if check() {
            return true;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    false
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn downstream_progress_reaches_the_client_under_its_own_token() {
    let dir = temp_dir("progress");
    let config = write_config(&dir, json!({"fixture": fixture(json!({}), json!({}))}));
    let recorder = Recorder::default();
    let (client, gateway) = connect_with(&config, &dir.join("cache"), recorder.clone()).await;
    let steps = 5;
    let handle = client
        .peer()
        .send_request_with_option(
            forwarded("fixture__fixture_progress", json!({"steps": steps})),
            PeerRequestOptions::no_options(),
        )
        .await
        .unwrap();
    let token = handle.progress_token.clone();
    let ServerResult::CallToolResult(result) = handle.await_response().await.unwrap() else { panic!("a tool result") };
    assert_eq!(result.is_error, Some(false), "{}", text(&result));
    assert_eq!(text(&result), format!("{steps} steps"));
    let last = f64::from(steps);
    let got_last =
        eventually(|| recorder.0.lock().unwrap().iter().any(|p| (p.progress - last).abs() < f64::EPSILON)).await;
    let seen = recorder.0.lock().unwrap().clone();
    assert!(got_last, "the last step reaches the client: {seen:?}");
    for progress in &seen {
        assert_eq!(progress.progress_token, token, "the client's token, not the gateway's: {seen:?}");
        assert_eq!(progress.total, Some(last));
        assert!(progress.message.as_deref().is_some_and(|m| m.starts_with("step ")), "{seen:?}");
    }
    let mut values: Vec<u64> = seen.iter().map(|p| p.progress as u64).collect();
    values.sort_unstable();
    values.dedup();
    assert_eq!(values.len(), seen.len(), "no step is relayed twice: {seen:?}");
    // The call is over: its route is gone.
    let relay = gateway.supervisor().server("fixture").unwrap().relay().clone();
    assert_eq!(routes_after_drain(&relay).await, 0);
    client.cancel().await.unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_cancelled_call_is_cancelled_downstream_and_the_server_keeps_running() {
    let dir = temp_dir("cancel");
    let events = dir.join("events");
    let config = write_config(&dir, json!({"fixture": fixture(json!({"FIXTURE_EVENTS": events}), json!({}))}));
    let (client, gateway) = connect(&config, &dir.join("cache")).await;
    let server = gateway.supervisor().server("fixture").unwrap().clone();
    let handle = client
        .peer()
        .send_request_with_option(
            forwarded("fixture__fixture_sleep", json!({"secs": 120})),
            PeerRequestOptions::no_options(),
        )
        .await
        .unwrap();
    // Wait until the gateway has forwarded the call (its progress route is in place).
    let mut forwarded_now = false;
    for _ in 0..500 {
        if server.relay().routes().await == 1 {
            forwarded_now = true;
            break;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    assert!(forwarded_now, "the call reached the server");
    handle.cancel(Some("the user changed their mind".into())).await.unwrap();
    let cancelled =
        eventually(|| std::fs::read_to_string(&events).is_ok_and(|text| text.contains("cancelled 120"))).await;
    assert!(cancelled, "the fixture saw its request cancelled: {:?}", std::fs::read_to_string(&events));
    let next = call_tool(&client, "fixture__stock_quote", json!({"symbol": "ACME"})).await;
    assert_eq!(next.is_error, Some(false), "{}", text(&next));
    assert_eq!(server.starts(), 1, "a cancellation does not restart the server");
    client.cancel().await.unwrap();
}
