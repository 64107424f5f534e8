//! What the benchmark's programs share on the command line: the start-up around their async
//! `run`, the names `--dialect` takes, and whole-number options.

use std::future::Future;

use tinytools::dialect::Dialect;

/// Parses the arguments with `parse` and runs `run` on a two-worker runtime, reporting as
/// `program`: a bad argument exits 2, a failed run 1.
pub fn main<O, F>(program: &str, parse: impl FnOnce(std::env::Args) -> Result<O, String>, run: impl FnOnce(O) -> F)
where
    F: Future<Output = Result<(), String>>,
{
    let mut args = std::env::args();
    args.next();
    let options = match parse(args) {
        Ok(options) => options,
        Err(message) => {
            eprintln!("{program}: {message}");
            std::process::exit(2);
        }
    };
    let runtime = match tokio::runtime::Builder::new_multi_thread().worker_threads(2).enable_all().build() {
        Ok(runtime) => runtime,
        Err(err) => {
            eprintln!("{program}: cannot start a runtime: {err}");
            std::process::exit(1);
        }
    };
    if let Err(message) = runtime.block_on(run(options)) {
        eprintln!("{program}: {message}");
        std::process::exit(1);
    }
}

/// The dialect `--dialect` names: `auto`, `native`, `json` or `pformat`.
///
/// ```
/// use tinytools::dialect::Dialect;
/// assert_eq!(tinytools_bench::cli::dialect("pformat"), Ok(Dialect::PFormat));
/// assert!(tinytools_bench::cli::dialect("xml").is_err());
/// ```
pub fn dialect(name: &str) -> Result<Dialect, String> {
    tinytools_examples::live::dialect(name)
}

/// The whole number `flag` was given: `--flag takes a whole number` otherwise.
///
/// ```
/// assert_eq!(tinytools_bench::cli::whole_number("--every", "10"), Ok(10));
/// assert_eq!(tinytools_bench::cli::whole_number("--every", "ten"), Err("--every takes a whole number".to_owned()));
/// ```
pub fn whole_number(flag: &str, text: &str) -> Result<usize, String> {
    text.parse().map_err(|_| format!("{flag} takes a whole number"))
}
