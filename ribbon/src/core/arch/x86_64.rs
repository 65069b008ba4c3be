//! x86-64 fast paths: the prefetch hint, the AVX2 FastLocalBloom line
//! check (RocksDB's `util/bloom_impl.h`, `HashMayMatchPrepared` under
//! `__AVX2__`), ported in our words, and the AVX2 and AVX-512 Ribbon site
//! kernels for widths 128 and 64 (this crate's own; RocksDB has no vector
//! Ribbon query).

use super::BLOOM_LINE_BYTES;
use core::arch::x86_64::{
    __m128i, __m256i, _mm256_and_si256, _mm256_andnot_si256, _mm256_blend_epi32, _mm256_blendv_epi8,
    _mm256_broadcastsi128_si256, _mm256_bslli_epi128, _mm256_bsrli_epi128, _mm256_castsi256_ps,
    _mm256_loadu_si256, _mm256_movemask_ps, _mm256_mullo_epi32, _mm256_or_si256, _mm256_permutevar8x32_epi32,
    _mm256_set1_epi32, _mm256_set1_epi64x, _mm256_set_epi64x, _mm256_setr_epi32, _mm256_shuffle_epi32,
    _mm256_sll_epi64, _mm256_slli_epi32, _mm256_slli_epi64, _mm256_sllv_epi32, _mm256_sllv_epi64,
    _mm256_srai_epi32, _mm256_srl_epi64, _mm256_srli_epi32, _mm256_srli_epi64, _mm256_srlv_epi64,
    _mm256_sub_epi32, _mm256_sub_epi64, _mm256_testc_si256, _mm256_unpackhi_epi64, _mm256_unpacklo_epi64,
    _mm256_xor_si256, _mm512_and_si512, _mm512_loadu_si512, _mm512_permutex2var_epi64, _mm512_popcnt_epi64,
    _mm512_set1_epi64, _mm512_set_epi64, _mm512_setr_epi64, _mm512_ternarylogic_epi64,
    _mm512_test_epi64_mask, _mm512_xor_si512, _mm_loadu_si128, _mm_prefetch, _MM_HINT_T0,
};
use core::sync::atomic::{AtomicU8, Ordering};

/// `is_x86_feature_detected!` where the run-time check exists (`std`);
/// without `std`, `false`: only the compile-time target features (the
/// `cfg!(target_feature = ...)` each caller tries first) pick a kernel.
#[cfg(feature = "std")]
macro_rules! runtime_detected {
    ($feature:tt) => {
        std::is_x86_feature_detected!($feature)
    };
}
#[cfg(not(feature = "std"))]
macro_rules! runtime_detected {
    ($feature:tt) => {
        not_detectable($feature)
    };
}

/// Without `std`, no feature is detected at run time.
#[cfg(not(feature = "std"))]
#[inline(always)]
fn not_detectable(_feature: &str) -> bool {
    false
}

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

/// A CPU feature detected once and cached in `state` (0: not checked yet;
/// 1: absent; 2: present): after the first call, one relaxed atomic load,
/// inlined into the query loops (the detection itself stays out of them).
#[inline(always)]
fn cached_feature(state: &AtomicU8, detect: fn() -> bool) -> bool {
    match state.load(Ordering::Relaxed) {
        0 => detect_and_cache(state, detect),
        known => known == 2,
    }
}

#[cold]
#[inline(never)]
fn detect_and_cache(state: &AtomicU8, detect: fn() -> bool) -> bool {
    let found = detect();
    state.store(if found { 2 } else { 1 }, Ordering::Relaxed);
    found
}

/// 0: not checked yet; 1: no AVX2; 2: AVX2.
static AVX2: AtomicU8 = AtomicU8::new(0);

/// Whether the CPU has AVX2: detected once, then one relaxed atomic load
/// (also `true` without a check in a build with `+avx2`).
#[inline(always)]
pub(crate) fn avx2_detected() -> bool {
    cfg!(target_feature = "avx2") || cached_feature(&AVX2, || runtime_detected!("avx2"))
}

/// 0: not checked yet; 1: no POPCNT; 2: POPCNT.
static POPCNT: AtomicU8 = AtomicU8::new(0);

/// Whether the CPU has POPCNT (every x86-64 CPU since 2008, but not the
/// x86-64 baseline a default build targets): detected once, then one
/// relaxed atomic load (`true` without a check in a `+popcnt` build).
#[inline(always)]
pub(crate) fn popcnt_detected() -> bool {
    cfg!(target_feature = "popcnt") || cached_feature(&POPCNT, || runtime_detected!("popcnt"))
}

