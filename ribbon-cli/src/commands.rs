//! The subcommands.

use crate::args::Args;
use crate::keys::read_keys;
use crate::Error;
use ribbon::builder::FilterBuilder;
use ribbon::format::FilterReader;
use ribbon::policy::{BuildContext, FilterPolicy};
use std::io::Write;

/// Runs the command line (without the program name).
pub fn run(argv: &[String]) -> Result<(), Error> {
    let (cmd, rest) = argv
        .split_first()
        .ok_or_else(|| Error::Usage("missing subcommand".into()))?;
    match cmd.as_str() {
        "build" if crate::standalone::is_standalone_build(rest) => crate::standalone::build(rest),
        "query" | "info"
            if crate::standalone::filter_path(rest).is_some_and(crate::standalone::is_standalone_file) =>
        {
            if cmd == "query" {
                crate::standalone::query(rest)
            } else {
                crate::standalone::info(rest)
            }
        }
        "build" => build(rest),
        "query" => query(rest),
        "info" => info(rest),
        "sst" => crate::sst::run(rest),
        "-h" | "--help" | "help" => Err(Error::Usage("help".into())),
        other => Err(Error::Usage(format!("unknown subcommand {other:?}"))),
    }
}

fn build(argv: &[String]) -> Result<(), Error> {
    let args = Args::parse(
        argv,
        &["--policy", "--format-version", "--level", "--keys", "--out"],
        &["--hex", "--flush"],
    )?;
    let policy: FilterPolicy = args
        .required("--policy")?
        .parse()
        .map_err(|e| Error::Usage(format!("{e}")))?;
    let format_version = args.int_or("--format-version", 7)?;
    if !(0..=7).contains(&format_version) {
        return Err(Error::Usage(format!(
            "--format-version must be 0 to 7 (RocksDB 11.8 writes 2 to 7), got {format_version}"
        )));
    }
    let level = args.int_or("--level", -1)?;
    if args.flag("--flush") && args.optional("--level").is_some() {
        return Err(Error::Usage("--flush and --level exclude each other".into()));
    }
    let ctx = if args.flag("--flush") {
        BuildContext::at_level(format_version, None)
    } else if level < 0 {
        BuildContext::sst_file_writer(format_version)
    } else {
        BuildContext::at_level(format_version, Some(level))
    };
    let keys = read_keys(args.required("--keys")?, args.flag("--hex"))?;
    let out = args.required("--out")?;
    let filter = match FilterBuilder::new(&policy, &ctx) {
        Some(mut b) => {
            for k in &keys {
                b.add_key(k);
            }
            b.finish()
        }
        None => {
            return Err(Error::Failed(format!(
                "policy {} builds no filter (bits per key below 0.5)",
                policy.id()
            )))
        }
    };
    std::fs::write(out, &filter).map_err(|e| Error::Failed(format!("cannot write {out}: {e}")))?;
    Ok(())
}

fn query(argv: &[String]) -> Result<(), Error> {
    let args = Args::parse(argv, &["--filter", "--keys"], &["--hex", "--batch"])?;
    let path = args.required("--filter")?;
    let filter = std::fs::read(path).map_err(|e| Error::Failed(format!("cannot read {path}: {e}")))?;
    let keys = read_keys(args.required("--keys")?, args.flag("--hex"))?;
    let reader = FilterReader::new(&filter);
    let answers: Vec<bool> = if args.flag("--batch") {
        let refs: Vec<&[u8]> = keys.iter().map(Vec::as_slice).collect();
        reader.may_match_batch(&refs)
    } else {
        keys.iter().map(|k| reader.may_match(k)).collect()
    };
    write_answers(answers)
}

/// Prints one line per answer, in order: `1` for may-match, `0` for
/// definitely not (the output of every `query`).
pub fn write_answers(answers: impl IntoIterator<Item = bool>) -> Result<(), Error> {
    let mut out = std::io::BufWriter::new(std::io::stdout().lock());
    for a in answers {
        out.write_all(if a { b"1\n" } else { b"0\n" })
            .map_err(|e| Error::Failed(format!("cannot write output: {e}")))?;
    }
    out.flush()
        .map_err(|e| Error::Failed(format!("cannot write output: {e}")))
}

fn info(argv: &[String]) -> Result<(), Error> {
    let args = Args::parse(argv, &["--filter"], &[])?;
    let path = args.required("--filter")?;
    let filter = std::fs::read(path).map_err(|e| Error::Failed(format!("cannot read {path}: {e}")))?;
    println!("{}", FilterReader::new(&filter).describe());
    Ok(())
}
