//! A flat description of a table's filter, for `ribbon sst info`: as text
//! lines or as JSON.
//!
//! The estimates use RocksDB's own formulas as ported in `ribbon`
//! (`FastLocalBloomImpl::EstimatedFpRate`, `LegacyLocalityBloomImpl::EstimatedFpRate`
//! from `util/bloom_impl.h`; Ribbon's rate from its layout).

use crate::filter::Filter;
use crate::table::SstFile;
use ribbon::bloom::fast_local::FastLocalBloomImpl;
use ribbon::bloom::legacy::LegacyLocalityBloomImpl;
use ribbon::format::FilterDescription;
use std::fmt::Write as _;

/// What `info` reports about one table.
#[derive(Debug, Clone, PartialEq)]
pub struct TableInfo {
    /// Footer format_version.
    pub format_version: u32,
    /// Checksum type name (`kCRC32c`...).
    pub checksum_type: &'static str,
    /// `none`, `full`, `partitioned`, `obsolete` (the block-based filter
    /// RocksDB 11.8 ignores) or `unknown-policy`.
    pub filter_layout: &'static str,
    /// Filter partitions (0 unless partitioned).
    pub partitions: usize,
    /// `Standard128Ribbon`, `FastLocalBloom`, `LegacyBloom`, `AlwaysFalse`,
    /// `AlwaysTrue`, `none`, or a mix (`Standard128Ribbon×7+AlwaysFalse×1`).
    pub filter_kind: String,
    /// `rocksdb.filter.policy`.
    pub policy_name: Option<String>,
    /// The filter's metaindex name.
    pub filter_block_name: Option<String>,
    /// Bytes of filter blocks (all partitions, trailers excluded).
    pub filter_bytes: u64,
    /// `rocksdb.filter.size` (includes a partitioned filter's index).
    pub filter_size_property: Option<u64>,
    /// `rocksdb.num.entries`.
    pub num_entries: Option<u64>,
    /// `rocksdb.num.filter_entries` (keys and prefixes added).
    pub num_filter_entries: Option<u64>,
    /// Filter bits per filter entry (or per table entry when the filter
    /// entry count is missing).
    pub bits_per_key: Option<f64>,
    /// Filter bits per table entry (`rocksdb.num.entries`).
    pub bits_per_entry: Option<f64>,
    /// Distinct Ribbon seeds.
    pub seeds: Vec<u32>,
    /// Ribbon blocks (sum over partitions), or Bloom cache lines.
    pub blocks: u64,
    /// Distinct Bloom probe counts.
    pub probes: Vec<i32>,
    /// Expected false-positive rate (Ribbon: from its layout; Bloom:
    /// estimated from bytes, probes and the entry count).
    pub expected_fp_rate: Option<f64>,
    /// Whether whole keys are in the filter.
    pub whole_key_filtering: bool,
    /// Prefix extractor name, when there is one.
    pub prefix_extractor: Option<String>,
    /// Comparator name.
    pub comparator: Option<String>,
    /// Index type name.
    pub index_type: Option<String>,
    /// `rocksdb.compression`.
    pub compression: Option<String>,
    /// `rocksdb.data.size`.
    pub data_size: Option<u64>,
    /// `rocksdb.num.data.blocks`.
    pub num_data_blocks: Option<u64>,
    /// `rocksdb.column.family.name`.
    pub column_family: Option<String>,
}

