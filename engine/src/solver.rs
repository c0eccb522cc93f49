//! The solver: a portfolio of best-first searches that finds most solutions
//! quickly, and a complete depth-first search that decides the rest.
//!
//! Design (docs/SOLVER.md has the long form):
//! - Edges are the variant's moves: every single-card move plus multi-card
//!   moves within the variant's move rule (shorthand for single-card moves,
//!   so they add no position a single-card search would not reach — except
//!   under `unlimited`, where long sequence moves are the rules themselves).
//! - The portfolio (`PORTFOLIO`): five greedy best-first searches over
//!   pruned moves with eager automatic moves (the fifth once the quota
//!   reaches 400), run round-robin with doubling quotas and sharing the
//!   positions they have expanded. It only ever
//!   finds solutions; running out of positions proves nothing.
//! - The complete search joins the rounds late (early, with a larger share,
//!   on a deal where no member gets cards home, `BLOCKED_HOME`, or where all
//!   members but one have run dry, `DRY_FACTOR`) and decides alone if the
//!   portfolio's cap is reached: depth-first over every move, children
//!   ordered by the heuristic, after every move the *safe* automatic
//!   foundation moves (`Board::is_safe_home`), and a visited set of
//!   canonical fingerprints. When the whole reachable graph has been
//!   visited without a win the deal is *proved* unsolvable: the single-card
//!   move graph is a subgraph of what was searched.
//! - A depth-first solution is shortened afterwards by jumping ahead
//!   whenever one move from a position on the path reaches a later position.
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
use std::collections::{HashMap, HashSet};
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

/// By default the byte budget binds: 1 GiB holds at most ~30 M positions
/// in the complete search's visited set, so the position budget (100 M) is
/// only a second bound. With 20 M, MS 34841 (3 cells) ended as `limit`; it
/// is proved unsolvable with 33.6 M expansions, peak 880 MB.
impl Default for Limits {
    fn default() -> Self {
        Limits {
            max_positions: 100_000_000,
            max_bytes: 1 << 30,
            max_seconds: None,
        }
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
    /// Of `expanded`, those of the complete search (the rest are the
    /// portfolio's). Its expansions cost about half a member's, which
    /// tuning weighs (`bench/tune_portfolio.py --cost time`).
    pub proof_expanded: u64,
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
    pub notation: Vec<crate::board::Notation>,
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
    fn write_u64(&mut self, v: u64) {
        self.0 = v;
    }
}

/// The complete search's visited set: whole fingerprints (the proof's
/// soundness bound above).
type Visited = HashSet<u128, BuildHasherDefault<FpHasher>>;

/// The portfolio's visited sets: the fingerprint's low 64 bits. The
/// portfolio never proves anything (its solutions are replayed, its running
/// dry only stops it), so a false "seen" (chance ~n^2 / 2^65, 3e-8 for a
/// million positions) could only make it miss a line; half the bytes of
/// `Visited` make its hottest table cheaper to probe.
type Seen = crate::fpset::FpSet;

fn set_bytes(cap: usize) -> u64 {
    table_bytes(cap, 16)
}

fn seen_bytes(cap: usize) -> u64 {
    Seen::bytes_for(cap)
}

/// A group's shared set of expanded positions (`SHARE_AFTER_FIRST_ROUND`):
/// the low 64 bits of each fingerprint, with whether some member has also
/// expanded one of its children ("followed"). A 64-bit false match only
/// lets a member skip a position, which the portfolio tolerates: it proves
/// nothing. One entry with a flag, where a set used to hold the position
/// and a salted "followed" key: one probe at a pop instead of two (session
/// 7; same counts, 3 cells -1 % to -3 % CPU, peak 162 -> 173 MB on MS
/// 1..32000).
type Closed = HashMap<u64, bool, BuildHasherDefault<FpHasher>>;

fn closed_bytes(cap: usize) -> u64 {
    // A key and a flag take 16 bytes (alignment).
    table_bytes(cap, 16)
}

/// hashbrown: buckets = next_pow2(cap * 8 / 7); a key and a control byte each.
fn table_bytes(cap: usize, key: usize) -> u64 {
    if cap == 0 {
        return 0;
    }
    let buckets = (cap * 8 / 7).next_power_of_two().max(4);
    (buckets * (key + 1)) as u64
}

struct Frame {
    /// The move that led here (None at the root) and how many automatic
    /// foundation moves followed it in `auto_log`.
    mv: Option<Move>,
    /// The position's column-hash state once expanded (settled), restored
    /// whenever a child's moves are undone.
    mark: crate::board::DirtyMark,
    autos: usize,
    /// This frame's children in `children[start..end]`, next to try at `next`.
    start: usize,
    next: usize,
    /// The position's run lengths (`Board::runs`): a child's are these with
    /// the columns its moves changed recomputed.
    runs: u64,
}

/// Heuristic weights (tuned on deals 1..2000; see docs/SOLVER.md).
pub const WEIGHTS: [i32; 8] = [6, 1, 1, 4, 6, 0, 0, 0];

fn weights() -> [i32; 8] {
    static W: std::sync::OnceLock<[i32; 8]> = std::sync::OnceLock::new();
    *W.get_or_init(|| match std::env::var("FCA_WEIGHTS") {
        Ok(s) => {
            let mut w = [0; 8];
            for (i, x) in s.split(',').enumerate() {
                w[i] = x.parse().unwrap();
            }
            w
        }
        Err(_) => WEIGHTS,
    })
}

/// The cards each foundation needs next, as a bit set over card codes (a
/// complete foundation's "next card" is a code no card has).
#[inline]
fn next_needed(found: &[u8; 4]) -> u64 {
    let mut m = 0u64;
    for (suit, &r) in found.iter().enumerate() {
        m |= 1 << (r as usize * 4 + suit);
    }
    m
}

/// One column's part of the heuristic (see `score`); `need` is
/// `next_needed` of the foundations.
#[inline]
fn col_score(col: &[u8], need: u64, v: crate::variant::Variant, w: &[i32; 8]) -> i32 {
    let n = col.len();
    let mut s = 0;
    let mut min_rank = 99u8;
    let mut breaks = 0;
    let mut top_run_start = 0;
    let mut below = NO_CARD_CODE;
    let builds = v.builds_on_table();
    for (d, &c) in col.iter().enumerate() {
        let r = c >> 2;
        // w1: a card above a lower card must move before that one goes home.
        s += w[1] * (r > min_rank) as i32;
        min_rank = min_rank.min(r);
        if (need >> c) & 1 != 0 {
            // w2: cards above a suit's next card (digging needed).
            s += w[2] * (n - d - 1) as i32;
        }
        let brk = d > 0 && (builds[(below & 63) as usize] >> (c & 63)) & 1 == 0;
        breaks += brk as i32;
        top_run_start = if brk { d } else { top_run_start };
        below = c;
    }
    // w5: cards below the top run; w6: sequence breaks (separate units).
    s + w[5] * top_run_start as i32 + w[6] * breaks
}

const NO_CARD_CODE: u8 = 0xFF;

/// Column scores already computed, by column hash and foundations: most
/// columns of a position are unchanged from its parent's, so a search asks
/// for the same few again and again. Direct-mapped; a miss just recomputes.
struct ScoreCache {
    /// (low 64 bits of the column hash, `need`, score); `need` is never 0,
    /// so zeroed entries never match.
    slots: Vec<(u64, u64, i32)>,
    /// Slots to allocate on first use (a power of two; 0: no cache).
    size: usize,
}

const SCORE_CACHE_SLOTS: usize = 1024;

impl ScoreCache {
    /// An empty cache; its table is allocated on first use. Under a small
    /// byte budget (`max_bytes`) it is smaller, or none: it takes at most
    /// 1/16 of the budget.
    fn new(max_bytes: u64) -> Self {
        let slot = std::mem::size_of::<(u64, u64, i32)>() as u64;
        let mut size = SCORE_CACHE_SLOTS;
        while size > 0 && size as u64 * slot > max_bytes / 16 {
            size /= 2;
        }
        if size < 16 {
            size = 0;
        }
        ScoreCache {
            slots: Vec::new(),
            size,
        }
    }

    /// Counted from the start, allocated or not.
    fn bytes(&self) -> u64 {
        (self.size * std::mem::size_of::<(u64, u64, i32)>()) as u64
    }

    #[inline]
    fn col_score(&mut self, b: &Board, i: usize, need: u64, w: &[i32; 8]) -> i32 {
        self.part(b.column_hash(i) as u64, need, || {
            col_score(b.column(i), need, b.variant(), w)
        })
    }

    /// The part of a column whose hash (`Board::column_hash`, low 64 bits)
    /// is `h`, from the cache or, on a miss, from `compute`.
    #[inline]
    fn part(&mut self, h: u64, need: u64, compute: impl FnOnce() -> i32) -> i32 {
        if self.slots.is_empty() {
            if self.size == 0 {
                return compute();
            }
            self.slots = vec![(0, 0, 0); self.size];
        }
        let slot = ((h ^ need).wrapping_mul(0x9E37_79B9_7F4A_7C15)
            >> (64 - self.size.trailing_zeros())) as usize;
        let e = self.slots[slot];
        if e.0 == h && e.1 == need {
            return e.2;
        }
        let s = compute();
        self.slots[slot] = (h, need, s);
        s
    }

    /// The part of column `i` once its top `k` cards are gone; `h` is its
    /// hash then (`Board::narrow_after`).
    #[inline]
    fn part_without(
        &mut self,
        b: &Board,
        i: usize,
        k: usize,
        h: u64,
        need: u64,
        w: &[i32; 8],
    ) -> i32 {
        self.part(h, need, || {
            let col = b.column(i);
            col_score(&col[..col.len() - k], need, b.variant(), w)
        })
    }

    /// The part of column `i` once the top `k` cards of `from` are put on
    /// it; `h` is its hash then (`Board::narrow_after`).
    #[inline]
    #[allow(clippy::too_many_arguments)]
    fn part_onto(
        &mut self,
        b: &Board,
        i: usize,
        from: &[u8],
        k: usize,
        h: u64,
        need: u64,
        w: &[i32; 8],
    ) -> i32 {
        self.part(h, need, || {
            let mut col = *b.column_array(i);
            let l = b.column_len(i);
            col[l..l + k].copy_from_slice(&from[from.len() - k..]);
            col_score(&col[..l + k], need, b.variant(), w)
        })
    }

    /// `score`, with the column parts through the cache.
    #[inline]
    fn score(&mut self, b: &Board, w: &[i32; 8]) -> i32 {
        let need = next_needed(&b.foundations());
        let mut s = global_score(b, w);
        for i in 0..b.ncols() {
            s += self.col_score(b, i, need, w);
        }
        s
    }
}

/// The columns of `child` (a position just reached by moves from one whose
/// next cards were `need`; `child_need` is its own) whose parts of the
/// heuristic may differ from that position's: those the moves changed
/// (`Board::changed_columns`), and those holding a suit's new next card,
/// the one card whose w2 term appears. (A card that stopped being a next
/// card went home, from a changed column or a cell.)
#[inline]
fn redo_columns(child: &Board, need: u64, child_need: u64) -> u16 {
    let mut redo = child.changed_columns();
    let mut fresh = child_need & !need & ((1 << 52) - 1);
    while fresh != 0 {
        let c = fresh.trailing_zeros() as u8;
        fresh &= fresh - 1;
        if let Some(i) = child.column_of(Card(c)) {
            redo |= 1 << i;
        }
    }
    redo
}

/// Incremental child scores, shared by both searches. A child differs from
/// the expanded position in the columns its moves changed (at most two for
/// a move after which nothing goes home): its score is the position's, with
/// the whole-board part and those columns' parts replaced
/// (`ScoreCache::part_without`, `part_onto`, `redo_columns`). The old parts
/// are looked up here, each column once per expansion.
struct ParentParts([Option<i32>; crate::variant::MAX_COLUMNS]);

impl ParentParts {
    fn new() -> Self {
        ParentParts([None; crate::variant::MAX_COLUMNS])
    }

