//! Progress relay: a downstream server's `notifications/progress` for a forwarded call reach
//! the client that made the call, under the client's own progress token.
//!
//! rmcp gives every request the gateway sends downstream a fresh progress token. While a
//! call is in flight, [`ProgressRelay`] maps that token to the client's peer and token; the
//! downstream connection's handler looks notifications up there. A client that sent no
//! progress token gets no progress. Notifications are handled on separate tasks, so they may
//! arrive out of order: one that does not advance past the last relayed progress is dropped,
//! so the client never sees progress go backwards.

use std::collections::HashMap;
use std::sync::Arc;

use rmcp::model::{ProgressNotificationParam, ProgressToken};
use rmcp::service::NotificationContext;
use rmcp::{ClientHandler, Peer, RoleClient, RoleServer};
use tokio::sync::Mutex;

/// Where to send one call's progress: the client and its token.
#[derive(Clone, Debug)]
pub struct Upstream {
    /// The client's connection.
    pub peer: Peer<RoleServer>,
    /// The token the client put in its request's `_meta.progressToken`.
    pub token: ProgressToken,
}

/// One in-flight call's relay.
pub(crate) struct Route {
    upstream: Upstream,
    last: Option<f64>,
}

/// The in-flight calls of one downstream server, by the progress token the gateway's request
/// carries; also the downstream connection's client handler.
#[derive(Clone, Default)]
pub struct ProgressRelay {
    routes: Arc<Mutex<HashMap<ProgressToken, Route>>>,
}

impl ProgressRelay {
    /// Holds the routes while a request is sent, so a notification that races the send waits
    /// until its route is in place.
    pub(crate) async fn lock(&self) -> tokio::sync::MutexGuard<'_, HashMap<ProgressToken, Route>> {
        self.routes.lock().await
    }

    /// Relays `downstream`'s progress to `upstream` until the returned guard is dropped;
    /// `routes` is what [`lock`](Self::lock) gave.
    pub(crate) fn route(
        &self,
        routes: &mut HashMap<ProgressToken, Route>,
        downstream: ProgressToken,
        upstream: Upstream,
    ) -> RouteGuard {
        routes.insert(downstream.clone(), Route { upstream, last: None });
        RouteGuard { routes: Some(Arc::clone(&self.routes)), token: downstream }
    }

    /// How many calls currently relay progress.
    pub async fn routes(&self) -> usize {
        self.routes.lock().await.len()
    }
}

/// Removes a call's route when the call ends, however it ends.
pub(crate) struct RouteGuard {
    routes: Option<Arc<Mutex<HashMap<ProgressToken, Route>>>>,
    token: ProgressToken,
}

impl Drop for RouteGuard {
    fn drop(&mut self) {
        let Some(routes) = self.routes.take() else { return };
        let token = self.token.clone();
        if let Ok(mut held) = routes.try_lock() {
            held.remove(&token);
            return;
        }
        // A notification is being relayed: remove the route once it is done.
        if let Ok(runtime) = tokio::runtime::Handle::try_current() {
            runtime.spawn(async move {
                routes.lock().await.remove(&token);
            });
        }
    }
}

impl ClientHandler for ProgressRelay {
    async fn on_progress(&self, params: ProgressNotificationParam, _context: NotificationContext<RoleClient>) {
        let mut routes = self.routes.lock().await;
        let Some(route) = routes.get_mut(&params.progress_token) else {
            return;
        };
        if route.last.is_some_and(|last| params.progress <= last) {
            return;
        }
        route.last = Some(params.progress);
        let mut relayed = params;
        relayed.progress_token = route.upstream.token.clone();
        // Sent under the lock, so two notifications of one call leave in the order checked.
        if let Err(error) = route.upstream.peer.notify_progress(relayed).await {
            tracing::debug!(%error, "could not relay a progress notification to the client");
        }
    }
}

impl std::fmt::Debug for ProgressRelay {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ProgressRelay").finish_non_exhaustive()
    }
}
