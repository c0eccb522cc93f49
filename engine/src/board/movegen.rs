//! Move generation: every legal move, the complete search's moves and the
//! portfolio's pruned ones, each optimised generator checked in debug builds
//! against the shared reference form (`gen_moves_inner`).

use super::moves::{Loc, Move};
use super::{Board, COL_CAP, NO_CARD};
use crate::card::Card;
use crate::variant::MAX_COLUMNS;

/// Each suit's next card as a bit set over card codes (a complete suit's
/// is a code past 51, which no card has).
#[inline(always)]
fn next_cards(found: [u8; 4]) -> u64 {
    let f = u32::from_le_bytes(found);
    (1u64 << (4 * (f & 0xFF)))
        | (1u64 << (4 * ((f >> 8) & 0xFF) + 1))
        | (1u64 << (4 * ((f >> 16) & 0xFF) + 2))
        | (1u64 << (4 * (f >> 24) + 3))
}

impl Board {
    /// Generates moves. With `all`, every legal move (moves to each empty cell
    /// and each empty column, whole columns into empty columns); without, one
    /// representative per canonical result (first empty cell, first empty
    /// column, no whole-column moves into an empty column).
    pub fn gen_moves(&self, out: &mut Vec<Move>, all: bool) {
        self.gen_moves_inner(out, all, false, false, None);
    }

    /// The complete search's moves: `gen_moves(out, false)` less a single
    /// card into an empty column while a cell is free, with the run lengths
    /// given (`runs`, or `runs_after` from the previous position's).
    ///
    /// The move left out reaches no position the search would miss: the
    /// card to a cell, then from the cell into the column, reaches the same
    /// one (the same cards are accessible after either first move, so the
    /// same automatic moves follow, and the column is still empty). The
    /// search stores the same set of positions, with fewer children to
    /// generate and look up on the way (docs/solver-log.md; tests
    /// `a_card_left_out_of_an_empty_column_gets_there_through_a_cell`,
    /// `solver::complete::tests::a_proof_stores_every_reachable_position`).
    #[inline]
    pub fn gen_moves_with_runs(&self, out: &mut Vec<Move>, runs: u64) {
        self.gen_moves_checked::<false>(out, runs);
    }

    /// Every column's `run_len`, 4 bits each, column 0 lowest (a run is at
    /// most 13 cards).
    #[inline]
    pub fn runs(&self) -> u64 {
        self.runs_after(0, (1 << self.ncols()) - 1)
    }

    /// `runs` of this board, given those of a position it differs from only
    /// in the columns of `changed` (a `changed_columns` set).
    #[inline]
    pub fn runs_after(&self, mut runs: u64, mut changed: u16) -> u64 {
        while changed != 0 {
            let i = changed.trailing_zeros() as usize;
            changed &= changed - 1;
            runs = (runs & !(15 << (4 * i))) | (self.run_len(i) as u64) << (4 * i);
        }
        runs
    }

