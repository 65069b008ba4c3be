//! Block checksums: the five checksum types of a block-based table, and the
//! per-block "context" of format_version 6 and later.
//!
//! Ported from RocksDB's `table/format.{h,cc}` (`ComputeBuiltinChecksum`,
//! `ComputeBuiltinChecksumWithLastByte`, `ChecksumModifierForContext`),
//! `table/block_based/reader_common.cc` (`VerifyBlockChecksum`) and
//! `util/crc32c.h` (`Mask`).

use core::fmt;

/// The checksum type byte of the footer (`ChecksumType` in
/// `include/rocksdb/table.h`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ChecksumType {
    /// `kNoChecksum` (0): nothing is verified.
    None,
    /// `kCRC32c` (1): masked CRC-32C.
    Crc32c,
    /// `kxxHash` (2): XXH32, seed 0.
    XxHash,
    /// `kxxHash64` (3): the low 32 bits of XXH64, seed 0.
    XxHash64,
    /// `kXXH3` (4): the low 32 bits of XXH3-64 of all but the last byte,
    /// with the last byte mixed in separately.
    Xxh3,
}

impl ChecksumType {
    /// The type for a footer byte, or `None` for an unknown one.
    pub fn from_byte(b: u8) -> Option<Self> {
        Some(match b {
            0 => ChecksumType::None,
            1 => ChecksumType::Crc32c,
            2 => ChecksumType::XxHash,
            3 => ChecksumType::XxHash64,
            4 => ChecksumType::Xxh3,
            _ => return None,
        })
    }

    /// The footer byte.
    pub fn to_byte(self) -> u8 {
        match self {
            ChecksumType::None => 0,
            ChecksumType::Crc32c => 1,
            ChecksumType::XxHash => 2,
            ChecksumType::XxHash64 => 3,
            ChecksumType::Xxh3 => 4,
        }
    }

    /// RocksDB's enumerator name (`kCRC32c`, `kXXH3`, ...).
    pub fn name(self) -> &'static str {
        match self {
            ChecksumType::None => "kNoChecksum",
            ChecksumType::Crc32c => "kCRC32c",
            ChecksumType::XxHash => "kxxHash",
            ChecksumType::XxHash64 => "kxxHash64",
            ChecksumType::Xxh3 => "kXXH3",
        }
    }
}

impl fmt::Display for ChecksumType {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

const CRC32C: crc::Crc<u32, crc::Table<16>> = crc::Crc::<u32, crc::Table<16>>::new(&crc::CRC_32_ISCSI);
const MASK_DELTA: u32 = 0xa282_ead8;

/// RocksDB's masked CRC-32C (`crc32c::Mask(crc32c::Value(data))`).
pub fn crc32c_masked(data: &[u8]) -> u32 {
    let crc = CRC32C.checksum(data);
    crc.rotate_right(15).wrapping_add(MASK_DELTA)
}

/// Undoes the CRC-32C mask, for messages (`crc32c::Unmask`).
pub fn crc32c_unmask(masked: u32) -> u32 {
    masked.wrapping_sub(MASK_DELTA).rotate_left(15)
}

/// Mixes the last byte into an XXH3 checksum (`ModifyChecksumForLastByte`).
fn mix_last_byte(checksum: u32, last: u8) -> u32 {
    checksum ^ u32::from(last).wrapping_mul(0x6b90_83d9)
}

/// The checksum of `data` as RocksDB computes it for `kind`
/// (`ComputeBuiltinChecksum`). For a block, `data` is the block followed by
/// its compression type byte.
pub fn compute(kind: ChecksumType, data: &[u8]) -> u32 {
    match kind {
        ChecksumType::None => 0,
        ChecksumType::Crc32c => crc32c_masked(data),
        ChecksumType::XxHash => xxhash_rust::xxh32::xxh32(data, 0),
        ChecksumType::XxHash64 => xxhash_rust::xxh64::xxh64(data, 0) as u32,
        ChecksumType::Xxh3 => match data.split_last() {
            None => 0,
            Some((&last, body)) => mix_last_byte(xxhash_rust::xxh3::xxh3_64(body) as u32, last),
        },
    }
}

/// The value added to a stored checksum at `offset` in a file whose footer
/// has `base` as its base context checksum; zero when `base` is zero (no
/// context: format_version 5 and earlier).
pub fn context_modifier(base: u32, offset: u64) -> u32 {
    if base == 0 {
        return 0;
    }
    base ^ (offset as u32).wrapping_add((offset >> 32) as u32)
}

/// Checks a stored checksum: `covered` is what the checksum covers (a
/// block and its compression type byte, or the footer with its checksum
/// field zeroed), `stored` the value stored at `offset` in a file whose
/// base context checksum is `base` (0 before format_version 6). The one
/// check behind block trailers and the format_version 6+ footer.
///
/// Built for fuzzing (`cfg(fuzzing)`, set by `cargo fuzz`), and only
/// then, it accepts every checksum, so that mutated inputs reach the
/// parsers behind it.
pub fn verify(
    kind: ChecksumType,
    base: u32,
    offset: u64,
    covered: &[u8],
    stored: u32,
) -> Result<(), Mismatch> {
    #[cfg(fuzzing)]
    {
        let _ = (kind, base, offset, covered, stored);
        Ok(())
    }
    #[cfg(not(fuzzing))]
    {
        let computed = compute(kind, covered);
        let stored = stored.wrapping_sub(context_modifier(base, offset));
        if stored == computed {
            return Ok(());
        }
        // CRC-32C values are shown unmasked, as `crc32c` tools print them.
        let shown = |v: u32| {
            if kind == ChecksumType::Crc32c {
                crc32c_unmask(v)
            } else {
                v
            }
        };
        Err(Mismatch {
            checksum_type: kind,
            stored: shown(stored),
            computed: shown(computed),
        })
    }
}

/// A stored checksum that differs from the computed one ([`verify`]), the
/// values as tools print them (CRC-32C unmasked), context removed. The
/// caller names the block: [`crate::Error::checksum_mismatch`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Mismatch {
    /// The checksum type of the file.
    pub checksum_type: ChecksumType,
    /// The stored value.
    pub stored: u32,
    /// The computed value.
    pub computed: u32,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn crc32c_matches_known_values() {
        // CRC-32C("123456789") = 0xE3069283.
        assert_eq!(CRC32C.checksum(b"123456789"), 0xE306_9283);
        let m = crc32c_masked(b"123456789");
        assert_eq!(crc32c_unmask(m), 0xE306_9283);
    }

    #[test]
    fn xxh3_mixes_the_last_byte() {
        assert_eq!(compute(ChecksumType::Xxh3, b""), 0);
        let a = compute(ChecksumType::Xxh3, b"abc\x00");
        let b = compute(ChecksumType::Xxh3, b"abc\x01");
        assert_ne!(a, b);
        assert_eq!(a, xxhash_rust::xxh3::xxh3_64(b"abc") as u32);
    }

    #[test]
    fn context_is_off_without_base() {
        assert_eq!(context_modifier(0, 12345), 0);
        assert_eq!(context_modifier(7, 0), 7);
        assert_eq!(context_modifier(7, (1 << 32) + 1), 7 ^ 2);
    }
}
