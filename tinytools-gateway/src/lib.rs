//! tinytools-gateway: one MCP server in front of many.
//!
//! Any MCP client gets every configured server's tools lazily, behind two tools:
//! `tool_search` (whose description carries a budgeted manifest of every downstream tool)
//! and `call_tool {name, arguments}`. Tool lists are cached on disk, so the gateway answers
//! `initialize`, `tools/list` and `tool_search` before any server runs; a server starts on
//! its first call and is restarted after a crash or hang.
//!
//! - [`config`]: the `mcpServers` JSON, with a `gateway` object per server.
//! - [`template`]: `${VAR}` references and the secrets they expand to.
//! - [`glob`]: the `allow`/`deny` globs.
//! - [`cache`]: the manifest cache.
//! - [`supervisor`]: the downstream servers' lives; [`launch`] starts one, [`failure`] says
//!   why it could not start.
//! - [`discovery`]: a cold cache's servers, listed in the background.
//! - [`promotion`]: the opt-in `list_changed` profile.
//! - [`relay`]: downstream progress, relayed to the client that made the call.
//! - [`catalog`]: every exposed downstream tool, for admission and search.
//! - [`gateway`]: the MCP server the client talks to, with its [`options`]; [`admission`]
//!   checks a call before it is forwarded, [`listing`] answers `tools/list` and [`manifest`]
//!   writes `tool_search`'s description.
//! - [`http`]: the gateway over streamable HTTP (`--http`), with an optional bearer token;
//!   [`sessions`] shares its sessions between gateway processes (`--shared-sessions`), and
//!   [`cancel`] a client's cancellations between them.
//! - [`transport`]: remote (`url`) downstream servers, over streamable HTTP.
//! - [`redact`]: remote servers' secrets, scrubbed from the log.
//! - [`import`]: other clients' config files, converted.
//! - [`report`]: what each server's tools cost, with and without the gateway.
//! - [`setup`]: the gateway written into a client's config (`tinytools-gateway setup`).
//! - `spans` (private): each `tools/call` as an `execute_tool` span, as `docs/tracing.md` says.

pub mod admission;
pub mod cache;
pub mod cancel;
pub mod catalog;
pub mod config;
pub mod discovery;
pub mod failure;
pub mod gateway;
pub mod glob;
pub mod http;
pub mod import;
pub mod launch;
pub mod listing;
pub mod manifest;
pub mod options;
pub mod promotion;
pub mod redact;
pub mod relay;
pub mod report;
pub mod sessions;
pub mod setup;
mod shared_dir;
mod spans;
pub mod summaries;
pub mod supervisor;
pub mod template;
pub mod transport;

pub use cache::ManifestCache;
pub use config::{ConfigError, GatewayConfig};
pub use gateway::Gateway;
pub use http::{HttpOptions, HttpServer};
pub use manifest::ManifestNames;
pub use options::GatewayOptions;
pub use supervisor::Supervisor;
