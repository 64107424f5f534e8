//! [`Bm25Index`]: Okapi BM25 over documents made of weighted fields.

use rustc_hash::FxHashMap;

use super::tokenize::{Tokenizer, for_each_word};

/// BM25's two parameters.
///
/// ```
/// use tinytools::rank::Bm25Params;
///
/// let params = Bm25Params::default().with_k1(1.5).with_b(0.5);
/// assert_eq!((params.k1, params.b), (1.5, 0.5));
/// ```
#[derive(Clone, Copy, Debug, PartialEq)]
#[non_exhaustive]
pub struct Bm25Params {
    /// Term-frequency saturation.
    pub k1: f32,
    /// Length normalisation, 0 (none) to 1 (full).
    pub b: f32,
}

impl Default for Bm25Params {
    /// `k1 = 1.2, b = 0.75`, the textbook values; measurement on the eval sets did not beat
    /// them by enough to justify others (`docs/retrieval.md`).
    fn default() -> Self {
        Self { k1: 1.2, b: 0.75 }
    }
}

impl Bm25Params {
    /// Sets the term-frequency saturation.
    #[must_use]
    pub const fn with_k1(mut self, k1: f32) -> Self {
        self.k1 = k1;
        self
    }

    /// Sets the length normalisation, 0 (none) to 1 (full).
    #[must_use]
    pub const fn with_b(mut self, b: f32) -> Self {
        self.b = b;
        self
    }
}

/// One hit: the document's position in the order the documents were given, and its score.
#[derive(Clone, Copy, Debug, PartialEq)]
#[non_exhaustive]
pub struct Bm25Hit {
    /// Index of the document.
    pub doc: usize,
    /// BM25 score (higher is better; not comparable across queries).
    pub score: f32,
    /// The score over the highest score any document could reach for this query, in
    /// `0.0..=1.0`: a rough, query-independent "how sure". Every distinct content term of the
    /// query counts toward that ceiling — one no document has at the IDF of an unseen term — so
    /// a query that shares one incidental word with a tool ("thanks, that is all for *today*")
    /// is not taken for one about it.
    pub confidence: f32,
}

/// An in-memory BM25 index: the same arithmetic the `tool_search` bridge ranks with.
///
/// A document is a list of `(weight, text)` fields; a term found in a field of weight `w`
/// counts `w` times (a BM25F-style field boost), and the document's length is the weighted
/// count of its terms.
///
/// ```
/// use tinytools::rank::Bm25Index;
///
/// let index = Bm25Index::new(["Fetch the latest stock price", "Send an email", "Convert currencies"]);
/// let hits = index.search("what's the price of a stock?", 2);
/// assert_eq!(hits[0].doc, 0);
/// assert!(index.search("", 5).is_empty());
/// ```
#[derive(Clone, Debug)]
pub struct Bm25Index {
    params: Bm25Params,
    tokenizer: Tokenizer,
    /// Term text → term id.
    terms: FxHashMap<Box<str>, u32>,
    /// Lower-cased word → the ids of its terms: stemming is paid once per distinct word, at
    /// build time for the corpus's words and never again for a query word the corpus has.
    words: FxHashMap<Box<str>, Box<[u32]>>,
    /// Every term's postings, term after term, each in document order: (document, impact).
    /// The impact is the term's BM25 weight in that document before IDF,
    /// `tf·(k1+1) / (tf + k1·(1 − b + b·len/avgdl))`, computed once at build time so a search
    /// does one multiply per posting.
    postings: Vec<(u32, f32)>,
    /// Term `t`'s postings are `postings[offsets[t]..offsets[t + 1]]`.
    offsets: Vec<u32>,
    idf: Vec<f32>,
    /// Each term's highest score contribution in any document (`idf × max impact`): what
    /// MaxScore pruning needs.
    upper_bound: Vec<f32>,
    documents: usize,
}

impl Bm25Index {
    /// Indexes plain-text documents with the default tokenizer and parameters.
    pub fn new<D: AsRef<str>>(documents: impl IntoIterator<Item = D>) -> Self {
        Self::with_fields(documents.into_iter().map(|doc| [(1.0, doc)]))
    }

