//! Decompressing blocks: Snappy, zlib (raw deflate), LZ4/LZ4HC and ZSTD, in
//! pure Rust.
//!
//! Ported from RocksDB's `util/compression.{h,cc}`
//! (`BuiltinDecompressorV2::ExtractUncompressedSize`,
//! `Decompressor::ExtractUncompressedSize`, `Snappy_DecompressBlock`,
//! `Zlib_DecompressBlock`, `LZ4_DecompressBlock`, `ZSTD_DecompressBlock`)
//! and, for format_version 0 and 1, the framing of RocksDB's older
//! `compress_format_version` 1.
//!
//! Framing, format_version 2 and later: Snappy blocks are raw Snappy (the
//! size is Snappy's own preamble); every other type starts with the
//! uncompressed size as a varint, then the payload: raw deflate (no zlib
//! header) for zlib, an LZ4 block for LZ4 and LZ4HC, a ZSTD frame for ZSTD.
//! Format_version 0 and 1: zlib has no size prefix, LZ4 an 8-byte
//! little-endian size, ZSTD the varint.
//!
//! Every decompressor is bounded: no output beyond [`MAX_BLOCK_LEN`], a
//! declared size no payload of that length could produce (each format's
//! largest ratio) is refused before anything is allocated, a ZSTD frame
//! whose header records another size is refused, and the size is charged to
//! the caller's [`ReadBudget`]. A panic inside a decompression library is
//! turned into an error.

use crate::budget::ReadBudget;
use crate::coding::{fixed32, Reader};
use crate::error::{BlockKind, Error};
use std::io::Read;

/// The largest uncompressed block this reader accepts (256 MiB).
pub const MAX_BLOCK_LEN: u64 = 256 << 20;

/// `kNoCompression`.
pub const NO_COMPRESSION: u8 = 0;

/// RocksDB's name for a compression type byte.
pub fn name(type_byte: u8) -> &'static str {
    match type_byte {
        0x00 => "NoCompression",
        0x01 => "Snappy",
        0x02 => "Zlib",
        0x03 => "BZip2",
        0x04 => "LZ4",
        0x05 => "LZ4HC",
        0x06 => "Xpress",
        0x07 | 0x40 => "ZSTD",
        0x80..=0xfe => "custom",
        _ => "unknown",
    }
}

/// The largest ratio of decompressed to compressed bytes each format can
/// reach, so a declared size beyond `ratio × payload` is refused before
/// anything is allocated:
///
/// * Snappy: a 3-byte copy element yields at most 64 bytes (about 21.4).
/// * Deflate: at most 1032:1 (a 258-byte match per 2 bits, in the best case).
/// * LZ4: a sequence of n bytes yields at most 255·n.
/// * ZSTD: the densest unit of a frame is an RLE block (ZSTD's term, not
///   an SST block): 4 bytes (a 3-byte header and the byte) for at most
///   128 KiB, so 32768:1.
const SNAPPY_MAX_RATIO: u64 = 22;
const DEFLATE_MAX_RATIO: u64 = 1032;
const LZ4_MAX_RATIO: u64 = 255;
const ZSTD_MAX_RATIO: u64 = 32768;

struct Ctx<'a> {
    block: &'a BlockKind,
    offset: u64,
    compression: &'static str,
}

impl Ctx<'_> {
    fn err(&self, what: impl Into<String>) -> Error {
        Error::Decompress {
            block: self.block.clone(),
            offset: self.offset,
            compression: self.compression,
            what: what.into(),
        }
    }

    /// Checks a declared size against the cap and the payload's bound.
    fn check_size(&self, declared: u64, payload_len: usize, max_ratio: u64) -> Result<usize, Error> {
        let bound = (payload_len as u64).saturating_mul(max_ratio).saturating_add(64);
        if declared > MAX_BLOCK_LEN {
            return Err(self.err(format!(
                "declared uncompressed size {declared} is over the {MAX_BLOCK_LEN}-byte limit"
            )));
        }
        if declared > bound {
            return Err(self.err(format!(
                "declared uncompressed size {declared} cannot come from {payload_len} compressed bytes"
            )));
        }
        Ok(declared as usize)
    }

    /// Checks that the output has the declared size.
    fn check_output(&self, out: Vec<u8>, declared: usize) -> Result<Vec<u8>, Error> {
        if out.len() == declared {
            return Ok(out);
        }
        Err(self.err(format!(
            "size mismatch: declared {declared}, got {}{}",
            out.len().min(declared + 1),
            if out.len() > declared { " or more" } else { "" }
        )))
    }
}

