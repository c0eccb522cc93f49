//! A layer too large for its visited set in memory, searched breadth-first
//! keeping only the last levels (frontier search), with the next level
//! sorted and deduplicated on disk when it does not fit in memory (delayed
//! duplicate detection).
//!
//! # Why the last three levels are enough
//! Within a layer every move the search generates can be taken back in at
//! most `REVERSE` = 2 moves, when empty columns take any card (`supported`):
//! a card back onto the card it left, to the cell it left, or into the
//! column it emptied (directly, or through a cell when the generator leaves
//! out a lone card into an empty column while a cell is free); a run of `k`
//! cards back where it came from, which the multi-card rule allows exactly
//! as it allowed the move (the free cells and the empty columns other than
//! the two are the same). So if a position `v` is a move away from `u`, then
//! `d(u) <= d(v) + REVERSE` for the breadth-first distance `d` from the
//! layer's entry positions. A child `v` of a position at level `L` has
//! `d(v) <= L + 1`, and `d(v) >= L - REVERSE`: it is new unless it is in
//! levels `L - REVERSE ..= L` (or already among the level being built).
//! Keeping those levels, every position of the layer is expanded exactly
//! once. Under other empty-column rules a card that leaves the bottom of a
//! column may never return, the bound fails, and this search is not used.
//!
//! # Going on from the depth-first search
//! A layer comes here when its depth-first search has outgrown memory. The
//! work it did is kept: its visited set `F` stays in memory, frozen, and the
//! search goes on from the set `S` of positions it left unexpanded (its
//! stack's waiting children, the positions it left for later, the entry
//! positions it never reached, and, if an overflow cut an expansion short
//! before its exits were written, that position again). A child found in
//! `F` is dropped: it was expanded, or it is in `S`.
//! - Every position `x` of the layer not expanded by the depth-first search
//!   is expanded here. Take a path within the layer from an entry position
//!   to `x`, and its last position `p` the depth-first search expanded (if
//!   none, the path's entry position is in `S`). The next one was stored
//!   when `p` was expanded, so it is in `S` or was expanded (not, as `p` is
//!   the last); from it on, no position of the path is in `F` but for one
//!   in `S`, so the path runs in the graph this search walks: positions
//!   outside `F`, and `S`.
//! - The last levels are still enough. If `v` is a move away from `u`, both
//!   searched here, `u` is at most `REVERSE` moves back from `v`, through
//!   at most one position `w` between them. If `w` is in `F` it is in `S`
//!   (were it expanded, `u`, its child, would be in `F` and not searched
//!   here unless in `S`), so `u` is at level 0 or 1; otherwise the way
//!   back runs in the graph searched, and `d(u) <= d(v) + REVERSE` as
//!   above. Either way a child of a position at level `L` that is not new
//!   is in levels `L - REVERSE ..= L`.
//!
//! The positions of `S` in `F` (`Carried::stored`: all but a few, most of
//! them the stack's and those left for later) are the first level as they
//! are: each is there once, was counted as stored when first met, and as
//! `F` drops them they need no place among the last levels; a win found
//! from one is traced back through the origin of the depth-first search
//! that stored it. The others (`Carried::fresh`: entry positions never
//! reached, children of an expansion the overflow cut short) are sorted,
//! deduplicated, counted and kept as roots as entry positions were, and
//! are the first of the last levels. Each position of the layer is stored
//! once and expanded once (but one cut short). The breadth-first search
//! has the memory `F` leaves (at least an eighth: `Prover::table_room`).

use super::seeds::{unlinked_file, Codec, Log, Origin, NO_ORIGIN};
use super::{Prover, Step, Stop};
use crate::board::Board;
use crate::variant::EmptyRule;
use std::collections::BinaryHeap;
use std::fs::File;
use std::io::{self, BufReader, BufWriter, Read, Seek, SeekFrom, Write};
use std::path::Path;

/// Moves to take back any move within a layer (module docs).
const REVERSE: usize = 2;

/// Whether a layer of this board's variant may be searched this way.
pub(super) fn supported(b: &Board) -> bool {
    b.variant().empty == EmptyRule::Any
}

/// A child's reference to where it comes from: the index of its parent in
/// the level's records, and which of the parent's moves makes it
/// (`REF_SELF` for a position carried from the depth-first search that it
/// never stored, which is its own record).
fn child_ref(parent: u64, mv: usize) -> u64 {
    debug_assert!(mv <= REF_SELF as usize);
    (parent << REF_MOVE_BITS) | mv as u64
}

const REF_MOVE_BITS: u32 = 10;
const REF_SELF: u64 = (1 << REF_MOVE_BITS) - 1;

/// The bits of a fingerprint a breadth-first search names a position by:
/// bits 24..128, the 104 bits the layer's visited set compares
/// (`table.rs`), so a level, a sort run and the visited set take two
/// positions for one exactly when the visited set would, and the chance
/// of a false "seen" stays within the bound given there. Kept as the
/// number `fp >> 24`, below 2^104.
const KEY_SHIFT: u32 = 24;
const KEY_BITS: u32 = 128 - KEY_SHIFT;

#[inline]
fn key(fp: u128) -> u128 {
    fp >> KEY_SHIFT
}

/// Bytes that hold `x` (0 for 0).
#[inline]
fn byte_len(x: u128) -> usize {
    (128 - x.leading_zeros() as usize).div_ceil(8)
}

