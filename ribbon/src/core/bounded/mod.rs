//! Construction in bounded memory: the banding is done segment by segment in
//! a small window, with checkpoints (each segment's *carry*), and only the last segments' rows are
//! kept for back-substitution; the others are banded again, from their
//! checkpoint, when back-substitution reaches them.
//!
//! The bytes are those of RocksDB's construction (`util/ribbon_impl.h`,
//! `StandardBanding::ResetAndFindSeedToSolve` then
//! `SerializableInterleavedSolution::BackSubstFrom`), which holds a full
//! banding (`w / 8 + 4` bytes per slot) and the key hashes at once. The
//! banding result does not depend on the order in which equations are added
//! (see [`crate::core::alg`]), and two facts about on-the-fly elimination make a
//! window enough:
//!
//! 1. An equation whose start is `s` only reads and writes slots `>= s`.
//!    With equations added by *segment* of their start (slots `p_k ..
//!    p_{k+1}`), the rows below `p_k` are final once segment `k - 1` is
//!    added, and the rows at and above `p_k` at that moment (the *carry* of
//!    segment `k`) are all that later equations will ever meet of the
//!    earlier ones.
//! 2. The rows of segment `k`'s slots are therefore rebuilt exactly by
//!    starting from its carry and adding segment `k`'s equations again,
//!    dropping an equation as soon as it passes `p_{k+1}` (it can then no
//!    longer touch the segment).
//!
//! The first pass adds every equation (which decides whether the seed
//! works) in a window of two segments, records each carry and keeps the
//! final rows of the last segments, up to a budget. The second pass
//! back-substitutes from the last block down: kept segments straight from
//! their rows, the others after rebuilding them in the window. Peak memory
//! is the key hashes, the kept rows (at most as many bytes as the hashes)
//! and the finished filter, instead of the hashes plus a full banding.
//!
//! The mechanism is this module's ([`Carries`], [`BackSubstBySegment`]);
//! two constructions use it:
//!
//! * [`segments`]: Standard Ribbon (RocksDB's Standard128 and the
//!   standalone Standard filters) by segments of a fixed `2^k` slots;
//! * Balanced Ribbon (`crate::standalone`'s), whose segments are its
//!   shards: a shard's carry leaves out the rows its bumped keys stored
//!   (the second pass adds those keys again), and shards need not start at
//!   a block, which [`BackSubstBySegment`] handles.

use crate::core::alg::{CoeffRow, RibbonSettings};
use crate::core::prelude::*;
use crate::core::solution::{BackSubstState, InterleavedLayout};

pub mod segments;

pub use segments::{build, MIN_SLOTS};

/// Each segment's carry, recorded by the first pass: the rows at and
/// above the segment's first slot once the equations of the segments
/// before it are all added (those the second pass starts the segment
/// from), as offsets from that slot. Segments are numbered in the order
/// they were pushed.
pub(crate) struct Carries<C> {
    /// `at[k]..at[k + 1]` index segment `k`'s rows.
    at: Vec<usize>,
    offset: Vec<u32>,
    coeff: Vec<C>,
    result: Vec<u32>,
}

impl<C: CoeffRow> Carries<C> {
    /// No segment yet.
    pub(crate) fn new() -> Self {
        Self {
            at: vec![0],
            offset: Vec::new(),
            coeff: Vec::new(),
            result: Vec::new(),
        }
    }

    /// Records the next segment's carry: its rows as `(offset, coeff row,
    /// result row)`, none of them empty.
    pub(crate) fn push_segment(&mut self, rows: impl IntoIterator<Item = (u32, C, u32)>) {
        for (offset, coeff, result) in rows {
            debug_assert!(coeff != C::ZERO, "a carry row is a stored row");
            self.offset.push(offset);
            self.coeff.push(coeff);
            self.result.push(result);
        }
        self.at.push(self.offset.len());
    }

    /// Segment `k`'s carry rows, `(offset, coeff row, result row)`.
    pub(crate) fn segment(&self, k: usize) -> impl Iterator<Item = (u32, C, u32)> + '_ {
        (self.at[k]..self.at[k + 1]).map(|i| (self.offset[i], self.coeff[i], self.result[i]))
    }
}

/// The second pass: back-substitution segment by segment, the last first,
/// each segment's rows rebuilt (or kept) just before it is asked for.
///
/// A segment need not start at a block (`w` slots): the blocks all of
/// whose slots are known are back-substituted as each segment comes, and
/// the rows of a block's slots in a segment that came earlier wait for the
/// rest of the block.
pub(crate) struct BackSubstBySegment<'a, S: RibbonSettings> {
    layout: &'a InterleavedLayout<S>,
    out: &'a mut [u8],
    state: BackSubstState<S>,
    /// Blocks from here on are written.
    done_from: u32,
    /// The first slot of the segment that came last (`num_slots` before
    /// the first).
    end: u32,
    /// The rows of slots `end..done_from * w`, waiting for their block.
    pending: Vec<(S::CoeffRow, u32)>,
    next_pending: Vec<(S::CoeffRow, u32)>,
}

impl<'a, S: RibbonSettings> BackSubstBySegment<'a, S> {
    /// Back-substitution of the `num_slots` slots of `layout` (which must be
    /// for `num_slots`, a whole number of blocks) into `out`.
    pub(crate) fn new(layout: &'a InterleavedLayout<S>, num_slots: u32, out: &'a mut [u8]) -> Self {
        Self {
            layout,
            out,
            state: BackSubstState::default(),
            done_from: num_slots / S::CoeffRow::BITS,
            end: num_slots,
            pending: Vec::new(),
            next_pending: Vec::new(),
        }
    }

    /// The segment of slots `first..` up to the segment that came before
    /// (or to the last slot), whose row at each of those slots is
    /// `row(slot)`: back-substitutes every block whose rows are now all
    /// known. Segments come last first, and the first one comes last.
    pub(crate) fn segment(&mut self, first: u32, row: impl Fn(u32) -> (S::CoeffRow, u32)) {
        debug_assert!(first <= self.end);
        let w = S::CoeffRow::BITS;
        let lo = first.div_ceil(w).min(self.done_from);
        self.next_pending.clear();
        if self.pending.is_empty() {
            // Nothing waits: every row asked (below `done_from * w <=
            // end`) is this segment's, read without a test per row (always
            // so for segments that start at a block, as Standard's do).
            debug_assert!(self.done_from * w <= self.end);
            if lo < self.done_from {
                self.layout
                    .back_subst_blocks(&mut self.state, lo..self.done_from, &row, self.out);
            }
            self.next_pending.extend((first..lo * w).map(&row));
        } else {
            let (end, pending) = (self.end, &self.pending);
            let row = |i: u32| {
                if i >= end {
                    pending[(i - end) as usize]
                } else {
                    row(i)
                }
            };
            if lo < self.done_from {
                self.layout
                    .back_subst_blocks(&mut self.state, lo..self.done_from, row, self.out);
            }
            self.next_pending.extend((first..lo * w).map(row));
        }
        core::mem::swap(&mut self.pending, &mut self.next_pending);
        self.end = first;
        self.done_from = lo;
    }

    /// Ends the pass; every block was written.
    pub(crate) fn finish(self) {
        debug_assert_eq!(self.done_from, 0, "a segment starts at slot 0");
    }
}
