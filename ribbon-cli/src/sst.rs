//! `ribbon sst`: the filters of existing SST files, read with the pure-Rust
//! `ribbon-sst` crate.

use crate::cli::SstCommand;
use crate::error::{shown, Error};
use crate::input::Keys;
use crate::output::{note, to_json, write_answers_by_chunk, write_file, Stdout};
use crate::progress;
use crate::sst_report::{self, InfoJson, Verified, VerifyJson};
use ribbon_sst::{Filter, ReaderVersion, SstFile, TableInfo};
use std::path::{Path, PathBuf};

/// Runs one `ribbon sst` subcommand.
pub fn run(cmd: SstCommand) -> Result<(), Error> {
    match cmd {
        SstCommand::Info { paths, json } => info(&paths, json),
        SstCommand::Query {
            file,
            keys,
            hex,
            prefix,
            as_rocksdb,
            json,
        } => {
            let version = match as_rocksdb {
                Some(v) if v >= 7 => ReaderVersion::Current,
                _ => ReaderVersion::Writer,
            };
            query(&file, &keys, hex, prefix, version, json)
        }
        SstCommand::DumpFilter { file, out } => dump_filter(&file, &out),
        SstCommand::Verify { paths, json } => verify(&paths, json),
    }
}

fn open(path: &Path) -> Result<SstFile, Error> {
    SstFile::open(path).map_err(|e| match e {
        ribbon_sst::Error::Io { .. } => Error::failed(e.to_string()),
        e => Error::failed(format!("{}: {e}", path.display())),
    })
}

/// The files named: each file as given, each directory's `*.sst` entries
/// (sorted; not recursive), whatever their type: one that is not a
/// regular file (a FIFO, a directory, a dangling or looping link) is
/// listed too, and [`SstFile::open`] refuses it without opening it, so it
/// is reported as an error instead of being skipped.
fn expand(paths: &[PathBuf]) -> Result<Vec<PathBuf>, Error> {
    let mut out = Vec::new();
    for path in paths {
        if !path.is_dir() {
            out.push(path.clone());
            continue;
        }
        let entries = std::fs::read_dir(path)
            .map_err(|e| Error::failed(format!("cannot read {}: {e}", path.display())))?;
        let mut ssts: Vec<PathBuf> = entries
            .map(|e| e.map(|e| e.path()))
            .collect::<Result<Vec<_>, _>>()
            .map_err(|e| Error::failed(format!("cannot read {}: {e}", path.display())))?;
        ssts.retain(|f| f.extension().is_some_and(|x| x == "sst"));
        if ssts.is_empty() {
            return Err(Error::failed(format!(
                "{}: no .sst files in this directory",
                path.display()
            )));
        }
        ssts.sort();
        out.extend(ssts);
    }
    Ok(out)
}

/// Runs `work` on each file, on every core (rayon's pool: one file per
/// task, so memory stays within a file's bound times the number of cores),
/// with a progress bar (several files, a terminal); the results come back
/// in the files' order.
fn each_file<T: Send>(files: &[PathBuf], what: &str, work: impl Fn(&Path) -> T + Sync) -> Vec<T> {
    use rayon::prelude::*;
    let bar = progress::bar(files.len() as u64, 2, what);
    let results = files
        .par_iter()
        .map(|f| {
            let r = work(f);
            bar.inc(1);
            r
        })
        .collect();
    bar.finish_and_clear();
    results
}

fn info(paths: &[PathBuf], json: bool) -> Result<(), Error> {
    let single = paths.len() == 1 && !paths[0].is_dir();
    let files = expand(paths)?;
    let results = each_file(&files, "reading", |f| {
        SstFile::open(f).map(|s| TableInfo::new(&s))
    });
    let failed = results.iter().filter(|r| r.is_err()).count();
    let mut out = Stdout::new();
    if json {
        let doc: Vec<InfoJson> = files
            .iter()
            .zip(&results)
            .map(|(f, r)| InfoJson::new(f, r))
            .collect();
        out.line(&to_json(&doc)?)?;
    } else if single {
        match &results[0] {
            Ok(i) => out.bytes(sst_report::info_text(&files[0].display().to_string(), i).as_bytes())?,
            Err(e) => return Err(Error::failed(format!("{}: {e}", files[0].display()))),
        }
    } else {
        let placed = placements(paths, &files);
        let rows: Vec<(String, _)> = files
            .iter()
            .map(|f| f.display().to_string())
            .zip(results)
            .collect();
        out.bytes(sst_report::info_table(&rows, &placed).as_bytes())?;
    }
    out.finish()?;
    match failed {
        0 => Ok(()),
        _ if single => Err(Error::failed(format!(
            "{}: could not be read",
            files[0].display()
        ))),
        n => Err(Error::failed(format!(
            "{n} of {} files could not be read",
            files.len()
        ))),
    }
}

/// Where each file sits in the database of the directory it was found in
/// (files named one by one, and directories without a readable MANIFEST:
/// `None`).
fn placements(paths: &[PathBuf], files: &[PathBuf]) -> Vec<sst_report::Placement> {
    use std::collections::BTreeMap;
    let mut dbs: BTreeMap<PathBuf, BTreeMap<u64, (u32, String)>> = BTreeMap::new();
    for dir in paths.iter().filter(|p| p.is_dir()) {
        let Ok(v) = ribbon_sst::db::Version::read(dir) else {
            continue;
        };
        let live = v
            .column_families
            .values()
            .flat_map(|cf| {
                cf.files
                    .values()
                    .map(move |f| (f.number, (f.level, cf.name.clone())))
            })
            .collect();
        dbs.insert(dir.clone(), live);
    }
    files
        .iter()
        .map(|f| {
            let live = dbs.get(f.parent()?)?;
            let number = f.file_stem()?.to_str()?.parse::<u64>().ok();
            Some(number.and_then(|n| live.get(&n).cloned()))
        })
        .collect()
}

