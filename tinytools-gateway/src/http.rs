//! The gateway over streamable HTTP (`--http`): rmcp's [`StreamableHttpService`] on a bare
//! hyper HTTP/1 server, at `/mcp`.
//!
//! Every MCP session gets its own [`Gateway::session`] of the one gateway: one supervisor,
//! one catalogue, the same stable `tools/list`; with the `list_changed` profile, the tools a
//! session's searches promote are that session's alone. The listener binds only the address it is given. A
//! non-loopback address is refused unless a bearer token is configured; with a token, a
//! request without `Authorization: Bearer <token>` is answered `401 Unauthorized` before rmcp
//! sees it. The token is never printed: [`HttpOptions`]'s `Debug` redacts it.
//!
//! A client ends its session with `DELETE` (the streamable HTTP transport's session
//! termination); the gateway answers `200 OK`, which every SDK reads as success (rmcp's own
//! `202 Accepted` makes the Python SDK log "Session termination failed: 202"). With
//! [`HttpOptions::with_shared_sessions`], sessions live in a directory every gateway process
//! shares ([`crate::sessions`]): any process answers any request of any session, so several
//! stand behind an ordinary load balancer, and a session deleted through one is unknown (404)
//! to all; a client's `notifications/cancelled` reaches the call it names whichever process
//! runs it ([`crate::cancel`]).
//!
//! ```no_run
//! # async fn run(gateway: tinytools_gateway::Gateway) -> Result<(), tinytools_gateway::http::HttpError> {
//! use tinytools_gateway::http::{HttpOptions, HttpServer};
//!
//! let options = HttpOptions::new("127.0.0.1:8931".parse().unwrap());
//! let server = HttpServer::bind(options).await?;
//! eprintln!("serving MCP at {}", server.url());
//! server.serve(gateway, tokio_util::sync::CancellationToken::new()).await;
//! # Ok(()) }
//! ```

use std::convert::Infallible;
use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use bytes::Bytes;
use http::{Method, Request, Response, StatusCode, header};
use http_body_util::{BodyExt, Full, combinators::BoxBody};
use hyper::body::Incoming;
use hyper_util::rt::TokioIo;
use rmcp::transport::streamable_http_server::session::SessionManager;
use rmcp::transport::streamable_http_server::session::local::LocalSessionManager;
use rmcp::transport::{StreamableHttpServerConfig, StreamableHttpService};
use tokio::net::TcpListener;
use tokio_util::sync::CancellationToken;

use crate::gateway::Gateway;
use crate::sessions::FileSessionStore;

/// The header naming a request's session.
const SESSION_HEADER: &str = "mcp-session-id";

/// The path the MCP endpoint is served at.
pub const MCP_PATH: &str = "/mcp";

/// Why the HTTP listener could not start.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum HttpError {
    /// The address is not a loopback address and no token is configured.
    #[error(
        "--http {addr}: refusing to listen on a non-loopback address without a bearer token, \
         as anyone who can reach it could call every configured server; use 127.0.0.1:<PORT>, \
         or set a token with --token-env <VAR>"
    )]
    NotLoopback {
        /// The address asked for.
        addr: SocketAddr,
    },
    /// The token is empty.
    #[error("the bearer token is empty; put a non-empty token in the variable named by --token-env")]
    EmptyToken,
    /// The address could not be bound.
    #[error("--http {addr}: could not listen ({source}); is the port already in use? Pick another port")]
    Bind {
        /// The address asked for.
        addr: SocketAddr,
        /// What the operating system said.
        #[source]
        source: std::io::Error,
    },
}

/// Where and how the gateway listens.
#[derive(Clone)]
pub struct HttpOptions {
    addr: SocketAddr,
    token: Option<Arc<str>>,
    sessions: Option<FileSessionStore>,
}

impl HttpOptions {
    /// Listen on `addr` (port 0 picks a free port), without a token.
    pub fn new(addr: SocketAddr) -> Self {
        Self { addr, token: None, sessions: None }
    }

    /// Requires `Authorization: Bearer <token>` on every request.
    #[must_use]
    pub fn with_token(mut self, token: impl Into<String>) -> Self {
        self.token = Some(Arc::from(token.into()));
        self
    }

    /// Keeps every session in `store`, shared with the other gateway processes that use it:
    /// any of them answers any request of any session.
    #[must_use]
    pub fn with_shared_sessions(mut self, store: FileSessionStore) -> Self {
        self.sessions = Some(store);
        self
    }

    /// The address asked for.
    pub fn addr(&self) -> SocketAddr {
        self.addr
    }

    /// Whether a token is required.
    pub fn has_token(&self) -> bool {
        self.token.is_some()
    }
}

