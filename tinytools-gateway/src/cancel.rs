//! Cancellation across replicas (`--shared-sessions`): a client's `notifications/cancelled`
//! may land on another gateway process than the one running the request it cancels, as a
//! load balancer sends each POST wherever it likes.
//!
//! [`SharedCancellation`] keeps a directory beside the shared sessions. The process that
//! receives a cancellation for a request it is not running itself leaves a marker file named
//! by the session and the request id; every process polls, every [`POLL`], for the marker of
//! each call it is running, and cancels the call when it appears (the downstream server is
//! sent `notifications/cancelled` as for a local cancellation). The poll lives only as long as
//! the call, so it is bounded by the call's timeout. A marker is removed when its call ends;
//! markers left over (a cancellation that arrived after its call had finished) are removed
//! with the session, or when older than [`MARKER_TTL`] as a process opens the directory.

use std::collections::HashSet;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use rmcp::model::{Extensions, RequestId};
use tokio_util::sync::CancellationToken;

use crate::shared_dir::{SessionDirError, is_session_id, remove_stale};

/// How often a running call looks for a cancellation left by another process.
pub const POLL: Duration = Duration::from_millis(100);

/// How long a marker whose call is gone is kept.
pub const MARKER_TTL: Duration = Duration::from_secs(60 * 60);

/// The header naming a request's session.
const SESSION_HEADER: &str = "mcp-session-id";

/// Cancellation markers shared by the gateway processes behind one load balancer.
#[derive(Debug, Clone)]
pub struct SharedCancellation {
    dir: PathBuf,
    /// The markers of the calls this process is running.
    running: Arc<Mutex<HashSet<PathBuf>>>,
}

impl SharedCancellation {
    /// Markers in `dir` (created if missing), with those older than [`MARKER_TTL`] removed.
    ///
    /// # Errors
    /// [`SessionDirError::Create`] when the directory cannot be created.
    pub fn open(dir: impl Into<PathBuf>) -> Result<Self, SessionDirError> {
        let dir = dir.into();
        std::fs::create_dir_all(&dir).map_err(|source| SessionDirError::Create { dir: dir.clone(), source })?;
        remove_stale(&dir, MARKER_TTL, |_| true);
        Ok(Self { dir, running: Arc::default() })
    }

    /// The directory.
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// The marker of request `request` of session `session`, or `None` for a session id that
    /// is not one rmcp issues (letters, digits and `-`), so a header never names another path.
    fn marker(&self, session: &str, request: &RequestId) -> Option<PathBuf> {
        is_session_id(session).then(|| self.dir.join(format!("{session}.{}", request_key(request))))
    }

    /// Records the client's cancellation of `request` for the process running it, unless that
    /// is this one (rmcp has cancelled it here already).
    pub async fn post(&self, extensions: &Extensions, request: &RequestId) {
        let Some(marker) = session_of(extensions).and_then(|session| self.marker(&session, request)) else {
            return;
        };
        if self.running.lock().unwrap_or_else(PoisonError::into_inner).contains(&marker) {
            return;
        }
        if let Err(error) = tokio::fs::write(&marker, b"").await {
            tracing::warn!(%error, dir = %self.dir.display(), "could not share a cancellation with the other replicas");
        }
    }

    /// Watches for another process's cancellation of the call `request` (of the HTTP session
    /// in `extensions`) while the returned guard lives, cancelling `call` when one is seen.
    /// `None` outside an HTTP session.
    pub fn watch(&self, extensions: &Extensions, request: &RequestId, call: &CancellationToken) -> Option<Watch> {
        let marker = self.marker(&session_of(extensions)?, request)?;
        self.running.lock().unwrap_or_else(PoisonError::into_inner).insert(marker.clone());
        let stop = CancellationToken::new();
        let (seen, done, call) = (marker.clone(), stop.clone(), call.clone());
        tokio::spawn(async move {
            loop {
                tokio::select! {
                    () = done.cancelled() => return,
                    () = call.cancelled() => return,
                    () = tokio::time::sleep(POLL) => {}
                }
                if tokio::fs::try_exists(&seen).await.unwrap_or(false) {
                    tracing::debug!(marker = %seen.display(), "cancelled through another replica");
                    call.cancel();
                    return;
                }
            }
        });
        Some(Watch { marker, stop, running: Arc::clone(&self.running) })
    }

