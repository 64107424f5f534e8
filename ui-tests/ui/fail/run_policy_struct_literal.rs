// `RunPolicy` is `#[non_exhaustive]`: outside tinytools it is built from `RunPolicy::default()`
// with its `with_*` methods (or a field set on a value), never as a struct literal.
use tinytools::RunPolicy;

fn main() {
    let _policy = RunPolicy { max_turns: 4, ..RunPolicy::default() };
}
