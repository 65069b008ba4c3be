//! `ribbon conformance --impl COMMAND`: runs the portable conformance
//! vectors (`conformance/v1/`, captured from native RocksDB) against any
//! program with the contract of `ribbon build`, `ribbon query` and
//! `ribbon sst query`, and prints a table per feature.
//!
//! For each filter case (`cases.tsv`):
//! - build (not with `--reader-only`): `COMMAND build --policy P
//!   --format-version N (--level L | --flush) [--optimize-filters-for-memory
//!   false] --keys MEMBERS --hex --out FILTER`, then FILTER must be RocksDB's
//!   bytes; a failure names the first differing byte;
//! - query (when RocksDB's filter is not empty): `COMMAND query --filter
//!   ROCKSDB_FILTER --keys KEYS --hex` where KEYS are the members then
//!   `probes.hex`; it must print one `0`/`1` line per key: `1` for every
//!   member, RocksDB's answer for every probe. A failure names the first
//!   differing key.
//!
//! For each SST case (`sst.tsv`, unless `--no-sst`): `COMMAND sst query
//! FILE.sst --keys PROBES --hex`, with RocksDB's recorded `Get` answers.
//!
//! Any failing check makes the command exit 1 after the table.

mod exec;
mod vectors;

use crate::cli::ConformanceArgs;
use crate::error::Error;
use crate::output::Stdout;
use exec::{Implementation, Outcome, Scratch};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::Duration;
use vectors::{Context, FilterCase, SstCase, Vectors};

/// The features, in the order the table lists them. A case's feature is
/// one of these, or `ribbon-BITS` (listed under `ribbon`); a feature the
/// runner does not know (from newer vectors) is listed last.
const FEATURES: [&str; 8] = [
    "hash",
    "bloom",
    "legacy-bloom",
    "ribbon",
    "fallback",
    "policy",
    "sst",
    "sst-rocksdb6",
];

/// Failures printed per feature before "... and N more".
const SHOWN_PER_FEATURE: usize = 3;

/// The vectors of this checkout.
fn default_vectors() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../conformance/v1")
}

/// Whether a case of `feature` is selected by `--only`.
fn selected(only: &[String], feature: &str) -> bool {
    only.is_empty()
        || only
            .iter()
            .any(|o| o == feature || (o == "ribbon" && feature.starts_with("ribbon-")))
}

/// Where a feature's row goes in the table: in the order of [`FEATURES`],
/// the `ribbon-BITS` rows by increasing bits per key.
fn sort_key(feature: &str) -> (usize, f64, String) {
    let group = feature.strip_prefix("ribbon-").map_or(feature, |_| "ribbon");
    let rank = FEATURES
        .iter()
        .position(|f| *f == group)
        .unwrap_or(FEATURES.len());
    let bits = feature
        .strip_prefix("ribbon-")
        .and_then(|b| b.parse::<f64>().ok())
        .unwrap_or(0.0);
    (rank, bits, feature.to_string())
}

#[derive(Default)]
struct Tally {
    checks: usize,
    failed: usize,
    /// The first failures, in order (at most [`SHOWN_PER_FEATURE`]).
    shown: Vec<String>,
}

/// The results, by feature.
#[derive(Default)]
struct Report {
    features: BTreeMap<String, Tally>,
}

impl Report {
    fn record(&mut self, feature: &str, id: &str, what: &str, failure: Option<String>) {
        let t = self.features.entry(feature.to_string()).or_default();
        t.checks += 1;
        if let Some(detail) = failure {
            t.failed += 1;
            if t.shown.len() < SHOWN_PER_FEATURE {
                t.shown.push(format!("{id}: {what}: {detail}"));
            }
        }
    }

    fn print(&self, out: &mut Stdout, mode: &str) -> Result<(usize, usize, Vec<String>), Error> {
        let mut rows: Vec<(&String, &Tally)> = self.features.iter().collect();
        rows.sort_by(|a, b| {
            let (ka, kb) = (sort_key(a.0), sort_key(b.0));
            ka.0.cmp(&kb.0).then(ka.1.total_cmp(&kb.1)).then(ka.2.cmp(&kb.2))
        });
        for (feature, t) in &rows {
            for line in &t.shown {
                out.line(&format!("FAIL {feature} {line}"))?;
            }
            if t.failed > t.shown.len() {
                out.line(&format!(
                    "FAIL {feature} ... and {} more",
                    t.failed - t.shown.len()
                ))?;
            }
        }
        out.line(&format!("conformance ({mode})"))?;
        out.line(&format!(
            "{:<14} {:>6} {:>6} {:>6}  first difference",
            "feature", "checks", "pass", "fail"
        ))?;
        let (mut checks, mut failed, mut failing) = (0, 0, Vec::new());
        for (feature, t) in &rows {
            out.line(&format!(
                "{:<14} {:>6} {:>6} {:>6}  {}",
                feature,
                t.checks,
                t.checks - t.failed,
                t.failed,
                t.shown.first().map_or("-", String::as_str)
            ))?;
            checks += t.checks;
            failed += t.failed;
            if t.failed > 0 {
                failing.push((*feature).clone());
            }
        }
        out.line(&format!(
            "{:<14} {:>6} {:>6} {:>6}",
            "total",
            checks,
            checks - failed,
            failed
        ))?;
        Ok((checks, failed, failing))
    }
}

