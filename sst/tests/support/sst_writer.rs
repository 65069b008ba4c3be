//! A small writer of block-based SST files, for crafting the shapes the
//! reader must survive: blocks with restart points (or hand-made entries),
//! block trailers with their checksum, meta blocks, and the
//! format_version 5 footer (checksum type byte, varint handles padded to
//! 40 bytes, format_version, magic). It follows RocksDB's
//! `block_builder.cc`, `block_based_table_builder.cc` (`WriteFooter`,
//! `ComputeBuiltinChecksumWithLastByte`) and `table/format.cc`.

use ribbon_sst::checksum::{compute, context_modifier};
use ribbon_sst::coding::put_varint64;
use ribbon_sst::footer::BLOCK_BASED_MAGIC;
use ribbon_sst::{BlockHandle, ChecksumType};

/// `kNoCompression`.
pub const NO_COMPRESSION: u8 = 0;
/// `kZSTD`.
pub const ZSTD: u8 = 7;

/// One block entry as stored: the shared length, the key's new bytes, and
/// the value.
#[derive(Debug, Clone)]
pub struct RawEntry {
    pub shared: usize,
    pub non_shared: Vec<u8>,
    pub value: Vec<u8>,
}

/// A block's contents from stored entries (each length as a varint) and
/// the offsets of the entries that are restart points.
pub fn block_from_raw(entries: &[RawEntry], restart_every: usize) -> Vec<u8> {
    let mut out = Vec::new();
    let mut restarts = Vec::new();
    for (i, e) in entries.iter().enumerate() {
        if i % restart_every.max(1) == 0 {
            restarts.push(out.len() as u32);
        }
        put_varint64(&mut out, e.shared as u64);
        put_varint64(&mut out, e.non_shared.len() as u64);
        put_varint64(&mut out, e.value.len() as u64);
        out.extend(&e.non_shared);
        out.extend(&e.value);
    }
    if restarts.is_empty() {
        restarts.push(0);
    }
    for r in &restarts {
        out.extend(r.to_le_bytes());
    }
    out.extend((restarts.len() as u32).to_le_bytes());
    out
}

/// A block as `BlockBuilder` writes it: keys delta-encoded against the
/// previous key, a restart point every `restart_interval` entries.
pub fn block(entries: &[(Vec<u8>, Vec<u8>)], restart_interval: usize) -> Vec<u8> {
    let mut raw = Vec::new();
    let mut last: &[u8] = &[];
    for (i, (k, v)) in entries.iter().enumerate() {
        let shared = if i % restart_interval == 0 {
            0
        } else {
            k.iter().zip(last).take_while(|(a, b)| a == b).count()
        };
        raw.push(RawEntry {
            shared,
            non_shared: k[shared..].to_vec(),
            value: v.clone(),
        });
        last = k;
    }
    block_from_raw(&raw, restart_interval)
}

/// A handle as an index or metaindex value.
pub fn handle_value(h: BlockHandle) -> Vec<u8> {
    let mut v = Vec::new();
    put_varint64(&mut v, h.offset);
    put_varint64(&mut v, h.size);
    v
}

/// The internal key of `user` (sequence number 1, a value).
pub fn internal_key(user: &[u8]) -> Vec<u8> {
    let mut k = user.to_vec();
    k.extend(((1u64 << 8) | 1).to_le_bytes());
    k
}

/// A varint-encoded property value.
pub fn varint_value(v: u64) -> Vec<u8> {
    let mut out = Vec::new();
    put_varint64(&mut out, v);
    out
}

