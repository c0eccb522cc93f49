//! The complete search: the one that proves. Depth-first over every move
//! (every single-card move, multi-card moves as shorthand), after every
//! move the safe automatic moves (`Board::is_safe_home`), children ordered
//! by the heuristic, and a visited set of fingerprints (`Visited`). It either
//! finds a win or visits every reachable position; only then does it answer
//! `unsolvable` (docs/SOLVER.md, "Why `unsolvable` is a proof").
//!
//! Its interface: a board, an order (`Weights`) and the limits in
//! (`Search::new`); `resume` with an expansion target, the room the other
//! searches leave it, and the solve's budget; a `SolveResult` out
//! (`Step::Done`). It runs in turns beside the portfolio, or alone.

use super::budget::{grow_stack, table_bytes, vec_growth, Budget, Load, Room};
#[cfg(debug_assertions)]
use super::heuristic::score;
use super::heuristic::{Heuristic, Parent, Weights};
use super::pathfile::PathFile;
use super::progress::{self, Counts, Stage};
use super::result::{LimitKind, Limits, Outcome, Solution, SolveResult, Stats};
use super::solution;
use crate::board::{Board, DirtyMark, Loc, Move};
use crate::fpset::FpHasher;
use crate::prover::table::FpTable;
use std::collections::HashSet;
use std::hash::BuildHasherDefault;

/// A hash set of whole fingerprints.
type FastSet = HashSet<u128, BuildHasherDefault<FpHasher>>;

/// Bytes of a `FastSet` with room for `cap` positions.
fn fast_bytes(cap: usize) -> u64 {
    table_bytes(cap, 16)
}

/// The visited set. It starts as a hash set of whole fingerprints (fast;
/// 17 bytes a slot, twice that while it doubles), and when the next
/// doubling would leave no room to make the change later, its positions
/// move to the prover's compact table (`FpTable`: 12 bytes a slot, at most
/// 16 a position, growing a sixteenth at a time), somewhat slower but able
/// to hold about three times as many positions in the same memory. The
/// compact table compares 104 bits: a false "seen" among `N` positions
/// has chance at most `N² / 2^105`, 5·10⁻¹⁴ at the most positions 16 GiB
/// holds (`prover::table`); the hash set's 128 bits are safer still
/// (docs/SOLVER.md).
enum Visited {
    Fast(FastSet),
    Compact(FpTable),
}

impl Visited {
    #[inline]
    fn len(&self) -> u64 {
        match self {
            Visited::Fast(h) => h.len() as u64,
            Visited::Compact(t) => t.len(),
        }
    }

    #[inline]
    fn contains(&self, fp: u128) -> bool {
        match self {
            Visited::Fast(h) => h.contains(&fp),
            Visited::Compact(t) => t.contains(fp),
        }
    }

    /// Asks for `fp`'s slot ahead of a `contains`, when the set is compact
    /// (then large: its slots are in memory, not in the caches).
    #[inline(always)]
    fn prefetch(&self, fp: u128) {
        if let Visited::Compact(t) = self {
            t.prefetch(fp);
        }
    }

    fn bytes(&self) -> u64 {
        match self {
            Visited::Fast(h) => fast_bytes(h.capacity()),
            Visited::Compact(t) => t.bytes(),
        }
    }

    /// Moves the positions to a compact table.
    fn compact(&mut self) {
        if let Visited::Fast(h) = self {
            let mut t = FpTable::with_capacity(h.len() as u64);
            for &fp in h.iter() {
                // A table sized for them has room: no segment is full.
                let _ = t.insert(fp);
            }
            *self = Visited::Compact(t);
        }
    }
}

/// The fewest positions the visited set holds before it may become
/// compact when the memory runs short: a search of fewer never needs the
/// compact table's memory. With `COMPACT_PAST` below it, a set this large
/// has already become compact whenever the compact table fits, so this
/// rule decides only where `compact_past` is set above it (tests of the
/// memory rule).
const COMPACT_FROM: usize = 1 << 20;

/// Positions past which the visited set becomes compact whatever the
/// room: by then its slots are past the caches, and the compact table,
/// its slots asked for ahead of the lookups (`expand`), takes the time the
/// hash set takes in a third of the memory (docs/solver-log.md, session
/// 37: MS 607 with 1 cell, 2.35 M positions, 112.5 MB -> 45.4 MB at the
/// peak, the same seconds). Fewer stay in the hash set, which is faster
/// while it fits the caches (session 40: compact from 4,096 positions,
/// MS 607 with 1 cell took 1.10 times the CPU).
const COMPACT_PAST: usize = 1 << 18;

/// The most moves one position has in any variant (10 columns, 10 cells):
/// a bound on the children an expansion pushes.
const MAX_CHILDREN: usize = 512;

/// A waiting child: its fingerprint (as generated), its score and the
/// move that reaches it, packed: 25 bytes, where the tuple of the three
/// takes 32 (a `u128` aligns to 16). The stack of waiting children is
/// most of the search's memory besides the visited set (MS 13584 with 3
/// cells: 148,603 children at most).
#[derive(Clone, Copy)]
#[repr(C, packed)]
struct Child {
    fp: u128,
    h: i32,
    m: Move,
}