    /// Removes the markers of `session` (it ended).
    pub async fn forget_session(&self, session: &str) {
        let Ok(mut entries) = tokio::fs::read_dir(&self.dir).await else { return };
        let prefix = format!("{session}.");
        while let Ok(Some(entry)) = entries.next_entry().await {
            if entry.file_name().to_str().is_some_and(|name| name.starts_with(&prefix)) {
                let _ = tokio::fs::remove_file(entry.path()).await;
            }
        }
    }
}

/// A call being watched: dropping it ends the poll and removes the call's marker.
#[derive(Debug)]
pub struct Watch {
    marker: PathBuf,
    stop: CancellationToken,
    running: Arc<Mutex<HashSet<PathBuf>>>,
}

impl Drop for Watch {
    fn drop(&mut self) {
        self.stop.cancel();
        self.running.lock().unwrap_or_else(PoisonError::into_inner).remove(&self.marker);
        let _ = std::fs::remove_file(&self.marker);
    }
}

/// The HTTP session a request or notification came in, from the headers rmcp hands over.
fn session_of(extensions: &Extensions) -> Option<String> {
    let parts = extensions.get::<http::request::Parts>()?;
    parts.headers.get(SESSION_HEADER)?.to_str().ok().map(str::to_owned)
}

/// A request id as a file name: `n<number>`, `s<id>` for a short id of letters, digits, `-`
/// and `_`, else `h<hash of the id>`.
fn request_key(request: &RequestId) -> String {
    match request {
        RequestId::Number(n) => format!("n{n}"),
        RequestId::String(s)
            if !s.is_empty()
                && s.len() <= 64
                && s.chars().all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_') =>
        {
            format!("s{s}")
        }
        RequestId::String(s) => {
            // FNV-1a: stable across processes and builds, unlike the standard hasher.
            let hash =
                s.bytes().fold(0xcbf2_9ce4_8422_2325_u64, |h, b| (h ^ u64::from(b)).wrapping_mul(0x100_0000_01b3));
            format!("h{hash:016x}")
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn extensions(session: &str) -> Extensions {
        let (parts, ()) = http::Request::builder().header(SESSION_HEADER, session).body(()).unwrap().into_parts();
        let mut extensions = Extensions::new();
        extensions.insert(parts);
        extensions
    }

    #[test]
    fn request_ids_become_safe_file_names() {
        assert_eq!(request_key(&RequestId::Number(7)), "n7");
        assert_eq!(request_key(&RequestId::String("abc-1".into())), "sabc-1");
        let odd = request_key(&RequestId::String("../x".into()));
        assert!(odd.starts_with('h') && odd.len() == 17, "{odd}");
    }

    #[tokio::test]
    async fn a_cancellation_posted_by_one_process_cancels_the_call_another_runs() {
        let dir = std::env::temp_dir().join(format!("tinytools-gateway-cancel-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        let (here, there) = (SharedCancellation::open(&dir).unwrap(), SharedCancellation::open(&dir).unwrap());
        let session = extensions("0b6c3a55-6c1e-4a59-9d7e-3f1f8f1f2a10");
        let call = CancellationToken::new();
        let watch = here.watch(&session, &RequestId::Number(3), &call).unwrap();
        // Another request of the session is not this call.
        there.post(&session, &RequestId::Number(4)).await;
        tokio::time::sleep(POLL * 3).await;
        assert!(!call.is_cancelled());
        there.post(&session, &RequestId::Number(3)).await;
        tokio::time::timeout(POLL * 20, call.cancelled()).await.expect("cancelled within a few polls");
        drop(watch);
        assert!(!dir.join("0b6c3a55-6c1e-4a59-9d7e-3f1f8f1f2a10.n3").exists(), "the marker goes with the call");
        // A header that is not a session id never becomes a path; outside HTTP nothing is watched.
        assert!(here.watch(&extensions("../../etc"), &RequestId::Number(1), &call).is_none());
        assert!(here.watch(&Extensions::new(), &RequestId::Number(1), &call).is_none());
        here.forget_session("0b6c3a55-6c1e-4a59-9d7e-3f1f8f1f2a10").await;
        assert_eq!(std::fs::read_dir(&dir).unwrap().count(), 0, "the session's markers are gone");
        let _ = std::fs::remove_dir_all(&dir);
    }
}
