//! `ribbon doctor --html FILE`: one self-contained page (no script, no
//! network): per column family an inline SVG chart of filter bytes by level
//! (bars) with the promised and measured FP rates (points, right axis),
//! the findings beside it, and the level table below.

use super::{bytes, families, level_rows, pct, saving};
use ribbon_sst::doctor::{CfReport, Report};
use std::fmt::Write;

/// Escapes text for HTML content and attribute values.
fn esc(s: &str) -> String {
    let mut o = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '&' => o.push_str("&amp;"),
            '<' => o.push_str("&lt;"),
            '>' => o.push_str("&gt;"),
            '"' => o.push_str("&quot;"),
            '\'' => o.push_str("&#39;"),
            c => o.push(c),
        }
    }
    o
}

const W: f64 = 520.0;
const H: f64 = 260.0;
const LEFT: f64 = 70.0;
const RIGHT: f64 = 60.0;
const TOP: f64 = 20.0;
const BOTTOM: f64 = 40.0;

/// The chart of one column family.
fn chart(cf: &CfReport) -> String {
    let mut s = String::new();
    let _ = write!(
        s,
        r#"<svg class="chart" role="img" aria-label="filter bytes and FP rate by level of {}" viewBox="0 0 {W} {H}" width="{W}" height="{H}" xmlns="http://www.w3.org/2000/svg">"#,
        esc(&cf.name)
    );
    let levels = &cf.levels;
    if levels.is_empty() {
        s.push_str(r#"<text x="20" y="40">no live files</text></svg>"#);
        return s;
    }
    let max_bytes = levels.iter().map(|l| l.filter_bytes).max().unwrap_or(0).max(1) as f64;
    let max_fp = levels
        .iter()
        .flat_map(|l| [l.promised_fp, l.measured.rate()])
        .flatten()
        .fold(0.0f64, f64::max)
        .max(1e-4)
        * 1.2;
    let plot_w = W - LEFT - RIGHT;
    let plot_h = H - TOP - BOTTOM;
    let slot = plot_w / levels.len() as f64;
    let _ = write!(
        s,
        r##"<line x1="{LEFT}" y1="{}" x2="{}" y2="{}" stroke="#444"/><line x1="{LEFT}" y1="{TOP}" x2="{LEFT}" y2="{}" stroke="#444"/><line x1="{}" y1="{TOP}" x2="{}" y2="{}" stroke="#444"/>"##,
        TOP + plot_h,
        LEFT + plot_w,
        TOP + plot_h,
        TOP + plot_h,
        LEFT + plot_w,
        LEFT + plot_w,
        TOP + plot_h
    );
    let _ = write!(
        s,
        r##"<text x="{}" y="{}" font-size="11" text-anchor="end">{}</text><text x="{}" y="{}" font-size="11" text-anchor="end">0</text><text x="{}" y="{}" font-size="11">{}</text><text x="{}" y="{}" font-size="11">0</text>"##,
        LEFT - 4.0,
        TOP + 10.0,
        esc(&bytes(max_bytes as u64)),
        LEFT - 4.0,
        TOP + plot_h,
        LEFT + plot_w + 4.0,
        TOP + 10.0,
        esc(&pct(Some(max_fp))),
        LEFT + plot_w + 4.0,
        TOP + plot_h
    );
    let mut promised_pts = Vec::new();
    let mut measured_pts = Vec::new();
    for (i, l) in levels.iter().enumerate() {
        let x = LEFT + slot * i as f64;
        let h = plot_h * l.filter_bytes as f64 / max_bytes;
        let bar_w = (slot * 0.6).max(2.0);
        let colour = if l.families.keys().any(|k| k == "Ribbon" || k == "BalancedRibbon") {
            "#4a7fb5"
        } else if l.families.keys().any(|k| k.contains("Bloom")) {
            "#d08a3a"
        } else {
            "#999"
        };
        let _ = write!(
            s,
            r#"<rect class="bar" data-level="{}" x="{:.1}" y="{:.1}" width="{:.1}" height="{:.1}" fill="{colour}"><title>L{}: {} of filters, {}</title></rect>"#,
            l.level,
            x + slot * 0.2,
            TOP + plot_h - h,
            bar_w,
            h,
            l.level,
            esc(&bytes(l.filter_bytes)),
            esc(&families(l))
        );
        let _ = write!(
            s,
            r#"<text x="{:.1}" y="{:.1}" font-size="12" text-anchor="middle">L{}</text>"#,
            x + slot * 0.5,
            TOP + plot_h + 16.0,
            l.level
        );
        let cx = x + slot * 0.5;
        let y = |fp: f64| TOP + plot_h - plot_h * fp / max_fp;
        if let Some(fp) = l.promised_fp {
            promised_pts.push((cx, y(fp)));
            let _ = write!(
                s,
                r##"<circle class="promised" cx="{cx:.1}" cy="{:.1}" r="4" fill="none" stroke="#222" stroke-width="2"><title>L{} promised FP {}</title></circle>"##,
                y(fp),
                l.level,
                esc(&pct(Some(fp)))
            );
        }
        if let Some(fp) = l.measured.rate() {
            measured_pts.push((cx, y(fp)));
            let _ = write!(
                s,
                r##"<circle class="measured" cx="{cx:.1}" cy="{:.1}" r="3" fill="#c0392b"><title>L{} measured FP {} on {} absent keys</title></circle>"##,
                y(fp),
                l.level,
                esc(&pct(Some(fp))),
                l.measured.queries
            );
        }
    }
    for (pts, colour, dash) in [(&promised_pts, "#222", "4 3"), (&measured_pts, "#c0392b", "")] {
        if pts.len() > 1 {
            let d: Vec<String> = pts.iter().map(|(x, y)| format!("{x:.1},{y:.1}")).collect();
            let _ = write!(
                s,
                r#"<polyline points="{}" fill="none" stroke="{colour}" stroke-dasharray="{dash}"/>"#,
                d.join(" ")
            );
        }
    }
    let _ = write!(
        s,
        r#"<text x="{LEFT}" y="{}" font-size="11">bars: filter bytes (blue Ribbon, orange Bloom); ○ promised FP, ● measured FP (right axis)</text>"#,
        H - 6.0
    );
    s.push_str("</svg>");
    s
}

/// The page.
pub fn page(r: &Report) -> String {
    let mut s = String::new();
    s.push_str(
        r#"<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><title>ribbon doctor</title>
<style>
body{font-family:system-ui,sans-serif;margin:1.5em;color:#222;background:#fff}
h1{font-size:1.4em}h2{font-size:1.15em;margin-top:1.6em}
.cf{display:flex;flex-wrap:wrap;gap:1.5em;align-items:flex-start}
.findings{max-width:46em;font-size:.9em}
.findings li{margin:.3em 0}
.code{font-family:monospace;background:#eef;padding:0 .3em}
.differs .code{background:#fde9c8}.ignored .code{background:#f7d4d0}.unreadable .code{background:#ddd}
table{border-collapse:collapse;font-size:.85em;margin-top:.6em}
td,th{border:1px solid #ccc;padding:.2em .5em;text-align:right}
td:last-child,th:last-child{text-align:left}
.meta{color:#555;font-size:.9em}
</style></head><body>
<h1>ribbon doctor</h1>
"#,
    );
    let _ = writeln!(
        s,
        r#"<p class="meta">database {}<br>options {}{}<br>manifest {}<br>{} absent keys per file</p>"#,
        esc(&r.dir.display().to_string()),
        esc(&r
            .options_file
            .as_ref()
            .map_or("none found".to_string(), |p| p.display().to_string())),
        esc(&r
            .rocksdb_version
            .as_ref()
            .map_or(String::new(), |v| format!(" (RocksDB {v})"))),
        esc(&r.manifest.display().to_string()),
        r.samples_per_file
    );
    for cf in &r.column_families {
        let _ = writeln!(
            s,
            r#"<section class="column-family" data-name="{}"><h2>column family {}</h2><div class="cf">"#,
            esc(&cf.name),
            esc(&cf.name)
        );
        s.push_str(&chart(cf));
        s.push_str(r#"<div class="findings"><h3>findings</h3>"#);
        for n in &cf.notes {
            let _ = write!(s, r#"<p class="note">note: {}</p>"#, esc(n));
        }
        if cf.findings.is_empty() {
            s.push_str("<p>none</p>");
        } else {
            s.push_str("<ul>");
            for f in &cf.findings {
                let _ = write!(
                    s,
                    r#"<li class="finding {}" data-code="{}">{} <span class="code">{}</span> {}{}</li>"#,
                    f.code.section(),
                    f.code.as_str(),
                    f.level.map_or("CF".to_string(), |l| format!("L{l}")),
                    f.code.as_str(),
                    esc(&f.message),
                    if f.files > 0 {
                        format!(" ({} files)", f.files)
                    } else {
                        String::new()
                    }
                );
            }
            s.push_str("</ul>");
        }
        s.push_str("</div></div>");
        s.push_str("<table><tr><th>level</th><th>files</th><th>keys</th><th>filter</th><th>bits/key</th><th>promised FP</th><th>measured FP</th><th>as ribbonfilter</th><th>as rust.BalancedRibbon</th><th>kinds</th></tr>");
        let total = cf.total();
        for (l, name, promised) in level_rows(cf, &total) {
            let _ = write!(
                s,
                "<tr><td>{name}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>saves {}</td><td>saves {}</td><td>{}</td></tr>",
                l.files,
                l.entries,
                esc(&bytes(l.filter_bytes)),
                l.bits_per_key().map_or("-".to_string(), |b| format!("{b:.2}")),
                esc(&pct(promised)),
                esc(&pct(l.measured.rate())),
                esc(&saving(l.what_if_bytes_now, l.ribbon_bytes)),
                esc(&saving(l.what_if_bytes_now, l.balanced_bytes)),
                esc(&families(l))
            );
        }
        s.push_str("</table>");
        let p = total.placement;
        let _ = write!(
            s,
            r#"<p class="meta">{} held by table readers (in rocksdb.estimate-table-readers-mem), {} in the block cache, {} pinned; the estimate leaves out {}.</p></section>"#,
            esc(&bytes(p.table_reader_bytes)),
            esc(&bytes(p.block_cache_bytes)),
            esc(&bytes(p.pinned_bytes)),
            esc(&bytes(p.block_cache_bytes + p.pinned_bytes))
        );
    }
    s.push_str("</body></html>\n");
    s
}

#[cfg(test)]
mod tests {
    use super::esc;

    #[test]
    fn escapes() {
        assert_eq!(esc("<a href=\"x\">&'"), "&lt;a href=&quot;x&quot;&gt;&amp;&#39;");
    }
}
