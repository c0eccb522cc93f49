//! The prover: an exhaustive search that decides a position in bounded
//! memory, spilling to disk what waits.
//!
//! # Layers
//! Two quantities only ever move one way:
//! - `H`, the cards home, never falls (cards never leave the foundations);
//! - `U`, the cards in the tableau that sit on a card they do not build on
//!   ("unsorted"), never rises: every move puts a card onto a card it builds
//!   on, into an empty column, into a cell or home, so no card ever comes to
//!   sit on a card it does not build on, and one that sat on one and moves
//!   has left it for good.
//!
//! So the potential `H - U` never falls along a path, and it rises with
//! every move that sends a card home or moves an unsorted card (an
//! "exit"). The prover searches the positions of one potential (a layer)
//! at a time, lowest first: a position of a later layer met on the way (an
//! exit's result) is written to the store of waiting positions
//! (`seeds::Store`), and once a layer is done none of its positions can be
//! met again, so its visited set is emptied. Memory holds one layer's
//! visited set, the search stack, and the waiting positions, which go to
//! disk when memory runs short. A layer whose visited set outgrows memory
//! goes on breadth-first from where its depth-first search stopped, with
//! the set kept as a filter and the new positions on disk (`frontier`).
//! Under the standard rules every move within a layer can be taken back (a
//! card returns onto the card it left, to the cell it left, or into the
//! column it emptied), so a layer falls into groups of positions that
//! reach each other; the depth-first search does not rely on it.
//!
//! # Soundness
//! The moves are the complete search's (`Board::gen_moves_with_runs`: every
//! single-card move but a card into an empty column while a cell is free,
//! which a cell reaches instead, plus multi-card moves as shorthand), each
//! followed by the provably safe automatic moves (`Board::is_safe_home`),
//! so every position a single-card solution passes through, after its safe
//! automatic moves, is reached. Every layer is searched to the end before
//! a later one starts, and a position is skipped only when its fingerprint
//! is in the layer's visited set (`table`, chance of a false match below
//! 1e-12). When no layer is left and no won position was met, the position
//! is proved unsolvable.
//!
//! # Solutions
//! Each waiting position carries the layer and index of the root (a
//! position a layer's search started from) whose search reached it, and
//! each root is kept as its fingerprint and its own origin. When a search
//! wins, its stack is the path from its root; the origins lead back to the
//! start, and from there each root is found again by its fingerprint,
//! searching alone from the root before it. Each step costs at most a
//! layer's search.

mod frontier;
pub mod seeds;
pub mod split;
pub mod table;

use crate::board::{Board, DirtyMark, Loc, Move};
use crate::solver::progress::{self, Counts, Stage};
use frontier::Carried;
use seeds::{Codec, Origin, Store, StoreError, NO_ORIGIN};
use std::path::PathBuf;
use std::time::{Duration, Instant};
use table::FpTable;

/// A proof's budgets are a solve's (`max_positions` counts over all
/// layers; `max_bytes` holds the visited set, stack and waiting positions).
pub use crate::solver::Limits as ProofLimits;

/// The budget that ran out.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum ProofLimit {
    Positions,
    Bytes,
    Disk,
    Time,
}

/// How a proof ended.
#[derive(Clone, Debug, PartialEq)]
pub enum ProofOutcome {
    Unsolvable,
    /// Won: the moves from the start, each followed by the safe automatic
    /// moves (as `solver::describe` takes them).
    Solved(Vec<Move>),
    Limit(ProofLimit),
}

#[derive(Copy, Clone, Debug, Default, PartialEq)]
pub struct ProofStats {
    pub expanded: u64,
    pub stored: u64,
    /// Peak bytes of memory counted against `max_bytes`.
    pub peak_bytes: u64,
    /// Peak bytes of spill files.
    pub peak_disk: u64,
    /// Layers searched, and the most positions one held.
    pub layers: u32,
    pub max_layer: u64,
    /// Positions written for later layers, and those dropped at once as
    /// repeats of a recent one.
    pub seeds: u64,
    pub seeds_dropped: u64,
    /// Searches started (roots).
    pub roots: u64,
    /// The deepest search stack (positions on it).
    pub max_depth: u64,
    /// Layers searched breadth-first, too large for memory, and the
    /// positions their depth-first searches left them to start from.
    pub frontier_layers: u32,
    pub carried: u64,
    /// Positions a search left for later, too deep (`MAX_DEPTH`).
    pub deferred: u64,
    pub elapsed: Duration,
}

#[derive(Clone, Debug, PartialEq)]
pub struct Proof {
    pub outcome: ProofOutcome,
    pub stats: ProofStats,
}

/// Decides `board`: unsolvable, solved (with the moves), or a limit.
pub fn prove(board: &Board, limits: &ProofLimits) -> Proof {
    prove_with(board, limits, MAX_DEPTH, u64::MAX)
}

/// `prove` with the depth at which searches leave positions for later, and
/// a cap on the memory a layer's visited set may take before the layer is
/// searched breadth-first (`Prover::table_room`; tests make both small).
fn prove_with(board: &Board, limits: &ProofLimits, max_depth: usize, table_share: u64) -> Proof {
    let mut p = Prover::new(board, limits);
    p.max_depth = max_depth;
    p.table_share = table_share;
    let outcome = p.run(board);
    p.stats.elapsed = p.t0.elapsed();
    // The store's peak counts the breadth-first searches' files too.
    p.stats.peak_disk = p.store.peak_disk;
    p.stats.seeds = p.store.added;
    p.stats.seeds_dropped = p.store.dropped;
    Proof {
        outcome,
        stats: p.stats,
    }
}

