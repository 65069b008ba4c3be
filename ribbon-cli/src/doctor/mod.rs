//! `ribbon doctor DIR`: the diagnosis of [`ribbon_sst::doctor`] rendered as
//! text (the default), one JSON document (`--json`, schema in
//! [`docs/doctor.md`](https://github.com/rocks-ribbon/rocks-ribbon/blob/main/docs/doctor.md)) or a self-contained HTML page (`--html FILE`).

mod html;
mod json;

use crate::error::Error;
use crate::output::{self, Stdout};
use clap::Args;
use ribbon_sst::doctor::{self, CfReport, DoctorOptions, LevelReport, Report};
use std::path::PathBuf;

/// `ribbon doctor`.
#[derive(Debug, Args)]
pub struct DoctorArgs {
    /// The database directory (holds CURRENT, the MANIFEST and the SST files)
    pub dir: PathBuf,
    /// Judge this OPTIONS file (a configuration about to be deployed) instead of the database's newest one
    #[arg(long, value_name = "FILE")]
    pub options: Option<PathBuf>,
    /// One JSON document on standard output instead of text (schema: docs/doctor.md)
    #[arg(long, conflicts_with = "html")]
    pub json: bool,
    /// Write a self-contained HTML page (a chart per column family, findings beside it) to FILE ('-': standard output)
    #[arg(long, value_name = "FILE")]
    pub html: Option<PathBuf>,
    /// Absent keys queried per file to measure its FP rate (0: do not measure)
    #[arg(long, value_name = "N", default_value_t = 1000, value_parser = clap::value_parser!(u32).range(0..=1_000_000))]
    pub samples: u32,
    /// Seed of the absent keys (the same seed gives the same measurement)
    #[arg(long, value_name = "SEED", default_value_t = DoctorOptions::default().seed)]
    pub seed: u64,
}

/// The long help's tail.
pub const DOCTOR_HELP: &str = "\
Reads the newest OPTIONS file (or --options FILE), the MANIFEST and every live SST's properties and \
filter, and reports per column family and level: the filters there (kind, bits/key, partitioned, \
whole-key or prefix-only, promised and measured FP rate), why they differ from the options \
(bloom_before_level, format_version < 5, Bloom fall-back for few keys, cache-charging fall-back, \
optimize_filters_for_hits, files written under another policy), what RocksDB will ignore (incompatible \
policy, other prefix extractor, whole_key_filtering=false, no filter), where the filter bytes live, and \
what Ribbon (ribbonfilter) or rust.BalancedRibbon would save at the same FP rates. A file it cannot \
read is reported as unreadable and left out, never guessed. Exit code 0 when it ran (findings or \
not), 1 when the database cannot be read, 2 for a bad command line.";

/// Runs `ribbon doctor`.
pub fn run(args: &DoctorArgs) -> Result<(), Error> {
    let how = DoctorOptions {
        options_file: args.options.clone(),
        samples_per_file: args.samples,
        seed: args.seed,
    };
    let report = doctor::diagnose(&args.dir, &how).map_err(|e| Error::failed(e.to_string()))?;
    if let Some(path) = &args.html {
        return output::write_file(path, html::page(&report).as_bytes());
    }
    let mut out = Stdout::new();
    if args.json {
        out.line(&output::to_json(&json::report(&report))?)?;
    } else {
        out.bytes(text(&report).as_bytes())?;
    }
    out.finish()
}

/// Bytes as `12.3 KiB`.
pub(crate) fn bytes(n: u64) -> String {
    const UNITS: [&str; 5] = ["B", "KiB", "MiB", "GiB", "TiB"];
    let mut v = n as f64;
    let mut u = 0;
    while v >= 1024.0 && u + 1 < UNITS.len() {
        v /= 1024.0;
        u += 1;
    }
    if u == 0 {
        format!("{n} B")
    } else {
        format!("{v:.1} {}", UNITS[u])
    }
}

/// A rate as a percentage, or `-`.
pub(crate) fn pct(r: Option<f64>) -> String {
    r.map_or("-".to_string(), |r| format!("{:.3}%", 100.0 * r))
}

/// The families of a level: `Ribbon 3, Bloom 1`.
pub(crate) fn families(l: &LevelReport) -> String {
    l.families
        .iter()
        .map(|(k, v)| format!("{k} {v}"))
        .collect::<Vec<_>>()
        .join(", ")
}

/// Saved bytes and share: `1.2 MiB (31%)`.
pub(crate) fn saving(now: u64, then: u64) -> String {
    if now == 0 {
        return "-".to_string();
    }
    let saved = now.saturating_sub(then);
    format!("{} ({:.0}%)", bytes(saved), 100.0 * saved as f64 / now as f64)
}

/// The rows of a column family's level table, each level and then `total`
/// (its [`CfReport::total`]): the row, its label (`L<level>`, or `all`) and
/// the FP rate it promises (for `all`, the mean promise over the queries
/// measured), as the text and HTML reports print them.
fn level_rows<'a>(
    cf: &'a CfReport,
    total: &'a LevelReport,
) -> impl Iterator<Item = (&'a LevelReport, String, Option<f64>)> {
    let levels = cf
        .levels
        .iter()
        .map(|l| (l, format!("L{}", l.level), l.promised_fp));
    let mean = (total.measured.queries > 0).then(|| total.measured.expected / total.measured.queries as f64);
    levels.chain(std::iter::once((total, "all".to_string(), mean)))
}

