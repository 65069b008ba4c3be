//! RocksDB's built-in filter policies: parsing policy strings, sanitising
//! bits per key, and choosing which filter a table file gets.
//!
//! Ported from RocksDB's `table/block_based/filter_policy.cc`
//! (`BloomLikeFilterPolicy`, `BloomFilterPolicy`, `RibbonFilterPolicy`, the
//! `test::*FilterPolicy` classes and their `ObjectLibrary` patterns) and
//! `utilities/object_registry.cc` (how a pattern matches a number).

use crate::core::prelude::*;
use crate::rocksdb::bloom::{BloomMath, FastLocalBloomBuilder, FastLocalBloomImpl, LegacyBloomBuilder};
use core::fmt;

/// Bits per key as RocksDB sanitises them (`BloomLikeFilterPolicy`).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct BitsPerKey {
    millibits_per_key: i32,
    whole_bits_per_key: i32,
    desired_one_in_fp_rate: f64,
}

impl BitsPerKey {
    /// Sanitises a requested bits/key: below 0.5 means no filter (0), below
    /// 1 becomes 1, 100 and above (and NaN) become 100; then rounds to
    /// millibits. The Ribbon FP-rate target is the FP rate of a cache-local
    /// Bloom filter with the same bits/key.
    pub fn new(bits_per_key: f64) -> Self {
        let bits = if bits_per_key < 0.5 {
            0.0
        } else if bits_per_key < 1.0 {
            1.0
        } else if bits_per_key >= 100.0 || bits_per_key.is_nan() {
            100.0
        } else {
            bits_per_key
        };
        let millibits_per_key = (bits * 1000.0 + 0.500001) as i32;
        let desired_one_in_fp_rate = 1.0
            / BloomMath::cache_local_fp_rate(
                bits,
                FastLocalBloomImpl::choose_num_probes(millibits_per_key),
                512,
            );
        Self {
            millibits_per_key,
            whole_bits_per_key: (millibits_per_key + 500) / 1000,
            desired_one_in_fp_rate,
        }
    }

    /// Thousandths of a bit per key; 0 means "no filter".
    pub fn millibits_per_key(&self) -> i32 {
        self.millibits_per_key
    }
    /// Bits per key rounded to whole bits (the legacy Bloom's setting).
    pub fn whole_bits_per_key(&self) -> i32 {
        self.whole_bits_per_key
    }
    /// Ribbon's target: one false positive in this many queries.
    pub fn desired_one_in_fp_rate(&self) -> f64 {
        self.desired_one_in_fp_rate
    }

    /// RocksDB's `GetBitsPerKeySuffix`: `:10`, `:6.5`, `:12.345`.
    pub fn suffix(&self) -> String {
        let mut s = format!(":{}", self.millibits_per_key / 1000);
        let mut frac = self.millibits_per_key % 1000;
        if frac > 0 {
            s.push('.');
            s.push(char::from(b'0' + (frac / 100) as u8));
            frac %= 100;
            if frac > 0 {
                s.push(char::from(b'0' + (frac / 10) as u8));
                frac %= 10;
                if frac > 0 {
                    s.push(char::from(b'0' + frac as u8));
                }
            }
        }
        s
    }
}

/// Which built-in policy class.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PolicyKind {
    /// `bloomfilter` (`rocksdb.BloomFilter`): legacy Bloom before
    /// format_version 5, FastLocalBloom from 5 on.
    Bloom,
    /// `ribbonfilter` (`rocksdb.RibbonFilter`): Standard128 Ribbon, with
    /// FastLocalBloom for levels before `bloom_before_level`.
    Ribbon {
        /// Files at a "levelish" below this get FastLocalBloom; flushes count
        /// as level -1. `i32::MAX` means always Bloom.
        bloom_before_level: i32,
    },
    /// `rocksdb.internal.LegacyBloomFilter`: always the legacy Bloom.
    LegacyBloom,
    /// `rocksdb.internal.FastLocalBloomFilter`: always FastLocalBloom.
    FastLocalBloom,
    /// `rocksdb.internal.Standard128RibbonFilter`: always Ribbon (with its
    /// own Bloom fall-backs).
    Standard128Ribbon,
}

