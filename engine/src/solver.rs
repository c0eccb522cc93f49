//! The solver: one depth-first search that is both fast and complete.
//!
//! Design (docs/SOLVER.md has the long form):
//! - Edges are the variant's moves: every single-card move plus multi-card
//!   moves within the variant's move rule (shorthand for single-card moves,
//!   so they add no position a single-card search would not reach — except
//!   under `unlimited`, where long sequence moves are the rules themselves).
//!   After every move the safe automatic foundation moves are played
//!   (`Board::is_safe_home`).
//! - Children are ordered best-first by a heuristic, so most deals fall to a
//!   nearly greedy descent; a visited set of canonical fingerprints stops
//!   repeats. When the whole reachable graph has been visited without a win
//!   the deal is *proved* unsolvable: the single-card move graph is a
//!   subgraph of what was searched.
//! - The solution found is shortened afterwards by jumping ahead whenever
//!   one move from a position on the path reaches a later position.
//!
//! Soundness of the visited set: positions are identified by a 128-bit
//! fingerprint (`Board::fingerprint`). Treating it as a uniformly random
//! function of the canonical position, the chance that any two of `n` stored
//! positions collide is at most n^2 / 2^129. The position limit caps n at
//! 2^32 (the default is far lower), so the chance of one false "seen" in a
//! proof is at most 2^64 / 2^129 = 2^-65 < 3e-20, well below 1e-12.

use crate::board::{Board, Loc, Move};
use crate::card::Card;
use crate::variant::{EmptyRule, MoveRule};
use std::collections::HashSet;
use std::hash::{BuildHasherDefault, Hasher};
use std::time::{Duration, Instant};

/// Budgets for one search.
#[derive(Copy, Clone, Debug, PartialEq)]
pub struct Limits {
    /// Most positions stored in the visited set.
    pub max_positions: u64,
    /// Most bytes for the visited set and search stack together.
    pub max_bytes: u64,
    /// Wall-clock budget; `None` for none (searches stay deterministic only
    /// without a time limit).
    pub max_seconds: Option<f64>,
}

impl Default for Limits {
    fn default() -> Self {
        Limits { max_positions: 20_000_000, max_bytes: 1 << 30, max_seconds: None }
    }
}

/// The budget that ran out.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum LimitKind {
    Positions,
    Bytes,
    Time,
}

impl LimitKind {
    pub fn name(self) -> &'static str {
        match self {
            LimitKind::Positions => "positions",
            LimitKind::Bytes => "bytes",
            LimitKind::Time => "time",
        }
    }
}

/// How a search ended.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum Outcome {
    Solved,
    Unsolvable,
    Limit(LimitKind),
}

impl Outcome {
    pub fn name(self) -> &'static str {
        match self {
            Outcome::Solved => "solved",
            Outcome::Unsolvable => "unsolvable",
            Outcome::Limit(_) => "limit",
        }
    }
}

/// Search statistics.
#[derive(Copy, Clone, Debug, Default, PartialEq)]
pub struct Stats {
    /// Positions whose moves were generated.
    pub expanded: u64,
    /// Positions stored in the visited set.
    pub stored: u64,
    /// Peak bytes of the visited set and the search stack.
    pub peak_bytes: u64,
    pub elapsed: Duration,
}

/// A solution: moves in order, automatic foundation moves written out.
#[derive(Clone, Debug, PartialEq)]
pub struct Solution {
    pub moves: Vec<Move>,
    /// Standard notation of each move, in the position it is played from.
    pub notation: Vec<String>,
    /// Whether each move was an automatic (safe) foundation move.
    pub auto: Vec<bool>,
    /// Length counting each multi-card move as one move.
    pub multi_len: u32,
    /// Length once every multi-card move is expanded into single-card moves
    /// (`None` under the `unlimited` rule, where that is not always possible).
    pub single_len: Option<u32>,
}

