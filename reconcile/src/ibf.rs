//! The invertible Bloom filter (IBF, Eppstein, Goodrich, Uyeda and
//! Varghese 2011, "What's the Difference?"): cells holding a count, an XOR
//! of element ids and an XOR of their check hashes; insert, subtract, and
//! peel the pure cells to list the elements of a set difference.
//!
//! **Variable-length keys.** A key is stored as one element per
//! `chunk_bytes`-byte chunk (one element for keys up to `chunk_bytes`
//! bytes, the common case; the empty key is one empty chunk). A cell
//! holds, besides the count:
//!
//! * the XOR of the key hashes ([`crate::hashing::key_hash`], XXPH3, 64
//!   bits) of its elements,
//! * the XOR of their *meta* words: key length (high 32 bits) and chunk
//!   index (low 32 bits),
//! * the XOR of their check hashes (the element hash: a mix of key hash
//!   and meta, whose bits also pick the element's cells, see
//!   [`crate::hashing`]),
//! * the XOR of their chunk bytes, zero-padded to `chunk_bytes`.
//!
//! So the key itself travels in the cells (no side table is needed to
//! recover it), and a cell costs `28 + chunk_bytes` bytes.
//!
//! **Never a wrong key.** A cell is taken as pure only when its count is
//! ±1, its check sum is the check hash of its id and meta sums, it is one
//! of the cells that element hashes to, the meta is a valid chunk and the
//! padding beyond the chunk is zero. Decoding succeeds only when peeling
//! empties every cell; the chunks are then grouped by key hash and length,
//! every group must be complete, and every reassembled key must hash to
//! its key hash. Anything else is a [`DecodeError`], never a wrong key:
//! for a false key to be reported, a mixed cell would have to pass the
//! 64-bit check hash and its chunks then pass the 64-bit key hash too.
//!
//! Elements hash to one cell in each third of the table
//! ([`crate::hashing::HASH_COUNT`]).

use crate::hashing::{self, mix, positions, HASH_COUNT};
use crate::Mismatch;
use std::collections::TryReserveError;

/// The largest chunk a sketch may use.
pub const MAX_CHUNK_BYTES: usize = 4096;
/// The most cells an IBF may have.
pub const MAX_CELLS: usize = 3 << 28;

/// An invertible Bloom filter over byte-string keys.
///
/// The cells lie in one array, a cell's fields side by side (one cache line
/// per cell for the default 32-byte chunks): an update touches three cells,
/// so three lines, whatever the table's size.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Ibf {
    seed: u64,
    chunk_bytes: usize,
    part: u32,
    /// Words per cell: [`HEADER_WORDS`] then the chunk's bytes, little-endian,
    /// zero beyond `chunk_bytes`.
    stride: usize,
    words: Vec<u64>,
}

/// A cell's words before its chunk: the count (an `i32`, in the low half),
/// the key hash XOR, the meta XOR and the check XOR.
const HEADER_WORDS: usize = 4;
const COUNT: usize = 0;
const KEY_HASH: usize = 1;
const META: usize = 2;
const CHECK: usize = 3;

/// One cell, for serialisation: count, key hash, meta and check XORs, and
/// the chunk bytes' XOR.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct CellParts<'a> {
    pub(crate) count: i32,
    pub(crate) key_hash: u64,
    pub(crate) meta: u64,
    pub(crate) check: u64,
    pub(crate) chunk: &'a [u64],
}

/// The keys of a decoded difference `A − B`, each list sorted bytewise.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Difference {
    /// Keys in A and not in B.
    pub only_in_a: Vec<Vec<u8>>,
    /// Keys in B and not in A.
    pub only_in_b: Vec<Vec<u8>>,
}

impl Difference {
    /// How many keys differ.
    pub fn len(&self) -> usize {
        self.only_in_a.len() + self.only_in_b.len()
    }

