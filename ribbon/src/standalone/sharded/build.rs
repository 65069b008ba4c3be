//! Building shards and assembling them into one container file.

use super::format::{
    first_shard_offset, index_checksum, Error, Header, ShardFileHeader, MIN_SHARD_LEN, SHARD_ALIGN,
};
use super::{shard_hash, shard_of, MAX_SHARD_BITS};
use crate::core::prelude::*;
use crate::standalone::{Config, Ribbon, RibbonRef};

/// Builds shard `shard` of `2^shard_bits` from the 64-bit key hashes that
/// belong to it (any order; duplicates allowed): a standalone filter of
/// their [`shard_hash`]es. The bytes depend only on the hashes and their
/// order, never on the thread or machine that builds them.
///
/// Errors: [`Error::InvalidShards`] for `shard_bits` above
/// [`MAX_SHARD_BITS`] or `shard` out of range, [`Error::HashNotInShard`]
/// when a hash belongs elsewhere (the key would be a false negative),
/// [`Error::Shard`] when the standalone construction fails.
pub fn build_shard(hashes: &[u64], shard: usize, shard_bits: u32, config: &Config) -> Result<Ribbon, Error> {
    check_shard_bits(shard_bits)?;
    if shard >> shard_bits != 0 {
        return Err(Error::InvalidShards(format!(
            "shard {shard} of {} shards",
            1u64 << shard_bits
        )));
    }
    let mut mixed = Vec::with_capacity(hashes.len());
    for &h in hashes {
        if shard_of(h, shard_bits) != shard {
            return Err(Error::HashNotInShard { shard, hash: h });
        }
        mixed.push(shard_hash(h));
    }
    Ribbon::from_hashes(&mixed, config).map_err(|error| Error::Shard { shard, error })
}

/// [`build_shard`], as a [shard file](super::format#shard-files): the
/// shard's bytes after a header that records `shard` and `shard_bits`, so
/// that [`assemble`] can refuse it at any other position or in a container
/// with other shard bits. Errors: as [`build_shard`].
pub fn build_shard_file(
    hashes: &[u64],
    shard: usize,
    shard_bits: u32,
    config: &Config,
) -> Result<Vec<u8>, Error> {
    let filter = build_shard(hashes, shard, shard_bits, config)?;
    Ok(shard_file(shard, shard_bits, filter.as_bytes()))
}

/// The [shard file](super::format#shard-files) of shard `shard` of
/// `2^shard_bits`, whose standalone bytes are `shard_bytes` (the caller
/// vouches that they were built for that shard, as [`build_shard`] does).
#[must_use]
pub fn shard_file(shard: usize, shard_bits: u32, shard_bytes: &[u8]) -> Vec<u8> {
    let num_keys = RibbonRef::from_bytes_unverified(shard_bytes).map_or(0, |r| r.num_keys());
    let header = ShardFileHeader {
        shard_bits,
        index: shard as u64,
        num_keys,
        shard_len: shard_bytes.len() as u64,
    };
    let mut out = Vec::with_capacity(header.encode().len() + shard_bytes.len());
    out.extend_from_slice(&header.encode());
    out.extend_from_slice(shard_bytes);
    out
}

fn check_shard_bits(shard_bits: u32) -> Result<(), Error> {
    if shard_bits > MAX_SHARD_BITS {
        return Err(Error::InvalidShards(format!(
            "{shard_bits} shard bits, at most {MAX_SHARD_BITS}"
        )));
    }
    Ok(())
}

fn check_count(shard_bits: u32, n: usize) -> Result<(), Error> {
    if n != 1usize << shard_bits {
        return Err(Error::InvalidShards(format!(
            "{n} shards given for {shard_bits} shard bits ({} expected)",
            1u64 << shard_bits
        )));
    }
    Ok(())
}

/// What the container records about one shard: its length and key count.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ShardEntry {
    /// The shard file's length in bytes.
    pub len: u64,
    /// Keys the shard was built from.
    pub num_keys: u64,
}

impl ShardEntry {
    /// Describes shard `shard` of `2^shard_bits` from its [shard
    /// file](super::format#shard-files), after checking that the file says
    /// it is that shard of a container with these shard bits and verifying
    /// the standalone bytes completely (checksums included). Returns the
    /// entry and the standalone bytes, which are what the container holds.
    ///
    /// Errors: the shard file header's ([`ShardFileHeader::decode`]),
    /// [`Error::WrongShard`] for another index or other shard bits, and the
    /// standalone loader's as [`Error::Shard`].
    pub fn of_file(shard: usize, shard_bits: u32, file: &[u8]) -> Result<(Self, &[u8]), Error> {
        let (header, bytes) = ShardFileHeader::decode(file)?;
        if header.shard_bits != shard_bits || header.index != shard as u64 {
            return Err(Error::WrongShard {
                expected: shard,
                what: format!(
                    "shard {} of {} (shard bits {}), not of {} (shard bits {shard_bits})",
                    header.index,
                    1u64 << header.shard_bits,
                    header.shard_bits,
                    1u64 << shard_bits
                ),
            });
        }
        let entry = Self::of(shard, bytes)?;
        if entry.num_keys != header.num_keys {
            return Err(Error::Corrupt(format!(
                "shard {shard} holds {} keys, its shard file header records {}",
                entry.num_keys, header.num_keys
            )));
        }
        Ok((entry, bytes))
    }