impl TableInfo {
    /// Describes `sst`.
    pub fn new(sst: &SstFile) -> Self {
        let props = sst.properties();
        let summary = sst.filter().summary();
        let (layout, partitions) = match sst.filter() {
            Filter::None => ("none", 0),
            Filter::Obsolete { .. } => ("obsolete", 0),
            Filter::UnknownPolicy { .. } => ("unknown-policy", 0),
            Filter::Full { .. } => ("full", 0),
            Filter::Partitioned { partitions, .. } => ("partitioned", partitions.len()),
        };
        let entries = props
            .num_filter_entries()
            .filter(|&n| n > 0)
            .or(props.num_entries().filter(|&n| n > 0));
        let mut seeds = Vec::new();
        let mut probes = Vec::new();
        let mut blocks = 0u64;
        let mut fp_sum = 0.0;
        let mut fp_weight = 0.0;
        let total_bytes = summary.bytes.max(1) as f64;
        for (d, bytes) in summary.descriptions.iter().zip(sst.filter().blocks()) {
            // Keys per partition are unknown: share them out by size.
            let keys = entries.map(|n| n as f64 * bytes.len() as f64 / total_bytes);
            let fp = match d {
                FilterDescription::Standard128Ribbon {
                    seed,
                    num_blocks,
                    expected_fp_rate,
                    ..
                } => {
                    if !seeds.contains(seed) {
                        seeds.push(*seed);
                    }
                    blocks += u64::from(*num_blocks);
                    Some(*expected_fp_rate)
                }
                FilterDescription::FastLocalBloom {
                    data_bytes,
                    num_probes,
                } => {
                    if !probes.contains(num_probes) {
                        probes.push(*num_probes);
                    }
                    blocks += (*data_bytes / 64) as u64;
                    keys.filter(|&k| k >= 1.0).map(|k| {
                        FastLocalBloomImpl::estimated_fp_rate(k as usize, *data_bytes, *num_probes, 64)
                    })
                }
                FilterDescription::LegacyBloom {
                    data_bytes,
                    num_probes,
                    num_lines,
                } => {
                    if !probes.contains(num_probes) {
                        probes.push(*num_probes);
                    }
                    blocks += u64::from(*num_lines);
                    keys.filter(|&k| k >= 1.0).map(|k| {
                        LegacyLocalityBloomImpl::estimated_fp_rate(k as usize, *data_bytes, *num_probes)
                    })
                }
                FilterDescription::AlwaysFalse => Some(0.0),
                FilterDescription::AlwaysTrue => Some(1.0),
            };
            let w = keys.unwrap_or(bytes.len() as f64);
            match fp {
                Some(fp) if fp.is_finite() => {
                    fp_sum += fp * w;
                    fp_weight += w;
                }
                _ => fp_weight = f64::NAN,
            }
        }
        let expected_fp_rate = (fp_weight > 0.0).then(|| fp_sum / fp_weight);
        TableInfo {
            format_version: sst.footer().format_version,
            checksum_type: sst.footer().checksum_type.name(),
            filter_layout: layout,
            partitions,
            filter_kind: summary.kind_label(),
            policy_name: props.filter_policy(),
            filter_block_name: sst.filter_block_name().map(str::to_string),
            filter_bytes: summary.bytes,
            filter_size_property: props.filter_size(),
            num_entries: props.num_entries(),
            num_filter_entries: props.num_filter_entries(),
            bits_per_key: entries
                .filter(|_| summary.bytes > 0)
                .map(|n| summary.bytes as f64 * 8.0 / n as f64),
            bits_per_entry: props
                .num_entries()
                .filter(|&n| n > 0 && summary.bytes > 0)
                .map(|n| summary.bytes as f64 * 8.0 / n as f64),
            seeds,
            blocks,
            probes,
            expected_fp_rate,
            whole_key_filtering: sst.whole_key_filtering(),
            prefix_extractor: sst.prefix_extractor().map(|p| p.to_string()),
            comparator: props.comparator(),
            index_type: props.index_type().map(|t| t.name()),
            compression: props.compression().map(|c| compression_label(&c)),
            data_size: props.data_size(),
            num_data_blocks: props.num_data_blocks(),
            column_family: props.column_family_name(),
        }
    }

