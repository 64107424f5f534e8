//! A turn handed back as the provider wrote it. A provider that keeps a turn's whole output
//! ([`ProviderItems::turn`]) sends those items back in place of the turn — its searches, its
//! text and its calls in the order they came — as both APIs ask of a conversation sent back
//! statelessly; the run's view of the turn ([`Message::Assistant`] and the
//! [`Message::ProviderSearch`]es before it) is passed over then. It does so only while the turn's
//! text and calls still match the items (`matches`): a turn the run changed (a final answer's
//! calls dropped, a transcript edited by its host) is written from the run's view, as before.

use std::collections::{HashMap, HashSet};

use serde_json::Value;

use crate::model::{Message, ProviderItems, ToolCall};

/// Which messages of a conversation a provider replaces with a turn's own items.
#[derive(Debug, Default)]
pub(crate) struct WholeTurns<'a> {
    /// Message index → the items sent there.
    items: HashMap<usize, &'a ProviderItems>,
    /// The messages those items stand for.
    skipped: HashSet<usize>,
}

impl<'a> WholeTurns<'a> {
    /// The turns of `messages` that `provider` wrote whole and that still match their text and
    /// calls (`matches(items, content, calls)`).
    pub(crate) fn plan(
        messages: &'a [Message],
        provider: &str,
        matches: impl Fn(&[Value], &str, &[ToolCall]) -> bool,
    ) -> Self {
        let mut plan = Self::default();
        for (at, message) in messages.iter().enumerate() {
            let Message::Assistant { content, tool_calls } = message else { continue };
            let mut start = at;
            while start > 0 && matches!(messages[start - 1], Message::ProviderSearch(_) | Message::ProviderItems(_)) {
                start -= 1;
            }
            let whole = (start..at).find_map(|index| match &messages[index] {
                Message::ProviderItems(items) if items.whole_turn && items.is_from(provider) => Some((index, items)),
                _ => None,
            });
            let Some((index, items)) = whole.filter(|(_, items)| matches(&items.items, content, tool_calls)) else {
                continue;
            };
            plan.items.insert(index, items);
            plan.skipped.extend((start..=at).filter(|&other| other != index));
        }
        plan
    }

    /// The items to send in place of the message at `index`.
    pub(crate) fn items_at(&self, index: usize) -> Option<&'a ProviderItems> {
        self.items.get(&index).copied()
    }

    /// Whether the message at `index` is sent as part of a turn's items.
    pub(crate) fn skips(&self, index: usize) -> bool {
        self.skipped.contains(&index)
    }
}

/// Whether a call's arguments, as the run keeps them (JSON text), are `written`: the same JSON
/// value, or the same text when they are not JSON.
pub(crate) fn same_arguments(kept: &str, written: &Value) -> bool {
    match (serde_json::from_str::<Value>(kept), written) {
        (Ok(kept), Value::String(text)) => serde_json::from_str::<Value>(text).is_ok_and(|text| text == kept),
        (Ok(kept), written) => kept == *written,
        (Err(_), Value::String(text)) => text == kept,
        (Err(_), _) => false,
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;
    use crate::model::ProviderSearch;

    fn always(_: &[Value], _: &str, _: &[ToolCall]) -> bool {
        true
    }

    #[test]
    fn a_matching_whole_turn_stands_for_its_searches_and_turn_and_nothing_else() {
        let turn = ProviderItems::turn("p", vec![json!({"type": "x"})]);
        let messages = vec![
            Message::user("q"),
            Message::ProviderSearch(ProviderSearch::new("p:search", "q", Vec::new())),
            Message::ProviderItems(turn),
            Message::Assistant { content: "a".into(), tool_calls: Vec::new() },
            Message::user("again"),
            Message::Assistant { content: "b".into(), tool_calls: Vec::new() },
        ];
        let plan = WholeTurns::plan(&messages, "p", always);
        assert!(plan.items_at(2).is_some());
        assert_eq!((0..6).filter(|&i| plan.skips(i)).collect::<Vec<_>>(), [1, 3]);
        let other = WholeTurns::plan(&messages, "q", always);
        assert!(other.items_at(2).is_none() && !other.skips(3), "another provider's items replace nothing");
        let changed = WholeTurns::plan(&messages, "p", |_, _, _| false);
        assert!(changed.items_at(2).is_none() && !changed.skips(1), "a turn that no longer matches is written anew");
    }

    #[test]
    fn arguments_match_as_json_values() {
        assert!(same_arguments(r#"{"a":1}"#, &json!({"a": 1})));
        assert!(same_arguments(r#"{"a": 1}"#, &json!(r#"{"a":1}"#)));
        assert!(!same_arguments(r#"{"a":2}"#, &json!({"a": 1})));
        assert!(same_arguments("not json", &json!("not json")));
    }
}