/// The parities of `8 * groups` columns of a width-128 Ribbon query site:
/// bit `i` of the result is the parity of `(left_i & cr_left) ^ (right_i &
/// cr_right)`, where `left_i` is the little-endian 128-bit word `i` of
/// `words` and `right_i` word `i` of `words[right_offset..]` (the words of
/// the start's block and of the next one, as
/// [`crate::core::solution::InterleavedLayout::filter_query`] reads them). Eight
/// columns at a time, without a branch on the answer; the same bits as
/// [`crate::core::alg::CoeffRow::parity`] per column (tested).
///
/// # Safety
///
/// The CPU must support AVX2, `groups <= 4`, and `words` must hold at least
/// `right_offset + 128 * groups` bytes.
#[target_feature(enable = "avx2")]
#[inline]
pub(crate) unsafe fn site128_parities_avx2(
    words: &[u8],
    cr_left: u128,
    cr_right: u128,
    right_offset: usize,
    groups: usize,
) -> u32 {
    debug_assert!(groups <= 4 && words.len() >= right_offset + 128 * groups);
    let splat = |x: u128| _mm256_set_epi64x((x >> 64) as i64, x as i64, (x >> 64) as i64, x as i64);
    let (cl, cr) = (splat(cr_left), splat(cr_right));
    let left = words.as_ptr();
    // SAFETY: the caller guarantees `right_offset + 128 * groups <= words.len()`.
    let right = unsafe { left.add(right_offset) };
    // Two columns at byte `at` from both blocks, each folded to 64 bits: lane
    // `k` (of two 128-bit lanes) holds column `k`'s fold in its low quadword.
    let fold2 = |at: usize| {
        // SAFETY: `at + 32 <= 128 * groups`, and the caller guarantees that
        // both `left` and `right` have `128 * groups` readable bytes.
        let x = unsafe { masked_xor(left.add(at), right.add(at), cl, cr) };
        _mm256_xor_si256(x, _mm256_bsrli_epi128::<8>(x))
    };
    // The packed folds hold columns 0, 4, 2, 6, 1, 5, 3, 7 (see below);
    // this gathers them back into column order.
    let to_column_order = _mm256_setr_epi32(0, 4, 2, 6, 1, 5, 3, 7);
    let mut bits = 0u32;
    for g in 0..groups {
        let at = 128 * g;
        // Quadwords: columns 0, 2, 1, 3 of the group, then 4, 6, 5, 7.
        let low = _mm256_blend_epi32::<0b1100_1100>(fold2(at), _mm256_bslli_epi128::<8>(fold2(at + 32)));
        let high =
            _mm256_blend_epi32::<0b1100_1100>(fold2(at + 64), _mm256_bslli_epi128::<8>(fold2(at + 96)));
        // 64 to 32 bits, then dwords: columns 0, 4, 2, 6, 1, 5, 3, 7.
        let low = _mm256_xor_si256(low, _mm256_srli_epi64::<32>(low));
        let high = _mm256_xor_si256(high, _mm256_srli_epi64::<32>(high));
        let folds = _mm256_blend_epi32::<0b1010_1010>(low, _mm256_slli_epi64::<32>(high));
        bits |= dword_parities(folds, to_column_order) << (8 * g);
    }
    bits
}

/// The column whose parity is bit `i` of [`site128_lanes8_avx2`]'s result:
/// the order its folds leave the columns in (no shuffle puts them back;
/// [`LANES_TO_COLUMNS`] does, with one table read).
pub(crate) const LANE_COLUMN: [u32; 8] = [0, 4, 2, 6, 1, 5, 3, 7];

/// [`site128_lanes8_avx2`]'s result (eight bits in lane order) in column
/// order: bit `LANE_COLUMN[i]` of `LANES_TO_COLUMNS[x]` is bit `i` of `x`.
pub(crate) const LANES_TO_COLUMNS: [u8; 256] = lanes_to_columns(LANE_COLUMN);

/// The table that puts eight bits in lane order into column order: bit
/// `lane_column[i]` of entry `x` is bit `i` of `x`.
const fn lanes_to_columns(lane_column: [u32; 8]) -> [u8; 256] {
    let mut table = [0u8; 256];
    let mut x = 0;
    while x < 256 {
        let mut i = 0;
        while i < 8 {
            if x >> i & 1 != 0 {
                table[x] |= 1 << lane_column[i];
            }
            i += 1;
        }
        x += 1;
    }
    table
}

