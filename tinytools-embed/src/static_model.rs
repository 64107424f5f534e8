//! [`StaticEmbedder`]: a static (model2vec-style) embedding model: a lookup and a mean.

use std::collections::HashMap;
use std::path::Path;

use tinytools::rank::embedding::{EmbeddingError, TextEmbedder};

use super::STATIC_MINILM_COSINE_FLOOR;
use super::static_file::{STATIC_VECTORS_FILE, StaticFile};
use super::wordpiece::WordPiece;

/// The version of [`StaticEmbedder`]'s arithmetic, part of its model id: bump it whenever a
/// change would move the vectors it gives, so saved tool vectors are embedded again.
const STATIC_VERSION: u32 = 2;

/// A static embedding model: a text's vector is the normalised, weighted mean of its word
/// pieces' vectors, looked up in a table. No encoder runs, so a text takes microseconds
/// where [`BertEmbedder`](super::BertEmbedder) takes milliseconds; the table is distilled
/// from a sentence encoder (the benchmarks' `distill_static`, as model2vec does), and
/// it knows each word piece only out of context, so it ranks less well
/// (`docs/retrieval.md`).
///
/// It loads a directory holding [`STATIC_VECTORS_FILE`] (the binary format is described in
/// the source, `static_file.rs`): the WordPiece vocabulary, a weight and a vector per word
/// piece. Texts are split as BERT's uncased WordPiece splits them, `[UNK]` pieces left out of
/// the mean; a text with no known piece gets the `[UNK]` vector.
///
/// ```no_run
/// use std::sync::Arc;
/// use tinytools::rank::embedding::{EmbeddingRanker, TextEmbedder};
/// use tinytools_embed::StaticEmbedder;
///
/// // `cargo run --release -p tinytools-bench --bin distill_static` writes it.
/// let model = StaticEmbedder::load("target/models/minilm-static")?;
/// let vectors = model.embed(&["find a flat to rent", "apartment search"])?;
/// assert_eq!(vectors[0].len(), model.width());
/// // Its confidence calibrated for this model: `STATIC_MINILM_COSINE_FLOOR`.
/// let ranker = EmbeddingRanker::new(Arc::new(model));
/// # Ok::<(), tinytools::rank::embedding::EmbeddingError>(())
/// ```
pub struct StaticEmbedder {
    name: String,
    /// Name, width, the file's checksum and [`STATIC_VERSION`].
    model_id: String,
    source: String,
    wordpiece: WordPiece,
    width: usize,
    weights: Vec<f32>,
    /// One row of `width` per vocabulary id.
    vectors: Vec<f32>,
}

impl std::fmt::Debug for StaticEmbedder {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("StaticEmbedder")
            .field("model_id", &self.model_id)
            .field("source", &self.source)
            .field("tokens", &self.weights.len())
            .finish_non_exhaustive()
    }
}

impl StaticEmbedder {
    /// Loads the static model in `dir` (its [`STATIC_VECTORS_FILE`]); the model's name is the
    /// directory's.
    ///
    /// # Errors
    /// [`EmbeddingError::Io`] when the file cannot be read; [`EmbeddingError::Format`] naming
    /// the file and what is wrong when it is not a whole static-vectors file of this version
    /// (too short, another format, damaged, impossible sizes, a vocabulary without `[UNK]`,
    /// `[CLS]` or `[SEP]`, or with a token twice).
    pub fn load(dir: impl AsRef<Path>) -> Result<Self, EmbeddingError> {
        let dir = dir.as_ref();
        let path = dir.join(STATIC_VECTORS_FILE);
        let bytes = std::fs::read(&path).map_err(|source| EmbeddingError::Io { path: path.clone(), source })?;
        let (file, checksum) = StaticFile::decode(&bytes).map_err(|what| EmbeddingError::format(&path, what))?;
        let mut vocab = HashMap::with_capacity(file.tokens.len());
        for (id, token) in file.tokens.iter().enumerate().filter(|(_, token)| !token.is_empty()) {
            let id = u32::try_from(id).map_err(|_| EmbeddingError::format(&path, "too many tokens"))?;
            if vocab.insert(token.clone(), id).is_some() {
                return Err(EmbeddingError::format(&path, format!("the token `{token}` appears twice")));
            }
        }
        let wordpiece = WordPiece::new(vocab)
            .map_err(|missing| EmbeddingError::format(&path, format!("the vocabulary has no `{missing}`")))?;
        let name = dir.file_name().map_or_else(|| "static".to_owned(), |n| n.to_string_lossy().into_owned());
        Ok(Self {
            model_id: format!("{name} static {}d file:{checksum:016x} static:{STATIC_VERSION}", file.width),
            name,
            source: file.source,
            wordpiece,
            width: file.width,
            weights: file.weights,
            vectors: file.vectors,
        })
    }

