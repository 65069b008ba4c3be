//! `ribbon sst`: the filters of existing SST files, read with the pure-Rust
//! `ribbon-sst` crate.
//!
//! ```text
//! ribbon sst info FILE.sst|DIR... [--json]
//! ribbon sst query FILE.sst --keys FILE [--hex] [--prefix]
//! ribbon sst dump-filter FILE.sst --out FILTER
//! ribbon sst verify FILE.sst|DIR...
//! ```

use crate::args::Args;
use crate::keys::read_keys;
use crate::Error;
use ribbon_sst::info::json_string;
use ribbon_sst::{Filter, SstFile, TableInfo};
use std::io::{IsTerminal, Write};
use std::path::{Path, PathBuf};

const SST_USAGE: &str = "sst subcommands: \
info FILE.sst|DIR... [--json] | \
query FILE.sst --keys FILE [--hex] [--prefix] | \
dump-filter FILE.sst --out FILTER | \
verify FILE.sst|DIR...";

/// Runs `ribbon sst ...` (`argv` without `sst`).
pub fn run(argv: &[String]) -> Result<(), Error> {
    let (cmd, rest) = argv
        .split_first()
        .ok_or_else(|| Error::Usage(format!("sst: missing subcommand ({SST_USAGE})")))?;
    match cmd.as_str() {
        "info" => info(rest),
        "query" => query(rest),
        "dump-filter" => dump_filter(rest),
        "verify" => verify(rest),
        "-h" | "--help" | "help" => Err(Error::Usage(SST_USAGE.into())),
        other => Err(Error::Usage(format!(
            "sst: unknown subcommand {other:?} ({SST_USAGE})"
        ))),
    }
}

