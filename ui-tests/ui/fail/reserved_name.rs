use tinytools::tool;

/// Search my own index.
#[tool]
async fn tool_search(query: String) -> String {
    query
}

fn main() {}
