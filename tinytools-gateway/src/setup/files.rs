//! Reading, backing up and atomically replacing files, and the unified diffs of `--dry-run`.

use std::io::Write;
use std::path::{Path, PathBuf};

use super::SetupError;

/// The backup `setup` makes of a client file, and `--undo` restores: `<file>.tinytools-backup`.
pub(super) fn backup_path(file: &Path) -> PathBuf {
    let mut name = file.file_name().unwrap_or_default().to_os_string();
    name.push(".tinytools-backup");
    file.with_file_name(name)
}

/// A file's text (UTF-8).
pub(super) fn read(file: &Path) -> Result<String, SetupError> {
    std::fs::read_to_string(file).map_err(|source| SetupError::Read { file: file.to_owned(), source })
}

/// Copies `file` (whose text is `text`) to its backup; an existing backup is kept when it is
/// identical, and refused otherwise. True when a backup was made.
pub(super) fn back_up(file: &Path, text: &str) -> Result<bool, SetupError> {
    let backup = backup_path(file);
    if backup.exists() {
        return match std::fs::read(&backup) {
            Ok(existing) if existing == text.as_bytes() => Ok(false),
            _ => Err(SetupError::BackupExists { file: file.to_owned(), backup }),
        };
    }
    // `copy` keeps the file's permissions: the backup may hold secrets too.
    std::fs::copy(file, &backup).map_err(|source| SetupError::Write { file: backup.clone(), source })?;
    Ok(true)
}

/// Writes `text` to `file` through a temporary file in the same directory and a rename, so the
/// file is never seen half-written. An existing file's permissions are kept; a new file is
/// readable by its owner only (it may hold secrets). Creates the directory when needed.
pub(super) fn write_atomic(file: &Path, text: &str) -> Result<(), SetupError> {
    let failed = |source| SetupError::Write { file: file.to_owned(), source };
    let dir = file.parent().filter(|dir| !dir.as_os_str().is_empty()).unwrap_or(Path::new("."));
    std::fs::create_dir_all(dir).map_err(failed)?;
    let mut name = std::ffi::OsString::from(".");
    name.push(file.file_name().unwrap_or_default());
    name.push(format!(".tinytools-tmp-{}", std::process::id()));
    let temp = dir.join(name);
    let written = (|| {
        let mut out = std::fs::File::create(&temp)?;
        out.write_all(text.as_bytes())?;
        out.sync_all()?;
        match std::fs::metadata(file) {
            Ok(existing) => std::fs::set_permissions(&temp, existing.permissions())?,
            Err(_) => owner_only(&temp)?,
        }
        std::fs::rename(&temp, file)
    })();
    if written.is_err() {
        let _ = std::fs::remove_file(&temp);
    }
    written.map_err(failed)
}

#[cfg(unix)]
fn owner_only(file: &Path) -> std::io::Result<()> {
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(file, std::fs::Permissions::from_mode(0o600))
}

#[cfg(not(unix))]
fn owner_only(_file: &Path) -> std::io::Result<()> {
    Ok(())
}

/// A unified diff of `file` from `old` to `new` (three lines of context).
pub(super) fn diff(file: &Path, old: &str, new: &str) -> String {
    let name = file.display().to_string();
    let old_name = if old.is_empty() { "/dev/null".to_owned() } else { name.clone() };
    similar::TextDiff::from_lines(old, new)
        .unified_diff()
        .context_radius(3)
        .header(&format!("{old_name} (now)"), &format!("{name} (after)"))
        .to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_diff_shows_the_changed_lines_with_headers() {
        let text = diff(Path::new("/x/mcp.json"), "a\nb\nc\n", "a\nB\nc\n");
        assert_eq!(text, "--- /x/mcp.json (now)\n+++ /x/mcp.json (after)\n@@ -1,3 +1,3 @@\n a\n-b\n+B\n c\n");
    }

    #[test]
    fn the_backup_sits_beside_the_file() {
        assert_eq!(backup_path(Path::new("/h/.claude.json")), Path::new("/h/.claude.json.tinytools-backup"));
    }
}