/// The result of one search.
#[derive(Clone, Debug, PartialEq)]
pub struct SolveResult {
    pub outcome: Outcome,
    pub solution: Option<Solution>,
    pub stats: Stats,
}

// ---------------------------------------------------------------------------

/// The fingerprint is already uniformly mixed: use its low 64 bits as hash.
#[derive(Default)]
struct FpHasher(u64);

impl Hasher for FpHasher {
    fn finish(&self) -> u64 {
        self.0
    }
    fn write(&mut self, _: &[u8]) {
        unreachable!("only u128 keys")
    }
    fn write_u128(&mut self, v: u128) {
        self.0 = v as u64;
    }
}

type Visited = HashSet<u128, BuildHasherDefault<FpHasher>>;

fn set_bytes(cap: usize) -> u64 {
    // hashbrown: buckets = next_pow2(cap * 8 / 7); 16 bytes + 1 control byte each.
    if cap == 0 {
        return 0;
    }
    let buckets = (cap * 8 / 7).next_power_of_two().max(4);
    (buckets * 17) as u64
}

struct Frame {
    /// The move that led here (None at the root) and how many automatic
    /// foundation moves followed it in `auto_log`.
    mv: Option<Move>,
    autos: usize,
    /// This frame's children in `children[start..end]`, next to try at `next`.
    start: usize,
    next: usize,
    end: usize,
}

/// Heuristic weights (tuned on deals 1..1000; see docs/SOLVER.md).
#[derive(Copy, Clone, Debug)]
pub struct Weights {
    pub home: i32,
    pub disorder: i32,
    pub dig: i32,
    pub cell: i32,
    pub empty_col: i32,
}

pub const WEIGHTS: Weights = Weights { home: 6, disorder: 2, dig: 3, cell: 4, empty_col: 6 };

fn weights() -> Weights {
    static W: std::sync::OnceLock<Weights> = std::sync::OnceLock::new();
    *W.get_or_init(|| match std::env::var("FCA_WEIGHTS") {
        Ok(s) => {
            let v: Vec<i32> = s.split(',').map(|x| x.parse().unwrap()).collect();
            Weights { home: v[0], disorder: v[1], dig: v[2], cell: v[3], empty_col: v[4] }
        }
        Err(_) => WEIGHTS,
    })
}

/// Heuristic: lower is closer to a win. See docs/SOLVER.md.
#[inline]
fn score(b: &Board) -> i32 {
    let w = weights();
    let mut s = 0i32;
    let found = b.foundations();
    // Cards still to go home.
    s += w.home * (52 - b.cards_home() as i32);
    // Cards lying above a lower card of the column must all move first; and
    // the depth of each suit's next card (how much digging it needs).
    for i in 0..b.ncols() {
        let col = b.column(i);
        let mut min_rank = 99u8;
        let n = col.len();
        for (d, &c) in col.iter().enumerate() {
            let c = Card(c);
            if c.rank() > min_rank {
                s += w.disorder;
            } else {
                min_rank = c.rank();
            }
            if found[c.suit() as usize] == c.rank() {
                s += w.dig * (n - d - 1) as i32;
            }
        }
    }
    // Occupied cells and empty columns (the scarce resources).
    let free_cells = b.empty_cells() as i32;
    let occupied = b.ncells() as i32 - free_cells;
    s += w.cell * occupied;
    if b.variant().empty == EmptyRule::Any {
        s -= w.empty_col * b.empty_columns() as i32;
    }
    s
}

/// Solves `board` within `limits`.
pub fn solve(board: &Board, limits: &Limits) -> SolveResult {
    let bf = best_first(board, limits, bf_budget());
    if bf.outcome == Outcome::Solved {
        return bf;
    }
    let mut r = Search::new(board, limits).run();
    r.stats.expanded += bf.stats.expanded;
    r.stats.elapsed += bf.stats.elapsed;
    r.stats.peak_bytes = r.stats.peak_bytes.max(bf.stats.peak_bytes);
    r
}