/// The compaction style, as far as `bloom_before_level` looks at it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum CompactionStyle {
    /// Leveled compaction (RocksDB's default).
    #[default]
    Level,
    /// Universal compaction.
    Universal,
    /// FIFO compaction: no levels, always Ribbon.
    Fifo,
    /// No compaction: no levels, always Ribbon.
    None,
}

impl CompactionStyle {
    /// The style an OPTIONS file's `compaction_style=VALUE` names (RocksDB's
    /// enumerator names, `options/options_helper.cc`); `None` for a value
    /// it does not name.
    pub fn from_options_value(value: &str) -> Option<Self> {
        match value {
            "kCompactionStyleLevel" => Some(Self::Level),
            "kCompactionStyleUniversal" => Some(Self::Universal),
            "kCompactionStyleFIFO" => Some(Self::Fifo),
            "kCompactionStyleNone" => Some(Self::None),
            _ => None,
        }
    }
}

/// Why a table file is written (`TableFileCreationReason`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum CreationReason {
    /// A memtable flush: "levelish" -1.
    Flush,
    /// A compaction output.
    Compaction,
    /// Anything else, such as SstFileWriter.
    #[default]
    Misc,
}

/// RocksDB 11.8's default `BlockBasedTableOptions::format_version`
/// (`include/rocksdb/table.h`): what [`BuildContext::default`] uses, and
/// the `format_version` to pass to [`BuildContext::sst_file_writer`] for a
/// table written with RocksDB's default options. It picks the filter a
/// `bloomfilter` policy writes: the legacy Bloom before 5, FastLocalBloom
/// from 5 on.
pub const DEFAULT_FORMAT_VERSION: i32 = 7;

/// The newest `format_version` RocksDB 11.8 writes
/// (`kLatestBbtFormatVersion`, `table/format.h`).
pub const LATEST_FORMAT_VERSION: i32 = 7;

/// A `format_version` RocksDB 11.8 refuses for a table it writes (see
/// [`check_format_version`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FormatVersionError {
    /// The value given.
    pub format_version: i64,
}

impl fmt::Display for FormatVersionError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "format_version {}: RocksDB 11.8 writes tables of format_version 0 to {LATEST_FORMAT_VERSION} \
             (0 and 1 are written as 2)",
            self.format_version
        )
    }
}

impl core::error::Error for FormatVersionError {}

/// The one owner of the `format_version`s a filter may be built for: the
/// values RocksDB 11.8 accepts for a table it writes, 0 to
/// [`LATEST_FORMAT_VERSION`]. `BlockBasedTableOptions::format_version` is a
/// `uint32_t`; RocksDB raises 0 and 1 to 2 (the oldest it still writes,
/// `kMinSupportedBbtFormatVersionForWrite`) when it sanitises the options,
/// so they write the filter of 2 (the legacy Bloom, as every value below
/// 5), and refuses anything above 7 ("Unsupported BlockBasedTable
/// format_version"); a negative value, as a `uint32_t`, is above 7.
///
/// ```
/// use ribbon::rocksdb::policy::check_format_version;
/// assert_eq!(check_format_version(5), Ok(5));
/// assert!(check_format_version(8).is_err());
/// assert!(check_format_version(-5).is_err());
/// ```
pub fn check_format_version(format_version: i64) -> Result<i32, FormatVersionError> {
    match i32::try_from(format_version) {
        Ok(v) if (0..=LATEST_FORMAT_VERSION).contains(&v) => Ok(v),
        _ => Err(FormatVersionError { format_version }),
    }
}

