//! The report's markdown tables, built from measured numbers.

use std::collections::BTreeMap;
use std::fmt::Write as _;

/// Build sizes the benchmarks may have measured.
pub const BUILD_SIZES: [usize; 5] = [10_000, 100_000, 1_000_000, 10_000_000, 100_000_000];

/// The report's ratio table: one row per measure, Rust against RocksDB's
/// C++ from the same run, with the target the ratio must stay at or below.
pub struct RatioTable {
    /// The markdown so far.
    pub out: String,
}

impl RatioTable {
    /// The header.
    pub fn new() -> Self {
        let mut out = String::new();
        let _ = writeln!(
            out,
            "| measure | Rust | RocksDB C++ | ratio Rust/C++ | target | met |\n|---|---|---|---|---|---|"
        );
        Self { out }
    }

    /// A ratio Rust/C++ that must stay at or below `target` (times, memory).
    pub fn row(&mut self, name: &str, rust: f64, cpp: f64, unit: &str, target: f64) {
        let ratio = rust / cpp;
        let _ = writeln!(
            self.out,
            "| {name} | {rust:.2} {unit} | {cpp:.2} {unit} | {ratio:.2} | ≤ {target} | {} |",
            if ratio <= target { "yes" } else { "**no**" }
        );
    }
}

impl RatioTable {
    /// An absolute value that must stay at or below `max`; `cpp` is shown
    /// for comparison, its ratio is not judged.
    pub fn absolute(&mut self, name: &str, rust: f64, cpp: f64, unit: &str, max: f64) {
        let _ = writeln!(
            self.out,
            "| {name} | {rust:.2} {unit} | {cpp:.2} {unit} | {:.2} | ≤ {max:.2} {unit} | {} |",
            rust / cpp,
            if rust <= max { "yes" } else { "**no**" }
        );
    }

    /// A ratio Rust/C++ that must stay within `1 ± tolerance` (rates that
    /// must be the same).
    pub fn within(&mut self, name: &str, rust: f64, cpp: f64, unit: &str, tolerance: f64) {
        let ratio = rust / cpp;
        let _ = writeln!(
            self.out,
            "| {name} | {rust:.3} {unit} | {cpp:.3} {unit} | {ratio:.3} | {:.2}–{:.2} | {} |",
            1.0 - tolerance,
            1.0 + tolerance,
            if (ratio - 1.0).abs() <= tolerance {
                "yes"
            } else {
                "**no**"
            }
        );
    }
}

impl RatioTable {
    /// A ratio of two Rust paths (the C++ column holds the baseline).
    pub fn row_vs(&mut self, name: &str, rust: f64, baseline: f64, unit: &str, target: f64) {
        self.row(name, rust, baseline, unit, target);
    }
}

/// Build ns/key per filter and n, for the plot and the last table.
pub type Series = BTreeMap<String, Vec<(f64, f64)>>;

/// Build ns/key by n, one column per filter.
pub fn series_table(out: &mut String, series: &Series) {
    let _ = writeln!(
        out,
        "\nBuild ns/key by n (criterion medians):\n\n| n | {} |\n|---|{}",
        series.keys().cloned().collect::<Vec<_>>().join(" | "),
        "---|".repeat(series.len())
    );
    for n in BUILD_SIZES.map(|n| n as f64) {
        let cells: Vec<String> = series
            .values()
            .map(|p| {
                p.iter()
                    .find(|&&(x, _)| x == n)
                    .map_or("-".into(), |&(_, y)| format!("{y:.1}"))
            })
            .collect();
        if cells.iter().any(|c| c != "-") {
            let _ = writeln!(out, "| {n:.0e} | {} |", cells.join(" | "));
        }
    }
}

