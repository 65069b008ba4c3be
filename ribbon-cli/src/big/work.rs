//! The work directory of `ribbon big build`, which the build owns only as
//! far as it made it.
//!
//! A build claims its work directory ([`WorkDir::claim`]) before writing
//! anything there:
//!
//! - absent: it is created with `mkdir` (which fails if anything appeared
//!   there meanwhile; the parent must exist), and a marker file
//!   ([`MARKER`]) is written in it, created exclusively;
//! - a directory holding the marker (regular, not a link): the build's own,
//!   from an earlier run; it may be resumed;
//! - an empty directory: adopted (the marker written), and left in place
//!   at the end, since the build did not create it;
//! - anything else (a non-empty directory without the marker, a symbolic
//!   link, whatever its target, a file, a FIFO): refused with one line,
//!   nothing read, written or deleted there.
//!
//! The output and the keys must not lie inside the work directory.
//! Cleaning up deletes only the files the build writes, by name
//! ([`is_bucket_file`], [`is_shard_file`], `job`, the marker), never a
//! whole tree, and then `rmdir`s the directories it made; a directory that
//! still holds other files is kept, and the build says so.

use crate::error::{shown, write_error, Error};
use std::io::Write;
use std::path::{Path, PathBuf};

/// The marker file that makes a directory a build's own.
pub const MARKER: &str = ".ribbon-big-build";
/// The marker's first line.
const MARKER_HEAD: &str = "ribbon big build work directory 1";
/// The job description file (see `build::job_text`).
pub const JOB: &str = "job";
/// The most bytes of a marker read.
const MARKER_MAX: u64 = 4096;

/// A claimed work directory.
#[derive(Debug)]
pub struct WorkDir {
    path: PathBuf,
    /// Whether a run of the build created the directory itself (else it
    /// was an empty directory, adopted, and is not removed).
    created: bool,
}

