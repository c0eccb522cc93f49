//! The prover's visited set: 128-bit position fingerprints in 12 bytes each,
//! at a load kept near 3/4 to 9/10 (below), so that the table takes at most
//! 16 bytes per position it holds once it holds 100,000.
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
//! that grows places its entries in one pass, in order.
//!
//! Segments of one size share a buffer in groups of 16 (`Group`), so that
//! past 32 MiB a group's buffer is a mapping on huge pages (`pages`: each
//! random lookup then needs no 4 kB page walk). A group grows by a sixth
//! when it passes 9/10 full in all, or one of its segments 97/100; it
//! places its segments into the larger buffer one at a time, giving back
//! the old buffer's memory before the next segment to move as it goes
//! (`Group::grow`), so growing never needs twice the group's memory, let
//! alone the table's. Growth by a sixth keeps a group at least 3/4 full
//! after it grows once the table holds a million positions (0.77 at the
//! least over 4 M keys; a segment reaches 97/100 before its group 9/10
//! only while segments are small and their shares vary): at most 16 bytes
//! a position. From 100,000 positions a group can fall to 0.73 after it
//! grows, but the whole table stays within 16 bytes a position (a test
//! checks it from there).

use crate::pages::Zeroed;

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

/// A segment: slots of three `u32` words each (the stored bits 24..56,
/// 56..88, 88..120 of the fingerprint); all zero marks an empty slot. The
/// functions below work on one segment's slots.
type Slot = [u32; 3];

/// The top 24 bits of a stored key (its top word's), which order the
/// entries of a run and choose the first slot.
#[inline(always)]
fn top(k: Slot) -> u32 {
    k[2] >> 8
}

/// The first slot of a stored key whose top word is `top`, in a segment
/// of `slots` slots: the top 24 bits scaled to the size.
#[inline(always)]
fn home(top: u32, slots: usize) -> usize {
    (((top >> 8) as u64 * slots as u64) >> 24) as usize
}

/// Distance of the entry `e` at slot `i` of a segment of `n` slots from
/// its first slot.
#[inline(always)]
fn displacement(n: usize, i: usize, e: Slot) -> usize {
    let h = home(e[2], n);
    if i >= h {
        i - h
    } else {
        i + n - h
    }
}

/// Whether the segment `w` holds `k`.
///
/// Robin Hood's stop, `displacement(i, e) < d`, is only possible for an
/// entry whose top bits are above the key's, or once the probe has gone
/// round the segment's end: the first slot grows with the top bits, so an
/// entry met before the end whose first slot comes after the key's has
/// larger top bits. The exact test is made only then; passing an entry it
/// would stop at only costs a probe (the answer is still `true` only for
/// the key itself, and a segment always has an empty slot to stop at).
#[inline]
fn seg_contains(w: &[Slot], k: Slot) -> bool {
    let n = w.len();
    if n == 0 {
        return false;
    }
    let mut i = home(k[2], n);
    let mut d = 0;
    loop {
        let e = w[i];
        if e == k {
            return true;
        }
        if e == [0; 3] || (top(e) > top(k) && displacement(n, i, e) < d) {
            return false;
        }
        i += 1;
        if i == n {
            i = 0;
        }
        d += 1;
    }
}

