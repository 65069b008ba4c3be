//! `ribbon viz`: the page's trace is the crate's construction, and the page,
//! rendered and driven in headless Chromium, shows the crate's results.
//!
//! The browser tests need Debian's `chromium` (scripts/test.sh installs it);
//! without it they fail, naming the package. `RIBBON_CHROMIUM` names another
//! binary.

use assert_cmd::Command;
use ribbon::core::alg::{simple_back_subst, simple_query, Banding, CoeffRow, Settings, SmallRow};
use ribbon::core::hash::{get_slice_hash64, split_mix64};
use ribbon::core::hasher::Hasher;
use ribbon::rocksdb::standard128::{self, Standard128Reader};
use ribbon::rocksdb::trailer::Parsed;
use serde_json::Value;
use std::path::{Path, PathBuf};

fn ribbon() -> Command {
    Command::cargo_bin("ribbon").unwrap()
}

/// Writes the page for `args` and returns its path and text.
fn page(dir: &Path, name: &str, args: &[&str]) -> (PathBuf, String) {
    let out = dir.join(name);
    ribbon()
        .arg("viz")
        .args(args)
        .arg("--out")
        .arg(&out)
        .assert()
        .success();
    let text = std::fs::read_to_string(&out).unwrap();
    (out, text)
}

