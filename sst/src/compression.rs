//! Decompressing blocks: Snappy, zlib (raw deflate), BZip2, LZ4/LZ4HC and
//! ZSTD, in pure Rust, with the table's compression dictionary where
//! RocksDB uses one.
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
//! header) for zlib, a bzip2 stream for BZip2, an LZ4 block for LZ4 and
//! LZ4HC, a ZSTD frame for ZSTD. Format_version 0 and 1: zlib and BZip2
//! have no size prefix, LZ4 an 8-byte little-endian size, ZSTD the varint.
//!
//! Compression dictionaries (`compression_opts.max_dict_bytes`): RocksDB
//! stores the dictionary in the `rocksdb.compression_dict` meta block and
//! uses it for data blocks only (`UncompressionDict`; index and meta blocks
//! get the empty dictionary). ZSTD takes it as a ZSTD dictionary (trained,
//! with the magic `0xEC30A437`, when `zstd_max_train_bytes` was set) or as
//! raw content (the sampled bytes; its frames name no dictionary id); LZ4
//! as the history before the block (`LZ4_setStreamDecode`); zlib as the
//! preset dictionary (`inflateSetDictionary`), which for raw deflate is the
//! same history. Snappy and BZip2 take no dictionary (RocksDB ignores it
//! for them). XPRESS (Windows only, in RocksDB) is not supported.
//!
//! The dictionary bytes a block's decoder copies (all of a ZSTD
//! dictionary, the last 32 KiB for zlib; LZ4 reads it in place) are charged
//! to the budget with the block's own size.
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

pub use crate::budget::MAX_BLOCK_LEN;

pub use crate::compression_type::{name, NO_COMPRESSION};

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
/// BZip2: a run-length-encoded run of 4 + 255 bytes costs a few bits of
/// Huffman code after the BWT, and a block of at most 900 kB compresses to
/// no fewer than about 40 bytes: bzip2's own test suite has ratios below
/// 50000:1; 1 << 17 leaves room.
const BZIP2_MAX_RATIO: u64 = 1 << 17;

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

    /// Checks that a decoder wrote the declared size (a streamed decoder
    /// may have read up to one byte past it: "or more").
    fn check_written(&self, written: usize, declared: usize) -> Result<(), Error> {
        if written == declared {
            return Ok(());
        }
        Err(self.err(format!(
            "size mismatch: declared {declared}, got {}{}",
            written.min(declared + 1),
            if written > declared { " or more" } else { "" }
        )))
    }

    /// Checks that the output has the declared size.
    fn check_output(&self, out: Vec<u8>, declared: usize) -> Result<Vec<u8>, Error> {
        self.check_written(out.len(), declared).map(|()| out)
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
    decompress_with_dict(type_byte, data, format_version, block, offset, budget, &[])
}

/// [`decompress`] with the table's compression dictionary `dict` (empty
/// for none; see the module docs for how each format uses it).
pub fn decompress_with_dict(
    type_byte: u8,
    data: &[u8],
    format_version: u32,
    block: &BlockKind,
    offset: u64,
    budget: &mut ReadBudget,
    dict: &[u8],
) -> Result<Vec<u8>, Error> {
    let mut out = Vec::new();
    decompress_into(
        type_byte,
        data,
        format_version,
        block,
        offset,
        budget,
        dict,
        &mut out,
    )?;
    Ok(out)
}

/// [`decompress_with_dict`] into `out` (its contents replaced), so that a
/// walk over many blocks reuses one buffer: Snappy and LZ4 blocks, the
/// common types, are decoded in place without allocating once `out` has
/// grown to the largest block. On error `out` holds no meaningful bytes.
#[allow(clippy::too_many_arguments)]
pub fn decompress_into(
    type_byte: u8,
    data: &[u8],
    format_version: u32,
    block: &BlockKind,
    offset: u64,
    budget: &mut ReadBudget,
    dict: &[u8],
    out: &mut Vec<u8>,
) -> Result<(), Error> {
    let ctx = Ctx {
        block,
        offset,
        compression: name(type_byte),
    };
    let mut run = || match type_byte {
        0x01 => snappy(&ctx, data, budget, out),
        0x04 | 0x05 => lz4(&ctx, data, format_version, budget, dict, out),
        _ => {
            *out = decompress_other(&ctx, type_byte, data, format_version, budget, dict)?;
            Ok(())
        }
    };
    // The libraries are pure Rust and fuzzed; should one panic on hostile
    // input anyway, report corruption rather than abort the caller.
    std::panic::catch_unwind(std::panic::AssertUnwindSafe(&mut run))
        .unwrap_or_else(|_| Err(ctx.err("the decompressor rejected the data")))
}

