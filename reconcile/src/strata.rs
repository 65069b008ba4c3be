//! The strata estimator (Eppstein, Goodrich, Uyeda and Varghese 2011,
//! section 3): the size of a set difference from two fixed-size sketches,
//! before the IBF that lists it is sized.
//!
//! Each key goes to stratum `i` with probability `2^-(i+1)` (the number of
//! trailing zero bits of its key hash; the last stratum takes the rest), and each stratum is a small IBF of key hashes. Subtract the two
//! sides' estimators and decode the strata from the sparsest down: when
//! stratum `i` fails to decode, the strata above it held a `2^-(i+1)`
//! sample of the difference, so the estimate is `2^(i+1)` times the
//! elements decoded so far; when every stratum decodes, the count is exact.
//!
//! The accuracy target of issue 18 (within a factor 1.5 of the true
//! difference 95% of the time) is met with [`DEFAULT_STRATUM_CELLS`] cells
//! per stratum: the stratum that fails holds roughly 60 to 120 elements, so
//! the sample behind the estimate is that large (relative error around
//! 1/√60). `reconcile-report` measures it; `tests/estimator.rs` checks
//! named bounds.

use crate::hashing::{positions, strata_check as check, HASH_COUNT};
use crate::Mismatch;

/// Strata in an estimator by default: differences up to about 2^32 keys.
pub const DEFAULT_STRATA: usize = 32;
/// Cells per stratum by default.
pub const DEFAULT_STRATUM_CELLS: usize = 150;
/// The most strata an estimator may have.
pub const MAX_STRATA: usize = 64;
/// The most cells per stratum.
pub const MAX_STRATUM_CELLS: usize = 3 << 14;

/// A strata estimator of key hashes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StrataEstimator {
    strata: usize,
    part: u32,
    /// Per cell, side by side: the count (an `i32`, in the low half of the
    /// word), the id XOR and the check XOR.
    cells: Vec<[u64; 3]>,
}

/// A cell's count.
#[inline]
fn count(cell: &[u64; 3]) -> i32 {
    cell[0] as u32 as i32
}

/// Adds `sign` to a cell's count (wrapping, as an `i32`).
#[inline]
fn add_count(cell: &mut [u64; 3], sign: i32) {
    cell[0] = u64::from((cell[0] as u32).wrapping_add(sign as u32));
}

impl StrataEstimator {
    /// An empty estimator of `strata` strata (1 to [`MAX_STRATA`]) of at
    /// least `cells` cells each (a multiple of three, at most
    /// [`MAX_STRATUM_CELLS`]); out-of-range values are clamped.
    pub fn new(strata: usize, cells: usize) -> Self {
        let strata = strata.clamp(1, MAX_STRATA);
        let part = cells.clamp(1, MAX_STRATUM_CELLS).div_ceil(HASH_COUNT);
        let total = strata * part * HASH_COUNT;
        Self {
            strata,
            part: part as u32,
            cells: vec![[0; 3]; total],
        }
    }

    /// The number of strata.
    pub fn strata(&self) -> usize {
        self.strata
    }

    /// Cells per stratum.
    pub fn stratum_cells(&self) -> usize {
        self.part as usize * HASH_COUNT
    }

    /// Adds a key by its hash ([`crate::hashing::key_hash`]).
    #[inline]
    pub fn insert_hash(&mut self, h: u64) {
        self.toggle(h, 1);
    }

    /// Removes a key by its hash.
    #[inline]
    pub fn remove_hash(&mut self, h: u64) {
        self.toggle(h, -1);
    }

    #[inline]
    fn toggle(&mut self, h: u64, sign: i32) {
        let stratum = (h.trailing_zeros() as usize).min(self.strata - 1);
        let base = stratum * self.stratum_cells();
        let c = check(h);
        for p in positions(c, self.part) {
            let cell = &mut self.cells[base + p];
            add_count(cell, sign);
            cell[1] ^= h;
            cell[2] ^= c;
        }
    }

    /// Whether `other` has the same shape.
    pub fn check_compatible(&self, other: &StrataEstimator) -> Result<(), Mismatch> {
        if (self.strata, self.part) != (other.strata, other.part) {
            return Err(Mismatch::Estimator);
        }
        Ok(())
    }

