//! Queries (RocksDB's `FastLocalBloomBitsReader`).

use super::{FastLocalBloomImpl, CACHE_LINE_BYTES};
use crate::core::arch::{self, BloomKernel};
use crate::core::batch::answer_in_batches;
use crate::core::math::{lower32of64, upper32of64};
use crate::rocksdb::trailer::rocksdb_visible;

/// Queries a FastLocalBloom filter (RocksDB's `FastLocalBloomBitsReader`).
///
/// Borrowed filter data without trailer plus the trailer's `num_probes`;
/// usually made by [`super::parse_trailer`]. Never reads outside `data`: if
/// `data` is shorter than one 64-byte cache line (only possible for corrupt
/// filters, where RocksDB reads past the filter), missing bits count as
/// set.
///
/// The reader checks cache lines with the fastest [`BloomKernel`] the CPU
/// runs, detected when it is made; [`with_kernel`](Self::with_kernel)
/// picks another (every kernel answers the same).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FastLocalBloomReader<'a> {
    data: &'a [u8],
    num_probes: i32,
    len_bytes: u32,
    kernel: BloomKernel,
}

impl<'a> FastLocalBloomReader<'a> {
    /// A reader over `data` (filter bytes before the trailer) probing
    /// `num_probes` bits per key (`<= 0` makes every query match). Like
    /// RocksDB, the length is taken modulo 2^32.
    #[must_use]
    pub fn new(data: &'a [u8], num_probes: i32) -> Self {
        let data = rocksdb_visible(data);
        #[allow(clippy::cast_possible_truncation)]
        let len_bytes = data.len() as u32;
        FastLocalBloomReader {
            data,
            num_probes,
            len_bytes,
            kernel: BloomKernel::detected(),
        }
    }

    /// The same reader, checking cache lines with `kernel`, which must be
    /// one of [`BloomKernel::available`] (another falls back to the
    /// portable kernel).
    #[must_use]
    pub fn with_kernel(mut self, kernel: BloomKernel) -> Self {
        self.kernel = if BloomKernel::available().contains(&kernel) {
            kernel
        } else {
            BloomKernel::Portable
        };
        self
    }

    /// The kernel that checks cache lines.
    #[must_use]
    pub fn kernel(&self) -> BloomKernel {
        self.kernel
    }

    /// The filter data (without trailer).
    #[must_use]
    pub fn data(&self) -> &'a [u8] {
        self.data
    }

    /// Probes per key.
    #[must_use]
    pub fn num_probes(&self) -> i32 {
        self.num_probes
    }

    /// Whether the key with 64-bit hash `h` (`GetSliceHash64`) may have been
    /// added; `false` means it definitely was not.
    #[inline]
    #[must_use]
    pub fn may_match_hash(&self, h: u64) -> bool {
        FastLocalBloomImpl::hash_may_match_with(
            self.kernel,
            lower32of64(h),
            upper32of64(h),
            self.len_bytes,
            self.num_probes,
            self.data,
        )
    }

    /// Hints the CPU to fetch the cache line [`Self::may_match_hash`]
    /// reads for `h` (the first half of a batched query).
    #[inline]
    pub(crate) fn prefetch_hash(&self, h: u64) {
        // The query works the offset out again.
        let _offset = FastLocalBloomImpl::prepare_hash(lower32of64(h), self.len_bytes, self.data);
    }

    /// Whether `key` may have been added (hashes it with
    /// [`crate::core::hash::get_slice_hash64`]).
    #[must_use]
    pub fn may_match_key(&self, key: impl AsRef<[u8]>) -> bool {
        self.may_match_hash(crate::core::hash::get_slice_hash64(key.as_ref()))
    }

    /// Batched [`may_match_hash`](Self::may_match_hash), like RocksDB's
    /// MultiGet path: for each group of up to 32 hashes, first computes and
    /// prefetches every cache line, then checks them. Writes
    /// `out[i] = may_match_hash(hashes[i])` for
    /// `i < min(hashes.len(), out.len())`; other entries of `out` are left
    /// unchanged.
    pub fn may_match_hashes(&self, hashes: &[u64], out: &mut [bool]) {
        match self.kernel {
            BloomKernel::Portable => self.answer_batches(hashes, out, arch::portable_line_may_match),
            #[cfg(target_arch = "x86_64")]
            // SAFETY: the reader holds `BloomKernel::Avx2` only where the CPU
            // has AVX2 (`new` takes `BloomKernel::detected`, `with_kernel`
            // only what `BloomKernel::available` lists).
            BloomKernel::Avx2 => unsafe { self.answer_batches_avx2(hashes, out) },
            #[cfg(not(target_arch = "x86_64"))]
            BloomKernel::Avx2 => self.answer_batches(hashes, out, arch::portable_line_may_match),
        }
    }

    /// [`may_match_hashes`](Self::may_match_hashes) compiled with AVX2, so
    /// that the AVX2 line check inlines into the batch loop.
    ///
    /// # Safety
    ///
    /// The CPU must support AVX2.
    #[cfg(target_arch = "x86_64")]
    #[target_feature(enable = "avx2")]
    unsafe fn answer_batches_avx2(&self, hashes: &[u64], out: &mut [bool]) {
        self.answer_batches(hashes, out, |h2, num_probes, line| {
            // SAFETY: this function's caller guarantees AVX2.
            unsafe { arch::x86_64::line_may_match_avx2(h2, num_probes, line) }
        });
    }

    /// The batch loop, with the cache-line check `line_may_match`.
    #[inline(always)]
    fn answer_batches(
        &self,
        hashes: &[u64],
        out: &mut [bool],
        line_may_match: impl Fn(u32, i32, &[u8; CACHE_LINE_BYTES]) -> bool,
    ) {
        answer_in_batches(
            hashes,
            out,
            |h| {
                let offset = FastLocalBloomImpl::prepare_hash(lower32of64(h), self.len_bytes, self.data);
                (offset, upper32of64(h))
            },
            |(offset, h2)| match self.data.get(offset as usize..) {
                Some(rest) => match rest.first_chunk::<CACHE_LINE_BYTES>() {
                    Some(line) => line_may_match(h2, self.num_probes, line),
                    // A corrupt filter shorter than one line.
                    None => FastLocalBloomImpl::hash_may_match_prepared_with(
                        BloomKernel::Portable,
                        h2,
                        self.num_probes,
                        rest,
                    ),
                },
                None => true,
            },
        );
    }
}
