//! A host program whose tool hangs for ever: its run must time the call out and `main` must
//! return, as `#[tokio::main]` does only once no task or blocking thread holds the runtime
//! (tests/tests/host_exit.rs runs it). Prints `run returned` when the run has returned.

use std::sync::Arc;
use std::time::Duration;

use serde_json::json;
use tinytools::model::{Message, ModelResponse};
use tinytools::run::{Agent, RunPolicy};
use tinytools::testkit::ScriptedModel;
use tinytools::{ToolRegistry, tool};

/// Waits for an answer that never comes.
#[tool]
async fn wait_for_ever() -> String {
    std::future::pending::<()>().await;
    "never".to_owned()
}

#[tokio::main(flavor = "multi_thread", worker_threads = 2)]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let mut registry = ToolRegistry::new();
    registry.register(WaitForEver)?;
    let model = ScriptedModel::new([
        ModelResponse::calls([("c1", "wait_for_ever", json!({}))]),
        ModelResponse::text("It did not answer."),
    ]);
    let policy = RunPolicy::default().with_tool_timeout(Duration::from_millis(100));
    let agent = Agent::new(Arc::new(registry), Arc::new(model)).with_policy(policy);
    let outcome = agent.run(vec![Message::user("wait")]).await?;
    let answered =
        outcome.transcript.messages.iter().any(
            |message| matches!(message, Message::Tool { content, .. } if content.contains("did not finish in time")),
        );
    println!("run returned: timed out {answered}");
    Ok(())
}
