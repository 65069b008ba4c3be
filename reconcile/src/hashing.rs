//! The hashes of a sketch: one XXPH3 hash per key, and two cheap mixes of
//! it for everything else: one for the IBF (its check hash, whose bits also
//! give the element's cells) and one for the estimator (the same, in the
//! key's stratum; the stratum is the trailing zeros of the key hash).
//!
//! **Why XXPH3.** It is RocksDB's own 64-bit hash (`Hash64`, as the
//! dependency-free `ribbon` crate ports it bit for bit), so the workspace
//! carries no other hash; it hashes short keys in a few nanoseconds, which
//! the sketching throughput target needs; and its 64-bit output is well
//! mixed, so the derived positions are as good as independent hashes. It is
//! not a cryptographic hash: someone who knows the seed can craft keys that
//! collide. The seed is a parameter of every sketch (both sides must use the
//! same one), so two parties that do not trust the keys they sketch can
//! agree on a secret seed. A collision never makes [`crate::Ibf::decode`]
//! report a key that is not in the difference: every recovered key is
//! re-hashed and checked (see [`crate::ibf`]).
//!
//! Everything derived from the key hash goes through [`mix`], the 64-bit
//! finaliser of MurmurHash3 (a bijection with full avalanche), applied to
//! the hash XOR a different constant for each use, so the uses are
//! independent of each other. A structure's check hash `c` then gives the
//! element's three cells (`positions`): two from its 32-bit halves, the
//! third from the high half of `c × K` folded (the 128-bit product's halves
//! XORed), which depends on every bit of `c`. Sketch format version 2
//! (version 1 spent eight mixes per key).

/// The number of cells each element touches in an IBF (and in each stratum
/// of the estimator): one in each third of the table. Three hashes peel
/// the largest difference per cell (the peeling threshold of random
/// 3-hypergraphs is 0.818 elements per cell, against 0.772 for four).
pub const HASH_COUNT: usize = 3;

/// The hash of a key with `seed`: XXPH3 (RocksDB's `Hash64`).
#[inline]
pub fn key_hash(key: &[u8], seed: u64) -> u64 {
    ribbon::core::hash::xxph3_64_with_seed(key, seed)
}

/// MurmurHash3's 64-bit finaliser: a bijection with full avalanche.
#[inline]
pub fn mix(mut x: u64) -> u64 {
    x ^= x >> 33;
    x = x.wrapping_mul(0xff51_afd7_ed55_8ccd);
    x ^= x >> 33;
    x = x.wrapping_mul(0xc4ce_b9fe_1a85_ec53);
    x ^ (x >> 33)
}

/// Constants that separate the uses of one hash.
pub(crate) const ELEMENT: u64 = 0x9e37_79b9_7f4a_7c15;
pub(crate) const STRATA: u64 = 0xa076_1d64_78bd_642f;
/// The odd multiplier of the third position.
const THIRD: u64 = 0xd1b5_4a32_d192_ed03;

/// The cells an element with check hash `c` touches in a table of
/// [`HASH_COUNT`] parts of `part` cells: one per part, so the three are
/// distinct.
#[inline]
pub(crate) fn positions(c: u64, part: u32) -> [usize; HASH_COUNT] {
    let wide = u128::from(c) * u128::from(THIRD);
    let q = (wide as u64) ^ ((wide >> 64) as u64);
    let range = |h: u32| ((u64::from(h) * u64::from(part)) >> 32) as usize;
    let part = part as usize;
    [
        range(c as u32),
        part + range((c >> 32) as u32),
        2 * part + range((q >> 32) as u32),
    ]
}

/// The check hash of a key hash in the strata estimator.
#[inline]
pub(crate) fn strata_check(h: u64) -> u64 {
    mix(h ^ STRATA)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn positions_are_one_per_part_and_in_range() {
        for part in [1u32, 2, 7, 1000, u32::MAX / 3] {
            for i in 0..1000u64 {
                let p = positions(mix(i), part);
                for (j, &x) in p.iter().enumerate() {
                    assert!(x >= j * part as usize && x < (j + 1) * part as usize);
                }
            }
        }
    }

    #[test]
    fn key_hash_is_rocksdbs_hash64() {
        assert_eq!(key_hash(b"", 0), ribbon::core::hash::hash64(b"", 0));
        assert_eq!(key_hash(b"abc", 7), ribbon::core::hash::hash64(b"abc", 7));
    }
}
