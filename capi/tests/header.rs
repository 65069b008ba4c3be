//! The committed header `include/ribbon.h` is what cbindgen generates from
//! the source now: a change to the C API that forgot the header fails here.

use std::path::Path;

#[test]
fn header_matches_the_source() {
    let crate_dir = Path::new(env!("CARGO_MANIFEST_DIR"));
    let config = cbindgen::Config::from_file(crate_dir.join("cbindgen.toml")).expect("capi/cbindgen.toml");
    let mut generated = Vec::new();
    cbindgen::Builder::new()
        .with_crate(crate_dir)
        .with_config(config)
        .generate()
        .expect("cbindgen generates the header")
        .write(&mut generated);
    let generated = String::from_utf8(generated).expect("the header is UTF-8");
    let path = crate_dir.join("include/ribbon.h");
    if std::env::var_os("RIBBON_BLESS").is_some() {
        std::fs::write(&path, &generated).expect("write include/ribbon.h");
        return;
    }
    let committed = std::fs::read_to_string(&path).unwrap_or_default();
    assert!(
        committed == generated,
        "capi/include/ribbon.h differs from the source: run `RIBBON_BLESS=1 cargo test -p ribbon-capi` to update"
    );
}
