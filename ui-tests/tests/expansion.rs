//! Expansion snapshots: what `cargo expand` shows for a few representative tools, reviewed
//! and kept readable. The macro's own `tool` module is compiled here by path (it uses only
//! `proc_macro2`), so these are the real expansions, pretty-printed by prettyplease.
//!
//! After an intended change: `INSTA_UPDATE=always cargo test -p tinytools-ui-tests --test expansion`,
//! then review the diff of `tests/snapshots/`.

#![allow(dead_code, unreachable_pub, missing_docs)]

#[path = "../../tinytools-macros/src/tool/mod.rs"]
mod tool;
#[path = "../../tinytools-macros/src/tools/mod.rs"]
mod tools;

use proc_macro2::TokenStream;
use quote::quote;

fn expand(attr: TokenStream, item: TokenStream) -> String {
    let tokens = tool::tool(attr, item);
    let file: syn::File = syn::parse2(tokens).expect("the expansion parses as a Rust file");
    prettyplease::unparse(&file)
}

#[test]
fn deferred_tool_with_result_and_optional_argument() {
    let expanded = expand(
        quote!(exposure = "deferred", family = "finance", read_only),
        quote! {
            /// Fetch the latest price for a ticker symbol.
            ///
            /// Prices are delayed by 15 minutes.
            pub async fn stock_quote(
                /// Ticker symbol, such as ACME.
                symbol: String,
                /// Quote currency (ISO 4217); the listing's own when left out.
                currency: Option<String>,
            ) -> Result<Quote, QuoteError> {
                quotes::latest(&symbol, currency.as_deref())
            }
        },
    );
    insta::assert_snapshot!(expanded);
}

#[test]
fn sync_tool_with_context_rename_and_budget() {
    let expanded = expand(
        quote!(name = "send-mail", destructive = false, compaction = "third_party", max_schema_bytes = 2_000),
        quote! {
            /// Send an email.
            ///
            /// # Arguments
            ///
            /// * `to` - Recipient address.
            fn send_mail(
                to: String,
                /// Subject line.
                #[serde(rename = "subject_line", default)]
                subject: String,
                ctx: &ToolContext,
            ) -> ToolResult {
                outbox::send(ctx, to, subject)
            }
        },
    );
    insta::assert_snapshot!(expanded);
}

#[test]
fn unit_returning_tool_without_parameters() {
    let expanded = expand(
        quote!(),
        quote! {
            /// Clear the scratchpad.
            async fn clear_scratchpad() {}
        },
    );
    insta::assert_snapshot!(expanded);
}

#[test]
fn renamed_runtime_crate_struct_name_and_state() {
    let expanded = expand(
        quote!(crate = "::my_tools", ident = "QuoteTool", exposure = "deferred", read_only),
        quote! {
            /// Fetch the latest price for a ticker symbol.
            async fn stock_quote(
                /// Ticker symbol, such as ACME.
                symbol: String,
                db: State<Db>,
            ) -> StockQuote {
                db.latest(&symbol)
            }
        },
    );
    // Every path the expansion writes goes through the named crate.
    assert!(!expanded.contains("tinytools"), "{expanded}");
    assert!(expanded.contains("struct QuoteTool;"), "{expanded}");
    insta::assert_snapshot!(expanded);
}

#[test]
fn a_group_of_two_methods() {
    let tokens = tools::tools(
        quote!(family = "finance", exposure = "deferred"),
        quote! {
            impl Portfolio {
                /// List the account's holdings.
                #[tool(read_only)]
                async fn holdings(&self) -> Vec<Holding> {
                    self.db.holdings().await
                }

                /// Buy shares of a ticker symbol.
                #[tool(exposure = "direct")]
                fn buy(
                    &self,
                    /// Ticker symbol.
                    symbol: String,
                ) -> Result<String, Refusal> {
                    self.db.buy(&symbol)
                }
            }
        },
    );
    let file: syn::File = syn::parse2(tokens).expect("the expansion parses as a Rust file");
    insta::assert_snapshot!(prettyplease::unparse(&file));
}

#[test]
fn errors_are_reported_together_and_the_fn_is_kept() {
    let expanded = expand(
        quote!(exposure = "later", familly = "x"),
        quote! {
            async fn tool_search(self, query: String) -> String {
                query
            }
        },
    );
    insta::assert_snapshot!(expanded);
}

proptest::proptest! {
    /// The macro's copy of the name and family rules accepts exactly what the runtime accepts.
    #[test]
    fn naming_rules_agree_with_the_runtime(text in "[A-Za-z0-9_.\\- é]{0,70}") {
        proptest::prop_assert_eq!(
            tool::validate::check_tool_name(&text).is_ok(),
            tinytools::tool::check_tool_name(&text).is_ok()
        );
        proptest::prop_assert_eq!(
            tool::validate::check_family(&text).is_ok(),
            tinytools::tool::check_family(&text).is_ok()
        );
    }
}
