//! Which rayon pool parallel work runs on, so that batches work after `fork()`.
//!
//! rayon's global pool is created once per address space; after `fork()` the child inherits the
//! pool's bookkeeping but none of its threads, so anything handed to it waits forever. The
//! process that imported the module owns the global pool; any other process (a forked child)
//! runs library calls inside a pool of its own, built on first use and cached per pid. With
//! `TOKENIZERS_PARALLELISM` (or `TOKENKIT_PARALLELISM`) set to a false value, work runs on a
//! one-thread pool, i.e. sequentially.
//!
//! [`run_interruptible`] also lets Ctrl-C stop a batch: Python runs signal handlers only on
//! its main thread and only between bytecodes, so a batch running with the GIL released would
//! otherwise finish (seconds or minutes) before the KeyboardInterrupt is raised.

use std::cell::Cell;
use std::sync::atomic::{AtomicBool, AtomicU32, Ordering};
use std::sync::mpsc::{channel, RecvTimeoutError};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use pyo3::prelude::*;

use crate::errors::{catch, panic_err, tk_err};

static OWNER_PID: AtomicU32 = AtomicU32::new(0);
static LOCAL_POOL: Mutex<Option<(u32, bool, Arc<rayon::ThreadPool>)>> = Mutex::new(None);

thread_local! {
    /// Whether this is the interpreter's main thread (the only one that runs signal handlers),
    /// once asked.
    static ON_MAIN_THREAD: Cell<Option<bool>> = const { Cell::new(None) };
}

/// How often a waiting main thread looks for a signal while a pool thread works.
const SIGNAL_POLL: Duration = Duration::from_millis(20);

/// Records the importing process as the owner of rayon's global pool.
pub fn init() {
    let _ = OWNER_PID.compare_exchange(0, std::process::id(), Ordering::SeqCst, Ordering::SeqCst);
}

/// Whether the calling thread is the interpreter's main thread (asked of `threading` once per
/// thread).
fn on_main_thread(py: Python<'_>) -> bool {
    ON_MAIN_THREAD.with(|known| match known.get() {
        Some(main) => main,
        None => {
            let main = py
                .import("threading")
                .and_then(|t| Ok(t.call_method0("current_thread")?.is(&t.call_method0("main_thread")?)))
                .unwrap_or(false);
            known.set(Some(main));
            main
        }
    })
}

/// Runs work on one text, which never uses rayon, with the GIL released: no pool is looked up
/// (so no environment variable is read), and a call on a short line costs little more than the
/// GIL's release. A panic becomes a Python exception; `f`'s result is returned as it is.
pub fn released<T: Send>(py: Python<'_>, f: impl FnOnce() -> T + Send) -> PyResult<T> {
    py.allow_threads(|| catch(f)).map_err(panic_err)
}

/// [`released`] for a library call: its errors become Python exceptions too.
pub fn run_one<T: Send>(py: Python<'_>, f: impl FnOnce() -> tokenkit::Result<T> + Send) -> PyResult<T> {
    released(py, f)?.map_err(tk_err)
}

/// Texts shorter than this (bytes) are encoded with the GIL held: releasing it and taking it
/// back costs about 300 instructions (a mutex and a condition variable per call), as much as
/// encoding a short line, while other Python threads would wait a few microseconds at most.
pub const RELEASE_GIL_BYTES: usize = 2048;

/// [`run_one`] for work on `bytes` of text: with the GIL released only from
/// [`RELEASE_GIL_BYTES`] on (a short text is encoded at once, the call costs what the work does).
pub fn run_on_text<T: Send>(py: Python<'_>, bytes: usize, f: impl FnOnce() -> tokenkit::Result<T> + Send) -> PyResult<T> {
    if bytes < RELEASE_GIL_BYTES {
        return catch(f).map_err(panic_err)?.map_err(tk_err);
    }
    run_one(py, f)
}

/// Runs a library call with the GIL released, on a pool that is live in this process (see
/// [`run`]); library errors and panics become Python exceptions.
pub fn run_released<T: Send>(py: Python<'_>, f: impl FnOnce() -> tokenkit::Result<T> + Send) -> PyResult<T> {
    py.allow_threads(|| catch(|| run(f))).map_err(panic_err)?.map_err(tk_err)
}

/// Runs pending signal handlers (with the GIL); `true`, with the exception kept in `raised`,
/// when one raised (KeyboardInterrupt for Ctrl-C).
fn signal_raised(raised: &Mutex<Option<PyErr>>) -> bool {
    match Python::with_gil(|py| py.check_signals()) {
        Ok(()) => false,
        Err(e) => {
            *raised.lock().unwrap_or_else(PoisonError::into_inner) = Some(e);
            true
        }
    }
}