/// A position on the search's path.
struct Frame {
    /// The move that led here (None at the root) and how many automatic
    /// foundation moves followed it in `auto_log`.
    mv: Option<Move>,
    autos: usize,
    /// The position's column-hash state once expanded (settled), restored
    /// whenever a child's moves are undone.
    mark: DirtyMark,
    /// This frame's children in `children[start..end]`, next to try at `next`.
    start: usize,
    next: usize,
    /// The position's run lengths (`Board::runs`): a child's are these with
    /// the columns its moves changed recomputed.
    runs: u64,
}

/// How a turn of the search ended.
pub(super) enum Step {
    /// It has an answer.
    Done(SolveResult),
    /// It has made its expansions.
    Paused,
    /// The room the other searches leave it is used up: to be resumed
    /// once they are gone.
    Squeezed,
}

pub(super) struct Search {
    started: bool,
    heuristic: Heuristic,
    /// An experiment's cap on expansions (`solve_complete_alone`).
    cap: u64,
    start: Board,
    b: Board,
    limits: Limits,
    visited: Visited,
    /// `COMPACT_FROM`; tests make it small, and with `Some(n)` in
    /// `compact_at` make the set compact at `n` positions whatever the room.
    compact_from: usize,
    /// `COMPACT_PAST`; tests make it small.
    compact_past: usize,
    #[cfg(test)]
    compact_at: Option<usize>,
    frames: Vec<Frame>,
    /// Children waiting, per frame: score, move and fingerprint.
    children: Vec<Child>,
    auto_log: Vec<Move>,
    /// The bottom of the path (of the three stacks above) on disk, once
    /// they fill `stack_room` (`pathfile`); only with a spill directory
    /// and a disk budget.
    path: Option<PathFile>,
    stack_room: u64,
    scratch: Vec<Move>,
    /// Per move of `scratch`, a plain child's fingerprint and column
    /// hashes (`Board::wide_after`), worked out ahead when the set is
    /// compact (`expand`).
    wide: Vec<Option<(u128, u64, u64)>>,
    stats: Stats,
    /// Publishes its counts to a watcher (`progress`) as it goes, as this
    /// stage, with these expansions and this load of the other searches
    /// added (`watch`).
    watch: (Stage, u64, Load),
}

impl Search {
    /// A search of `board`'s positions, children in the order of `order`.
    pub(super) fn new(board: &Board, order: Weights, limits: &Limits) -> Self {
        Search {
            started: false,
            heuristic: Heuristic::new(order, limits.max_bytes),
            cap: u64::MAX,
            start: board.clone(),
            b: board.clone(),
            limits: limits.clone(),
            visited: Visited::Fast(FastSet::default()),
            compact_from: COMPACT_FROM,
            compact_past: COMPACT_PAST,
            #[cfg(test)]
            compact_at: None,
            frames: Vec::new(),
            children: Vec::new(),
            auto_log: Vec::new(),
            path: None,
            stack_room: stack_room(limits.max_bytes),
            scratch: Vec::new(),
            wide: Vec::new(),
            stats: Stats::default(),
            watch: (Stage::Complete, 0, Load::default()),
        }
    }

    /// From now on it publishes its counts (`progress`) as `stage`'s, with
    /// `expanded` expansions and the load `held` of the other searches
    /// added (the portfolio's, while it takes turns in the rounds).
    pub(super) fn watch(&mut self, stage: Stage, expanded: u64, held: Load) {
        self.watch = (stage, expanded, held);
    }

    /// Peak bytes of its path file (0: none written).
    pub(super) fn peak_disk(&self) -> u64 {
        self.stats
            .peak_disk
            .max(self.path.as_ref().map_or(0, |p| p.peak))
    }

    /// Counts `bytes` of spill an earlier search of the solve held (the
    /// interleaved one this one replaces) in its peak.
    pub(super) fn saw_disk(&mut self, bytes: u64) {
        self.stats.peak_disk = self.stats.peak_disk.max(bytes);
    }

    /// Whether it has taken a turn.
    pub(super) fn started(&self) -> bool {
        self.started
    }

    /// Positions expanded.
    pub(super) fn expansions(&self) -> u64 {
        self.stats.expanded
    }

    /// What it holds.
    pub(super) fn load(&self) -> Load {
        Load {
            bytes: self.bytes(),
            stored: self.visited.len(),
        }
    }

    fn bytes(&self) -> u64 {
        self.visited.bytes() + self.stack_bytes() + self.heuristic.bytes()
    }

    /// Bytes of the path's stacks in memory.
    fn stack_bytes(&self) -> u64 {
        (self.frames.capacity() * std::mem::size_of::<Frame>()
            + self.children.capacity() * std::mem::size_of::<Child>()
            + self.auto_log.capacity() * std::mem::size_of::<Move>()) as u64
    }

    /// What the stacks grow by for the expansion after a store (a frame
    /// and up to `MAX_CHILDREN` children), each growth counted as a new
    /// buffer while the old one lives; 0 when they have room.
    fn stack_growth(&self) -> u64 {
        let mut g = 0;
        if self.frames.len() == self.frames.capacity() {
            g += vec_growth(&self.frames, 1);
        }
        if self.children.len() + MAX_CHILDREN > self.children.capacity() {
            g += vec_growth(&self.children, MAX_CHILDREN);
        }
        g
    }

    /// Whether the bottom of the path may go to disk.
    fn can_spill(&self) -> bool {
        self.limits.spill_dir.is_some() && self.limits.max_disk > 0
    }

