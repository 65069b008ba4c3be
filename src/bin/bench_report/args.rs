//! The report's command line.

use clap::{Parser, Subcommand, ValueEnum};

/// The benchmark report: reads the criterion results of `cargo bench
/// --bench filters`, measures what criterion does not, and writes
/// `docs/benchmarks.md` with its plots.
#[derive(Debug, Parser)]
#[command(name = "bench-report")]
pub struct Args {
    /// One of the report's helpers instead of the report.
    #[command(subcommand)]
    pub mode: Option<Mode>,
    /// Leave out the database-level rows (minutes).
    #[arg(long)]
    pub skip_db: bool,
    /// Leave out the `ribbon sst` command table.
    #[arg(long)]
    pub skip_sst: bool,
    /// The database-level rows alone (a few minutes); writes no file.
    #[arg(long, conflicts_with_all = ["skip_db", "balanced_policy"])]
    pub db_only: bool,
    /// The Balanced Ribbon policy's section alone; writes no file.
    #[arg(long)]
    pub balanced_policy: bool,
}

/// Which side builds.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum Side {
    /// This crate, `ribbonfilter:10`.
    Rust,
    /// RocksDB's C++, `ribbonfilter:10`.
    Rocksdb,
}

/// The report's helpers.
#[derive(Debug, Subcommand)]
pub enum Mode {
    /// In a child process: the peak RSS growth (bytes) of one build by
    /// `which` (`rust`, `rocksdb`, or a Balanced section policy).
    #[command(hide = true)]
    ChildMemory {
        /// The builder.
        which: String,
        /// Keys.
        n: usize,
    },
    /// Runs a command and prints its seconds and peak RSS in bytes; fails
    /// when it does.
    #[command(hide = true)]
    Measure {
        /// The command and its arguments.
        #[arg(required = true, trailing_var_arg = true, allow_hyphen_values = true)]
        command: Vec<String>,
    },
    /// `reps` builds of `n` keys, for `perf stat` / `perf record`.
    BuildLoop {
        /// Which side builds.
        side: Side,
        /// Keys per build.
        n: usize,
        /// Builds.
        reps: usize,
    },
    /// Where the time of one build of `n` keys goes, phase by phase.
    Breakdown {
        /// Keys.
        n: usize,
    },
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn helpers_and_flags_parse() {
        let a = Args::try_parse_from(["bench-report", "--skip-db"]).unwrap();
        assert!(a.skip_db && a.mode.is_none());
        let a = Args::try_parse_from([
            "bench-report",
            "measure",
            "ribbon",
            "sst",
            "verify",
            "--json",
            "x",
        ])
        .unwrap();
        match a.mode {
            Some(Mode::Measure { command }) => {
                assert_eq!(command, ["ribbon", "sst", "verify", "--json", "x"])
            }
            other => panic!("{other:?}"),
        }
        let a = Args::try_parse_from(["bench-report", "build-loop", "rocksdb", "1000", "3"]).unwrap();
        assert!(matches!(
            a.mode,
            Some(Mode::BuildLoop {
                side: Side::Rocksdb,
                n: 1000,
                reps: 3
            })
        ));
        assert!(Args::try_parse_from(["bench-report", "child-memory", "rust"]).is_err());
        assert!(Args::try_parse_from(["bench-report", "--db-only", "--skip-db"]).is_err());
        assert!(Args::try_parse_from(["bench-report", "--bogus"]).is_err());
    }
}