/// Decompresses the stored bytes of a block whose trailer says
/// `type_byte` (not `kNoCompression`), as a table of `format_version`
/// does. The decompressed size is charged to `budget` before anything is
/// allocated (after decompression for the one framing that records no
/// size: zlib before format_version 2, whose output is capped at
/// [`MAX_BLOCK_LEN`]).
pub fn decompress(
    type_byte: u8,
    data: &[u8],
    format_version: u32,
    block: &BlockKind,
    offset: u64,
    budget: &mut ReadBudget,
) -> Result<Vec<u8>, Error> {
    let ctx = Ctx {
        block,
        offset,
        compression: name(type_byte),
    };
    let mut run = || match type_byte {
        0x01 => snappy(&ctx, data, budget),
        0x02 => zlib(&ctx, data, format_version, budget),
        0x04 | 0x05 => lz4(&ctx, data, format_version, budget),
        0x07 | 0x40 => zstd(&ctx, data, budget),
        _ => Err(Error::UnsupportedCompression {
            block: block.clone(),
            offset,
            type_byte,
        }),
    };
    // The libraries are pure Rust and fuzzed; should one panic on hostile
    // input anyway, report corruption rather than abort the caller.
    std::panic::catch_unwind(std::panic::AssertUnwindSafe(&mut run))
        .unwrap_or_else(|_| Err(ctx.err("the decompressor rejected the data")))
}

/// The varint size prefix of compress_format_version 2.
fn varint_size<'a>(ctx: &Ctx<'_>, data: &'a [u8]) -> Result<(u64, &'a [u8]), Error> {
    let mut r = Reader::new(data);
    let size = r.varint64().ok_or_else(|| Error::BadVarint {
        block: ctx.block.clone(),
        offset: ctx.offset,
        what: "uncompressed size",
    })?;
    Ok((size, r.remaining()))
}

fn snappy(ctx: &Ctx<'_>, data: &[u8], budget: &mut ReadBudget) -> Result<Vec<u8>, Error> {
    let declared = snap::raw::decompress_len(data).map_err(|e| ctx.err(e.to_string()))?;
    let len = ctx.check_size(declared as u64, data.len(), SNAPPY_MAX_RATIO)?;
    budget.charge(len as u64, ctx.block, ctx.offset)?;
    let mut out = vec![0u8; len];
    let n = snap::raw::Decoder::new()
        .decompress(data, &mut out)
        .map_err(|e| ctx.err(e.to_string()))?;
    out.truncate(n);
    ctx.check_output(out, len)
}

fn zlib(ctx: &Ctx<'_>, data: &[u8], format_version: u32, budget: &mut ReadBudget) -> Result<Vec<u8>, Error> {
    let (declared, payload) = if format_version >= 2 {
        let (size, rest) = varint_size(ctx, data)?;
        (Some(ctx.check_size(size, rest.len(), DEFLATE_MAX_RATIO)?), rest)
    } else {
        (None, data)
    };
    if let Some(len) = declared {
        budget.charge(len as u64, ctx.block, ctx.offset)?;
    }
    let limit = declared.unwrap_or(MAX_BLOCK_LEN as usize);
    let mut out = Vec::with_capacity(declared.unwrap_or(payload.len().saturating_mul(4)));
    // Read one byte past the limit to notice longer output.
    flate2::read::DeflateDecoder::new(payload)
        .take(limit as u64 + 1)
        .read_to_end(&mut out)
        .map_err(|e| ctx.err(e.to_string()))?;
    match declared {
        Some(len) => ctx.check_output(out, len),
        None if out.len() > limit => Err(ctx.err("uncompressed block too large")),
        None => {
            budget.charge(out.len() as u64, ctx.block, ctx.offset)?;
            Ok(out)
        }
    }
}