/// [`run_released`] for batches, which Ctrl-C stops: called on the main thread, the batches
/// `f` runs check for signals between items (see `tokenkit::utils::parallel::with_interrupt_check`),
/// and an exception raised by a signal handler is raised here once every worker has stopped.
pub fn run_interruptible<T: Send>(py: Python<'_>, f: impl FnOnce() -> tokenkit::Result<T> + Send) -> PyResult<T> {
    if !on_main_thread(py) {
        return run_released(py, f);
    }
    let raised = Arc::new(Mutex::new(None));
    let result = py.allow_threads(|| catch(|| run_watched(f, &raised)));
    // A signal handler's exception wins: the batch stopped for it (or had just finished).
    if let Some(e) = raised.lock().unwrap_or_else(PoisonError::into_inner).take() {
        return Err(e);
    }
    result.map_err(panic_err)?.map_err(tk_err)
}

/// [`run`] with a check for signals: by the calling (main) thread itself between the items it
/// works on when the work stays on it, otherwise by the main thread waiting while a pool
/// thread works, which it tells to stop through a flag.
fn run_watched<T: Send>(f: impl FnOnce() -> tokenkit::Result<T> + Send, raised: &Arc<Mutex<Option<PyErr>>>) -> tokenkit::Result<T> {
    use tokenkit::utils::parallel::with_interrupt_check;
    let pid = std::process::id();
    let sequential = parallelism_disabled();
    if !sequential && OWNER_PID.load(Ordering::SeqCst) == pid {
        let raised = raised.clone();
        return with_interrupt_check(Arc::new(move || signal_raised(&raised)), f);
    }
    let Some(pool) = local_pool(pid, sequential) else { return f() };
    let stop = Arc::new(AtomicBool::new(false));
    let (done, finished) = channel();
    pool.in_place_scope(|scope| {
        let flag = stop.clone();
        scope.spawn(move |_| {
            let _ = done.send(with_interrupt_check(Arc::new(move || flag.load(Ordering::Relaxed)), f));
        });
        loop {
            match finished.recv_timeout(SIGNAL_POLL) {
                Ok(result) => return result,
                // The work panicked (the scope passes the panic on when it ends).
                Err(RecvTimeoutError::Disconnected) => return Err(tokenkit::Error::Interrupted),
                Err(RecvTimeoutError::Timeout) => {
                    if !stop.load(Ordering::Relaxed) && signal_raised(raised) {
                        stop.store(true, Ordering::Relaxed);
                    }
                }
            }
        }
    })
}

fn parallelism_disabled() -> bool {
    ["TOKENKIT_PARALLELISM", "TOKENIZERS_PARALLELISM"].iter().any(|k| {
        std::env::var(k)
            .map(|v| matches!(v.trim().to_ascii_lowercase().as_str(), "false" | "0" | "off" | "no" | "f" | "n"))
            .unwrap_or(false)
    })
}

fn build_pool(sequential: bool) -> Option<Arc<rayon::ThreadPool>> {
    let mut b = rayon::ThreadPoolBuilder::new();
    if sequential {
        b = b.num_threads(1);
    }
    b.build().ok().map(Arc::new)
}

fn local_pool(pid: u32, sequential: bool) -> Option<Arc<rayon::ThreadPool>> {
    // try_lock: a child forked while another thread held the lock must not wait on it.
    match LOCAL_POOL.try_lock() {
        Ok(mut slot) => {
            if let Some((p, s, pool)) = slot.as_ref() {
                if *p == pid && *s == sequential {
                    return Some(pool.clone());
                }
            }
            let pool = build_pool(sequential)?;
            *slot = Some((pid, sequential, pool.clone()));
            Some(pool)
        }
        Err(_) => build_pool(sequential),
    }
}

/// Whether work can be handed to rayon's global pool to run in the background: in the process
/// that owns it, with parallelism on and more than one thread (with one, the caller's thread
/// is the only one the user asked for).
pub fn has_spare_threads() -> bool {
    OWNER_PID.load(Ordering::SeqCst) == std::process::id() && !parallelism_disabled() && rayon::current_num_threads() > 1
}

/// Runs `f` (which may use rayon) on a pool that has live threads in this process.
pub fn run<R: Send>(f: impl FnOnce() -> R + Send) -> R {
    let pid = std::process::id();
    let sequential = parallelism_disabled();
    if !sequential && OWNER_PID.load(Ordering::SeqCst) == pid {
        return f();
    }
    match local_pool(pid, sequential) {
        Some(pool) => pool.install(f),
        None => f(),
    }
}

/// Runs `job` on a pool of `threads` threads made for it, or on the current pool when `None`
/// (the `threads=` argument of the dataset and corpus jobs).
pub fn on_threads<T: Send>(threads: Option<usize>, job: impl FnOnce() -> tokenkit::Result<T> + Send) -> tokenkit::Result<T> {
    match threads {
        Some(n) => {
            rayon::ThreadPoolBuilder::new().num_threads(n).build().map_err(|e| tokenkit::Error::invalid(e.to_string()))?.install(job)
        }
        None => job(),
    }
}
