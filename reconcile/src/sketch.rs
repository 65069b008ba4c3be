//! A sketch of a key set: a strata estimator, and optionally an IBF, with
//! the parameters both sides must share, in a versioned, checksummed file.
//!
//! File format, version 2 (every integer little-endian; version 1, never
//! released, hashed cells differently: see [`crate::hashing`]):
//!
//! | bytes | field |
//! |---|---|
//! | 8 | magic `RBNSKTCH` |
//! | 4 | format version (2) |
//! | 8 | key hash seed |
//! | 8 | keys sketched |
//! | 4, 4 | strata, cells per stratum (a multiple of 3) |
//! | 20 × strata × cells | estimator cells: count (i32), id XOR (u64), check XOR (u64) |
//! | 4, 4 | IBF cells (a multiple of 3; 0: no IBF), chunk bytes |
//! | (28 + chunk) × cells | IBF cells: count (i32), key hash, meta, check (u64 each), chunk bytes |
//! | 8 | XXPH3 (seed 0) of every byte before it |
//!
//! [`Sketch::from_bytes`] checks the magic, version, limits, the exact
//! length the header implies and the checksum before it allocates, so a
//! corrupt or hostile file is a one-line [`SketchError`], never a panic,
//! and memory stays within a small multiple of the file's size.
//!
//! # Memory budget
//!
//! * Making a sketch: [`SketchParams::memory_bytes`], `cells × (32 +
//!   chunk_bytes rounded up to 8)` for the IBF plus 24 bytes per
//!   estimator cell (about 92 KiB by default); [`Sketch::try_new`]
//!   reports a failed allocation instead of aborting.
//! * Reading a sketch file of `n` bytes: at most `1.4 n` (an IBF cell
//!   takes `28 + chunk_bytes` bytes in the file and at most 1.4 times that
//!   in memory), allocated only once the file's length matches its header.
//! * [`Sketch::diff`] of two such sketches: a copy of one IBF, the peeled
//!   elements (at most `3 × cells + 64`, each its chunk and 56 bytes) and
//!   the keys (at most the peeled chunks' bytes): within `10 n` of the two
//!   files' bytes together, whatever the cells claim (a cell claiming a
//!   4 GiB key is an error, not an allocation). Measured
//!   (`tests/budget.rs`): 3.1 to 4.0 n for a difference that fills the
//!   sketches.

use crate::hashing::{self, HASH_COUNT};
use crate::ibf::{DecodeError, Difference, Ibf, MAX_CELLS, MAX_CHUNK_BYTES};
use crate::strata::{StrataEstimator, DEFAULT_STRATA, DEFAULT_STRATUM_CELLS, MAX_STRATA, MAX_STRATUM_CELLS};
use crate::{recommended_cells, Mismatch};

/// The first bytes of a sketch file.
pub const MAGIC: &[u8; 8] = b"RBNSKTCH";
/// The format version written.
pub const VERSION: u32 = 2;
/// The chunk size used when none is given: RocksDB keys up to 32 bytes take
/// one element.
pub const DEFAULT_CHUNK_BYTES: usize = 32;

/// What both sides of a reconciliation must agree on.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SketchParams {
    /// Key hash seed.
    pub seed: u64,
    /// IBF cells (0: an estimator-only sketch, step 1 of the protocol).
    pub cells: usize,
    /// IBF chunk size in bytes.
    pub chunk_bytes: usize,
    /// Strata of the estimator.
    pub strata: usize,
    /// Cells per stratum.
    pub stratum_cells: usize,
}

impl SketchParams {
    /// Heap bytes of a sketch made with these parameters (see the
    /// module's memory budget): the IBF's [`Ibf::memory_bytes`] and the
    /// estimator's cells.
    pub fn memory_bytes(&self) -> u64 {
        let ibf = if self.cells > 0 {
            Ibf::memory_bytes(self.cells, self.chunk_bytes)
        } else {
            0
        };
        ibf + (self.strata * self.stratum_cells * 24) as u64
    }
}

impl Default for SketchParams {
    fn default() -> Self {
        Self {
            seed: 0,
            cells: 0,
            chunk_bytes: DEFAULT_CHUNK_BYTES,
            strata: DEFAULT_STRATA,
            stratum_cells: DEFAULT_STRATUM_CELLS,
        }
    }
}