/// Expansions the best-first phase may spend before the complete search.
pub const BEST_FIRST_BUDGET: u64 = 1_000_000_000;

fn bf_budget() -> u64 {
    std::env::var("FCA_BUDGET").map(|s| s.parse().unwrap()).unwrap_or(BEST_FIRST_BUDGET)
}

struct Node {
    board: Board,
    parent: u32,
    mv: Option<Move>,
}

/// Greedy best-first search (global priority queue on the heuristic). Finds
/// most solutions in few expansions; it proves nothing when it fails, since
/// its budget may cut it short.
pub fn best_first(board: &Board, limits: &Limits, budget: u64) -> SolveResult {
    use std::cmp::Reverse;
    use std::collections::BinaryHeap;
    let t0 = Instant::now();
    let mut stats = Stats::default();
    let mut visited = Visited::default();
    let mut b = board.clone();
    let mut log = Vec::new();
    b.autoplay(&mut log);
    let mut nodes: Vec<Node> = Vec::new();
    let mut heap: BinaryHeap<(Reverse<i32>, u32)> = BinaryHeap::new();
    visited.insert(b.fingerprint());
    let won_at = |nodes: &Vec<Node>, idx: usize| -> Vec<Move> {
        let mut path = Vec::new();
        let mut i = idx;
        while let Some(m) = nodes[i].mv {
            path.push(m);
            i = nodes[i].parent as usize;
        }
        path.reverse();
        path
    };
    let root_won = b.is_won();
    nodes.push(Node { board: b, parent: 0, mv: None });
    let finish = |stats: &mut Stats, outcome, solution, nodes: &Vec<Node>, visited: &Visited| {
        stats.elapsed = t0.elapsed();
        stats.stored = visited.len() as u64;
        stats.peak_bytes = stats.peak_bytes.max(
            set_bytes(visited.capacity()) + (nodes.capacity() * std::mem::size_of::<Node>()) as u64,
        );
        SolveResult { outcome, solution, stats: *stats }
    };
    if root_won {
        let sol = describe(board, &[]);
        return finish(&mut stats, Outcome::Solved, Some(sol), &nodes, &visited);
    }
    heap.push((Reverse(0), 0));
    let mut gen = Vec::new();
    while let Some((_, idx)) = heap.pop() {
        if stats.expanded >= budget {
            return finish(&mut stats, Outcome::Limit(LimitKind::Positions), None, &nodes, &visited);
        }
        stats.expanded += 1;
        let mut cur = nodes[idx as usize].board.clone();
        gen.clear();
        cur.gen_moves(&mut gen, false);
        for &m in &gen {
            cur.apply(m);
            let n = cur.autoplay(&mut log);
            let fp = cur.fingerprint();
            if visited.len() as u64 >= limits.max_positions {
                return finish(&mut stats, Outcome::Limit(LimitKind::Positions), None, &nodes, &visited);
            }
            if visited.insert(fp) {
                nodes.push(Node { board: cur.clone(), parent: idx, mv: Some(m) });
                let child = nodes.len() - 1;
                if cur.is_won() {
                    let path = won_at(&nodes, child);
                    let path = shorten(board, &path);
                    let sol = describe(board, &path);
                    return finish(&mut stats, Outcome::Solved, Some(sol), &nodes, &visited);
                }
                heap.push((Reverse(score(&cur)), child as u32));
            }
            cur.undo_autoplay(&mut log, n);
            cur.undo_any(m);
        }
    }
    finish(&mut stats, Outcome::Unsolvable, None, &nodes, &visited)
}

struct Search<'a> {
    start: Board,
    b: Board,
    limits: &'a Limits,
    visited: Visited,
    frames: Vec<Frame>,
    children: Vec<(i32, Move)>,
    auto_log: Vec<Move>,
    scratch: Vec<Move>,
    stats: Stats,
    t0: Instant,
}