    /// Whether the sets are equal.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

/// Why a difference could not be listed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum DecodeError {
    /// Peeling stopped with cells left: the difference is too large for
    /// the table (or one of the sets had a key twice).
    Incomplete {
        /// Elements (chunks) peeled before it stopped.
        peeled: usize,
        /// Cells not empty when it stopped.
        cells_left: usize,
    },
    /// The cells peeled, but what they held is not a set difference
    /// (a sketch built from a multiset, or a hostile sketch).
    Inconsistent(&'static str),
}

impl std::fmt::Display for DecodeError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            DecodeError::Incomplete { peeled, cells_left } => write!(
                f,
                "the difference is too large for the sketch: {peeled} chunks decoded, {cells_left} cells left"
            ),
            DecodeError::Inconsistent(what) => {
                write!(f, "the sketches do not decode to a set difference: {what}")
            }
        }
    }
}

impl std::error::Error for DecodeError {}

/// A decoded element: sign (+1 only in A, −1 only in B), key hash, meta,
/// chunk bytes.
type Element = (i32, u64, u64, Vec<u8>);

/// The element hash of chunk `meta` of the key with hash `h`.
#[inline]
fn element(h: u64, meta: u64) -> u64 {
    mix(h ^ meta.wrapping_mul(hashing::ELEMENT))
}

/// How many chunks a key of `len` bytes has.
#[inline]
fn chunk_count(len: u64, chunk_bytes: usize) -> u64 {
    len.div_ceil(chunk_bytes as u64).max(1)
}

impl Ibf {
    /// An empty IBF of at least `cells` cells (rounded up to a multiple of
    /// three, at least three, at most [`MAX_CELLS`]) whose keys are hashed
    /// with `seed` and stored in chunks of `chunk_bytes` bytes (1 to
    /// [`MAX_CHUNK_BYTES`]; clamped).
    ///
    /// Memory: [`Ibf::memory_bytes`] of these, up to 3.3 TB for the largest
    /// shape; [`Ibf::try_new`] reports an allocation that fails.
    pub fn new(cells: usize, chunk_bytes: usize, seed: u64) -> Self {
        let (part, chunk_bytes, stride) = Self::shape(cells, chunk_bytes);
        Self {
            seed,
            chunk_bytes,
            part: part as u32,
            stride,
            words: vec![0; part * HASH_COUNT * stride],
        }
    }

    /// As [`Ibf::new`], but an allocation that fails (for example under an
    /// address-space limit) is an error, not an abort.
    pub fn try_new(cells: usize, chunk_bytes: usize, seed: u64) -> Result<Self, TryReserveError> {
        let (part, chunk_bytes, stride) = Self::shape(cells, chunk_bytes);
        let n = part * HASH_COUNT * stride;
        let mut words = Vec::new();
        words.try_reserve_exact(n)?;
        words.resize(n, 0);
        Ok(Self {
            seed,
            chunk_bytes,
            part: part as u32,
            stride,
            words,
        })
    }

    /// Heap bytes of an IBF made with these arguments (rounded and clamped
    /// as [`Ibf::new`] does): `cells × (32 + chunk_bytes rounded up to 8)`.
    pub fn memory_bytes(cells: usize, chunk_bytes: usize) -> u64 {
        let (part, _, stride) = Self::shape(cells, chunk_bytes);
        (part * HASH_COUNT * stride * 8) as u64
    }

    /// Parts, chunk bytes and words per cell, as `new` rounds and clamps.
    fn shape(cells: usize, chunk_bytes: usize) -> (usize, usize, usize) {
        let part = cells.clamp(1, MAX_CELLS).div_ceil(HASH_COUNT);
        let chunk_bytes = chunk_bytes.clamp(1, MAX_CHUNK_BYTES);
        (part, chunk_bytes, HEADER_WORDS + chunk_bytes.div_ceil(8))
    }

    /// The number of cells.
    pub fn cells(&self) -> usize {
        self.part as usize * HASH_COUNT
    }

    /// Cell `i`'s words.
    #[inline]
    fn cell(&self, i: usize) -> &[u64] {
        &self.words[i * self.stride..(i + 1) * self.stride]
    }

