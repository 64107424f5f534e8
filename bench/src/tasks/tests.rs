use std::collections::HashSet;

use serde_json::Value;
use tinytools::ToolExposure;
use tinytools::model::{Message, ToolCall};
use tinytools_examples::catalogue;

use super::*;

/// A transcript built turn by turn, one call per model turn, ids numbered.
struct Transcript {
    task: &'static Task,
    messages: Vec<Message>,
}

impl Transcript {
    fn new(task: &'static Task) -> Self {
        Self { task, messages: vec![Message::system("You are a helpful assistant."), Message::user(task.prompt)] }
    }

    fn call(mut self, name: &str, arguments: &str, content: &str, is_error: bool) -> Self {
        let id = format!("call_{}", self.messages.len());
        let call = ToolCall::new(id.clone(), name, arguments);
        self.messages.push(Message::Assistant { content: String::new(), tool_calls: vec![call] });
        self.messages.push(Message::Tool { call_id: id, name: name.into(), content: content.into(), is_error });
        self
    }

    fn ok(self, name: &str, arguments: &str, content: &str) -> Self {
        self.call(name, arguments, content, false)
    }

    fn search(self, query: &str) -> Self {
        let arguments = serde_json::json!({ "query": query }).to_string();
        self.ok("tool_search", &arguments, r#"{"matches":[]}"#)
    }

    fn answer(mut self, text: &str) -> Judgement {
        self.messages.push(Message::Assistant { content: text.into(), tool_calls: Vec::new() });
        self.judge()
    }

    fn judge(&self) -> Judgement {
        judge(self.task, &self.messages)
    }
}

fn task(id: &str) -> &'static Task {
    get(id).unwrap_or_else(|| panic!("no task {id}"))
}

fn failed(judgement: &Judgement, words: &str) {
    assert!(!judgement.success, "should fail: {judgement:?}");
    assert!(judgement.reason.contains(words), "the reason should say {words:?}: {}", judgement.reason);
}

#[test]
fn the_suite_has_unique_ids_every_family_and_every_kind() {
    let tasks = all();
    assert!(tasks.len() >= 36, "{} tasks", tasks.len());
    let ids: HashSet<&str> = tasks.iter().map(|t| t.id).collect();
    assert_eq!(ids.len(), tasks.len(), "task ids must be unique");
    for task in tasks {
        assert!(FAMILIES.contains(&task.family), "{}: unknown family {}", task.id, task.family);
        assert!(task.id.starts_with(&format!("{}-", task.family)), "{}: ids start with the family", task.id);
        assert!(!task.prompt.trim().is_empty(), "{}", task.id);
    }
    for family in FAMILIES {
        let count = tasks.iter().filter(|t| t.family == family).count();
        assert!(count >= 2, "family {family} has {count} tasks");
    }
    let chains: Vec<&Task> = tasks.iter().filter(|t| t.is_chain()).collect();
    assert!(chains.len() >= 6, "{} two-step tasks", chains.len());
    for chain in &chains {
        let later = &chain.steps()[1..];
        assert!(
            later.iter().any(|s| s.args.iter().any(|(_, a)| a.reads_step().is_some())),
            "{} checks no dependency",
            chain.id
        );
    }
    assert!(tasks.iter().filter(|t| t.is_no_tool()).count() >= 4);
    let notes = tasks.iter().filter(|t| t.steps().iter().any(|s| s.tool == "read_note")).count();
    assert!(notes >= 2, "{notes} tasks use read_note");
}

#[test]
fn every_expected_tool_and_argument_exists_in_the_catalogue() {
    let registry = catalogue::registry();
    for task in all() {
        let mut families = Vec::new();
        for (i, step) in task.steps().iter().enumerate() {
            let tool = registry.get(step.tool).unwrap_or_else(|| panic!("{}: no tool {}", task.id, step.tool));
            families.push(tool.family().unwrap_or("notes"));
            let properties = &tool.schema().parameters["properties"];
            for (path, arg) in step.args {
                let top = path.split('/').next().unwrap_or_default();
                assert!(properties.get(top).is_some(), "{}: {} has no parameter {top}", task.id, step.tool);
                if let Some(step) = arg.reads_step() {
                    assert!(step < i, "{}: step {} reads step {}, which is not before it", task.id, i + 1, step + 1);
                }
            }
        }
        if !task.is_no_tool() {
            assert!(families.contains(&task.family), "{}: family {} is none of {families:?}", task.id, task.family);
        }
    }
}

