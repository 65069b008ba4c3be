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
        // A closed pipe ends the program quietly (as `head` expects).
        let mut sink = std::io::BufWriter::with_capacity(1 << 20, std::io::stdout());
        fill(&mut sink, start, end, hex).map_err(|e| write_error("standard output", e))?;
        return sink.flush().map_err(|e| write_error("standard output", e));
    }
    // Written next to the target and moved over it when complete: a
    // device, a FIFO or a link is refused, never replaced.
    let mut file = crate::output::OutputFile::create(out)?;
    fill(&mut file, start, end, hex).map_err(|e| write_error(&shown(out), e))?;
    file.commit()
}

/// Writes keys `start..end` to `sink`: blocks of keys filled on every
/// core (each thread its own slice of the block), written on a thread of
/// their own while the next block is filled (two buffers, recycled).
fn fill(sink: &mut (dyn Write + Send), start: u64, end: u64, hex: bool) -> std::io::Result<()> {
    const CHUNK: u64 = 1 << 20;
    // Keys a rayon task fills at once.
    const TASK: usize = 4096;
    let record = if hex { 41 } else { 20 };
    std::thread::scope(|scope| {
        let (full_tx, full_rx) = std::sync::mpsc::sync_channel::<(Vec<u8>, usize)>(1);
        let (empty_tx, empty_rx) = std::sync::mpsc::channel::<Vec<u8>>();
        let writer = scope.spawn(move || -> std::io::Result<()> {
            for (buf, len) in full_rx {
                sink.write_all(&buf[..len])?;
                // The filler may have finished already.
                let _ = empty_tx.send(buf);
            }
            Ok(())
        });
        let mut at = start;
        while at < end {
            let n = CHUNK.min(end - at);
            let len = n as usize * record;
            let mut buf = empty_rx
                .try_recv()
                .unwrap_or_else(|_| vec![0u8; CHUNK as usize * record]);
            buf[..len]
                .par_chunks_mut(TASK * record)
                .enumerate()
                .for_each(|(task, out)| {
                    let first = at + (task * TASK) as u64;
                    for (i, slot) in out.chunks_exact_mut(record).enumerate() {
                        let k = key(first + i as u64);
                        if hex {
                            write_hex(&k, slot);
                        } else {
                            slot.copy_from_slice(&k);
                        }
                    }
                });
            if full_tx.send((buf, len)).is_err() {
                // The writer stopped on an error: it says which below.
                break;
            }
            at += n;
        }
        drop(full_tx);
        writer
            .join()
            .unwrap_or_else(|_| Err(std::io::Error::other("the writing thread panicked")))
    })
}

/// Writes `key` as 40 lowercase hex digits and a newline into `out` (41
/// bytes).
fn write_hex(key: &[u8; 20], out: &mut [u8]) {
    const DIGITS: &[u8; 16] = b"0123456789abcdef";
    for (b, pair) in key.iter().zip(out.chunks_exact_mut(2)) {
        pair[0] = DIGITS[usize::from(b >> 4)];
        pair[1] = DIGITS[usize::from(b & 15)];
    }
    out[40] = b'\n';
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