/// What the table builder tells the policy about the file it writes
/// (`FilterBuildingContext` plus the table's `format_version`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct BuildContext {
    /// The table's `format_version` (RocksDB 11.8 accepts 0 to 7, checked
    /// by [`check_format_version`]; default [`DEFAULT_FORMAT_VERSION`], 7).
    pub format_version: i32,
    /// The column family's compaction style.
    pub compaction_style: CompactionStyle,
    /// Why the file is written.
    pub reason: CreationReason,
    /// The output level, or -1 when unknown (SstFileWriter).
    pub level_at_creation: i32,
    /// `BlockBasedTableOptions::optimize_filters_for_memory` (RocksDB's
    /// default: `true`). RocksDB as built by `librocksdb-sys` has no
    /// `malloc_usable_size` rounding, so this only changes how FastLocalBloom
    /// picks its probe count: from the size it got rather than the bits/key
    /// asked for. (A RocksDB built with `ROCKSDB_MALLOC_USABLE_SIZE` also
    /// rounds filter sizes to allocator size classes, which depends on the
    /// allocator and is not reproduced.)
    pub optimize_filters_for_memory: bool,
}

impl Default for BuildContext {
    /// An SstFileWriter file with RocksDB's default options.
    fn default() -> Self {
        Self {
            format_version: DEFAULT_FORMAT_VERSION,
            compaction_style: CompactionStyle::Level,
            reason: CreationReason::Misc,
            level_at_creation: -1,
            optimize_filters_for_memory: true,
        }
    }
}

impl BuildContext {
    /// An SstFileWriter-style context (level -1) for `format_version`
    /// (RocksDB's default: [`DEFAULT_FORMAT_VERSION`]).
    pub fn sst_file_writer(format_version: i32) -> Self {
        Self {
            format_version,
            ..Self::default()
        }
    }

    /// A compaction output at `level` (a flush when `level` is `None`).
    pub fn at_level(format_version: i32, level: Option<i32>) -> Self {
        match level {
            Some(level) => Self {
                format_version,
                reason: CreationReason::Compaction,
                level_at_creation: level,
                ..Self::default()
            },
            None => Self {
                format_version,
                reason: CreationReason::Flush,
                level_at_creation: 0,
                ..Self::default()
            },
        }
    }

    /// RocksDB's "levelish" for `bloom_before_level`: -1 for a flush, the
    /// level for a known level, `i32::MAX - 1` when unknown or levelless.
    pub fn levelish(&self) -> i32 {
        match self.compaction_style {
            CompactionStyle::Level | CompactionStyle::Universal => match self.reason {
                CreationReason::Flush => -1,
                _ if self.level_at_creation == -1 => i32::MAX - 1,
                _ => self.level_at_creation,
            },
            CompactionStyle::Fifo | CompactionStyle::None => i32::MAX - 1,
        }
    }
}

/// The filter format a builder writes, with its settings.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum FilterKind {
    /// Legacy Bloom with whole bits per key (format_version < 5).
    LegacyBloom(LegacyBloomBuilder),
    /// FastLocalBloom.
    FastLocalBloom(FastLocalBloomBuilder),
    /// Standard128 Ribbon, with its FastLocalBloom fall-back.
    Standard128Ribbon {
        /// FP-rate target, one in this many.
        desired_one_in_fp_rate: f64,
        /// The Bloom fall-back (same bits per key).
        bloom: FastLocalBloomBuilder,
    },
}

/// Who registers a policy id: RocksDB itself, or `rocks-bridge`, whose
/// `rust.*` policies write and read the same bytes as the RocksDB policy they
/// mirror (`rust.RibbonFilter` ↔ `ribbonfilter`, `rust.BloomFilter` ↔
/// `bloomfilter`) with the Rust code doing the work.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Provider {
    /// A RocksDB built-in id (`ribbonfilter:10`, `rocksdb.internal.…`).
    #[default]
    RocksDb,
    /// A `rocks-bridge` id (`rust.RibbonFilter:10`, `rust.BloomFilter:10`).
    Rust,
}

/// A built-in filter policy: what a RocksDB policy string describes.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct FilterPolicy {
    kind: PolicyKind,
    bits: BitsPerKey,
    provider: Provider,
}

/// A policy string RocksDB would not accept.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PolicyParseError {
    input: String,
    reason: &'static str,
}

impl fmt::Display for PolicyParseError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "invalid filter policy {:?}: {}", self.input, self.reason)
    }
}

impl core::error::Error for PolicyParseError {}

