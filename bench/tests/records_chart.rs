//! The results pages' charts redraw from the committed run records alone.

#![allow(clippy::unwrap_used, clippy::expect_used)]
use std::path::Path;

#[test]
fn the_charts_draw_from_the_committed_records() {
    let records = Path::new(env!("CARGO_MANIFEST_DIR")).join("records");
    let out = std::env::temp_dir().join(format!("tinytools-records-chart-{}", std::process::id()));
    let written = tinytools_bench::charts::draw_from_records(&records, &out).expect("the records draw");
    let livemcp = out.join("external-livemcp.svg");
    assert!(written.contains(&livemcp), "{written:?}");
    let svg = std::fs::read_to_string(&livemcp).unwrap();
    assert!(svg.contains("any-step R@20") && svg.contains("minilm summary"), "the chart has its groups and series");
    for path in &written {
        assert!(std::fs::metadata(path).unwrap().len() > 1_000, "{} is drawn", path.display());
    }
    let _ = std::fs::remove_dir_all(out);
}
