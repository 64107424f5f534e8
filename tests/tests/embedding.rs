//! The embedding ranker on the real all-MiniLM-L6-v2 (installed by `.ci/models`; these tests
//! skip when it is absent, and fail instead under `TINYTOOLS_MODELS_REQUIRED=1`, as in CI).

use std::sync::{Arc, Mutex};

use serde_json::json;
use tinytools::discovery::{DeferredCatalog, RankMode, ToolDiscoveryPolicy};
use tinytools::model::Message;
use tinytools::rank::embedding::{EmbeddingError, EmbeddingRanker, TextEmbedder};
use tinytools::run::{Agent, RunEvent, RunPolicy};
use tinytools::schema::ToolSchema;
use tinytools_embed::BertEmbedder;
use tinytools_examples::models;
use tinytools_examples::scripted::search_call_answer;

fn cosine(a: &[f32], b: &[f32]) -> f32 {
    a.iter().zip(b).map(|(x, y)| x * y).sum()
}

#[test]
fn similarities_match_the_published_sentence_transformers_values() {
    let Some(model) = models::minilm() else { return };
    // The sentence-transformers quick start prints this matrix for all-MiniLM-L6-v2.
    let texts = ["The weather is lovely today.", "It's so sunny outside!", "He drove to the stadium."];
    let v = model.embed(&texts).unwrap();
    assert_eq!(v[0].len(), 384);
    for (i, j, published) in [(0, 1, 0.6660), (0, 2, 0.1046), (1, 2, 0.1411)] {
        let ours = cosine(&v[i], &v[j]);
        assert!((ours - published).abs() < 5e-4, "cos({i},{j}) = {ours}, published {published}");
    }
    assert!((cosine(&v[0], &v[0]) - 1.0).abs() < 1e-5, "unit length");
    // One text alone and the same text stacked in a batch agree (attention stays per text).
    for (i, text) in texts.iter().enumerate() {
        let alone = model.embed_one(text);
        assert!((cosine(&alone, &v[i]) - 1.0).abs() < 1e-5, "text {i} differs batched");
    }
}

#[test]
fn word_pieces_match_the_hugging_face_tokenizer() {
    let Some(model) = models::minilm() else { return };
    // Expected ids from the `tokenizers` Python package on the model's own tokenizer.json.
    let cases: [(&str, &[u32]); 6] = [
        (
            "getStockQuotes for ACME, please!",
            &[101, 4152, 17406, 28940, 12184, 2015, 2005, 9353, 4168, 1010, 3531, 999, 102],
        ),
        ("Café crème brûlée — naïve façade", &[101, 7668, 13675, 21382, 7987, 9307, 2063, 1517, 15743, 8508, 102]),
        ("math.factorial(5) = 120", &[101, 8785, 1012, 5387, 4818, 1006, 1019, 1007, 1027, 6036, 102]),
        ("東京の天気は？ 😀 emoji", &[101, 1879, 1755, 1671, 1811, 100, 1672, 1994, 100, 7861, 29147, 2072, 102]),
        ("", &[101, 102]),
        ("zero\u{200b}width soft\u{00ad}hyphen\u{feff}", &[101, 5717, 9148, 11927, 2232, 3730, 10536, 8458, 2368, 102]),
    ];
    for (text, expected) in cases {
        assert_eq!(model.token_ids(text), expected, "{text:?}");
    }
    let long_word = format!("un{} end", "x".repeat(120));
    assert_eq!(model.token_ids(&long_word), [101, 100, 2203, 102]);
    // Cut at max_seq_length (256), [CLS] and [SEP] included.
    assert_eq!(model.token_ids(&"word ".repeat(400)).len(), 256);
    // A search's query is read to its own, shorter budget.
    assert_eq!(model.query_token_ids(&"word ".repeat(400)).len(), BertEmbedder::DEFAULT_QUERY_TOKENS);
}

