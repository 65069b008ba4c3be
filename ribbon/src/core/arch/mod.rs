//! Target-specific fast paths, each beside its portable twin.
//!
//! As in the `memchr` crate: one module per target ([`x86_64`]), the
//! accelerated code compiled into every build with `#[target_feature]`,
//! and a runtime check (`is_x86_feature_detected!`) that picks it where
//! the CPU has the feature. A baseline x86-64 build (what CI compiles) thus
//! runs the AVX2 path on an AVX2 machine, and tests compare every fast path
//! with its portable twin in the same build, so both always run.
//!
//! The check is made once and cached: a reader records its [`BloomKernel`]
//! or [`RibbonKernel`] when it is created, so a query pays one predictable
//! branch.
//!
//! Four things live here:
//!
//! * [`prefetch`]: the one memory-prefetch hint every batched query and the
//!   Bloom builder use: `prefetcht0` on x86-64 (into every cache level), a
//!   no-op on other targets. It never changes an answer. RocksDB uses
//!   locality 1 (`prefetcht2`); with `prefetcht2` this crate's batched
//!   Ribbon queries measured 0.95-1.05 of RocksDB's time against
//!   0.73-0.75 with `prefetcht0` (criterion `query/*/batched`, same run;
//!   Bloom unchanged at 0.40-0.53). A batched Ribbon query prefetches its
//!   whole segment range ([`prefetch_lines`], as RocksDB does): up to five
//!   lines at width 128, of which only the first was prefetched before;
//!   at 10^6 keys the two measured within noise of each other, at 10^7
//!   (the filter out of the caches) the whole range was never slower.
//! * [`BloomKernel`]: the check of one FastLocalBloom cache line (RocksDB's
//!   `HashMayMatchPrepared`), portable or with AVX2 (RocksDB's `__AVX2__`
//!   code, eight probes at a time).
//! * [`RibbonKernel`]: the result columns of one Ribbon query site of width
//!   128 or 64, portable (one column at a time, stopping at the first that
//!   differs, as RocksDB's query) or with AVX2 or AVX-512 (eight columns at
//!   a time, no branch on the answer; RocksDB has no vector Ribbon query).
//!   A non-member's query usually stops after one or two columns, but at a
//!   branch the CPU cannot predict, and a member's reads every column; the
//!   vector kernels do the same work for both and let consecutive queries
//!   overlap. Single / batched queries of random hashes against an 8 MB
//!   Standard128 filter (in the last-level cache), ns: portable 22.6 /
//!   18.4, AVX2 12.0 / 9.1, AVX-512 11.5 / 8.5.
//! * [`short_site_answer`]: the answer of a site of at most eight columns
//!   (every FP rate down to 1/256) of width 128 or 64 by the short AVX2
//!   kernels (`x86_64::site128_lanes8_avx2`, `site64_lanes8_avx2`): the
//!   row shifted in the vector unit, no cross-lane shuffle, five argument
//!   registers. The standalone Standard and Balanced queries use it before
//!   the core's query; Standard128's reader calls the width-128 kernel
//!   itself (inlined into its AVX2 batch loops). What they gain, and what
//!   bounds them, is measured in
//!   [`docs/benchmarks-kernels.md`](https://github.com/rocks-ribbon/rocks-ribbon/blob/main/docs/benchmarks-kernels.md).

use crate::core::prelude::*;

#[cfg(target_arch = "x86_64")]
pub(crate) mod x86_64;

/// Hints the CPU to fetch the cache line holding `data[offset]` for a read
/// soon. Does nothing when `offset` is outside `data` or the target has no
/// prefetch hint; never reads memory architecturally.
#[inline(always)]
pub(crate) fn prefetch(data: &[u8], offset: usize) {
    if let Some(byte) = data.get(offset) {
        #[cfg(target_arch = "x86_64")]
        x86_64::prefetch(byte);
        #[cfg(not(target_arch = "x86_64"))]
        let _ = byte;
    }
}

