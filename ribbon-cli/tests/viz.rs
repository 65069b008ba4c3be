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
    assert!(text.len() < 200 * 1024, "{} bytes", text.len());
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
    let profile = tempfile::tempdir().unwrap();
    let url = format!("file://{}#drive={}", page.display(), percent(&config.to_string()));
    let out = std::process::Command::new(chromium())
        .args([
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--no-first-run",
            "--virtual-time-budget=600000",
            "--dump-dom",
        ])
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
    serde_json::from_str(body).unwrap()
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