    /// The expanded position's part of column `c`.
    #[inline]
    fn get(
        &mut self,
        scores: &mut ScoreCache,
        b: &Board,
        c: usize,
        need: u64,
        w: &[i32; 8],
    ) -> i32 {
        *self.0[c].get_or_insert_with(|| scores.col_score(b, c, need, w))
    }
}

/// The whole-board part of the heuristic.
#[inline]
fn global_score(b: &Board, w: &[i32; 8]) -> i32 {
    // w0: cards still to go home; w3: occupied cells; w4: empty columns;
    // w7: multi-card move capacity.
    global_parts(
        b,
        b.cards_home() as i32,
        b.empty_cells() as i32,
        b.empty_columns() as i32,
        w,
    )
}

/// `global_score` of a position of `b`'s variant with `home` cards home,
/// `free_cells` empty cells and `empty` empty columns.
#[inline]
fn global_parts(b: &Board, home: i32, free_cells: i32, empty: i32, w: &[i32; 8]) -> i32 {
    let occupied = b.ncells() as i32 - free_cells;
    let mut s = w[0] * (52 - home) + w[3] * occupied;
    if b.variant().empty == EmptyRule::Any {
        s -= w[4] * empty + w[7] * (1 + free_cells) * (1 + empty);
    }
    s
}

/// Heuristic: lower is closer to a win (docs/SOLVER.md).
#[inline]
fn score(b: &Board, w: &[i32; 8]) -> i32 {
    let need = next_needed(&b.foundations());
    let v = b.variant();
    let mut s = global_score(b, w);
    for i in 0..b.ncols() {
        s += col_score(b.column(i), need, v, w);
    }
    s
}

/// One heuristic configuration of the portfolio: weights of `score` and
/// whether the move set is pruned (`Board::gen_moves_pruned`).
#[derive(Copy, Clone, Debug)]
pub struct Config {
    pub weights: [i32; 8],
    pub pruned: bool,
    /// Eager automatic foundation moves (`Board::is_home_worthy`).
    pub eager: bool,
    /// Weight of the depth in the priority (0: greedy; 1: weighted-A*-like,
    /// slower on easy deals but far lighter on the hard tail).
    pub depth_weight: i32,
    /// Also try "parks", compound moves: the cards above a buried card go
    /// to free cells, then the card goes home or onto another column's top
    /// card, in one step. Parks reach no new position (they are sequences
    /// of moves); they let the heuristic see past the cells they fill.
    pub park: bool,
    /// The member quota from which this member takes turns (0: from the
    /// first round). A late member's first turn is not shared: the others
    /// have expanded and followed its root, so sharing would skip it there
    /// and leave it nothing to expand. Late members come last in a portfolio,
    /// in order of `join` (members are started in order).
    pub join: u64,
}

/// The portfolio, chosen on deals 1..1000 (docs/SOLVER.md): diverse
/// configurations fail on different deals, so running them side by side
/// with growing quotas cuts the heavy tail of any single one.
///
/// All five are pruned and eager, so they share their expanded positions
/// (`SHARE_AFTER_FIRST_ROUND`). The fourth started from the weights of the
/// unpruned, safe member that used to double as the prover (the complete
/// search proves with cheaper expansions). Without those weights MS 473309
/// (4 cells) ended as `limit` after 24 M expansions; with them pruned it
/// takes 5.7 k, and the 740 costliest deals of MS 1..1,000,000 take 21.8 M
/// expansions instead of 29.7 M (27.9 M with the unpruned member).
///
/// Session 5 retuned the weights: a coordinate search (each weight of each
/// member +-1, best step kept; `bench/tune_portfolio.py`) on the total
/// expansions of MS 1..4000 with 4 cells took three steps that carried over
/// to held-out deals (member 2: w0 6 -> 5; member 4: w1 1 -> 2, then w3
/// 4 -> 5). With 4 cells: MS 4001..32000 5.78 M -> 5.61 M expansions,
/// 32001..96000 13.61 M -> 12.83 M, 96001..160000 13.61 M -> 13.12 M, the
/// 740 costliest deals of MS 1..1,000,000 21.79 M -> 17.39 M (473309: 3.8
/// k); with 3 cells: 1..8000 13.98 M -> 13.64 M, 8001..32000 39.17 M ->
/// 37.46 M, 32001..40000 53.66 M -> 52.14 M. Its further steps (member 4:
/// w1 3, w7 1) helped the training deals only.
///
/// Session 11 added the fifth member, which joins at the 400-quota round, so
/// it costs the deals won in the first round nothing. Its weights are member
/// 2's as session 5's second tuning round left them (`[4, 1, 1, ...]`), which
/// were rejected as member 2's own (MS 149230 with 4 cells took 4.45 M
/// expansions against 1.1 k) but add the diversity the hard tail wants. Any
/// late fifth member tried helped; this one most consistently. Cost (the
/// members' expansions plus half the complete search's): 3 cells MS 1..32000
/// 45.12 M -> 43.30 M (-4.0 %), 40001..48000 -8.7 %, 48001..56000 -2.9 %;
/// 4 cells 1..32000 -2.3 %, the 740 costliest deals of MS 1..1,000,000
/// -20 %; 2 cells MS 1..150 -20 %, 151..400 -11 %; 1 cell and 5 cells
/// unchanged. The main job over MS 1..1,000,000: 205.40 M -> 197.79 M
/// expansions. CPU: 4 cells unchanged, 3 cells -1 % to -2 %, the 740
/// costliest 4-cell deals -13 % (its expansions cost more: it has parks).
///
/// Session 14 retuned the weights for its pruned moves (`gen_moves_pruned`:
/// free space only for cards that can go onto no column, and an empty
/// column kept for a card that starts a run there), by the same coordinate
/// search on MS 32001..64000 with 4 cells and a cost weighting each
/// member's expansions by its measured time per expansion: member 1 w3 4
/// -> 5, member 2 w3 6 -> 7 and w1 0 -> 1, member 5 w1 1 -> 2 (training
/// -7.6 %). Held out: MS 1..32000 and 500001..532000 both -5.0 % (4.697 M
/// -> 4.479 M and 4.704 M -> 4.521 M expansions); 3 cells MS 1..4000 the
/// same, 4001..8000 24.3 M -> 5.4 M; 5 cells +1 %, 2 cells MS 1..400
/// +1.3 %, 1 cell MS 1..100 -4 %. A second round's best steps each made
/// one 3-cell deal (6240) take 19 M expansions instead of 0.2 M, but for
/// member 5's w2 1 -> 0, kept: 4 cells -1.3 % (training), -0.3 % and
/// -2.6 % (held out); 3 cells MS 1..32000 -2.5 %; 2 cells 1..400 -18 %.
pub const PORTFOLIO: [Config; 5] = [
    Config {
        weights: [6, 0, 1, 5, 6, 1, 0, 0],
        pruned: true,
        eager: true,
        depth_weight: 0,
        park: false,
        join: 0,
    },
    Config {
        weights: [5, 1, 1, 7, 10, 1, 0, 0],
        pruned: true,
        eager: true,
        depth_weight: 1,
        park: true,
        join: 0,
    },
    Config {
        weights: [3, 3, 3, 3, 8, 0, 0, 0],
        pruned: true,
        eager: true,
        depth_weight: 0,
        park: true,
        join: 0,
    },
    Config {
        weights: [6, 2, 1, 5, 6, 0, 0, 0],
        pruned: true,
        eager: true,
        depth_weight: 1,
        park: false,
        join: 0,
    },
    Config {
        weights: [4, 2, 0, 6, 10, 1, 0, 0],
        pruned: true,
        eager: true,
        depth_weight: 1,
        park: true,
        join: 400,
    },
];
/// First quota (expansions per configuration); doubled every round. 200
/// until session 14; with its pruned moves every first quota from 150 to
/// 350 did better on 4 cells (MS 1..32000, 32001..64000, 500001..532000,
/// cost weighted by each member's time per expansion), and 150 and 175
/// also on 3 and 2 cells: 150 gives -2.3 %, -0.3 %, -0.6 %; 3 cells MS
/// 1..32000 -1.9 %, 2 cells 1..400 -6 %. (125 and 250 made single 3-cell
/// deals explode: 3 cells +21 %.)
pub const PORTFOLIO_QUOTA: u64 = 150;
/// A member's turn in one of the first `STAGNATION_ROUNDS` rounds ends once
/// its best heuristic value has not improved for `STAGNATION` expansions
/// times the round's quota multiple (50, 100, ... 800), or at twice the
/// quota. A greedy member either descends to a win or stalls on a plateau;
/// a stalled member hands over to the next instead of spending the rest of
/// its quota there. Measured (expansions, then CPU): MS 8001..32000 with 4
/// cells 5.46 M -> 4.92 M, -3 %; with 3 cells 42.0 M -> 39.2 M, -4 %
/// (chosen on MS 1..8000, where 40-80 and 4-6 rounds were all within a few
/// percent). Yielding in every round instead cost 2.3x on 3 cells: the hard
/// deals need long plateaus crossed.
pub const STAGNATION: u64 = 50;
pub const STAGNATION_ROUNDS: u32 = 5;
/// Total expansions the portfolio may spend before the complete search.
/// Measured with the first form of sharing (every generated position): 4 M
/// let the portfolio settle the four 3-cell deals of MS 1..32000 that
/// reached 1 M (6240, 11230, 13584, 14904: 13.8 M expansions with a 1 M
/// cap, 9.0 M with 4 M), at a peak of 552 MB instead of 212 MB. With the
/// current portfolio no deal of MS 1..32000 reaches 4 M (the costliest,
/// 13584 with 3 cells, is unsolvable: 2.2 M expansions in all). A byte limit
/// still hands over to the complete search, which then has all the memory.
pub const PORTFOLIO_CAP: u64 = 4_000_000;

fn portfolio() -> Vec<Config> {
    let p = match std::env::var("FCA_PORTFOLIO") {
        Ok(s) => s
            .split(';')
            .map(|c| {
                // weights/pruned[/depth weight/park/eager/join]
                let f: Vec<&str> = c.split('/').collect();
                let mut weights = [0; 8];
                for (i, x) in f[0].split(',').enumerate() {
                    weights[i] = x.parse().unwrap();
                }
                let flag = |k: usize, default: bool| f.get(k).map_or(default, |x| *x == "1");
                Config {
                    weights,
                    pruned: flag(1, false),
                    eager: flag(4, std::env::var("FCA_EAGER").map_or(true, |e| e == "1")),
                    depth_weight: f
                        .get(2)
                        .map_or(env_u64("FCA_GW", 0) as i32, |x| x.parse().unwrap()),
                    park: flag(3, false),
                    join: f.get(5).map_or(0, |x| x.parse().unwrap()),
                }
            })
            .collect(),
        Err(_) => match std::env::var("FCA_EAGER") {
            Ok(e) => PORTFOLIO
                .iter()
                .map(|c| Config {
                    eager: e == "1",
                    ..*c
                })
                .collect(),
            Err(_) => PORTFOLIO.to_vec(),
        },
    };
    // Members start in order (`solve`): late ones last, by `join`.
    assert!(
        p.windows(2).all(|w| w[0].join <= w[1].join),
        "FCA_PORTFOLIO: late members must come last, in order of joining"
    );
    p
}

/// The search's parameters: the constants above unless an experiment
/// overrides them through the environment (read once per process).
struct Tuning {
    configs: Vec<Config>,
    quota: u64,
    cap: u64,
    dfs_share: u64,
    dfs_start: u64,
    stagnation: u64,
    /// `BLOCKED_HOME`, `BLOCKED_FROM`, `BLOCKED_FACTOR`; None: never blocked.
    blocked: Option<(u32, u64, u64)>,
    /// `DRY_FACTOR`; None: never.
    dry: Option<u64>,
}

fn tuning() -> &'static Tuning {
    static T: std::sync::OnceLock<Tuning> = std::sync::OnceLock::new();
    T.get_or_init(|| Tuning {
        configs: portfolio(),
        quota: env_u64("FCA_QUOTA", PORTFOLIO_QUOTA),
        cap: env_u64("FCA_CAP", PORTFOLIO_CAP),
        dfs_share: env_u64("FCA_DFS_SHARE", DFS_SHARE),
        dfs_start: env_u64("FCA_DFS_START", DFS_START),
        stagnation: env_u64("FCA_STAGNATION", STAGNATION),
        blocked: env_knob(
            "FCA_BLOCKED",
            "HOME/FROM/FACTOR",
            (BLOCKED_HOME, BLOCKED_FROM, BLOCKED_FACTOR),
            |v| {
                let p: Vec<u64> = v.split('/').filter_map(|x| x.parse().ok()).collect();
                match p[..] {
                    [home, from, factor] => Some((home as u32, from, factor)),
                    _ => None,
                }
            },
        ),
        dry: env_knob("FCA_DRY", "FACTOR", DRY_FACTOR, |v| v.parse().ok()),
    })
}

