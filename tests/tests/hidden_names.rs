//! Property: no Hidden (or non-admitted) tool's name ever reaches the model — not in the tools
//! array, the manifest, a search answer (its full matches and its candidates), the first
//! request's candidate lines, or an unknown-tool answer — whatever the registry
//! and whatever the model asks, including asking for the hidden name itself.

use std::sync::Arc;

use proptest::prelude::*;
use serde_json::{Value, json};
use tinytools::discovery::{DiscoveryBridge, MAX_CANDIDATES, PrePromotion, ToolDiscoveryPolicy};
use tinytools::schema::EstimatedTokens;
use tinytools::surface::{Subject, Surface};
use tinytools::{Tool, ToolExposure, ToolRegistry, ToolResult};

/// Words of visible tools; hidden tools use a disjoint vocabulary, so a hidden name can never
/// be a substring of anything visible by accident.
const VISIBLE: &[&str] = &["stock", "quote", "weather", "email", "send", "list", "file", "note", "calendar", "issue"];
const HIDDEN: &[&str] = &["zorblax", "quimby", "vextor", "plonk", "fizzgig", "wuggle"];

struct Declared {
    name: String,
    description: String,
    family: Option<String>,
}

#[async_trait::async_trait]
impl Tool for Declared {
    fn name(&self) -> &str {
        &self.name
    }
    fn description(&self) -> &str {
        &self.description
    }
    fn parameters_schema(&self) -> Value {
        json!({"type": "object", "properties": {"query": {"type": "string", "description": self.description}}})
    }
    fn family(&self) -> Option<&str> {
        self.family.as_deref()
    }
    async fn execute(&self, _args: Value) -> anyhow::Result<ToolResult> {
        Ok(ToolResult::text("ok"))
    }
}

#[derive(Clone, Debug)]
struct Spec {
    words: (usize, usize),
    exposure: u8,
    admitted: bool,
}

fn spec() -> impl Strategy<Value = Spec> {
    ((0..VISIBLE.len(), 0..VISIBLE.len()), 0_u8..3, prop::bool::weighted(0.8))
        .prop_map(|(words, exposure, admitted)| Spec { words, exposure, admitted })
}

