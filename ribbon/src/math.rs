//! Ported from RocksDB's util/math.h, util/math128.h, util/fastrange.h and util/hash.h.
//!
//! Small integer helpers that RocksDB's filters are built on:
//!
//! * **FastRange** ([`fast_range32`], [`fast_range64`], [`fast_range64_usize`],
//!   [`fast_range64_to_u32`]): maps a uniformly distributed hash onto
//!   `0..range` with one widening multiply (`(hash * range) >> bits`), the
//!   replacement for `hash % range` used by FastLocalBloom (cache line choice)
//!   and by Ribbon (start slot choice). Higher-order hash bits matter most.
//! * **Splitting** ([`upper32of64`], [`lower32of64`], [`upper64of128`],
//!   [`lower64of128`], [`multiply64to128`]): FastLocalBloom takes the lower 32
//!   bits of a 64-bit key hash for the cache line and the upper 32 bits for
//!   the probes; Ribbon's coefficient "smash" uses the 128-bit product.
//! * **Bit operations** ([`count_trailing_zero_bits`], [`floor_log2`],
//!   [`bit_parity`], [`endian_swap`], [`reverse_bits`]): generic over the
//!   unsigned widths Ribbon uses for coefficient and result rows (`u8` through
//!   `u128`, plus `usize`), via the sealed [`BitInt`] trait.
//!
//! Every function is total: where RocksDB merely asserts a precondition (a
//! non-zero argument), the behaviour for the excluded input is documented
//! and never panics.

/// Maps a 32-bit hash onto `0..range` as RocksDB's `FastRange32` does:
/// `(hash * range) >> 32` computed in 64 bits.
///
/// Returns a value `< range` when `range > 0`, and `0` when `range == 0`.
#[inline]
#[must_use]
pub fn fast_range32(hash: u32, range: u32) -> u32 {
    ((u64::from(hash) * u64::from(range)) >> 32) as u32
}

/// Maps a 64-bit hash onto `0..range` as RocksDB's 64-bit `FastRangeGeneric`
/// does: the upper 64 bits of the 128-bit product `hash * range`.
///
/// Returns a value `< range` when `range > 0`, and `0` when `range == 0`.
#[inline]
#[must_use]
pub fn fast_range64(hash: u64, range: u64) -> u64 {
    ((u128::from(hash) * u128::from(range)) >> 64) as u64
}

/// RocksDB's `FastRange64(uint64_t hash, size_t range)`: [`fast_range64`]
/// with a `usize` range (used for sizes and in-memory indexes).
///
/// Returns a value `< range` when `range > 0`, and `0` when `range == 0`.
#[inline]
#[must_use]
pub fn fast_range64_usize(hash: u64, range: usize) -> usize {
    // `usize` is at most 64 bits on every supported target, and the result is
    // below `range`, so both conversions are lossless.
    fast_range64(hash, range as u64) as usize
}

