//! Tool vectors across processes: [`EmbeddingRanker::warm`] (load what is valid, embed what is
//! missing, save), [`EmbeddingRanker::persist_to`] (the same, kept up as searches embed), and
//! the [`save_vectors`](EmbeddingRanker::save_vectors) /
//! [`load_vectors`](EmbeddingRanker::load_vectors) they are made of.

use std::collections::HashSet;
use std::path::{Path, PathBuf};

use super::EmbeddingError;
use super::cached::Embedded;
use super::keep::save;
use super::ranker::EmbeddingRanker;
use super::vectors_file::SavedVectors;
use crate::rank::catalog::DeferredCatalog;

/// What [`EmbeddingRanker::warm`] did: the host's to log.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct WarmOutcome {
    /// Vectors taken from the file (tools of the catalogue whose text has not changed since).
    pub loaded: usize,
    /// Tools embedded now: new, changed, or missing from the file.
    pub embedded: usize,
    /// Whether the file was written (it is only when something changed).
    pub saved: bool,
    /// Why the file was not used, when it was there but damaged, foreign (another model, another
    /// format version) or unreadable; also logged as a `tracing` warning. The catalogue was then
    /// embedded afresh and the file replaced.
    pub ignored: Option<String>,
}

impl EmbeddingRanker {
    /// Writes every vector embedded so far to `path`, keyed by the embedder's
    /// [`model_id`](super::TextEmbedder::model_id), each tool's embedded text and the file
    /// format's version, with a checksum; written beside `path` and renamed into place, so a
    /// crash never leaves half a file. Returns how many were written.
    ///
    /// # Errors
    /// [`EmbeddingError::Write`] when the file cannot be written (check the directory exists
    /// and is writable).
    pub fn save_vectors(&self, path: impl AsRef<Path>) -> Result<usize, EmbeddingError> {
        save(&self.store, &*self.embedder, path.as_ref())
    }

    /// Keeps this ranker's vectors in the file at `path` across restarts, for hosts that
    /// cannot say when their catalogue is complete (the gateway keeps it in its cache
    /// directory): loads what the file holds now, then writes it again, whole, whenever a
    /// search, [`prepare`](Self::prepare) or [`explain`](Self::explain) has embedded tools.
    /// A restart over the same tools embeds only the query. The file is checked as
    /// [`load_vectors`](Self::load_vectors) checks it: a damaged or foreign one (another model,
    /// another format version) is ignored with a `tracing` warning, never trusted, and replaced
    /// at the next write; a write that fails is a warning too, and the search goes on. The
    /// directory must exist. The file holds every tool the ranker has embedded or loaded, so a
    /// tool that left the catalogue stays in it; [`warm`](Self::warm) writes the catalogue alone.
    ///
    /// ```
    /// use tinytools::rank::embedding::EmbeddingRanker;
    /// # fn demo(ranker: EmbeddingRanker) {
    /// let ranker = ranker.persist_to(std::env::temp_dir().join("tool-vectors.vec"));
    /// # let _ = ranker; }
    /// ```
    #[must_use]
    pub fn persist_to(mut self, path: impl Into<PathBuf>) -> Self {
        let path: PathBuf = path.into();
        if path.exists()
            && let Err(error) = self.load_vectors(&path)
        {
            tracing::warn!(%error, "saved tool vectors ignored; the file is replaced when tools are next embedded");
        }
        self.persist = Some(path.into());
        self
    }

    /// Adds the vectors [`save_vectors`](Self::save_vectors) wrote. A tool whose text has
    /// changed since is embedded again at the next search or [`prepare`](Self::prepare).
    /// Returns how many were loaded.
    ///
    /// The file is checked whole before anything is added (model, format version, checksum,
    /// every vector finite and unit length, all of one width, the embedder's once it is known):
    /// a file that fails is not used at all.
    ///
    /// # Errors
    /// [`EmbeddingError::Io`] when the file cannot be read; [`EmbeddingError::Format`] when it
    /// is not such a file, is damaged, or another model or format version wrote it.
    pub fn load_vectors(&self, path: impl AsRef<Path>) -> Result<usize, EmbeddingError> {
        self.load_filtered(path.as_ref(), |_| true).map(|(kept, _)| kept)
    }

