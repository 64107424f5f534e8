use std::cell::RefCell;

use tinytools::{State, tool};

struct Counter {
    calls: RefCell<u32>,
}

/// Count the calls.
#[tool]
async fn count(counter: State<Counter>) -> u32 {
    *counter.calls.borrow()
}

fn main() {}
