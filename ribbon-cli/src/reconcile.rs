//! `ribbon reconcile`: which keys differ between two key sets, from
//! invertible Bloom filter sketches (`ribbon-reconcile`) whose size depends
//! on the difference, not on the data.
//!
//! A source is a keys file, an SST file (the user keys whose newest entry in
//! the file is not a deletion) or a database directory (its live keys,
//! read by the pure-Rust reader of `ribbon-sst`: MANIFEST, unflushed WAL
//! replayed, levels merged newest first so deleted keys are absent).

use crate::error::Error;
use crate::input::Keys;
use crate::output::{note, write_file, Stdout};
use clap::{Args, Subcommand, ValueEnum};
use ribbon_reconcile::{recommended_cells, DecodeError, DiffError, Sketch, SketchParams};
use std::path::{Path, PathBuf};

const PROTOCOL_HELP: &str = "\
Two-step protocol for a difference of unknown size: 1. each side runs `ribbon reconcile sketch SOURCE --cells 0 \
--out X.sketch` (an estimator only, about 96 KB) and they exchange them; `ribbon reconcile estimate A.sketch \
B.sketch` prints the estimated difference and the cells to use. 2. each side sketches again with `--cells N` and \
they exchange those; `ribbon reconcile diff A.sketch B.sketch` lists the keys. Both sides must use the same \
--cells, --chunk-bytes and --seed.";

/// `sketch --max-memory`'s default, 1 GiB.
const DEFAULT_MAX_MEMORY: u64 = 1 << 30;

/// `ribbon reconcile ...`.
#[derive(Debug, Subcommand)]
pub enum ReconcileCommand {
    /// Sketch a key set: a keys file, an SST file's keys, or a database directory's live keys
    #[command(after_help = PROTOCOL_HELP)]
    Sketch(SketchArgs),
    /// Print the keys only in A (`< KEY`) and only in B (`> KEY`), from two sketches
    #[command(after_help = PROTOCOL_HELP)]
    Diff {
        /// Sketch of set A
        #[arg(value_name = "A")]
        a: PathBuf,
        /// Sketch of set B
        #[arg(value_name = "B")]
        b: PathBuf,
        /// Print keys in hex (otherwise as text; a key that is not printable text is an error)
        #[arg(long)]
        hex: bool,
    },
    /// Estimate the size of the difference from two sketches, and the --cells to sketch it with
    #[command(after_help = PROTOCOL_HELP)]
    Estimate {
        /// Sketch of set A
        #[arg(value_name = "A")]
        a: PathBuf,
        /// Sketch of set B
        #[arg(value_name = "B")]
        b: PathBuf,
    },
}

/// What a sketch source is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum SourceKind {
    /// A directory is a database, a *.sst or *.ldb file an SST file, anything else a keys file
    Auto,
    /// A keys file, one key per line
    Keys,
    /// An SST file
    Sst,
    /// A RocksDB database directory
    Db,
}

/// `ribbon reconcile sketch`.
#[derive(Debug, Args)]
pub struct SketchArgs {
    /// The key set: a keys file ('-': standard input), an SST file, or a database directory
    #[arg(value_name = "SOURCE")]
    pub source: PathBuf,
    /// Where to write the sketch
    #[arg(long, value_name = "FILE")]
    pub out: PathBuf,
    /// IBF cells: about 1.5 per differing key (0: an estimator-only sketch, step 1 of the protocol)
    #[arg(long, value_name = "N", default_value_t = 1536,
          value_parser = clap::value_parser!(u64).range(0..=(ribbon_reconcile::ibf::MAX_CELLS as u64)))]
    pub cells: u64,
    /// Key bytes per IBF element: longer keys take several (each cell costs 28 + this many bytes)
    #[arg(long, value_name = "BYTES", default_value_t = 32,
          value_parser = clap::value_parser!(u64).range(1..=(ribbon_reconcile::ibf::MAX_CHUNK_BYTES as u64)))]
    pub chunk_bytes: u64,
    /// Most memory the sketch may take, e.g. 4G (a sketch takes cells x (32 + BYTES rounded up to 8) bytes; refused above it)
    #[arg(long, value_name = "SIZE", default_value = "1G", value_parser = crate::big::memory::parse_size)]
    pub max_memory: u64,
    /// Key hash seed (both sides must use the same; a secret one keeps crafted keys from colliding)
    #[arg(long, value_name = "N", default_value_t = 0)]
    pub seed: u64,
    /// What SOURCE is
    #[arg(long, value_enum, default_value_t = SourceKind::Auto)]
    pub kind: SourceKind,
    /// Keys file lines are hex
    #[arg(long)]
    pub hex: bool,
    /// The column family of a database
    #[arg(long, value_name = "NAME", default_value = "default")]
    pub column_family: String,
    /// Where a database's WALs and db_paths are, when not in SOURCE
    #[command(flatten)]
    pub location: crate::db::DbLocation,
}