    /// Loads the file's tools that `keep` accepts; returns how many were kept, and how many the
    /// file held.
    fn load_filtered(&self, path: &Path, keep: impl Fn(&str) -> bool) -> Result<(usize, usize), EmbeddingError> {
        let bytes = std::fs::read(path).map_err(|source| EmbeddingError::Io { path: path.into(), source })?;
        let saved = SavedVectors::decode(&bytes, &self.embedder.model_id())
            .map_err(|what| EmbeddingError::format(path, what))?;
        if let Some(width) = self.store.width().filter(|width| *width != saved.width && !saved.tools.is_empty()) {
            return Err(EmbeddingError::format(
                path,
                format!("its vectors have {} numbers; the embedder's have {width}", saved.width),
            ));
        }
        let mut cache = self.store.write();
        let total = saved.tools.len();
        let mut kept = 0;
        for tool in saved.tools.into_iter().filter(|tool| keep(&tool.name)) {
            cache.insert(
                tool.name,
                Embedded { text: tool.text, vector: tool.vector.into(), schema: None, context: None },
            );
            kept += 1;
        }
        Ok((kept, total))
    }

    /// The one call a host needs to keep a catalogue's vectors across restarts: loads `path`
    /// when it is there and valid (only the catalogue's tools), embeds whatever is missing or
    /// changed, and writes the file back when anything changed. A damaged or foreign file is
    /// ignored with a warning ([`WarmOutcome::ignored`], and a `tracing` warning), never
    /// trusted, and replaced.
    ///
    /// # Errors
    /// The embedder's error; [`EmbeddingError::Write`] when the file cannot be written (the
    /// ranker is warm all the same).
    pub fn warm(&self, catalog: &DeferredCatalog, path: impl AsRef<Path>) -> Result<WarmOutcome, EmbeddingError> {
        self.warm_with_progress(catalog, path, |_, _| {})
    }

