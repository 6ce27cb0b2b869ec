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
pub(crate) fn try_map<I: Send, O: Send, E: Send>(
    items: impl IntoIterator<Item = I>,
    f: impl Fn(I) -> Result<O, E> + Sync,
) -> Result<Vec<O>, E> {
    let items: Vec<I> = items.into_iter().collect();
    let threads = rayon::current_num_threads();
    if threads <= 1 || items.len() <= 1 {
        return map_all(items, &f);
    }
    let n = items.len();
    let size = n.div_ceil((threads * CHUNKS_PER_THREAD).min(n));
    let mut chunks = Vec::with_capacity(n.div_ceil(size));
    let mut rest = items.into_iter();
    loop {
        let items: Vec<I> = rest.by_ref().take(size).collect();
        if items.is_empty() {
            break;
        }
        chunks.push(Mutex::new(Chunk { items, results: None }));
    }
    let next = AtomicUsize::new(0);
    let first_failed = AtomicUsize::new(usize::MAX);
    let work = || loop {
        let k = next.fetch_add(1, Ordering::Relaxed);
        let Some(chunk) = chunks.get(k) else { break };
        let mut chunk = chunk.lock().unwrap_or_else(PoisonError::into_inner);
        let results = if k > first_failed.load(Ordering::Relaxed) {
            Ok(Vec::new())
        } else {
            map_all(std::mem::take(&mut chunk.items), &f)
        };
        if results.is_err() {
            first_failed.fetch_min(k, Ordering::Relaxed);
        }
        chunk.results = Some(results);
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
                let got = in_pool(threads, || try_map(0..n, |i| Ok::<_, ()>(i * 2)));
                assert_eq!(got, Ok((0..n).map(|i| i * 2).collect::<Vec<_>>()), "threads {threads}, n {n}");
            }
        }
    }

    #[test]
    fn first_error_in_item_order() {
        for threads in [1, 2, 4] {
            let got = in_pool(threads, || try_map(0..500, |i| if i % 100 == 37 { Err(i) } else { Ok(i) }));
            assert_eq!(got, Err(37), "threads {threads}");
        }
    }

    #[test]
    fn one_thread_runs_on_the_calling_thread() {
        in_pool(1, || {
            let me = std::thread::current().id();
            let here = try_map(0..100, |_| Ok::<_, ()>(std::thread::current().id() == me)).unwrap();
            assert!(here.iter().all(|&b| b));
        });
    }
}