impl<'a> Search<'a> {
    fn new(board: &Board, limits: &'a Limits) -> Self {
        Search {
            start: board.clone(),
            b: board.clone(),
            limits,
            visited: Visited::default(),
            frames: Vec::new(),
            children: Vec::new(),
            auto_log: Vec::new(),
            scratch: Vec::new(),
            stats: Stats::default(),
            t0: Instant::now(),
        }
    }

    fn bytes(&self) -> u64 {
        set_bytes(self.visited.capacity())
            + (self.frames.capacity() * std::mem::size_of::<Frame>()) as u64
            + (self.children.capacity() * std::mem::size_of::<(i32, Move)>()) as u64
            + (self.auto_log.capacity() * std::mem::size_of::<Move>()) as u64
    }

    /// Stores the current position; `Err` when a budget would be exceeded.
    fn store(&mut self) -> Result<bool, LimitKind> {
        let fp = self.b.fingerprint();
        if self.visited.contains(&fp) {
            return Ok(false);
        }
        if self.visited.len() as u64 >= self.limits.max_positions {
            return Err(LimitKind::Positions);
        }
        if self.visited.len() == self.visited.capacity() {
            // Growing allocates the new table while the old one still lives.
            let now = self.bytes();
            let grown = set_bytes((self.visited.capacity() * 2).max(64));
            if now + grown > self.limits.max_bytes {
                return Err(LimitKind::Bytes);
            }
            self.stats.peak_bytes = self.stats.peak_bytes.max(now + grown);
        }
        self.visited.insert(fp);
        self.stats.stored += 1;
        Ok(true)
    }

    /// Generates, scores and orders the current position's children.
    fn expand(&mut self, mv: Option<Move>, autos: usize) {
        self.stats.expanded += 1;
        let start = self.children.len();
        self.scratch.clear();
        self.b.gen_moves(&mut self.scratch, false);
        for idx in 0..self.scratch.len() {
            let m = self.scratch[idx];
            self.b.apply(m);
            let n = self.b.autoplay(&mut self.auto_log);
            if !self.visited.contains(&self.b.fingerprint()) {
                let s = if self.b.is_won() { i32::MIN } else { score(&self.b) };
                self.children.push((s, m));
            }
            self.b.undo_autoplay(&mut self.auto_log, n);
            self.b.undo_any(m);
        }
        // Best last so that the next child is popped from the end cheaply;
        // the stable sort keeps generation order among equals (determinism).
        self.children[start..].sort_by(|a, b| b.0.cmp(&a.0));
        let end = self.children.len();
        self.frames.push(Frame { mv, autos, start, next: end, end });
    }

    fn over_time(&self) -> bool {
        match self.limits.max_seconds {
            Some(s) => self.t0.elapsed().as_secs_f64() > s,
            None => false,
        }
    }

    fn finish(&mut self, outcome: Outcome, solution: Option<Solution>) -> SolveResult {
        self.stats.elapsed = self.t0.elapsed();
        self.stats.peak_bytes = self.stats.peak_bytes.max(self.bytes());
        SolveResult { outcome, solution, stats: self.stats }
    }

