//! The MANIFEST: the log of VersionEdits that says which SST files are
//! live, at which level, in which column family.
//!
//! Ported from RocksDB's `db/version_edit.{h,cc}` (`VersionEdit::DecodeFrom`,
//! `DecodeNewFile4From`: the tags, and the custom fields of a new file,
//! of which those with bit 6 set must be understood), `db/blob/
//! blob_file_addition.cc`, `blob_file_garbage.cc` and `db/wal_edit.cc` (the
//! records skipped over) and `db/version_edit_handler.cc` (edits inside an
//! atomic group apply together; an incomplete group at the end of the
//! MANIFEST is ignored; a file added twice or deleted without being live is
//! corruption, and so is a column family added while it exists — the
//! default one, id 0, exists from the start — or dropped while it does
//! not; a file left on a level past `num_levels` is refused at the end,
//! [`Version::check_num_levels`]). Sequence numbers past RocksDB's largest
//! (2^56 - 1) are refused. `CURRENT` names the MANIFEST (`db/filename.cc`).

use super::error::DbError;
use super::log::{LogEnd, LogReader, Record};
use super::options::OptionsFile;
use crate::coding::Reader;
use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

/// The most levels a MANIFEST may place files on (RocksDB's `num_levels` is
/// 7 by default; far more is no database RocksDB writes).
pub const MAX_LEVELS: u32 = 1000;

/// One live SST file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FileMeta {
    /// Its level.
    pub level: u32,
    /// Its file number (`NNNNNN.sst`).
    pub number: u64,
    /// Its size in bytes.
    pub file_size: u64,
    /// Its smallest internal key.
    pub smallest: Vec<u8>,
    /// Its largest internal key.
    pub largest: Vec<u8>,
    /// Its smallest sequence number.
    pub smallest_seqno: u64,
    /// Its largest sequence number.
    pub largest_seqno: u64,
    /// Its epoch number (0 when the MANIFEST records none): L0 files are
    /// ordered newest first by it.
    pub epoch_number: u64,
    /// Its `db_paths` index (0: the DB directory).
    pub path_id: u32,
}

/// A column family and its live files.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ColumnFamily {
    /// Its id (0: `default`).
    pub id: u32,
    /// Its name.
    pub name: String,
    /// Its comparator's name, when the MANIFEST records it.
    pub comparator: Option<String>,
    /// WALs numbered below this hold nothing unflushed for it.
    pub log_number: u64,
    /// Its live files by file number.
    pub files: BTreeMap<u64, FileMeta>,
    /// The numbers of its blob files (`NNNNNN.blob`) the MANIFEST added
    /// (`kBlobFileAddition`): the files a blob index may refer to.
    pub blob_files: BTreeSet<u64>,
}

/// The state a MANIFEST describes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Version {
    /// The MANIFEST read.
    pub manifest: PathBuf,
    /// Live column families by id.
    pub column_families: BTreeMap<u32, ColumnFamily>,
    /// The last sequence number recorded.
    pub last_sequence: u64,
    /// How the MANIFEST ended (a cut-short last record is ignored, as
    /// RocksDB does).
    pub end: LogEnd,
}

/// The MANIFEST `CURRENT` names in `dir`.
pub fn current_manifest(dir: &Path) -> Result<PathBuf, DbError> {
    let path = dir.join("CURRENT");
    let text = super::read_regular_file(&path, 4096)?;
    let shown = path.display().to_string();
    let name = text
        .strip_suffix(b"\n")
        .ok_or_else(|| DbError::corrupt(&shown, "CURRENT does not end with a newline"))?;
    let name = std::str::from_utf8(name).map_err(|_| DbError::corrupt(&shown, "CURRENT is not UTF-8"))?;
    let valid = name
        .strip_prefix("MANIFEST-")
        .is_some_and(|n| !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit()));
    if !valid {
        return Err(DbError::corrupt(
            &shown,
            format!("CURRENT names {name:?}, not a MANIFEST-NNNNNN file"),
        ));
    }
    Ok(dir.join(name))
}

/// One decoded VersionEdit (the parts this reader uses).
#[derive(Debug, Default)]
struct Edit {
    column_family: u32,
    comparator: Option<String>,
    log_number: Option<u64>,
    last_sequence: Option<u64>,
    next_file: Option<u64>,
    deleted: Vec<(u32, u64)>,
    added: Vec<FileMeta>,
    cf_add: Option<String>,
    blob_files_added: Vec<u64>,
    cf_drop: bool,
    atomic_group_remaining: Option<u32>,
}