    /// Shared generator: with `pruned`, moves that break a run are left out
    /// (see `gen_moves_pruned`); with `cell_first`, a single card into an
    /// empty column while a cell is free (see `gen_moves_with_runs`).
    #[inline(always)]
    #[allow(clippy::needless_range_loop)] // parallel per-column arrays
    fn gen_moves_inner(
        &self,
        out: &mut Vec<Move>,
        all: bool,
        pruned: bool,
        cell_first: bool,
        col_runs: Option<u64>,
    ) {
        let v = self.variant;
        let nc = self.ncols();
        let ncells = self.ncells();
        // Column to column (below) looks up `onto_cols[card]`: the set of
        // columns whose top card `card` builds on (a card of rank r can only
        // go onto one of the cards of rank r + 1), filled from the columns'
        // tops, so each source needs one lookup per run card instead of a
        // scan of every destination.
        let mut onto_cols = [0u16; 52];
        // For each suit, the suits of the cards that build on it (one rank
        // lower).
        let under_suits: [u8; 4] = std::array::from_fn(|suit| {
            (0..4u8)
                .filter(|&u| v.builds_on(Card::new(0, u), Card::new(1, suit as u8)))
                .fold(0, |m, u| m | 1 << u)
        });
        // One pass over the columns, then one over the cells: run lengths,
        // empties, `onto_cols`, and the moves to the foundations (columns'
        // first, then cells').
        let mut runs = [0usize; MAX_COLUMNS];
        let mut empty_cols = 0u32;
        let mut first_empty_col = usize::MAX;
        for i in 0..nc {
            let l = self.lens[i] as usize;
            if l == 0 {
                empty_cols += 1;
                if first_empty_col == usize::MAX {
                    first_empty_col = i;
                }
                continue;
            }
            runs[i] = match col_runs {
                Some(r) => (r >> (4 * i)) as usize & 15,
                None => self.run_len(i),
            };
            let t = Card(self.cols[i][l - 1]);
            if self.can_found(t) {
                out.push(Board::home_move(Loc::Column(i as u8), t));
            }
            if t.rank() > 0 {
                let below = (t.rank() as usize - 1) * 4;
                let mut suits = under_suits[t.suit() as usize];
                while suits != 0 {
                    onto_cols[below + suits.trailing_zeros() as usize] |= 1 << i;
                    suits &= suits - 1;
                }
            }
        }
        let mut empty_cells = 0u32;
        let mut first_empty_cell = usize::MAX;
        for i in 0..ncells {
            let c = self.cells[i];
            if c == NO_CARD {
                empty_cells += 1;
                if first_empty_cell == usize::MAX {
                    first_empty_cell = i;
                }
            } else if self.can_found(Card(c)) {
                out.push(Board::home_move(Loc::Cell(i as u8), Card(c)));
            }
        }
        let limit_onto = v.max_run(empty_cells, empty_cols) as usize;
        let limit_empty = if empty_cols > 0 {
            v.max_run(empty_cells, empty_cols - 1) as usize
        } else {
            0
        };
        let movable = self.movable_cards(
            runs[..nc]
                .iter()
                .enumerate()
                .fold(0, |r, (i, &n)| r | (n as u64) << (4 * i)),
        );
        // Moves are emitted by source, then destination.
        // The columns whose top card `c` builds on, as a bit set.
        let parents = |c: Card| -> u16 { onto_cols[c.0 as usize] };
        let empty_dst: u16 = if empty_cols == 0 {
            0
        } else if all {
            (0..nc)
                .filter(|&i| self.lens[i] == 0)
                .fold(0, |m, i| m | 1 << i)
        } else {
            1 << first_empty_col
        };
        for src in 0..nc {
            let len = self.lens[src] as usize;
            if len == 0 {
                continue;
            }
            let run = runs[src];
            let col = &self.cols[src];
            // Per destination, the number of cards that fit on its top.
            let mut onto = [0u8; MAX_COLUMNS];
            let mut mask = 0u16;
            let first_k = if pruned { run } else { 1 };
            for k in first_k..=run {
                if k > 1 && k > limit_onto {
                    break;
                }
                let mut p = parents(Card(col[len - k]));
                mask |= p;
                while p != 0 {
                    onto[p.trailing_zeros() as usize] = k as u8;
                    p &= p - 1;
                }
            }
            let mut bits = mask | empty_dst;
            while bits != 0 {
                let dst = bits.trailing_zeros() as usize;
                bits &= bits - 1;
                if self.lens[dst] > 0 {
                    out.push(Move::Shift {
                        from: Loc::Column(src as u8),
                        to: Loc::Column(dst as u8),
                        count: onto[dst],
                    });
                } else {
                    let lim = limit_empty.min(run);
                    for k in 1..=lim {
                        if !all && k == len {
                            continue; // same canonical position
                        }
                        if pruned && !(k == 1 || k == run || k == lim) {
                            continue;
                        }
                        if pruned && k == run && mask != 0 {
                            continue; // the whole run can go onto a column
                        }
                        if pruned && k == 1 && k < len && !self.exposes_a_use(src, movable) {
                            continue;
                        }
                        if cell_first && k == 1 && empty_cells > 0 {
                            continue;
                        }
                        if v.fills_empty(Card(col[len - k])) {
                            out.push(Move::Shift {
                                from: Loc::Column(src as u8),
                                to: Loc::Column(dst as u8),
                                count: k as u8,
                            });
                        }
                    }
                }
            }
        }
        // Cell to column (destinations by the same lookup).
        for i in 0..ncells {
            let c = self.cells[i];
            if c == NO_CARD {
                continue;
            }
            let c = Card(c);
            let mut mask = parents(c);
            let takes_none =
                || (0..52u8).all(|x| !v.builds_on(Card(x), c) || movable & 1 << x == 0);
            if v.fills_empty(c) && !(pruned && (mask != 0 || takes_none())) {
                mask |= empty_dst;
            }
            while mask != 0 {
                let dst = mask.trailing_zeros();
                mask &= mask - 1;
                out.push(Move::Shift {
                    from: Loc::Cell(i as u8),
                    to: Loc::Column(dst as u8),
                    count: 1,
                });
            }
        }
        // Column to cell.
        if empty_cells > 0 {
            for src in 0..nc {
                if self.lens[src] == 0 || (pruned && runs[src] > 1) {
                    continue;
                }
                let len = self.lens[src] as usize;
                if pruned && parents(Card(self.cols[src][len - 1])) != 0 {
                    continue;
                }
                if !all {
                    let cell = first_empty_cell as u8;
                    out.push(Move::Shift {
                        from: Loc::Column(src as u8),
                        to: Loc::Cell(cell),
                        count: 1,
                    });
                    continue;
                }
                for cell in 0..ncells {
                    if self.cells[cell] == NO_CARD {
                        out.push(Move::Shift {
                            from: Loc::Column(src as u8),
                            to: Loc::Cell(cell as u8),
                            count: 1,
                        });
                    }
                }
            }
        }
    }

