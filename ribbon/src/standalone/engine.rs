//! From runtime configuration to monomorphised code.
//!
//! The generic core ([`crate::core::alg`], [`crate::core::hasher`],
//! [`crate::core::solution`]) is compiled once per [`RibbonSettings`] type. A
//! standalone filter chooses its settings at run time, so this module
//! instantiates the core for all 24 combinations of ribbon width (32, 64,
//! 128) × first-coefficient-always-one × smash × homogeneous with one generic
//! settings type, [`Settings`], and dispatches to them with one macro:
//!
//! * [`Engine`], an enum with one variant per combination and kind (plain
//!   or Balanced, [`super::balanced`]), holds what a query needs (the
//!   solution layout, the seeded hasher and a Balanced filter's shards), so
//!   a query pays one `match` and then runs fully monomorphised code;
//! * [`dispatch`] calls a [`Visitor`] with the settings type of a runtime
//!   [`Shape`], for work that has no engine yet (sizing, construction).
//!
//! The list of combinations is written once, in the `engines!` invocation
//! below; the compiler checks that it is exhaustive.

use super::balanced::BalancedState;
pub use crate::core::alg::Settings;
use crate::core::alg::{Banding, RibbonSettings};
use crate::core::hasher::{band_with_seeds, Hasher};
use crate::core::solution::{InterleavedLayout, QuerySite};

/// A ribbon width the standalone format supports.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub(crate) enum Width {
    W32,
    W64,
    W128,
}

impl Width {
    /// The width for a number of bits, if supported.
    pub(crate) const fn from_bits(bits: u32) -> Option<Self> {
        match bits {
            32 => Some(Width::W32),
            64 => Some(Width::W64),
            128 => Some(Width::W128),
            _ => None,
        }
    }
}

/// The compile-time settings chosen at run time.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub(crate) struct Shape {
    pub(crate) width: Width,
    pub(crate) first_coeff_always_one: bool,
    pub(crate) smash: bool,
    pub(crate) homogeneous: bool,
}

impl Shape {
    /// The shape of settings type `S`. Panics (at compile time, where it is
    /// used in a constant) for a width the standalone format lacks.
    pub(crate) const fn of<S: RibbonSettings>() -> Self {
        let Some(width) = Width::from_bits(<S::CoeffRow as crate::core::alg::CoeffRow>::BITS) else {
            panic!("unsupported ribbon width");
        };
        Shape {
            width,
            first_coeff_always_one: S::FIRST_COEFF_ALWAYS_ONE,
            smash: S::USE_SMASH,
            homogeneous: S::HOMOGENEOUS,
        }
    }
}

/// Code generic over the settings, run for the settings of a [`Shape`] by
/// [`dispatch`] (a generic closure).
pub(crate) trait Visitor {
    type Output;
    fn visit<S: RibbonSettings>(self) -> Self::Output
    where
        QueryState<S>: Into<Engine>,
        BalancedState<S>: Into<Engine>;
}

/// What a query needs for one settings type: the solution's layout and the
/// hasher of the seed that banded.
#[derive(Debug, Clone, Copy)]
pub(crate) struct QueryState<S: RibbonSettings> {
    layout: InterleavedLayout<S>,
    hasher: Hasher<S>,
}

impl<S: RibbonSettings> QueryState<S> {
    /// The query state for `num_blocks >= 1` blocks of solution in
    /// `solution_len` bytes, banded with ordinal seed `seed`.
    pub(crate) fn new(num_blocks: u32, solution_len: usize, seed: u32) -> Self {
        Self {
            layout: InterleavedLayout::for_num_blocks(num_blocks, solution_len),
            hasher: Hasher::with_ordinal_seed(seed),
        }
    }

    pub(crate) fn layout(&self) -> &InterleavedLayout<S> {
        &self.layout
    }

    /// Whether the key with hash `key_hash` may be in the set.
    #[inline(always)]
    pub(crate) fn contains_hash(&self, solution: &[u8], key_hash: u64) -> bool {
        let h = self.hasher.hash(key_hash);
        let site = self.layout.prepare_query(&self.hasher, h);
        self.answer(solution, h, site)
    }

