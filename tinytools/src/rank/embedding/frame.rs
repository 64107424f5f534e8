//! What the two binary files (saved vectors, the static model) share: a magic, a format
//! version, a body read through [`Reader`], and a 64-bit FNV-1a checksum of everything before
//! it, so a torn or altered file is never trusted; and how either is written.

use std::path::Path;

use super::EmbeddingError;

/// One file format's header.
pub struct Framing {
    /// The bytes every such file starts with.
    pub magic: &'static [u8],
    /// Bumped whenever the layout, or what the contents mean, changes.
    pub version: u32,
    /// What the format is called in messages ("saved-vectors").
    pub kind: &'static str,
}

/// A file whose header has been read, its checksum not yet checked: a format may first check
/// what makes a file foreign (the model that wrote it), which says more than "damaged".
pub struct Opened<'a> {
    /// The body, after the magic and the version.
    pub reader: Reader<'a>,
    sum: &'a [u8],
}

impl Framing {
    /// A new file's bytes so far: the magic and the version.
    pub fn start(&self, capacity: usize) -> Vec<u8> {
        let mut out = Vec::with_capacity(capacity);
        out.extend_from_slice(self.magic);
        out.extend_from_slice(&self.version.to_le_bytes());
        out
    }

    /// Appends the checksum to a file's bytes, finishing it.
    pub fn seal(mut out: Vec<u8>) -> Vec<u8> {
        let checksum = fnv1a(&out);
        out.extend_from_slice(&checksum.to_le_bytes());
        out
    }

    /// Reads `bytes`' header: long enough for a header and a checksum, the magic, this
    /// version. `Err` says which is wrong.
    pub fn open<'a>(&self, bytes: &'a [u8]) -> Result<Opened<'a>, String> {
        if bytes.len() < self.magic.len() + 4 + 8 {
            return Err(format!("the file is too short to be a {} file", self.kind));
        }
        let (body, sum) = bytes.split_at(bytes.len() - 8);
        if !body.starts_with(self.magic) {
            let magic = String::from_utf8_lossy(self.magic);
            return Err(format!("not a {} file (no {magic} header)", self.kind));
        }
        let mut reader = Reader { bytes: body, at: self.magic.len() };
        let version = reader.u32()?;
        if version != self.version {
            return Err(format!("format version {version}; this build reads version {}", self.version));
        }
        Ok(Opened { reader, sum })
    }
}

impl Opened<'_> {
    /// The body's checksum, when it matches the one stored: it identifies the contents.
    pub fn verify(&self) -> Result<u64, String> {
        let checksum = fnv1a(self.reader.bytes);
        if self.sum != checksum.to_le_bytes() {
            return Err("the checksum does not match: the file is damaged or was cut short".into());
        }
        Ok(checksum)
    }

    /// Whether the body has been read to its end.
    pub fn finished(&self) -> bool {
        self.reader.at == self.reader.bytes.len()
    }
}

/// 64-bit FNV-1a: stable across builds and versions, unlike std's hashers.
pub fn fnv1a(bytes: &[u8]) -> u64 {
    bytes.iter().fold(0xcbf2_9ce4_8422_2325, |hash, &b| (hash ^ u64::from(b)).wrapping_mul(0x0000_0100_0000_01b3))
}

/// Appends `text`, length-prefixed (`u32`).
pub fn put_str(out: &mut Vec<u8>, text: &str) {
    out.extend_from_slice(&u32::try_from(text.len()).unwrap_or(u32::MAX).to_le_bytes());
    out.extend_from_slice(text.as_bytes());
}

/// A cursor over a file's bytes whose reads fail, never panic, past the end.
pub struct Reader<'a> {
    /// The whole file.
    pub bytes: &'a [u8],
    /// Where the next read starts.
    pub at: usize,
}

impl<'a> Reader<'a> {
    /// The next `len` bytes.
    pub fn take(&mut self, len: usize) -> Result<&'a [u8], String> {
        let end = self.at.checked_add(len).filter(|end| *end <= self.bytes.len()).ok_or("the file ends early")?;
        let taken = &self.bytes[self.at..end];
        self.at = end;
        Ok(taken)
    }

    /// The next little-endian `u32`.
    pub fn u32(&mut self) -> Result<u32, String> {
        let b = self.take(4)?;
        Ok(u32::from_le_bytes([b[0], b[1], b[2], b[3]]))
    }

    /// The next string: a `u32` length, then that many bytes of UTF-8.
    pub fn string(&mut self) -> Result<String, String> {
        let len = self.u32()? as usize;
        String::from_utf8(self.take(len)?.to_vec()).map_err(|_| "a name or text is not UTF-8".to_owned())
    }
}

/// Writes `bytes` to `path` through a temporary file beside it and a rename, so a reader never
/// sees half a file.
pub fn write_atomically(path: &Path, bytes: &[u8]) -> Result<(), EmbeddingError> {
    let mut temporary = path.as_os_str().to_owned();
    temporary.push(format!(".{}.tmp", std::process::id()));
    let temporary = std::path::PathBuf::from(temporary);
    let written = std::fs::write(&temporary, bytes).and_then(|()| std::fs::rename(&temporary, path));
    written.map_err(|source| {
        std::fs::remove_file(&temporary).ok();
        EmbeddingError::Write { path: path.into(), source }
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_checksum_is_fnv1a() {
        assert_eq!(fnv1a(b""), 0xcbf2_9ce4_8422_2325);
        assert_eq!(fnv1a(b"a"), 0xaf63_dc4c_8601_ec8c);
    }

    #[test]
    fn a_sealed_file_opens_and_anything_else_says_why_not() {
        const TEST: Framing = Framing { magic: b"TTX", version: 3, kind: "test" };
        let mut out = TEST.start(16);
        put_str(&mut out, "hi");
        let file = Framing::seal(out);
        let mut opened = TEST.open(&file).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(opened.reader.string().as_deref(), Ok("hi"));
        assert!(opened.finished());
        assert_eq!(opened.verify(), Ok(fnv1a(&file[..file.len() - 8])));

        let mut damaged = file.clone();
        damaged[8] ^= 1;
        let other = Framing { version: 4, ..TEST };
        for (framing, bytes, problem) in [
            (&TEST, &b"TTX"[..], "too short to be a test file"),
            (&TEST, &b"XXX and more than a header"[..], "not a test file (no TTX header)"),
            (&other, &file[..], "format version 3; this build reads version 4"),
        ] {
            let error = framing.open(bytes).err().unwrap_or_default();
            assert!(error.contains(problem), "{error} is not about {problem}");
        }
        let verified = TEST.open(&damaged).and_then(|opened| opened.verify());
        assert_eq!(
            verified.err().as_deref(),
            Some("the checksum does not match: the file is damaged or was cut short")
        );
    }
}