/// An experiment's setting of an optional rule: `default` when `name` is
/// unset, `None` when it is "off", else `parse` of it (a malformed value
/// stops with a message naming the knob and the expected `form`).
fn env_knob<T>(name: &str, form: &str, default: T, parse: impl Fn(&str) -> Option<T>) -> Option<T> {
    match std::env::var(name) {
        Err(_) => Some(default),
        Ok(v) if v == "off" => None,
        Ok(v) => Some(parse(&v).unwrap_or_else(|| panic!("{name}={v:?}: expected {form} or off"))),
    }
}

fn env_u64(name: &str, default: u64) -> u64 {
    std::env::var(name)
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(default)
}

/// Solves `board` within `limits`: the heuristic portfolio first, then, if
/// it found nothing, the complete depth-first search (which alone may
/// answer `unsolvable`).
pub fn solve(board: &Board, limits: &Limits) -> SolveResult {
    let t0 = Instant::now();
    let Tuning {
        configs,
        quota,
        cap,
        dfs_share,
        dfs_start,
        stagnation,
        blocked,
        dry,
    } = tuning();
    let (quota, cap, dfs_share, dfs_start, stagnation) =
        (*quota, *cap, *dfs_share, *dfs_start, *stagnation);
    // Budgets bound what is held at once: the portfolio's runs and the
    // complete search together, then (once the portfolio is dropped) the
    // complete search alone.
    // The complete search that joins the rounds (see `DFS_SHARE`).
    let mut dfs = Search::new(board, limits);
    dfs.w = INTERLEAVED_WEIGHTS;
    dfs.t0 = t0;
    let mut runs: Vec<BestFirst> = Vec::new();
    let mut peak = 0u64;
    let mut peak_stored = 0u64;
    let mut budget = quota;
    let mut spent = 0u64;
    // (pruned, eager) of configurations found to be without a win.
    let mut exhausted: Vec<(bool, bool)> = Vec::new();
    // From the second round on, members with the same moves and automatic
    // moves share the set of positions they have expanded
    // (`SHARE_AFTER_FIRST_ROUND`): one set per such group, keyed by
    // (pruned, eager).
    let mut groups = closed_groups(configs);
    let finish =
        |runs: &[BestFirst], dfs: &Search, outcome, solution, peak: u64, peak_stored: u64| {
            let expanded = totals(runs).0 + dfs.stats.expanded;
            let stats = Stats {
                expanded,
                proof_expanded: dfs.stats.expanded,
                stored: peak_stored,
                peak_bytes: peak,
                elapsed: t0.elapsed(),
            };
            SolveResult {
                outcome,
                solution,
                stats,
            }
        };
    let portfolio_load = |runs: &[BestFirst], groups: &[((bool, bool), Closed)]| -> (u64, u64) {
        let (gb, gs) = group_load(groups);
        (
            runs.iter().map(|r| r.bytes()).sum::<u64>() + gb,
            totals(runs).1 + gs,
        )
    };
    'rounds: while spent < cap {
        let sharing = SHARE_AFTER_FIRST_ROUND && budget > quota;
        // While the rounds are short, a member's turn ends early when it
        // stops improving (`STAGNATION`), or late, at twice the round's
        // quota, while it keeps improving.
        let round = budget / quota;
        let stag = if round < 1 << STAGNATION_ROUNDS {
            stagnation * round
        } else {
            0
        };
        let round_budget = if stag > 0 { 2 * budget } else { budget };
        for i in 0..configs.len() {
            if budget < configs[i].join {
                continue;
            }
            if i == runs.len() {
                // Start configurations lazily, so that tiny budgets are honoured.
                if totals(&runs).1 + dfs.visited.len() as u64 + 1 > limits.max_positions {
                    break 'rounds;
                }
                let r = BestFirst::new(board, configs[i], limits.max_bytes);
                let (pb, _) = portfolio_load(&runs, &groups);
                if r.bytes() + pb + dfs.bytes() > limits.max_bytes {
                    break 'rounds;
                }
                runs.push(r);
            }
            if exhausted.contains(&(configs[i].pruned, configs[i].eager)) {
                // Another configuration with the same moves and automatic
                // moves has expanded their whole reachable set: only the
                // order differs here, so this one cannot win either.
                runs[i].done = true;
            }
            if runs[i].done {
                continue;
            }
            let others = |runs: &[BestFirst]| -> (u64, u64) {
                let o = runs.iter().enumerate().filter(|(j, _)| *j != i);
                (
                    o.clone().map(|(_, r)| r.bytes()).sum(),
                    o.map(|(_, r)| r.visited.len() as u64).sum(),
                )
            };
            let key = (configs[i].pruned, configs[i].eager);
            let group = groups.iter().position(|g| g.0 == key);
            let (mut bytes_elsewhere, mut stored_elsewhere) = others(&runs);
            // The group set this member adds to is counted by `run`.
            let own = match group {
                Some(g) if sharing && budget > configs[i].join => Some(g),
                _ => None,
            };
            let (gb, gs) = group_load(&groups);
            let (ob, os) = own.map_or((0, 0), |g| group_load(&groups[g..=g]));
            bytes_elsewhere += dfs.bytes() + gb - ob;
            stored_elsewhere += dfs.visited.len() as u64 + gs - os;
            let r = &mut runs[i];
            let before = r.expanded;
            let target = round_budget.min(before + (cap - spent));
            let mut lim = *limits;
            lim.max_positions = limits.max_positions.saturating_sub(stored_elsewhere);
            let closed = own.map(|g| &mut groups[g].1);
            let step = r.run(target, &lim, t0, bytes_elsewhere, closed, stag);
            spent += r.expanded - before;
            let (ob, os) = own.map_or((0, 0), |g| group_load(&groups[g..=g]));
            let r = &runs[i];
            peak = peak.max(bytes_elsewhere + r.bytes() + ob);
            peak_stored = peak_stored.max(stored_elsewhere + r.visited.len() as u64 + os);
            match step {
                Step::Solved(path) => {
                    // Best-first paths are already nearly direct: shortening
                    // them saved one move at the median on MS 1..2000 and
                    // cost 17 % of the CPU, so only depth-first paths
                    // (which wander) are shortened.
                    let eager = runs[i].cfg.eager;
                    let sol = describe(board, &path, eager);
                    return finish(&runs, &dfs, Outcome::Solved, Some(sol), peak, peak_stored);
                }
                Step::Time => {
                    return finish(
                        &runs,
                        &dfs,
                        Outcome::Limit(LimitKind::Time),
                        None,
                        peak,
                        peak_stored,
                    )
                }
                Step::Budget => {}
                Step::Exhausted => {
                    runs[i].done = true;
                    // With a shared set, the group's reachable set is
                    // expanded once every member of it has run dry: each
                    // member expanded every position it queued, unless
                    // another member had.
                    if group.is_some()
                        && sharing
                        && runs
                            .iter()
                            .any(|r| !r.done && (r.cfg.pruned, r.cfg.eager) == key)
                    {
                        continue;
                    }
                    // Running out of moves proves nothing here, not even
                    // for a configuration with every move and safe
                    // automatic moves: the portfolio's visited sets keep 64
                    // bits of each fingerprint (`Seen`). The complete
                    // search decides.
                    exhausted.push(key);
                }
                Step::Limit(_) => break 'rounds,
            }
            if spent >= cap {
                break 'rounds;
            }
        }
        // The complete search's share of the round: it finds the solutions
        // the best-first members miss on some hard deals, and it is the
        // one that proves `unsolvable` (the members are all pruned).
        // A blocked deal (`BLOCKED_HOME`) gives the complete search a larger
        // share, and from an earlier round; so does a deal on which all
        // members but one have run dry (`DRY_FACTOR`).
        let blocked_now = blocked
            .filter(|&(home, from, _)| budget >= from && runs.iter().all(|r| r.best_home <= home))
            .map(|(_, _, f)| f);
        let dry_now = dry.filter(|_| {
            configs.len() > 1 && runs.iter().filter(|r| r.done).count() + 1 >= configs.len()
        });
        let larger_share = blocked_now.or(dry_now);
        if dfs_share > 0 && (budget >= dfs_start || larger_share.is_some()) {
            let (pb, ps) = portfolio_load(&runs, &groups);
            let mut until = dfs.stats.expanded.max(budget / dfs_share);
            if let Some(f) = larger_share {
                until = until.max(f * totals(&runs).0);
                // A long step: room for what it may store, at once, rather
                // than growing the set through every size.
                dfs.reserve(
                    (until - dfs.stats.expanded) as usize,
                    limits.max_bytes.saturating_sub(pb),
                );
            }
            let step = dfs.resume(
                until,
                limits.max_bytes.saturating_sub(pb),
                limits.max_positions.saturating_sub(ps),
            );
            peak = peak.max(pb + dfs.bytes());
            peak_stored = peak_stored.max(ps + dfs.visited.len() as u64);
            match step {
                DfsStep::Done(r) => return merge(r, totals(&runs).0, peak, peak_stored, t0),
                DfsStep::Budget => {}
                DfsStep::Squeezed => break 'rounds,
            }
        }
        budget *= 2;
    }
    // The portfolio found nothing within its budget: the complete search
    // alone decides, with all the memory. An interleaved one that never
    // started simply continues; one that did is replaced by a search with
    // `WEIGHTS` (a different order: the deals that outlast the portfolio are
    // the ones the interleaved order handles badly; its work is at most a
    // quarter of one member's).
    let expanded = totals(&runs).0 + dfs.stats.expanded;
    drop(runs);
    drop(groups);
    if dfs.started {
        dfs = Search::new(board, limits);
        // The time budget is the whole solve's.
        dfs.t0 = t0;
    }
    loop {
        if let DfsStep::Done(r) = dfs.resume(u64::MAX, u64::MAX, u64::MAX) {
            return merge(r, expanded, peak, peak_stored, t0);
        }
    }
}

/// Adds the portfolio's figures to the complete search's result.
fn merge(
    mut r: SolveResult,
    portfolio_expanded: u64,
    peak: u64,
    peak_stored: u64,
    t0: Instant,
) -> SolveResult {
    // `proof_expanded` is the complete search's own count (`Search::finish`).
    r.stats.expanded += portfolio_expanded;
    r.stats.stored = r.stats.stored.max(peak_stored);
    r.stats.elapsed = t0.elapsed();
    r.stats.peak_bytes = r.stats.peak_bytes.max(peak);
    r
}

/// With `DFS_SHARE = k > 0` the complete depth-first search joins the
/// rounds once a member's quota reaches `DFS_START`, with 1/k of it (as a
/// running total); 0 runs it only after the portfolio. A late, small share
/// costs the typical deal nothing and solves some of the hardest 3-cell
/// deals far sooner than any best-first member (docs/SOLVER.md).
pub const DFS_SHARE: u64 = 4;
/// The order of the interleaved complete search (measured: it finds the
/// hardest 3-cell solutions, e.g. MS 26334 and 31281, within a few thousand
/// positions where the best-first members need millions).
pub const INTERLEAVED_WEIGHTS: [i32; 8] = [6, 0, 1, 6, 10, 1, 0, 0];
/// The member quota at which the complete search joins the rounds.
pub const DFS_START: u64 = 3200;

/// A deal is "blocked" at the end of a round with a member quota of at
/// least `BLOCKED_FROM` when no member has yet expanded a position with more
/// than `BLOCKED_HOME` cards home. The complete search then gets, that
/// round, up to `BLOCKED_FACTOR` times the members' expansions so far
/// (instead of a quarter of one member's quota from `DFS_START` on). The
/// members keep their turns, so a blocked deal that is solvable costs at
/// most about `BLOCKED_FACTOR + 1` times what they need; and a deal that
/// gets unblocked (a member reaches more cards home) goes back to the usual
/// share. Members that get nowhere near the foundations are typical of the
/// unsolvable deals, whose proof is the complete search's work anyway, and
/// it expands about twice as fast as they do.
///
/// Measured (session 8; docs/SOLVER.md): MS 11982 with 4 cells 106 k ->
/// 65 k expansions, 61 -> 32 ms; the main job over MS 1..1,000,000 with 4
/// cells 203.13 M -> 204.93 M expansions (186 deals changed: 2.02 M up,
/// 0.23 M down) at the same CPU (233.0 s and 232.0 s on one core per half),
/// the same outcomes; MS 1..32000 with 3 cells 51.11 M -> 52.71 M expansions
/// at the same CPU (38.87 s and 38.86 s), with 4 cells 6.33 M -> 6.31 M.
/// Session 5's form of the rule handed a blocked deal to the complete
/// search alone, unbounded, and cost the main job 41 solvable deals at up
/// to 1,200 times their expansions (711657: 3.7 k -> 4.5 M); here that deal
/// takes 55 k.
pub const BLOCKED_HOME: u32 = 2;
pub const BLOCKED_FROM: u64 = 400;
pub const BLOCKED_FACTOR: u64 = 32;

