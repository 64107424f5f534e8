//! [`HostAuthorization`]: the host's own yes or no for each call.

use super::{Middleware, ToolGate};
use crate::model::ToolCall;

/// Asks the host about every call, with its real name and arguments (a confirmation prompt,
/// an entitlement check).
pub struct HostAuthorization<F> {
    decide: F,
}

impl<F: Fn(&ToolCall) -> bool + Send + Sync> HostAuthorization<F> {
    /// `decide` returns whether the call may run.
    pub fn new(decide: F) -> Self {
        Self { decide }
    }
}

#[async_trait::async_trait]
impl<F: Fn(&ToolCall) -> bool + Send + Sync> Middleware for HostAuthorization<F> {
    async fn before_tool(&self, call: &ToolCall) -> ToolGate {
        if (self.decide)(call) {
            ToolGate::Allow
        } else {
            ToolGate::Deny("The user did not authorize this call.".to_owned())
        }
    }
}