fn take<T>(v: Option<T>, what: &str) -> Result<T, String> {
    v.ok_or_else(|| format!("bad {what}"))
}

fn level(r: &mut Reader<'_>) -> Result<u32, String> {
    let l = take(r.varint32(), "level")?;
    if l >= MAX_LEVELS {
        return Err(format!("level {l} out of range"));
    }
    Ok(l)
}

/// A sequence number: at most RocksDB's largest, 2^56 - 1 (a larger one
/// fits no internal key; RocksDB writes none).
fn seqno(r: &mut Reader<'_>, what: &str) -> Result<u64, String> {
    let s = take(r.varint64(), what)?;
    if s > crate::key::MAX_SEQUENCE_NUMBER {
        return Err(format!(
            "{what} {s} is past RocksDB's largest sequence number (2^56 - 1)"
        ));
    }
    Ok(s)
}

fn internal_key(r: &mut Reader<'_>, what: &str) -> Result<Vec<u8>, String> {
    let k = take(r.length_prefixed(), what)?;
    if k.len() < crate::key::INTERNAL_FOOTER_LEN {
        return Err(format!("{what} is shorter than an internal key"));
    }
    Ok(k.to_vec())
}

/// Skips custom fields (`tag`, length-prefixed value) up to `end_marker`
/// (a blob file's records end with 0, `BlobFileAddition::kEndMarker`); a
/// tag with `incompatible` set cannot be skipped.
fn skip_custom_fields(
    r: &mut Reader<'_>,
    end_marker: u32,
    incompatible: u32,
    what: &str,
) -> Result<(), String> {
    loop {
        let tag = take(r.varint32(), what)?;
        if tag == end_marker {
            return Ok(());
        }
        if tag & incompatible != 0 {
            return Err(format!("{what}: a field this reader does not know (tag {tag})"));
        }
        take(r.length_prefixed(), what)?;
    }
}

/// The fields every new-file record holds, in the order of `tag`'s format
/// (`kNewFile`, `kNewFile2`, `kNewFile3` or `kNewFile4`): the one place a
/// [`FileMeta`] is decoded.
fn new_file(r: &mut Reader<'_>, tag: u32) -> Result<FileMeta, String> {
    let level = level(r)?;
    let number = take(r.varint64(), "file number")?;
    let path_id = if tag == 102 {
        take(r.varint32(), "path id")?
    } else {
        0
    };
    let file_size = take(r.varint64(), "file size")?;
    let smallest = internal_key(r, "smallest key")?;
    let largest = internal_key(r, "largest key")?;
    let (smallest_seqno, largest_seqno) = if tag == 7 {
        (0, crate::key::MAX_SEQUENCE_NUMBER)
    } else {
        (seqno(r, "smallest seqno")?, seqno(r, "largest seqno")?)
    };
    let f = FileMeta {
        level,
        number,
        file_size,
        smallest,
        largest,
        smallest_seqno,
        largest_seqno,
        epoch_number: 0,
        path_id,
    };
    if tag == 103 {
        return new_file4_fields(r, f);
    }
    Ok(f)
}

/// The custom fields of a `kNewFile4` record, up to `kTerminate`.
fn new_file4_fields(r: &mut Reader<'_>, mut f: FileMeta) -> Result<FileMeta, String> {
    loop {
        let tag = take(r.varint32(), "new-file custom field")?;
        if tag == 1 {
            return Ok(f);
        }
        let field = take(r.length_prefixed(), "new-file custom field")?;
        match tag {
            // kPathId
            65 => {
                f.path_id = match field {
                    [p] if *p <= 3 => u32::from(*p),
                    _ => return Err("bad path id".into()),
                }
            }
            // kEpochNumber
            13 => f.epoch_number = take(Reader::new(field).varint64(), "epoch number")?,
            t if t & (1 << 6) != 0 => {
                return Err(format!("a new-file field this reader does not know (tag {t})"))
            }
            _ => {}
        }
    }
}

