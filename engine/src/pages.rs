//! Large zeroed buffers on huge pages.
//!
//! A visited set of hundreds of megabytes is looked up at random: on 4 kB
//! pages nearly every lookup misses the processor's address cache (TLB)
//! as well as its data cache, and a page walk comes before the load. A
//! buffer of 2 MiB or more is therefore mapped on its own, its start
//! aligned to 2 MiB, and marked for transparent huge pages
//! (`madvise(MADV_HUGEPAGE)`, which Linux grants in its default `madvise`
//! mode): each whole 2 MiB of it then takes one address-cache entry
//! instead of 512, and one page fault instead of 512. The mapping ends
//! where the buffer does (rounded up to 4 kB), so the part past its last
//! whole 2 MiB stays on small pages and the buffer never holds more memory
//! than its own bytes. Where the kernel grants no huge pages, or on other
//! systems, the buffer is zeroed memory of the same size, as a `Vec` would
//! be. Its pages are faulted in as they are first written.
//!
//! The element type must be plain data for which all-zero bytes are a
//! valid value (`Zero`).

use std::alloc::{alloc_zeroed, dealloc, handle_alloc_error, Layout};
use std::ops::{Deref, DerefMut};
use std::ptr::NonNull;

/// Buffers of at least this many bytes get a mapping of their own.
pub(crate) const HUGE: usize = 2 << 20;

/// Types whose all-zero bytes are a valid value.
///
/// # Safety
/// An implementor must be `Copy` plain data that is valid at all-zero
/// bytes (integers and arrays of them).
pub(crate) unsafe trait Zero: Copy {}
// SAFETY: an array of integers is valid at all-zero bytes.
unsafe impl Zero for [u32; 3] {}
// SAFETY: an integer is valid at all-zero bytes. (The tests' element.)
#[cfg(test)]
unsafe impl Zero for u64 {}

/// A fixed-size buffer of zeroed `T` (module docs).
pub(crate) struct Zeroed<T: Zero> {
    ptr: NonNull<T>,
    len: usize,
    /// A mapping of its own (else from the allocator, or nothing when of
    /// zero size).
    mapped: bool,
}

// SAFETY: the buffer owns its elements as a `Vec<T>` does.
unsafe impl<T: Zero + Send> Send for Zeroed<T> {}
// SAFETY: as above; a shared reference gives read access only.
unsafe impl<T: Zero + Sync> Sync for Zeroed<T> {}

impl<T: Zero> Zeroed<T> {
    /// `len` zeroed elements.
    pub(crate) fn new(len: usize) -> Self {
        let layout = Layout::array::<T>(len).expect("a buffer within the address space");
        if layout.size() == 0 {
            return Zeroed {
                ptr: NonNull::dangling(),
                len,
                mapped: false,
            };
        }
        #[cfg(target_os = "linux")]
        if layout.size() >= HUGE && layout.align() <= 4096 {
            if let Some(ptr) = map_huge(layout.size()) {
                return Zeroed {
                    ptr: ptr.cast(),
                    len,
                    mapped: true,
                };
            }
        }
        // SAFETY: the layout has a non-zero size.
        let p = unsafe { alloc_zeroed(layout) };
        match NonNull::new(p) {
            Some(ptr) => Zeroed {
                ptr: ptr.cast(),
                len,
                mapped: false,
            },
            None => handle_alloc_error(layout),
        }
    }

    /// Whether the buffer is a mapping of its own, whose memory goes back
    /// to the system when dropped or released (`release_below`).
    pub(crate) fn is_mapped(&self) -> bool {
        self.mapped
    }

    /// Gives the memory of the elements before `end` back to the system
    /// (a mapping's whole 4 kB pages there); they read as zero afterwards.
    /// A buffer from the allocator keeps its memory (and its elements).
    pub(crate) fn release_below(&mut self, end: usize) {
        #[cfg(target_os = "linux")]
        if self.mapped {
            let bytes = std::mem::size_of::<T>() * end.min(self.len);
            let whole = bytes / 4096 * 4096;
            if whole > 0 {
                // SAFETY: the range is within the mapping, page-aligned
                // (the mapping starts on a 2 MiB boundary); the pages read
                // as zero afterwards, a valid value of `T` (`Zero`).
                unsafe {
                    libc::madvise(self.ptr.as_ptr().cast(), whole, libc::MADV_DONTNEED);
                }
            }
        }
        #[cfg(not(target_os = "linux"))]
        let _ = end;
    }
}

