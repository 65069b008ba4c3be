//! Queries over a sharded container's bytes, zero-copy.

use super::format::{
    first_shard_offset, index_checksum, Error, Header, HEADER_LEN, MIN_SHARD_LEN, SHARD_ALIGN,
};
use super::{shard_hash, shard_of};
use crate::core::filter::MayContain;
use crate::core::hash::{get_slice_hash64, split_mix64};
use crate::core::prelude::*;
use crate::standalone::RibbonRef;
use core::sync::atomic::{AtomicU8, Ordering};

/// A sharded filter borrowed from the bytes of a container file (for
/// example a memory map), without copying them.
///
/// The view holds each shard's decoded header, so a query hashes the key,
/// picks the shard and reads only that shard's solution bytes.
///
/// **Checksums.** Opening checks the header, the index and every shard's
/// header, not the shards' bodies (so a mapped file opens in time
/// proportional to its shard count, not its size). A shard's body checksum
/// is verified the first time a query uses the shard, and the outcome is
/// remembered by this view (and its clones made afterwards), as RocksDB
/// checks a block's checksum when it reads the block: a damaged shard never
/// answers. [`try_contains_hash`](Self::try_contains_hash) reports it as an
/// error; [`contains_hash`](Self::contains_hash), which cannot, answers
/// "may be in the set" for every key of a damaged shard (never a false
/// negative). [`verify`](Self::verify) checks every shard and every byte
/// at once. A caller that verified the file once (for example with
/// `ribbon big info --verify`) and trusts it since opens it with
/// [`from_bytes_unverified`](Self::from_bytes_unverified): no shard body is
/// then read before its queries.
///
/// **Memory.** Opening allocates [`BYTES_PER_SHARD`](Self::BYTES_PER_SHARD)
/// bytes per shard (the decoded header and the checksum state), once the
/// whole index has been checked against the file: every shard takes at
/// least [`MIN_SHARD_LEN`] + 16 bytes of the file (its index entry), so a
/// view never allocates more than `BYTES_PER_SHARD / 88` times the file's
/// length, and at most `BYTES_PER_SHARD * 2^20` for the largest container,
/// whatever the bytes say. Queries allocate nothing (but
/// [`contains_many_hashes`](Self::contains_many_hashes)'s answers).
pub struct ShardedRef<'a> {
    header: Header,
    bytes: &'a [u8],
    shards: Vec<RibbonRef<'a>>,
    /// Per shard: `UNCHECKED`, `GOOD` or `DAMAGED`.
    checked: Vec<AtomicU8>,
}

const UNCHECKED: u8 = 0;
const GOOD: u8 = 1;
const DAMAGED: u8 = 2;

impl Clone for ShardedRef<'_> {
    fn clone(&self) -> Self {
        Self {
            header: self.header,
            bytes: self.bytes,
            shards: self.shards.clone(),
            checked: self
                .checked
                .iter()
                .map(|c| AtomicU8::new(c.load(Ordering::Relaxed)))
                .collect(),
        }
    }
}

impl<'a> ShardedRef<'a> {
    /// Heap bytes a view holds per shard (see the type's docs).
    pub const BYTES_PER_SHARD: usize = core::mem::size_of::<RibbonRef<'static>>() + 1;

    /// Borrows a container from `bytes`, checking the header, the index
    /// (checksum, offsets, lengths), each shard's header and the key
    /// counts. The shards' bodies are verified the first time each is used
    /// (see the type's docs); [`verify`](Self::verify) checks every byte now.
    ///
    /// Errors: [`Error::BadMagic`], [`Error::UnsupportedVersion`],
    /// [`Error::Truncated`], [`Error::HeaderChecksumMismatch`],
    /// [`Error::IndexChecksumMismatch`], [`Error::Corrupt`] or
    /// [`Error::Shard`].
    pub fn from_bytes(bytes: &'a [u8]) -> Result<Self, Error> {
        Self::open(bytes, UNCHECKED)
    }

    /// As [`from_bytes`](Self::from_bytes), for bytes verified before and
    /// trusted since (the explicit opt-out): the shards' body checksums are
    /// not checked on first use. A damaged body is then not detected and
    /// may give false negatives; queries never panic.
    pub fn from_bytes_unverified(bytes: &'a [u8]) -> Result<Self, Error> {
        Self::open(bytes, GOOD)
    }

