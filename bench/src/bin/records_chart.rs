//! Draws the results pages' charts from the committed run records alone
//! (`tinytools_bench::charts`): nothing is run, so anyone can redraw and check them.
//!
//! ```text
//! cargo run --release -p tinytools-bench --bin records_chart -- [--records bench/records] [--out docs]
//! ```

use std::path::PathBuf;

fn main() {
    if let Err(message) = run() {
        eprintln!("records_chart: {message}");
        std::process::exit(2);
    }
}

fn run() -> Result<(), String> {
    let (mut records, mut out) = (PathBuf::from("bench/records"), PathBuf::from("docs"));
    let mut args = std::env::args().skip(1);
    while let Some(flag) = args.next() {
        let mut value = || args.next().map(PathBuf::from).ok_or_else(|| format!("{flag} needs a directory"));
        match flag.as_str() {
            "--records" => records = value()?,
            "--out" => out = value()?,
            other => return Err(format!("unknown option `{other}`: --records DIR, --out DIR")),
        }
    }
    for path in tinytools_bench::charts::draw_from_records(&records, &out)? {
        println!("{}", path.display());
    }
    Ok(())
}
