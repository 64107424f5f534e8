//! Starting one downstream server: its launch expanded from the environment, its process
//! spawned (or, for a remote server, [`crate::transport`] connecting), and the MCP handshake
//! within its start timeout. A failure is classified into a [`StartFailure`], whose text
//! never holds a path or an expanded value.

use std::path::Path;

use rmcp::ServiceExt;
use rmcp::transport::TokioChildProcess;

use crate::config::{ConfigError, Launch, ServerConfig, Transport};
use crate::failure::{Failed, StartFailure};
use crate::relay::{Connection, ProgressRelay};
use crate::transport::{Remote, connect_remote};

/// Starts `config`'s server (its config file is `file`, for the log only), its notifications
/// handled by `relay`. `spawned` is called once a process is spawned or a connection tried.
///
/// # Errors
/// [`Failed`] with the reason and the text a call answers with.
pub(crate) async fn start(
    config: &ServerConfig,
    file: &Path,
    relay: &ProgressRelay,
    spawned: impl FnOnce(),
) -> Result<Connection, Failed> {
    let name = &config.name;
    let lookup = |variable: &str| std::env::var(variable).ok();
    let launch = match config.launch(file, lookup) {
        Ok(Some(launch)) => launch,
        Ok(None) => {
            let remote = match Remote::expand(config, file, lookup) {
                Ok(Some(remote)) => remote,
                Ok(None) => {
                    let reason = StartFailure::Misconfigured("neither a \"command\" nor a \"url\"".into());
                    return Err(Failed::new(name, reason, None));
                }
                Err(error) => return Err(unset(name, &error)),
            };
            spawned();
            return connect_remote(config, &remote, relay.clone()).await;
        }
        Err(error) => return Err(unset(name, &error)),
    };
    let transport = match TokioChildProcess::new(launch.command()) {
        Ok(transport) => transport,
        Err(error) => return Err(Failed::new(name, not_spawned(config, &launch, &error), None)),
    };
    spawned();
    let after = config.policy.start_timeout;
    match tokio::time::timeout(after, relay.clone().serve(relay.counted(transport))).await {
        Ok(Ok(connection)) => Ok(connection),
        Ok(Err(error)) => Err(Failed::new(name, StartFailure::ExitedDuringHandshake, Some(&handshake(&error)))),
        Err(_) => Err(Failed::new(name, StartFailure::TimedOut { after }, None)),
    }
}

/// A `${VAR}` that could not be expanded, named without the config file's path.
fn unset(server: &str, error: &ConfigError) -> Failed {
    let reason = match error {
        ConfigError::MissingVariable { variable, .. } => StartFailure::VariableUnset { variable: variable.clone() },
        _ => StartFailure::Misconfigured("its config could not be expanded".into()),
    };
    let detail = match error {
        ConfigError::MissingVariable { key, .. } => Some(format!("referenced by {key}")),
        _ => None,
    };
    Failed::new(server, reason, detail.as_deref())
}

/// Why the process could not be spawned.
fn not_spawned(config: &ServerConfig, launch: &Launch, error: &std::io::Error) -> StartFailure {
    let program = program_name(config);
    match error.kind() {
        std::io::ErrorKind::NotFound if launch.cwd().is_some_and(|cwd| !Path::new(cwd).is_dir()) => {
            StartFailure::NoWorkingDirectory
        }
        std::io::ErrorKind::NotFound => StartFailure::CommandNotFound { program },
        kind => StartFailure::NotRunnable { program, reason: kind.to_string() },
    }
}

/// The file name of a stdio server's command as configured (unexpanded): `/opt/bin/mcp-x`
/// is `mcp-x`.
pub fn program_name(config: &ServerConfig) -> String {
    match &config.transport {
        Transport::Stdio { command, .. } => {
            let raw = command.raw().trim_end_matches(['/', '\\']);
            raw.rsplit(['/', '\\']).next().unwrap_or(raw).to_owned()
        }
        Transport::Http { url, .. } => url.raw().to_owned(),
    }
}

/// What the failed handshake says, in a few words.
fn handshake(error: &rmcp::service::ClientInitializeError) -> String {
    use rmcp::service::ClientInitializeError as E;
    match error {
        E::ConnectionClosed(_) => "the process closed its output before answering".to_owned(),
        other => other.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::GatewayConfig;

    fn server(entry: serde_json::Value) -> ServerConfig {
        let text = serde_json::json!({"mcpServers": {"s": entry}}).to_string();
        GatewayConfig::parse("/home/me/servers.json", &text).unwrap().servers.remove("s").unwrap()
    }

    #[test]
    fn a_command_is_named_by_its_file_name() {
        assert_eq!(program_name(&server(serde_json::json!({"command": "/opt/tools/bin/mcp-x"}))), "mcp-x");
        assert_eq!(program_name(&server(serde_json::json!({"command": "uvx"}))), "uvx");
        assert_eq!(program_name(&server(serde_json::json!({"command": "${HOME}/bin/y"}))), "y");
    }

    #[tokio::test]
    async fn start_failures_are_classified_without_paths() {
        let relay = ProgressRelay::default();
        let missing = server(serde_json::json!({"command": "/nonexistent/dir/ghost-mcp"}));
        let failed = start(&missing, Path::new("/home/me/servers.json"), &relay, || {}).await.err().unwrap();
        assert_eq!(failed.reason, StartFailure::CommandNotFound { program: "ghost-mcp".into() });
        let unset = server(serde_json::json!({"command": "x", "env": {"K": "${TINYTOOLS_LAUNCH_TEST_UNSET}"}}));
        let failed = start(&unset, Path::new("/home/me/servers.json"), &relay, || {}).await.err().unwrap();
        assert_eq!(failed.reason, StartFailure::VariableUnset { variable: "TINYTOOLS_LAUNCH_TEST_UNSET".into() });
        let no_dir = server(serde_json::json!({"command": "sh", "cwd": "/nonexistent/work"}));
        let failed = start(&no_dir, Path::new("/home/me/servers.json"), &relay, || {}).await.err().unwrap();
        assert_eq!(failed.reason, StartFailure::NoWorkingDirectory);
        for text in [failed.message.to_string(), failed.reason.to_string()] {
            assert!(!text.contains("/home/me") && !text.contains("/nonexistent"), "{text}");
        }
    }
}
