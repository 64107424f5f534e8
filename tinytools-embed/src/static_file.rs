//! The static model's file, `static_vectors.bin`: the vocabulary, a weight and a vector per
//! token, with a checksum over the whole so a torn or altered file is never loaded.
//!
//! Layout (little-endian): the magic `TTSTATIC`, the format version (`u32`), the precision of
//! the vectors (`u8`: 0 f32, 1 IEEE binary16), the token count `rows` (`u32`), the vector
//! width (`u32`), what the vectors were distilled from and how (a length-prefixed UTF-8
//! string, informational), then the `rows` tokens in id order (length-prefixed; the WordPiece
//! vocabulary, `##` marking a word's continuation, `""` for an id no token has), `rows` weights
//! (`f32`), `rows × width` vector numbers row by row (4 or 2 bytes each); last, a 64-bit FNV-1a
//! checksum of everything before. All-MiniLM-L6-v2's 30,522 tokens at 256 f16 numbers: 16 MB.

use half::f16;

use tinytools::rank::embedding::EmbeddingError;

use tinytools::__private::frame::{Framing, put_str};

/// The file a static model directory holds ([`StaticEmbedder::load`](crate::StaticEmbedder::load)).
pub const STATIC_VECTORS_FILE: &str = "static_vectors.bin";

/// The format's header. Its version is bumped whenever the layout, or what a vector or weight
/// means, changes.
const FRAMING: Framing = Framing { magic: b"TTSTATIC", version: 1, kind: "static-vectors" };

/// How the vectors' numbers are stored.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
#[non_exhaustive]
pub enum Precision {
    /// 4 bytes a number.
    F32,
    /// IEEE binary16, 2 bytes a number: half the file, and (measured, `docs/retrieval.md`)
    /// the same recall.
    #[default]
    F16,
}

impl Precision {
    fn code(self) -> u8 {
        match self {
            Self::F32 => 0,
            Self::F16 => 1,
        }
    }

    fn bytes(self) -> usize {
        match self {
            Self::F32 => 4,
            Self::F16 => 2,
        }
    }
}

/// A static model's file, [`STATIC_VECTORS_FILE`], as numbers:
/// what a distiller (the benchmarks' `distill_static`) fills and [`save`](Self::save)s, and
/// [`StaticEmbedder::load`](crate::StaticEmbedder::load) reads.
///
/// ```
/// use tinytools::rank::embedding::TextEmbedder;
/// use tinytools_embed::{Precision, StaticEmbedder, StaticFile};
///
/// let file = StaticFile {
///     source: "hand-made".into(),
///     precision: Precision::F32,
///     width: 2,
///     tokens: ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "cat", "dog"].map(String::from).to_vec(),
///     weights: vec![0.0, 1.0, 0.0, 0.0, 1.0, 1.0],
///     vectors: vec![0.0, 0.0, 0.6, 0.8, 0.0, 0.0, 0.0, 0.0, 1.0, 0.0, 0.0, 1.0],
/// };
/// let dir = std::env::temp_dir().join(format!("static-doc-{}", std::process::id()));
/// file.save(&dir)?;
/// let model = StaticEmbedder::load(&dir)?;
/// assert_eq!(model.embed(&["dog"])?, [vec![0.0, 1.0]]);
/// # std::fs::remove_dir_all(&dir).ok();
/// # Ok::<(), tinytools::rank::embedding::EmbeddingError>(())
/// ```
#[derive(Clone, Debug, PartialEq)]
pub struct StaticFile {
    /// What the vectors were distilled from and how (informational; part of the model's name
    /// in messages).
    pub source: String,
    /// How the vectors' numbers are stored.
    pub precision: Precision,
    /// Numbers per vector.
    pub width: usize,
    /// The WordPiece vocabulary in id order (`##` marking a word's continuation); `""` for an
    /// id no token has.
    pub tokens: Vec<String>,
    /// One weight per token (non-negative; 0 leaves the token out of every mean).
    pub weights: Vec<f32>,
    /// `tokens.len() × width` numbers, row by row.
    pub vectors: Vec<f32>,
}

impl StaticFile {
    /// Writes the file into `dir` (created if need be) as [`STATIC_VECTORS_FILE`],
    /// through a temporary file and a rename; returns its size in bytes.
    ///
    /// # Errors
    /// [`EmbeddingError::Write`] when the directory or the file cannot be written.
    pub fn save(&self, dir: impl AsRef<std::path::Path>) -> Result<usize, EmbeddingError> {
        let dir = dir.as_ref();
        std::fs::create_dir_all(dir).map_err(|source| EmbeddingError::Write { path: dir.into(), source })?;
        let bytes = self.encode();
        tinytools::__private::frame::write_atomically(&dir.join(STATIC_VECTORS_FILE), &bytes)?;
        Ok(bytes.len())
    }

    /// The file's bytes.
    pub(super) fn encode(&self) -> Vec<u8> {
        let count = |n: usize| u32::try_from(n).unwrap_or(u32::MAX).to_le_bytes();
        let mut out = FRAMING.start(64 + self.tokens.len() * 12 + self.vectors.len() * self.precision.bytes());
        out.push(self.precision.code());
        out.extend_from_slice(&count(self.tokens.len()));
        out.extend_from_slice(&count(self.width));
        put_str(&mut out, &self.source);
        for token in &self.tokens {
            put_str(&mut out, token);
        }
        for weight in &self.weights {
            out.extend_from_slice(&weight.to_le_bytes());
        }
        for &x in &self.vectors {
            match self.precision {
                Precision::F32 => out.extend_from_slice(&x.to_le_bytes()),
                Precision::F16 => out.extend_from_slice(&f16::from_f32(x).to_le_bytes()),
            }
        }
        Framing::seal(out)
    }

