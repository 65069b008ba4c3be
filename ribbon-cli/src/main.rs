//! `ribbon`: build, query and inspect RocksDB-format filters and the filters
//! inside SST files, without RocksDB. `ribbon --help` lists the commands.
//!
//! Every failure is one line on standard error: exit code 2 for a bad
//! command line (with a pointer to `--help`), 1 for anything else. Nothing
//! panics on bad input, on a non-UTF-8 argument or on a failed write.

mod big;
mod build;
mod cli;
mod conformance;
mod db;
mod doctor;
mod error;
mod escape;
mod filter_file;
mod input;
mod output;
mod progress;
mod reconcile;
mod sst;
mod sst_report;
mod standalone;
mod viz;

use clap::error::ErrorKind;
use clap::Parser;
use cli::{Cli, Command};
use error::Error;
use std::process::ExitCode;

fn main() -> ExitCode {
    let argv: Vec<std::ffi::OsString> = std::env::args_os().collect();
    let result = match Cli::try_parse_from(&argv) {
        Ok(cli) => run(cli),
        Err(e) => clap_outcome(&e, &argv),
    };
    match result {
        Ok(()) | Err(Error::ClosedPipe) => ExitCode::SUCCESS,
        Err(e) => {
            output::note(&e.to_string());
            ExitCode::from(e.exit_code())
        }
    }
}

fn run(cli: Cli) -> Result<(), Error> {
    match cli.command {
        Command::Build(args) if args.standalone.standalone => standalone::build(&args),
        Command::Build(args) => build::build(&args),
        Command::Query(args) => filter_file::query(&args),
        Command::Info(args) => filter_file::info(&args),
        Command::Sst(cmd) => sst::run(cmd),
        Command::Reconcile(cmd) => reconcile::run(cmd),
        Command::Db(cmd) => db::run(cmd),
        Command::Conformance(args) => conformance::run(&args),
        Command::Viz(args) => viz::run(&args),
        Command::Big(cmd) => big::run(cmd),
        Command::Doctor(args) => doctor::run(&args),
    }
}

/// What clap's verdict means for us: help and version go to standard output
/// (exit 0); anything else becomes a one-line usage error that points at the
/// `--help` of the subcommand that was typed.
fn clap_outcome(e: &clap::Error, argv: &[std::ffi::OsString]) -> Result<(), Error> {
    if matches!(e.kind(), ErrorKind::DisplayHelp | ErrorKind::DisplayVersion) {
        let mut out = output::Stdout::new();
        out.bytes(e.render().to_string().as_bytes())?;
        return out.finish();
    }
    let message = if e.kind() == ErrorKind::DisplayHelpOnMissingArgumentOrSubcommand {
        "missing subcommand".to_string()
    } else {
        error_message(&e.render().to_string())
    };
    Err(Error::usage(format!(
        "{message} (try '{} --help')",
        subcommand(argv)
    )))
}

/// clap's error text without its usage and tips, on one line: the
/// `error: ` line, joined with the indented lines that continue it
/// (`the following required arguments were not provided: --out <FILE>`).
fn error_message(rendered: &str) -> String {
    let mut lines = rendered.lines().skip_while(|l| l.trim().is_empty());
    let first = lines.next().unwrap_or("invalid command line").trim();
    let first = first.strip_prefix("error: ").unwrap_or(first);
    let rest: Vec<&str> = lines
        .take_while(|l| l.starts_with("  ") && !l.trim().is_empty())
        .map(str::trim)
        .collect();
    match rest.as_slice() {
        [] => first.to_string(),
        _ => format!("{first} {}", rest.join(", ")),
    }
}

/// The subcommand path typed, as far as it names subcommands:
/// `ribbon`, `ribbon build`, `ribbon sst info`.
/// Walks clap's own command tree, so every subcommand is known here.
fn subcommand(argv: &[std::ffi::OsString]) -> String {
    let root = <Cli as clap::CommandFactory>::command();
    let mut path = vec![root.get_name().to_string()];
    let mut cmd = &root;
    let words = argv
        .iter()
        .skip(1)
        .filter_map(|a| a.to_str())
        .filter(|a| !a.starts_with('-'));
    for word in words {
        match cmd.find_subcommand(word) {
            Some(sub) if sub.get_name() != "help" => {
                path.push(sub.get_name().to_string());
                cmd = sub;
            }
            _ => break,
        }
    }
    path.join(" ")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn usage_error(args: &[&str]) -> String {
        let argv: Vec<std::ffi::OsString> = std::iter::once("ribbon")
            .chain(args.iter().copied())
            .map(Into::into)
            .collect();
        let e = Cli::try_parse_from(&argv).unwrap_err();
        match clap_outcome(&e, &argv) {
            Err(Error::Usage(m)) => m,
            other => panic!("{args:?}: {other:?}"),
        }
    }

    #[test]
    fn usage_errors_are_one_line_and_point_at_the_right_help() {
        let e = usage_error(&["build", "--policy", "ribbonfilter:10", "--keys", "k"]);
        assert!(
            e.contains("not provided: --out <FILE>") && e.ends_with("(try 'ribbon build --help')"),
            "{e}"
        );
        let e = usage_error(&["sst"]);
        assert_eq!(e, "missing subcommand (try 'ribbon sst --help')");
        let e = usage_error(&["sst", "info"]);
        assert!(e.ends_with("(try 'ribbon sst info --help')"), "{e}");
        let e = usage_error(&["frobnicate"]);
        assert!(
            e.contains("frobnicate") && e.ends_with("(try 'ribbon --help')"),
            "{e}"
        );
        let e = usage_error(&["build", "--policy", "cuckoo:10", "--keys", "k", "--out", "o"]);
        assert!(
            e.contains("\"cuckoo:10\"") && e.ends_with("(try 'ribbon build --help')"),
            "{e}"
        );
        for e in [e, usage_error(&[])] {
            assert!(!e.contains('\n'), "{e}");
        }
    }
}
