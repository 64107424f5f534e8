//! Fault injection: 100 runs over four fixture servers behind one gateway, each with its own
//! fault: `crashy` exits mid-call (or is killed between calls), `hangs` sleeps past its call timeout, `flaky` exits at start
//! (after a crash, while its marker file is missing), and `noisy` writes non-JSON-RPC bytes to
//! stdout (then answers, or never does). The four sequences run concurrently on one client.
//!
//! Each run checks that no request outlives its bound (the server's timeouts plus a margin for
//! a loaded machine: a hang is a failure, slowness is not measured), that the error result
//! names the server and says what happened, that no tool left `tools/list` or the catalogue,
//! and that the next call works (the server was restarted).

// Test code may unwrap and expect.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use std::collections::BTreeSet;
use std::path::Path;
use std::time::Duration;

use rmcp::model::{CallToolResult, Tool};
use serde_json::{Value, json};
use tinytools_gateway::Gateway;
use tinytools_gateway::supervisor::Stage;

use common::*;

const RUNS: usize = 100;
/// The call timeout of every server, in seconds (the hang and the silent garbage outlive it).
const CALL_TIMEOUT: Duration = Duration::from_secs(1);
/// The start timeout of every server.
const START_TIMEOUT: Duration = Duration::from_secs(5);
/// What a loaded 2-core machine may add to a bound before a request counts as hung.
const MARGIN: Duration = Duration::from_secs(5);

#[derive(Clone, Copy, Debug)]
enum Fault {
    Crash,
    Hang,
    ExitAtStart,
    Garbage,
}

impl Fault {
    fn server(self) -> &'static str {
        match self {
            Self::Crash => "crashy",
            Self::Hang => "hangs",
            Self::ExitAtStart => "flaky",
            Self::Garbage => "noisy",
        }
    }
}

struct Suite<'a> {
    client: &'a Client,
    gateway: &'a Gateway,
    listed: &'a [Tool],
    names: &'a BTreeSet<String>,
    marker: &'a Path,
    dir: &'a Path,
}

