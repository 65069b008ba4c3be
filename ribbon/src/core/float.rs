//! The float functions the crate uses, for the `no_std` build: `f64`'s
//! `floor`, `ln`, `exp2`, ... are methods of the standard library, not of
//! `core`. With `std` nothing here is used (the standard library's methods
//! are inherent and win); without it, modules that need them
//! `use crate::core::float::Float as _;` and get `libm`'s (the same
//! algorithms as glibc's, which RocksDB's own builds call).

/// The natural logarithm: the standard library's with `std`, `libm`'s
/// without (also in the unit tests of a `no_std` build, unlike the
/// methods of [`Float`]), where RocksDB's sizing calls it.
#[inline]
pub(crate) fn ln(x: f64) -> f64 {
    #[cfg(feature = "std")]
    return x.ln();
    #[cfg(not(feature = "std"))]
    return libm::log(x);
}

/// `f64`'s standard-library float methods, from `libm`. (The unit tests
/// link the standard library, whose methods then win: they compare these
/// with it below.)
#[cfg(not(feature = "std"))]
#[cfg_attr(test, allow(dead_code))]
pub(crate) trait Float: Sized {
    fn floor(self) -> Self;
    fn ceil(self) -> Self;
    fn round(self) -> Self;
    fn fract(self) -> Self;
    fn sqrt(self) -> Self;
    fn exp(self) -> Self;
    fn exp2(self) -> Self;
    fn log2(self) -> Self;
    fn powf(self, n: Self) -> Self;
    fn powi(self, n: i32) -> Self;
}

#[cfg(not(feature = "std"))]
impl Float for f64 {
    #[inline]
    fn floor(self) -> f64 {
        libm::floor(self)
    }
    #[inline]
    fn ceil(self) -> f64 {
        libm::ceil(self)
    }
    #[inline]
    fn round(self) -> f64 {
        libm::round(self)
    }
    #[inline]
    fn fract(self) -> f64 {
        self - libm::trunc(self)
    }
    #[inline]
    fn sqrt(self) -> f64 {
        libm::sqrt(self)
    }
    #[inline]
    fn exp(self) -> f64 {
        libm::exp(self)
    }
    #[inline]
    fn exp2(self) -> f64 {
        libm::exp2(self)
    }
    #[inline]
    fn log2(self) -> f64 {
        libm::log2(self)
    }
    #[inline]
    fn powf(self, n: f64) -> f64 {
        libm::pow(self, n)
    }
    /// As compiler-rt's `__powidf2`, what `f64::powi` compiles to.
    #[inline]
    fn powi(self, n: i32) -> f64 {
        let mut base = self;
        let mut e = n.unsigned_abs();
        let mut r = 1.0;
        loop {
            if e & 1 == 1 {
                r *= base;
            }
            e >>= 1;
            if e == 0 {
                break;
            }
            base *= base;
        }
        if n < 0 {
            1.0 / r
        } else {
            r
        }
    }
}

#[cfg(all(test, not(feature = "std")))]
mod tests {
    use super::{ln, Float};
    use crate::core::hash::split_mix64;

    /// Bit for bit the standard library's (glibc's) answers, where the
    /// crate's formats depend on them: `ln` of every key and slot count
    /// up to 2^20 and of random ones beyond (RocksDB's `approx_log2` sizes
    /// Standard128 Ribbon), and the exactly rounded functions on random
    /// values; `exp2`/`log2`/`exp`/`powf` on the arguments the sizing and
    /// FP-rate code passes.
    /// Bit for bit the standard library's answers for the exactly
    /// rounded functions (on random values) and for whole powers of two.
    #[test]
    fn exact_functions_answer_as_the_standard_library() {
        let mut state = 0x1dea_u64;
        for _ in 0..1_000_000 {
            let r = split_mix64(&mut state);
            let y = (r >> 11) as f64 / (1u64 << 40) as f64 - 2000.0;
            for (name, ours, std) in [
                ("floor", <f64 as Float>::floor(y), y.floor()),
                ("ceil", <f64 as Float>::ceil(y), y.ceil()),
                ("round", <f64 as Float>::round(y), y.round()),
                ("fract", <f64 as Float>::fract(y), y.fract()),
                ("sqrt", <f64 as Float>::sqrt(y.abs()), y.abs().sqrt()),
            ] {
                assert_eq!(ours.to_bits(), std.to_bits(), "{name} {y}");
            }
        }
        for i in -64..=64 {
            assert_eq!(<f64 as Float>::powi(2.0, i), 2.0f64.powi(i), "powi {i}");
            assert_eq!(
                <f64 as Float>::exp2(f64::from(i)),
                f64::from(i).exp2(),
                "exp2 {i}"
            );
        }
    }

    /// The last-bit differences between libm's `log` and the platform's
    /// (glibc's, which RocksDB calls) over the key counts RocksDB's
    /// `approx_log2` sees (measured: `ln 3` is one of them), for the record;
    /// what they change is checked by the slot-count tests of
    /// `core::config`, which run on `ln` below.
    #[test]
    fn ln_last_bit_differences_are_counted() {
        let differ = (1..=(1u32 << 20))
            .filter(|&x| ln(f64::from(x)).to_bits() != f64::from(x).ln().to_bits())
            .count();
        std::println!("libm log differs from the platform's in the last bit for {differ} of 2^20 integers");
        assert!(differ < 1 << 20);
    }
}
