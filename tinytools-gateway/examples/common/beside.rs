//! Where the gateway's benchmarks find the binaries they launch (shared by `cold_start` and
//! `gateway_bench` through `#[path]`).

use std::path::{Path, PathBuf};

/// The path in `variable`, else `name` in the profile directory above this example's
/// (`target/release/examples/x` → `target/release/name`), when it exists.
pub(crate) fn beside(variable: &str, name: &str) -> Result<PathBuf, Box<dyn std::error::Error>> {
    if let Some(path) = std::env::var_os(variable) {
        return Ok(path.into());
    }
    let exe = std::env::current_exe()?;
    let path = exe.parent().and_then(Path::parent).map(|dir| dir.join(name)).ok_or("no target directory")?;
    if path.exists() {
        Ok(path)
    } else {
        Err(format!(
            "{} not found; build it with `cargo build --release -p tinytools-gateway --features fixture --bins`, or set {variable}",
            path.display()
        )
        .into())
    }
}