fn query(
    file: &Path,
    keys: &Path,
    hex: bool,
    prefix: bool,
    version: ReaderVersion,
    json: bool,
) -> Result<(), Error> {
    let keys = Keys::read(keys, hex)?;
    let sst = open(file)?;
    if json {
        return query_json(file, &keys, hex, prefix, version, &sst);
    }
    write_answers_by_chunk(&keys, |chunk| {
        if prefix {
            chunk
                .iter()
                .map(|k| sst.prefix_may_match(k))
                .collect::<Result<_, _>>()
                .map_err(|e| Error::failed(format!("{}: {e}", file.display())))
        } else {
            Ok(sst.key_may_match_many_as(chunk, version))
        }
    })
}

/// One key's answer (`sst query --json`, one object per line).
#[derive(serde::Serialize)]
struct Answer<'a> {
    key: &'a str,
    may_match: bool,
}

/// `sst query --json`: JSON Lines, written chunk by chunk.
fn query_json(
    file: &Path,
    keys: &Keys,
    hex: bool,
    prefix: bool,
    version: ReaderVersion,
    sst: &SstFile,
) -> Result<(), Error> {
    let mut out = Stdout::new();
    for chunk in keys.chunks() {
        let answers: Vec<bool> = if prefix {
            chunk
                .iter()
                .map(|k| sst.prefix_may_match(k))
                .collect::<Result<_, _>>()
                .map_err(|e| Error::failed(format!("{}: {e}", file.display())))?
        } else {
            sst.key_may_match_many_as(&chunk, version)
        };
        for (k, may_match) in chunk.iter().zip(answers) {
            let key = if hex {
                k.iter().map(|b| format!("{b:02x}")).collect()
            } else {
                String::from_utf8_lossy(k).into_owned()
            };
            let line = serde_json::to_string(&Answer { key: &key, may_match })
                .map_err(|e| Error::failed(format!("JSON: {e}")))?;
            out.line(&line)?;
        }
    }
    out.finish()
}

fn dump_filter(file: &Path, out: &Path) -> Result<(), Error> {
    let sst = open(file)?;
    let to_stdout = out == Path::new("-");
    // With the filter itself on standard output, say what was written on
    // standard error.
    let mut lines = Vec::new();
    match sst.filter() {
        Filter::Full { contents, .. } => {
            write_file(out, contents)?;
            lines.push(format!(
                "{}: {} bytes (full filter)",
                shown_out(out),
                contents.len()
            ));
        }
        Filter::Partitioned { .. } if to_stdout => {
            return Err(Error::usage(format!(
                "{}: a partitioned filter is written to one file per partition; give --out FILE",
                file.display()
            )))
        }
        Filter::Partitioned { partitions, .. } => {
            for (i, p) in partitions.iter().enumerate() {
                let mut target = out.as_os_str().to_owned();
                target.push(format!(".{i}"));
                let target = PathBuf::from(target);
                write_file(&target, &p.contents)?;
                lines.push(format!(
                    "{}: {} bytes (partition {i} of {})",
                    target.display(),
                    p.contents.len(),
                    partitions.len()
                ));
            }
        }
        Filter::None => return Err(Error::failed(format!("{}: no filter block", file.display()))),
        Filter::Obsolete { .. } => {
            return Err(Error::failed(format!(
                "{}: only a block-based filter of an unknown policy (RocksDB 7+ ignores it); not dumped",
                file.display()
            )))
        }
        Filter::BlockBased { .. } => {
            return Err(Error::failed(format!(
                "{}: a block-based filter (RocksDB before 7.0) holds one Bloom filter per data block range, \
                 which `ribbon query` does not read; query it with `ribbon sst query`",
                file.display()
            )))
        }
        Filter::UnknownPolicy {
            compatibility_name, ..
        } => {
            return Err(Error::failed(format!(
                "{}: filter of an unknown policy family {compatibility_name:?}; not dumped",
                file.display()
            )))
        }
    }
    if to_stdout {
        lines.iter().for_each(|l| note(l));
        return Ok(());
    }
    let mut stdout = Stdout::new();
    for l in &lines {
        stdout.line(l)?;
    }
    stdout.finish()
}

fn shown_out(out: &Path) -> String {
    if out == Path::new("-") {
        "standard output".into()
    } else {
        shown(out)
    }
}

fn verify(paths: &[PathBuf], json: bool) -> Result<(), Error> {
    let files = expand(paths)?;
    let results = each_file(&files, "verifying", |f| {
        SstFile::open(f).and_then(|sst| {
            let checksums = sst.verify_checksums()?;
            Ok(Verified {
                report: sst.verify_filter()?,
                checksums,
            })
        })
    });
    let mut out = Stdout::new();
    if json {
        let doc: Vec<VerifyJson> = files
            .iter()
            .zip(&results)
            .map(|(f, r)| VerifyJson::new(f, r))
            .collect();
        out.line(&to_json(&doc)?)?;
    } else {
        for (f, r) in files.iter().zip(&results) {
            out.bytes(sst_report::verify_text(&f.display().to_string(), r).as_bytes())?;
        }
    }
    out.finish()?;
    let bad: Vec<&PathBuf> = files
        .iter()
        .zip(&results)
        .filter(|(_, r)| !sst_report::passed(r))
        .map(|(f, _)| f)
        .collect();
    match bad.as_slice() {
        [] => Ok(()),
        [one] if files.len() == 1 => Err(Error::failed(format!("{}: verification failed", one.display()))),
        _ => Err(Error::failed(format!(
            "{} of {} files failed verification",
            bad.len(),
            files.len()
        ))),
    }
}
