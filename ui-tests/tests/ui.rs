//! trybuild suites: `ui/pass` compiles and runs; every case in `ui/fail` fails to compile with
//! exactly the committed `.stderr`. Regenerate with `TRYBUILD=overwrite` after reviewing.

#[test]
fn ui() {
    let cases = trybuild::TestCases::new();
    cases.pass("ui/pass/*.rs");
    cases.compile_fail("ui/fail/*.rs");
}
