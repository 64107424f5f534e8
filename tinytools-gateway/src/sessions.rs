//! HTTP sessions shared between gateway processes (`--shared-sessions`): what a session needs
//! to be served anywhere, kept in the shared cache directory, so several gateways can stand
//! behind an ordinary HTTP load balancer and any of them can answer any request.
//!
//! A streamable-HTTP session is created by the `initialize` request and named by its
//! `Mcp-Session-Id`. [`FileSessionStore`] keeps each session's handshake (the client's
//! `initialize` parameters: its name, version, capabilities and protocol version, nothing
//! secret) in `<dir>/<session id>.json`. A request carrying a session id the process does not
//! hold is served after replaying that handshake (rmcp's session restore); a `DELETE` of the
//! session removes the file, so every replica then answers the id with 404. Everything else a
//! gateway serves is the same in every process sharing the config and the cache (the
//! manifests are in the cache; each process starts its own downstream servers), except the
//! tools a session's searches promote under the `--list-changed` profile, which is why the two
//! options do not combine.
//!
//! Cancellations one process passes to another are kept in `<dir>/cancelled/`
//! ([`crate::cancel`]); a session's are removed with it.
//!
//! Files are written whole to a temporary name and renamed into place. A session file is
//! touched each time it is restored, and files untouched for [`SESSION_TTL`] are removed when
//! a store is opened, so sessions that were never deleted do not pile up.

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, SystemTime};

use rmcp::transport::streamable_http_server::session::{SessionState, SessionStore, SessionStoreError};

use crate::cancel::SharedCancellation;

/// How long a session file lives after its last use.
pub const SESSION_TTL: Duration = Duration::from_secs(24 * 60 * 60);

pub use crate::shared_dir::SessionDirError;
use crate::shared_dir::{is_session_id, remove_stale};

/// Sessions kept as one file each in a directory shared by every gateway process, with the
/// cancellations one process passes to another ([`SharedCancellation`], in `cancelled/`).
#[derive(Debug, Clone)]
pub struct FileSessionStore {
    dir: PathBuf,
    cancellations: SharedCancellation,
}

static TEMP_COUNTER: AtomicU64 = AtomicU64::new(0);

impl FileSessionStore {
    /// A store in `dir` (created if missing), with the files untouched for [`SESSION_TTL`]
    /// removed.
    ///
    /// # Errors
    /// [`SessionDirError::Create`] when the directory cannot be created.
    pub fn open(dir: impl Into<PathBuf>) -> Result<Self, SessionDirError> {
        let dir = dir.into();
        std::fs::create_dir_all(&dir).map_err(|source| SessionDirError::Create { dir: dir.clone(), source })?;
        let cancellations = SharedCancellation::open(dir.join("cancelled"))?;
        let store = Self { dir, cancellations };
        store.prune(SESSION_TTL);
        Ok(store)
    }

    /// The directory.
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// The cancellations shared through this directory.
    pub fn cancellations(&self) -> &SharedCancellation {
        &self.cancellations
    }

    /// The file of a session id, or `None` for an id that is not one rmcp issues (a UUID:
    /// letters, digits and `-`), so a client's header never names another path.
    fn path(&self, id: &str) -> Option<PathBuf> {
        is_session_id(id).then(|| self.dir.join(format!("{id}.json")))
    }

    /// Whether the session `id` is stored (an id that is not one rmcp issues is not).
    pub async fn holds(&self, id: &str) -> bool {
        match self.path(id) {
            Some(path) => tokio::fs::try_exists(path).await.unwrap_or(false),
            None => false,
        }
    }

    /// Removes the session files untouched for `ttl`.
    fn prune(&self, ttl: Duration) {
        remove_stale(&self.dir, ttl, |path| path.extension().is_some_and(|ext| ext == "json"));
    }
}

