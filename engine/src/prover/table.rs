//! The prover's visited set: 128-bit position fingerprints in 12 bytes each,
//! at a load kept between 3/4 and 9/10, so that the table never takes more
//! than 16 bytes per position it holds.
//!
//! A fingerprint (`Board::fingerprint`) is split into three fields:
//! - bits 120..128 choose one of 256 segments (not stored: implied by the
//!   segment the entry sits in);
//! - bits 24..120 are stored (12 bytes); their top 24 bits (96..120) also
//!   choose the entry's first slot within its segment (`home`), so an entry
//!   can be moved to a larger segment without the bits that were dropped;
//! - bits 0..24 are dropped.
//!
//! Two positions are taken for one when they agree on bits 24..128: 104
//! bits. With `n` positions in one table the chance that any two of them
//! agree is at most n^2 / 2^105. A table holds at most
//! `SEGMENTS * MAX_SEGMENT_SLOTS` = 2^32 slots, but the byte budget binds far
//! earlier: 16 GiB holds at most 1.43e9 positions (12 bytes each at load 9/10),
//! where the bound is (1.43e9)^2 / 2^105 = 5.0e-14 (and the full 128-bit
//! fingerprints of 1.43e9 positions collide with chance below 3e-21). A proof
//! whose layers (`super`) hold N positions in all has its tables' chances
//! summed, at most N^2 / 2^105: under 1e-12 for any N up to 6.4e9.
//!
//! Each segment is an open-addressing table with Robin Hood probing (an
//! entry is never farther from its first slot than the entry it would
//! displace), which keeps probes short at high load: a lookup stops at the
//! first entry closer to its own first slot than the key would be. Entries
//! are kept in the order of their top bits from the start of each run of
//! full slots, so an insert shifts the run's tail by one slot, and a segment
//! that grows places its entries in one pass, in order. A segment grows by
//! a fifth when it passes 9/10 full (to 3/4), moving only its own entries,
//! so growing never needs twice the table's memory.

/// Segments: the fingerprint's top 8 bits.
const SEGMENT_BITS: u32 = 8;
const SEGMENTS: usize = 1 << SEGMENT_BITS;
/// A segment's first size, in slots.
const MIN_SLOTS: usize = 16;
/// The first slot comes from 24 stored bits (`home`), so a segment can
/// address at most 2^24 slots.
const MAX_SEGMENT_SLOTS: usize = 1 << 24;
/// Bytes per slot.
pub const SLOT_BYTES: u64 = 12;

/// One segment: slots of three `u32` words each (the stored bits 24..56,
/// 56..88, 88..120 of the fingerprint); all zero marks an empty slot.
#[derive(Default, Clone)]
struct Segment {
    words: Vec<[u32; 3]>,
    len: usize,
}

/// The top 24 bits of a stored key (its top word's), which order the
/// entries of a run and choose the first slot.
#[inline(always)]
fn top(k: [u32; 3]) -> u32 {
    k[2] >> 8
}

impl Segment {
    #[inline]
    fn slots(&self) -> usize {
        self.words.len()
    }

    /// The first slot of a stored key whose top word is `top`, in a segment
    /// of `slots` slots: the top 24 bits scaled to the size.
    #[inline(always)]
    fn home(top: u32, slots: usize) -> usize {
        (((top >> 8) as u64 * slots as u64) >> 24) as usize
    }

    #[inline(always)]
    fn get(&self, i: usize) -> [u32; 3] {
        self.words[i]
    }

    #[inline(always)]
    fn set(&mut self, i: usize, k: [u32; 3]) {
        self.words[i] = k;
    }

    /// Distance of the entry at slot `i` from its first slot.
    #[inline(always)]
    fn displacement(&self, i: usize, k: [u32; 3]) -> usize {
        let n = self.slots();
        let h = Self::home(k[2], n);
        if i >= h {
            i - h
        } else {
            i + n - h
        }
    }

    /// Robin Hood's stop, `displacement(i, e) < d`, is only possible for
    /// an entry whose top bits are above the key's, or once the probe has
    /// gone round the segment's end: the first slot grows with the top
    /// bits, so an entry met before the end whose first slot comes after
    /// the key's has larger top bits. The exact test is made only then;
    /// passing an entry it would stop at only costs a probe (the answer
    /// is still `true` only for the key itself, and the segment always has
    /// an empty slot to stop at).
    #[inline]
    fn contains(&self, k: [u32; 3]) -> bool {
        let w = &self.words[..];
        let n = w.len();
        if n == 0 {
            return false;
        }
        let mut i = Self::home(k[2], n);
        let mut d = 0;
        loop {
            let e = w[i];
            if e == k {
                return true;
            }
            if e == [0; 3] || (top(e) > top(k) && self.displacement(i, e) < d) {
                return false;
            }
            i += 1;
            if i == n {
                i = 0;
            }
            d += 1;
        }
    }

