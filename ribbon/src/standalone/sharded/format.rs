//! The sharded container format, version 1.
//!
//! One file: a 64-byte header, an index with one entry per shard, then the
//! shards, each a complete standalone Ribbon filter file
//! ([`crate::standalone::file`], version 1 or 2), starting at a 64-byte
//! aligned offset. All integers are little-endian.
//!
//! ```text
//!   offset  size  field
//!        0     8  magic: 89 52 42 53 0D 0A 1A 0A  ("\x89RBS\r\n\x1a\n")
//!        8     2  format version: 1
//!       10     2  header length in bytes: 64
//!       12     1  shard bits b: 2^b shards, 0..=20; a key's shard is the top
//!                 b bits of its 64-bit key hash, and the shard holds the
//!                 key as `shard_hash` (murmur3's fmix64) of that hash
//!       13     1  key hash: 0 = RocksDB's GetSliceHash64 (XXPH3, seed 0)
//!       14     2  reserved: 0
//!       16     8  number of keys: the sum of the shards' key counts
//!       24     8  file length in bytes
//!       32     8  index checksum: hash64(index bytes, 0x5242_5349_4458_0001)
//!       40    16  reserved: 0
//!       56     8  header checksum: hash64(bytes[0..56], 0x5242_5348_4452_0001)
//!       64  16*2^b index: per shard, its offset (u64) and length (u64)
//!        …        zero padding to the first shard, at a multiple of 64
//!        …        the shards in order; after each, zero padding to the next
//!                 multiple of 64 (none after the last: the file ends there)
//! ```
//!
//! Every byte is covered by a checksum: the header's, the index's, or the
//! header and body checksums of the shard it belongs to; padding must be
//! zero ([`super::ShardedRef::verify`] reads it all). A reader rejects any
//! other version, a bad checksum, a length other than the recorded one and
//! any inconsistent field with an [`Error`]; it never panics.
//!
//! # Shard files
//!
//! A shard built apart from the others (one job of a batch runner,
//! [`super::build_shard_file`]) travels to the assembly as a *shard file*:
//! a 64-byte header that says which shard of which container it is, then
//! the shard's standalone file. In the container a shard's index is its
//! position, so the assembly ([`super::assemble`],
//! [`super::ShardEntry::of_file`]) checks that shard file `i` says it is
//! shard `i` of `2^b` shards with the container's key hash and version
//! before it takes its standalone bytes; a shard of another position or
//! of a container with other shard bits would answer "no" for its keys.
//!
//! ```text
//!   offset  size  field
//!        0     8  magic: 89 52 42 50 0D 0A 1A 0A  ("\x89RBP\r\n\x1a\n")
//!        8     2  shard file version: 1
//!       10     2  header length in bytes: 64
//!       12     1  shard bits b of the container
//!       13     1  key hash: 0 = RocksDB's GetSliceHash64 (as the container)
//!       14     2  container format version the shard is for: 1
//!       16     8  shard index, below 2^b
//!       24     8  length L of the standalone file that follows
//!       32     8  number of keys (the standalone header's)
//!       40    16  reserved: 0
//!       56     8  header checksum: hash64(bytes[0..56], 0x5242_5350_4152_0001)
//!       64     L  the shard: a standalone filter file (its own checksums)
//! ```

use crate::core::hash::hash64;
use crate::core::prelude::*;
use crate::standalone;
use core::fmt;

