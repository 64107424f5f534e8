//! Another embedder plugged into the embedding ranker through `TextEmbedder`, the way a
//! fastembed-rs or model2vec-rs model would be: here a toy one that needs no model file and
//! no network. It hashes each word and its three-letter pieces into 256 numbers (feature
//! hashing), so "renting" and "rentals" come out alike where BM25's stems would not meet. It
//! knows spelling, not meaning: a stand-in to show the seam, not a model to rank with (for
//! that, `tinytools_embed::load_ranker` and all-MiniLM-L6-v2).
//!
//! ```text
//! cargo run -p tinytools-examples --features embedding --example custom_embedder
//! ```

use std::sync::Arc;

use serde_json::json;
use tinytools::discovery::{DeferredCatalog, RankMode, ToolDiscoveryPolicy};
use tinytools::rank::embedding::{EmbeddingError, EmbeddingRanker, TextEmbedder};
use tinytools::schema::ToolSchema;

/// Feature hashing of words and their three-letter pieces: a toy sentence encoder.
struct HashingEmbedder {
    width: usize,
}

impl HashingEmbedder {
    fn embed_one(&self, text: &str) -> Vec<f32> {
        let mut vector = vec![0.0_f32; self.width];
        let lower = text.to_lowercase();
        for word in lower.split(|c: char| !c.is_alphanumeric()).filter(|w| !w.is_empty()) {
            let padded: Vec<char> = format!("<{word}>").chars().collect();
            let pieces = padded.windows(3).map(|w| w.iter().collect::<String>());
            for (piece, weight) in std::iter::once((word.to_owned(), 2.0)).chain(pieces.map(|p| (p, 1.0))) {
                let hash = fnv1a(piece.as_bytes());
                let sign = if hash >> 63 == 0 { 1.0 } else { -1.0 };
                vector[(hash % self.width as u64) as usize] += sign * weight;
            }
        }
        let norm = vector.iter().map(|x| x * x).sum::<f32>().sqrt();
        if norm > 0.0 {
            vector.iter_mut().for_each(|x| *x /= norm);
        } else {
            // A text with no word still needs a unit vector: one fixed direction.
            vector[0] = 1.0;
        }
        vector
    }
}

fn fnv1a(bytes: &[u8]) -> u64 {
    bytes.iter().fold(0xcbf2_9ce4_8422_2325, |hash, &b| (hash ^ u64::from(b)).wrapping_mul(0x0000_0100_0000_01b3))
}

impl TextEmbedder for HashingEmbedder {
    fn name(&self) -> &str {
        "hashing-256"
    }

    /// Unit vectors of one width, one per text, in order: all the ranker asks.
    fn embed(&self, texts: &[&str]) -> Result<Vec<Vec<f32>>, EmbeddingError> {
        Ok(texts.iter().map(|text| self.embed_one(text)).collect())
    }

    /// Part of what keys a saved-vectors file (`EmbeddingRanker::warm`): change it whenever
    /// the vectors would change.
    fn model_id(&self) -> String {
        format!("hashing {}d v1", self.width)
    }

    /// The cosine at which a hit reaches pre-promotion's default floor. A real model's is
    /// measured (`embedding_calibration`, docs/retrieval.md); this toy's is a guess.
    fn calibrated_cosine_floor(&self) -> f32 {
        0.3
    }
}

fn tool(name: &str, description: &str, parameters: &[&str]) -> (ToolSchema, Option<String>) {
    let properties: serde_json::Map<String, serde_json::Value> =
        parameters.iter().map(|p| ((*p).to_owned(), json!({"type": "string"}))).collect();
    (ToolSchema::new(name, description, json!({"type": "object", "properties": properties})), None)
}

#[tokio::main(flavor = "current_thread")]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let catalog = DeferredCatalog::from_tools([
        tool("house_rentals", "Listings of houses and flats for rent, with prices.", &["city"]),
        tool("stock_quote", "Latest price of a listed company's shares.", &["symbol"]),
        tool("weather_forecast", "Forecast for a city: temperature, rain, wind.", &["city"]),
        tool("send_email", "Send an email message to a recipient.", &["to", "subject", "body"]),
        tool("currency_convert", "Convert an amount between two currencies.", &["amount", "from", "to"]),
    ]);
    // Registered like any embedder: the ranker embeds the catalogue once, the query per search,
    // and blends the cosines with BM25.
    let ranker = Arc::new(EmbeddingRanker::new(Arc::new(HashingEmbedder { width: 256 })));
    println!("embedded {} tools with {}", ranker.prepare(&catalog)?, tinytools::rank::ToolRanker::name(&*ranker));

    for query in ["renting an apartment", "emailing my landlord", "currency conversion"] {
        let explanation = ranker.explain(&catalog, query, 3)?;
        println!("\n{query:?} (background cosine {:.2})", explanation.background);
        for hit in explanation.hits {
            println!(
                "  {:<18} cosine {:.2}  bm25 {:.2}  score {:.2}  confidence {:.2}",
                hit.name, hit.cosine, hit.lexical, hit.score, hit.confidence
            );
        }
    }

    // What `tool_search` and pre-promotion do with it: installed on the discovery policy.
    let policy = ToolDiscoveryPolicy::default().with_ranker(ranker).with_rank_mode(RankMode::Ranker);
    let outcome = catalog.rank(&policy, "renting an apartment", 2).await;
    let names: Vec<&str> = outcome.matched.iter().map(|hit| hit.name.as_str()).collect();
    println!("\ntool_search would answer {names:?} (ranker {})", outcome.ranker);
    Ok(())
}
