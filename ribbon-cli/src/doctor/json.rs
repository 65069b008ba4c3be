//! `ribbon doctor --json`: one document, built with serde_json (schema in
//! [`docs/doctor.md`](https://github.com/rocks-ribbon/rocks-ribbon/blob/main/docs/doctor.md)).

use ribbon_sst::doctor::{config::CfConfig, CfReport, FileReport, Finding, LevelReport, Measured, Report};
use serde_json::{json, Value};

fn measured(m: &Measured) -> Value {
    if m.queries == 0 {
        return Value::Null;
    }
    json!({
        "queries": m.queries,
        "positives": m.positives,
        "rate": m.rate(),
        "expected_positives": m.expected,
        "sigma_above_promise": finite(m.sigma_above()),
    })
}

fn finite(v: f64) -> Value {
    if v.is_finite() {
        json!(v)
    } else {
        Value::Null
    }
}

fn level(l: &LevelReport) -> Value {
    json!({
        "level": l.level,
        "files": l.files,
        "unreadable_files": l.unreadable_files,
        "entries": l.entries,
        "filter_entries": l.filter_entries,
        "filter_bytes": l.filter_bytes,
        "bits_per_key": l.bits_per_key(),
        "families": l.families,
        "partitioned_files": l.partitioned_files,
        "prefix_only_files": l.prefix_only_files,
        "promised_fp": l.promised_fp,
        "measured": measured(&l.measured),
        "placement": {
            "table_reader_bytes": l.placement.table_reader_bytes,
            "block_cache_bytes": l.placement.block_cache_bytes,
            "pinned_bytes": l.placement.pinned_bytes,
            "left_out_of_table_readers_estimate": l.placement.block_cache_bytes + l.placement.pinned_bytes,
            "table_options_known": l.placement.known,
        },
        "what_if": {
            "bytes_now": l.what_if_bytes_now,
            "ribbonfilter_bytes": l.ribbon_bytes,
            "balanced_bytes": l.balanced_bytes,
            "ribbonfilter_build_extra_ms": l.ribbon_build_extra_ms,
            "balanced_build_extra_ms": l.balanced_build_extra_ms,
        },
    })
}

fn file(f: &FileReport) -> Value {
    json!({
        "number": f.number,
        "level": f.level,
        "file_size": f.file_size,
        "entries": f.entries,
        "filter_entries": f.filter_entries,
        "family": f.family,
        "kinds": f.kind_detail,
        "policy_name": f.policy_name,
        "compatibility_name": f.compatibility_name,
        "format_version": f.format_version,
        "filter_bytes": f.filter_bytes,
        "filter_size_property": f.filter_size_property,
        "bits_per_key": f.bits_per_key,
        "partitions": f.partitions,
        "whole_key_filtering": f.whole_key_filtering,
        "prefix_extractor": f.prefix_extractor,
        "promised_fp": f.promised_fp,
        "measured": f.measured.as_ref().map_or(Value::Null, measured),
        "ribbonfilter_bytes": f.ribbon_bytes,
        "balanced_bytes": f.balanced_bytes,
    })
}

fn finding(f: &Finding) -> Value {
    json!({
        "code": f.code.as_str(),
        "section": f.code.section(),
        "level": f.level,
        "files": f.files,
        "file_numbers": f.file_numbers,
        "message": f.message,
    })
}

fn config(c: &CfConfig) -> Value {
    json!({
        "filter_policy": c.filter_policy.as_ref().map(|p| p.id()),
        "format_version": c.format_version,
        "whole_key_filtering": c.whole_key_filtering,
        "partition_filters": c.partition_filters,
        "prefix_extractor": c.prefix_extractor,
        "optimize_filters_for_hits": c.optimize_filters_for_hits,
        "cache_index_and_filter_blocks": c.cache_index_and_filter_blocks,
        "pin_l0_filter_and_index_blocks_in_cache": c.pin_l0_filter_and_index_blocks_in_cache,
        "partition_pinning": c.partition_pinning,
        "unpartitioned_pinning": c.unpartitioned_pinning,
        "num_levels": c.num_levels,
    })
}

fn cf(c: &CfReport) -> Value {
    json!({
        "name": c.name,
        "config": c.config.as_ref().map_or(Value::Null, config),
        "levels": c.levels.iter().map(level).collect::<Vec<_>>(),
        "total": level(&c.total()),
        "findings": c.findings.iter().map(finding).collect::<Vec<_>>(),
        "notes": c.notes,
        "suggested_bloom_before_level": c.suggested_bloom_before_level,
        "files": c.files.iter().map(file).collect::<Vec<_>>(),
    })
}

/// The document.
pub fn report(r: &Report) -> Value {
    json!({
        "dir": r.dir.display().to_string(),
        "manifest": r.manifest.display().to_string(),
        "options_file": r.options_file.as_ref().map(|p| p.display().to_string()),
        "options_given": r.options_given,
        "rocksdb_version": r.rocksdb_version,
        "samples_per_file": r.samples_per_file,
        "column_families": r.column_families.iter().map(cf).collect::<Vec<_>>(),
    })
}