fn decode_edit(data: &[u8]) -> Result<Edit, String> {
    let mut r = Reader::new(data);
    let mut e = Edit::default();
    while !r.is_empty() {
        let tag = take(r.varint32(), "tag")?;
        match tag {
            // kComparator
            1 => {
                e.comparator =
                    Some(String::from_utf8_lossy(take(r.length_prefixed(), "comparator")?).into_owned())
            }
            // kLogNumber
            2 => e.log_number = Some(take(r.varint64(), "log number")?),
            // kNextFileNumber, kPrevLogNumber, kMinLogNumberToKeep
            3 => e.next_file = Some(take(r.varint64(), "next file number")?),
            9 | 10 => {
                take(r.varint64(), "number")?;
            }
            4 => e.last_sequence = Some(seqno(&mut r, "last sequence")?),
            // kCompactCursor
            5 => {
                level(&mut r)?;
                internal_key(&mut r, "compact cursor")?;
            }
            // kDeletedFile
            6 => {
                let l = level(&mut r)?;
                e.deleted.push((l, take(r.varint64(), "deleted file number")?));
            }
            // kNewFile, kNewFile2, kNewFile3, kNewFile4
            7 | 100 | 102 | 103 => e.added.push(new_file(&mut r, tag)?),
            200 => e.column_family = take(r.varint32(), "column family")?,
            201 => {
                e.cf_add = Some(
                    String::from_utf8_lossy(take(r.length_prefixed(), "column family name")?).into_owned(),
                )
            }
            202 => e.cf_drop = true,
            203 => {
                take(r.varint32(), "max column family")?;
            }
            300 => e.atomic_group_remaining = Some(take(r.varint32(), "atomic group")?),
            // kBlobFileAddition (and its deprecated tag)
            400 | 8194 => {
                e.blob_files_added.push(take(r.varint64(), "blob file number")?);
                for what in ["blob count", "blob bytes"] {
                    take(r.varint64(), what)?;
                }
                take(r.length_prefixed(), "blob checksum method")?;
                take(r.length_prefixed(), "blob checksum")?;
                skip_custom_fields(&mut r, 0, 1 << 6, "blob file addition")?;
            }
            // kBlobFileGarbage (and its deprecated tag)
            401 | 8195 => {
                for what in ["blob file number", "garbage count", "garbage bytes"] {
                    take(r.varint64(), what)?;
                }
                skip_custom_fields(&mut r, 0, 1 << 6, "blob file garbage")?;
            }
            // kWalAddition: number, then (tag, value) pairs to kTerminate.
            8196 => {
                take(r.varint64(), "WAL number")?;
                loop {
                    match take(r.varint32(), "WAL addition tag")? {
                        1 => break,
                        2 => {
                            take(r.varint64(), "WAL size")?;
                        }
                        t => return Err(format!("WAL addition tag {t} unknown")),
                    }
                }
            }
            // kWalDeletion
            8197 => {
                take(r.varint64(), "WAL number")?;
            }
            // Every other tag with the safe-to-ignore bit (kDbId, kWalAddition2,
            // kFullHistoryTsLow, ...) is length-prefixed.
            t if t & (1 << 13) != 0 => {
                take(r.length_prefixed(), "ignorable field")?;
            }
            t => return Err(format!("unknown tag {t}")),
        }
    }
    Ok(e)
}

impl Version {
    /// Reads the MANIFEST `CURRENT` names in `dir`, checked against the
    /// newest OPTIONS file's `num_levels` ([`Version::check_num_levels`]).
    pub fn read(dir: &Path) -> Result<Self, DbError> {
        let v = Self::read_manifest(&current_manifest(dir)?)?;
        v.check_num_levels(&OptionsFile::read(dir)?)?;
        Ok(v)
    }

    /// Refuses a live file on a level at or past its column family's
    /// `num_levels` (the OPTIONS file's, else RocksDB's default of 7), as
    /// RocksDB's `VersionBuilder::CheckConsistencyForNumLevels` does at
    /// the end of the replay ("db has more levels than
    /// options.num_levels"): a file on such a level that a later edit
    /// deleted is no error, and every column family is checked, not only
    /// the one read. The one check of levels, for every reader of the
    /// MANIFEST ([`super::Db::open`], `doctor`).
    pub fn check_num_levels(&self, options: &OptionsFile) -> Result<(), DbError> {
        for cf in self.column_families.values() {
            let num_levels = options.num_levels_of(&cf.name);
            let Some(f) = cf.files.values().find(|f| f.level >= num_levels) else {
                continue;
            };
            return Err(DbError::corrupt(
                &self.manifest.display().to_string(),
                format!(
                    "file {} is on level {}, but column family {:?} has {num_levels} levels{}: RocksDB refuses the database",
                    f.number,
                    f.level,
                    cf.name,
                    if options.path.is_some() {
                        ""
                    } else {
                        " (RocksDB's default; no OPTIONS file)"
                    }
                ),
            ));
        }
        Ok(())
    }