/// An item of an external sort. On disk a sorted run is written one item
/// after another, each as its difference from the one before (`put_next`),
/// in as few bytes as that takes: neighbours in a sorted run of `n` keys
/// below 2^104 differ by about 2^104 / n, so a key takes about 11 bytes
/// instead of 16, and a sorted reference (a level's parents, in order) one
/// or two.
trait Item: Copy + Ord {
    /// The item before the first of a run.
    const ZERO: Self;
    /// Writes `self`, which is not less than `prev`, the item written
    /// before it (`ZERO` first); returns the bytes written.
    fn put_next(self, prev: Self, w: &mut impl Write) -> io::Result<u64>;
    /// Reads the item after `prev`, or `None` at the end of the file.
    fn get_next(prev: Self, r: &mut impl Read) -> io::Result<Option<Self>>;
    /// Whether two neighbours in sorted order are one item (the first is
    /// kept).
    fn same(a: &Self, b: &Self) -> bool;
}

/// Reads `n` bytes, little-endian.
fn get_bytes(n: usize, r: &mut impl Read) -> io::Result<u128> {
    let mut b = [0u8; 16];
    r.read_exact(&mut b[..n])?;
    Ok(u128::from_le_bytes(b))
}

/// Reads one header byte, or `None` at the end of the file.
fn get_head(r: &mut impl Read) -> io::Result<Option<u8>> {
    let mut h = [0u8; 1];
    match r.read_exact(&mut h) {
        Ok(()) => Ok(Some(h[0])),
        Err(e) if e.kind() == io::ErrorKind::UnexpectedEof => Ok(None),
        Err(e) => Err(e),
    }
}

/// A number not less than the one before: a byte with the difference's
/// length, then the difference.
fn put_gap(x: u128, prev: u128, w: &mut impl Write) -> io::Result<u64> {
    debug_assert!(x >= prev);
    let d = x - prev;
    let n = byte_len(d);
    let mut b = [0u8; 17];
    b[0] = n as u8;
    b[1..17].copy_from_slice(&d.to_le_bytes());
    w.write_all(&b[..1 + n])?;
    Ok(1 + n as u64)
}

fn get_gap(prev: u128, r: &mut impl Read) -> io::Result<Option<u128>> {
    match get_head(r)? {
        None => Ok(None),
        Some(n) if n <= 16 => Ok(Some(prev + get_bytes(n as usize, r)?)),
        Some(_) => Err(io::Error::other("a damaged sort run")),
    }
}

/// A candidate for the next level: its key and its reference; one per key
/// is kept. On disk: a byte with both lengths (`17 * reference bytes +
/// difference bytes`), the difference from the key before, the reference
/// (in no order within a run, so written whole, in the bytes it takes).
impl Item for (u128, u64) {
    const ZERO: Self = (0, 0);
    fn put_next(self, prev: Self, w: &mut impl Write) -> io::Result<u64> {
        debug_assert!(self.0 >= prev.0);
        let d = self.0 - prev.0;
        let (n, m) = (byte_len(d), byte_len(self.1 as u128));
        // One write: the header, the difference's bytes, the reference's.
        let mut b = [0u8; 1 + 16 + 8];
        b[0] = (17 * m + n) as u8;
        b[1..17].copy_from_slice(&d.to_le_bytes());
        b[1 + n..9 + n].copy_from_slice(&self.1.to_le_bytes());
        w.write_all(&b[..1 + n + m])?;
        Ok((1 + n + m) as u64)
    }
    fn get_next(prev: Self, r: &mut impl Read) -> io::Result<Option<Self>> {
        let Some(h) = get_head(r)? else {
            return Ok(None);
        };
        let (n, m) = ((h % 17) as usize, (h / 17) as usize);
        if m > 8 {
            return Err(io::Error::other("a damaged sort run"));
        }
        let mut b = [0u8; 16 + 8];
        r.read_exact(&mut b[..n + m])?;
        let mut d = [0u8; 16];
        d[..n].copy_from_slice(&b[..n]);
        let mut x = [0u8; 8];
        x[..m].copy_from_slice(&b[n..n + m]);
        Ok(Some((
            prev.0 + u128::from_le_bytes(d),
            u64::from_le_bytes(x),
        )))
    }
    fn same(a: &Self, b: &Self) -> bool {
        a.0 == b.0
    }
}

/// A reference: every one is kept (a level's are distinct anyway).
impl Item for u64 {
    const ZERO: Self = 0;
    fn put_next(self, prev: Self, w: &mut impl Write) -> io::Result<u64> {
        put_gap(self as u128, prev as u128, w)
    }
    fn get_next(prev: Self, r: &mut impl Read) -> io::Result<Option<Self>> {
        Ok(get_gap(prev as u128, r)?.map(|x| x as u64))
    }
    fn same(_: &Self, _: &Self) -> bool {
        false
    }
}

/// Items sorted, and deduplicated (`Item::same`), in memory up to `chunk`
/// bytes at a time (`full`, then `flush`), each sorted chunk written to an
/// unnamed file; `start` ends the pushing and `next` reads them back
/// merged, in order, through buffers that share `chunk` bytes.
struct ExtSort<T: Item> {
    mem: Vec<T>,
    /// The sorted runs written (each item as its difference from the one
    /// before, `Item::put_next`), and their lengths in bytes.
    files: Vec<(File, u64)>,
    /// Once started: the runs read back, each through `buf` bytes.
    runs: Vec<BufReader<std::io::Take<File>>>,
    buf: usize,
    heads: BinaryHeap<std::cmp::Reverse<(T, usize)>>,
    chunk: usize,
    /// Bytes written to the runs.
    disk: u64,
    /// Reading back: the next in memory, and the last given.
    at: usize,
    last: Option<T>,
}

/// Candidates for the next level: (key, reference) pairs, about 17 bytes
/// on disk (`Item`) instead of the child's record.
type Sorter = ExtSort<(u128, u64)>;

