//! A small command-line parser: `--flag` and `--option VALUE` pairs.

use crate::Error;
use std::collections::BTreeMap;

/// Parsed options of one subcommand.
#[derive(Debug, Default)]
pub struct Args {
    values: BTreeMap<&'static str, String>,
    flags: Vec<&'static str>,
}

impl Args {
    /// Parses `argv` against the allowed `options` (take a value) and
    /// `flags` (take none). Unknown or repeated arguments are errors.
    pub fn parse(argv: &[String], options: &[&'static str], flags: &[&'static str]) -> Result<Self, Error> {
        let mut out = Args::default();
        let mut it = argv.iter();
        while let Some(arg) = it.next() {
            if let Some(&name) = options.iter().find(|&&o| o == arg) {
                let value = it
                    .next()
                    .ok_or_else(|| Error::Usage(format!("{name} needs a value")))?;
                if out.values.insert(name, value.clone()).is_some() {
                    return Err(Error::Usage(format!("{name} given twice")));
                }
            } else if let Some(&name) = flags.iter().find(|&&f| f == arg) {
                if out.flags.contains(&name) {
                    return Err(Error::Usage(format!("{name} given twice")));
                }
                out.flags.push(name);
            } else {
                return Err(Error::Usage(format!("unexpected argument {arg:?}")));
            }
        }
        Ok(out)
    }

    /// The value of a required option.
    pub fn required(&self, name: &str) -> Result<&str, Error> {
        self.values
            .get(name)
            .map(String::as_str)
            .ok_or_else(|| Error::Usage(format!("{name} is required")))
    }

    /// The value of an optional option.
    pub fn optional(&self, name: &str) -> Option<&str> {
        self.values.get(name).map(String::as_str)
    }

    /// An optional integer option with a default.
    pub fn int_or(&self, name: &str, default: i32) -> Result<i32, Error> {
        match self.optional(name) {
            None => Ok(default),
            Some(v) => v
                .parse()
                .map_err(|_| Error::Usage(format!("{name} must be an integer, got {v:?}"))),
        }
    }

    /// Whether a flag was given.
    pub fn flag(&self, name: &str) -> bool {
        self.flags.contains(&name)
    }
}