/// A deal on which all members but one have run dry (each has expanded
/// every position it queued that no other member had) gives the complete
/// search, at the end of each round, up to `DRY_FACTOR` times the members'
/// expansions so far, like a blocked deal. Members that run out of positions
/// are typical of unsolvable deals, where they only wait for the proof; the
/// last member (usually one with parks, which reach positions the pruned
/// moves do not) keeps its turns, so a solvable deal costs at most about
/// `DRY_FACTOR + 1` times what it needs.
///
/// Measured (session 9; docs/SOLVER.md) as a cost that needs no timing, the
/// members' expansions plus half the complete search's (which costs about
/// half as much per expansion): MS 1..32000 with 3 cells -1.7 % (52.71 M ->
/// 52.28 M expansions; 13584 2.18 M -> 1.83 M), 32001..40000 -1.6 %,
/// 40001..48000 -2.0 %; with 4 and 5 cells the same counts on MS 1..32000;
/// MS 1..300 with 2 cells -0.3 %, MS 1..100 with 1 cell +1.9 %. A factor of
/// 16 saved a little more with 3 cells but cost 1 cell +5.5 %.
pub const DRY_FACTOR: u64 = 8;

/// Whether members with the same moves and automatic moves share, from
/// the second round on, the set of positions they have expanded: a member
/// skips a position another has expanded (it still queues what it
/// generates, so no member loses a line only because another has queued
/// it). They split the hard deals' search instead of each repeating it
/// (measured on MS 1..32000 with the portfolio of the time, which still
/// had an unpruned member: expansions 8.05 M -> 7.64 M with 4 cells;
/// 3 cells, with `PORTFOLIO_CAP` 4 M, 85.0 M -> 64.6 M). Sharing every
/// *generated* position instead saved as much in total but let members
/// block each other's lines: MS 11230 with 3 cells went from 28 k
/// expansions to 3.3 M. Sharing from the first round cost 55 % on MS
/// 1..4000 with 4 cells (the members start down nearly the same descent),
/// from the third 0.5 %. Parks reach positions the pruned moves alone do
/// not, so a park member may skip a position whose parks nobody tried;
/// the group's running dry proves nothing anyway and only stops it.
///
/// A member in a greedy descent (the popped position is a child of its
/// last expansion) is only blocked by a position whose line another member
/// has *followed*, i.e. expanded one of its children too (the flag of its
/// entry in `Closed`); a position another member expanded and then left is
/// skipped only outside descents. Without this, MS 11230 with 3 cells took 7.56 M
/// expansions: member 4 expanded positions on member 1's winning line and
/// did not pursue them, so member 1 never could. With it 11230 takes 16 k;
/// MS 1..32000 with 3 cells 64.5 M -> 56.8 M expansions, peak 721 -> 154
/// MB; with 4 cells 7.30 M -> 7.39 M (+1.1 %).
const SHARE_AFTER_FIRST_ROUND: bool = true;

/// One empty set of expanded positions per (pruned, eager) key that more
/// than one configuration has.
fn closed_groups(configs: &[Config]) -> Vec<((bool, bool), Closed)> {
    let mut groups: Vec<((bool, bool), Closed)> = Vec::new();
    for c in configs {
        let k = (c.pruned, c.eager);
        let members = configs.iter().filter(|d| (d.pruned, d.eager) == k).count();
        if members > 1 && !groups.iter().any(|g| g.0 == k) {
            groups.push((k, Closed::default()));
        }
    }
    groups
}

/// Bytes and positions of the shared sets.
fn group_load(groups: &[((bool, bool), Closed)]) -> (u64, u64) {
    (
        groups.iter().map(|g| closed_bytes(g.1.capacity())).sum(),
        groups.iter().map(|g| g.1.len() as u64).sum(),
    )
}

fn totals(runs: &[BestFirst]) -> (u64, u64) {
    (
        runs.iter().map(|r| r.expanded).sum(),
        runs.iter().map(|r| r.visited.len() as u64).sum(),
    )
}

/// Experiment hook: depth-first search with given weights and expansion cap.
pub fn dfs_with(board: &Board, limits: &Limits, cap: u64, w: &[i32; 8]) -> SolveResult {
    let mut s = Search::new(board, limits);
    s.w = *w;
    s.cap = cap;
    s.run()
}

/// Experiment hook: one best-first configuration alone, with a cap.
pub fn best_first_with(
    board: &Board,
    limits: &Limits,
    cap: u64,
    w: &[i32; 8],
    pruned: bool,
) -> SolveResult {
    let t0 = Instant::now();
    let mut r = BestFirst::new(
        board,
        Config {
            weights: *w,
            pruned,
            eager: std::env::var("FCA_EAGER").map_or(true, |e| e == "1"),
            depth_weight: env_u64("FCA_GW", 0) as i32,
            park: std::env::var("FCA_PARK").is_ok(),
            join: 0,
        },
        limits.max_bytes,
    );
    let step = r.run(cap, limits, t0, 0, None, 0);
    let stats = Stats {
        expanded: r.expanded,
        proof_expanded: 0,
        stored: r.visited.len() as u64,
        peak_bytes: r.bytes(),
        elapsed: t0.elapsed(),
    };
    match step {
        Step::Solved(path) => {
            let eager = r.cfg.eager;
            let sol = describe(board, &shorten(board, &path, eager), eager);
            SolveResult {
                outcome: Outcome::Solved,
                solution: Some(sol),
                stats,
            }
        }
        _ => SolveResult {
            outcome: Outcome::Limit(LimitKind::Positions),
            solution: None,
            stats,
        },
    }
}

enum Step {
    Solved(Vec<Move>),
    /// The budget of this round is spent.
    Budget,
    /// Nothing left to expand (proves nothing when pruned).
    Exhausted,
    /// A memory or position limit was reached.
    Limit(#[allow(dead_code)] LimitKind),
    /// The time budget ran out.
    Time,
}

/// A resumable greedy best-first search (global priority queue on the
/// heuristic). Children are materialised lazily: a generated position is
/// only its parent, the move and its depth (12 bytes); a position is packed
/// (`Board::pack`, 80 bytes) only once it is expanded, and rebuilt from its
/// parent when popped (cheaply when the parent is the position just
/// expanded, which greedy descents make the common case).
struct BestFirst {
    cfg: Config,
    /// Every generated position; index 0 is the root.
    nodes: Vec<Child>,
    /// Expanded positions.
    expanded_nodes: Vec<Expanded>,
    /// The lowest heuristic value expanded in turns that can stall, and
    /// when it was reached.
    best_h: i32,
    last_improve: u64,
    /// The most cards home in any position this search has expanded.
    best_home: u32,
    /// Waiting positions (indices into `nodes`) by priority.
    queue: BucketQueue,
    visited: Seen,
    expanded: u64,
    done: bool,
    gen: Vec<Move>,
    parks: Vec<Park>,
    log: Vec<Move>,
    scores: ScoreCache,
    /// The real moves of the park being tried.
    subs: Vec<(Move, usize)>,
    root: Board,
    /// The board of `expanded_nodes[cur_idx]` (the last expansion).
    cur: Board,
    cur_idx: u32,
}

/// A park (`Config::park`): the top `parked` cards of `column` go to free
/// cells, then the card under them goes home or onto another column's top
/// card, in one step. Never leaves the best-first search: `real_path`
/// writes parks out as the moves they are.
#[derive(Copy, Clone, PartialEq, Eq, Debug)]
struct Park {
    column: u8,
    parked: u8,
    to: ParkTo,
}

/// Where a park's buried card goes.
#[derive(Copy, Clone, PartialEq, Eq, Debug)]
enum ParkTo {
    Home,
    Column(u8),
}

/// How a best-first search reaches a generated position from its parent.
#[derive(Copy, Clone, PartialEq, Eq, Debug)]
enum Edge {
    Move(Move),
    Park(Park),
}

/// Plays park `p` as real moves, each followed by its automatic moves, and
/// appends them with their automatic-move counts to `subs`. Stops early if
/// the cells run out or the automatic moves took the card home.
fn play_park(
    b: &mut Board,
    p: Park,
    eager: bool,
    log: &mut Vec<Move>,
    subs: &mut Vec<(Move, usize)>,
) {
    let col = p.column;
    let c = col as usize;
    let target = b.column(c)[b.column_len(c) - 1 - p.parked as usize];
    while b.column(c).contains(&target) && b.column(c)[b.column_len(c) - 1] != target {
        let Some(cell) = (0..b.ncells()).find(|&i| b.cell(i).is_none()) else {
            return;
        };
        let mv = Move::Shift {
            from: Loc::Column(col),
            to: Loc::Cell(cell as u8),
            count: 1,
        };
        b.apply(mv);
        let n = b.autoplay_after(log, mv, eager);
        subs.push((mv, n));
    }
    if b.top(c).map(|t| t.0) == Some(target) {
        let mv = match p.to {
            ParkTo::Home => Move::Home {
                from: Loc::Column(col),
                suit: Card(target).suit(),
            },
            ParkTo::Column(d) => Move::Shift {
                from: Loc::Column(col),
                to: Loc::Column(d),
                count: 1,
            },
        };
        if b.apply_checked(mv).is_ok() {
            let n = b.autoplay_after(log, mv, eager);
            subs.push((mv, n));
        }
    }
}

/// Takes back what `play_park` played.
fn undo_park(b: &mut Board, log: &mut Vec<Move>, subs: &[(Move, usize)]) {
    for &(mv, n) in subs.iter().rev() {
        b.undo_autoplay(log, n);
        b.undo(mv);
    }
}

/// Appends the parks of `b`: for each column card under k cards (k at most
/// the free cells), one to the foundation if it is a suit's next card and
/// one per other column whose top card it builds on; none from a column
/// whose top card could go onto another column instead of a cell (session
/// 14: 3 cells MS 1..4000 4.58 M -> 4.35 M expansions; 4 cells within
/// 0.4 % either way, 1.3 % fewer instructions).
fn gen_parks(b: &Board, out: &mut Vec<Park>) {
    let free = b.empty_cells() as usize;
    if free == 0 {
        return;
    }
    let v = b.variant();
    let need = next_needed(&b.foundations());
    // Per card code, the columns whose top card it builds on (a card of
    // rank r only on one of rank r + 1), from the tops once. Move
    // generation fills the same table inside its own pass over the columns
    // (`Board::gen_moves_inner`); one shared function for both cost 2.6 %.
    let mut onto = [0u16; 64];
    let builds = v.builds_on_table();
    for d in 0..b.ncols() {
        if let Some(t) = b.top(d) {
            let mut x = builds[t.0 as usize];
            while x != 0 {
                onto[x.trailing_zeros() as usize] |= 1 << d;
                x &= x - 1;
            }
        }
    }
    for c in 0..b.ncols() {
        let col = b.column(c);
        let len = col.len();
        // Free space only for a card that can go onto no column (as in
        // `Board::gen_moves_pruned`): the column's top card is parked first.
        if len > 1 && onto[(col[len - 1] & 63) as usize] & !(1 << c) != 0 {
            continue;
        }
        for k in 1..=free.min(len.saturating_sub(1)) {
            let x = col[len - 1 - k];
            if (need >> x) & 1 != 0 {
                out.push(Park {
                    column: c as u8,
                    parked: k as u8,
                    to: ParkTo::Home,
                });
            }
            let mut dst = onto[(x & 63) as usize] & !(1 << c);
            while dst != 0 {
                let d = dst.trailing_zeros() as u8;
                dst &= dst - 1;
                out.push(Park {
                    column: c as u8,
                    parked: k as u8,
                    to: ParkTo::Column(d),
                });
            }
        }
    }
}

/// An expanded position of a best-first search.
struct Expanded {
    board: crate::board::Packed,
    /// Its index in `nodes`.
    node: u32,
    /// The low 64 bits of its fingerprint, where a shared set needed them
    /// (0 otherwise).
    fp: u64,
    /// Its run lengths (`Board::runs`): a child's are these with only the
    /// columns its move changed recomputed.
    runs: u64,
}

/// A generated position: its parent (index in `expanded_nodes`), the edge
/// from the parent (`None` at the root), and its depth.
#[derive(Copy, Clone)]
struct Child {
    parent: u32,
    edge: Option<Edge>,
    depth: u16,
}

const NO_PARENT: u32 = u32::MAX;

/// The best-first queue: one LIFO list per priority (priorities are small
/// integers), threaded through `next`, indexed by position. Pops the lowest
/// priority, and among equals the newest position, in O(1) amortised.
struct BucketQueue {
    /// Per priority `base + i`: the newest waiting position, or `NO_PARENT`.
    heads: Vec<u32>,
    /// Per position: the next older one with the same priority.
    next: Vec<u32>,
    base: i32,
    /// No waiting position has a priority below `base + min`.
    min: usize,
    len: usize,
}

impl BucketQueue {
    fn with_capacity(n: usize) -> Self {
        BucketQueue {
            heads: Vec::new(),
            next: Vec::with_capacity(n),
            base: 0,
            min: 0,
            len: 0,
        }
    }

