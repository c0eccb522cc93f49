//! Giving the allocator's free memory back to the system.
//!
//! glibc's malloc keeps each buffer below its mmap threshold (which grows
//! with the buffers freed, up to 32 MiB) on its heap. A table that grows in
//! steps, such as the prover's (`prover::table`: 256 segments, each grown
//! by a fifth at a time), frees such buffers by the thousand, and the
//! holes they leave between the live ones stay resident until a request of
//! their size comes. `malloc_trim` returns the pages of free chunks, so
//! that what a solve holds resident stays close to what its budget counts:
//! MS 1968 with 1 cell in 1 GiB (0.97 GB counted at the peak) held 1.16 GB
//! resident at its peak without it and 1.02 GB with it. Elsewhere (other C
//! libraries, other systems) this does nothing.

use std::sync::atomic::{AtomicU64, Ordering};

/// Bytes of buffers freed since the last trim (all threads).
static FREED: AtomicU64 = AtomicU64::new(0);

/// Below this, freed bytes are never worth a trim.
const MIN_TRIM: u64 = 16 << 20;

/// Notes that a buffer of `bytes` was freed; once the bytes freed since
/// the last trim reach `threshold` (at least 16 MiB), gives the free
/// memory back (`trim`). Callers pass a fraction of what they hold, so a
/// trim, which walks the heap's free chunks, is rare beside the work that
/// freed them.
pub(crate) fn freed(bytes: u64, threshold: u64) {
    let total = FREED.fetch_add(bytes, Ordering::Relaxed) + bytes;
    if total >= threshold.max(MIN_TRIM) {
        FREED.store(0, Ordering::Relaxed);
        trim();
    }
}

/// Returns the heap's free pages to the system now.
fn trim() {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    {
        extern "C" {
            fn malloc_trim(pad: usize) -> std::ffi::c_int;
        }
        // SAFETY: glibc's malloc_trim takes a byte count and only releases
        // pages no allocation uses; it is thread-safe (it locks each arena).
        unsafe {
            malloc_trim(0);
        }
    }
}