fn configured(cf: &CfReport) -> String {
    let Some(c) = &cf.config else {
        return "unknown (no OPTIONS section)".to_string();
    };
    let mut parts = vec![format!(
        "filter_policy={}",
        c.filter_policy.as_ref().map_or("?".to_string(), |p| p.id())
    )];
    let show = |name: &str, v: Option<String>| v.map(|v| format!("{name}={v}"));
    parts.extend(
        [
            show("format_version", c.format_version.map(|v| v.to_string())),
            show(
                "whole_key_filtering",
                c.whole_key_filtering.map(|v| v.to_string()),
            ),
            show("partition_filters", c.partition_filters.map(|v| v.to_string())),
            show("prefix_extractor", c.prefix_extractor.clone()),
            show(
                "optimize_filters_for_hits",
                c.optimize_filters_for_hits.map(|v| v.to_string()),
            ),
            show(
                "cache_index_and_filter_blocks",
                c.cache_index_and_filter_blocks.map(|v| v.to_string()),
            ),
        ]
        .into_iter()
        .flatten(),
    );
    parts.join(" ")
}

/// The text report.
pub fn text(r: &Report) -> String {
    use std::fmt::Write;
    let mut s = String::new();
    let _ = writeln!(s, "database {}", r.dir.display());
    let _ = writeln!(
        s,
        "options  {}{}{}",
        r.options_file
            .as_ref()
            .map_or("none found".to_string(), |p| p.display().to_string()),
        if r.options_given { " (given)" } else { "" },
        r.rocksdb_version
            .as_ref()
            .map_or(String::new(), |v| format!(" (RocksDB {v})"))
    );
    let _ = writeln!(s, "manifest {}", r.manifest.display());
    for cf in &r.column_families {
        let _ = writeln!(s, "\ncolumn family {:?}: {}", cf.name, configured(cf));
        let _ = writeln!(
            s,
            "  {:<5} {:>6} {:>11} {:>10} {:>8} {:>9} {:>9}  kinds",
            "level", "files", "keys", "filter", "bits/key", "promised", "measured"
        );
        let total = cf.total();
        for (l, name, promised) in level_rows(cf, &total) {
            let _ = writeln!(
                s,
                "  {:<5} {:>6} {:>11} {:>10} {:>8} {:>9} {:>9}  {}{}{}",
                name,
                l.files,
                l.entries,
                bytes(l.filter_bytes),
                l.bits_per_key().map_or("-".to_string(), |b| format!("{b:.2}")),
                pct(promised),
                pct(l.measured.rate()),
                families(l),
                if l.partitioned_files > 0 {
                    format!(", {} partitioned", l.partitioned_files)
                } else {
                    String::new()
                },
                if l.prefix_only_files > 0 {
                    format!(", {} prefix-only", l.prefix_only_files)
                } else {
                    String::new()
                },
            );
        }
        for n in &cf.notes {
            let _ = writeln!(s, "  note: {n}");
        }
        if cf.findings.is_empty() {
            let _ = writeln!(s, "  findings: none");
        } else {
            let _ = writeln!(s, "  findings:");
            for f in &cf.findings {
                let at = f.level.map_or("CF".to_string(), |l| format!("L{l}"));
                let files = if f.files > 0 {
                    format!(
                        " ({} file{}: {}{})",
                        f.files,
                        if f.files == 1 { "" } else { "s" },
                        f.file_numbers
                            .iter()
                            .map(|n| format!("{n:06}"))
                            .collect::<Vec<_>>()
                            .join(", "),
                        if f.files as usize > f.file_numbers.len() {
                            ", ..."
                        } else {
                            ""
                        }
                    )
                } else {
                    String::new()
                };
                let _ = writeln!(
                    s,
                    "    [{}] {} {}: {}{}",
                    f.code.section(),
                    at,
                    f.code.as_str(),
                    f.message,
                    files
                );
            }
        }
        let p = total.placement;
        let _ = writeln!(
            s,
            "  cost: {} of filters: {} held by table readers (in rocksdb.estimate-table-readers-mem), {} in the block cache, {} pinned in it{}",
            bytes(total.filter_bytes),
            bytes(p.table_reader_bytes),
            bytes(p.block_cache_bytes),
            bytes(p.pinned_bytes),
            if p.block_cache_bytes + p.pinned_bytes > 0 {
                format!(
                    "; the estimate leaves out {} (in rocksdb.block-cache-usage instead)",
                    bytes(p.block_cache_bytes + p.pinned_bytes)
                )
            } else {
                String::new()
            }
        );
        if total.what_if_bytes_now > 0 {
            let _ = writeln!(s, "  what-if, at each file's own FP rate:");
            for l in cf.levels.iter().chain(std::iter::once(&total)) {
                if l.what_if_bytes_now == 0 {
                    continue;
                }
                let name = if std::ptr::eq(l, &total) {
                    "all".to_string()
                } else {
                    format!("L{}", l.level)
                };
                let _ = writeln!(
                    s,
                    "    {:<4} ribbonfilter saves {} (build +{:.1} ms), rust.BalancedRibbon saves {} (build +{:.1} ms)",
                    name,
                    saving(l.what_if_bytes_now, l.ribbon_bytes),
                    l.ribbon_build_extra_ms,
                    saving(l.what_if_bytes_now, l.balanced_bytes),
                    l.balanced_build_extra_ms
                );
            }
            if let Some(bbl) = cf.suggested_bloom_before_level {
                let _ = writeln!(
                    s,
                    "    bloom_before_level={bbl} keeps flushes{} on fast Bloom builds and gives Ribbon below (build prices: docs/benchmarks.md)",
                    if bbl >= 1 { " and L0" } else { "" }
                );
            }
        }
    }
    s
}
