//! A live model against real MCP servers. Runs only with `TOOL_DEFERRAL_LIVE=1`, a model (see
//! `live_tool_deferral.rs`: `OPENROUTER_API_KEY`, or `TOOL_DEFERRAL_BASE_URL` +
//! `TOOL_DEFERRAL_MODEL`) and the reference servers (`.ci/mcp-peers`):
//!
//! ```text
//! TOOL_DEFERRAL_LIVE=1 TOOL_DEFERRAL_BASE_URL=http://127.0.0.1:8092/v1 \
//!     cargo test -p tinytools-integration-tests --test live_mcp -- --nocapture
//! ```
//!
//! server-everything, server-filesystem and mcp-server-time are imported (29 tools). The same
//! question ("What time is it in Tokyo right now?") runs with every imported tool Direct, then
//! with all of them Deferred behind `tool_search`: both must reach `time__get_current_time` and
//! the deferred run's first call must cost fewer prompt tokens. `TOOL_DEFERRAL_RUNS=N` repeats
//! it and reports how often each arm got there; `TOOL_DEFERRAL_DIALECT` as in the other live test.

use tinytools::ToolRegistry;
use tinytools_examples::live::{self, LiveTask, Route};
use tinytools_examples::mcp_peers::Peer;
use tinytools_examples::surface;

const QUESTION: &str = "What time is it in Tokyo right now?";
const TARGET: &str = "time__get_current_time";

#[tokio::test]
async fn live_mcp_deferral() {
    let Some((model, name, dialect)) = live::live_model("live_mcp") else { return };
    let dir = std::env::temp_dir().join(format!("tinytools-live-mcp-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("temp dir");
    let mut deferred = ToolRegistry::new();
    let mut servers = Vec::new();
    for peer in Peer::ALL {
        let server = peer.connect(&dir).await.expect("the reference servers are installed (.ci/mcp-peers) and answer");
        server.register_into(&mut deferred).await.expect("imports");
        servers.push(server);
    }
    let direct = surface::all_direct(&deferred);
    println!("model {name}, dialect {dialect:?}: {} imported MCP tools", deferred.len());

    let runs = live::runs_from_env();
    let (mut direct_reached, mut deferred_reached) = (0, 0);
    let budget = live::MANIFEST_TOKEN_BUDGET;
    for run in 1..=runs {
        let task = |deferred| LiveTask {
            prompt: QUESTION,
            target: TARGET,
            deferred,
            manifest_token_budget: budget,
            pre_promotion: tinytools::discovery::PrePromotion::default(),
        };
        let all_direct = live::run_task(model.clone(), direct.clone(), task(false)).await.expect("the all-Direct run");
        let behind = live::run_task(model.clone(), deferred.clone(), task(true)).await.expect("the deferred run");
        println!("run {run}/{runs}\n{}", live::table(&name, &all_direct, &behind));
        println!("  answers: {:?} | {:?}", all_direct.answer, behind.answer);
        direct_reached += usize::from(all_direct.route != Route::Missed);
        deferred_reached += usize::from(behind.route != Route::Missed);
        live::check_pair(&all_direct, &behind, runs, TARGET);
    }
    println!("reached {TARGET}: all Direct {direct_reached}/{runs}, deferred {deferred_reached}/{runs}");
    for server in servers {
        server.close().await;
    }
    let _ = std::fs::remove_dir_all(&dir);
}
