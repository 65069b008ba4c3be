//! The legacy Bloom trailer, written and parsed here only
//! (`LegacyBloomBitsBuilder::Finish`, and the legacy branch of
//! `GetBuiltinFilterBitsReader` in RocksDB's
//! `table/block_based/filter_policy.cc`).
//!
//! ```text
//!   [ num_probes: 1..=127 ][ num_lines: u32 LE ]
//! ```

use super::{LegacyBloomReader, CACHE_LINE_BYTES, LOG2_CACHE_LINE_BYTES};
use crate::rocksdb::trailer::{self, Marker, Parsed, METADATA_LEN};

/// The trailer the builder writes for `num_probes` (1..=30) probes and
/// `num_lines` cache lines.
pub(super) fn encode(num_probes: i32, num_lines: u32) -> [u8; METADATA_LEN] {
    debug_assert!((1..=30).contains(&num_probes));
    // num_probes is 1..=30.
    #[allow(clippy::cast_possible_truncation, clippy::cast_sign_loss)]
    let probes = num_probes as u8;
    let lines = num_lines.to_le_bytes();
    [probes, lines[0], lines[1], lines[2], lines[3]]
}

/// Interprets a filter block whose trailer may be a legacy Bloom one, with
/// the legacy rules of RocksDB's `GetBuiltinFilterBitsReader`:
///
/// 1. Only the first `len mod 2^32` bytes are considered, and at most 5
///    bytes are [`Parsed::AlwaysFalse`] (no keys; this wins over any
///    trailer content): the rules of every format, see [`crate::rocksdb::trailer`].
/// 2. Trailer byte 0 read as `i8` outside 1..=127: [`Parsed::OtherFormat`]
///    (zero probes, newer Bloom, Ribbon or reserved; [`crate::rocksdb::format`]
///    dispatches them).
/// 3. `num_probes` = byte 0 (31..=127 are accepted although never built),
///    `len = size - 5`, `num_lines` = trailer bytes 1..5 (LE). The line
///    size is 64 when `num_lines * 64 == len` (in wrapping `u32`
///    arithmetic, as RocksDB on x86-64 computes it). Otherwise, if
///    `num_lines == 0` or `len % num_lines != 0`: [`Parsed::AlwaysTrue`];
///    else the line size is `len / num_lines` and must be a power of two
///    (any, e.g. 128 or 256 from other platforms, or 1), else
///    [`Parsed::AlwaysTrue`].
/// 4. [`Parsed::Reader`] over the `len` bytes before the trailer.
///
/// Deviations, only for corrupt filters where RocksDB reads out of bounds:
/// when `num_lines * 64` wraps to `len`, lines outside the data answer
/// "may match"; for `len >= 2^31` the power-of-two search uses 64-bit
/// arithmetic instead of RocksDB's overflowing 32-bit shifts.
#[must_use]
pub fn parse_trailer(contents: &[u8]) -> Parsed<LegacyBloomReader<'_>> {
    let (data, t) = match trailer::claim(contents, |m| matches!(m, Marker::LegacyBloom { .. })) {
        Ok(split) => split,
        Err(other) => return other,
    };
    let num_probes = i32::from(t[0]);
    let num_lines = u32::from_le_bytes([t[1], t[2], t[3], t[4]]);
    let len = data.len();
    // `data` has fewer than 2^32 bytes after `trailer::split`.
    #[allow(clippy::cast_possible_truncation)]
    let len32 = len as u32;
    let log2_cache_line_bytes = if num_lines.wrapping_mul(CACHE_LINE_BYTES) == len32 {
        LOG2_CACHE_LINE_BYTES
    } else if len32.checked_rem(num_lines) != Some(0) {
        // num_lines == 0, or no whole line size.
        return Parsed::AlwaysTrue;
    } else {
        let mut log2 = 0u32;
        while (u64::from(num_lines) << log2) < len as u64 {
            log2 += 1;
        }
        if (u64::from(num_lines) << log2) != len as u64 {
            return Parsed::AlwaysTrue;
        }
        log2
    };
    Parsed::Reader(LegacyBloomReader::new(
        data,
        num_probes,
        num_lines,
        log2_cache_line_bytes,
    ))
}