/// Cards in the tableau on a card they do not build on.
pub fn unsorted(b: &Board) -> u32 {
    let t = b.variant().builds_on_table();
    let mut u = 0;
    for i in 0..b.ncols() {
        let c = b.column(i);
        for j in 1..c.len() {
            u += ((t[(c[j - 1] & 63) as usize] >> (c[j] & 63)) & 1 == 0) as u32;
        }
    }
    u
}

/// The layer of a position: cards home minus unsorted cards, plus 64 so that
/// it is never negative. Never falls along a move (module docs).
pub fn potential(b: &Board) -> u32 {
    b.cards_home() + 64 - unsorted(b)
}

/// Whether `m` only takes back `prev` (no automatic move between): the same
/// cards return where they came from (any free cell, if from one), which
/// reaches the position before `prev`, stored already.
#[inline]
fn undoes(prev: Move, m: Move) -> bool {
    match (prev, m) {
        (
            Move::Shift {
                from: pf,
                to: pt,
                count: pc,
            },
            Move::Shift {
                from: mf,
                to: mt,
                count: mc,
            },
        ) => {
            mf == pt
                && mc == pc
                && match pf {
                    Loc::Cell(_) => matches!(mt, Loc::Cell(_)),
                    from => mt == from,
                }
        }
        _ => false,
    }
}

/// A position on the search stack. Moves within a layer send nothing home,
/// so a frame has no automatic moves to undo.
struct Frame {
    mv: Option<Move>,
    mark: DirtyMark,
    /// This position's waiting children are `children[start..next]`.
    start: u32,
    next: u32,
    runs: u64,
}

/// The most moves a position has in any variant (10 columns, 10 cells).
const MOVES_ROOM: usize = 512;

/// The deepest a search goes before it leaves the rest for later: a
/// position met deeper is stored but written out, with the current search
/// as its origin, to be searched from once the stack has emptied (a layer of
/// millions of positions can be one chain millions deep, and a frame with
/// its waiting children takes about 60 bytes).
const MAX_DEPTH: usize = 1 << 16;

#[derive(Copy, Clone)]
enum Mode {
    /// Write every exit's result to the store, for the layer it belongs to.
    Explore { origin: Origin },
    /// Look for a position with this fingerprint (an exit's result, or a
    /// position the search left for later).
    Find { target: u128 },
}

enum Step {
    /// The search from the root ended without a win.
    Done,
    /// A won position; the moves from the search's start (`Prover::start_fp`).
    Won(Vec<Move>),
    /// (Find mode) the target; the moves from the root.
    Found(Vec<Move>),
    Limit(ProofLimit),
    /// The layer's visited set outgrew its share of memory: the layer goes
    /// on breadth-first from where the search stopped (`frontier`).
    Overflow,
}

/// Why storing a position stopped the search.
enum Stop {
    Limit(ProofLimit),
    Overflow,
}

impl From<ProofLimit> for Stop {
    fn from(l: ProofLimit) -> Stop {
        Stop::Limit(l)
    }
}

struct Prover<'a> {
    limits: &'a ProofLimits,
    /// The position proved.
    start: Board,
    codec: Codec,
    table: FpTable,
    store: Store,
    b: Board,
    frames: Vec<Frame>,
    children: Vec<Move>,
    moves: Vec<Move>,
    /// The move into the position being expanded, until its frame is on
    /// the stack.
    incoming: Option<Move>,
    /// The current expansion's moves within the layer, with the
    /// fingerprints of their results.
    within: Vec<(Move, u128)>,
    /// A breadth-first expansion's moves within the layer (their places
    /// among its moves) and the fingerprints of their results.
    kids: Vec<(usize, u128)>,
    log: Vec<Move>,
    /// Bytes of the batch of waiting positions being searched.
    batch_bytes: u64,
    /// Bytes of a breadth-first layer search's levels and sorter, and of
    /// its files.
    bfs_ram: u64,
    bfs_ram_sorter: u64,
    bfs_disk: u64,
    bfs_frontier_disk: u64,
    /// Whether a layer whose visited set outgrows its room
    /// (`table_room`) goes on breadth-first, and a cap on that room
    /// (tests).
    frontier: bool,
    table_share: u64,
    /// While a layer is searched breadth-first on from where its
    /// depth-first search overflowed: the visited set is kept, frozen, as
    /// a filter (`frontier`), so running out of memory is a limit, not
    /// another overflow.
    frozen: bool,
    /// The position on top of the stack had its expansion cut short by an
    /// overflow before all its exits were written: it is expanded again.
    partial: bool,
    /// `MAX_DEPTH` (smaller in tests).
    max_depth: usize,
    /// The position the current search started from (its root, or a level
    /// position of a breadth-first search), the origin of the record it was
    /// read from, and its fingerprint: where a win is traced back from.
    start_origin: Origin,
    start_fp: u128,
    /// The origin of the positions the current depth-first search reaches.
    root_origin: Origin,
    stats: ProofStats,
    t0: Instant,
}