    fn bytes(&self) -> usize {
        (self.heads.capacity() + self.next.capacity()) * 4
    }

    /// Bytes once positions up to `index` can be queued (counting a
    /// reallocation of `next`).
    fn bytes_after(&self, index: usize) -> usize {
        let n = index + 1;
        let next = if n > self.next.capacity() {
            3 * n
        } else {
            self.next.capacity()
        };
        // `heads` may double when a priority beyond its ends arrives.
        (2 * self.heads.capacity().max(128) + next) * 4
    }

    #[inline(always)]
    fn push(&mut self, priority: i32, index: u32) {
        let mut slot = priority.wrapping_sub(self.base) as u32 as usize;
        if slot >= self.heads.len() {
            slot = self.make_room(priority);
        }
        let i = index as usize;
        let older = self.heads[slot];
        // Positions are queued in the order they are generated, so `next`
        // grows by one (any other order is allowed, and slower).
        if i == self.next.len() {
            self.next.push(older);
        } else {
            if i > self.next.len() {
                self.next.resize(i + 1, NO_PARENT);
            }
            self.next[i] = older;
        }
        self.heads[slot] = index;
        self.min = self.min.min(slot);
        self.len += 1;
    }

    /// Grows `heads` to take `priority` (below `base` or past the end, or
    /// the first push), returning its slot.
    #[cold]
    #[inline(never)]
    fn make_room(&mut self, priority: i32) -> usize {
        if self.heads.is_empty() {
            // Priorities fall towards 0 as a search nears a win (the
            // heuristic's value there; a depth weight adds the depth): room
            // from a little below 0 to a little above the first priority,
            // so that most searches never grow it.
            self.base = priority.min(0) - 64;
            self.heads
                .resize((priority - self.base + 64) as usize, NO_PARENT);
            self.min = self.heads.len();
        }
        if priority < self.base {
            let grow = ((self.base - priority) as usize).max(self.heads.len());
            let mut heads = vec![NO_PARENT; grow];
            heads.extend_from_slice(&self.heads);
            self.heads = heads;
            self.base -= grow as i32;
            self.min += grow;
        }
        let slot = (priority - self.base) as usize;
        if slot >= self.heads.len() {
            let len = (slot + 1).max(self.heads.len() * 2);
            self.heads.resize(len, NO_PARENT);
        }
        slot
    }

    #[inline]
    fn peek(&mut self) -> Option<u32> {
        if self.len == 0 {
            return None;
        }
        while self.heads[self.min] == NO_PARENT {
            self.min += 1;
        }
        Some(self.heads[self.min])
    }

    /// The priority of the position `peek` returns.
    #[inline]
    fn min_priority(&self) -> i32 {
        self.base + self.min as i32
    }

    #[inline]
    fn pop(&mut self) -> Option<u32> {
        let top = self.peek()?;
        self.heads[self.min] = self.next[top as usize];
        self.len -= 1;
        Some(top)
    }
}
/// Initial capacity of a best-first search's tables.
const INITIAL_ROOM: usize = 2048;

/// `INITIAL_ROOM`, or less under a byte budget: the first tables take at
/// most 1/16 of `max_bytes` (a tiny budget is then reached, and reported,
/// honestly instead of by the first allocation).
fn initial_room(max_bytes: u64) -> usize {
    let mut room = INITIAL_ROOM;
    // Visited set, nodes, queue links and heads, packed expansions.
    let per = 9 + 12 + 8 + 84 / 8;
    while room > 16 && (room * per) as u64 > max_bytes / 16 {
        room /= 2;
    }
    room
}

impl BestFirst {
    fn new(board: &Board, cfg: Config, max_bytes: u64) -> Self {
        let room = initial_room(max_bytes);
        let mut b = board.clone();
        // The visited sets keep 64 bits (`Seen`).
        b.set_narrow(true);
        let mut log = Vec::new();
        b.autoplay_quick(&mut log, cfg.eager);
        // Most deals need a few hundred expansions: start with room for
        // them rather than growing the tables through many small sizes.
        // Most deals store a few hundred positions: the set starts at a
        // quarter of the other tables, an eighth of their bytes zeroed.
        let mut visited = Seen::with_capacity(room / 2);
        visited.insert(b.fingerprint() as u64);
        let mut queue = BucketQueue::with_capacity(room);
        // Every queued position's priority is its score plus the depth
        // term, the root's too: `run` takes a popped position's score from
        // its priority.
        queue.push(score(&b, &cfg.weights), 0);
        let mut nodes = Vec::with_capacity(room);
        nodes.push(Child {
            parent: NO_PARENT,
            edge: None,
            depth: 0,
        });
        BestFirst {
            cfg,
            nodes,
            expanded_nodes: Vec::with_capacity(room / 8),
            best_h: i32::MAX,
            last_improve: 0,
            best_home: 0,
            queue,
            visited,
            expanded: 0,
            done: false,
            gen: Vec::new(),
            parks: Vec::new(),
            log,
            scores: ScoreCache::new(max_bytes),
            subs: Vec::new(),
            cur: b.clone(),
            root: b,
            cur_idx: NO_PARENT,
        }
    }

    /// Bytes once `extra` more positions are generated and one more is
    /// expanded (counting reallocations), with the group's set of expanded
    /// positions `closed` if there is one.
    fn bytes_after(&self, extra: usize, closed: Option<&Closed>) -> u64 {
        fn vec_bytes<T>(v: &Vec<T>, extra: usize) -> usize {
            let n = v.len() + extra;
            let size = std::mem::size_of::<T>();
            if n > v.capacity() {
                // The old buffer lives while the new one (double) is filled.
                3 * n * size
            } else {
                v.capacity() * size
            }
        }
        let nodes = vec_bytes(&self.nodes, extra) + vec_bytes(&self.expanded_nodes, 1);
        let heap = self.queue.bytes_after(self.nodes.len() + extra);
        let v = self.visited.len() + extra;
        let set = if v > self.visited.capacity() {
            seen_bytes(self.visited.capacity()) + seen_bytes(v * 2)
        } else {
            seen_bytes(self.visited.capacity())
        };
        let closed = closed.map_or(0, |c| {
            // An expansion adds its position.
            if c.len() + 1 > c.capacity() {
                closed_bytes(c.capacity()) + closed_bytes((c.len() + 1) * 2)
            } else {
                closed_bytes(c.capacity())
            }
        });
        (nodes + heap) as u64 + set + closed + self.scores.bytes()
    }

    fn bytes(&self) -> u64 {
        seen_bytes(self.visited.capacity())
            + (self.nodes.capacity() * std::mem::size_of::<Child>()) as u64
            + (self.expanded_nodes.capacity() * std::mem::size_of::<Expanded>()) as u64
            + self.queue.bytes() as u64
            + self.scores.bytes()
    }

    /// The edges from the root to generated position `i`.
    fn path(&self, mut i: usize) -> Vec<Edge> {
        let mut path = Vec::new();
        while i != 0 {
            let c = self.nodes[i];
            path.push(c.edge.expect("a position other than the root"));
            i = self.expanded_nodes[c.parent as usize].node as usize;
        }
        path.reverse();
        path
    }

    /// `path` with every park written out as its real moves.
    fn real_path(&self, i: usize) -> Vec<Move> {
        let path = self.path(i);
        let mut b = self.root.clone();
        let (mut log, mut subs, mut out) = (Vec::new(), Vec::new(), Vec::new());
        for e in path {
            match e {
                Edge::Park(p) => {
                    subs.clear();
                    play_park(&mut b, p, self.cfg.eager, &mut log, &mut subs);
                    out.extend(subs.iter().map(|x| x.0));
                }
                Edge::Move(m) => {
                    b.apply(m);
                    b.autoplay_after(&mut log, m, self.cfg.eager);
                    out.push(m);
                }
            }
        }
        out
    }

    /// Puts the board of generated position `idx` into `self.cur`, and
    /// returns its run lengths (`Board::runs`).
    fn materialise(&mut self, idx: u32) -> u64 {
        let c = self.nodes[idx as usize];
        if c.parent == NO_PARENT {
            self.cur = self.root.clone();
            return self.cur.runs();
        }
        if c.parent != self.cur_idx {
            self.cur
                .unpack_into(&self.expanded_nodes[c.parent as usize].board);
        }
        match c.edge.expect("a position other than the root") {
            Edge::Park(p) => {
                self.subs.clear();
                play_park(
                    &mut self.cur,
                    p,
                    self.cfg.eager,
                    &mut self.log,
                    &mut self.subs,
                );
            }
            Edge::Move(m) => {
                self.cur.apply(m);
                self.cur.autoplay_after(&mut self.log, m, self.cfg.eager);
            }
        }
        self.log.clear();
        // Both boards (the last expansion's, or the parent unpacked) had no
        // changed columns before the move.
        self.cur.runs_after(
            self.expanded_nodes[c.parent as usize].runs,
            self.cur.changed_columns(),
        )
    }

