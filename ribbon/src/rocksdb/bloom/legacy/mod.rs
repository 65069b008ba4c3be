// Ported from RocksDB 11.8.1: util/bloom_impl.h (LegacyLocalityBloomImpl<false>, LegacyNoLocalityBloomImpl::ChooseNumProbes), table/block_based/filter_policy.cc (LegacyBloomBitsBuilder, LegacyBloomBitsReader, GetBuiltinFilterBitsReader).

//! The legacy full-filter Bloom format RocksDB writes for
//! `format_version < 5`.
//!
//! # Layout
//!
//! `num_lines` cache lines of 64 bytes (`num_lines` odd when built), then the
//! 5-byte trailer: `num_probes` (one byte, 1..=30 when built) and
//! `num_lines` as a little-endian `u32`. Readers also accept other
//! power-of-two line sizes (filters written on machines with 128- or
//! 256-byte cache lines): the line size is `len / num_lines`.
//!
//! # Probing
//!
//! A key's 32-bit `BloomHash` `h` selects line `h % num_lines`; then
//! `num_probes` times: bit `h & (line_bits - 1)` of the line is set/tested
//! (bit `p` is bit `p % 8` of byte `p / 8`) and `h += rotr(h, 17)` (the
//! delta is computed once from the original hash; arithmetic mod 2^32).
//!
//! # Sizing
//!
//! `bits_per_key` is a whole number (RocksDB's `(millibits + 500) / 1000`).
//! Total bits are `min(n * bits_per_key, 0xffff0000)`, rounded up to whole
//! 512-bit lines, plus one line if that count is even.
//! `num_probes = clamp(floor(bits_per_key * 0.69), 1, 30)`.
//!
//! This crate builds with RocksDB's x86-64 cache line size, 64 bytes
//! (RocksDB on aarch64/ppc64 builds 128-byte lines, on s390x 256); see
//! [`LegacyBloomBuilder::build_with_log2_cache_line`] for those.
//!
//! # Files
//!
//! `probe` holds the probing primitives ([`LegacyLocalityBloomImpl`]),
//! `builder` the sizing and construction, `reader` the queries, and
//! `trailer` the trailer's bytes.

mod builder;
mod probe;
mod reader;
mod trailer;

pub use builder::{approximate_num_entries, build, calculate_space, estimated_fp_rate, LegacyBloomBuilder};
pub use probe::{choose_num_probes, LegacyLocalityBloomImpl, CACHE_LINE_BYTES, LOG2_CACHE_LINE_BYTES};
pub use reader::LegacyBloomReader;
pub use trailer::parse_trailer;