/// [`prefetch`] for the first and the last byte of `data[offset..offset +
/// len]` (`len >= 1`), as RocksDB prefetches a Bloom cache line that may
/// straddle two hardware lines.
#[inline(always)]
pub(crate) fn prefetch_range(data: &[u8], offset: usize, len: usize) {
    prefetch(data, offset);
    prefetch(data, offset.saturating_add(len - 1));
}

/// [`prefetch`] for every 64-byte line of `data[offset..offset + len]`
/// (`len >= 1`): a step of a line, then the last byte, as RocksDB's
/// `PrefetchSegmentRange`.
#[inline(always)]
pub(crate) fn prefetch_lines(data: &[u8], offset: usize, len: usize) {
    let last = offset.saturating_add(len - 1);
    let mut at = offset;
    while at < last {
        prefetch(data, at);
        at += BLOOM_LINE_BYTES;
    }
    prefetch(data, last);
}

/// Bits of one FastLocalBloom cache line: the probes stay inside it.
pub(crate) const BLOOM_LINE_BYTES: usize = 64;

/// 32-bit golden ratio; successive FastLocalBloom probes multiply by it.
pub(crate) const GOLDEN: u32 = 0x9e37_79b9;

/// Which implementation checks a FastLocalBloom cache line.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum BloomKernel {
    /// Portable Rust, one probe at a time.
    Portable,
    /// AVX2, eight probes at a time (x86-64 CPUs with AVX2 only).
    Avx2,
}

impl BloomKernel {
    /// The fastest kernel this CPU runs, detected on the first call and
    /// cached (an atomic load afterwards).
    #[inline]
    #[must_use]
    pub fn detected() -> Self {
        #[cfg(target_arch = "x86_64")]
        if x86_64::avx2_detected() {
            return BloomKernel::Avx2;
        }
        BloomKernel::Portable
    }

    /// Every kernel this CPU runs, portable first (for tests that compare
    /// them).
    #[must_use]
    pub fn available() -> Vec<Self> {
        let mut kernels = vec![BloomKernel::Portable];
        if BloomKernel::detected() == BloomKernel::Avx2 {
            kernels.push(BloomKernel::Avx2);
        }
        kernels
    }

    /// Whether all `num_probes` bits that `h2` selects are set in `line`
    /// (`num_probes <= 0` gives true). `Avx2` on a CPU without AVX2 runs
    /// the portable check: same answer, never an illegal instruction.
    #[inline]
    #[must_use]
    pub fn line_may_match(self, h2: u32, num_probes: i32, line: &[u8; BLOOM_LINE_BYTES]) -> bool {
        match self {
            BloomKernel::Portable => portable_line_may_match(h2, num_probes, line),
            // Anyone can name `BloomKernel::Avx2` (it is a public enum), so
            // the CPU is checked here, not trusted: a relaxed atomic load,
            // or nothing in a build that targets AVX2.
            #[cfg(target_arch = "x86_64")]
            BloomKernel::Avx2 if x86_64::avx2_detected() => {
                // SAFETY: `avx2_detected` just confirmed that this CPU has
                // AVX2 (`is_x86_feature_detected!`, or a `+avx2` target).
                unsafe { x86_64::line_may_match_avx2(h2, num_probes, line) }
            }
            BloomKernel::Avx2 => portable_line_may_match(h2, num_probes, line),
        }
    }
}

/// Which implementation computes the result-column parities of a Ribbon
/// query site of width 128 (Standard128, RocksDB's Ribbon format) or 64
/// (Balanced Ribbon, standalone filters); other widths always run the
/// portable code.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum RibbonKernel {
    /// Portable Rust (in
    /// [`crate::core::solution::InterleavedLayout::filter_query_with`]): one
    /// column at a time, stopping at the first that differs.
    Portable,
    /// AVX2, eight columns at a time without a branch on the answer
    /// (x86-64 CPUs with AVX2 only).
    Avx2,
    /// AVX-512 with its population count (`avx512f`, `avx512vpopcntdq`):
    /// eight columns at a time, one `vpopcntq`.
    Avx512,
}