    /// Reads the MANIFEST at `path` (whole: memory and time linear in its
    /// size).
    pub fn read_manifest(path: &Path) -> Result<Self, DbError> {
        let data = super::read_regular_file(path, super::MAX_LOG_FILE)?;
        let number = path
            .file_name()
            .and_then(|n| n.to_str())
            .and_then(|n| n.strip_prefix("MANIFEST-"))
            .and_then(|n| n.parse().ok())
            .unwrap_or(0);
        Self::from_bytes(&data, number, path)
    }

    /// Decodes a MANIFEST's bytes (`number`: its file number; `path` names it in
    /// errors and in the result).
    pub fn from_bytes(data: &[u8], number: u64, path: &Path) -> Result<Self, DbError> {
        let shown = path.display().to_string();
        let mut v = Version {
            manifest: path.to_path_buf(),
            column_families: BTreeMap::new(),
            last_sequence: 0,
            end: LogEnd::Clean,
        };
        v.column_families.insert(
            0,
            ColumnFamily {
                id: 0,
                name: "default".into(),
                comparator: None,
                log_number: 0,
                files: BTreeMap::new(),
                blob_files: BTreeSet::new(),
            },
        );
        let mut reader = LogReader::new(data, number);
        let mut group: Vec<Edit> = Vec::new();
        let mut records = 0u64;
        // What RocksDB's VersionEditHandler::CheckIterationResult requires.
        let (mut next_file, mut log_number, mut last_sequence) = (false, false, false);
        while let Some(record) = reader.next_record() {
            let Record::Data(bytes) = record else {
                continue;
            };
            records += 1;
            let edit = decode_edit(&bytes)
                .map_err(|w| DbError::corrupt(&shown, format!("VersionEdit {records}: {w}")))?;
            next_file |= edit.next_file.is_some();
            log_number |= edit.log_number.is_some();
            last_sequence |= edit.last_sequence.is_some();
            match edit.atomic_group_remaining {
                Some(remaining) => {
                    group.push(edit);
                    if remaining == 0 {
                        for e in group.drain(..) {
                            v.apply_bounded(e, &shown)?;
                        }
                    }
                }
                None if !group.is_empty() => {
                    return Err(DbError::corrupt(
                        &shown,
                        "an atomic group is interrupted by another edit",
                    ));
                }
                None => v.apply_bounded(edit, &shown)?,
            }
        }
        let end = reader.end().cloned().unwrap_or(LogEnd::Clean);
        match &end {
            LogEnd::Corrupt { offset, what } => {
                return Err(DbError::corrupt(&shown, format!("{what} at offset {offset}")));
            }
            LogEnd::OldRecord { offset } => {
                return Err(DbError::corrupt(
                    &shown,
                    format!("a record of an older log at offset {offset}"),
                ));
            }
            LogEnd::Clean | LogEnd::Truncated { .. } => {}
        }
        if records == 0 {
            return Err(DbError::corrupt(&shown, "no VersionEdit"));
        }
        for (have, what) in [
            (next_file, "next-file-number"),
            (log_number, "log-number"),
            (last_sequence, "last-sequence-number"),
        ] {
            if !have {
                // RocksDB refuses the same (an empty or partial MANIFEST).
                return Err(DbError::corrupt(
                    &shown,
                    format!("no {what} entry in the MANIFEST"),
                ));
            }
        }
        v.end = end;
        Ok(v)
    }

    /// [`Version::apply`], then the bound on live files: refused while
    /// replaying, so memory stays within it.
    fn apply_bounded(&mut self, e: Edit, shown: &str) -> Result<(), DbError> {
        let id = e.column_family;
        self.apply(e).map_err(|w| DbError::corrupt(shown, w))?;
        match self.column_families.get(&id) {
            Some(cf) if cf.files.len() > super::MAX_LIVE_FILES => Err(DbError::unsupported(format!(
                "{shown}: column family {:?} has more than {} live files, the reader's bound",
                cf.name,
                super::MAX_LIVE_FILES
            ))),
            _ => Ok(()),
        }
    }

