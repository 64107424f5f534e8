//! The BFCL arms: how a query's functions reach the model.

use std::collections::BTreeMap;
use std::sync::Arc;

use serde_json::Value;
use tinytools::discovery::{PrePromotion, ToolDiscoveryPolicy};
use tinytools::rank::ToolRanker;
use tinytools::run::RunPolicy;
use tinytools::{Tool, ToolExposure, ToolRegistry};
use tinytools_examples::eval::{json_type, normalize_schema, safe_name, stub_tool};

use super::data::{Dataset, Function, Query};
use super::twins::{self, Profile};

/// What every BFCL function answers when called: BFCL scores the calls, not what follows.
pub const STUB_ANSWER: &str = r#"{"status": "ok"}"#;

/// How long a host ranker may take before BM25 answers instead.
pub const RANKER_TIMEOUT: std::time::Duration = std::time::Duration::from_secs(120);

/// The most model calls a query's run may make.
pub const MAX_TURNS: usize = 4;

/// Which exposure an arm measures.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Arm {
    /// BFCL's own setting: the query's offered functions, Direct.
    Native,
    /// Every pooled function Deferred (the query's own definitions for its names), with the
    /// library's default discovery.
    Pool,
    /// As [`Pool`](Self::Pool), ranked by the host's ranker (the embedding ranker).
    PoolRanker,
    /// The query's offered functions and the pooled functions most like them
    /// ([`twins::most_alike`], [`DEFAULT_TWINS`] unless changed), all Direct: native's
    /// setting with the choice among same-job twins the pool arm faces, and no retrieval.
    NativeTwins,
}

/// How many pooled functions the native + twins arm offers beside a query's own: 2, the
/// most pre-promotion (at most 3 tools) puts beside one gold function in the pool arm.
pub const DEFAULT_TWINS: usize = 2;

impl Arm {
    /// Every arm, in `--arms` order.
    pub const ALL: [Arm; 4] = [Self::Native, Self::Pool, Self::PoolRanker, Self::NativeTwins];

    /// Its name on the command line and in reports.
    pub fn name(self) -> &'static str {
        match self {
            Self::Native => "native",
            Self::Pool => "pool",
            Self::PoolRanker => "pool-ranker",
            Self::NativeTwins => "native+twins",
        }
    }

    /// Whether the arm defers the whole pool (`pool`, `pool-ranker`).
    pub fn is_pooled(self) -> bool {
        matches!(self, Self::Pool | Self::PoolRanker)
    }

    /// The arm a name means.
    pub fn parse(name: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|arm| arm.name() == name)
    }
}

/// An arm ready to run queries: for the pool arms, the pooled registry built once.
pub struct ArmSetup {
    /// Which arm.
    pub arm: Arm,
    /// Its name in results: the arm's, with `+plain` when pre-promotion ranks messages
    /// without the model's keywords, `+kg{confidence}` with them only under a confidence and
    /// `+ru{share}` with a runner-up floor.
    pub label: String,
    pool: ToolRegistry,
    policy: RunPolicy,
    /// Pooled names left out because another name already had their wire name.
    pub wire_name_collisions: usize,
    /// The native + twins arm's candidates (the pool's functions and their profiles) and
    /// how many it offers.
    twins: Option<(Arc<TwinPool>, usize)>,
}

/// The pooled functions with their word profiles, computed once.
pub struct TwinPool {
    /// The pool, one definition per name.
    pub functions: Vec<Function>,
    /// Their profiles, in the same order.
    pub profiles: Vec<Profile>,
}

impl TwinPool {
    /// The profiles of `functions`.
    pub fn new(functions: &[Function]) -> Self {
        Self { functions: functions.to_vec(), profiles: functions.iter().map(Profile::of).collect() }
    }

    /// The profile of the pooled function with this wire name.
    pub fn profile(&self, wire_name: &str) -> Option<&Profile> {
        self.profiles.iter().find(|p| p.wire_name == wire_name)
    }
}