fn query() -> impl Strategy<Value = String> {
    prop::collection::vec(prop::sample::select([VISIBLE, HIDDEN].concat()), 0..5).prop_map(|words| words.join(" "))
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(tinytools_integration_tests::proptest_cases(96)))]

    #[test]
    fn hidden_and_non_admitted_names_never_reach_the_model(
        specs in prop::collection::vec(spec(), 1..14),
        hidden_words in prop::collection::vec((0..HIDDEN.len(), 0..HIDDEN.len()), 1..4),
        queries in prop::collection::vec(query(), 1..6),
        limit in prop::option::of(0_i64..30),
        budget in prop::sample::select(vec![0_usize, 5, 40, 4_000]),
    ) {
        let mut registry = ToolRegistry::new();
        let mut secret: Vec<String> = Vec::new();
        let mut admitted: Vec<String> = Vec::new();
        for (i, spec) in specs.iter().enumerate() {
            let name = format!("{}_{}_{i:02}", VISIBLE[spec.words.0], VISIBLE[spec.words.1]);
            let description = format!("{} the {} of the user.", VISIBLE[spec.words.1], VISIBLE[spec.words.0]);
            let exposure = [ToolExposure::Direct, ToolExposure::Deferred, ToolExposure::Hidden][spec.exposure as usize];
            let tool = Declared { name: name.clone(), description, family: Some(VISIBLE[spec.words.0].to_owned()) };
            registry.register_as(Arc::new(tool), exposure).expect("unique names");
            if exposure == ToolExposure::Hidden || !spec.admitted {
                secret.push(name);
            } else {
                admitted.push(name);
            }
        }
        for (i, (a, b)) in hidden_words.iter().enumerate() {
            let name = format!("{}_{}_{i:02}", HIDDEN[*a], HIDDEN[*b]);
            let description = format!("{} every {} in the {} store.", HIDDEN[*a], HIDDEN[*b], VISIBLE[i % VISIBLE.len()]);
            let tool = Declared { name: name.clone(), description, family: Some(HIDDEN[*b].to_owned()) };
            registry.register_as(Arc::new(tool), ToolExposure::Hidden).expect("unique names");
            secret.push(name);
        }
        let allowed = |subject: Subject<'_>| {
            let name = subject.name();
            matches!(subject, Subject::Bridge) || admitted.iter().any(|a| a == name) || HIDDEN.iter().any(|h| name.starts_with(h))
        };
        let policy = ToolDiscoveryPolicy::default().with_manifest_token_budget(budget);
        let bridge = DiscoveryBridge::over(Surface::new(&registry, &[&allowed]), policy);

        let mut said: Vec<String> = Vec::new();
        said.push(serde_json::to_string(&bridge.advertised(&EstimatedTokens)).unwrap_or_default());
        let runtime = tokio::runtime::Builder::new_current_thread().enable_time().build().expect("runtime");
        for query in &queries {
            let args = match limit {
                Some(limit) => json!({"query": query, "limit": limit}),
                None => json!({"query": query}),
            };
            said.push(runtime.block_on(bridge.search(&args)).result.to_model_text());
            // The first request's candidate lines, at every budget, from the same catalogue.
            let ranked = runtime.block_on(bridge.catalog().rank_with_candidates(bridge.policy(), query, 70));
            let pre = PrePromotion::default().with_min_confidence(0.0).with_candidates(MAX_CANDIDATES, usize::MAX);
            let candidates = bridge.first_request_candidates(&ranked, pre, &EstimatedTokens, |_| false);
            said.push(serde_json::to_string(&bridge.advertised_offering(&EstimatedTokens, &candidates)).unwrap_or_default());
        }
        let mut requests: Vec<String> = secret.clone();
        requests.extend(queries.iter().map(|q| q.replace(' ', "_")));
        requests.extend(secret.iter().map(|s| format!("{s}x")));
        for requested in &requests {
            said.push(bridge.unknown_tool(requested, &[]).to_model_text());
        }

        for text in &said {
            for name in &secret {
                prop_assert!(!text.contains(name.as_str()), "`{}` reached the model in: {}", name, text);
            }
            for word in HIDDEN {
                prop_assert!(!text.contains(word), "hidden word `{}` reached the model in: {}", word, text);
            }
        }
    }
}

/// How a run narrows its registry in the agent-level property.
#[derive(Clone, Debug)]
struct Narrowing {
    allow_list: bool,
    predicate: bool,
    refuse_destructive: bool,
}

fn narrowing() -> impl Strategy<Value = Narrowing> {
    (prop::bool::ANY, prop::bool::ANY, prop::bool::ANY)
        .prop_map(|(allow_list, predicate, refuse_destructive)| Narrowing { allow_list, predicate, refuse_destructive })
}

/// What a failing tool's error carries: the host's to read, never the model's.
const FAILURE_SECRET: &str = "sk_live_51HxQzzy";

/// A declared tool that may be destructive, may fail with a secret in its error's chain, and
/// may declare its `query` grounded in other tools' results (Hidden and refused ones among them).
struct Classified {
    inner: Declared,
    destructive: bool,
    fails: bool,
    grounding: &'static [tinytools::Grounding],
}