/// The DB rows' floor: what the same fill and Gets cost with no filter,
/// against RocksDB's `ribbonfilter` and the Rust policy (markdown).
pub fn db_floor_table(db: &BTreeMap<&'static str, [f64; 3]>) -> String {
    let (r, c, none) = (db["rust"], db["rocksdb"], db["none"]);
    let mut out = String::from(
        "\nThe database rows against the same database with no filter at all (same run, best of 3): \
         no filter is the floor of any filter's fill, and of its present Gets, which every filter \
         answers \"may match\".\n\n\
         | DB measure (10^6 keys) | no filter | RocksDB `ribbonfilter:10` | `rust.RibbonFilter:10` | \
         no filter / RocksDB |\n|---|---|---|---|---|\n",
    );
    for (i, what) in [
        "fill + flush + compaction",
        "Gets of absent keys",
        "Gets of present keys",
    ]
    .into_iter()
    .enumerate()
    {
        let _ = writeln!(
            out,
            "| {what} | {:.2} s | {:.2} s | {:.2} s | {:.2} |",
            none[i],
            c[i],
            r[i],
            none[i] / c[i]
        );
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rows(t: &RatioTable) -> Vec<&str> {
        t.out.lines().skip(2).collect()
    }

    #[test]
    fn a_ratio_is_met_at_or_below_its_target() {
        let mut t = RatioTable::new();
        t.row("build", 30.0, 60.0, "ns/key", 0.5);
        t.row("query", 31.0, 60.0, "ns", 0.5);
        t.absolute("bits/key", 6.8, 7.1, "bits", 6.8);
        t.absolute("bits/key", 6.81, 7.1, "bits", 6.8);
        t.within("FP rate", 1.02, 1.0, "%", 0.05);
        t.within("FP rate", 0.94, 1.0, "%", 0.05);
        t.row_vs("SstFile", 1.1, 1.0, "ns", 1.1);
        assert!(t
            .out
            .starts_with("| measure | Rust | RocksDB C++ | ratio Rust/C++ | target | met |"));
        let rows = rows(&t);
        assert_eq!(
            rows[0],
            "| build | 30.00 ns/key | 60.00 ns/key | 0.50 | ≤ 0.5 | yes |"
        );
        assert_eq!(rows[1], "| query | 31.00 ns | 60.00 ns | 0.52 | ≤ 0.5 | **no** |");
        assert_eq!(
            rows[2],
            "| bits/key | 6.80 bits | 7.10 bits | 0.96 | ≤ 6.80 bits | yes |"
        );
        assert!(rows[3].ends_with("| **no** |"), "{}", rows[3]);
        assert_eq!(
            rows[4],
            "| FP rate | 1.020 % | 1.000 % | 1.020 | 0.95–1.05 | yes |"
        );
        assert!(rows[5].ends_with("| **no** |"), "{}", rows[5]);
        assert!(rows[6].ends_with("| 1.10 | ≤ 1.1 | yes |"), "{}", rows[6]);
    }

    #[test]
    fn the_series_table_has_a_column_per_filter_and_a_row_per_measured_n() {
        let mut series = Series::new();
        series.insert("rocksdb".into(), vec![(1e4, 50.0), (1e6, 98.25)]);
        series.insert("rust".into(), vec![(1e4, 30.0)]);
        let mut out = String::new();
        series_table(&mut out, &series);
        let lines: Vec<&str> = out.lines().filter(|l| l.starts_with('|')).collect();
        assert_eq!(lines[0], "| n | rocksdb | rust |");
        assert_eq!(lines[2], "| 1e4 | 50.0 | 30.0 |");
        assert_eq!(lines[3], "| 1e6 | 98.2 | - |");
        assert_eq!(lines.len(), 4, "no row for sizes nothing measured");
    }

    #[test]
    fn the_db_floor_table_divides_no_filter_by_rocksdb() {
        let db = BTreeMap::from([
            ("rust", [2.0, 1.0, 3.0]),
            ("rocksdb", [2.0, 1.25, 3.0]),
            ("none", [1.8, 2.5, 2.7]),
        ]);
        let out = db_floor_table(&db);
        assert!(
            out.contains("| fill + flush + compaction | 1.80 s | 2.00 s | 2.00 s | 0.90 |"),
            "{out}"
        );
        assert!(
            out.contains("| Gets of absent keys | 2.50 s | 1.25 s | 1.00 s | 2.00 |"),
            "{out}"
        );
    }
}
