//! Where the gateway's benchmarks find the binaries they launch (shared by `cold_start` and
//! `gateway_bench` through `#[path]`).

use std::path::PathBuf;

/// The path in `variable`, else `name` beside this example (another example, such as the
/// fixture server) or in the profile directory above it (`target/release/examples/x` →
/// `target/release/name`, a binary), when it exists.
pub(crate) fn beside(variable: &str, name: &str) -> Result<PathBuf, Box<dyn std::error::Error>> {
    if let Some(path) = std::env::var_os(variable) {
        return Ok(path.into());
    }
    let exe = std::env::current_exe()?;
    let examples = exe.parent().ok_or("no target directory")?;
    let example = examples.join(name).with_extension(std::env::consts::EXE_EXTENSION);
    if example.exists() {
        return Ok(example);
    }
    let path = examples.parent().map(|dir| dir.join(name)).ok_or("no target directory")?;
    if path.exists() {
        Ok(path)
    } else {
        Err(format!(
            "{} not found; build it with `cargo build --release -p tinytools-gateway --bins --examples`, or set {variable}",
            path.display()
        )
        .into())
    }
}