impl WorkDir {
    /// Claims `path` as the work directory of a build writing `out` from
    /// `keys` (`-`: standard input): see the module docs.
    pub fn claim(path: &Path, out: &Path, keys: &Path) -> Result<Self, Error> {
        let refuse = |why: &str| {
            Error::failed(format!(
                "work directory {}: {why}: refusing to use it (nothing there was changed); \
                 give --work a new or empty directory",
                shown(path)
            ))
        };
        // Nothing the build deletes may hold the output or the keys.
        for (what, p) in [("--out", out), ("--keys", keys)] {
            if p != Path::new("-") && inside(path, p) {
                return Err(Error::usage(format!(
                    "{what} {} is inside the work directory {}, whose files the build deletes \
                     (try 'ribbon big build --help')",
                    shown(p),
                    shown(path)
                )));
            }
        }
        let created = match std::fs::symlink_metadata(path) {
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                std::fs::create_dir(path).map_err(|e| match e.kind() {
                    std::io::ErrorKind::AlreadyExists => refuse("it appeared while the build started"),
                    _ => Error::failed(format!("cannot create work directory {}: {e}", shown(path))),
                })?;
                write_marker(path, true)?;
                true
            }
            Err(e) => return Err(Error::failed(format!("work directory {}: {e}", shown(path)))),
            Ok(m) if m.file_type().is_symlink() => {
                return Err(refuse("it is a symbolic link (never followed)"))
            }
            Ok(m) if !m.is_dir() => return Err(refuse("it exists and is not a directory")),
            Ok(_) => match read_marker(path) {
                Some(created) => created,
                None => {
                    let mut entries = std::fs::read_dir(path)
                        .map_err(|e| Error::failed(format!("work directory {}: {e}", shown(path))))?;
                    if entries.next().is_some() {
                        return Err(refuse(&format!(
                            "it is not empty and is no work directory of 'ribbon big build' (no {MARKER} file)"
                        )));
                    }
                    write_marker(path, false)?;
                    false
                }
            },
        };
        Ok(WorkDir {
            path: path.to_path_buf(),
            created,
        })
    }

    /// The directory.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Makes sure the subdirectory `name` exists, as a directory of its
    /// own (a link there is refused), and returns its path.
    pub fn subdir(&self, name: &str) -> Result<PathBuf, Error> {
        let dir = self.path.join(name);
        match std::fs::symlink_metadata(&dir) {
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                std::fs::create_dir(&dir).map_err(|e| write_error(&shown(&dir), e))?;
            }
            Err(e) => return Err(write_error(&shown(&dir), e)),
            Ok(m) if m.is_dir() => {}
            Ok(_) => {
                return Err(Error::failed(format!(
                    "{}: not a directory (a link or a file): refusing to use this work directory",
                    shown(&dir)
                )))
            }
        }
        Ok(dir)
    }

    /// Deletes the files of the subdirectory `name` that `ours` recognises
    /// by their names (a link of such a name is removed, never followed);
    /// other files stay.
    pub fn clear(&self, name: &str, ours: fn(&str) -> bool) -> Result<(), Error> {
        let dir = self.path.join(name);
        let entries = match std::fs::read_dir(&dir) {
            Ok(e) => e,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(()),
            Err(e) => return Err(write_error(&shown(&dir), e)),
        };
        for entry in entries {
            let entry = entry.map_err(|e| write_error(&shown(&dir), e))?;
            let file_name = entry.file_name();
            let Some(n) = file_name.to_str().filter(|n| ours(n)) else {
                continue;
            };
            let is_dir = entry.file_type().is_ok_and(|t| t.is_dir());
            if !is_dir {
                let p = dir.join(n);
                remove_if_present(&p)?;
            }
        }
        Ok(())
    }

    /// Writes the job description (replacing the last one; a link there is
    /// removed, not followed).
    pub fn write_job(&self, job: &str) -> Result<(), Error> {
        let p = self.path.join(JOB);
        remove_if_present(&p)?;
        create_new(&p, job.as_bytes())
    }

    /// The job description of the last run, if any (a regular file).
    pub fn read_job(&self) -> Option<String> {
        read_small(&self.path.join(JOB), 1 << 16)
    }

    /// Removes what the build wrote: the bucket and shard files, the job,
    /// the marker, then the directories it made, each only if empty.
    /// Returns a note when something of someone else's kept a directory.
    pub fn remove(self) -> Result<Option<String>, Error> {
        self.clear("buckets", is_bucket_file)?;
        self.clear("shards", is_shard_file)?;
        remove_if_present(&self.path.join(JOB))?;
        let mut kept = Vec::new();
        for name in ["buckets", "shards"] {
            let dir = self.path.join(name);
            match std::fs::remove_dir(&dir) {
                Ok(()) => {}
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
                Err(_) => kept.push(shown(&dir)),
            }
        }
        if !kept.is_empty() {
            return Ok(Some(format!(
                "work directory {} kept: {} still hold(s) files the build did not write",
                shown(&self.path),
                kept.join(" and ")
            )));
        }
        remove_if_present(&self.path.join(MARKER))?;
        if !self.created {
            return Ok(None);
        }
        match std::fs::remove_dir(&self.path) {
            Ok(()) => Ok(None),
            Err(_) => {
                // Mark it again: it stays recognisably the build's own.
                write_marker(&self.path, true)?;
                Ok(Some(format!(
                    "work directory {} kept: it holds files the build did not write",
                    shown(&self.path)
                )))
            }
        }
    }
}

/// Whether `p` is the directory `work` (when it exists) or names something
/// inside it (compared after resolving links).
fn inside(work: &Path, p: &Path) -> bool {
    if std::fs::symlink_metadata(work).is_ok_and(|m| m.file_type().is_symlink()) {
        // Refused by the claim itself, whatever it points to.
        return false;
    }
    let Ok(work) = std::fs::canonicalize(work) else {
        return false;
    };
    let parent = match p.parent() {
        Some(d) if !d.as_os_str().is_empty() => d,
        _ => Path::new("."),
    };
    std::fs::canonicalize(p).is_ok_and(|p| p.starts_with(&work))
        || std::fs::canonicalize(parent).is_ok_and(|d| d.starts_with(&work))
}