impl<'a> Prover<'a> {
    fn new(board: &Board, limits: &'a ProofLimits) -> Self {
        let dir = if limits.max_disk > 0 {
            limits.spill_dir.clone()
        } else {
            None
        };
        Prover {
            limits,
            start: board.clone(),
            codec: Codec::new(board.variant()),
            table: FpTable::new(),
            store: Store::new(dir, limits.max_disk, limits.max_bytes),
            b: board.clone(),
            frames: Vec::new(),
            children: Vec::new(),
            // Room for any position's moves from the start (`MOVES_ROOM`:
            // counted as such in `bytes`, also while a search has taken the
            // vector out), and for its automatic moves.
            moves: Vec::with_capacity(MOVES_ROOM),
            within: Vec::new(),
            kids: Vec::new(),
            incoming: None,
            log: Vec::with_capacity(64),
            batch_bytes: 0,
            bfs_ram: 0,
            bfs_ram_sorter: 0,
            bfs_disk: 0,
            bfs_frontier_disk: 0,
            frontier: limits.max_disk > 0
                && limits.spill_dir.is_some()
                && frontier::supported(board),
            table_share: u64::MAX,
            frozen: false,
            partial: false,
            max_depth: MAX_DEPTH,
            start_origin: NO_ORIGIN,
            start_fp: 0,
            root_origin: NO_ORIGIN,
            stats: ProofStats::default(),
            t0: Instant::now(),
        }
    }

    fn bytes(&self) -> u64 {
        self.table.bytes()
            + (self.frames.capacity() * std::mem::size_of::<Frame>()) as u64
            + ((self.children.capacity() + MOVES_ROOM + self.log.capacity())
                * std::mem::size_of::<Move>()) as u64
            + self.store.ram()
            + self.batch_bytes
            + self.bfs_ram
            + self.bfs_ram_sorter
    }

    /// The directory spill files go to, if any may be written.
    fn store_dir(&self) -> Option<PathBuf> {
        if self.store.can_spill() {
            self.limits.spill_dir.clone()
        } else {
            None
        }
    }

    /// `fit`, as a search step.
    fn fit_stop(&mut self, extra: u64) -> Result<(), Step> {
        self.fit(extra).map_err(Step::Limit)
    }

    /// `fit` while exploring a layer (writing exits and waiting positions
    /// out): memory that runs out in its depth-first search while the layer
    /// may go on breadth-first is an overflow (the stack goes, and the
    /// breadth-first search needs only a part of what the visited set
    /// leaves), not the end of the proof. In the breadth-first search,
    /// whose visited set is frozen, it is a limit.
    fn fit_layer(&mut self, extra: u64) -> Result<(), Step> {
        match self.fit(extra) {
            Ok(()) => Ok(()),
            Err(ProofLimit::Bytes) if self.frontier && !self.frozen && !self.table.is_empty() => {
                Err(Step::Overflow)
            }
            Err(l) => Err(Step::Limit(l)),
        }
    }

    /// Keeps memory within the budget, spilling waiting positions to disk
    /// if it must; `extra` bytes are about to be taken.
    fn fit(&mut self, extra: u64) -> Result<(), ProofLimit> {
        let now = self.bytes() + extra;
        if now <= self.limits.max_bytes {
            self.stats.peak_bytes = self.stats.peak_bytes.max(now);
            return Ok(());
        }
        if !self.store.can_spill() || self.store.ram() == 0 {
            return Err(ProofLimit::Bytes);
        }
        match self.store.spill(0) {
            Ok(()) => {}
            Err(StoreError::Disk) | Err(StoreError::Io(_)) => return Err(ProofLimit::Disk),
        }
        let now = self.bytes() + extra;
        if now > self.limits.max_bytes {
            return Err(ProofLimit::Bytes);
        }
        self.stats.peak_bytes = self.stats.peak_bytes.max(now);
        Ok(())
    }

    /// Whether the time limit has passed, or the watcher has stopped the
    /// solve (`solver::progress`). Called every 1,024 expansions and
    /// between breadth-first levels, it also publishes the proof's counts
    /// to the watcher, if any.
    fn over_time(&self) -> bool {
        progress::report(Stage::Prover, || Counts {
            expanded: self.stats.expanded,
            stored: self.stats.stored,
            bytes: self.bytes(),
            disk: self.store.disk() + self.bfs_disk,
            layer: self.stats.layers as u64,
        });
        self.limits
            .max_seconds
            .is_some_and(|s| self.t0.elapsed().as_secs_f64() > s)
            || progress::cancelled()
    }

