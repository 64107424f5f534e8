use tinytools::tool;

// One fn, five mistakes: all are reported, not just the first.
#[tool(exposure = "deferred", family = "", colour = "blue")]
async fn tool_search<T>(
    query: String,
    (a, b): (u32, u32),
) -> String {
    query
}

fn main() {}
