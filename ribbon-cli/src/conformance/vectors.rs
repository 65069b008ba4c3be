//! Reading the conformance vectors (`conformance/v1/`, described in its
//! README.md): the manifest, checked first, then the filter cases and the
//! SST cases, with the files they name.

use crate::error::{read_error, Error};
use std::collections::{BTreeMap, HashSet};
use std::path::{Path, PathBuf};

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
    /// The member keys, hex, one per line, in order.
    pub keys: Vec<String>,
    /// The filter block RocksDB wrote for them.
    pub filter_path: PathBuf,
    pub filter: Vec<u8>,
    /// RocksDB's answers for `probes.hex` (none for an empty filter).
    pub answers: Option<Vec<bool>>,
}

/// One row of `sst.tsv`.
#[derive(Debug, Clone)]
pub struct SstCase {
    pub id: String,
    pub feature: String,
    pub file: PathBuf,
    pub keys_path: PathBuf,
    pub keys: Vec<String>,
    pub answers: Vec<bool>,
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

/// Reads files of the vector set, each checked against the manifest.
struct Files {
    dir: PathBuf,
    sha256: BTreeMap<String, String>,
    cache: BTreeMap<String, String>,
}

impl Files {
    fn bytes(&self, rel: &str) -> Result<Vec<u8>, Error> {
        let want = self
            .sha256
            .get(rel)
            .ok_or_else(|| bad(&self.dir, rel, "not listed in manifest.tsv"))?;
        let path = self.dir.join(rel);
        let bytes = std::fs::read(&path).map_err(|e| read_error(&path, e))?;
        let got = sha256_hex(&bytes);
        if &got != want {
            return Err(bad(
                &self.dir,
                rel,
                format!("sha256 {got} differs from the manifest's {want} (damaged or stale vectors)"),
            ));
        }
        Ok(bytes)
    }

    fn text(&mut self, rel: &str) -> Result<String, Error> {
        if let Some(t) = self.cache.get(rel) {
            return Ok(t.clone());
        }
        let text = String::from_utf8(self.bytes(rel)?).map_err(|_| bad(&self.dir, rel, "not UTF-8"))?;
        self.cache.insert(rel.to_string(), text.clone());
        Ok(text)
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
        let manifest = std::fs::read_to_string(&manifest_path).map_err(|e| read_error(&manifest_path, e))?;
        let mut sha256 = BTreeMap::new();
        let mut sizes = BTreeMap::new();
        for f in rows(dir, "manifest.tsv", &manifest, &["path", "bytes", "sha256"])? {
            let size: u64 = f[1].parse().map_err(|_| {
                bad(
                    dir,
                    "manifest.tsv",
                    format!("{}: bytes {:?} is not a number", f[0], f[1]),
                )
            })?;
            if sha256.insert(f[0].clone(), f[2].clone()).is_some() {
                return Err(bad(dir, "manifest.tsv", format!("{} is listed twice", f[0])));
            }
            sizes.insert(f[0].clone(), size);
        }
        let mut files = Files {
            dir: dir.to_path_buf(),
            sha256,
            cache: BTreeMap::new(),
        };
        // Every listed file is intact, including those no case names.
        for (rel, &size) in &sizes {
            let len = files.bytes(rel)?.len() as u64;
            if len != size {
                return Err(bad(dir, rel, format!("{len} bytes, the manifest says {size}")));
            }
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
            let context = match f[4].as_str() {
                "flush" => Context::Flush,
                _ => Context::Level(num(4)? as i32),
            };
            let all_keys = file_lines(&files.text(&format!("keys/{}", f[6]))?);
            let count = num(7)? as usize;
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
                    let a = answers(dir, rel, &files.text(rel)?)?;
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
            let format_version = num(3)? as i32;
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
                keys: all_keys[..count].to_vec(),
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
            let keys = file_lines(&files.text(&f[3])?);
            if keys.is_empty() {
                return Err(bad(dir, &f[3], "no probe keys: the check would compare nothing"));
            }
            let a = answers(dir, &f[4], &files.text(&f[4])?)?;
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

#[cfg(test)]
mod tests {
    use super::file_lines;

    #[test]
    fn lines_keep_empty_keys_but_not_the_final_newline() {
        assert!(file_lines("").is_empty());
        assert_eq!(file_lines("\n"), vec![""]);
        assert_eq!(file_lines("\nab\n"), vec!["", "ab"]);
        assert_eq!(file_lines("ab\ncd"), vec!["ab", "cd"]);
    }
}