impl PolicyParseError {
    /// The same reason, for the string the caller was given (a policy
    /// parsed by rewriting its id into another policy's grammar).
    pub(crate) fn for_input(self, input: &str) -> Self {
        Self {
            input: input.to_string(),
            ..self
        }
    }

    /// An error for `input`.
    pub(crate) fn new(input: &str, reason: &'static str) -> Self {
        Self {
            input: input.to_string(),
            reason,
        }
    }
}

impl FilterPolicy {
    /// A policy of `kind` with `bits_per_key` (sanitised as RocksDB does).
    pub fn new(kind: PolicyKind, bits_per_key: f64) -> Self {
        Self {
            kind,
            bits: BitsPerKey::new(bits_per_key),
            provider: Provider::RocksDb,
        }
    }

    /// The same policy under the ids of `provider`. Only `Bloom` and
    /// `Ribbon` policies have `rust.*` ids; the others keep
    /// [`Provider::RocksDb`].
    pub fn with_provider(self, provider: Provider) -> Self {
        let provider = match self.kind {
            PolicyKind::Bloom | PolicyKind::Ribbon { .. } => provider,
            _ => Provider::RocksDb,
        };
        Self { provider, ..self }
    }

    /// Who registers this policy's id.
    pub fn provider(&self) -> Provider {
        self.provider
    }

    /// `NewBloomFilterPolicy(bits_per_key)`.
    pub fn bloom(bits_per_key: f64) -> Self {
        Self::new(PolicyKind::Bloom, bits_per_key)
    }

    /// `NewRibbonFilterPolicy(bits_per_key, bloom_before_level)`.
    pub fn ribbon(bits_per_key: f64, bloom_before_level: i32) -> Self {
        Self::new(PolicyKind::Ribbon { bloom_before_level }, bits_per_key)
    }

    /// The policy class.
    pub fn kind(&self) -> PolicyKind {
        self.kind
    }
    /// The sanitised bits per key.
    pub fn bits_per_key(&self) -> BitsPerKey {
        self.bits
    }