#[tokio::test]
async fn every_tool_task_is_solved_by_its_example_calls() {
    let registry = catalogue::registry();
    for task in all().iter().filter(|t| !t.is_no_tool()) {
        let mut run = Transcript::new(task);
        for step in task.steps() {
            let args: Value = serde_json::from_str(step.example)
                .unwrap_or_else(|e| panic!("{}: the example of {} is not JSON: {e}", task.id, step.tool));
            let result = registry
                .dispatch(step.tool, args.clone())
                .await
                .unwrap_or_else(|e| panic!("{}: {} refused its example: {e}", task.id, step.tool));
            assert!(!result.is_error, "{}: {} answered an error: {}", task.id, step.tool, result.to_model_text());
            run = run.ok(step.tool, &args.to_string(), &result.to_model_text());
        }
        let judgement = run.answer("Done.");
        assert!(judgement.success, "{}: {}", task.id, judgement.reason);
        let expected: Vec<&str> = task.steps().iter().map(|s| s.tool).collect();
        assert_eq!(judgement.calls, expected, "{}", task.id);
    }
}

#[test]
fn a_correct_run_passes_with_searches_and_lenient_arguments() {
    let t = task("finance-euros-to-yen");
    // A number sent as a string, codes in lower case with spaces, the object JSON-string-encoded.
    let encoded = serde_json::to_string(r#"{"amount": "250", "from": " eur ", "to": "jpy"}"#).unwrap();
    let judgement = Transcript::new(t)
        .search("convert currency")
        .ok("currency_convert", &encoded, r#"{"converted": 310.5}"#)
        .answer("About 310 yen.");
    assert!(judgement.success, "{}", judgement.reason);
    assert_eq!(judgement.calls, ["tool_search", "currency_convert"]);
    assert_eq!(t.success(), r#"currency_convert(amount ≈ 250, from = "EUR", to = "JPY")"#);
}

#[test]
fn a_call_through_the_gateway_counts_as_the_call_it_forwards() {
    let t = task("finance-euros-to-yen");
    // The arguments as an object, under the gateway's server prefix.
    let forwarded =
        r#"{"name": "finance__currency_convert", "arguments": {"amount": 250, "from": "EUR", "to": "JPY"}}"#;
    let judgement = Transcript::new(t)
        .search("convert currency")
        .ok("call_tool", forwarded, r#"{"converted": 310.5}"#)
        .answer("310.");
    assert!(judgement.success, "{}", judgement.reason);
    assert_eq!(judgement.calls, ["tool_search", "currency_convert"]);
    // The inner arguments as JSON text, and the whole of call_tool's arguments encoded again.
    let inner = r#"{"amount": "250", "from": "eur", "to": "jpy"}"#;
    let forwarded = serde_json::json!({"name": "finance__currency_convert", "arguments": inner}).to_string();
    let encoded = serde_json::to_string(&forwarded).unwrap();
    let judgement = Transcript::new(t).ok("call_tool", &encoded, r#"{"converted": 310.5}"#).answer("310.");
    assert!(judgement.success, "{}", judgement.reason);
    // A wrong argument through call_tool is judged as one.
    let wrong = r#"{"name": "finance__currency_convert", "arguments": {"amount": 25, "from": "EUR", "to": "JPY"}}"#;
    let judgement = Transcript::new(t).ok("call_tool", wrong, r#"{"converted": 31}"#).answer("31.");
    failed(&judgement, "step 1 (currency_convert): argument amount is 25");
}

#[test]
fn a_gateway_prefix_is_dropped_and_a_call_tool_without_a_name_stays_call_tool() {
    let t = task("notes-shopping-list");
    let judgement =
        Transcript::new(t).ok("notes__read_note", r#"{"title": "groceries"}"#, "eggs, milk").answer("Eggs.");
    assert!(judgement.success, "{}", judgement.reason);
    assert_eq!(judgement.calls, ["read_note"]);
    let judgement = Transcript::new(t).ok("call_tool", r#"{"arguments": {}}"#, "needs a name").answer("Sorry.");
    failed(&judgement, "never called (calls: call_tool)");
    // A prefix before a name that is no catalogue tool's is kept.
    let judgement = Transcript::new(t).ok("other__thing", "{}", "ok").answer("Done.");
    assert_eq!(judgement.calls, ["other__thing"]);
    // A no-tool task fails when a catalogue tool is called through the gateway.
    let none = all().iter().find(|task| task.is_no_tool()).unwrap();
    let forwarded = r#"{"name": "notes__read_note", "arguments": {"title": "x"}}"#;
    let judgement = Transcript::new(none).ok("call_tool", forwarded, "nothing").answer("No.");
    failed(&judgement, "the run called read_note");
}

#[test]
fn the_wrong_tool_fails() {
    let judgement = Transcript::new(task("finance-share-price"))
        .ok("crypto_price", r#"{"coin": "GLOBX"}"#, r#"{"price": 12}"#)
        .answer("12 dollars.");
    failed(&judgement, "stock_quote): never called (calls: crypto_price)");
}

#[test]
fn a_wrong_argument_fails() {
    let judgement = Transcript::new(task("finance-share-price"))
        .ok("stock_quote", r#"{"symbol": "ACME"}"#, r#"{"price": 667.69}"#)
        .answer("667.69.");
    failed(&judgement, r#"argument symbol is "ACME", expected = "GLOBX""#);
    let missing = Transcript::new(task("finance-euros-to-yen"))
        .ok("currency_convert", r#"{"amount": 250, "from": "EUR"}"#, "{}")
        .answer("?");
    failed(&missing, "argument to is missing");
    let far = Transcript::new(task("finance-euros-to-yen"))
        .ok("currency_convert", r#"{"amount": 25, "from": "EUR", "to": "JPY"}"#, "{}")
        .answer("?");
    failed(&far, "argument amount is 25");
    let servers = task("ops-ireland-servers");
    let all_states = Transcript::new(servers).ok("aws_list_instances", r#"{"region": "EU-West-1"}"#, "{}").answer("2.");
    assert!(all_states.success, "an optional filter may be left out: {}", all_states.reason);
    let stopped = Transcript::new(servers)
        .ok("aws_list_instances", r#"{"region": "eu-west-1", "state": "stopped"}"#, "{}")
        .answer("None.");
    failed(&stopped, r#"argument state is "stopped", expected = "running""#);
}

#[test]
fn an_errored_result_fails_and_a_retry_that_works_passes() {
    let t = task("utilities-marathon-km");
    let bad = Transcript::new(t).call(
        "unit_convert",
        r#"{"value": 26.2, "from_unit": "mi", "to_unit": "km"}"#,
        "cannot convert",
        true,
    );
    failed(&bad.judge(), "result is an error: cannot convert");
    let retried =
        bad.ok("unit_convert", r#"{"value": 26.2, "from_unit": "mi", "to_unit": "km"}"#, r#"{"value": 42.16}"#);
    assert!(retried.answer("42.16 km").success);
    let unanswered = Message::Assistant {
        content: String::new(),
        tool_calls: vec![ToolCall::new("x", "unit_convert", r#"{"value": 26.2, "from_unit": "mi", "to_unit": "km"}"#)],
    };
    failed(&judge(t, &[Message::user(t.prompt), unanswered]), "no result");
}

#[test]
fn a_missing_second_step_fails() {
    let judgement = Transcript::new(task("jira-comment-on-found"))
        .ok("jira_search_issues", r#"{"jql": "text ~ TLS"}"#, r#"{"issues": [{"key": "OPS-127"}]}"#)
        .answer("Found OPS-127.");
    failed(&judgement, "step 2 (jira_add_comment): never called after step 1");
}

#[test]
fn steps_out_of_order_fail() {
    let judgement = Transcript::new(task("jira-comment-on-found"))
        .ok("jira_add_comment", r#"{"key": "OPS-127", "body": "certs are live"}"#, "commented on OPS-127")
        .ok("jira_search_issues", r#"{"jql": "text ~ TLS"}"#, r#"{"issues": [{"key": "OPS-127"}]}"#)
        .answer("Done.");
    failed(&judgement, "out of order");
}

#[test]
fn a_derived_argument_must_be_the_one_the_first_result_gave() {
    let t = task("jira-comment-on-found");
    let found = r#"{"issues": [{"key": "OPS-200", "summary": "Rotate TLS certs"}]}"#;
    let from_transcript = Transcript::new(t)
        .ok("jira_search_issues", r#"{"jql": "text ~ TLS"}"#, found)
        .ok("jira_add_comment", r#"{"key": "ops-200", "body": "New certs are LIVE."}"#, "commented on OPS-200")
        .answer("Done.");
    assert!(from_transcript.success, "the key comes from the transcript: {}", from_transcript.reason);
    let guessed = Transcript::new(t)
        .ok("jira_search_issues", r#"{"jql": "text ~ TLS"}"#, found)
        .ok("jira_add_comment", r#"{"key": "OPS-127", "body": "New certs are live."}"#, "commented on OPS-127")
        .answer("Done.");
    failed(&guessed, r#"argument key is "OPS-127" but step 1's result gave "OPS-200""#);
}

#[test]
fn derived_numbers_and_text_are_matched_leniently() {
    let t = task("finance-price-to-slack");
    let quote = r#"{"symbol": "GLOBX", "price": 1284.1, "currency": "USD"}"#;
    let post = |text: &str| {
        let args = serde_json::json!({"channel": "markets", "text": text}).to_string();
        Transcript::new(t).ok("stock_quote", r#"{"symbol": "GLOBX"}"#, quote).ok("slack_post_message", &args, "{}")
    };
    assert!(post("GLOBX is at $1,284.10 right now").answer("Posted.").success);
    failed(&post("GLOBX is at $1,300").answer("Posted."), "does not mention step 1's 1284.1");
    let list = Transcript::new(task("gmail-reply-to-sender"))
        .ok("gmail_search", r#"{"query": "Q3 numbers"}"#, r#"{"messages": [{"id": "m1", "from": "bo@x.org"}]}"#)
        .ok("gmail_send", r#"{"to": ["Bo@X.org"], "subject": "Re", "body": "Thanks, by Friday."}"#, "{}")
        .answer("Sent.");
    assert!(list.success, "{}", list.reason);
}

#[test]
fn a_new_message_given_a_thread_fails_and_a_null_one_passes() {
    let post = |thread: Value| {
        let args = serde_json::json!({"channel": "#general", "text": "Closed this Friday.", "thread_ts": thread});
        Transcript::new(task("slack-office-closed")).ok("slack_post_message", &args.to_string(), "{}").answer("Posted.")
    };
    assert!(post(Value::Null).success);
    failed(
        &post(Value::from("1700000000.000100")),
        r#"argument thread_ts is "1700000000.000100", and should be left out"#,
    );
}

#[test]
fn a_value_read_from_a_text_result_must_be_in_it() {
    let t = task("notes-biggest-holding-price");
    let note = "Holdings: ACME (120 shares), GLOBX (40 shares).";
    let run = |symbol: &str| {
        let args = serde_json::json!({ "symbol": symbol }).to_string();
        Transcript::new(t).ok("read_note", r#"{"title": "Portfolio"}"#, note).ok("stock_quote", &args, "{}")
    };
    assert!(run("ACME").answer("ACME is at 667.69.").success);
    failed(&run("GLOBX").answer("?"), r#"argument symbol is "GLOBX", expected = "ACME""#);
    failed(&run("AAPL").answer("?"), "which step 1's result does not contain");
}

#[test]
fn a_no_tool_task_fails_when_a_catalogue_tool_is_called() {
    let t = task("none-restaurant-table");
    let declined = Transcript::new(t).search("book restaurant table").answer("I can't book tables.");
    assert!(declined.success, "{}", declined.reason);
    let tried = Transcript::new(t)
        .search("book restaurant table")
        .ok("maps_directions", r#"{"from": "home", "to": "Nopa"}"#, r#"{"minutes": 12}"#)
        .answer("Nopa is 12 minutes away.");
    failed(&tried, "but the run called maps_directions");
    let note = Transcript::new(t).ok("read_note", r#"{"title": "groceries"}"#, "eggs").answer("No.");
    failed(&note, "read_note");
    failed(&Transcript::new(t).search("restaurant").answer("  "), "did not end with a text answer");
}

#[test]
fn scale_registry_adds_a_thousand_deferred_bfcl_tools() {
    if tinytools_examples::eval::sets_or_skip(&["bfcl"]).is_none() {
        return;
    }
    assert!(bfcl_tools_path().is_ok_and(|path| path.ends_with("bfcl/tools.jsonl")));
    let registry = scale_registry(1_000).unwrap();
    assert_eq!(registry.len(), 1_041);
    for tool in registry.iter() {
        let expected = if tool.name() == "read_note" { ToolExposure::Direct } else { ToolExposure::Deferred };
        assert_eq!(tool.exposure(), expected, "{}", tool.name());
    }
    let first = bfcl_distractors(3).unwrap();
    let names: Vec<&str> = first.iter().map(|tool| tool.name()).collect();
    assert_eq!(names, ["calculate_triangle_area", "math_factorial", "math_hypot"]);
    let Err(too_many) = bfcl_distractors(100_000) else { panic!("BFCL has fewer than 100,000 names") };
    assert!(too_many.contains("distinct usable tool names"), "{too_many}");
}
