//! Reading the conformance vectors (`conformance/v1/`, described in its
//! README.md): the manifest, checked first, then the filter cases and the
//! SST cases, with the files they name.
//!
//! Every path in the manifest and the cases is relative, made of plain
//! names (no `..`, no root, no `.`), and names a regular file inside the
//! vectors directory (after symbolic links are resolved): nothing outside
//! it is read, and a mismatch names only the manifest's digest.
//!
//! Memory: each listed file is read once and shared by every case that
//! names it (a keys file's lines are split once), so loading takes at most
//! three times the bytes the manifest lists (at most [`MAX_TOTAL_BYTES`]:
//! the files, a text copy of the tables, and keys files split into lines
//! at 24 bytes a line more) plus a few hundred bytes per row, whatever the
//! rows repeat. Measured on `conformance/v1`: 2.34 times its 3.9 MB
//! (`tests::loading_stays_within_the_written_budget`).

use crate::error::{read_error, Error};
use std::collections::{BTreeMap, HashSet};
use std::path::{Component, Path, PathBuf};
use std::sync::Arc;

/// The most bytes the manifest may list in all (the committed set is
/// under 5 MB).
pub const MAX_TOTAL_BYTES: u64 = 1 << 30;

/// How a case's filter is built: the table-file context.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Context {
    /// `--level L` (-1: an SstFileWriter file; 0 and up: a compaction output).
    Level(i32),
    /// `--flush`: a memtable flush.
    Flush,
}

/// One row of `cases.tsv`.
#[derive(Debug, Clone)]
pub struct FilterCase {
    pub id: String,
    pub feature: String,
    pub policy: String,
    pub format_version: i32,
    pub context: Context,
    pub optimize_filters_for_memory: bool,
    /// The keys file's lines, hex, shared by the cases that name it.
    pub all_keys: Arc<Vec<String>>,
    /// How many of them are members.
    pub count: usize,
    /// The filter block RocksDB wrote for them.
    pub filter_path: PathBuf,
    pub filter: Arc<Vec<u8>>,
    /// RocksDB's answers for `probes.hex` (none for an empty filter).
    pub answers: Option<Arc<Vec<bool>>>,
}

impl FilterCase {
    /// The member keys, hex, in order.
    pub fn keys(&self) -> &[String] {
        &self.all_keys[..self.count]
    }
}

/// One row of `sst.tsv`.
#[derive(Debug, Clone)]
pub struct SstCase {
    pub id: String,
    pub feature: String,
    pub file: PathBuf,
    pub keys_path: PathBuf,
    pub keys: Arc<Vec<String>>,
    pub answers: Arc<Vec<bool>>,
}

/// The whole vector set.
#[derive(Debug)]
pub struct Vectors {
    pub dir: PathBuf,
    pub probes: Vec<String>,
    pub filters: Vec<FilterCase>,
    pub ssts: Vec<SstCase>,
}

fn bad(dir: &Path, file: &str, what: impl std::fmt::Display) -> Error {
    Error::failed(format!("vectors {}: {file}: {what}", dir.display()))
}

/// The rows of a TSV file: comment lines (`#`) skipped, the header row
/// checked against `header`, each row split on tabs with as many fields.
fn rows(dir: &Path, file: &str, text: &str, header: &[&str]) -> Result<Vec<Vec<String>>, Error> {
    let mut lines = text.lines().filter(|l| !l.starts_with('#'));
    let head: Vec<&str> = lines.next().unwrap_or("").split('\t').collect();
    if head != header {
        return Err(bad(dir, file, format!("header is {head:?}, expected {header:?}")));
    }
    lines
        .enumerate()
        .filter(|(_, l)| !l.is_empty())
        .map(|(i, l)| {
            let f: Vec<String> = l.split('\t').map(str::to_string).collect();
            if f.len() == header.len() {
                Ok(f)
            } else {
                Err(bad(
                    dir,
                    file,
                    format!("row {} has {} fields, expected {}", i + 1, f.len(), header.len()),
                ))
            }
        })
        .collect()
}