/// The JSON the page replays.
fn data(page: &str) -> Value {
    let start = page
        .find(r#"<script type="application/json" id="data">"#)
        .unwrap();
    let body = &page[start..];
    let body = &body[body.find('>').unwrap() + 1..body.find("</script>").unwrap()];
    serde_json::from_str(body).unwrap()
}

fn unhex(s: &str) -> Vec<u8> {
    (0..s.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(&s[i..i + 2], 16).unwrap())
        .collect()
}

fn hex(b: &[u8]) -> String {
    b.iter().map(|x| format!("{x:02x}")).collect()
}

fn keys_of(data: &Value) -> Vec<Vec<u8>> {
    data["keys"]
        .as_array()
        .unwrap()
        .iter()
        .map(|k| unhex(k["hex"].as_str().unwrap()))
        .collect()
}

fn u(v: &Value) -> u64 {
    v.as_u64().unwrap_or_else(|| panic!("not a number: {v}"))
}

/// What the crate builds for `keys`, computed here independently of the
/// page's trace.
struct Expected<const W: u32> {
    /// The first seed that bands (so also the number that failed before it).
    seed: u32,
    pivots: u32,
    solution: Vec<u32>,
    stored_rows: Vec<String>,
    hasher: Hasher<S<W>>,
    num_starts: u32,
    filter: Vec<u8>,
}

/// The settings `ribbon viz` draws with, for width `W`.
type S<const W: u32> = Settings<SmallRow<W>, true, false, false>;

fn expected<const W: u32>(keys: &[Vec<u8>], columns: u32, result_bits: u32) -> Expected<W> {
    let hashes: Vec<u64> = keys.iter().map(|k| get_slice_hash64(k)).collect();
    let mask = u32::MAX >> (32 - result_bits);
    for seed in 0..32 {
        let hasher = Hasher::<S<W>>::with_ordinal_seed(seed);
        let mut banding = Banding::<S<W>>::new();
        banding.reset(columns);
        let num_starts = banding.num_starts();
        let mut eqs: Vec<_> = hashes
            .iter()
            .map(|&h| {
                let mut eq = hasher.equation(h, num_starts);
                eq.result_row &= mask;
                eq
            })
            .collect();
        // The page adds rows sorted by start (ties in key order): the
        // solution does not depend on the order, the reduced rows do.
        eqs.sort_by_key(|eq| eq.start);
        let ok = banding.add_all(eqs);
        if !ok {
            continue;
        }
        let stored_rows = (0..columns)
            .filter_map(|i| {
                let (cr, _) = banding.load_row(i, false);
                (cr != SmallRow::ZERO).then(|| {
                    (0..columns)
                        .map(|c| {
                            let on = c >= i && c - i < W && (cr >> (c - i)) & SmallRow::ONE != SmallRow::ZERO;
                            if on {
                                '1'
                            } else {
                                '0'
                            }
                        })
                        .collect()
                })
            })
            .collect();
        let mut dedup = hashes.clone();
        dedup.dedup();
        let one_in = ribbon::rocksdb::policy::BitsPerKey::new(10.0).desired_one_in_fp_rate();
        return Expected {
            seed,
            pivots: banding.occupied_count(),
            solution: simple_back_subst(&banding, result_bits),
            stored_rows,
            hasher,
            num_starts,
            filter: standard128::build(dedup, one_in, |_| usize::MAX).unwrap(),
        };
    }
    panic!("no seed bands");
}

impl<const W: u32> Expected<W> {
    /// The crate's answer for `key` over the row-major solution, and the
    /// key's start, coefficient row and result row.
    fn query(&self, key: &[u8], result_bits: u32) -> (bool, u32, u32, u32) {
        let h = self.hasher.hash(get_slice_hash64(key));
        let start = self.hasher.start(h, self.num_starts);
        let cr = self.hasher.coeff_row(h);
        let expected = self.hasher.result_row(h) & (u32::MAX >> (32 - result_bits));
        let got = simple_query(&self.solution, start, cr) & (u32::MAX >> (32 - result_bits));
        (got == expected, start, cr.get(), expected)
    }

    /// The Standard128 reader's answer for `key`.
    fn icml(&self, key: &[u8]) -> bool {
        let Parsed::Reader(r): Parsed<Standard128Reader<'_>> = standard128::parse_trailer(&self.filter)
        else {
            panic!("not a Ribbon filter");
        };
        r.may_match_hash(get_slice_hash64(key))
    }

    fn bit_rows(&self, result_bits: u32) -> Vec<String> {
        (0..result_bits)
            .map(|j| {
                self.solution
                    .iter()
                    .map(|v| if (v >> j) & 1 == 1 { '1' } else { '0' })
                    .collect()
            })
            .collect()
    }
}

#[test]
fn the_default_page_is_small_offline_and_replays_the_crates_construction() {
    let dir = tempfile::tempdir().unwrap();
    let (_, text) = page(dir.path(), "p.html", &[]);
    assert!(text.len() < 1024 * 1024, "{} bytes", text.len());
    // Nothing is fetched: no URL, no external script, style, image or font.
    for needle in ["://", " src=", "<link", "@import", "url("] {
        assert!(!text.contains(needle), "the page refers to {needle}");
    }
    let d = data(&text);
    let t = &d["trace"];
    assert_eq!(
        (u(&t["width"]), u(&t["columns"]), u(&t["result_bits"])),
        (12, 64, 1)
    );
    let keys = keys_of(&d);
    assert_eq!(keys.len(), 48);
    let e = expected::<12>(&keys, 64, 1);
    let attempts = t["attempts"].as_array().unwrap();
    assert_eq!(attempts.len() as u32, e.seed + 1);
    assert_eq!(u(&attempts.last().unwrap()["seed"]), u64::from(e.seed));
    for a in &attempts[..attempts.len() - 1] {
        assert!(a["failed_key"].is_u64(), "an earlier seed failed");
    }
    let solution: Vec<u32> = t["solution"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| u(v) as u32)
        .collect();
    assert_eq!(solution, e.solution);
    // Back-substitution covers every slot once, from the last.
    let slots: Vec<u64> = t["back_subst"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| u(&s[0]))
        .collect();
    assert_eq!(slots, (0..64).rev().collect::<Vec<u64>>());
    assert_eq!(unhex(d["icml"]["filter_hex"].as_str().unwrap()), e.filter);
}

#[test]
fn bad_arguments_are_one_line_errors() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("p.html");
    let cases: &[(&[&str], i32, &str)] = &[
        (&["--columns", "8"], 2, "--columns 8 is below --width 12"),
        (&["--width", "40"], 2, "--width"),
        (&["--random", "300"], 2, "--random"),
        (&["--result-bits", "0"], 2, "--result-bits"),
        (
            &["--random", "64", "--max-seeds", "1"],
            1,
            "none of seeds 0..1 bands 64 keys into 64 columns",
        ),
    ];
    for (args, code, msg) in cases {
        let o = ribbon()
            .arg("viz")
            .args(*args)
            .arg("--out")
            .arg(&out)
            .output()
            .unwrap();
        let err = String::from_utf8(o.stderr).unwrap();
        assert_eq!(o.status.code(), Some(*code), "{args:?}: {err}");
        assert!(err.contains(msg) && err.lines().count() == 1, "{args:?}: {err}");
    }
    let keys = dir.path().join("k.txt");
    std::fs::write(&keys, "").unwrap();
    let o = ribbon()
        .args(["viz", "--keys"])
        .arg(&keys)
        .arg("--out")
        .arg(&out)
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&o.stderr).contains("no keys"));
    std::fs::write(&keys, (0..257).map(|i| format!("k{i}\n")).collect::<String>()).unwrap();
    let o = ribbon()
        .args(["viz", "--keys"])
        .arg(&keys)
        .arg("--out")
        .arg(&out)
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&o.stderr).contains("at most 256 keys"));
    assert!(!out.exists());
}

// ---- In the browser.

fn chromium() -> String {
    let bin = std::env::var("RIBBON_CHROMIUM").unwrap_or_else(|_| "chromium".into());
    let found = std::process::Command::new(&bin).arg("--version").output();
    assert!(
        found.is_ok_and(|o| o.status.success()),
        "{bin} not found: install Debian's chromium package (scripts/test.sh does) or set RIBBON_CHROMIUM"
    );
    bin
}

/// Percent-encodes everything but unreserved characters (so that `+`
/// stays a plus in the page's URLSearchParams).
fn percent(s: &str) -> String {
    s.bytes()
        .map(|b| {
            if b.is_ascii_alphanumeric() || b"-_.~".contains(&b) {
                (b as char).to_string()
            } else {
                format!("%{b:02X}")
            }
        })
        .collect()
}

/// Opens `page` with `#drive=CONFIG` in headless Chromium (virtual time, so
/// Play runs at once) and returns the report the page's driver wrote from
/// its DOM.
fn drive(page: &Path, config: &Value) -> Value {
    drive_at(page, config, (1366, 768), false)
}

