//! The benchmark's arms: how each exposes the 41-tool catalogue.

use std::borrow::Cow;
use std::sync::Arc;

use tinytools::ToolRegistry;
use tinytools::discovery::{PrePromotion, ToolDiscoveryPolicy};
use tinytools::run::RunPolicy;
use tinytools_examples::catalogue;
use tinytools_examples::live::SYSTEM_PROMPT;

use crate::process::GatewayProcess;
use crate::{AidsChoice, PreSearch, tasks};

/// Which exposure an arm measures.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ArmKind {
    /// All 41 tools Direct: the baseline.
    AllDirect,
    /// `read_note` Direct, 40 Deferred behind `tool_search` only (no pre-promotion): the
    /// spec's bridge.
    Bridge,
    /// As `Bridge`, with query-aware discovery (the default policy).
    Discovery,
    /// As `Discovery`, over the catalogue plus BFCL distractors, all Deferred.
    Scale,
    /// The catalogue as MCP servers behind the `tinytools-gateway` binary: the model sees the
    /// gateway's `tool_search`, `call_tool` and `notes__read_note` (built by
    /// [`gateway_arm`](crate::gateway_arm), which starts processes).
    Gateway,
}

impl ArmKind {
    /// The arms a run takes by default, in the order they run. The gateway arm is left out:
    /// it needs two built binaries and adds a full pass over the suite; ask for it by name.
    pub const ALL: [ArmKind; 4] = [Self::AllDirect, Self::Bridge, Self::Discovery, Self::Scale];

    /// Every arm there is.
    pub const EVERY: [ArmKind; 5] = [Self::AllDirect, Self::Bridge, Self::Discovery, Self::Scale, Self::Gateway];

    /// Its name on the command line and in reports.
    pub fn name(self) -> &'static str {
        match self {
            Self::AllDirect => "all-direct",
            Self::Bridge => "deferred",
            Self::Discovery => "discovery",
            Self::Scale => "scale",
            Self::Gateway => "gateway",
        }
    }

    /// The arm a name means.
    pub fn parse(name: &str) -> Option<Self> {
        Self::EVERY.into_iter().find(|kind| kind.name() == name)
    }
}

/// A ready arm: its registry and the policy every run of it uses.
#[derive(Clone, Debug)]
pub struct ArmSpec {
    /// Which arm.
    pub kind: ArmKind,
    /// Tools registered.
    pub registry: Arc<ToolRegistry>,
    /// The run policy, before the aids.
    pub policy: RunPolicy,
    /// The aids every run gets, applied over [`policy`](Self::policy) when its agent is built
    /// ([`apply_aids`](crate::apply_aids)).
    pub aids: AidsChoice,
    /// The system message every run starts with.
    pub system_prompt: Cow<'static, str>,
    /// The gateway the arm's tools call (the gateway arm only); it stops when the last
    /// handle goes, or at [`GatewayProcess::close`].
    pub gateway: Option<Arc<GatewayProcess>>,
    /// The gateway arm's host pre-search, when on: each run's registry is this arm's plus the
    /// tools the gateway's `tool_search` finds for the task's words.
    pub pre_search: Option<PreSearch>,
    /// Whether runs stream ([`Agent::stream`](tinytools::run::Agent::stream)) instead of
    /// [`Agent::run`](tinytools::run::Agent::run): the same loop, the model's text as it is written.
    pub stream: bool,
}

impl ArmSpec {
    /// The tools the arm exposes, offered or not: its registry's, or for the gateway arm the
    /// tools behind the gateway.
    pub fn tools(&self) -> usize {
        self.gateway.as_ref().map_or(self.registry.len(), |gateway| gateway.tools_behind())
    }
}

/// Builds an arm. `manifest_token_budget` sizes `tool_search`'s manifest, `distractors` the
/// scale arm's BFCL additions, `pre_promotion` the discovery and scale arms' query-aware
/// discovery (the bridge arm always runs without it), `max_turns` and `aids` every run.
///
/// # Errors
/// When the scale arm cannot read the BFCL set, and for the gateway arm, which
/// [`gateway_arm`](crate::gateway_arm) builds.
pub fn arm(
    kind: ArmKind,
    manifest_token_budget: usize,
    distractors: usize,
    pre_promotion: PrePromotion,
    max_turns: usize,
    aids: AidsChoice,
) -> Result<ArmSpec, String> {
    let registry = match kind {
        ArmKind::AllDirect => catalogue::all_direct_registry(),
        ArmKind::Bridge | ArmKind::Discovery => catalogue::registry(),
        ArmKind::Scale => tasks::scale_registry(distractors)?,
        ArmKind::Gateway => {
            return Err("the gateway arm starts processes: build it with `tinytools_bench::gateway_arm`".to_owned());
        }
    };
    let pre_promotion = if kind == ArmKind::Bridge { PrePromotion::off() } else { pre_promotion };
    let discovery = ToolDiscoveryPolicy::default()
        .with_manifest_token_budget(manifest_token_budget)
        .with_pre_promotion(pre_promotion);
    let policy = RunPolicy::default().with_discovery(discovery).with_max_turns(max_turns);
    Ok(ArmSpec {
        kind,
        registry: Arc::new(registry),
        policy,
        aids,
        system_prompt: Cow::Borrowed(SYSTEM_PROMPT),
        gateway: None,
        pre_search: None,
        stream: false,
    })
}
