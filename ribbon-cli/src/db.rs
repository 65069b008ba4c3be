//! `ribbon db`: a RocksDB database directory read without RocksDB (the
//! `ribbon_sst::db` reader: MANIFEST, OPTIONS, unflushed WAL, live SST
//! files).

use crate::error::Error;
use crate::error::{read_error, shown};
use crate::escape::escape_bytes;
use crate::input::{self, decode_hex, Input};
use crate::output::Stdout;
use clap::{Args, Subcommand};
use ribbon_sst::db::{Db, Detail, FileLabels, GetPath, OpenOptions};
use std::fmt::Write as _;
use std::io::BufRead;
use std::path::{Path, PathBuf};

const KEYS_HELP: &str = "\
A keys file has one key per line (text mode: a line's bytes, without a trailing carriage return; \
--hex: each line is the key in hex). '-' reads standard input.";

const QUERY_HELP: &str = "\
For each key, one line: the key, the memtable's answer (memtable:value, memtable:deleted, memtable:merge, \
memtable:range-deleted or memtable:none: the unflushed writes of the WAL, which Get reads first), then the files \
whose filters may hold the key, as LEVEL:FILE, in the order RocksDB's Get asks them ('-' when none). The files \
are those of RocksDB's FilePicker (every L0 file when L0 is the only non-empty level and holds 3 files or fewer, \
else the files whose key range holds the key: L0 newest first, then one file per level), up to where Get stops: \
a value or deletion in the memtable or in a file, or a range deletion over the key (merge operands go on). \
--json prints one JSON object per line (JSON Lines) per key: {\"key\", \"memtable\", \"found\", \"files\": \
[{\"level\", \"file\", \"may_match\", \"answer\" (filtered, absent, value, deleted or merge), \
\"range_deleted\"}]}, listing every file asked, those whose filters said no included. (The text output lists the same files, but \
does not read the data of a file after which no file can be asked, so it is faster.) The keys file is read in chunks of \
65,536 keys and output is written as it is computed: memory does not grow with the number of keys. A malformed \
key line (--hex) ends the run with an error naming the line, after the keys before it were answered.";

/// Where the database's files are, when not all in its directory.
#[derive(Debug, Clone, Args)]
pub struct DbLocation {
    /// The WAL directory (default: the OPTIONS file's wal_dir, else DIR)
    #[arg(long, value_name = "DIR")]
    pub wal_dir: Option<PathBuf>,
    /// The db_paths (or the column family's cf_paths), in order; repeat for each
    /// (RocksDB does not record them; default: DIR alone)
    #[arg(long = "db-path", value_name = "DIR")]
    pub db_paths: Vec<PathBuf>,
}

impl DbLocation {
    /// The reader's options.
    pub fn open_options(&self) -> OpenOptions {
        OpenOptions {
            wal_dir: self.wal_dir.clone(),
            db_paths: self.db_paths.clone(),
        }
    }
}

/// `ribbon db ...`.
#[derive(Debug, Subcommand)]
pub enum DbCommand {
    /// Which files' filters may hold each key, in the order RocksDB's Get asks them
    #[command(after_help = format!("{QUERY_HELP}\n\n{KEYS_HELP}"))]
    Query {
        /// The database directory
        #[arg(value_name = "DIR")]
        dir: PathBuf,
        /// The keys (user keys), one per line ('-': standard input)
        #[arg(long, value_name = "FILE")]
        keys: PathBuf,
        /// Keys are hex, one per line (and are printed in hex)
        #[arg(long)]
        hex: bool,
        /// The column family
        #[arg(long, value_name = "NAME", default_value = "default")]
        column_family: String,
        /// Print one JSON object per key (JSON Lines)
        #[arg(long)]
        json: bool,
        #[command(flatten)]
        location: DbLocation,
    },
}

/// Runs one `ribbon db` subcommand.
pub fn run(cmd: DbCommand) -> Result<(), Error> {
    match cmd {
        DbCommand::Query {
            dir,
            keys,
            hex,
            column_family,
            json,
            location,
        } => query(&dir, &keys, hex, &column_family, json, &location),
    }
}

/// Opens the database in `dir` (one-line errors naming it).
pub fn open(dir: &Path, column_family: &str, location: &DbLocation) -> Result<Db, Error> {
    Db::open_with(dir, column_family, &location.open_options())
        .map_err(|e| Error::failed(format!("{}: {e}", dir.display())))
}

/// Says on standard error where WAL replay stopped early, and under which
/// `wal_recovery_mode` (nothing when every WAL was replayed whole).
pub fn recovery_note(db: &Db) {
    let r = db.recovery();
    if let Some((wal, why)) = &r.stopped_at {
        crate::output::note(&format!(
            "WAL {wal:06}.log: {why}: replay stopped there ({}, RocksDB's default); {} later WAL(s) not replayed",
            r.mode.name(),
            r.skipped_wals.len()
        ));
    }
}