/// The types [`decompress_into`] does not decode in place.
fn decompress_other(
    ctx: &Ctx<'_>,
    type_byte: u8,
    data: &[u8],
    format_version: u32,
    budget: &mut ReadBudget,
    dict: &[u8],
) -> Result<Vec<u8>, Error> {
    let (block, offset) = (ctx.block, ctx.offset);
    match type_byte {
        // Raw deflate.
        0x02 if dict.is_empty() => streamed(
            ctx,
            data,
            format_version,
            budget,
            DEFLATE_MAX_RATIO,
            flate2::read::DeflateDecoder::new,
        ),
        0x02 => zlib_with_dict(ctx, data, format_version, budget, dict),
        // BZip2 (`BZip2_DecompressBlock`; no dictionary).
        0x03 => streamed(
            ctx,
            data,
            format_version,
            budget,
            BZIP2_MAX_RATIO,
            bzip2::read::BzDecoder::new,
        ),
        0x07 | 0x40 => zstd(ctx, data, budget, dict),
        _ => Err(Error::UnsupportedCompression {
            block: block.clone(),
            offset,
            type_byte,
        }),
    }
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

/// Sizes `out` to `len` bytes for a decoder to overwrite (only the bytes
/// beyond its current length are zeroed).
fn output_buffer(out: &mut Vec<u8>, len: usize) -> &mut [u8] {
    out.truncate(len);
    out.resize(len, 0);
    out
}

fn snappy(ctx: &Ctx<'_>, data: &[u8], budget: &mut ReadBudget, out: &mut Vec<u8>) -> Result<(), Error> {
    let declared = snap::raw::decompress_len(data).map_err(|e| ctx.err(e.to_string()))?;
    let len = ctx.check_size(declared as u64, data.len(), SNAPPY_MAX_RATIO)?;
    budget.charge(len as u64, ctx.block, ctx.offset)?;
    let n = snap::raw::Decoder::new()
        .decompress(data, output_buffer(out, len))
        .map_err(|e| ctx.err(e.to_string()))?;
    ctx.check_written(n, len)
}

/// The framing of zlib and BZip2: the varint size from format_version 2
/// on, no size before (`compress_format_version` 1). `decode` gets the
/// payload, the declared size and the most it may produce, and returns at
/// most one byte more (to notice longer output); the size is charged
/// before decoding when declared, after otherwise.
fn optionally_sized<'d>(
    ctx: &Ctx<'_>,
    data: &'d [u8],
    format_version: u32,
    budget: &mut ReadBudget,
    max_ratio: u64,
    decode: impl FnOnce(&'d [u8], Option<usize>, usize, &mut ReadBudget) -> Result<Vec<u8>, Error>,
) -> Result<Vec<u8>, Error> {
    let (declared, payload) = if format_version >= 2 {
        let (size, rest) = varint_size(ctx, data)?;
        (Some(ctx.check_size(size, rest.len(), max_ratio)?), rest)
    } else {
        (None, data)
    };
    if let Some(len) = declared {
        budget.charge(len as u64, ctx.block, ctx.offset)?;
    }
    // Without a declared size (format_version 0 and 1), decode no more than
    // the block limit, the codec's largest ratio and what is left of the
    // budget allow, so a hostile block costs no more than it may.
    let limit = declared.unwrap_or_else(|| {
        let by_ratio = (payload.len() as u64).saturating_mul(max_ratio);
        MAX_BLOCK_LEN.min(by_ratio).min(budget.remaining()) as usize
    });
    let out = decode(payload, declared, limit, budget)?;
    match declared {
        Some(len) => ctx.check_output(out, len),
        None if out.len() > limit => {
            // Past the budget: its error; else the block is too large.
            budget.charge(out.len() as u64, ctx.block, ctx.offset)?;
            Err(ctx.err("uncompressed block too large"))
        }
        None => {
            budget.charge(out.len() as u64, ctx.block, ctx.offset)?;
            Ok(out)
        }
    }
}

/// A stream format in the framing of [`optionally_sized`] (zlib, BZip2):
/// `decoder` reads the payload, to its end or to one byte past the limit.
fn streamed<'d, R: Read>(
    ctx: &Ctx<'_>,
    data: &'d [u8],
    format_version: u32,
    budget: &mut ReadBudget,
    max_ratio: u64,
    decoder: impl FnOnce(&'d [u8]) -> R,
) -> Result<Vec<u8>, Error> {
    optionally_sized(
        ctx,
        data,
        format_version,
        budget,
        max_ratio,
        |payload, declared, limit, _| {
            // A declared size was charged already; without one, no more than
            // the limit (which the remaining budget bounds) is reserved.
            let mut out = Vec::with_capacity(declared.unwrap_or(payload.len().saturating_mul(4).min(limit)));
            decoder(payload)
                .take(limit as u64 + 1)
                .read_to_end(&mut out)
                .map_err(|e| ctx.err(e.to_string()))?;
            Ok(out)
        },
    )
}

/// Raw deflate after a preset dictionary: the dictionary is the history the
/// stream's distances may reach back into (at most 32 KiB), so the output
/// buffer starts with it and decompression starts after it.
fn zlib_with_dict(
    ctx: &Ctx<'_>,
    data: &[u8],
    format_version: u32,
    budget: &mut ReadBudget,
    dict: &[u8],
) -> Result<Vec<u8>, Error> {
    use miniz_oxide::inflate::core::{decompress, inflate_flags, DecompressorOxide};
    use miniz_oxide::inflate::TINFLStatus;
    optionally_sized(
        ctx,
        data,
        format_version,
        budget,
        DEFLATE_MAX_RATIO,
        |payload, declared, limit, budget| {
            let history = &dict[dict.len().saturating_sub(32 << 10)..];
            budget.charge(history.len() as u64, ctx.block, ctx.offset)?;
            let start = history.len();
            // Room for one byte past the limit, to notice longer output.
            let full = start + limit + 1;
            let mut buf = history.to_vec();
            let first = declared.unwrap_or(payload.len().saturating_mul(4).min(limit));
            buf.resize(start + first + 1, 0);
            let mut state = DecompressorOxide::new();
            let (mut in_pos, mut out_pos) = (0usize, start);
            loop {
                let (status, read, written) = decompress(
                    &mut state,
                    &payload[in_pos..],
                    &mut buf,
                    out_pos,
                    inflate_flags::TINFL_FLAG_USING_NON_WRAPPING_OUTPUT_BUF,
                );
                in_pos += read;
                out_pos += written;
                match status {
                    TINFLStatus::Done => break,
                    TINFLStatus::HasMoreOutput if buf.len() < full => {
                        let grown = buf.len().saturating_mul(2).min(full);
                        buf.resize(grown, 0);
                    }
                    TINFLStatus::HasMoreOutput => return Err(ctx.err("uncompressed block too large")),
                    other => return Err(ctx.err(format!("inflate with the dictionary failed: {other:?}"))),
                }
            }
            buf.truncate(out_pos);
            Ok(buf.split_off(start))
        },
    )
}

fn lz4(
    ctx: &Ctx<'_>,
    data: &[u8],
    format_version: u32,
    budget: &mut ReadBudget,
    dict: &[u8],
    out: &mut Vec<u8>,
) -> Result<(), Error> {
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
    let out = output_buffer(out, len);
    let n = if dict.is_empty() {
        lz4_flex::block::decompress_into(payload, out)
    } else {
        // LZ4 reaches back at most 64 KiB.
        let history = &dict[dict.len().saturating_sub(64 << 10)..];
        lz4_flex::block::decompress_into_with_dict(payload, out, history)
    }
    .map_err(|e| ctx.err(e.to_string()))?;
    ctx.check_written(n, len)
}

/// The entropy tables and repeat offsets of a ZSTD dictionary with no
/// content, made by `ZDICT_finalizeDictionary` (id 1). A raw-content
/// dictionary is given to the decoder as this with the content replaced
/// and the repeat offsets of a raw-content dictionary (1, 4, 8): its frames
/// never use the tables (a raw-content dictionary has none, so libzstd
/// refuses a frame that repeats them, and never writes one).
const ZSTD_DICT_TEMPLATE: [u8; 126] = [
    0x37, 0xa4, 0x30, 0xec, 0x01, 0x00, 0x00, 0x00, 0x18, 0x10, 0xe8, 0x0a, 0xd3, 0x01, 0x00, 0x00, 0x00,
    0x80, 0xb1, 0x94, 0x29, 0x49, 0x39, 0x00, 0x28, 0x52, 0x0e, 0x08, 0x18, 0x20, 0x84, 0x10, 0x12, 0x43,
    0x30, 0xf0, 0x20, 0x01, 0xe2, 0xe5, 0x6a, 0x35, 0x33, 0xb3, 0x6d, 0x03, 0x34, 0xa0, 0x2f, 0xc7, 0x18,
    0x86, 0x61, 0x18, 0x86, 0x61, 0x18, 0x86, 0x61, 0x18, 0x86, 0x61, 0x18, 0x86, 0x61, 0x18, 0x63, 0x8c,
    0x31, 0xc6, 0x18, 0x63, 0x8c, 0x31, 0xc6, 0x98, 0x99, 0x99, 0x99, 0xd9, 0xb6, 0x01, 0x94, 0x80, 0x80,
    0xc0, 0xc0, 0xc0, 0x80, 0x80, 0xc0, 0x20, 0xc2, 0xc0, 0xc0, 0x80, 0x80, 0x80, 0x60, 0xc1, 0x80, 0x80,
    0x20, 0xc2, 0x21, 0xc3, 0xc2, 0xe3, 0x4e, 0xdb, 0x11, 0x11, 0x11, 0x79, 0x01, 0x00, 0x00, 0x00, 0x04,
    0x00, 0x00, 0x00, 0x08, 0x00, 0x00, 0x00,
];

/// The ZSTD dictionary RocksDB's `dict` bytes make, and whether frames
/// must be told to use it (raw content: its frames name no id).
fn zstd_dictionary(ctx: &Ctx<'_>, dict: &[u8]) -> Result<(ruzstd::decoding::Dictionary, bool), Error> {
    const MAGIC_NUM: [u8; 4] = 0xEC30_A437u32.to_le_bytes();
    if dict.starts_with(&MAGIC_NUM) && dict.len() >= 8 {
        let d = ruzstd::decoding::Dictionary::decode_dict(dict)
            .map_err(|e| ctx.err(format!("bad ZSTD dictionary: {e}")))?;
        return Ok((d, false));
    }
    let mut d = ruzstd::decoding::Dictionary::decode_dict(&ZSTD_DICT_TEMPLATE)
        .map_err(|e| ctx.err(format!("ZSTD dictionary template: {e}")))?;
    d.dict_content = dict.to_vec();
    d.offset_hist = [1, 4, 8];
    Ok((d, true))
}

fn zstd(ctx: &Ctx<'_>, data: &[u8], budget: &mut ReadBudget, dict: &[u8]) -> Result<Vec<u8>, Error> {
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
    if !dict.is_empty() {
        // The decoder copies the dictionary for every block.
        budget.charge(dict.len() as u64, ctx.block, ctx.offset)?;
        return zstd_with_dict(ctx, source, len, dict);
    }
    let decoder =
        ruzstd::decoding::StreamingDecoder::new_with_max_window_size(&mut source, zstd_max_window(len, 0))
            .map_err(|e| {
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

/// The largest window a ZSTD frame of `len` bytes (with a dictionary of
/// `dict_len`) may ask the decoder to allocate: libzstd sizes a frame's
/// window to the data it compresses (plus the dictionary), so twice that,
/// rounded up to a power of two and at least 1 KiB, refuses only frames
/// whose window their content cannot use: a hostile header asking for a
/// 128 MiB window around 16 bytes.
fn zstd_max_window(len: usize, dict_len: usize) -> u64 {
    (len as u64)
        .saturating_add(dict_len as u64)
        .saturating_mul(2)
        .max(1 << 10)
        .checked_next_power_of_two()
        .unwrap_or(u64::MAX)
}

/// One ZSTD frame of `len` bytes decompressed with the table's dictionary.
fn zstd_with_dict(ctx: &Ctx<'_>, mut source: &[u8], len: usize, dict: &[u8]) -> Result<Vec<u8>, Error> {
    use ruzstd::decoding::{BlockDecodingStrategy, FrameDecoder};
    let (dictionary, force) = zstd_dictionary(ctx, dict)?;
    let id = dictionary.id;
    let mut decoder = FrameDecoder::new();
    decoder.set_max_window_size(zstd_max_window(len, dict.len()));
    decoder.add_dict(dictionary).map_err(|e| ctx.err(e.to_string()))?;
    decoder.init(&mut source).map_err(|e| ctx.err(e.to_string()))?;
    if force {
        decoder.force_dict(id).map_err(|e| ctx.err(e.to_string()))?;
    }
    let mut out = Vec::with_capacity(len);
    while !decoder.is_finished() {
        decoder
            .decode_blocks(&mut source, BlockDecodingStrategy::UptoBytes(64 << 10))
            .map_err(|e| ctx.err(e.to_string()))?;
        if let Some(chunk) = decoder.collect() {
            out.extend_from_slice(&chunk);
        }
        if out.len() > len {
            break;
        }
    }
    if let Some(chunk) = decoder.collect() {
        out.extend_from_slice(&chunk);
    }
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

    /// One buffer reused across blocks of both types and of shrinking and
    /// growing sizes holds exactly each block's bytes; a block that fails
    /// is an error.
    #[test]
    fn decompress_into_reuses_one_buffer() {
        let mut out = b"stale bytes from an earlier, longer block".repeat(50);
        for n in [700usize, 35, 2000, 1] {
            let text: Vec<u8> = (0..n).map(|i| (i % 13) as u8).collect();
            let s = snap::raw::Encoder::new().compress_vec(&text).unwrap();
            let mut l = Vec::new();
            put_varint64(&mut l, text.len() as u64);
            l.extend(lz4_flex::block::compress(&text));
            for (t, data) in [(1u8, &s), (4, &l)] {
                let mut budget = ReadBudget::with_limit(1 << 20);
                decompress_into(t, data, 7, &BlockKind::Data, 0, &mut budget, &[], &mut out).unwrap();
                assert_eq!(out, text, "type {t}, {n} bytes");
            }
        }
        let mut budget = ReadBudget::with_limit(1 << 20);
        let mut bad = Vec::new();
        put_varint64(&mut bad, 100);
        bad.extend([0xf0, 1, 2]);
        assert!(decompress_into(4, &bad, 7, &BlockKind::Data, 0, &mut budget, &[], &mut out).is_err());
    }

    /// `raw`, a zlib or BZip2 stream of `text`, decompresses with the
    /// varint size (format_version 5) and without (format_version 1); a
    /// wrong size, or one no stream reaches, is a one-line error; garbage
    /// after the size is an error.
    fn check_optionally_sized(type_byte: u8, text: &[u8], raw: &[u8]) {
        let framed = |len: u64, payload: &[u8]| {
            let mut f = Vec::new();
            put_varint64(&mut f, len);
            f.extend(payload);
            f
        };
        assert_eq!(ok(type_byte, &framed(text.len() as u64, raw), 5).unwrap(), text);
        assert_eq!(ok(type_byte, raw, 1).unwrap(), text);
        for declared in [text.len() as u64 + 1, text.len() as u64 - 1, 1 << 30] {
            let e = ok(type_byte, &framed(declared, raw), 5).unwrap_err().to_string();
            assert!(
                !e.contains('\n') && (e.contains("size") || e.contains("limit")),
                "{e}"
            );
        }
        assert!(ok(type_byte, &framed(100, b"BZh9garbage garbage"), 5).is_err());
    }

    #[test]
    fn zlib_raw_deflate_round_trip() {
        use std::io::Write;
        let text = b"abcabcabcabc-zlib-zlib".repeat(50);
        let mut enc = flate2::write::DeflateEncoder::new(Vec::new(), flate2::Compression::default());
        enc.write_all(&text).unwrap();
        check_optionally_sized(2, &text, &enc.finish().unwrap());
    }

    /// Without a size prefix (format_version 1), a zlib block is decoded no
    /// further than the budget allows: an error naming the budget, after at
    /// most one byte past what was left.
    #[test]
    fn unsized_zlib_stops_at_the_budget() {
        use std::io::Write;
        let zeros = vec![0u8; 1 << 20];
        let mut enc = flate2::write::DeflateEncoder::new(Vec::new(), flate2::Compression::best());
        enc.write_all(&zeros).unwrap();
        let block = enc.finish().unwrap();
        let mut budget = ReadBudget::with_limit(4096);
        let e = decompress(0x02, &block, 1, &BlockKind::Index, 9, &mut budget).unwrap_err();
        assert!(matches!(e, Error::BudgetExceeded { .. }), "{e}");
        assert_eq!(budget.used(), 0);
        // With room, the same block decodes whole and is charged.
        let mut budget = ReadBudget::with_limit(2 << 20);
        let out = decompress(0x02, &block, 1, &BlockKind::Index, 9, &mut budget).unwrap();
        assert_eq!(out, zeros);
        assert_eq!(budget.used(), 1 << 20);
    }

    /// A ZSTD block as RocksDB frames it: `len` zero bytes in RLE blocks,
    /// the varint size `declared`, and the frame's content size `in_frame`;
    /// the window as libzstd sizes it, to the content (1 KiB to 128 KiB).
    fn zstd_rle(len: usize, declared: u64, in_frame: u64) -> Vec<u8> {
        zstd_rle_window(len, declared, in_frame, len.clamp(1 << 10, 128 << 10))
    }

    /// [`zstd_rle`] with a window of `window` bytes (a power of two from
    /// 1 KiB) in its header.
    fn zstd_rle_window(len: usize, declared: u64, in_frame: u64, window: usize) -> Vec<u8> {
        let mut out = Vec::new();
        put_varint64(&mut out, declared);
        out.extend(0xFD2F_B528u32.to_le_bytes());
        let window_log = window.next_power_of_two().trailing_zeros() as u8;
        out.extend([0xC0, (window_log - 10) << 3]);
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
        // A header asking for a window its content cannot use (128 MiB
        // around 16 bytes) is refused before the window is allocated.
        let e = ok(7, &zstd_rle_window(16, 16, 16, 128 << 20), 7).unwrap_err();
        assert!(e.to_string().contains("window"), "{e}");
        assert_eq!(
            ok(7, &zstd_rle_window(16, 16, 16, 1 << 10), 7).unwrap(),
            vec![0; 16]
        );
    }

    #[test]
    fn bzip2_round_trip_and_bounds() {
        use std::io::Write;
        let text = b"bzip2 bzip2 block block ".repeat(100);
        let mut enc = bzip2::write::BzEncoder::new(Vec::new(), bzip2::Compression::best());
        enc.write_all(&text).unwrap();
        check_optionally_sized(3, &text, &enc.finish().unwrap());
    }

    #[test]
    fn dictionaries_are_history_before_the_block() {
        // LZ4 with a dictionary: the block refers into it.
        let dict = b"the dictionary holds this sentence. ".repeat(4);
        let text = b"the dictionary holds this sentence. and more".to_vec();
        let mut framed = Vec::new();
        put_varint64(&mut framed, text.len() as u64);
        framed.extend(lz4_flex::block::compress_with_dict(&text, &dict));
        let data = |d: &[u8]| {
            decompress_with_dict(
                4,
                &framed,
                5,
                &BlockKind::Data,
                0,
                &mut ReadBudget::unlimited(),
                d,
            )
        };
        assert_eq!(data(&dict).unwrap(), text);
        assert!(data(&[]).is_err() || data(&[]).unwrap() != text);
        // zlib with a dictionary: tests/wild.rs (RocksDB's blocks).
        // A ZSTD dictionary that is not one (bad magic is raw content;
        // a truncated trained dictionary is an error).
        let mut trained = 0xEC30_A437u32.to_le_bytes().to_vec();
        trained.extend([1, 0, 0, 0, 0xff]);
        let e = decompress_with_dict(
            7,
            &zstd_rle(16, 16, 16),
            7,
            &BlockKind::Data,
            3,
            &mut ReadBudget::unlimited(),
            &trained,
        )
        .unwrap_err();
        assert!(e.to_string().contains("bad ZSTD dictionary"), "{e}");
        assert_eq!(
            decompress_with_dict(
                7,
                &zstd_rle(16, 16, 16),
                7,
                &BlockKind::Data,
                3,
                &mut ReadBudget::unlimited(),
                b"raw"
            )
            .unwrap(),
            vec![0; 16]
        );
    }

    #[test]
    fn hostile_sizes_are_refused_without_allocating() {
        let mut b = Vec::new();
        put_varint64(&mut b, 1 << 40);
        b.extend([0u8; 4]);
        for t in [2u8, 3, 4, 7] {
            assert!(ok(t, &b, 7).is_err());
            let dict = b"dictionary";
            let mut budget = ReadBudget::unlimited();
            assert!(decompress_with_dict(t, &b, 7, &BlockKind::Data, 0, &mut budget, dict).is_err());
            assert_eq!(budget.used(), 0);
        }
        assert!(ok(1, &[0xff, 0xff, 0xff, 0xff, 0x0f], 7).is_err());
        assert!(matches!(
            ok(6, b"x", 7),
            Err(Error::UnsupportedCompression { .. })
        ));
        assert!(matches!(
            ok(0x80, b"x", 7),
            Err(Error::UnsupportedCompression { .. })
        ));
    }
}
