//! The database's OPTIONS file (the newest `OPTIONS-NNNNNN`), as far as
//! where its files are and how its WALs are recovered: `wal_dir`,
//! `wal_recovery_mode`, and each column family's `num_levels`.
//!
//! Ported from RocksDB's `options/options_parser.cc` (sections
//! `[DBOptions]`, `[CFOptions "name"]`; `name=value` lines; `#` comments)
//! and `options/db_options.cc` (the option names). RocksDB does not write
//! `db_paths` or `cf_paths` to the OPTIONS file: they are given to the
//! reader ([`OpenOptions::db_paths`]).

use super::error::DbError;
use ribbon::rocksdb::policy::CompactionStyle;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// The most bytes of an OPTIONS file read (RocksDB's are a few tens of KB).
pub const MAX_OPTIONS_FILE: u64 = 4 << 20;

/// How the WALs are replayed: RocksDB's `WALRecoveryMode`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum WalRecoveryMode {
    /// `kTolerateCorruptedTailRecords`: a cut-short last record is
    /// ignored; any other corruption is an error.
    TolerateCorruptedTailRecords,
    /// `kAbsoluteConsistency`: any corruption or cut-short record is an error.
    AbsoluteConsistency,
    /// `kPointInTimeRecovery` (RocksDB's default): the WALs are replayed up
    /// to the first corrupt record; later WALs are not replayed.
    #[default]
    PointInTimeRecovery,
    /// `kSkipAnyCorruptedRecords`: corrupt records are skipped (refused by
    /// this reader, which cannot find the next record after one).
    SkipAnyCorruptedRecords,
}

impl WalRecoveryMode {
    /// RocksDB's name of the mode.
    pub fn name(self) -> &'static str {
        match self {
            Self::TolerateCorruptedTailRecords => "kTolerateCorruptedTailRecords",
            Self::AbsoluteConsistency => "kAbsoluteConsistency",
            Self::PointInTimeRecovery => "kPointInTimeRecovery",
            Self::SkipAnyCorruptedRecords => "kSkipAnyCorruptedRecords",
        }
    }

    fn parse(v: &str) -> Option<Self> {
        Some(match v {
            "kTolerateCorruptedTailRecords" => Self::TolerateCorruptedTailRecords,
            "kAbsoluteConsistency" => Self::AbsoluteConsistency,
            "kPointInTimeRecovery" => Self::PointInTimeRecovery,
            "kSkipAnyCorruptedRecords" => Self::SkipAnyCorruptedRecords,
            _ => return None,
        })
    }
}

/// What the newest OPTIONS file says.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct OptionsFile {
    /// The file read (`None`: the directory has none).
    pub path: Option<PathBuf>,
    /// `wal_dir` (`None` or empty: the DB directory).
    pub wal_dir: Option<PathBuf>,
    /// `wal_recovery_mode`.
    pub wal_recovery_mode: WalRecoveryMode,
    /// `num_levels` of each column family, by name, as RocksDB sanitizes
    /// it (`SanitizeCfOptions` in `db/column_family.cc`: at least 1, at
    /// least 2 under level compaction, at least 3 under universal
    /// compaction with ingest-behind); see [`OptionsFile::num_levels_of`].
    pub num_levels: BTreeMap<String, u32>,
}

/// What one `[CFOptions "NAME"]` section says about its number of levels.
#[derive(Debug, Clone, Copy, Default)]
struct LevelOptions {
    num_levels: Option<i32>,
    /// `compaction_style` (`None`: absent, `kCompactionStyleLevel`, the
    /// default; `Some(None)`: a value no style is named by).
    style: Option<Option<CompactionStyle>>,
    ingest_behind: bool,
}

/// `num_levels=VALUE` as RocksDB's options parser reads an `int`: decimal,
/// optionally signed, within `i32` (RocksDB writes nothing else).
pub(crate) fn parse_num_levels(value: &str) -> Option<i32> {
    let digits = value.strip_prefix(['-', '+']).unwrap_or(value);
    if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    value.parse::<i32>().ok()
}