    /// Parses a policy id as RocksDB's `FilterPolicy::CreateFromString` does
    /// for the built-in policies, where "no policy" is an answer:
    /// `Ok(None)` for the ids that configure no filter. The main way to
    /// parse a policy is [`str::parse`] (`FromStr`), the same grammar with
    /// "no policy" an error:
    ///
    /// ```
    /// use ribbon::FilterPolicy;
    ///
    /// let policy: FilterPolicy = "ribbonfilter:10".parse()?;
    /// assert_eq!(policy.id(), "ribbonfilter:10:0");
    /// assert!("nullptr".parse::<FilterPolicy>().is_err());
    /// assert_eq!(FilterPolicy::parse_optional("nullptr")?, None);
    /// assert_eq!(FilterPolicy::parse_optional("ribbonfilter:10")?, Some(policy));
    /// assert!(FilterPolicy::parse_optional("ribbonfilter:ten").is_err());
    /// # Ok::<(), ribbon::rocksdb::policy::PolicyParseError>(())
    /// ```
    ///
    /// The grammar:
    ///
    /// - `bloomfilter:BITS`, `bloomfilter:BITS:false`, `bloomfilter:BITS:true`
    ///   (also `rocksdb.BloomFilter:…`);
    /// - `ribbonfilter:BITS`, `ribbonfilter:BITS:LEVEL` (also
    ///   `rocksdb.RibbonFilter:…`), `bloom_before_level` defaulting to 0;
    /// - `rocksdb.internal.LegacyBloomFilter:BITS`,
    ///   `rocksdb.internal.FastLocalBloomFilter:BITS`,
    ///   `rocksdb.internal.Standard128RibbonFilter:BITS`;
    /// - the `rocks-bridge` ids as that crate registers them in RocksDB's
    ///   `ObjectLibrary`: `rust.RibbonFilter:BITS[:LEVEL]` and
    ///   `rust.BloomFilter:BITS` ([`Provider::Rust`]).
    ///
    /// This is the one grammar of policy ids: the `ribbon` tool and
    /// `rocks-bridge` both parse with it, and [`FilterPolicy::id`] gives the
    /// canonical form (`rust.RibbonFilter:10` becomes
    /// `rust.RibbonFilter:10:0`, `bloomfilter:10` becomes
    /// `bloomfilter:10:false`).
    ///
    /// BITS is a decimal number (`-`? digits with at most one `.`), LEVEL an
    /// integer. Returns `Ok(None)` for the strings that mean "no policy"
    /// (empty, `nullptr`) and for the read-only `rocksdb.BuiltinBloomFilter`,
    /// which builds no filters.
    pub fn parse_optional(s: &str) -> Result<Option<Self>, PolicyParseError> {
        let err = |reason| PolicyParseError {
            input: s.to_string(),
            reason,
        };
        let id = s.trim();
        let id = id.strip_prefix("id=").unwrap_or(id);
        if id.is_empty() || id == "nullptr" || id == "rocksdb.BuiltinBloomFilter" {
            return Ok(None);
        }
        let (name, rest) = id.split_once(':').ok_or_else(|| err("expected NAME:BITS"))?;
        let mut parts = rest.split(':');
        let bits_str = parts.next().unwrap_or_default();
        if !is_decimal(bits_str) {
            return Err(err("bits per key must be a decimal number"));
        }
        let bits: f64 = bits_str
            .parse()
            .map_err(|_| err("bits per key must be a decimal number"))?;
        let third = parts.next();
        if parts.next().is_some() {
            return Err(err("too many ':'-separated fields"));
        }
        let provider = if name.starts_with("rust.") {
            Provider::Rust
        } else {
            Provider::RocksDb
        };
        let kind = match name {
            "rust.BloomFilter" if third.is_some() => {
                return Err(err("rust.BloomFilter takes only BITS"));
            }
            "bloomfilter" | "rocksdb.BloomFilter" | "rust.BloomFilter" => match third {
                None | Some("false") | Some("true") => PolicyKind::Bloom,
                Some(_) => return Err(err("bloomfilter takes BITS[:false|:true]")),
            },
            "ribbonfilter" | "rocksdb.RibbonFilter" | "rust.RibbonFilter" => {
                let bloom_before_level = match third {
                    None => 0,
                    Some(level) if is_integer(level) => level
                        .parse::<i32>()
                        .map_err(|_| err("bloom_before_level out of range"))?,
                    Some(_) => return Err(err("bloom_before_level must be an integer")),
                };
                PolicyKind::Ribbon { bloom_before_level }
            }
            "rocksdb.internal.LegacyBloomFilter" => PolicyKind::LegacyBloom,
            "rocksdb.internal.FastLocalBloomFilter" => PolicyKind::FastLocalBloom,
            "rocksdb.internal.Standard128RibbonFilter" => PolicyKind::Standard128Ribbon,
            _ => return Err(err("unknown filter policy name")),
        };
        if third.is_some() && !matches!(kind, PolicyKind::Bloom | PolicyKind::Ribbon { .. }) {
            return Err(err("this policy takes only NAME:BITS"));
        }
        Ok(Some(Self::new(kind, bits).with_provider(provider)))
    }