    /// The filter family for a summary table: `Ribbon`, `Bloom` (fast
    /// local), `LegacyBloom`, `mixed`, `none`, or the layout when the
    /// filter is not queryable.
    pub fn family(&self) -> &'static str {
        match self.filter_layout {
            "none" => return "none",
            "obsolete" => return "obsolete",
            "unknown-policy" => return "unknown",
            _ => {}
        }
        let k = &self.filter_kind;
        let has = |s: &str| k.contains(s);
        match (has("Ribbon"), has("FastLocalBloom"), has("LegacyBloom")) {
            (true, false, false) => "Ribbon",
            (false, true, false) => "Bloom",
            (false, false, true) => "LegacyBloom",
            (false, false, false) => "empty",
            _ => "mixed",
        }
    }

    /// `key: value` lines.
    pub fn to_text(&self) -> String {
        let mut s = String::new();
        let opt = |v: &Option<String>| v.clone().unwrap_or_else(|| "-".into());
        let num = |v: Option<u64>| v.map_or_else(|| "-".into(), |n| n.to_string());
        let _ = writeln!(s, "format_version: {}", self.format_version);
        let _ = writeln!(s, "checksum: {}", self.checksum_type);
        let _ = writeln!(
            s,
            "filter: {} {}{}",
            self.filter_layout,
            self.filter_kind,
            if self.filter_layout == "partitioned" {
                format!(" ({} partitions)", self.partitions)
            } else {
                String::new()
            }
        );
        let _ = writeln!(s, "filter policy: {}", opt(&self.policy_name));
        let _ = writeln!(s, "filter block: {}", opt(&self.filter_block_name));
        let _ = writeln!(
            s,
            "filter bytes: {} (rocksdb.filter.size {})",
            self.filter_bytes,
            num(self.filter_size_property)
        );
        let _ = writeln!(
            s,
            "entries: {} (filter entries {})",
            num(self.num_entries),
            num(self.num_filter_entries)
        );
        let _ = writeln!(
            s,
            "bits per key: {} per filter entry, {} per table entry",
            self.bits_per_key
                .map_or_else(|| "-".into(), |b| format!("{b:.3}")),
            self.bits_per_entry
                .map_or_else(|| "-".into(), |b| format!("{b:.3}"))
        );
        if !self.seeds.is_empty() {
            let seeds: Vec<String> = self.seeds.iter().map(u32::to_string).collect();
            let _ = writeln!(s, "ribbon seed: {}  blocks: {}", seeds.join(","), self.blocks);
        }
        if !self.probes.is_empty() {
            let probes: Vec<String> = self.probes.iter().map(i32::to_string).collect();
            let _ = writeln!(s, "bloom probes: {}  lines: {}", probes.join(","), self.blocks);
        }
        let _ = writeln!(
            s,
            "expected fp rate: {}",
            self.expected_fp_rate
                .map_or_else(|| "-".into(), |f| format!("{f:.6} (1 in {:.1})", 1.0 / f))
        );
        let _ = writeln!(s, "whole key filtering: {}", self.whole_key_filtering);
        let _ = writeln!(s, "prefix extractor: {}", opt(&self.prefix_extractor));
        let _ = writeln!(s, "comparator: {}", opt(&self.comparator));
        let _ = writeln!(s, "index type: {}", opt(&self.index_type));
        let _ = writeln!(s, "compression: {}", opt(&self.compression));
        let _ = writeln!(
            s,
            "data: {} bytes in {} blocks",
            num(self.data_size),
            num(self.num_data_blocks)
        );
        if let Some(cf) = &self.column_family {
            let _ = writeln!(s, "column family: {cf}");
        }
        s
    }

    /// A JSON object (one line).
    pub fn to_json(&self) -> String {
        let mut o = JsonObject::default();
        o.num("format_version", Some(self.format_version as f64));
        o.str("checksum", Some(self.checksum_type));
        o.str("filter_layout", Some(self.filter_layout));
        o.num("partitions", Some(self.partitions as f64));
        o.str("filter_kind", Some(&self.filter_kind));
        o.str("filter_family", Some(self.family()));
        o.str("filter_policy", self.policy_name.as_deref());
        o.str("filter_block", self.filter_block_name.as_deref());
        o.num("filter_bytes", Some(self.filter_bytes as f64));
        o.num(
            "filter_size_property",
            self.filter_size_property.map(|n| n as f64),
        );
        o.num("num_entries", self.num_entries.map(|n| n as f64));
        o.num("num_filter_entries", self.num_filter_entries.map(|n| n as f64));
        o.num("bits_per_key", self.bits_per_key);
        o.num("bits_per_entry", self.bits_per_entry);
        o.raw(
            "ribbon_seeds",
            &format!(
                "[{}]",
                self.seeds
                    .iter()
                    .map(u32::to_string)
                    .collect::<Vec<_>>()
                    .join(",")
            ),
        );
        o.num("blocks", Some(self.blocks as f64));
        o.raw(
            "bloom_probes",
            &format!(
                "[{}]",
                self.probes
                    .iter()
                    .map(i32::to_string)
                    .collect::<Vec<_>>()
                    .join(",")
            ),
        );
        o.num("expected_fp_rate", self.expected_fp_rate);
        o.raw(
            "whole_key_filtering",
            if self.whole_key_filtering { "true" } else { "false" },
        );
        o.str("prefix_extractor", self.prefix_extractor.as_deref());
        o.str("comparator", self.comparator.as_deref());
        o.str("index_type", self.index_type.as_deref());
        o.str("compression", self.compression.as_deref());
        o.num("data_size", self.data_size.map(|n| n as f64));
        o.num("num_data_blocks", self.num_data_blocks.map(|n| n as f64));
        o.str("column_family", self.column_family.as_deref());
        o.finish()
    }
}