/// The parities of the first eight columns of a width-128 Ribbon query
/// site, in lane order: bit `i` of the result is the parity of `(left_c &
/// (cr << start_bit)) ^ (right_c & (cr >> (128 - start_bit)))` for column
/// `c = LANE_COLUMN[i]`, where `left_c` is the little-endian 128-bit word
/// `c` at `left` and `right_c` word `c` at `right` (the words of the
/// start's block and of the next one); the right row is zero for
/// `start_bit == 0`, so the right words then change nothing.
/// [`LANES_TO_COLUMNS`] puts the bits in column order.
///
/// The short form of [`site128_parities_avx2`] for sites of at most eight
/// columns (every FP rate down to 1/256), taking five registers, so that a
/// query compiled without AVX2 calls it without touching the stack, and
/// without a branch on the start: the coefficient row is shifted into its
/// two halves in the vector unit ([`shift_row_128`]), then eight
/// masked 256-bit loads (two columns each), two unpack-and-XOR folds to 64
/// bits that pair the registers up, one shift-and-blend to 32 bits, five
/// shift-XOR steps that leave each column's parity in bit 31 of its lane,
/// and one `vmovmskps`: no cross-lane shuffle (the gather back into column
/// order is the caller's table read, off the vector unit).
///
/// # Safety
///
/// The CPU must support AVX2, `start_bit < 128`, and `left` and `right`
/// must each have 128 readable bytes (`loadu` needs no alignment).
#[target_feature(enable = "avx2")]
#[inline]
pub(crate) unsafe fn site128_lanes8_avx2(left: *const u8, right: *const u8, cr: u128, start_bit: u32) -> u32 {
    debug_assert!(start_bit < 128);
    let (cl, cr) = shift_row_128(cr, start_bit);
    // SAFETY: the caller's contract.
    unsafe { site128_lanes8_of_rows(left, right, cl, cr) }
}

/// [`site128_lanes8_avx2`] with the row split into its halves by one
/// rotation and a table mask ([`split_row_128`]: 12 vector instructions
/// against 21, but two reads of its 4 KiB of tables); the same bits.
/// Standard128's batch on a filter in the core's caches uses it (paired
/// runs, issue 37: 0.97 of the shift kernel's time at 16 KiB, 0.965 at
/// 256 KiB); where the filter or the caller's own data crowd the L1 cache
/// (a 4 MiB filter, single queries there, standalone filters) the table
/// reads measured slower, so everything else keeps the shift kernel.
///
/// # Safety
///
/// As [`site128_lanes8_avx2`].
#[target_feature(enable = "avx2")]
#[inline]
pub(crate) unsafe fn site128_lanes8_rotated_avx2(
    left: *const u8,
    right: *const u8,
    cr: u128,
    start_bit: u32,
) -> u32 {
    debug_assert!(start_bit < 128);
    let (cl, cr) = split_row_128(cr, start_bit);
    // SAFETY: the caller's contract.
    unsafe { site128_lanes8_of_rows(left, right, cl, cr) }
}

/// `cr << start_bit` and `cr >> (128 - start_bit)` (zero for `start_bit ==
/// 0`) in both 128-bit lanes, as [`split_row_128`], by variable quadword
/// shifts (`vpsllvq`/`vpsrlvq`, whose counts of 64 or more give zero, cover
/// every `start_bit` in `0..128`). Pre-condition: `start_bit < 128`.
#[target_feature(enable = "avx2")]
#[inline]
fn shift_row_128(cr: u128, start_bit: u32) -> (__m256i, __m256i) {
    // Per 128-bit lane: quadwords [lo, hi] of the row.
    let c = _mm256_set_epi64x((cr >> 64) as i64, cr as i64, (cr >> 64) as i64, cr as i64);
    let s = _mm256_set1_epi64x(i64::from(start_bit));
    let k64 = _mm256_set1_epi64x(64);
    // Shift counts; a negative one is a huge unsigned count: zero.
    let s_minus_64 = _mm256_sub_epi64(s, k64);
    let sixty_four_minus_s = _mm256_sub_epi64(k64, s);
    let t = _mm256_sub_epi64(_mm256_set1_epi64x(128), s);
    let lo_up = _mm256_bslli_epi128::<8>(c); // [0, lo]
    let hi_down = _mm256_bsrli_epi128::<8>(c); // [hi, 0]

    // cr << s: [lo << s, hi << s | lo >> (64 - s) | lo << (s - 64)].
    let cl = _mm256_or_si256(
        _mm256_or_si256(
            _mm256_sllv_epi64(c, s),
            _mm256_srlv_epi64(lo_up, sixty_four_minus_s),
        ),
        _mm256_sllv_epi64(lo_up, s_minus_64),
    );
    // cr >> t, t = 128 - s: [lo >> t | hi << (64 - t) | hi >> (t - 64), hi >> t],
    // where 64 - t = s - 64 and t - 64 = 64 - s; all zero for s = 0.
    let cr = _mm256_or_si256(
        _mm256_or_si256(_mm256_srlv_epi64(c, t), _mm256_sllv_epi64(hi_down, s_minus_64)),
        _mm256_srlv_epi64(hi_down, sixty_four_minus_s),
    );
    (cl, cr)
}

