//! Range deletions (`DeleteRange`): tombstones `[start, end)` with a
//! sequence number, from the WAL and from SST files' `rocksdb.range_del`
//! blocks, fragmented into non-overlapping pieces that each carry the
//! highest sequence number of the tombstones over them.
//!
//! Ported in behaviour from RocksDB's `db/range_tombstone_fragmenter.cc`
//! (`FragmentedRangeTombstoneList`, `MaxCoveringTombstoneSeqnum`: the
//! newest tombstone over a user key) and `db/dbformat.h` (a range-deletion
//! block entry is the internal key `start | seq | kTypeRangeDeletion` with
//! the end user key as its value). An entry of sequence number `s` is
//! deleted by a tombstone over its key of sequence number greater than `s`
//! (with no snapshot, every tombstone is visible).
//!
//! Memory: linear in the tombstones (the list is built once per reader).

use super::error::DbError;
use crate::block_entries::{EntryIter, ValueFormat};
use crate::budget::ReadBudget;
use crate::error::BlockKind;
use crate::key::{self, Comparator};
use crate::table::SstFile;
use core::cmp::Ordering;

/// The value type of a range tombstone in a `rocksdb.range_del` block.
pub const RANGE_DELETION: u8 = 0xF;

/// At most this many tombstones are read into one list (a database that
/// holds more is refused, in one line, rather than read without bound).
pub const MAX_TOMBSTONES: usize = 1 << 22;

/// One range tombstone.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Tombstone {
    /// The first user key deleted.
    pub start: Vec<u8>,
    /// The first user key after the range (not deleted).
    pub end: Vec<u8>,
    /// Its sequence number.
    pub seq: u64,
}

/// Tombstones fragmented: `starts[i]..starts[i + 1]` is covered up to
/// sequence number `seqs[i]` (0: not covered), in comparator order.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Tombstones {
    starts: Vec<Vec<u8>>,
    seqs: Vec<u64>,
    count: usize,
}

impl Tombstones {
    /// Fragments `list` in `comparator`'s order (empty ranges are dropped,
    /// as RocksDB drops them).
    pub fn new(list: &[Tombstone], comparator: Comparator) -> Self {
        let cmp = |a: &[u8], b: &[u8]| comparator.compare_user(a, b).unwrap_or(Ordering::Equal);
        let live: Vec<&Tombstone> = list
            .iter()
            .filter(|t| cmp(&t.start, &t.end) == Ordering::Less)
            .collect();
        let mut bounds: Vec<&[u8]> = live
            .iter()
            .flat_map(|t| [t.start.as_slice(), t.end.as_slice()])
            .collect();
        bounds.sort_by(|a, b| cmp(a, b));
        bounds.dedup_by(|a, b| cmp(a, b) == Ordering::Equal);
        // A sweep over the bounds: the tombstones begun so far, in a heap by
        // sequence number; an ended one is dropped when it reaches the top.
        let mut by_start: Vec<usize> = (0..live.len()).collect();
        by_start.sort_by(|&a, &b| cmp(&live[a].start, &live[b].start));
        let mut begun = by_start.into_iter().peekable();
        let mut heap: std::collections::BinaryHeap<(u64, usize)> = std::collections::BinaryHeap::new();
        let mut seqs = vec![0u64; bounds.len()];
        for (i, b) in bounds.iter().enumerate() {
            while let Some(j) = begun.next_if(|&j| cmp(&live[j].start, b) != Ordering::Greater) {
                heap.push((live[j].seq, j));
            }
            while heap
                .peek()
                .is_some_and(|&(_, j)| cmp(&live[j].end, b) != Ordering::Greater)
            {
                heap.pop();
            }
            seqs[i] = heap.peek().map_or(0, |&(s, _)| s);
        }
        Self {
            starts: bounds.into_iter().map(<[u8]>::to_vec).collect(),
            seqs,
            count: live.len(),
        }
    }

