//! What an OPTIONS file configures for filters, per column family: the
//! `[CFOptions "NAME"]` and `[TableOptions/BlockBasedTable "NAME"]`
//! sections, read as RocksDB's `RocksDBOptionsParser`
//! (`options/options_parser.cc`) lays them out.
//!
//! Only the settings the doctor judges are kept; each is `None` when the
//! file does not say (an older RocksDB, another writer), and the doctor then
//! says it does not know rather than assume RocksDB's default.

use crate::db::options::section_of;
use ribbon::plugin::balanced_policy::BalancedPolicy;
use ribbon::rocksdb::policy::{CompactionStyle, PolicyKind};
use ribbon::FilterPolicy;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// The configured `filter_policy`.
#[derive(Debug, Clone, PartialEq)]
pub enum ConfiguredPolicy {
    /// `nullptr` or empty: no filters are built, and none are read.
    None,
    /// `rocksdb.BuiltinBloomFilter`: what RocksDB 6.x writes to its OPTIONS
    /// file for any built-in Bloom policy configured in code. RocksDB 7 and
    /// later create `ReadOnlyBuiltinFilterPolicy` from it
    /// (`table/block_based/filter_policy.cc`, `FilterPolicy::
    /// CreateFromString`): every built-in filter is read (its compatibility
    /// name is the built-in family's), and no new filter is built.
    ReadOnlyBuiltin,
    /// A built-in (or `rust.RibbonFilter` / `rust.BloomFilter`) policy with
    /// its bits per key.
    Builtin(FilterPolicy),
    /// `rust.BalancedRibbon:BITS[:LEVEL]`.
    Balanced(BalancedPolicy),
    /// A policy named without its bits per key (RocksDB 9.x writes
    /// `filter_policy=bloomfilter`): the kind is known, the bits are not.
    NameOnly(String),
    /// A policy id the doctor does not know (a user's own policy).
    Unknown(String),
}

impl ConfiguredPolicy {
    /// Parses a `filter_policy` value.
    pub fn parse(value: &str) -> Self {
        let v = value.trim();
        let v = v
            .strip_prefix('{')
            .and_then(|s| s.strip_suffix('}'))
            .map(|s| {
                s.split(';')
                    .find_map(|f| f.trim().strip_prefix("id="))
                    .unwrap_or(s)
            })
            .unwrap_or(v)
            .trim();
        if v.is_empty() || v == "nullptr" {
            return Self::None;
        }
        if v == READ_ONLY_BUILTIN {
            return Self::ReadOnlyBuiltin;
        }
        if v.starts_with(ribbon::plugin::balanced_policy::NAME) {
            return match BalancedPolicy::parse(v) {
                Ok(p) => Self::Balanced(p),
                Err(_) if !v.contains(':') => Self::NameOnly(v.to_string()),
                Err(_) => Self::Unknown(v.to_string()),
            };
        }
        match FilterPolicy::parse_optional(v) {
            Ok(Some(p)) => Self::Builtin(p),
            Ok(None) => Self::None,
            Err(_) if !v.contains(':') && is_builtin_name(v) => Self::NameOnly(v.to_string()),
            Err(_) => Self::Unknown(v.to_string()),
        }
    }

