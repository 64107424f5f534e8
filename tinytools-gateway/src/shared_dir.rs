//! What the shared session directory and the shared cancellations (`sessions`, `cancel`) both
//! need: the error when the directory cannot be made, the shape of a session id, and the
//! removal of files left untouched too long.

use std::path::{Path, PathBuf};
use std::time::{Duration, SystemTime};

/// Why the session directory cannot be used.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum SessionDirError {
    /// The directory could not be created.
    #[error(
        "--shared-sessions: could not create the session directory {} ({source}); check that the cache \
         directory (--cache-dir) is writable by every gateway process",
        dir.display()
    )]
    Create {
        /// The directory.
        dir: PathBuf,
        /// What the operating system said.
        #[source]
        source: std::io::Error,
    },
}

/// Whether `id` has the shape of a session id rmcp issues (letters, digits and `-`, at most 64),
/// so that a client's header can name no other path.
pub(crate) fn is_session_id(id: &str) -> bool {
    !id.is_empty() && id.len() <= 64 && id.chars().all(|c| c.is_ascii_alphanumeric() || c == '-')
}

/// Removes the files in `dir` that `matches` and that were untouched for `ttl`.
pub(crate) fn remove_stale(dir: &Path, ttl: Duration, matches: impl Fn(&Path) -> bool) {
    let Ok(entries) = std::fs::read_dir(dir) else { return };
    let now = SystemTime::now();
    for entry in entries.flatten() {
        let stale = entry
            .metadata()
            .and_then(|meta| meta.modified())
            .is_ok_and(|modified| now.duration_since(modified).is_ok_and(|age| age > ttl));
        if stale && matches(&entry.path()) {
            let _ = std::fs::remove_file(entry.path());
        }
    }
}
