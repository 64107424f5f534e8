//! Checking a run's transcript against a task: which tools it called, with what, and what
//! they answered.

use std::borrow::Cow;
use std::sync::LazyLock;

use serde_json::{Map, Value};
use tinytools::model::{Message, ToolCall};
use tinytools::tool::TOOL_SEARCH;
use tinytools_examples::catalogue;

use super::{Arg, Expect, Step, Task};
use tinytools::mcp::CALL_TOOL;

/// A judged run.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Judgement {
    /// Whether the run did what the task asks.
    pub success: bool,
    /// Why, in one line: what matched, or the first thing that did not.
    pub reason: String,
    /// The tools the run called, in order (`tool_search` and failed calls included; a
    /// gateway's `call_tool` as the tool it named).
    pub calls: Vec<String>,
}

/// One call of the transcript with its answer, as the task sees it (see [`resolve`]).
struct Call<'a> {
    name: Cow<'a, str>,
    arguments: Cow<'a, str>,
    /// The answering `Message::Tool`'s content and `is_error`, if the transcript has one.
    result: Option<(&'a str, bool)>,
}

/// Judges a run of `task` from its transcript.
///
/// A tool task succeeds when every expected step appears, in order, as a call of its tool
/// whose arguments pass the step's checks and whose result (the `Message::Tool` answering
/// the call's id) is not an error; other calls in between (`tool_search`, retries, other
/// tools) are allowed. A task no tool fits succeeds when no catalogue tool but `tool_search`
/// was called and the run ended with a text answer.
///
/// Calls through `tinytools-gateway` count as the calls they forward: `call_tool {"name":
/// "finance__stock_quote", "arguments": {...}}` is a call of `stock_quote` with those
/// arguments (an object, or JSON text of one), and a catalogue tool under a gateway server's
/// prefix (`notes__read_note`) is that tool.
///
/// ```
/// use tinytools::model::{Message, ToolCall};
/// use tinytools_bench::tasks;
///
/// let task = tasks::get("finance-share-price").unwrap();
/// let call = ToolCall::new("1", "stock_quote", r#"{"symbol":"globx"}"#);
/// let messages = vec![
///     Message::user(task.prompt),
///     Message::Assistant { content: String::new(), tool_calls: vec![call] },
///     Message::Tool { call_id: "1".into(), name: "stock_quote".into(), content: r#"{"price":685.83}"#.into(), is_error: false },
///     Message::Assistant { content: "685.83 USD".into(), tool_calls: vec![] },
/// ];
/// assert!(tasks::judge(task, &messages).success);
/// ```
pub fn judge(task: &Task, messages: &[Message]) -> Judgement {
    let calls = calls_of(messages);
    let verdict = match task.expect {
        Expect::NoTool => judge_no_tool(messages, &calls),
        Expect::Steps(steps) => judge_steps(steps, &calls),
    };
    let (success, reason) = match verdict {
        Ok(reason) => (true, reason),
        Err(reason) => (false, reason),
    };
    Judgement { success, reason, calls: calls.iter().map(|call| call.name.clone().into_owned()).collect() }
}

/// Every call in order, each with the first tool message answering its id before the model's
/// next turn (some prompt dialects reuse ids across turns).
fn calls_of(messages: &[Message]) -> Vec<Call<'_>> {
    let mut calls = Vec::new();
    for (at, message) in messages.iter().enumerate() {
        let Message::Assistant { tool_calls, .. } = message else { continue };
        let answers = messages[at + 1..].iter().take_while(|m| !matches!(m, Message::Assistant { .. }));
        let answers: Vec<&Message> = answers.collect();
        for call in tool_calls {
            let result = answers.iter().find_map(|m| match m {
                Message::Tool { call_id, content, is_error, .. } if *call_id == call.id => {
                    Some((content.as_str(), *is_error))
                }
                _ => None,
            });
            let (name, arguments) = resolve(&call.name, &call.arguments);
            calls.push(Call { name, arguments, result });
        }
    }
    calls
}

/// A call's tool and arguments as the task sees them: `call_tool`'s `name` and `arguments`
/// (JSON text of an object, even when the object came as a string), and a catalogue tool's
/// name without a gateway server's prefix. A `call_tool` that names no tool stays as it is.
fn resolve<'a>(name: &'a str, arguments: &'a str) -> (Cow<'a, str>, Cow<'a, str>) {
    if name != CALL_TOOL {
        return (Cow::Borrowed(unprefixed(name)), Cow::Borrowed(arguments));
    }
    let Ok(forwarded) = parse_arguments(arguments) else {
        return (Cow::Borrowed(name), Cow::Borrowed(arguments));
    };
    let Some(target) = forwarded.get("name").and_then(Value::as_str) else {
        return (Cow::Borrowed(name), Cow::Borrowed(arguments));
    };
    let inner = match forwarded.get("arguments") {
        None | Some(Value::Null) => String::new(),
        Some(Value::String(text)) => text.clone(),
        Some(other) => other.to_string(),
    };
    (Cow::Owned(unprefixed(target).to_owned()), Cow::Owned(inner))
}