    /// Cell `i`'s count.
    #[inline]
    fn count(&self, i: usize) -> i32 {
        self.words[i * self.stride + COUNT] as u32 as i32
    }

    /// The chunk size in bytes.
    pub fn chunk_bytes(&self) -> usize {
        self.chunk_bytes
    }

    /// The key hash seed.
    pub fn seed(&self) -> u64 {
        self.seed
    }

    /// Adds `key` (a set holds each key once: adding a key twice makes the
    /// difference undecodable, never wrong).
    pub fn insert(&mut self, key: &[u8]) {
        let h = hashing::key_hash(key, self.seed);
        self.apply(key, h, 1);
    }

    /// Removes `key` (or adds it to the other side of a difference).
    pub fn remove(&mut self, key: &[u8]) {
        let h = hashing::key_hash(key, self.seed);
        self.apply(key, h, -1);
    }

    /// [`Ibf::insert`] with the key's hash already computed
    /// ([`crate::hashing::key_hash`] with this IBF's seed).
    #[inline]
    pub fn insert_hashed(&mut self, key: &[u8], h: u64) {
        self.apply(key, h, 1);
    }

    /// Adds `sign` copies of `key` (hash `h`). Keys of 4 GiB or more are
    /// stored with their length modulo 2^32 and so never decode (RocksDB
    /// keys are far shorter).
    #[inline]
    fn apply(&mut self, key: &[u8], h: u64, sign: i32) {
        let w = self.chunk_bytes;
        let len = key.len() as u64 & 0xffff_ffff;
        if key.len() <= w {
            self.toggle(h, len << 32, key, sign);
            return;
        }
        for (c, chunk) in key.chunks(w).enumerate() {
            self.toggle(h, (len << 32) | (c as u64 & 0xffff_ffff), chunk, sign);
        }
    }

    /// XORs one element into its three cells. `chunk` is at most
    /// `chunk_bytes` long.
    #[inline(always)]
    fn toggle(&mut self, h: u64, meta: u64, chunk: &[u8], sign: i32) {
        let c = element(h, meta);
        let stride = self.stride;
        // Chunks of up to four words (keys up to 32 bytes with the default
        // chunk size) are loaded once and XORed as four words.
        let short = (chunk.len() <= 32 && stride >= HEADER_WORDS + 4).then(|| load_words(chunk));
        for p in positions(c, self.part) {
            let cell = &mut self.words[p * stride..(p + 1) * stride];
            let (header, payload) = cell.split_at_mut(HEADER_WORDS);
            header[COUNT] = u64::from((header[COUNT] as u32).wrapping_add(sign as u32));
            header[KEY_HASH] ^= h;
            header[META] ^= meta;
            header[CHECK] ^= c;
            match short {
                Some(w) => {
                    for (x, y) in payload[..4].iter_mut().zip(w) {
                        *x ^= y;
                    }
                }
                None => xor_chunk(payload, chunk),
            }
        }
    }

    /// Whether `other` was made with the same cells, chunk size and seed.
    pub fn check_compatible(&self, other: &Ibf) -> Result<(), Mismatch> {
        if self.cells() != other.cells() {
            return Err(Mismatch::Cells(self.cells(), other.cells()));
        }
        if self.chunk_bytes != other.chunk_bytes {
            return Err(Mismatch::ChunkBytes(self.chunk_bytes, other.chunk_bytes));
        }
        if self.seed != other.seed {
            return Err(Mismatch::Seed);
        }
        Ok(())
    }

    /// Adds `other` cell by cell: afterwards this IBF is the one of both
    /// sets' keys, as if each key of `other` had been inserted here.
    pub fn add(&mut self, other: &Ibf) -> Result<(), Mismatch> {
        self.combine(other, u32::wrapping_add)
    }

    /// Subtracts `other` cell by cell: afterwards this IBF holds the
    /// difference `self − other` (keys only in `self` count +1, keys only
    /// in `other` −1).
    pub fn subtract(&mut self, other: &Ibf) -> Result<(), Mismatch> {
        self.combine(other, u32::wrapping_sub)
    }

