//! BFCL's own AST checker, from the bfcl-eval wheel, in a Python process of its own
//! (`bench/bfcl/checker.py`; `bench/bfcl/setup.sh` installs the wheel).

use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdin, ChildStdout, Command, Stdio};

use serde_json::{Value, json};

/// The checker script, beside this crate's sources.
pub fn script() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("bfcl").join("checker.py")
}

/// The Python that has the wheel: `TINYTOOLS_BFCL_PYTHON`, else the venv `setup.sh` makes.
pub fn default_python() -> PathBuf {
    if let Some(python) = std::env::var_os("TINYTOOLS_BFCL_PYTHON") {
        return python.into();
    }
    let cache = std::env::var_os("TINYTOOLS_BENCH_CACHE").map(PathBuf::from).unwrap_or_else(|| {
        Path::new(&std::env::var_os("HOME").unwrap_or_default()).join(".cache").join("tinytools-bench")
    });
    cache.join("bfcl").join("venv").join("bin").join("python")
}

/// A running checker.
pub struct Checker {
    child: Child,
    input: ChildStdin,
    output: BufReader<ChildStdout>,
    /// The wheel's data directory (`bfcl_eval/data`).
    pub data_dir: PathBuf,
    /// The wheel's version.
    pub version: String,
}

/// A checker's verdict on one query's calls.
#[derive(Clone, Debug, PartialEq)]
pub struct Verdict {
    /// Whether BFCL counts the calls right.
    pub valid: bool,
    /// Why not, in the checker's words.
    pub error: Option<String>,
}

impl Checker {
    /// Starts `python checker.py` and waits for it to say it is ready.
    ///
    /// # Errors
    /// When the process cannot start or does not load the wheel (run `bench/bfcl/setup.sh`).
    pub fn start(python: &Path) -> Result<Self, String> {
        let mut child = Command::new(python)
            .arg(script())
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()
            .map_err(|err| format!("cannot start {}: {err} (run bench/bfcl/setup.sh)", python.display()))?;
        let (Some(input), Some(output)) = (child.stdin.take(), child.stdout.take()) else {
            return Err("the checker's pipes did not open".to_owned());
        };
        let mut checker =
            Self { child, input, output: BufReader::new(output), data_dir: PathBuf::new(), version: String::new() };
        let ready = checker
            .read_line()
            .map_err(|err| format!("BFCL's checker did not start: {err} (run bench/bfcl/setup.sh)"))?;
        checker.data_dir = ready["data_dir"].as_str().unwrap_or_default().into();
        checker.version = ready["version"].as_str().unwrap_or_default().to_owned();
        Ok(checker)
    }

    /// BFCL's verdict on `calls` (`[{name: arguments}]`) for query `qid` of `category`.
    ///
    /// # Errors
    /// When the checker process has gone.
    pub fn check(&mut self, qid: &str, category: &str, calls: &[Value]) -> Result<Verdict, String> {
        let request = json!({"qid": qid, "category": category, "calls": calls});
        writeln!(self.input, "{request}").and_then(|()| self.input.flush()).map_err(|err| format!("checker: {err}"))?;
        let reply = self.read_line()?;
        let error = reply["error"].as_array().filter(|errors| !errors.is_empty()).map(|errors| {
            errors.iter().map(|e| e.as_str().map_or_else(|| e.to_string(), str::to_owned)).collect::<Vec<_>>().join(" ")
        });
        Ok(Verdict { valid: reply["valid"].as_bool().unwrap_or(false), error })
    }

    fn read_line(&mut self) -> Result<Value, String> {
        let mut line = String::new();
        match self.output.read_line(&mut line) {
            Ok(0) => Err("the checker exited".to_owned()),
            Ok(_) => serde_json::from_str(&line).map_err(|err| format!("checker said {line:?}: {err}")),
            Err(err) => Err(format!("checker: {err}")),
        }
    }
}

impl Drop for Checker {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}
