//! The heuristic both searches order positions by: a weighted sum of terms
//! (`Weights`), lower when a position looks closer to a win. A position's
//! score is a whole-board part plus one part per column; a search scores a
//! child from its parent's score, replacing only the parts of the columns
//! the child's moves change (`Parent`), with the column parts cached by
//! column hash (`Heuristic`). Debug builds compare every score so worked out
//! with `score`, the reference form.

use crate::board::{Board, Loc, Move};
use crate::card::Card;
use crate::variant::{EmptyRule, Variant, MAX_COLUMNS};

/// The heuristic's weights, one per term (docs/SOLVER.md, "The heuristic").
/// The log (docs/solver-log.md) calls them w0..w7, in this order.
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq)]
pub struct Weights {
    /// Cards not yet home.
    pub not_home: i32,
    /// Cards above a lower card of their column (each must move before
    /// that one can go home).
    pub above_lower: i32,
    /// Cards above a suit's next card (digging needed).
    pub above_next: i32,
    /// Occupied cells.
    pub cells_used: i32,
    /// Empty columns, which lower the score (only where an empty column
    /// takes any card).
    pub empty_columns: i32,
    /// Cards below their column's top run.
    pub below_run: i32,
    /// Breaks between a column's runs (separate units to move).
    pub breaks: i32,
    /// The multi-card move capacity, `(1 + empty cells) * (1 + empty
    /// columns)`, which lowers the score (as `empty_columns`).
    pub capacity: i32,
}

impl Weights {
    /// The terms' names, as `tuning.toml` spells them.
    pub const NAMES: [&'static str; 8] = [
        "not_home",
        "above_lower",
        "above_next",
        "cells_used",
        "empty_columns",
        "below_run",
        "breaks",
        "capacity",
    ];

    /// The weight of the term named `name` (one of `NAMES`).
    pub fn get_mut(&mut self, name: &str) -> Option<&mut i32> {
        Some(match name {
            "not_home" => &mut self.not_home,
            "above_lower" => &mut self.above_lower,
            "above_next" => &mut self.above_next,
            "cells_used" => &mut self.cells_used,
            "empty_columns" => &mut self.empty_columns,
            "below_run" => &mut self.below_run,
            "breaks" => &mut self.breaks,
            "capacity" => &mut self.capacity,
            _ => return None,
        })
    }
}

/// The cards each foundation needs next, as a bit set over card codes (a
/// complete foundation's "next card" is a code no card has).
#[inline]
pub(super) fn next_needed(found: &[u8; 4]) -> u64 {
    let mut m = 0u64;
    for (suit, &r) in found.iter().enumerate() {
        m |= 1 << (r as usize * 4 + suit);
    }
    m
}

/// A card code below any card, for the card under a column's first.
const NO_CARD_CODE: u8 = 0xFF;

/// One column's part of the heuristic (see `score`); `need` is
/// `next_needed` of the foundations.
#[inline]
fn column_part(col: &[u8], need: u64, v: Variant, w: &Weights) -> i32 {
    let n = col.len();
    let mut s = 0;
    let mut min_rank = 99u8;
    let mut breaks = 0;
    let mut top_run_start = 0;
    let mut below = NO_CARD_CODE;
    let builds = v.builds_on_table();
    for (d, &c) in col.iter().enumerate() {
        let r = c >> 2;
        s += w.above_lower * (r > min_rank) as i32;
        min_rank = min_rank.min(r);
        if (need >> c) & 1 != 0 {
            s += w.above_next * (n - d - 1) as i32;
        }
        let brk = d > 0 && (builds[(below & 63) as usize] >> (c & 63)) & 1 == 0;
        breaks += brk as i32;
        top_run_start = if brk { d } else { top_run_start };
        below = c;
    }
    s + w.below_run * top_run_start as i32 + w.breaks * breaks
}

/// The whole-board part of a position of `b`'s variant with `home` cards
/// home, `free_cells` empty cells and `empty` empty columns.
#[inline]
fn global_parts(b: &Board, home: i32, free_cells: i32, empty: i32, w: &Weights) -> i32 {
    let occupied = b.ncells() as i32 - free_cells;
    let mut s = w.not_home * (52 - home) + w.cells_used * occupied;
    if b.variant().empty == EmptyRule::Any {
        s -= w.empty_columns * empty + w.capacity * (1 + free_cells) * (1 + empty);
    }
    s
}

/// The whole-board part of `b`'s score.
#[inline]
fn global_part(b: &Board, w: &Weights) -> i32 {
    global_parts(
        b,
        b.cards_home() as i32,
        b.empty_cells() as i32,
        b.empty_columns() as i32,
        w,
    )
}

/// The heuristic, computed whole: lower is closer to a win. The reference
/// form of every score the searches work out otherwise.
#[inline]
pub(super) fn score(b: &Board, w: &Weights) -> i32 {
    let need = next_needed(&b.foundations());
    let v = b.variant();
    let mut s = global_part(b, w);
    for i in 0..b.ncols() {
        s += column_part(b.column(i), need, v, w);
    }
    s
}

