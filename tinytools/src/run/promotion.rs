//! The ranking the unknown-name answer and the aids ask for: a query ranked like a user
//! message, through query-aware discovery's floor, limit and token budget.

use crate::ToolSchema;
use crate::discovery::DiscoveryBridge;
use crate::schema::TokenCounter;

/// `query` ranked against the deferred catalogue like a user message: the declarations of the
/// hits that pass query-aware discovery's floor and token budget, at most its limit, promoted
/// before or not; none while pre-promotion or the bridge is off, or in provider-native mode
/// (where nothing is promoted).
pub(super) async fn ranked(bridge: &DiscoveryBridge, counter: &dyn TokenCounter, query: &str) -> Vec<ToolSchema> {
    let pre = bridge.policy().pre_promotion;
    if !pre.enabled || pre.limit == 0 || !bridge.is_active() || bridge.native().is_some() {
        return Vec::new();
    }
    let outcome = bridge.catalog().rank(bridge.policy(), query, pre.limit).await;
    bridge.promotable(&outcome, pre.limit, counter, |_| false).into_iter().map(|(schema, _)| schema).collect()
}
