//! The partition choice of [`Filter::partition_for`] for a batch of keys,
//! for the bytewise comparator without timestamps.
//!
//! The per-key path builds `Get`'s lookup key and binary-searches the
//! separators, comparing whole internal keys. A batch instead splits the
//! separators once into (first 8 bytes as a number, user key, footer) and
//! places each key through a table indexed by the leading bits of its first
//! 8 bytes, past the bits every separator shares: with random keys most
//! table cells hold no separator, so most keys are placed with no
//! comparison and no mispredicted branch. Same answers as
//! [`Filter::partition_for`] (tested against it); separators out of order
//! (a damaged or crafted index) take the per-key path.

use crate::filter::Filter;
use crate::key::{self, Comparator, UserComparator};
use core::cmp::Ordering;
use ribbon::plugin::TableFilter;

/// Most table cells: 2^16 four-byte counts (256 KiB).
const MAX_CELL_BITS: u32 = 16;

/// Above this many separators left to compare (keys sharing more than the
/// cell's bits), a binary search step instead of a scan.
const SCAN_LIMIT: usize = 8;

/// A partitioned filter's separators, ready to place keys.
pub(crate) struct PartitionSeek<'a> {
    /// Each separator's user key's first 8 bytes as a big-endian number,
    /// zero-padded ([`prefix8`]).
    prefixes: Vec<u64>,
    /// Each separator's user key and footer (the whole separator and
    /// footer 0 when separators are user keys).
    separators: Vec<(&'a [u8], u64)>,
    /// Whether separators are internal keys (with a footer).
    internal: bool,
    /// The footer of the lookup key `Get` seeks with.
    lookup_footer: u64,
    /// The leading bits that every separator's prefix shares with
    /// `prefixes[0]` (0 to 64).
    shared_bits: u32,
    /// The bits after `shared_bits` that index `cells` (0 when
    /// `shared_bits` is 64).
    cell_bits: u32,
    /// `cells[c]`: how many separators' prefixes are below the smallest
    /// prefix of cell `c` (`2^cell_bits + 1` entries, the last one the
    /// separator count).
    cells: Vec<u32>,
}

impl<'a> PartitionSeek<'a> {
    /// `None` unless `filter` is partitioned, has partitions in order (at
    /// most `u32::MAX`), and `cmp` is the bytewise comparator without
    /// timestamps. The table is sized for `batch_len` keys as well as for
    /// the separators, so that building it costs no more than placing the
    /// batch.
    pub(crate) fn new(filter: &'a Filter, cmp: Comparator, batch_len: usize) -> Option<Self> {
        let Filter::Partitioned {
            index_key_includes_seq,
            partitions,
            ..
        } = filter
        else {
            return None;
        };
        if partitions.is_empty()
            || u32::try_from(partitions.len()).is_err()
            || cmp.user != UserComparator::Bytewise
            || cmp.timestamp_size != 0
        {
            return None;
        }
        let internal = *index_key_includes_seq;
        let separators: Vec<(&[u8], u64)> = partitions
            .iter()
            .map(|p| {
                if internal {
                    key::split_internal(&p.separator)
                } else {
                    (p.separator.as_slice(), 0)
                }
            })
            .collect();
        // Internal order: user key ascending, then footer descending.
        let in_order = separators
            .windows(2)
            .all(|w| w[0].0.cmp(w[1].0).then(w[1].1.cmp(&w[0].1)) != Ordering::Greater);
        if !in_order {
            return None;
        }
        let prefixes: Vec<u64> = separators.iter().map(|&(user, _)| prefix8(user)).collect();
        let (first, last) = (prefixes[0], prefixes[prefixes.len() - 1]);
        let shared_bits = (first ^ last).leading_zeros();
        // About sixteen cells per separator, at most about two per key.
        let bits = |n: usize| usize::BITS - n.leading_zeros();
        let wanted = (bits(prefixes.len()) + 4)
            .min(bits(batch_len) + 1)
            .min(MAX_CELL_BITS);
        let cell_bits = wanted.min(64 - shared_bits);
        // One walk over cells and separators together (prefixes ascend).
        let mut below = 0usize;
        let cells = (0..=1u64 << cell_bits)
            .map(|c| {
                if c == 1 << cell_bits {
                    return prefixes.len() as u32;
                }
                let start = shared_part(first, shared_bits)
                    | c.checked_shl(64 - shared_bits - cell_bits).unwrap_or(0);
                while below < prefixes.len() && prefixes[below] < start {
                    below += 1;
                }
                below as u32
            })
            .collect();
        Some(Self {
            prefixes,
            separators,
            internal,
            lookup_footer: key::split_internal(&key::lookup_key(b"")).1,
            shared_bits,
            cell_bits,
            cells,
        })
    }