/// The first 48 characters of a key (a vector file's line: hex, but not
/// trusted to be ASCII), then `...`.
fn shorten(hex: &str) -> String {
    match hex.char_indices().nth(48) {
        Some((end, _)) => format!("{}...", &hex[..end]),
        None => hex.to_string(),
    }
}

/// Compares the filter the implementation built with RocksDB's.
fn compare_bytes(want: &[u8], got: &[u8]) -> Option<String> {
    if want == got {
        return None;
    }
    let first = want.iter().zip(got).position(|(a, b)| a != b);
    Some(match first {
        Some(i) => format!(
            "first differing byte {i}: expected {:02x}, got {:02x} (filter length expected {}, got {})",
            want[i],
            got[i],
            want.len(),
            got.len()
        ),
        None => format!(
            "length: expected {} bytes, got {} (equal up to byte {})",
            want.len(),
            got.len(),
            want.len().min(got.len())
        ),
    })
}

/// Compares printed answers with the expected ones; `name(i)` describes
/// key `i`.
fn compare_answers(
    stdout: &[u8],
    want: &[bool],
    keys: &[&String],
    name: impl Fn(usize) -> String,
) -> Option<String> {
    let text = String::from_utf8_lossy(stdout);
    let got = vectors::file_lines(&text);
    for (i, w) in want.iter().enumerate() {
        let Some(line) = got.get(i) else {
            return Some(format!("printed {} answers for {} keys", got.len(), want.len()));
        };
        let g = match line.trim() {
            "1" => true,
            "0" => false,
            other => return Some(format!("line {}: {other:?} is not 0 or 1", i + 1)),
        };
        if g != *w {
            return Some(format!(
                "first differing answer: {} (key {}): expected {}, got {}",
                name(i),
                shorten(keys[i]),
                u8::from(*w),
                u8::from(g)
            ));
        }
    }
    (got.len() != want.len()).then(|| format!("printed {} answers for {} keys", got.len(), want.len()))
}

fn lines(keys: &[&String]) -> String {
    let mut s = String::with_capacity(keys.iter().map(|k| k.len() + 1).sum());
    for k in keys {
        s.push_str(k);
        s.push('\n');
    }
    s
}

fn path_arg(p: &Path) -> String {
    p.display().to_string()
}

fn build_check(imp: &Implementation, c: &FilterCase) -> Result<Option<String>, Error> {
    let keys: Vec<&String> = c.keys().iter().collect();
    let keys_path = path_arg(&imp.scratch.write("members.hex", &lines(&keys))?);
    let out_path = imp.scratch.path("built.filter");
    let _ = std::fs::remove_file(&out_path);
    let fv = c.format_version.to_string();
    let level;
    let mut args: Vec<&str> = vec!["build", "--policy", &c.policy, "--format-version", &fv];
    match c.context {
        Context::Flush => args.push("--flush"),
        Context::Level(l) => {
            level = l.to_string();
            args.extend(["--level", &level]);
        }
    }
    if !c.optimize_filters_for_memory {
        args.extend(["--optimize-filters-for-memory", "false"]);
    }
    let out_arg = path_arg(&out_path);
    args.extend(["--keys", &keys_path, "--hex", "--out", &out_arg]);
    let outcome = imp.call(&args)?;
    if let Some(f) = outcome.failure(imp.limit) {
        return Ok(Some(f));
    }
    // A regular file only: an implementation that leaves a FIFO there
    // must not make the runner wait forever.
    match crate::input::read_regular(&out_path) {
        Ok(got) => Ok(compare_bytes(&c.filter, &got)),
        Err(e) => Ok(Some(format!("no filter written to --out: {e}"))),
    }
}

fn query_check(
    imp: &Implementation,
    c: &FilterCase,
    probes: &[String],
    want_probes: &[bool],
) -> Result<Option<String>, Error> {
    let keys: Vec<&String> = c.keys().iter().chain(probes).collect();
    let keys_path = path_arg(&imp.scratch.write("query.hex", &lines(&keys))?);
    let filter = path_arg(&c.filter_path);
    let outcome: Outcome = imp.call(&["query", "--filter", &filter, "--keys", &keys_path, "--hex"])?;
    if let Some(f) = outcome.failure(imp.limit) {
        return Ok(Some(f));
    }
    let members = c.keys().len();
    let want: Vec<bool> = std::iter::repeat_n(true, members)
        .chain(want_probes.iter().copied())
        .collect();
    Ok(compare_answers(&outcome.stdout, &want, &keys, |i| {
        if i < members {
            format!("member {i}")
        } else {
            format!("probe {}", i - members)
        }
    }))
}