    /// [`warm`](Self::warm), calling `progress(done, total)` as the tools to embed are
    /// embedded (see [`prepare_with_progress`](Self::prepare_with_progress)).
    ///
    /// # Errors
    /// As [`warm`](Self::warm).
    pub fn warm_with_progress(
        &self,
        catalog: &DeferredCatalog,
        path: impl AsRef<Path>,
        progress: impl Fn(usize, usize),
    ) -> Result<WarmOutcome, EmbeddingError> {
        let path = path.as_ref();
        let mut outcome = WarmOutcome::default();
        let mut stale_file = true;
        if path.exists() {
            let names: HashSet<&str> = catalog.iter().map(|tool| tool.schema().name.as_str()).collect();
            match self.load_filtered(path, |name| names.contains(name)) {
                Ok((kept, total)) => {
                    outcome.loaded = kept;
                    // Tools no longer in the catalogue are dropped from the file.
                    stale_file = kept < total;
                }
                Err(error) => {
                    tracing::warn!(%error, "saved tool vectors ignored; embedding the catalogue afresh");
                    outcome.ignored = Some(error.to_string());
                }
            }
        }
        let stale = self.store.stale(catalog);
        let changed = {
            let cache = self.store.read();
            stale.iter().filter(|pending| cache.contains_key(&pending.schema.name)).count()
        };
        outcome.loaded = outcome.loaded.saturating_sub(changed);
        outcome.embedded = self.store.fill(&*self.embedder, stale, &progress)?;
        if outcome.embedded > 0 || stale_file {
            self.save_vectors(path)?;
            outcome.saved = true;
        }
        Ok(outcome)
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;
    use std::sync::atomic::{AtomicUsize, Ordering};

    use super::*;
    use crate::rank::embedding::TextEmbedder;
    use crate::schema::ToolSchema;

    /// Embeds a text as its length and one, normalised; counts the texts; `model` is its id.
    struct Lengths {
        texts: AtomicUsize,
        model: &'static str,
    }

    fn lengths(model: &'static str) -> Arc<Lengths> {
        Arc::new(Lengths { texts: AtomicUsize::new(0), model })
    }

    impl TextEmbedder for Lengths {
        fn name(&self) -> &str {
            "lengths"
        }
        fn model_id(&self) -> String {
            self.model.to_owned()
        }
        fn embed(&self, texts: &[&str]) -> Result<Vec<Vec<f32>>, EmbeddingError> {
            self.texts.fetch_add(texts.len(), Ordering::SeqCst);
            Ok(crate::rank::embedding::length_vectors(texts))
        }
    }

    fn catalog(tools: &[(&str, &str)]) -> DeferredCatalog {
        DeferredCatalog::from_tools(tools.iter().map(|(name, description)| {
            (
                ToolSchema {
                    name: (*name).into(),
                    description: (*description).into(),
                    parameters: serde_json::json!({}),
                },
                None,
            )
        }))
    }

    fn temp(name: &str) -> std::path::PathBuf {
        std::env::temp_dir().join(format!("tinytools-{name}-{}.vec", std::process::id()))
    }

    #[test]
    fn a_restart_embeds_only_what_changed() -> Result<(), EmbeddingError> {
        let path = temp("warm");
        std::fs::remove_file(&path).ok();
        let first = lengths("m1");
        let ranker = EmbeddingRanker::new(first.clone());
        let progress = std::sync::Mutex::new(Vec::new());
        let outcome =
            ranker.warm_with_progress(&catalog(&[("a", "short"), ("b", "longer")]), &path, |done, total| {
                progress.lock().map(|mut seen| seen.push((done, total))).ok();
            })?;
        assert_eq!((outcome.loaded, outcome.embedded, outcome.saved, outcome.ignored), (0, 2, true, None));
        assert_eq!(progress.into_inner().unwrap_or_default(), [(0, 2), (2, 2)]);

        // The next process: nothing changed, nothing embedded, nothing written.
        let second = lengths("m1");
        let outcome = EmbeddingRanker::new(second.clone()).warm(&catalog(&[("a", "short"), ("b", "longer")]), &path)?;
        assert_eq!((outcome.loaded, outcome.embedded, outcome.saved), (2, 0, false));
        assert_eq!(second.texts.load(Ordering::SeqCst), 0);

        // One tool changed, one added, one gone: only the first two are embedded.
        let third = lengths("m1");
        let ranker = EmbeddingRanker::new(third.clone());
        let outcome = ranker.warm(&catalog(&[("a", "changed"), ("c", "new")]), &path)?;
        assert_eq!((outcome.loaded, outcome.embedded, outcome.saved), (0, 2, true));
        let outcome = EmbeddingRanker::new(lengths("m1")).warm(&catalog(&[("a", "changed"), ("c", "new")]), &path)?;
        assert_eq!((outcome.loaded, outcome.embedded), (2, 0), "the file holds the catalogue as it is now");
        std::fs::remove_file(&path).ok();
        Ok(())
    }

    #[test]
    fn a_foreign_or_damaged_file_is_ignored_and_replaced() -> Result<(), EmbeddingError> {
        let path = temp("foreign");
        let tools = catalog(&[("a", "short"), ("b", "longer")]);
        EmbeddingRanker::new(lengths("m1")).warm(&tools, &path)?;
        let other = lengths("m2");
        let outcome = EmbeddingRanker::new(other.clone()).warm(&tools, &path)?;
        let ignored = outcome.ignored.unwrap_or_default();
        assert!(ignored.contains("written for model `m1`; this ranker embeds with `m2`"), "{ignored}");
        assert_eq!((outcome.embedded, outcome.saved, other.texts.load(Ordering::SeqCst)), (2, true, 2));

        let mut bytes = std::fs::read(&path).map_err(|source| EmbeddingError::Io { path: path.clone(), source })?;
        let last = bytes.len() - 12;
        bytes[last] ^= 0x40;
        std::fs::write(&path, &bytes).ok();
        let outcome = EmbeddingRanker::new(lengths("m2")).warm(&tools, &path)?;
        let ignored = outcome.ignored.unwrap_or_default();
        assert!(ignored.contains("checksum does not match"), "{ignored}");
        assert_eq!(outcome.embedded, 2);
        let strict = EmbeddingRanker::new(lengths("m2")).load_vectors(&path).map_err(|e| e.to_string());
        assert_eq!(strict, Ok(2), "replaced by a good file");

        std::fs::write(&path, "garbage").ok();
        let error = EmbeddingRanker::new(lengths("m2")).load_vectors(&path).err().map(|e| e.to_string());
        assert!(error.unwrap_or_default().contains("too short"));
        std::fs::remove_file(&path).ok();
        let error = EmbeddingRanker::new(lengths("m2")).load_vectors(&path).err().map(|e| e.to_string());
        assert!(error.unwrap_or_default().starts_with(&format!("cannot read {}", path.display())));
        Ok(())
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn a_persisted_ranker_keeps_its_file_up_as_searches_embed() -> Result<(), Box<dyn std::error::Error>> {
        use crate::rank::{RankContext, RankRequest, ToolRanker};
        let path = temp("persist");
        std::fs::remove_file(&path).ok();
        let context = RankContext::default();
        let search = |ranker: EmbeddingRanker, tools: DeferredCatalog| {
            let context = &context;
            async move {
                let request = RankRequest { query: "x", limit: 5, catalog: &tools, context };
                ranker.rank(request).await.map(|hits| hits.len())
            }
        };
        let tools = || catalog(&[("a", "short"), ("b", "longer")]);

        let first = lengths("m1");
        let ranker = EmbeddingRanker::new(first.clone()).persist_to(&path);
        assert!(!path.exists(), "nothing is written before anything is embedded");
        assert_eq!(search(ranker, tools()).await?, 2);
        assert_eq!(first.texts.load(Ordering::SeqCst), 3, "two tools and the query");
        assert_eq!(EmbeddingRanker::new(lengths("m1")).load_vectors(&path)?, 2, "written by the search");

        // A restart over the same tools embeds only the query, and leaves the file as it was.
        let before = std::fs::read(&path)?;
        let second = lengths("m1");
        assert_eq!(search(EmbeddingRanker::new(second.clone()).persist_to(&path), tools()).await?, 2);
        assert_eq!(second.texts.load(Ordering::SeqCst), 1);
        assert_eq!(std::fs::read(&path)?, before);

        // A changed tool is embedded again and the file holds its new text.
        let changed = || catalog(&[("a", "changed text"), ("b", "longer")]);
        let third = lengths("m1");
        assert_eq!(search(EmbeddingRanker::new(third.clone()).persist_to(&path), changed()).await?, 2);
        assert_eq!(third.texts.load(Ordering::SeqCst), 2, "the changed tool and the query");
        let fourth = lengths("m1");
        assert_eq!(search(EmbeddingRanker::new(fourth.clone()).persist_to(&path), changed()).await?, 2);
        assert_eq!(fourth.texts.load(Ordering::SeqCst), 1);

        // Another model's file is not trusted: everything is embedded and the file replaced.
        let other = lengths("m2");
        assert_eq!(search(EmbeddingRanker::new(other.clone()).persist_to(&path), tools()).await?, 2);
        assert_eq!(other.texts.load(Ordering::SeqCst), 3);
        assert_eq!(EmbeddingRanker::new(lengths("m2")).load_vectors(&path)?, 2);

        // Garbage in the file, or a file that cannot be written: the search answers all the same.
        std::fs::write(&path, "garbage")?;
        assert_eq!(search(EmbeddingRanker::new(lengths("m2")).persist_to(&path), tools()).await?, 2);
        assert_eq!(EmbeddingRanker::new(lengths("m2")).load_vectors(&path)?, 2, "replaced");
        let nowhere = EmbeddingRanker::new(lengths("m2")).persist_to("/nonexistent/dir/tools.vec");
        assert_eq!(search(nowhere, tools()).await?, 2);
        std::fs::remove_file(&path).ok();
        Ok(())
    }

    #[test]
    fn a_file_that_cannot_be_written_is_an_error_naming_it() {
        let ranker = EmbeddingRanker::new(lengths("m1"));
        let error = ranker.warm(&catalog(&[("a", "short")]), "/nonexistent/dir/tools.vec").err();
        let error = error.map(|e| e.to_string()).unwrap_or_default();
        assert!(error.starts_with("cannot write /nonexistent/dir/tools.vec"), "{error}");
        assert_eq!(ranker.store.read().len(), 1, "warm all the same");
    }
}