    /// Subtracts `other` cell by cell.
    pub fn subtract(&mut self, other: &StrataEstimator) -> Result<(), Mismatch> {
        self.check_compatible(other)?;
        for (a, b) in self.cells.iter_mut().zip(&other.cells) {
            add_count(a, count(b).wrapping_neg());
            a[1] ^= b[1];
            a[2] ^= b[2];
        }
        Ok(())
    }

    /// Adds `other` cell by cell: afterwards this estimator is the one of
    /// both sets' keys, as if each key of `other` had been inserted here.
    pub fn add(&mut self, other: &StrataEstimator) -> Result<(), Mismatch> {
        self.check_compatible(other)?;
        for (a, b) in self.cells.iter_mut().zip(&other.cells) {
            add_count(a, count(b));
            a[1] ^= b[1];
            a[2] ^= b[2];
        }
        Ok(())
    }

    /// The estimated size of the difference between the sets of `self`
    /// and `other` (exact when every stratum decodes).
    pub fn estimate_difference(&self, other: &StrataEstimator) -> Result<u64, Mismatch> {
        let mut d = self.clone();
        d.subtract(other)?;
        let mut count = 0u64;
        for s in (0..d.strata).rev() {
            match d.peel_stratum(s) {
                Some(n) => count += n,
                None => {
                    return Ok(count
                        .saturating_mul(1u64 << (s + 1).min(63))
                        .max(1 << (s + 1).min(63)))
                }
            }
        }
        Ok(count)
    }

    /// Peels stratum `s`; the number of elements when it empties, `None`
    /// when it does not.
    fn peel_stratum(&mut self, s: usize) -> Option<u64> {
        let cells = self.stratum_cells();
        let base = s * cells;
        let pure = |e: &Self, i: usize| {
            let cell = &e.cells[base + i];
            let (c, h) = (count(cell), cell[1]);
            (c == 1 || c == -1) && check(h) == cell[2] && positions(cell[2], e.part).contains(&i)
        };
        let mut stack: Vec<usize> = (0..cells).filter(|&i| pure(self, i)).collect();
        let mut peeled = 0u64;
        let limit = (cells * HASH_COUNT + 64) as u64;
        while let Some(i) = stack.pop() {
            if !pure(self, i) {
                continue;
            }
            if peeled >= limit {
                return None;
            }
            let (sign, h) = (count(&self.cells[base + i]), self.cells[base + i][1]);
            let c = check(h);
            for p in positions(c, self.part) {
                let cell = &mut self.cells[base + p];
                add_count(cell, sign.wrapping_neg());
                cell[1] ^= h;
                cell[2] ^= c;
                if pure(self, p) {
                    stack.push(p);
                }
            }
            peeled += 1;
        }
        let empty = self.cells[base..base + cells].iter().all(|c| *c == [0; 3]);
        empty.then_some(peeled)
    }

    /// The cells, for serialisation: (count, id XOR, check XOR), stratum
    /// by stratum.
    pub(crate) fn cell_parts(&self) -> impl Iterator<Item = (i32, u64, u64)> + '_ {
        self.cells.iter().map(|c| (count(c), c[1], c[2]))
    }

    /// An estimator from its cells (count, id XOR, check XOR); the shape
    /// is checked by the caller.
    pub(crate) fn from_cells(strata: usize, cells: impl Iterator<Item = (i32, u64, u64)>) -> Self {
        let cells: Vec<[u64; 3]> = cells.map(|(n, id, c)| [u64::from(n as u32), id, c]).collect();
        let part = (cells.len() / strata / HASH_COUNT) as u32;
        Self { strata, part, cells }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::hashing::mix;

    #[test]
    fn small_differences_are_counted_exactly() {
        let mut a = StrataEstimator::new(DEFAULT_STRATA, DEFAULT_STRATUM_CELLS);
        let mut b = a.clone();
        for i in 0..10_000u64 {
            a.insert_hash(mix(i));
            if i >= 20 {
                b.insert_hash(mix(i));
            }
        }
        b.insert_hash(mix(1 << 40));
        assert_eq!(a.estimate_difference(&b).unwrap(), 21);
        assert_eq!(a.estimate_difference(&a).unwrap(), 0);
    }
}