    /// Indexes documents made of weighted fields with the default tokenizer and parameters.
    pub fn with_fields<F, S>(documents: impl IntoIterator<Item = F>) -> Self
    where
        F: IntoIterator<Item = (f32, S)>,
        S: AsRef<str>,
    {
        Self::build(documents, Tokenizer::default(), Bm25Params::default())
    }

    /// Indexes documents made of weighted fields with a given tokenizer and parameters.
    pub fn build<F, S>(documents: impl IntoIterator<Item = F>, tokenizer: Tokenizer, params: Bm25Params) -> Self
    where
        F: IntoIterator<Item = (f32, S)>,
        S: AsRef<str>,
    {
        Self::finish(tokenize_all(documents, &tokenizer), tokenizer, params)
    }

    /// [`build`](Self::build) on two threads for large catalogues: each half is tokenized
    /// apart, then the second half's term ids are mapped onto the first's. The index is the
    /// same as the one-thread build's.
    pub fn build_parallel(documents: &[Vec<(f32, &str)>], tokenizer: Tokenizer, params: Bm25Params) -> Self {
        Self::build_split(documents.len(), |doc| documents[doc].iter().copied(), tokenizer, params)
    }

    /// [`build_parallel`](Self::build_parallel) over documents made on demand: `document(i)`
    /// runs on the thread that tokenizes document `i`, so reading the fields out of a
    /// declaration is split across the threads too.
    pub(crate) fn build_split<'a, F, D>(count: usize, document: D, tokenizer: Tokenizer, params: Bm25Params) -> Self
    where
        F: IntoIterator<Item = (f32, &'a str)>,
        D: Fn(usize) -> F + Sync,
    {
        let cores = std::thread::available_parallelism().map_or(1, std::num::NonZero::get);
        if count < PARALLEL_MIN_DOCUMENTS || cores < 2 {
            return Self::build((0..count).map(&document), tokenizer, params);
        }
        let middle = count / 2;
        let halves = std::thread::scope(|scope| {
            let right = scope.spawn(|| tokenize_all((middle..count).map(&document), &tokenizer));
            let left = tokenize_all((0..middle).map(&document), &tokenizer);
            right.join().map(|right| (left, right))
        });
        match halves {
            Ok((left, right)) => Self::finish(left.merge(right), tokenizer, params),
            Err(_) => Self::build((0..count).map(&document), tokenizer, params),
        }
    }

    fn finish(partial: Partial, tokenizer: Tokenizer, params: Bm25Params) -> Self {
        let Partial { terms, words, mut postings, offsets, lengths } = partial;
        let n = lengths.len() as f32;
        let avgdl = if lengths.is_empty() { 1.0 } else { (lengths.iter().sum::<f32>() / n).max(f32::EPSILON) };
        let k1_plus_1 = params.k1 + 1.0;
        // Each document's length normalisation, once; then every (doc, tf) becomes (doc, impact).
        let norms: Vec<f32> =
            lengths.iter().map(|&length| params.k1 * (1.0 - params.b + params.b * length / avgdl)).collect();
        for (doc, value) in &mut postings {
            let tf = *value;
            *value = tf * k1_plus_1 / (tf + norms[*doc as usize]);
        }
        let idf: Vec<f32> = offsets
            .windows(2)
            .map(|w| {
                let df = (w[1] - w[0]) as f32;
                // The "plus one" form: never negative, so a very common term still helps a little.
                ((n - df + 0.5) / (df + 0.5) + 1.0).ln()
            })
            .collect();
        let upper_bound = offsets
            .windows(2)
            .zip(&idf)
            .map(|(w, idf)| {
                idf * postings[w[0] as usize..w[1] as usize].iter().map(|&(_, impact)| impact).fold(0.0, f32::max)
            })
            .collect();
        Self { params, tokenizer, terms, words, postings, offsets, idf, upper_bound, documents: lengths.len() }
    }

    /// Term `t`'s postings: (document, impact), in document order.
    fn postings_of(&self, t: u32) -> &[(u32, f32)] {
        let t = t as usize;
        &self.postings[self.offsets[t] as usize..self.offsets[t + 1] as usize]
    }

    /// How many documents are indexed.
    pub fn len(&self) -> usize {
        self.documents
    }

    /// Whether no document is indexed.
    pub fn is_empty(&self) -> bool {
        self.documents == 0
    }

    /// The best `limit` documents for `query`, best first. Documents that share no term with
    /// the query are never returned; ties keep document order.
    pub fn search(&self, query: &str, limit: usize) -> Vec<Bm25Hit> {
        self.search_with(query, limit, true, 0)
    }

    /// [`search`](Self::search) for a query from which `left_out` distinct terms were taken
    /// out before (values, not words about the task): each counts in the confidence as a term
    /// no document has.
    pub(crate) fn search_without(&self, query: &str, limit: usize, left_out: usize) -> Vec<Bm25Hit> {
        self.search_with(query, limit, true, left_out)
    }

    /// Scores with or without MaxScore pruning (the two must agree; tests check it).
    fn search_with(&self, query: &str, limit: usize, prune: bool, left_out: usize) -> Vec<Bm25Hit> {
        if limit == 0 || self.is_empty() {
            return Vec::new();
        }
        let (mut terms, unseen) = self.query_terms(query);
        let unseen = unseen + left_out;
        if terms.is_empty() {
            return Vec::new();
        }
        let unseen_idf = ((self.documents as f32 + 0.5) / 0.5 + 1.0).ln();
        let known: f32 = terms.iter().map(|&t| self.idf[t as usize]).sum();
        let ceiling = (known + unseen as f32 * unseen_idf) * (self.params.k1 + 1.0);
        // Rarest, strongest terms first; `rest[i]` bounds what terms `i..` can still add.
        terms.sort_by(|a, b| self.upper_bound[*b as usize].total_cmp(&self.upper_bound[*a as usize]));
        let mut rest: Vec<f32> = terms
            .iter()
            .rev()
            .scan(0.0, |sum, &t| {
                *sum += self.upper_bound[t as usize];
                Some(*sum)
            })
            .collect();
        rest.reverse();
        rest.push(0.0);

        let mut scores = vec![0.0_f32; self.len()];
        let mut touched: Vec<u32> = Vec::new();
        let mut scratch: Vec<f32> = Vec::new();
        let mut next = 0;
        while next < terms.len() {
            // Once no unseen document can reach the current k-th score, stop walking postings.
            if prune && touched.len() >= limit && rest[next] < kth_best(&touched, &scores, limit, &mut scratch) {
                break;
            }
            let idf = self.idf[terms[next] as usize];
            for &(doc, impact) in self.postings_of(terms[next]) {
                let slot = &mut scores[doc as usize];
                if *slot == 0.0 {
                    touched.push(doc);
                }
                *slot += idf * impact;
            }
            next += 1;
        }
        // MaxScore: the remaining (common) terms only refine documents that can still make the
        // cut, found by binary search in their postings.
        for (i, &term) in terms.iter().enumerate().skip(next) {
            let threshold = kth_best(&touched, &scores, limit, &mut scratch);
            touched.retain(|&doc| scores[doc as usize] + rest[i] >= threshold);
            let (postings, idf) = (self.postings_of(term), self.idf[term as usize]);
            for &doc in &touched {
                if let Ok(at) = postings.binary_search_by_key(&doc, |&(d, _)| d) {
                    scores[doc as usize] += idf * postings[at].1;
                }
            }
        }
        let better = |a: &u32, b: &u32| scores[*b as usize].total_cmp(&scores[*a as usize]).then_with(|| a.cmp(b));
        if touched.len() > limit {
            touched.select_nth_unstable_by(limit - 1, better);
            touched.truncate(limit);
        }
        touched.sort_unstable_by(better);
        touched
            .into_iter()
            .map(|doc| {
                let score = scores[doc as usize];
                Bm25Hit { doc: doc as usize, score, confidence: (score / ceiling).clamp(0.0, 1.0) }
            })
            .collect()
    }

    /// The query's distinct known terms, and how many distinct terms it has that no document
    /// has.
    fn query_terms(&self, query: &str) -> (Vec<u32>, usize) {
        let mut terms: Vec<u32> = Vec::new();
        let mut unseen: rustc_hash::FxHashSet<String> = rustc_hash::FxHashSet::default();
        let mut add = |id: u32| {
            if !terms.contains(&id) {
                terms.push(id);
            }
        };
        for_each_word(query, |word| match self.words.get(word) {
            Some(ids) => ids.iter().copied().for_each(&mut add),
            None => self.tokenizer.word_terms(word, |term| match self.terms.get(term) {
                Some(&id) => add(id),
                None => {
                    if !unseen.contains(term) {
                        unseen.insert(term.to_owned());
                    }
                }
            }),
        });
        (terms, unseen.len())
    }
}

/// Below this many documents a parallel build is not worth a thread.
const PARALLEL_MIN_DOCUMENTS: usize = 2_000;

/// The tokenized documents of one build (or one half of one), already grouped by term.
struct Partial {
    terms: FxHashMap<Box<str>, u32>,
    words: FxHashMap<Box<str>, Box<[u32]>>,
    /// Every term's (document, weighted frequency) pairs, term after term, each in document order.
    postings: Vec<(u32, f32)>,
    /// Term `t`'s pairs are `postings[offsets[t]..offsets[t + 1]]`.
    offsets: Vec<u32>,
    lengths: Vec<f32>,
}

impl Partial {
    /// Appends another half's documents, mapping its term ids onto this one's: each term's
    /// postings are this half's, then the other's (documents shifted past this half's), so they
    /// stay in document order, exactly as a one-thread build would have them.
    fn merge(mut self, other: Partial) -> Partial {
        let mut remap = vec![0_u32; other.terms.len()];
        for (term, id) in other.terms {
            let next = u32::try_from(self.terms.len()).unwrap_or(u32::MAX);
            remap[id as usize] = *self.terms.entry(term).or_insert(next);
        }
        for (word, ids) in other.words {
            self.words.entry(word).or_insert_with(|| ids.iter().map(|&id| remap[id as usize]).collect());
        }
        // For every merged term, the other half's local id (if it has the term).
        let mut from_other = vec![u32::MAX; self.terms.len()];
        for (local, &global) in remap.iter().enumerate() {
            from_other[global as usize] = u32::try_from(local).unwrap_or(u32::MAX);
        }
        let shift = u32::try_from(self.lengths.len()).unwrap_or(u32::MAX);
        let mut postings = Vec::with_capacity(self.postings.len() + other.postings.len());
        let mut offsets = Vec::with_capacity(self.terms.len() + 1);
        offsets.push(0);
        let own_terms = self.offsets.len() - 1;
        for (term, &local) in from_other.iter().enumerate() {
            if term < own_terms {
                postings
                    .extend_from_slice(&self.postings[self.offsets[term] as usize..self.offsets[term + 1] as usize]);
            }
            if local != u32::MAX {
                let range = other.offsets[local as usize] as usize..other.offsets[local as usize + 1] as usize;
                postings.extend(other.postings[range].iter().map(|&(doc, tf)| (doc + shift, tf)));
            }
            offsets.push(u32::try_from(postings.len()).unwrap_or(u32::MAX));
        }
        self.lengths.extend(other.lengths);
        Partial { terms: self.terms, words: self.words, postings, offsets, lengths: self.lengths }
    }
}

/// Tokenizes documents into term ids, caching each distinct word's terms.
fn tokenize_all<F, S>(documents: impl IntoIterator<Item = F>, tokenizer: &Tokenizer) -> Partial
where
    F: IntoIterator<Item = (f32, S)>,
    S: AsRef<str>,
{
    let mut terms: FxHashMap<Box<str>, u32> = FxHashMap::default();
    let mut words: FxHashMap<Box<str>, Box<[u32]>> = FxHashMap::default();
    let mut lengths = Vec::new();
    // (term, document, weighted frequency), in document order.
    let mut triples: Vec<(u32, u32, f32)> = Vec::new();
    // Per-document frequencies, dense by term id; `seen` lists the ids to emit and reset.
    let mut frequencies: Vec<f32> = Vec::new();
    let mut seen: Vec<u32> = Vec::new();
    for (doc, fields) in documents.into_iter().enumerate() {
        let doc = u32::try_from(doc).unwrap_or(u32::MAX);
        let mut length = 0.0_f32;
        for (weight, text) in fields {
            let weight = if weight.is_finite() { weight.max(0.0) } else { 0.0 };
            for_each_word(text.as_ref(), |word| {
                let ids = match words.get(word) {
                    Some(ids) => ids,
                    None => intern_word(tokenizer, &mut terms, &mut words, word),
                };
                for &term in ids.iter() {
                    let slot = term as usize;
                    if slot >= frequencies.len() {
                        frequencies.resize(slot + 1, 0.0);
                    }
                    if frequencies[slot] == 0.0 {
                        seen.push(term);
                    }
                    // A zero weight adds nothing and marks nothing: every posted frequency
                    // is positive, so every posted document scores above zero.
                    frequencies[slot] += weight;
                    length += weight;
                }
            });
        }
        for term in seen.drain(..) {
            let tf = std::mem::take(&mut frequencies[term as usize]);
            if tf > 0.0 {
                triples.push((term, doc, tf));
            }
        }
        lengths.push(length);
    }

    // Counting sort by term (stable, so each term's pairs stay in document order).
    let mut offsets = vec![0_u32; terms.len() + 1];
    for &(term, _, _) in &triples {
        offsets[term as usize + 1] += 1;
    }
    for t in 1..offsets.len() {
        offsets[t] += offsets[t - 1];
    }
    let mut cursor = offsets.clone();
    let mut postings = vec![(0_u32, 0.0_f32); triples.len()];
    for (term, doc, tf) in triples {
        let at = &mut cursor[term as usize];
        postings[*at as usize] = (doc, tf);
        *at += 1;
    }
    Partial { terms, words, postings, offsets, lengths }
}

/// Computes and remembers the term ids of a corpus word seen for the first time.
fn intern_word<'w>(
    tokenizer: &Tokenizer,
    terms: &mut FxHashMap<Box<str>, u32>,
    words: &'w mut FxHashMap<Box<str>, Box<[u32]>>,
    word: &str,
) -> &'w [u32] {
    let mut ids = Vec::new();
    tokenizer.word_terms(word, |term| {
        let next = u32::try_from(terms.len()).unwrap_or(u32::MAX);
        ids.push(*terms.entry(term.into()).or_insert(next));
    });
    words.entry(word.into()).or_insert(ids.into())
}