    /// Expands nodes until `self.expanded == until`, or a limit: the
    /// position and byte budgets of `limits` apply to this search alone
    /// (the caller adds up the portfolio), the time budget to the whole
    /// solve, which started at `t0`.
    ///
    /// `closed`: the positions expanded by this search's group (see
    /// `SHARE_AFTER_FIRST_ROUND`); a popped position in it is skipped (if
    /// followed, when descending), and every position expanded here is
    /// added to it, with a "followed" mark for its parent.
    ///
    /// `stag` (0: none): also stop, with `Step::Budget`, once this turn has
    /// gone `stag` expansions without a new lowest heuristic value
    /// (`STAGNATION`).
    fn run(
        &mut self,
        until: u64,
        limits: &Limits,
        t0: Instant,
        bytes_elsewhere: u64,
        mut closed: Option<&mut Closed>,
        stag: u64,
    ) -> Step {
        if self.root.is_won() {
            return Step::Solved(Vec::new());
        }
        if stag > 0 {
            self.last_improve = self.expanded;
        }
        while self.expanded < until {
            if stag > 0 && self.expanded - self.last_improve >= stag {
                return Step::Budget;
            }
            if self.expanded & 255 == 0
                && limits
                    .max_seconds
                    .is_some_and(|s| t0.elapsed().as_secs_f64() > s)
            {
                return Step::Time;
            }
            let Some(idx) = self.queue.peek() else {
                return Step::Exhausted;
            };
            let prio = self.queue.min_priority();
            // Generate before committing, so that a limit leaves the search
            // resumable exactly where it stopped.
            let descending = self.nodes[idx as usize].parent == self.cur_idx;
            let runs = self.materialise(idx);
            self.cur_idx = NO_PARENT;
            // Only a shared set needs the fingerprint now; settling first
            // means the expansion below does not mix the columns again.
            let fp = match closed.as_deref() {
                Some(c) => {
                    self.cur.settle();
                    let fp = self.cur.fingerprint() as u64;
                    if c.get(&fp).is_some_and(|&followed| followed || !descending) {
                        // Another member of the group has expanded it (and
                        // followed it, if this one is descending).
                        self.queue.pop();
                        continue;
                    }
                    fp
                }
                None => 0,
            };
            let cur = &mut self.cur;
            self.gen.clear();
            if self.cfg.pruned {
                cur.gen_moves_pruned(&mut self.gen, runs);
            } else {
                cur.gen_moves_with_runs(&mut self.gen, runs);
            }
            self.parks.clear();
            if self.cfg.park {
                gen_parks(cur, &mut self.parks);
            }
            let edges = self.gen.len() + self.parks.len();
            let closed_len = closed.as_deref().map_or(0, |c| c.len() + 1);
            if (self.visited.len() + closed_len + edges) as u64 > limits.max_positions {
                return Step::Limit(LimitKind::Positions);
            }
            // Growth of the stores and the visited set is bounded by the
            // children about to be added; stop before exceeding the budget.
            let need = self.bytes_after(edges, closed.as_deref()) + bytes_elsewhere;
            if need > limits.max_bytes {
                return Step::Limit(LimitKind::Bytes);
            }
            self.queue.pop();
            self.expanded += 1;
            if let Some(c) = closed.as_deref_mut() {
                c.entry(fp).or_insert(false);
                let parent = self.nodes[idx as usize].parent;
                if parent != NO_PARENT && self.expanded_nodes[parent as usize].fp != 0 {
                    c.insert(self.expanded_nodes[parent as usize].fp, true);
                }
            }
            let cur = &mut self.cur;
            self.best_home = self.best_home.max(cur.cards_home());
            self.expanded_nodes.push(Expanded {
                board: cur.pack(),
                node: idx,
                fp,
                runs,
            });
            let me = (self.expanded_nodes.len() - 1) as u32;
            self.cur_idx = me;
            let depth = self.nodes[idx as usize].depth + 1;
            cur.settle();
            let mark = cur.dirty_mark();
            // The position's score, from its priority; children that send
            // nothing home are scored from it, without being played: the
            // whole-board part and the parts of the (at most two) columns
            // their move changes are replaced (`ParentParts`).
            let w = self.cfg.weights;
            let h = prio - self.cfg.depth_weight * (depth as i32 - 1);
            debug_assert_eq!(h, score(cur, &w));
            let need = next_needed(&cur.foundations());
            let mut parts = ParentParts::new();
            let col_sum = h - global_score(cur, &w);
            let (home, free, empty) = (
                cur.cards_home() as i32,
                cur.empty_cells() as i32,
                cur.empty_columns() as i32,
            );
            if stag > 0 && h < self.best_h {
                // Only a turn that can stall needs the heuristic value
                // (stalling is limited to the first rounds).
                self.best_h = h;
                self.last_improve = self.expanded;
            }
            let eager = self.cfg.eager;
            let dw = self.cfg.depth_weight;
            let moves = self.gen.len();
            for k in 0..moves + self.parks.len() {
                let e = if k < moves {
                    Edge::Move(self.gen[k])
                } else {
                    Edge::Park(self.parks[k - moves])
                };
                if let Edge::Move(m @ Move::Shift { from, to, count }) = e {
                    if !cur.exposes_home(m, eager) {
                        // A plain move: nothing goes home, so the child is
                        // fingerprinted and scored without being played (it is
                        // never won: the foundations stay as they are).
                        let (fp, ha, hd) = cur.narrow_after(m);
                        if self.visited.insert(fp) {
                            self.nodes.push(Child {
                                parent: me,
                                edge: Some(e),
                                depth,
                            });
                            let scores = &mut self.scores;
                            let s = col_sum
                                + match (from, to) {
                                    (Loc::Column(a), Loc::Column(d)) => {
                                        let (a, d, k) = (a as usize, d as usize, count as usize);
                                        let (la, ld) = (cur.column_len(a), cur.column_len(d));
                                        let e = empty + (la == k) as i32 - (ld == 0) as i32;
                                        global_parts(cur, home, free, e, &w)
                                            + scores.part_without(cur, a, k, ha, need, &w)
                                            + scores.part_onto(
                                                cur,
                                                d,
                                                cur.column(a),
                                                k,
                                                hd,
                                                need,
                                                &w,
                                            )
                                            - parts.get(scores, cur, a, need, &w)
                                            - parts.get(scores, cur, d, need, &w)
                                    }
                                    (Loc::Column(a), Loc::Cell(_)) => {
                                        let a = a as usize;
                                        let e = empty + (cur.column_len(a) == 1) as i32;
                                        global_parts(cur, home, free - 1, e, &w)
                                            + scores.part_without(cur, a, 1, ha, need, &w)
                                            - parts.get(scores, cur, a, need, &w)
                                    }
                                    (Loc::Cell(i), Loc::Column(d)) => {
                                        let d = d as usize;
                                        let e = empty - (cur.column_len(d) == 0) as i32;
                                        let c =
                                            [cur.cell(i as usize).expect("a card in the cell").0];
                                        global_parts(cur, home, free + 1, e, &w)
                                            + scores.part_onto(cur, d, &c, 1, hd, need, &w)
                                            - parts.get(scores, cur, d, need, &w)
                                    }
                                    _ => unreachable!("a cell-to-cell move"),
                                };
                            #[cfg(debug_assertions)]
                            {
                                let mut b = cur.clone();
                                b.apply(m);
                                debug_assert_eq!(s, score(&b, &w));
                            }
                            self.queue
                                .push(s + dw * depth as i32, (self.nodes.len() - 1) as u32);
                        }
                        continue;
                    }
                }
                if let Edge::Park(p) = e {
                    if let ParkTo::Column(d) = p.to {
                        let (c, k, d) = (p.column as usize, p.parked as usize, d as usize);
                        if !cur.exposes_home_within(c, k + 1, eager) {
                            // A park onto a column during which nothing goes
                            // home: like a plain move, worked out unplayed.
                            let (fp, hc, hd) = cur.narrow_after_park(c, k, d);
                            if self.visited.insert(fp) {
                                self.nodes.push(Child {
                                    parent: me,
                                    edge: Some(e),
                                    depth,
                                });
                                let scores = &mut self.scores;
                                let lc = cur.column_len(c);
                                let e = empty + (lc == k + 1) as i32;
                                let target = &cur.column(c)[lc - k - 1..lc - k];
                                let s = col_sum
                                    + global_parts(cur, home, free - k as i32, e, &w)
                                    + scores.part_without(cur, c, k + 1, hc, need, &w)
                                    + scores.part_onto(cur, d, target, 1, hd, need, &w)
                                    - parts.get(scores, cur, c, need, &w)
                                    - parts.get(scores, cur, d, need, &w);
                                #[cfg(debug_assertions)]
                                {
                                    let mut b = cur.clone();
                                    let (mut log, mut subs) = (Vec::new(), Vec::new());
                                    play_park(&mut b, p, eager, &mut log, &mut subs);
                                    debug_assert!(log.is_empty());
                                    debug_assert_eq!(s, score(&b, &w));
                                }
                                self.queue
                                    .push(s + dw * depth as i32, (self.nodes.len() - 1) as u32);
                            }
                            continue;
                        }
                    }
                }
                let n = match e {
                    Edge::Park(p) => {
                        self.subs.clear();
                        play_park(cur, p, eager, &mut self.log, &mut self.subs);
                        0
                    }
                    Edge::Move(m) => {
                        cur.apply(m);
                        cur.autoplay_after(&mut self.log, m, eager)
                    }
                };
                let mut pending = None;
                #[cfg(debug_assertions)]
                let mut full = 0;
                if self.visited.insert(cur.fingerprint() as u64) {
                    self.nodes.push(Child {
                        parent: me,
                        edge: Some(e),
                        depth,
                    });
                    let child = self.nodes.len() - 1;
                    if cur.is_won() {
                        return Step::Solved(self.real_path(child));
                    }
                    // Parks, foundation moves and moves followed by
                    // automatic ones may change the foundations, hence
                    // `need`. A column's part differs from this position's
                    // only if the moves changed it, or it holds a suit's new
                    // next card (the one card whose w2 term appears; a card
                    // that stopped being needed went home, from a changed
                    // column or a cell): those are replaced, the child's
                    // parts now, this position's once undone.
                    let child_need = next_needed(&cur.foundations());
                    let redo = redo_columns(cur, need, child_need);
                    let mut s = global_score(cur, &w) + col_sum;
                    let mut r = redo;
                    while r != 0 {
                        let i = r.trailing_zeros() as usize;
                        r &= r - 1;
                        s += self.scores.col_score(cur, i, child_need, &w);
                    }
                    #[cfg(debug_assertions)]
                    {
                        full = score(cur, &w);
                    }
                    pending = Some((s, child, redo));
                }
                match e {
                    Edge::Park(_) => undo_park(cur, &mut self.log, &self.subs),
                    Edge::Move(m) => {
                        cur.undo_autoplay(&mut self.log, n);
                        cur.undo(m);
                    }
                }
                cur.restore_dirty(mark);
                if let Some((mut s, child, mut redo)) = pending {
                    while redo != 0 {
                        let i = redo.trailing_zeros() as usize;
                        redo &= redo - 1;
                        s -= parts.get(&mut self.scores, cur, i, need, &w);
                    }
                    #[cfg(debug_assertions)]
                    debug_assert_eq!(s, full);
                    self.queue.push(s + dw * depth as i32, child as u32);
                }
            }
        }
        Step::Budget
    }
}

enum DfsStep {
    Done(SolveResult),
    Budget,
    Squeezed,
}

/// The most moves one position has in any variant (10 columns, 10 cells):
/// a bound on the children an expansion of the complete search pushes.
const MAX_CHILDREN: usize = 512;

/// Bytes of the buffer `v` grows into to take `extra` more elements (Vec
/// doubles its capacity, or takes what is needed if that is more).
fn vec_growth<T>(v: &Vec<T>, extra: usize) -> u64 {
    let cap = (v.capacity() * 2).max(v.len() + extra).max(4);
    (cap * std::mem::size_of::<T>()) as u64
}

struct Search<'a> {
    started: bool,
    w: [i32; 8],
    cap: u64,
    start: Board,
    b: Board,
    limits: &'a Limits,
    visited: Visited,
    frames: Vec<Frame>,
    /// Children waiting, per frame: score, move and fingerprint.
    children: Vec<(i32, Move, u128)>,
    auto_log: Vec<Move>,
    scratch: Vec<Move>,
    scores: ScoreCache,
    stats: Stats,
    t0: Instant,
}

impl<'a> Search<'a> {
    fn new(board: &Board, limits: &'a Limits) -> Self {
        Search {
            started: false,
            w: weights(),
            cap: u64::MAX,
            start: board.clone(),
            b: board.clone(),
            limits,
            visited: Visited::default(),
            frames: Vec::new(),
            children: Vec::new(),
            auto_log: Vec::new(),
            scratch: Vec::new(),
            scores: ScoreCache::new(limits.max_bytes),
            stats: Stats::default(),
            t0: Instant::now(),
        }
    }

    /// Room for `n` more positions in the visited set, if the set then
    /// takes at most 1/16 of `max_bytes` (like the portfolio's first tables).
    fn reserve(&mut self, n: usize, max_bytes: u64) {
        let n = n.min(self.limits.max_positions as usize);
        let want = self.visited.len() + n;
        if want > self.visited.capacity() && set_bytes(want) + self.bytes() <= max_bytes / 16 {
            self.visited.reserve(n);
        }
    }

    fn bytes(&self) -> u64 {
        set_bytes(self.visited.capacity())
            + (self.frames.capacity() * std::mem::size_of::<Frame>()) as u64
            + (self.children.capacity() * std::mem::size_of::<(i32, Move, u128)>()) as u64
            + self.scores.bytes()
            + (self.auto_log.capacity() * std::mem::size_of::<Move>()) as u64
    }

    /// Stores the current position, not yet stored, whose fingerprint is
    /// `fp`; `Err` when a budget would be exceeded (bytes: the smaller of
    /// `limits.max_bytes` and `soft_bytes`).
    fn store(&mut self, fp: u128, soft_bytes: u64, soft_positions: u64) -> Result<(), LimitKind> {
        debug_assert_eq!(fp, self.b.fingerprint());
        debug_assert!(!self.visited.contains(&fp));
        if self.visited.len() as u64 >= self.limits.max_positions.min(soft_positions) {
            return Err(LimitKind::Positions);
        }
        // The expansion that follows pushes a frame and up to
        // `MAX_CHILDREN` children: what storing the position and expanding
        // it may allocate is counted before, each growth as a new buffer
        // while the old one still lives. (Until session 14 only the visited
        // set was: on a deep search the frame and child stacks, unchecked,
        // took a deal past a 1 GiB budget to 1.5 GB.)
        let mut grown = 0;
        if self.visited.len() == self.visited.capacity() {
            grown += set_bytes((self.visited.capacity() * 2).max(64));
        }
        if self.frames.len() == self.frames.capacity() {
            grown += vec_growth(&self.frames, 1);
        }
        if self.children.len() + MAX_CHILDREN > self.children.capacity() {
            grown += vec_growth(&self.children, MAX_CHILDREN);
        }
        if grown > 0 {
            let now = self.bytes();
            if now + grown > self.limits.max_bytes.min(soft_bytes) {
                return Err(LimitKind::Bytes);
            }
            self.stats.peak_bytes = self.stats.peak_bytes.max(now + grown);
            self.frames.reserve(1);
            self.children.reserve(MAX_CHILDREN);
        }
        self.visited.insert(fp);
        self.stats.stored += 1;
        Ok(())
    }