    /// The answer at `site` for rehashed value `h`: the short AVX2 kernel
    /// where it applies ([`crate::core::arch::short_site_answer`]), the
    /// core's query elsewhere.
    #[inline(always)]
    fn answer(&self, solution: &[u8], h: u64, site: QuerySite) -> bool {
        self.layout.filter_query_short(&self.hasher, h, site, solution)
    }

    /// Batched queries: every site of a batch is computed and prefetched
    /// before any is read. Answers `min(hashes.len(), out.len())` hashes.
    pub(crate) fn contains_hashes(&self, solution: &[u8], hashes: &[u64], out: &mut [bool]) {
        // The core's `filter_query_batch`, with each answer through
        // `Self::answer` (the short AVX2 kernels where they apply).
        crate::core::batch::answer_in_batches(
            hashes,
            out,
            |k| self.prepare_hash(solution, k),
            |prepared| self.answer_prepared(solution, prepared),
        );
    }

    /// The first half of a batched query: the rehashed value and the site
    /// it reads, prefetched.
    #[inline(always)]
    pub(crate) fn prepare_hash(&self, solution: &[u8], key_hash: u64) -> (u64, QuerySite) {
        self.layout.prepare_prefetched(&self.hasher, solution, key_hash)
    }

    /// The second half: the answer for what [`Self::prepare_hash`]
    /// returned.
    #[inline(always)]
    pub(crate) fn answer_prepared(&self, solution: &[u8], (h, site): (u64, QuerySite)) -> bool {
        self.answer(solution, h, site)
    }
}

/// Bands `hashes` into `num_slots` slots (a count [`crate::core::solution`]
/// supports), trying ordinal seeds `first_seed`, `first_seed + 1`, …
/// (wrapping) until one succeeds or `max_seeds` have failed. Returns the
/// seed and the banding, or the number of seeds tried.
///
/// Homogeneous Ribbon never fails; callers give it one seed.
pub(crate) fn band<S: RibbonSettings>(
    hashes: &mut [u64],
    num_slots: u32,
    first_seed: u32,
    max_seeds: u32,
) -> Result<(u32, Banding<S>), u32> {
    let tries = max_seeds.max(1);
    band_with_seeds(hashes, num_slots, (0..tries).map(|a| first_seed.wrapping_add(a))).ok_or(tries)
}

