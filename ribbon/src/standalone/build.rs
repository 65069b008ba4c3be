//! Construction: from keys or hashes to a sized, banded and
//! back-substituted filter, for the settings type of the configuration.

use super::balanced::{self, BalancedState};
use super::engine::{band, dispatch, Engine, QueryState, Visitor};
use super::file::{Header, HEADER_LEN};
use super::{sizing, Config, Decoded, Error, Mode, Ribbon};
use crate::core::alg::{CoeffRow, RibbonSettings};
use crate::core::hash::get_slice_hash64;
use crate::core::prelude::*;
use crate::core::solution::InterleavedLayout;

impl Ribbon {
    /// Builds a filter of `keys`, each hashed with
    /// [`crate::core::hash::get_slice_hash64`].
    ///
    /// Errors: an invalid `config`, too many keys, or (Standard Ribbon) no
    /// seed of the budget banding.
    pub fn from_keys<I>(keys: I, config: &Config) -> Result<Self, Error>
    where
        I: IntoIterator,
        I::Item: AsRef<[u8]>,
    {
        config.validate()?;
        let hashes: Vec<u64> = keys.into_iter().map(|k| get_slice_hash64(k.as_ref())).collect();
        Self::build(hashes, config)
    }

    /// Builds a filter of keys given as 64-bit hashes (query them with
    /// [`Ribbon::contains_hash`]). The hashes should be uniformly
    /// distributed; equal hashes are allowed. The hashes are copied (8
    /// bytes per key until the function returns), since large sets are
    /// banded in start order.
    ///
    /// Errors: as [`Ribbon::from_keys`].
    pub fn from_hashes(hashes: &[u64], config: &Config) -> Result<Self, Error> {
        config.validate()?;
        Self::build(hashes.to_vec(), config)
    }

    /// As [`Ribbon::from_hashes`], but takes the hashes instead of copying
    /// them, and frees them as soon as construction no longer needs them
    /// (a Balanced filter: before its banding is allocated), for a caller
    /// that has no other use for them (a table's filter builder): the peak
    /// memory of construction then holds one copy of the hashes.
    ///
    /// Errors: as [`Ribbon::from_keys`].
    pub fn from_hash_vec(hashes: Vec<u64>, config: &Config) -> Result<Self, Error> {
        config.validate()?;
        Self::build(hashes, config)
    }

    /// Builds from hashes it owns (a valid `config`).
    fn build(hashes: Vec<u64>, config: &Config) -> Result<Self, Error> {
        dispatch(config.shape()?, Build { config, hashes })
    }
}

/// Builds the filter for the settings type `S` of a (valid) configuration.
struct Build<'a> {
    config: &'a Config,
    hashes: Vec<u64>,
}

impl Visitor for Build<'_> {
    type Output = Result<Ribbon, Error>;
    fn visit<S: RibbonSettings>(self) -> Self::Output
    where
        QueryState<S>: Into<Engine>,
        BalancedState<S>: Into<Engine>,
    {
        let Build { config, mut hashes } = self;
        if config.balanced && !hashes.is_empty() {
            return build_balanced::<S>(config, hashes);
        }
        let num_keys = hashes.len() as u64;
        let plan = sizing::plan_typed::<S>(config, num_keys)?;
        let mut seed = config.seed;
        let mut engine = Engine::Empty;
        // The file is allocated once banding has succeeded (a failed
        // construction allocates none).
        let mut bytes;
        if plan.num_blocks == 0 {
            bytes = vec![0u8; plan.file_len];
        } else {
            let max_seeds = if S::HOMOGENEOUS { 1 } else { config.max_seeds };
            let (found, banding) =
                band::<S>(&mut hashes, plan.num_slots, config.seed, max_seeds).map_err(|tried| {
                    Error::ConstructionFailed {
                        num_keys,
                        num_slots: plan.num_slots,
                        first_seed: config.seed,
                        seeds_tried: tried,
                    }
                })?;
            seed = found;
            bytes = vec![0u8; plan.file_len];
            let layout = InterleavedLayout::<S>::for_num_slots(plan.num_slots, plan.solution_len);
            layout.back_subst(&banding, &mut bytes[HEADER_LEN..HEADER_LEN + plan.solution_len]);
            engine = QueryState::<S>::new(plan.num_blocks, plan.solution_len, seed).into();
        }
        let shape = config.shape()?;
        let header = Header {
            shape,
            failure_chance: (config.mode == Mode::Standard && config.slot_overhead.is_none())
                .then_some(config.failure_chance),
            seed,
            num_blocks: plan.num_blocks,
            num_keys,
            solution_len: plan.solution_len,
            upper_num_columns: plan.upper_num_columns,
            upper_start_block: plan.upper_start_block,
            target_fp_rate: config.precision.target_fp_rate(),
            balanced: None,
        };
        header.seal(&mut bytes);
        Ok(Ribbon {
            decoded: Decoded { header, engine },
            bytes,
        })
    }
}

/// Builds a Balanced filter of `hashes` (at least one) for the settings
/// type `S` of a valid, Balanced `config`.
fn build_balanced<S: RibbonSettings>(config: &Config, hashes: Vec<u64>) -> Result<Ribbon, Error>
where
    BalancedState<S>: Into<Engine>,
{
    let num_keys = hashes.len() as u64;
    if num_keys > sizing::MAX_KEYS {
        return Err(Error::TooManyKeys {
            num_keys,
            max: sizing::MAX_KEYS,
        });
    }
    let plan = sizing::balanced_shards(config, num_keys);
    let last_shard_slots = |k: u64| sizing::last_shard_slots(config, k, plan.geometry.shard_bits > 0);
    let banded = balanced::build::band::<S>(
        hashes,
        &plan,
        config.seed,
        config.max_seeds,
        last_shard_slots,
        sizing::MAX_SLOTS,
        if config.low_memory {
            balanced::build::Memory::Low
        } else {
            balanced::build::Memory::Full
        },
    )
    .map_err(|tried| match tried {
        None => Error::TooManyKeys {
            num_keys,
            max: sizing::MAX_KEYS,
        },
        Some(seeds_tried) => Error::ConstructionFailed {
            num_keys,
            num_slots: 0,
            first_seed: config.seed,
            seeds_tried,
        },
    })?;
    let num_slots = banded.num_slots;
    let solution_len = sizing::solution_len::<S>(config, num_slots);
    let layout = InterleavedLayout::<S>::for_num_slots(num_slots, solution_len);
    let num_blocks = num_slots / S::CoeffRow::BITS;
    let header = Header {
        shape: config.shape()?,
        failure_chance: Some(config.failure_chance),
        seed: banded.seed,
        num_blocks,
        num_keys,
        solution_len,
        upper_num_columns: layout.upper_num_columns(),
        upper_start_block: layout.upper_start_block(),
        target_fp_rate: config.precision.target_fp_rate(),
        balanced: Some(banded.geometry),
    };
    let mut bytes = vec![0u8; header.file_len()];
    let payload = header.payload_range();
    let (solution, thresholds) = bytes[payload].split_at_mut(solution_len);
    balanced::write_metadata(&banded.geometry, &banded.masks, thresholds);
    let (seed, geometry) = (banded.seed, banded.geometry);
    banded.back_subst(&layout, solution);
    header.seal(&mut bytes);
    let engine = BalancedState::<S>::new(num_blocks, solution_len, seed, geometry).into();
    Ok(Ribbon {
        decoded: Decoded { header, engine },
        bytes,
    })
}
