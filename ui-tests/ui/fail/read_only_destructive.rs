use tinytools::tool;

/// Delete a file.
#[tool(read_only, destructive = true)]
async fn delete_file(path: String) -> String {
    path
}

fn main() {}
