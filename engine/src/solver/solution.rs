//! Writing a solution out: a depth-first path shortened (`shorten`), every
//! path described move by move with its automatic moves made explicit
//! (`describe`), and multi-card moves expanded into single-card moves
//! (`expand_move`, and their count without building them).

use super::result::Solution;
use crate::board::{Board, Loc, Move, Notation};
use crate::variant::EmptyRule;

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
    let (sol, _end) = describe_part(start, path, eager);
    debug_assert!(_end.is_won());
    sol
}

/// `describe` for a path that need not win: its moves written out, and
/// the position they end in.
pub fn describe_part(start: &Board, path: &[Move], eager: bool) -> (Solution, Board) {
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
                          notation: &mut Vec<Notation>,
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
    let sol = Solution {
        multi_len: moves.len() as u32,
        moves,
        notation,
        auto,
        single_len: single,
    };
    (sol, b)
}

/// The number of single-card moves `expand_move` writes `m` as, counted
/// without building them.
fn expansion_len(b: &Board, m: Move) -> Option<u32> {
    // Through the cells alone (`Plan::run`'s first case): each card but
    // the last to a cell and back, the last one straight.
    if let Some((_, _, count)) = m.between_columns() {
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
    let Some((a, d, count)) = m.between_columns().filter(|&(_, _, k)| k > 1) else {
        emit(m);
        return true;
    };
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
