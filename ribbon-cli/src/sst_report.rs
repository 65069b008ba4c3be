//! How `ribbon sst info` and `ribbon sst verify` show their results: text
//! for people, and one JSON document (an array with one object per file)
//! for programs. Field names mean one thing each, in text and JSON alike;
//! numbers that cannot be given are `-` in text and `null` in JSON, never
//! NaN or infinity.

use crate::escape::escape_text;
use ribbon_sst::{TableInfo, TableReport, VerifyReport};
use serde::Serialize;
use std::fmt::Write as _;
use std::path::Path;

/// One file of `sst info --json`: its name, and its error or its table
/// ([`ribbon_sst::TableReport`], the field names the C library uses too).
#[derive(Debug, Serialize)]
pub struct InfoJson<'a> {
    file: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    error: Option<String>,
    #[serde(flatten, skip_serializing_if = "Option::is_none")]
    table: Option<TableReport<'a>>,
}

impl<'a> InfoJson<'a> {
    /// The JSON object for one file.
    pub fn new(file: &Path, result: &'a Result<TableInfo, ribbon_sst::Error>) -> Self {
        let file = file.display().to_string();
        match result {
            Err(e) => InfoJson {
                file,
                error: Some(e.to_string()),
                table: None,
            },
            Ok(i) => InfoJson {
                file,
                error: None,
                table: Some(i.report()),
            },
        }
    }
}

fn finite(x: Option<f64>) -> Option<f64> {
    x.filter(|v| v.is_finite())
}

fn or_dash<T: ToString>(v: Option<T>) -> String {
    v.map_or_else(|| "-".into(), |v| v.to_string())
}

/// A name read from the file, escaped ([`escape_text`]: it must not split
/// a line or reach the terminal raw), `-` when absent.
fn name_or_dash<T: ToString>(v: Option<T>) -> String {
    v.map_or_else(|| "-".into(), |v| escape_text(&v.to_string()).into_owned())
}

fn fixed(v: Option<f64>, digits: usize) -> String {
    finite(v).map_or_else(|| "-".into(), |v| format!("{v:.digits$}"))
}

fn list<T: ToString>(v: &[T]) -> String {
    v.iter().map(T::to_string).collect::<Vec<_>>().join(",")
}

/// `key: value` lines for one table (`sst info FILE`); every name from the
/// file (or the file's own name) escaped ([`escape_text`]).
pub fn info_text(name: &str, i: &TableInfo) -> String {
    let name = escape_text(name);
    let mut s = String::new();
    let _ = writeln!(s, "file: {name}");
    let _ = writeln!(s, "format_version: {}", i.format_version);
    let _ = writeln!(s, "checksum: {}", i.checksum_type);
    let partitions = match i.filter_layout {
        "partitioned" => format!(" ({} partitions)", i.partitions),
        "block-based" => format!(
            " ({} filters, one per data block range; RocksDB 7+ ignores them)",
            i.block_filters
        ),
        _ => String::new(),
    };
    let _ = writeln!(
        s,
        "filter: {} {}{partitions}",
        i.filter_layout,
        escape_text(&i.filter_kind)
    );
    let _ = writeln!(s, "filter policy: {}", name_or_dash(i.policy_name.as_ref()));
    let _ = writeln!(s, "filter block: {}", name_or_dash(i.filter_block_name.as_ref()));
    let _ = writeln!(
        s,
        "filter bytes: {} (rocksdb.filter.size {})",
        i.filter_bytes,
        or_dash(i.filter_size_property)
    );
    let _ = writeln!(
        s,
        "entries: {} in the table, {} in the filter",
        or_dash(i.num_entries),
        or_dash(i.num_filter_entries)
    );
    let _ = writeln!(
        s,
        "bits per filter entry: {}  bits per table entry: {}",
        fixed(i.bits_per_filter_entry, 3),
        fixed(i.bits_per_table_entry, 3)
    );
    if !i.seeds.is_empty() {
        let _ = writeln!(
            s,
            "ribbon seeds: {}  ribbon blocks: {}",
            list(&i.seeds),
            i.ribbon_blocks
        );
    }
    if !i.probes.is_empty() && i.filter_layout == "block-based" {
        // Not cache-local: no cache lines to count.
        let _ = writeln!(s, "bloom probes: {}", list(&i.probes));
    } else if !i.probes.is_empty() {
        let _ = writeln!(
            s,
            "bloom probes: {}  bloom cache lines: {}",
            list(&i.probes),
            i.bloom_cache_lines
        );
    }
    let fp = match finite(i.expected_fp_rate) {
        Some(f) if f > 0.0 => format!("{f:.6} (1 in {:.1})", 1.0 / f),
        Some(f) => format!("{f}"),
        None => "-".into(),
    };
    let _ = writeln!(s, "expected fp rate: {fp}");
    let _ = writeln!(s, "whole key filtering: {}", i.whole_key_filtering);
    let _ = writeln!(
        s,
        "prefix extractor: {}",
        name_or_dash(i.prefix_extractor.as_ref())
    );
    let _ = writeln!(s, "comparator: {}", name_or_dash(i.comparator.as_ref()));
    let _ = writeln!(s, "index type: {}", name_or_dash(i.index_type.as_ref()));
    let _ = writeln!(s, "compression: {}", name_or_dash(i.compression.as_ref()));
    if i.compression_dict_bytes > 0 {
        let _ = writeln!(s, "compression dictionary: {} bytes", i.compression_dict_bytes);
    }
    let _ = writeln!(
        s,
        "data: {} bytes in {} blocks",
        or_dash(i.data_size),
        or_dash(i.num_data_blocks)
    );
    if let Some(cf) = &i.column_family {
        let _ = writeln!(s, "column family: {}", escape_text(cf));
    }
    s
}