/// The `k`-th highest score among `docs` (0 when there are fewer).
fn kth_best(docs: &[u32], scores: &[f32], k: usize, scratch: &mut Vec<f32>) -> f32 {
    if docs.len() < k || k == 0 {
        return 0.0;
    }
    scratch.clear();
    scratch.extend(docs.iter().map(|&doc| scores[doc as usize]));
    let (_, kth, _) = scratch.select_nth_unstable_by(k - 1, |a, b| b.total_cmp(a));
    *kth
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rarer_terms_and_heavier_fields_win() {
        let index = Bm25Index::with_fields([
            vec![(3.0, "weather"), (1.0, "Get the forecast for a city")],
            vec![(3.0, "stock_quote"), (1.0, "Get the latest price of a stock")],
            vec![(3.0, "news"), (1.0, "Headlines about weather and stock markets")],
        ]);
        assert_eq!(index.search("stock", 3).iter().map(|h| h.doc).collect::<Vec<_>>(), [1, 2]);
        assert_eq!(index.search("weather", 1)[0].doc, 0);
        assert!(index.search("get", 3).len() == 2, "a common term still ranks");
    }

    #[test]
    fn limits_ties_and_confidence_behave() {
        let index = Bm25Index::new(["alpha", "alpha", "alpha beta"]);
        let hits = index.search("alpha", 10);
        assert_eq!(hits.iter().map(|h| h.doc).collect::<Vec<_>>(), [0, 1, 2], "ties keep document order");
        assert_eq!(index.search("alpha", 1).len(), 1);
        assert!(index.search("alpha", 0).is_empty());
        assert!(hits.iter().all(|h| (0.0..=1.0).contains(&h.confidence)));
        assert!(index.search("gamma", 3).is_empty());
        assert!(Bm25Index::new(Vec::<String>::new()).search("alpha", 3).is_empty());
    }

    #[test]
    fn pruning_never_changes_the_answer() {
        let words = ["stock", "price", "quote", "weather", "city", "email", "send", "get", "find", "data", "list"];
        let documents: Vec<String> = (0..400_usize)
            .map(|i| {
                (0..(3 + i % 7)).map(|j| words[(i * 7 + j * 3 + i / 5) % words.len()]).collect::<Vec<_>>().join(" ")
            })
            .collect();
        let index = Bm25Index::new(&documents);
        for query in ["stock price", "get data list", "find weather in city", "send email quote get find", "list"] {
            for limit in [1, 3, 5, 20] {
                let pruned = index.search_with(query, limit, true, 0);
                let exhaustive = index.search_with(query, limit, false, 0);
                assert_eq!(pruned.len(), exhaustive.len(), "{query} {limit}");
                for (p, e) in pruned.iter().zip(&exhaustive) {
                    assert!((p.score - e.score).abs() < 1e-4, "{query} {limit}: {pruned:?} vs {exhaustive:?}");
                }
            }
        }
    }

    #[test]
    fn the_two_thread_build_answers_like_the_one_thread_build() {
        let words =
            ["stock", "price", "quote", "weather", "city", "email", "send", "get", "find", "data", "list", "café"];
        let documents: Vec<Vec<(f32, String)>> = (0..4_500_usize)
            .map(|i| {
                let text = (0..(2 + i % 9))
                    .map(|j| words[(i * 5 + j * 7 + i / 11) % words.len()])
                    .collect::<Vec<_>>()
                    .join(" ");
                // Some words only the second half has, and some only the first.
                let own = if i >= 2_250 { format!("late{}", i % 13) } else { format!("early{}", i % 7) };
                vec![(2.0, format!("tool_{}", i % 97)), (1.0, text), (0.5, own)]
            })
            .collect();
        let borrowed: Vec<Vec<(f32, &str)>> =
            documents.iter().map(|d| d.iter().map(|(w, t)| (*w, t.as_str())).collect()).collect();
        let one =
            Bm25Index::build(borrowed.iter().map(|d| d.iter().copied()), Tokenizer::default(), Bm25Params::default());
        let two = Bm25Index::build_parallel(&borrowed, Tokenizer::default(), Bm25Params::default());
        assert_eq!(one.len(), two.len());
        // The same terms with the same postings, bit for bit (ids may differ).
        assert_eq!(one.terms.len(), two.terms.len());
        for (term, &a) in &one.terms {
            let b = two.terms[term];
            assert_eq!(one.postings_of(a), two.postings_of(b), "{term}");
            assert_eq!(one.idf[a as usize].to_bits(), two.idf[b as usize].to_bits(), "{term}");
        }
        assert!(two.terms.contains_key("late") && two.terms.keys().any(|t| t.starts_with("earl")));
        for query in ["stock price", "weather in the city", "send email list", "tool 42 data", "café", "nothing here"]
        {
            let (a, b) = (one.search(query, 10), two.search(query, 10));
            assert_eq!(
                a.iter().map(|h| h.doc).collect::<Vec<_>>(),
                b.iter().map(|h| h.doc).collect::<Vec<_>>(),
                "{query}"
            );
            for (x, y) in a.iter().zip(&b) {
                assert!((x.score - y.score).abs() < 1e-4, "{query}");
            }
        }
    }

    #[test]
    fn bad_weights_cannot_poison_scores() {
        let index = Bm25Index::with_fields([vec![(f32::NAN, "alpha")], vec![(-2.0, "alpha")], vec![(1.0, "alpha")]]);
        let hits = index.search("alpha", 3);
        assert_eq!(hits[0].doc, 2);
        assert!(hits.iter().all(|h| h.score.is_finite()));
    }
}