impl<T: Zero> Default for Zeroed<T> {
    fn default() -> Self {
        Zeroed::new(0)
    }
}

impl<T: Zero> Drop for Zeroed<T> {
    fn drop(&mut self) {
        let bytes = std::mem::size_of::<T>() * self.len;
        if bytes == 0 {
            return;
        }
        #[cfg(target_os = "linux")]
        if self.mapped {
            // SAFETY: the mapping `map_huge` made for these bytes.
            unsafe {
                libc::munmap(self.ptr.as_ptr().cast(), bytes);
            }
            return;
        }
        let layout = Layout::array::<T>(self.len).expect("the layout it was made with");
        // SAFETY: allocated by `alloc_zeroed` with this layout.
        unsafe { dealloc(self.ptr.as_ptr().cast(), layout) }
    }
}

impl<T: Zero> Deref for Zeroed<T> {
    type Target = [T];
    #[inline(always)]
    fn deref(&self) -> &[T] {
        // SAFETY: `len` elements, zeroed or written since.
        unsafe { std::slice::from_raw_parts(self.ptr.as_ptr(), self.len) }
    }
}

impl<T: Zero> DerefMut for Zeroed<T> {
    #[inline(always)]
    fn deref_mut(&mut self) -> &mut [T] {
        // SAFETY: as `deref`, and the buffer is borrowed uniquely.
        unsafe { std::slice::from_raw_parts_mut(self.ptr.as_ptr(), self.len) }
    }
}

impl<T: Zero> Clone for Zeroed<T> {
    fn clone(&self) -> Self {
        let mut c = Zeroed::new(self.len);
        c.copy_from_slice(self);
        c
    }
}

/// A zeroed mapping of `bytes` (at least `HUGE`) starting on a 2 MiB
/// boundary and marked for huge pages; `None` if the system refuses it.
#[cfg(target_os = "linux")]
fn map_huge(bytes: usize) -> Option<NonNull<u8>> {
    let bytes = bytes.div_ceil(4096) * 4096;
    let reserve = bytes + HUGE;
    // SAFETY: an anonymous private mapping where the kernel chooses; its
    // pages read as zero until written.
    let p = unsafe {
        libc::mmap(
            std::ptr::null_mut(),
            reserve,
            libc::PROT_READ | libc::PROT_WRITE,
            libc::MAP_PRIVATE | libc::MAP_ANONYMOUS,
            -1,
            0,
        )
    };
    if p == libc::MAP_FAILED {
        return None;
    }
    let start = p as usize;
    let aligned = start.div_ceil(HUGE) * HUGE;
    let head = aligned - start;
    let tail = reserve - head - bytes;
    // SAFETY: the head and the tail are the parts of the mapping just made
    // before `aligned` and after `aligned + bytes`, which nothing uses.
    // `madvise` is a hint: refused (no huge pages here), pages stay small.
    unsafe {
        if head > 0 {
            libc::munmap(p, head);
        }
        if tail > 0 {
            libc::munmap((aligned + bytes) as *mut libc::c_void, tail);
        }
        libc::madvise(aligned as *mut libc::c_void, bytes, libc::MADV_HUGEPAGE);
    }
    NonNull::new(aligned as *mut u8)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn buffers_are_zeroed_writable_and_cloned_whole() {
        for len in [0usize, 1, 1000, (3 << 20) / 12 + 7] {
            let mut b: Zeroed<[u32; 3]> = Zeroed::new(len);
            assert_eq!(b.len(), len);
            assert!(b.iter().all(|&x| x == [0; 3]));
            for (i, x) in b.iter_mut().enumerate() {
                *x = [i as u32, 1, 2];
            }
            let c = b.clone();
            drop(b);
            assert!(c.iter().enumerate().all(|(i, &x)| x == [i as u32, 1, 2]));
        }
    }

    #[cfg(target_os = "linux")]
    #[test]
    fn large_buffers_are_aligned_mappings_and_give_memory_back() {
        let mut b: Zeroed<u64> = Zeroed::new((5 << 20) / 8);
        assert!(b.is_mapped());
        assert_eq!(b.as_ptr() as usize % HUGE, 0);
        b.fill(7);
        // The first 4 kB page and a half: the whole page reads as zero
        // again, the rest keeps its values.
        b.release_below(768);
        assert!(b[..512].iter().all(|&x| x == 0));
        assert!(b[512..].iter().all(|&x| x == 7));
        let small: Zeroed<u64> = Zeroed::new(1000);
        assert!(!small.is_mapped());
    }
}