/// One row per file, aligned columns, then a count per filter family
/// (`sst info DIR` or several files).
/// Where a file sits in its database, when it was found in a database
/// directory: its level and column family, or `None` for a file the
/// MANIFEST does not list (left over: RocksDB ignores it).
pub type Placement = Option<Option<(u32, String)>>;

/// The multi-file table of `ribbon sst info`: one row per file (`placed`:
/// each file's [`Placement`], in the rows' order; `None` outside a
/// database directory).
pub fn info_table(rows: &[(String, Result<TableInfo, ribbon_sst::Error>)], placed: &[Placement]) -> String {
    let header = [
        "FILE",
        "LEVEL",
        "CF",
        "FV",
        "CHECKSUM",
        "LAYOUT",
        "FILTER",
        "PARTS",
        "ENTRIES",
        "BYTES",
        "BITS/FILTER-ENTRY",
        "FP RATE",
    ];
    let mut table: Vec<Vec<String>> = vec![header.iter().map(|s| s.to_string()).collect()];
    let mut families: Vec<(&'static str, usize)> = Vec::new();
    let mut unreferenced = 0;
    for (row, (name, r)) in rows.iter().enumerate() {
        let short = Path::new(name)
            .file_name()
            .map_or_else(|| name.clone(), |n| n.to_string_lossy().into_owned());
        let (level, cf) = match placed.get(row).cloned().flatten() {
            None => ("-".to_string(), "-".to_string()),
            Some(None) => {
                unreferenced += 1;
                ("unref".to_string(), "-".to_string())
            }
            Some(Some((l, cf))) => (format!("L{l}"), cf),
        };
        match r {
            Ok(i) => {
                match families.iter_mut().find(|(f, _)| *f == i.family()) {
                    Some((_, n)) => *n += 1,
                    None => families.push((i.family(), 1)),
                }
                table.push(vec![
                    short,
                    level,
                    cf,
                    i.format_version.to_string(),
                    i.checksum_type.to_string(),
                    i.filter_layout.to_string(),
                    i.filter_kind.clone(),
                    if i.filter_layout == "partitioned" {
                        i.partitions.to_string()
                    } else {
                        "-".into()
                    },
                    or_dash(i.num_filter_entries.or(i.num_entries)),
                    i.filter_bytes.to_string(),
                    fixed(i.bits_per_filter_entry, 2),
                    fixed(i.expected_fp_rate, 5),
                ]);
            }
            Err(e) => table.push(vec![short, format!("error: {e}")]),
        }
    }
    let mut s = aligned(&table, header.len());
    let counts: Vec<String> = families.iter().map(|(f, n)| format!("{f}: {n}")).collect();
    let _ = write!(s, "{} files", rows.len());
    if !counts.is_empty() {
        let _ = write!(s, " ({})", counts.join(", "));
    }
    s.push('\n');
    if unreferenced > 0 {
        let _ = writeln!(
            s,
            "{unreferenced} files (LEVEL unref) are not referenced by the MANIFEST: left over, RocksDB ignores them"
        );
    }
    s
}

/// Rows of `cols` cells padded to a common width (rows of another length,
/// error rows, are printed as they are); every cell escaped
/// ([`escape_text`]: a column family's or a file's name with a newline or
/// a terminal escape in it stays in its cell).
fn aligned(table: &[Vec<String>], cols: usize) -> String {
    let table: Vec<Vec<String>> = table
        .iter()
        .map(|row| row.iter().map(|c| escape_text(c).into_owned()).collect())
        .collect();
    let mut widths = vec![0usize; cols];
    for row in table.iter().filter(|r| r.len() == cols) {
        for (w, c) in widths.iter_mut().zip(row) {
            *w = (*w).max(c.chars().count());
        }
    }
    let mut s = String::new();
    for row in &table {
        let cells: Vec<String> = row
            .iter()
            .enumerate()
            .map(|(i, c)| {
                if row.len() == cols && i + 1 < cols {
                    format!("{c:<w$}", w = widths[i])
                } else {
                    c.clone()
                }
            })
            .collect();
        s.push_str(cells.join("  ").trim_end());
        s.push('\n');
    }
    s
}

/// What `sst verify` found in one file.
pub struct Verified {
    /// The filter walk.
    pub report: VerifyReport,
    /// Block checksums verified.
    pub checksums: usize,
}

/// One file of `sst verify --json`.
#[derive(Debug, Serialize)]
pub struct VerifyJson {
    file: String,
    ok: bool,
    #[serde(skip_serializing_if = "Option::is_none")]
    error: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    keys: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    data_blocks: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    whole_key_checks: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    prefix_checks: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    checksums_verified: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    filter_checked: Option<bool>,
    #[serde(skip_serializing_if = "Option::is_none")]
    filter_unchecked_because: Option<&'static str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    misses: Option<Vec<MissJson>>,
}

/// A key the filter says "definitely not" for.
#[derive(Debug, Serialize)]
struct MissJson {
    user_key_hex: String,
    check: &'static str,
    data_block_offset: u64,
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

/// Whether a verification passed.
pub fn passed(r: &Result<Verified, ribbon_sst::Error>) -> bool {
    matches!(r, Ok(v) if v.report.miss_count == 0)
}

impl VerifyJson {
    /// The JSON object for one file.
    pub fn new(file: &Path, r: &Result<Verified, ribbon_sst::Error>) -> Self {
        let ok = passed(r);
        let file = file.display().to_string();
        match r {
            Err(e) => VerifyJson {
                file,
                ok,
                error: Some(e.to_string()),
                keys: None,
                data_blocks: None,
                whole_key_checks: None,
                prefix_checks: None,
                checksums_verified: None,
                filter_checked: None,
                filter_unchecked_because: None,
                misses: None,
            },
            Ok(v) => VerifyJson {
                file,
                ok,
                error: None,
                keys: Some(v.report.keys),
                data_blocks: Some(v.report.data_blocks),
                whole_key_checks: Some(v.report.whole_key_checks),
                prefix_checks: Some(v.report.prefix_checks),
                checksums_verified: Some(v.checksums as u64),
                filter_checked: Some(v.report.unchecked.is_none()),
                filter_unchecked_because: v.report.unchecked,
                misses: Some(
                    v.report
                        .misses
                        .iter()
                        .map(|m| MissJson {
                            user_key_hex: hex(&m.user_key),
                            check: if m.prefix { "prefix" } else { "whole-key" },
                            data_block_offset: m.data_block_offset,
                        })
                        .collect(),
                ),
            },
        }
    }
}

/// The text lines for one file of `sst verify`.
pub fn verify_text(name: &str, r: &Result<Verified, ribbon_sst::Error>) -> String {
    let name = escape_text(name);
    match r {
        Err(e) => format!("{name}: FAILED: {}\n", escape_text(&e.to_string())),
        Ok(v) if v.report.miss_count == 0 => {
            let what = match v.report.unchecked {
                None => format!(
                    "{} keys in {} data blocks pass the filter ({} whole-key, {} prefix checks)",
                    v.report.keys, v.report.data_blocks, v.report.whole_key_checks, v.report.prefix_checks
                ),
                Some(why) => format!(
                    "{} keys in {} data blocks; filter not checked: {why}",
                    v.report.keys, v.report.data_blocks
                ),
            };
            format!("{name}: ok: {what}; {} block checksums verified\n", v.checksums)
        }
        Ok(v) => {
            let mut s = format!(
                "{name}: FAILED: {} of {} filter checks say \"definitely not\" for a key in the file\n",
                v.report.miss_count,
                v.report.whole_key_checks + v.report.prefix_checks
            );
            for m in v.report.misses.iter().take(5) {
                let _ = writeln!(
                    s,
                    "  {} check of key {} (data block at offset {})",
                    if m.prefix { "prefix" } else { "whole-key" },
                    hex(&m.user_key),
                    m.data_block_offset
                );
            }
            s
        }
    }
}