/// The references of a level's new positions, to be read back by parent.
type RefSort = ExtSort<u64>;

impl<T: Item> ExtSort<T> {
    fn new(chunk: usize) -> Self {
        ExtSort {
            mem: Vec::new(),
            files: Vec::new(),
            runs: Vec::new(),
            buf: 0,
            heads: BinaryHeap::new(),
            chunk,
            disk: 0,
            at: 0,
            last: None,
        }
    }

    fn ram(&self) -> u64 {
        (self.mem.capacity() * std::mem::size_of::<T>() + self.runs.len() * self.buf) as u64
    }

    fn push(&mut self, x: T) {
        self.mem.push(x);
    }

    fn full(&self) -> bool {
        self.ram() as usize >= self.chunk
    }

    fn sort_dedup(&mut self) {
        self.mem.sort_unstable();
        self.mem.dedup_by(|b, a| T::same(a, b));
    }

    /// Writes the sorted chunk to a file.
    fn flush(&mut self, dir: &Path) -> io::Result<()> {
        self.sort_dedup();
        let f = unlinked_file(dir)?;
        let mut w = BufWriter::with_capacity(1 << 20, f);
        let (mut prev, mut n) = (T::ZERO, 0);
        for &x in &self.mem {
            n += x.put_next(prev, &mut w)?;
            prev = x;
        }
        let f = w.into_inner().map_err(|e| e.into_error())?;
        self.files.push((f, n));
        self.disk += n;
        self.mem = Vec::new();
        Ok(())
    }

    /// Ends the pushing: what follows is read back in order with `next`.
    fn start(&mut self, dir: Option<&Path>) -> io::Result<()> {
        if self.files.is_empty() {
            self.sort_dedup();
            return Ok(());
        }
        if !self.mem.is_empty() {
            self.flush(dir.expect("runs on disk have a directory"))?;
        }
        // The runs' buffers share a chunk (1968 with 1 cell in 100 MB
        // merged up to hundreds of runs; at 256 KiB each they took more
        // memory than the budget and were not counted).
        self.buf = (self.chunk / self.files.len()).clamp(1 << 12, 1 << 18);
        for (mut f, n) in self.files.drain(..) {
            f.seek(SeekFrom::Start(0))?;
            self.runs
                .push(BufReader::with_capacity(self.buf, f.take(n)));
        }
        for i in 0..self.runs.len() {
            if let Some(x) = T::get_next(T::ZERO, &mut self.runs[i])? {
                self.heads.push(std::cmp::Reverse((x, i)));
            }
        }
        Ok(())
    }

    /// The next item in order, each once.
    fn next(&mut self) -> io::Result<Option<T>> {
        loop {
            let x = if self.runs.is_empty() {
                let x = self.mem.get(self.at).copied();
                self.at += 1;
                x
            } else {
                match self.heads.pop() {
                    Some(std::cmp::Reverse((x, i))) => {
                        // A run's items are read after the one before.
                        if let Some(y) = T::get_next(x, &mut self.runs[i])? {
                            self.heads.push(std::cmp::Reverse((y, i)));
                        }
                        Some(x)
                    }
                    None => None,
                }
            };
            match x {
                Some(x) if self.last.is_some_and(|l| T::same(&l, &x)) => continue,
                Some(x) => {
                    self.last = Some(x);
                    return Ok(Some(x));
                }
                None => return Ok(None),
            }
        }
    }
}

/// A level's keys (`key`), added in increasing order: the first in memory
/// up to `cap` bytes, the rest (all larger) in a file, each as its
/// difference from the one before (as a sort run's, `Item`).
#[derive(Default)]
struct Level {
    ram: Vec<u128>,
    /// Keys past the cap, on their way to the file.
    tail: Vec<u128>,
    /// The file and its length in bytes.
    file: Option<(File, u64)>,
    /// The last key written to the file.
    last: u128,
    len: u64,
    /// Once the level is complete: where each bucket of `ram` starts, the
    /// buckets taken by the keys' top bits (`seal`).
    dir: Vec<u32>,
    shift: u32,
}

/// Keys past a level's cap written to its file at a time.
const TAIL: usize = 1 << 16;

impl Level {
    fn push(&mut self, k: u128, cap: usize, dir: Option<&Path>) -> io::Result<()> {
        self.len += 1;
        match dir {
            Some(dir) if self.file.is_some() || (self.ram.len() + 1) * 16 > cap => {
                self.tail.push(k);
                if self.tail.len() >= TAIL {
                    self.flush(dir)?;
                }
            }
            _ => self.ram.push(k),
        }
        Ok(())
    }

    fn flush(&mut self, dir: &Path) -> io::Result<()> {
        if self.file.is_none() {
            self.file = Some((unlinked_file(dir)?, 0));
        }
        let (f, n) = self.file.as_mut().unwrap();
        let mut w = BufWriter::with_capacity(1 << 16, &mut *f);
        w.seek(SeekFrom::End(0))?;
        for &x in &self.tail {
            *n += put_gap(x, self.last, &mut w)?;
            self.last = x;
        }
        w.flush()?;
        self.tail.clear();
        Ok(())
    }

    fn ram_bytes(&self) -> u64 {
        (self.ram.capacity() + self.tail.capacity()) as u64 * 16 + self.dir.capacity() as u64 * 4
    }