    /// The cards that could go onto a column's new top card: the base of
    /// each column's top run (`runs`, as `Board::runs`) and the cards in
    /// the cells, as a bit set over card codes.
    #[inline]
    fn movable_cards(&self, runs: u64) -> u64 {
        let mut m = 0u64;
        for j in 0..self.ncols() {
            let l = self.lens[j] as usize;
            if l > 0 {
                let r = ((runs >> (4 * j)) & 15) as usize;
                m |= 1 << (self.cols[j][(l - r) & (COL_CAP - 1)] & 63);
            }
        }
        for &x in &self.cells[..self.ncells()] {
            if x != NO_CARD {
                m |= 1 << (x & 63);
            }
        }
        m
    }

    /// Whether taking the top card off column `src` (which has another
    /// card under it) gives the card under it a use: it can go home, or
    /// onto a column's top (the card taken off included, wherever it goes:
    /// a higher card on a lower one is put right that way), or some card of
    /// `movable` (`movable_cards`) other than the one taken off could go
    /// onto it.
    fn exposes_a_use(&self, src: usize, movable: u64) -> bool {
        let (col, len) = (&self.cols[src], self.lens[src] as usize);
        let (top, under) = (col[len - 1], Card(col[len - 2]));
        if self.can_found(under) {
            return true;
        }
        let v = self.variant;
        let onto_column = (0..self.ncols())
            .filter_map(|j| self.top(j))
            .any(|t| v.builds_on(under, t));
        let takes = v.builds_on_table()[under.0 as usize] & movable & !(1 << top);
        onto_column || takes != 0
    }

    /// The moves the heuristic phase tries: `gen_moves_with_runs` minus
    /// - moves that break a run: part of a run onto another column, the top
    ///   card of a run to a cell, and a part of a run into an empty column
    ///   other than a single card and as much as fits;
    /// - free space spent on cards a column would take: a card
    ///   goes to a cell, from a cell into an empty column, or as a whole
    ///   run into an empty column, only if it can go onto no column;
    /// - an empty column used for nothing: a card leaves a
    ///   cell for an empty column only if some card could then go onto it
    ///   (the base of a column's top run or a card in a cell,
    ///   `movable_cards`), and a single card goes into one from a column
    ///   (which happens only while no cell is free) only if that gives the
    ///   card under it a use (`exposes_a_use`).
    ///
    /// Incomplete on purpose (the complete search uses
    /// `gen_moves_with_runs`): these are the moves a player would not make,
    /// and leaving them out cut the members' expansions by about a fifth
    /// (docs/solver-log.md). The run lengths are given (`runs`, or
    /// `runs_after` from the previous position's).
    ///
    /// The same moves in the same order as the shared generator
    /// (`gen_moves_inner` with `pruned`, which debug builds compare), by a
    /// generator of its own: every source moves its whole top run, so one
    /// table lookup per source finds its destinations, and the members
    /// call it once per expansion.
    #[inline]
    pub fn gen_moves_pruned(&self, out: &mut Vec<Move>, runs: u64) {
        self.gen_moves_checked::<true>(out, runs);
    }