    /// Whether there is no tombstone.
    pub fn is_empty(&self) -> bool {
        self.count == 0
    }

    /// How many tombstones were fragmented.
    pub fn len(&self) -> usize {
        self.count
    }

    /// The highest sequence number of a tombstone over `user_key` (0: none).
    pub fn max_covering(&self, user_key: &[u8], comparator: Comparator) -> u64 {
        if self.count == 0 {
            return 0;
        }
        let i = self
            .starts
            .partition_point(|s| comparator.compare_user(s, user_key) != Some(Ordering::Greater));
        if i == 0 {
            0
        } else {
            self.seqs[i - 1]
        }
    }
}

/// The range tombstones of `sst` (none when it has no `rocksdb.range_del`
/// block); `global_seqno` replaces their sequence numbers in an ingested
/// file that has one. Appended to `out`.
pub fn read_sst_tombstones(
    sst: &SstFile,
    global_seqno: Option<u64>,
    name: &str,
    out: &mut Vec<Tombstone>,
) -> Result<(), DbError> {
    let Some(handle) = sst
        .metaindex()
        .iter()
        .find(|(n, _)| n == crate::table::RANGE_DEL_BLOCK.as_bytes())
        .map(|(_, h)| *h)
    else {
        return Ok(());
    };
    let sst_err = |error| DbError::Sst {
        file: name.to_string(),
        error,
    };
    let kind = BlockKind::RangeDeletion;
    let mut budget = ReadBudget::for_data(sst.file_len());
    let block = sst.fetcher().read(handle, &kind, &mut budget).map_err(sst_err)?;
    let mut it =
        EntryIter::new(&block.contents, kind, handle.offset, ValueFormat::Plain, 0).map_err(sst_err)?;
    let ts = sst.comparator().timestamp_size;
    while it.advance().map_err(sst_err)? {
        let ikey = it.key();
        if ikey.len() < key::INTERNAL_FOOTER_LEN + ts {
            return Err(DbError::corrupt(
                name,
                "a range tombstone shorter than an internal key",
            ));
        }
        let (start, footer) = key::split_internal(ikey);
        if footer & 0xff != u64::from(RANGE_DELETION) {
            return Err(DbError::corrupt(
                name,
                format!(
                    "an entry of value type {:#x} in the range deletion block",
                    footer & 0xff
                ),
            ));
        }
        if out.len() >= MAX_TOMBSTONES {
            return Err(DbError::unsupported(format!(
                "more than {MAX_TOMBSTONES} range tombstones: not read (the reader's bound)"
            )));
        }
        out.push(Tombstone {
            start: start.to_vec(),
            end: it.value().to_vec(),
            seq: global_seqno.unwrap_or(footer >> 8),
        });
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn t(start: &str, end: &str, seq: u64) -> Tombstone {
        Tombstone {
            start: start.into(),
            end: end.into(),
            seq,
        }
    }

    #[test]
    fn the_newest_tombstone_over_a_key_counts() {
        let c = Comparator::from_name(Some("leveldb.BytewiseComparator"));
        let list = Tombstones::new(&[t("b", "f", 5), t("d", "h", 9), t("x", "x", 20)], c);
        assert_eq!(list.len(), 2);
        let got: Vec<u64> = ["a", "b", "c", "d", "e", "f", "g", "h", "x"]
            .iter()
            .map(|k| list.max_covering(k.as_bytes(), c))
            .collect();
        assert_eq!(got, [0, 5, 5, 9, 9, 9, 9, 0, 0]);
        let r = Comparator::from_name(Some("rocksdb.ReverseBytewiseComparator"));
        let list = Tombstones::new(&[t("f", "b", 5)], r);
        assert_eq!(list.max_covering(b"c", r), 5);
        assert_eq!(list.max_covering(b"b", r), 0);
        assert_eq!(list.max_covering(b"f", r), 5);
    }
}