fn query(
    dir: &Path,
    keys: &Path,
    hex: bool,
    column_family: &str,
    json: bool,
    location: &DbLocation,
) -> Result<(), Error> {
    let db = open(dir, column_family, location)?;
    recovery_note(&db);
    let mut keys = KeyChunks::open(keys, hex)?;
    let labels = FileLabels::of(&db);
    let mut out = Stdout::new();
    let mut cache = ribbon_sst::db::get::FileCache::new();
    // The text lists the files whose filters may hold each key: the data of
    // a file after which no file can be asked is not needed. JSON says
    // what each file holds and whether the key is found: read everything.
    let detail = if json { Detail::Full } else { Detail::Filters };
    let mut line = String::new();
    let mut shown = String::new();
    while let Some(chunk) = keys.next_chunk()? {
        let paths = db
            .get_paths_with(&chunk, &mut cache, detail)
            .map_err(|e| Error::failed(format!("{}: {e}", dir.display())))?;
        for (k, path) in chunk.iter().zip(&paths) {
            shown.clear();
            if hex {
                for b in *k {
                    let _ = write!(shown, "{b:02x}");
                }
            } else if json {
                // serde escapes it.
                shown.push_str(&String::from_utf8_lossy(k));
            } else {
                // A tab or newline in a key must not shift the columns.
                shown.push_str(&escape_bytes(k));
            }
            line.clear();
            write_key(&mut line, &shown, path, &labels, json)?;
            out.line(&line)?;
        }
    }
    out.finish()
}

/// Keys per batch of `get_paths` (about 10 MB of paths; 8,192 gave 10%
/// more CPU time on the 5 M-key bench database, for 13 MB less peak RSS).
const CHUNK: usize = 1 << 16;

/// A keys file read a chunk of [`CHUNK`] keys at a time (memory
/// independent of the number of keys), split as `Keys::parse` splits a
/// whole file: `\n`-separated lines, a final newline starts no key, text
/// keys lose a trailing `\r`, `--hex` lines are trimmed and decoded.
struct KeyChunks {
    input: std::io::BufReader<Input>,
    path: PathBuf,
    hex: bool,
    /// Lines read so far (for errors).
    line_no: usize,
    line: Vec<u8>,
    bytes: Vec<u8>,
    ends: Vec<usize>,
}

impl KeyChunks {
    fn open(path: &Path, hex: bool) -> Result<Self, Error> {
        Ok(Self {
            input: std::io::BufReader::with_capacity(1 << 16, input::open(path)?),
            path: path.to_path_buf(),
            hex,
            line_no: 0,
            line: Vec::new(),
            bytes: Vec::new(),
            ends: Vec::new(),
        })
    }

    /// The next keys, at most [`CHUNK`]; `None` at the end of the file.
    fn next_chunk(&mut self) -> Result<Option<Vec<&[u8]>>, Error> {
        self.bytes.clear();
        self.ends.clear();
        while self.ends.len() < CHUNK {
            self.line.clear();
            let n = self
                .input
                .read_until(b'\n', &mut self.line)
                .map_err(|e| read_error(&self.path, e))?;
            if n == 0 {
                break;
            }
            self.line_no += 1;
            let line = self.line.strip_suffix(b"\n").unwrap_or(&self.line);
            if self.hex {
                decode_hex(line.trim_ascii(), &mut self.bytes).map_err(|e| {
                    Error::failed(format!(
                        "{}:{}: invalid hex: {e}",
                        shown(&self.path),
                        self.line_no
                    ))
                })?;
            } else {
                self.bytes
                    .extend_from_slice(line.strip_suffix(b"\r").unwrap_or(line));
            }
            self.ends.push(self.bytes.len());
        }
        if self.ends.is_empty() {
            return Ok(None);
        }
        let mut start = 0;
        Ok(Some(
            self.ends
                .iter()
                .map(|&end| {
                    let k = &self.bytes[start..end];
                    start = end;
                    k
                })
                .collect(),
        ))
    }
}

fn write_key(
    line: &mut String,
    key: &str,
    path: &GetPath,
    labels: &FileLabels,
    json: bool,
) -> Result<(), Error> {
    if json {
        let report = path.report(Some(key), labels);
        *line = serde_json::to_string(&report).map_err(|e| Error::failed(format!("JSON: {e}")))?;
        return Ok(());
    }
    let _ = write!(line, "{key}\tmemtable:{}\t", path.memtable.name());
    let mut any = false;
    for s in path.steps.iter().filter(|s| s.may_match) {
        if any {
            line.push(' ');
        }
        line.push('L');
        let _ = write!(line, "{}", labels.levels[s.file]);
        line.push(':');
        line.push_str(&labels.names[s.file]);
        any = true;
    }
    if !any {
        line.push('-');
    }
    Ok(())
}