    /// Describes a shard from its bytes (a standalone filter file), after
    /// verifying them completely (checksums included). A standalone file
    /// does not say which shard it is: the caller vouches for its position
    /// (prefer [`ShardEntry::of_file`]).
    ///
    /// Errors: the standalone loader's, as [`Error::Shard`] with `shard`.
    pub fn of(shard: usize, bytes: &[u8]) -> Result<Self, Error> {
        let filter = RibbonRef::from_bytes(bytes).map_err(|error| Error::Shard { shard, error })?;
        Ok(Self {
            len: bytes.len() as u64,
            num_keys: filter.num_keys(),
        })
    }
}

/// Where every shard goes in the container, and its head (header, index,
/// padding): write [`head`](Self::head), then each shard `i` in order
/// followed by [`padding_after(i)`](Self::padding_after) zero bytes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Layout {
    shard_bits: u32,
    entries: Vec<ShardEntry>,
    offsets: Vec<u64>,
    file_len: u64,
    num_keys: u64,
}

impl Layout {
    /// Lays out `2^shard_bits` shards described by `entries` (in shard
    /// order).
    ///
    /// Errors: [`Error::InvalidShards`] for too many shard bits or a count
    /// of entries other than `2^shard_bits`; [`Error::Corrupt`] for a
    /// shard too short to be a standalone file.
    pub fn new(shard_bits: u32, entries: &[ShardEntry]) -> Result<Self, Error> {
        check_shard_bits(shard_bits)?;
        check_count(shard_bits, entries.len())?;
        let mut offsets = Vec::with_capacity(entries.len());
        let mut at = first_shard_offset(shard_bits);
        let mut num_keys = 0u64;
        for (i, e) in entries.iter().enumerate() {
            if e.len < MIN_SHARD_LEN {
                return Err(Error::Corrupt(format!("shard {i} is {} bytes", e.len)));
            }
            at = at.next_multiple_of(SHARD_ALIGN);
            offsets.push(at);
            at += e.len;
            num_keys += e.num_keys;
        }
        Ok(Self {
            shard_bits,
            entries: entries.to_vec(),
            offsets,
            file_len: at,
            num_keys,
        })
    }

    /// The container's length in bytes.
    #[must_use]
    pub fn file_len(&self) -> u64 {
        self.file_len
    }

    /// Keys in all shards.
    #[must_use]
    pub fn num_keys(&self) -> u64 {
        self.num_keys
    }

    /// The offset of shard `i`.
    #[must_use]
    pub fn offset(&self, i: usize) -> u64 {
        self.offsets[i]
    }

    /// The header, the index and the padding before the first shard.
    #[must_use]
    pub fn head(&self) -> Vec<u8> {
        let mut index = Vec::with_capacity(self.entries.len() * 16);
        for (e, off) in self.entries.iter().zip(&self.offsets) {
            index.extend_from_slice(&off.to_le_bytes());
            index.extend_from_slice(&e.len.to_le_bytes());
        }
        let header = Header {
            shard_bits: self.shard_bits,
            num_keys: self.num_keys,
            file_len: self.file_len,
            index_checksum: index_checksum(&index),
        };
        let mut head = header.encode().to_vec();
        head.extend_from_slice(&index);
        head.resize(self.offsets[0] as usize, 0);
        head
    }

    /// Zero bytes to write after shard `i` (none after the last).
    #[must_use]
    pub fn padding_after(&self, i: usize) -> usize {
        match self.offsets.get(i + 1) {
            Some(&next) => (next - self.offsets[i] - self.entries[i].len) as usize,
            None => 0,
        }
    }
}

/// Assembles shards ([shard files](super::format#shard-files) from
/// [`build_shard_file`], shard `i` at index `i`, all `2^shard_bits` of
/// them) into one container, in memory. Each shard file is checked to be
/// shard `i` of `2^shard_bits` and verified first.
///
/// Errors: as [`ShardEntry::of_file`] and [`Layout::new`].
pub fn assemble(shard_bits: u32, shard_files: &[&[u8]]) -> Result<Vec<u8>, Error> {
    check_shard_bits(shard_bits)?;
    check_count(shard_bits, shard_files.len())?;
    let (entries, shards): (Vec<ShardEntry>, Vec<&[u8]>) = shard_files
        .iter()
        .enumerate()
        .map(|(i, s)| ShardEntry::of_file(i, shard_bits, s))
        .collect::<Result<Vec<_>, _>>()?
        .into_iter()
        .unzip();
    let layout = Layout::new(shard_bits, &entries)?;
    let mut out = layout.head();
    out.reserve(layout.file_len() as usize - out.len());
    for (i, s) in shards.iter().enumerate() {
        out.extend_from_slice(s);
        out.resize(out.len() + layout.padding_after(i), 0);
    }
    Ok(out)
}