    fn run(&mut self, start: &Board) -> ProofOutcome {
        let mut b = start.clone();
        b.autoplay(&mut self.log);
        self.log.clear();
        if b.is_won() {
            return ProofOutcome::Solved(Vec::new());
        }
        self.store
            .push(&self.codec, potential(&b), b.fingerprint(), &b, NO_ORIGIN);
        let mut current = None;
        while let Some(layer) = self.store.next_layer() {
            // The same layer again: the positions its searches left for
            // later (`MAX_DEPTH`), already in its visited set.
            if current != Some(layer) {
                self.table.clear();
                self.stats.layers += 1;
                current = Some(layer);
            }
            let Some(mut batch) = self.store.take(layer) else {
                continue;
            };
            if batch.ram() > self.limits.max_bytes / 8
                && self.store.can_spill()
                && self.store.spill_batch(&mut batch).is_err()
            {
                return ProofOutcome::Limit(ProofLimit::Disk);
            }
            self.batch_bytes = batch.ram();
            let mut result = None;
            // Once the layer's visited set has outgrown its memory: the
            // positions the layer is searched on from breadth-first.
            let mut carried: Option<Carried> = None;
            let io = batch.for_each(|rec| {
                let r = match carried.as_mut() {
                    Some(c) => self.carry_record(rec, c),
                    None => match self.search_record(layer, rec) {
                        Step::Done => Ok(()),
                        Step::Overflow => {
                            let c = carried.insert(Carried::default());
                            // A search that never stored its root leaves it
                            // to be carried as the records after it are.
                            if self.frames.is_empty() {
                                self.carry_record(rec, c)
                            } else {
                                self.carry_stack(c)
                            }
                        }
                        other => Err(other),
                    },
                };
                r.map_err(|s| result = Some(s)).is_ok()
            });
            if io.is_err() {
                return ProofOutcome::Limit(ProofLimit::Disk);
            }
            self.batch_bytes = 0;
            self.store.release(batch);
            if let Some(c) = carried {
                // Too large for memory: the layer goes on breadth-first from
                // where the depth-first search left it (`frontier`), its
                // visited set kept as a filter; the stack's memory goes.
                self.frames = Vec::new();
                self.children = Vec::new();
                if result.is_none() {
                    self.stats.frontier_layers += 1;
                    result = Some(self.frontier_from(layer, c));
                }
                self.bfs_ram = 0;
                self.bfs_ram_sorter = 0;
                self.bfs_disk = 0;
                self.store.set_other_disk(0);
            }
            self.stats.max_layer = self.stats.max_layer.max(self.table.len());
            match result {
                None | Some(Step::Done) => {}
                Some(Step::Limit(l)) => return ProofOutcome::Limit(l),
                Some(Step::Won(path)) => return self.trace_back(path),
                Some(Step::Found(_)) => unreachable!("explore mode finds no target"),
                Some(Step::Overflow) => {
                    unreachable!("the breadth-first search grows no visited set")
                }
            }
        }
        ProofOutcome::Unsolvable
    }

    /// Searches from one waiting position of `layer` unless it was met
    /// already in this layer.
    fn search_record(&mut self, layer: u32, rec: &[u8]) -> Step {
        // Most were met from another root first: looked up before the
        // position is built.
        let (root_origin, deferred) = Codec::origin(rec).split_deferred();
        let fp = self.codec.fingerprint(rec);
        if !deferred && self.table.contains(fp) {
            return Step::Done;
        }
        let (b, _) = self.codec.decode(rec);
        debug_assert_eq!(b.fingerprint(), fp);
        self.start_origin = root_origin;
        if let Err(s) = self.fit_layer(22) {
            return s;
        }
        let root = self.store.keep_root(layer, fp, rec);
        self.stats.roots += 1;
        // The roots' log may have grown by more (doubling).
        if let Err(s) = self.fit_layer(0) {
            return s;
        }
        let origin = Origin {
            layer: layer as u8,
            root,
        };
        self.root_origin = origin;
        self.search(b, Mode::Explore { origin }, deferred)
    }

    /// Depth-first search of the layer from `root`, unless `stored` not yet
    /// in the visited set.
    fn search(&mut self, root: Board, mode: Mode, stored: bool) -> Step {
        self.b = root;
        self.b.settle();
        self.start_fp = self.b.fingerprint();
        self.frames.clear();
        self.children.clear();
        if !stored {
            if let Err(s) = self.store_position(self.b.fingerprint(), mode) {
                return s.into();
            }
        }

        if let Some(s) = self.expand(None, mode) {
            return s;
        }
        loop {
            let Some(top) = self.frames.last_mut() else {
                return Step::Done;
            };
            if top.next == top.start {
                let f = self.frames.pop().unwrap();
                self.children.truncate(f.start as usize);
                if let Some(m) = f.mv {
                    self.b.undo(m);
                    self.b.settle();
                }
                continue;
            }
            top.next -= 1;
            let m = self.children[top.next as usize];
            let mark = top.mark;
            self.b.apply(m);
            // Stored when its parent was expanded (`expand`).
            if self.stats.expanded & 1023 == 0 && self.over_time() {
                return Step::Limit(ProofLimit::Time);
            }
            match mode {
                Mode::Find { target } if self.b.fingerprint() == target => {
                    return Step::Found(self.path(m))
                }
                Mode::Explore { origin } if self.frames.len() >= self.max_depth => {
                    let layer = origin.layer as u32;
                    self.stats.deferred += 1;
                    self.store
                        .push_deferred(&self.codec, layer, &self.b, origin.deferred());
                    self.b.undo(m);
                    self.b.restore_dirty(mark);
                    if let Err(s) = self.fit_layer(0) {
                        return s;
                    }
                    continue;
                }
                _ => {}
            }
            if let Some(s) = self.expand(Some(m), mode) {
                return s;
            }
        }
    }

    /// The most memory a layer's visited set may take before the layer
    /// goes on breadth-first: all but the batch being searched and an
    /// eighth. The eighth is what the rest of a depth-first search needs
    /// in memory (the stack, and the logs of waiting positions and roots,
    /// which `fit` spills to disk to make room), and then the breadth-first
    /// search with the set frozen; a batch larger than an eighth waits on
    /// disk, so the set always has at least three quarters.
    /// A layer searched breadth-first costs far more than one that fits
    /// (1968 with 1 cell in 400 MB: 141 s with one such layer when the set
    /// had half the memory, 94 s with none this way; docs/solver-log.md).
    fn table_room(&self) -> u64 {
        let max = self.limits.max_bytes;
        let rest = max.saturating_sub(self.batch_bytes + max / 8);
        rest.min(self.table_share)
    }

