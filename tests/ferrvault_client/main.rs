//! The FerrVault client over real HTTP: against a scripted stub (status mapping, retries, OIDC,
//! TLS, refusals of plain http, of redirects, of misplaced cluster bearers and of addresses the
//! egress policy refuses) and against the FerrVault simulator (rate limits, single-flight, and
//! the `list` and `me` calls).

mod account;
mod against_sim;
mod bounds;
mod egress;
mod ferrvault_stub;
mod http;
mod oidc;
mod pool;
mod rate_limit;
mod refusals;
mod single_flight;
mod tls;

use std::{
    alloc::{GlobalAlloc, Layout, System},
    sync::atomic::{AtomicIsize, Ordering},
};

/// Counts the bytes allocated and not yet freed in this test process, and their peak
/// (`pool.rs` and `bounds.rs` measure memory with it; nextest runs each test in its own process).
struct CountingAllocator;

static LIVE_BYTES: AtomicIsize = AtomicIsize::new(0);
static PEAK_BYTES: AtomicIsize = AtomicIsize::new(0);

// SAFETY: every call is forwarded to the system allocator unchanged; only a counter is added.
unsafe impl GlobalAlloc for CountingAllocator {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        // SAFETY: the caller's contract is passed on as is.
        let ptr = unsafe { System.alloc(layout) };
        if !ptr.is_null() {
            grown(layout.size() as isize);
        }
        ptr
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        // SAFETY: the caller's contract is passed on as is.
        unsafe { System.dealloc(ptr, layout) };
        LIVE_BYTES.fetch_sub(layout.size() as isize, Ordering::Relaxed);
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        // SAFETY: the caller's contract is passed on as is.
        let moved = unsafe { System.realloc(ptr, layout, new_size) };
        if !moved.is_null() {
            grown(new_size as isize - layout.size() as isize);
        }
        moved
    }
}

#[global_allocator]
static ALLOCATOR: CountingAllocator = CountingAllocator;

/// Records `bytes` more live (fewer when negative), and the peak.
fn grown(bytes: isize) {
    let live = LIVE_BYTES.fetch_add(bytes, Ordering::Relaxed) + bytes;
    PEAK_BYTES.fetch_max(live, Ordering::Relaxed);
}

/// Bytes allocated and not yet freed by this process.
fn live_bytes() -> isize {
    LIVE_BYTES.load(Ordering::Relaxed)
}

/// Runs `work` and returns what it returned and the most its allocations ever held at once
/// above what was live when it started (meant for synchronous work: nothing else allocates).
fn peak_growth<T>(work: impl FnOnce() -> T) -> (T, isize) {
    let start = live_bytes();
    PEAK_BYTES.store(start, Ordering::Relaxed);
    let result = work();
    (result, PEAK_BYTES.load(Ordering::Relaxed) - start)
}

/// The client's defaults, plus plain `http://` allowed (the stub and the simulator speak it) and
/// their address allowed by the egress policy.
fn plain_http_config() -> ferrvault_operator::ferrvault::ClientConfig {
    ferrvault_operator::ferrvault::ClientConfig {
        allow_insecure_http: true,
        egress: loopback_allowed(),
        ..ferrvault_operator::ferrvault::ClientConfig::default()
    }
}

/// The egress policy with the stubs' and simulators' address, 127.0.0.1, allowed: the default
/// refuses loopback.
fn loopback_allowed() -> ferrvault_operator::ferrvault::EgressPolicy {
    ferrvault_operator::ferrvault::EgressPolicy::from_flags(&["127.0.0.1/32".to_owned()], &[])
        .expect("a CIDR")
}