/// Lines of a keys or answers file (a final newline ends the last line; it
/// does not start an empty one).
pub fn file_lines(text: &str) -> Vec<String> {
    let body = text.strip_suffix('\n').unwrap_or(text);
    if text.is_empty() {
        return Vec::new();
    }
    body.split('\n').map(str::to_string).collect()
}

fn answers(dir: &Path, file: &str, text: &str) -> Result<Vec<bool>, Error> {
    file_lines(text)
        .iter()
        .enumerate()
        .map(|(i, l)| match l.as_str() {
            "1" => Ok(true),
            "0" => Ok(false),
            other => Err(bad(dir, file, format!("line {}: {other:?} is not 0 or 1", i + 1))),
        })
        .collect()
}

/// The files of the vector set, each read once (a regular file inside the
/// directory, checked against the manifest) and shared.
struct Files {
    dir: PathBuf,
    bytes: BTreeMap<String, Arc<Vec<u8>>>,
    lines: BTreeMap<String, Arc<Vec<String>>>,
    answers: BTreeMap<String, Arc<Vec<bool>>>,
}

/// Whether `rel` is a relative path of plain names (no `..`, root, `.` or
/// prefix), so that it stays inside the directory it is joined to.
fn plain_relative(rel: &str) -> bool {
    !rel.is_empty()
        && !rel.contains('\\')
        && Path::new(rel)
            .components()
            .all(|c| matches!(c, Component::Normal(_)))
        && !rel.split('/').any(|c| c.is_empty() || c == "." || c == "..")
}

impl Files {
    /// Reads and checks the manifest's file `rel` (expected `size` bytes,
    /// digest `want`).
    fn read(&mut self, canonical_dir: &Path, rel: &str, size: u64, want: &str) -> Result<(), Error> {
        let path = self.dir.join(rel);
        let real = path.canonicalize().map_err(|e| read_error(&path, e))?;
        if !real.starts_with(canonical_dir) {
            return Err(bad(
                &self.dir,
                rel,
                "is outside the vectors directory (a link out of it)",
            ));
        }
        let file = crate::input::open_regular(&path)?;
        let len = file.metadata().map_err(|e| read_error(&path, e))?.len();
        if len != size {
            return Err(bad(
                &self.dir,
                rel,
                format!("{len} bytes, the manifest says {size}"),
            ));
        }
        let mut bytes = Vec::new();
        std::io::Read::read_to_end(&mut std::io::Read::take(file, size), &mut bytes)
            .map_err(|e| read_error(&path, e))?;
        if sha256_hex(&bytes) != want {
            return Err(bad(
                &self.dir,
                rel,
                format!("sha256 differs from the manifest's {want} (damaged or stale vectors)"),
            ));
        }
        self.bytes.insert(rel.to_string(), Arc::new(bytes));
        Ok(())
    }

    fn bytes(&self, rel: &str) -> Result<Arc<Vec<u8>>, Error> {
        self.bytes
            .get(rel)
            .cloned()
            .ok_or_else(|| bad(&self.dir, rel, "not listed in manifest.tsv"))
    }

    fn text(&self, rel: &str) -> Result<String, Error> {
        String::from_utf8(self.bytes(rel)?.to_vec()).map_err(|_| bad(&self.dir, rel, "not UTF-8"))
    }

    /// The lines of `rel`, split once.
    fn lines(&mut self, rel: &str) -> Result<Arc<Vec<String>>, Error> {
        if let Some(l) = self.lines.get(rel) {
            return Ok(l.clone());
        }
        let bytes = self.bytes(rel)?;
        let text = std::str::from_utf8(&bytes).map_err(|_| bad(&self.dir, rel, "not UTF-8"))?;
        let l = Arc::new(file_lines(text));
        self.lines.insert(rel.to_string(), l.clone());
        Ok(l)
    }

    /// The answers file `rel`, parsed once.
    fn answers(&mut self, rel: &str) -> Result<Arc<Vec<bool>>, Error> {
        if let Some(a) = self.answers.get(rel) {
            return Ok(a.clone());
        }
        let a = Arc::new(answers(&self.dir, rel, &self.text(rel)?)?);
        self.answers.insert(rel.to_string(), a.clone());
        Ok(a)
    }
}