/// The lane-order parities of [`site128_lanes8_avx2`] for the row's halves
/// `cl` (over the words at `left`) and `cr` (at `right`), each in both
/// 128-bit lanes.
///
/// # Safety
///
/// The CPU must support AVX2, and `left` and `right` must each have 128
/// readable bytes.
#[target_feature(enable = "avx2")]
#[inline]
unsafe fn site128_lanes8_of_rows(left: *const u8, right: *const u8, cl: __m256i, cr: __m256i) -> u32 {
    // Columns `at / 16` and `at / 16 + 1`, one a 128-bit lane.
    let pair = |at: usize| {
        // SAFETY: `at + 32 <= 128`, and the caller guarantees 128 readable
        // bytes at `left` and at `right`.
        unsafe { masked_xor(left.add(at), right.add(at), cl, cr) }
    };
    let (a, b, c, d) = (pair(0), pair(32), pair(64), pair(96));
    // 128 to 64 bits: quadwords (per 128-bit lane k) columns k, 2 + k and
    // 4 + k, 6 + k.
    let ab = _mm256_xor_si256(_mm256_unpacklo_epi64(a, b), _mm256_unpackhi_epi64(a, b));
    let cd = _mm256_xor_si256(_mm256_unpacklo_epi64(c, d), _mm256_unpackhi_epi64(c, d));
    // 64 to 32 bits: dwords hold columns 0, 4, 2, 6, 1, 5, 3, 7.
    quadword_parities(ab, cd)
}

/// Bits `s..128` of a 128-bit word, set: entry `s` of [`RowTables::masks`], as
/// two little-endian quadwords (a 16-byte broadcast per query).
const fn row_masks() -> [[u64; 2]; 128] {
    let mut masks = [[0u64; 2]; 128];
    let mut s = 0;
    while s < 128 {
        masks[s] = if s < 64 {
            [!0u64 << s, !0u64]
        } else {
            [0, !0u64 << (s - 64)]
        };
        s += 1;
    }
    masks
}

/// The two tables of [`split_row_128`], in one static (one base address
/// for the query loops to keep in a register), aligned to a cache line so
/// that none of their 16- or 32-byte entries straddles two lines.
#[repr(C, align(64))]
struct RowTables {
    /// Entry `s`: the 128-bit word with bits `s..128` set (quadwords low,
    /// high), 2 KiB: the mask that splits a rotated coefficient row into
    /// its two halves.
    masks: [[u64; 2]; 128],
    /// Entry `b`: `[b, 0, 64 - b, 0]`, 2 KiB: the counts of the two
    /// quadword shifts that rotate a row by `b` bits, each read as the low
    /// quadword of a 16-byte memory operand (no move from a general
    /// register).
    counts: [[u64; 4]; 64],
}

/// [`RowTables`]' contents.
static ROW_TABLES: RowTables = RowTables {
    masks: row_masks(),
    counts: rotate_counts(),
};

/// [`RowTables::counts`].
const fn rotate_counts() -> [[u64; 4]; 64] {
    let mut counts = [[0u64; 4]; 64];
    let mut b = 0;
    while b < 64 {
        counts[b] = [b as u64, 0, 64 - b as u64, 0];
        b += 1;
    }
    counts
}

/// `cr << start_bit` and `cr >> (128 - start_bit)` (zero for `start_bit ==
/// 0`), each in both 128-bit lanes: the coefficient row's halves over the
/// start's block and the next one. Pre-condition: `start_bit < 128`.
///
/// One rotation and one mask, not two 128-bit shifts: `rotl128(cr, s)`
/// holds both halves (bit `i` of `cr` at `(i + s) mod 128`); its bits
/// `s..128` are `cr << s` and its bits `0..s` are `cr >> (128 - s)`, so a
/// table mask (bits `s..` set) and its complement split them. The rotation
/// by the start's quadword (`s >= 64`) swaps the row's quadwords in
/// general registers; the rotation by `s mod 64` is two uniform quadword
/// shifts (`vpsllq`/`vpsrlq`, whose count 64 gives zero: no branch for a
/// start at a quadword's first bit; counts from [`RowTables::counts`]) and an
/// OR.
#[target_feature(enable = "avx2")]
#[inline]
fn split_row_128(cr: u128, start_bit: u32) -> (__m256i, __m256i) {
    let (lo, hi) = (cr as u64, (cr >> 64) as u64);
    // Rotating by 64 swaps the quadwords.
    let (p, q) = if start_bit >= 64 { (hi, lo) } else { (lo, hi) };
    let c = _mm256_set_epi64x(q as i64, p as i64, q as i64, p as i64);
    let swapped = _mm256_shuffle_epi32::<0b0100_1110>(c);
    let counts = &ROW_TABLES.counts[start_bit as usize & 63];
    let mask = &ROW_TABLES.masks[start_bit as usize & 127];
    // SAFETY: `counts` is 32 readable bytes and `mask` 16 (`loadu` needs no
    // alignment).
    let (left_count, right_count, mask) = unsafe {
        (
            _mm_loadu_si128(counts.as_ptr().cast::<__m128i>()),
            _mm_loadu_si128(counts[2..].as_ptr().cast::<__m128i>()),
            _mm_loadu_si128(mask.as_ptr().cast::<__m128i>()),
        )
    };
    // rotl128([p, q], b) per lane, b = start_bit mod 64:
    // [p << b | q >> (64 - b), q << b | p >> (64 - b)].
    let rotated = _mm256_or_si256(
        _mm256_sll_epi64(c, left_count),
        _mm256_srl_epi64(swapped, right_count),
    );
    let mask = _mm256_broadcastsi128_si256(mask);
    (
        _mm256_and_si256(rotated, mask),
        _mm256_andnot_si256(mask, rotated),
    )
}

