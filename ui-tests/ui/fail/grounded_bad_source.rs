use tinytools::tool;

/// Log a phone call with a contact in the CRM.
#[tool]
async fn crm_log_call(
    /// The contact's id.
    #[grounded(from = "crm find contact", from = "tool_search", from = "crm_lookup", from = "crm_lookup")]
    contact_id: String,
) -> String {
    contact_id
}

fn main() {}