/// One search's heuristic: its weights, and the column parts it has
/// computed, by column hash and foundations. Most columns of a position are
/// unchanged from its parent's, so a search asks for the same few again and
/// again. Direct-mapped; a miss just recomputes.
pub(super) struct Heuristic {
    weights: Weights,
    cache: Cache,
}

/// Column parts by column hash and `need`.
struct Cache {
    /// (low 64 bits of the column hash, `need`, part); `need` is never 0,
    /// so zeroed entries never match.
    slots: Vec<(u64, u64, i32)>,
    /// Slots to allocate on first use (a power of two; 0: no cache).
    size: usize,
}

/// Slots of a score cache (docs/solver-log.md: 4,096 did no better).
const CACHE_SLOTS: usize = 1024;

impl Heuristic {
    /// The heuristic with `weights` and an empty cache, whose table is
    /// allocated on first use. Under a small byte budget (`max_bytes`) the
    /// cache is smaller, or none: it takes at most 1/16 of the budget.
    pub(super) fn new(weights: Weights, max_bytes: u64) -> Self {
        let slot = std::mem::size_of::<(u64, u64, i32)>() as u64;
        let mut size = CACHE_SLOTS;
        while size > 0 && size as u64 * slot > max_bytes / 16 {
            size /= 2;
        }
        if size < 16 {
            size = 0;
        }
        Heuristic {
            weights,
            cache: Cache {
                slots: Vec::new(),
                size,
            },
        }
    }

    /// Its weights, for the debug checks against `score`.
    #[cfg(debug_assertions)]
    pub(super) fn weights(&self) -> &Weights {
        &self.weights
    }

    /// The cache's bytes, counted from the start, allocated or not.
    pub(super) fn bytes(&self) -> u64 {
        (self.cache.size * std::mem::size_of::<(u64, u64, i32)>()) as u64
    }

    /// `score`, with the column parts through the cache.
    #[inline]
    pub(super) fn score(&mut self, b: &Board) -> i32 {
        let need = next_needed(&b.foundations());
        let mut s = global_part(b, &self.weights);
        for i in 0..b.ncols() {
            s += self.column(b, i, need);
        }
        s
    }

    /// Column `i`'s part.
    #[inline]
    fn column(&mut self, b: &Board, i: usize, need: u64) -> i32 {
        let w = &self.weights;
        self.cache.part(b.column_hash(i) as u64, need, || {
            column_part(b.column(i), need, b.variant(), w)
        })
    }

    /// The part of column `i` once its top `k` cards are gone; `h` is its
    /// hash then (`Board::narrow_after`).
    #[inline]
    fn part_without(&mut self, b: &Board, i: usize, k: usize, h: u64, need: u64) -> i32 {
        let w = &self.weights;
        self.cache.part(h, need, || {
            let col = b.column(i);
            column_part(&col[..col.len() - k], need, b.variant(), w)
        })
    }

    /// The part of column `i` once the top `k` cards of `from` are put on
    /// it; `h` is its hash then (`Board::narrow_after`).
    #[inline]
    fn part_onto(&mut self, b: &Board, i: usize, from: &[u8], k: usize, h: u64, need: u64) -> i32 {
        let w = &self.weights;
        self.cache.part(h, need, || {
            let mut col = *b.column_array(i);
            let l = b.column_len(i);
            col[l..l + k].copy_from_slice(&from[from.len() - k..]);
            column_part(&col[..l + k], need, b.variant(), w)
        })
    }
}

impl Cache {
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
}

/// A position being expanded, for scoring its children (both searches): a
/// child differs from it in the columns its moves changed, so its score is
/// the position's with the whole-board part and those columns' parts
/// replaced. The position's own column parts are looked up once each, as
/// children need them.
pub(super) struct Parent {
    /// `next_needed` of its foundations.
    need: u64,
    /// Its score less the whole-board part: the sum of its column parts.
    columns: i32,
    /// Cards home, empty cells and empty columns.
    home: i32,
    free: i32,
    empty: i32,
    /// Its column parts looked up so far.
    parts: [Option<i32>; MAX_COLUMNS],
}

/// A played child's score but for the parts of the parent's columns it
/// replaces (`Parent::played`), subtracted once its moves are undone
/// (`Parent::finish`).
#[derive(Copy, Clone, Debug)]
pub(super) struct Unfinished {
    score: i32,
    /// The columns whose parts are replaced.
    redo: u16,
}

impl Parent {
    /// Position `b`, whose score is `score`.
    #[inline]
    pub(super) fn new(b: &Board, score: i32, h: &Heuristic) -> Self {
        Parent {
            need: next_needed(&b.foundations()),
            columns: score - global_part(b, &h.weights),
            home: b.cards_home() as i32,
            free: b.empty_cells() as i32,
            empty: b.empty_columns() as i32,
            parts: [None; MAX_COLUMNS],
        }
    }