/// A model directory asking for more word pieces than BERT has positions (512) embeds a longer
/// text cut at 512, without a panic. The model's files are linked, its sentence config replaced.
#[cfg(unix)]
#[test]
fn a_text_longer_than_the_models_positions_is_cut_to_them() {
    if models::minilm().is_none() {
        return;
    }
    let source = models::minilm_dir();
    let dir = std::env::temp_dir().join(format!("tinytools-long-minilm-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    for entry in std::fs::read_dir(&source).unwrap() {
        let entry = entry.unwrap();
        if entry.file_name() != "sentence_bert_config.json" {
            std::os::unix::fs::symlink(entry.path(), dir.join(entry.file_name())).unwrap();
        }
    }
    std::fs::write(dir.join("sentence_bert_config.json"), r#"{"max_seq_length": 100000}"#).unwrap();
    let model = BertEmbedder::load(&dir).unwrap();
    std::fs::remove_dir_all(&dir).unwrap();
    let long = "word ".repeat(2_000);
    assert_eq!(model.token_ids(&long).len(), 512);
    let vectors = model.embed(&[&long, "a short text"]).unwrap();
    assert_eq!(vectors[0].len(), 384);
    assert!((cosine(&vectors[0], &vectors[0]) - 1.0).abs() < 1e-4, "unit length");
}

fn tool(name: &str, description: &str) -> (ToolSchema, Option<String>) {
    let parameters = json!({"type": "object", "properties": {"query": {"type": "string"}}});
    (ToolSchema::new(name, description, parameters), None)
}

fn catalogue() -> DeferredCatalog {
    DeferredCatalog::from_tools([
        tool("house_rentals", "Information about house renting: listings, prices, neighbourhoods."),
        tool("stock_quote", "Latest price of a listed company's shares."),
        tool("weather_forecast", "Forecast for a city: temperature, rain, wind."),
        tool("send_email", "Send an email message to a recipient."),
    ])
}

#[tokio::test]
async fn meaning_finds_the_tool_bm25_cannot() {
    let Some(model) = models::minilm() else { return };
    let catalog = catalogue();
    let query = "a one-bedroom apartment in Portland";
    assert!(catalog.bm25(query, 5).is_empty(), "the query shares no word with any tool");

    let ranker = Arc::new(EmbeddingRanker::new(Arc::new(model)));
    assert_eq!(ranker.prepare(&catalog).unwrap(), 4);
    assert_eq!(ranker.prepare(&catalog).unwrap(), 0, "embedded once");
    let policy = ToolDiscoveryPolicy::default().with_ranker(ranker.clone()).with_rank_mode(RankMode::Ranker);
    let outcome = catalog.rank(&policy, query, 2).await;
    assert_eq!(outcome.fallback, None);
    assert_eq!(outcome.ranker, "embedding:all-MiniLM-L6-v2");
    assert_eq!(outcome.matched.len(), 2);
    assert_eq!(outcome.matched[0].name, "house_rentals");
    let confidence = outcome.matched[0].confidence.unwrap();
    assert!((0.0..=1.0).contains(&confidence) && confidence > outcome.matched[1].confidence.unwrap());

    // Compare serves the embedding ranking and records what BM25 said (nothing).
    let compare = ToolDiscoveryPolicy::default().with_ranker(ranker).with_rank_mode(RankMode::Compare);
    let outcome = catalog.rank(&compare, "will it rain in Lisbon tomorrow", 1).await;
    assert_eq!(outcome.matched[0].name, "weather_forecast");
    assert_eq!(outcome.shadow_matched, Some(vec!["weather_forecast".to_owned()]));
}

#[tokio::test]
async fn a_changed_description_is_embedded_again() {
    let Some(model) = models::minilm() else { return };
    let ranker = EmbeddingRanker::new(Arc::new(model));
    assert_eq!(ranker.prepare(&catalogue()).unwrap(), 4);
    let changed = DeferredCatalog::from_tools([
        tool("house_rentals", "Information about house renting: listings, prices, neighbourhoods."),
        tool("stock_quote", "Tell a joke about the stock market."),
    ]);
    assert_eq!(ranker.prepare(&changed).unwrap(), 1);
}

#[tokio::test(flavor = "multi_thread")]
async fn an_agent_run_finds_calls_and_answers_through_the_embedding_ranker() {
    let Some(model) = models::minilm() else { return };
    let registry = Arc::new(tinytools_examples::catalogue::registry());
    let query = "accommodation in Rome for two nights";
    let catalog = DeferredCatalog::new(&registry, |_| true);
    let bm25_first = catalog.bm25(query, 1).first().map(|hit| hit.name.clone());
    assert_ne!(bm25_first.as_deref(), Some("hotel_search"), "a query BM25 does not answer");

    let ranker = EmbeddingRanker::new(Arc::new(model));
    ranker.prepare(&catalog).unwrap();
    let policy = RunPolicy::default()
        .with_discovery(ToolDiscoveryPolicy::default().with_ranker(Arc::new(ranker)).with_rank_mode(RankMode::Ranker));
    let args = json!({"city": "Rome", "check_in": "2026-12-07", "check_out": "2026-12-09"});
    let script = search_call_answer(query, args, |result| {
        result.and_then(|r| r["hotels"][0]["name"].as_str()).unwrap_or("nothing").to_owned()
    });
    let events: Arc<Mutex<Vec<RunEvent>>> = Arc::default();
    let sink = events.clone();
    let agent = Agent::new(registry, Arc::new(script))
        .with_policy(policy)
        .with_events(Arc::new(move |event: &RunEvent| sink.lock().unwrap().push(event.clone())));
    let outcome = agent.run(vec![Message::user("Find me a hotel in Rome for next week.")]).await.unwrap();
    assert_eq!(outcome.answer, "Casa Azul");
    let events = events.lock().unwrap().clone();
    assert!(events.iter().any(|e| matches!(e,
        RunEvent::ToolSearched { ranker, matched, fallback: None, .. }
            if ranker == "embedding:all-MiniLM-L6-v2" && matched.first().map(String::as_str) == Some("hotel_search"))));
    assert!(
        events.iter().any(|e| matches!(e, RunEvent::DeferredToolCall { tool_name, .. } if tool_name == "hotel_search"))
    );
}

/// An embedder that fails, to show the bridge's fallback holds for this ranker too.
struct Broken;

impl TextEmbedder for Broken {
    fn name(&self) -> &str {
        "broken"
    }
    fn embed(&self, _: &[&str]) -> Result<Vec<Vec<f32>>, EmbeddingError> {
        Err(EmbeddingError::model("the model server is down"))
    }
}

/// An embedder that panics.
struct Panics;

impl TextEmbedder for Panics {
    fn name(&self) -> &str {
        "panics"
    }
    fn embed(&self, _: &[&str]) -> Result<Vec<Vec<f32>>, EmbeddingError> {
        panic!("index out of bounds")
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn a_failing_or_panicking_embedder_falls_back_to_bm25_with_the_reason() {
    let catalog = catalogue();
    for (embedder, reason) in [
        (Arc::new(Broken) as Arc<dyn TextEmbedder>, "the model server is down"),
        (Arc::new(Panics) as Arc<dyn TextEmbedder>, "panicked"),
    ] {
        // A panic's backtrace can take seconds to capture on a loaded machine: the timeout is
        // not what this test is about, so it is generous.
        let policy = ToolDiscoveryPolicy::default()
            .with_ranker(Arc::new(EmbeddingRanker::new(embedder)))
            .with_rank_mode(RankMode::Ranker)
            .with_ranker_timeout(std::time::Duration::from_secs(60));
        let outcome = catalog.rank(&policy, "stock price", 3).await;
        assert_eq!(outcome.matched[0].name, "stock_quote", "BM25 answered");
        let fallback = outcome.fallback.unwrap_or_default();
        assert!(fallback.contains(reason), "{fallback}");
    }
}

/// Rotate the production database credentials.
#[tinytools::tool(exposure = "hidden", destructive)]
async fn rotate_db_credentials() -> String {
    "rotated".into()
}

/// Records every text it is asked to embed.
#[derive(Default)]
struct Recording(std::sync::Mutex<Vec<String>>);

impl TextEmbedder for Recording {
    fn name(&self) -> &str {
        "recording"
    }
    fn embed(&self, texts: &[&str]) -> Result<Vec<Vec<f32>>, EmbeddingError> {
        self.0.lock().unwrap().extend(texts.iter().map(|t| (*t).to_owned()));
        Ok(texts.iter().map(|_| vec![1.0, 0.0]).collect())
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn only_admitted_deferred_tools_reach_the_embedder() {
    let mut registry = tinytools_examples::catalogue::registry();
    registry.register(RotateDbCredentials).unwrap();
    let catalog = DeferredCatalog::new(&registry, |name| name != "calendar_invite");
    let recording = Arc::new(Recording::default());
    let policy = ToolDiscoveryPolicy::default()
        .with_ranker(Arc::new(EmbeddingRanker::new(recording.clone())))
        .with_rank_mode(RankMode::Ranker);
    let outcome = catalog.rank(&policy, "rotate the database credentials", 5).await;
    assert_eq!(outcome.fallback, None);
    let texts = recording.0.lock().unwrap().clone();
    assert_eq!(texts.len(), catalog.len() + 1, "every catalogue tool, then the query");
    assert!(texts.iter().any(|t| t.starts_with("stock_quote: ")), "a deferred tool is embedded");
    for forbidden in ["rotate_db_credentials", "calendar_invite:", "read_note"] {
        assert!(!texts.iter().any(|t| t.contains(forbidden)), "{forbidden} reached the embedder");
    }
    assert!(outcome.matched.iter().all(|hit| hit.name != "rotate_db_credentials"));
}

#[test]
fn a_broken_model_directory_is_named_in_the_error() {
    let dir = std::env::temp_dir().join(format!("tinytools-bad-model-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(
        dir.join("config.json"),
        r#"{"hidden_size": 384, "num_attention_heads": 12,
        "num_hidden_layers": 6, "intermediate_size": 1536, "max_position_embeddings": 512}"#,
    )
    .unwrap();
    let error = BertEmbedder::load(&dir).unwrap_err();
    assert!(matches!(error, EmbeddingError::Io { .. }), "{error}");
    assert!(error.to_string().contains("tokenizer.json"), "{error}");

    std::fs::write(dir.join("tokenizer.json"), r#"{"model": {"type": "BPE", "vocab": {}}}"#).unwrap();
    let error = BertEmbedder::load(&dir).unwrap_err().to_string();
    assert!(error.contains("not WordPiece"), "{error}");

    std::fs::write(
        dir.join("tokenizer.json"),
        r#"{"model": {"type": "WordPiece", "vocab": {"[UNK]": 0, "[CLS]": 1, "[SEP]": 2}}}"#,
    )
    .unwrap();
    std::fs::write(dir.join("model.safetensors"), b"not a tensor file").unwrap();
    let error = BertEmbedder::load(&dir).unwrap_err().to_string();
    assert!(error.contains("model.safetensors") && error.contains("not safetensors"), "{error}");
    std::fs::remove_dir_all(&dir).unwrap();
}
