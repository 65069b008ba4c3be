//! The batched-query loop every reader shares (RocksDB's MultiGet path):
//! prepare a batch of queries, prefetching what each will read, then
//! answer them, so that the memory fetches of a batch overlap.

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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn answers_the_common_prefix_in_order_and_leaves_the_rest() {
        for (n, m) in [(0, 0), (5, 100), (100, 5), (64, 64), (65, 70), (31, 33)] {
            let queries: Vec<u32> = (0..n).collect();
            let mut out = vec![true; m];
            let mut prepared = Vec::new();
            answer_in_batches(
                &queries,
                &mut out,
                |q| {
                    prepared.push(q);
                    q
                },
                |s| s % 3 == 0,
            );
            let k = (n as usize).min(m);
            for (i, &o) in out.iter().enumerate() {
                assert_eq!(o, if i < k { i % 3 == 0 } else { true }, "n {n} m {m} i {i}");
            }
            assert!(prepared.len() >= k, "every answered query was prepared");
        }
    }
}