/// [`drive`] in a window of `size` CSS pixels, with touch emulated
/// (`--touch-events`, a phone's coarse pointer) when `touch`.
fn drive_at(page: &Path, config: &Value, size: (u32, u32), touch: bool) -> Value {
    let profile = tempfile::tempdir().unwrap();
    let url = format!("file://{}#drive={}", page.display(), percent(&config.to_string()));
    // Headless Chromium's window is at least 500 pixels wide: a phone's
    // viewport is an iframe of its size, whose page posts its report up.
    let harness = profile.path().join("phone.html");
    let (url, window) = if size.0 < 500 {
        std::fs::write(
            &harness,
            format!(
                "<!doctype html><body style=\"margin:0\"><iframe style=\"border:0;display:block\" width=\"{}\" height=\"{}\" src=\"{url}\"></iframe>\
                 <pre id=\"test-report\"></pre><script>addEventListener('message', (e) => {{\
                 document.getElementById('test-report').textContent = e.data; document.body.dataset.testDone = '1'; }});</script></body>",
                size.0, size.1
            ),
        )
        .unwrap();
        (format!("file://{}", harness.display()), (500, size.1 + 40))
    } else {
        (url, size)
    };
    let out = std::process::Command::new(chromium())
        .args([
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--no-first-run",
            "--virtual-time-budget=600000",
            "--dump-dom",
            "--hide-scrollbars",
        ])
        .arg(format!("--window-size={},{}", window.0, window.1))
        .args(if touch {
            &["--touch-events=enabled", "--blink-settings=primaryPointerType=2,primaryHoverType=1,availablePointerTypes=2,availableHoverTypes=1"][..]
        } else {
            &[][..]
        })
        .arg(format!("--user-data-dir={}", profile.path().display()))
        .arg(&url)
        .output()
        .unwrap();
    let dom = String::from_utf8_lossy(&out.stdout);
    assert!(
        dom.contains(r#"data-test-done="1""#),
        "the driver did not finish: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let start = dom.find(r#"<pre id="test-report""#).unwrap();
    let body = &dom[start..];
    let body = &body[body.find('>').unwrap() + 1..body.find("</pre>").unwrap()];
    let report: Value = serde_json::from_str(
        &body
            .replace("&amp;", "&")
            .replace("&lt;", "<")
            .replace("&gt;", ">")
            .replace("&quot;", "\""),
    )
    .unwrap();
    assert_eq!(
        report["errors"],
        serde_json::json!([]),
        "script errors in the page"
    );
    report
}

/// A key that is not in `keys` and whose crate answer is `answer`.
fn non_member<const W: u32>(keys: &[Vec<u8>], e: &Expected<W>, answer: bool, r: u32) -> String {
    (0..)
        .map(|i| format!("absent-{i}"))
        .find(|k| !keys.contains(&k.as_bytes().to_vec()) && e.query(k.as_bytes(), r).0 == answer)
        .unwrap()
}

fn check_queries<const W: u32>(report: &Value, keys: &[Vec<u8>], e: &Expected<W>, r: u32) {
    for q in report["queries"].as_array().unwrap() {
        let key = q["key"].as_str().unwrap();
        let bytes = key
            .strip_prefix("hex:")
            .map_or_else(|| key.as_bytes().to_vec(), unhex);
        let (answer, start, cr, result) = e.query(&bytes, r);
        let member = keys.iter().position(|k| *k == bytes).map_or(-1, |p| p as i64);
        assert!(answer || member < 0, "a member must match");
        assert_eq!(q["answer"], if answer { "1" } else { "0" }, "{q}");
        assert_eq!(q["icml"], if e.icml(&bytes) { "1" } else { "0" }, "{q}");
        assert_eq!(q["start"], start.to_string(), "{q}");
        assert_eq!(q["coeff"], cr.to_string(), "{q}");
        assert_eq!(q["result"], result.to_string(), "{q}");
        assert_eq!(q["member"], member.to_string(), "{q}");
        assert_eq!(q["hash"], format!("{:016x}", get_slice_hash64(&bytes)), "{q}");
        assert_eq!(q["phase"], "done");
    }
}

/// Play to the end, step back twice, query a member and two non-members
/// (one the filter rejects, one false positive), and hash keys of every
/// length class of XXPH3 in the page: everything as the crate has it.
#[test]
fn the_page_driven_in_chromium_shows_the_crates_results() {
    let dir = tempfile::tempdir().unwrap();
    let (path, text) = page(dir.path(), "p.html", &[]);
    let keys = keys_of(&data(&text));
    let e = expected::<12>(&keys, 64, 1);
    let member = String::from_utf8(keys[17].clone()).unwrap();
    let (absent, false_positive) = (non_member(&keys, &e, false, 1), non_member(&keys, &e, true, 1));
    let mut state = 99;
    let hash_keys: Vec<Vec<u8>> = (0..=260usize)
        .chain([1023, 1024, 1025, 2100])
        .map(|n| (0..n).map(|_| split_mix64(&mut state) as u8).collect())
        .collect();
    let config = serde_json::json!({
        "back": 2,
        "query": [member, absent, false_positive],
        "hash_hex": hash_keys.iter().map(|k| hex(k)).collect::<Vec<_>>(),
    });
    let report = drive(&path, &config);

    let played = &report["played"];
    assert_eq!(played["phase"], "done");
    assert_eq!(u(&played["step"]) + 1, u(&played["steps"]));
    assert_eq!(played["bits"], serde_json::json!(e.bit_rows(1)));
    assert_eq!(u(&played["pivots"]), u64::from(e.pivots));
    assert_eq!(u(&played["failures"]), u64::from(e.seed));
    assert_eq!(u(&played["seed"]), u64::from(e.seed));
    let status = played["status"].as_str().unwrap();
    assert!(
        status.starts_with("phase done") && status.contains(&format!("pivots {}/48", e.pivots)),
        "{status}"
    );
    // The matrix ends as the crate's banding: every stored row, and rows
    // reduced to nothing.
    let mut shown: Vec<String> = played["matrix"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r.as_str().unwrap().to_string())
        .filter(|r| r.contains('1'))
        .collect();
    let mut stored = e.stored_rows.clone();
    shown.sort();
    stored.sort();
    assert_eq!(shown, stored);

    // Two steps back: slot 0 is not solved yet, slot 1 is the current one.
    let back = &report["back"];
    assert_eq!(back["phase"], "back-substitute");
    assert_eq!(u(&back["pcol"]), 1);
    let mut bits = e.bit_rows(1)[0].clone();
    bits.replace_range(0..1, ".");
    assert_eq!(back["bits"][0], bits);

    check_queries(&report, &keys, &e, 1);
    let answers: Vec<&str> = report["queries"]
        .as_array()
        .unwrap()
        .iter()
        .map(|q| q["answer"].as_str().unwrap())
        .collect();
    assert_eq!(answers, ["1", "0", "1"]);

    let hashes: Vec<String> = hash_keys
        .iter()
        .map(|k| format!("{:016x}", get_slice_hash64(k)))
        .collect();
    assert_eq!(report["hashes"], serde_json::json!(hashes));
}

/// Other parameters: 3 result bits, width 16, 48 columns, keys from a file
/// (one not UTF-8, queried by hex), and a query that is not valid hex.
#[test]
fn other_parameters_in_chromium() {
    let dir = tempfile::tempdir().unwrap();
    let keys_file = dir.path().join("keys.hex");
    let mut keys: Vec<Vec<u8>> = (0..40u32).map(|i| format!("user:{i}").into_bytes()).collect();
    keys.push(vec![0xff, 0x00, 0x80]);
    std::fs::write(&keys_file, keys.iter().map(|k| hex(k) + "\n").collect::<String>()).unwrap();
    let (path, text) = page(
        dir.path(),
        "p.html",
        &[
            "--keys",
            keys_file.to_str().unwrap(),
            "--hex",
            "--columns",
            "48",
            "--width",
            "16",
            "--result-bits",
            "3",
        ],
    );
    let d = data(&text);
    assert_eq!(keys_of(&d), keys);
    assert_eq!(u(&d["trace"]["width"]), 16);
    let e = expected::<16>(&keys, 48, 3);
    let config = serde_json::json!({
        "back": 0,
        "query": ["user:7", "hex:ff0080", non_member(&keys, &e, false, 3), "hex:zz"],
    });
    let report = drive(&path, &config);
    let played = &report["played"];
    assert_eq!(played["bits"], serde_json::json!(e.bit_rows(3)));
    assert_eq!(u(&played["failures"]), u64::from(e.seed));
    let queries = report["queries"].as_array().unwrap();
    assert_eq!(queries[3]["answer"], "", "invalid hex is not answered");
    assert!(queries[3]["text"].as_str().unwrap().contains("hex"));
    let valid = serde_json::json!({ "queries": queries[..3] });
    check_queries(&valid, &keys, &e, 3);
    assert_eq!(queries[1]["member"], "40");
}

// ---- Issue 38: the page teaches. Each check runs at the three sizes.

/// The three screens: a laptop, a desktop, and a phone with touch.
const SCREENS: [((u32, u32), bool); 3] = [((1366, 768), false), ((1920, 1080), false), ((390, 844), true)];

/// A row of the page's arithmetic panel: its bits from column `lo` on (bit 0
/// first), as one mask relative to `lo`, and its fingerprint.
fn arith_row(row: &Value) -> (String, u64, u32, u64) {
    let bits = row["bits"].as_str().unwrap();
    let lo: u64 = row["lo"].as_str().unwrap().parse().unwrap();
    let fp = row["fp"].as_str().unwrap();
    let mask = bits
        .bytes()
        .enumerate()
        .fold(0u64, |m, (i, b)| m | (u64::from(b == b'1') << i));
    let res = fp
        .bytes()
        .enumerate()
        .fold(0u32, |m, (i, b)| m | (u32::from(b == b'1') << i));
    (row["role"].as_str().unwrap().to_string(), mask, res, lo)
}

/// The crate's row `(start, coeff, result)` as a mask relative to `lo`.
fn shifted(start: u32, coeff: u64, lo: u64) -> u64 {
    coeff << (u64::from(start) - lo)
}

/// Each key's `(start, coeff, result)`, the banding, and the key that failed.
type UpTo<const W: u32> = (Vec<(u32, u64, u32)>, Banding<S<W>>, Option<usize>);

/// The equations of `keys` under ordinal seed `seed`, and the crate's
/// banding in start order up to (not including) the first row that fails.
fn banding_upto<const W: u32>(keys: &[Vec<u8>], columns: u32, result_bits: u32, seed: u32) -> UpTo<W> {
    let hasher = Hasher::<S<W>>::with_ordinal_seed(seed);
    let mut banding = Banding::<S<W>>::new();
    banding.reset(columns);
    let mask = u32::MAX >> (32 - result_bits);
    let eqs: Vec<_> = keys
        .iter()
        .map(|k| {
            let mut eq = hasher.equation(get_slice_hash64(k), banding.num_starts());
            eq.result_row &= mask;
            eq
        })
        .collect();
    let mut order: Vec<usize> = (0..keys.len()).collect();
    order.sort_by_key(|&k| eqs[k].start);
    let failed = order.into_iter().find(|&k| !banding.add(eqs[k]));
    let rows = eqs
        .iter()
        .map(|e| (e.start, u64::from(e.coeff_row.get()), e.result_row))
        .collect();
    (rows, banding, failed)
}

/// Seeds that fail before one bands (32 when none of 0..32 does).
fn failed_seeds<const W: u32>(keys: &[Vec<u8>], columns: u32, result_bits: u32) -> u64 {
    (0..32)
        .find(|&seed| banding_upto::<W>(keys, columns, result_bits, seed).2.is_none())
        .unwrap_or(32)
        .into()
}

fn inside(r: &Value, height: f64) -> bool {
    r["top"].as_f64().unwrap() >= -0.5 && r["bottom"].as_f64().unwrap() <= height + 0.5
}

/// Every item of issue 38, driven at each screen size: Play stops on each
/// failure, retry and phase change with the failed row tinted and the chain
/// of rows summing to `0 = 1`; the XOR triple and the back-substitution are
/// written out with the crate's bits; A, the explanation and the pivot row
/// are on screen together on a laptop; no horizontal scroll on a phone, where
/// a tap explains; the status names the pivot row; stores are not drawn as
/// XOR targets; the query row is the hashed row; no stale query; jump to
/// query focuses the box; the slider keeps its arrows; labels, axis and
/// fingerprint header; the by-slot view is the crate's stored system; the
/// space figure and the failures per column count are the crate's.
#[test]
fn the_page_teaches_at_three_sizes() {
    let dir = tempfile::tempdir().unwrap();
    let (path, text) = page(dir.path(), "p.html", &[]);
    let d = data(&text);
    let keys = keys_of(&d);
    let e = expected::<12>(&keys, 64, 1);
    assert!(
        e.seed > 0,
        "the default keys fail a seed first (the failure checks need one)"
    );
    let member = String::from_utf8(keys[5].clone()).unwrap();
    let absent = non_member(&keys, &e, false, 1);
    let config = serde_json::json!({
        "pauses": true,
        "at": [{"t": "x", "a": -1}, {"t": "b", "a": -1, "nth": 5, "then": "x"}, {"t": "s", "a": -1, "nth": 3}, {"t": "v", "nth": 30}, {"t": "x", "a": -1, "nth": 60}],
        "keys": [["speed", "ArrowRight"], ["body", "ArrowRight"]],
        "tap": true,
        "query": [member, absent],
        "stale": member,
        "by_slot": true,
    });
    for (size, touch) in SCREENS {
        let report = drive_at(&path, &config, size, touch);
        let at = |i: usize| &report["at"][i];
        let ctx = format!("{size:?}");
        let height = f64::from(size.1);

        // Play stops at each failure, with the failed row tinted and the
        // chain that sums to 0 = 1, each row the crate's.
        let pauses = report["pauses"].as_array().unwrap();
        let fails: Vec<&Value> = pauses.iter().filter(|p| p["kind"] == "fail").collect();
        assert_eq!(fails.len() as u32, e.seed, "{ctx}: one stop per failed seed");
        assert_eq!(
            pauses.iter().filter(|p| p["t"] == "retry").count() as u32,
            e.seed,
            "{ctx}"
        );
        for phase in ["sort", "eliminate", "back-substitute", "done"] {
            assert!(
                pauses.iter().any(|p| p["phase"] == phase),
                "{ctx}: no stop at {phase}"
            );
        }
        for (seed, f) in fails.iter().enumerate() {
            assert_eq!(f["fail_class"], true, "{ctx}: the failed row is tinted");
            assert_eq!(f["arith"]["kind"], "fail");
            let (eqs, banding, failed) = banding_upto::<12>(&keys, 64, 1, seed as u32);
            let failed = failed.expect("the crate fails this seed too");
            let rows: Vec<_> = f["arith"]["rows"]
                .as_array()
                .unwrap()
                .iter()
                .map(arith_row)
                .collect();
            let (mut sum, mut res) = (0u64, 0u32);
            for (i, (role, mask, r, lo)) in rows.iter().enumerate() {
                if role == "sum" {
                    assert_eq!((*mask, *r), (0, 1), "{ctx}: the chain sums to 0 = 1");
                    continue;
                }
                let key: usize = f["arith"]["rows"][i]["key"].as_str().unwrap().parse().unwrap();
                let (start, coeff, result) = if role == "hashed" {
                    assert_eq!(key, failed, "{ctx}");
                    eqs[key]
                } else {
                    let slot: u32 = f["arith"]["rows"][i]["base"].as_str().unwrap().parse().unwrap();
                    let (cr, rr) = banding.load_row(slot, false);
                    (slot, u64::from(cr.get()), rr)
                };
                assert_eq!(
                    (*mask, *r),
                    (shifted(start, coeff, *lo), result),
                    "{ctx}: chain row {i}"
                );
                sum ^= mask;
                res ^= r;
            }
            assert_eq!((sum, res), (0, 1), "{ctx}: the chain's rows sum to 0 = 1");
        }

        // The XOR triple of the final seed's first elimination.
        let x = at(0);
        assert_eq!(x["arith"]["kind"], "xor", "{ctx}");
        let rows: Vec<_> = x["arith"]["rows"]
            .as_array()
            .unwrap()
            .iter()
            .map(arith_row)
            .collect();
        let key: usize = x["arith"]["rows"][0]["key"].as_str().unwrap().parse().unwrap();
        let pkey: i64 = x["arith"]["rows"][1]["key"].as_str().unwrap().parse().unwrap();
        let slot: u32 = x["arith"]["rows"][1]["base"].as_str().unwrap().parse().unwrap();
        let (eqs, _, _) = banding_upto::<12>(&keys, 64, 1, e.seed);
        let hasher_row = eqs[key];
        let final_banding = {
            let (_, b, f) = banding_upto::<12>(&keys, 64, 1, e.seed);
            assert!(f.is_none());
            b
        };
        let (pcr, prr) = final_banding.load_row(slot, false);
        let lo = rows[0].3;
        assert_eq!(lo, u64::from(slot));
        assert_eq!(rows[0].0, "before");
        assert_eq!(
            (rows[0].1, rows[0].2),
            (shifted(hasher_row.0, hasher_row.1, lo), hasher_row.2),
            "{ctx}: row before"
        );
        assert_eq!(
            (rows[1].1, rows[1].2),
            (u64::from(pcr.get()), prr),
            "{ctx}: pivot row"
        );
        assert_eq!(
            (rows[2].1, rows[2].2),
            (rows[0].1 ^ rows[1].1, rows[0].2 ^ rows[1].2),
            "{ctx}: the XOR"
        );
        // The status names the pivot row the message names.
        let keys_drawn = x["row_keys"].as_array().unwrap();
        assert_eq!(keys_drawn[u(&x["prow"]) as usize], pkey, "{ctx}");
        assert!(x["status"]
            .as_str()
            .unwrap()
            .contains(&format!("pivot row {}", u(&x["prow"]))));
        assert!(x["explain"]
            .as_str()
            .unwrap()
            .contains(&format!("pivot row {}", u(&x["prow"]))));
        // A `b` step whose column is taken names its pivot row in the status too.
        let b = at(1);
        assert!(
            b["explain"].as_str().unwrap().contains("already pivots"),
            "{ctx}: {}",
            b["explain"]
        );
        let bp = u(&b["prow"]);
        assert!(
            b["status"]
                .as_str()
                .unwrap()
                .contains(&format!("pivot row {bp} ")),
            "{ctx}: {}",
            b["status"]
        );
        assert!(
            b["explain"]
                .as_str()
                .unwrap()
                .contains(&format!("which row {bp} ")),
            "{ctx}: {}",
            b["explain"]
        );
        // A store is not drawn as an XOR target.
        let s = at(2);
        assert_eq!(s["kind"], "s");
        assert!(s["row_classes"]
            .as_array()
            .unwrap()
            .iter()
            .any(|c| c.as_str().unwrap().contains("row-store")));
        assert!(!s["row_classes"]
            .as_array()
            .unwrap()
            .iter()
            .any(|c| c.as_str().unwrap().contains("row-cur")));
        // Back-substitution: the row, the solved bits it reads, the parity.
        let v = at(3);
        assert_eq!(v["arith"]["kind"], "solve", "{ctx}");
        let eq = &v["arith"]["eq"];
        let vslot: usize = eq["slot"].as_str().unwrap().parse().unwrap();
        let reads: Vec<(usize, u32)> = serde_json::from_str(
            v["arith"]["rows"]
                .as_array()
                .unwrap()
                .iter()
                .find(|r| r["role"] == "reads")
                .unwrap()["reads"]
                .as_str()
                .unwrap(),
        )
        .unwrap();
        let (cr, rr) = final_banding.load_row(vslot as u32, false);
        let want: Vec<usize> = (1..12)
            .filter(|k| (cr.get() >> k) & 1 == 1)
            .map(|k| vslot + k)
            .collect();
        assert_eq!(reads.iter().map(|r| r.0).collect::<Vec<_>>(), want, "{ctx}");
        let mut parity = 0;
        for &(c, val) in &reads {
            assert_eq!(val, e.solution[c], "{ctx}: A[{c}]");
            parity ^= val;
        }
        assert_eq!(eq["par"], parity.to_string());
        assert_eq!(eq["res"], rr.to_string());
        assert_eq!(eq["val"], (rr ^ parity).to_string());
        assert_eq!(rr ^ parity, e.solution[vslot]);

        // One screen on a laptop or desktop: A, the explanation and the pivot row.
        if !touch {
            for i in [0, 4] {
                let g = &at(i)["geometry"];
                assert!(g["pivot_row"].is_object(), "{ctx}");
                for part in ["bits", "pivot_row", "explain", "arith"] {
                    assert!(inside(&g[part], height), "{ctx}: {part} off screen: {g}");
                }
            }
        }
        // No horizontal scroll, at every size.
        let g = &report["geometry"];
        assert!(u(&g["scroll_width"]) <= u64::from(size.0), "{ctx}: {g}");
        assert_eq!(u(&g["inner"][0]), u64::from(size.0), "{ctx}");
        if touch {
            assert!(
                g["coarse"] == true && g["hover_none"] == true,
                "{ctx}: touch is emulated: {g}"
            );
            // A tap explains what hover explains.
            let tap = &report["tap"];
            assert_eq!(tap["tapped"], "1", "{ctx}");
            assert!(
                tap["after"].as_str().unwrap().starts_with("Row 3"),
                "{ctx}: {tap}"
            );
        }
        // Labelled: no overlapping labels, a column axis, the fingerprint header, tooltips.
        assert_eq!(u(&g["label_overlaps"]), 0, "{ctx}");
        assert!(u(&g["axis_labels"]) >= 4, "{ctx}");
        assert!(g["fp_header"].as_str().unwrap().starts_with('b'));
        assert_eq!(g["label_titles"], true);

        // Keys: the slider keeps its arrows; elsewhere → steps.
        let k = &report["keys"];
        assert_eq!(
            k[0]["before"]["step"], k[0]["after"]["step"],
            "{ctx}: → on the slider steps"
        );
        assert_eq!(u(&k[1]["after"]["step"]), u(&k[1]["before"]["step"]) + 1, "{ctx}");

        // The query row is the member's hashed row, not its reduced row.
        check_queries(&report, &keys, &e, 1);
        let q = &report["queries"][0];
        let (_, start, coeff, _) = e.query(member.as_bytes(), 1);
        let classes = q["row_classes"].as_array().unwrap();
        let p = classes
            .iter()
            .position(|c| c.as_str().unwrap().contains("row-query"))
            .expect("the query row is drawn");
        let want: String = (0..64u32)
            .map(|c| {
                if c >= start && c - start < 12 && (coeff >> (c - start)) & 1 == 1 {
                    '1'
                } else {
                    '0'
                }
            })
            .collect();
        assert_eq!(q["matrix"][p], want, "{ctx}: the query row is the hashed row");
        assert_eq!(
            classes
                .iter()
                .filter(|c| c.as_str().unwrap().contains("row-query"))
                .count(),
            1
        );
        // No typed query is left without an answer; jump to query focuses the box.
        let stale = &report["stale"];
        assert_eq!(stale["answered"], "1");
        assert!(stale["value"] == "" || stale["answer"] != "", "{ctx}: {stale}");
        assert_eq!(report["jump_focus"], true, "{ctx}");

        // By slot: the crate's stored rows, in slot order (upper triangular).
        let by_slot: Vec<String> = report["by_slot"]["matrix"].as_array().unwrap()[..e.stored_rows.len()]
            .iter()
            .map(|r| r.as_str().unwrap().to_string())
            .collect();
        assert_eq!(by_slot, e.stored_rows, "{ctx}");

        // The space figure: the crate's numbers.
        let space = &d["space"];
        let fp = 0.5f64;
        let bloom = space["bloom_bits_per_key"].as_f64().unwrap();
        let k = space["bloom_probes"].as_i64().unwrap() as i32;
        use ribbon::rocksdb::bloom::math::BloomMath;
        assert!(BloomMath::standard_fp_rate(bloom, k) <= fp);
        assert!((1..=30).all(|k| BloomMath::standard_fp_rate(bloom * (1.0 - 1e-9), k) > fp));
        let shown: Vec<String> = [64.0 / 48.0, 1.0, bloom]
            .iter()
            .map(|v| format!("{v:.2}"))
            .collect();
        assert_eq!(report["space"], serde_json::json!(shown), "{ctx}");
        for row in report["fail_table"].as_array().unwrap() {
            let m = u(&row[0]) as u32;
            assert_eq!(
                u(&row[1]),
                failed_seeds::<12>(&keys, m, 1),
                "{ctx}: failed seeds at {m} columns"
            );
        }
        // The Standard128 caption says what the filter really is.
        let lede = &report["icml_lede"];
        assert_eq!(lede["bytes"], e.filter.len().to_string());
        assert_eq!(
            lede["bitsPerKey"],
            format!("{:.1}", 8.0 * e.filter.len() as f64 / 48.0)
        );
    }
}

/// The controls replay other settings of the same keys, each the crate's
/// construction: a variant that bands, and one where every seed fails.
#[test]
fn the_controls_replay_the_crates_other_settings() {
    let dir = tempfile::tempdir().unwrap();
    let (path, text) = page(dir.path(), "p.html", &[]);
    let d = data(&text);
    let keys = keys_of(&d);
    let variants = d["variants"].as_array().unwrap();
    let embedded = |w: u64, banded: bool| {
        variants
            .iter()
            .find(|v| {
                u(&v["width"]) == w
                    && v["banded"] == banded
                    && v["trace"].is_object()
                    && u(&v["columns"]) != 64
            })
            .unwrap_or_else(|| panic!("no embedded variant of width {w}, banded {banded}"))
    };
    let ok = embedded(16, true);
    let (m, r) = (u(&ok["columns"]) as u32, u(&ok["result_bits"]) as u32);
    let e = expected::<16>(&keys, m, r);
    let config = serde_json::json!({"v": format!("{m},16,{r}")});
    let report = drive(&path, &config);
    assert_eq!(report["variant"], serde_json::json!([m, 16, r]));
    let played = &report["played"];
    assert_eq!(played["bits"], serde_json::json!(e.bit_rows(r)));
    assert_eq!(u(&played["failures"]), u64::from(e.seed));
    assert_eq!(u(&ok["failed_seeds"]), u64::from(e.seed));
    assert!(
        report["options"][0].as_array().unwrap().len() >= 4,
        "column choices"
    );
    let space = &ok["space"];
    assert_eq!(space["bits_per_key"].as_f64().unwrap(), f64::from(m * r) / 48.0);
    assert_eq!(space["bound_bits_per_key"].as_f64().unwrap(), f64::from(r));

    let bad = embedded(8, false);
    let m = u(&bad["columns"]) as u32;
    let r = u(&bad["result_bits"]) as u32;
    assert_eq!(
        failed_seeds::<8>(&keys, m, r),
        32,
        "the crate fails every seed too"
    );
    let report = drive(&path, &serde_json::json!({"v": format!("{m},8,{r}")}));
    assert_eq!(report["played"]["kind"], "gaveup");
    assert_eq!(
        u(&report["played"]["failures"]),
        2,
        "the first two failures are replayed"
    );
}

/// A large page (220 keys, 256 columns, width 32, 8 result bits) stays under
/// 1 MB, its labels do not overlap, and it has no horizontal page scroll.
#[test]
fn a_large_page_keeps_its_labels_apart() {
    let dir = tempfile::tempdir().unwrap();
    let args = [
        "--random",
        "220",
        "--columns",
        "256",
        "--width",
        "32",
        "--result-bits",
        "8",
    ];
    let (path, text) = page(dir.path(), "big.html", &args);
    assert!(text.len() < 1024 * 1024, "{} bytes", text.len());
    for (size, touch) in SCREENS {
        let report = drive_at(&path, &serde_json::json!({"no_play": true}), size, touch);
        let g = &report["geometry"];
        assert_eq!(u(&g["label_overlaps"]), 0, "{size:?}: {g}");
        assert!(u(&g["labels_shown"]) > 0);
        assert!(u(&g["scroll_width"]) <= u64::from(size.0), "{size:?}: {g}");
    }
}

/// Every setting of the controls is the crate's: its failed seeds, and for
/// each embedded trace that bands, the solution (no browser needed).
#[test]
fn every_variant_is_the_crates_construction() {
    let dir = tempfile::tempdir().unwrap();
    let (_, text) = page(dir.path(), "p.html", &["--random", "40", "--seed", "7"]);
    let d = data(&text);
    let keys = keys_of(&d);
    let variants = d["variants"].as_array().unwrap();
    assert!(variants.len() >= 40, "{} variants", variants.len());
    let mut embedded = 0;
    for v in variants {
        let (m, w, r) = (
            u(&v["columns"]) as u32,
            u(&v["width"]),
            u(&v["result_bits"]) as u32,
        );
        let failed = match w {
            8 => failed_seeds::<8>(&keys, m, r),
            12 => failed_seeds::<12>(&keys, m, r),
            16 => failed_seeds::<16>(&keys, m, r),
            32 => failed_seeds::<32>(&keys, m, r),
            other => panic!("width {other} is not in the grid"),
        };
        assert_eq!(u(&v["failed_seeds"]), failed, "{m},{w},{r}");
        assert_eq!(v["banded"], failed < 32, "{m},{w},{r}");
        assert_eq!(
            v["space"]["bits_per_key"].as_f64().unwrap(),
            f64::from(m * r) / 40.0
        );
        if v["trace"].is_object() && failed < 32 {
            embedded += 1;
            let solution: Vec<u32> = v["trace"]["solution"]
                .as_array()
                .unwrap()
                .iter()
                .map(|x| u(x) as u32)
                .collect();
            let want = match w {
                8 => expected::<8>(&keys, m, r).solution,
                12 => expected::<12>(&keys, m, r).solution,
                16 => expected::<16>(&keys, m, r).solution,
                _ => expected::<32>(&keys, m, r).solution,
            };
            assert_eq!(solution, want, "{m},{w},{r}");
        }
    }
    assert!(embedded >= 20, "{embedded} embedded traces that band");
}