impl ArmSetup {
    /// Builds `arm` over `data`'s pool; `ranker` is the pool-ranker arm's ranker, or for the
    /// pool arm a ranker in BM25's place.
    ///
    /// # Errors
    /// A pooled function that does not register, the pool-ranker arm without a ranker, or the
    /// native arm with one.
    pub fn new(arm: Arm, data: &Dataset, ranker: Option<Arc<dyn ToolRanker>>) -> Result<Self, String> {
        let mut discovery = ToolDiscoveryPolicy::default();
        let label = arm.name().to_owned();
        match (arm, ranker) {
            (Arm::PoolRanker, None) => return Err("the pool-ranker arm needs a ranker".to_owned()),
            (Arm::Native | Arm::NativeTwins, Some(_)) => {
                return Err("the native arms have nothing to rank".to_owned());
            }
            (_, Some(ranker)) => {
                // The first ranking may embed the whole pool.
                discovery = discovery.with_ranker(ranker).with_ranker_timeout(RANKER_TIMEOUT);
            }
            (_, None) => {}
        }
        // The pool arms rank each query with the model's search keywords, as they always have
        // (the library's default since issue 64 asks for none; `--no-keywords` is that).
        let pre = discovery.pre_promotion.with_model_keywords(true);
        let discovery = discovery.with_pre_promotion(pre);
        let policy = RunPolicy::default().with_discovery(discovery).with_max_turns(MAX_TURNS);
        let mut pool = ToolRegistry::new();
        let mut wire_name_collisions = 0;
        let twins = (arm == Arm::NativeTwins).then(|| (Arc::new(TwinPool::new(&data.pool)), DEFAULT_TWINS));
        if arm.is_pooled() {
            for function in &data.pool {
                if pool.contains(&safe_name(&function.name)) {
                    wire_name_collisions += 1;
                    continue;
                }
                pool.register_arc(stub(function)).map_err(|err| format!("pooled function {}: {err}", function.name))?;
            }
        }
        Ok(Self { arm, label, pool, policy, wire_name_collisions, twins })
    }

    /// The native + twins arm offering `k` pooled functions beside a query's own (labelled
    /// `native+twins{k}` when `k` is not [`DEFAULT_TWINS`]); other arms as they are.
    #[must_use]
    pub fn with_twins(mut self, k: usize) -> Self {
        if let Some((_, count)) = self.twins.as_mut() {
            *count = k;
            if k != DEFAULT_TWINS {
                self.label = format!("{}{k}", self.arm.name());
            }
        }
        self
    }

    /// The pooled functions the native + twins arm offers beside `query`'s own.
    pub fn twins_for(&self, query: &Query) -> Vec<&Function> {
        let Some((pool, k)) = &self.twins else { return Vec::new() };
        let offered: Vec<Profile> = query.offered.iter().map(Profile::of).collect();
        twins::most_alike(&pool.profiles, &offered, *k).into_iter().filter_map(|i| pool.functions.get(i)).collect()
    }

    /// The registry and policy of one query's run. Native: the offered functions, Direct.
    /// Pool: the pool with the query's own definitions in place of its names' pooled ones.
    /// An offered function that cannot register is left out (and so cannot be called).
    /// Native + twins: the offered functions and their twins ([`Self::twins_for`]), Direct.
    pub fn for_query(&self, query: &Query) -> (ToolRegistry, RunPolicy) {
        let mut registry = if self.arm.is_pooled() { self.pool.clone() } else { ToolRegistry::new() };
        let exposure = if self.arm.is_pooled() { ToolExposure::Deferred } else { ToolExposure::Direct };
        for function in query.offered.iter().chain(self.twins_for(query)) {
            let name = safe_name(&function.name);
            registry.remove(&name);
            // A query that offers two definitions of one name keeps the first.
            let _ = registry.register_as(stub(function), exposure);
        }
        (registry, self.policy.clone())
    }

    /// The same arm with pre-promotion's keywords from the run's model on or off (off:
    /// labelled `+plain`; the native arm has nothing to rank either way).
    #[must_use]
    pub fn with_model_keywords(self, on: bool) -> Self {
        if on { self } else { self.with_pre_promotion("+plain", |pre| pre.with_model_keywords(false)) }
    }

    /// The same arm asking for the model's keywords only when the message alone ranks no hit
    /// at or above `confidence` (`PrePromotion::model_keywords_below`; labelled `+kg{confidence}`).
    #[must_use]
    pub fn with_keyword_gate(self, confidence: Option<f32>) -> Self {
        match confidence {
            Some(gate) => {
                self.with_pre_promotion(&format!("+kg{gate}"), |pre| pre.with_model_keywords_below(Some(gate)))
            }
            None => self,
        }
    }