    /// Inserts `k` (not zero); false if it is there. The segment must have
    /// room for one more.
    ///
    /// Entries stay in the order of their first slot, and of their top 24
    /// bits among those with the same first slot (so, since the first slot
    /// grows with those bits, in the order of the top 24 bits from the
    /// start of each run of full slots, which `resize` relies on): `k`
    /// goes before the first entry later in that order, which moves one
    /// slot on with the entries after it up to the next empty slot (each
    /// then one farther from its first slot, as Robin Hood allows: none is
    /// passed by an entry nearer its own).
    #[inline]
    fn insert(&mut self, k: [u32; 3]) -> bool {
        let n = self.slots();
        debug_assert!(self.len < n);
        let h = Self::home(k[2], n);
        let mut i = h;
        let mut d = 0;
        loop {
            let e = self.get(i);
            if e == [0; 3] {
                self.set(i, k);
                self.len += 1;
                return true;
            }
            if e == k {
                return false;
            }
            // Before the probe goes round the end, an entry to insert
            // before has larger top bits (see `contains`); after, the test
            // is made in full.
            if top(e) > top(k) || i < h {
                let de = self.displacement(i, e);
                if de < d || (de == d && top(e) > top(k)) {
                    break;
                }
            }
            i += 1;
            if i == n {
                i = 0;
            }
            d += 1;
        }
        // The entries from `i` to the next empty slot move one slot on.
        let mut j = i;
        loop {
            j += 1;
            if j == n {
                j = 0;
            }
            if self.get(j) == [0; 3] {
                break;
            }
        }
        if j > i {
            self.words.copy_within(i..j, i + 1);
        } else {
            self.words.copy_within(0..j, 1);
            let last = self.get(n - 1);
            self.set(0, last);
            self.words.copy_within(i..n - 1, i + 1);
        }
        self.set(i, k);
        self.len += 1;
        true
    }

    /// Moves every entry into a segment of `slots` slots (more than it
    /// holds). Read from just after an empty slot, the entries come in the
    /// order of their top 24 bits (`insert`), the order of their first
    /// slots in the new segment too, with those read after the old
    /// segment's end one turn later: each goes to its first slot or the
    /// slot after the one before, whichever is later. Should that reach
    /// the first entry placed again (a run of full slots around the whole
    /// segment's end), the rest are inserted one by one.
    fn resize(&mut self, slots: usize) {
        let old = std::mem::take(&mut self.words);
        let n_old = old.len();
        let len = self.len;
        self.words = vec![[0; 3]; slots];
        self.len = 0;
        if len == 0 {
            return;
        }
        let empty = |i: usize| old[i] == [0; 3];
        let start = (0..n_old)
            .find(|&i| empty(i))
            .expect("a segment is never full");
        let mut first = None;
        let mut prev = 0usize;
        let mut one_by_one = false;
        for t in 1..=n_old {
            let i = (start + t) % n_old;
            if empty(i) {
                continue;
            }
            let k = old[i];
            if one_by_one {
                self.insert(k);
                continue;
            }
            // The entries read after the old end whose first slot was
            // before `start`: one turn later.
            let turn = if Self::home(k[2], n_old) <= start {
                slots
            } else {
                0
            };
            let v = Self::home(k[2], slots) + turn;
            let p = match first {
                None => v,
                Some(_) => v.max(prev + 1),
            };
            let f = *first.get_or_insert(p);
            if p >= f + slots {
                one_by_one = true;
                self.insert(k);
                continue;
            }
            self.set(p % slots, k);
            self.len += 1;
            prev = p;
        }
        debug_assert_eq!(self.len, len);
    }
}

/// Why a position could not be added.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct TableFull;

/// A set of position fingerprints (module docs).
#[derive(Clone)]
pub struct FpTable {
    segments: Vec<Segment>,
    len: u64,
    slots: u64,
}

/// A dropped table's segments go back to the allocator at once, below
/// its mmap threshold each, so their pages stay resident until asked for
/// again; they are given back to the system (`heap`), so that the search
/// that follows (the prover, after a complete search that filled the
/// memory with its table) does not hold both: MS 13599 with 1 cell in
/// 1 GiB held 1.61 GB resident without this.
impl Drop for FpTable {
    fn drop(&mut self) {
        let bytes = self.slots * SLOT_BYTES;
        self.segments = Vec::new();
        crate::heap::freed(bytes, 0);
    }
}

impl Default for FpTable {
    fn default() -> Self {
        FpTable::new()
    }
}