    /// Generates, scores and orders the current position's children; `h`
    /// is the position's own score when known (it was scored as a child).
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
        let need = next_needed(&self.b.foundations());
        let prev = mv.filter(|_| autos == 0);
        // Children that send nothing home are scored from this position's
        // score (`ParentParts`).
        let total = h.unwrap_or_else(|| self.scores.score(&self.b, &self.w));
        let global = global_score(&self.b, &self.w);
        let mut parts = ParentParts::new();
        let (home, free, empty) = (
            self.b.cards_home() as i32,
            self.b.empty_cells() as i32,
            self.b.empty_columns() as i32,
        );
        for idx in 0..self.scratch.len() {
            let m = self.scratch[idx];
            if prev.is_some_and(|p| undoes(p, m)) {
                continue;
            }
            if let Move::Shift { from, to, count } = m {
                if !self.b.exposes_home(m, false) {
                    // A move after which nothing goes home: fingerprinted and
                    // scored without being played (never won: the foundations
                    // stay as they are), as in the best-first members.
                    let (fp, ha, hd) = self.b.wide_after(m);
                    if !self.visited.contains(&fp) {
                        let (b, w, scores) = (&self.b, &self.w, &mut self.scores);
                        let s = total - global
                            + match (from, to) {
                                (Loc::Column(a), Loc::Column(d)) => {
                                    let (a, d, k) = (a as usize, d as usize, count as usize);
                                    let (la, ld) = (b.column_len(a), b.column_len(d));
                                    let e = empty + (la == k) as i32 - (ld == 0) as i32;
                                    global_parts(b, home, free, e, w)
                                        + scores.part_without(b, a, k, ha, need, w)
                                        + scores.part_onto(b, d, b.column(a), k, hd, need, w)
                                        - parts.get(scores, b, a, need, w)
                                        - parts.get(scores, b, d, need, w)
                                }
                                (Loc::Column(a), Loc::Cell(_)) => {
                                    let a = a as usize;
                                    let e = empty + (b.column_len(a) == 1) as i32;
                                    global_parts(b, home, free - 1, e, w)
                                        + scores.part_without(b, a, 1, ha, need, w)
                                        - parts.get(scores, b, a, need, w)
                                }
                                (Loc::Cell(i), Loc::Column(d)) => {
                                    let d = d as usize;
                                    let e = empty - (b.column_len(d) == 0) as i32;
                                    let c = [b.cell(i as usize).expect("a card in the cell").0];
                                    global_parts(b, home, free + 1, e, w)
                                        + scores.part_onto(b, d, &c, 1, hd, need, w)
                                        - parts.get(scores, b, d, need, w)
                                }
                                _ => unreachable!("a cell-to-cell move"),
                            };
                        #[cfg(debug_assertions)]
                        {
                            let mut c = self.b.clone();
                            c.apply(m);
                            debug_assert_eq!(s, score(&c, &self.w));
                        }
                        self.children.push((s, m, fp));
                    }
                    continue;
                }
            }
            self.b.apply(m);
            let n = self.b.autoplay_after(&mut self.auto_log, m, false);
            // A foundation move, or one after which cards go home: scored
            // like the members' such children, replacing the parts of the
            // columns that changed or hold a suit's new next card (the
            // child's parts now, this position's once undone).
            let mut pending = None;
            #[cfg(debug_assertions)]
            let mut full = 0;
            let fp = self.b.fingerprint();
            if !self.visited.contains(&fp) {
                if self.b.is_won() {
                    self.children.push((i32::MIN, m, fp));
                } else {
                    let child_need = next_needed(&self.b.foundations());
                    let redo = redo_columns(&self.b, need, child_need);
                    let mut s = global_score(&self.b, &self.w) + total - global;
                    let mut r = redo;
                    while r != 0 {
                        let i = r.trailing_zeros() as usize;
                        r &= r - 1;
                        s += self.scores.col_score(&self.b, i, child_need, &self.w);
                    }
                    #[cfg(debug_assertions)]
                    {
                        full = score(&self.b, &self.w);
                    }
                    pending = Some((self.children.len(), redo));
                    self.children.push((s, m, fp));
                }
            }
            self.b.undo_autoplay(&mut self.auto_log, n);
            self.b.undo(m);
            self.b.restore_dirty(mark);
            if let Some((i, mut redo)) = pending {
                while redo != 0 {
                    let c = redo.trailing_zeros() as usize;
                    redo &= redo - 1;
                    self.children[i].0 -= parts.get(&mut self.scores, &self.b, c, need, &self.w);
                }
                #[cfg(debug_assertions)]
                debug_assert_eq!(self.children[i].0, full);
            }
        }
        // Best last so that the next child is popped from the end cheaply;
        // the stable sort keeps generation order among equals (determinism).
        self.children[start..].sort_by_key(|c| std::cmp::Reverse(c.0));
        let end = self.children.len();
        self.frames.push(Frame {
            mv,
            mark,
            autos,
            start,
            next: end,
            runs,
        });
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
        self.stats.proof_expanded = self.stats.expanded;
        SolveResult {
            outcome,
            solution,
            stats: self.stats,
        }
    }

    fn run(mut self) -> SolveResult {
        loop {
            if let DfsStep::Done(r) = self.resume(u64::MAX, u64::MAX, u64::MAX) {
                return r;
            }
        }
    }

    /// Starts or continues the search until `expanded >= until`. Positions
    /// and bytes are bounded by `limits`, and additionally by `soft_bytes`
    /// while other searches share the budget: exceeding that pauses
    /// (`Squeezed`) without losing the position, to be resumed later.
    fn resume(&mut self, until: u64, soft_bytes: u64, soft_positions: u64) -> DfsStep {
        if !self.started {
            self.started = true;
            let root_autos = self.b.autoplay(&mut self.auto_log);
            if let Err(k) = self.store(self.b.fingerprint(), u64::MAX, u64::MAX) {
                return DfsStep::Done(self.finish(Outcome::Limit(k), None));
            }
            if self.b.is_won() {
                let sol = self.build_solution();
                return DfsStep::Done(self.finish(Outcome::Solved, Some(sol)));
            }
            self.expand(None, root_autos, None);
        }
        loop {
            if self.stats.expanded >= until {
                return DfsStep::Budget;
            }
            let Some(top) = self.frames.last_mut() else {
                return DfsStep::Done(self.finish(Outcome::Unsolvable, None));
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
            let (h, m, fp) = self.children[top.next];
            // Stored since it was generated (by an earlier sibling's
            // subtree): skipped without being played again.
            if self.visited.contains(&fp) {
                continue;
            }
            self.b.apply(m);
            let n = self.b.autoplay_after(&mut self.auto_log, m, false);
            match self.store(fp, soft_bytes, soft_positions) {
                Ok(()) => {}
                Err(k) => {
                    self.b.undo_autoplay(&mut self.auto_log, n);
                    self.b.undo(m);
                    let mark = self.frames.last().unwrap().mark;
                    self.b.restore_dirty(mark);
                    let squeezed = match k {
                        LimitKind::Bytes => soft_bytes < self.limits.max_bytes,
                        LimitKind::Positions => soft_positions < self.limits.max_positions,
                        LimitKind::Time => false,
                    };
                    if squeezed {
                        // Not this search's own limit: retry this child later.
                        self.frames.last_mut().unwrap().next += 1;
                        return DfsStep::Squeezed;
                    }
                    return DfsStep::Done(self.finish(Outcome::Limit(k), None));
                }
            }
            if self.b.is_won() {
                let mark = self.b.dirty_mark();
                self.frames.push(Frame {
                    mv: Some(m),
                    mark,
                    autos: n,
                    start: 0,
                    next: 0,
                    runs: 0,
                });
                let sol = self.build_solution();
                return DfsStep::Done(self.finish(Outcome::Solved, Some(sol)));
            }
            if self.stats.expanded >= self.cap {
                return DfsStep::Done(self.finish(Outcome::Limit(LimitKind::Positions), None));
            }
            if self.stats.expanded & 1023 == 0 && self.over_time() {
                return DfsStep::Done(self.finish(Outcome::Limit(LimitKind::Time), None));
            }
            self.expand(Some(m), n, Some(h));
        }
    }

    /// The path on the stack, shortened, as a `Solution`.
    fn build_solution(&mut self) -> Solution {
        let path: Vec<Move> = self.frames.iter().filter_map(|f| f.mv).collect();
        let path = shorten(&self.start, &path, false);
        describe(&self.start, &path, false)
    }
}

/// Whether `m`, played right after `prev` with no automatic move between,
/// only takes `prev` back: the same cards return where they came from (to
/// any free cell, if from one), so it reaches the position before `prev`
/// up to the order of cells, which fingerprints ignore: a position already
/// stored. Skipping such a child changes nothing but the work (the
/// complete search: the same 9.33 M expansions on the 199 unsolvable 3-cell
/// deals of MS 1..32000, -2 % CPU; the portfolio's pruned moves rarely
/// undo, and there the test cost 2 %). A park from the column `prev` filled
/// is not one.
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

/// Replays `moves` (each followed by automatic moves) from `start`,
/// returning the fingerprints of the positions after each step (index 0 is
/// the start after its automatic moves).
fn path_fingerprints(start: &Board, moves: &[Move], eager: bool) -> Vec<u128> {
    let mut b = start.clone();
    let mut log = Vec::new();
    b.autoplay_quick(&mut log, eager);
    let mut fps = vec![b.fingerprint()];
    for &m in moves {
        b.apply(m);
        b.autoplay_quick(&mut log, eager);
        fps.push(b.fingerprint());
    }
    fps
}

/// Shortens a winning path: from each position, take the move that reaches
/// the furthest later position on the path.
pub fn shorten(start: &Board, moves: &[Move], eager: bool) -> Vec<Move> {
    let fps = path_fingerprints(start, moves, eager);
    let index: std::collections::HashMap<u128, usize> =
        fps.iter().enumerate().map(|(i, &f)| (f, i)).collect();
    let mut b = start.clone();
    let mut log = Vec::new();
    b.autoplay_quick(&mut log, eager);
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
            let n = b.autoplay_quick(&mut log, eager);
            if let Some(&j) = index.get(&b.fingerprint()) {
                if j > best.0 {
                    best = (j, Some(m));
                }
            }
            b.undo_autoplay(&mut log, n);
            b.undo(m);
        }
        let m = best
            .1
            .expect("a path step is always among the generated moves");
        b.apply(m);
        b.autoplay_quick(&mut log, eager);
        out.push(m);
        i = best.0;
    }
    out
}

/// Writes a path out as a `Solution`, automatic moves made explicit.
pub fn describe(start: &Board, path: &[Move], eager: bool) -> Solution {
    let mut b = start.clone();
    // Room for the path and about as many automatic moves.
    let room = 2 * path.len() + 8;
    let mut moves = Vec::with_capacity(room);
    let mut notation = Vec::with_capacity(room);
    let mut auto = Vec::with_capacity(room);
    let mut single: Option<u32> = Some(0);
    let mut log = Vec::new();
    // `after`: the move just played, from a position at the automatic-move
    // fixpoint (`Board::autoplay_after`); None at the start.
    let mut push_autos = |b: &mut Board,
                          after: Option<Move>,
                          moves: &mut Vec<Move>,
                          notation: &mut Vec<crate::board::Notation>,
                          auto: &mut Vec<bool>,
                          single: &mut Option<u32>| {
        log.clear();
        let n = match after {
            Some(m) => b.autoplay_after(&mut log, m, eager),
            None => b.autoplay_quick(&mut log, eager),
        };
        // A foundation move's notation is its source and `h` whatever the
        // position, so they are written as played.
        for &m in &log[log.len() - n..] {
            debug_assert!(m.is_home());
            notation.push(b.notation(m));
            moves.push(m);
            auto.push(true);
            if let Some(s) = single.as_mut() {
                *s += 1;
            }
        }
    };
    push_autos(
        &mut b,
        None,
        &mut moves,
        &mut notation,
        &mut auto,
        &mut single,
    );
    for &m in path {
        notation.push(b.notation(m));
        let cards = m.cards() as u32;
        single = match (single, cards) {
            (Some(s), 1) => Some(s + 1),
            (Some(s), _) => expansion_len(&b, m).map(|e| s + e),
            (None, _) => None,
        };
        b.apply(m);
        moves.push(m);
        auto.push(false);
        push_autos(
            &mut b,
            Some(m),
            &mut moves,
            &mut notation,
            &mut auto,
            &mut single,
        );
    }
    debug_assert!(b.is_won());
    Solution {
        multi_len: moves.len() as u32,
        moves,
        notation,
        auto,
        single_len: single,
    }
}