fn lz4(ctx: &Ctx<'_>, data: &[u8], format_version: u32, budget: &mut ReadBudget) -> Result<Vec<u8>, Error> {
    let (declared, payload) = if format_version >= 2 {
        varint_size(ctx, data)?
    } else {
        if data.len() < 8 {
            return Err(ctx.err("missing 8-byte size header"));
        }
        (u64::from(fixed32(&data[..4])), &data[8..])
    };
    let len = ctx.check_size(declared, payload.len(), LZ4_MAX_RATIO)?;
    budget.charge(len as u64, ctx.block, ctx.offset)?;
    let mut out = vec![0u8; len];
    let n = lz4_flex::block::decompress_into(payload, &mut out).map_err(|e| ctx.err(e.to_string()))?;
    out.truncate(n);
    ctx.check_output(out, len)
}

fn zstd(ctx: &Ctx<'_>, data: &[u8], budget: &mut ReadBudget) -> Result<Vec<u8>, Error> {
    let (declared, payload) = varint_size(ctx, data)?;
    let len = ctx.check_size(declared, payload.len(), ZSTD_MAX_RATIO)?;
    if let Some(content_size) = zstd_frame_content_size(payload) {
        if content_size != declared {
            return Err(ctx.err(format!(
                "the frame's content size {content_size} differs from the declared size {declared}"
            )));
        }
    }
    budget.charge(len as u64, ctx.block, ctx.offset)?;
    let mut source = payload;
    let decoder = ruzstd::decoding::StreamingDecoder::new(&mut source).map_err(|e| {
        let msg = e.to_string();
        if msg.contains("dict") || msg.contains("Dict") {
            ctx.err(format!("{msg} (compression dictionaries are not supported)"))
        } else {
            ctx.err(msg)
        }
    })?;
    let mut out = Vec::with_capacity(len);
    decoder
        .take(len as u64 + 1)
        .read_to_end(&mut out)
        .map_err(|e| ctx.err(e.to_string()))?;
    ctx.check_output(out, len)
}

