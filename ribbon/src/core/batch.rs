//! The batched-query loops the readers share (RocksDB's MultiGet path):
//! prepare queries ahead, prefetching what each will read, then answer
//! them, so that their memory fetches overlap. [`answer_in_batches`]
//! prepares a whole batch before answering any, as RocksDB does;
//! [`answer_pipelined`] keeps a fixed number of queries prepared ahead of
//! the one it answers.

/// Queries prepared before any is answered: RocksDB's MultiGet batch size
/// (`MultiGetContext::MAX_BATCH_SIZE`).
pub(crate) const QUERY_BATCH: usize = 32;

/// Answers `min(queries.len(), out.len())` queries in batches of
/// [`QUERY_BATCH`]: `prepare` turns a query into the site it reads (and
/// prefetches it), `answer` reads the site once the whole batch is
/// prepared. Entries of `out` past the answered ones are left unchanged.
#[inline(always)]
pub(crate) fn answer_in_batches<Q: Copy, S: Copy + Default>(
    queries: &[Q],
    out: &mut [bool],
    mut prepare: impl FnMut(Q) -> S,
    mut answer: impl FnMut(S) -> bool,
) {
    let mut sites = [S::default(); QUERY_BATCH];
    for (query_chunk, out_chunk) in queries.chunks(QUERY_BATCH).zip(out.chunks_mut(QUERY_BATCH)) {
        for (site, &q) in sites.iter_mut().zip(query_chunk) {
            *site = prepare(q);
        }
        for (o, &site) in out_chunk.iter_mut().zip(&sites[..query_chunk.len()]) {
            *o = answer(site);
        }
    }
}

/// Queries [`answer_pipelined`] keeps prepared ahead of the one it answers.
pub(crate) const PIPELINE_DEPTH: usize = 16;

/// Answers `min(queries.len(), out.len())` queries in order, each prepared
/// [`PIPELINE_DEPTH`] queries before it is answered (`prepare` and
/// `answer` as in [`answer_in_batches`]). The prefetches spread out among
/// the answers instead of coming all at once: for Standard128 queries with
/// the vector kernels, whose answers are short, a batch of 32 prepared at
/// once measured (random hashes, AVX-512, before the kernels took their
/// rows in registers) 16.4 ns/query on a filter in the last-level cache (its 160
/// prefetches queue up behind each other) and this 15.0, against 14.1
/// without prefetching; on a 256 MB filter 23.7 and 24.3 against 62 to 78.
/// Entries of `out` past the answered ones are left unchanged.
#[inline(always)]
pub(crate) fn answer_pipelined<Q: Copy, S: Copy + Default>(
    queries: &[Q],
    out: &mut [bool],
    mut prepare: impl FnMut(Q) -> S,
    mut answer: impl FnMut(S) -> bool,
) {
    let n = queries.len().min(out.len());
    let mut ring = [S::default(); PIPELINE_DEPTH];
    for (site, &q) in ring.iter_mut().zip(&queries[..n]) {
        *site = prepare(q);
    }
    for (i, o) in out[..n].iter_mut().enumerate() {
        let slot = i % PIPELINE_DEPTH;
        let site = ring[slot];
        if let Some(&ahead) = queries[..n].get(i + PIPELINE_DEPTH) {
            ring[slot] = prepare(ahead);
        }
        *o = answer(site);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::core::prelude::*;

    #[test]
    fn answers_the_common_prefix_in_order_and_leaves_the_rest() {
        type Loop = fn(&[u32], &mut [bool], &mut dyn FnMut(u32) -> u32, &mut dyn FnMut(u32) -> bool);
        let loops: [Loop; 2] = [
            |q, o, p, a| answer_in_batches(q, o, p, a),
            |q, o, p, a| answer_pipelined(q, o, p, a),
        ];
        for (n, m, which) in [
            (0, 0),
            (5, 100),
            (100, 5),
            (64, 64),
            (65, 70),
            (31, 33),
            (16, 17),
            (17, 16),
        ]
        .into_iter()
        .flat_map(|(n, m)| [(n, m, 0), (n, m, 1)])
        {
            let queries: Vec<u32> = (0..n).collect();
            let mut out = vec![true; m];
            let mut prepared = Vec::new();
            loops[which](
                &queries,
                &mut out,
                &mut |q| {
                    prepared.push(q);
                    q
                },
                &mut |s| s % 3 == 0,
            );
            let k = (n as usize).min(m);
            if which == 1 {
                assert_eq!(
                    prepared,
                    (0..k as u32).collect::<Vec<_>>(),
                    "each answered query prepared once, in order"
                );
            }
            for (i, &o) in out.iter().enumerate() {
                assert_eq!(o, if i < k { i % 3 == 0 } else { true }, "n {n} m {m} i {i}");
            }
            assert!(prepared.len() >= k, "every answered query was prepared");
        }
    }
}