/// Whether `name` is a bucket file's or the bucketing's `done`, or the
/// temporary file of one (`.NAME.XXXXXX.tmp`, left by an interrupted write).
pub fn is_bucket_file(name: &str) -> bool {
    let own = |n: &str| n == "done" || numbered(n, "b", ".u64");
    own(name) || temporary_of(name).is_some_and(own)
}

/// Whether `name` is a shard file's, or the temporary file of one.
pub fn is_shard_file(name: &str) -> bool {
    let own = |n: &str| numbered(n, "s", ".rbn");
    own(name) || temporary_of(name).is_some_and(own)
}

/// The target's name of an output's temporary file name
/// (`.NAME.XXXXXX.tmp`: `crate::output::OutputFile`).
fn temporary_of(name: &str) -> Option<&str> {
    name.strip_prefix('.')
        .and_then(|n| n.strip_suffix(".tmp"))
        .and_then(|n| n.rsplit_once('.'))
        .map(|(target, _)| target)
}

/// `PREFIX` then six or more digits then `SUFFIX`.
fn numbered(name: &str, prefix: &str, suffix: &str) -> bool {
    name.strip_prefix(prefix)
        .and_then(|n| n.strip_suffix(suffix))
        .is_some_and(|d| d.len() >= 6 && d.bytes().all(|b| b.is_ascii_digit()))
}

fn write_marker(dir: &Path, created: bool) -> Result<(), Error> {
    let text = format!(
        "{MARKER_HEAD}\ncreated_by_build {}\n",
        if created { "yes" } else { "no" }
    );
    let p = dir.join(MARKER);
    remove_if_present(&p)?;
    create_new(&p, text.as_bytes())
}

/// `Some(created)` when `dir` holds the build's marker (a regular file).
fn read_marker(dir: &Path) -> Option<bool> {
    let text = read_small(&dir.join(MARKER), MARKER_MAX)?;
    let mut lines = text.lines();
    (lines.next() == Some(MARKER_HEAD)).then_some(())?;
    Some(lines.next() != Some("created_by_build no"))
}

/// The text of the regular file `p` (not a link) of at most `max` bytes.
fn read_small(p: &Path, max: u64) -> Option<String> {
    let m = std::fs::symlink_metadata(p).ok()?;
    if !m.file_type().is_file() || m.len() > max {
        return None;
    }
    String::from_utf8(crate::input::read_regular(p).ok()?).ok()
}

/// Creates `p` exclusively (never through a link) holding `bytes`.
fn create_new(p: &Path, bytes: &[u8]) -> Result<(), Error> {
    std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .open(p)
        .and_then(|mut f| f.write_all(bytes))
        .map_err(|e| write_error(&shown(p), e))
}

/// Removes the file (or link) `p` if it is there.
fn remove_if_present(p: &Path) -> Result<(), Error> {
    match std::fs::remove_file(p) {
        Ok(()) => Ok(()),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(()),
        Err(e) => Err(write_error(&shown(p), e)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_of_the_build_s_own_files() {
        for n in ["b000000.u64", "b1048575.u64", "done", ".done.x1Y2z3.tmp"] {
            assert!(is_bucket_file(n), "{n}");
        }
        for n in ["b00000.u64", "b00000x.u64", "keys.u64", "job", "b000000.u64~"] {
            assert!(!is_bucket_file(n), "{n}");
        }
        for n in ["s000003.rbn", ".s000003.rbn.Ab12Cd.tmp", "s1000000.rbn"] {
            assert!(is_shard_file(n), "{n}");
        }
        for n in ["s3.rbn", ".s000003.rbn", "x.s000003.rbn.a.tmp", "f.rbs"] {
            assert!(!is_shard_file(n), "{n}");
        }
    }
}