/// Bit `i` of the result: the parity of dword `i` of the quadwords of `x`
/// (the even dwords) and of `y` (the odd ones) folded to 32 bits: each
/// quadword of `x` to its low dword and of `y` to its high one, blended,
/// then five shift-XOR steps leave each dword's parity in its bit 31, and
/// `vmovmskps` gathers them.
#[target_feature(enable = "avx2")]
#[inline]
fn quadword_parities(x: __m256i, y: __m256i) -> u32 {
    let mut t = _mm256_blend_epi32::<0b1010_1010>(
        _mm256_xor_si256(x, _mm256_srli_epi64::<32>(x)),
        _mm256_xor_si256(y, _mm256_slli_epi64::<32>(y)),
    );
    t = _mm256_xor_si256(t, _mm256_slli_epi32::<16>(t));
    t = _mm256_xor_si256(t, _mm256_slli_epi32::<8>(t));
    t = _mm256_xor_si256(t, _mm256_slli_epi32::<4>(t));
    t = _mm256_xor_si256(t, _mm256_slli_epi32::<2>(t));
    t = _mm256_xor_si256(t, _mm256_slli_epi32::<1>(t));
    _mm256_movemask_ps(_mm256_castsi256_ps(t)) as u32
}

/// Whether a site's first `num_columns` (1 to 8) parities equal the low
/// bits of the result row `expected`: `lanes` is a short kernel's result
/// (eight parities in lane order) and `table` that kernel's lane-to-column
/// table ([`LANES_TO_COLUMNS`] or [`LANES_TO_COLUMNS_64`]). The one
/// comparison of every caller of the short kernels.
#[inline(always)]
pub(crate) fn lanes_match(lanes: u32, table: &[u8; 256], num_columns: u32, expected: u32) -> bool {
    let parities = u32::from(table[lanes as usize & 0xFF]);
    (parities ^ expected) & (0xFF >> (8 - num_columns)) == 0
}

/// [`LANE_COLUMN`] for [`site64_lanes8_avx2`].
pub(crate) const LANE_COLUMN_64: [u32; 8] = [0, 4, 1, 5, 2, 6, 3, 7];

/// [`LANES_TO_COLUMNS`] for [`site64_lanes8_avx2`].
pub(crate) const LANES_TO_COLUMNS_64: [u8; 256] = lanes_to_columns(LANE_COLUMN_64);

/// [`site128_lanes8_avx2`] for width 64: bit `i` of the result is the
/// parity of `(left_c & (cr << start_bit)) ^ (right_c & (cr >> (64 -
/// start_bit)))` (the right row zero for `start_bit == 0`) for column `c =
/// LANE_COLUMN_64[i]`, words of 8 bytes: four masked 256-bit loads, one
/// shift-and-blend to 32 bits, five shift-XOR steps, one `vmovmskps`.
///
/// # Safety
///
/// The CPU must support AVX2, `start_bit < 64`, and `left` and `right` must
/// each have 64 readable bytes.
#[target_feature(enable = "avx2")]
#[inline]
pub(crate) unsafe fn site64_lanes8_avx2(left: *const u8, right: *const u8, cr: u64, start_bit: u32) -> u32 {
    debug_assert!(start_bit < 64);
    let c = _mm256_set1_epi64x(cr as i64);
    let s = _mm256_set1_epi64x(i64::from(start_bit));
    // Counts of 64 or more give zero: the right row for `start_bit == 0`.
    let cl = _mm256_sllv_epi64(c, s);
    let cr = _mm256_srlv_epi64(c, _mm256_sub_epi64(_mm256_set1_epi64x(64), s));
    // SAFETY: `32 + 32 <= 64` bytes at `left` and at `right`, as the caller
    // guarantees.
    let (x, y) = unsafe {
        (
            masked_xor(left, right, cl, cr),
            masked_xor(left.add(32), right.add(32), cl, cr),
        )
    };
    // 64 to 32 bits: dwords hold columns 0, 4, 1, 5, 2, 6, 3, 7.
    quadword_parities(x, y)
}

/// `(left & cl) ^ (right & cr)` over the 32 bytes at `left` and at
/// `right`. Shared by the AVX2 site kernels.
///
/// # Safety
///
/// The CPU must support AVX2, and both pointers must have 32 readable
/// bytes (`loadu` needs no alignment).
#[target_feature(enable = "avx2")]
#[inline]
unsafe fn masked_xor(left: *const u8, right: *const u8, cl: __m256i, cr: __m256i) -> __m256i {
    // SAFETY: the caller guarantees 32 readable bytes at each pointer.
    let (l, r) = unsafe {
        (
            _mm256_loadu_si256(left.cast::<__m256i>()),
            _mm256_loadu_si256(right.cast::<__m256i>()),
        )
    };
    _mm256_xor_si256(_mm256_and_si256(l, cl), _mm256_and_si256(r, cr))
}

