//! Ported from RocksDB's util/hash.cc and util/hash.h (`Hash`, `BloomHash`).
//!
//! RocksDB's persistent 32-bit hash, a MurmurHash1 variant inherited from
//! LevelDB. It is part of the on-disk format of the legacy (pre-format-version
//! 5) Bloom filter, which hashes keys with [`bloom_hash`].
//!
//! The value depends on the exact bytes only, never on the platform: the input
//! is read as little-endian 32-bit words, and the 1 to 3 trailing bytes are
//! sign-extended (treated as `i8`) before being mixed in, as RocksDB does on
//! every architecture to stay compatible with the original signed-`char`
//! behaviour.

/// Multiplier of the MurmurHash1 mix.
const M: u32 = 0xc6a4a793;
/// Final shift applied after mixing in the tail bytes.
const R: u32 = 24;

/// Seed of [`bloom_hash`] (the legacy Bloom filter key hash).
pub const BLOOM_HASH_SEED: u32 = 0xbc9f1d34;

/// Seed of RocksDB's `GetSliceHash` (in-memory 32-bit slice hash).
pub const SLICE_HASH_SEED: u32 = 397;

/// RocksDB's 32-bit `Hash(data, n, seed)`: stable and persistent, moderate
/// quality, fast on small inputs. Total over all inputs.
///
/// Only the low 32 bits of `data.len()` take part, exactly as RocksDB's
/// `n * m` truncated to 32 bits.
#[inline]
#[must_use]
pub fn hash32(data: &[u8], seed: u32) -> u32 {
    // Truncation is intended: RocksDB keeps only the low 32 bits of n * m.
    let mut h = seed ^ (data.len() as u32).wrapping_mul(M);

    let mut words = data.chunks_exact(4);
    for word in &mut words {
        let w = u32::from_le_bytes([word[0], word[1], word[2], word[3]]);
        h = h.wrapping_add(w).wrapping_mul(M);
        h ^= h >> 16;
    }

    // Tail bytes are sign-extended to 32 bits before shifting.
    let sext = |b: u8| i32::from(b as i8) as u32;
    let tail = words.remainder();
    if !tail.is_empty() {
        if let Some(&b) = tail.get(2) {
            h = h.wrapping_add(sext(b) << 16);
        }
        if let Some(&b) = tail.get(1) {
            h = h.wrapping_add(sext(b) << 8);
        }
        h = h.wrapping_add(sext(tail[0]));
        h = h.wrapping_mul(M);
        h ^= h >> R;
    }
    h
}

/// RocksDB's `BloomHash(key)`: [`hash32`] with seed `0xbc9f1d34`, the key hash
/// of the legacy Bloom filter format.
#[inline]
#[must_use]
pub fn bloom_hash(key: &[u8]) -> u32 {
    hash32(key, BLOOM_HASH_SEED)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::core::prelude::*;

    /// RocksDB's `HashTest.Values`: every known answer, seed as `BloomHash`.
    #[test]
    fn hash_values() {
        const SEED: u32 = 0xbc9f1d34;
        let cases: &[(&[u8], u32)] = &[
            (b"", 3164544308),
            (b"\x08", 422599524),
            (b"\x17", 3168152998),
            (b"\x9a", 3195034349),
            (b"\x1c", 2651681383),
            (b"\x4d\x76", 2447836956),
            (b"\x52\xd5", 3854228105),
            (b"\x91\xf7", 31066776),
            (b"\xd6\x27", 1806091603),
            (b"\x30\x46\x0b", 3808221797),
            (b"\x56\xdc\xd6", 2157698265),
            (b"\xd4\x52\x33", 1721992661),
            (b"\x6a\xb5\xf4", 2469105222),
            (b"\x67\x53\x81\x1c", 118283265),
            (b"\x69\xb8\xc0\x88", 3416318611),
            (b"\x1e\x84\xaf\x2d", 3315003572),
            (b"\x46\xdc\x54\xbe", 447346355),
            (b"\xd0\x7a\x6e\xea\x56", 4255445370),
            (b"\x86\x83\xd5\xa4\xd8", 2390603402),
            (b"\xb7\x46\xbb\x77\xce", 2048907743),
            (b"\x6c\xa8\xbc\xe5\x99", 2177978500),
            (b"\x5c\x5e\xe1\xa0\x73\x81", 1036846008),
            (b"\x08\x5d\x73\x1c\xe5\x2e", 229980482),
            (b"\x42\xfb\xf2\x52\xb4\x10", 3655585422),
            (b"\x73\xe1\xff\x56\x9c\xce", 3502708029),
            (b"\x5c\xbe\x97\x75\x54\x9a\x52", 815120748),
            (b"\x16\x82\x39\x49\x88\x2b\x36", 3056033698),
            (b"\x59\x77\xf0\xa7\x24\xf4\x78", 587205227),
            (b"\xd3\xa5\x7c\x0e\xc0\x02\x07", 2030937252),
            (b"\x31\x1b\x98\x75\x96\x22\xd3\x9a", 469635402),
            (b"\x38\xd6\xf7\x28\x20\xb4\x8a\xe9", 3530274698),
            (b"\xbb\x18\x5d\xf4\x12\x03\xf7\x99", 1974545809),
            (b"\x80\xd4\x3b\x3b\xae\x22\xa2\x78", 3563570120),
            (b"\x1a\xb5\xd0\xfe\xab\xc3\x61\xb2\x99", 2706087434),
            (b"\x8e\x4a\xc3\x18\x20\x2f\x06\xe6\x3c", 1534654151),
            (b"\xb6\xc0\xdd\x05\x3f\xc4\x86\x4c\xef", 2355554696),
            (b"\x9a\x5f\x78\x0d\xaf\x50\xe1\x1f\x55", 1400800912),
            (b"\x22\x6f\x39\x1f\xf8\xdd\x4f\x52\x17\x94", 3420325137),
            (b"\x32\x89\x2a\x75\x48\x3a\x4a\x02\x69\xdd", 3427803584),
            (b"\x06\x92\x5c\xf4\x88\x0e\x7e\x68\x38\x3e", 1152407945),
            (b"\xbd\x2c\x63\x38\xbf\xe9\x78\xb7\xbf\x15", 3382479516),
        ];
        for &(data, expected) in cases {
            assert_eq!(hash32(data, SEED), expected, "input {data:02x?}");
            assert_eq!(bloom_hash(data), expected, "input {data:02x?}");
        }
    }

    #[test]
    fn all_lengths_total_and_seeded() {
        let data: Vec<u8> = (0..=4096u32).map(|i| (i * 131 + 7) as u8).collect();
        for len in 0..=data.len() {
            // For fixed data the hash is a bijection of the seed, so any two
            // seeds must disagree.
            assert_ne!(hash32(&data[..len], 0), hash32(&data[..len], 1), "len {len}");
            assert_ne!(hash32(&data[..len], 0), bloom_hash(&data[..len]), "len {len}");
        }
    }

    #[test]
    fn tail_bytes_are_sign_extended() {
        // A tail byte 0x80 is mixed in as 0xffffff80, not 0x80.
        // Seed 0, length 1: the initial state is 0 ^ (1 * M).
        let mut h = M;
        h = h.wrapping_add(0xffff_ff80).wrapping_mul(M);
        h ^= h >> R;
        assert_eq!(hash32(b"\x80", 0), h);
    }
}