    /// Reads a file's bytes, checking everything before anything is returned: the magic, the
    /// version, the checksum, the sizes, finite numbers, non-negative weights. Also returns the
    /// checksum, which identifies the contents. `Err` says what is wrong.
    pub(super) fn decode(bytes: &[u8]) -> Result<(Self, u64), String> {
        let mut opened = FRAMING.open(bytes)?;
        let checksum = opened.verify()?;
        let reader = &mut opened.reader;
        let precision = match reader.take(1)?[0] {
            0 => Precision::F32,
            1 => Precision::F16,
            other => return Err(format!("unknown precision code {other}")),
        };
        let (rows, width) = (reader.u32()? as usize, reader.u32()? as usize);
        if rows == 0 || width == 0 {
            return Err(format!("{rows} tokens of {width} numbers: nothing to embed with"));
        }
        let source = reader.string()?;
        let mut tokens = Vec::with_capacity(rows.min(bytes.len() / 4));
        for _ in 0..rows {
            tokens.push(reader.string()?);
        }
        let weights = numbers(reader.take(rows.checked_mul(4).ok_or("impossible sizes")?)?, Precision::F32);
        if weights.iter().any(|w| !w.is_finite() || *w < 0.0) {
            return Err("a token weight is negative or not finite".into());
        }
        let len = rows.checked_mul(width).and_then(|n| n.checked_mul(precision.bytes())).ok_or("impossible sizes")?;
        let vectors = numbers(reader.take(len)?, precision);
        if vectors.iter().any(|x| !x.is_finite()) {
            return Err("a vector has a number that is not finite".into());
        }
        if !opened.finished() {
            return Err("bytes left over after the last vector".into());
        }
        Ok((Self { source, precision, width, tokens, weights, vectors }, checksum))
    }
}

/// Little-endian numbers of `precision`, as f32.
fn numbers(bytes: &[u8], precision: Precision) -> Vec<f32> {
    match precision {
        Precision::F32 => bytes.chunks_exact(4).map(|b| f32::from_le_bytes([b[0], b[1], b[2], b[3]])).collect(),
        Precision::F16 => bytes.chunks_exact(2).map(|b| f16::from_le_bytes([b[0], b[1]]).to_f32()).collect(),
    }
}

#[cfg(test)]
pub(super) mod tests {
    use super::*;
    use tinytools::__private::frame::fnv1a;

    /// `[PAD] [UNK] [CLS] [SEP] cat dog ##s`, 2 numbers each, weights 1 but `dog`'s 0.5.
    pub(in super::super) fn sample(precision: Precision) -> StaticFile {
        let tokens = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "cat", "dog", "##s"];
        StaticFile {
            source: "test".into(),
            precision,
            width: 2,
            tokens: tokens.iter().map(|t| (*t).to_owned()).collect(),
            weights: vec![0.0, 1.0, 0.0, 0.0, 1.0, 0.5, 1.0],
            vectors: vec![0.0, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0, 0.0, 1.0, 0.0, 0.0, 2.0, 0.5, 0.5],
        }
    }

    #[test]
    fn a_file_round_trips_in_both_precisions() {
        for precision in [Precision::F32, Precision::F16] {
            let file = sample(precision);
            let (back, checksum) = decoded(&file.encode());
            assert_eq!(back, file, "{precision:?}");
            assert_eq!(checksum, fnv1a(&file.encode()[..file.encode().len() - 8]));
        }
        let (f32_len, f16_len) = (sample(Precision::F32).encode().len(), sample(Precision::F16).encode().len());
        assert_eq!(f32_len - f16_len, 14 * 2, "two bytes a number saved");
    }

    #[test]
    fn f16_rounds_to_the_nearest_half_precision_number() {
        let mut file = sample(Precision::F16);
        file.vectors[0] = 0.1;
        let (back, _) = decoded(&file.encode());
        assert!((back.vectors[0] - 0.1).abs() < 1e-4 && back.vectors[0] != 0.1, "{}", back.vectors[0]);
    }

    #[test]
    fn every_damaged_short_or_foreign_file_is_refused_with_its_reason() {
        let good = sample(Precision::F32).encode();
        let mut flipped = good.clone();
        flipped[40] ^= 1;
        let mut other_version = good.clone();
        other_version[8] = 9;
        let mut negative = sample(Precision::F32);
        negative.weights[4] = -1.0;
        let mut infinite = sample(Precision::F16);
        infinite.vectors[3] = 1e6;
        let mut empty = sample(Precision::F32);
        empty.width = 0;
        empty.vectors.clear();
        for (bytes, problem) in [
            (b"short".to_vec(), "too short"),
            (b"TTVEC\x02\0\0\0 a saved-vectors file".to_vec(), "no TTSTATIC header"),
            (flipped, "checksum does not match"),
            (good[..good.len() - 3].to_vec(), "checksum does not match"),
            (other_version, "format version 9"),
            (negative.encode(), "weight is negative"),
            (infinite.encode(), "not finite"),
            (empty.encode(), "nothing to embed with"),
        ] {
            let error = StaticFile::decode(&bytes).err().unwrap_or_default();
            assert!(error.contains(problem), "{error} is not about {problem}");
        }
    }

    fn decoded(bytes: &[u8]) -> (StaticFile, u64) {
        StaticFile::decode(bytes).unwrap_or_else(|e| panic!("{e}"))
    }
}
