//! x86-64 fast paths: the prefetch hint and the AVX2 FastLocalBloom line
//! check (RocksDB's `util/bloom_impl.h`, `HashMayMatchPrepared` under
//! `__AVX2__`), ported in our words.

use super::BLOOM_LINE_BYTES;
use core::arch::x86_64::{
    __m256i, _mm256_blendv_epi8, _mm256_loadu_si256, _mm256_mullo_epi32, _mm256_permutevar8x32_epi32,
    _mm256_set1_epi32, _mm256_setr_epi32, _mm256_slli_epi32, _mm256_sllv_epi32, _mm256_srai_epi32,
    _mm256_srli_epi32, _mm256_sub_epi32, _mm256_testc_si256, _mm_prefetch, _MM_HINT_T0,
};
use std::sync::atomic::{AtomicU8, Ordering};

/// Prefetch hint (`prefetcht0`, into every cache level; see the module docs
/// for why not RocksDB's `prefetcht2`) for `byte`'s cache
/// line.
#[inline(always)]
pub(super) fn prefetch(byte: &u8) {
    // SAFETY: `_mm_prefetch` needs SSE, which every x86-64 target has (it is
    // part of the x86-64 baseline, so this build enables it statically). A
    // prefetch is a hint: it reads nothing architecturally and cannot fault,
    // and the pointer comes from a live reference.
    unsafe { _mm_prefetch::<_MM_HINT_T0>(core::ptr::from_ref(byte).cast::<i8>()) }
}

/// 0: not checked yet; 1: no AVX2; 2: AVX2.
static AVX2: AtomicU8 = AtomicU8::new(0);

/// Whether the CPU has AVX2: detected once, then one relaxed atomic load
/// (also `true` without a check in a build with `+avx2`).
#[inline]
pub(crate) fn avx2_detected() -> bool {
    if cfg!(target_feature = "avx2") {
        return true;
    }
    match AVX2.load(Ordering::Relaxed) {
        0 => {
            let found = std::is_x86_feature_detected!("avx2");
            AVX2.store(if found { 2 } else { 1 }, Ordering::Relaxed);
            found
        }
        state => state == 2,
    }
}

/// 0: not checked yet; 1: no POPCNT; 2: POPCNT.
static POPCNT: AtomicU8 = AtomicU8::new(0);

/// Whether the CPU has POPCNT (every x86-64 CPU since 2008, but not the
/// x86-64 baseline a default build targets): detected once, then one
/// relaxed atomic load (`true` without a check in a `+popcnt` build).
#[inline]
pub(crate) fn popcnt_detected() -> bool {
    if cfg!(target_feature = "popcnt") {
        return true;
    }
    match POPCNT.load(Ordering::Relaxed) {
        0 => {
            let found = std::is_x86_feature_detected!("popcnt");
            POPCNT.store(if found { 2 } else { 1 }, Ordering::Relaxed);
            found
        }
        state => state == 2,
    }
}

/// `GOLDEN` to the powers 0 to 7: the multipliers of eight probes.
const POWERS: [u32; 8] = [
    0x0000_0001,
    0x9e37_79b9,
    0xe35e_67b1,
    0x7342_97e9,
    0x35fb_e861,
    0xdeb7_c719,
    0x0448_b211,
    0x3459_b749,
];

/// `GOLDEN` to the power 8: from one group of eight probes to the next.
const GOLDEN_POW8: u32 = 0xab25_f4c1;

/// Whether all `num_probes` bits of `h2` are set in `line`: the same bits,
/// and so the same answers, as [`super::portable_line_may_match`].
///
/// # Safety
///
/// The CPU must support AVX2.
#[target_feature(enable = "avx2")]
#[inline]
pub(crate) unsafe fn line_may_match_avx2(h2: u32, num_probes: i32, line: &[u8; BLOOM_LINE_BYTES]) -> bool {
    // SAFETY: `POWERS` is 8 `u32`s (32 bytes) and `line` 64 bytes: the three
    // unaligned 32-byte loads read inside them (`loadu` needs no alignment).
    let (multipliers, lower_words, upper_words) = unsafe {
        (
            _mm256_loadu_si256(POWERS.as_ptr().cast::<__m256i>()),
            _mm256_loadu_si256(line.as_ptr().cast::<__m256i>()),
            _mm256_loadu_si256(line.as_ptr().add(32).cast::<__m256i>()),
        )
    };
    let zero_to_seven = _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7);
    let mut h = h2;
    let mut rem_probes = num_probes;
    loop {
        // The next eight probe hashes.
        let hashes = _mm256_mullo_epi32(_mm256_set1_epi32(h as i32), multipliers);
        // Top 4 bits: one of 16 words; bit 31 picks the half.
        let word_addresses = _mm256_srli_epi32(hashes, 28);
        let lower = _mm256_permutevar8x32_epi32(lower_words, word_addresses);
        let upper = _mm256_permutevar8x32_epi32(upper_words, word_addresses);
        let values = _mm256_blendv_epi8(lower, upper, _mm256_srai_epi32(hashes, 31));
        // Only the probes still to do count.
        let k_selector =
            _mm256_srli_epi32(_mm256_sub_epi32(zero_to_seven, _mm256_set1_epi32(rem_probes)), 31);
        // Next 5 bits: the bit within the word.
        let bit_addresses = _mm256_srli_epi32(_mm256_slli_epi32(hashes, 4), 27);
        let bit_mask = _mm256_sllv_epi32(k_selector, bit_addresses);
        let all_set = _mm256_testc_si256(values, bit_mask) != 0;
        if rem_probes <= 8 {
            return all_set;
        } else if !all_set {
            return false;
        }
        h = h.wrapping_mul(GOLDEN_POW8);
        rem_probes -= 8;
    }
}