    fn run(mut self) -> SolveResult {
        let root_autos = self.b.autoplay(&mut self.auto_log);
        if let Err(k) = self.store() {
            return self.finish(Outcome::Limit(k), None);
        }
        if self.b.is_won() {
            let sol = self.build_solution();
            return self.finish(Outcome::Solved, Some(sol));
        }
        self.expand(None, root_autos);
        loop {
            let Some(top) = self.frames.last_mut() else {
                return self.finish(Outcome::Unsolvable, None);
            };
            if top.next == top.start {
                // Exhausted: back up.
                let f = self.frames.pop().unwrap();
                self.children.truncate(f.start);
                if let Some(m) = f.mv {
                    self.b.undo_autoplay(&mut self.auto_log, f.autos);
                    self.b.undo_any(m);
                }
                continue;
            }
            top.next -= 1;
            let (_, m) = self.children[top.next];
            self.b.apply(m);
            let n = self.b.autoplay(&mut self.auto_log);
            match self.store() {
                Ok(true) => {}
                Ok(false) => {
                    self.b.undo_autoplay(&mut self.auto_log, n);
                    self.b.undo_any(m);
                    continue;
                }
                Err(k) => {
                    self.b.undo_autoplay(&mut self.auto_log, n);
                    self.b.undo_any(m);
                    return self.finish(Outcome::Limit(k), None);
                }
            }
            if self.b.is_won() {
                self.frames.push(Frame { mv: Some(m), autos: n, start: 0, next: 0, end: 0 });
                let sol = self.build_solution();
                return self.finish(Outcome::Solved, Some(sol));
            }
            if self.stats.expanded & 1023 == 0 && self.over_time() {
                return self.finish(Outcome::Limit(LimitKind::Time), None);
            }
            self.expand(Some(m), n);
        }
    }

    /// The path on the stack, shortened, as a `Solution`.
    fn build_solution(&mut self) -> Solution {
        let path: Vec<Move> = self.frames.iter().filter_map(|f| f.mv).collect();
        let path = shorten(&self.start, &path);
        describe(&self.start, &path)
    }
}

/// Replays `moves` (each followed by automatic moves) from `start`,
/// returning the fingerprints of the positions after each step (index 0 is
/// the start after its automatic moves).
fn path_fingerprints(start: &Board, moves: &[Move]) -> Vec<u128> {
    let mut b = start.clone();
    let mut log = Vec::new();
    b.autoplay(&mut log);
    let mut fps = vec![b.fingerprint()];
    for &m in moves {
        b.apply(m);
        b.autoplay(&mut log);
        fps.push(b.fingerprint());
    }
    fps
}

/// Shortens a winning path: from each position, take the move that reaches
/// the furthest later position on the path.
pub fn shorten(start: &Board, moves: &[Move]) -> Vec<Move> {
    let _ = moves.len();
    let fps = path_fingerprints(start, moves);
    let index: std::collections::HashMap<u128, usize> =
        fps.iter().enumerate().map(|(i, &f)| (f, i)).collect();
    let mut b = start.clone();
    let mut log = Vec::new();
    b.autoplay(&mut log);
    let mut out = Vec::new();
    let mut i = 0;
    let mut gen = Vec::new();
    while i + 1 < fps.len() {
        gen.clear();
        b.gen_moves(&mut gen, false);
        // Positions on the path are equal only up to column and cell order, so
        // the path's own move may not apply here; one of the generated moves
        // reaches the next position (generation keeps one move per canonical
        // result).
        let mut best = (i, None);
        for &m in &gen {
            b.apply(m);
            let n = b.autoplay(&mut log);
            if let Some(&j) = index.get(&b.fingerprint()) {
                if j > best.0 {
                    best = (j, Some(m));
                }
            }
            b.undo_autoplay(&mut log, n);
            b.undo_any(m);
        }
        let m = best.1.expect("a path step is always among the generated moves");
        b.apply(m);
        b.autoplay(&mut log);
        out.push(m);
        i = best.0;
    }
    out
}