/// A key set's sketch.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Sketch {
    seed: u64,
    keys: u64,
    estimator: StrataEstimator,
    ibf: Option<Ibf>,
}

/// A sketch file that cannot be read.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SketchError(pub String);

impl std::fmt::Display for SketchError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for SketchError {}

/// Why two sketches give no difference.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum DiffError {
    /// They were made with different parameters.
    Mismatch(Mismatch),
    /// One of them holds no IBF (an estimator-only sketch).
    NoIbf {
        /// The estimated difference.
        estimated: u64,
        /// The IBF cells recommended for it.
        recommended_cells: usize,
    },
    /// The IBFs could not list the difference.
    TooLarge {
        /// Why.
        error: DecodeError,
        /// The cells of these sketches.
        cells: usize,
        /// The estimated difference.
        estimated: u64,
        /// The IBF cells recommended for it (at least twice these).
        recommended_cells: usize,
    },
}

impl std::fmt::Display for DiffError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            DiffError::Mismatch(m) => write!(f, "{m}"),
            DiffError::NoIbf {
                estimated,
                recommended_cells,
            } => write!(
                f,
                "a sketch holds only an estimator (made with 0 IBF cells): the difference is about {estimated} keys; \
                 sketch both sides with {recommended_cells} cells"
            ),
            DiffError::TooLarge {
                error,
                cells,
                estimated,
                recommended_cells,
            } => match error {
                DecodeError::Incomplete { .. } => write!(
                    f,
                    "the difference (about {estimated} keys by the estimator) is larger than {cells}-cell sketches \
                     can decode; sketch both sides with {recommended_cells} cells"
                ),
                DecodeError::Inconsistent(_) => write!(f, "{error}"),
            },
        }
    }
}

impl std::error::Error for DiffError {
    /// The parameter mismatch, or the IBF's decoding error.
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            DiffError::Mismatch(m) => Some(m),
            DiffError::TooLarge { error, .. } => Some(error),
            DiffError::NoIbf { .. } => None,
        }
    }
}

/// Adds every key, as [`Sketch::insert`] does, but a key equal to the one
/// just before it once only: sorted input with repeats (a key file, the
/// versions of a key in a table) sketches its set, as RocksDB's filter
/// builders skip consecutive duplicates. (Repeats that are not adjacent
/// are still each a difference of their own: deduplicate unsorted input
/// first.)
///
/// ```
/// use ribbon_reconcile::{Sketch, SketchParams};
///
/// let params = SketchParams { cells: 64, ..SketchParams::default() };
/// let mut a = Sketch::new(params);
/// a.extend(["apple", "banana", "cherry"]);
/// let mut b = Sketch::new(params);
/// b.extend([b"banana".to_vec(), b"cherry".to_vec(), b"cherry".to_vec(), b"durian".to_vec()]);
/// assert_eq!((a.keys(), b.keys()), (3, 3));
/// let d = a.diff(&b)?;
/// assert_eq!(d.only_in_a, [b"apple".to_vec()]);
/// assert_eq!(d.only_in_b, [b"durian".to_vec()]);
/// # Ok::<(), ribbon_reconcile::DiffError>(())
/// ```
impl<K: AsRef<[u8]>> Extend<K> for Sketch {
    fn extend<I: IntoIterator<Item = K>>(&mut self, keys: I) {
        let mut previous: Option<K> = None;
        for key in keys {
            if previous.as_ref().is_some_and(|p| p.as_ref() == key.as_ref()) {
                continue;
            }
            self.insert(&key);
            previous = Some(key);
        }
    }
}

impl Sketch {
    /// An empty sketch.
    pub fn new(params: SketchParams) -> Self {
        Self {
            seed: params.seed,
            keys: 0,
            estimator: StrataEstimator::new(params.strata, params.stratum_cells),
            ibf: (params.cells > 0).then(|| Ibf::new(params.cells, params.chunk_bytes, params.seed)),
        }
    }

