//! Ported from RocksDB's `util/fastrange.h` and `util/math.h`: the integer
//! helpers the filters use, and nothing else.
//!
//! * **FastRange** ([`fast_range32`], [`fast_range64_to_u32`]): maps a
//!   uniformly distributed hash onto `0..range` with one widening multiply
//!   (`(hash * range) >> bits`), the replacement for `hash % range` used by
//!   FastLocalBloom (cache line choice) and by Ribbon (start slot choice).
//!   Higher-order hash bits matter most.
//! * **Splitting** ([`upper32of64`], [`lower32of64`]): FastLocalBloom takes
//!   the lower 32 bits of a 64-bit key hash for the cache line and the upper
//!   32 bits for the probes.
//!
//! Every function is total and never panics.
//!
//! Internal to the formats (see the crate docs): public for tests, tools
//! and experiments; its API may change with any release.

/// Maps a 32-bit hash onto `0..range` as RocksDB's `FastRange32` does:
/// `(hash * range) >> 32` computed in 64 bits.
///
/// Returns a value `< range` when `range > 0`, and `0` when `range == 0`.
#[inline(always)]
#[must_use]
pub fn fast_range32(hash: u32, range: u32) -> u32 {
    ((u64::from(hash) * u64::from(range)) >> 32) as u32
}

/// Maps a 64-bit hash onto `0..range` as RocksDB's
/// `FastRangeGeneric(uint64_t hash, uint32_t range)` does, as Ribbon picks a
/// start slot: the upper 64 bits of the 128-bit product `hash * range`.
///
/// Returns a value `< range` when `range > 0`, and `0` when `range == 0`.
#[inline(always)]
#[must_use]
pub fn fast_range64_to_u32(hash: u64, range: u32) -> u32 {
    // The result is below `range`, so it fits in 32 bits.
    ((u128::from(hash) * u128::from(range)) >> 64) as u32
}

/// The upper 32 bits of `v` (RocksDB's `Upper32of64`).
#[inline]
#[must_use]
pub const fn upper32of64(v: u64) -> u32 {
    (v >> 32) as u32
}

/// The lower 32 bits of `v` (RocksDB's `Lower32of64`).
#[inline]
#[must_use]
pub const fn lower32of64(v: u64) -> u32 {
    v as u32
}

/// Counts to starts, in place: `v[i]` becomes the sum of `v[..=i]` (the
/// middle step of every counting sort in the crate: with a leading 0,
/// each bucket's count turns into its first index).
pub(crate) fn prefix_sums<T: Copy + core::ops::AddAssign>(v: &mut [T]) {
    for i in 1..v.len() {
        let prev = v[i - 1];
        v[i] += prev;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fast_range32_values() {
        // Zero range
        assert_eq!(fast_range32(0, 0), 0);
        assert_eq!(fast_range32(123, 0), 0);
        assert_eq!(fast_range32(0xffffffff, 0), 0);
        // One range
        assert_eq!(fast_range32(0, 1), 0);
        assert_eq!(fast_range32(123, 1), 0);
        assert_eq!(fast_range32(0xffffffff, 1), 0);
        // Two range
        assert_eq!(fast_range32(0, 2), 0);
        assert_eq!(fast_range32(123, 2), 0);
        assert_eq!(fast_range32(0x7fffffff, 2), 0);
        assert_eq!(fast_range32(0x80000000, 2), 1);
        assert_eq!(fast_range32(0xffffffff, 2), 1);
        // Seven range
        assert_eq!(fast_range32(0, 7), 0);
        assert_eq!(fast_range32(123, 7), 0);
        assert_eq!(fast_range32(613566756, 7), 0);
        assert_eq!(fast_range32(613566757, 7), 1);
        assert_eq!(fast_range32(1227133513, 7), 1);
        assert_eq!(fast_range32(1227133514, 7), 2);
        assert_eq!(fast_range32(0xffffffff, 7), 6);
        // Big
        assert_eq!(fast_range32(1, 0x80000000), 0);
        assert_eq!(fast_range32(2, 0x80000000), 1);
        assert_eq!(fast_range32(4, 0x7fffffff), 1);
        assert_eq!(fast_range32(4, 0x80000000), 2);
        assert_eq!(fast_range32(0xffffffff, 0x7fffffff), 0x7ffffffe);
        assert_eq!(fast_range32(0xffffffff, 0x80000000), 0x7fffffff);
    }

    /// RocksDB's `FastRange64` test values whose range fits in 32 bits.
    #[test]
    fn fast_range64_values() {
        let f = fast_range64_to_u32;
        // Zero and one range
        for h in [0, 123, 0xffff_ffff, u64::MAX] {
            assert_eq!(f(h, 0), 0);
            assert_eq!(f(h, 1), 0);
        }
        // Two range
        assert_eq!(f(0xffff_ffff, 2), 0);
        assert_eq!(f(0x7fff_ffff_ffff_ffff, 2), 0);
        assert_eq!(f(0x8000_0000_0000_0000, 2), 1);
        assert_eq!(f(0xffff_ffff_ffff_ffff, 2), 1);
        // Seven range
        assert_eq!(f(0xffff_ffff, 7), 0);
        assert_eq!(f(2635249153387078802, 7), 0);
        assert_eq!(f(2635249153387078803, 7), 1);
        assert_eq!(f(5270498306774157604, 7), 1);
        assert_eq!(f(5270498306774157605, 7), 2);
        assert_eq!(f(0x7fff_ffff_ffff_ffff, 7), 3);
        assert_eq!(f(0x8000_0000_0000_0000, 7), 3);
        assert_eq!(f(0xffff_ffff_ffff_ffff, 7), 6);
        // Big but 32-bit range
        assert_eq!(f(0x1_0000_0000, 0x8000_0000), 0);
        assert_eq!(f(0x2_0000_0000, 0x8000_0000), 1);
        assert_eq!(f(0x4_0000_0000, 0x7fff_ffff), 1);
        assert_eq!(f(0x4_0000_0000, 0x8000_0000), 2);
        assert_eq!(f(0xffff_ffff_ffff_ffff, 0x7fff_ffff), 0x7fff_fffe);
        assert_eq!(f(0xffff_ffff_ffff_ffff, 0x8000_0000), 0x7fff_ffff);
        assert_eq!(f(u64::MAX, u32::MAX), u32::MAX - 1);
        // The two widths agree where the hash is the high half.
        assert_eq!(f(0x8000_0000_0000_0000, 12468), 6234);
        assert_eq!(fast_range32(0x8000_0000, 12468), 6234);
    }

    #[test]
    fn split() {
        for v in [
            0u64,
            1,
            0xffff_ffff,
            0x1_0000_0000,
            u64::MAX,
            0x0123_4567_89ab_cdef,
        ] {
            assert_eq!((u64::from(upper32of64(v)) << 32) | u64::from(lower32of64(v)), v);
        }
        assert_eq!(upper32of64(0x0123_4567_89ab_cdef), 0x0123_4567);
        assert_eq!(lower32of64(0x0123_4567_89ab_cdef), 0x89ab_cdef);
    }
}
