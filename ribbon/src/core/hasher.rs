//! The standard hasher: from a 64-bit key hash and a seed to a start, a
//! coefficient row and a result row.
//!
//! Ported from RocksDB's `util/ribbon_impl.h` (`StandardHasher`,
//! `StandardRehasherAdapter`).
//!
//! Keys arrive already hashed to 64 bits (RocksDB uses `GetSliceHash64`, see
//! [`crate::core::hash`]). Each seed "rehashes" that value with one multiply, so a
//! new seed gives an independent-looking system without touching the keys
//! again. Seeds are numbered by an *ordinal* (0, 1, 2, …) and stored in the
//! filter as that ordinal; the *raw* seed mixed into the hash is a bijective
//! scramble of the ordinal.
//!
//! Internal to the formats (see the crate docs): public for tests, tools
//! and experiments; its API may change with any release.

use crate::core::alg::{Banding, CoeffRow, Equation, RibbonSettings};
use crate::core::math::fast_range64_to_u32;
use crate::core::prelude::*;
use core::marker::PhantomData;

const COEFF_AND_RESULT_FACTOR: u64 = 0xc28f_8282_2b65_0bed;
const ALT_COEFF_FACTOR1: u64 = 0x876f_170b_e4f1_fcb9;
const ALT_COEFF_FACTOR2: u64 = 0xf043_3a4a_ecda_4c5f;
const COEFF_XOR64: u64 = 0xc367_844a_6e52_731d;
const SEED_MIX_MASK: u64 = 0xf0f0_f0f0_f0f0_f0f0;
const SEED_MIX_SHIFT: u32 = 4;
const TO_RAW_SEED_FACTOR: u64 = 0xc782_19a2_3eea_dd03;
const FROM_RAW_SEED_FACTOR: u64 = 0xfe1a_137d_14b4_75ab;
const REHASH_FACTOR: u64 = 0x6193_d459_236a_3a0d;

/// The inverse of [`REHASH_FACTOR`] modulo 2^64 (it is odd), by Newton's
/// iteration: each step doubles the correct low bits.
const REHASH_INVERSE: u64 = {
    let mut inv = REHASH_FACTOR;
    let mut i = 0;
    while i < 6 {
        inv = inv.wrapping_mul(2u64.wrapping_sub(REHASH_FACTOR.wrapping_mul(inv)));
        i += 1;
    }
    inv
};
const _: () = assert!(REHASH_FACTOR.wrapping_mul(REHASH_INVERSE) == 1);

/// The raw seed for an ordinal seed (bijective on `u32`).
#[inline]
pub fn raw_seed_from_ordinal(ordinal: u32) -> u32 {
    let mut tmp = u64::from(ordinal).wrapping_mul(TO_RAW_SEED_FACTOR);
    tmp ^= (tmp & SEED_MIX_MASK) >> SEED_MIX_SHIFT;
    tmp as u32
}

/// The ordinal seed for a raw seed; inverse of [`raw_seed_from_ordinal`].
#[inline]
pub fn ordinal_from_raw_seed(raw: u32) -> u32 {
    let mut tmp = u64::from(raw);
    tmp ^= (tmp & SEED_MIX_MASK) >> SEED_MIX_SHIFT;
    tmp.wrapping_mul(FROM_RAW_SEED_FACTOR) as u32
}

/// The standard rehasher for one seed.
#[derive(Debug, Clone, Copy)]
pub struct Hasher<S: RibbonSettings> {
    raw_seed: u32,
    _settings: PhantomData<S>,
}

impl<S: RibbonSettings> Hasher<S> {
    /// The hasher for ordinal seed `ordinal`.
    #[inline]
    pub fn with_ordinal_seed(ordinal: u32) -> Self {
        Self {
            raw_seed: raw_seed_from_ordinal(ordinal),
            _settings: PhantomData,
        }
    }

    /// The ordinal seed of this hasher.
    pub fn ordinal_seed(&self) -> u32 {
        ordinal_from_raw_seed(self.raw_seed)
    }

    /// Rehashes a 64-bit key hash under this seed.
    #[inline(always)]
    pub fn hash(&self, key_hash: u64) -> u64 {
        (key_hash ^ u64::from(self.raw_seed)).wrapping_mul(REHASH_FACTOR)
    }