    /// The policy's class name (`FilterPolicy::Name()`), which RocksDB
    /// records in each SST's properties.
    pub fn name(&self) -> &'static str {
        match (self.provider, self.kind) {
            (Provider::Rust, PolicyKind::Bloom) => return "rust.BloomFilter",
            (Provider::Rust, PolicyKind::Ribbon { .. }) => return "rust.RibbonFilter",
            _ => {}
        }
        match self.kind {
            PolicyKind::Bloom => "bloomfilter",
            PolicyKind::Ribbon { .. } => "ribbonfilter",
            PolicyKind::LegacyBloom => "rocksdb.internal.LegacyBloomFilter",
            PolicyKind::FastLocalBloom => "rocksdb.internal.FastLocalBloomFilter",
            PolicyKind::Standard128Ribbon => "rocksdb.internal.Standard128RibbonFilter",
        }
    }

    /// The id RocksDB writes back to options strings (`GetId()`), e.g.
    /// `bloomfilter:10:false` or `ribbonfilter:6.5:-1`; for the `rust.*`
    /// policies the id `rocks-bridge` writes, `rust.BloomFilter:10` or
    /// `rust.RibbonFilter:6.5:-1`.
    pub fn id(&self) -> String {
        let base = format!("{}{}", self.name(), self.bits.suffix());
        match self.kind {
            PolicyKind::Bloom if self.provider == Provider::Rust => base,
            PolicyKind::Bloom => base + ":false",
            PolicyKind::Ribbon { bloom_before_level } => format!("{base}:{bloom_before_level}"),
            _ => base,
        }
    }

    /// Whether this policy builds filters at all: `false` for bits per key
    /// that sanitise to 0 (below 0.5), RocksDB's "no filter" policy. There
    /// are two ways to say "no filter", and both are `None`:
    /// [`FilterPolicy::parse_optional`] gives `Ok(None)` for an id that names no
    /// policy (`""`, `nullptr`); a policy that exists but builds no filter
    /// (`bloomfilter:0`, which RocksDB accepts and keeps as an id) parses to
    /// `Some`, and then [`FilterPolicy::filter_kind`] and
    /// [`crate::rocksdb::builder::FilterBuilder::new`] give `None` for every file.
    pub fn builds_filters(&self) -> bool {
        self.bits.millibits_per_key != 0
    }

    /// The filter a table file gets under `ctx`, or `None` when the policy
    /// builds no filter (see [`FilterPolicy::builds_filters`]). Mirrors each
    /// policy's `GetBuilderWithContext`.
    pub fn filter_kind(&self, ctx: &BuildContext) -> Option<FilterKind> {
        if !self.builds_filters() {
            return None;
        }
        let millibits = self.bits.millibits_per_key;
        let legacy = FilterKind::LegacyBloom(LegacyBloomBuilder::new(self.bits.whole_bits_per_key));
        let bloom = FastLocalBloomBuilder::new(millibits)
            .with_optimize_filters_for_memory(ctx.optimize_filters_for_memory);
        let fast_local = FilterKind::FastLocalBloom(bloom);
        let ribbon = FilterKind::Standard128Ribbon {
            desired_one_in_fp_rate: self.bits.desired_one_in_fp_rate,
            bloom,
        };
        Some(match self.kind {
            PolicyKind::Bloom if ctx.format_version < 5 => legacy,
            PolicyKind::Bloom => fast_local,
            PolicyKind::LegacyBloom => legacy,
            PolicyKind::FastLocalBloom => fast_local,
            PolicyKind::Standard128Ribbon => ribbon,
            PolicyKind::Ribbon { bloom_before_level } => {
                let levelish = if bloom_before_level < i32::MAX {
                    ctx.levelish()
                } else {
                    i32::MAX - 1
                };
                if levelish < bloom_before_level {
                    fast_local
                } else {
                    ribbon
                }
            }
        })
    }
}

impl core::str::FromStr for FilterPolicy {
    type Err = PolicyParseError;
    /// As [`FilterPolicy::parse_optional`], but "no policy" (empty,
    /// `nullptr`, `rocksdb.BuiltinBloomFilter`) is an error.
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        Self::parse_optional(s)?.ok_or(PolicyParseError {
            input: s.to_string(),
            reason: "names no filter-building policy",
        })
    }
}

/// With the `serde` feature, a policy serializes as its id
/// ([`FilterPolicy::id`]) and deserializes from any id `FromStr` accepts.
#[cfg(feature = "serde")]
impl serde::Serialize for FilterPolicy {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_str(&self.id())
    }
}

#[cfg(feature = "serde")]
impl<'de> serde::Deserialize<'de> for FilterPolicy {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let id = <alloc::borrow::Cow<'de, str> as serde::Deserialize>::deserialize(deserializer)?;
        id.parse().map_err(serde::de::Error::custom)
    }
}

/// `MatchesInteger` of RocksDB's object registry: `-`? digits, at least one.
fn is_integer(s: &str) -> bool {
    let digits = s.strip_prefix('-').unwrap_or(s);
    !digits.is_empty() && digits.bytes().all(|b| b.is_ascii_digit())
}