/// Splits `argv` into positional arguments and `--option VALUE` / `--flag`
/// arguments (parsed by [`Args`]).
fn split_args(
    argv: &[String],
    options: &[&'static str],
    flags: &[&'static str],
) -> Result<(Vec<String>, Args), Error> {
    let mut positional = Vec::new();
    let mut named = Vec::new();
    let mut it = argv.iter();
    while let Some(a) = it.next() {
        if options.contains(&a.as_str()) {
            named.push(a.clone());
            if let Some(v) = it.next() {
                named.push(v.clone());
            }
        } else if a.starts_with("--") {
            named.push(a.clone());
        } else {
            positional.push(a.clone());
        }
    }
    Ok((positional, Args::parse(&named, options, flags)?))
}

fn one_file(positional: &[String], what: &str) -> Result<String, Error> {
    match positional {
        [f] => Ok(f.clone()),
        [] => Err(Error::Usage(format!("sst {what}: missing FILE.sst"))),
        _ => Err(Error::Usage(format!("sst {what}: takes one FILE.sst"))),
    }
}

fn open(path: &str) -> Result<SstFile, Error> {
    SstFile::open(path).map_err(|e| match e {
        ribbon_sst::Error::Io { .. } => Error::Failed(e.to_string()),
        e => Error::Failed(format!("{path}: {e}")),
    })
}

/// The files named: each file as given, each directory's `*.sst` files
/// (sorted; not recursive).
fn expand(paths: &[String]) -> Result<Vec<PathBuf>, Error> {
    let mut out = Vec::new();
    for p in paths {
        let path = Path::new(p);
        if path.is_dir() {
            let entries =
                std::fs::read_dir(path).map_err(|e| Error::Failed(format!("cannot read {p}: {e}")))?;
            let mut ssts: Vec<PathBuf> = entries
                .filter_map(|e| e.ok().map(|e| e.path()))
                .filter(|f| f.is_file() && f.extension().is_some_and(|x| x == "sst"))
                .collect();
            if ssts.is_empty() {
                return Err(Error::Failed(format!("{p}: no .sst files in this directory")));
            }
            ssts.sort();
            out.extend(ssts);
        } else {
            out.push(path.to_path_buf());
        }
    }
    Ok(out)
}

/// "[i/n] name" on stderr while working through many files, only when
/// stderr is a terminal.
struct Progress {
    total: usize,
    on: bool,
}

impl Progress {
    fn new(total: usize) -> Self {
        Self {
            total,
            on: total > 1 && std::io::stderr().is_terminal(),
        }
    }

    fn step(&self, i: usize, path: &Path) {
        if self.on {
            let name = path
                .file_name()
                .map_or_else(|| path.display().to_string(), |n| n.to_string_lossy().into());
            eprint!("\r\x1b[K[{}/{}] {name}", i + 1, self.total);
            let _ = std::io::stderr().flush();
        }
    }

    fn done(&self) {
        if self.on {
            eprint!("\r\x1b[K");
            let _ = std::io::stderr().flush();
        }
    }
}

fn write_out(out: &mut impl Write, text: &str) -> Result<(), Error> {
    out.write_all(text.as_bytes())
        .map_err(|e| Error::Failed(format!("cannot write output: {e}")))
}

fn info(argv: &[String]) -> Result<(), Error> {
    let (positional, args) = split_args(argv, &[], &["--json"])?;
    if positional.is_empty() {
        return Err(Error::Usage("sst info: missing FILE.sst or DIR".into()));
    }
    let single = positional.len() == 1 && !Path::new(&positional[0]).is_dir();
    let files = expand(&positional)?;
    let json = args.flag("--json");
    let progress = Progress::new(files.len());
    let mut out = std::io::BufWriter::new(std::io::stdout().lock());
    let mut rows = Vec::new();
    let mut failed = 0usize;
    for (i, path) in files.iter().enumerate() {
        progress.step(i, path);
        let name = path.display().to_string();
        let result = SstFile::open(path).map(|s| TableInfo::new(&s));
        if result.is_err() {
            failed += 1;
        }
        if json {
            let line = match &result {
                Ok(info) => format!("{{\"file\":{},{}", json_string(&name), &info.to_json()[1..]),
                Err(e) => format!(
                    "{{\"file\":{},\"error\":{}}}",
                    json_string(&name),
                    json_string(&e.to_string())
                ),
            };
            progress.done();
            write_out(&mut out, &format!("{line}\n"))?;
        } else if single {
            progress.done();
            match &result {
                Ok(info) => write_out(&mut out, &format!("file: {name}\n{}", info.to_text()))?,
                Err(e) => return Err(Error::Failed(format!("{name}: {e}"))),
            }
        } else {
            rows.push((name, result));
        }
    }
    progress.done();
    if !json && !single {
        write_out(&mut out, &summary_table(&rows))?;
    }
    out.flush()
        .map_err(|e| Error::Failed(format!("cannot write output: {e}")))?;
    if failed > 0 {
        return Err(Error::Failed(format!(
            "{failed} of {} files could not be read",
            files.len()
        )));
    }
    Ok(())
}

type InfoRow = (String, Result<TableInfo, ribbon_sst::Error>);

/// One row per file, aligned columns, then a count per filter family.
fn summary_table(rows: &[InfoRow]) -> String {
    let header = [
        "FILE", "FV", "CHECKSUM", "LAYOUT", "FILTER", "PARTS", "ENTRIES", "BYTES", "BITS/KEY", "FP RATE",
    ];
    let mut table: Vec<Vec<String>> = vec![header.iter().map(|s| s.to_string()).collect()];
    let mut families: Vec<(String, usize)> = Vec::new();
    for (name, r) in rows {
        let short = Path::new(name)
            .file_name()
            .map_or_else(|| name.clone(), |n| n.to_string_lossy().into_owned());
        match r {
            Ok(i) => {
                let family = i.family().to_string();
                match families.iter_mut().find(|(f, _)| *f == family) {
                    Some((_, n)) => *n += 1,
                    None => families.push((family, 1)),
                }
                table.push(vec![
                    short,
                    i.format_version.to_string(),
                    i.checksum_type.trim_start_matches('k').to_string(),
                    i.filter_layout.to_string(),
                    i.filter_kind.clone(),
                    if i.filter_layout == "partitioned" {
                        i.partitions.to_string()
                    } else {
                        "-".into()
                    },
                    i.num_entries.map_or_else(|| "-".into(), |n| n.to_string()),
                    i.filter_bytes.to_string(),
                    i.bits_per_key.map_or_else(|| "-".into(), |b| format!("{b:.2}")),
                    i.expected_fp_rate
                        .map_or_else(|| "-".into(), |f| format!("{f:.5}")),
                ]);
            }
            Err(e) => table.push(vec![short, format!("error: {e}")]),
        }
    }
    let cols = header.len();
    let mut widths = vec![0usize; cols];
    for row in &table {
        if row.len() == cols {
            for (w, c) in widths.iter_mut().zip(row) {
                *w = (*w).max(c.chars().count());
            }
        }
    }
    let mut s = String::new();
    for row in &table {
        let line: Vec<String> = row
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
        s.push_str(line.join("  ").trim_end());
        s.push('\n');
    }
    let counts: Vec<String> = families.iter().map(|(f, n)| format!("{f}: {n}")).collect();
    s.push_str(&format!("{} files", rows.len()));
    if !counts.is_empty() {
        s.push_str(&format!(" ({})", counts.join(", ")));
    }
    s.push('\n');
    s
}

fn query(argv: &[String]) -> Result<(), Error> {
    let (positional, args) = split_args(argv, &["--keys"], &["--hex", "--prefix"])?;
    let path = one_file(&positional, "query")?;
    let keys = read_keys(args.required("--keys")?, args.flag("--hex"))?;
    let sst = open(&path)?;
    let answers: Vec<bool> = if args.flag("--prefix") {
        keys.iter()
            .map(|k| sst.prefix_may_match(k))
            .collect::<Result<_, _>>()
            .map_err(|e| Error::Failed(format!("{path}: {e}")))?
    } else {
        sst.keys_may_match(&keys)
    };
    crate::commands::write_answers(answers)
}

fn dump_filter(argv: &[String]) -> Result<(), Error> {
    let (positional, args) = split_args(argv, &["--out"], &[])?;
    let path = one_file(&positional, "dump-filter")?;
    let out = args.required("--out")?;
    let sst = open(&path)?;
    let write = |target: &str, bytes: &[u8]| {
        std::fs::write(target, bytes).map_err(|e| Error::Failed(format!("cannot write {target}: {e}")))
    };
    let mut stdout = std::io::stdout().lock();
    match sst.filter() {
        Filter::Full { contents, .. } => {
            write(out, contents)?;
            write_out(
                &mut stdout,
                &format!("{out}: {} bytes (full filter)\n", contents.len()),
            )?;
        }
        Filter::Partitioned { partitions, .. } => {
            for (i, p) in partitions.iter().enumerate() {
                let target = format!("{out}.{i}");
                write(&target, &p.contents)?;
                write_out(
                    &mut stdout,
                    &format!(
                        "{target}: {} bytes (partition {i} of {})\n",
                        p.contents.len(),
                        partitions.len()
                    ),
                )?;
            }
        }
        Filter::None => return Err(Error::Failed(format!("{path}: no filter block"))),
        Filter::Obsolete { .. } => {
            return Err(Error::Failed(format!(
                "{path}: only an obsolete block-based filter (RocksDB 11.8 ignores it); not dumped"
            )))
        }
        Filter::UnknownPolicy {
            compatibility_name, ..
        } => {
            return Err(Error::Failed(format!(
                "{path}: filter of an unknown policy family {compatibility_name:?}; not dumped"
            )))
        }
    }
    Ok(())
}

fn verify(argv: &[String]) -> Result<(), Error> {
    let (positional, _args) = split_args(argv, &[], &[])?;
    if positional.is_empty() {
        return Err(Error::Usage("sst verify: missing FILE.sst".into()));
    }
    let files = expand(&positional)?;
    let progress = Progress::new(files.len());
    let mut out = std::io::stdout().lock();
    let mut bad = Vec::new();
    for (i, path) in files.iter().enumerate() {
        progress.step(i, path);
        let name = path.display().to_string();
        let result = SstFile::open(path).and_then(|sst| {
            let blocks = sst.verify_checksums()?;
            Ok((sst.verify_filter()?, blocks, sst.filter().is_queryable()))
        });
        progress.done();
        match result {
            Ok((report, blocks, queryable)) if report.miss_count == 0 => {
                let what = if queryable {
                    format!(
                        "{} keys in {} data blocks pass the filter ({} whole-key, {} prefix checks)",
                        report.keys, report.data_blocks, report.whole_key_checks, report.prefix_checks
                    )
                } else {
                    format!(
                        "{} keys in {} data blocks; no filter to check",
                        report.keys, report.data_blocks
                    )
                };
                write_out(
                    &mut out,
                    &format!("{name}: ok: {what}; {blocks} block checksums verified\n"),
                )?;
            }
            Ok((report, _, _)) => {
                let mut msg = format!(
                    "{name}: FAILED: {} of {} filter checks say \"definitely not\" for a key in the file",
                    report.miss_count,
                    report.whole_key_checks + report.prefix_checks
                );
                for m in report.misses.iter().take(5) {
                    let hex: String = m.user_key.iter().map(|b| format!("{b:02x}")).collect();
                    msg.push_str(&format!(
                        "\n  {} check of key {hex} (data block at offset {})",
                        if m.prefix { "prefix" } else { "whole-key" },
                        m.data_block_offset
                    ));
                }
                write_out(&mut out, &format!("{msg}\n"))?;
                bad.push(name);
            }
            Err(e) => {
                write_out(&mut out, &format!("{name}: FAILED: {e}\n"))?;
                bad.push(name);
            }
        }
    }
    match bad.as_slice() {
        [] => Ok(()),
        [one] if files.len() == 1 => Err(Error::Failed(format!("{one}: verification failed"))),
        _ => Err(Error::Failed(format!(
            "{} of {} files failed verification",
            bad.len(),
            files.len()
        ))),
    }
}
