//! `ribbon db`: a RocksDB database directory read without RocksDB (the
//! `ribbon_sst::db` reader: MANIFEST, unflushed WAL, live SST files).

use crate::error::Error;
use crate::input::Keys;
use crate::output::{to_json, Stdout};
use clap::Subcommand;
use ribbon_sst::db::{Db, EntryKind};
use serde::Serialize;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

const QUERY_HELP: &str = "\
For each key, one line: the key, the memtable's answer (memtable:value, memtable:deleted or memtable:none: the \
unflushed writes of the WAL, which Get reads first), then the files whose filters may hold the key, in the order \
RocksDB's Get asks them (L0 newest first, then on each level the one file whose key range covers the key), \
as LEVEL:FILE; '-' when no filter may hold it. Get stops at the first of them that holds the key, so the list \
is the most files a Get of the key reads. --json also lists the files whose filters said no.";

/// `ribbon db ...`.
#[derive(Debug, Subcommand)]
pub enum DbCommand {
    /// Which files' filters may hold each key, in the order RocksDB's Get asks them
    #[command(after_help = format!("{QUERY_HELP}\n\n{}", crate::cli::KEYS_HELP))]
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
        /// Print one JSON document
        #[arg(long)]
        json: bool,
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
        } => query(&dir, &keys, hex, &column_family, json),
    }
}

/// One file a Get asks.
#[derive(Debug, Serialize)]
struct Step {
    level: u32,
    file: String,
    may_match: bool,
}

#[derive(Debug, Serialize)]
struct KeyReport {
    key: String,
    memtable: Option<&'static str>,
    files: Vec<Step>,
}

fn query(dir: &Path, keys: &Path, hex: bool, column_family: &str, json: bool) -> Result<(), Error> {
    let keys = Keys::read(keys, hex)?;
    let db = Db::open_column_family(dir, column_family)
        .map_err(|e| Error::failed(format!("{}: {e}", dir.display())))?;
    // Each key's path, then each file asked once for all its keys (one
    // filter in memory at a time).
    let files: Vec<_> = db.files().collect();
    let index: BTreeMap<&Path, usize> = files
        .iter()
        .enumerate()
        .map(|(i, f)| (f.path.as_path(), i))
        .collect();
    let mut paths: Vec<Vec<(usize, bool)>> = Vec::with_capacity(keys.len());
    let mut by_file: Vec<Vec<(usize, usize)>> = vec![Vec::new(); files.len()];
    for (k, key) in keys.iter().enumerate() {
        let path: Vec<(usize, bool)> = db
            .get_path(key)
            .iter()
            .map(|f| (index[f.path.as_path()], true))
            .collect();
        for (step, &(f, _)) in path.iter().enumerate() {
            by_file[f].push((k, step));
        }
        paths.push(path);
    }
    let key_list: Vec<&[u8]> = keys.iter().collect();
    for (f, asked) in by_file.iter().enumerate() {
        if asked.is_empty() {
            continue;
        }
        let sst = ribbon_sst::SstFile::open(&files[f].path)
            .map_err(|e| Error::failed(format!("{}: {e}", files[f].path.display())))?;
        let batch: Vec<&[u8]> = asked.iter().map(|&(k, _)| key_list[k]).collect();
        for (&(k, step), may) in asked.iter().zip(sst.key_may_match_many(&batch)) {
            paths[k][step].1 = may;
        }
    }
    let shown = |k: &[u8]| {
        if hex {
            k.iter().map(|b| format!("{b:02x}")).collect()
        } else {
            String::from_utf8_lossy(k).into_owned()
        }
    };
    let memtable = |k: &[u8]| match db.memtable().get(k) {
        Some((_, EntryKind::Value)) => Some("value"),
        Some((_, EntryKind::Deletion)) => Some("deleted"),
        None => None,
    };
    let mut out = Stdout::new();
    if json {
        let doc: Vec<KeyReport> = key_list
            .iter()
            .zip(&paths)
            .map(|(k, path)| KeyReport {
                key: shown(k),
                memtable: memtable(k),
                files: path
                    .iter()
                    .map(|&(f, may_match)| Step {
                        level: files[f].level,
                        file: files[f].name(),
                        may_match,
                    })
                    .collect(),
            })
            .collect();
        out.line(&to_json(&doc)?)?;
        return out.finish();
    }
    for (k, path) in key_list.iter().zip(&paths) {
        let may: Vec<String> = path
            .iter()
            .filter(|s| s.1)
            .map(|&(f, _)| format!("L{}:{}", files[f].level, files[f].name()))
            .collect();
        let files_text = if may.is_empty() {
            "-".to_string()
        } else {
            may.join(" ")
        };
        out.line(&format!(
            "{}\tmemtable:{}\t{files_text}",
            shown(k),
            memtable(k).unwrap_or("none")
        ))?;
    }
    out.finish()
}