    fn apply(&mut self, e: Edit) -> Result<(), String> {
        if let Some(name) = e.cf_add {
            // VersionEditHandler::OnColumnFamilyAdd: "MANIFEST adding the
            // same column family twice" (the default family, id 0, exists
            // before the first edit and is never added).
            if let Some(live) = self.column_families.get(&e.column_family) {
                return Err(format!(
                    "column family {} ({name:?}) added while it exists (as {:?}); RocksDB refuses the MANIFEST",
                    e.column_family, live.name
                ));
            }
            self.column_families.insert(
                e.column_family,
                ColumnFamily {
                    id: e.column_family,
                    name,
                    comparator: None,
                    log_number: 0,
                    files: BTreeMap::new(),
                    blob_files: BTreeSet::new(),
                },
            );
        }
        if e.cf_drop {
            // VersionEditHandler::OnColumnFamilyDrop: "MANIFEST - dropping
            // non-existing column family".
            if self.column_families.remove(&e.column_family).is_none() {
                return Err(format!(
                    "column family {} dropped, but it does not exist; RocksDB refuses the MANIFEST",
                    e.column_family
                ));
            }
            return Ok(());
        }
        if let Some(s) = e.last_sequence {
            self.last_sequence = s;
        }
        let cf = self
            .column_families
            .get_mut(&e.column_family)
            .ok_or_else(|| format!("an edit of column family {} that does not exist", e.column_family))?;
        if let Some(c) = e.comparator {
            cf.comparator = Some(c);
        }
        if let Some(n) = e.log_number {
            cf.log_number = n;
        }
        for (level, number) in e.deleted {
            match cf.files.get(&number) {
                Some(f) if f.level == level => cf.files.remove(&number),
                _ => {
                    return Err(format!(
                        "file {number} deleted from level {level} where it is not live"
                    ))
                }
            };
        }
        for f in e.added {
            if cf.files.contains_key(&f.number) {
                return Err(format!("file {} added while live", f.number));
            }
            cf.files.insert(f.number, f);
        }
        cf.blob_files.extend(e.blob_files_added);
        Ok(())
    }

    /// The column family named `name`.
    pub fn column_family(&self, name: &str) -> Option<&ColumnFamily> {
        self.column_families.values().find(|c| c.name == name)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::coding::put_varint64;

    fn lp(out: &mut Vec<u8>, b: &[u8]) {
        put_varint64(out, b.len() as u64);
        out.extend_from_slice(b);
    }

    fn ikey(user: &[u8], seq: u64) -> Vec<u8> {
        let mut k = user.to_vec();
        k.extend(((seq << 8) | 1).to_le_bytes());
        k
    }

    pub(crate) fn new_file(level: u64, number: u64, lo: &[u8], hi: &[u8]) -> Vec<u8> {
        let mut e = Vec::new();
        put_varint64(&mut e, 103);
        put_varint64(&mut e, level);
        put_varint64(&mut e, number);
        put_varint64(&mut e, 1000);
        lp(&mut e, &ikey(lo, 5));
        lp(&mut e, &ikey(hi, 6));
        put_varint64(&mut e, 5);
        put_varint64(&mut e, 6);
        put_varint64(&mut e, 13);
        lp(&mut e, &[number as u8]);
        put_varint64(&mut e, 1);
        e
    }

    #[test]
    fn edits_add_and_delete_files() {
        let mut first = Vec::new();
        put_varint64(&mut first, 1);
        lp(&mut first, b"leveldb.BytewiseComparator");
        for tag in [2, 3, 4] {
            put_varint64(&mut first, tag);
            put_varint64(&mut first, 10);
        }
        let mut del = Vec::new();
        put_varint64(&mut del, 6);
        put_varint64(&mut del, 0);
        put_varint64(&mut del, 7);
        let log = super::super::log::write_log(&[
            &first,
            &new_file(0, 7, b"a", b"c"),
            &new_file(1, 9, b"a", b"z"),
            &del,
        ]);
        let v = Version::from_bytes(&log, 1, Path::new("M")).unwrap();
        let cf = v.column_family("default").unwrap();
        assert_eq!(cf.files.keys().copied().collect::<Vec<_>>(), vec![9]);
        assert_eq!((cf.files[&9].level, cf.files[&9].epoch_number), (1, 9));
        // Deleting it again is corruption; so is an unknown tag.
        let log = super::super::log::write_log(&[&first, &del]);
        assert!(Version::from_bytes(&log, 1, Path::new("M")).is_err());
        let log = super::super::log::write_log(&[&[0x7f]]);
        let e = Version::from_bytes(&log, 1, Path::new("M"))
            .unwrap_err()
            .to_string();
        assert!(e.contains("unknown tag 127"), "{e}");
    }
}
