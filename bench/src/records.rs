//! Run records: what a bench program writes under `bench/records/<area>/` so that every figure
//! of a results page can be checked, `{command, date, commit, machine, output}`, where `output`
//! holds the summary figures and the per-item outcomes by id (never a benchmark's text).

use std::path::Path;
use std::process::Command;
use std::time::{SystemTime, UNIX_EPOCH};

use serde_json::{Value, json};

/// Today's date in UTC, `YYYY-MM-DD`.
pub fn today() -> String {
    let days = SystemTime::now().duration_since(UNIX_EPOCH).map_or(0, |d| d.as_secs() / 86_400);
    civil(i64::try_from(days).unwrap_or(0))
}

/// The date `days` after 1970-01-01 (Howard Hinnant's days-to-civil algorithm).
fn civil(days: i64) -> String {
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1_460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = yoe + era * 400 + i64::from(month <= 2);
    format!("{year:04}-{month:02}-{day:02}")
}

/// The checkout's commit (`git rev-parse --short HEAD`, with `+dirty` when tracked files
/// outside `bench/records/` have changes: a record being rewritten does not count), or
/// `unknown` where git cannot say.
pub fn commit() -> String {
    let git = |args: &[&str]| {
        Command::new("git")
            .args(args)
            .output()
            .ok()
            .filter(|out| out.status.success())
            .map(|out| String::from_utf8_lossy(&out.stdout).trim().to_owned())
    };
    match git(&["rev-parse", "--short", "HEAD"]) {
        Some(hash) if !hash.is_empty() => {
            let dirty =
                git(&["status", "--porcelain", "--untracked-files=no", "--", ":/", ":(exclude,top)bench/records"])
                    .is_some_and(|s| !s.is_empty());
            if dirty { format!("{hash}+dirty") } else { hash }
        }
        _ => "unknown".to_owned(),
    }
}

/// The program's command line as run, arguments with spaces quoted.
pub fn command_line() -> String {
    std::env::args()
        .enumerate()
        .map(|(i, arg)| {
            let arg = if i == 0 {
                Path::new(&arg).file_name().map_or(arg.clone(), |name| name.to_string_lossy().into_owned())
            } else {
                arg
            };
            if arg.contains(' ') { format!("'{arg}'") } else { arg }
        })
        .collect::<Vec<_>>()
        .join(" ")
}

/// Writes a record of this run to `path`: the command line, today, the commit, `machine` (a
/// note on what else ran, since timings depend on it) and `output`.
///
/// # Errors
/// When the file cannot be written (the directory is made first).
pub fn write(path: &Path, machine: &str, output: Value) -> Result<(), String> {
    let record = json!({
        "command": command_line(),
        "date": today(),
        "commit": commit(),
        "machine": machine,
        "output": output,
    });
    if let Some(dir) = path.parent().filter(|dir| !dir.as_os_str().is_empty()) {
        std::fs::create_dir_all(dir).map_err(|err| format!("cannot create {}: {err}", dir.display()))?;
    }
    let text = serde_json::to_string_pretty(&record).map_err(|err| err.to_string())?;
    std::fs::write(path, text + "\n").map_err(|err| format!("cannot write the record {}: {err}", path.display()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn days_become_dates() {
        assert_eq!(civil(0), "1970-01-01");
        assert_eq!(civil(20_429), "2025-12-07");
        assert_eq!(civil(11_016), "2000-02-29");
        assert_eq!(today().len(), 10);
    }
}