    /// As [`Sketch::new`], but an allocation that fails is an error, not
    /// an abort. Check [`SketchParams::memory_bytes`] against a budget
    /// first: under overcommit an allocation far beyond memory may succeed
    /// and fail only when used.
    pub fn try_new(params: SketchParams) -> Result<Self, SketchError> {
        let ibf = if params.cells > 0 {
            Some(
                Ibf::try_new(params.cells, params.chunk_bytes, params.seed).map_err(|e| {
                    SketchError(format!(
                        "cannot allocate a sketch of {} cells ({} bytes): {e}",
                        params.cells,
                        params.memory_bytes()
                    ))
                })?,
            )
        } else {
            None
        };
        Ok(Self {
            seed: params.seed,
            keys: 0,
            estimator: StrataEstimator::new(params.strata, params.stratum_cells),
            ibf,
        })
    }

    /// The parameters it was made with.
    pub fn params(&self) -> SketchParams {
        SketchParams {
            seed: self.seed,
            cells: self.ibf.as_ref().map_or(0, Ibf::cells),
            chunk_bytes: self.ibf.as_ref().map_or(DEFAULT_CHUNK_BYTES, Ibf::chunk_bytes),
            strata: self.estimator.strata(),
            stratum_cells: self.estimator.stratum_cells(),
        }
    }

    /// Adds a key (anything `AsRef<[u8]>`). Each key must be added once (a
    /// key file with repeated keys is deduplicated first): a key added
    /// twice is not a set member but a difference of its own.
    #[inline]
    pub fn insert(&mut self, key: impl AsRef<[u8]>) {
        let key = key.as_ref();
        let h = hashing::key_hash(key, self.seed);
        self.estimator.insert_hash(h);
        if let Some(ibf) = &mut self.ibf {
            ibf.insert_hashed(key, h);
        }
        self.keys += 1;
    }

    /// Adds every key of `other` (a sketch with the same parameters) in
    /// one step that allocates nothing: afterwards this sketch is the one
    /// of both key sets, as if each key of `other` had been inserted here.
    /// With [`Sketch::try_new`], a fill that may fail half-way (a
    /// database walk) goes into a new sketch, absorbed only on success:
    /// all or nothing. A mismatch changes nothing.
    pub fn absorb(&mut self, other: &Sketch) -> Result<(), Mismatch> {
        if self.seed != other.seed {
            return Err(Mismatch::Seed);
        }
        self.estimator.check_compatible(&other.estimator)?;
        match (&self.ibf, &other.ibf) {
            (Some(a), Some(b)) => a.check_compatible(b)?,
            (None, None) => {}
            (a, b) => {
                return Err(Mismatch::Cells(
                    a.as_ref().map_or(0, Ibf::cells),
                    b.as_ref().map_or(0, Ibf::cells),
                ))
            }
        }
        self.estimator.add(&other.estimator)?;
        if let (Some(a), Some(b)) = (&mut self.ibf, &other.ibf) {
            a.add(b)?;
        }
        self.keys += other.keys;
        Ok(())
    }

    /// Keys added.
    pub fn keys(&self) -> u64 {
        self.keys
    }

    /// The estimator.
    pub fn estimator(&self) -> &StrataEstimator {
        &self.estimator
    }

    /// The IBF, when the sketch has one.
    pub fn ibf(&self) -> Option<&Ibf> {
        self.ibf.as_ref()
    }

    /// The estimated number of keys in exactly one of the two sets.
    pub fn estimate_difference(&self, other: &Sketch) -> Result<u64, Mismatch> {
        if self.seed != other.seed {
            return Err(Mismatch::Seed);
        }
        self.estimator.estimate_difference(&other.estimator)
    }

    /// The keys only in `self`'s set and only in `other`'s.
    pub fn diff(&self, other: &Sketch) -> Result<Difference, DiffError> {
        let estimated = self.estimate_difference(other).map_err(DiffError::Mismatch)?;
        let (Some(a), Some(b)) = (&self.ibf, &other.ibf) else {
            return Err(DiffError::NoIbf {
                estimated,
                recommended_cells: recommended_cells(estimated),
            });
        };
        let mut d = a.clone();
        d.subtract(b).map_err(DiffError::Mismatch)?;
        d.decode().map_err(|error| DiffError::TooLarge {
            error,
            cells: a.cells(),
            estimated,
            recommended_cells: recommended_cells(estimated).max(2 * a.cells()),
        })
    }