    /// Bytes of spill held now.
    fn disk(&self) -> u64 {
        self.path.as_ref().map_or(0, |p| p.disk())
    }

    /// Writes the bottom half of the path (frames, their children and
    /// automatic moves) to the path file; `Err` (memory: the search may
    /// not grow) when the disk budget or the disk refuses it.
    fn spill_path(&mut self) -> Result<(), LimitKind> {
        let k = self.frames.len() / 2;
        if k == 0 {
            return Ok(());
        }
        // A frame's children follow the frames' order: those of frames
        // below `k` come before frame `k`'s, and so do their automatic moves.
        let c = self.frames[k].start;
        let a: usize = self.frames[..k].iter().map(|f| f.autos).sum();
        let mut buf = Vec::with_capacity(k * FRAME_BYTES + c * CHILD_BYTES + a * 4);
        for f in &self.frames[..k] {
            write_frame(f, &mut buf);
        }
        for c in &self.children[..c] {
            write_child(c, &mut buf);
        }
        for m in &self.auto_log[..a] {
            buf.extend_from_slice(&m.code().to_le_bytes());
        }
        if self.path.is_none() {
            let dir = self.limits.spill_dir.as_ref().expect("can_spill");
            self.path =
                Some(PathFile::new(dir, self.limits.max_disk).map_err(|_| LimitKind::Bytes)?);
        }
        let path = self.path.as_mut().unwrap();
        path.push(&buf, [k, c, a]).map_err(|_| LimitKind::Bytes)?;
        self.stats.peak_disk = self.stats.peak_disk.max(path.peak);
        self.stats.peak_bytes = self
            .stats
            .peak_bytes
            .max(self.bytes() + buf.capacity() as u64);
        self.frames.drain(..k);
        self.children.drain(..c);
        self.auto_log.drain(..a);
        for f in &mut self.frames {
            f.start -= c;
            f.next -= c;
        }
        Ok(())
    }

    /// Reads the newest segment of the path back, once the search has
    /// backed up through every frame above it; false when none is left,
    /// `Err` when the file cannot be read (the search cannot go on).
    fn reload_path(&mut self) -> Result<bool, std::io::Error> {
        let Some(path) = self.path.as_mut() else {
            return Ok(false);
        };
        let mut buf = Vec::new();
        let Some(read) = path.pop(&mut buf) else {
            return Ok(false);
        };
        let [k, c, a] = read?;
        debug_assert!(
            self.frames.is_empty() && self.children.is_empty() && self.auto_log.is_empty()
        );
        let mut at = 0;
        for _ in 0..k {
            self.frames.push(read_frame(&buf[at..]));
            at += FRAME_BYTES;
        }
        for _ in 0..c {
            self.children.push(read_child(&buf[at..]));
            at += CHILD_BYTES;
        }
        for _ in 0..a {
            let code = u32::from_le_bytes(buf[at..at + 4].try_into().unwrap());
            self.auto_log.push(Move::from_code(code));
            at += 4;
        }
        Ok(true)
    }

    /// Room for `n` more positions in the visited set, if the set then
    /// takes at most 1/16 of `max_bytes` (like the portfolio's first tables).
    pub(super) fn reserve(&mut self, n: usize, max_bytes: u64) {
        let n = n.min(self.limits.max_positions as usize);
        let bytes = self.bytes();
        if let Visited::Fast(h) = &mut self.visited {
            let want = h.len() + n;
            if want > h.capacity() && fast_bytes(want) + bytes <= max_bytes / 16 {
                h.reserve(n);
            }
        }
    }