/// The Frame_Content_Size of a ZSTD frame header (RFC 8878, 3.1.1.1), when
/// the header is complete and records one. RocksDB's ZSTD compressor
/// writes it (libzstd's default), and it must agree with the varint size.
fn zstd_frame_content_size(frame: &[u8]) -> Option<u64> {
    const MAGIC: u32 = 0xFD2F_B528;
    let mut r = Reader::new(frame);
    if r.fixed32()? != MAGIC {
        return None;
    }
    let descriptor = r.bytes(1)?[0];
    let single_segment = descriptor & 0x20 != 0;
    let window_len = usize::from(!single_segment);
    let dict_len = [0, 1, 2, 4][usize::from(descriptor & 3)];
    let size_len = match descriptor >> 6 {
        0 if single_segment => 1,
        0 => return None,
        1 => 2,
        2 => 4,
        _ => 8,
    };
    r.bytes(window_len + dict_len)?;
    let b = r.bytes(size_len)?;
    let mut v = [0u8; 8];
    v[..size_len].copy_from_slice(b);
    let size = u64::from_le_bytes(v);
    Some(if size_len == 2 { size + 256 } else { size })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::coding::put_varint64;

    fn ok(type_byte: u8, data: &[u8], fv: u32) -> Result<Vec<u8>, Error> {
        decompress(
            type_byte,
            data,
            fv,
            &BlockKind::Data,
            0,
            &mut ReadBudget::unlimited(),
        )
    }

    #[test]
    fn snappy_and_lz4_round_trip() {
        let text = b"hello hello hello hello hello world".repeat(20);
        let s = snap::raw::Encoder::new().compress_vec(&text).unwrap();
        assert_eq!(ok(1, &s, 7).unwrap(), text);
        let mut l = Vec::new();
        put_varint64(&mut l, text.len() as u64);
        l.extend(lz4_flex::block::compress(&text));
        assert_eq!(ok(4, &l, 7).unwrap(), text);
        assert_eq!(ok(5, &l, 7).unwrap(), text);
        // Legacy LZ4 framing: 8-byte size.
        let mut legacy = (text.len() as u64).to_le_bytes().to_vec();
        legacy.extend(lz4_flex::block::compress(&text));
        assert_eq!(ok(4, &legacy, 1).unwrap(), text);
    }

    #[test]
    fn zlib_raw_deflate_round_trip() {
        use std::io::Write;
        let text = b"abcabcabcabc-zlib-zlib".repeat(50);
        let mut enc = flate2::write::DeflateEncoder::new(Vec::new(), flate2::Compression::default());
        enc.write_all(&text).unwrap();
        let raw = enc.finish().unwrap();
        let mut framed = Vec::new();
        put_varint64(&mut framed, text.len() as u64);
        framed.extend(&raw);
        assert_eq!(ok(2, &framed, 5).unwrap(), text);
        assert_eq!(ok(2, &raw, 1).unwrap(), text);
        // A wrong declared size is an error.
        let mut wrong = Vec::new();
        put_varint64(&mut wrong, text.len() as u64 - 1);
        wrong.extend(&raw);
        assert!(ok(2, &wrong, 5).is_err());
    }

    /// A ZSTD block as RocksDB frames it: `len` zero bytes in RLE blocks,
    /// the varint size `declared`, and the frame's content size `in_frame`.
    fn zstd_rle(len: usize, declared: u64, in_frame: u64) -> Vec<u8> {
        let mut out = Vec::new();
        put_varint64(&mut out, declared);
        out.extend(0xFD2F_B528u32.to_le_bytes());
        out.extend([0xC0, 7 << 3]);
        out.extend(in_frame.to_le_bytes());
        let mut left = len;
        loop {
            let n = left.min(128 << 10);
            left -= n;
            let header = u32::from(left == 0) | (1 << 1) | ((n as u32) << 3);
            out.extend(&header.to_le_bytes()[..3]);
            out.push(0);
            if left == 0 {
                return out;
            }
        }
    }

    #[test]
    fn zstd_sizes_are_checked_against_the_frame_and_the_budget() {
        let len = 1 << 20;
        assert_eq!(
            ok(7, &zstd_rle(len, len as u64, len as u64), 7).unwrap(),
            vec![0; len]
        );
        // The densest frame there is still passes the ratio bound.
        let max = MAX_BLOCK_LEN as usize;
        let dense = zstd_rle(max, max as u64, max as u64);
        assert!(dense.len() < 8300);
        assert_eq!(ok(7, &dense, 7).unwrap().len(), max);
        // The frame's content size disagrees with the varint.
        let e = ok(7, &zstd_rle(len, len as u64, len as u64 + 1), 7).unwrap_err();
        assert!(e.to_string().contains("differs from the declared size"), "{e}");
        // More than RLE blocks can hold.
        let e = ok(7, &zstd_rle(len, 64 << 20, 64 << 20), 7).unwrap_err();
        assert!(e.to_string().contains("cannot come from"), "{e}");
        // The budget is charged before decompressing.
        let mut budget = ReadBudget::with_limit(len as u64 - 1);
        let e = decompress(
            7,
            &zstd_rle(len, len as u64, len as u64),
            7,
            &BlockKind::Filter,
            9,
            &mut budget,
        )
        .unwrap_err();
        assert!(matches!(e, Error::BudgetExceeded { offset: 9, .. }), "{e:?}");
        assert_eq!(budget.used(), 0);
    }

    #[test]
    fn hostile_sizes_are_refused_without_allocating() {
        let mut b = Vec::new();
        put_varint64(&mut b, 1 << 40);
        b.extend([0u8; 4]);
        for t in [2u8, 4, 7] {
            assert!(ok(t, &b, 7).is_err());
        }
        assert!(ok(1, &[0xff, 0xff, 0xff, 0xff, 0x0f], 7).is_err());
        assert!(matches!(
            ok(3, b"x", 7),
            Err(Error::UnsupportedCompression { .. })
        ));
        assert!(matches!(
            ok(0x80, b"x", 7),
            Err(Error::UnsupportedCompression { .. })
        ));
    }
}