    fn open(bytes: &'a [u8], state: u8) -> Result<Self, Error> {
        let header = Header::decode(bytes)?;
        let len = bytes.len() as u64;
        if len != header.file_len {
            return Err(if len < header.file_len {
                Error::Truncated {
                    needed: header.file_len,
                    got: len,
                }
            } else {
                Error::Corrupt(format!("{len} bytes, the header records {}", header.file_len))
            });
        }
        let first = first_shard_offset(header.shard_bits);
        if len < first {
            return Err(Error::Truncated {
                needed: first,
                got: len,
            });
        }
        let index = &bytes[HEADER_LEN..HEADER_LEN + header.index_len()];
        if index_checksum(index) != header.index_checksum {
            return Err(Error::IndexChecksumMismatch);
        }
        // The whole index against the file first, allocating nothing, so
        // that what is allocated next is bounded by the file's length.
        let ranges = || {
            index.chunks_exact(16).map(|entry| {
                let offset = u64::from_le_bytes(entry[..8].try_into().unwrap_or([0; 8]));
                let shard_len = u64::from_le_bytes(entry[8..].try_into().unwrap_or([0; 8]));
                (offset, shard_len)
            })
        };
        let mut expected = first;
        for (i, (offset, shard_len)) in ranges().enumerate() {
            if offset != expected {
                return Err(Error::Corrupt(format!(
                    "shard {i} at offset {offset}, expected {expected}"
                )));
            }
            if shard_len < MIN_SHARD_LEN {
                return Err(Error::Corrupt(format!("shard {i} is {shard_len} bytes")));
            }
            let end = offset
                .checked_add(shard_len)
                .filter(|&e| e <= len)
                .ok_or_else(|| Error::Corrupt(format!("shard {i} ends past the file")))?;
            expected = end.next_multiple_of(SHARD_ALIGN);
            if i + 1 == header.num_shards() && end != len {
                return Err(Error::Corrupt(format!(
                    "{} bytes after the last shard",
                    len - end
                )));
            }
        }
        let mut shards = Vec::with_capacity(header.num_shards());
        let mut num_keys = 0u64;
        for (i, (offset, shard_len)) in ranges().enumerate() {
            // In range: checked above.
            let shard =
                RibbonRef::from_bytes_unverified(&bytes[offset as usize..(offset + shard_len) as usize])
                    .map_err(|error| Error::Shard { shard: i, error })?;
            num_keys = num_keys.saturating_add(shard.num_keys());
            shards.push(shard);
        }
        if num_keys != header.num_keys {
            return Err(Error::Corrupt(format!(
                "the shards hold {num_keys} keys, the header records {}",
                header.num_keys
            )));
        }
        let checked = (0..shards.len()).map(|_| AtomicU8::new(state)).collect();
        Ok(Self {
            header,
            bytes,
            shards,
            checked,
        })
    }

    /// Reads every byte: each shard's body checksum and that all padding
    /// is zero; remembers each shard's outcome for the queries.
    /// Errors: [`Error::Shard`] or [`Error::Corrupt`].
    pub fn verify(&self) -> Result<(), Error> {
        let mut at = HEADER_LEN + self.header.index_len();
        for (i, shard) in self.shards.iter().enumerate() {
            let start = shard.as_bytes().as_ptr() as usize - self.bytes.as_ptr() as usize;
            if self.bytes[at..start].iter().any(|&b| b != 0) {
                return Err(Error::Corrupt(format!("padding before shard {i} is not zero")));
            }
            self.verify_shard(i)?;
            at = start + shard.as_bytes().len();
        }
        Ok(())
    }

    /// Verifies shard `i`'s body checksum (`i` in range), remembering the
    /// outcome.
    #[cold]
    fn verify_shard(&self, i: usize) -> Result<(), Error> {
        let result = RibbonRef::from_bytes(self.shards[i].as_bytes())
            .map(|_| ())
            .map_err(|error| Error::Shard { shard: i, error });
        let state = if result.is_ok() { GOOD } else { DAMAGED };
        self.checked[i].store(state, Ordering::Release);
        result
    }