/// The parities of the eight 32-bit lanes of `folds`, gathered by
/// `to_column_order` (lane `i` of the result is lane `to_column_order[i]`
/// of `folds`): bit `i` of the result. Shared by the AVX2 site kernels (a
/// safe function: only code compiled for AVX2 can call it without
/// `unsafe`).
#[target_feature(enable = "avx2")]
#[inline]
fn dword_parities(folds: __m256i, to_column_order: __m256i) -> u32 {
    let mut t = folds;
    t = _mm256_xor_si256(t, _mm256_srli_epi32::<16>(t));
    t = _mm256_xor_si256(t, _mm256_srli_epi32::<8>(t));
    t = _mm256_xor_si256(t, _mm256_srli_epi32::<4>(t));
    t = _mm256_xor_si256(t, _mm256_srli_epi32::<2>(t));
    t = _mm256_xor_si256(t, _mm256_srli_epi32::<1>(t));
    let t = _mm256_permutevar8x32_epi32(t, to_column_order);
    _mm256_movemask_ps(_mm256_castsi256_ps(_mm256_slli_epi32::<31>(t))) as u32
}

/// [`site128_parities_avx2`] with AVX-512 (`avx512f` and
/// `avx512vpopcntdq`): eight columns in two 512-bit registers per block,
/// folded to 64 bits and counted with one `vpopcntq`.
///
/// # Safety
///
/// The CPU must support `avx512f` and `avx512vpopcntdq`, `groups <= 4`,
/// and `words` must hold at least `right_offset + 128 * groups` bytes.
#[target_feature(enable = "avx512f,avx512vpopcntdq")]
#[inline]
pub(crate) unsafe fn site128_parities_avx512(
    words: &[u8],
    cr_left: u128,
    cr_right: u128,
    right_offset: usize,
    groups: usize,
) -> u32 {
    debug_assert!(groups <= 4 && words.len() >= right_offset + 128 * groups);
    let splat = |x: u128| {
        let (lo, hi) = (x as i64, (x >> 64) as i64);
        _mm512_set_epi64(hi, lo, hi, lo, hi, lo, hi, lo)
    };
    let (cl, cr) = (splat(cr_left), splat(cr_right));
    let left = words.as_ptr();
    // SAFETY: the caller guarantees `right_offset + 128 * groups <= words.len()`.
    let right = unsafe { left.add(right_offset) };
    // Four columns at byte `at`: `(left & cl) ^ (right & cr)`.
    let four = |at: usize| {
        // SAFETY: `at + 64 <= 128 * groups`, and the caller guarantees that
        // both `left` and `right` have `128 * groups` readable bytes (`loadu`
        // needs no alignment).
        let (l, r) = unsafe {
            (
                _mm512_loadu_si512(left.add(at).cast()),
                _mm512_loadu_si512(right.add(at).cast()),
            )
        };
        // 0x78: a ^ (b & c) (bit `4a + 2b + c` of the table), with a = l & cl,
        // b = r, c = cr.
        _mm512_ternarylogic_epi64::<0x78>(_mm512_and_si512(l, cl), r, cr)
    };
    let low_words = _mm512_setr_epi64(0, 2, 4, 6, 8, 10, 12, 14);
    let high_words = _mm512_setr_epi64(1, 3, 5, 7, 9, 11, 13, 15);
    let one = _mm512_set1_epi64(1);
    let mut bits = 0u32;
    for g in 0..groups {
        let (a, b) = (four(128 * g), four(128 * g + 64));
        // Quadword `i`: column `i` folded to 64 bits.
        let folded = _mm512_xor_si512(
            _mm512_permutex2var_epi64(a, low_words, b),
            _mm512_permutex2var_epi64(a, high_words, b),
        );
        let group = _mm512_test_epi64_mask(_mm512_popcnt_epi64(folded), one);
        bits |= u32::from(group) << (8 * g);
    }
    bits
}