    /// Starts or continues the search until it has expanded `until`
    /// positions, holding at most `room` (the limits, less what other
    /// searches of the solve hold): past that it pauses (`Squeezed`)
    /// without losing the position, to be resumed later. The time limit is
    /// the whole solve's (`budget`).
    pub(super) fn resume(&mut self, until: u64, room: Room, budget: &Budget) -> Step {
        if !self.started {
            self.started = true;
            let root_autos = self.b.autoplay(&mut self.auto_log);
            if let Err(k) = self.store(self.b.fingerprint(), budget.whole()) {
                return Step::Done(self.finish(Outcome::Limit(k), None, budget));
            }
            if self.b.is_won() {
                return Step::Done(self.won(budget));
            }
            self.expand(None, root_autos, None);
        }
        loop {
            if self.stats.expanded >= until {
                return Step::Paused;
            }
            if self.frames.is_empty() {
                match self.reload_path() {
                    Ok(true) => continue,
                    Ok(false) => {}
                    Err(_) => return Step::Done(self.disk_failed(budget)),
                }
            }
            let Some(top) = self.frames.last_mut() else {
                return Step::Done(self.finish(Outcome::Unsolvable, None, budget));
            };
            if top.next == top.start {
                // Exhausted: back up.
                let f = self.frames.pop().unwrap();
                self.children.truncate(f.start);
                if let Some(m) = f.mv {
                    self.b.undo_autoplay(&mut self.auto_log, f.autos);
                    self.b.undo(m);
                    // The child's expansion settled its own column mixes;
                    // settle back so the parent's mark holds again.
                    self.b.settle();
                }
                continue;
            }
            top.next -= 1;
            let Child { fp, h, m } = self.children[top.next];
            if top.next > top.start {
                // The sibling after this one, looked up next.
                self.visited.prefetch(self.children[top.next - 1].fp);
            }
            // Stored since it was generated (by an earlier sibling's
            // subtree): skipped without being played again. Else stored
            // now, before it is played, by the same lookup.
            match self.store_new(fp, room) {
                Ok(true) => {}
                Ok(false) => continue,
                Err(k) => {
                    let squeezed = match k {
                        LimitKind::Bytes => room.bytes < self.limits.max_bytes,
                        LimitKind::Positions => room.positions < self.limits.max_positions,
                        LimitKind::Time | LimitKind::Disk => false,
                    };
                    if squeezed {
                        // Not this search's own limit: retry this child later.
                        self.frames.last_mut().unwrap().next += 1;
                        return Step::Squeezed;
                    }
                    return Step::Done(self.finish(Outcome::Limit(k), None, budget));
                }
            }
            self.b.apply(m);
            let n = self.b.autoplay_after(&mut self.auto_log, m, false);
            debug_assert_eq!(fp, self.b.fingerprint());
            if self.b.is_won() {
                let mark = self.b.dirty_mark();
                self.frames.push(Frame {
                    mv: Some(m),
                    autos: n,
                    mark,
                    start: 0,
                    next: 0,
                    runs: 0,
                });
                return Step::Done(self.won(budget));
            }
            if self.stats.expanded >= self.cap {
                let limit = Outcome::Limit(LimitKind::Positions);
                return Step::Done(self.finish(limit, None, budget));
            }
            if self.stats.expanded & 1023 == 0 {
                if budget.out_of_time() {
                    let limit = Outcome::Limit(LimitKind::Time);
                    return Step::Done(self.finish(limit, None, budget));
                }
                let (stage, expanded, held) = self.watch;
                progress::report(stage, || Counts {
                    expanded: expanded + self.stats.expanded,
                    stored: held.stored + self.visited.len(),
                    bytes: held.bytes + self.bytes(),
                    disk: self.disk(),
                    ..Counts::default()
                });
            }
            self.expand(Some(m), n, Some(h));
        }
    }

    /// Stores the position whose fingerprint is `fp` (a child about to be
    /// played) unless it is stored already: `Ok(false)` then, `Ok(true)`
    /// once stored, `Err` as `store`. While the set and the stacks have
    /// room for it and the expansion that follows (nearly always), this is
    /// one lookup that inserts, where a lookup and then `store` would look
    /// for the same slot twice.
    fn store_new(&mut self, fp: u128, room: Room) -> Result<bool, LimitKind> {
        let roomy = self.visited.len() < room.positions
            && self.stack_growth() == 0
            && match &self.visited {
                Visited::Fast(h) => h.len() < h.capacity(),
                Visited::Compact(t) => t.bytes_to_insert(fp) == t.bytes(),
            };
        if roomy {
            let added = match &mut self.visited {
                Visited::Fast(h) => h.insert(fp),
                Visited::Compact(t) => t.insert(fp).map_err(|_| LimitKind::Bytes)?,
            };
            self.stats.stored += added as u64;
            return Ok(added);
        }
        if self.visited.contains(fp) {
            return Ok(false);
        }
        self.store(fp, room).map(|()| true)
    }

    /// Stores the position whose fingerprint is `fp`, not yet stored;
    /// `Err` when that or the expansion that follows would take more than
    /// `room`.
    fn store(&mut self, fp: u128, room: Room) -> Result<(), LimitKind> {
        debug_assert!(!self.visited.contains(fp));
        if self.visited.len() >= room.positions {
            return Err(LimitKind::Positions);
        }
        // The expansion that follows pushes a frame and up to
        // `MAX_CHILDREN` children: what storing the position and expanding
        // it may allocate is counted before, each growth as a new buffer
        // while the old one still lives.
        if self.can_spill() {
            let growth = self.stack_growth();
            if growth > 0 && self.stack_bytes() + growth > self.stack_room {
                self.spill_path()?;
            }
        }
        let mut grown = 0;
        let mut compact = false;
        match &self.visited {
            Visited::Fast(h) if h.len() == h.capacity() => {
                // Past `compact_past`, the compact table now if it fits.
                // Else, doubled, the set must still leave room for the
                // compact table of its positions beside it; if not, the
                // compact table now.
                let doubled = fast_bytes((h.capacity() * 2).max(64));
                let later = FpTable::bytes_with_capacity(h.capacity() as u64 * 2);
                let now = self.bytes();
                let compacted = FpTable::bytes_with_capacity(h.len() as u64 + 1);
                #[cfg(test)]
                let forced = self.compact_at.is_some_and(|n| h.len() >= n);
                #[cfg(not(test))]
                let forced = false;
                let fits = now + compacted <= room.bytes;
                let short = now + doubled + later > room.bytes && h.len() >= self.compact_from;
                if forced || (fits && (h.len() >= self.compact_past || short)) {
                    compact = true;
                    grown += compacted;
                } else {
                    grown += doubled;
                }
            }
            Visited::Fast(_) => {}
            Visited::Compact(t) => grown += t.bytes_to_insert(fp) - t.bytes(),
        }
        grown += self.stack_growth();
        if grown > 0 {
            let now = self.bytes();
            if now + grown > room.bytes {
                return Err(LimitKind::Bytes);
            }
            self.stats.peak_bytes = self.stats.peak_bytes.max(now + grown);
            grow_stack(&mut self.frames, 1);
            grow_stack(&mut self.children, MAX_CHILDREN);
        }
        if compact {
            self.visited.compact();
        }
        match &mut self.visited {
            Visited::Fast(h) => {
                h.insert(fp);
            }
            Visited::Compact(t) => {
                if t.insert(fp).is_err() {
                    return Err(LimitKind::Bytes);
                }
            }
        }
        self.stats.stored += 1;
        Ok(())
    }