/// RocksDB's `FastRangeGeneric(uint64_t hash, uint32_t range)`, as Ribbon
/// uses to pick a start slot from a 64-bit hash with a 32-bit slot index.
///
/// Identical to [`fast_range64`] narrowed to `u32`: returns a value `< range`
/// when `range > 0`, and `0` when `range == 0`.
#[inline]
#[must_use]
pub fn fast_range64_to_u32(hash: u64, range: u32) -> u32 {
    // The result is below `range`, so it fits in 32 bits.
    fast_range64(hash, u64::from(range)) as u32
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

/// The upper 64 bits of `v` (RocksDB's `Upper64of128`).
#[inline]
#[must_use]
pub const fn upper64of128(v: u128) -> u64 {
    (v >> 64) as u64
}

/// The lower 64 bits of `v` (RocksDB's `Lower64of128`).
#[inline]
#[must_use]
pub const fn lower64of128(v: u128) -> u64 {
    v as u64
}

/// The full 128-bit product of `a` and `b` (RocksDB's `Multiply64to128`).
#[inline]
#[must_use]
pub const fn multiply64to128(a: u64, b: u64) -> u128 {
    (a as u128) * (b as u128)
}

mod sealed {
    /// Prevents implementations of [`super::BitInt`] outside this module.
    pub trait Sealed {}
}

/// The unsigned integer widths the generic bit helpers accept: `u8`, `u16`,
/// `u32`, `u64`, `u128` and `usize`. Sealed; it only routes each helper to
/// the matching core intrinsic.
pub trait BitInt: sealed::Sealed + Copy {
    /// Width of the type in bits.
    const BITS: u32;
    /// Number of trailing zero bits (`BITS` for zero).
    fn trailing_zeros_(self) -> u32;
    /// Number of leading zero bits (`BITS` for zero).
    fn leading_zeros_(self) -> u32;
    /// Number of one bits.
    fn count_ones_(self) -> u32;
    /// Byte order reversed.
    fn swap_bytes_(self) -> Self;
    /// Bit order reversed.
    fn reverse_bits_(self) -> Self;
}

macro_rules! impl_bit_int {
    ($($t:ty),*) => {$(
        impl sealed::Sealed for $t {}
        impl BitInt for $t {
            const BITS: u32 = <$t>::BITS;
            #[inline(always)]
            fn trailing_zeros_(self) -> u32 { self.trailing_zeros() }
            #[inline(always)]
            fn leading_zeros_(self) -> u32 { self.leading_zeros() }
            #[inline(always)]
            fn count_ones_(self) -> u32 { self.count_ones() }
            #[inline(always)]
            fn swap_bytes_(self) -> Self { self.swap_bytes() }
            #[inline(always)]
            fn reverse_bits_(self) -> Self { self.reverse_bits() }
        }
    )*};
}

impl_bit_int!(u8, u16, u32, u64, u128, usize);

/// Number of zero bits below the lowest one bit (RocksDB's
/// `CountTrailingZeroBits`).
///
/// RocksDB requires `v != 0`; here zero yields the bit width of `T`.
#[inline]
#[must_use]
pub fn count_trailing_zero_bits<T: BitInt>(v: T) -> u32 {
    v.trailing_zeros_()
}

/// Index of the highest one bit, i.e. `floor(log2(v))` (RocksDB's
/// `FloorLog2`).
///
/// RocksDB requires `v > 0`; here zero yields `0`, as RocksDB's
/// `ConstexprFloorLog2` does.
#[inline]
#[must_use]
pub fn floor_log2<T: BitInt>(v: T) -> u32 {
    (T::BITS - 1).saturating_sub(v.leading_zeros_())
}

/// Number of one bits modulo 2, as `0` or `1` (RocksDB's `BitParity`).
/// Ribbon uses it for the GF(2) dot product of a coefficient row with the
/// solution.
#[inline]
#[must_use]
pub fn bit_parity<T: BitInt>(v: T) -> u32 {
    v.count_ones_() & 1
}

/// `v` with its bytes in reverse order (RocksDB's `EndianSwapValue`). Ribbon
/// uses it to move the most independent (highest) hash bits into the low bits
/// of a result row.
#[inline]
#[must_use]
pub fn endian_swap<T: BitInt>(v: T) -> T {
    v.swap_bytes_()
}

/// `v` with its bits in reverse order (RocksDB's `ReverseBits`).
#[inline]
#[must_use]
pub fn reverse_bits<T: BitInt>(v: T) -> T {
    v.reverse_bits_()
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

    #[test]
    fn fast_range64_values() {
        // Zero range
        assert_eq!(fast_range64(0, 0), 0);
        assert_eq!(fast_range64(123, 0), 0);
        assert_eq!(fast_range64(0xffff_ffff, 0), 0);
        assert_eq!(fast_range64(0xffff_ffff_ffff_ffff, 0), 0);
        // One range
        assert_eq!(fast_range64(0, 1), 0);
        assert_eq!(fast_range64(123, 1), 0);
        assert_eq!(fast_range64(0xffff_ffff, 1), 0);
        assert_eq!(fast_range64(0xffff_ffff_ffff_ffff, 1), 0);
        // Two range
        assert_eq!(fast_range64(0, 2), 0);
        assert_eq!(fast_range64(123, 2), 0);
        assert_eq!(fast_range64(0xffff_ffff, 2), 0);
        assert_eq!(fast_range64(0x7fff_ffff_ffff_ffff, 2), 0);
        assert_eq!(fast_range64(0x8000_0000_0000_0000, 2), 1);
        assert_eq!(fast_range64(0xffff_ffff_ffff_ffff, 2), 1);
        // Seven range
        assert_eq!(fast_range64(0, 7), 0);
        assert_eq!(fast_range64(123, 7), 0);
        assert_eq!(fast_range64(0xffff_ffff, 7), 0);
        assert_eq!(fast_range64(2635249153387078802, 7), 0);
        assert_eq!(fast_range64(2635249153387078803, 7), 1);
        assert_eq!(fast_range64(5270498306774157604, 7), 1);
        assert_eq!(fast_range64(5270498306774157605, 7), 2);
        assert_eq!(fast_range64(0x7fff_ffff_ffff_ffff, 7), 3);
        assert_eq!(fast_range64(0x8000_0000_0000_0000, 7), 3);
        assert_eq!(fast_range64(0xffff_ffff_ffff_ffff, 7), 6);
        // Big but 32-bit range
        assert_eq!(fast_range64(0x1_0000_0000, 0x8000_0000), 0);
        assert_eq!(fast_range64(0x2_0000_0000, 0x8000_0000), 1);
        assert_eq!(fast_range64(0x4_0000_0000, 0x7fff_ffff), 1);
        assert_eq!(fast_range64(0x4_0000_0000, 0x8000_0000), 2);
        assert_eq!(fast_range64(0xffff_ffff_ffff_ffff, 0x7fff_ffff), 0x7fff_fffe);
        assert_eq!(fast_range64(0xffff_ffff_ffff_ffff, 0x8000_0000), 0x7fff_ffff);
        // Big, > 32-bit range
        assert_eq!(
            fast_range64(0x7fff_ffff_ffff_ffff, 0x42_0000_0002),
            0x21_0000_0000
        );
        assert_eq!(
            fast_range64(0x8000_0000_0000_0000, 0x42_0000_0002),
            0x21_0000_0001
        );
        assert_eq!(fast_range64(0, 420000000002), 0);
        assert_eq!(fast_range64(0x7fff_ffff_ffff_ffff, 420000000002), 210000000000);
        assert_eq!(fast_range64(0x8000_0000_0000_0000, 420000000002), 210000000001);
        assert_eq!(fast_range64(0xffff_ffff_ffff_ffff, 420000000002), 420000000001);
        assert_eq!(
            fast_range64(0xffff_ffff_ffff_ffff, 0xffff_ffff_ffff_ffff),
            0xffff_ffff_ffff_fffe
        );
    }

    #[test]
    fn fast_range_variants_agree() {
        // FastRangeGeneric known answer (64-bit hash, big range).
        assert_eq!(fast_range64(0x8000_0000_0000_0000, 420000000002), 210000000001);
        for &(h, r) in &[
            (0u64, 0u32),
            (u64::MAX, u32::MAX),
            (0x8000_0000_0000_0000, 12468),
            (0x1234_5678_9abc_def0, 7),
            (0xffff_ffff_ffff_ffff, 0x8000_0000),
        ] {
            let wide = fast_range64(h, u64::from(r));
            assert_eq!(u64::from(fast_range64_to_u32(h, r)), wide);
            assert_eq!(fast_range64_usize(h, r as usize) as u64, wide);
        }
        assert_eq!(fast_range64_to_u32(0x8000_0000_0000_0000, 12468), 6234);
        assert_eq!(fast_range32(0x8000_0000, 12468), 6234);
        if let Ok(range) = usize::try_from(420000000002u64) {
            assert_eq!(
                fast_range64_usize(0xffff_ffff_ffff_ffff, range) as u64,
                420000000001
            );
        }
    }

    #[test]
    fn split_and_multiply() {
        for v in [
            0u64,
            1,
            0xffff_ffff,
            0x1_0000_0000,
            u64::MAX,
            0x0123_4567_89ab_cdef,
        ] {
            assert_eq!((u64::from(upper32of64(v)) << 32) | u64::from(lower32of64(v)), v);
            assert_eq!((u64::from(upper32of64(v)) << 32) + u64::from(lower32of64(v)), v);
            assert_eq!((u64::from(upper32of64(v)) << 32) ^ u64::from(lower32of64(v)), v);
        }
        // MathTest.Math128: 64x64->128 multiply.
        let product = multiply64to128(0x1111111111111111, 0x2222222222222222);
        assert_eq!(lower64of128(product), 2295594818061633090);
        assert_eq!(upper64of128(product), 163971058432973792);
    }

    /// The parts of RocksDB's `MathTest.BitOps` that cover the helpers ported
    /// here (FloorLog2, CountTrailingZeroBits, BitParity, EndianSwapValue,
    /// ReverseBits), for one unsigned width.
    fn check_bit_ops<T>()
    where
        T: BitInt
            + From<u8>
            + PartialEq
            + PartialOrd
            + core::fmt::Debug
            + core::ops::Shl<u32, Output = T>
            + core::ops::BitOr<Output = T>
            + core::ops::BitAnd<Output = T>
            + core::ops::Not<Output = T>,
    {
        let zero = T::from(0u8);
        let one = T::from(1u8);
        let bytes = T::BITS / 8;
        let mut every_other_bit = T::from(0x55u8);
        for _ in 1..bytes {
            every_other_bit = (every_other_bit << 8) | T::from(0x55u8);
        }
        let mut vm1 = zero; // "v minus one"
        for i in 0..T::BITS {
            let v = one << i;
            // FloorLog2
            assert_eq!(floor_log2(v), i);
            if vm1 > zero {
                assert_eq!(floor_log2(vm1), i - 1);
                assert_eq!(floor_log2(every_other_bit & vm1), (i - 1) & !1);
            }
            // CountTrailingZeroBits
            assert_eq!(count_trailing_zero_bits(v), i);
            if vm1 != zero {
                assert_eq!(count_trailing_zero_bits(vm1), 0);
            }
            if i < T::BITS - 1 {
                assert_eq!(count_trailing_zero_bits(!vm1 & every_other_bit), (i + 1) & !1);
            }
            // BitParity
            assert_eq!(bit_parity(v), 1);
            assert_eq!(bit_parity(vm1), i & 1);
            assert_eq!(bit_parity(vm1 & every_other_bit), i.div_ceil(2) & 1);
            // EndianSwapValue
            let ev = one << (((bytes - 1 - (i / 8)) * 8) + i % 8);
            assert_eq!(endian_swap(v), ev);
            // ReverseBits
            let rv = one << (T::BITS - 1 - i);
            assert_eq!(reverse_bits(v), rv);
            vm1 = (vm1 << 1) | one;
        }
        // ConstexprFloorLog2 known answers (same results from FloorLog2).
        assert_eq!(floor_log2(T::from(1u8)), 0);
        assert_eq!(floor_log2(T::from(2u8)), 1);
        assert_eq!(floor_log2(T::from(3u8)), 1);
        assert_eq!(floor_log2(T::from(42u8)), 5);
    }

    #[test]
    fn bit_ops() {
        check_bit_ops::<u8>();
        check_bit_ops::<u16>();
        check_bit_ops::<u32>();
        check_bit_ops::<u64>();
        check_bit_ops::<usize>();
        check_bit_ops::<u128>();
    }

    #[test]
    fn reverse_bits_of_low_masks() {
        // MathTest.BitOps: ReverseBits(vm1) == (1 << (BITS-1-i)) * ~1, i.e.
        // reversing the low-i-bits mask gives the high-i-bits mask.
        for i in 0..64u32 {
            let vm1: u64 = if i == 0 { 0 } else { u64::MAX >> (64 - i) };
            let rv = 1u64 << (63 - i);
            assert_eq!(reverse_bits(vm1), rv.wrapping_mul(!1));
        }
        for i in 0..128u32 {
            let vm1: u128 = if i == 0 { 0 } else { u128::MAX >> (128 - i) };
            let rv = 1u128 << (127 - i);
            assert_eq!(reverse_bits(vm1), rv.wrapping_mul(!1));
        }
    }

    #[test]
    fn zero_inputs_do_not_panic() {
        assert_eq!(floor_log2(0u64), 0);
        assert_eq!(floor_log2(0u8), 0);
        assert_eq!(count_trailing_zero_bits(0u32), 32);
        assert_eq!(count_trailing_zero_bits(0u128), 128);
        assert_eq!(bit_parity(0u64), 0);
    }

    #[test]
    fn math128_bit_counts() {
        // MathTest.Math128 (bit-op and shift parts, via bit_parity).
        let sixteen_hex_ones: u128 = 0x1111111111111111;
        let thirty_hex_ones = (sixteen_hex_ones << 56) | sixteen_hex_ones;
        let sixteen_hex_twos: u128 = 0x2222222222222222;
        let thirty_hex_twos = (sixteen_hex_twos << 56) | sixteen_hex_twos;
        let mut v = thirty_hex_ones;
        for i in 0..=30u32 {
            assert_eq!(bit_parity(v), 30 & 1);
            assert_eq!(bit_parity(v & thirty_hex_ones), (30 - i) & 1);
            assert_eq!(bit_parity(v & thirty_hex_twos), i & 1);
            assert_eq!(bit_parity(v ^ thirty_hex_twos), (60 - 2 * i) & 1);
            v = ((v << 12) >> 8) | 0x2;
        }
        for i in 0..128u32 {
            let sl = thirty_hex_ones << i;
            let sr = thirty_hex_ones >> i;
            let sl_ones = 30.min(32 - (i / 4) as i32) as u32;
            let sr_ones = 0.max(30 - (i as i32 + 3) / 4) as u32;
            assert_eq!(bit_parity(sl), sl_ones & 1);
            assert_eq!(bit_parity(sr), sr_ones & 1);
        }
    }
}