/// `finance__stock_quote` is `stock_quote`: the gateway names a tool `{server}__{tool}`, and
/// the part after the first `__` is taken when it is a catalogue tool's name.
fn unprefixed(name: &str) -> &str {
    match name.split_once("__") {
        Some((_, tool)) if CATALOGUE_NAMES.iter().any(|known| known == tool) => tool,
        _ => name,
    }
}

static CATALOGUE_NAMES: LazyLock<Vec<String>> =
    LazyLock::new(|| catalogue::tools().iter().map(|tool| tool.name().to_owned()).collect());

fn judge_no_tool(messages: &[Message], calls: &[Call<'_>]) -> Result<String, String> {
    let used: Vec<&str> = calls
        .iter()
        .map(|call| call.name.as_ref())
        .filter(|name| *name != TOOL_SEARCH && CATALOGUE_NAMES.iter().any(|known| known == name))
        .collect();
    if !used.is_empty() {
        return Err(format!("no catalogue tool fits this task, but the run called {}", used.join(", ")));
    }
    match last_reply(messages) {
        Some((content, tool_calls)) if tool_calls.is_empty() && !content.trim().is_empty() => {
            Ok("no catalogue tool called, and a text answer".to_owned())
        }
        _ => Err("no catalogue tool called, but the run did not end with a text answer".to_owned()),
    }
}

/// The run's last reply: its text and its calls (`None` when the model never replied).
pub fn last_reply(messages: &[Message]) -> Option<(&str, &[ToolCall])> {
    messages.iter().rev().find_map(|message| match message {
        Message::Assistant { content, tool_calls } => Some((content.as_str(), tool_calls.as_slice())),
        _ => None,
    })
}

fn judge_steps(steps: &[Step], calls: &[Call<'_>]) -> Result<String, String> {
    let mut matched: Vec<&Call<'_>> = Vec::new();
    let mut next = 0;
    for (i, step) in steps.iter().enumerate() {
        let label = format!("step {} ({})", i + 1, step.tool);
        let mut last_miss = None;
        let mut attempts = 0;
        let found = calls[next..].iter().position(|call| {
            if call.name != step.tool {
                return false;
            }
            attempts += 1;
            let verdict = check_call(step, call, &matched);
            if let Err(why) = &verdict {
                last_miss = Some(why.clone());
            }
            verdict.is_ok()
        });
        if let Some(offset) = found {
            matched.push(&calls[next + offset]);
            next += offset + 1;
            continue;
        }
        let earlier =
            calls[..next].iter().any(|call| call.name == step.tool && check_call(step, call, &matched).is_ok());
        if earlier {
            return Err(format!("{label} was done only before step {i} ({}): out of order", steps[i - 1].tool));
        }
        return Err(match last_miss {
            Some(why) if attempts == 1 => format!("{label}: {why}"),
            Some(why) => format!("{label}: none of {attempts} calls passed; the last: {why}"),
            None if i == 0 => format!("{label}: never called (calls: {})", names(calls)),
            None => format!("{label}: never called after step {i} (calls: {})", names(calls)),
        });
    }
    let done: Vec<&str> = steps.iter().map(|step| step.tool).collect();
    Ok(format!("every step done: {}", done.join(" then ")))
}

fn names(calls: &[Call<'_>]) -> String {
    if calls.is_empty() {
        return "none".to_owned();
    }
    calls.iter().map(|call| call.name.as_ref()).collect::<Vec<_>>().join(", ")
}

/// Whether one call does the step: its arguments pass every check and its result is no error.
fn check_call(step: &Step, call: &Call<'_>, matched: &[&Call<'_>]) -> Result<(), String> {
    let args = parse_arguments(&call.arguments)?;
    for (path, arg) in step.args {
        let value = args.pointer(&format!("/{path}")).filter(|value| !value.is_null());
        check_arg(arg, value, matched).map_err(|why| format!("argument {path} {why}"))?;
    }
    match call.result {
        None => Err("the call has no result in the transcript".to_owned()),
        Some((content, true)) => Err(format!("the call's result is an error: {}", clip(content))),
        Some((_, false)) => Ok(()),
    }
}

/// The arguments as an object: JSON text, or JSON text of a JSON string holding the object.
/// Empty text is no arguments.
fn parse_arguments(text: &str) -> Result<Value, String> {
    if text.trim().is_empty() {
        return Ok(Value::Object(Map::new()));
    }
    let mut value: Value =
        serde_json::from_str(text).map_err(|err| format!("arguments are not JSON ({err}): {}", clip(text)))?;
    if let Value::String(inner) = &value {
        value = serde_json::from_str(inner).map_err(|err| format!("arguments are not JSON ({err}): {}", clip(text)))?;
    }
    if value.is_object() { Ok(value) } else { Err(format!("arguments are not a JSON object: {}", clip(text))) }
}

fn check_arg(arg: &Arg, value: Option<&Value>, matched: &[&Call<'_>]) -> Result<(), String> {
    if let Arg::IfGiven(inner) = arg {
        return if value.is_some() { check_arg(inner, value, matched) } else { Ok(()) };
    }
    if let Arg::Absent = arg {
        return match value {
            None | Some(Value::Null) => Ok(()),
            Some(value) => Err(format!("is {}, and should be left out", clip(&value.to_string()))),
        };
    }
    let Some(value) = value else {
        return Err("is missing".to_owned());
    };
    let text = text_of(value);
    let got = || format!("is {}", clip(&value.to_string()));
    let pass = match arg {
        Arg::Equals(expected) => same_text(&text, expected),
        Arg::AnyOf(options) => options.iter().any(|option| same_text(&text, option)),
        Arg::Contains(part) => contains(&text, part),
        Arg::ContainsAny(parts) => parts.iter().any(|part| contains(&text, part)),
        Arg::StartsWith(prefix) => text.trim().to_lowercase().starts_with(&prefix.to_lowercase()),
        Arg::Number(expected) => number_of(value).is_some_and(|n| close(n, *expected)),
        Arg::Bool(expected) => match value {
            Value::Bool(b) => b == expected,
            _ => same_text(&text, if *expected { "true" } else { "false" }),
        },
        Arg::Includes(expected) => match value {
            Value::Array(items) => items.iter().any(|item| same_text(&text_of(item), expected)),
            _ => same_text(&text, expected),
        },
        Arg::Present | Arg::IfGiven(_) | Arg::Absent => true,
        Arg::FromResult { step, pointer } => {
            let target = result_value(matched, *step, pointer)?;
            let pass = match value {
                Value::Array(items) => items.iter().any(|item| same_value(item, &target)),
                _ => same_value(value, &target),
            };
            if !pass {
                return Err(format!("{} but step {}'s result gave {}", got(), step + 1, clip(&target.to_string())));
            }
            true
        }
        Arg::MentionsResult { step, pointer } => {
            let target = result_value(matched, *step, pointer)?;
            let pass = match target.as_f64() {
                Some(number) => numbers_in(&text).into_iter().any(|n| close(n, number)),
                None => contains(&text, &text_of(&target)),
            };
            if !pass {
                return Err(format!(
                    "{} and does not mention step {}'s {}",
                    got(),
                    step + 1,
                    clip(&target.to_string())
                ));
            }
            true
        }
        Arg::FoundInResult { step } => {
            let (content, _) = result_of(matched, *step)?;
            let found = |item: &str| !item.trim().is_empty() && contains(content, item.trim());
            let pass = match value {
                Value::Array(items) => !items.is_empty() && items.iter().all(|item| found(&text_of(item))),
                _ => found(&text),
            };
            if !pass {
                return Err(format!("{} which step {}'s result does not contain", got(), step + 1));
            }
            true
        }
    };
    if pass { Ok(()) } else { Err(format!("{}, expected {}", got(), arg.describe())) }
}

fn result_of<'a>(matched: &[&Call<'a>], step: usize) -> Result<(&'a str, bool), String> {
    let call =
        matched.get(step).ok_or_else(|| format!("refers to step {}, which does not come before it", step + 1))?;
    call.result.ok_or_else(|| format!("refers to step {}, which has no result", step + 1))
}

fn result_value(matched: &[&Call<'_>], step: usize, pointer: &str) -> Result<Value, String> {
    let (content, _) = result_of(matched, step)?;
    let json = json_of(content)
        .ok_or_else(|| format!("refers to step {}'s result, which is not JSON: {}", step + 1, clip(content)))?;
    json.pointer(pointer)
        .cloned()
        .ok_or_else(|| format!("refers to {pointer} in step {}'s result, which has none: {}", step + 1, clip(content)))
}

/// A result's JSON: the whole content, or what follows a first line the run put before the
/// tool's own output (an aid's note on a call it ran on other arguments, such as the removed
/// `drop_undeclared_arguments`' "`stock_quote` does not take `vs_currency`, so it ran without
/// it:").
fn json_of(content: &str) -> Option<Value> {
    serde_json::from_str(content)
        .ok()
        .or_else(|| content.split_once('\n').and_then(|(_, output)| serde_json::from_str(output).ok()))
}

/// A value as text: a string as written, anything else as JSON.
fn text_of(value: &Value) -> String {
    match value {
        Value::String(text) => text.clone(),
        other => other.to_string(),
    }
}

fn same_text(a: &str, b: &str) -> bool {
    a.trim().to_lowercase() == b.trim().to_lowercase()
}

fn contains(text: &str, part: &str) -> bool {
    text.to_lowercase().contains(&part.to_lowercase())
}

/// An argument equal to a result's value: numbers within tolerance, the rest as trimmed,
/// case-insensitive text.
fn same_value(value: &Value, target: &Value) -> bool {
    match target.as_f64() {
        Some(expected) => number_of(value).is_some_and(|n| close(n, expected)),
        None => same_text(&text_of(value), &text_of(target)),
    }
}

/// A number, or a string holding one (`"250"`, `"$82,000"`).
fn number_of(value: &Value) -> Option<f64> {
    match value {
        Value::Number(number) => number.as_f64(),
        Value::String(text) => {
            let digits: String = text.trim().chars().filter(|c| !matches!(c, ',' | '$' | '_' | ' ')).collect();
            digits.parse().ok()
        }
        _ => None,
    }
}

/// Within 0.1% of `expected`, and never stricter than 0.01 (a rounded cent).
fn close(value: f64, expected: f64) -> bool {
    (value - expected).abs() <= (expected.abs() * 1e-3).max(0.01)
}

/// Every number written in free text (`$1,284.10` is 1284.1).
fn numbers_in(text: &str) -> Vec<f64> {
    let mut numbers = Vec::new();
    let mut run = String::new();
    for c in text.chars().chain(std::iter::once(' ')) {
        if c.is_ascii_digit() || ((c == '.' || c == ',') && !run.is_empty()) {
            run.push(c);
            continue;
        }
        let digits: String = run.trim_end_matches(['.', ',']).chars().filter(|c| *c != ',').collect();
        if let Ok(number) = digits.parse() {
            numbers.push(number);
        }
        run.clear();
    }
    numbers
}

fn clip(text: &str) -> String {
    const MAX: usize = 120;
    if text.chars().count() <= MAX {
        text.to_owned()
    } else {
        format!("{}…", text.chars().take(MAX).collect::<String>())
    }
}

#[cfg(test)]
mod tests {
    use tinytools::model::{Message, ToolCall};

    use super::judge;
    use crate::tasks;

    /// A run of finance-price-to-slack whose quote came back as `quote`.
    fn price_to_slack(quote: &str) -> Vec<Message> {
        let call = |id: &str, name: &str, arguments: &str| ToolCall::new(id, name, arguments);
        let answer = |id: &str, name: &str, content: &str| Message::Tool {
            call_id: id.into(),
            name: name.into(),
            content: content.into(),
            is_error: false,
        };
        vec![
            Message::user("Post what GLOBX is trading at in #markets so the team sees it."),
            Message::Assistant {
                content: String::new(),
                tool_calls: vec![call("1", "stock_quote", r#"{"symbol":"GLOBX","vs_currency":"USD"}"#)],
            },
            answer("1", "stock_quote", quote),
            Message::Assistant {
                content: String::new(),
                tool_calls: vec![call(
                    "2",
                    "slack_post_message",
                    r##"{"channel":"#markets","text":"GLOBX: $685.83"}"##,
                )],
            },
            answer("2", "slack_post_message", "posted"),
            Message::Assistant { content: "Posted.".into(), tool_calls: vec![] },
        ]
    }

    #[test]
    fn a_result_is_read_after_the_note_the_run_put_before_it() {
        let task = tasks::get("finance-price-to-slack").expect("task");
        let output = r#"{"currency":"USD","price":685.83,"symbol":"GLOBX"}"#;
        let noted = format!("`stock_quote` does not take `vs_currency`, so it ran without it:\n{output}");
        for quote in [output, noted.as_str()] {
            let judged = judge(task, &price_to_slack(quote));
            assert!(judged.success, "{quote}: {}", judged.reason);
        }
        let judged = judge(task, &price_to_slack("GLOBX is at 685.83"));
        assert!(!judged.success && judged.reason.contains("not JSON"), "{}", judged.reason);
    }
}
