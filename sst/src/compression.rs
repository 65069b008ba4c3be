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
//! Every decompressor is bounded: no output beyond [`MAX_BLOCK_LEN`], and a
//! declared size no payload of that length could produce is refused before
//! anything is allocated. A panic inside a decompression library is turned
//! into an error.

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
}

/// Decompresses the stored bytes of a block whose trailer says
/// `type_byte` (not `kNoCompression`), as a table of `format_version`
/// does.
pub fn decompress(
    type_byte: u8,
    data: &[u8],
    format_version: u32,
    block: &BlockKind,
    offset: u64,
) -> Result<Vec<u8>, Error> {
    let ctx = Ctx {
        block,
        offset,
        compression: name(type_byte),
    };
    let run = || match type_byte {
        0x01 => snappy(&ctx, data),
        0x02 => zlib(&ctx, data, format_version),
        0x04 | 0x05 => lz4(&ctx, data, format_version),
        0x07 | 0x40 => zstd(&ctx, data),
        _ => Err(Error::UnsupportedCompression {
            block: block.clone(),
            offset,
            type_byte,
        }),
    };
    // The libraries are pure Rust and fuzzed; should one panic on hostile
    // input anyway, report corruption rather than abort the caller.
    std::panic::catch_unwind(std::panic::AssertUnwindSafe(run))
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

fn snappy(ctx: &Ctx<'_>, data: &[u8]) -> Result<Vec<u8>, Error> {
    let declared = snap::raw::decompress_len(data).map_err(|e| ctx.err(e.to_string()))?;
    // A Snappy element of n bytes produces at most 64 / 3 * n bytes.
    let len = ctx.check_size(declared as u64, data.len(), 22)?;
    let mut out = vec![0u8; len];
    let n = snap::raw::Decoder::new()
        .decompress(data, &mut out)
        .map_err(|e| ctx.err(e.to_string()))?;
    if n != len {
        return Err(ctx.err("size mismatch"));
    }
    Ok(out)
}

fn zlib(ctx: &Ctx<'_>, data: &[u8], format_version: u32) -> Result<Vec<u8>, Error> {
    let (declared, payload) = if format_version >= 2 {
        let (size, rest) = varint_size(ctx, data)?;
        // Deflate expands at most 1032:1.
        (Some(ctx.check_size(size, rest.len(), 1032)?), rest)
    } else {
        (None, data)
    };
    let limit = declared.unwrap_or(MAX_BLOCK_LEN as usize);
    let mut out = Vec::with_capacity(declared.unwrap_or(payload.len().saturating_mul(4)));
    // Read one byte past the declared size to notice longer output.
    flate2::read::DeflateDecoder::new(payload)
        .take(limit as u64 + 1)
        .read_to_end(&mut out)
        .map_err(|e| ctx.err(e.to_string()))?;
    match declared {
        Some(len) if out.len() != len => Err(ctx.err(format!(
            "size mismatch: declared {len}, got {}{}",
            out.len().min(len + 1),
            if out.len() > len { " or more" } else { "" }
        ))),
        None if out.len() > limit => Err(ctx.err("uncompressed block too large")),
        _ => Ok(out),
    }
}

fn lz4(ctx: &Ctx<'_>, data: &[u8], format_version: u32) -> Result<Vec<u8>, Error> {
    let (declared, payload) = if format_version >= 2 {
        varint_size(ctx, data)?
    } else {
        if data.len() < 8 {
            return Err(ctx.err("missing 8-byte size header"));
        }
        (u64::from(fixed32(&data[..4])), &data[8..])
    };
    // An LZ4 sequence of n bytes produces at most 255 * n bytes.
    let len = ctx.check_size(declared, payload.len(), 255)?;
    let mut out = vec![0u8; len];
    let n = lz4_flex::block::decompress_into(payload, &mut out).map_err(|e| ctx.err(e.to_string()))?;
    if n != len {
        return Err(ctx.err(format!("size mismatch: declared {len}, got {n}")));
    }
    Ok(out)
}

fn zstd(ctx: &Ctx<'_>, data: &[u8]) -> Result<Vec<u8>, Error> {
    let (declared, payload) = varint_size(ctx, data)?;
    let len = ctx.check_size(declared, payload.len(), MAX_BLOCK_LEN)?;
    let mut source = payload;
    let decoder = ruzstd::decoding::StreamingDecoder::new(&mut source).map_err(|e| {
        let msg = e.to_string();
        if msg.contains("dict") || msg.contains("Dict") {
            ctx.err(format!("{msg} (compression dictionaries are not supported)"))
        } else {
            ctx.err(msg)
        }
    })?;
    let mut out = Vec::with_capacity(len.min(payload.len().saturating_mul(8).max(4096)));
    decoder
        .take(len as u64 + 1)
        .read_to_end(&mut out)
        .map_err(|e| ctx.err(e.to_string()))?;
    if out.len() != len {
        return Err(ctx.err(format!(
            "size mismatch: declared {len}, got {}{}",
            out.len().min(len + 1),
            if out.len() > len { " or more" } else { "" }
        )));
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::coding::put_varint64;

    fn ok(type_byte: u8, data: &[u8], fv: u32) -> Result<Vec<u8>, Error> {
        decompress(type_byte, data, fv, &BlockKind::Data, 0)
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
