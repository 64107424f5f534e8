use tinytools::{State, tool};

struct Crm;

/// Log a phone call with a contact in the CRM.
#[tool]
async fn crm_log_call(
    /// The contact's id.
    #[grounded(source = "crm_find_contact")]
    contact_id: String,
    /// The deal's id.
    #[grounded(from = crm_find_deal)]
    deal_id: String,
    /// The account's id.
    #[grounded = "crm_find_account"]
    account_id: String,
    /// What was discussed.
    #[grounded]
    #[grounded(from = "crm_find_contact")]
    notes: String,
    #[grounded]
    crm: State<Crm>,
) -> String {
    let _ = crm;
    format!("{contact_id} {deal_id} {account_id} {notes}")
}

fn main() {}