    /// Stores `fp` in the layer's visited set: `Ok(false)` if it was there.
    fn store_position(&mut self, fp: u128, mode: Mode) -> Result<bool, Stop> {
        let grow = self.table.bytes_to_insert(fp) - self.table.bytes();
        if grow > 0 && self.table.contains(fp) {
            return Ok(false);
        }
        if grow > 0
            && self.frontier
            && matches!(mode, Mode::Explore { .. })
            && self.table.bytes() + grow > self.table_room()
        {
            return Err(Stop::Overflow);
        }
        if grow > 0
            || self.frames.len() == self.frames.capacity()
            || self.children.len() + 512 > self.children.capacity()
        {
            // The insert, a frame and up to 512 children may be added (each
            // vector at most doubling).
            let stack = ((self.frames.capacity().max(16)) * std::mem::size_of::<Frame>()
                + self.children.capacity().max(512) * std::mem::size_of::<Move>())
                as u64;
            match self.fit(grow + stack) {
                Ok(()) => {}
                // The stack or the visited set does not fit: the layer
                // breadth-first, if it may be.
                Err(ProofLimit::Bytes) if self.frontier && matches!(mode, Mode::Explore { .. }) => {
                    return Err(Stop::Overflow)
                }
                Err(l) => return Err(Stop::Limit(l)),
            }
            self.frames.reserve(1);
            self.children.reserve(512);
        }
        match self.table.insert(fp) {
            Ok(true) => {}
            Ok(false) => return Ok(false),
            Err(_) => return Err(Stop::Limit(ProofLimit::Bytes)),
        }
        if self.stats.stored >= self.limits.max_positions {
            return Err(Stop::Limit(ProofLimit::Positions));
        }
        self.stats.stored += 1;
        Ok(true)
    }

    /// The moves on the stack, from the root, then the move into the
    /// position being expanded (not on the stack yet), then `last`.
    fn path(&self, last: Move) -> Vec<Move> {
        self.frames
            .iter()
            .filter_map(|f| f.mv)
            .chain(self.incoming)
            .chain(std::iter::once(last))
            .collect()
    }

    /// Generates the current position's moves: exits are played and
    /// written out (or compared with the target), moves within the layer
    /// whose result is not stored yet wait on the stack.
    fn expand(&mut self, mv: Option<Move>, mode: Mode) -> Option<Step> {
        self.stats.expanded += 1;
        self.incoming = mv;
        let runs = match (mv, self.frames.last()) {
            (Some(_), Some(f)) => self.b.runs_after(f.runs, self.b.changed_columns()),
            _ => self.b.runs(),
        };
        self.b.settle();
        let mark = self.b.dirty_mark();
        let mut moves = std::mem::take(&mut self.moves);
        moves.clear();
        self.b.gen_moves_with_runs(&mut moves, runs);
        let start = self.children.len();
        for &m in &moves {
            if mv.is_some_and(|p| undoes(p, m)) {
                continue;
            }
            if !self.is_exit(m) {
                let (fp, _, _) = self.b.wide_after(m);
                self.table.prefetch(fp);
                self.within.push((m, fp));
                continue;
            }
            if let Err(step) = self.exit(m, mark, mode) {
                self.moves = moves;
                self.within.clear();
                if matches!(step, Step::Overflow) {
                    // Some exits are not written yet: the position goes on
                    // the stack to be expanded again (`carry_stack`).
                    self.partial = true;
                    self.push_frame(mv, mark, start, runs);
                }
                return Some(step);
            }
        }
        self.moves = moves;
        // The moves within the layer, their slots fetched meanwhile: each
        // new one is stored now, when first met, and waits on the stack to
        // be expanded from here (a later meeting finds it stored). Playing
        // it needs no second lookup, which would miss the cache again: MS
        // 10120 with 1 cell, 30.0 M positions, proved in 5-9 % less time.
        for i in 0..self.within.len() {
            let (m, fp) = self.within[i];
            match self.store_position(fp, mode) {
                Ok(true) => self.children.push(m),
                Ok(false) => {}
                Err(s) => {
                    if matches!(s, Stop::Overflow) {
                        // Its exits are written: the position goes on the
                        // stack with every child not stored yet among its
                        // waiting children (`carry_stack`).
                        let rest = &self.within[i..];
                        for (j, &(m, fp)) in rest.iter().enumerate() {
                            if !self.table.contains(fp) && rest[..j].iter().all(|w| w.1 != fp) {
                                self.children.push(m);
                            }
                        }
                        self.push_frame(mv, mark, start, runs);
                    }
                    self.within.clear();
                    return Some(s.into());
                }
            }
        }
        self.within.clear();
        self.push_frame(mv, mark, start, runs);
        None
    }

    /// Puts the position just expanded on the stack, its waiting children
    /// `children[start..]`.
    fn push_frame(&mut self, mv: Option<Move>, mark: DirtyMark, start: usize, runs: u64) {
        let next = self.children.len();
        self.stats.max_depth = self.stats.max_depth.max(self.frames.len() as u64 + 1);
        self.incoming = None;
        self.frames.push(Frame {
            mv,
            mark,
            start: start as u32,
            next: next as u32,
            runs,
        });
    }

