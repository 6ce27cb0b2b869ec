//! Mapping a batch in parallel, with the calling thread taking part.
//!
//! A rayon parallel iterator called from a thread outside the pool (a Python interpreter's
//! main thread, a command's main thread) hands all the work to the pool and blocks. Every
//! result is then made on a pool thread and later dropped on the caller's, and a free from
//! another thread costs the allocator more than a local one (mimalloc queues it for the owner
//! to collect). Here the caller works through the batch alongside the pool's threads, and
//! with one thread it does all of it itself, so that most results, or all of them, are made
//! where they are used and dropped.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Mutex, PoisonError};

/// Chunks per thread: enough for the threads to even out uneven items (a few long texts among
/// many short ones), few enough that taking a chunk costs nothing next to encoding it.
const CHUNKS_PER_THREAD: usize = 32;

/// A chunk of the batch: its items until taken, then their results.
struct Chunk<I, O, E> {
    items: Vec<I>,
    results: Option<Result<Vec<O>, E>>,
}

/// `f` on every item, in parallel on rayon's current pool with the calling thread taking part,
/// results in item order; the first error (in item order) is returned. Once a chunk fails,
/// the chunks after it that are not yet started are skipped (those before it still run: one
/// of them may hold an earlier error).
///
/// `weight` is an estimate of an item's cost (its text's length, say). Chunks are cut to even
/// weights rather than even counts, and the heaviest are taken first, so that a long text
/// near the end of a batch does not leave one thread working on it while the others wait.
pub(crate) fn try_map<I: Send, O: Send, E: Send>(
    items: impl IntoIterator<Item = I>,
    weight: impl Fn(&I) -> usize,
    f: impl Fn(I) -> Result<O, E> + Sync,
) -> Result<Vec<O>, E> {
    let items: Vec<I> = items.into_iter().collect();
    let threads = rayon::current_num_threads();
    if threads <= 1 || items.len() <= 1 {
        return map_all(items, &f);
    }
    let n = items.len();
    let weights: Vec<usize> = items.iter().map(|i| weight(i).max(1)).collect();
    let target = weights.iter().sum::<usize>().div_ceil(threads * CHUNKS_PER_THREAD);
    let mut chunks = Vec::new();
    let mut chunk_weights = Vec::new();
    let mut rest = items.into_iter();
    let mut start = 0;
    while start < n {
        let (mut end, mut w) = (start, 0);
        // Every weight is at least 1 and `target` too, so a chunk holds at least one item.
        while end < n && w < target {
            w += weights[end];
            end += 1;
        }
        chunks.push(Mutex::new(Chunk { items: rest.by_ref().take(end - start).collect(), results: None }));
        chunk_weights.push(w);
        start = end;
    }
    let mut order: Vec<usize> = (0..chunks.len()).collect();
    order.sort_by_key(|&k| std::cmp::Reverse(chunk_weights[k]));
    let next = AtomicUsize::new(0);
    let first_failed = AtomicUsize::new(usize::MAX);
    let work = || {
        while let Some(&k) = order.get(next.fetch_add(1, Ordering::Relaxed)) {
            let mut chunk = chunks[k].lock().unwrap_or_else(PoisonError::into_inner);
            let results = if k > first_failed.load(Ordering::Relaxed) {
                Ok(Vec::new())
            } else {
                map_all(std::mem::take(&mut chunk.items), &f)
            };
            if results.is_err() {
                first_failed.fetch_min(k, Ordering::Relaxed);
            }
            chunk.results = Some(results);
        }
    };
    rayon::in_place_scope(|scope| {
        for _ in 1..threads.min(chunks.len()) {
            scope.spawn(|_| work());
        }
        work();
    });
    let mut out = Vec::with_capacity(n);
    for chunk in chunks {
        let chunk = chunk.into_inner().unwrap_or_else(PoisonError::into_inner);
        // Every chunk was taken before the scope ended; a chunk skipped comes after one that
        // failed, so the first error in item order is returned before it.
        out.extend(chunk.results.expect("every chunk is done when the scope ends")?);
    }
    Ok(out)
}

/// `f` on every item in turn, into a vector made at its final size (which
/// `collect::<Result<Vec<_>, _>>()` cannot know, so it grows).
fn map_all<I, O, E>(items: Vec<I>, f: &impl Fn(I) -> Result<O, E>) -> Result<Vec<O>, E> {
    let mut out = Vec::with_capacity(items.len());
    for item in items {
        out.push(f(item)?);
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn in_pool<R: Send>(threads: usize, f: impl FnOnce() -> R + Send) -> R {
        rayon::ThreadPoolBuilder::new().num_threads(threads).build().unwrap().install(f)
    }

    #[test]
    fn results_in_order_on_any_pool() {
        for threads in [1, 2, 3] {
            for n in [0, 1, 2, 5, 97, 1000] {
                // Even weights, and uneven ones: zeros, and a heavy item every 13 and at the end.
                let heavy = move |&i: &usize| if i % 13 == 0 || i + 1 == n { 10_000 } else { i % 3 };
                for uneven in [false, true] {
                    let got = in_pool(threads, || try_map(0..n, |i| if uneven { heavy(i) } else { 1 }, |i| Ok::<_, ()>(i * 2)));
                    assert_eq!(got, Ok((0..n).map(|i| i * 2).collect::<Vec<_>>()), "threads {threads}, n {n}, uneven {uneven}");
                }
            }
        }
    }

    #[test]
    fn first_error_in_item_order() {
        for threads in [1, 2, 4] {
            let got = in_pool(threads, || try_map(0..500, |&i| i % 7, |i| if i % 100 == 37 { Err(i) } else { Ok(i) }));
            assert_eq!(got, Err(37), "threads {threads}");
        }
    }

    #[test]
    fn one_thread_runs_on_the_calling_thread() {
        in_pool(1, || {
            let me = std::thread::current().id();
            let here = try_map(0..100, |_| 1, |_| Ok::<_, ()>(std::thread::current().id() == me)).unwrap();
            assert!(here.iter().all(|&b| b));
        });
    }
}
