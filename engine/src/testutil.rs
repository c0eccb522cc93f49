//! Helpers shared by the tests of the searches: an exhaustive reference
//! search over single-card moves, and small positions from late in real
//! games to run it on.

use crate::board::Board;
use crate::card::Card;
use crate::solver::{Limits, Solution};
use crate::variant::{MoveRule, Variant};

/// Plays `sol`'s moves from `start` by their notation, each checked, and
/// asserts they win.
pub fn replay(start: &Board, sol: &Solution) {
    let mut b = start.clone();
    for (i, s) in sol.notation.iter().enumerate() {
        let m = b.parse_move(s.as_str()).unwrap();
        b.apply_checked(m)
            .unwrap_or_else(|e| panic!("move {i} {s}: {e}"));
    }
    assert!(b.is_won());
}

/// Exhaustive search over single-card moves, with or without the safe
/// automatic moves; `None` when it needs more than `cap` positions.
pub fn exhaustive(start: &Board, autos: bool, cap: usize) -> Option<bool> {
    reachable(start, autos, cap).map(|(won, _)| won)
}

/// `exhaustive`, and how many positions it stored.
pub fn reachable(start: &Board, autos: bool, cap: usize) -> Option<(bool, usize)> {
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
pub fn late_positions(v: Variant, deals: std::ops::RangeInclusive<u64>) -> Vec<Board> {
    let single = Variant::default().with_move_rule(MoveRule::Single);
    let mut out = Vec::new();
    for deal in deals {
        let b = Board::deal(deal, single).unwrap();
        let sol = crate::solver::solve(&b, &Limits::default())
            .solution
            .unwrap();
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