    /// The compatibility name under which RocksDB looks up a table's filter
    /// for this policy (`FilterPolicy::CompatibilityName`); `None` when no
    /// policy is configured or the policy is unknown.
    pub fn compatibility_name(&self) -> Option<&'static str> {
        match self {
            Self::None | Self::Unknown(_) => None,
            Self::Balanced(_) => Some(ribbon::plugin::balanced_policy::COMPATIBILITY_NAME),
            Self::NameOnly(n) if n.starts_with(ribbon::plugin::balanced_policy::NAME) => {
                Some(ribbon::plugin::balanced_policy::COMPATIBILITY_NAME)
            }
            Self::Builtin(_) | Self::NameOnly(_) | Self::ReadOnlyBuiltin => {
                Some(crate::filter::BUILTIN_COMPATIBILITY_NAME)
            }
        }
    }

    /// Whether RocksDB builds filters for new tables under this policy
    /// (`None`: unknown, a policy of the application's own).
    pub fn builds_filters(&self) -> Option<bool> {
        match self {
            Self::None | Self::ReadOnlyBuiltin => Some(false),
            Self::Builtin(p) => Some(p.bits_per_key().millibits_per_key() > 0),
            Self::Balanced(_) | Self::NameOnly(_) => Some(true),
            Self::Unknown(_) => None,
        }
    }

    /// The policy `Name()` RocksDB records in a table's
    /// `rocksdb.filter.policy` property.
    pub fn name(&self) -> Option<String> {
        match self {
            Self::None => None,
            Self::ReadOnlyBuiltin => Some(READ_ONLY_BUILTIN.to_string()),
            Self::Builtin(p) => Some(p.name().to_string()),
            Self::Balanced(_) => Some(ribbon::plugin::balanced_policy::NAME.to_string()),
            Self::NameOnly(n) | Self::Unknown(n) => Some(
                n.split(':')
                    .next()
                    .map(|n| match n {
                        "rocksdb.BloomFilter" => "bloomfilter",
                        "rocksdb.RibbonFilter" => "ribbonfilter",
                        n => n,
                    })
                    .unwrap_or_default()
                    .to_string(),
            ),
        }
    }

    /// The rules that pick each table's filter (Balanced follows
    /// `ribbonfilter`'s), when the bits per key are known.
    pub fn rules(&self) -> Option<FilterPolicy> {
        match self {
            Self::Builtin(p) => Some(*p),
            Self::Balanced(b) => Some(FilterPolicy::ribbon(
                f64::from(b.bits_per_key().millibits_per_key()) / 1000.0,
                b.bloom_before_level(),
            )),
            _ => None,
        }
    }

    /// `bloom_before_level` of a Ribbon policy.
    pub fn bloom_before_level(&self) -> Option<i32> {
        match self {
            Self::Balanced(b) => Some(b.bloom_before_level()),
            Self::Builtin(p) => match p.kind() {
                PolicyKind::Ribbon { bloom_before_level } => Some(bloom_before_level),
                _ => None,
            },
            _ => None,
        }
    }

    /// The id, as an OPTIONS file would say it.
    pub fn id(&self) -> String {
        match self {
            Self::None => "nullptr".to_string(),
            Self::ReadOnlyBuiltin => READ_ONLY_BUILTIN.to_string(),
            Self::Builtin(p) => p.id(),
            Self::Balanced(b) => b.id(),
            Self::NameOnly(n) | Self::Unknown(n) => n.clone(),
        }
    }
}

/// The id of RocksDB's `ReadOnlyBuiltinFilterPolicy`.
pub const READ_ONLY_BUILTIN: &str = "rocksdb.BuiltinBloomFilter";

fn is_builtin_name(v: &str) -> bool {
    matches!(
        v,
        "bloomfilter"
            | "ribbonfilter"
            | "rocksdb.BloomFilter"
            | "rocksdb.RibbonFilter"
            | "rust.BloomFilter"
            | "rust.RibbonFilter"
            | "rocksdb.internal.LegacyBloomFilter"
            | "rocksdb.internal.FastLocalBloomFilter"
            | "rocksdb.internal.Standard128RibbonFilter"
    )
}

/// The filter settings of one column family.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct CfConfig {
    /// `filter_policy` (`None`: not in the file).
    pub filter_policy: Option<ConfiguredPolicy>,
    /// `format_version`.
    pub format_version: Option<i32>,
    /// `whole_key_filtering`.
    pub whole_key_filtering: Option<bool>,
    /// `partition_filters`.
    pub partition_filters: Option<bool>,
    /// `cache_index_and_filter_blocks`.
    pub cache_index_and_filter_blocks: Option<bool>,
    /// `pin_l0_filter_and_index_blocks_in_cache`.
    pub pin_l0_filter_and_index_blocks_in_cache: Option<bool>,
    /// `pin_top_level_index_and_filter`.
    pub pin_top_level_index_and_filter: Option<bool>,
    /// `metadata_cache_options`' `partition_pinning` (`kFallback`, `kAll`,
    /// `kFlushedAndSimilar`, `kNone`).
    pub partition_pinning: Option<String>,
    /// `metadata_cache_options`' `unpartitioned_pinning`.
    pub unpartitioned_pinning: Option<String>,
    /// `no_block_cache`.
    pub no_block_cache: Option<bool>,
    /// `optimize_filters_for_memory`.
    pub optimize_filters_for_memory: Option<bool>,
    /// `prefix_extractor` (`None`: not in the file; `Some("nullptr")`: none).
    pub prefix_extractor: Option<String>,
    /// `optimize_filters_for_hits`.
    pub optimize_filters_for_hits: Option<bool>,
    /// `compaction_style`.
    pub compaction_style: Option<CompactionStyle>,
    /// `num_levels`.
    pub num_levels: Option<u32>,
    /// `table_factory` (filters are block-based-table only).
    pub table_factory: Option<String>,
}

