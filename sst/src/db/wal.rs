//! Unflushed writes: the WriteBatches of the WAL files RocksDB has not yet
//! flushed to SST files, replayed into a memtable of the newest entry per
//! user key.
//!
//! Ported from RocksDB's `db/write_batch.cc` (`ReadRecordFromWriteBatch`,
//! `WriteBatchInternal::Iterate`: a 12-byte header of sequence number and
//! count, then tagged records, the column-family variants carrying a
//! varint32 column family id first) and `db/db_impl/db_impl_open.cc`
//! (`RecoverLogFiles`: the WALs numbered at or above a column family's log
//! number are replayed in number order, up to the first corrupt record
//! under the default `kPointInTimeRecovery`).
//!
//! What this reader refuses rather than guess: compressed WALs, range
//! deletions, and the markers of two-phase commit (prepared transactions
//! are not yet part of the database). Merge operands make a key present
//! (a merge on no value still gives a value). Timestamped keys
//! (user-defined timestamps) are refused by [`super::Db`].

use super::error::DbError;
use super::log::{LogEnd, LogReader, MetaRecord, Record};
use crate::coding::Reader;
use std::collections::BTreeMap;
use std::path::Path;

/// What the newest write of a key did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum EntryKind {
    /// A value (put, merge, blob index, wide-column entity): the key is present.
    Value,
    /// A deletion (delete, single delete): the key is absent.
    Deletion,
}

/// The newest unflushed write of each user key of one column family.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Memtable {
    entries: BTreeMap<Vec<u8>, (u64, EntryKind)>,
    /// WAL files replayed (their numbers), in order.
    pub wal_files: Vec<u64>,
    /// Writes replayed for this column family.
    pub writes: u64,
    /// Where a WAL ended early, and why: (file number, how it ended). RocksDB
    /// recovers up to the same point.
    pub cut_short: Vec<(u64, LogEnd)>,
}

impl Memtable {
    /// The newest write of `user_key`: its sequence number and kind.
    pub fn get(&self, user_key: &[u8]) -> Option<(u64, EntryKind)> {
        self.entries.get(user_key).copied()
    }

    /// The entries in bytewise key order.
    pub fn iter(&self) -> impl Iterator<Item = (&[u8], u64, EntryKind)> + '_ {
        self.entries.iter().map(|(k, &(s, t))| (k.as_slice(), s, t))
    }

    /// How many distinct keys.
    pub fn len(&self) -> usize {
        self.entries.len()
    }

    /// Whether no key was written.
    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    fn put(&mut self, key: &[u8], seq: u64, kind: EntryKind) {
        self.writes += 1;
        match self.entries.get_mut(key) {
            Some(e) if e.0 <= seq => *e = (seq, kind),
            Some(_) => {}
            None => {
                self.entries.insert(key.to_vec(), (seq, kind));
            }
        }
    }

    /// Replays one WAL file's bytes (`number`: its file number, `name` in
    /// errors) for column family `cf`.
    pub fn replay(&mut self, data: &[u8], number: u64, cf: u32, name: &str) -> Result<(), DbError> {
        let mut reader = LogReader::new(data, number);
        while let Some(record) = reader.next_record() {
            match record {
                Record::Data(batch) => self
                    .apply_batch(&batch, cf)
                    .map_err(|w| DbError::corrupt(name, w))?,
                Record::Meta(MetaRecord::SetCompression(0)) => {}
                Record::Meta(MetaRecord::SetCompression(c)) => {
                    return Err(DbError::unsupported(format!(
                    "{name}: a compressed WAL (compression type {c}) is not supported; flush the database \
                         (e.g. `ldb flush` or DB::Flush) and try again"
                )))
                }
                Record::Meta(_) => {}
            }
        }
        self.wal_files.push(number);
        match reader.end() {
            Some(LogEnd::Clean) | None => {}
            Some(end) => self.cut_short.push((number, end.clone())),
        }
        Ok(())
    }

    /// Applies one WriteBatch.
    fn apply_batch(&mut self, batch: &[u8], cf: u32) -> Result<(), String> {
        let mut r = Reader::new(batch);
        let first_seq = r.fixed64().ok_or("a WriteBatch shorter than its header")?;
        let count = r.fixed32().ok_or("a WriteBatch shorter than its header")?;
        let mut seen = 0u32;
        let mut seq = first_seq;
        let bad = |what: &str| format!("WriteBatch at sequence {first_seq}: {what}");
        while !r.is_empty() {
            let tag = r.bytes(1).ok_or_else(|| bad("truncated"))?[0];
            let family = match tag {
                0x4..=0x6 | 0x8 | 0xE | 0x10 | 0x17 | 0x19 => {
                    r.varint32().ok_or_else(|| bad("bad column family"))?
                }
                _ => 0,
            };
            let mut lp = |what: &str| r.length_prefixed().ok_or_else(|| bad(what));
            let kind = match tag {
                // Value, merge, blob index, wide-column entity, value with
                // preferred seqno (and their column-family forms).
                0x1 | 0x5 | 0x2 | 0x6 | 0x11 | 0x10 | 0x16 | 0x17 | 0x18 | 0x19 => {
                    let key = lp("bad key")?;
                    lp("bad value")?;
                    Some((key, EntryKind::Value))
                }
                // Deletion, single deletion (and column-family forms).
                0x0 | 0x4 | 0x7 | 0x8 => Some((lp("bad key")?, EntryKind::Deletion)),
                0xF | 0xE => {
                    if family == cf {
                        return Err(
                            "a range deletion (DeleteRange) in the WAL is not supported; flush and compact the range"
                                .into(),
                        );
                    }
                    lp("bad range start")?;
                    lp("bad range end")?;
                    None
                }
                // Log data: not a write.
                0x3 => {
                    lp("bad log data")?;
                    None
                }
                0xD => None,
                0x9 | 0xA | 0xB | 0xC | 0x12 | 0x13 | 0x15 => {
                    return Err(
                        "two-phase commit markers (transactions) in the WAL are not supported; commit and flush first"
                            .into(),
                    )
                }
                t => return Err(format!("unknown WriteBatch record type {t:#x}")),
            };
            if let Some((key, kind)) = kind {
                seen += 1;
                if family == cf {
                    self.put(key, seq, kind);
                }
                seq = seq.wrapping_add(1);
            }
        }
        if seen != count {
            return Err(format!("WriteBatch says {count} records, holds {seen}"));
        }
        Ok(())
    }
}