    /// Numbers per vector.
    pub fn width(&self) -> usize {
        self.width
    }

    /// What the vectors were distilled from and how, as the file records it.
    pub fn source(&self) -> &str {
        &self.source
    }

    /// One text's embedding: unit length, [`width`](Self::width) numbers.
    pub fn embed_one(&self, text: &str) -> Vec<f32> {
        let mut sum = vec![0.0_f32; self.width];
        for id in self.wordpiece.encode(text, usize::MAX) {
            if id == self.wordpiece.unk {
                continue;
            }
            let weight = self.weights[id as usize];
            for (total, x) in sum.iter_mut().zip(self.row(id)) {
                *total += weight * x;
            }
        }
        unit(sum).or_else(|| unit(self.row(self.wordpiece.unk).to_vec())).unwrap_or_else(|| {
            // A table whose `[UNK]` row is zero: any fixed unit vector will do.
            let mut first = vec![0.0; self.width];
            first[0] = 1.0;
            first
        })
    }

    fn row(&self, id: u32) -> &[f32] {
        let start = id as usize * self.width;
        &self.vectors[start..start + self.width]
    }
}

/// `vector` scaled to unit length; `None` when it has none (all zeros) or is not finite.
fn unit(mut vector: Vec<f32>) -> Option<Vec<f32>> {
    let norm = vector.iter().map(|x| x * x).sum::<f32>().sqrt();
    if !(norm.is_finite() && norm > 0.0) {
        return None;
    }
    vector.iter_mut().for_each(|x| *x /= norm);
    Some(vector)
}

impl TextEmbedder for StaticEmbedder {
    fn name(&self) -> &str {
        &self.name
    }

    fn model_id(&self) -> String {
        self.model_id.clone()
    }

    /// [`STATIC_MINILM_COSINE_FLOOR`], measured for the static model `distill_static` writes by
    /// default (a variant of another width or weighting was not measured).
    fn calibrated_cosine_floor(&self) -> f32 {
        STATIC_MINILM_COSINE_FLOOR
    }

    /// As [`BertEmbedder`](crate::BertEmbedder)'s: SIMD, over rayon's pool from 1,000 rows.
    fn dot_products(&self, query: &[f32], rows: &[&[f32]]) -> Vec<f32> {
        crate::dots::dot_products(query, rows)
    }

    /// On this thread: a text is a few microseconds of lookups.
    fn embed(&self, texts: &[&str]) -> Result<Vec<Vec<f32>>, EmbeddingError> {
        Ok(texts.iter().map(|text| self.embed_one(text)).collect())
    }
}

#[cfg(test)]
mod tests {
    use super::super::static_file::Precision;
    use super::super::static_file::tests::sample;
    use super::*;

    fn write(name: &str, bytes: &[u8]) -> std::path::PathBuf {
        let dir = std::env::temp_dir().join(format!("tinytools-static-{name}-{}", std::process::id()));
        std::fs::create_dir_all(&dir).ok();
        std::fs::write(dir.join(STATIC_VECTORS_FILE), bytes).ok();
        dir
    }

    fn load(name: &str, file: &StaticFile) -> StaticEmbedder {
        let dir = write(name, &file.encode());
        let model = StaticEmbedder::load(&dir).unwrap_or_else(|e| panic!("{e}"));
        std::fs::remove_dir_all(&dir).ok();
        model
    }