impl CfConfig {
    /// The prefix extractor's name as tables record it
    /// (`rocksdb.prefix.extractor.name`), `None` when there is none.
    pub fn prefix_extractor_name(&self) -> Option<&str> {
        self.prefix_extractor
            .as_deref()
            .filter(|p| !p.is_empty() && *p != "nullptr")
    }

    /// The build context of a table written at `level` (`None`: a flush).
    pub fn build_context(&self, level: Option<i32>) -> ribbon::BuildContext {
        let mut ctx = ribbon::BuildContext::at_level(
            self.format_version.unwrap_or(ribbon::DEFAULT_FORMAT_VERSION),
            level,
        );
        ctx.compaction_style = self.compaction_style.unwrap_or_default();
        ctx.optimize_filters_for_memory = self.optimize_filters_for_memory.unwrap_or(true);
        ctx
    }
}

/// The filter settings of every column family an OPTIONS file names.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Config {
    /// The file read; `None` when the directory has none.
    pub path: Option<PathBuf>,
    /// `rocksdb_version` of the `[Version]` section.
    pub rocksdb_version: Option<String>,
    /// Per column family, by name.
    pub column_families: BTreeMap<String, CfConfig>,
}

impl Config {
    /// The newest `OPTIONS-NNNNNN` of `dir` (none: an empty config).
    pub fn read_dir(dir: &Path) -> Result<Self, crate::db::DbError> {
        let Some(path) = crate::db::OptionsFile::read(dir)?.path else {
            return Ok(Self::default());
        };
        Self::read_file(&path)
    }

    /// Reads the OPTIONS file `path` (at most
    /// [`crate::db::options::MAX_OPTIONS_FILE`] bytes).
    pub fn read_file(path: &Path) -> Result<Self, crate::db::DbError> {
        let data = crate::db::read_regular_file(path, crate::db::options::MAX_OPTIONS_FILE)?;
        Ok(Self::parse(&String::from_utf8_lossy(&data), path))
    }

    /// Parses an OPTIONS file's text; unknown lines are skipped.
    pub fn parse(text: &str, path: &Path) -> Self {
        let mut out = Config {
            path: Some(path.to_path_buf()),
            ..Self::default()
        };
        for (section, name, value) in crate::db::options::entries(text) {
            if section == "[Version]" && name == "rocksdb_version" {
                out.rocksdb_version = Some(value.to_string());
            } else if let Some(cf) = section_of(section, "CFOptions") {
                let c = out.column_families.entry(cf.to_string()).or_default();
                match name {
                    "prefix_extractor" => c.prefix_extractor = Some(value.to_string()),
                    "optimize_filters_for_hits" => c.optimize_filters_for_hits = boolean(value),
                    "num_levels" => c.num_levels = value.parse().ok(),
                    "table_factory" => c.table_factory = Some(value.to_string()),
                    "compaction_style" => c.compaction_style = CompactionStyle::from_options_value(value),
                    _ => {}
                }
            } else if let Some(cf) = section_of(section, "TableOptions/BlockBasedTable") {
                let c = out.column_families.entry(cf.to_string()).or_default();
                match name {
                    "filter_policy" => c.filter_policy = Some(ConfiguredPolicy::parse(value)),
                    "format_version" => c.format_version = value.parse().ok(),
                    "whole_key_filtering" => c.whole_key_filtering = boolean(value),
                    "partition_filters" => c.partition_filters = boolean(value),
                    "cache_index_and_filter_blocks" => c.cache_index_and_filter_blocks = boolean(value),
                    "pin_l0_filter_and_index_blocks_in_cache" => {
                        c.pin_l0_filter_and_index_blocks_in_cache = boolean(value)
                    }
                    "pin_top_level_index_and_filter" => c.pin_top_level_index_and_filter = boolean(value),
                    "no_block_cache" => c.no_block_cache = boolean(value),
                    "optimize_filters_for_memory" => c.optimize_filters_for_memory = boolean(value),
                    "metadata_cache_options" => {
                        c.partition_pinning = nested(value, "partition_pinning");
                        c.unpartitioned_pinning = nested(value, "unpartitioned_pinning");
                    }
                    _ => {}
                }
            }
        }
        out
    }
}

