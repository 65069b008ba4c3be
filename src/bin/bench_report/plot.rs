//! The report's plots: one line per series, n on a log axis.

use std::fmt::Write as _;

/// An SVG line plot of `series` (name, points `(n, value)`), `n` on a log
/// axis from the smallest to the largest `n`, values from 0.
pub fn svg_plot(title: &str, series: &[(String, Vec<(f64, f64)>)]) -> String {
    let (w, h, m) = (640.0, 400.0, 60.0);
    let xs: Vec<f64> = series
        .iter()
        .flat_map(|(_, p)| p.iter().map(|&(x, _)| x.log10()))
        .collect();
    let ymax = series
        .iter()
        .flat_map(|(_, p)| p.iter().map(|&(_, y)| y))
        .fold(0.0, f64::max)
        * 1.1;
    let (x0, x1) = (
        xs.iter().cloned().fold(f64::INFINITY, f64::min),
        xs.iter().cloned().fold(0.0, f64::max),
    );
    let px = |x: f64| m + (x.log10() - x0) / (x1 - x0).max(1e-9) * (w - 2.0 * m);
    let py = |y: f64| h - m - y / ymax.max(1e-9) * (h - 2.0 * m);
    let colors = ["#d62728", "#1f77b4", "#ff7f0e", "#2ca02c", "#9467bd", "#8c564b"];
    let mut s = format!(
        "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{w}\" height=\"{h}\" font-family=\"sans-serif\" font-size=\"12\">\n\
         <rect width=\"100%\" height=\"100%\" fill=\"white\"/>\n\
         <text x=\"{}\" y=\"20\" text-anchor=\"middle\" font-size=\"14\">{title}</text>\n\
         <line x1=\"{m}\" y1=\"{}\" x2=\"{}\" y2=\"{}\" stroke=\"black\"/>\n<line x1=\"{m}\" y1=\"{m}\" x2=\"{m}\" y2=\"{}\" stroke=\"black\"/>\n",
        w / 2.0, h - m, w - m, h - m, h - m
    );
    for i in 0..=4 {
        let y = ymax * f64::from(i) / 4.0;
        let _ = writeln!(
            s,
            "<text x=\"{}\" y=\"{}\" text-anchor=\"end\">{y:.0}</text>",
            m - 5.0,
            py(y) + 4.0
        );
    }
    let mut n = 10f64.powf(x0);
    while n <= 10f64.powf(x1) * 1.01 {
        let _ = writeln!(
            s,
            "<text x=\"{}\" y=\"{}\" text-anchor=\"middle\">10^{:.0}</text>",
            px(n),
            h - m + 18.0,
            n.log10()
        );
        n *= 10.0;
    }
    for (i, (name, points)) in series.iter().enumerate() {
        let c = colors[i % colors.len()];
        let path: Vec<String> = points
            .iter()
            .map(|&(x, y)| format!("{:.1},{:.1}", px(x), py(y)))
            .collect();
        let _ = writeln!(
            s,
            "<polyline fill=\"none\" stroke=\"{c}\" stroke-width=\"2\" points=\"{}\"/>",
            path.join(" ")
        );
        let _ = writeln!(
            s,
            "<text x=\"{}\" y=\"{}\" fill=\"{c}\">{name}</text>",
            w - m - 150.0,
            m + 16.0 * i as f64
        );
    }
    s.push_str("</svg>\n");
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_series_is_a_line_with_its_name() {
        let series = vec![
            (
                "rust_ribbon".to_string(),
                vec![(1e4, 30.0), (1e5, 32.0), (1e6, 45.0)],
            ),
            (
                "rocksdb_ribbon".to_string(),
                vec![(1e4, 50.0), (1e5, 52.0), (1e6, 98.0)],
            ),
        ];
        let svg = svg_plot("Build <ns/key>", &series);
        assert!(svg.starts_with("<svg ") && svg.ends_with("</svg>\n"));
        assert_eq!(svg.matches("<polyline").count(), 2);
        assert!(svg.contains(">rust_ribbon</text>") && svg.contains(">rocksdb_ribbon</text>"));
        // Three decades: labels 10^4, 10^5, 10^6.
        for label in ["10^4", "10^5", "10^6"] {
            assert!(svg.contains(label), "{label}");
        }
        // Every point lies inside the plot area.
        for points in svg.split("points=\"").skip(1) {
            for xy in points.split('"').next().unwrap().split(' ') {
                let (x, y) = xy.split_once(',').unwrap();
                let (x, y): (f64, f64) = (x.parse().unwrap(), y.parse().unwrap());
                assert!((60.0..=580.0).contains(&x) && (60.0..=340.0).contains(&y), "{xy}");
            }
        }
    }
}