    /// Shard `i` (in range), once its body checksum is known to hold.
    #[inline]
    fn checked_shard(&self, i: usize) -> Result<&RibbonRef<'a>, Error> {
        match self.checked[i].load(Ordering::Acquire) {
            GOOD => Ok(&self.shards[i]),
            _ => self.verify_shard(i).map(|()| &self.shards[i]),
        }
    }

    /// Whether `key` may be in the set: always for a key the filter was
    /// built from; for others, about the shards' FP rate. A damaged shard
    /// answers `true` (see the type's docs;
    /// [`try_contains`](Self::try_contains) tells).
    #[inline]
    pub fn contains(&self, key: impl AsRef<[u8]>) -> bool {
        self.contains_hash(get_slice_hash64(key.as_ref()))
    }

    /// Whether the key with 64-bit hash `hash` may be in the set; `true`
    /// for every key of a damaged shard.
    #[inline]
    pub fn contains_hash(&self, hash: u64) -> bool {
        self.try_contains_hash(hash).unwrap_or(true)
    }

    /// [`contains`](Self::contains), or the error of the key's shard when
    /// its body checksum does not hold.
    #[inline]
    pub fn try_contains(&self, key: impl AsRef<[u8]>) -> Result<bool, Error> {
        self.try_contains_hash(get_slice_hash64(key.as_ref()))
    }

    /// [`contains_hash`](Self::contains_hash), or the error of the hash's
    /// shard ([`Error::Shard`]) when its body checksum does not hold,
    /// checked the first time the shard is used.
    #[inline]
    pub fn try_contains_hash(&self, hash: u64) -> Result<bool, Error> {
        // In range: shards has 2^shard_bits entries.
        let shard = self.checked_shard(shard_of(hash, self.header.shard_bits))?;
        Ok(shard.contains_hash(shard_hash(hash)))
    }

    /// [`contains_hash`](Self::contains_hash) for many hashes, in order.
    pub fn contains_many_hashes(&self, hashes: &[u64]) -> Vec<bool> {
        hashes.iter().map(|&h| self.contains_hash(h)).collect()
    }

    /// [`contains`](Self::contains) for many keys: one answer per key, in
    /// order.
    pub fn contains_many<K: AsRef<[u8]>>(&self, keys: &[K]) -> Vec<bool> {
        keys.iter().map(|k| self.contains(k)).collect()
    }

    /// [`contains_many`](Self::contains_many) into a buffer the caller
    /// owns, without allocating.
    ///
    /// # Panics
    /// When `out.len() != keys.len()`: every key gets exactly one answer.
    pub fn contains_many_into<K: AsRef<[u8]>>(&self, keys: &[K], out: &mut [bool]) {
        assert_eq!(keys.len(), out.len(), "one answer slot per key");
        for (o, k) in out.iter_mut().zip(keys) {
            *o = self.contains(k);
        }
    }

    /// `2^shard_bits` shards.
    pub fn shard_bits(&self) -> u32 {
        self.header.shard_bits
    }

    /// Number of shards.
    pub fn num_shards(&self) -> usize {
        self.shards.len()
    }

    /// Shard `i`, a standalone filter over [`super::shard_hash`]es.
    pub fn shard(&self, i: usize) -> Option<&RibbonRef<'a>> {
        self.shards.get(i)
    }

    /// Keys in all shards (duplicates included).
    pub fn num_keys(&self) -> u64 {
        self.header.num_keys
    }

    /// The container's length in bytes.
    pub fn file_len(&self) -> u64 {
        self.header.file_len
    }

    /// Bits of the whole file (headers, index, padding, checksums
    /// included) per key; not finite without keys.
    pub fn bits_per_key(&self) -> f64 {
        self.header.file_len as f64 * 8.0 / self.header.num_keys as f64
    }

    /// The FP rate a non-member key has: the shards' expected rates,
    /// weighted by the share of hashes each shard receives (all equal).
    pub fn expected_fp_rate(&self) -> f64 {
        let sum: f64 = self.shards.iter().map(RibbonRef::expected_fp_rate).sum();
        sum / self.shards.len() as f64
    }

    /// Measures the FP rate with `num_queries` pseudo-random 64-bit hashes
    /// from `seed`; NaN for no queries.
    pub fn measure_fp_rate(&self, num_queries: u64, seed: u64) -> f64 {
        let mut state = seed;
        let positives = (0..num_queries)
            .filter(|_| self.contains_hash(split_mix64(&mut state)))
            .count();
        positives as f64 / num_queries as f64
    }

    /// The whole file.
    pub fn as_bytes(&self) -> &'a [u8] {
        self.bytes
    }
}

/// The [`MayContain`] of a sharded container: [`ShardedRef::contains`]
/// (a damaged shard answers `true`).
impl MayContain for ShardedRef<'_> {
    #[inline]
    fn contains_key(&self, key: &[u8]) -> bool {
        self.contains(key)
    }

    fn contains_keys_into(&self, keys: &[&[u8]], out: &mut [bool]) {
        ShardedRef::contains_many_into(self, keys, out);
    }
}

impl core::fmt::Debug for ShardedRef<'_> {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.debug_struct("ShardedRef")
            .field("shard_bits", &self.header.shard_bits)
            .field("num_keys", &self.header.num_keys)
            .field("file_len", &self.header.file_len)
            .finish()
    }
}