    /// The same arm with pre-promotion's runner-up floor at `share` (labelled `+ru{share}`;
    /// `0.0` changes nothing).
    #[must_use]
    pub fn with_runner_up_floor(self, share: f32) -> Self {
        if share > 0.0 {
            self.with_pre_promotion(&format!("+ru{share}"), |pre| pre.with_runner_up_floor(share))
        } else {
            self
        }
    }

    /// The pool arms with their pre-promotion changed by `change` and `suffix` added to the
    /// label; the native arm, which ranks nothing, as it is.
    fn with_pre_promotion(mut self, suffix: &str, change: impl FnOnce(PrePromotion) -> PrePromotion) -> Self {
        if self.arm.is_pooled() {
            let discovery = self.policy.discovery.clone();
            let pre = change(discovery.pre_promotion);
            self.policy = self.policy.with_discovery(discovery.with_pre_promotion(pre));
            self.label.push_str(suffix);
        }
        self
    }

    /// The name a BFCL function has on the wire.
    pub fn wire_name(&self, name: &str) -> String {
        safe_name(name)
    }

    /// Tools registered in every pool-arm run (before the query's own definitions).
    pub fn pool_size(&self) -> usize {
        self.pool.len()
    }

    /// The pooled registry (empty for the native arm).
    pub fn pool(&self) -> &ToolRegistry {
        &self.pool
    }
}

fn stub(function: &Function) -> Arc<dyn Tool> {
    stub_tool(
        safe_name(&function.name),
        function.description.clone(),
        normalize_schema(&function.parameters),
        STUB_ANSWER,
    )
}

/// BFCL's type names in these functions that reach JSON Schema as no constraint at all
/// (`any`, and names JSON Schema has no word for), with their counts: what the mapping
/// (`dict` → object, `float` → number, `tuple` → array, Java's names to theirs) cannot say.
pub fn unmapped_types<'a>(functions: impl IntoIterator<Item = &'a Function>) -> BTreeMap<String, usize> {
    let mut out = BTreeMap::new();
    for function in functions {
        walk(&function.parameters, &mut out);
    }
    out
}

fn walk(node: &Value, out: &mut BTreeMap<String, usize>) {
    let Some(object) = node.as_object() else { return };
    if let Some(name) = object.get("type").and_then(Value::as_str)
        && json_type(name).is_none()
    {
        *out.entry(name.to_owned()).or_default() += 1;
    }
    for child in object.get("properties").and_then(Value::as_object).into_iter().flat_map(|p| p.values()) {
        walk(child, out);
    }
    for key in ["items", "additionalProperties"] {
        if let Some(child) = object.get(key) {
            walk(child, out);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn function(name: &str, description: &str) -> Function {
        Function {
            name: name.into(),
            description: description.into(),
            parameters: serde_json::json!({"type": "dict", "properties": {"x": {"type": "any"}}}),
        }
    }

    #[test]
    fn the_pool_carries_the_query_s_own_definitions() {
        let data = Dataset {
            pool: vec![function("math.f", "pooled"), function("g", "other"), function("math_f", "collides")],
            queries: vec![],
        };
        let query = Query {
            qid: "q".into(),
            category: "simple_python".into(),
            text: "t".into(),
            offered: vec![function("math.f", "offered")],
            gold_names: vec!["math.f".into()],
        };
        let pool = ArmSetup::new(Arm::Pool, &data, None).unwrap();
        assert_eq!((pool.pool_size(), pool.wire_name_collisions), (2, 1));
        let (registry, _) = pool.for_query(&query);
        let tool = registry.get("math_f").unwrap();
        assert_eq!((tool.spec().description.as_ref(), tool.exposure()), ("offered", ToolExposure::Deferred));
        assert!(registry.contains("g"));
        let (native, _) = ArmSetup::new(Arm::Native, &data, None).unwrap().for_query(&query);
        assert_eq!(native.len(), 1);
        assert_eq!(native.get("math_f").unwrap().exposure(), ToolExposure::Direct);
        assert!(ArmSetup::new(Arm::PoolRanker, &data, None).is_err());
        assert_eq!(unmapped_types(&data.pool).get("any"), Some(&3));
    }
}
