//! The `serde` feature: configurations, policies and filters round-trip,
//! and bytes that are not a filter are an error, not a filter.
#![cfg(feature = "serde")]

use ribbon::core::config::ConstructionFailureChance;
use ribbon::{Config, FilterPolicy, Mode, Precision, Ribbon, RibbonRef};
use serde::de::value::{BorrowedBytesDeserializer, Error as ValueError};
use serde::Deserialize;

#[test]
fn configs_round_trip() {
    for config in [
        Config::default(),
        Config::homogeneous(64, 6.5),
        Config::balanced(32, 7.0).with_fp_rate(0.003),
        Config {
            mode: Mode::Homogeneous,
            precision: Precision::ResultBits(9.25),
            failure_chance: ConstructionFailureChance::OneIn2,
            slot_overhead: Some(0.125),
            seed: 7,
            smash: true,
            ..Config::default()
        },
    ] {
        let json = serde_json::to_string(&config).unwrap();
        let back: Config = serde_json::from_str(&json).unwrap();
        assert_eq!(back, config, "{json}");
    }
    let json = serde_json::to_value(Config::default()).unwrap();
    assert_eq!(json["width"], 128);
    assert_eq!(json["precision"], serde_json::json!({"ResultBits": 7.0}));
}

#[test]
fn policies_round_trip_as_their_ids() {
    for id in [
        "ribbonfilter:10",
        "bloomfilter:9.5:false",
        "rust.RibbonFilter:6.5:-1",
    ] {
        let policy: FilterPolicy = id.parse().unwrap();
        let json = serde_json::to_string(&policy).unwrap();
        assert_eq!(json, format!("\"{}\"", policy.id()));
        assert_eq!(serde_json::from_str::<FilterPolicy>(&json).unwrap(), policy);
    }
    assert!(serde_json::from_str::<FilterPolicy>("\"nullptr\"").is_err());
    assert!(serde_json::from_str::<FilterPolicy>("\"ribbonfilter:ten\"").is_err());
}

#[test]
fn filters_round_trip_as_their_bytes() {
    let keys: Vec<String> = (0..2000).map(|i| format!("key{i}")).collect();
    let filter = Ribbon::from_keys(&keys, &Config::balanced(64, 7.0)).unwrap();
    let json = serde_json::to_string(&filter).unwrap();
    let back: Ribbon = serde_json::from_str(&json).unwrap();
    assert_eq!(back.as_bytes(), filter.as_bytes());
    assert!(keys.iter().all(|k| back.contains(k)));
    assert_eq!(serde_json::to_string(&filter.as_ribbon_ref()).unwrap(), json);

    // Zero-copy from borrowed bytes.
    let view =
        RibbonRef::deserialize(BorrowedBytesDeserializer::<ValueError>::new(filter.as_bytes())).unwrap();
    assert_eq!(view.as_bytes().as_ptr(), filter.as_bytes().as_ptr());

    // A damaged filter is refused by both.
    let mut bad = filter.as_bytes().to_vec();
    let last = bad.len() - 1;
    bad[last] ^= 1;
    assert!(RibbonRef::deserialize(BorrowedBytesDeserializer::<ValueError>::new(&bad)).is_err());
    let bad_json = serde_json::to_string(&bad).unwrap();
    assert!(serde_json::from_str::<Ribbon>(&bad_json).is_err());
    assert!(serde_json::from_str::<Ribbon>("[1,2,3]").is_err());
    assert!(serde_json::from_str::<Ribbon>("[1,2,300]").is_err());
}