/// `MatchesDecimal`: `-`? digits and at most one `.`, at least one digit.
fn is_decimal(s: &str) -> bool {
    let body = s.strip_prefix('-').unwrap_or(s);
    let mut points = 0;
    let mut digits = 0;
    for b in body.bytes() {
        match b {
            b'.' => points += 1,
            b'0'..=b'9' => digits += 1,
            _ => return false,
        }
    }
    points <= 1 && digits > 0
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sanitises_bits_per_key() {
        assert_eq!(BitsPerKey::new(0.4).millibits_per_key(), 0);
        assert_eq!(BitsPerKey::new(0.5).millibits_per_key(), 1000);
        assert_eq!(BitsPerKey::new(6.25).millibits_per_key(), 6250);
        assert_eq!(BitsPerKey::new(9.9).whole_bits_per_key(), 10);
        assert_eq!(BitsPerKey::new(f64::NAN).millibits_per_key(), 100_000);
        assert_eq!(BitsPerKey::new(1e9).millibits_per_key(), 100_000);
        assert_eq!(BitsPerKey::new(-3.0).millibits_per_key(), 0);
        assert_eq!(BitsPerKey::new(12.3456).suffix(), ":12.346");
        assert_eq!(BitsPerKey::new(10.0).suffix(), ":10");
        assert_eq!(BitsPerKey::new(6.5).suffix(), ":6.5");
    }

    #[test]
    fn parses_policy_strings() {
        let p = FilterPolicy::parse_optional("ribbonfilter:10:3")
            .unwrap()
            .unwrap();
        assert_eq!(
            p.kind(),
            PolicyKind::Ribbon {
                bloom_before_level: 3
            }
        );
        assert_eq!(p.id(), "ribbonfilter:10:3");
        let p: FilterPolicy = "rocksdb.RibbonFilter:6.5".parse().unwrap();
        assert_eq!(
            p.kind(),
            PolicyKind::Ribbon {
                bloom_before_level: 0
            }
        );
        assert_eq!(p.id(), "ribbonfilter:6.5:0");
        let p: FilterPolicy = "bloomfilter:10:false".parse().unwrap();
        assert_eq!(p.id(), "bloomfilter:10:false");
        let p: FilterPolicy = "rocksdb.internal.LegacyBloomFilter:23.7".parse().unwrap();
        assert_eq!(p.bits_per_key().whole_bits_per_key(), 24);
        assert_eq!(FilterPolicy::parse_optional("").unwrap(), None);
        assert_eq!(FilterPolicy::parse_optional("nullptr").unwrap(), None);
        for bad in [
            "bloomfilter",
            "bloomfilter:",
            "bloomfilter:abc",
            "bloomfilter:1.2.3",
            "bloomfilter:10:maybe",
            "ribbonfilter:10:1.5",
            "ribbonfilter:10:99999999999",
            "rocksdb.internal.LegacyBloomFilter:10:1",
            "cuckoo:10",
            "ribbonfilter:10:1:2",
        ] {
            assert!(FilterPolicy::parse_optional(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn rust_ids_are_the_builtin_policies_under_the_bridge_names() {
        for (rust, native, canonical) in [
            (
                "rust.RibbonFilter:10",
                "ribbonfilter:10",
                "rust.RibbonFilter:10:0",
            ),
            (
                "rust.RibbonFilter:6.5:-1",
                "ribbonfilter:6.5:-1",
                "rust.RibbonFilter:6.5:-1",
            ),
            (
                " id=rust.RibbonFilter:23.25:3 ",
                "ribbonfilter:23.25:3",
                "rust.RibbonFilter:23.25:3",
            ),
            ("rust.BloomFilter:10", "bloomfilter:10", "rust.BloomFilter:10"),
            ("rust.BloomFilter:0.75", "bloomfilter:0.75", "rust.BloomFilter:1"),
        ] {
            let r: FilterPolicy = rust.parse().unwrap();
            let n: FilterPolicy = native.parse().unwrap();
            assert_eq!(r.provider(), Provider::Rust, "{rust}");
            assert_eq!(n.provider(), Provider::RocksDb, "{native}");
            assert_eq!(
                (r.kind(), r.bits_per_key()),
                (n.kind(), n.bits_per_key()),
                "{rust}"
            );
            assert_eq!(r.id(), canonical);
            assert_eq!(r, n.with_provider(Provider::Rust));
            // The canonical id parses back to the same policy.
            assert_eq!(r.id().parse::<FilterPolicy>().unwrap(), r);
            for fv in [4, 7] {
                for ctx in [
                    BuildContext::sst_file_writer(fv),
                    BuildContext::at_level(fv, None),
                ] {
                    assert_eq!(r.filter_kind(&ctx), n.filter_kind(&ctx), "{rust} {ctx:?}");
                }
            }
        }
        assert_eq!(
            FilterPolicy::bloom(10.0).with_provider(Provider::Rust).name(),
            "rust.BloomFilter"
        );
        // Only the two policies the bridge registers have rust.* ids.
        let legacy = FilterPolicy::new(PolicyKind::LegacyBloom, 10.0).with_provider(Provider::Rust);
        assert_eq!(legacy.provider(), Provider::RocksDb);
        for bad in [
            "rust.BloomFilter:10:false",
            "rust.RibbonFilter",
            "rust.RibbonFilter:ten",
            "rust.FastLocalBloomFilter:10",
            "rust.RibbonFilter:10:1:2",
        ] {
            let e = FilterPolicy::parse_optional(bad).unwrap_err();
            assert!(e.to_string().contains(&format!("{bad:?}")), "{e}");
        }
    }

    #[test]
    fn no_filter_is_none_both_ways() {
        for id in ["", "nullptr", " id=nullptr ", "rocksdb.BuiltinBloomFilter"] {
            assert_eq!(FilterPolicy::parse_optional(id).unwrap(), None, "{id:?}");
        }
        for id in [
            "bloomfilter:0",
            "ribbonfilter:0.4:3",
            "rust.BloomFilter:0.2",
            "rocksdb.internal.LegacyBloomFilter:0",
        ] {
            let p = FilterPolicy::parse_optional(id).unwrap().unwrap();
            assert!(!p.builds_filters(), "{id}");
            for ctx in [
                BuildContext::sst_file_writer(7),
                BuildContext::at_level(4, None),
                BuildContext::at_level(7, Some(3)),
            ] {
                assert!(p.filter_kind(&ctx).is_none(), "{id}");
            }
        }
        for id in ["bloomfilter:0.5", "ribbonfilter:1", "rust.RibbonFilter:10"] {
            let p = FilterPolicy::parse_optional(id).unwrap().unwrap();
            assert!(p.builds_filters(), "{id}");
            assert!(p.filter_kind(&BuildContext::default()).is_some(), "{id}");
        }
    }

    #[test]
    fn bloom_before_level_chooses_by_levelish() {
        let p = FilterPolicy::ribbon(10.0, 1);
        let is_bloom = |ctx: BuildContext| matches!(p.filter_kind(&ctx), Some(FilterKind::FastLocalBloom(_)));
        assert!(is_bloom(BuildContext::at_level(7, None)));
        assert!(is_bloom(BuildContext::at_level(7, Some(0))));
        assert!(!is_bloom(BuildContext::at_level(7, Some(1))));
        assert!(!is_bloom(BuildContext::sst_file_writer(7)));
        let fifo = BuildContext {
            compaction_style: CompactionStyle::Fifo,
            ..BuildContext::at_level(7, None)
        };
        assert!(!is_bloom(fifo));
        let always = FilterPolicy::ribbon(10.0, i32::MAX);
        assert!(matches!(
            always.filter_kind(&BuildContext::sst_file_writer(7)),
            Some(FilterKind::FastLocalBloom(_))
        ));
        assert_eq!(
            FilterPolicy::bloom(0.2).filter_kind(&BuildContext::default()),
            None
        );
        assert!(matches!(
            FilterPolicy::bloom(10.0).filter_kind(&BuildContext::sst_file_writer(4)),
            Some(FilterKind::LegacyBloom(b)) if b.bits_per_key() == 10
        ));
    }
}