impl RibbonKernel {
    /// The fastest kernel this CPU runs, detected on the first call and
    /// cached (an atomic load afterwards).
    #[inline]
    #[must_use]
    pub fn detected() -> Self {
        #[cfg(target_arch = "x86_64")]
        if x86_64::avx512_popcnt_detected() {
            return RibbonKernel::Avx512;
        }
        #[cfg(target_arch = "x86_64")]
        if x86_64::avx2_detected() {
            return RibbonKernel::Avx2;
        }
        RibbonKernel::Portable
    }

    /// Every kernel this CPU runs, portable first (for tests and benchmarks
    /// that compare them).
    #[must_use]
    pub fn available() -> Vec<Self> {
        let mut kernels = vec![RibbonKernel::Portable];
        #[cfg(target_arch = "x86_64")]
        {
            if x86_64::avx2_detected() {
                kernels.push(RibbonKernel::Avx2);
            }
            if x86_64::avx512_popcnt_detected() {
                kernels.push(RibbonKernel::Avx512);
            }
        }
        kernels
    }

    /// The result-column parities of an interleaved query site computed by
    /// this kernel, where one exists for the width of `C` (64 and 128
    /// bits): bit `i` is the parity of column `i` for coefficient row `cr`
    /// at `start_bit`, the site's words beginning at `words[0]`, as
    /// [`crate::core::solution::InterleavedLayout::filter_query_with`] computes it
    /// one column at a time. `None` where the kernel does not answer: the
    /// portable kernel, another width, a CPU without the kernel's features,
    /// more than 32 columns, or too few bytes in `words` (see
    /// `vector_parities`); the caller then runs the portable code. The
    /// width is told apart by type, which the compiler resolves.
    #[inline(always)]
    pub(crate) fn site_parities<C: crate::core::alg::CoeffRow>(
        self,
        words: &[u8],
        num_columns: u32,
        start_bit: u32,
        cr: C,
    ) -> Option<u32> {
        #[cfg(target_arch = "x86_64")]
        {
            let any: &dyn core::any::Any = &cr;
            if let Some(&cr) = any.downcast_ref::<u128>() {
                return self.vector_parities(
                    words,
                    num_columns,
                    start_bit,
                    cr,
                    x86_64::site128_parities_avx512,
                    x86_64::site128_parities_avx2,
                );
            }
            if let Some(&cr) = any.downcast_ref::<u64>() {
                return self.vector_parities(
                    words,
                    num_columns,
                    start_bit,
                    cr,
                    x86_64::site64_parities_avx512,
                    x86_64::site64_parities_avx2,
                );
            }
        }
        let _ = (words, num_columns, start_bit, cr);
        None
    }