/// A ZSTD block as RocksDB frames it (the decompressed size as a varint,
/// then the frame): `len` copies of `byte` in RLE blocks of up to 128 KiB,
/// 4 stored bytes each, so 256 MiB takes about 8 KiB.
pub fn zstd_rle(len: usize, byte: u8) -> Vec<u8> {
    let mut out = Vec::new();
    put_varint64(&mut out, len as u64);
    out.extend(0xFD2F_B528u32.to_le_bytes());
    // Frame header descriptor: 8-byte content size, a window descriptor.
    out.push(0xC0);
    // Window of 2^17 bytes (exponent 7).
    out.push(7 << 3);
    out.extend((len as u64).to_le_bytes());
    let mut left = len;
    loop {
        let n = left.min(128 << 10);
        left -= n;
        let last = u32::from(left == 0);
        // Block header: last-block bit, type 1 (RLE), size.
        let header = last | (1 << 1) | ((n as u32) << 3);
        out.extend(&header.to_le_bytes()[..3]);
        out.push(byte);
        if left == 0 {
            break;
        }
    }
    out
}

/// An SST file being written, format_version 5: in memory, or streamed
/// to a file block by block.
#[derive(Debug)]
pub struct SstWriter {
    /// The bytes not yet streamed out (all of them without a sink).
    pub bytes: Vec<u8>,
    pub checksum: ChecksumType,
    sink: Option<std::fs::File>,
    streamed: u64,
}

impl SstWriter {
    pub fn new(checksum: ChecksumType) -> Self {
        Self {
            bytes: Vec::new(),
            checksum,
            sink: None,
            streamed: 0,
        }
    }

    /// A writer that streams each block to `path` as it is added.
    pub fn to_file(path: &std::path::Path, checksum: ChecksumType) -> Self {
        Self {
            sink: Some(std::fs::File::create(path).unwrap()),
            ..Self::new(checksum)
        }
    }

    fn stream_out(&mut self) {
        if let Some(f) = &mut self.sink {
            std::io::Write::write_all(f, &self.bytes).unwrap();
            self.streamed += self.bytes.len() as u64;
            self.bytes.clear();
        }
    }

    /// Appends a block (stored bytes as given) with its trailer: the
    /// compression type and the checksum of both.
    pub fn add_block(&mut self, stored: &[u8], compression: u8) -> BlockHandle {
        let start = self.bytes.len();
        let h = BlockHandle::new(self.streamed + start as u64, stored.len() as u64);
        self.bytes.extend(stored);
        self.bytes.push(compression);
        let covered = &self.bytes[start..];
        let sum = compute(self.checksum, covered).wrapping_add(context_modifier(0, h.offset));
        self.bytes.extend(sum.to_le_bytes());
        self.stream_out();
        h
    }

    /// The properties block: `props` sorted by name, one restart point.
    pub fn add_properties(&mut self, props: &[(&str, Vec<u8>)]) -> BlockHandle {
        let mut entries: Vec<(Vec<u8>, Vec<u8>)> = props
            .iter()
            .map(|(k, v)| (k.as_bytes().to_vec(), v.clone()))
            .collect();
        entries.sort();
        self.add_block(&block(&entries, usize::MAX), NO_COMPRESSION)
    }

    /// The metaindex block (sorted, restart interval 1), then the footer.
    pub fn finish(mut self, meta: &[(&str, BlockHandle)], index: BlockHandle) -> Vec<u8> {
        let mut entries: Vec<(Vec<u8>, Vec<u8>)> = meta
            .iter()
            .map(|(k, h)| (k.as_bytes().to_vec(), handle_value(*h)))
            .collect();
        entries.sort();
        let metaindex = self.add_block(&block(&entries, 1), NO_COMPRESSION);
        self.finish_with_metaindex(metaindex, index)
    }

    /// The footer, pointing at `metaindex` and `index`. Returns the
    /// file's bytes (those not streamed out).
    pub fn finish_with_metaindex(mut self, metaindex: BlockHandle, index: BlockHandle) -> Vec<u8> {
        let mut handles = handle_value(metaindex);
        handles.extend(handle_value(index));
        handles.resize(40, 0);
        self.bytes.push(self.checksum.to_byte());
        self.bytes.extend(handles);
        self.bytes.extend(5u32.to_le_bytes());
        self.bytes.extend(BLOCK_BASED_MAGIC.to_le_bytes());
        self.stream_out();
        self.bytes
    }
}