    /// Each cell's count combined with `other`'s by `count` (32-bit,
    /// wrapping), its key and hash sums XORed.
    fn combine(&mut self, other: &Ibf, count: fn(u32, u32) -> u32) -> Result<(), Mismatch> {
        self.check_compatible(other)?;
        let stride = self.stride;
        for (a, b) in self
            .words
            .chunks_exact_mut(stride)
            .zip(other.words.chunks_exact(stride))
        {
            a[COUNT] = u64::from(count(a[COUNT] as u32, b[COUNT] as u32));
            for (x, y) in a[KEY_HASH..].iter_mut().zip(&b[KEY_HASH..]) {
                *x ^= y;
            }
        }
        Ok(())
    }

    /// Lists the keys of the difference this IBF holds (after
    /// [`Ibf::subtract`]: keys only in A, keys only in B), or says it
    /// cannot. Never lists a key that is not in the difference (see the
    /// module docs). Time linear in the cells (and the keys' bytes).
    pub fn decode(&self) -> Result<Difference, DecodeError> {
        let mut work = self.clone();
        let elements = work.peel()?;
        self.assemble(elements)
    }

    /// The chunk stored in cell `i` when it is pure: (sign, key hash, meta,
    /// chunk length).
    fn pure(&self, i: usize) -> Option<(i32, u64, u64, usize)> {
        let count = self.count(i);
        if count != 1 && count != -1 {
            return None;
        }
        let cell = self.cell(i);
        let (h, meta) = (cell[KEY_HASH], cell[META]);
        let e = element(h, meta);
        if e != cell[CHECK] || !positions(e, self.part).contains(&i) {
            return None;
        }
        let (len, index) = (meta >> 32, meta & 0xffff_ffff);
        let w = self.chunk_bytes as u64;
        if index >= chunk_count(len, self.chunk_bytes) {
            return None;
        }
        let chunk_len = (len - index * w).min(w) as usize;
        if !tail_is_zero(&cell[HEADER_WORDS..], chunk_len) {
            return None;
        }
        Some((count, h, meta, chunk_len))
    }

    /// Peels pure cells until none is left; every cell must then be empty.
    fn peel(&mut self) -> Result<Vec<Element>, DecodeError> {
        let mut stack: Vec<usize> = (0..self.cells()).filter(|&i| self.pure(i).is_some()).collect();
        let mut out = Vec::new();
        // A set difference peels each chunk once; a hostile sketch may make
        // the same element pure again, so the peels are bounded.
        let limit = self.cells() * HASH_COUNT + 64;
        while let Some(i) = stack.pop() {
            let Some((sign, h, meta, chunk_len)) = self.pure(i) else {
                continue;
            };
            if out.len() >= limit {
                return Err(DecodeError::Inconsistent(
                    "an element peeled more often than the table holds",
                ));
            }
            let chunk = chunk_bytes(&self.cell(i)[HEADER_WORDS..], chunk_len);
            self.toggle(h, meta, &chunk, -sign);
            for p in positions(element(h, meta), self.part) {
                if self.pure(p).is_some() {
                    stack.push(p);
                }
            }
            out.push((sign, h, meta, chunk));
        }
        let cells_left = (0..self.cells()).filter(|&i| !self.cell_is_empty(i)).count();
        if cells_left > 0 {
            return Err(DecodeError::Incomplete {
                peeled: out.len(),
                cells_left,
            });
        }
        Ok(out)
    }

    fn cell_is_empty(&self, i: usize) -> bool {
        self.cell(i).iter().all(|&w| w == 0)
    }