    /// The checks both widths share: at most 32 columns, a kernel this CPU
    /// runs, and room in `words` for whole groups of eight columns from
    /// both blocks (the last blocks of a filter may not have it; the
    /// caller then runs the portable query). The kernels take the
    /// coefficient rows before the counts, so that both 128-bit rows travel
    /// in registers: with them last, the second went through the stack and
    /// its 16-byte load waited for two 8-byte stores (a store-forwarding
    /// stall that perf put at 39 % of the AVX-512 kernel's time).
    #[cfg(target_arch = "x86_64")]
    #[inline(always)]
    fn vector_parities<C: crate::core::alg::CoeffRow>(
        self,
        words: &[u8],
        num_columns: u32,
        start_bit: u32,
        cr: C,
        avx512: unsafe fn(&[u8], C, C, usize, usize) -> u32,
        avx2: unsafe fn(&[u8], C, C, usize, usize) -> u32,
    ) -> Option<u32> {
        if self == RibbonKernel::Portable || num_columns > 32 {
            return None;
        }
        let groups = num_columns.div_ceil(8) as usize;
        // Without a start inside the block there are no right words: the
        // kernel reads the left ones twice, masked to nothing.
        let (cr_left, cr_right, right_offset) = if start_bit == 0 {
            (cr, C::ZERO, 0)
        } else {
            (
                cr << start_bit,
                cr >> (C::BITS - start_bit),
                C::BYTES * num_columns as usize,
            )
        };
        if words.len() < right_offset + 8 * C::BYTES * groups {
            return None;
        }
        if self == RibbonKernel::Avx512 && x86_64::avx512_popcnt_detected() {
            // SAFETY: the CPU has `avx512f` and `avx512vpopcntdq` (just
            // detected); `groups <= 4` as `num_columns <= 32`; `words` holds
            // `right_offset + 8 * C::BYTES * groups` bytes, checked above.
            return Some(unsafe { avx512(words, cr_left, cr_right, right_offset, groups) });
        }
        if x86_64::avx2_detected() {
            // SAFETY: the CPU has AVX2 (just detected); the same bounds as
            // above.
            return Some(unsafe { avx2(words, cr_left, cr_right, right_offset, groups) });
        }
        None
    }
}

/// The answer of a Ribbon query site of width 128 or 64 by the short AVX2
/// kernels (`site128_lanes8_avx2`, `site64_lanes8_avx2`): whether the
/// parities of its `num_columns` columns, for coefficient row `cr` at
/// `start_bit`, equal the low bits of `expected`, the site's words
/// beginning at segment `segment_num` of `data` (as
/// [`crate::core::solution::InterleavedLayout::filter_query_with`] reads
/// them). `None` where they do not answer: another width, more than 8
/// columns (FP rates below 1/256), fewer than `16 * w` bits of `data` from
/// the site on (the last blocks of a filter), a CPU without AVX2, or
/// another target; the caller then runs the core's query. The width is
/// told apart by type, which the compiler resolves.
///
/// Called from code compiled without AVX2, it is one call into the kernel
/// per query, with its arguments in registers; from code compiled with
/// AVX2, the kernel is inlined.
#[inline(always)]
#[allow(unused_variables)]
pub(crate) fn short_site_answer<C: crate::core::alg::CoeffRow>(
    data: &[u8],
    segment_num: u32,
    num_columns: u32,
    start_bit: u32,
    cr: C,
    expected: u32,
) -> Option<bool> {
    #[cfg(target_arch = "x86_64")]
    if num_columns <= 8 {
        let any: &dyn core::any::Any = &cr;
        if let Some(&cr) = any.downcast_ref::<u128>() {
            let first = segment_num as usize * 16;
            if first.checked_add(256)? <= data.len() && x86_64::avx2_detected() {
                let left = data[first..].as_ptr();
                // SAFETY: AVX2 was just detected; `start_bit < 128` (a
                // site's offset in its block); `data` has 256 bytes from
                // `first`, so 128 at `left` and at `left + 16 * num_columns`
                // (`num_columns <= 8`).
                let lanes = unsafe {
                    x86_64::site128_lanes8_avx2(left, left.add(16 * num_columns as usize), cr, start_bit)
                };
                return Some(x86_64::lanes_match(
                    lanes,
                    &x86_64::LANES_TO_COLUMNS,
                    num_columns,
                    expected,
                ));
            }
        } else if let Some(&cr) = any.downcast_ref::<u64>() {
            let first = segment_num as usize * 8;
            if first.checked_add(128)? <= data.len() && x86_64::avx2_detected() {
                let left = data[first..].as_ptr();
                // SAFETY: as above, for 64-bit words: `start_bit < 64`, and
                // 64 bytes at `left` and at `left + 8 * num_columns`.
                let lanes = unsafe {
                    x86_64::site64_lanes8_avx2(left, left.add(8 * num_columns as usize), cr, start_bit)
                };
                return Some(x86_64::lanes_match(
                    lanes,
                    &x86_64::LANES_TO_COLUMNS_64,
                    num_columns,
                    expected,
                ));
            }
        }
    }
    None
}

