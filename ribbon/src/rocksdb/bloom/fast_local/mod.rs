// Ported from RocksDB 11.8.1: util/bloom_impl.h (FastLocalBloomImpl), table/block_based/filter_policy.cc (FastLocalBloomBitsBuilder, FastLocalBloomBitsReader, GetBloomBitsReader).

//! FastLocalBloom: the cache-local Bloom filter RocksDB writes for
//! `format_version >= 5` (and as the Ribbon builder's fallback).
//!
//! # Layout
//!
//! `len` bytes of filter data (a multiple of 64 when built by RocksDB)
//! followed by the 5-byte trailer `[0xFF, 0x00, num_probes, 0x00, 0x00]`
//! (written and parsed in [`trailer`](self::parse_trailer)'s module only).
//!
//! # Probing
//!
//! A key's 64-bit hash `h` (RocksDB's `GetSliceHash64`) is split into
//! `h1 = lower32(h)` and `h2 = upper32(h)`. `h1` selects the 64-byte cache
//! line `fast_range32(h1, len / 64)`; `h2` generates `num_probes` bit
//! positions in that 512-bit line: the top 9 bits of `h2`, `h2 * 0x9e3779b9`,
//! `h2 * 0x9e3779b9^2`, ... (all mod 2^32). Bit `p` of a line is bit `p % 8`
//! of byte `p / 8`.
//!
//! # Sizing
//!
//! [`calculate_space`] rounds `ceil(n * millibits_per_key / 8000)` bytes up
//! to a multiple of 64, capped at `0xffffffc0`, plus the trailer. RocksDB's
//! `optimize_filters_for_memory` size rounding depends on
//! `malloc_usable_size`, which the RocksDB build this crate reproduces does
//! not enable (`ROCKSDB_MALLOC_USABLE_SIZE` undefined), so sizes are never
//! rounded that way here. The option still changes how `num_probes` is
//! chosen; see [`FastLocalBloomBuilder::with_optimize_filters_for_memory`].

//!
//! # Files
//!
//! `probe` holds the probing primitives ([`FastLocalBloomImpl`]), `builder`
//! the sizing and construction, `reader` the queries, and `trailer` the
//! trailer's bytes. The cache-line check itself, portable and AVX2, is in
//! `crate::core::arch`.

mod builder;
mod probe;
mod reader;
mod trailer;

pub use builder::{
    approximate_num_entries, build, calculate_space, estimated_fp_rate, FastLocalBloomBuilder,
};
pub use probe::FastLocalBloomImpl;
pub use reader::FastLocalBloomReader;
pub use trailer::parse_trailer;

pub use crate::core::arch::BloomKernel;
pub use crate::rocksdb::trailer::NEWER_BLOOM_MARKER;

/// Size of a FastLocalBloom cache line, in bytes: every key's probes stay
/// inside one line.
pub const CACHE_LINE_BYTES: usize = crate::core::arch::BLOOM_LINE_BYTES;

/// Second trailer byte identifying the FastLocalBloom sub-implementation.
pub const FAST_LOCAL_SUB_IMPL: u8 = 0;

/// Largest filter data length (without trailer) RocksDB builds.
pub const MAX_DATA_LEN: usize = 0xffff_ffc0;