#[async_trait::async_trait]
impl SessionStore for FileSessionStore {
    async fn load(&self, session_id: &str) -> Result<Option<SessionState>, SessionStoreError> {
        let Some(path) = self.path(session_id) else { return Ok(None) };
        let text = match tokio::fs::read_to_string(&path).await {
            Ok(text) => text,
            Err(error) if error.kind() == std::io::ErrorKind::NotFound => return Ok(None),
            Err(error) => return Err(Box::new(error)),
        };
        match serde_json::from_str::<SessionState>(&text) {
            Ok(state) => {
                // Restored: the session is in use, so pruning leaves it alone.
                if let Ok(file) = std::fs::File::options().append(true).open(&path) {
                    let _ = file.set_modified(SystemTime::now());
                }
                Ok(Some(state))
            }
            Err(error) => {
                tracing::warn!(path = %path.display(), %error, "a shared session file is corrupt; the session is unknown");
                Ok(None)
            }
        }
    }

    async fn store(&self, session_id: &str, state: &SessionState) -> Result<(), SessionStoreError> {
        let Some(path) = self.path(session_id) else { return Ok(()) };
        let text = serde_json::to_string(state)?;
        let temp =
            path.with_extension(format!("tmp.{}.{}", std::process::id(), TEMP_COUNTER.fetch_add(1, Ordering::Relaxed)));
        tokio::fs::write(&temp, text).await?;
        if let Err(error) = tokio::fs::rename(&temp, &path).await {
            let _ = tokio::fs::remove_file(&temp).await;
            return Err(Box::new(error));
        }
        Ok(())
    }

    async fn delete(&self, session_id: &str) -> Result<(), SessionStoreError> {
        let Some(path) = self.path(session_id) else { return Ok(()) };
        self.cancellations.forget_session(session_id).await;
        match tokio::fs::remove_file(&path).await {
            Err(error) if error.kind() != std::io::ErrorKind::NotFound => Err(Box::new(error)),
            _ => Ok(()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rmcp::model::InitializeRequestParams;

    fn temp_dir(tag: &str) -> PathBuf {
        let dir = std::env::temp_dir().join(format!("tinytools-gateway-sessions-{tag}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        dir
    }

    #[tokio::test]
    async fn a_session_stored_by_one_store_loads_in_another_until_deleted() {
        let dir = temp_dir("round");
        let (one, two) = (FileSessionStore::open(&dir).unwrap(), FileSessionStore::open(&dir).unwrap());
        let id = "0b6c3a55-6c1e-4a59-9d7e-3f1f8f1f2a10";
        let state = SessionState::new(InitializeRequestParams::default());
        one.store(id, &state).await.unwrap();
        let loaded = two.load(id).await.unwrap().expect("the other store sees it");
        assert_eq!(loaded.initialize_params.protocol_version, state.initialize_params.protocol_version);
        two.delete(id).await.unwrap();
        assert!(one.load(id).await.unwrap().is_none());
        two.delete(id).await.unwrap();
        // An id that is not a UUID never becomes a path.
        assert!(one.load("../config").await.unwrap().is_none());
        one.store("a/b", &state).await.unwrap();
        let files = std::fs::read_dir(&dir).unwrap().flatten().filter(|entry| entry.path().is_file()).count();
        assert_eq!(files, 0, "nothing was written");
        std::fs::write(dir.join("corrupt.json"), "{").unwrap();
        assert!(one.load("corrupt").await.unwrap().is_none());
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[test]
    fn files_untouched_past_the_ttl_are_pruned() {
        let dir = temp_dir("prune");
        let store = FileSessionStore::open(&dir).unwrap();
        let old = dir.join("old.json");
        std::fs::write(&old, "{}").unwrap();
        let file = std::fs::File::options().append(true).open(&old).unwrap();
        file.set_modified(SystemTime::now() - Duration::from_secs(3_600)).unwrap();
        std::fs::write(dir.join("new.json"), "{}").unwrap();
        store.prune(Duration::from_secs(60));
        assert!(!old.exists());
        assert!(dir.join("new.json").exists());
        let _ = std::fs::remove_dir_all(&dir);
    }
}
