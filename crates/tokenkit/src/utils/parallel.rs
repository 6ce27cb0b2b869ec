//! Mapping a batch in parallel, with the calling thread taking part.
//!
//! A rayon parallel iterator called from a thread outside the pool (a Python interpreter's
//! main thread, a command's main thread) hands all the work to the pool and blocks. Every
//! result is then made on a pool thread and later dropped on the caller's, and a free from
//! another thread costs the allocator more than a local one (mimalloc queues it for the owner
//! to collect). Here the caller works through the batch alongside the pool's threads, and
//! with one thread it does all of it itself, so that most results, or all of them, are made
//! where they are used and dropped.
//!
//! A long batch can be stopped: [`with_interrupt_check`] gives the calling thread a check (the
//! Python binding's looks for Ctrl-C) that it runs between items; once it says stop, no thread
//! starts another item and the batch returns [`Interrupted`].

use std::cell::RefCell;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::{Duration, Instant};

/// A check that tells a batch to stop (`true`); see [`with_interrupt_check`].
pub type InterruptCheck = Arc<dyn Fn() -> bool + Send + Sync>;

/// How often the calling thread runs its interrupt check during a batch: often enough that a
/// stop feels immediate, rarely enough to cost nothing (the check may take a lock).
const CHECK_INTERVAL: Duration = Duration::from_millis(20);

/// The calling thread reads the clock (to see whether [`CHECK_INTERVAL`] has passed) before
/// one item in this many, and a stop then waits for at most this many items more. Reading it
/// before every item cost 0.38% of a GPT-2 `encode_batch` of 17,154 pieces of prose of 41
/// bytes on average (callgrind, 2 threads: 332.0M instructions with a check, 330.8M
/// without), more on shorter items.
const ITEMS_PER_CLOCK_READ: u32 = 8;

/// The calling thread's schedule of interrupt checks in a batch.
struct Clock {
    /// When the check runs next.
    next: Instant,
    /// Items before the clock is read again.
    countdown: u32,
}

impl Clock {
    /// A schedule whose first item reads the clock (and runs the check at once).
    fn new() -> Self {
        Clock { next: Instant::now(), countdown: 0 }
    }
}

thread_local! {
    static INTERRUPT_CHECK: RefCell<Option<InterruptCheck>> = const { RefCell::new(None) };
}

/// A batch stopped by the check of [`with_interrupt_check`] (an [`Error::Interrupted`](crate::Error::Interrupted)).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Interrupted;

impl From<Interrupted> for crate::Error {
    fn from(_: Interrupted) -> Self {
        crate::Error::Interrupted
    }
}

/// Runs `f` with `check` watching the batches this thread runs in it (`encode_batch`,
/// `decode_batch`, tiktoken's batches): the thread calls `check` about every 20 ms between
/// items (it reads the clock before one item in [`ITEMS_PER_CLOCK_READ`]), and once it
/// returns `true` no thread starts another item and the batch fails with [`Interrupted`].
/// Items already started finish, so the batch stops within a few items' time.
pub fn with_interrupt_check<R>(check: InterruptCheck, f: impl FnOnce() -> R) -> R {
    struct Restore(Option<InterruptCheck>);
    impl Drop for Restore {
        fn drop(&mut self) {
            INTERRUPT_CHECK.with(|c| *c.borrow_mut() = self.0.take());
        }
    }
    let _restore = Restore(INTERRUPT_CHECK.with(|c| c.borrow_mut().replace(check)));
    f()
}

/// The stop signal of one batch: the calling thread's check (rate-limited) sets `stopped`,
/// which every thread reads before each item.
struct Stop {
    check: Option<InterruptCheck>,
    stopped: AtomicBool,
}

impl Stop {
    fn new() -> Self {
        Stop { check: INTERRUPT_CHECK.with(|c| c.borrow().clone()), stopped: AtomicBool::new(false) }
    }