    /// Groups the peeled chunks into keys and checks each key's hash.
    ///
    /// Memory: the elements are sorted in place and each group's chunk
    /// count is checked against its key length before the key is
    /// assembled, so no allocation is sized by a length field alone: the
    /// keys take at most the bytes of the peeled chunks (a hostile cell
    /// claiming a 4 GiB key is an error, not a 4 GiB allocation).
    fn assemble(&self, mut elements: Vec<Element>) -> Result<Difference, DecodeError> {
        // By sign, key hash, key length, then chunk index.
        elements.sort_unstable_by_key(|&(sign, h, meta, _)| (sign, h, meta >> 32, meta & 0xffff_ffff));
        let mut diff = Difference::default();
        let mut rest = &elements[..];
        while let Some(&(sign, h, meta, _)) = rest.first() {
            let len = meta >> 32;
            let group = rest
                .iter()
                .take_while(|&&(s, g, m, _)| s == sign && g == h && m >> 32 == len)
                .count();
            let (chunks, tail) = rest.split_at(group);
            rest = tail;
            let n = chunk_count(len, self.chunk_bytes);
            if (group as u64) < n {
                return Err(DecodeError::Inconsistent("a key with chunks missing"));
            }
            if (group as u64) > n {
                // Sorted by index: a repeat or an index beyond the key.
                return Err(if chunks.last().is_some_and(|c| c.2 & 0xffff_ffff >= n) {
                    DecodeError::Inconsistent("a chunk index beyond its key")
                } else {
                    DecodeError::Inconsistent("a key chunk appears twice")
                });
            }
            // `group == n` chunks: they must be indexes 0..n in order.
            if chunks
                .iter()
                .enumerate()
                .any(|(i, c)| c.2 & 0xffff_ffff != i as u64)
            {
                return Err(DecodeError::Inconsistent("a key chunk appears twice"));
            }
            let mut key = Vec::with_capacity(chunks.iter().map(|c| c.3.len()).sum());
            for c in chunks {
                key.extend_from_slice(&c.3);
            }
            if key.len() as u64 != len || hashing::key_hash(&key, self.seed) != h {
                return Err(DecodeError::Inconsistent("a decoded key does not match its hash"));
            }
            if sign > 0 {
                diff.only_in_a.push(key);
            } else {
                diff.only_in_b.push(key);
            }
        }
        diff.only_in_a.sort_unstable();
        diff.only_in_b.sort_unstable();
        if diff.only_in_a.windows(2).any(|w| w[0] == w[1]) || diff.only_in_b.windows(2).any(|w| w[0] == w[1])
        {
            return Err(DecodeError::Inconsistent("a key decoded twice"));
        }
        Ok(diff)
    }

    /// Cell `i`'s fields, for serialisation (`i` below [`Ibf::cells`]).
    pub(crate) fn cell_parts(&self, i: usize) -> CellParts<'_> {
        let cell = self.cell(i);
        CellParts {
            count: cell[COUNT] as u32 as i32,
            key_hash: cell[KEY_HASH],
            meta: cell[META],
            check: cell[CHECK],
            chunk: &cell[HEADER_WORDS..],
        }
    }

    /// An empty IBF of `cells` cells (a multiple of [`HASH_COUNT`], at most
    /// [`MAX_CELLS`]) and `chunk_bytes`-byte chunks (1 to
    /// [`MAX_CHUNK_BYTES`]), to be filled by [`Ibf::set_cell`] (shape
    /// checked by the caller).
    pub(crate) fn with_shape(seed: u64, cells: usize, chunk_bytes: usize) -> Result<Self, TryReserveError> {
        debug_assert!(cells.is_multiple_of(HASH_COUNT) && (1..=MAX_CHUNK_BYTES).contains(&chunk_bytes));
        Self::try_new(cells, chunk_bytes, seed)
    }

    /// Sets cell `i` from its serialised fields; `chunk` is `chunk_bytes`
    /// long.
    pub(crate) fn set_cell(
        &mut self,
        i: usize,
        count: i32,
        key_hash: u64,
        meta: u64,
        check: u64,
        chunk: &[u8],
    ) {
        let stride = self.stride;
        let cell = &mut self.words[i * stride..(i + 1) * stride];
        cell[COUNT] = u64::from(count as u32);
        cell[KEY_HASH] = key_hash;
        cell[META] = meta;
        cell[CHECK] = check;
        cell[HEADER_WORDS..].fill(0);
        xor_chunk(&mut cell[HEADER_WORDS..], chunk);
    }
}