/// The file's first 8 bytes.
pub const MAGIC: [u8; 8] = *b"\x89RBS\r\n\x1a\n";
/// The format version this crate reads and writes.
pub const VERSION: u16 = 1;
/// Bytes before the index.
pub const HEADER_LEN: usize = 64;
/// Bytes per index entry.
pub const INDEX_ENTRY_LEN: usize = 16;
/// Shards start at multiples of this many bytes.
pub const SHARD_ALIGN: u64 = 64;
/// The most shard bits (a million shards).
pub const MAX_SHARD_BITS: u32 = 20;
/// The key hash code of RocksDB's `GetSliceHash64`.
pub const KEY_HASH_ROCKSDB: u8 = 0;
const HEADER_CHECKSUM_SEED: u64 = 0x5242_5348_4452_0001;
const INDEX_CHECKSUM_SEED: u64 = 0x5242_5349_4458_0001;
/// A shard file's first 8 bytes.
pub const SHARD_FILE_MAGIC: [u8; 8] = *b"\x89RBP\r\n\x1a\n";
/// The shard file version this crate reads and writes.
pub const SHARD_FILE_VERSION: u16 = 1;
/// Bytes before a shard file's standalone filter.
pub const SHARD_FILE_HEADER_LEN: usize = 64;
const SHARD_FILE_CHECKSUM_SEED: u64 = 0x5242_5350_4152_0001;
/// The fewest bytes of a standalone filter file (a version 1 header and
/// the body checksum): every shard in a container takes at least these.
pub const MIN_SHARD_LEN: u64 = (standalone::file::HEADER_LEN + standalone::file::CHECKSUM_LEN) as u64;

/// Whether `bytes` start with the sharded container's magic.
#[must_use]
pub fn has_magic(bytes: &[u8]) -> bool {
    bytes.starts_with(&MAGIC)
}

/// Everything that can go wrong assembling or loading a sharded file.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub enum Error {
    /// The bytes do not start with the container's magic.
    BadMagic,
    /// A container of another format version.
    UnsupportedVersion(u16),
    /// Fewer bytes than the header, the index or the recorded length need.
    Truncated {
        /// Bytes needed.
        needed: u64,
        /// Bytes given.
        got: u64,
    },
    /// The header checksum does not match.
    HeaderChecksumMismatch,
    /// The index checksum does not match.
    IndexChecksumMismatch,
    /// A field or the layout is inconsistent.
    Corrupt(String),
    /// Shard bits above [`MAX_SHARD_BITS`], or a shard count that is not
    /// `2^shard_bits`.
    InvalidShards(String),
    /// A hash given to [`super::build_shard`] belongs to another shard.
    HashNotInShard {
        /// The shard being built.
        shard: usize,
        /// The hash.
        hash: u64,
    },
    /// A shard file that says it is another shard than the one expected
    /// at its position, or a shard of a container with other parameters.
    WrongShard {
        /// The position it was given for.
        expected: usize,
        /// What it is.
        what: String,
    },
    /// A shard's own bytes are not a valid standalone filter, or it could
    /// not be built.
    Shard {
        /// The shard's index.
        shard: usize,
        /// What is wrong with it.
        error: standalone::Error,
    },
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Error::BadMagic => f.write_str("not a sharded Ribbon file (bad magic)"),
            Error::UnsupportedVersion(v) => write!(f, "unsupported sharded format version {v}"),
            Error::Truncated { needed, got } => {
                write!(f, "truncated: {got} bytes, {needed} needed")
            }
            Error::HeaderChecksumMismatch => f.write_str("header checksum mismatch"),
            Error::IndexChecksumMismatch => f.write_str("index checksum mismatch"),
            Error::Corrupt(what) => write!(f, "corrupt: {what}"),
            Error::InvalidShards(what) => write!(f, "invalid shards: {what}"),
            Error::HashNotInShard { shard, hash } => {
                write!(f, "hash {hash:#018x} does not belong to shard {shard}")
            }
            Error::WrongShard { expected, what } => {
                write!(f, "given as shard {expected}, but it is {what}")
            }
            Error::Shard { shard, error } => write!(f, "shard {shard}: {error}"),
        }
    }
}

impl core::error::Error for Error {}

/// The header's fields.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Header {
    pub(crate) shard_bits: u32,
    pub(crate) num_keys: u64,
    pub(crate) file_len: u64,
    pub(crate) index_checksum: u64,
}

impl Header {
    /// Number of shards.
    pub(crate) fn num_shards(&self) -> usize {
        1usize << self.shard_bits
    }