/// Inserts `k` (not zero) into the segment `w` holding `*len` entries;
/// false if it is there. The segment must have room for one more.
///
/// Entries stay in the order of their first slot, and of their top 24
/// bits among those with the same first slot (so, since the first slot
/// grows with those bits, in the order of the top 24 bits from the start
/// of each run of full slots, which `seg_place` relies on): `k` goes
/// before the first entry later in that order, which moves one slot on
/// with the entries after it up to the next empty slot (each then one
/// farther from its first slot, as Robin Hood allows: none is passed by an
/// entry nearer its own).
#[inline]
fn seg_insert(w: &mut [Slot], len: &mut u32, k: Slot) -> bool {
    let n = w.len();
    debug_assert!((*len as usize) < n);
    let h = home(k[2], n);
    let mut i = h;
    let mut d = 0;
    loop {
        let e = w[i];
        if e == [0; 3] {
            w[i] = k;
            *len += 1;
            return true;
        }
        if e == k {
            return false;
        }
        // Before the probe goes round the end, an entry to insert before
        // has larger top bits (see `seg_contains`); after, the test is
        // made in full.
        if top(e) > top(k) || i < h {
            let de = displacement(n, i, e);
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
        if w[j] == [0; 3] {
            break;
        }
    }
    if j > i {
        w.copy_within(i..j, i + 1);
    } else {
        w.copy_within(0..j, 1);
        w[0] = w[n - 1];
        w.copy_within(i..n - 1, i + 1);
    }
    w[i] = k;
    *len += 1;
    true
}

/// Places the `len` entries of the segment `old` into the empty, larger
/// segment `new`. Read from just after an empty slot, the entries come in
/// the order of their top 24 bits (`seg_insert`), the order of their first
/// slots in the new segment too, with those read after the old segment's
/// end one turn later: each goes to its first slot or the slot after the
/// one before, whichever is later. Should that reach the first entry
/// placed again (a run of full slots around the whole segment's end), the
/// rest are inserted one by one.
fn seg_place(old: &[Slot], len: u32, new: &mut [Slot]) {
    let n_old = old.len();
    let slots = new.len();
    debug_assert!(slots > n_old || len == 0);
    if len == 0 {
        return;
    }
    let mut placed = 0u32;
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
            seg_insert(new, &mut placed, k);
            continue;
        }
        // The entries read after the old end whose first slot was before
        // `start`: one turn later.
        let turn = if home(k[2], n_old) <= start { slots } else { 0 };
        let v = home(k[2], slots) + turn;
        let p = match first {
            None => v,
            Some(_) => v.max(prev + 1),
        };
        let f = *first.get_or_insert(p);
        if p >= f + slots {
            one_by_one = true;
            seg_insert(new, &mut placed, k);
            continue;
        }
        new[p % slots] = k;
        placed += 1;
        prev = p;
    }
    debug_assert_eq!(placed, len);
}

/// Segments share a buffer in groups of this many, all of one size, so
/// that a group's buffer reaches the 2 MiB of a huge page (`pages`) once
/// the table passes 32 MiB; each group grows on its own.
const GROUP: usize = 16;
const GROUPS: usize = SEGMENTS / GROUP;

/// `GROUP` segments of `n` slots each, one after another in one buffer.
#[derive(Default, Clone)]
struct Group {
    words: Zeroed<Slot>,
    n: usize,
    lens: [u32; GROUP],
    len: usize,
}

impl Group {
    #[inline(always)]
    fn seg(&self, l: usize) -> &[Slot] {
        &self.words[l * self.n..(l + 1) * self.n]
    }

    #[inline(always)]
    fn seg_mut(&mut self, l: usize) -> &mut [Slot] {
        &mut self.words[l * self.n..(l + 1) * self.n]
    }

    /// The size of its segments after one growth.
    fn grown_size(&self) -> usize {
        (self.n + self.n / 6).max(MIN_SLOTS).max(self.n + 1)
    }

    /// Whether adding one entry to segment `l` needs the group to grow
    /// first: past 9/10 full in all, or that segment past 97/100 (a
    /// segment's share of a group varies, most in a small table; Robin
    /// Hood probes stay short up to there).
    #[inline(always)]
    fn must_grow(&self, l: usize) -> bool {
        (self.len + 1) * 10 > GROUP * self.n * 9 || (self.lens[l] as usize + 1) * 100 > self.n * 97
    }

    /// Moves every segment into segments of `n` slots, one after another:
    /// the old buffer's memory before the next segment to move goes back
    /// as each is moved (`Zeroed::release_below`), so that growing takes
    /// little more than the larger buffer, never the two.
    fn grow(&mut self, n: usize) {
        let mut old = std::mem::take(&mut self.words);
        let mut new = Zeroed::new(GROUP * n);
        for l in 0..GROUP {
            seg_place(
                &old[l * self.n..(l + 1) * self.n],
                self.lens[l],
                &mut new[l * n..(l + 1) * n],
            );
            old.release_below((l + 1) * self.n);
        }
        self.words = new;
        self.n = n;
    }

