//! A flat description of a table and its filter ([`TableInfo`]): data for
//! a tool to render (the `ribbon` tool prints it as text or JSON).
//!
//! The FP-rate estimate is RocksDB's, as `ribbon` ports it
//! ([`ribbon::plugin::Description::expected_fp_rate`]).

use crate::filter::Filter;
use crate::table::SstFile;
use ribbon::rocksdb::format::FilterDescription;

/// What `info` reports about one table.
#[derive(Debug, Clone, PartialEq)]
pub struct TableInfo {
    /// Footer format_version.
    pub format_version: u32,
    /// Checksum type, RocksDB's enumerator name (`kCRC32c`, `kXXH3`, ...).
    pub checksum_type: &'static str,
    /// `none`, `full`, `partitioned`, `block-based` (RocksDB before 7.0;
    /// RocksDB 7 and later ignore it), `obsolete` (a block-based filter of
    /// a policy other than the built-in one) or `unknown-policy`.
    pub filter_layout: &'static str,
    /// Bloom filters in a block-based filter block (one per
    /// `2^base_lg` bytes of data blocks; 0 for other layouts).
    pub block_filters: usize,
    /// Bytes of the table's compression dictionary (0 without one).
    pub compression_dict_bytes: u64,
    /// Filter partitions (0 unless partitioned).
    pub partitions: usize,
    /// `Standard128Ribbon`, `FastLocalBloom`, `LegacyBloom`, `AlwaysFalse`,
    /// `AlwaysTrue`, `none`, or a mix (`Standard128Ribbon×7+AlwaysFalse×1`);
    /// `obsolete`, or for a filter of a policy this reader does not know
    /// (an application's own) the compatibility name it is stored under.
    pub filter_kind: String,
    /// `rocksdb.filter.policy`.
    pub policy_name: Option<String>,
    /// The filter's metaindex name.
    pub filter_block_name: Option<String>,
    /// Bytes of filter blocks (all partitions, trailers excluded; for a
    /// filter of an unknown policy, its block's size, or
    /// `rocksdb.filter.size` when it is partitioned).
    pub filter_bytes: u64,
    /// `rocksdb.filter.size` (includes a partitioned filter's index).
    pub filter_size_property: Option<u64>,
    /// `rocksdb.num.entries`.
    pub num_entries: Option<u64>,
    /// `rocksdb.num.filter_entries` (keys and prefixes added).
    pub num_filter_entries: Option<u64>,
    /// Filter bits per filter entry (`rocksdb.num.filter_entries`: the keys
    /// and prefixes added to the filter); `None` when the property is
    /// missing or zero.
    pub bits_per_filter_entry: Option<f64>,
    /// Filter bits per table entry (`rocksdb.num.entries`); `None` when the
    /// property is missing or zero.
    pub bits_per_table_entry: Option<f64>,
    /// Distinct Ribbon seeds.
    pub seeds: Vec<u32>,
    /// Ribbon blocks of 128 slots (sum over partitions).
    pub ribbon_blocks: u64,
    /// Bloom filter cache lines (sum over partitions).
    pub bloom_cache_lines: u64,
    /// Distinct Bloom probe counts.
    pub probes: Vec<i32>,
    /// Expected false-positive rate (Ribbon: from its layout; Bloom:
    /// estimated from bytes, probes and the filter entry count, or the
    /// table entry count when that is missing); `None` when it cannot be
    /// estimated.
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
            Filter::BlockBased { .. } => ("block-based", 0),
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
        let mut ribbon_blocks = 0u64;
        let mut bloom_cache_lines = 0u64;
        let mut fp_sum = 0.0;
        let mut fp_weight = 0.0;
        let total_bytes = summary.bytes.max(1) as f64;
        for (d, bytes) in summary.descriptions.iter().zip(sst.filter().blocks()) {
            // Keys per partition are unknown: share them out by size.
            let keys = entries.map(|n| n as f64 * bytes.len() as f64 / total_bytes);
            match d.builtin() {
                Some(FilterDescription::Standard128Ribbon { seed, num_blocks, .. }) => {
                    if !seeds.contains(seed) {
                        seeds.push(*seed);
                    }
                    ribbon_blocks += u64::from(*num_blocks);
                }
                Some(FilterDescription::FastLocalBloom {
                    data_bytes,
                    num_probes,
                }) => {
                    if !probes.contains(num_probes) {
                        probes.push(*num_probes);
                    }
                    bloom_cache_lines += (*data_bytes / 64) as u64;
                }
                Some(FilterDescription::LegacyBloom {
                    num_probes,
                    num_lines,
                    ..
                }) => {
                    if !probes.contains(num_probes) {
                        probes.push(*num_probes);
                    }
                    bloom_cache_lines += u64::from(*num_lines);
                }
                Some(FilterDescription::AlwaysFalse | FilterDescription::AlwaysTrue) | None => {}
            }
            // A Bloom estimate needs the entry count; Ribbon's does not.
            let fp = match (d.builtin(), keys) {
                (
                    Some(FilterDescription::FastLocalBloom { .. } | FilterDescription::LegacyBloom { .. }),
                    k,
                ) => k.filter(|&k| k >= 1.0).map(|k| d.expected_fp_rate(k as usize)),
                (_, k) => Some(d.expected_fp_rate(k.unwrap_or(0.0) as usize)),
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
        let mut expected_fp_rate = (fp_weight > 0.0).then(|| fp_sum / fp_weight);
        let mut block_filters = 0;
        if let Some(b) = sst.filter().block_based() {
            block_filters = b.len();
            probes = b.probe_counts().iter().map(|&(k, _)| i32::from(k)).collect();
            // Keys per filter are unknown: the table's keys over all Bloom
            // bits, with the most used probe count (the standard Bloom
            // estimate, as for partitions).
            let bits = b.bloom_bits() as f64;
            expected_fp_rate = match (entries, probes.first()) {
                (Some(n), Some(&k)) if bits > 0.0 => {
                    Some((1.0 - (-(f64::from(k)) * n as f64 / bits).exp()).powi(k))
                }
                _ => None,
            };
        }
        // A filter of a policy this reader does not know is not read: its
        // kind is its compatibility name, its bytes the block's (a
        // partitioned one's, rocksdb.filter.size).
        let (filter_kind, filter_bytes) = match sst.filter() {
            Filter::UnknownPolicy {
                compatibility_name,
                handle,
                partitioned,
            } => (
                compatibility_name.clone(),
                if *partitioned {
                    props.filter_size().unwrap_or(0)
                } else {
                    handle.size
                },
            ),
            Filter::Obsolete { .. } => ("obsolete".to_string(), summary.bytes),
            _ => (summary.kind_label(), summary.bytes),
        };
        TableInfo {
            format_version: sst.footer().format_version,
            checksum_type: sst.footer().checksum_type.name(),
            filter_layout: layout,
            block_filters,
            compression_dict_bytes: sst.compression_dictionary().len() as u64,
            partitions,
            filter_kind,
            policy_name: props.filter_policy(),
            filter_block_name: sst.filter_block_name().map(str::to_string),
            filter_bytes,
            filter_size_property: props.filter_size(),
            num_entries: props.num_entries(),
            num_filter_entries: props.num_filter_entries(),
            bits_per_filter_entry: bits_per(props.num_filter_entries(), filter_bytes),
            bits_per_table_entry: bits_per(props.num_entries(), filter_bytes),
            seeds,
            ribbon_blocks,
            bloom_cache_lines,
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
    /// local), `LegacyBloom`, `BlockBasedBloom` (RocksDB before 7.0),
    /// `mixed`, `none`, or the layout when the filter is not queryable.
    pub fn family(&self) -> &'static str {
        match self.filter_layout {
            "none" => return "none",
            "obsolete" => return "obsolete",
            "block-based" => return "BlockBasedBloom",
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

/// Filter bits per entry, when there are entries and filter bytes.
fn bits_per(entries: Option<u64>, filter_bytes: u64) -> Option<f64> {
    entries
        .filter(|&n| n > 0 && filter_bytes > 0)
        .map(|n| filter_bytes as f64 * 8.0 / n as f64)
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
}

/// A table's [`TableInfo`] under the field names of `ribbon sst info --json`
/// (the CLI's, the C library's `ribbon_sst_info_json`): one name per
/// meaning, numbers that cannot be given (not finite) as `None`. With the
/// `serde` feature it serializes to exactly that object.
#[cfg_attr(feature = "serde", derive(serde::Serialize))]
#[derive(Debug, Clone, PartialEq)]
#[allow(missing_docs)] // each field is the `TableInfo` field of that meaning
pub struct TableReport<'a> {
    pub format_version: u32,
    pub checksum: &'static str,
    pub filter_layout: &'static str,
    pub partitions: usize,
    pub block_filters: usize,
    pub filter_kind: &'a str,
    pub filter_family: &'static str,
    pub filter_policy: Option<&'a str>,
    pub filter_block: Option<&'a str>,
    pub filter_bytes: u64,
    pub filter_size_property: Option<u64>,
    pub num_entries: Option<u64>,
    pub num_filter_entries: Option<u64>,
    pub bits_per_filter_entry: Option<f64>,
    pub bits_per_table_entry: Option<f64>,
    pub ribbon_seeds: &'a [u32],
    pub ribbon_blocks: u64,
    pub bloom_probes: &'a [i32],
    pub bloom_cache_lines: u64,
    pub expected_fp_rate: Option<f64>,
    pub whole_key_filtering: bool,
    pub prefix_extractor: Option<&'a str>,
    pub comparator: Option<&'a str>,
    pub index_type: Option<&'a str>,
    pub compression: Option<&'a str>,
    pub compression_dict_bytes: u64,
    pub data_size: Option<u64>,
    pub num_data_blocks: Option<u64>,
    pub column_family: Option<&'a str>,
}

impl TableInfo {
    /// This table under the field names of `ribbon sst info --json`.
    pub fn report(&self) -> TableReport<'_> {
        let finite = |x: Option<f64>| x.filter(|v| v.is_finite());
        TableReport {
            format_version: self.format_version,
            checksum: self.checksum_type,
            filter_layout: self.filter_layout,
            partitions: self.partitions,
            block_filters: self.block_filters,
            filter_kind: &self.filter_kind,
            filter_family: self.family(),
            filter_policy: self.policy_name.as_deref(),
            filter_block: self.filter_block_name.as_deref(),
            filter_bytes: self.filter_bytes,
            filter_size_property: self.filter_size_property,
            num_entries: self.num_entries,
            num_filter_entries: self.num_filter_entries,
            bits_per_filter_entry: finite(self.bits_per_filter_entry),
            bits_per_table_entry: finite(self.bits_per_table_entry),
            ribbon_seeds: &self.seeds,
            ribbon_blocks: self.ribbon_blocks,
            bloom_probes: &self.probes,
            bloom_cache_lines: self.bloom_cache_lines,
            expected_fp_rate: finite(self.expected_fp_rate),
            whole_key_filtering: self.whole_key_filtering,
            prefix_extractor: self.prefix_extractor.as_deref(),
            comparator: self.comparator.as_deref(),
            index_type: self.index_type.as_deref(),
            compression: self.compression.as_deref(),
            compression_dict_bytes: self.compression_dict_bytes,
            data_size: self.data_size,
            num_data_blocks: self.num_data_blocks,
            column_family: self.column_family.as_deref(),
        }
    }
}