/// The segment and the stored words of a fingerprint.
#[inline(always)]
fn split(fp: u128) -> (usize, [u32; 3]) {
    let seg = (fp >> (128 - SEGMENT_BITS)) as usize;
    let mut k = [(fp >> 24) as u32, (fp >> 56) as u32, (fp >> 88) as u32];
    if k == [0; 3] {
        // All-zero marks an empty slot; such a fingerprint (one in 2^96)
        // is stored as another, which only adds a 2^-96 chance of a false
        // match for it.
        k[0] = 1;
    }
    (seg, k)
}

impl FpTable {
    pub fn new() -> Self {
        FpTable {
            segments: vec![Segment::default(); SEGMENTS],
            len: 0,
            slots: 0,
        }
    }

    /// An empty table with room for `n` positions at load 3/4: no
    /// segment grows before it holds about that many (fingerprints spread
    /// evenly over the segments).
    pub fn with_capacity(n: u64) -> Self {
        let per = Self::slots_for(n);
        let mut segments = vec![Segment::default(); SEGMENTS];
        for s in &mut segments {
            s.words = vec![[0; 3]; per];
        }
        FpTable {
            segments,
            len: 0,
            slots: (per * SEGMENTS) as u64,
        }
    }

    /// The bytes `with_capacity(n)` takes: 16 a position.
    pub fn bytes_with_capacity(n: u64) -> u64 {
        (Self::slots_for(n) * SEGMENTS) as u64 * SLOT_BYTES
    }

    fn slots_for(n: u64) -> usize {
        ((n as usize).div_ceil(SEGMENTS) * 4 / 3).clamp(MIN_SLOTS, MAX_SEGMENT_SLOTS)
    }

    /// Positions held.
    #[inline]
    pub fn len(&self) -> u64 {
        self.len
    }

    #[inline]
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Bytes the slots take.
    #[inline]
    pub fn bytes(&self) -> u64 {
        self.slots * SLOT_BYTES
    }

    #[inline]
    pub fn contains(&self, fp: u128) -> bool {
        let (s, k) = split(fp);
        self.segments[s].contains(k)
    }

    /// Asks the processor to bring the first slot of `fp` into the cache,
    /// so that a later `contains` or `insert` does not wait for memory:
    /// an expansion looks up all its children, which are independent.
    #[inline(always)]
    pub fn prefetch(&self, fp: u128) {
        #[cfg(target_arch = "x86_64")]
        {
            let (s, k) = split(fp);
            let seg = &self.segments[s];
            let n = seg.slots();
            if n > 0 {
                let i = Segment::home(k[2], n);
                // SAFETY: prefetching is a hint with no effect on memory; the
                // pointer is within the segment's slots.
                unsafe {
                    use std::arch::x86_64::{_mm_prefetch, _MM_HINT_T0};
                    _mm_prefetch(seg.words.as_ptr().add(i) as *const i8, _MM_HINT_T0);
                }
            }
        }
        #[cfg(not(target_arch = "x86_64"))]
        let _ = fp;
    }

    /// The bytes the table would take after adding one more position to
    /// the segment of `fp` (the larger segment and the old one while it is
    /// copied): what a budget must allow before `insert`.
    #[inline]
    pub fn bytes_to_insert(&self, fp: u128) -> u64 {
        let (s, _) = split(fp);
        let seg = &self.segments[s];
        match Self::grown(seg) {
            Some(n) => self.bytes() + n as u64 * SLOT_BYTES,
            None => self.bytes(),
        }
    }

    /// The new size of a segment that must grow before one more insert.
    #[inline]
    fn grown(seg: &Segment) -> Option<usize> {
        let n = seg.slots();
        if (seg.len + 1) * 10 > n * 9 {
            Some((n + n / 5).max(MIN_SLOTS).max(n + 1))
        } else {
            None
        }
    }

    /// Adds `fp`; `Ok(false)` if it was there already.
    #[inline]
    pub fn insert(&mut self, fp: u128) -> Result<bool, TableFull> {
        let (s, k) = split(fp);
        let seg = &mut self.segments[s];
        if let Some(n) = Self::grown(seg) {
            if seg.contains(k) {
                return Ok(false);
            }
            if n > MAX_SEGMENT_SLOTS {
                return Err(TableFull);
            }
            let old = seg.slots() as u64 * SLOT_BYTES;
            self.slots += (n - seg.slots()) as u64;
            seg.resize(n);
            crate::heap::freed(old, self.slots * SLOT_BYTES / 16);
        }
        let added = seg.insert(k);
        self.len += added as u64;
        Ok(added)
    }

    /// Empties the table, giving its memory back.
    pub fn clear(&mut self) {
        for s in &mut self.segments {
            if s.slots() <= MIN_SLOTS * 4 {
                s.words.fill([0; 3]);
                s.len = 0;
            } else {
                *s = Segment::default();
            }
        }
        self.len = 0;
        self.slots = self.segments.iter().map(|s| s.slots() as u64).sum();
    }
}