/// XORs `chunk` (little-endian, zero-padded) into `words` (at least
/// `chunk.len()` bytes' worth).
#[inline]
fn xor_chunk(words: &mut [u64], chunk: &[u8]) {
    let mut full = chunk.chunks_exact(8);
    let mut words = words.iter_mut();
    // `full` first: `zip` stops at its end without taking another word.
    for (b, w) in full.by_ref().zip(words.by_ref()) {
        let mut bytes = [0u8; 8];
        bytes.copy_from_slice(b);
        *w ^= u64::from_le_bytes(bytes);
    }
    let rest = full.remainder();
    if !rest.is_empty() {
        let mut bytes = [0u8; 8];
        bytes[..rest.len()].copy_from_slice(rest);
        if let Some(w) = words.next() {
            *w ^= u64::from_le_bytes(bytes);
        }
    }
}

/// A chunk of at most 32 bytes as four little-endian words, zero-padded.
#[inline]
fn load_words(chunk: &[u8]) -> [u64; 4] {
    let le = |b: &[u8]| u64::from_le_bytes(b[..8].try_into().unwrap_or([0; 8]));
    let n = chunk.len();
    let mut w = [0u64; 4];
    if n >= 8 {
        let full = n / 8;
        for (i, x) in w.iter_mut().enumerate().take(full) {
            *x = le(&chunk[i * 8..]);
        }
        let rest = n % 8;
        if rest != 0 {
            // The last eight bytes, shifted down to the ones not yet read.
            w[full] = le(&chunk[n - 8..]) >> (8 * (8 - rest));
        }
    } else {
        for (i, &b) in chunk.iter().enumerate() {
            w[0] |= u64::from(b) << (8 * i);
        }
    }
    w
}

/// Whether the chunk bytes of `words` from `len` on are all zero.
fn tail_is_zero(words: &[u64], len: usize) -> bool {
    let (whole, part) = (len / 8, len % 8);
    let mut rest = &words[whole.min(words.len())..];
    if part != 0 {
        let Some((&w, tail)) = rest.split_first() else {
            return true;
        };
        if w >> (8 * part) != 0 {
            return false;
        }
        rest = tail;
    }
    rest.iter().all(|&w| w == 0)
}

/// The first `len` chunk bytes of `words`.
pub(crate) fn chunk_bytes(words: &[u64], len: usize) -> Vec<u8> {
    let mut out: Vec<u8> = words.iter().flat_map(|w| w.to_le_bytes()).collect();
    out.truncate(len);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn long_keys_are_chunked_and_recovered() {
        let mut a = Ibf::new(60, 8, 1);
        let b = Ibf::new(60, 8, 1);
        let long = vec![7u8; 100];
        a.insert(&long);
        a.insert(b"");
        a.insert(b"12345678");
        let mut d = a.clone();
        d.subtract(&b).unwrap();
        let diff = d.decode().unwrap();
        assert_eq!(diff.only_in_a, vec![b"".to_vec(), long, b"12345678".to_vec()]);
        assert!(diff.only_in_b.is_empty());
    }

    #[test]
    fn short_chunks_load_as_their_padded_words() {
        let bytes: Vec<u8> = (1..=32).collect();
        for n in 0..=32 {
            let mut expected = [0u64; 4];
            xor_chunk(&mut expected, &bytes[..n]);
            assert_eq!(load_words(&bytes[..n]), expected, "{n} bytes");
            assert_eq!(chunk_bytes(&expected, n), &bytes[..n]);
            assert!(tail_is_zero(&expected, n));
            assert_eq!(tail_is_zero(&expected, n.saturating_sub(1)), n == 0);
        }
    }

    #[test]
    fn a_key_added_twice_never_decodes_to_a_wrong_key() {
        let mut a = Ibf::new(30, 8, 1);
        a.insert(b"twice");
        a.insert(b"twice");
        a.insert(b"once");
        // The doubled key leaves cells of count 2 that never peel.
        assert!(matches!(a.decode(), Err(DecodeError::Incomplete { .. })));
    }
}