    fn close(a: &[f32], b: &[f32]) -> bool {
        a.len() == b.len() && a.iter().zip(b).all(|(x, y)| (x - y).abs() < 1e-3)
    }

    #[test]
    fn a_text_is_the_normalised_weighted_mean_of_its_pieces() {
        let model = load("mean", &sample(Precision::F32));
        // cat (1, 0) × 1 + dog (0, 2) × 0.5 = (1, 1).
        let half = std::f32::consts::FRAC_1_SQRT_2;
        assert!(close(&model.embed_one("Cat dog"), &[half, half]), "{:?}", model.embed_one("Cat dog"));
        // cat + ##s (0.5, 0.5) = (1.5, 0.5); a repeated piece counts twice.
        let norm = 2.5_f32.sqrt();
        assert!(close(&model.embed_one("cats"), &[1.5 / norm, 0.5 / norm]));
        let (a, b) = (1.0_f32 + 1.0, 1.0_f32);
        let norm = (a * a + b * b).sqrt();
        assert!(close(&model.embed_one("cat cat dog"), &[a / norm, b / norm]));
        assert_eq!(model.width(), 2);
        assert_eq!(model.source(), "test");
    }

    #[test]
    fn the_weights_are_applied_and_f16_gives_the_same_vectors() {
        let mut unweighted = sample(Precision::F32);
        unweighted.weights = vec![1.0; 7];
        let plain = load("unweighted", &unweighted).embed_one("cat dog");
        let norm = 5.0_f32.sqrt();
        assert!(close(&plain, &[1.0 / norm, 2.0 / norm]), "{plain:?}");
        let f16 = load("f16", &sample(Precision::F16));
        let f32 = load("f32", &sample(Precision::F32));
        assert!(close(&f16.embed_one("cats dog"), &f32.embed_one("cats dog")));
    }

    #[test]
    fn unknown_pieces_are_left_out_and_a_text_of_none_gets_unk() -> Result<(), EmbeddingError> {
        let model = load("unknown", &sample(Precision::F32));
        assert_eq!(model.embed_one("cat xyzzy ???"), model.embed_one("cat"));
        for text in ["xyzzy", "", "   "] {
            assert_eq!(model.embed_one(text), [0.0, 1.0], "{text:?} gets [UNK]'s vector");
        }
        let mut zero_unk = sample(Precision::F32);
        zero_unk.vectors[3] = 0.0;
        assert_eq!(load("zero-unk", &zero_unk).embed_one("xyzzy"), [1.0, 0.0]);
        let vectors = model.embed(&["cat", "dog", "xyzzy"])?;
        assert!(vectors.iter().all(|v| (v.iter().map(|x| x * x).sum::<f32>() - 1.0).abs() < 1e-6));
        Ok(())
    }

    #[test]
    fn a_missing_short_foreign_or_unusable_file_is_a_clear_error() {
        let missing = StaticEmbedder::load("/nonexistent/static").err().map(|e| e.to_string()).unwrap_or_default();
        assert!(missing.contains("/nonexistent/static/static_vectors.bin"), "{missing}");
        let mut no_unk = sample(Precision::F32);
        no_unk.tokens[1] = "unk".into();
        let mut twice = sample(Precision::F32);
        twice.tokens[5] = "cat".into();
        let good = sample(Precision::F16).encode();
        for (name, bytes, problem) in [
            ("short", b"TTSTATIC".to_vec(), "too short"),
            ("foreign", b"{\"model\": \"not this\"}".to_vec(), "no TTSTATIC header"),
            ("cut", good[..good.len() / 2].to_vec(), "checksum does not match"),
            ("no-unk", no_unk.encode(), "the vocabulary has no `[UNK]`"),
            ("twice", twice.encode(), "the token `cat` appears twice"),
        ] {
            let dir = write(name, &bytes);
            let error = StaticEmbedder::load(&dir).err().map(|e| e.to_string()).unwrap_or_default();
            std::fs::remove_dir_all(&dir).ok();
            assert!(error.contains(STATIC_VECTORS_FILE) && error.contains(problem), "{name}: {error}");
        }
    }