/// Writes a path out as a `Solution`, automatic moves made explicit.
pub fn describe(start: &Board, path: &[Move]) -> Solution {
    let mut b = start.clone();
    let mut moves = Vec::new();
    let mut notation = Vec::new();
    let mut auto = Vec::new();
    let mut single: Option<u32> = Some(0);
    let mut log = Vec::new();
    let mut push_autos = |b: &mut Board, moves: &mut Vec<Move>, notation: &mut Vec<String>, auto: &mut Vec<bool>, single: &mut Option<u32>| {
        loop {
            log.clear();
            // One automatic move at a time, so each is written in its position.
            let before = b.clone();
            if b.autoplay(&mut log) == 0 {
                break;
            }
            let first = log[0];
            *b = before;
            notation.push(b.move_to_notation(first));
            b.apply(first);
            moves.push(first);
            auto.push(true);
            if let Some(s) = single.as_mut() {
                *s += 1;
            }
        }
    };
    push_autos(&mut b, &mut moves, &mut notation, &mut auto, &mut single);
    for &m in path {
        notation.push(b.move_to_notation(m));
        let cards = Board::move_cards(m) as u32;
        single = match (single, cards) {
            (Some(s), 1) => Some(s + 1),
            (Some(s), _) => expansion_len(&b, m).map(|e| s + e),
            (None, _) => None,
        };
        b.apply(m);
        moves.push(m);
        auto.push(false);
        push_autos(&mut b, &mut moves, &mut notation, &mut auto, &mut single);
    }
    debug_assert!(b.is_won());
    Solution { multi_len: moves.len() as u32, moves, notation, auto, single_len: single }
}

fn expansion_len(b: &Board, m: Move) -> Option<u32> {
    expand_move(b, m).map(|v| v.len() as u32)
}

/// Expands a multi-card move into single-card moves through free cells and
/// empty columns (the standard recursion: park half the run in a helper
/// column, move the rest, bring the half back). `None` when the move is
/// longer than single-card moves can carry (only under `unlimited`).
pub fn expand_move(b: &Board, m: Move) -> Option<Vec<Move>> {
    let (Loc::Column(a), Loc::Column(d)) = (m.from, m.to) else {
        return Some(vec![m]);
    };
    if m.count <= 1 {
        return Some(vec![m]);
    }
    let mut work = b.clone();
    let mut out = Vec::new();
    if expand_run(&mut work, a as usize, d as usize, m.count as usize, &mut out) {
        Some(out)
    } else {
        None
    }
}

fn expand_run(b: &mut Board, from: usize, to: usize, k: usize, out: &mut Vec<Move>) -> bool {
    let free: Vec<usize> = (0..b.ncells()).filter(|&i| b.cell(i).is_none()).collect();
    if k <= free.len() + 1 {
        for (j, &cell) in free.iter().take(k - 1).enumerate() {
            let _ = j;
            let m = Move::new(Loc::Column(from as u8), Loc::Cell(cell as u8), 1);
            b.apply(m);
            out.push(m);
        }
        let m = Move::new(Loc::Column(from as u8), Loc::Column(to as u8), 1);
        b.apply(m);
        out.push(m);
        for &cell in free.iter().take(k - 1).rev() {
            let m = Move::new(Loc::Cell(cell as u8), Loc::Column(to as u8), 1);
            b.apply(m);
            out.push(m);
        }
        return true;
    }
    if b.variant().empty != EmptyRule::Any {
        return false;
    }
    let helper = (0..b.ncols()).find(|&i| i != from && i != to && b.column_len(i) == 0);
    let Some(t) = helper else { return false };
    let helpers_left = (0..b.ncols())
        .filter(|&i| i != from && i != to && i != t && b.column_len(i) == 0)
        .count() as u32;
    let cap = ((free.len() as u32 + 1) << helpers_left.min(20)) as usize;
    let park = cap.min(k - 1);
    if k - park > cap {
        return false;
    }
    expand_run(b, from, t, park, out)
        && expand_run(b, from, to, k - park, out)
        && expand_run(b, t, to, park, out)
}