    /// Whether `m` leaves the layer: it sends a card home, uncovers one that
    /// goes home, or moves a card off a card it does not build on.
    #[inline]
    fn is_exit(&self, m: Move) -> bool {
        if m.is_home() {
            return true;
        }
        if let Loc::Column(a) = m.from() {
            let col = self.b.column(a as usize);
            let k = m.cards();
            if col.len() > k {
                let (under, moved) = (col[col.len() - k - 1], col[col.len() - k]);
                let table = self.b.variant().builds_on_table();
                if (table[(under & 63) as usize] >> (moved & 63)) & 1 == 0 {
                    return true;
                }
            }
        }
        self.b.exposes_home(m, false)
    }

    /// Plays exit `m` with its automatic moves and writes the result out for
    /// its layer (or compares it with the target); the board is back as at
    /// `mark` after. `Err` ends the search: a win, the target, or a limit.
    fn exit(&mut self, m: Move, mark: DirtyMark, mode: Mode) -> Result<(), Step> {
        self.b.apply(m);
        let n = self.b.autoplay_after(&mut self.log, m, false);
        let mut step = Ok(());
        if self.b.is_won() {
            step = Err(Step::Won(self.path(m)));
        } else {
            let fp = self.b.fingerprint();
            match mode {
                Mode::Explore { origin } => {
                    let layer = potential(&self.b);
                    self.store.push(&self.codec, layer, fp, &self.b, origin);
                    if let Err(s) = self.fit_layer(0) {
                        step = Err(s);
                    }
                }
                Mode::Find { target } => {
                    if fp == target {
                        step = Err(Step::Found(self.path(m)));
                    }
                }
            }
        }
        self.b.undo_autoplay(&mut self.log, n);
        self.b.undo(m);
        self.b.restore_dirty(mark);
        step
    }

    /// The whole path of a win found from a root whose origin chain leads
    /// back to the start (module docs, "Solutions").
    fn trace_back(&mut self, tail: Vec<Move>) -> ProofOutcome {
        // The winning search's start: its stack undone (a breadth-first
        // search's position is the board itself).
        if let Some(m) = self.incoming.take() {
            self.b.undo(m);
        }
        while let Some(f) = self.frames.pop() {
            if let Some(m) = f.mv {
                self.b.undo(m);
            }
        }
        debug_assert_eq!(self.b.fingerprint(), self.start_fp);
        let last = (self.b.clone(), tail);
        // The roots back to the start: each kept as its fingerprint and its
        // own origin. `targets[i]` is found from the position of
        // `targets[i + 1]`; the last is the start itself.
        let mut targets = vec![self.start_fp];
        let mut origin = self.start_origin;
        while origin != NO_ORIGIN {
            let (fp, next) = match self.store.root(origin.layer as u32, origin.root) {
                Ok(Some(r)) => r,
                _ => return ProofOutcome::Limit(ProofLimit::Disk),
            };
            targets.push(fp);
            origin = next.split_deferred().0;
        }
        // Forwards from the start, each root found from the one before, its
        // position the one before's with the moves found played.
        let mut b = self.start.clone();
        b.autoplay(&mut self.log);
        self.log.clear();
        let mut segments = Vec::new();
        let first = targets.len() - 1;
        debug_assert!(first == 0 || b.fingerprint() == targets[first]);
        for i in (0..first).rev() {
            self.table.clear();
            let path = match self.search(b.clone(), Mode::Find { target: targets[i] }, false) {
                Step::Found(path) => path,
                // A win met on the way makes the rest of the path moot.
                Step::Won(path) => {
                    return ProofOutcome::Solved(self.replay_segments(&{
                        segments.push((b, path));
                        segments
                    }))
                }
                Step::Limit(l) => return ProofOutcome::Limit(l),
                Step::Done | Step::Overflow => {
                    unreachable!("a root's search meets the positions it wrote out")
                }
            };
            let mut next = b.clone();
            for &m in &path {
                next.apply(m);
                next.autoplay_after(&mut self.log, m, false);
                self.log.clear();
            }
            debug_assert_eq!(next.fingerprint(), targets[i]);
            segments.push((b, path));
            b = next;
        }
        segments.push(last);
        ProofOutcome::Solved(self.replay_segments(&segments))
    }

    /// The segments' moves as moves of one game from the start. Each
    /// segment was found from a position read back from a record, which is
    /// the position the game has reached up to the order of its columns and
    /// cells (fingerprints ignore both): its moves are renamed to the game's
    /// own columns and cells.
    fn replay_segments(&mut self, segments: &[(Board, Vec<Move>)]) -> Vec<Move> {
        let mut game = self.start.clone();
        game.autoplay(&mut self.log);
        self.log.clear();
        let mut out = Vec::new();
        for (from, moves) in segments {
            debug_assert_eq!(from.fingerprint(), game.fingerprint());
            let (cols, cells) = correspondence(from, &game);
            for &m in moves {
                let place = |l: Loc| match l {
                    Loc::Column(i) => Loc::Column(cols[i as usize]),
                    Loc::Cell(i) => Loc::Cell(cells[i as usize]),
                };
                let m = match m {
                    Move::Shift { from, to, count } => Move::Shift {
                        from: place(from),
                        to: place(to),
                        count,
                    },
                    Move::Home { from, suit } => Move::Home {
                        from: place(from),
                        suit,
                    },
                };
                game.apply(m);
                game.autoplay_after(&mut self.log, m, false);
                self.log.clear();
                out.push(m);
            }
        }
        out
    }
}