/// The parities of `8 * groups` columns of a width-64 Ribbon query site,
/// as [`site128_parities_avx2`] for 64-bit words: bit `i` is the parity of
/// `(left_i & cr_left) ^ (right_i & cr_right)`, words of 8 bytes.
///
/// A deliberate twin of [`site128_parities_avx2`]: the same frame (masked
/// XOR of the two blocks, fold, gather into column order), but a fold and a
/// lane order of its own for each word width, whose shifts, blend masks and
/// shuffles are compile-time constants of the intrinsics.
///
/// # Safety
///
/// The CPU must support AVX2, `groups <= 4`, and `words` must hold at least
/// `right_offset + 64 * groups` bytes.
#[target_feature(enable = "avx2")]
#[inline]
pub(crate) unsafe fn site64_parities_avx2(
    words: &[u8],
    cr_left: u64,
    cr_right: u64,
    right_offset: usize,
    groups: usize,
) -> u32 {
    debug_assert!(groups <= 4 && words.len() >= right_offset + 64 * groups);
    let (cl, cr) = (
        _mm256_set1_epi64x(cr_left as i64),
        _mm256_set1_epi64x(cr_right as i64),
    );
    let left = words.as_ptr();
    // SAFETY: the caller guarantees `right_offset + 64 * groups <= words.len()`.
    let right = unsafe { left.add(right_offset) };
    // Four columns at byte `at`, each folded to 32 bits (in the low half of
    // its quadword).
    let fold4 = |at: usize| {
        // SAFETY: `at + 32 <= 64 * groups`, and the caller guarantees that
        // both `left` and `right` have `64 * groups` readable bytes.
        let x = unsafe { masked_xor(left.add(at), right.add(at), cl, cr) };
        _mm256_xor_si256(x, _mm256_srli_epi64::<32>(x))
    };
    // Dwords hold columns 0, 4, 1, 5, 2, 6, 3, 7; this gathers them back
    // into column order.
    let to_column_order = _mm256_setr_epi32(0, 2, 4, 6, 1, 3, 5, 7);
    let mut bits = 0u32;
    for g in 0..groups {
        let at = 64 * g;
        let folds = _mm256_blend_epi32::<0b1010_1010>(fold4(at), _mm256_slli_epi64::<32>(fold4(at + 32)));
        bits |= dword_parities(folds, to_column_order) << (8 * g);
    }
    bits
}

/// [`site64_parities_avx2`] with AVX-512: eight columns in one register,
/// one `vpopcntq`.
///
/// # Safety
///
/// The CPU must support `avx512f` and `avx512vpopcntdq`, `groups <= 4`,
/// and `words` must hold at least `right_offset + 64 * groups` bytes.
#[target_feature(enable = "avx512f,avx512vpopcntdq")]
#[inline]
pub(crate) unsafe fn site64_parities_avx512(
    words: &[u8],
    cr_left: u64,
    cr_right: u64,
    right_offset: usize,
    groups: usize,
) -> u32 {
    debug_assert!(groups <= 4 && words.len() >= right_offset + 64 * groups);
    let (cl, cr) = (
        _mm512_set1_epi64(cr_left as i64),
        _mm512_set1_epi64(cr_right as i64),
    );
    let one = _mm512_set1_epi64(1);
    let left = words.as_ptr();
    // SAFETY: the caller guarantees `right_offset + 64 * groups <= words.len()`.
    let right = unsafe { left.add(right_offset) };
    let mut bits = 0u32;
    for g in 0..groups {
        // SAFETY: `64 * g + 64 <= 64 * groups`, and the caller guarantees
        // that both `left` and `right` have `64 * groups` readable bytes.
        let (l, r) = unsafe {
            (
                _mm512_loadu_si512(left.add(64 * g).cast()),
                _mm512_loadu_si512(right.add(64 * g).cast()),
            )
        };
        // 0x78: a ^ (b & c), as in `site128_parities_avx512`.
        let x = _mm512_ternarylogic_epi64::<0x78>(_mm512_and_si512(l, cl), r, cr);
        let group = _mm512_test_epi64_mask(_mm512_popcnt_epi64(x), one);
        bits |= u32::from(group) << (8 * g);
    }
    bits
}

/// 0: not checked yet; 1: no AVX-512 popcount; 2: `avx512f` and
/// `avx512vpopcntdq`.
static AVX512_POPCNT: AtomicU8 = AtomicU8::new(0);