/// Runs one `ribbon reconcile` subcommand.
pub fn run(cmd: ReconcileCommand) -> Result<(), Error> {
    match cmd {
        ReconcileCommand::Sketch(args) => sketch(&args),
        ReconcileCommand::Diff { a, b, hex } => diff(&a, &b, hex),
        ReconcileCommand::Estimate { a, b } => estimate(&a, &b),
    }
}

fn kind_of(source: &Path, kind: SourceKind) -> SourceKind {
    match kind {
        SourceKind::Auto if source.is_dir() => SourceKind::Db,
        SourceKind::Auto if source.extension().is_some_and(|e| e == "sst" || e == "ldb") => SourceKind::Sst,
        SourceKind::Auto => SourceKind::Keys,
        k => k,
    }
}

/// Adds every key of `source` to `sketch`; returns a one-line description.
pub fn sketch_source(args: &SketchArgs, sketch: &mut Sketch) -> Result<String, Error> {
    let source = &args.source;
    let shown = source.display();
    match kind_of(source, args.kind) {
        SourceKind::Db => {
            let db =
                ribbon_sst::db::Db::open_with(source, &args.column_family, &args.location.open_options())
                    .map_err(|e| Error::failed(format!("{shown}: {e}")))?;
            let (live, deleted) = db
                .for_each_live_key(|k| sketch.insert(k))
                .map_err(|e| Error::failed(format!("{shown}: {e}")))?;
            let wal = db.memtable();
            Ok(format!(
                "{live} live keys ({deleted} deleted keys skipped; {} SST files, {} unflushed writes replayed from {} WAL files)",
                db.files().count(),
                wal.writes,
                wal.wal_files.len()
            ))
        }
        SourceKind::Sst => {
            let sst = ribbon_sst::SstFile::open(source).map_err(|e| match e {
                ribbon_sst::Error::Io { .. } => Error::failed(e.to_string()),
                e => Error::failed(format!("{shown}: {e}")),
            })?;
            let n = ribbon_sst::db::for_each_file_key(&sst, |k| sketch.insert(k))
                .map_err(|e| Error::failed(format!("{shown}: {e}")))?;
            Ok(format!("{n} keys"))
        }
        _ => {
            let keys = Keys::read(source, args.hex)?;
            let mut sorted: Vec<&[u8]> = keys.iter().collect();
            sorted.sort_unstable();
            sorted.dedup();
            let repeated = keys.len() - sorted.len();
            sorted.iter().for_each(|k| sketch.insert(k));
            Ok(format!(
                "{} keys ({repeated} repeated lines ignored)",
                sorted.len()
            ))
        }
    }
}