    /// Generates, scores and orders the current position's children
    /// (reached by `mv` and `autos` automatic moves); `h` is the position's
    /// own score when known (it was scored as a child).
    fn expand(&mut self, mv: Option<Move>, autos: usize, h: Option<i32>) {
        self.stats.expanded += 1;
        let start = self.children.len();
        // The columns changed since the parent's expansion settled (its
        // children's moves were undone and its mark restored since).
        let runs = match (mv, self.frames.last()) {
            (Some(_), Some(f)) => self.b.runs_after(f.runs, self.b.changed_columns()),
            _ => self.b.runs(),
        };
        self.b.settle();
        let mark = self.b.dirty_mark();
        self.scratch.clear();
        self.b.gen_moves_with_runs(&mut self.scratch, runs);
        debug_assert!(self.scratch.len() <= MAX_CHILDREN);
        let prev = mv.filter(|_| autos == 0);
        // Children are scored from this position's score (`Parent`).
        let total = h.unwrap_or_else(|| self.heuristic.score(&self.b));
        let mut parent = Parent::new(&self.b, total, &self.heuristic);
        // A move after which nothing goes home: fingerprinted and scored
        // without being played (never won: the foundations stay as they
        // are), as in the best-first members.
        let plain = |b: &Board, m: Move| {
            (!m.is_home() && !b.exposes_home(m, false)).then(|| b.wide_after(m))
        };
        // A compact set is large, its slots in memory: every plain child's
        // slot is asked for first, so that the lookups below overlap their
        // waits instead of taking them one after another.
        let ahead = matches!(self.visited, Visited::Compact(_));
        if ahead {
            self.wide.clear();
            for &m in &self.scratch {
                let w = if prev.is_some_and(|p| undoes(p, m)) {
                    None
                } else {
                    plain(&self.b, m)
                };
                if let Some((fp, _, _)) = w {
                    self.visited.prefetch(fp);
                }
                self.wide.push(w);
            }
        }
        for idx in 0..self.scratch.len() {
            let m = self.scratch[idx];
            if prev.is_some_and(|p| undoes(p, m)) {
                continue;
            }
            let w = if ahead {
                self.wide[idx]
            } else {
                plain(&self.b, m)
            };
            if let Some((fp, ha, hd)) = w {
                if !self.visited.contains(fp) {
                    let s = parent.plain(&mut self.heuristic, &self.b, m, ha, hd);
                    #[cfg(debug_assertions)]
                    {
                        let mut c = self.b.clone();
                        c.apply(m);
                        debug_assert_eq!(s, score(&c, self.heuristic.weights()));
                    }
                    self.children.push(Child { fp, h: s, m });
                }
                continue;
            }
            self.played_child(m, mark, &mut parent);
        }
        // Best last so that the next child is popped from the end cheaply;
        // the stable sort keeps generation order among equals (determinism).
        self.children[start..].sort_by_key(|c| std::cmp::Reverse(c.h));
        let end = self.children.len();
        self.frames.push(Frame {
            mv,
            autos,
            mark,
            start,
            next: end,
            runs,
        });
    }

    /// Plays `m` (a move home, or one after which cards go home) with its
    /// automatic moves, adds the child if new, and takes the moves back:
    /// scored like the members' such children, replacing the parts of the
    /// columns that changed or hold a suit's new next card.
    fn played_child(&mut self, m: Move, mark: DirtyMark, parent: &mut Parent) {
        self.b.apply(m);
        let n = self.b.autoplay_after(&mut self.auto_log, m, false);
        let mut pending = None;
        #[cfg(debug_assertions)]
        let mut full = 0;
        let fp = self.b.fingerprint();
        if !self.visited.contains(fp) {
            if self.b.is_won() {
                self.children.push(Child { fp, h: i32::MIN, m });
            } else {
                let u = parent.played(&mut self.heuristic, &self.b);
                #[cfg(debug_assertions)]
                {
                    full = score(&self.b, self.heuristic.weights());
                }
                pending = Some((self.children.len(), u));
                self.children.push(Child { fp, h: 0, m });
            }
        }
        self.b.undo_autoplay(&mut self.auto_log, n);
        self.b.undo(m);
        self.b.restore_dirty(mark);
        if let Some((i, u)) = pending {
            self.children[i].h = parent.finish(&mut self.heuristic, &self.b, u);
            #[cfg(debug_assertions)]
            debug_assert_eq!({ self.children[i].h }, full);
        }
    }

    fn finish(
        &mut self,
        outcome: Outcome,
        solution: Option<Solution>,
        budget: &Budget,
    ) -> SolveResult {
        self.stats.elapsed = budget.elapsed();
        self.stats.peak_bytes = self.stats.peak_bytes.max(self.bytes());
        self.stats.peak_disk = self.peak_disk();
        self.stats.proof_expanded = self.stats.expanded;
        SolveResult {
            outcome,
            solution,
            stats: self.stats,
        }
    }