    /// Once the level is complete: writes out the rest of its tail, and
    /// indexes the keys in memory by their top bits, about four to a
    /// bucket (a cache line), for `contains`.
    fn seal(&mut self, dir: Option<&Path>) -> io::Result<()> {
        if let Some(dir) = dir.filter(|_| !self.tail.is_empty()) {
            self.flush(dir)?;
        }
        self.tail = Vec::new();
        let n = self.ram.len();
        if n == 0 {
            return Ok(());
        }
        let bits = (n / 4).max(1).ilog2() + 1;
        self.shift = KEY_BITS - bits;
        let buckets = 1usize << bits;
        let mut index = Vec::with_capacity(buckets + 1);
        let mut i = 0;
        for b in 0..buckets {
            while i < n && ((self.ram[i] >> self.shift) as usize) < b {
                i += 1;
            }
            index.push(i as u32);
        }
        index.push(n as u32);
        self.dir = index;
        Ok(())
    }

    /// Whether `k` is among the level's keys kept in memory (those in its
    /// file are not looked at: a miss here is no answer).
    #[inline]
    fn contains(&self, k: u128) -> bool {
        if self.dir.is_empty() {
            return false;
        }
        let b = (k >> self.shift) as usize;
        let (lo, hi) = (self.dir[b] as usize, self.dir[b + 1] as usize);
        self.ram[lo..hi].contains(&k)
    }

    fn disk_bytes(&self) -> u64 {
        self.file.as_ref().map_or(0, |(_, n)| *n)
    }

    fn reader(&mut self) -> io::Result<LevelReader<'_>> {
        let file = match self.file.as_mut() {
            Some((f, n)) => {
                f.seek(SeekFrom::Start(0))?;
                Some(BufReader::with_capacity(1 << 16, Read::take(&mut *f, *n)))
            }
            None => None,
        };
        let mut r = LevelReader {
            file,
            ram: &self.ram,
            i: 0,
            cur: None,
            prev: 0,
        };
        r.advance()?;
        Ok(r)
    }
}

/// A level read in order: its memory, then its file.
struct LevelReader<'a> {
    file: Option<BufReader<std::io::Take<&'a mut File>>>,
    ram: &'a [u128],
    i: usize,
    cur: Option<u128>,
    /// The last key read from the file.
    prev: u128,
}

impl LevelReader<'_> {
    fn advance(&mut self) -> io::Result<()> {
        if self.i < self.ram.len() {
            self.cur = Some(self.ram[self.i]);
            self.i += 1;
            return Ok(());
        }
        if let Some(r) = self.file.as_mut() {
            match get_gap(self.prev, r)? {
                Some(x) => {
                    self.cur = Some(x);
                    self.prev = x;
                    return Ok(());
                }
                None => self.file = None,
            }
        }
        self.cur = None;
        Ok(())
    }
}

/// The last levels, asked about keys in increasing order.
struct Window<'a> {
    readers: Vec<LevelReader<'a>>,
}

impl Window<'_> {
    fn contains(&mut self, k: u128) -> io::Result<bool> {
        let mut hit = false;
        for r in &mut self.readers {
            while r.cur.is_some_and(|c| c < k) {
                r.advance()?;
            }
            hit |= r.cur == Some(k);
        }
        Ok(hit)
    }
}

/// The positions a layer's breadth-first search starts from, as the
/// depth-first search left them: those it stored (in the frozen visited
/// set) and those it never stored (entry positions it never reached, and
/// children of the position whose expansion overflowed).
#[derive(Default)]
pub(super) struct Carried {
    pub(super) stored: Log,
    pub(super) fresh: Log,
}