impl LevelOptions {
    /// `num_levels` as `SanitizeCfOptions` leaves it (absent: RocksDB's
    /// default, [`super::DEFAULT_NUM_LEVELS`]).
    fn sanitized(self) -> u32 {
        let mut n = self.num_levels.unwrap_or(super::DEFAULT_NUM_LEVELS as i32).max(1);
        match self.style {
            None | Some(Some(CompactionStyle::Level)) => n = n.max(2),
            Some(Some(CompactionStyle::Universal)) if self.ingest_behind => n = n.max(3),
            _ => {}
        }
        n.unsigned_abs()
    }
}

impl OptionsFile {
    /// The number of levels of column family `name`: the OPTIONS file's
    /// (sanitized), else RocksDB's default
    /// [`DEFAULT_NUM_LEVELS`](super::DEFAULT_NUM_LEVELS).
    pub fn num_levels_of(&self, name: &str) -> u32 {
        self.num_levels
            .get(name)
            .copied()
            .unwrap_or(super::DEFAULT_NUM_LEVELS)
    }

    /// Reads the newest `OPTIONS-NNNNNN` in `dir` (none: the defaults).
    pub fn read(dir: &Path) -> Result<Self, DbError> {
        let Some(path) = Self::newest(dir)? else {
            return Ok(Self::default());
        };
        let data = super::read_regular_file(&path, MAX_OPTIONS_FILE)?;
        Self::parse(&String::from_utf8_lossy(&data), &path)
    }

    /// The newest OPTIONS file in `dir`: the `OPTIONS-NNNNNN` with the
    /// largest number (by value, whatever its digits' count), the one
    /// RocksDB reads on open; `None` when there is none.
    pub fn newest(dir: &Path) -> Result<Option<PathBuf>, DbError> {
        let mut newest: Option<(u64, PathBuf)> = None;
        for entry in std::fs::read_dir(dir).map_err(|e| DbError::io(dir, &e))? {
            let entry = entry.map_err(|e| DbError::io(dir, &e))?;
            let name = entry.file_name();
            let Some(n) = name
                .to_str()
                .and_then(|n| n.strip_prefix("OPTIONS-"))
                .filter(|n| !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit()))
                .and_then(|n| n.parse::<u64>().ok())
            else {
                continue;
            };
            if newest.as_ref().is_none_or(|(m, _)| n > *m) {
                newest = Some((n, entry.path()));
            }
        }
        Ok(newest.map(|(_, path)| path))
    }

    /// Parses an OPTIONS file's text (`path` names it).
    pub fn parse(text: &str, path: &Path) -> Result<Self, DbError> {
        let mut out = OptionsFile {
            path: Some(path.to_path_buf()),
            ..Self::default()
        };
        let shown = path.display().to_string();
        let mut ingest_behind = false;
        let mut levels: BTreeMap<&str, LevelOptions> = BTreeMap::new();
        for (section, name, value) in entries(text) {
            if section == "[DBOptions]" {
                match name {
                    "allow_ingest_behind" => ingest_behind = value == "true",
                    "wal_dir" if !value.is_empty() => out.wal_dir = Some(PathBuf::from(value)),
                    "wal_recovery_mode" => {
                        out.wal_recovery_mode = WalRecoveryMode::parse(value).ok_or_else(|| {
                            DbError::corrupt(
                                &path.display().to_string(),
                                format!("wal_recovery_mode={value}"),
                            )
                        })?
                    }
                    _ => {}
                }
            } else if let Some(cf) = section_of(section, "CFOptions") {
                let l = levels.entry(cf).or_default();
                match name {
                    "num_levels" => {
                        // RocksDB's parser refuses what is not an int.
                        l.num_levels = Some(parse_num_levels(value).ok_or_else(|| {
                            DbError::corrupt(
                                &shown,
                                format!("num_levels={value} of column family {cf:?} is not an int (RocksDB refuses the OPTIONS file)"),
                            )
                        })?);
                    }
                    "compaction_style" => l.style = Some(CompactionStyle::from_options_value(value)),
                    "cf_allow_ingest_behind" => l.ingest_behind = value == "true",
                    _ => {}
                }
            }
        }
        for (cf, mut l) in levels {
            l.ingest_behind |= ingest_behind;
            out.num_levels.insert(cf.to_string(), l.sanitized());
        }
        Ok(out)
    }
}