#[async_trait::async_trait]
impl Tool for Classified {
    fn name(&self) -> &str {
        self.inner.name()
    }
    fn description(&self) -> &str {
        self.inner.description()
    }
    fn parameters_schema(&self) -> Value {
        self.inner.parameters_schema()
    }
    fn family(&self) -> Option<&str> {
        self.inner.family()
    }
    fn annotations(&self) -> tinytools::ToolAnnotations {
        if self.destructive { tinytools::ToolAnnotations::UNCLASSIFIED } else { tinytools::ToolAnnotations::READ_ONLY }
    }
    fn grounding(&self) -> &'static [tinytools::Grounding] {
        self.grounding
    }
    async fn execute(&self, _args: Value) -> anyhow::Result<ToolResult> {
        if self.fails {
            let cause = std::io::Error::other(format!("token {FAILURE_SECRET} rejected by the upstream"));
            return Err(anyhow::Error::new(cause).context(format!("{FAILURE_SECRET}: upstream call failed")));
        }
        Ok(ToolResult::text("ok"))
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(tinytools_integration_tests::proptest_cases(48)))]

    /// Through the agent loop — pre-promotion of the user's message, searches, calls of secret
    /// names and their near misses, rejected arguments, ungrounded values, resume — nothing the
    /// run shows the model names a Hidden tool or one a rule refused, and no failing tool's
    /// error reaches it.
    #[test]
    fn no_run_ever_shows_the_model_a_hidden_or_refused_tool(
        specs in prop::collection::vec((spec(), prop::bool::ANY), 1..12),
        hidden_words in prop::collection::vec((0..HIDDEN.len(), 0..HIDDEN.len()), 1..3),
        queries in prop::collection::vec(query(), 1..4),
        narrowing in narrowing(),
        user in query(),
    ) {
        use tinytools::middleware::ToolPolicyMiddleware;
        use tinytools::model::{Message, ModelResponse};
        use tinytools::run::{Agent, RunEvent, RunPolicy};
        use tinytools::testkit::ScriptedModel;

        let mut registry = ToolRegistry::new();
        let mut secret: Vec<String> = Vec::new();
        let mut visible: Vec<String> = Vec::new();
        let mut a_visible_tool_fails = false;
        let mut a_visible_tool_is_grounded = false;
        // Every fourth tool's `query` must come from some tool's result, any of the run's: its
        // refusal names the sources, which must never include a secret one. (Leaked: a
        // grounding is `'static`, and a test case's few names are small.)
        let names = specs.iter().enumerate().map(|(i, (s, _))| format!("{}_{}_{i:02}", VISIBLE[s.words.0], VISIBLE[s.words.1]));
        let hidden_names = hidden_words.iter().enumerate().map(|(i, (a, b))| format!("{}_{}_{i:02}", HIDDEN[*a], HIDDEN[*b]));
        let sources: Vec<&'static str> = names.chain(hidden_names).map(|name| &*Box::leak(name.into_boxed_str())).collect();
        let sources: &'static [&'static str] = Box::leak(sources.into_boxed_slice());
        let grounded: &'static [tinytools::Grounding] = Box::leak(Box::new([tinytools::Grounding::new("query").with_sources(sources)]));
        for (i, (spec, destructive)) in specs.iter().enumerate() {
            let name = format!("{}_{}_{i:02}", VISIBLE[spec.words.0], VISIBLE[spec.words.1]);
            let description = format!("{} the {} of the user.", VISIBLE[spec.words.1], VISIBLE[spec.words.0]);
            let exposure = [ToolExposure::Direct, ToolExposure::Deferred, ToolExposure::Hidden][spec.exposure as usize];
            let inner = Declared { name: name.clone(), description, family: Some(VISIBLE[spec.words.0].to_owned()) };
            let fails = i % 2 == 1;
            let grounding = if i % 4 == 2 { grounded } else { &[] };
            let is_grounded = !grounding.is_empty();
            registry.register_as(Arc::new(Classified { inner, destructive: *destructive, fails, grounding }), exposure).expect("unique names");
            let refused = (narrowing.allow_list && !spec.admitted)
                || (narrowing.predicate && i % 3 == 0)
                || (narrowing.refuse_destructive && *destructive);
            if exposure == ToolExposure::Hidden || refused {
                secret.push(name);
            } else {
                a_visible_tool_fails |= fails;
                a_visible_tool_is_grounded |= is_grounded;
                visible.push(name);
            }
        }
        for (i, (a, b)) in hidden_words.iter().enumerate() {
            let name = format!("{}_{}_{i:02}", HIDDEN[*a], HIDDEN[*b]);
            let description = format!("{} every {} in the {} store.", HIDDEN[*a], HIDDEN[*b], VISIBLE[i % VISIBLE.len()]);
            let inner = Declared { name: name.clone(), description, family: Some(HIDDEN[*b].to_owned()) };
            registry.register_as(Arc::new(Classified { inner, destructive: false, fails: true, grounding: &[] }), ToolExposure::Hidden).expect("unique");
            secret.push(name);
        }
        let registry = Arc::new(registry);

        let mut turns: Vec<ModelResponse> = Vec::new();
        // Each search once: a repeated search that matched nothing ends the tool work (the loop
        // guard), and the calls below must all be made for the checks after the run to hold.
        let mut searched: Vec<&String> = Vec::new();
        for query in &queries {
            if !searched.contains(&query) {
                searched.push(query);
            }
        }
        for (i, query) in searched.iter().enumerate() {
            turns.push(ModelResponse::calls([(format!("s{i}").as_str(), "tool_search", json!({"query": query, "limit": 20}))]));
        }
        for (i, name) in secret.iter().enumerate() {
            turns.push(ModelResponse::calls([
                (format!("h{i}").as_str(), name.as_str(), json!({"query": "x"})),
                (format!("m{i}").as_str(), format!("{name}x").as_str(), json!({})),
            ]));
        }
        for (i, name) in visible.iter().enumerate() {
            turns.push(ModelResponse::calls([
                (format!("v{i}").as_str(), name.as_str(), json!({"query": 7})),
                (format!("w{i}").as_str(), name.as_str(), json!({"query": "x"})),
            ]));
        }
        turns.push(ModelResponse::text("done"));
        let model = Arc::new(ScriptedModel::new(turns));

        let mut policy = RunPolicy::default().with_max_turns(64);
        policy.discovery.pre_promotion.min_confidence = 0.0;
        if narrowing.allow_list {
            let admitted = specs.iter().enumerate().filter(|(_, (s, _))| s.admitted).map(|(i, (s, _))| {
                format!("{}_{}_{i:02}", VISIBLE[s.words.0], VISIBLE[s.words.1])
            });
            policy = policy.allow_only(admitted);
        }
        let refused_by_predicate: Vec<String> = specs.iter().enumerate().filter(|(i, _)| i % 3 == 0).map(|(i, (s, _))| {
            format!("{}_{}_{i:02}", VISIBLE[s.words.0], VISIBLE[s.words.1])
        }).collect();
        // The same narrowing for the run and for its resume.
        let recorder = Arc::new(tinytools_integration_tests::Recorder::default());
        let agent = |model: Arc<ScriptedModel>| {
            let mut agent = Agent::new(registry.clone(), model).with_policy(policy.clone()).with_events(recorder.clone());
            if narrowing.predicate {
                let refused = refused_by_predicate.clone();
                agent = agent.with_rule(Arc::new(move |subject: Subject<'_>| !refused.iter().any(|r| r == subject.name())));
            }
            if narrowing.refuse_destructive {
                let policy = ToolPolicyMiddleware::strict(registry.policies()).exempt_discovery_bridge(true).refuse_destructive(true);
                agent = agent.with_middleware(Arc::new(policy));
            }
            agent
        };
        let runtime = tokio::runtime::Builder::new_current_thread().enable_time().build().expect("runtime");
        let user_text = format!("{user} {}", HIDDEN.join(" "));
        let outcome = runtime.block_on(agent(model.clone()).run(vec![Message::user(user_text.clone())])).expect("runs");
        let mut transcript = outcome.transcript;
        transcript.messages.push(Message::user(user_text));
        let resumed = Arc::new(ScriptedModel::new([ModelResponse::text("again")]));
        let _ = runtime.block_on(agent(resumed.clone()).resume(transcript));

        let mut requests = model.requests();
        requests.extend(resumed.requests());
        for request in &requests {
            let mut shown = serde_json::to_string(&request.tools).unwrap_or_default();
            shown.push_str(&request.callable_by_name.join(","));
            for message in &request.messages {
                if let Message::Tool { content, .. } = message {
                    shown.push_str(content);
                }
            }
            for name in &secret {
                prop_assert!(!shown.contains(name.as_str()), "`{}` reached the model in: {}", name, shown);
            }
            let everything = serde_json::to_string(&request).unwrap_or_default();
            prop_assert!(!everything.contains(FAILURE_SECRET), "a failure's error reached the model: {}", everything);
        }
        // The failures did run (so the check above saw them), and their errors reached the host.
        if a_visible_tool_fails {
            let host = recorder.events().into_iter().any(|e| matches!(e, RunEvent::ToolFailed { error, .. } if error.contains(FAILURE_SECRET)));
            prop_assert!(host, "a visible failing tool was called, and the host saw its error");
        }
        // A grounded tool's call with a value from nowhere ("x") was refused (so the check above
        // saw its answer).
        if a_visible_tool_is_grounded {
            let refused = recorder.events().into_iter().any(|e| matches!(e, RunEvent::ToolRejected { reason, .. } if reason.starts_with("ungrounded")));
            prop_assert!(refused, "a visible grounded tool was called with an ungrounded value and refused");
        }
    }
}