impl Prover<'_> {
    /// The memory the breadth-first search may take: what the frozen
    /// visited set leaves.
    fn bfs_room(&self) -> u64 {
        self.limits.max_bytes.saturating_sub(self.table.bytes())
    }

    /// Moves the carried positions to disk once they take an eighth of the
    /// room.
    fn carry_spill(&mut self, carried: &mut Log) -> Result<(), Step> {
        if carried.ram() <= self.bfs_room() / 8 {
            return Ok(());
        }
        let Some(dir) = self.store_dir() else {
            return Err(Step::Limit(super::ProofLimit::Bytes));
        };
        carried
            .spill(&dir, u64::MAX)
            .map_err(|_| Step::Limit(super::ProofLimit::Disk))?;
        self.set_bfs_disk(carried.disk())
    }

    /// Carries a record of the batch the depth-first search had not
    /// reached: a deferred position (stored, never expanded); or an entry
    /// position unless it is in the visited set (met already, as the
    /// depth-first search would skip it), as a fresh one.
    pub(super) fn carry_record(&mut self, rec: &[u8], c: &mut Carried) -> Result<(), Step> {
        let (origin, deferred) = Codec::origin(rec).split_deferred();
        if deferred {
            c.stored.append_as(rec, origin);
            self.carry_spill(&mut c.stored)
        } else if !self.table.contains(self.codec.fingerprint(rec)) {
            c.fresh.append(rec);
            self.carry_spill(&mut c.fresh)
        } else {
            Ok(())
        }
    }

    /// Carries the positions on the depth-first search's stack that are
    /// not expanded: every frame's waiting children (stored, or for the
    /// top frame after an overflow while storing them, stored now), and
    /// the top position itself if its exits were not all written
    /// (`Prover::partial`; it is expanded again). The stack is emptied.
    pub(super) fn carry_stack(&mut self, c: &mut Carried) -> Result<(), Step> {
        let origin = self.root_origin;
        let mut rec = Vec::new();
        let partial = std::mem::take(&mut self.partial);
        for i in (0..self.frames.len()).rev() {
            let f = &self.frames[i];
            let (mv, mark, start, next) = (f.mv, f.mark, f.start as usize, f.next as usize);
            if partial && i + 1 == self.frames.len() {
                rec.clear();
                self.codec.encode(&self.b, origin, &mut rec);
                c.stored.append(&rec[1..]);
            }
            for k in start..next {
                let m = self.children[k];
                self.b.apply(m);
                let log = if self.table.contains(self.b.fingerprint()) {
                    &mut c.stored
                } else {
                    &mut c.fresh
                };
                rec.clear();
                self.codec.encode(&self.b, origin, &mut rec);
                log.append(&rec[1..]);
                self.b.undo(m);
                self.b.restore_dirty(mark);
                self.carry_spill(log)?;
            }
            if let Some(m) = mv {
                self.b.undo(m);
                self.b.settle();
            }
        }
        self.frames.clear();
        self.children.clear();
        Ok(())
    }

    /// Searches layer `layer` on breadth-first from the positions its
    /// depth-first search left (`carried`, with the deferred ones still
    /// waiting), its visited set frozen as a filter (module docs).
    pub(super) fn frontier_from(&mut self, layer: u32, mut c: Carried) -> Step {
        if let Some(mut d) = self.store.take(layer) {
            let mut failed = None;
            let io = d.for_each(|rec| {
                let origin = Codec::origin(rec).split_deferred().0;
                c.stored.append_as(rec, origin);
                self.carry_spill(&mut c.stored)
                    .map_err(|s| failed = Some(s))
                    .is_ok()
            });
            self.store.release(d);
            if let Some(s) = failed {
                return s;
            }
            if io.is_err() {
                return Step::Limit(super::ProofLimit::Disk);
            }
        }
        self.stats.carried += c.stored.len() + c.fresh.len();
        self.frozen = true;
        self.batch_bytes = 0;
        let step = self.frontier_search(layer, c);
        self.frozen = false;
        step
    }

    /// Searches a layer breadth first (module docs) on from `carried`, the positions its depth-first search left, all in the
    /// frozen visited set: they are the first level as they are (none is
    /// met again: the set drops them, so the last levels start empty).
    /// Exits are written out as in the depth-first search; a win is traced
    /// back through the origin of the carried position it came from.
    fn frontier_search(&mut self, layer: u32, c: Carried) -> Step {
        let Carried {
            stored: mut carried,
            mut fresh,
        } = c;
        self.frames.clear();
        self.children.clear();
        self.incoming = None;
        let dir = self.store_dir();
        let room = self.bfs_room();
        // A sorted chunk, doubling as it grows, stays within a quarter.
        let chunk = (room / 8).max(1 << 14) as usize;
        // Four levels at most are held at once (three and the one being
        // built), each with up to a sixteenth of the memory in memory.
        let level_cap = (room / 16) as usize;
        let mut sorter = Sorter::new(chunk);
        // The layer's positions: those stored depth-first (the carried
        // ones among them), then each level's new ones.
        let mut layer_len = self.table.len();
        // The fresh positions: sorted as references to their own records,
        // each distinct one kept as a root and counted as stored, and their
        // fingerprints the first of the last levels.
        let mut failed = None;
        let mut index = 0u64;
        let io = fresh.for_each(|rec| {
            sorter.push((
                key(self.codec.fingerprint(rec)),
                child_ref(index, REF_SELF as usize),
            ));
            index += 1;
            if sorter.full() {
                if let Err(e) = self.spill_sorter(&mut sorter, dir.as_deref()) {
                    failed = Some(e);
                    return false;
                }
            }
            true
        });
        if let Some(s) = failed {
            return s;
        }
        if io.is_err() {
            return Step::Limit(super::ProofLimit::Disk);
        }
        let mut fps = Level::default();
        let mut refs = RefSort::new(chunk);
        let mut sorted = || -> io::Result<()> {
            sorter.start(dir.as_deref())?;
            while let Some((k, r)) = sorter.next()? {
                fps.push(k, level_cap, dir.as_deref())?;
                refs.push(r);
                if refs.full() {
                    if let Some(d) = dir.as_deref() {
                        refs.flush(d)?;
                    }
                }
            }
            fps.seal(dir.as_deref())
        };
        if sorted().is_err() {
            return Step::Limit(super::ProofLimit::Disk);
        }
        sorter = Sorter::new(chunk);
        let mut made = Log::default();
        if let Err(s) = self.make_level(layer, &mut fresh, &mut refs, &mut made, dir.as_deref()) {
            return s;
        }
        drop(refs);
        drop(fresh);
        self.stats.stored += fps.len;
        layer_len += fps.len;
        let mut levels: Vec<Level> = vec![fps];
        // The level to expand: the carried positions stored depth-first,
        // then the fresh ones.
        let mut failed = None;
        let io = made.for_each(|rec| {
            carried.append(rec);
            self.carry_spill(&mut carried)
                .map_err(|s| failed = Some(s))
                .is_ok()
        });
        if let Some(s) = failed {
            return s;
        }
        if io.is_err() {
            return Step::Limit(super::ProofLimit::Disk);
        }
        drop(made);
        self.bfs_ram = carried.ram() + levels[0].ram_bytes();
        self.bfs_frontier_disk = carried.disk() + levels[0].disk_bytes();
        if let Err(s) = self.set_bfs_disk(self.bfs_frontier_disk) {
            return s;
        }
        if let Err(s) = self.fit_stop(0) {
            return s;
        }
        if let Err(s) = self.expand_frontier(&mut carried, &levels, &mut sorter, dir.as_deref()) {
            return s;
        }
        // The records the sorter's references point into.
        let mut parents = carried;
        loop {
            // The next level: the candidates less the last levels.
            let mut fps = Level::default();
            let mut refs = RefSort::new(chunk);
            {
                let readers: io::Result<Vec<LevelReader>> =
                    levels.iter_mut().map(|l| l.reader()).collect();
                let Ok(readers) = readers else {
                    return Step::Limit(super::ProofLimit::Disk);
                };
                let mut w = Window { readers };
                let mut merge = || -> io::Result<()> {
                    sorter.start(dir.as_deref())?;
                    while let Some((k, r)) = sorter.next()? {
                        if !w.contains(k)? {
                            fps.push(k, level_cap, dir.as_deref())?;
                            refs.push(r);
                            if refs.full() {
                                if let Some(d) = dir.as_deref() {
                                    refs.flush(d)?;
                                }
                            }
                        }
                    }
                    Ok(())
                };
                if merge().is_err() {
                    return Step::Limit(super::ProofLimit::Disk);
                }
            }
            // The sort runs go.
            sorter = Sorter::new(chunk);
            self.bfs_ram_sorter = refs.ram();
            if let Err(s) = self.fit_stop(0) {
                return s;
            }
            if fps.seal(dir.as_deref()).is_err() {
                return Step::Limit(super::ProofLimit::Disk);
            }
            // The sort runs are gone; the last levels' files stay.
            let levels_disk = levels.iter().map(Level::disk_bytes).sum::<u64>() + fps.disk_bytes();
            self.bfs_frontier_disk = 0;
            if let Err(s) = self.set_bfs_disk(levels_disk + parents.disk() + refs.disk) {
                return s;
            }
            // The new level's records, made from their parents' in order.
            let mut frontier = Log::default();
            if let Err(s) = self.make_level(
                layer,
                &mut parents,
                &mut refs,
                &mut frontier,
                dir.as_deref(),
            ) {
                return s;
            }
            drop(refs);
            drop(parents);
            self.bfs_ram_sorter = 0;
            self.bfs_frontier_disk = frontier.disk();
            if let Err(s) = self.set_bfs_disk(self.bfs_frontier_disk + levels_disk) {
                return s;
            }
            if fps.len == 0 {
                return Step::Done;
            }
            self.stats.stored += fps.len;
            layer_len += fps.len;
            self.stats.max_layer = self.stats.max_layer.max(layer_len);
            if self.stats.stored > self.limits.max_positions {
                return Step::Limit(super::ProofLimit::Positions);
            }
            levels.push(fps);
            if levels.len() > REVERSE + 1 {
                levels.remove(0);
            }
            self.bfs_ram = levels.iter().map(Level::ram_bytes).sum::<u64>() + frontier.ram();
            self.bfs_frontier_disk += levels.iter().map(Level::disk_bytes).sum::<u64>();
            if let Err(s) = self.set_bfs_disk(self.bfs_frontier_disk) {
                return s;
            }
            if let Err(s) = self.fit_stop(0) {
                return s;
            }
            if let Err(s) =
                self.expand_frontier(&mut frontier, &levels, &mut sorter, dir.as_deref())
            {
                return s;
            }
            parents = frontier;
        }
    }

    /// Expands every position of a level (`expand_level`), between two
    /// looks at the clock.
    fn expand_frontier(
        &mut self,
        frontier: &mut Log,
        levels: &[Level],
        sorter: &mut Sorter,
        dir: Option<&Path>,
    ) -> Result<(), Step> {
        if self.over_time() {
            return Err(Step::Limit(super::ProofLimit::Time));
        }
        let mut step = None;
        let mut index = 0u64;
        let io = frontier.for_each(|rec| {
            let (b, origin) = self.codec.decode(rec);
            let r = self.expand_level(b, origin, index, levels, sorter, dir);
            index += 1;
            r.map_err(|s| step = Some(s)).is_ok()
        });
        if let Some(s) = step {
            return Err(s);
        }
        if io.is_err() {
            return Err(Step::Limit(super::ProofLimit::Disk));
        }
        if self.over_time() {
            return Err(Step::Limit(super::ProofLimit::Time));
        }
        Ok(())
    }

    /// Writes the records of a level's new positions to `out`, reading
    /// their parents' records (`parents`) once, in order, with the
    /// references sorted: each child is its parent with the referenced
    /// move played (the moves are generated again, in the same order), or
    /// (`REF_SELF`) its own record, kept as a root.
    fn make_level(
        &mut self,
        layer: u32,
        parents: &mut Log,
        refs: &mut RefSort,
        out: &mut Log,
        dir: Option<&Path>,
    ) -> Result<(), Step> {
        let disk = |_: io::Error| Step::Limit(super::ProofLimit::Disk);
        refs.start(dir).map_err(disk)?;
        let mut next = refs.next().map_err(disk)?;
        let mut index = 0u64;
        let mut rec_out = Vec::new();
        let mut moves = std::mem::take(&mut self.moves);
        let mut parent_origin = NO_ORIGIN;
        let mut failed = None;
        let mut failed_limit = None;
        let io = parents.for_each(|rec| {
            let mut decoded = false;
            while let Some(r) = next.filter(|r| r >> REF_MOVE_BITS == index) {
                if r & REF_SELF == REF_SELF {
                    // Its own record, kept as a root (for a win's trace
                    // back), which takes memory.
                    let root = self
                        .store
                        .keep_root(layer, self.codec.fingerprint(rec), rec);
                    self.stats.roots += 1;
                    let origin = Origin {
                        layer: layer as u8,
                        root,
                    };
                    out.append_as(rec, origin);
                    if let Err(l) = self.fit(0) {
                        failed_limit = Some(l);
                        return false;
                    }
                    match refs.next() {
                        Ok(r) => next = r,
                        Err(e) => {
                            failed = Some(e);
                            return false;
                        }
                    }
                    continue;
                }
                if !decoded {
                    let (b, origin) = self.codec.decode(rec);
                    self.b = b;
                    self.b.settle();
                    parent_origin = origin;
                    moves.clear();
                    let runs = self.b.runs();
                    self.b.gen_moves_with_runs(&mut moves, runs);
                    decoded = true;
                }
                let m = moves[(r & REF_SELF) as usize];
                let mark = self.b.dirty_mark();
                self.b.apply(m);
                rec_out.clear();
                self.codec.encode(&self.b, parent_origin, &mut rec_out);
                out.append(&rec_out[1..]);
                self.b.undo(m);
                self.b.restore_dirty(mark);
                match refs.next() {
                    Ok(r) => next = r,
                    Err(e) => {
                        failed = Some(e);
                        return false;
                    }
                }
            }
            index += 1;
            if out.ram() > self.bfs_room() / 8 {
                // The level's positions wait on disk while it is expanded.
                let Some(d) = dir else {
                    failed = Some(io::Error::other("no spill directory"));
                    return false;
                };
                if out.spill(d, u64::MAX).is_err() {
                    failed = Some(io::Error::other("a level's spill file"));
                    return false;
                }
            }
            true
        });
        self.moves = moves;
        if let Some(l) = failed_limit {
            return Err(Step::Limit(l));
        }
        if failed.is_some() || io.is_err() {
            return Err(Step::Limit(super::ProofLimit::Disk));
        }
        debug_assert!(next.is_none());
        Ok(())
    }

    fn spill_sorter(&mut self, sorter: &mut Sorter, dir: Option<&Path>) -> Result<(), Step> {
        let Some(dir) = dir else {
            return Err(Step::Limit(super::ProofLimit::Bytes));
        };
        sorter
            .flush(dir)
            .map_err(|_| Step::Limit(super::ProofLimit::Disk))?;
        self.set_bfs_disk(self.bfs_frontier_disk + sorter.disk)
    }

    /// Records the breadth-first search's files on disk: they count against
    /// `max_disk` together with the store's, and in its peak.
    fn set_bfs_disk(&mut self, bytes: u64) -> Result<(), Step> {
        self.bfs_disk = bytes;
        self.store.set_other_disk(bytes);
        if bytes > 0 && self.store.disk() + bytes > self.limits.max_disk {
            return Err(Step::Limit(super::ProofLimit::Disk));
        }
        Ok(())
    }

    /// Expands one position of a level: exits to the store, moves within
    /// the layer to the sorter, less those found in the last levels' memory
    /// (most of a level's moves lead back to them, and the merge would drop
    /// them anyway).
    fn expand_level(
        &mut self,
        b: Board,
        origin: Origin,
        index: u64,
        levels: &[Level],
        sorter: &mut Sorter,
        dir: Option<&Path>,
    ) -> Result<(), Step> {
        self.stats.expanded += 1;
        // A level can take minutes: the time limit is checked within it, as
        // the depth-first search checks it, not only between levels.
        if self.stats.expanded & 1023 == 0 && self.over_time() {
            return Err(Step::Limit(super::ProofLimit::Time));
        }
        self.b = b;
        self.b.settle();
        // A win from here is traced back through this position's record.
        self.start_fp = self.b.fingerprint();
        self.start_origin = origin;
        let mark = self.b.dirty_mark();
        let mut moves = std::mem::take(&mut self.moves);
        moves.clear();
        let runs = self.b.runs();
        self.b.gen_moves_with_runs(&mut moves, runs);
        debug_assert!(moves.len() < REF_SELF as usize);
        let mut result = Ok(());
        let mut kids = std::mem::take(&mut self.kids);
        kids.clear();
        for (j, &m) in moves.iter().enumerate() {
            if !self.is_exit(m) {
                // Looked up once the exits are written, their slots in
                // the visited set fetched meanwhile (as `expand` does).
                let (fp, _, _) = self.b.wide_after(m);
                self.table.prefetch(fp);
                kids.push((j, fp));
                continue;
            }
            self.bfs_ram_sorter = sorter.ram();
            if let Err(s) = self.exit(m, mark, super::Mode::Explore { origin }) {
                result = Err(s);
                break;
            }
        }
        if result.is_ok() {
            let before = sorter.ram();
            for &(j, fp) in &kids {
                // The visited set last: most moves lead back into the
                // last levels, and its lookups miss the cache.
                let k = key(fp);
                if !levels.iter().rev().any(|l| l.contains(k)) && !self.table.contains(fp) {
                    sorter.push((k, child_ref(index, j)));
                    if sorter.full() {
                        if let Err(s) = self.spill_sorter(sorter, dir) {
                            result = Err(s);
                            break;
                        }
                    }
                }
            }
            // A sorter grown in memory: within the budget too.
            if result.is_ok() && sorter.ram() > before {
                self.bfs_ram_sorter = sorter.ram();
                result = self.fit_stop(0);
            }
        }
        self.kids = kids;
        self.moves = moves;
        self.bfs_ram_sorter = sorter.ram();
        result
    }
}

