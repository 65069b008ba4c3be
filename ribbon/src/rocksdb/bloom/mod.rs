// Ported from RocksDB 11.8.1: util/bloom_impl.h, table/block_based/filter_policy.cc (Bloom parts).

//! RocksDB's two Bloom filter formats for block-based tables, bit for bit.
//!
//! * **FastLocalBloom** ([`fast_local`]), written when the table's
//!   `format_version >= 5` and the policy is a Bloom filter (and as the
//!   Ribbon builder's fallback). Keys are hashed with the 64-bit
//!   `GetSliceHash64` ([`crate::core::hash::get_slice_hash64`]); the low 32 bits
//!   pick a 64-byte cache line with `fast_range32`, the high 32 bits
//!   generate the bit positions inside the line by repeated multiplication with
//!   `0x9e3779b9`. The size is chosen from *milli*bits per key.
//! * **Legacy Bloom** ([`legacy`]), written when `format_version < 5`. Keys
//!   are hashed with the 32-bit `BloomHash` ([`crate::core::hash::bloom_hash`]);
//!   the hash modulo an odd number of 64-byte cache lines picks the line and
//!   double hashing (delta = hash rotated right by 17) picks up to 30 bits
//!   inside it. The size comes from *whole* bits per key
//!   (`(millibits + 500) / 1000`).
//!
//! Both formats end with the 5-byte trailer of every built-in filter
//! ([`crate::rocksdb::trailer`], which also holds the rules common to all formats);
//! its first byte, read as `i8`, tells the formats apart, and
//! [`crate::rocksdb::format`] dispatches on it. Each module here owns the rest of
//! its trailer: it writes it ([`legacy::LegacyBloomBuilder::build`],
//! [`fast_local::FastLocalBloomBuilder::build`]) and parses it
//! ([`legacy::parse_trailer`], [`fast_local::parse_trailer`]):
//!
//! | offset from trailer start | legacy Bloom             | FastLocalBloom                           |
//! |---------------------------|--------------------------|------------------------------------------|
//! | 0                         | `num_probes` (1..=127)   | `0xFF` (`-1`, newer-Bloom marker)        |
//! | 1                         | `num_lines` (u32, LE)    | sub-implementation, `0` = FastLocalBloom |
//! | 2                         | ″                        | bits 5..8: log2(cache line bytes) − 6 (only 0 is supported); bits 0..5: `num_probes` (1..=30) |
//! | 3..5                      | ″                        | reserved, must be `0`                    |
//!
//! Readers accept any bytes: corrupt or truncated filters never panic and
//! never read outside the given slice. Where RocksDB itself would read
//! outside the filter (it trusts the trailer), these readers answer "may
//! match" instead; each such case is documented where it occurs.

pub mod fast_local;
pub mod legacy;
pub mod math;

pub use fast_local::{FastLocalBloomBuilder, FastLocalBloomImpl, FastLocalBloomReader};
pub use legacy::{LegacyBloomBuilder, LegacyBloomReader, LegacyLocalityBloomImpl};
pub use math::BloomMath;

pub use crate::rocksdb::trailer::{Parsed, METADATA_LEN};
