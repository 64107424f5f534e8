//! Progress relay: a downstream server's `notifications/progress` for a forwarded call reach
//! the client that made the call, under the client's own progress token.
//!
//! rmcp gives every request the gateway sends downstream a fresh progress token. While a
//! call is in flight, [`ProgressRelay`] maps that token to the client's peer and token; the
//! downstream connection's handler looks notifications up there. A client that sent no
//! progress token gets no progress. Notifications are handled on separate tasks, so they may
//! arrive out of order: one that does not advance past the last relayed progress is dropped,
//! so the client never sees progress go backwards.
//!
//! rmcp spawns one task per incoming notification but hands a response straight to the
//! waiting call, so a call could end (and drop its route) before the tasks for its last
//! progress notifications ran, and the client would miss the final steps. The downstream
//! transport is therefore wrapped in `Counted`, which counts each progress notification,
//! per token, as it is read, in message order: every notification the server sent before
//! its response is counted before the response reaches the call. The call then waits, at
//! most [`SETTLE_WAIT`], until each counted notification has been handled, before it drops
//! its route and answers the client.

use std::borrow::Cow;
use std::collections::HashMap;
use std::sync::{Arc, PoisonError};
use std::time::Duration;

use rmcp::model::{JsonRpcMessage, JsonRpcNotification, ProgressNotificationParam, ProgressToken, ServerNotification};
use rmcp::service::{NotificationContext, RunningService, RxJsonRpcMessage, TxJsonRpcMessage};
use rmcp::transport::Transport;
use rmcp::{ClientHandler, Peer, RoleClient, RoleServer};
use tokio::sync::{Mutex, Notify};

/// How long a call that got its response waits for its progress notifications still being
/// handled. They take microseconds; the bound only matters for a server that sends progress
/// rmcp never hands to the handler (such as one carrying a subscription id).
pub const SETTLE_WAIT: Duration = Duration::from_secs(1);

/// A live MCP client connection to one downstream server, over stdio or streamable HTTP; its
/// handler relays the server's progress notifications ([`ProgressRelay`]).
pub(crate) type Connection = RunningService<RoleClient, ProgressRelay>;

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
    unhandled: Arc<Unhandled>,
}

/// Progress notifications read from the transport whose handler has not finished yet, by
/// token; a token is absent when none is outstanding.
#[derive(Default)]
struct Unhandled {
    counts: std::sync::Mutex<HashMap<ProgressToken, u64>>,
    handled: Notify,
}

impl Unhandled {
    fn counts(&self) -> std::sync::MutexGuard<'_, HashMap<ProgressToken, u64>> {
        self.counts.lock().unwrap_or_else(PoisonError::into_inner)
    }

    fn arrived(&self, token: &ProgressToken) {
        *self.counts().entry(token.clone()).or_default() += 1;
    }

    fn handled(&self, token: &ProgressToken) {
        let mut counts = self.counts();
        if let Some(count) = counts.get_mut(token) {
            *count -= 1;
            if *count == 0 {
                counts.remove(token);
            }
        }
        drop(counts);
        self.handled.notify_waiters();
    }
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

    /// Waits until every progress notification for `downstream` read so far has been handled
    /// (relayed or dropped), or [`SETTLE_WAIT`]; then forgets the token. A call that relays
    /// progress calls this once it has its response and before it drops its route.
    pub(crate) async fn settle(&self, downstream: &ProgressToken) {
        let unhandled = &self.unhandled;
        let settled = async {
            loop {
                let handled = unhandled.handled.notified();
                tokio::pin!(handled);
                // Registered before the check, so a handler finishing in between is not missed.
                handled.as_mut().enable();
                if !unhandled.counts().contains_key(downstream) {
                    return;
                }
                handled.await;
            }
        };
        if tokio::time::timeout(SETTLE_WAIT, settled).await.is_err() {
            tracing::debug!(token = ?downstream, "progress notifications still unhandled after the settle wait");
        }
        unhandled.counts().remove(downstream);
    }

    /// `transport`, counting the progress notifications it reads for [`settle`](Self::settle).
    /// Every downstream connection this relay handles must be served over it.
    pub(crate) fn counted<T: Transport<RoleClient>>(&self, transport: T) -> Counted<T> {
        Counted { inner: transport, unhandled: Arc::clone(&self.unhandled) }
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

/// A downstream transport that counts the progress notifications it reads, per token, before
/// rmcp sees them ([`ProgressRelay::counted`]); otherwise the transport it wraps.
pub(crate) struct Counted<T> {
    inner: T,
    unhandled: Arc<Unhandled>,
}

impl<T: Transport<RoleClient>> Transport<RoleClient> for Counted<T> {
    type Error = T::Error;

    fn name() -> Cow<'static, str> {
        T::name()
    }

    fn send(
        &mut self,
        item: TxJsonRpcMessage<RoleClient>,
    ) -> impl Future<Output = Result<(), Self::Error>> + Send + 'static {
        self.inner.send(item)
    }

    async fn receive(&mut self) -> Option<RxJsonRpcMessage<RoleClient>> {
        let message = self.inner.receive().await?;
        if let JsonRpcMessage::Notification(JsonRpcNotification {
            notification: ServerNotification::ProgressNotification(progress),
            ..
        }) = &message
        {
            self.unhandled.arrived(&progress.params.progress_token);
        }
        Some(message)
    }

    fn close(&mut self) -> impl Future<Output = Result<(), Self::Error>> + Send {
        self.inner.close()
    }
}

impl ClientHandler for ProgressRelay {
    async fn on_progress(&self, params: ProgressNotificationParam, _context: NotificationContext<RoleClient>) {
        let token = params.progress_token.clone();
        self.relay(params).await;
        self.unhandled.handled(&token);
    }
}

impl ProgressRelay {
    async fn relay(&self, params: ProgressNotificationParam) {
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