    /// The answer once the path ends in a win: the path (its bottom read
    /// from the path file), shortened, as a `Solution`.
    fn won(&mut self, budget: &Budget) -> SolveResult {
        let mut path: Vec<Move> = Vec::new();
        if let Some(p) = &self.path {
            let read = p.each(|buf, [k, _, _]| {
                for i in 0..k {
                    path.extend(read_frame(&buf[i * FRAME_BYTES..]).mv);
                }
            });
            if read.is_err() {
                return self.disk_failed(budget);
            }
        }
        path.extend(self.frames.iter().filter_map(|f| f.mv));
        let path = solution::shorten(&self.start, &path, false);
        let sol = solution::describe(&self.start, &path, false);
        self.finish(Outcome::Solved, Some(sol), budget)
    }

    /// The answer when the path file cannot be read back: the search
    /// cannot go on, and proves nothing.
    fn disk_failed(&mut self, budget: &Budget) -> SolveResult {
        self.finish(Outcome::Limit(LimitKind::Disk), None, budget)
    }
}

/// The memory the path's stacks may take before their bottom goes to disk
/// (`Search::spill_path`): a sixteenth of the budget, at least 1 MiB.
fn stack_room(max_bytes: u64) -> u64 {
    (max_bytes / 16).max(1 << 20)
}

/// Bytes of a frame and of a child in the path file.
const FRAME_BYTES: usize = 4 + 4 + DirtyMark::BYTES + 8 + 8 + 8;
const CHILD_BYTES: usize = 4 + 4 + 16;

fn write_frame(f: &Frame, out: &mut Vec<u8>) {
    out.extend_from_slice(&f.mv.map_or(u32::MAX, Move::code).to_le_bytes());
    out.extend_from_slice(&(f.autos as u32).to_le_bytes());
    f.mark.write(out);
    for v in [f.start as u64, f.next as u64, f.runs] {
        out.extend_from_slice(&v.to_le_bytes());
    }
}

fn write_child(&Child { fp, h, m }: &Child, out: &mut Vec<u8>) {
    out.extend_from_slice(&h.to_le_bytes());
    out.extend_from_slice(&m.code().to_le_bytes());
    out.extend_from_slice(&fp.to_le_bytes());
}

fn read_child(b: &[u8]) -> Child {
    let h = i32::from_le_bytes(b[..4].try_into().unwrap());
    let m = Move::from_code(u32::from_le_bytes(b[4..8].try_into().unwrap()));
    let fp = u128::from_le_bytes(b[8..24].try_into().unwrap());
    Child { fp, h, m }
}

fn read_frame(b: &[u8]) -> Frame {
    let u32_at = |i: usize| u32::from_le_bytes(b[i..i + 4].try_into().unwrap());
    let m = DirtyMark::BYTES;
    let u64_at = |i: usize| u64::from_le_bytes(b[8 + m + i..16 + m + i].try_into().unwrap());
    let code = u32_at(0);
    Frame {
        mv: (code != u32::MAX).then(|| Move::from_code(code)),
        autos: u32_at(4) as usize,
        mark: DirtyMark::read(&b[8..]),
        start: u64_at(0) as usize,
        next: u64_at(8) as usize,
        runs: u64_at(16),
    }
}

/// Whether `m`, played right after `prev` with no automatic move between,
/// only takes `prev` back: the same cards return where they came from (to
/// any free cell, if from one), so it reaches the position before `prev`
/// up to the order of cells, which fingerprints ignore: a position already
/// stored. Skipping such a child changes nothing but the work
/// (docs/solver-log.md).
#[inline]
fn undoes(prev: Move, m: Move) -> bool {
    let (
        Move::Shift {
            from: prev_from,
            to: prev_to,
            count: prev_count,
        },
        Move::Shift { from, to, count },
    ) = (prev, m)
    else {
        return false;
    };
    from == prev_to
        && count == prev_count
        && match prev_from {
            Loc::Cell(_) => matches!(to, Loc::Cell(_)),
            Loc::Column(_) => to == prev_from,
        }
}