fn boolean(v: &str) -> Option<bool> {
    match v {
        "true" | "1" => Some(true),
        "false" | "0" => Some(false),
        _ => None,
    }
}

/// `name=value` inside a `{a=b;c=d;}` value.
fn nested(value: &str, name: &str) -> Option<String> {
    value
        .trim_start_matches('{')
        .trim_end_matches('}')
        .split(';')
        .filter_map(|f| f.split_once('='))
        .find(|(n, _)| n.trim() == name)
        .map(|(_, v)| v.trim().to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn policies_parse_with_and_without_bits() {
        assert!(matches!(
            ConfiguredPolicy::parse("nullptr"),
            ConfiguredPolicy::None
        ));
        let p = ConfiguredPolicy::parse("ribbonfilter:10:2");
        assert_eq!(p.bloom_before_level(), Some(2));
        assert_eq!(p.compatibility_name(), Some("rocksdb.BuiltinBloomFilter"));
        assert_eq!(p.name().as_deref(), Some("ribbonfilter"));
        assert!(matches!(
            ConfiguredPolicy::parse("bloomfilter"),
            ConfiguredPolicy::NameOnly(_)
        ));
        assert!(ConfiguredPolicy::parse("bloomfilter").rules().is_none());
        assert!(matches!(
            ConfiguredPolicy::parse("my.Filter:3"),
            ConfiguredPolicy::Unknown(_)
        ));
        let b = ConfiguredPolicy::parse("rust.BalancedRibbon:10:1");
        assert_eq!(b.compatibility_name(), Some("rust.BalancedRibbon"));
        assert_eq!(b.bloom_before_level(), Some(1));
        assert!(matches!(
            ConfiguredPolicy::parse("{id=bloomfilter:10:false;}"),
            ConfiguredPolicy::Builtin(_)
        ));
        // What RocksDB 6.x writes for a built-in Bloom set in code: every
        // built-in filter is read, none is built.
        let r = ConfiguredPolicy::parse("rocksdb.BuiltinBloomFilter");
        assert_eq!(r, ConfiguredPolicy::ReadOnlyBuiltin);
        assert_eq!(r.compatibility_name(), Some("rocksdb.BuiltinBloomFilter"));
        assert_eq!(r.builds_filters(), Some(false));
        assert_eq!(r.rules(), None);
        assert_eq!(ConfiguredPolicy::parse("nullptr").compatibility_name(), None);
        assert_eq!(
            ConfiguredPolicy::parse("bloomfilter:0").builds_filters(),
            Some(false)
        );
    }

    #[test]
    fn sections_are_per_column_family() {
        let text = "[Version]\n rocksdb_version=11.8.1\n[CFOptions \"default\"]\n prefix_extractor=rocksdb.FixedPrefix.4\n optimize_filters_for_hits=true\n[TableOptions/BlockBasedTable \"default\"]\n filter_policy=ribbonfilter:10:1\n format_version=4\n metadata_cache_options={unpartitioned_pinning=kFallback;partition_pinning=kAll;top_level_index_pinning=kFallback;}\n[CFOptions \"b\"]\n num_levels=5\n";
        let c = Config::parse(text, Path::new("OPTIONS-1"));
        assert_eq!(c.rocksdb_version.as_deref(), Some("11.8.1"));
        let d = &c.column_families["default"];
        assert_eq!(d.prefix_extractor_name(), Some("rocksdb.FixedPrefix.4"));
        assert_eq!(d.optimize_filters_for_hits, Some(true));
        assert_eq!(d.format_version, Some(4));
        assert_eq!(d.partition_pinning.as_deref(), Some("kAll"));
        let b = &c.column_families["b"];
        assert_eq!(b.num_levels, Some(5));
        assert_eq!(b.filter_policy, None);
    }
}
