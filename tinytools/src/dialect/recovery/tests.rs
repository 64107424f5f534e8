use super::*;

const OFFERED: [&str; 3] = ["stock_quote", "tool_search", "read_note"];

fn ids() -> impl FnMut() -> String {
    let mut n = 0;
    move || {
        n += 1;
        format!("text_{n}")
    }
}

fn read(text: &str) -> (Vec<ToolCall>, String) {
    recover(text, &OFFERED, &[], &mut ids())
}

/// `(name, arguments as JSON)` of each call.
fn named(calls: &[ToolCall]) -> Vec<(&str, Value)> {
    calls.iter().map(|c| (c.name.as_str(), serde_json::from_str(&c.arguments).unwrap_or(Value::Null))).collect()
}

#[test]
fn an_object_in_a_tag_named_after_an_offered_tool_is_its_call() {
    let reply = "<stock_quote>\n{\"symbol\": \"ACME\"}\n</stock_quote>";
    let (calls, text) = recover(reply, &OFFERED, &[], &mut ids());
    assert_eq!(calls.len(), 1, "{text}");
    assert_eq!((calls[0].name.as_str(), calls[0].arguments.as_str()), ("stock_quote", r#"{"symbol":"ACME"}"#));
    assert_eq!(text, "");
    // Only an offered name, only a matching closing tag.
    let (calls, _) = recover("<rm_rf>{\"path\": \"/\"}</rm_rf>", &OFFERED, &[], &mut ids());
    assert!(calls.is_empty());
    let (calls, _) = recover("<stock_quote>{\"symbol\": \"ACME\"}</read_note>", &OFFERED, &[], &mut ids());
    assert!(calls.is_empty());
    let (calls, text) = recover("Use <b>{\"x\": 1}</b> here.", &OFFERED, &[], &mut ids());
    assert!(calls.is_empty() && text == "Use <b>{\"x\": 1}</b> here.");
}

#[test]
fn what_is_left_of_a_calls_syntax_is_no_text() {
    assert_eq!(without_residue("{}}"), "");
    assert_eq!(without_residue(" {\n"), "");
    assert_eq!(without_residue("[ , ]"), "");
    assert_eq!(without_residue("{}}\nLet me check."), "Let me check.");
    assert_eq!(without_residue("Checking the price."), "Checking the price.");
    assert_eq!(without_residue("Use {braces} inside."), "Use {braces} inside.");
}

#[test]
fn only_json_standing_alone_is_a_call_never_json_quoted_in_prose() {
    let call = r#"{"name": "stock_quote", "arguments": {"symbol": "ACME"}}"#;
    for alone in [
        call.to_owned(),
        format!("Let me look that up.\n{call}\n"),
        format!("```json\n{call}\n```"),
        format!("<tool_call>\n{call}\n</tool_call>"),
        format!("<tool_call>{call}</tool_call>"),
        "<stock_quote>\n{\"symbol\": \"ACME\"}\n</stock_quote>".to_owned(),
    ] {
        assert_eq!(read(&alone).0.len(), 1, "{alone}");
    }
    for quoted in [
        format!("You could send {call} to get a quote."),
        format!("The page says: {call}"),
        format!("{call} is what the document contains."),
        "Try <stock_quote>{\"symbol\": \"ACME\"}</stock_quote> later.".to_owned(),
    ] {
        let (calls, text) = read(&quoted);
        assert!(calls.is_empty(), "{quoted}: {calls:?}");
        assert!(text.contains("ACME"), "it stays text: {text}");
    }
}

#[test]
fn names_repair_only_at_one_edit_to_one_unprotected_ascii_tool() {
    assert_eq!(repair_name("stock_quot", &OFFERED, &[]).as_deref(), Some("stock_quote"), "one edit");
    assert_eq!(repair_name("stok_quot", &OFFERED, &[]), None, "two edits");
    assert_eq!(repair_name("stock_quotе", &OFFERED, &[]), None, "a Cyrillic е is another script");
    assert_eq!(repair_name("read_notes", &OFFERED, &["read_note"]), None, "never to a destructive tool");
    assert_eq!(repair_name("read_note", &OFFERED, &["read_note"]).as_deref(), Some("read_note"), "its exact name");
    assert_eq!(repair_name("tool_a", &["tool_b", "tool_c"], &[]), None, "two candidates");
    assert_eq!(repair_name(&"x".repeat(10_000), &OFFERED, &[]), None, "long names are not compared");
    assert_eq!(repair_name("Stock_Quote", &OFFERED, &[]).as_deref(), Some("stock_quote"));
    assert_eq!(repair_name("stock_qoute", &OFFERED, &[]).as_deref(), Some("stock_quote"));
    assert_eq!(repair_name("delete_everything", &OFFERED, &[]), None);
    assert_eq!(repair_name("a", &["ab", "ac"], &[]), None, "ambiguous");
}

#[test]
fn names_past_the_comparison_bound_are_not_repaired_by_spelling() {
    let offered = format!("{}_quote", "stock".repeat(30));
    assert!(offered.len() > MAX_COMPARED_NAME_BYTES);
    let typo = offered.replace("_quote", "_qoute");
    assert_eq!(repair_name(&typo, &[offered.as_str()], &[]), None);
    assert_eq!(repair_name(&offered.to_uppercase(), &[offered.as_str()], &[]), None, "only exactly");
    assert_eq!(repair_name(&offered, &[offered.as_str()], &[]).as_deref(), Some(offered.as_str()));
    let huge = "stock_quote".repeat(10_000);
    assert_eq!(repair_name(&huge, &OFFERED, &[]), None);
}

#[test]
fn bare_and_fenced_calls_are_recovered_and_other_json_stays_text() {
    let (calls, text) =
        read("Let me check.\n```json\n{\"name\": \"stock_quote\", \"arguments\": {\"symbol\": \"ACME\"}}\n```");
    assert_eq!(calls.len(), 1);
    assert_eq!((calls[0].name.as_str(), calls[0].arguments.as_str()), ("stock_quote", r#"{"symbol":"ACME"}"#));
    assert_eq!(text, "Let me check.");
    let (calls, text) = read(r#"The quote: {"price": 12} and {"symbol": "ACME", "name": "Acme Corp"}"#);
    assert!(calls.is_empty(), "{calls:?}");
    assert_eq!(text, r#"The quote: {"price": 12} and {"symbol": "ACME", "name": "Acme Corp"}"#);
    let (calls, _) = read(r#"{"name":"tool_search","arguments":"{\"query\":\"stock\"}"}"#);
    assert_eq!(calls[0].arguments, r#"{"query":"stock"}"#);
    let (calls, _) = read(r#"{"name": "stock_quote"}"#);
    assert_eq!(named(&calls), [("stock_quote", serde_json::json!({}))], "an offered name needs no arguments");
}

#[test]
fn a_call_shaped_object_naming_no_offered_tool_keeps_its_name_exactly() {
    let (calls, text) =
        read("I'll look it up.\n{\"name\": \"get_stock_price\", \"arguments\": {\"symbol\": \"ACME\"}}");
    assert_eq!(named(&calls), [("get_stock_price", serde_json::json!({"symbol": "ACME"}))]);
    assert_eq!(text, "I'll look it up.");
    for shaped in [
        r#"{"name": "Get Price!", "parameters": {"symbol": "ACME"}}"#,
        r#"{"name": "Get Price!", "arguments": null}"#,
        r#"{"name": "Get Price!", "arguments": "{\"symbol\": \"ACME\"}"}"#,
    ] {
        let (calls, text) = read(shaped);
        assert_eq!(calls.len(), 1, "{shaped}");
        assert_eq!(calls[0].name, "Get Price!", "{shaped}");
        assert!(text.is_empty(), "{shaped}: {text}");
    }
    // Repair still reaches the offered tool; a name that matches several is left alone.
    assert_eq!(read(r#"{"name": "Stock_Qoute", "arguments": {}}"#).0[0].name, "stock_quote");
    let (calls, _) = recover(r#"{"name": "a", "arguments": {}}"#, &["ab", "ac"], &[], &mut ids());
    assert_eq!(calls[0].name, "a");
}

#[test]
fn objects_that_are_not_call_shaped_stay_text() {
    for text in [
        r#"{"name": "Alice", "age": 3}"#,
        r#"{"name": 7, "arguments": {}}"#,
        r#"{"name": "", "arguments": {}}"#,
        r#"{"name": "get_stock_price", "arguments": [1, 2]}"#,
        r#"{"name": "get_stock_price", "arguments": "the ticker"}"#,
        r#"{"arguments": {"symbol": "ACME"}}"#,
        // Tool definitions a model quotes, offered or not.
        r#"{"name": "get_stock_price", "description": "Price.", "parameters": {"type": "object", "properties": {}}}"#,
        r#"{"type": "function", "function": {"name": "stock_quote", "description": "Price.", "parameters": {"properties": {}}}}"#,
        r#"{"type": "tool_use", "function": {"name": "stock_quote", "arguments": {}}}"#,
        r#"{"tool_calls": []} and []"#,
    ] {
        let (calls, kept) = read(text);
        assert!(calls.is_empty(), "{text}: {calls:?}");
        assert_eq!(kept, text);
    }
}

#[test]
fn openai_wrappers_are_calls() {
    let (calls, text) = read(
        "Calling.\n{\"type\": \"function\", \"function\": {\"name\": \"stock_quote\", \"arguments\": \"{\\\"symbol\\\": \\\"ACME\\\"}\"}}",
    );
    assert_eq!(named(&calls), [("stock_quote", serde_json::json!({"symbol": "ACME"}))]);
    assert_eq!(text, "Calling.");
    let (calls, _) = read(r#"{"function": {"name": "get_stock_price", "arguments": {"symbol": "ACME"}}}"#);
    assert_eq!(named(&calls), [("get_stock_price", serde_json::json!({"symbol": "ACME"}))]);
}

#[test]
fn lists_of_calls_are_each_a_call_in_order() {
    let (calls, text) = read(
        "Both:\n{\"tool_calls\": [{\"id\": \"x\", \"type\": \"function\", \"function\": {\"name\": \"stock_quote\", \"arguments\": \"{}\"}}, {\"name\": \"read_note\", \"arguments\": {\"id\": 2}}]}\ndone",
    );
    assert_eq!(named(&calls), [("stock_quote", serde_json::json!({})), ("read_note", serde_json::json!({"id": 2}))]);
    assert_eq!(text, "Both:\n\ndone");
    let (calls, text) =
        read("```json\n[{\"name\": \"tool_search\", \"arguments\": {}}, {\"name\": \"nope\", \"arguments\": {}}]\n```");
    assert_eq!(calls.iter().map(|c| c.name.as_str()).collect::<Vec<_>>(), ["tool_search", "nope"]);
    assert!(text.is_empty(), "{text}");
    // An array with anything else in it is data, not a list of calls: a call inside it does
    // not stand alone.
    let data = r#"[{"name": "stock_quote", "arguments": {}}, {"price": 12}]"#;
    let (calls, text) = read(data);
    assert!(calls.is_empty(), "{calls:?}");
    assert_eq!(text, data);
}

#[test]
fn ids_follow_the_order_the_calls_were_written_in() {
    let (calls, _) = read(
        "{\"name\": \"tool_search\", \"arguments\": {}}\nthen {\"price\": 1}\n[{\"name\": \"stock_quote\", \"arguments\": {}}, {\"function\": {\"name\": \"read_note\", \"arguments\": {}}}]",
    );
    let got: Vec<(&str, &str)> = calls.iter().map(|c| (c.id.as_str(), c.name.as_str())).collect();
    assert_eq!(got, [("text_1", "tool_search"), ("text_2", "stock_quote"), ("text_3", "read_note")]);
}

#[test]
fn comments_between_tokens_are_dropped_and_kept_inside_strings() {
    let (calls, text) =
        read("Sure:\n{\"name\": \"stock_quote\", \"arguments\": {\"symbol\": \"ACME\" // the ticker\n}}");
    assert_eq!(named(&calls), [("stock_quote", serde_json::json!({"symbol": "ACME"}))]);
    assert_eq!(text, "Sure:");
    let (calls, _) = read(
        "{ /* read it */ \"name\": \"read_note\", \"arguments\": {\"url\": \"http://x/*y*/ // z\", // where\n \"n\": 1 /* once */}}",
    );
    assert_eq!(named(&calls), [("read_note", serde_json::json!({"url": "http://x/*y*/ // z", "n": 1}))]);
    let (calls, _) = read(r#"{"name": "get_stock_price", /* unknown */ "arguments": {}}"#);
    assert_eq!(calls[0].name, "get_stock_price");
    for broken in [
        r#"{"name": "stock_quote", "arguments": {} /* never closed }"#,
        "{\"name\": \"stock_quote\", \"arguments\": {} // no newline }",
        r#"{"name": "stock_quote", "arguments": {}, # hash }"#,
    ] {
        assert!(read(broken).0.is_empty(), "{broken}");
        assert_eq!(read(broken).1, broken);
    }
}

#[test]
fn trailing_commas_are_accepted_and_nothing_looser() {
    let (calls, _) = read(r#"{"name": "stock_quote", "arguments": {"symbol": "ACME", "days": [1, 2,],},}"#);
    assert_eq!(named(&calls), [("stock_quote", serde_json::json!({"symbol": "ACME", "days": [1, 2]}))]);
    let (calls, _) = read(r#"[{"name": "stock_quote", "arguments": {}}, ]"#);
    assert_eq!(calls.len(), 1);
    for loose in [
        r#"{"name": "stock_quote", "arguments": {"a": 1,, "b": 2}}"#,
        r#"{"name": "stock_quote", "arguments": {, "a": 1}}"#,
        r#"{"name": "stock_quote", "arguments": {symbol: "ACME"},}"#,
    ] {
        assert!(read(loose).0.is_empty(), "{loose}");
    }
}

/// What `stands_alone` asked of the text after a value before [`AloneAfter`]: the rest of
/// the line, trimmed, is a wrapper.
fn alone_after_by_the_line(after: &str) -> bool {
    is_wrapper(after.split('\n').next().unwrap_or_default().trim_matches(is_stray))
}

#[test]
fn the_line_after_a_value_is_judged_as_before_at_every_offset() {
    // Pieces of lines, `|` between them.
    let pieces: Vec<&str> =
        "{|}|[|]|,| |\n|\t|\u{3000}|<|>|/|a|_|-|1|`|```|é|x y|<tool_call>|</tool_call>".split('|').collect();
    let mut state = 0x9e37_79b9_7f4a_7c15_u64;
    let mut below = |n: usize| {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        (state % n as u64) as usize
    };
    for _ in 0..20_000 {
        let text: String = (0..below(14)).map(|_| pieces[below(pieces.len())]).collect();
        let after = AloneAfter::of(&text);
        for offset in (0..=text.len()).filter(|&offset| text.is_char_boundary(offset)) {
            assert_eq!(after.at(offset), alone_after_by_the_line(&text[offset..]), "{text:?} from {offset}");
        }
    }
}

/// `unit` repeated to about `len` bytes.
fn repeated(unit: &str, len: usize) -> String {
    unit.repeat(len / unit.len() + 1)
}

#[test]
fn a_two_megabyte_reply_is_read_in_linear_work() {
    // On one line or many, the work is counted, not timed: at most 4 bytes visited per byte
    // of the reply (finding the values, building the ones that can be calls, the lines
    // after them).
    for unit in [
        "The quick brown fox jumps over the lazy dog while the market closes. ",
        "The quote was {\"price\": 12} and see [1] for more detail on the market today. ",
        "{\"a\": [1, {\"b\": [2, ",
        "{} ",
        "[1, 2] ",
        "[",
        "{\"a\":",
        "[[1], {\"c\": [{}]}, ",
        "fn f(x: [u8; 4]) -> Vec<u8> { let v = vec![x[0], x[1]]; if v.is_empty() { return v; } v } ",
        "// {\n",
    ] {
        let reply = repeated(unit, 2_000_000);
        work::take();
        let (calls, text) = read(&reply);
        let work = work::take() as f64 / reply.len() as f64;
        assert!(calls.is_empty(), "{unit:?}");
        assert_eq!(text, reply.trim(), "{unit:?}: the reply is its text");
        assert!(work <= 4.0, "{unit:?}: {work:.2} bytes visited per byte");
    }
}

#[test]
fn a_call_after_megabytes_of_braces_is_still_found() {
    let call = r#"{"name": "stock_quote", "arguments": {"symbol": "ACME"}}"#;
    for unit in ["{\"a\": [1, {\"b\": [2, ", "[", "// {\n", "[1, 2] {} "] {
        let noise = repeated(unit, 2_000_000);
        let (calls, text) = read(&format!("{noise}\n{call}"));
        assert_eq!(named(&calls), [("stock_quote", serde_json::json!({"symbol": "ACME"}))], "{unit:?}");
        assert_eq!(text, noise.trim());
    }
}

#[test]
fn unterminated_comments_do_not_make_the_reading_quadratic() {
    // Every `{` starts a reading that meets a comment running to the end; each must find
    // that out without scanning the rest of the reply again. Counted, not timed: at most 4
    // bytes visited per byte of the reply.
    for unit in ["{//", "{/*", "[{\"a\":1,/*"] {
        let reply = unit.repeat(100_000);
        work::take();
        let (calls, text) = read(&reply);
        let work = work::take() as f64 / reply.len() as f64;
        assert!(calls.is_empty());
        assert_eq!(text.len(), reply.len());
        assert!(work <= 4.0, "{unit:?}: {work:.2} bytes visited per byte");
    }
}
