//! The README's and the guide's Rust blocks, compiled as doctests (and run, where they need no
//! provider): `cargo test -p tinytools-integration-tests --doc`. One item per page; a page
//! added to the guide gets its item here.

#[doc = include_str!("../../README.md")]
pub struct Readme;

#[doc = include_str!("../../docs/README.md")]
pub struct DocsIndex;

#[doc = include_str!("../../docs/guide/tools.md")]
pub struct GuideTools;

#[doc = include_str!("../../docs/guide/discovery.md")]
pub struct GuideDiscovery;

#[doc = include_str!("../../docs/guide/schemas.md")]
pub struct GuideSchemas;

#[doc = include_str!("../../docs/guide/agent-loop.md")]
pub struct GuideAgentLoop;

#[doc = include_str!("../../docs/guide/providers.md")]
pub struct GuideProviders;

#[doc = include_str!("../../docs/guide/mcp.md")]
pub struct GuideMcp;

#[doc = include_str!("../../docs/guide/gateway.md")]
pub struct GuideGateway;

#[doc = include_str!("../../docs/guide/benchmarks.md")]
pub struct GuideBenchmarks;

#[doc = include_str!("../../docs/guide/workspace.md")]
pub struct GuideWorkspace;