    /// The key hash [`hash`](Self::hash) was given: `unhash(hash(k)) == k`
    /// (the rehash is a bijection), for builders that rehash in place and
    /// must give the caller's hashes back when a seed fails.
    #[inline(always)]
    pub fn unhash(&self, h: u64) -> u64 {
        h.wrapping_mul(REHASH_INVERSE) ^ u64::from(self.raw_seed)
    }

    /// The start slot in `0..num_starts`. Precondition: `num_starts > 0`.
    #[inline(always)]
    pub fn start(&self, h: u64, num_starts: u32) -> u32 {
        if S::USE_SMASH {
            let front = S::CoeffRow::BITS / 4;
            let back = S::CoeffRow::BITS / 4;
            let start = fast_range64_to_u32(h, num_starts.wrapping_add(front + back));
            let start = start.max(front) - front;
            start.min(num_starts - 1)
        } else {
            fast_range64_to_u32(h, num_starts)
        }
    }

    /// The coefficient row. Never zero when `FIRST_COEFF_ALWAYS_ONE` or for
    /// 64-bit rows; for 32- and 128-bit rows without it, zero is possible as in
    /// RocksDB, and banding treats it as the equation `0 = result`.
    #[inline(always)]
    pub fn coeff_row(&self, h: u64) -> S::CoeffRow {
        if S::USE_SMASH {
            let a = u128::from(h) * u128::from(ALT_COEFF_FACTOR1);
            let b = u128::from(h) * u128::from(ALT_COEFF_FACTOR2);
            let mut cr = S::CoeffRow::from_u128(b ^ (a << 64) ^ (a >> 64));
            if S::FIRST_COEFF_ALWAYS_ONE {
                cr |= S::CoeffRow::ONE;
            } else if cr == S::CoeffRow::ZERO {
                cr = S::CoeffRow::ONE;
            }
            return cr;
        }
        let a = h.wrapping_mul(COEFF_AND_RESULT_FACTOR);
        let c = if S::CoeffRow::BITS > 64 {
            (u128::from(a) << 64) ^ u128::from(a ^ COEFF_XOR64)
        } else {
            u128::from(a)
        };
        let mut cr = S::CoeffRow::from_u128(c);
        if S::FIRST_COEFF_ALWAYS_ONE {
            cr |= S::CoeffRow::ONE;
        } else if S::CoeffRow::BITS == 64 && cr == S::CoeffRow::ZERO {
            cr = S::CoeffRow::ONE;
        }
        cr
    }

    /// The expected result row (all 32 bits; a filter with `r` columns uses
    /// the low `r`). Zero in Homogeneous Ribbon.
    #[inline(always)]
    pub fn result_row(&self, h: u64) -> u32 {
        if S::HOMOGENEOUS {
            0
        } else {
            h.wrapping_mul(COEFF_AND_RESULT_FACTOR).swap_bytes() as u32
        }
    }

    /// The full equation of a key hash.
    #[inline(always)]
    pub fn equation(&self, key_hash: u64, num_starts: u32) -> Equation<S::CoeffRow> {
        let h = self.hash(key_hash);
        Equation {
            start: self.start(h, num_starts),
            coeff_row: self.coeff_row(h),
            result_row: self.result_row(h),
        }
    }
}

/// Reorders `key_hashes` so that their starts under `hasher` increase (up
/// to buckets of a few blocks), with one counting-sort pass on the top bits
/// of the rehashed values (the start is monotonic in them).
///
/// Banding in this order touches the banding storage almost sequentially
/// instead of at random, which removes most cache misses for large filters.
/// The banding result, and so the filter, does not depend on the order in
/// which equations are added (see [`crate::core::alg`]). Uses a temporary buffer
/// of `key_hashes.len()` words.
pub fn sort_by_start<S: RibbonSettings>(key_hashes: &mut [u64], hasher: &Hasher<S>) {
    let n = key_hashes.len();
    if n < 2 {
        return;
    }
    // About 64 keys per bucket, between 2^4 and 2^16 buckets.
    let bits = (usize::BITS - (n / 64).leading_zeros()).clamp(4, 16);
    let shift = 64 - bits;
    let bucket = |k: u64| (hasher.hash(k) >> shift) as usize;
    let mut offsets = vec![0usize; (1 << bits) + 1];
    for &k in key_hashes.iter() {
        offsets[bucket(k) + 1] += 1;
    }
    crate::core::math::prefix_sums(&mut offsets);
    let mut sorted = vec![0u64; n];
    for &k in key_hashes.iter() {
        let b = bucket(k);
        sorted[offsets[b]] = k;
        offsets[b] += 1;
    }
    key_hashes.copy_from_slice(&sorted);
}