/// The bits of a 512-bit FastLocalBloom cache line that the probes of
/// `h2` select, in probe order: probe `i` is bit `(h2 * GOLDEN^i) >> 23`
/// (RocksDB's `AddHashPrepared`/`HashMayMatchPrepared`). The one statement
/// of that rule; the AVX2 kernel computes the same bits eight at a time and
/// is tested against it. `num_probes <= 0` selects none.
#[inline(always)]
pub(crate) fn probe_bits(h2: u32, num_probes: i32) -> impl Iterator<Item = usize> {
    let mut h = h2;
    (0..num_probes.max(0)).map(move |_| {
        let bit = (h >> (32 - 9)) as usize;
        h = h.wrapping_mul(GOLDEN);
        bit
    })
}

/// The portable FastLocalBloom line check (RocksDB's scalar
/// `HashMayMatchPrepared`): every bit of [`probe_bits`] is set.
#[inline(always)]
pub(crate) fn portable_line_may_match(h2: u32, num_probes: i32, line: &[u8; BLOOM_LINE_BYTES]) -> bool {
    probe_bits(h2, num_probes).all(|bit| line[bit >> 3] & (1u8 << (bit & 7)) != 0)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::core::hash::split_mix64;

    /// Every kernel gives the portable answer, for every probe count
    /// (including the reserved ones a corrupt trailer can carry) and lines
    /// from empty to full.
    #[test]
    fn every_kernel_answers_as_the_portable_one() {
        let kernels = BloomKernel::available();
        // Without std, only compile-time target features pick a kernel.
        if cfg!(all(target_arch = "x86_64", feature = "std"))
            && std::env::var_os("RIBBON_REQUIRE_AVX2").is_some()
        {
            assert!(
                kernels.contains(&BloomKernel::Avx2),
                "RIBBON_REQUIRE_AVX2 is set but AVX2 is not detected"
            );
        }
        let mut state = 1u64;
        let rounds = if cfg!(miri) { 40 } else { 20_000 };
        let (mut yes, mut no) = (0, 0);
        for round in 0..rounds {
            let mut line = [0u8; BLOOM_LINE_BYTES];
            // Dense lines, so that many probes can all hit.
            let density = round % 4;
            for b in &mut line {
                let r = split_mix64(&mut state);
                *b = match density {
                    0 => r as u8,
                    1 => (r | (r >> 8)) as u8,
                    2 => (r | (r >> 8) | (r >> 16) | (r >> 24)) as u8,
                    _ => 0xFF,
                };
            }
            let h2 = split_mix64(&mut state) as u32;
            for num_probes in [-1, 0, 1, 2, 3, 6, 7, 8, 9, 15, 16, 17, 24, 30, 31, 100] {
                let want = portable_line_may_match(h2, num_probes, &line);
                if want {
                    yes += 1;
                } else {
                    no += 1;
                }
                for &k in &kernels {
                    assert_eq!(
                        k.line_may_match(h2, num_probes, &line),
                        want,
                        "{k:?} probes {num_probes}"
                    );
                }
            }
        }
        assert!(
            yes > rounds && no > rounds,
            "both answers exercised: {yes} yes, {no} no"
        );
    }

    #[test]
    fn prefetch_outside_the_data_is_a_no_op() {
        let data = [1u8; 10];
        prefetch(&data, 0);
        prefetch(&data, 9);
        prefetch(&data, 10);
        prefetch(&data, usize::MAX);
        prefetch_range(&data, 5, 64);
        prefetch_range(&data, usize::MAX, 64);
        prefetch(&[], 0);
    }
}