impl Vectors {
    /// Loads and checks the vector set in `dir`: every file the cases name
    /// must be in `manifest.tsv` with its sha256, and every manifest entry
    /// must exist with that sha256.
    pub fn load(dir: &Path) -> Result<Self, Error> {
        let manifest_path = dir.join("manifest.tsv");
        if !manifest_path.is_file() {
            return Err(Error::failed(format!(
                "no conformance vectors in {} (no manifest.tsv; pass --vectors DIR)",
                dir.display()
            )));
        }
        let manifest = crate::input::read_regular(&manifest_path)?;
        let manifest = String::from_utf8(manifest).map_err(|_| bad(dir, "manifest.tsv", "not UTF-8"))?;
        let mut listed = BTreeMap::new();
        let mut total = 0u64;
        for f in rows(dir, "manifest.tsv", &manifest, &["path", "bytes", "sha256"])? {
            let size: u64 = f[1].parse().map_err(|_| {
                bad(
                    dir,
                    "manifest.tsv",
                    format!("{}: bytes {:?} is not a number", f[0], f[1]),
                )
            })?;
            if !plain_relative(&f[0]) {
                return Err(bad(
                    dir,
                    "manifest.tsv",
                    format!(
                        "{:?} is not a plain relative path inside the vectors directory",
                        f[0]
                    ),
                ));
            }
            total = total.saturating_add(size);
            if total > MAX_TOTAL_BYTES {
                return Err(bad(
                    dir,
                    "manifest.tsv",
                    format!("lists more than {MAX_TOTAL_BYTES} bytes of files"),
                ));
            }
            if listed.insert(f[0].clone(), (size, f[2].clone())).is_some() {
                return Err(bad(dir, "manifest.tsv", format!("{} is listed twice", f[0])));
            }
        }
        let canonical_dir = dir.canonicalize().map_err(|e| read_error(dir, e))?;
        let mut files = Files {
            dir: dir.to_path_buf(),
            bytes: BTreeMap::new(),
            lines: BTreeMap::new(),
            answers: BTreeMap::new(),
        };
        // Every listed file is intact, including those no case names.
        for (rel, (size, want)) in &listed {
            files.read(&canonical_dir, rel, *size, want)?;
        }
        let probes = file_lines(&files.text("probes.hex")?);
        if probes.is_empty() {
            return Err(bad(
                dir,
                "probes.hex",
                "no probes: every query check would compare nothing",
            ));
        }
        let cases_text = files.text("cases.tsv")?;
        let header = [
            "id",
            "feature",
            "policy",
            "format_version",
            "context",
            "optimize_filters_for_memory",
            "keys",
            "count",
            "filter",
            "answers",
            "filter_len",
            "trailer",
        ];
        let mut ids = HashSet::new();
        let mut filters = Vec::new();
        for f in rows(dir, "cases.tsv", &cases_text, &header)? {
            let id = f[0].clone();
            if !ids.insert(id.clone()) {
                return Err(bad(dir, "cases.tsv", format!("duplicate id {id}")));
            }
            let num = |i: usize| -> Result<i64, Error> {
                f[i].parse::<i64>().map_err(|_| {
                    bad(
                        dir,
                        "cases.tsv",
                        format!("{id}: {} {:?} is not a number", header[i], f[i]),
                    )
                })
            };
            let num32 = |i: usize| -> Result<i32, Error> {
                i32::try_from(num(i)?).map_err(|_| {
                    bad(
                        dir,
                        "cases.tsv",
                        format!("{id}: {} {:?} is out of range", header[i], f[i]),
                    )
                })
            };
            let context = match f[4].as_str() {
                "flush" => Context::Flush,
                _ => Context::Level(num32(4)?),
            };
            let all_keys = files.lines(&format!("keys/{}", f[6]))?;
            let count = usize::try_from(num(7)?).unwrap_or(usize::MAX);
            if count > all_keys.len() {
                return Err(bad(
                    dir,
                    "cases.tsv",
                    format!("{id}: count {count} > keys in {}", f[6]),
                ));
            }
            let filter = files.bytes(&f[8])?;
            if filter.len() as i64 != num(10)? {
                return Err(bad(
                    dir,
                    "cases.tsv",
                    format!("{id}: filter_len differs from {}", f[8]),
                ));
            }
            let answers = match f[9].as_str() {
                "-" => None,
                rel => {
                    let a = files.answers(rel)?;
                    if a.len() != probes.len() {
                        return Err(bad(
                            dir,
                            rel,
                            format!("{} answers for {} probes", a.len(), probes.len()),
                        ));
                    }
                    Some(a)
                }
            };
            let format_version = num32(3)?;
            filters.push(FilterCase {
                id: id.clone(),
                feature: f[1].clone(),
                policy: f[2].clone(),
                format_version,
                context,
                optimize_filters_for_memory: match f[5].as_str() {
                    "true" => true,
                    "false" => false,
                    other => {
                        return Err(bad(
                            dir,
                            "cases.tsv",
                            format!("{id}: optimize_filters_for_memory {other:?} is not true or false"),
                        ))
                    }
                },
                all_keys,
                count,
                filter_path: dir.join(&f[8]),
                filter,
                answers,
            });
        }
        let sst_text = files.text("sst.tsv")?;
        let mut ssts = Vec::new();
        for f in rows(
            dir,
            "sst.tsv",
            &sst_text,
            &["id", "feature", "file", "keys", "answers"],
        )? {
            files.bytes(&f[2])?;
            let keys = files.lines(&f[3])?;
            if keys.is_empty() {
                return Err(bad(dir, &f[3], "no probe keys: the check would compare nothing"));
            }
            let a = files.answers(&f[4])?;
            if a.len() != keys.len() {
                return Err(bad(
                    dir,
                    &f[4],
                    format!("{} answers for {} keys", a.len(), keys.len()),
                ));
            }
            ssts.push(SstCase {
                id: f[0].clone(),
                feature: f[1].clone(),
                file: dir.join(&f[2]),
                keys_path: dir.join(&f[3]),
                keys,
                answers: a,
            });
        }
        Ok(Self {
            dir: dir.to_path_buf(),
            probes,
            filters,
            ssts,
        })
    }
}