    /// The file's bytes.
    pub fn to_bytes(&self) -> Vec<u8> {
        let mut out = Vec::new();
        out.extend_from_slice(MAGIC);
        out.extend_from_slice(&VERSION.to_le_bytes());
        out.extend_from_slice(&self.seed.to_le_bytes());
        out.extend_from_slice(&self.keys.to_le_bytes());
        out.extend_from_slice(&(self.estimator.strata() as u32).to_le_bytes());
        out.extend_from_slice(&(self.estimator.stratum_cells() as u32).to_le_bytes());
        for (count, id, check) in self.estimator.cell_parts() {
            out.extend_from_slice(&count.to_le_bytes());
            out.extend_from_slice(&id.to_le_bytes());
            out.extend_from_slice(&check.to_le_bytes());
        }
        match &self.ibf {
            None => {
                out.extend_from_slice(&0u32.to_le_bytes());
                out.extend_from_slice(&(DEFAULT_CHUNK_BYTES as u32).to_le_bytes());
            }
            Some(ibf) => {
                let w = ibf.chunk_bytes();
                out.extend_from_slice(&(ibf.cells() as u32).to_le_bytes());
                out.extend_from_slice(&(w as u32).to_le_bytes());
                for i in 0..ibf.cells() {
                    let c = ibf.cell_parts(i);
                    out.extend_from_slice(&c.count.to_le_bytes());
                    out.extend_from_slice(&c.key_hash.to_le_bytes());
                    out.extend_from_slice(&c.meta.to_le_bytes());
                    out.extend_from_slice(&c.check.to_le_bytes());
                    out.extend_from_slice(&crate::ibf::chunk_bytes(c.chunk, w));
                }
            }
        }
        let sum = hashing::key_hash(&out, 0);
        out.extend_from_slice(&sum.to_le_bytes());
        out
    }

    /// Reads a sketch file's bytes (see the module docs for what is
    /// checked).
    pub fn from_bytes(data: &[u8]) -> Result<Self, SketchError> {
        let bad = |what: &str| SketchError(format!("not a valid sketch: {what}"));
        if data.len() < 8 || &data[..8] != MAGIC {
            return Err(SketchError("not a sketch file (no RBNSKTCH magic)".into()));
        }
        let mut r = Cursor { data, pos: 8 };
        let version = r.u32().ok_or_else(|| bad("truncated header"))?;
        if version != VERSION {
            return Err(SketchError(format!(
                "sketch format version {version} is not supported (this build reads version {VERSION})"
            )));
        }
        let (body, sum) = data.split_at(data.len().saturating_sub(8).max(12));
        if sum.len() != 8
            || hashing::key_hash(body, 0) != u64::from_le_bytes(sum.try_into().unwrap_or([0; 8]))
        {
            return Err(bad("checksum mismatch (corrupt or truncated file)"));
        }
        let seed = r.u64().ok_or_else(|| bad("truncated header"))?;
        let keys = r.u64().ok_or_else(|| bad("truncated header"))?;
        let strata = r.u32().ok_or_else(|| bad("truncated header"))? as usize;
        let stratum_cells = r.u32().ok_or_else(|| bad("truncated header"))? as usize;
        if !(1..=MAX_STRATA).contains(&strata)
            || !(HASH_COUNT..=MAX_STRATUM_CELLS).contains(&stratum_cells)
            || !stratum_cells.is_multiple_of(HASH_COUNT)
        {
            return Err(bad("estimator shape out of range"));
        }
        let n = strata * stratum_cells;
        if r.left(body.len()) < n * 20 + 8 {
            return Err(bad("truncated estimator"));
        }
        // The length was checked above: these reads cannot fail.
        let cells = (0..n).map(|_| {
            let count = r.u32().unwrap_or(0) as i32;
            (count, r.u64().unwrap_or(0), r.u64().unwrap_or(0))
        });
        let estimator = StrataEstimator::from_cells(strata, cells);
        let cells = r.u32().ok_or_else(|| bad("truncated IBF header"))? as usize;
        let w = r.u32().ok_or_else(|| bad("truncated IBF header"))? as usize;
        if cells > MAX_CELLS || !cells.is_multiple_of(HASH_COUNT) || !(1..=MAX_CHUNK_BYTES).contains(&w) {
            return Err(bad("IBF shape out of range"));
        }
        let expected = cells
            .checked_mul(28 + w)
            .ok_or_else(|| bad("IBF shape out of range"))?;
        if r.left(body.len()) != expected {
            return Err(bad("the IBF's length is not what its header says"));
        }
        let ibf = if cells == 0 {
            None
        } else {
            // The cells are present (checked above): this allocation is
            // within 1.4 times the file's bytes.
            let mut ibf = Ibf::with_shape(seed, cells, w).map_err(|e| {
                SketchError(format!(
                    "cannot allocate the sketch's {cells} cells ({} bytes): {e}",
                    Ibf::memory_bytes(cells, w)
                ))
            })?;
            for i in 0..cells {
                // The length was checked above: these reads cannot fail.
                let count = r.u32().unwrap_or(0) as i32;
                let key_hash = r.u64().unwrap_or(0);
                let meta = r.u64().unwrap_or(0);
                let check = r.u64().unwrap_or(0);
                ibf.set_cell(i, count, key_hash, meta, check, r.bytes(w).unwrap_or(&[]));
            }
            Some(ibf)
        };
        Ok(Self {
            seed,
            keys,
            estimator,
            ibf,
        })
    }
}