    /// Bytes of the index.
    pub(crate) fn index_len(&self) -> usize {
        self.num_shards() * INDEX_ENTRY_LEN
    }

    /// The header's 64 bytes.
    pub(crate) fn encode(&self) -> [u8; HEADER_LEN] {
        let mut h = [0u8; HEADER_LEN];
        h[0..8].copy_from_slice(&MAGIC);
        h[8..10].copy_from_slice(&VERSION.to_le_bytes());
        h[10..12].copy_from_slice(&(HEADER_LEN as u16).to_le_bytes());
        h[12] = self.shard_bits as u8;
        h[13] = KEY_HASH_ROCKSDB;
        h[16..24].copy_from_slice(&self.num_keys.to_le_bytes());
        h[24..32].copy_from_slice(&self.file_len.to_le_bytes());
        h[32..40].copy_from_slice(&self.index_checksum.to_le_bytes());
        let sum = hash64(&h[0..56], HEADER_CHECKSUM_SEED);
        h[56..64].copy_from_slice(&sum.to_le_bytes());
        h
    }

    /// Decodes and checks the header at the start of `bytes`.
    pub(crate) fn decode(bytes: &[u8]) -> Result<Self, Error> {
        if !has_magic(bytes) {
            return Err(Error::BadMagic);
        }
        let h = bytes.get(..HEADER_LEN).ok_or(Error::Truncated {
            needed: HEADER_LEN as u64,
            got: bytes.len() as u64,
        })?;
        let u16_at = |i: usize| u16::from_le_bytes([h[i], h[i + 1]]);
        let u64_at = |i: usize| u64::from_le_bytes(h[i..i + 8].try_into().unwrap_or([0; 8]));
        let version = u16_at(8);
        if version != VERSION {
            return Err(Error::UnsupportedVersion(version));
        }
        if u64_at(56) != hash64(&h[0..56], HEADER_CHECKSUM_SEED) {
            return Err(Error::HeaderChecksumMismatch);
        }
        if usize::from(u16_at(10)) != HEADER_LEN {
            return Err(Error::Corrupt(format!("header length {}", u16_at(10))));
        }
        let shard_bits = u32::from(h[12]);
        if shard_bits > MAX_SHARD_BITS {
            return Err(Error::Corrupt(format!("{shard_bits} shard bits")));
        }
        if h[13] != KEY_HASH_ROCKSDB {
            return Err(Error::Corrupt(format!("unknown key hash {}", h[13])));
        }
        if h[14..16].iter().chain(&h[40..56]).any(|&b| b != 0) {
            return Err(Error::Corrupt("reserved bytes are not zero".into()));
        }
        Ok(Header {
            shard_bits,
            num_keys: u64_at(16),
            file_len: u64_at(24),
            index_checksum: u64_at(32),
        })
    }
}

/// The checksum of the index bytes.
pub(crate) fn index_checksum(index: &[u8]) -> u64 {
    hash64(index, INDEX_CHECKSUM_SEED)
}

/// The offset of the first shard.
pub(crate) fn first_shard_offset(shard_bits: u32) -> u64 {
    ((HEADER_LEN + (INDEX_ENTRY_LEN << shard_bits)) as u64).next_multiple_of(SHARD_ALIGN)
}

/// A shard file's header, decoded: which shard of which container the
/// standalone bytes that follow it are.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ShardFileHeader {
    /// The container's shard bits.
    pub shard_bits: u32,
    /// The shard's index, below `2^shard_bits`.
    pub index: u64,
    /// Keys the shard was built from.
    pub num_keys: u64,
    /// Bytes of the standalone file after the header.
    pub shard_len: u64,
}