/// The lowercase hex SHA-256 of `bytes`, as `manifest.tsv` records it.
fn sha256_hex(bytes: &[u8]) -> String {
    use sha2::{Digest, Sha256};
    Sha256::digest(bytes).iter().map(|b| format!("{b:02x}")).collect()
}

// The memory-budget test's counting allocator, shared with the other
// crates' budget tests.
#[cfg(test)]
#[path = "../../../sst/tests/support/counting_alloc.rs"]
mod counting_alloc;

#[cfg(test)]
mod tests {
    use super::counting_alloc::peak_of;
    use super::{file_lines, Vectors};

    /// The budget of the module docs, on the committed vectors: at most
    /// three times the bytes the manifest lists plus a few hundred bytes
    /// per row.
    #[test]
    fn loading_stays_within_the_written_budget() {
        let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../conformance/v1");
        let manifest = std::fs::read_to_string(dir.join("manifest.tsv")).unwrap();
        let listed: u64 = manifest
            .lines()
            .filter(|l| !l.starts_with('#') && !l.starts_with("path\t"))
            .filter_map(|l| l.split('\t').nth(1)?.parse::<u64>().ok())
            .sum();
        let (v, peak) = peak_of(|| Vectors::load(&dir).unwrap());
        let peak = peak as u64;
        let rows = (v.filters.len() + v.ssts.len()) as u64;
        println!(
            "listed {listed} bytes, {rows} rows: peak {peak} bytes ({:.2} of listed)",
            peak as f64 / listed as f64
        );
        assert!(
            peak <= 3 * listed + 512 * rows + (1 << 20),
            "{peak} over the budget"
        );
        // Near it: the files and their lines are held.
        assert!(peak >= 2 * listed, "{peak} far below the budget: it says nothing");
    }

    #[test]
    fn lines_keep_empty_keys_but_not_the_final_newline() {
        assert!(file_lines("").is_empty());
        assert_eq!(file_lines("\n"), vec![""]);
        assert_eq!(file_lines("\nab\n"), vec!["", "ab"]);
        assert_eq!(file_lines("ab\ncd"), vec!["ab", "cd"]);
    }
}