    /// The partition `Get(user_key)` reads: the first whose separator does
    /// not sort before the lookup key (internal order: user key, then
    /// footer descending), the last one past them all.
    #[inline]
    pub(crate) fn partition_for(&self, user_key: &[u8]) -> usize {
        let p = prefix8(user_key);
        // Nearly every key: its cell holds at most one separator, whose
        // first 8 bytes differ from the key's, and the key is placed
        // without a branch on its value.
        if self.cell_bits != 0 && shared_part(p ^ self.prefixes[0], self.shared_bits) == 0 {
            let cell = ((p << self.shared_bits) >> (64 - self.cell_bits)) as usize;
            if let (Some(&lo), Some(&hi)) = (self.cells.get(cell), self.cells.get(cell + 1)) {
                let (lo, hi) = (lo as usize, hi as usize);
                // Past the last separator (`lo` = their count) the cell is
                // empty and `q` is not used.
                let q = self.prefixes.get(lo).copied().unwrap_or(0);
                let one = hi == lo + 1;
                if hi == lo || (one && q != p) {
                    return (lo + usize::from(one & (q < p))).min(self.prefixes.len() - 1);
                }
            }
        }
        self.place(user_key, p)
    }

    /// [`Self::partition_for`] for any key, `p` its [`prefix8`].
    #[cold]
    #[inline(never)]
    fn place(&self, user_key: &[u8], p: u64) -> usize {
        let last = self.prefixes.len() - 1;
        let first = self.prefixes[0];
        // A key outside the shared bits is below or above every separator.
        if shared_part(p, self.shared_bits) != shared_part(first, self.shared_bits) {
            return if p < first { 0 } else { last };
        }
        let cell = match self.cell_bits {
            0 => 0,
            bits => ((p << self.shared_bits) >> (64 - bits)) as usize,
        };
        // Separators before `lo` have smaller prefixes, those from `hi` on
        // larger ones: only the cell's own are compared.
        let (lo, hi) = (self.cells[cell], self.cells[cell + 1]);
        let before = |i: usize| {
            let q = self.prefixes[i];
            // Equal first 8 bytes decide nothing (zero padding).
            if q != p {
                return q < p;
            }
            let (user, footer) = self.separators[i];
            match user.cmp(user_key) {
                Ordering::Less => true,
                Ordering::Equal => self.internal && self.lookup_footer < footer,
                Ordering::Greater => false,
            }
        };
        let (mut lo, mut hi) = (lo as usize, hi as usize);
        while hi - lo > SCAN_LIMIT {
            let mid = lo + (hi - lo) / 2;
            if before(mid) {
                lo = mid + 1;
            } else {
                hi = mid;
            }
        }
        while lo < hi && before(lo) {
            lo += 1;
        }
        lo.min(last)
    }
}