impl Suite<'_> {
    /// `call_tool`, failing the test when the answer takes longer than `bound`.
    async fn call(&self, name: &str, arguments: Value, bound: Duration) -> CallToolResult {
        let call = call_tool(self.client, name, arguments);
        match tokio::time::timeout(bound, call).await {
            Ok(result) => result,
            Err(_) => panic!("`{name}` was not answered within {bound:?}: a hung request"),
        }
    }

    fn starts(&self, server: &str) -> u64 {
        self.gateway.supervisor().server(server).unwrap().starts()
    }

    /// A call on a running server: the call timeout bounds it.
    fn running_bound() -> Duration {
        CALL_TIMEOUT + MARGIN
    }

    /// A call that may start the server first.
    fn starting_bound() -> Duration {
        START_TIMEOUT + CALL_TIMEOUT + MARGIN
    }

    fn failed(result: &CallToolResult, server: &str, says: &str, run: usize) -> String {
        let message = text(result);
        assert_eq!(result.is_error, Some(true), "run {run}: {message}");
        assert!(message.contains(&format!("`{server}` server")), "run {run}: the error names the server: {message}");
        assert!(message.contains(says), "run {run}: the error says `{says}`: {message}");
        message
    }

    /// A working call after the fault, which (re)starts the server when it is not running.
    async fn works(&self, server: &str, run: usize) {
        let name = format!("{server}__stock_quote");
        let result = self.call(&name, json!({"symbol": "ACME"}), Self::starting_bound()).await;
        assert_eq!(result.is_error, Some(false), "run {run}: the next call works: {}", text(&result));
        assert!(text(&result).contains("ACME"), "run {run}: {}", text(&result));
    }

    /// No tool was lost: the listing, the catalogue and a search are as before.
    async fn nothing_lost(&self, server: &str, run: usize) {
        let listed = tokio::time::timeout(Self::running_bound(), list(self.client)).await.expect("tools/list answers");
        assert_eq!(listed, self.listed, "run {run}: tools/list changed");
        let names: BTreeSet<String> = self.gateway.catalog().names().map(str::to_owned).collect();
        assert_eq!(&names, self.names, "run {run}: the catalogue changed");
        let query = json!({"query": format!("{server} fixture crash"), "limit": 10});
        let found = tokio::time::timeout(Self::running_bound(), call(self.client, "tool_search", query))
            .await
            .expect("tool_search answers");
        let crash = format!("{server}__fixture_crash");
        assert!(text(&found).contains(&crash), "run {run}: search finds `{crash}`: {}", text(&found));
    }

    async fn run(&self, fault: Fault, run: usize) {
        let server = fault.server();
        let before = self.starts(server);
        match fault {
            Fault::Crash if run % 8 >= 4 => {
                // Killed between calls: the gateway notices the exit, and the next call
                // restarts the server without an error.
                let pid = last_pid(&self.dir.join(format!("{server}.starts")));
                let killed = std::process::Command::new("kill").args(["-9", &pid.to_string()]).status().unwrap();
                assert!(killed.success(), "run {run}: kill {pid}");
                let downstream = self.gateway.supervisor().server(server).unwrap();
                let mut noticed = false;
                for _ in 0..250 {
                    if matches!(downstream.stage(), Stage::ManifestKnown) {
                        noticed = true;
                        break;
                    }
                    tokio::time::sleep(Duration::from_millis(20)).await;
                }
                assert!(noticed, "run {run}: the exit of an idle server is noticed: {:?}", downstream.stage());
                self.works(server, run).await;
                assert_eq!(self.starts(server), before + 1, "run {run}: restarted once");
            }
            Fault::Crash => {
                let crashed = self.call(&format!("{server}__fixture_crash"), json!({}), Self::starting_bound()).await;
                Self::failed(&crashed, server, "stopped answering", run);
                self.works(server, run).await;
                assert_eq!(self.starts(server), before + 1, "run {run}: restarted once");
            }
            Fault::Hang => {
                let args = json!({"secs": 600});
                let hung = self.call(&format!("{server}__fixture_sleep"), args, Self::running_bound()).await;
                Self::failed(&hung, server, "did not answer `fixture_sleep` within 1 s", run);
                self.works(server, run).await;
                assert_eq!(self.starts(server), before + 1, "run {run}: restarted once");
            }
            Fault::ExitAtStart => {
                std::fs::remove_file(self.marker).unwrap();
                let crashed = self.call(&format!("{server}__fixture_crash"), json!({}), Self::starting_bound()).await;
                Self::failed(&crashed, server, "stopped answering", run);
                let args = json!({"symbol": "ACME"});
                let refused = self.call(&format!("{server}__stock_quote"), args, Self::starting_bound()).await;
                Self::failed(&refused, server, "exited during the MCP handshake", run);
                std::fs::write(self.marker, "").unwrap();
                self.works(server, run).await;
                assert_eq!(self.starts(server), before + 2, "run {run}: one failed start, one good one");
            }
            Fault::Garbage if run % 8 < 4 => {
                let args = json!({"answer": true});
                let answered = self.call(&format!("{server}__fixture_garbage"), args, Self::running_bound()).await;
                assert_eq!(answered.is_error, Some(false), "run {run}: garbage is skipped: {}", text(&answered));
                assert_eq!(text(&answered), "answered after garbage", "run {run}");
                self.works(server, run).await;
                assert_eq!(self.starts(server), before, "run {run}: garbage alone restarts nothing");
            }
            Fault::Garbage => {
                let args = json!({"answer": false});
                let silent = self.call(&format!("{server}__fixture_garbage"), args, Self::running_bound()).await;
                Self::failed(&silent, server, "did not answer `fixture_garbage` within 1 s", run);
                self.works(server, run).await;
                assert_eq!(self.starts(server), before + 1, "run {run}: restarted once");
            }
        }
        self.nothing_lost(server, run).await;
    }
}

/// The process a starts file lists last.
fn last_pid(starts: &Path) -> u32 {
    let text = std::fs::read_to_string(starts).unwrap();
    text.lines().rev().find_map(|line| line.trim().parse().ok()).unwrap()
}

