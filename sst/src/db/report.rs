//! A [`GetPath`] under the field names of `ribbon db query --json` (the
//! CLI's JSON Lines, and the C library's `ribbon_db_get_paths_json`): one
//! owner for the names and their order. With ribbon-sst's `serde` feature
//! a [`GetPathReport`] serializes to exactly that object:
//!
//! ```text
//! {"key": "...",            (only when given)
//!  "memtable": "none"|"value"|"deleted"|"merge"|"range-deleted",
//!  "found": bool,
//!  "files": [{"level": 1, "file": "000012.sst", "may_match": bool,
//!             "answer": "filtered"|"absent"|"value"|"deleted"|"merge"|"not-read",
//!             "range_deleted": bool}, ...]}
//! ```

use super::get::{GetPath, Step};
use super::Db;

/// The live files' levels and names by their index in [`Db::files`] (the
/// index [`Step::file`] holds): worked out once per database, borrowed by
/// every [`GetPathReport`].
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct FileLabels {
    /// Each file's level.
    pub levels: Vec<u32>,
    /// Each file's name (`000012.sst`, [`super::LiveFile::name`]).
    pub names: Vec<String>,
}

impl FileLabels {
    /// The labels of `db`'s live files.
    pub fn of(db: &Db) -> Self {
        let (levels, names) = db.files().map(|f| (f.level, f.name())).unzip();
        Self { levels, names }
    }
}

/// One file a `Get` asks.
#[cfg_attr(feature = "serde", derive(serde::Serialize))]
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct StepReport<'a> {
    /// The file's level.
    pub level: u32,
    /// The file's name.
    pub file: &'a str,
    /// What its filter answered ([`Step::may_match`]).
    pub may_match: bool,
    /// What the file answers ([`super::FileAnswer::name`]).
    pub answer: &'static str,
    /// Whether a range deletion of the file covers the key.
    pub range_deleted: bool,
}

/// One key's `Get` path.
#[cfg_attr(feature = "serde", derive(serde::Serialize))]
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GetPathReport<'a> {
    /// The key as shown (the CLI's text or hex); left out when `None`.
    #[cfg_attr(feature = "serde", serde(skip_serializing_if = "Option::is_none"))]
    pub key: Option<&'a str>,
    /// What the memtable answers ([`super::MemtableAnswer::name`]).
    pub memtable: &'static str,
    /// Whether `Get` finds the key ([`GetPath::found`]).
    pub found: bool,
    /// Every file asked, in order.
    pub files: Vec<StepReport<'a>>,
}

impl Step {
    /// This step under the report's names; `labels` are those of the
    /// database the path was worked out on.
    ///
    /// # Panics
    /// When `labels` has no file of index [`Step::file`] (another
    /// database's labels).
    pub fn report<'a>(&self, labels: &'a FileLabels) -> StepReport<'a> {
        StepReport {
            level: labels.levels[self.file],
            file: &labels.names[self.file],
            may_match: self.may_match,
            answer: self.answer.name(),
            range_deleted: self.range_deleted,
        }
    }
}

impl GetPath {
    /// This path under the report's names, with `key` first when given;
    /// `labels` are those of the database the path was worked out on
    /// (panics otherwise, as [`Step::report`]).
    pub fn report<'a>(&self, key: Option<&'a str>, labels: &'a FileLabels) -> GetPathReport<'a> {
        GetPathReport {
            key,
            memtable: self.memtable.name(),
            found: self.found(),
            files: self.steps.iter().map(|s| s.report(labels)).collect(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::db::{EntryKind, FileAnswer, MemtableAnswer};

    #[test]
    fn a_path_takes_its_files_labels() {
        let labels = FileLabels {
            levels: vec![0, 3],
            names: vec!["000007.sst".into(), "000004.sst".into()],
        };
        let step = |file, may_match, answer| Step {
            file,
            may_match,
            has_filter: true,
            answer,
            range_deleted: false,
        };
        let path = GetPath {
            memtable: MemtableAnswer::Merge,
            steps: vec![
                step(0, false, FileAnswer::Filtered),
                step(1, true, FileAnswer::Found(EntryKind::Value)),
            ],
            found: true,
        };
        let r = path.report(Some("k"), &labels);
        assert_eq!(r.key, Some("k"));
        assert_eq!(r.memtable, "merge");
        assert!(r.found);
        assert_eq!(
            r.files,
            [
                StepReport {
                    level: 0,
                    file: "000007.sst",
                    may_match: false,
                    answer: "filtered",
                    range_deleted: false
                },
                StepReport {
                    level: 3,
                    file: "000004.sst",
                    may_match: true,
                    answer: "value",
                    range_deleted: false
                }
            ]
        );
        assert_eq!(path.report(None, &labels).key, None);
    }
}