    #[test]
    fn a_ranker_over_it_promotes_at_the_static_models_own_floor() -> Result<(), EmbeddingError> {
        use tinytools::rank::embedding::EmbeddingRanker;
        use tinytools::rank::{DEFAULT_MIN_CONFIDENCE, DeferredCatalog};

        use super::super::MINILM_COSINE_FLOOR;
        let model = load("ranker", &sample(Precision::F32));
        assert_eq!(model.calibrated_cosine_floor(), STATIC_MINILM_COSINE_FLOOR);
        let ranker = EmbeddingRanker::new(std::sync::Arc::new(model)).bm25_weight(0.0);
        assert!(format!("{ranker:?}").contains("cosine_floor: 0.594"), "what a host gets by default: {ranker:?}");
        let tool = |name: &str| tinytools::ToolSchema::new(name, "", serde_json::json!({"type": "object"}));
        let catalog = DeferredCatalog::from_tools([(tool("cat"), None), (tool("dog"), None)]);
        // "cat dog dog" is (1, 2) / √5: dog's (0, 1) at cosine 0.894, cat's (1, 0) at 0.447,
        // between MiniLM's floor (0.415) and the static model's (0.594).
        let hits = ranker.explain(&catalog, "cat dog dog", 5)?.hits;
        let confidence = |name: &str| hits.iter().find(|hit| hit.name == name).map(|hit| (hit.cosine, hit.confidence));
        let (Some((dog_cosine, dog)), Some((cat_cosine, cat))) = (confidence("dog"), confidence("cat")) else {
            panic!("both tools ranked: {hits:?}")
        };
        assert!((dog_cosine - 0.894).abs() < 1e-3 && (cat_cosine - 0.447).abs() < 1e-3, "{hits:?}");
        assert!(dog >= DEFAULT_MIN_CONFIDENCE && cat < DEFAULT_MIN_CONFIDENCE, "{hits:?}");
        let at_minilm = ranker.cosine_floor(MINILM_COSINE_FLOOR).explain(&catalog, "cat dog dog", 5)?.hits;
        assert!(at_minilm.iter().all(|hit| hit.confidence >= DEFAULT_MIN_CONFIDENCE), "{at_minilm:?}");
        Ok(())
    }

    #[test]
    fn the_hosts_loader_picks_the_static_model_when_the_directory_holds_one() -> Result<(), EmbeddingError> {
        let dir = write("loader", &sample(Precision::F32).encode());
        let ranker = crate::load_ranker(&dir);
        std::fs::remove_dir_all(&dir).ok();
        let ranker = ranker?;
        assert_eq!(
            tinytools::rank::ToolRanker::name(&ranker),
            "embedding:tinytools-static-loader-".to_owned() + &std::process::id().to_string()
        );
        assert!(format!("{ranker:?}").contains(&format!("cosine_floor: {STATIC_MINILM_COSINE_FLOOR}")), "{ranker:?}");
        // A damaged static file is refused, not read as a BERT directory.
        let dir = write("loader-damaged", b"TTSTATIC but cut short");
        let error = crate::load_ranker(&dir).err().map(|e| e.to_string()).unwrap_or_default();
        std::fs::remove_dir_all(&dir).ok();
        assert!(error.contains(STATIC_VECTORS_FILE), "{error}");
        Ok(())
    }

    #[test]
    fn the_model_id_follows_the_vectors() {
        let (a, same) = (load("id-a", &sample(Precision::F32)), load("id-a", &sample(Precision::F32)));
        let mut other = sample(Precision::F32);
        other.vectors[8] = 0.9;
        let b = load("id-a", &other);
        let f16 = load("id-a", &sample(Precision::F16));
        assert_eq!(a.model_id(), same.model_id());
        assert_ne!(a.model_id(), b.model_id(), "one number changed");
        assert_ne!(a.model_id(), f16.model_id(), "another precision");
        assert!(a.model_id().starts_with(&format!("tinytools-static-id-a-{} static 2d file:", std::process::id())));
        assert_eq!(a.name(), format!("tinytools-static-id-a-{}", std::process::id()));
    }
}
