//! Parks (`Member::parks`): compound moves of the best-first searches. The
//! cards above a buried card go to free cells, then the card goes home or
//! onto another column's top card, in one step. A park reaches no position
//! its moves do not (it is a sequence of them), so a solution writes it out
//! as those moves; it lets the heuristic see past the cells it fills.

use super::heuristic::next_needed;
use crate::board::{Board, Loc, Move};
use crate::card::Card;

/// A park: the top `parked` cards of `column` go to free cells, then the
/// card under them goes home or onto another column's top card.
#[derive(Copy, Clone, PartialEq, Eq, Debug)]
pub(super) struct Park {
    pub column: u8,
    pub parked: u8,
    pub to: ParkTo,
}

/// Where a park's buried card goes.
#[derive(Copy, Clone, PartialEq, Eq, Debug)]
pub(super) enum ParkTo {
    Home,
    Column(u8),
}

/// Plays park `p` as real moves, each followed by its automatic moves, and
/// appends them with their automatic-move counts to `subs`. Stops early if
/// the cells run out or the automatic moves took the card home.
pub(super) fn play(
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

/// Takes back what `play` played.
pub(super) fn undo(b: &mut Board, log: &mut Vec<Move>, subs: &[(Move, usize)]) {
    for &(mv, n) in subs.iter().rev() {
        b.undo_autoplay(log, n);
        b.undo(mv);
    }
}

/// Appends the parks of `b`: for each column card under k cards (k at most
/// the free cells), one to the foundation if it is a suit's next card and
/// one per other column whose top card it builds on; none from a column
/// whose top card could go onto another column instead of a cell (the
/// free-space rule of `Board::gen_moves_pruned`; docs/solver-log.md).
pub(super) fn generate(b: &Board, out: &mut Vec<Park>) {
    let free = b.empty_cells() as usize;
    if free == 0 {
        return;
    }
    let v = b.variant();
    let need = next_needed(&b.foundations());
    // Per card code, the columns whose top card it builds on (a card of
    // rank r only on one of rank r + 1), from the tops once. Move
    // generation fills the same table inside its own pass over the columns;
    // one function for both cost more (docs/solver-log.md).
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
