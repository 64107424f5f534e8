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
//! The same task runs twice over the 41-tool registry — all Direct, then the 40-tool long
//! tail Deferred — and must: reach `stock_quote` both times; spend fewer prompt tokens on the
//! deferred run's first call; and, when the model searched, give the searched `stock_quote` a
//! typed declaration.

use tinytools_examples::live::{self, Route};

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
    let mut routes = Vec::new();
    for run in 1..=runs {
        let direct = live::run_arm(model.clone(), false).await.expect("the all-Direct run");
        let deferred = live::run_arm_with(model.clone(), true, budget).await.expect("the deferred run");
        println!("run {run}/{runs}\n{}", live::table(&name, &direct, &deferred));
        println!("  answers: {:?} | {:?}", direct.answer, deferred.answer);
        direct_reached += usize::from(direct.route != Route::Missed);
        deferred_reached += usize::from(deferred.route != Route::Missed);
        searched += usize::from(deferred.searched);
        routes.push(deferred.route);
        live::check_pair(&direct, &deferred, runs, "stock_quote");
        if deferred.route == Route::Search {
            assert!(deferred.typed_declaration, "a searched stock_quote must gain a typed declaration");
        }
    }
    println!(
        "reached stock_quote: all Direct {direct_reached}/{runs}, deferred {deferred_reached}/{runs}; deferred routes {routes:?}"
    );
    println!("the deferred run called tool_search in {searched}/{runs} runs");
    assert!(deferred_reached > 0, "the deferred run never reached stock_quote");
}
