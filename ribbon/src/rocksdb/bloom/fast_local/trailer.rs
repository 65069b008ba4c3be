//! The FastLocalBloom trailer, written and parsed here only
//! (`FastLocalBloomBitsBuilder::Finish`, `GetBloomBitsReader` in RocksDB's
//! `table/block_based/filter_policy.cc`).
//!
//! ```text
//!   [ 0xFF ][ sub-implementation: 0 ][ log2(line bytes) - 6: 3 bits | num_probes: 5 bits ][ 0 ][ 0 ]
//! ```

use super::{FastLocalBloomReader, FAST_LOCAL_SUB_IMPL};
use crate::rocksdb::trailer::{self, Marker, Parsed, METADATA_LEN, NEWER_BLOOM_MARKER};

/// The trailer the builder writes for `num_probes` (1..=30) probes and
/// 64-byte cache lines.
pub(super) fn encode(num_probes: i32) -> [u8; METADATA_LEN] {
    debug_assert!((1..=30).contains(&num_probes));
    // num_probes is 1..=24 when built; the top 3 bits (line size 64) stay 0.
    #[allow(clippy::cast_sign_loss, clippy::cast_possible_truncation)]
    let probes = (num_probes & 31) as u8;
    [NEWER_BLOOM_MARKER, FAST_LOCAL_SUB_IMPL, probes, 0, 0]
}

/// Interprets a filter block whose trailer may be a FastLocalBloom one,
/// with the rules of RocksDB's `GetBloomBitsReader`:
///
/// 1. Only the first `len mod 2^32` bytes are considered, and at most 5
///    bytes are [`Parsed::AlwaysFalse`] (no keys): the rules of every
///    format, see [`crate::rocksdb::trailer`].
/// 2. Trailer byte 0 other than `0xFF`: [`Parsed::OtherFormat`] (legacy
///    Bloom, Ribbon or reserved; [`crate::rocksdb::format`] dispatches).
/// 3. `num_probes = byte2 & 31` outside `1..=30`: [`Parsed::AlwaysTrue`].
/// 4. Bytes 3..5 (a little-endian `u16`, reserved for a hash seed) not
///    zero: [`Parsed::AlwaysTrue`].
/// 5. Sub-implementation byte 1 is `0` and the cache line size
///    `2^(((byte2 >> 5) & 7) + 6)` is 64: [`Parsed::Reader`] over the bytes
///    before the trailer. Any other sub-implementation or line size:
///    [`Parsed::AlwaysTrue`].
#[must_use]
pub fn parse_trailer(contents: &[u8]) -> Parsed<FastLocalBloomReader<'_>> {
    let (data, t) = match trailer::claim(contents, |m| m == Marker::NewerBloom) {
        Ok(split) => split,
        Err(other) => return other,
    };
    let sub_impl = t[1];
    let log2_line_bytes = ((t[2] >> 5) & 7) + 6;
    let num_probes = i32::from(t[2] & 31);
    if !(1..=30).contains(&num_probes) || u16::from_le_bytes([t[3], t[4]]) != 0 {
        return Parsed::AlwaysTrue;
    }
    if sub_impl == FAST_LOCAL_SUB_IMPL && log2_line_bytes == 6 {
        Parsed::Reader(FastLocalBloomReader::new(data, num_probes))
    } else {
        Parsed::AlwaysTrue
    }
}