fn sketch(args: &SketchArgs) -> Result<(), Error> {
    let params = SketchParams {
        seed: args.seed,
        cells: args.cells as usize,
        chunk_bytes: args.chunk_bytes as usize,
        ..SketchParams::default()
    };
    let need = params.memory_bytes();
    if need > args.max_memory {
        return Err(Error::failed(format!(
            "a sketch of {} cells of {} bytes takes {} MiB, over --max-memory {} MiB: \
             raise --max-memory (both sides need that much) or use fewer --cells",
            args.cells,
            args.chunk_bytes,
            need.div_ceil(1 << 20),
            args.max_memory >> 20
        )));
    }
    let mut s = Sketch::try_new(params).map_err(|e| Error::failed(e.to_string()))?;
    let what = sketch_source(args, &mut s)?;
    let bytes = s.to_bytes();
    write_file(&args.out, &bytes)?;
    note(&format!(
        "{}: {what}; sketch of {} cells, {} bytes",
        args.out.display(),
        s.params().cells,
        bytes.len()
    ));
    Ok(())
}

fn read_sketch(path: &Path) -> Result<Sketch, Error> {
    let data = crate::input::read_all(path)?;
    Sketch::from_bytes(&data).map_err(|e| Error::failed(format!("{}: {e}", path.display())))
}

fn diff(a: &Path, b: &Path, hex: bool) -> Result<(), Error> {
    crate::input::at_most_one_stdin_for(&[a, b], "reconcile diff")?;
    let (sa, sb) = (read_sketch(a)?, read_sketch(b)?);
    let d = sa.diff(&sb).map_err(|e| {
        // The library's message names the cells; the flag that sets them is ours.
        let flag = match &e {
            DiffError::NoIbf {
                recommended_cells, ..
            } => format!(" (--cells {recommended_cells})"),
            DiffError::TooLarge {
                error: DecodeError::Incomplete { .. },
                recommended_cells,
                ..
            } => format!(" (--cells {recommended_cells})"),
            _ => String::new(),
        };
        Error::failed(format!("{e}{flag}"))
    })?;
    let mut out = Stdout::new();
    for (mark, keys) in [("<", &d.only_in_a), (">", &d.only_in_b)] {
        for k in keys {
            let text = if hex {
                k.iter().map(|b| format!("{b:02x}")).collect()
            } else {
                printable(k).ok_or_else(|| {
                    Error::failed("a differing key is not printable text (not UTF-8, or has control characters); use --hex")
                })?
            };
            out.line(&format!("{mark} {text}"))?;
        }
    }
    out.finish()?;
    note(&format!(
        "{} keys only in A, {} only in B",
        d.only_in_a.len(),
        d.only_in_b.len()
    ));
    Ok(())
}

/// `key` as text, when it is UTF-8 without control characters.
fn printable(key: &[u8]) -> Option<String> {
    let s = std::str::from_utf8(key).ok()?;
    (!s.chars().any(char::is_control)).then(|| s.to_string())
}

fn estimate(a: &Path, b: &Path) -> Result<(), Error> {
    crate::input::at_most_one_stdin_for(&[a, b], "reconcile estimate")?;
    let (sa, sb) = (read_sketch(a)?, read_sketch(b)?);
    let e = sa
        .estimate_difference(&sb)
        .map_err(|e| Error::failed(e.to_string()))?;
    let mut out = Stdout::new();
    out.line(&format!("estimated difference: {e} keys"))?;
    let cells = recommended_cells(e);
    out.line(&format!("sketch both sides with: --cells {cells}"))?;
    let need = SketchParams {
        cells,
        chunk_bytes: sa.params().chunk_bytes,
        ..SketchParams::default()
    }
    .memory_bytes();
    if need > DEFAULT_MAX_MEMORY {
        out.line(&format!(
            "(such a sketch takes {} MiB on each side, over the default --max-memory of {} MiB: pass --max-memory {}M if the estimate is to be trusted)",
            need.div_ceil(1 << 20),
            DEFAULT_MAX_MEMORY >> 20,
            need.div_ceil(1 << 20)
        ))?;
    }
    out.finish()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn printable_refuses_what_would_break_lines() {
        assert_eq!(printable(b"abc").as_deref(), Some("abc"));
        assert_eq!(printable(b"a\nb"), None);
        assert_eq!(printable(b"\xff"), None);
    }
}
