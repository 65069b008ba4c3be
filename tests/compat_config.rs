//! The slot tables of ribbon_config.cc against RocksDB's, for every shape
//! RocksDB instantiates.

use ribbon::core::config::{self, ConstructionFailureChance};
use ribbon_compat::harness;

fn sample_counts() -> Vec<u32> {
    let mut v: Vec<u32> = (0..3000).collect();
    let mut x = 3000u64;
    while x < u64::from(u32::MAX) {
        v.push(x as u32);
        v.push((x as u32).wrapping_sub(1));
        v.push(x as u32 + 1);
        x = x * 21 / 20 + 7;
    }
    v.push(u32::MAX);
    v.push(u32::MAX - 1);
    v.extend((1..32).map(|s| 1u32 << s));
    v
}

#[test]
fn slot_tables_match_rocksdb() {
    let counts = sample_counts();
    for cfc in ConstructionFailureChance::ALL {
        let code = u32::from(cfc.code());
        for bits in [64u32, 128] {
            for smash in [false, true] {
                for homog in [false, true] {
                    for &n in &counts {
                        let native = harness::ribbon_num_slots(code, bits, smash, homog, n).unwrap();
                        assert_eq!(
                            config::get_num_slots(cfc, bits, smash, homog, n),
                            native,
                            "num_slots {cfc:?} w={bits} smash={smash} homog={homog} n={n}"
                        );
                        let native = harness::ribbon_num_to_add(code, bits, smash, homog, n).unwrap();
                        assert_eq!(
                            config::get_num_to_add(cfc, bits, smash, homog, n),
                            native,
                            "num_to_add {cfc:?} w={bits} smash={smash} homog={homog} m={n}"
                        );
                    }
                }
            }
        }
    }
}
