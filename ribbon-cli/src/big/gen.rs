//! `ribbon big gen`: deterministic synthetic keys, the SHA-1 of each
//! counter (its 8 little-endian bytes), as the 20-byte records of the
//! "Have I Been Pwned" download or as hex lines. Key `i` is the same on
//! every machine, so anyone can reproduce a run without downloading data.

use crate::error::{shown, write_error, Error};
use rayon::prelude::*;
use sha1::{Digest, Sha1};
use std::io::Write;
use std::path::Path;

/// Key `i`: SHA-1 of `i` as 8 little-endian bytes.
pub fn key(i: u64) -> [u8; 20] {
    Sha1::digest(i.to_le_bytes()).into()
}

/// Counters of the non-member keys of reports: far from any member.
pub const NON_MEMBER_BASE: u64 = 1 << 62;

/// Writes keys `start .. start + count` to `out` (`-`: standard output), as
/// 20-byte records or (`hex`) lines.
pub fn write(out: &Path, start: u64, count: u64, hex: bool) -> Result<(), Error> {
    let end = start
        .checked_add(count)
        .ok_or_else(|| Error::usage("--start + --count overflows a 64-bit counter"))?;
    if out == Path::new("-") {
        let mut sink = std::io::BufWriter::with_capacity(1 << 20, std::io::stdout().lock());
        fill(&mut sink, start, end, hex).map_err(|e| write_error(&shown(out), e))?;
        return sink.flush().map_err(|e| write_error(&shown(out), e));
    }
    // Written next to the target and moved over it when complete: a
    // device, a FIFO or a link is refused, never replaced.
    let mut file = crate::output::OutputFile::create(out)?;
    fill(&mut file, start, end, hex).map_err(|e| write_error(&shown(out), e))?;
    file.commit()
}

/// Writes keys `start..end` to `sink`.
fn fill(sink: &mut dyn Write, start: u64, end: u64, hex: bool) -> std::io::Result<()> {
    const CHUNK: u64 = 1 << 20;
    let mut at = start;
    while at < end {
        let n = CHUNK.min(end - at);
        let block: Vec<u8> = (at..at + n)
            .into_par_iter()
            .flat_map_iter(|i| {
                let k = key(i);
                if hex {
                    let mut line: Vec<u8> = k.iter().flat_map(|b| format!("{b:02x}").into_bytes()).collect();
                    line.push(b'\n');
                    line
                } else {
                    k.to_vec()
                }
            })
            .collect();
        sink.write_all(&block)?;
        at += n;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    #[test]
    fn keys_are_sha1_of_counters() {
        // SHA-1 of eight zero bytes.
        let k = super::key(0);
        assert_eq!(k[..4], [0x05, 0xfe, 0x40, 0x57]);
        assert_ne!(super::key(1), k);
    }
}
