//! `#[grounded]` on parameters: plain, with sources, under a serde rename, in a `#[tools]`
//! group; the spec carries each argument by the name the model sends.

use std::sync::Arc;

use tinytools::{Grounding, ToolContext, ToolGroup, ToolRegistry, TypedTool, tool, tools};

/// Log a phone call with a contact in the CRM.
#[tool(exposure = "deferred", family = "crm")]
async fn crm_log_call(
    /// The contact's id, from crm_find_contact or crm_list_contacts.
    #[grounded(from = "crm_find_contact", from = "crm_list_contacts")]
    contact_id: String,
    /// The deal's id.
    #[grounded]
    #[serde(rename = "dealId")]
    deal_id: Option<String>,
    /// What was discussed.
    notes: String,
    ctx: &ToolContext,
) -> String {
    format!("{contact_id} {deal_id:?} {notes} {}", ctx.call_id())
}

struct Tickets;

#[tools]
impl Tickets {
    /// Close a ticket.
    #[tool]
    async fn close_ticket(
        &self,
        /// The ticket's key.
        #[grounded(from = "find_ticket")]
        key: String,
    ) -> String {
        key
    }
}

fn main() {
    const LOG_CALL: [Grounding; 2] = [
        Grounding::new("contact_id").with_sources(&["crm_find_contact", "crm_list_contacts"]),
        Grounding::new("dealId"),
    ];
    assert_eq!(CrmLogCall.spec().grounding, LOG_CALL);
    let mut registry = ToolRegistry::new();
    registry.register(CrmLogCall).expect("every grounded argument is a property of the schema");
    let group = Arc::new(Tickets).tools();
    let close = group.iter().find(|tool| tool.name() == "close_ticket").expect("in the group");
    assert_eq!(close.grounding(), [Grounding::new("key").with_sources(&["find_ticket"])]);
}