impl std::fmt::Debug for HttpOptions {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let token = self.token.as_ref().map(|_| "<redacted>");
        f.debug_struct("HttpOptions")
            .field("addr", &self.addr)
            .field("token", &token)
            .field("sessions", &self.sessions.as_ref().map(FileSessionStore::dir))
            .finish()
    }
}

/// A bound listener, not serving yet.
#[derive(Debug)]
pub struct HttpServer {
    listener: TcpListener,
    addr: SocketAddr,
    options: HttpOptions,
}

impl HttpServer {
    /// Checks the options and binds the address.
    ///
    /// # Errors
    /// [`HttpError::NotLoopback`] for a non-loopback address without a token,
    /// [`HttpError::EmptyToken`], or [`HttpError::Bind`].
    pub async fn bind(options: HttpOptions) -> Result<Self, HttpError> {
        if options.token.as_deref().is_some_and(str::is_empty) {
            return Err(HttpError::EmptyToken);
        }
        if !options.addr.ip().is_loopback() && options.token.is_none() {
            return Err(HttpError::NotLoopback { addr: options.addr });
        }
        let listener =
            TcpListener::bind(options.addr).await.map_err(|source| HttpError::Bind { addr: options.addr, source })?;
        let addr = listener.local_addr().map_err(|source| HttpError::Bind { addr: options.addr, source })?;
        Ok(Self { listener, addr, options })
    }

    /// The address bound (with the port chosen when 0 was asked for).
    pub fn local_addr(&self) -> SocketAddr {
        self.addr
    }

    /// The MCP endpoint's URL, such as `http://127.0.0.1:8931/mcp`.
    pub fn url(&self) -> String {
        format!("http://{}{MCP_PATH}", self.addr)
    }

    /// Serves `gateway` until `shutdown` is cancelled, each MCP session on its own
    /// [`Gateway::session`] (clones of a gateway share its promoted tools). A connection that
    /// fails is logged and dropped; the listener goes on.
    pub async fn serve(self, gateway: Gateway, shutdown: CancellationToken) {
        let mut config = StreamableHttpServerConfig::default().with_cancellation_token(shutdown.child_token());
        if !self.addr.ip().is_loopback() {
            // Reached by name or address from elsewhere: the token, not the Host header,
            // keeps other pages and hosts out.
            config = config.disable_allowed_hosts();
        }
        let mut manager = LocalSessionManager::default();
        if let Some(store) = &self.options.sessions {
            config.session_store = Some(Arc::new(store.clone()));
            // A response stream cut by a process that died cannot be resumed from another one
            // (the events are not shared): without a retry hint, the client's request fails at
            // once instead of waiting on a resumption that never comes.
            config = config.with_sse_retry(None);
            manager.session_config.sse_retry = None;
        }
        let manager = Arc::new(manager);
        let shared = self.options.sessions.clone().map(|store| (store, Arc::clone(&manager)));
        let gateway = match &self.options.sessions {
            Some(store) => gateway.with_shared_cancellation(store.cancellations().clone()),
            None => gateway,
        };
        let service = StreamableHttpService::new(move || Ok(gateway.session()), manager, config);
        let endpoint = Arc::new(Endpoint { service, token: self.options.token.clone(), shared });
        loop {
            let accepted = tokio::select! {
                accepted = self.listener.accept() => accepted,
                () = shutdown.cancelled() => break,
            };
            let stream = match accepted {
                Ok((stream, _peer)) => stream,
                Err(error) => {
                    tracing::warn!(%error, "could not accept an HTTP connection");
                    continue;
                }
            };
            let endpoint = Arc::clone(&endpoint);
            let shutdown = shutdown.clone();
            tokio::spawn(async move {
                let service = hyper::service::service_fn(move |request: Request<Incoming>| {
                    let endpoint = Arc::clone(&endpoint);
                    async move { Ok::<_, Infallible>(endpoint.respond(request).await) }
                });
                let connection = hyper::server::conn::http1::Builder::new()
                    .serve_connection(TokioIo::new(stream), service)
                    .with_upgrades();
                tokio::pin!(connection);
                tokio::select! {
                    served = connection.as_mut() => {
                        if let Err(error) = served {
                            tracing::debug!(%error, "an HTTP connection ended with an error");
                        }
                    }
                    () = shutdown.cancelled() => {
                        // Finish the request in flight (rmcp has closed its sessions' streams).
                        connection.as_mut().graceful_shutdown();
                        let _ = tokio::time::timeout(Duration::from_secs(5), connection.as_mut()).await;
                    }
                }
            });
        }
    }
}

type Body = BoxBody<Bytes, Infallible>;

