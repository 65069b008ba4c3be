//! The same keys in RocksDB's Standard128 Ribbon format, for the page's
//! layout view: the filter bytes `ribbon::rocksdb::standard128::build` writes and,
//! for each key, where its query reads (`InterleavedLayout::prepare_query`)
//! and the reader's answer.
//!
//! RocksDB itself writes a Bloom filter instead below 1024 slots when that
//! is smaller (it is, for a few dozen keys); the view builds the Ribbon
//! filter regardless, so that its interleaved column-major layout (blocks of
//! 128 slots, one 16-byte segment per result column) can be drawn small.

use crate::error::Error;
use ribbon::core::hasher::Hasher;
use ribbon::rocksdb::policy::BitsPerKey;
use ribbon::rocksdb::standard128::{self, Standard128};
use ribbon::rocksdb::trailer::Parsed;
use serde::Serialize;

/// Bits per key of the drawn filter, as `ribbonfilter:10`.
pub const BITS_PER_KEY: f64 = 10.0;

/// The Standard128 view.
#[derive(Debug, Serialize)]
pub struct IcmlView {
    /// Bits per key asked for.
    pub bits_per_key: f64,
    /// RocksDB's FP-rate target for it: one in this many.
    pub desired_one_in_fp_rate: f64,
    /// Slots, `num_blocks * 128`.
    pub num_slots: u32,
    /// Ribbon blocks of 128 slots.
    pub num_blocks: u32,
    /// Valid starts, `num_slots - 127`.
    pub num_starts: u32,
    /// 16-byte segments stored.
    pub num_segments: u32,
    /// Result columns of the upper blocks (lower ones have one fewer).
    pub upper_num_columns: u32,
    /// First block with `upper_num_columns` columns.
    pub upper_start_block: u32,
    /// The ordinal seed that banded.
    pub seed: u32,
    /// Its raw seed (what the rehash XORs in).
    pub raw_seed: u32,
    /// Distinct keys in the filter.
    pub num_keys: u32,
    /// Bytes of the filter block, trailer included.
    pub bytes: u32,
    /// `8 * bytes / num_keys`: what the filter really spends per key.
    pub real_bits_per_key: f64,
    /// The crate's estimate of this filter's FP rate
    /// (`standard128::estimated_fp_rate`, RocksDB's `EstimatedFpRate`): one in
    /// this many.
    pub estimated_one_in_fp_rate: f64,
    /// Slots RocksDB's slot table asks for these keys before rounding up to
    /// whole blocks (at least two blocks).
    pub table_slots: u32,
    /// The whole filter block, hex: solution then the 5-byte trailer.
    pub filter_hex: String,
    /// Per key, in key order: where its query reads and the answer.
    pub keys: Vec<IcmlKey>,
}

/// Where one key's query reads.
#[derive(Debug, Serialize)]
pub struct IcmlKey {
    /// Start slot.
    pub start: u32,
    /// First segment read.
    pub segment: u32,
    /// Result columns at its block.
    pub num_columns: u32,
    /// Offset of the start in its block (0: one segment per column, else two).
    pub start_bit: u32,
    /// The reader's answer (always true: every key is a member).
    pub may_match: bool,
}

/// Builds the view for the 64-bit key hashes (RocksDB's `GetSliceHash64`).
pub fn view(key_hashes: &[u64]) -> Result<IcmlView, Error> {
    let desired_one_in_fp_rate = BitsPerKey::new(BITS_PER_KEY).desired_one_in_fp_rate();
    // The builder drops a key equal to the one before it.
    let mut hashes = key_hashes.to_vec();
    hashes.dedup();
    let num_keys = hashes.len() as u32;
    let filter = standard128::build(hashes, desired_one_in_fp_rate, |_| usize::MAX)
        .map_err(|_| Error::failed("no seed bands these keys into a Standard128 Ribbon filter"))?;
    let Parsed::Reader(reader) = standard128::parse_trailer(&filter) else {
        return Err(Error::failed("the Standard128 filter built does not read back"));
    };
    let layout = reader.layout();
    let millibits = BitsPerKey::new(BITS_PER_KEY).millibits_per_key();
    let estimated = standard128::estimated_fp_rate(num_keys as usize, filter.len(), |n, len| {
        ribbon::rocksdb::bloom::fast_local::estimated_fp_rate(n, len, millibits)
    });
    let hasher = Hasher::<Standard128>::with_ordinal_seed(reader.seed());
    let keys = key_hashes
        .iter()
        .map(|&k| {
            let site = layout.prepare_query(&hasher, hasher.hash(k));
            IcmlKey {
                start: hasher.start(hasher.hash(k), layout.num_starts()),
                segment: site.segment_num,
                num_columns: site.num_columns,
                start_bit: site.start_bit,
                may_match: reader.may_match_hash(k),
            }
        })
        .collect();
    Ok(IcmlView {
        bits_per_key: BITS_PER_KEY,
        desired_one_in_fp_rate,
        num_slots: layout.num_blocks() * 128,
        num_blocks: layout.num_blocks(),
        num_starts: layout.num_starts(),
        num_segments: layout.num_segments(),
        upper_num_columns: layout.upper_num_columns(),
        upper_start_block: layout.upper_start_block(),
        seed: reader.seed(),
        raw_seed: ribbon::core::hasher::raw_seed_from_ordinal(reader.seed()),
        num_keys,
        bytes: filter.len() as u32,
        real_bits_per_key: 8.0 * filter.len() as f64 / f64::from(num_keys),
        estimated_one_in_fp_rate: 1.0 / estimated,
        table_slots: standard128::BANDING.num_slots(num_keys),
        filter_hex: filter.iter().map(|b| format!("{b:02x}")).collect(),
        keys,
    })
}
