use tinytools::tool;

/// Add two numbers.
#[tool]
async fn add((a, b): (i64, i64)) -> i64 {
    a + b
}

fn main() {}
