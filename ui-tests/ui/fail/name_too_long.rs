use tinytools::tool;

/// A tool whose name is longer than providers accept.
#[tool(name = "this_tool_name_is_far_longer_than_the_sixty_four_bytes_providers_accept")]
async fn long_name() -> String {
    String::new()
}

fn main() {}
