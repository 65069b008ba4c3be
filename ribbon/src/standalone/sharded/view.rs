//! Queries over a sharded container's bytes, zero-copy.

use super::format::{first_shard_offset, index_checksum, Error, Header, HEADER_LEN, SHARD_ALIGN};
use super::{shard_hash, shard_of};
use crate::core::hash::{get_slice_hash64, split_mix64};
use crate::standalone::RibbonRef;

/// A sharded filter borrowed from the bytes of a container file (for
/// example a memory map), without copying them.
///
/// The view holds each shard's decoded header (a few hundred bytes per
/// shard), so a query hashes the key, picks the shard and reads only that
/// shard's solution bytes.
#[derive(Clone)]
pub struct ShardedRef<'a> {
    header: Header,
    bytes: &'a [u8],
    shards: Vec<RibbonRef<'a>>,
}

impl<'a> ShardedRef<'a> {
    /// Borrows a container from `bytes`, checking the header, the index
    /// (checksum, offsets, lengths), each shard's header and the key
    /// counts. The shards' bodies are not read (so a mapped file opens in
    /// time proportional to its shard count, not its size): call
    /// [`verify`](Self::verify) to check every byte.
    ///
    /// Errors: [`Error::BadMagic`], [`Error::UnsupportedVersion`],
    /// [`Error::Truncated`], [`Error::HeaderChecksumMismatch`],
    /// [`Error::IndexChecksumMismatch`], [`Error::Corrupt`] or
    /// [`Error::Shard`].
    pub fn from_bytes(bytes: &'a [u8]) -> Result<Self, Error> {
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
        let mut shards = Vec::with_capacity(header.num_shards());
        let mut expected = first;
        let mut num_keys = 0u64;
        for (i, entry) in index.chunks_exact(16).enumerate() {
            let offset = u64::from_le_bytes(entry[..8].try_into().unwrap_or([0; 8]));
            let shard_len = u64::from_le_bytes(entry[8..].try_into().unwrap_or([0; 8]));
            if offset != expected {
                return Err(Error::Corrupt(format!(
                    "shard {i} at offset {offset}, expected {expected}"
                )));
            }
            let end = offset
                .checked_add(shard_len)
                .filter(|&e| e <= len)
                .ok_or_else(|| Error::Corrupt(format!("shard {i} ends past the file")))?;
            let shard = RibbonRef::from_bytes_unverified(&bytes[offset as usize..end as usize])
                .map_err(|error| Error::Shard { shard: i, error })?;
            num_keys = num_keys.saturating_add(shard.num_keys());
            shards.push(shard);
            expected = end.next_multiple_of(SHARD_ALIGN);
            if i + 1 == header.num_shards() && end != len {
                return Err(Error::Corrupt(format!(
                    "{} bytes after the last shard",
                    len - end
                )));
            }
        }
        if num_keys != header.num_keys {
            return Err(Error::Corrupt(format!(
                "the shards hold {num_keys} keys, the header records {}",
                header.num_keys
            )));
        }
        Ok(Self {
            header,
            bytes,
            shards,
        })
    }

    /// Reads every byte: each shard's body checksum and that all padding
    /// is zero. Errors: [`Error::Shard`] or [`Error::Corrupt`].
    pub fn verify(&self) -> Result<(), Error> {
        let mut at = HEADER_LEN + self.header.index_len();
        for (i, shard) in self.shards.iter().enumerate() {
            let start = shard.as_bytes().as_ptr() as usize - self.bytes.as_ptr() as usize;
            if self.bytes[at..start].iter().any(|&b| b != 0) {
                return Err(Error::Corrupt(format!("padding before shard {i} is not zero")));
            }
            RibbonRef::from_bytes(shard.as_bytes()).map_err(|error| Error::Shard { shard: i, error })?;
            at = start + shard.as_bytes().len();
        }
        Ok(())
    }

    /// Whether `key` may be in the set: always for a key the filter was
    /// built from; for others, about the shards' FP rate.
    #[inline]
    pub fn contains(&self, key: impl AsRef<[u8]>) -> bool {
        self.contains_hash(get_slice_hash64(key.as_ref()))
    }

    /// Whether the key with 64-bit hash `hash` may be in the set.
    #[inline]
    pub fn contains_hash(&self, hash: u64) -> bool {
        // The index is in range: shards has 2^shard_bits entries.
        self.shards[shard_of(hash, self.header.shard_bits)].contains_hash(shard_hash(hash))
    }

    /// [`contains_hash`](Self::contains_hash) for many hashes, in order.
    pub fn contains_many_hashes(&self, hashes: &[u64]) -> Vec<bool> {
        hashes.iter().map(|&h| self.contains_hash(h)).collect()
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

impl core::fmt::Debug for ShardedRef<'_> {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.debug_struct("ShardedRef")
            .field("shard_bits", &self.header.shard_bits)
            .field("num_keys", &self.header.num_keys)
            .field("file_len", &self.header.file_len)
            .finish()
    }
}
