//! The spec's live proof. Runs only with `TOOL_DEFERRAL_LIVE=1`:
//!
//! ```text
//! TOOL_DEFERRAL_LIVE=1 cargo test -p tinytools-integration-tests --test live_tool_deferral -- --nocapture
//! ```
//!
//! Against OpenRouter when `OPENROUTER_API_KEY` is set (model `TOOL_DEFERRAL_MODEL`, default
//! `openai/gpt-4.1-mini`), else against the OpenAI-compatible server at
//! `TOOL_DEFERRAL_BASE_URL` (model `TOOL_DEFERRAL_MODEL`). `TOOL_DEFERRAL_RUNS=10` repeats the
//! A/B and reports how often each arm reached `stock_quote`. `TOOL_DEFERRAL_DIALECT=json` or
//! `pformat` runs it through a prompt dialect (for servers that do not parse tool calls).
//! `TOOL_DEFERRAL_MANIFEST_TOKENS` sets the deferred arm's manifest budget (default 400; a
//! small one leaves only a count, so the model must search).
//!
//! The same task runs three times over the 41-tool registry — all Direct; the 40-tool long
//! tail Deferred behind the spec's bridge alone (no pre-promotion); and Deferred with the
//! library's default discovery, which promotes the tools the user's message matches before the
//! first call — and must: reach `stock_quote`; spend fewer prompt tokens on each deferred run's
//! first call; and, when the bridge-only model searched, give the searched `stock_quote` a
//! typed declaration. The final line keeps the form `reached stock_quote: all Direct X/N,
//! deferred Y/N` (deferred: the default policy); the bridge-only tally follows it.

use tinytools_examples::live::{self, Exposure, Route};

#[tokio::test]
async fn live_tool_deferral() {
    let Some((model, name, dialect)) = live::live_model("live_tool_deferral") else { return };
    println!("model {name}, dialect {dialect:?}");
    let runs = live::runs_from_env();
    let (mut direct_reached, mut deferred_reached, mut searched) = (0, 0, 0);
    let budget: usize = std::env::var("TOOL_DEFERRAL_MANIFEST_TOKENS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(live::MANIFEST_TOKEN_BUDGET);
    let (mut bridge_reached, mut bridge_searched) = (0, 0);
    let mut routes = Vec::new();
    for run in 1..=runs {
        let direct = live::run_arm(model.clone(), Exposure::AllDirect).await.expect("the all-Direct run");
        let bridge = live::run_arm_with(model.clone(), Exposure::Bridge, budget).await.expect("the bridge-only run");
        let deferred = live::run_arm_with(model.clone(), Exposure::Discovery, budget).await.expect("the deferred run");
        println!("run {run}/{runs} (bridge only)\n{}", live::table(&name, &direct, &bridge));
        println!("run {run}/{runs} (deferred, default discovery)\n{}", live::table(&name, &direct, &deferred));
        println!("  answers: {:?} | {:?} | {:?}", direct.answer, bridge.answer, deferred.answer);
        println!("  endings: {} | {} | {}", direct.ending, bridge.ending, deferred.ending);
        direct_reached += usize::from(direct.route != Route::Missed);
        bridge_reached += usize::from(bridge.route != Route::Missed);
        bridge_searched += usize::from(bridge.searched);
        deferred_reached += usize::from(deferred.route != Route::Missed);
        searched += usize::from(deferred.searched);
        routes.push(deferred.route);
        live::check_pair(&direct, &bridge, runs, "stock_quote");
        live::check_pair(&direct, &deferred, runs, "stock_quote");
        if bridge.route == Route::Search {
            assert!(bridge.typed_declaration, "a searched stock_quote must gain a typed declaration");
        }
    }
    println!(
        "reached stock_quote: all Direct {direct_reached}/{runs}, deferred {deferred_reached}/{runs}; deferred routes {routes:?}"
    );
    println!(
        "bridge only (no pre-promotion): reached {bridge_reached}/{runs}, called tool_search in {bridge_searched}/{runs}"
    );
    println!("the deferred run called tool_search in {searched}/{runs} runs");
    assert!(deferred_reached > 0, "the deferred run never reached stock_quote");
}
