//! Which rayon pool parallel work runs on, so that batches work after `fork()`.
//!
//! rayon's global pool is created once per address space; after `fork()` the child inherits the
//! pool's bookkeeping but none of its threads, so anything handed to it waits forever. The
//! process that imported the module owns the global pool; any other process (a forked child)
//! runs library calls inside a pool of its own, built on first use and cached per pid. With
//! `TOKENIZERS_PARALLELISM` (or `TOKENKIT_PARALLELISM`) set to a false value, work runs on a
//! one-thread pool, i.e. sequentially.

use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::{Arc, Mutex};

static OWNER_PID: AtomicU32 = AtomicU32::new(0);
static LOCAL_POOL: Mutex<Option<(u32, bool, Arc<rayon::ThreadPool>)>> = Mutex::new(None);

/// Records the importing process as the owner of rayon's global pool.
pub fn init() {
    let _ = OWNER_PID.compare_exchange(0, std::process::id(), Ordering::SeqCst, Ordering::SeqCst);
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