/// The WAL files (`NNNNNN.log`) in `dir` numbered at least `min`, in number
/// order.
pub fn wal_files(dir: &Path, min: u64) -> Result<Vec<(u64, std::path::PathBuf)>, DbError> {
    let mut out = Vec::new();
    for entry in std::fs::read_dir(dir).map_err(|e| DbError::io(dir, &e))? {
        let entry = entry.map_err(|e| DbError::io(dir, &e))?;
        let name = entry.file_name();
        let Some(number) = name
            .to_str()
            .and_then(|n| n.strip_suffix(".log"))
            .filter(|n| !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit()))
            .and_then(|n| n.parse::<u64>().ok())
        else {
            continue;
        };
        if number >= min {
            out.push((number, entry.path()));
        }
    }
    out.sort();
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::coding::put_varint64;

    pub(crate) fn batch(seq: u64, records: &[(u8, &[u8])]) -> Vec<u8> {
        let mut b = seq.to_le_bytes().to_vec();
        b.extend((records.len() as u32).to_le_bytes());
        for (tag, key) in records {
            b.push(*tag);
            put_varint64(&mut b, key.len() as u64);
            b.extend_from_slice(key);
            if *tag == 1 {
                put_varint64(&mut b, 1);
                b.push(b'v');
            }
        }
        b
    }

    #[test]
    fn newest_write_wins() {
        let log = super::super::log::write_log(&[
            &batch(10, &[(1, b"a"), (1, b"b")]),
            &batch(12, &[(0, b"a"), (1, b"c")]),
        ]);
        let mut m = Memtable::default();
        m.replay(&log, 5, 0, "5.log").unwrap();
        assert_eq!(m.get(b"a"), Some((12, EntryKind::Deletion)));
        assert_eq!(m.get(b"b"), Some((11, EntryKind::Value)));
        assert_eq!(m.get(b"c"), Some((13, EntryKind::Value)));
        // A count that disagrees, an unknown tag: corruption.
        let mut bad = batch(1, &[(1, b"a")]);
        bad[8] = 2;
        let log = super::super::log::write_log(&[&bad]);
        assert!(Memtable::default().replay(&log, 5, 0, "5.log").is_err());
        let log = super::super::log::write_log(&[&batch(1, &[(0x30, b"a")])]);
        assert!(Memtable::default().replay(&log, 5, 0, "5.log").is_err());
    }
}