/// The `i`-th of a fixed series of keys spread like fingerprints
/// (splitmix of the index in both halves), for the table's tests and
/// benchmarks.
#[doc(hidden)]
pub fn sample_key(i: u64) -> u128 {
    let mix = |mut z: u64| {
        z = z.wrapping_add(0x9E37_79B9_7F4A_7C15);
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    };
    ((mix(i) as u128) << 64) | mix(i ^ 0xABCD) as u128
}

#[cfg(test)]
mod tests {
    use super::*;

    fn fp(i: u64) -> u128 {
        sample_key(i)
    }

    #[test]
    fn holds_what_was_inserted_and_nothing_else() {
        let mut t = FpTable::new();
        for i in 0..200_000 {
            assert_eq!(t.insert(fp(i)), Ok(true));
        }
        for i in 0..200_000 {
            assert_eq!(t.insert(fp(i)), Ok(false), "{i}");
            assert!(t.contains(fp(i)));
        }
        for i in 200_000..400_000 {
            assert!(!t.contains(fp(i)));
        }
        assert_eq!(t.len(), 200_000);
    }

    /// Every entry is in the order `insert` keeps (its first slot, then its
    /// top bits) and reachable from its first slot through full slots.
    fn ordered(seg: &Segment) -> bool {
        let n = seg.slots();
        (0..n).all(|i| {
            let (e, f) = (seg.get(i), seg.get((i + 1) % n));
            if e == [0; 3] || f == [0; 3] {
                return true;
            }
            let (de, df) = (seg.displacement(i, e), seg.displacement((i + 1) % n, f));
            let full = (1..=de).all(|b| seg.get((i + n - b) % n) != [0; 3]);
            full && (df < de + 1 || (df == de + 1 && f[2] >> 8 >= e[2] >> 8))
        })
    }

    /// One segment, grown through many sizes by `resize` with runs of full
    /// slots around its end (keys crowded there and at the start), holds
    /// exactly what was inserted, in order.
    #[test]
    fn a_segment_grown_and_wrapped_holds_exactly_its_keys() {
        let mut seg = Segment::default();
        let mut all = std::collections::HashSet::new();
        for i in 0..40_000u64 {
            let f = fp(i);
            // An eighth of the keys in the last or first 1/64 of the slots.
            let top = match i % 16 {
                0 => (f >> 96) as u32 | 0xFC00_0000,
                1 => (f >> 96) as u32 & 0x03FF_FFFF,
                _ => (f >> 96) as u32,
            };
            let k = [f as u32 | 1, (f >> 32) as u32, top];
            if (seg.len + 1) * 10 > seg.slots() * 9 {
                let n = seg.slots();
                seg.resize((n + n / 5).max(MIN_SLOTS).max(n + 1));
                assert!(ordered(&seg), "after resize at {i}");
            }
            assert_eq!(seg.insert(k), all.insert(k), "{i}");
        }
        assert!(ordered(&seg));
        assert_eq!(seg.len, all.len());
        for k in &all {
            assert!(seg.contains(*k));
        }
        for i in 40_000..60_000u64 {
            let f = fp(i);
            let k = [f as u32 | 1, (f >> 32) as u32, (f >> 96) as u32];
            assert_eq!(seg.contains(k), all.contains(&k));
        }
    }

    #[test]
    fn never_takes_more_than_16_bytes_a_position_once_grown() {
        let mut t = FpTable::new();
        for i in 0..1_000_000u64 {
            t.insert(fp(i)).unwrap();
            if i >= 100_000 {
                assert!(
                    t.bytes() <= 16 * t.len(),
                    "{} bytes for {}",
                    t.bytes(),
                    t.len()
                );
            }
        }
    }

    #[test]
    fn keys_differing_only_in_dropped_bits_are_one() {
        let mut t = FpTable::new();
        assert_eq!(t.insert(5u128 << 100), Ok(true));
        assert_eq!(t.insert((5u128 << 100) | 0xFF_FFFF), Ok(false));
        assert!(t.contains((5u128 << 100) | 1));
        // The all-zero stored key lives as another.
        assert_eq!(t.insert(0), Ok(true));
        assert!(t.contains(0));
    }

    #[test]
    fn clear_empties() {
        let mut t = FpTable::new();
        for i in 0..50_000 {
            t.insert(fp(i)).unwrap();
        }
        t.clear();
        assert!(t.is_empty());
        assert!(!t.contains(fp(7)));
        assert!(t.bytes() <= (SEGMENTS * MIN_SLOTS * 4) as u64 * SLOT_BYTES);
    }
}
