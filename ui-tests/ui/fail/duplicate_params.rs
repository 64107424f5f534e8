use tinytools::tool;

/// Send a message.
#[tool]
async fn send(
    to: String,
    #[serde(rename = "to")] recipient: String,
) -> String {
    format!("{to}{recipient}")
}

fn main() {}