/// The number of single-card moves `expand_move` writes `m` as, counted
/// without building them.
fn expansion_len(b: &Board, m: Move) -> Option<u32> {
    // Through the cells alone (`Plan::run`'s first case): each card but
    // the last to a cell and back, the last one straight.
    if let Move::Shift {
        from: Loc::Column(_),
        to: Loc::Column(_),
        count,
    } = m
    {
        let k = count as u32;
        if k <= b.empty_cells() + 1 {
            debug_assert_eq!(
                Some(2 * k.max(1) - 1),
                expand_move(b, m).map(|x| x.len() as u32)
            );
            return Some(2 * k.max(1) - 1);
        }
    }
    let mut n = 0;
    plan_move(b, m, &mut |_| n += 1).then_some(n)
}

/// Expands a multi-card move into single-card moves through free cells and
/// empty columns (the standard recursion: park half the run in a helper
/// column, move the rest, bring the half back). `None` when the move is
/// longer than single-card moves can carry (only under `unlimited`).
pub fn expand_move(b: &Board, m: Move) -> Option<Vec<Move>> {
    let mut out = Vec::new();
    plan_move(b, m, &mut |x| out.push(x)).then_some(out)
}

/// Hands `emit` the single-card moves `m` expands to, in order; false when
/// it cannot be expanded. Only column lengths and the free cells decide the
/// plan, so it is made without playing a move.
fn plan_move(b: &Board, m: Move, emit: &mut impl FnMut(Move)) -> bool {
    let Move::Shift {
        from: Loc::Column(a),
        to: Loc::Column(d),
        count,
    } = m
    else {
        emit(m);
        return true;
    };
    if count <= 1 {
        emit(m);
        return true;
    }
    let mut lens = [0u8; crate::variant::MAX_COLUMNS];
    for (i, l) in lens.iter_mut().enumerate().take(b.ncols()) {
        *l = b.column_len(i) as u8;
    }
    let mut free = [0u8; crate::variant::MAX_CELLS];
    let mut nfree = 0;
    for i in 0..b.ncells() {
        if b.cell(i).is_none() {
            free[nfree] = i as u8;
            nfree += 1;
        }
    }
    let plan = Plan {
        free: &free[..nfree],
        any: b.variant().empty == EmptyRule::Any,
    };
    plan.run(
        &mut lens[..b.ncols()],
        a as usize,
        d as usize,
        count as usize,
        emit,
    )
}

/// What a multi-card move's expansion depends on besides column lengths:
/// the free cells (each is empty again once a step is done) and whether
/// an empty column takes any card.
struct Plan<'a> {
    free: &'a [u8],
    any: bool,
}

impl Plan<'_> {
    /// Moves `k` cards from `from` to `to` (lengths in `lens`).
    fn run(
        &self,
        lens: &mut [u8],
        from: usize,
        to: usize,
        k: usize,
        emit: &mut impl FnMut(Move),
    ) -> bool {
        let (f, t) = (Loc::Column(from as u8), Loc::Column(to as u8));
        if k <= self.free.len() + 1 {
            for &cell in &self.free[..k - 1] {
                emit(Move::Shift {
                    from: f,
                    to: Loc::Cell(cell),
                    count: 1,
                });
            }
            emit(Move::Shift {
                from: f,
                to: t,
                count: 1,
            });
            for &cell in self.free[..k - 1].iter().rev() {
                emit(Move::Shift {
                    from: Loc::Cell(cell),
                    to: t,
                    count: 1,
                });
            }
            lens[from] -= k as u8;
            lens[to] += k as u8;
            return true;
        }
        if !self.any {
            return false;
        }
        let empty = |lens: &[u8], i: usize| i != from && i != to && lens[i] == 0;
        let Some(h) = (0..lens.len()).find(|&i| empty(lens, i)) else {
            return false;
        };
        let helpers_left = (0..lens.len())
            .filter(|&i| i != h && empty(lens, i))
            .count() as u32;
        let cap = ((self.free.len() as u32 + 1) << helpers_left.min(20)) as usize;
        let park = cap.min(k - 1);
        if k - park > cap {
            return false;
        }
        self.run(lens, from, h, park, emit)
            && self.run(lens, from, to, k - park, emit)
            && self.run(lens, h, to, park, emit)
    }
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
    let run = |k: u8, results: &mut Vec<(u8, SolveResult)>| -> Outcome {
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
        if results
            .iter()
            .any(|(k, r)| *k < m && r.outcome != Outcome::Unsolvable)
        {
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
    use crate::variant::{MoveRule, Variant};

    fn run(deal: u64, cells: u8) -> SolveResult {
        let b = Board::deal(deal, Variant::default().with_cells(cells)).unwrap();
        solve(&b, &Limits::default())
    }

    fn replay(start: &Board, sol: &Solution) {
        let mut b = start.clone();
        for (i, s) in sol.notation.iter().enumerate() {
            let m = b.parse_move(s.as_str()).unwrap();
            b.apply_checked(m)
                .unwrap_or_else(|e| panic!("move {i} {s}: {e}"));
        }
        assert!(b.is_won());
    }

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

    #[test]
    fn known_answers() {
        for (deal, cells, solvable) in
            [(1, 3, true), (1, 2, false), (617, 4, true), (617, 3, false)]
        {
            let r = run(deal, cells);
            assert_eq!(
                r.outcome,
                if solvable {
                    Outcome::Solved
                } else {
                    Outcome::Unsolvable
                },
                "deal {deal} cells {cells}"
            );
            if let Some(s) = &r.solution {
                replay(
                    &Board::deal(deal, Variant::default().with_cells(cells)).unwrap(),
                    s,
                );
            }
        }
    }

    #[test]
    fn a_blocked_deal_gives_the_complete_search_the_larger_share() {
        // No member gets more than two cards home on 11982 with 4 cells by
        // the end of the 400-quota round (`BLOCKED_HOME`), so the complete
        // search gets 32 times the members' expansions and proves it while
        // they are still running. With the usual share the members ran dry
        // first: 106,477 expansions in all.
        let r = run(11982, 4);
        assert_eq!(r.outcome, Outcome::Unsolvable);
        assert!(r.stats.expanded < 80_000, "{}", r.stats.expanded);
    }

    #[test]
    fn late_members_come_last_in_order_of_joining() {
        // `solve` starts members lazily, in order: a late member before an
        // earlier one would take the earlier one's place in `runs`.
        let joins: Vec<u64> = PORTFOLIO.iter().map(|c| c.join).collect();
        assert!(joins.windows(2).all(|w| w[0] <= w[1]), "{joins:?}");
        assert!(
            joins[0] == 0,
            "the first member must start in the first round"
        );
    }

    #[test]
    fn a_dry_portfolio_gives_the_complete_search_the_larger_share() {
        // On 18356 with 3 cells the members run dry early but for one; with
        // the larger share (`DRY_FACTOR`) the proof ends before the last
        // member has spent its turns: 8,727 expansions in all, 10,058
        // without (session 14; until its move rules, 16129: 3,641 and
        // 4,436, now 4,189 and 4,196).
        let r = run(18356, 3);
        assert_eq!(r.outcome, Outcome::Unsolvable);
        assert!(r.stats.expanded < 9_400, "{}", r.stats.expanded);
        assert!(0 < r.stats.proof_expanded && r.stats.proof_expanded < r.stats.expanded);
    }

    /// Exhaustive search over single-card moves, with or without the safe
    /// automatic moves; `None` when it needs more than `cap` positions.
    fn exhaustive(start: &Board, autos: bool, cap: usize) -> Option<bool> {
        reachable(start, autos, cap).map(|(won, _)| won)
    }

    /// `exhaustive`, and how many positions it stored.
    fn reachable(start: &Board, autos: bool, cap: usize) -> Option<(bool, usize)> {
        let mut seen = std::collections::HashSet::new();
        let mut stack = vec![start.clone()];
        let mut log = Vec::new();
        let mut gen = Vec::new();
        while let Some(mut b) = stack.pop() {
            if autos {
                b.autoplay(&mut log);
            }
            if b.is_won() {
                return Some((true, seen.len()));
            }
            if !seen.insert(b.canonical_key()) {
                continue;
            }
            if seen.len() > cap {
                return None;
            }
            gen.clear();
            b.gen_moves(&mut gen, false);
            for &m in &gen {
                if m.cards() == 1 {
                    let mut c = b.clone();
                    c.apply(m);
                    stack.push(c);
                }
            }
        }
        Some((false, seen.len()))
    }

    /// Positions from late in real games (deals `deals`, walked part of the
    /// way along a solution without automatic moves past the cut, so they
    /// keep cards that could go home), in `v` with 0, 1 and 2 cells: small
    /// enough to search exhaustively, and both won and lost ones occur.
    fn late_positions(v: Variant, deals: std::ops::RangeInclusive<u64>) -> Vec<Board> {
        let single = Variant::default().with_move_rule(MoveRule::Single);
        let mut out = Vec::new();
        for deal in deals {
            let b = Board::deal(deal, single).unwrap();
            let sol = solve(&b, &Limits::default()).solution.unwrap();
            for percent in [25usize, 35, 45, 55, 65, 80] {
                let mut p = b.clone();
                for &m in &sol.moves[..sol.moves.len() * percent / 100] {
                    p.apply(m);
                }
                for cells in [0u8, 1, 2] {
                    let occupied: Vec<Card> = (0..4).filter_map(|i| p.cell(i)).collect();
                    if occupied.len() > cells as usize {
                        continue;
                    }
                    let cols: Vec<Vec<Card>> = (0..8)
                        .map(|i| p.column(i).iter().map(|&c| Card(c)).collect())
                        .collect();
                    let slots: Vec<Option<Card>> = occupied.iter().map(|&c| Some(c)).collect();
                    let q = Board::from_parts(v.with_cells(cells), &cols, &slots, p.foundations());
                    out.push(q.unwrap());
                }
            }
        }
        out
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
    fn a_proof_stores_every_reachable_position() {
        let mut compared = 0;
        for rule in [MoveRule::Product, MoveRule::Doubling] {
            let v = Variant::default().with_move_rule(rule);
            for q in late_positions(v, 1..=120) {
                let Some((false, n)) = reachable(&q, true, 40_000) else {
                    continue;
                };
                let r = dfs_with(&q, &Limits::default(), u64::MAX, &WEIGHTS);
                assert_eq!(r.outcome, Outcome::Unsolvable, "{q}");
                assert_eq!(r.stats.stored, n as u64, "{rule:?}\n{q}");
                compared += 1;
            }
        }
        assert!(compared >= 20, "{compared}");
    }

    /// The complete search counts what the expansion after a store may
    /// allocate: here a full child stack, whose doubling alone would pass
    /// the budget, stops the store as a byte limit; with room, the store
    /// goes on and the stack has room for the expansion's children.
    #[test]
    fn storing_counts_the_stacks_an_expansion_may_grow() {
        let b = Board::deal(1, Variant::default()).unwrap();
        let child = std::mem::size_of::<(i32, Move, u128)>() as u64;
        let n = 1usize << 16;
        for (mb, ok) in [(5u64, false), (7, true)] {
            // The stack takes n * child bytes (2 MiB); doubling, 4 MiB more.
            let limits = Limits {
                max_bytes: mb << 20,
                ..Limits::default()
            };
            let mut s = Search::new(&b, &limits);
            let any = Move::Home {
                from: Loc::Cell(0),
                suit: 0,
            };
            s.children = vec![(0, any, 0); n];
            assert_eq!(s.children.capacity(), n);
            let fp = s.b.fingerprint();
            let r = s.store(fp, u64::MAX, u64::MAX);
            assert_eq!(r.is_ok(), ok, "{mb} MiB: {r:?}");
            if ok {
                assert!(s.children.capacity() >= n + MAX_CHILDREN);
                assert!(s.stats.peak_bytes >= (3 * n) as u64 * child);
                assert!(s.stats.peak_bytes <= limits.max_bytes);
            } else {
                assert_eq!(r, Err(LimitKind::Bytes));
            }
        }
    }

    #[test]
    fn tiny_limits_give_limit() {
        let b = Board::deal(11982, Variant::default()).unwrap();
        let r = solve(
            &b,
            &Limits {
                max_positions: 100,
                ..Limits::default()
            },
        );
        assert_eq!(r.outcome, Outcome::Limit(LimitKind::Positions));
        let r = solve(
            &b,
            &Limits {
                max_bytes: 10_000,
                ..Limits::default()
            },
        );
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