macro_rules! engines {
    ($($variant:ident / $balanced:ident = ($width:ident, $c:ty, $fcao:literal, $smash:literal, $homog:literal),)*) => {
        /// The query state of a filter, one variant per settings
        /// combination and kind (Balanced or not), plus the empty filter.
        #[derive(Debug, Clone, Copy)]
        pub(crate) enum Engine {
            /// No keys: nothing matches.
            Empty,
            $($variant(QueryState<Settings<$c, $fcao, $smash, $homog>>),)*
            $($balanced(BalancedState<Settings<$c, $fcao, $smash, $homog>>),)*
        }

        $(
            impl From<QueryState<Settings<$c, $fcao, $smash, $homog>>> for Engine {
                fn from(t: QueryState<Settings<$c, $fcao, $smash, $homog>>) -> Self {
                    Engine::$variant(t)
                }
            }
            impl From<BalancedState<Settings<$c, $fcao, $smash, $homog>>> for Engine {
                fn from(t: BalancedState<Settings<$c, $fcao, $smash, $homog>>) -> Self {
                    Engine::$balanced(t)
                }
            }
        )*

        /// Runs `visitor` with the settings type of `shape`.
        pub(crate) fn dispatch<V: Visitor>(shape: Shape, visitor: V) -> V::Output {
            match (shape.width, shape.first_coeff_always_one, shape.smash, shape.homogeneous) {
                $((Width::$width, $fcao, $smash, $homog) => {
                    visitor.visit::<Settings<$c, $fcao, $smash, $homog>>()
                })*
            }
        }

        impl Engine {
            /// Whether the key with hash `key_hash` may be in the set;
            /// `payload` is the file's payload (the solution, then a
            /// Balanced filter's thresholds).
            #[inline]
            pub(crate) fn contains_hash(&self, payload: &[u8], key_hash: u64) -> bool {
                match self {
                    Engine::Empty => false,
                    $(Engine::$variant(t) => t.contains_hash(payload, key_hash),)*
                    $(Engine::$balanced(t) => t.contains_hash(payload, key_hash),)*
                }
            }

            /// Batched [`Engine::contains_hash`] into `out` (the shorter of
            /// the two lengths is answered).
            pub(crate) fn contains_hashes(&self, payload: &[u8], hashes: &[u64], out: &mut [bool]) {
                match self {
                    Engine::Empty => out.iter_mut().for_each(|o| *o = false),
                    $(Engine::$variant(t) => t.contains_hashes(payload, hashes, out),)*
                    $(Engine::$balanced(t) => t.contains_hashes(payload, hashes, out),)*
                }
            }

            /// The first half of a batched query of `key_hash` (its site
            /// prefetched), for [`Engine::answer_prepared`].
            #[inline]
            pub(crate) fn prepare_hash(&self, payload: &[u8], key_hash: u64) -> (u64, QuerySite) {
                match self {
                    Engine::Empty => (key_hash, QuerySite::default()),
                    $(Engine::$variant(t) => t.prepare_hash(payload, key_hash),)*
                    $(Engine::$balanced(t) => t.prepare_hash(payload, key_hash),)*
                }
            }

            /// The answer of [`Engine::contains_hash`] for what
            /// [`Engine::prepare_hash`] returned.
            #[inline]
            pub(crate) fn answer_prepared(&self, payload: &[u8], prepared: (u64, QuerySite)) -> bool {
                match self {
                    Engine::Empty => false,
                    $(Engine::$variant(t) => t.answer_prepared(payload, prepared),)*
                    $(Engine::$balanced(t) => t.answer_prepared(payload, prepared),)*
                }
            }

            /// The expected FP rate of the solution's columns (`2^-r` mixed
            /// over blocks); 0 for the empty filter.
            pub(crate) fn expected_fp_rate(&self) -> f64 {
                match self {
                    Engine::Empty => 0.0,
                    $(Engine::$variant(t) => t.layout().expected_fp_rate(),)*
                    $(Engine::$balanced(t) => t.layout().expected_fp_rate(),)*
                }
            }
        }
    };
}

engines! {
    W32 / BW32 = (W32, u32, false, false, false),
    W32H / BW32H = (W32, u32, false, false, true),
    W32S / BW32S = (W32, u32, false, true, false),
    W32SH / BW32SH = (W32, u32, false, true, true),
    W32F / BW32F = (W32, u32, true, false, false),
    W32FH / BW32FH = (W32, u32, true, false, true),
    W32FS / BW32FS = (W32, u32, true, true, false),
    W32FSH / BW32FSH = (W32, u32, true, true, true),
    W64 / BW64 = (W64, u64, false, false, false),
    W64H / BW64H = (W64, u64, false, false, true),
    W64S / BW64S = (W64, u64, false, true, false),
    W64SH / BW64SH = (W64, u64, false, true, true),
    W64F / BW64F = (W64, u64, true, false, false),
    W64FH / BW64FH = (W64, u64, true, false, true),
    W64FS / BW64FS = (W64, u64, true, true, false),
    W64FSH / BW64FSH = (W64, u64, true, true, true),
    W128 / BW128 = (W128, u128, false, false, false),
    W128H / BW128H = (W128, u128, false, false, true),
    W128S / BW128S = (W128, u128, false, true, false),
    W128SH / BW128SH = (W128, u128, false, true, true),
    W128F / BW128F = (W128, u128, true, false, false),
    W128FH / BW128FH = (W128, u128, true, false, true),
    W128FS / BW128FS = (W128, u128, true, true, false),
    W128FSH / BW128FSH = (W128, u128, true, true, true),
}