/// Whether the CPU has `avx512f` and `avx512vpopcntdq`: detected once,
/// then one relaxed atomic load.
#[inline(always)]
pub(crate) fn avx512_popcnt_detected() -> bool {
    cfg!(all(
        target_feature = "avx512f",
        target_feature = "avx512vpopcntdq"
    )) || cached_feature(&AVX512_POPCNT, || {
        runtime_detected!("avx512f") && runtime_detected!("avx512vpopcntdq")
    })
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::core::alg::CoeffRow;
    use crate::core::hash::split_mix64;
    use crate::core::prelude::*;
    use core::arch::x86_64::_mm256_storeu_si256;

    /// The short width-128 kernel against the obvious per-column parity, and
    /// against the eight-columns-at-a-time kernel: random words and rows,
    /// sparse, dense and random, for every column count it answers (1 to 8;
    /// the bits of columns past the count are the next words' parities,
    /// compared too) and both halves of a site: a start at the block's first
    /// slot (right row zero) and every other start (a row shifted across
    /// two blocks, which the kernel shifts itself).
    #[test]
    fn short_kernel_equals_the_portable_parities() {
        if !avx2_detected() {
            return;
        }
        let mut state = 11u64;
        let rounds = if cfg!(miri) { 4 } else { 4_000 };
        for round in 0..rounds {
            let columns = 1 + round % 8;
            // The words of two blocks of `columns` columns, and the 8
            // columns the kernel reads from the second block's start.
            let mut words = vec![0u8; 16 * (columns + 8)];
            for b in &mut words {
                let r = split_mix64(&mut state);
                *b = match round % 5 {
                    0 => 0,
                    1 => 0xFF,
                    2 => (r & (r >> 8)) as u8,
                    _ => r as u8,
                };
            }
            let cr = u128::from(split_mix64(&mut state)) << 64 | u128::from(split_mix64(&mut state)) | 1;
            let start_bit = if round % 3 == 0 {
                0
            } else {
                1 + (split_mix64(&mut state) % 127) as u32
            };
            let (cr_left, cr_right, right_offset) = if start_bit == 0 {
                (cr, 0, 0)
            } else {
                (cr << start_bit, cr >> (128 - start_bit), 16 * columns)
            };
            let word = |at: usize| u128::load_le(&words[at..]);
            let want: u32 = (0..8)
                .map(|c| {
                    let p = ((word(16 * c) & cr_left) ^ (word(right_offset + 16 * c) & cr_right)).parity();
                    p << c
                })
                .sum();
            // The reader's call: the right words of the next block even for
            // a start at the block's first slot (the right row is then zero).
            // SAFETY: AVX2 detected above; `start_bit < 128`; `words` has
            // 16 * (columns + 8) bytes, so 128 from both offsets.
            let lanes = unsafe {
                site128_lanes8_avx2(words.as_ptr(), words.as_ptr().add(16 * columns), cr, start_bit)
            };
            assert!(lanes <= 0xFF, "round {round}");
            assert_eq!(
                u32::from(LANES_TO_COLUMNS[lanes as usize]),
                want,
                "round {round}: {columns} columns, start bit {start_bit}"
            );
            // SAFETY: as above.
            let rotated = unsafe {
                site128_lanes8_rotated_avx2(words.as_ptr(), words.as_ptr().add(16 * columns), cr, start_bit)
            };
            assert_eq!(rotated, lanes, "round {round}");
            // SAFETY: as above; `groups = 1` reads the same 128 bytes.
            let eight = unsafe { site128_parities_avx2(&words, cr_left, cr_right, right_offset, 1) };
            assert_eq!(eight, want, "round {round}");
        }
    }

    /// [`split_row_128`] gives `cr << s` and `cr >> (128 - s)` (zero for
    /// `s == 0`) in both 128-bit lanes, for every start `s` in `0..128` and
    /// random, sparse and dense rows.
    #[test]
    fn split_row_is_the_two_shifts_at_every_start() {
        if !avx2_detected() {
            return;
        }
        let mut state = 3u64;
        let rounds = if cfg!(miri) { 3 } else { 64 };
        for round in 0..rounds {
            let random = u128::from(split_mix64(&mut state)) << 64 | u128::from(split_mix64(&mut state));
            let cr = match round {
                0 => !0,
                1 => 1,
                2 => 1 << 127 | 1,
                _ => random,
            };
            for s in 0..128u32 {
                // SAFETY: AVX2 detected above.
                let (left, right) = unsafe { split_row_128(cr, s) };
                let lanes = |x: __m256i| {
                    let mut q = [0u64; 4];
                    // SAFETY: AVX2 detected above; `q` is 32 writable bytes.
                    unsafe { _mm256_storeu_si256(q.as_mut_ptr().cast::<__m256i>(), x) };
                    [
                        u128::from(q[0]) | u128::from(q[1]) << 64,
                        u128::from(q[2]) | u128::from(q[3]) << 64,
                    ]
                };
                let want_right = if s == 0 { 0 } else { cr >> (128 - s) };
                assert_eq!(lanes(left), [cr << s; 2], "round {round}, start {s}");
                assert_eq!(lanes(right), [want_right; 2], "round {round}, start {s}");
                // SAFETY: AVX2 detected above.
                let (left, right) = unsafe { shift_row_128(cr, s) };
                assert_eq!(lanes(left), [cr << s; 2], "round {round}, start {s}");
                assert_eq!(lanes(right), [want_right; 2], "round {round}, start {s}");
            }
        }
    }

    /// The table puts lane `i` at column `LANE_COLUMN[i]`, a permutation.
    #[test]
    fn lanes_to_columns_is_the_lane_permutation() {
        let mut seen = 0u32;
        for (i, &c) in LANE_COLUMN.iter().enumerate() {
            assert_eq!(u32::from(LANES_TO_COLUMNS[1 << i]), 1 << c);
            seen |= 1 << c;
        }
        assert_eq!(seen, 0xFF);
        for (x, &columns) in LANES_TO_COLUMNS.iter().enumerate() {
            let by_bits: u8 = (0..8)
                .filter(|i| x >> i & 1 != 0)
                .map(|i| 1u8 << LANE_COLUMN[i])
                .sum();
            assert_eq!(columns, by_bits);
        }
    }
}