    /// Whether to stop before the next item; `clock` is the calling thread's schedule (`None`
    /// on the other threads, which only read the flag).
    fn now(&self, clock: Option<&mut Clock>) -> bool {
        if self.stopped.load(Ordering::Relaxed) {
            return true;
        }
        if let (Some(check), Some(clock)) = (&self.check, clock) {
            if clock.countdown > 0 {
                clock.countdown -= 1;
                return false;
            }
            clock.countdown = ITEMS_PER_CLOCK_READ - 1;
            let now = Instant::now();
            if now >= clock.next {
                clock.next = now + CHECK_INTERVAL;
                if check() {
                    self.stopped.store(true, Ordering::Relaxed);
                    return true;
                }
            }
        }
        false
    }
}

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
pub fn try_map<I: Send, O: Send, E: Send + From<Interrupted>>(
    items: impl IntoIterator<Item = I>,
    weight: impl Fn(&I) -> usize,
    f: impl Fn(I) -> Result<O, E> + Sync,
) -> Result<Vec<O>, E> {
    let items: Vec<I> = items.into_iter().collect();
    let threads = rayon::current_num_threads();
    let stop = Stop::new();
    if threads <= 1 || items.len() <= 1 {
        return map_all(items, &f, &stop, Some(&mut Clock::new()));
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
    let work = |mut next_check: Option<Clock>| {
        while let Some(&k) = order.get(next.fetch_add(1, Ordering::Relaxed)) {
            let mut chunk = chunks[k].lock().unwrap_or_else(PoisonError::into_inner);
            let results = if k > first_failed.load(Ordering::Relaxed) || stop.now(next_check.as_mut()) {
                Ok(Vec::new())
            } else {
                map_all(std::mem::take(&mut chunk.items), &f, &stop, next_check.as_mut())
            };
            if results.is_err() {
                first_failed.fetch_min(k, Ordering::Relaxed);
            }
            chunk.results = Some(results);
        }
    };
    rayon::in_place_scope(|scope| {
        for _ in 1..threads.min(chunks.len()) {
            scope.spawn(|_| work(None));
        }
        work(Some(Clock::new()));
    });
    if stop.stopped.load(Ordering::Relaxed) {
        return Err(Interrupted.into());
    }
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
/// `collect::<Result<Vec<_>, _>>()` cannot know, so it grows); [`Interrupted`] when `stop`
/// says so before an item.
fn map_all<I, O, E: From<Interrupted>>(
    items: Vec<I>,
    f: &impl Fn(I) -> Result<O, E>,
    stop: &Stop,
    mut next_check: Option<&mut Clock>,
) -> Result<Vec<O>, E> {
    let mut out = Vec::with_capacity(items.len());
    for item in items {
        if stop.now(next_check.as_deref_mut()) {
            return Err(Interrupted.into());
        }
        out.push(f(item)?);
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(Debug, PartialEq)]
    enum TestError {
        Item(usize),
        Interrupted,
    }
    impl From<Interrupted> for TestError {
        fn from(_: Interrupted) -> Self {
            TestError::Interrupted
        }
    }

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
                    let got = in_pool(threads, || try_map(0..n, |i| if uneven { heavy(i) } else { 1 }, |i| Ok::<_, TestError>(i * 2)));
                    assert_eq!(got, Ok((0..n).map(|i| i * 2).collect::<Vec<_>>()), "threads {threads}, n {n}, uneven {uneven}");
                }
            }
        }
    }

    #[test]
    fn first_error_in_item_order() {
        for threads in [1, 2, 4] {
            let got = in_pool(threads, || try_map(0..500, |&i| i % 7, |i| if i % 100 == 37 { Err(TestError::Item(i)) } else { Ok(i) }));
            assert_eq!(got, Err(TestError::Item(37)), "threads {threads}");
        }
    }

    #[test]
    fn one_thread_runs_on_the_calling_thread() {
        in_pool(1, || {
            let me = std::thread::current().id();
            let here = try_map(0..100, |_| 1, |_| Ok::<_, TestError>(std::thread::current().id() == me)).unwrap();
            assert!(here.iter().all(|&b| b));
        });
    }

    #[test]
    fn an_interrupt_check_stops_the_batch_between_items() {
        for threads in [1, 2, 3] {
            let done = AtomicUsize::new(0);
            let check: InterruptCheck = Arc::new(|| true);
            let slow = |i: usize| {
                std::thread::sleep(Duration::from_millis(2));
                done.fetch_add(1, Ordering::Relaxed);
                Ok::<_, TestError>(i)
            };
            // The first check comes at once: no item at all, or one per helper thread, runs.
            let got = in_pool(threads, || with_interrupt_check(check, || try_map(0..1000, |_| 1, slow)));
            assert_eq!(got, Err(TestError::Interrupted), "threads {threads}");
            assert!(done.load(Ordering::Relaxed) < 100, "threads {threads}: {} items ran", done.load(Ordering::Relaxed));
            // Outside `with_interrupt_check` (and with a check that says go on), batches run whole.
            let never: InterruptCheck = Arc::new(|| false);
            let got = in_pool(threads, || with_interrupt_check(never, || try_map(0..50, |_| 1, slow)));
            assert_eq!(got.unwrap().len(), 50);
            assert_eq!(in_pool(threads, || try_map(0..50, |_| 1, slow)).unwrap().len(), 50);
        }
    }
}