    fn bytes(&self) -> u64 {
        (GROUP * self.n) as u64 * SLOT_BYTES
    }
}

/// Why a position could not be added.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct TableFull;

/// A set of position fingerprints (module docs).
#[derive(Clone)]
pub struct FpTable {
    groups: Vec<Group>,
    len: u64,
    slots: u64,
}

/// A dropped table's small groups go back to the allocator at once, below
/// its mmap threshold each, so their pages stay resident until asked for
/// again; they are given back to the system (`heap`), so that the search
/// that follows (the prover, after a complete search that filled the
/// memory with its table) does not hold both: MS 13599 with 1 cell in
/// 1 GiB held 1.61 GB resident without this. (Groups of 2 MiB or more are
/// mappings of their own, unmapped when dropped.)
impl Drop for FpTable {
    fn drop(&mut self) {
        let heaped: u64 = self
            .groups
            .iter()
            .filter(|g| !g.words.is_mapped())
            .map(Group::bytes)
            .sum();
        self.groups = Vec::new();
        crate::heap::freed(heaped, 0);
    }
}

impl Default for FpTable {
    fn default() -> Self {
        FpTable::new()
    }
}

/// The segment and the stored words of a fingerprint.
#[inline(always)]
fn split(fp: u128) -> (usize, Slot) {
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
            groups: vec![Group::default(); GROUPS],
            len: 0,
            slots: 0,
        }
    }

    /// An empty table with room for `n` positions at load 3/4: no
    /// segment grows before it holds about that many (fingerprints spread
    /// evenly over the segments).
    pub fn with_capacity(n: u64) -> Self {
        let per = Self::slots_for(n);
        let mut groups = vec![Group::default(); GROUPS];
        for g in &mut groups {
            g.words = Zeroed::new(GROUP * per);
            g.n = per;
        }
        FpTable {
            groups,
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
        seg_contains(self.groups[s / GROUP].seg(s % GROUP), k)
    }

    /// Asks the processor to bring the first slot of `fp` into the cache,
    /// so that a later `contains` or `insert` does not wait for memory:
    /// an expansion looks up all its children, which are independent.
    #[inline(always)]
    pub fn prefetch(&self, fp: u128) {
        #[cfg(target_arch = "x86_64")]
        {
            let (s, k) = split(fp);
            let g = &self.groups[s / GROUP];
            if g.n > 0 {
                let i = (s % GROUP) * g.n + home(k[2], g.n);
                // SAFETY: prefetching is a hint with no effect on memory; the
                // pointer is within the group's slots.
                unsafe {
                    use std::arch::x86_64::{_mm_prefetch, _MM_HINT_T0};
                    _mm_prefetch(g.words.as_ptr().add(i) as *const i8, _MM_HINT_T0);
                }
            }
        }
        #[cfg(not(target_arch = "x86_64"))]
        let _ = fp;
    }

    /// The bytes the table would take after adding one more position to
    /// the group of `fp`: what a budget must allow before `insert`. A
    /// group that grows holds its larger buffer and, while its segments
    /// move, the one segment of the old buffer being moved and the huge
    /// page being written (a group on the allocator's heap: all of the old
    /// buffer).
    #[inline]
    pub fn bytes_to_insert(&self, fp: u128) -> u64 {
        let (s, _) = split(fp);
        let g = &self.groups[s / GROUP];
        if !g.must_grow(s % GROUP) {
            return self.bytes();
        }
        let new = (GROUP * g.grown_size()) as u64 * SLOT_BYTES;
        let held = if g.words.is_mapped() {
            g.n as u64 * SLOT_BYTES + crate::pages::HUGE as u64
        } else {
            g.bytes()
        };
        self.bytes() - g.bytes() + new + held.min(g.bytes())
    }

    /// Adds `fp`; `Ok(false)` if it was there already.
    #[inline]
    pub fn insert(&mut self, fp: u128) -> Result<bool, TableFull> {
        let (s, k) = split(fp);
        let (gi, l) = (s / GROUP, s % GROUP);
        let g = &mut self.groups[gi];
        if g.must_grow(l) {
            if seg_contains(g.seg(l), k) {
                return Ok(false);
            }
            let n = g.grown_size();
            if n > MAX_SEGMENT_SLOTS {
                return Err(TableFull);
            }
            let heaped = !g.words.is_mapped();
            let old = g.bytes();
            self.slots += ((n - g.n) * GROUP) as u64;
            g.grow(n);
            if heaped {
                crate::heap::freed(old, self.slots * SLOT_BYTES / 16);
            }
        }
        let mut len = g.lens[l];
        let added = seg_insert(g.seg_mut(l), &mut len, k);
        g.lens[l] = len;
        g.len += added as usize;
        self.len += added as u64;
        Ok(added)
    }

    /// Empties the table, giving its memory back.
    pub fn clear(&mut self) {
        for g in &mut self.groups {
            if g.n <= MIN_SLOTS * 4 {
                g.words.fill([0; 3]);
                g.lens = [0; GROUP];
                g.len = 0;
            } else {
                *g = Group::default();
            }
        }
        self.len = 0;
        self.slots = self.groups.iter().map(|g| (g.n * GROUP) as u64).sum();
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

    /// Every entry is in the order `seg_insert` keeps (its first slot,
    /// then its top bits) and reachable from its first slot through full
    /// slots.
    fn ordered(w: &[Slot]) -> bool {
        let n = w.len();
        (0..n).all(|i| {
            let (e, f) = (w[i], w[(i + 1) % n]);
            if e == [0; 3] || f == [0; 3] {
                return true;
            }
            let (de, df) = (displacement(n, i, e), displacement(n, (i + 1) % n, f));
            let full = (1..=de).all(|b| w[(i + n - b) % n] != [0; 3]);
            full && (df < de + 1 || (df == de + 1 && f[2] >> 8 >= e[2] >> 8))
        })
    }

    /// One segment, grown through many sizes by `seg_place` with runs of
    /// full slots around its end (keys crowded there and at the start),
    /// holds exactly what was inserted, in order.
    #[test]
    fn a_segment_grown_and_wrapped_holds_exactly_its_keys() {
        let mut w: Vec<Slot> = Vec::new();
        let mut len = 0u32;
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
            if (len as usize + 1) * 10 > w.len() * 9 {
                let n = w.len();
                let mut grown = vec![[0; 3]; (n + n / 5).max(MIN_SLOTS).max(n + 1)];
                seg_place(&w, len, &mut grown);
                w = grown;
                assert!(ordered(&w), "after growing at {i}");
            }
            assert_eq!(seg_insert(&mut w, &mut len, k), all.insert(k), "{i}");
        }
        assert!(ordered(&w));
        assert_eq!(len as usize, all.len());
        for k in &all {
            assert!(seg_contains(&w, *k));
        }
        for i in 40_000..60_000u64 {
            let f = fp(i);
            let k = [f as u32 | 1, (f >> 32) as u32, (f >> 96) as u32];
            assert_eq!(seg_contains(&w, k), all.contains(&k));
        }
    }

    /// A table past 32 MiB (its groups on huge pages, each grown while its
    /// old buffer is given back segment by segment) holds exactly what was
    /// inserted, every segment in order.
    #[test]
    fn a_large_table_holds_exactly_its_keys() {
        let mut t = FpTable::new();
        let n = 2_600_000u64;
        for i in 0..n {
            assert_eq!(t.insert(fp(i)), Ok(true), "{i}");
            assert!(t.bytes() <= t.bytes_to_insert(fp(i + 1)));
        }
        assert!(t.bytes() > 32 << 20);
        assert!(t.groups.iter().all(|g| g.words.is_mapped()));
        assert_eq!(t.len(), n);
        for g in &t.groups {
            assert_eq!(g.len, g.lens.iter().map(|&l| l as usize).sum::<usize>());
            assert!((0..GROUP).all(|l| ordered(g.seg(l))));
        }
        for i in (0..n).step_by(7) {
            assert!(t.contains(fp(i)));
            assert_eq!(t.insert(fp(i)), Ok(false));
        }
        for i in n..n + 200_000 {
            assert!(!t.contains(fp(i)));
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