/// The smallest number of cells (at most `max_cells`) with which Microsoft
/// deal `n` is won under `variant`, with the result for every number of
/// cells tried. Searches down from the variant's own count while deals are
/// solved, up while they are not; then solves every smaller count too, so
/// each count below the minimum has its own unsolvability proof. `None` when
/// a limit stops the answer from being known (or no count wins).
pub fn min_cells(
    n: u64,
    variant: crate::variant::Variant,
    max_cells: u8,
    limits: &Limits,
) -> (Option<u8>, Vec<(u8, SolveResult)>) {
    let lo = variant.dealt_to_cells;
    let mut results: Vec<(u8, SolveResult)> = Vec::new();
    let mut run = |k: u8, results: &mut Vec<(u8, SolveResult)>| -> Outcome {
        if let Some((_, r)) = results.iter().find(|(c, _)| *c == k) {
            return r.outcome;
        }
        let b = Board::deal(n, variant.with_cells(k)).expect("validated deal and variant");
        let r = solve(&b, limits);
        let o = r.outcome;
        results.push((k, r));
        o
    };
    let start = variant.cells.clamp(lo, max_cells);
    let mut min: Option<u8> = None;
    match run(start, &mut results) {
        Outcome::Solved => {
            min = Some(start);
            let mut k = start;
            while k > lo {
                k -= 1;
                match run(k, &mut results) {
                    Outcome::Solved => min = Some(k),
                    Outcome::Unsolvable => break,
                    Outcome::Limit(_) => {
                        min = None;
                        break;
                    }
                }
            }
        }
        Outcome::Unsolvable => {
            let mut k = start;
            while k < max_cells {
                k += 1;
                match run(k, &mut results) {
                    Outcome::Solved => {
                        min = Some(k);
                        break;
                    }
                    Outcome::Unsolvable => {}
                    Outcome::Limit(_) => break,
                }
            }
        }
        Outcome::Limit(_) => {}
    }
    if let Some(m) = min {
        for k in lo..m {
            run(k, &mut results);
        }
        // Every count below the minimum must be proved unsolvable.
        if results.iter().any(|(k, r)| *k < m && r.outcome != Outcome::Unsolvable) {
            min = None;
        }
    }
    results.sort_by_key(|(k, _)| *k);
    (min, results)
}

/// Returns whether `m` may be expanded into single-card moves at all (every
/// rule but `unlimited` guarantees it).
pub fn rule_is_shorthand(rule: MoveRule) -> bool {
    rule != MoveRule::Unlimited
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::variant::Variant;

    fn run(deal: u64, cells: u8) -> SolveResult {
        let b = Board::deal(deal, Variant::default().with_cells(cells)).unwrap();
        solve(&b, &Limits::default())
    }

    fn replay(start: &Board, sol: &Solution) {
        let mut b = start.clone();
        for (i, s) in sol.notation.iter().enumerate() {
            let m = b.parse_move(s).unwrap();
            b.apply_checked(m).unwrap_or_else(|e| panic!("move {i} {s}: {e}"));
        }
        assert!(b.is_won());
    }

    #[test]
    fn known_answers() {
        for (deal, cells, solvable) in
            [(1, 3, true), (1, 2, false), (617, 4, true), (617, 3, false)]
        {
            let r = run(deal, cells);
            assert_eq!(
                r.outcome,
                if solvable { Outcome::Solved } else { Outcome::Unsolvable },
                "deal {deal} cells {cells}"
            );
            if let Some(s) = &r.solution {
                replay(&Board::deal(deal, Variant::default().with_cells(cells)).unwrap(), s);
            }
        }
    }

    #[test]
    fn tiny_limits_give_limit() {
        let b = Board::deal(11982, Variant::default()).unwrap();
        let r = solve(&b, &Limits { max_positions: 100, ..Limits::default() });
        assert_eq!(r.outcome, Outcome::Limit(LimitKind::Positions));
        let r = solve(&b, &Limits { max_bytes: 10_000, ..Limits::default() });
        assert_eq!(r.outcome, Outcome::Limit(LimitKind::Bytes));
    }

    #[test]
    fn solutions_replay() {
        for deal in 1..=200 {
            let r = run(deal, 4);
            assert_eq!(r.outcome, Outcome::Solved, "deal {deal}");
            let sol = r.solution.unwrap();
            replay(&Board::deal(deal, Variant::default()).unwrap(), &sol);
            assert!(sol.single_len.unwrap() >= sol.multi_len);
        }
    }
}