fn sst_check(imp: &Implementation, c: &SstCase) -> Result<Option<String>, Error> {
    let (file, keys_path) = (path_arg(&c.file), path_arg(&c.keys_path));
    let outcome = imp.call(&["sst", "query", &file, "--keys", &keys_path, "--hex"])?;
    if let Some(f) = outcome.failure(imp.limit) {
        return Ok(Some(f));
    }
    let keys: Vec<&String> = c.keys.iter().collect();
    Ok(compare_answers(&outcome.stdout, &c.answers, &keys, |i| {
        format!("probe {i}")
    }))
}

/// `ribbon conformance`.
pub fn run(args: &ConformanceArgs) -> Result<(), Error> {
    for o in &args.only {
        let known = FEATURES.contains(&o.as_str())
            || o.strip_prefix("ribbon-")
                .is_some_and(|b| b.parse::<f64>().is_ok());
        if !known {
            return Err(Error::usage(format!(
                "unknown feature {o:?} for --only: one of {}, or ribbon-BITS (try 'ribbon conformance --help')",
                FEATURES.join(", ")
            )));
        }
    }
    if args.implementation.trim().is_empty() {
        return Err(Error::usage("--impl is empty (try 'ribbon conformance --help')"));
    }
    let dir = args.vectors.clone().unwrap_or_else(default_vectors);
    let dir = dir.canonicalize().unwrap_or(dir);
    let v = Vectors::load(&dir)?;
    let scratch = Scratch::new()?;
    let imp = Implementation {
        command: &args.implementation,
        limit: Duration::from_secs(args.timeout),
        scratch: &scratch,
    };
    let mut report = Report::default();
    for c in v.filters.iter().filter(|c| selected(&args.only, &c.feature)) {
        if !args.reader_only {
            let failure = build_check(&imp, c)?;
            report.record(&c.feature, &c.id, "build", failure);
        }
        if let Some(want) = &c.answers {
            let failure = query_check(&imp, c, &v.probes, want)?;
            report.record(&c.feature, &c.id, "query", failure);
        }
    }
    if !args.no_sst {
        for c in v.ssts.iter().filter(|c| selected(&args.only, &c.feature)) {
            let failure = sst_check(&imp, c)?;
            report.record(&c.feature, &c.id, "sst query", failure);
        }
    }
    let mode = if args.reader_only {
        "reader only"
    } else {
        "build and query"
    };
    let mut out = Stdout::new();
    out.line(&format!("vectors: {}", v.dir.display()))?;
    let (checks, failed, failing) = report.print(&mut out, mode)?;
    out.finish()?;
    if checks == 0 {
        return Err(Error::failed("no checks selected (see --only)"));
    }
    if failed > 0 {
        return Err(Error::failed(format!(
            "{failed} of {checks} conformance checks failed, in {}",
            failing.join(", ")
        )));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn byte_differences_name_the_first_byte() {
        assert_eq!(compare_bytes(b"abc", b"abc"), None);
        let d = compare_bytes(b"abcd", b"abxd").unwrap();
        assert!(
            d.starts_with("first differing byte 2: expected 63, got 78"),
            "{d}"
        );
        let d = compare_bytes(b"abcd", b"abc").unwrap();
        assert!(d.starts_with("length: expected 4 bytes, got 3"), "{d}");
    }

    #[test]
    fn answer_differences_name_the_first_key() {
        let keys = ["00".to_string(), "01".to_string()];
        let refs: Vec<&String> = keys.iter().collect();
        let name = |i: usize| format!("probe {i}");
        assert_eq!(compare_answers(b"1\n0\n", &[true, false], &refs, name), None);
        let d = compare_answers(b"1\n1\n", &[true, false], &refs, name).unwrap();
        assert_eq!(d, "first differing answer: probe 1 (key 01): expected 0, got 1");
        let d = compare_answers(b"1\n", &[true, false], &refs, name).unwrap();
        assert_eq!(d, "printed 1 answers for 2 keys");
        let d = compare_answers(b"1\n0\n1\n", &[true, false], &refs, name).unwrap();
        assert_eq!(d, "printed 3 answers for 2 keys");
        let d = compare_answers(b"1\nyes\n", &[true, false], &refs, name).unwrap();
        assert!(d.contains("\"yes\" is not 0 or 1"), "{d}");
    }

    #[test]
    fn only_selects_ribbon_by_bits_and_as_a_group() {
        assert!(selected(&[], "bloom"));
        let only = vec!["ribbon".to_string()];
        assert!(selected(&only, "ribbon-10") && !selected(&only, "bloom"));
        let only = vec!["ribbon-10".to_string()];
        assert!(selected(&only, "ribbon-10") && !selected(&only, "ribbon-1"));
    }
}