struct Cursor<'a> {
    data: &'a [u8],
    pos: usize,
}

impl<'a> Cursor<'a> {
    fn bytes(&mut self, n: usize) -> Option<&'a [u8]> {
        let out = self.data.get(self.pos..self.pos.checked_add(n)?)?;
        self.pos += n;
        Some(out)
    }

    fn u32(&mut self) -> Option<u32> {
        self.bytes(4)
            .map(|b| u32::from_le_bytes(b.try_into().unwrap_or([0; 4])))
    }

    fn u64(&mut self) -> Option<u64> {
        self.bytes(8)
            .map(|b| u64::from_le_bytes(b.try_into().unwrap_or([0; 8])))
    }

    /// Bytes left before `end`.
    fn left(&self, end: usize) -> usize {
        end.saturating_sub(self.pos)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trips_and_rejects_every_corruption() {
        let mut s = Sketch::new(SketchParams {
            cells: 30,
            stratum_cells: 12,
            strata: 4,
            chunk_bytes: 5,
            seed: 9,
        });
        for k in [&b"a"[..], b"bb", b"a much longer key"] {
            s.insert(k);
        }
        let bytes = s.to_bytes();
        assert_eq!(Sketch::from_bytes(&bytes).unwrap(), s);
        for i in 0..bytes.len() {
            let mut b = bytes.clone();
            b[i] ^= 0x10;
            assert!(Sketch::from_bytes(&b).is_err(), "flip at {i}");
        }
        for n in 0..bytes.len() {
            assert!(Sketch::from_bytes(&bytes[..n]).is_err(), "truncated to {n}");
        }
    }

    #[test]
    fn absorbing_a_sketch_equals_inserting_its_keys() {
        let params = SketchParams {
            cells: 40,
            seed: 3,
            ..SketchParams::default()
        };
        let keys: Vec<Vec<u8>> = (0..500u32).map(|i| format!("key{i}").into_bytes()).collect();
        let mut all = Sketch::new(params);
        let (mut a, mut b) = (Sketch::new(params), Sketch::new(params));
        for (i, k) in keys.iter().enumerate() {
            all.insert(k);
            if i % 3 == 0 {
                a.insert(k)
            } else {
                b.insert(k)
            }
        }
        a.absorb(&b).unwrap();
        assert_eq!(a, all);
        assert_eq!(a.keys(), 500);
        // Another shape changes nothing.
        let other = Sketch::new(SketchParams { cells: 80, ..params });
        let before = a.clone();
        assert!(a.absorb(&other).is_err());
        assert!(a
            .absorb(&Sketch::new(SketchParams { seed: 4, ..params }))
            .is_err());
        assert!(a
            .absorb(&Sketch::new(SketchParams { cells: 0, ..params }))
            .is_err());
        assert_eq!(a, before);
    }
}
