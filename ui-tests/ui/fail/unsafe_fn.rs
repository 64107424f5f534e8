use tinytools::tool;

/// Read raw memory.
#[tool]
unsafe fn peek(address: u64) -> u64 {
    address
}

fn main() {}