/// The complete search alone, children in the order of `order`, for at
/// most `cap` expansions (then a position limit): an experiment, and the
/// tests' reference proof.
pub fn solve_complete_alone(
    board: &Board,
    limits: &Limits,
    cap: u64,
    order: &Weights,
) -> SolveResult {
    let budget = Budget::new(limits);
    let mut s = Search::new(board, *order, limits);
    s.cap = cap;
    loop {
        if let Step::Done(r) = s.resume(u64::MAX, budget.whole(), &budget) {
            return r;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::solver::Tuning;
    use crate::testutil::{exhaustive, late_positions, reachable, replay};
    use crate::variant::{MoveRule, Variant};

    #[test]
    fn a_move_that_undoes_the_last_reaches_its_start() {
        // Walks through real games; wherever `undoes` says a move takes the
        // previous one back, it must lead to the position before that one.
        let mut checked = 0;
        for deal in 1..=40u64 {
            let cells = (deal % 5) as u8;
            let mut b = Board::deal(deal, Variant::default().with_cells(cells)).unwrap();
            let mut log = Vec::new();
            b.autoplay(&mut log);
            let mut x = deal;
            for _ in 0..300 {
                let mut moves = Vec::new();
                b.gen_moves(&mut moves, false);
                if moves.is_empty() {
                    break;
                }
                x = x
                    .wrapping_mul(6364136223846793005)
                    .wrapping_add(1442695040888963407);
                let prev = moves[(x >> 33) as usize % moves.len()];
                let before = b.fingerprint();
                b.apply(prev);
                if b.autoplay_after(&mut log, prev, false) > 0 {
                    continue;
                }
                let mut next = Vec::new();
                b.gen_moves(&mut next, false);
                for m in next.into_iter().filter(|&m| undoes(prev, m)) {
                    let mut c = b.clone();
                    c.apply(m);
                    assert_eq!(c.autoplay_after(&mut log, m, false), 0);
                    assert_eq!(c.fingerprint(), before, "{prev:?} then {m:?}");
                    checked += 1;
                }
            }
        }
        assert!(checked > 1000, "{checked}");
    }

    /// The safe automatic foundation moves never change whether a position
    /// can be won: on late positions with few cells, exhaustive single-card
    /// searches with and without them agree.
    #[test]
    fn auto_moves_keep_verdicts() {
        let (mut compared, mut won, mut lost) = (0, 0, 0);
        let single = Variant::default().with_move_rule(MoveRule::Single);
        for q in late_positions(single, 1..=120) {
            let (Some(a), Some(b)) = (exhaustive(&q, true, 40_000), exhaustive(&q, false, 40_000))
            else {
                continue;
            };
            assert_eq!(a, b, "{q}");
            compared += 1;
            if a {
                won += 1;
            } else {
                lost += 1;
            }
        }
        eprintln!("auto-move verdicts compared: {compared} ({won} won, {lost} lost)");
        assert!(
            compared >= 40 && won >= 10 && lost >= 10,
            "{compared} {won} {lost}"
        );
    }

    /// The complete search, multi-card moves and all (as shorthand) and the
    /// moves its generator leaves out (`Board::gen_moves_with_runs`), proves
    /// a lost position only after storing exactly the positions an
    /// exhaustive single-card search reaches.
    #[test]
    fn a_compact_visited_set_gives_the_same_proof() {
        // Positions moved to the compact table part way (at 50 positions,
        // and once at a doubling past 100 when the budget leaves no room to
        // double and compact later): the same verdicts and stored counts as
        // the reachable-set search.
        let (mut forced, mut by_budget) = (0, 0);
        for rule in [MoveRule::Product, MoveRule::Doubling] {
            let v = Variant::default().with_move_rule(rule);
            for q in late_positions(v, 1..=120) {
                let Some((won, n)) = reachable(&q, true, 40_000) else {
                    continue;
                };
                if won || n < 300 {
                    continue;
                }
                let order = Tuning::shipped().final_order;
                let mut s = Search::new(&q, order, &Limits::default());
                s.compact_at = Some(50);
                let r = run_alone(&mut s);
                assert!(matches!(s.visited, Visited::Compact(_)));
                assert_eq!(r.outcome, Outcome::Unsolvable, "{q}");
                assert_eq!(r.stats.stored, n as u64, "{q}");
                forced += 1;
                if n < 3_000 {
                    // Too few for the compact table to take less memory.
                    continue;
                }
                // By the budget: room for the compact table but not to
                // double the hash set (kept past `COMPACT_PAST` here). 4/5
                // of the hash set's peak leaves that room on every board
                // here; 3/4 did while the stacks doubled, but with stacks
                // grown an eighth at a time that peak is lower, and 3/4
                // of it no longer holds the compact table of some boards
                // of a few thousand positions (its segments' least size).
                let mut full = Search::new(&q, order, &Limits::default());
                full.compact_past = usize::MAX;
                let full = run_alone(&mut full);
                let tight = Limits {
                    max_bytes: full.stats.peak_bytes * 4 / 5,
                    ..Limits::default()
                };
                let mut s = Search::new(&q, order, &tight);
                s.compact_past = usize::MAX;
                s.compact_from = 100;
                let r = run_alone(&mut s);
                assert_eq!(r.outcome, Outcome::Unsolvable, "{q}");
                assert_eq!(r.stats.stored, n as u64, "{q}");
                assert!(matches!(s.visited, Visited::Compact(_)), "{q}");
                by_budget += 1;
            }
        }
        assert!(forced >= 10 && by_budget >= 5, "{forced} {by_budget}");
    }

    /// Past `compact_past` positions the set becomes compact whatever the
    /// room, with the same proof (outcome and positions) in less memory.
    #[test]
    fn a_large_set_becomes_compact_with_the_same_proof() {
        let b = Board::deal(1, Variant::default().with_cells(2)).unwrap();
        let order = Tuning::shipped().final_order;
        let mut fast = Search::new(&b, order, &Limits::default());
        fast.compact_past = usize::MAX;
        let a = run_alone(&mut fast);
        assert!(matches!(fast.visited, Visited::Fast(_)));
        let mut s = Search::new(&b, order, &Limits::default());
        s.compact_past = 10_000;
        let r = run_alone(&mut s);
        assert!(matches!(s.visited, Visited::Compact(_)));
        assert_eq!(
            (r.outcome, a.outcome),
            (Outcome::Unsolvable, Outcome::Unsolvable)
        );
        assert!(r.stats.stored > 50_000, "{}", r.stats.stored);
        assert_eq!(r.stats.stored, a.stats.stored);
        assert_eq!(r.stats.expanded, a.stats.expanded);
        assert!(
            r.stats.peak_bytes * 2 < a.stats.peak_bytes,
            "{} {}",
            r.stats.peak_bytes,
            a.stats.peak_bytes
        );
    }

    fn run_alone(s: &mut Search) -> SolveResult {
        let budget = Budget::new(&s.limits.clone());
        loop {
            if let Step::Done(r) = s.resume(u64::MAX, budget.whole(), &budget) {
                return r;
            }
        }
    }

    #[test]
    fn a_proof_stores_every_reachable_position() {
        let mut compared = 0;
        for rule in [MoveRule::Product, MoveRule::Doubling] {
            let v = Variant::default().with_move_rule(rule);
            for q in late_positions(v, 1..=120) {
                let Some((false, n)) = reachable(&q, true, 40_000) else {
                    continue;
                };
                let r = solve_complete_alone(
                    &q,
                    &Limits::default(),
                    u64::MAX,
                    &Tuning::shipped().final_order,
                );
                assert_eq!(r.outcome, Outcome::Unsolvable, "{q}");
                assert_eq!(r.stats.stored, n as u64, "{rule:?}\n{q}");
                compared += 1;
            }
        }
        assert!(compared >= 20, "{compared}");
    }

    /// With the bottom of its path on disk (the stacks' room made tiny),
    /// the complete search stores exactly the positions it stores in
    /// memory, proves the same positions lost and wins with the same
    /// solution: the path file changes where the path is, not the search.
    #[test]
    fn a_path_on_disk_gives_the_same_search() {
        let on_disk = Limits {
            spill_dir: Some(std::env::temp_dir()),
            max_disk: 1 << 30,
            ..Limits::default()
        };
        let order = Tuning::shipped().final_order;
        let (mut proofs, mut spilled) = (0, 0);
        let v = Variant::default().with_move_rule(MoveRule::Product);
        for q in late_positions(v, 1..=120) {
            let Some((false, n)) = reachable(&q, true, 40_000) else {
                continue;
            };
            let mut s = Search::new(&q, order, &on_disk);
            s.stack_room = 4096;
            let r = run_alone(&mut s);
            assert_eq!(r.outcome, Outcome::Unsolvable, "{q}");
            assert_eq!(r.stats.stored, n as u64, "{q}");
            assert_eq!(s.disk(), 0, "every segment read back");
            proofs += 1;
            if r.stats.peak_disk > 0 {
                spilled += 1;
            }
        }
        assert!(proofs >= 10 && spilled >= 5, "{proofs} {spilled}");
        for deal in [26, 245] {
            let b = Board::deal(deal, Variant::default().with_cells(1)).unwrap();
            let full = solve_complete_alone(&b, &Limits::default(), u64::MAX, &order);
            let mut s = Search::new(&b, order, &on_disk);
            s.stack_room = 1 << 14;
            let r = run_alone(&mut s);
            assert!(r.stats.peak_disk > 1 << 16, "{deal}: {}", r.stats.peak_disk);
            assert_eq!(r.outcome, Outcome::Solved, "{deal}");
            replay(&b, r.solution.as_ref().unwrap());
            assert_eq!(r.solution, full.solution, "{deal}");
            assert_eq!(r.stats.stored, full.stats.stored, "{deal}");
            // A disk budget too small for the path: a memory limit, as
            // without disk.
            let tight = Limits {
                max_disk: 1 << 12,
                ..on_disk.clone()
            };
            let mut s = Search::new(&b, order, &tight);
            s.stack_room = 1 << 14;
            assert_eq!(run_alone(&mut s).outcome, Outcome::Limit(LimitKind::Bytes));
        }
    }

    /// The complete search counts what the expansion after a store may
    /// allocate: here a full child stack, whose doubling alone would pass
    /// the budget, stops the store as a byte limit; with room, the store
    /// goes on and the stack has room for the expansion's children.
    #[test]
    fn storing_counts_the_stacks_an_expansion_may_grow() {
        let b = Board::deal(1, Variant::default()).unwrap();
        let child = std::mem::size_of::<Child>() as u64;
        let n = 1usize << 16;
        // The stack takes n * child bytes; growing by an eighth, its new
        // buffer n * 9/8 more while the old one lives: the two exactly
        // leave no room for anything else, a MiB more does.
        let stack = (n + n + n / 8) as u64 * child;
        for (max_bytes, ok) in [(stack, false), (stack + (1 << 20), true)] {
            let limits = Limits {
                max_bytes,
                ..Limits::default()
            };
            let mut s = Search::new(&b, Tuning::shipped().final_order, &limits);
            let any = Move::Home {
                from: Loc::Cell(0),
                suit: 0,
            };
            s.children = vec![
                Child {
                    fp: 0,
                    h: 0,
                    m: any
                };
                n
            ];
            assert_eq!(s.children.capacity(), n);
            let fp = s.b.fingerprint();
            let r = s.store(fp, Budget::new(&limits).whole());
            assert_eq!(r.is_ok(), ok, "{max_bytes} bytes: {r:?}");
            if ok {
                assert!(s.children.capacity() >= n + MAX_CHILDREN);
                assert!(s.stats.peak_bytes >= stack);
                assert!(s.stats.peak_bytes <= limits.max_bytes);
            } else {
                assert_eq!(r, Err(LimitKind::Bytes));
            }
        }
    }
}