/// `rocksdb.compression` made readable: format_version 7 stores the
/// compression manager's name and the types used as hex bytes
/// (`BuiltinV2;07;` is ZSTD); older versions store the type's name.
pub fn compression_label(raw: &str) -> String {
    let mut fields = raw.split(';');
    let (Some(manager), Some(types)) = (fields.next(), fields.next()) else {
        return raw.to_string();
    };
    if types.len() % 2 != 0 || !types.bytes().all(|b| b.is_ascii_hexdigit()) {
        return raw.to_string();
    }
    let names: Vec<&str> = (0..types.len())
        .step_by(2)
        .filter_map(|i| u8::from_str_radix(&types[i..i + 2], 16).ok())
        .map(crate::compression::name)
        .collect();
    let names = if names.is_empty() {
        "NoCompression".to_string()
    } else {
        names.join("+")
    };
    format!("{names} ({manager})")
}

/// A minimal JSON object writer.
#[derive(Default)]
pub struct JsonObject {
    out: String,
}

impl JsonObject {
    fn key(&mut self, k: &str) {
        self.out.push(if self.out.is_empty() { '{' } else { ',' });
        self.out.push_str(&json_string(k));
        self.out.push(':');
    }

    /// A string member (`null` when `None`).
    pub fn str(&mut self, k: &str, v: Option<&str>) {
        self.key(k);
        match v {
            Some(v) => self.out.push_str(&json_string(v)),
            None => self.out.push_str("null"),
        }
    }

    /// A number member (`null` when `None` or not finite).
    pub fn num(&mut self, k: &str, v: Option<f64>) {
        self.key(k);
        match v {
            Some(v) if v.is_finite() => {
                if v.fract() == 0.0 && v.abs() < 9.0e15 {
                    let _ = write!(self.out, "{}", v as i64);
                } else {
                    let _ = write!(self.out, "{v}");
                }
            }
            _ => self.out.push_str("null"),
        }
    }

    /// A member whose value is already JSON.
    pub fn raw(&mut self, k: &str, json: &str) {
        self.key(k);
        self.out.push_str(json);
    }

    /// The object's text.
    pub fn finish(mut self) -> String {
        if self.out.is_empty() {
            self.out.push('{');
        }
        self.out.push('}');
        self.out
    }
}

/// `s` as a JSON string literal.
pub fn json_string(s: &str) -> String {
    let mut out = String::with_capacity(s.len() + 2);
    out.push('"');
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            c if (c as u32) < 0x20 => {
                let _ = write!(out, "\\u{:04x}", c as u32);
            }
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn compression_labels() {
        assert_eq!(compression_label("BuiltinV2;07;"), "ZSTD (BuiltinV2)");
        assert_eq!(compression_label("BuiltinV2;;"), "NoCompression (BuiltinV2)");
        assert_eq!(compression_label("BuiltinV2;0104;"), "Snappy+LZ4 (BuiltinV2)");
        assert_eq!(compression_label("Snappy"), "Snappy");
        assert_eq!(compression_label("x;zz;"), "x;zz;");
    }

    #[test]
    fn json_escapes() {
        assert_eq!(json_string("a\"b\\c\n\u{1}"), "\"a\\\"b\\\\c\\n\\u0001\"");
        let mut o = JsonObject::default();
        o.num("n", Some(3.0));
        o.num("f", Some(0.5));
        o.str("s", None);
        assert_eq!(o.finish(), "{\"n\":3,\"f\":0.5,\"s\":null}");
    }
}