    /// `gen_moves_pruned_fast` or `gen_moves_all_fast`, which debug builds
    /// compare with the shared generator (and `runs` with `runs()`).
    #[inline(always)]
    fn gen_moves_checked<const PRUNED: bool>(&self, out: &mut Vec<Move>, runs: u64) {
        debug_assert_eq!(runs, self.runs());
        #[cfg(debug_assertions)]
        let start = out.len();
        if PRUNED {
            self.gen_moves_pruned_fast(out, runs);
        } else {
            self.gen_moves_all_fast(out, runs);
        }
        #[cfg(debug_assertions)]
        {
            let mut want = Vec::new();
            self.gen_moves_inner(&mut want, false, PRUNED, true, Some(runs));
            debug_assert_eq!(&out[start..], &want[..], "{self:?}");
        }
    }

    /// The generator of `gen_moves_pruned`: the shared generator's moves
    /// (`gen_moves_inner` with `pruned`) in its order. One pass over the
    /// columns finds their tops (a bit set, and the column of each) and the
    /// empty ones; the moves home come from the tops and a bit set of the
    /// suits' next cards; every source moves its whole top run, so one
    /// table lookup per non-empty column finds its destinations; only
    /// occupied cells are visited; and the rare case, an empty column to
    /// fill, is kept off the common path.
    #[inline(always)]
    fn gen_moves_pruned_fast(&self, out: &mut Vec<Move>, runs: u64) {
        let v = self.variant;
        let (nc, ncells) = (self.ncols(), self.ncells());
        let parents = v.parents_table();
        let mut tops = 0u64;
        let mut top_col = [0u8; 64];
        let mut empty_mask = 0u16;
        for i in 0..nc {
            let l = self.lens[i] as usize;
            if l == 0 {
                empty_mask |= 1 << i;
            } else {
                let t = self.cols[i][(l - 1) & (COL_CAP - 1)] & 63;
                tops |= 1 << t;
                top_col[t as usize] = i as u8;
            }
        }
        // The moves home, columns first (in column order), then cells.
        let need = next_cards(self.found);
        let mut home = tops & need;
        if home != 0 {
            let mut cols = 0u16;
            while home != 0 {
                cols |= 1 << top_col[home.trailing_zeros() as usize];
                home &= home - 1;
            }
            while cols != 0 {
                let i = cols.trailing_zeros() as usize;
                cols &= cols - 1;
                let t = self.cols[i][(self.lens[i] as usize - 1) & (COL_CAP - 1)];
                out.push(Move::Home {
                    from: Loc::Column(i as u8),
                    suit: t & 3,
                });
            }
        }
        let onto_cols = |c: u8| -> u16 {
            let mut p = parents[(c & 63) as usize] & tops;
            let mut m = 0u16;
            while p != 0 {
                m |= 1 << top_col[p.trailing_zeros() as usize];
                p &= p - 1;
            }
            m
        };
        let mut free_cells = 0u16;
        let mut held_cells = 0u16;
        for i in 0..ncells {
            let c = self.cells[i];
            if c == NO_CARD {
                free_cells |= 1 << i;
            } else {
                held_cells |= 1 << i;
                if need >> (c & 63) & 1 != 0 {
                    out.push(Move::Home {
                        from: Loc::Cell(i as u8),
                        suit: c & 3,
                    });
                }
            }
        }
        let empty_cells = free_cells.count_ones();
        let empty_cols = empty_mask.count_ones();
        let limit_onto = v.max_run(empty_cells, empty_cols) as usize;
        // One empty column stands for all (the same canonical position).
        let empty_dst = empty_mask & empty_mask.wrapping_neg();
        let columns = ((1u32 << nc) - 1) as u16 & !empty_mask;
        // The lone cards that can go onto no column (to a cell).
        let mut to_cell = 0u16;
        if empty_dst == 0 {
            let mut sources = columns;
            while sources != 0 {
                let src = sources.trailing_zeros() as usize;
                sources &= sources - 1;
                let len = self.lens[src] as usize;
                let run = ((runs >> (4 * src)) & 15) as usize;
                if run > 1 && run > limit_onto {
                    continue;
                }
                let mut mask = onto_cols(self.cols[src][(len - run) & (COL_CAP - 1)]);
                if mask == 0 {
                    to_cell |= ((run == 1) as u16) << src;
                    continue;
                }
                while mask != 0 {
                    let dst = mask.trailing_zeros() as u8;
                    mask &= mask - 1;
                    out.push(Move::Shift {
                        from: Loc::Column(src as u8),
                        to: Loc::Column(dst),
                        count: run as u8,
                    });
                }
            }
            let mut held = held_cells;
            while held != 0 {
                let i = held.trailing_zeros() as u8;
                held &= held - 1;
                let mut mask = onto_cols(self.cells[i as usize]);
                while mask != 0 {
                    let dst = mask.trailing_zeros() as u8;
                    mask &= mask - 1;
                    out.push(Move::Shift {
                        from: Loc::Cell(i),
                        to: Loc::Column(dst),
                        count: 1,
                    });
                }
            }
        } else {
            let limit_empty = v.max_run(empty_cells, empty_cols - 1) as usize;
            // The cards that could go onto a card put into the empty
            // column (`gen_moves_pruned`).
            let movable = self.movable_cards(runs);
            let mut sources = columns;
            while sources != 0 {
                let src = sources.trailing_zeros() as usize;
                sources &= sources - 1;
                let len = self.lens[src] as usize;
                let run = ((runs >> (4 * src)) & 15) as usize;
                let col = &self.cols[src];
                let mut mask = 0u16;
                if run == 1 || run <= limit_onto {
                    mask = onto_cols(col[(len - run) & (COL_CAP - 1)]);
                }
                if run == 1 && mask == 0 {
                    to_cell |= 1 << src;
                }
                let mut bits = mask | empty_dst;
                while bits != 0 {
                    let dst = bits.trailing_zeros() as u8;
                    bits &= bits - 1;
                    if mask & (1 << dst) != 0 {
                        out.push(Move::Shift {
                            from: Loc::Column(src as u8),
                            to: Loc::Column(dst),
                            count: run as u8,
                        });
                        continue;
                    }
                    // Into the empty column: one card (only while no cell
                    // is free, and only if the card under it then has a
                    // use), or as much of the run as fits; never the whole
                    // column (the same position), nor the whole run when
                    // it can go onto a column.
                    let lim = limit_empty.min(run);
                    let whole_elsewhere = mask != 0 && lim == run;
                    let one = empty_cells == 0
                        && len > 1
                        && !(whole_elsewhere && run == 1)
                        && self.exposes_a_use(src, movable);
                    let ks = [(one, 1), (lim > 1 && !whole_elsewhere, lim)];
                    for (wanted, k) in ks {
                        if wanted && k != len && v.fills_empty(Card(col[(len - k) & (COL_CAP - 1)]))
                        {
                            out.push(Move::Shift {
                                from: Loc::Column(src as u8),
                                to: Loc::Column(dst),
                                count: k as u8,
                            });
                        }
                    }
                }
            }
            // Cell to column: into the empty column only a card that can
            // go onto no column and that some card could then go onto.
            let builds = v.builds_on_table();
            let mut held = held_cells;
            while held != 0 {
                let i = held.trailing_zeros() as u8;
                held &= held - 1;
                let c = self.cells[i as usize];
                let mut mask = onto_cols(c);
                if v.fills_empty(Card(c)) && mask == 0 && builds[(c & 63) as usize] & movable != 0 {
                    mask |= empty_dst;
                }
                while mask != 0 {
                    let dst = mask.trailing_zeros() as u8;
                    mask &= mask - 1;
                    out.push(Move::Shift {
                        from: Loc::Cell(i),
                        to: Loc::Column(dst),
                        count: 1,
                    });
                }
            }
        }
        // Column to cell: a lone card that can go onto no column, to the
        // first free cell.
        if free_cells != 0 {
            let cell = free_cells.trailing_zeros() as u8;
            while to_cell != 0 {
                let src = to_cell.trailing_zeros() as u8;
                to_cell &= to_cell - 1;
                out.push(Move::Shift {
                    from: Loc::Column(src),
                    to: Loc::Cell(cell),
                    count: 1,
                });
            }
        }
    }