impl From<Stop> for Step {
    fn from(s: Stop) -> Step {
        match s {
            Stop::Limit(l) => Step::Limit(l),
            Stop::Overflow => Step::Overflow,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn dir(test: &str) -> std::path::PathBuf {
        let d = std::env::temp_dir().join(format!("fca-frontier-{test}-{}", std::process::id()));
        std::fs::create_dir_all(&d).unwrap();
        d
    }

    /// A pseudo-random sequence with repeats.
    fn items(n: u64) -> Vec<u64> {
        (0..n)
            .map(|i| (i.wrapping_mul(0x9E37_79B9_7F4A_7C15) >> 20) % (n / 2))
            .collect()
    }

    #[test]
    fn the_sorter_gives_each_fingerprint_once_in_order_from_memory_and_disk() {
        let d = dir("sorter");
        let xs = items(50_000);
        let mut want: Vec<u128> = xs.iter().map(|&x| (x as u128) << 64 | 7).collect();
        want.sort_unstable();
        want.dedup();
        // A chunk of 512 entries: about a hundred runs on disk; and all in
        // memory.
        for chunk in [512 * 32, 1 << 30] {
            let mut s = Sorter::new(chunk);
            for (i, &x) in xs.iter().enumerate() {
                s.push(((x as u128) << 64 | 7, i as u64));
                if s.full() {
                    s.flush(&d).unwrap();
                }
            }
            assert_eq!(s.files.is_empty(), chunk > 1 << 20);
            let mut got = Vec::new();
            s.start(Some(&d)).unwrap();
            while let Some((fp, r)) = s.next().unwrap() {
                // The reference is one of the fingerprint's own.
                assert_eq!(xs[r as usize], (fp >> 64) as u64);
                got.push(fp);
            }
            assert_eq!(got, want);
        }
        let _ = std::fs::remove_dir_all(&d);
    }

    #[test]
    fn references_come_back_sorted_from_memory_and_disk() {
        let d = dir("refs");
        let xs = items(50_000);
        let mut want = xs.clone();
        want.sort_unstable();
        for chunk in [4096, 1 << 30] {
            let mut r = RefSort::new(chunk);
            for &x in &xs {
                r.push(x);
                if r.full() {
                    r.flush(&d).unwrap();
                }
            }
            assert_eq!(r.files.is_empty(), chunk > 1 << 20);
            r.start(Some(&d)).unwrap();
            let mut got = Vec::new();
            while let Some(x) = r.next().unwrap() {
                got.push(x);
            }
            assert_eq!(got, want);
        }
        let _ = std::fs::remove_dir_all(&d);
    }

    #[test]
    fn items_come_back_from_their_differences() {
        let mut keys: Vec<u128> = (0..2000u128)
            .map(|i| key(i.wrapping_mul(0x9E37_79B9_7F4A_7C15_F39C_C060_5CED_C835)))
            .collect();
        keys.extend([0, 1, (1 << KEY_BITS) - 1]);
        keys.sort_unstable();
        keys.dedup();
        let pairs: Vec<(u128, u64)> = keys
            .iter()
            .enumerate()
            .map(|(i, &k)| (k, [0, 1, u64::MAX, i as u64 * 1031][i % 4]))
            .collect();
        let mut w = Vec::new();
        let (mut prev, mut n) = (<(u128, u64)>::ZERO, 0);
        for &x in &pairs {
            n += x.put_next(prev, &mut w).unwrap();
            prev = x;
        }
        assert_eq!(n, w.len() as u64);
        let (mut r, mut prev, mut got) = (&w[..], <(u128, u64)>::ZERO, Vec::new());
        while let Some(x) = <(u128, u64)>::get_next(prev, &mut r).unwrap() {
            got.push(x);
            prev = x;
        }
        assert_eq!(got, pairs);
        // 2,000 keys below 2^104: about 94 bits apart, 12 bytes each
        // with the header byte, and the references their own bytes.
        let refs: u64 = pairs.iter().map(|p| byte_len(p.1 as u128) as u64).sum();
        assert!(n - refs <= 13 * pairs.len() as u64, "{n} {refs}");
        // A truncated item is an error, not an end.
        let mut w = Vec::new();
        let big = ((1 << KEY_BITS) - 1, u64::MAX);
        assert_eq!(big.put_next(<(u128, u64)>::ZERO, &mut w).unwrap(), 22);
        assert!(<(u128, u64)>::get_next(<(u128, u64)>::ZERO, &mut &w[..10]).is_err());
    }

    #[test]
    fn a_level_past_its_cap_reads_back_in_order_and_takes_fewer_bytes() {
        let d = dir("level");
        let mut keys: Vec<u128> = (0..100_000u128)
            .map(|i| key(i.wrapping_mul(0x9E37_79B9_7F4A_7C15_F39C_C060_5CED_C835)))
            .collect();
        keys.sort_unstable();
        keys.dedup();
        let mut l = Level::default();
        for &k in &keys {
            l.push(k, 16 * 1000, Some(&d)).unwrap();
        }
        l.seal(Some(&d)).unwrap();
        assert_eq!(l.ram.len(), 1000);
        assert!(keys[..1000].iter().all(|&k| l.contains(k)));
        let on_disk = (keys.len() - 1000) as u64;
        // About 88 bits apart: 12 bytes with the header, not 16.
        assert!(2 * l.disk_bytes() <= 25 * on_disk, "{}", l.disk_bytes());
        let mut r = l.reader().unwrap();
        let mut got = Vec::new();
        while let Some(k) = r.cur {
            got.push(k);
            r.advance().unwrap();
        }
        assert_eq!(got, keys);
        let _ = std::fs::remove_dir_all(&d);
    }

    #[test]
    fn a_reference_keeps_its_parent_and_move() {
        let r = child_ref(123_456_789_012, 37);
        assert_eq!((r >> REF_MOVE_BITS, r & REF_SELF), (123_456_789_012, 37));
        let r = child_ref(5, REF_SELF as usize);
        assert_eq!((r >> REF_MOVE_BITS, r & REF_SELF), (5, REF_SELF));
    }
}