/// `out[i] = readers[r].may_match_hash(h)` for `queries[i] = (r, h)`, as
/// [`TableFilter::may_match_hashes_across`] answers, but asked partition by
/// partition: the queries are grouped by reader (a stable counting sort),
/// each reader answers its own in one batch over its block, and the
/// answers go back to their places. A partition's block (4 KiB by
/// default) then stays in the L1 cache for all of its keys, as in the raw
/// reader's batch over keys grouped by partition, instead of each query
/// touching a block the previous one did not (the 1.52 of issue 37).
///
/// `SstFile`'s batched queries of a partitioned filter go through it.
/// Measured in the test `grouped_answers_are_the_interleaved_ones`: 0.90 of
/// the interleaved batch's time, placement and hashing included.
///
/// # Panics
/// When `out.len() != queries.len()`, or a query names a reader past
/// `readers`.
pub(crate) fn answer_grouped(readers: &[TableFilter<'_>], queries: &[(usize, u64)], out: &mut [bool]) {
    assert_eq!(queries.len(), out.len(), "one answer slot per query");
    let mut starts = vec![0usize; readers.len() + 1];
    for &(r, _) in queries {
        starts[r + 1] += 1;
    }
    for r in 0..readers.len() {
        starts[r + 1] += starts[r];
    }
    // Each query's place in the grouped order, and the hashes in it.
    let mut next = starts.clone();
    let mut hashes = vec![0u64; queries.len()];
    let mut places = vec![0u32; queries.len()];
    for (i, &(r, h)) in queries.iter().enumerate() {
        let at = next[r];
        next[r] += 1;
        hashes[at] = h;
        places[i] = at as u32;
    }
    let mut grouped = vec![false; queries.len()];
    for (r, reader) in readers.iter().enumerate() {
        let (lo, hi) = (starts[r], starts[r + 1]);
        if lo < hi {
            reader.may_match_many_hashes_into(&hashes[lo..hi], &mut grouped[lo..hi]);
        }
    }
    for (o, &at) in out.iter_mut().zip(&places) {
        *o = grouped[at as usize];
    }
}

/// The leading `bits` bits of `x`, the rest cleared.
#[inline]
fn shared_part(x: u64, bits: u32) -> u64 {
    match bits {
        0 => 0,
        b => x & (u64::MAX << (64 - b)),
    }
}

/// The first 8 bytes of `key` as a big-endian number, zero-padded: for
/// two keys, a smaller number means a smaller key (bytewise); equal numbers
/// decide nothing.
#[inline]
fn prefix8(key: &[u8]) -> u64 {
    if let Some(&b) = key.first_chunk::<8>() {
        return u64::from_be_bytes(b);
    }
    let mut b = [0u8; 8];
    let n = key.len().min(8);
    b[..n].copy_from_slice(&key[..n]);
    u64::from_be_bytes(b)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::filter::Partition;
    use crate::handle::BlockHandle;
    use ribbon::plugin::Family;

    /// The batch's partition choice is the per-key one, for internal and
    /// user-key separators, at, around and between separators, including
    /// separators with `kMaxSequenceNumber` (the shortened ones) and with
    /// smaller sequence numbers.
    #[test]
    fn batched_partition_choice_is_the_per_key_one() {
        let handle = BlockHandle { offset: 0, size: 1 };
        let user_keys: Vec<&[u8]> = vec![
            b"", b"b", b"bb", b"bb", b"d", b"d\x00", b"m", b"mz", b"z", b"\xff",
        ];
        for internal in [false, true] {
            for seq in [0u64, 5, (1 << 56) - 1] {
                let partitions = user_keys
                    .iter()
                    .map(|u| {
                        let mut separator = u.to_vec();
                        if internal {
                            separator.extend_from_slice(&((seq << 8) | 1).to_le_bytes());
                        }
                        Partition {
                            separator,
                            handle,
                            contents: Vec::new(),
                        }
                    })
                    .collect();
                let filter = Filter::Partitioned {
                    index_handle: handle,
                    index_key_includes_seq: internal,
                    partitions,
                    family: Family::Builtin,
                };
                let cmp = Comparator::from_name(None);
                let seek = PartitionSeek::new(&filter, cmp, 1000).expect("bytewise");
                let mut probes: Vec<Vec<u8>> = vec![Vec::new(), b"a".to_vec(), b"zz".to_vec(), vec![0xff; 3]];
                for u in &user_keys {
                    probes.push(u.to_vec());
                    let mut longer = u.to_vec();
                    longer.push(0);
                    probes.push(longer);
                    probes.push(u[..u.len().saturating_sub(1)].to_vec());
                }
                for p in &probes {
                    assert_eq!(
                        Some(seek.partition_for(p)),
                        filter.partition_for(p, cmp),
                        "internal {internal} seq {seq} key {p:?}"
                    );
                }
            }
        }
        let reverse = Comparator::from_name(Some("rocksdb.ReverseBytewiseComparator"));
        let filter = Filter::Partitioned {
            index_handle: handle,
            index_key_includes_seq: true,
            partitions: vec![Partition {
                separator: b"k".to_vec(),
                handle,
                contents: Vec::new(),
            }],
            family: Family::Builtin,
        };
        assert!(
            PartitionSeek::new(&filter, reverse, 1000).is_none(),
            "other comparators take the per-key path"
        );
    }

    /// A small generator for the sweeps (xorshift64*).
    struct Rng(u64);

    impl Rng {
        fn next(&mut self) -> u64 {
            self.0 ^= self.0 >> 12;
            self.0 ^= self.0 << 25;
            self.0 ^= self.0 >> 27;
            self.0.wrapping_mul(0x2545_f491_4f6c_dd1d)
        }

        fn below(&mut self, n: usize) -> usize {
            (self.next() % n as u64) as usize
        }

        /// `len` bytes from a small alphabet when `narrow` (so keys share
        /// prefixes and equal first 8 bytes), any bytes otherwise.
        fn bytes(&mut self, len: usize, narrow: bool) -> Vec<u8> {
            (0..len)
                .map(|_| {
                    if narrow {
                        b"ab\x00\xff"[self.below(4)]
                    } else {
                        self.next() as u8
                    }
                })
                .collect()
        }
    }

    /// Sorted separators of many shapes (a shared prefix of 0 to 12 bytes,
    /// user keys of 0 to 12 more bytes, narrow and wide alphabets, 1 to
    /// 3000 partitions, internal and user-key separators), tables for
    /// batches of 0 to 2^20 keys: every probe is placed where the per-key
    /// search places it. Probes: random keys, and each separator's user
    /// key, one byte shorter, and one zero byte longer.
    #[test]
    fn table_placement_is_the_per_key_one_on_random_separators() {
        let handle = BlockHandle { offset: 0, size: 1 };
        let cmp = Comparator::from_name(None);
        let mut rng = Rng(0x9e37_79b9_7f4a_7c15);
        for round in 0..300 {
            let narrow = round % 2 == 0;
            let internal = round % 3 != 0;
            let shared_len = rng.below(13);
            let shared = rng.bytes(shared_len, narrow);
            let count = [1, 2, 7, 50, 300, 3000][round % 6];
            let key = |rng: &mut Rng| {
                let mut k = shared.clone();
                let extra = rng.below(13);
                k.extend(rng.bytes(extra, narrow));
                k
            };
            let mut users: Vec<Vec<u8>> = (0..count).map(|_| key(&mut rng)).collect();
            users.sort();
            let mut separators: Vec<Vec<u8>> = Vec::with_capacity(count);
            for (i, u) in users.iter().enumerate() {
                let mut s = u.clone();
                if internal {
                    // Footers descending among equal user keys.
                    let seq = if i > 0 && users[i - 1] == *u {
                        0
                    } else {
                        (1u64 << 56) - 1 - rng.below(3) as u64
                    };
                    s.extend_from_slice(&((seq << 8) | 1).to_le_bytes());
                }
                separators.push(s);
            }
            let filter = Filter::Partitioned {
                index_handle: handle,
                index_key_includes_seq: internal,
                partitions: separators
                    .into_iter()
                    .map(|separator| Partition {
                        separator,
                        handle,
                        contents: Vec::new(),
                    })
                    .collect(),
                family: Family::Builtin,
            };
            let batch_len = [0, 30, 5000, 1 << 20][round % 4];
            let seek = PartitionSeek::new(&filter, cmp, batch_len).expect("sorted separators");
            let mut probes: Vec<Vec<u8>> = (0..2000).map(|_| key(&mut rng)).collect();
            for _ in 0..200 {
                let len = rng.below(16);
                probes.push(rng.bytes(len, narrow));
            }
            for u in &users {
                probes.push(u.clone());
                probes.push(u[..u.len().saturating_sub(1)].to_vec());
                let mut longer = u.clone();
                longer.push(0);
                probes.push(longer);
            }
            for p in &probes {
                assert_eq!(
                    Some(seek.partition_for(p)),
                    filter.partition_for(p, cmp),
                    "round {round} internal {internal} count {count} batch {batch_len} key {p:?}"
                );
            }
        }
    }

    /// Separators out of order (a damaged or crafted index) are left to
    /// the per-key search.
    #[test]
    fn separators_out_of_order_take_the_per_key_path() {
        let handle = BlockHandle { offset: 0, size: 1 };
        let filter = Filter::Partitioned {
            index_handle: handle,
            index_key_includes_seq: false,
            partitions: [b"m".as_slice(), b"c"]
                .iter()
                .map(|s| Partition {
                    separator: s.to_vec(),
                    handle,
                    contents: Vec::new(),
                })
                .collect(),
            family: Family::Builtin,
        };
        assert!(PartitionSeek::new(&filter, Comparator::from_name(None), 1000).is_none());
    }

    /// Issue 37: answering a partitioned filter's batch partition by
    /// partition ([`answer_grouped`]) gives the answers of the
    /// interleaved batch ([`TableFilter::may_match_hashes_across`]) and of
    /// each key's own query. With `RIBBON_TIME_PARTITIONED=1` (and
    /// `--nocapture`) it also times both against the raw batch over keys
    /// already grouped by partition, as `benches/filters.rs`'s
    /// `sst_query/partitioned` does: 10^6 keys of 16 to 24 bytes in
    /// partitions of about 4 KiB, 10^5 queries, half members.
    #[test]
    fn grouped_answers_are_the_interleaved_ones() {
        use ribbon::core::hash::get_slice_hash64;
        let timed = std::env::var_os("RIBBON_TIME_PARTITIONED").is_some();
        let (n, q) = if timed {
            (1_000_000, 100_000)
        } else {
            (40_000, 4_000)
        };
        let mut rng = Rng(0x2545_f491_4f6c_dd1d);
        let mut keys: Vec<Vec<u8>> = (0..n)
            .map(|_| {
                let len = 16 + rng.below(9);
                rng.bytes(len, false)
            })
            .collect();
        keys.sort();
        keys.dedup();
        let handle = BlockHandle { offset: 0, size: 1 };
        // About 4 KiB of filter a partition (~1.2 bytes a key).
        let per = 3_300;
        let partitions: Vec<Partition> = keys
            .chunks(per)
            .map(|chunk| {
                let hashes: Vec<u64> = chunk.iter().map(|k| get_slice_hash64(k)).collect();
                let contents = ribbon::rocksdb::standard128::build(hashes, 100.0, |_| usize::MAX)
                    .expect("a Ribbon filter");
                Partition {
                    separator: chunk.last().expect("non-empty").clone(),
                    handle,
                    contents,
                }
            })
            .collect();
        let filter = Filter::Partitioned {
            index_handle: handle,
            index_key_includes_seq: false,
            partitions,
            family: Family::Builtin,
        };
        let Filter::Partitioned { partitions, .. } = &filter else {
            unreachable!()
        };
        let cmp = Comparator::from_name(None);
        let probes: Vec<Vec<u8>> = (0..q)
            .map(|i| {
                if i % 2 == 0 {
                    keys[rng.below(keys.len())].clone()
                } else {
                    let len = 16 + rng.below(9);
                    rng.bytes(len, false)
                }
            })
            .collect();
        let mut readers: Vec<TableFilter<'_>> =
            partitions.iter().map(|p| filter.partition_reader(p)).collect();
        readers.push(TableFilter::Builtin(
            ribbon::rocksdb::format::FilterReader::AlwaysTrue,
        ));
        let seek = PartitionSeek::new(&filter, cmp, probes.len()).expect("bytewise");
        let place = |probes: &[Vec<u8>]| -> Vec<(usize, u64)> {
            probes
                .iter()
                .map(|k| (seek.partition_for(k), get_slice_hash64(k)))
                .collect()
        };
        let interleaved = |probes: &[Vec<u8>]| {
            let queries = place(probes);
            let mut out = vec![true; queries.len()];
            TableFilter::may_match_hashes_across(&readers, &queries, &mut out);
            out
        };
        let grouped = |probes: &[Vec<u8>]| {
            let queries = place(probes);
            let mut out = vec![true; queries.len()];
            answer_grouped(&readers, &queries, &mut out);
            out
        };
        let a = interleaved(&probes);
        assert_eq!(a, grouped(&probes));
        for (k, &m) in probes.iter().zip(&a) {
            let p = filter.partition_for(k, cmp).expect("a partition");
            assert_eq!(m, readers[p].may_match(k));
        }
        assert!(a.iter().step_by(2).all(|&m| m), "no false negative");
        let fp = a.iter().skip(1).step_by(2).filter(|&&m| m).count() as f64 / (q / 2) as f64;
        assert!(fp < 0.03, "FP rate {fp}");
        if !timed {
            return;
        }
        // The raw baseline: keys grouped by partition outside the timing.
        let mut groups: Vec<Vec<&[u8]>> = vec![Vec::new(); readers.len()];
        for (k, &(p, _)) in probes.iter().zip(&place(&probes)) {
            groups[p].push(k);
        }
        let raw = || {
            groups
                .iter()
                .zip(&readers)
                .map(|(keys, r)| r.may_match_many(keys).iter().filter(|&&m| m).count())
                .sum::<usize>()
        };
        assert_eq!(raw(), a.iter().filter(|&&m| m).count());
        // The grouped path's parts apart: hashing alone (key order),
        // placing and hashing, the counting sort and the answers put back
        // alone (every reader answering "may match" without a look), and
        // answering the placed queries (sort and filter queries).
        let placed = place(&probes);
        let trivial =
            vec![TableFilter::Builtin(ribbon::rocksdb::format::FilterReader::AlwaysTrue); readers.len()];
        let answer_with = |readers: &[TableFilter<'_>]| {
            let mut out = vec![true; placed.len()];
            answer_grouped(readers, &placed, &mut out);
            out
        };
        let rows: [(&str, &dyn Fn() -> usize); 7] = [
            ("raw batch, keys grouped outside the timing", &|| raw()),
            ("interleaved batch across partitions", &|| {
                interleaved(&probes).len()
            }),
            ("grouped batch (SstFile's path)", &|| grouped(&probes).len()),
            ("  hashing alone", &|| {
                probes.iter().map(|k| get_slice_hash64(k) as usize).sum()
            }),
            ("  placing and hashing", &|| place(&probes).len()),
            ("  counting sort and answers put back alone", &|| {
                answer_with(&trivial).len()
            }),
            ("  answering the placed queries", &|| answer_with(&readers).len()),
        ];
        let mut best = [f64::INFINITY; 7];
        for _ in 0..25 {
            for (b, (_, f)) in best.iter_mut().zip(&rows) {
                let t = std::time::Instant::now();
                std::hint::black_box(f());
                *b = b.min(t.elapsed().as_nanos() as f64 / q as f64);
            }
        }
        println!(
            "{} partitions; ns/key, the fastest of 25 interleaved rounds:",
            partitions.len()
        );
        for ((name, _), b) in rows.iter().zip(best) {
            println!("{name}: {b:.2} ({:.2} of the raw batch)", b / best[0]);
        }
    }
}