/// The `(section, name, value)` entries of an OPTIONS file's text, in
/// order: the section as written (`[DBOptions]`, `[CFOptions "default"]`),
/// names and values trimmed; blank lines, `#` comments and lines without
/// `=` skipped. The one reader of the file's syntax (the database reader's
/// [`OptionsFile`] and `doctor`'s configuration take what they need).
pub(crate) fn entries(text: &str) -> impl Iterator<Item = (&str, &str, &str)> {
    let mut section = "";
    text.lines().filter_map(move |line| {
        let line = line.trim();
        if line.is_empty() || line.starts_with('#') {
            return None;
        }
        if line.starts_with('[') {
            section = line;
            return None;
        }
        let (name, value) = line.split_once('=')?;
        Some((section, name.trim(), value.trim()))
    })
}

/// The column family a section of `kind` is about: `[KIND "NAME"]` gives
/// `NAME` (`kind` is `CFOptions` or `TableOptions/BlockBasedTable`).
pub(crate) fn section_of<'a>(section: &'a str, kind: &str) -> Option<&'a str> {
    section
        .strip_prefix('[')?
        .strip_prefix(kind)?
        .strip_prefix(" \"")?
        .strip_suffix("\"]")
}

/// Where a database's files are, when not all in its directory.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct OpenOptions {
    /// Where the WALs are (`None`: the OPTIONS file's `wal_dir`, else the
    /// DB directory).
    pub wal_dir: Option<PathBuf>,
    /// The `db_paths` (or the column family's `cf_paths`) in order: a file
    /// of path id `i` is in `db_paths[i]` (none given: path id 0 is the DB
    /// directory, and a file of another path id is an error).
    pub db_paths: Vec<PathBuf>,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn entries_carry_their_section_and_skip_what_is_not_an_entry() {
        let text = "# comment\n[Version]\n  rocksdb_version=11.8.1\n\n[CFOptions \"default\"]\nnum_levels = 7\nno equals sign\n\
                    [TableOptions/BlockBasedTable \"other cf\"]\nfilter_policy=ribbonfilter:10\n";
        let got: Vec<_> = entries(text).collect();
        assert_eq!(
            got,
            [
                ("[Version]", "rocksdb_version", "11.8.1"),
                ("[CFOptions \"default\"]", "num_levels", "7"),
                (
                    "[TableOptions/BlockBasedTable \"other cf\"]",
                    "filter_policy",
                    "ribbonfilter:10"
                ),
            ]
        );
        assert_eq!(section_of(got[1].0, "CFOptions"), Some("default"));
        assert_eq!(
            section_of(got[2].0, "TableOptions/BlockBasedTable"),
            Some("other cf")
        );
        assert_eq!(section_of(got[2].0, "CFOptions"), None);
        assert_eq!(section_of("[DBOptions]", "CFOptions"), None);
    }

    #[test]
    fn the_newest_options_file_is_the_largest_number() {
        let dir = tempfile::tempdir().unwrap();
        assert_eq!(OptionsFile::newest(dir.path()).unwrap(), None);
        // By value, not by name: 1000000 sorts before 999999 as text.
        for name in [
            "OPTIONS-000005",
            "OPTIONS-999999",
            "OPTIONS-1000000",
            "OPTIONS-x",
            "OPTIONS-",
            "OPTIONS-2.dbtmp",
        ] {
            std::fs::write(dir.path().join(name), "").unwrap();
        }
        assert_eq!(
            OptionsFile::newest(dir.path()).unwrap(),
            Some(dir.path().join("OPTIONS-1000000"))
        );
        assert!(OptionsFile::newest(&dir.path().join("missing")).is_err());
    }

    #[test]
    fn num_levels_is_read_as_rocksdb_reads_an_int_property() {
        // Any value: either an int (then sanitized as RocksDB does) or a
        // refusal naming it; never a panic, never a silent default.
        let mut state = 0x44u64;
        let alphabet = b"0123456789+- kx\t";
        for round in 0..5000 {
            let r = ribbon::core::hash::split_mix64(&mut state);
            let value = match round % 3 {
                // Integers, in and out of i32's range.
                0 => ((r as i64) >> (r % 64)).to_string(),
                1 => (r as i32 % 20).to_string(),
                _ => (0..r % 6)
                    .map(|i| char::from(alphabet[((r >> (8 * i)) % alphabet.len() as u64) as usize]))
                    .collect(),
            };
            for style in [
                "kCompactionStyleLevel",
                "kCompactionStyleUniversal",
                "kCompactionStyleFIFO",
            ] {
                let text =
                    format!("[CFOptions \"default\"]\n  num_levels={value}\n  compaction_style={style}\n");
                let got = OptionsFile::parse(&text, Path::new("OPTIONS-000005"));
                // What RocksDB's parser takes as an int (the writer's form).
                let want = value.trim().parse::<i32>().ok().filter(|_| {
                    let v = value.trim();
                    let d = v.strip_prefix(['-', '+']).unwrap_or(v);
                    !d.is_empty() && d.bytes().all(|b| b.is_ascii_digit())
                });
                match (got, want) {
                    (Ok(o), Some(n)) => {
                        let floor = if style == "kCompactionStyleLevel" { 2 } else { 1 };
                        assert_eq!(
                            o.num_levels_of("default"),
                            n.max(floor) as u32,
                            "{value:?} {style}"
                        );
                        assert_eq!(o.num_levels_of("other"), 7);
                    }
                    (Err(e), None) => {
                        let e = e.to_string();
                        assert!(e.contains("num_levels=") && !e.contains('\n'), "{e}");
                    }
                    (got, want) => panic!("{value:?}: {got:?}, want {want:?}"),
                }
            }
        }
        // Universal compaction with ingest-behind keeps at least 3 levels.
        let text = "[DBOptions]\n  allow_ingest_behind=true\n[CFOptions \"default\"]\n  num_levels=1\n  compaction_style=kCompactionStyleUniversal\n";
        let o = OptionsFile::parse(text, Path::new("O")).unwrap();
        assert_eq!(o.num_levels_of("default"), 3);
    }

    #[test]
    fn wal_dir_mode_and_levels_are_read() {
        let text = "# comment\n[Version]\n  rocksdb_version=9.8.4\n[DBOptions]\n  wal_dir=/w/x\n  wal_recovery_mode=kAbsoluteConsistency\n[CFOptions \"default\"]\n  num_levels=5\n[CFOptions \"b\"]\n  num_levels=9\n";
        let o = OptionsFile::parse(text, Path::new("OPTIONS-000007")).unwrap();
        assert_eq!(o.wal_dir.as_deref(), Some(Path::new("/w/x")));
        assert_eq!(o.wal_recovery_mode, WalRecoveryMode::AbsoluteConsistency);
        assert_eq!(o.num_levels["default"], 5);
        assert_eq!(o.num_levels["b"], 9);
        let o = OptionsFile::parse("[DBOptions]\n  wal_dir=\n", Path::new("O")).unwrap();
        assert_eq!(o.wal_dir, None);
        assert!(OptionsFile::parse("[DBOptions]\nwal_recovery_mode=kNope\n", Path::new("O")).is_err());
    }
}