/// For each column and each cell of `a`, the one of `b` (the same position
/// up to the order of columns and of cells) that holds the same cards.
fn correspondence(a: &Board, b: &Board) -> (Vec<u8>, Vec<u8>) {
    let mut used = vec![false; b.ncols()];
    let cols = (0..a.ncols())
        .map(|i| {
            let j = (0..b.ncols())
                .find(|&j| !used[j] && b.column(j) == a.column(i))
                .expect("the same columns");
            used[j] = true;
            j as u8
        })
        .collect();
    let mut used = vec![false; b.ncells()];
    let cells = (0..a.ncells())
        .map(|i| {
            let j = (0..b.ncells())
                .find(|&j| !used[j] && b.cell(j) == a.cell(i))
                .expect("the same cells");
            used[j] = true;
            j as u8
        })
        .collect();
    (cols, cells)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::solver::describe;
    use crate::testutil::{late_positions, reachable};
    use crate::variant::{MoveRule, Variant};

    /// A directory of the test's own (tests run side by side).
    fn spill_dir(test: &str) -> PathBuf {
        let d = std::env::temp_dir().join(format!("fca-prover-{test}-{}", std::process::id()));
        std::fs::create_dir_all(&d).unwrap();
        d
    }

    fn replays(start: &Board, path: &[Move]) {
        let sol = describe(start, path, false);
        let mut b = start.clone();
        for (i, &m) in sol.moves.iter().enumerate() {
            b.apply_checked(m)
                .unwrap_or_else(|e| panic!("move {i}: {e}\n{start}"));
        }
        assert!(b.is_won(), "{start}");
    }

    /// Positions stored before a test gives up on a won position: the
    /// prover searches every layer below the one it wins in first, which on
    /// a won position can be far more than a depth-first search needs.
    const WON_CAP: u64 = 30_000;

    /// Deals whose late positions the tests search: fewer in debug builds,
    /// whose checks make the reference search and the solves slow.
    fn deals() -> std::ops::RangeInclusive<u64> {
        if cfg!(debug_assertions) {
            1..=8
        } else {
            1..=24
        }
    }

    /// The prover decides as an exhaustive search over single-card moves
    /// does, and a proof stores exactly the positions that search reaches
    /// (after the safe automatic moves): the layers, the moves it leaves out
    /// and the multi-card moves lose nothing and add nothing.
    #[test]
    fn decides_as_the_reference_search_and_stores_what_it_reaches() {
        let (mut lost, mut won) = (0, 0);
        for rule in [MoveRule::Product, MoveRule::Doubling] {
            let v = Variant::default().with_move_rule(rule);
            for q in late_positions(v, deals()) {
                let Some((wins, n)) = reachable(&q, true, 20_000) else {
                    continue;
                };
                let p = prove(
                    &q,
                    &ProofLimits {
                        max_positions: if wins { WON_CAP } else { u64::MAX },
                        ..ProofLimits::default()
                    },
                );
                match p.outcome {
                    ProofOutcome::Unsolvable => {
                        assert!(!wins, "{q}");
                        assert_eq!(p.stats.stored, n as u64, "{rule:?}\n{q}");
                        lost += 1;
                    }
                    ProofOutcome::Solved(path) => {
                        assert!(wins, "{q}");
                        replays(&q, &path);
                        won += 1;
                    }
                    ProofOutcome::Limit(ProofLimit::Positions) if wins => {}
                    ProofOutcome::Limit(l) => panic!("{l:?}\n{q}"),
                }
            }
        }
        // Debug builds search fewer deals, whose wins are all past the cap.
        let want = if cfg!(debug_assertions) {
            (4, 0)
        } else {
            (10, 10)
        };
        assert!(lost >= want.0 && won >= want.1, "{lost} lost, {won} won");
    }

    /// With too little memory for its largest layers the prover spills
    /// what waits to disk and searches those layers on breadth-first; with
    /// a shallow stack it leaves deep positions for later. Either way it
    /// proves the same and stores the same positions, and expands each
    /// once: a layer's breadth-first search goes on from where its
    /// depth-first search stopped (at most one position, whose expansion
    /// the overflow cut short, is expanded again).
    #[test]
    fn little_memory_or_a_shallow_stack_gives_the_same_proof() {
        let dir = spill_dir("little-memory");
        let (mut spilled, mut frontier) = (false, false);
        for (deal, cells) in [(6u64, 2u8), (11982, 4)] {
            let b = Board::deal(deal, Variant::default().with_cells(cells)).unwrap();
            let whole = prove(&b, &ProofLimits::default());
            assert_eq!(whole.outcome, ProofOutcome::Unsolvable, "{deal}");
            assert_eq!(whole.stats.peak_disk, 0);
            // Memory for a fifth of the waiting positions, or so little
            // that it runs out beside the visited set too (the layer then
            // goes breadth-first); then also a visited set of at most 4 KiB
            // (layers past ~300 positions breadth-first).
            // And a shallow stack with it (positions left for later are
            // carried into the breadth-first search).
            for (max_bytes, share, depth) in [
                (400_000, u64::MAX, MAX_DEPTH),
                (100_000, u64::MAX, MAX_DEPTH),
                (400_000, 4096, MAX_DEPTH),
                (400_000, 4096, 8),
            ] {
                let small = ProofLimits {
                    max_bytes,
                    max_disk: 1 << 30,
                    spill_dir: Some(dir.clone()),
                    ..ProofLimits::default()
                };
                let p = prove_with(&b, &small, depth, share);
                assert_eq!(p.outcome, ProofOutcome::Unsolvable, "{deal} {max_bytes}");
                assert_eq!(p.stats.stored, whole.stats.stored, "{deal}");
                assert_eq!(whole.stats.expanded, whole.stats.stored);
                let again = p.stats.expanded - whole.stats.expanded;
                assert!(
                    again <= p.stats.frontier_layers as u64,
                    "{deal} {max_bytes} {share} {depth}: {again} expanded again"
                );
                assert_eq!(p.stats.frontier_layers > 0, p.stats.carried > 0);
                assert!(p.stats.peak_bytes <= small.max_bytes);
                spilled |= p.stats.peak_disk > 0;
                frontier |= p.stats.frontier_layers > 0;
            }
            let shallow = prove_with(&b, &ProofLimits::default(), 8, 1 << 30);
            assert_eq!(shallow.outcome, ProofOutcome::Unsolvable);
            assert_eq!(shallow.stats.stored, whole.stats.stored, "{deal}");
            assert!(shallow.stats.max_depth <= 9 && shallow.stats.deferred > 0);
        }
        assert!(spilled && frontier);
        assert_eq!(
            std::fs::read_dir(&dir).unwrap().count(),
            0,
            "spill files have no name"
        );
        std::fs::remove_dir(&dir).unwrap();
    }

    /// A win found after layers, breadth-first searches and deferred
    /// positions is traced back to the start, and the moves replay.
    #[test]
    fn a_win_is_traced_back_to_the_start() {
        let dir = spill_dir("trace-back");
        let v = Variant::default();
        let mut traced = 0;
        let (mut frontier, mut deferred) = (false, false);
        // The latest positions only: few layers below their wins.
        for q in late_positions(v, 13..=16)
            .into_iter()
            .filter(|q| q.cards_home() >= 16)
        {
            if !matches!(reachable(&q, true, 20_000), Some((true, _))) {
                continue;
            }
            // Deep positions left for later; every layer past a few hundred
            // positions breadth-first; both.
            for (depth, share) in [(4, 1 << 30), (MAX_DEPTH, 4096), (4, 4096)] {
                let p = prove_with(
                    &q,
                    &ProofLimits {
                        max_positions: WON_CAP,
                        max_disk: 1 << 30,
                        spill_dir: Some(dir.clone()),
                        ..ProofLimits::default()
                    },
                    depth,
                    share,
                );
                let path = match p.outcome {
                    ProofOutcome::Solved(path) => path,
                    // Too many positions below the winning layer for the
                    // test's budget.
                    ProofOutcome::Limit(ProofLimit::Positions) => continue,
                    other => panic!("{other:?}\n{q}"),
                };
                replays(&q, &path);
                traced += 1;
                frontier |= p.stats.frontier_layers > 0;
                deferred |= p.stats.deferred > 0;
            }
        }
        assert!(
            traced >= 6 && frontier && deferred,
            "{traced} {frontier} {deferred}"
        );
        std::fs::remove_dir(&dir).unwrap();
    }

    /// The disk budget covers every spill file at once: the waiting
    /// positions' and the breadth-first searches' levels and sort runs. A
    /// proof's `peak_disk` is exactly the budget it needs: with it the
    /// proof ends as before, with a byte less it ends on the disk limit.
    #[test]
    fn peak_disk_is_the_disk_budget_a_proof_needs() {
        let dir = spill_dir("disk-budget");
        let b = Board::deal(11982, Variant::default()).unwrap();
        let run = |max_disk: u64| {
            prove_with(
                &b,
                &ProofLimits {
                    max_bytes: 1 << 20,
                    max_disk,
                    spill_dir: Some(dir.clone()),
                    ..ProofLimits::default()
                },
                MAX_DEPTH,
                4096,
            )
        };
        let free = run(1 << 30);
        assert_eq!(free.outcome, ProofOutcome::Unsolvable);
        assert!(free.stats.frontier_layers > 0 && free.stats.peak_disk > 0);
        let exact = run(free.stats.peak_disk);
        assert_eq!(exact.outcome, ProofOutcome::Unsolvable);
        assert_eq!(exact.stats.stored, free.stats.stored);
        let short = run(free.stats.peak_disk - 1);
        assert_eq!(short.outcome, ProofOutcome::Limit(ProofLimit::Disk));
        std::fs::remove_dir(&dir).unwrap();
    }

    /// Budgets end a proof as a limit, never as a verdict.
    #[test]
    fn budgets_give_limits() {
        let b = Board::deal(11982, Variant::default()).unwrap();
        let cases = [
            (
                ProofLimits {
                    max_positions: 1000,
                    ..ProofLimits::default()
                },
                ProofLimit::Positions,
            ),
            (
                ProofLimits {
                    max_bytes: 50_000,
                    ..ProofLimits::default()
                },
                ProofLimit::Bytes,
            ),
            (
                ProofLimits {
                    max_bytes: 100_000,
                    max_disk: 1000,
                    spill_dir: Some(std::env::temp_dir()),
                    ..ProofLimits::default()
                },
                ProofLimit::Disk,
            ),
        ];
        for (limits, want) in cases {
            assert_eq!(
                prove(&b, &limits).outcome,
                ProofOutcome::Limit(want),
                "{limits:?}"
            );
        }
    }
}