/// Filters with at least this many slots band their keys in start order
/// (see [`sort_by_start`]): below it the banding storage fits in cache.
pub const SORT_MIN_SLOTS: u32 = 1 << 12;

/// Bands `key_hashes` into `num_slots` slots, trying the ordinal `seeds` in
/// order until one succeeds. Returns that seed and its banding, or `None`
/// when every seed fails. Large inputs are reordered by start for each seed
/// (see [`sort_by_start`]); the result does not depend on their order.
/// Peak memory is the hashes plus either the sort buffer or one banding.
pub fn band_with_seeds<S: RibbonSettings>(
    key_hashes: &mut [u64],
    num_slots: u32,
    seeds: impl IntoIterator<Item = u32>,
) -> Option<(u32, Banding<S>)> {
    let mut banding = Banding::<S>::new();
    for seed in seeds {
        let hasher = Hasher::<S>::with_ordinal_seed(seed);
        if num_slots >= SORT_MIN_SLOTS {
            banding.release();
            sort_by_start(key_hashes, &hasher);
        }
        banding.reset(num_slots);
        let num_starts = banding.num_starts();
        // Three adds in flight: their chains of dependent loads overlap
        // (one at a time took 1.2 to 1.3 times as long at 10^4 and 10^5
        // keys); the result does not depend on the order of the adds.
        if banding.add_all_interleaved(
            key_hashes.iter().map(|&k| hasher.equation(k, num_starts)),
            &mut crate::core::alg::NoObserver,
        ) {
            return Some((seed, banding));
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::core::alg::Standard128;

    #[test]
    fn unhash_inverts_hash_for_every_seed() {
        for seed in [0u32, 1, 7, 64, 255] {
            let hasher = Hasher::<Standard128>::with_ordinal_seed(seed);
            let mut k = 0x0123_4567_89ab_cdefu64;
            for _ in 0..1000 {
                assert_eq!(hasher.unhash(hasher.hash(k)), k);
                k = k.wrapping_mul(0x9E37_79B9_7F4A_7C15).wrapping_add(seed.into());
            }
        }
    }

    #[test]
    fn seed_scramble_is_bijective_on_samples() {
        for ordinal in (0..10_000u32).chain([u32::MAX, 0x8000_0000, 255, 256]) {
            let raw = raw_seed_from_ordinal(ordinal);
            assert_eq!(ordinal_from_raw_seed(raw), ordinal);
        }
        assert_eq!(raw_seed_from_ordinal(0), 0);
        assert_ne!(raw_seed_from_ordinal(1), 1);
    }

    #[test]
    fn sort_by_start_orders_starts_and_keeps_the_keys() {
        let h = Hasher::<Standard128>::with_ordinal_seed(3);
        let mut keys: Vec<u64> = (0..100_000u64)
            .map(|k| k.wrapping_mul(0x9E37_79B9_7F4A_7C15))
            .collect();
        let mut expected = keys.clone();
        sort_by_start(&mut keys, &h);
        let starts: Vec<u32> = keys.iter().map(|&k| h.start(h.hash(k), 1 << 20)).collect();
        // Buckets hold about 64 keys: starts never go back by more than a bucket.
        let bucket_width = (1u32 << 20) >> 10;
        let mut max = 0;
        for &s in &starts {
            assert!(s + bucket_width >= max, "start {s} after {max}");
            max = max.max(s);
        }
        keys.sort_unstable();
        expected.sort_unstable();
        assert_eq!(keys, expected);
    }

    #[test]
    fn standard128_coeff_rows_have_first_bit() {
        let h = Hasher::<Standard128>::with_ordinal_seed(7);
        for k in 0..1000u64 {
            let x = h.hash(k.wrapping_mul(0x9E37_79B9_7F4A_7C15));
            assert_eq!(h.coeff_row(x) & 1, 1);
            assert!(h.start(x, 1000) < 1000);
        }
    }
}