/// The processes a starts file lists that are still running (zombies count as gone).
fn running(starts: &Path) -> Vec<u32> {
    let text = std::fs::read_to_string(starts).unwrap_or_default();
    text.lines()
        .filter_map(|line| line.trim().parse::<u32>().ok())
        .filter(|pid| {
            std::fs::read_to_string(format!("/proc/{pid}/stat")).is_ok_and(|stat| {
                // The state follows the parenthesised command name.
                stat.rsplit_once(") ").is_some_and(|(_, rest)| !rest.starts_with('Z'))
            })
        })
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_hundred_faults_each_answer_clearly_lose_no_tool_and_the_next_call_works() {
    let dir = temp_dir("faults");
    let marker = dir.join("flaky-may-start");
    std::fs::write(&marker, "").unwrap();
    let keys = json!({"call_timeout_secs": CALL_TIMEOUT.as_secs(), "start_timeout_secs": START_TIMEOUT.as_secs()});
    let faults = [Fault::Crash, Fault::Hang, Fault::ExitAtStart, Fault::Garbage];
    let servers: serde_json::Map<String, Value> = faults
        .iter()
        .map(|fault| {
            let name = fault.server();
            let mut env = json!({"FIXTURE_STARTS": dir.join(format!("{name}.starts"))});
            if matches!(fault, Fault::ExitAtStart) {
                env["FIXTURE_EXIT_UNLESS"] = json!(marker);
            }
            (name.to_owned(), fixture(env, keys.clone()))
        })
        .collect();
    let config = write_config(&dir, Value::Object(servers));
    let (client, gateway) = connect(&config, &dir.join("cache")).await;
    let listed = list(&client).await;
    let names: BTreeSet<String> = gateway.catalog().names().map(str::to_owned).collect();
    assert_eq!(names.len(), 4 * fixture_tool_count(), "every server's tools are known");
    let suite =
        Suite { client: &client, gateway: &gateway, listed: &listed, names: &names, marker: &marker, dir: &dir };

    let sequences = faults.iter().enumerate().map(|(lane, &fault)| {
        let suite = &suite;
        async move {
            for run in (lane..RUNS).step_by(faults.len()) {
                suite.run(fault, run).await;
            }
        }
    });
    futures_util::future::join_all(sequences).await;

    // Every process a fault replaced is gone: only the four current ones still run.
    let mut left = usize::MAX;
    for _ in 0..50 {
        left = faults.iter().map(|fault| running(&dir.join(format!("{}.starts", fault.server()))).len()).sum();
        if left <= faults.len() {
            break;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    assert!(left <= faults.len(), "{left} fixture processes still run; replaced ones were not killed");
    client.cancel().await.unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn calls_waiting_on_a_start_that_hangs_share_its_failure_instead_of_queueing_starts() {
    let dir = temp_dir("hang-at-start");
    let marker = dir.join("may-start");
    let start_timeout = Duration::from_secs(3);
    let env = json!({"FIXTURE_HANG_UNLESS": marker});
    let keys = json!({"start_timeout_secs": start_timeout.as_secs()});
    std::fs::write(&marker, "").unwrap();
    let config = write_config(&dir, json!({"slow": fixture(env, keys)}));
    let (client, _gateway) = connect(&config, &dir.join("cache")).await;
    list(&client).await;
    client.cancel().await.unwrap();

    // A warm cache, and a server that now hangs at start: five calls at once.
    std::fs::remove_file(&marker).unwrap();
    let (client, gateway) = connect(&config, &dir.join("cache")).await;
    // One start timeout, plus a margin well below a second one.
    let bound = start_timeout + Duration::from_millis(2_500);
    let calls = (0..5).map(|_| async {
        let call = call_tool(&client, "slow__stock_quote", json!({"symbol": "ACME"}));
        tokio::time::timeout(bound, call).await.expect("answered within one start timeout")
    });
    for result in futures_util::future::join_all(calls).await {
        let message = text(&result);
        assert_eq!(result.is_error, Some(true), "{message}");
        assert!(
            message.contains("`slow` server") && message.contains("timed out: no MCP handshake within 3 s"),
            "{message}"
        );
    }
    assert_eq!(gateway.supervisor().server("slow").unwrap().starts(), 1, "one start for the five calls");
    std::fs::write(&marker, "").unwrap();
    let next = call_tool(&client, "slow__stock_quote", json!({"symbol": "ACME"})).await;
    assert_eq!(next.is_error, Some(false), "{}", text(&next));
    client.cancel().await.unwrap();
}