    /// The generator of `gen_moves_with_runs` (the complete search's),
    /// in the form of `gen_moves_pruned_fast`: the moves home from a bit
    /// set of the suits' next cards, only non-empty columns and occupied
    /// cells visited, the empty column's moves off the common path.
    #[inline(always)]
    fn gen_moves_all_fast(&self, out: &mut Vec<Move>, runs: u64) {
        let v = self.variant;
        let (nc, ncells) = (self.ncols(), self.ncells());
        let parents = v.parents_table();
        let mut tops = 0u64;
        let mut top_col = [0u8; 64];
        let mut empty_mask = 0u16;
        for i in 0..nc {
            let l = self.lens[i] as usize;
            if l == 0 {
                empty_mask |= 1 << i;
            } else {
                let t = self.cols[i][(l - 1) & (COL_CAP - 1)] & 63;
                tops |= 1 << t;
                top_col[t as usize] = i as u8;
            }
        }
        let need = next_cards(self.found);
        let mut home = tops & need;
        if home != 0 {
            let mut cols = 0u16;
            while home != 0 {
                cols |= 1 << top_col[home.trailing_zeros() as usize];
                home &= home - 1;
            }
            while cols != 0 {
                let i = cols.trailing_zeros() as usize;
                cols &= cols - 1;
                let t = self.cols[i][(self.lens[i] as usize - 1) & (COL_CAP - 1)];
                out.push(Move::Home {
                    from: Loc::Column(i as u8),
                    suit: t & 3,
                });
            }
        }
        let onto_cols = |c: u8| -> u16 {
            let mut p = parents[(c & 63) as usize] & tops;
            let mut m = 0u16;
            while p != 0 {
                m |= 1 << top_col[p.trailing_zeros() as usize];
                p &= p - 1;
            }
            m
        };
        let mut free_cells = 0u16;
        let mut held_cells = 0u16;
        for i in 0..ncells {
            let c = self.cells[i];
            if c == NO_CARD {
                free_cells |= 1 << i;
            } else {
                held_cells |= 1 << i;
                if need >> (c & 63) & 1 != 0 {
                    out.push(Move::Home {
                        from: Loc::Cell(i as u8),
                        suit: c & 3,
                    });
                }
            }
        }
        let empty_cells = free_cells.count_ones();
        let empty_cols = empty_mask.count_ones();
        let limit_onto = v.max_run(empty_cells, empty_cols) as usize;
        let limit_empty = if empty_cols > 0 {
            v.max_run(empty_cells, empty_cols - 1) as usize
        } else {
            0
        };
        // One empty column stands for all (the same canonical position).
        let empty_dst = empty_mask & empty_mask.wrapping_neg();
        let columns = ((1u32 << nc) - 1) as u16 & !empty_mask;
        let mut sources = columns;
        while sources != 0 {
            let src = sources.trailing_zeros() as usize;
            sources &= sources - 1;
            let len = self.lens[src] as usize;
            let run = ((runs >> (4 * src)) & 15) as usize;
            let col = &self.cols[src];
            // Per destination, the cards of the run that fit on its top.
            let mut onto = [0u8; MAX_COLUMNS];
            let mut mask = 0u16;
            for k in 1..=run.min(limit_onto.max(1)) {
                let mut p = onto_cols(col[(len - k) & (COL_CAP - 1)]);
                mask |= p;
                while p != 0 {
                    onto[p.trailing_zeros() as usize] = k as u8;
                    p &= p - 1;
                }
            }
            let mut bits = mask | empty_dst;
            while bits != 0 {
                let dst = bits.trailing_zeros() as u8;
                bits &= bits - 1;
                if mask & (1 << dst) != 0 {
                    out.push(Move::Shift {
                        from: Loc::Column(src as u8),
                        to: Loc::Column(dst),
                        count: onto[dst as usize],
                    });
                    continue;
                }
                // Into the empty column: any part of the run that fits,
                // never the whole column (the same position), and a single
                // card only while no cell is free (`gen_moves_with_runs`).
                let first = if empty_cells > 0 { 2 } else { 1 };
                for k in first..=limit_empty.min(run) {
                    if k != len && v.fills_empty(Card(col[(len - k) & (COL_CAP - 1)])) {
                        out.push(Move::Shift {
                            from: Loc::Column(src as u8),
                            to: Loc::Column(dst),
                            count: k as u8,
                        });
                    }
                }
            }
        }
        // Cell to column.
        let mut held = held_cells;
        while held != 0 {
            let i = held.trailing_zeros() as u8;
            held &= held - 1;
            let c = self.cells[i as usize];
            let mut mask = onto_cols(c);
            if v.fills_empty(Card(c)) {
                mask |= empty_dst;
            }
            while mask != 0 {
                let dst = mask.trailing_zeros() as u8;
                mask &= mask - 1;
                out.push(Move::Shift {
                    from: Loc::Cell(i),
                    to: Loc::Column(dst),
                    count: 1,
                });
            }
        }
        // Column to cell: every column's top, to the first free cell.
        if free_cells != 0 {
            let cell = free_cells.trailing_zeros() as u8;
            let mut srcs = columns;
            while srcs != 0 {
                let src = srcs.trailing_zeros() as u8;
                srcs &= srcs - 1;
                out.push(Move::Shift {
                    from: Loc::Column(src),
                    to: Loc::Cell(cell),
                    count: 1,
                });
            }
        }
    }

