//! Which ranked deferred tools a run may promote: query-aware discovery's floor, limit and
//! token budget, shared by pre-promotion, the unknown-name answer and the aids.

use crate::ToolSchema;
use crate::discovery::{DiscoveryBridge, RankOutcome};
use crate::schema::TokenCounter;

/// The hits of a ranking that pre-promotion would load, in rank order, with their
/// confidences: at or above the floor, at most `limit`, while their declarations fit the token
/// budget; tools already `promoted` are passed over when `only_new`.
pub(super) fn promotable(
    bridge: &DiscoveryBridge,
    counter: &dyn TokenCounter,
    promoted: &[ToolSchema],
    outcome: &RankOutcome,
    limit: usize,
    only_new: bool,
) -> Vec<(ToolSchema, f32)> {
    bridge.promotable(outcome, limit, counter, |name| only_new && promoted.iter().any(|tool| tool.name == name))
}

/// `query` ranked against the deferred catalogue like a user message: the declarations of the
/// hits that pass query-aware discovery's floor and token budget, at most its limit, promoted
/// before or not; none while pre-promotion or the bridge is off.
pub(super) async fn ranked(
    bridge: &DiscoveryBridge,
    counter: &dyn TokenCounter,
    promoted: &[ToolSchema],
    query: &str,
) -> Vec<ToolSchema> {
    let pre = bridge.policy().pre_promotion;
    if !pre.enabled || pre.limit == 0 || !bridge.is_active() {
        return Vec::new();
    }
    let outcome = bridge.catalog().rank(bridge.policy(), query, pre.limit).await;
    promotable(bridge, counter, promoted, &outcome, pre.limit, false).into_iter().map(|(schema, _)| schema).collect()
}