    /// The position's part of column `c` (`b` is the position).
    #[inline]
    fn part(&mut self, h: &mut Heuristic, b: &Board, c: usize) -> i32 {
        let need = self.need;
        *self.parts[c].get_or_insert_with(|| h.column(b, c, need))
    }

    /// The score of the child that `m` reaches from `b`, a move between
    /// columns and cells after which nothing goes home
    /// (`Board::exposes_home`), worked out without playing it; `ha` and
    /// `hd` are the low 64 bits of the source's and the destination's new
    /// hashes (`Board::narrow_after`, `Board::wide_after`).
    #[inline]
    pub(super) fn plain(&mut self, h: &mut Heuristic, b: &Board, m: Move, ha: u64, hd: u64) -> i32 {
        let Move::Shift { from, to, count } = m else {
            unreachable!("a move home")
        };
        let (need, home, free, empty) = (self.need, self.home, self.free, self.empty);
        self.columns
            + match (from, to) {
                (Loc::Column(a), Loc::Column(d)) => {
                    let (a, d, k) = (a as usize, d as usize, count as usize);
                    let (la, ld) = (b.column_len(a), b.column_len(d));
                    let e = empty + (la == k) as i32 - (ld == 0) as i32;
                    global_parts(b, home, free, e, &h.weights)
                        + h.part_without(b, a, k, ha, need)
                        + h.part_onto(b, d, b.column(a), k, hd, need)
                        - self.part(h, b, a)
                        - self.part(h, b, d)
                }
                (Loc::Column(a), Loc::Cell(_)) => {
                    let a = a as usize;
                    let e = empty + (b.column_len(a) == 1) as i32;
                    global_parts(b, home, free - 1, e, &h.weights)
                        + h.part_without(b, a, 1, ha, need)
                        - self.part(h, b, a)
                }
                (Loc::Cell(i), Loc::Column(d)) => {
                    let d = d as usize;
                    let e = empty - (b.column_len(d) == 0) as i32;
                    let c = [b.cell(i as usize).expect("a card in the cell").0];
                    global_parts(b, home, free + 1, e, &h.weights)
                        + h.part_onto(b, d, &c, 1, hd, need)
                        - self.part(h, b, d)
                }
                (Loc::Cell(_), Loc::Cell(_)) => unreachable!("a cell-to-cell move"),
            }
    }

    /// The score of the child that a park reaches from `b` (the top `k`
    /// cards of column `c` to cells, the card under them onto column `d`)
    /// when nothing goes home on the way, worked out without playing it;
    /// `hc` and `hd` are the new hashes of `c` and `d`
    /// (`Board::narrow_after_park`).
    #[inline]
    #[allow(clippy::too_many_arguments)]
    pub(super) fn park(
        &mut self,
        h: &mut Heuristic,
        b: &Board,
        c: usize,
        k: usize,
        d: usize,
        hc: u64,
        hd: u64,
    ) -> i32 {
        let need = self.need;
        let lc = b.column_len(c);
        let e = self.empty + (lc == k + 1) as i32;
        let target = &b.column(c)[lc - k - 1..lc - k];
        self.columns
            + global_parts(b, self.home, self.free - k as i32, e, &h.weights)
            + h.part_without(b, c, k + 1, hc, need)
            + h.part_onto(b, d, target, 1, hd, need)
            - self.part(h, b, c)
            - self.part(h, b, d)
    }

    /// The score of `child`, a position just played from this one (moves
    /// that may send cards home, which changes the foundations, hence
    /// `need`), but for this position's parts of the columns it replaces:
    /// those the moves changed, and those holding a suit's new next card
    /// (the one card whose `above_next` term appears; a card that stopped
    /// being needed went home, from a changed column or a cell). The
    /// child's parts are added now, this position's subtracted by `finish`
    /// once the moves are undone.
    #[inline]
    pub(super) fn played(&mut self, h: &mut Heuristic, child: &Board) -> Unfinished {
        let child_need = next_needed(&child.foundations());
        let redo = redo_columns(child, self.need, child_need);
        let mut score = global_part(child, &h.weights) + self.columns;
        let mut r = redo;
        while r != 0 {
            let i = r.trailing_zeros() as usize;
            r &= r - 1;
            score += h.column(child, i, child_need);
        }
        Unfinished { score, redo }
    }

    /// The score of a played child (`played`), `b` being this position again.
    #[inline]
    pub(super) fn finish(&mut self, h: &mut Heuristic, b: &Board, u: Unfinished) -> i32 {
        let (mut score, mut redo) = (u.score, u.redo);
        while redo != 0 {
            let i = redo.trailing_zeros() as usize;
            redo &= redo - 1;
            score -= self.part(h, b, i);
        }
        score
    }
}

/// The columns of `child` (a position just reached by moves from one whose
/// next cards were `need`; `child_need` is its own) whose parts of the
/// heuristic may differ from that position's: those the moves changed
/// (`Board::changed_columns`), and those holding a suit's new next card,
/// the one card whose `above_next` term appears. (A card that stopped being
/// a next card went home, from a changed column or a cell.)
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