    /// Every legal move (see `gen_moves`).
    pub fn legal_moves(&self) -> Vec<Move> {
        let mut v = Vec::new();
        self.gen_moves(&mut v, true);
        v
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::variant::Variant;

    #[test]
    fn generators_of_their_own_agree_with_the_shared_one() {
        let boards = crate::board::sample_positions();
        assert!(boards.len() > 500, "{} positions", boards.len());
        for b in boards {
            let runs = b.runs();
            let (mut fast, mut want) = (Vec::new(), Vec::new());
            b.gen_moves_pruned_fast(&mut fast, runs);
            b.gen_moves_inner(&mut want, false, true, true, Some(runs));
            assert_eq!(fast, want, "pruned, {b:?}");
            fast.clear();
            want.clear();
            b.gen_moves_all_fast(&mut fast, runs);
            b.gen_moves_inner(&mut want, false, false, true, Some(runs));
            assert_eq!(fast, want, "all, {b:?}");
        }
    }

    /// Every move of `gen_moves_pruned` keeps the free-space rules, checked
    /// here from the columns and cells directly: a card goes to a cell, or
    /// from a cell into an empty column, and a whole run into an empty
    /// column, only if it can go onto no column; a card from a cell into an
    /// empty column only if some top-run base or cell card could go onto
    /// it; a single card from a column into an empty column only while no
    /// cell is free, and only if the card under it can then go home, onto a
    /// column's top (the moved card's too), or take a top-run base or a
    /// cell card. Each rule leaves out some move of `gen_moves_with_runs`
    /// on these positions.
    #[test]
    fn pruned_moves_keep_the_free_space_rules() {
        let mut positions = crate::board::sample_positions();
        for deal in 1..=40 {
            let mut b = Board::deal(deal, Variant::default()).unwrap();
            let limits = crate::solver::Limits::default();
            for &m in &crate::solver::solve(&b, &limits).solution.unwrap().moves {
                b.apply(m);
                positions.push(b.clone());
            }
        }
        let mut left_out = [0usize; 4];
        for b in positions {
            let v = b.variant();
            let tops: Vec<(usize, Card)> = (0..b.ncols())
                .filter_map(|j| b.top(j).map(|t| (j, t)))
                .collect();
            let onto_a_column =
                |c: Card, not: usize| tops.iter().any(|&(j, t)| j != not && v.builds_on(c, t));
            let base = |j: usize| {
                let col = b.column(j);
                Card(col[col.len() - b.run_len(j)])
            };
            let takes = |c: Card, except: Option<Card>| {
                (0..b.ncols())
                    .filter(|&j| b.column_len(j) > 0)
                    .map(base)
                    .chain((0..b.ncells()).filter_map(|i| b.cell(i)))
                    .any(|x| Some(x) != except && v.builds_on(x, c))
            };
            let runs = b.runs();
            let (mut pruned, mut all) = (Vec::new(), Vec::new());
            b.gen_moves_pruned(&mut pruned, runs);
            b.gen_moves_with_runs(&mut all, runs);
            for &m in &all {
                let kept = pruned.contains(&m);
                let Move::Shift { from, to, count } = m else {
                    continue;
                };
                let rule = match (from, to) {
                    (Loc::Column(a), Loc::Cell(_)) if b.run_len(a as usize) == 1 => {
                        let c = b.top(a as usize).unwrap();
                        Some((0, !onto_a_column(c, a as usize)))
                    }
                    (Loc::Cell(i), Loc::Column(d)) if b.column_len(d as usize) == 0 => {
                        let c = b.cell(i as usize).unwrap();
                        Some((1, !onto_a_column(c, usize::MAX) && takes(c, None)))
                    }
                    (Loc::Column(a), Loc::Column(d)) if b.column_len(d as usize) == 0 => {
                        let (a, k) = (a as usize, count as usize);
                        let col = b.column(a);
                        if k == 1 && b.run_len(a) > 1 {
                            None // a run's top card: the run-breaking rule
                        } else if k == 1 {
                            let under = Card(col[col.len() - 2]);
                            // (The card moved counts as a column's top: the
                            // one under it may go onto it in its new column.)
                            let used = b.can_found(under)
                                || onto_a_column(under, usize::MAX)
                                || takes(under, Some(b.top(a).unwrap()));
                            Some((3, b.empty_cells() == 0 && used))
                        } else if k == b.run_len(a) {
                            let limit_onto = v.max_run(b.empty_cells(), b.empty_columns()) as usize;
                            Some((2, !onto_a_column(base(a), a) || (k > 1 && k > limit_onto)))
                        } else {
                            None
                        }
                    }
                    _ => None,
                };
                if let Some((r, allowed)) = rule {
                    assert!(!kept || allowed, "rule {r}: {m:?} in {b:?}");
                    if !kept && !allowed {
                        left_out[r] += 1;
                    }
                }
            }
        }
        assert!(left_out.iter().all(|&n| n > 20), "{left_out:?}");
    }

    /// What the searches' generators leave out of `gen_moves(false)` is a
    /// single card into an empty column while a cell is free, and they
    /// reach that position in two moves: the card to a cell, then from the
    /// cell into the column (so a complete search still stores it).
    #[test]
    fn a_card_left_out_of_an_empty_column_gets_there_through_a_cell() {
        let mut left_out = 0;
        let mut log = Vec::new();
        let after = |b: &Board, m: Move, log: &mut Vec<Move>| {
            let mut c = b.clone();
            c.apply(m);
            c.autoplay_after(log, m, false);
            c
        };
        // Empty columns with cells free are rare in random play: positions
        // along solutions (which empty columns) too.
        let mut positions = crate::board::sample_positions();
        for deal in 1..=60 {
            let mut b = Board::deal(deal, Variant::default()).unwrap();
            let limits = crate::solver::Limits::default();
            for &m in &crate::solver::solve(&b, &limits).solution.unwrap().moves {
                b.apply(m);
                positions.push(b.clone());
            }
        }
        for b in positions {
            let runs = b.runs();
            let (mut all, mut search) = (Vec::new(), Vec::new());
            b.gen_moves(&mut all, false);
            b.gen_moves_with_runs(&mut search, runs);
            assert!(search.iter().all(|m| all.contains(m)), "{b:?}");
            for &m in all.iter().filter(|m| !search.contains(m)) {
                let Some((a, d, count)) = m.between_columns() else {
                    panic!("{m:?} left out, {b:?}");
                };
                assert!(count == 1 && b.column_len(d as usize) == 0 && b.empty_cells() > 0);
                let want = after(&b, m, &mut log).fingerprint();
                let to_cell = *search
                    .iter()
                    .find(|s| {
                        matches!(s, Move::Shift { from, to: Loc::Cell(_), .. } if *from == Loc::Column(a))
                    })
                    .expect("the card to a cell");
                let c = after(&b, to_cell, &mut log);
                let mut next = Vec::new();
                c.gen_moves_with_runs(&mut next, c.runs());
                // (Or at once, if the card itself went home.)
                assert!(
                    c.fingerprint() == want
                        || next
                            .iter()
                            .any(|&n| after(&c, n, &mut log).fingerprint() == want),
                    "{m:?} not reached through a cell, {b:?}"
                );
                left_out += 1;
            }
        }
        eprintln!("left out {left_out}");
        assert!(left_out > 100, "{left_out}");
    }
}