struct Endpoint {
    service: StreamableHttpService<Gateway, LocalSessionManager>,
    token: Option<Arc<str>>,
    /// The shared sessions, and the manager holding this process's copies of them.
    shared: Option<(FileSessionStore, Arc<LocalSessionManager>)>,
}

impl Endpoint {
    async fn respond(&self, request: Request<Incoming>) -> Response<Body> {
        if request.uri().path() != MCP_PATH {
            return plain(StatusCode::NOT_FOUND, &format!("not found: the MCP endpoint is {MCP_PATH}\n"));
        }
        if let Some(token) = &self.token
            && !authorized(request.headers().get(header::AUTHORIZATION), token)
        {
            let mut response = plain(
                StatusCode::UNAUTHORIZED,
                "unauthorized: send the gateway's token as `Authorization: Bearer <token>`\n",
            );
            response.headers_mut().insert(header::WWW_AUTHENTICATE, http::HeaderValue::from_static("Bearer"));
            return response;
        }
        let delete = request.method() == Method::DELETE;
        if !delete && let Some(gone) = self.deleted_elsewhere(&request).await {
            return gone;
        }
        let response = self.service.handle(request).await;
        if delete && response.status() == StatusCode::ACCEPTED {
            // The session is terminated: say so as a completed request.
            let mut ended = Response::new(Full::new(Bytes::new()).boxed());
            *ended.status_mut() = StatusCode::OK;
            return ended;
        }
        response
    }

    /// With shared sessions, a request of a session this process still holds but whose file
    /// is gone (another process answered its `DELETE`) is answered 404, as for any unknown
    /// session, and the copy here is closed.
    async fn deleted_elsewhere(&self, request: &Request<Incoming>) -> Option<Response<Body>> {
        let (store, manager) = self.shared.as_ref()?;
        let id = request.headers().get(SESSION_HEADER)?.to_str().ok()?;
        if store.holds(id).await {
            return None;
        }
        let id: rmcp::transport::streamable_http_server::session::SessionId = id.to_owned().into();
        if manager.has_session(&id).await.unwrap_or(false) {
            let _ = manager.close_session(&id).await;
        }
        Some(plain(StatusCode::NOT_FOUND, "Not Found: Session not found\n"))
    }
}

/// Whether the header is `Bearer <token>`, compared in time independent of where it differs.
fn authorized(value: Option<&http::HeaderValue>, token: &str) -> bool {
    let Some(value) = value else { return false };
    let value = value.as_bytes();
    let Some(scheme) = value.get(..7) else { return false };
    if !scheme.eq_ignore_ascii_case(b"bearer ") {
        return false;
    }
    let given = value[7..].trim_ascii();
    let expected = token.as_bytes();
    let mut differ = given.len() ^ expected.len();
    for (i, byte) in expected.iter().enumerate() {
        differ |= usize::from(byte ^ given.get(i).copied().unwrap_or(0));
    }
    differ == 0
}

fn plain(status: StatusCode, text: &str) -> Response<Body> {
    let mut response = Response::new(Full::new(Bytes::from(text.to_owned())).boxed());
    *response.status_mut() = status;
    response.headers_mut().insert(header::CONTENT_TYPE, http::HeaderValue::from_static("text/plain; charset=utf-8"));
    response
}

#[cfg(test)]
mod tests {
    use super::*;

    fn header(text: &str) -> http::HeaderValue {
        http::HeaderValue::from_str(text).unwrap()
    }

    #[test]
    fn only_the_exact_bearer_token_is_authorized() {
        assert!(authorized(Some(&header("Bearer s3cret")), "s3cret"));
        assert!(authorized(Some(&header("bearer s3cret")), "s3cret"));
        assert!(!authorized(Some(&header("Bearer s3cre")), "s3cret"));
        assert!(!authorized(Some(&header("Bearer s3cretX")), "s3cret"));
        assert!(!authorized(Some(&header("Basic s3cret")), "s3cret"));
        assert!(!authorized(Some(&header("s3cret")), "s3cret"));
        assert!(!authorized(None, "s3cret"));
    }

    #[tokio::test]
    async fn a_non_loopback_address_needs_a_token() {
        let error = HttpServer::bind(HttpOptions::new("0.0.0.0:0".parse().unwrap())).await.unwrap_err();
        assert!(matches!(error, HttpError::NotLoopback { .. }), "{error}");
        assert!(error.to_string().contains("--token-env"), "{error}");
        let empty = HttpServer::bind(HttpOptions::new("127.0.0.1:0".parse().unwrap()).with_token("")).await;
        assert!(matches!(empty, Err(HttpError::EmptyToken)));
        let options = HttpOptions::new("127.0.0.1:0".parse().unwrap()).with_token("s3cret");
        assert!(!format!("{options:?}").contains("s3cret"));
    }
}