impl ShardFileHeader {
    /// The header's 64 bytes.
    #[must_use]
    pub fn encode(&self) -> [u8; SHARD_FILE_HEADER_LEN] {
        let mut h = [0u8; SHARD_FILE_HEADER_LEN];
        h[0..8].copy_from_slice(&SHARD_FILE_MAGIC);
        h[8..10].copy_from_slice(&SHARD_FILE_VERSION.to_le_bytes());
        h[10..12].copy_from_slice(&(SHARD_FILE_HEADER_LEN as u16).to_le_bytes());
        h[12] = self.shard_bits as u8;
        h[13] = KEY_HASH_ROCKSDB;
        h[14..16].copy_from_slice(&VERSION.to_le_bytes());
        h[16..24].copy_from_slice(&self.index.to_le_bytes());
        h[24..32].copy_from_slice(&self.shard_len.to_le_bytes());
        h[32..40].copy_from_slice(&self.num_keys.to_le_bytes());
        let sum = hash64(&h[0..56], SHARD_FILE_CHECKSUM_SEED);
        h[56..64].copy_from_slice(&sum.to_le_bytes());
        h
    }

    /// Decodes and checks the header of the shard file `bytes` and that the
    /// file is as long as it says; returns it and the standalone bytes
    /// (not yet verified: [`super::ShardEntry::of_file`] does).
    ///
    /// Errors: [`Error::BadMagic`] (a bare standalone file included: shards
    /// from before shard files existed must be rebuilt),
    /// [`Error::UnsupportedVersion`], [`Error::Truncated`],
    /// [`Error::HeaderChecksumMismatch`], [`Error::Corrupt`].
    pub fn decode(bytes: &[u8]) -> Result<(Self, &[u8]), Error> {
        if !bytes.starts_with(&SHARD_FILE_MAGIC) {
            return Err(Error::BadMagic);
        }
        let h = bytes.get(..SHARD_FILE_HEADER_LEN).ok_or(Error::Truncated {
            needed: SHARD_FILE_HEADER_LEN as u64,
            got: bytes.len() as u64,
        })?;
        let u16_at = |i: usize| u16::from_le_bytes([h[i], h[i + 1]]);
        let u64_at = |i: usize| u64::from_le_bytes(h[i..i + 8].try_into().unwrap_or([0; 8]));
        if u16_at(8) != SHARD_FILE_VERSION {
            return Err(Error::UnsupportedVersion(u16_at(8)));
        }
        if u64_at(56) != hash64(&h[0..56], SHARD_FILE_CHECKSUM_SEED) {
            return Err(Error::HeaderChecksumMismatch);
        }
        if usize::from(u16_at(10)) != SHARD_FILE_HEADER_LEN {
            return Err(Error::Corrupt(format!("shard file header length {}", u16_at(10))));
        }
        if h[40..56].iter().any(|&b| b != 0) {
            return Err(Error::Corrupt("reserved bytes are not zero".into()));
        }
        if u16_at(14) != VERSION {
            return Err(Error::Corrupt(format!(
                "a shard for container format version {}, not {VERSION}",
                u16_at(14)
            )));
        }
        if h[13] != KEY_HASH_ROCKSDB {
            return Err(Error::Corrupt(format!("unknown key hash {}", h[13])));
        }
        let shard_bits = u32::from(h[12]);
        if shard_bits > MAX_SHARD_BITS {
            return Err(Error::Corrupt(format!("{shard_bits} shard bits")));
        }
        let header = Self {
            shard_bits,
            index: u64_at(16),
            shard_len: u64_at(24),
            num_keys: u64_at(32),
        };
        if header.index >> shard_bits != 0 {
            return Err(Error::Corrupt(format!(
                "shard {} of {} shards",
                header.index,
                1u64 << shard_bits
            )));
        }
        let body = &bytes[SHARD_FILE_HEADER_LEN..];
        if (body.len() as u64) != header.shard_len {
            let needed = (SHARD_FILE_HEADER_LEN as u64).saturating_add(header.shard_len);
            return Err(if (body.len() as u64) < header.shard_len {
                Error::Truncated {
                    needed,
                    got: bytes.len() as u64,
                }
            } else {
                Error::Corrupt(format!(
                    "{} bytes, the shard file header records {needed}",
                    bytes.len()
                ))
            });
        }
        Ok((header, body))
    }
}
