//! The beam: the reserve's last search for a win (`Tuning::reserve`,
//! `Beam`), after its members. Breadth-first by depth (moves played), it
//! keeps only the `width` best positions of each depth by the heuristic
//! (`Beam::weights`) and expands those, every move of each with the safe
//! automatic moves, as the complete search plays; a position generated
//! once is not generated again (a visited set of every position the beam
//! has generated). It ends at a win, at `depth`, when a depth leaves no new
//! position, or when the memory or the time runs out.
//!
//! It finds wins the depth-first and best-first searches do not: those
//! follow one line, or a few, deep into one part of a large reachable set,
//! where a beam keeps a wide front of the whole set's most promising
//! positions level by level (docs/solver-log.md, session 46: MS 13599 with
//! one cell, a win no search here had found within 1 GiB, in 7.5 M
//! expansions). It proves nothing: an empty front or the depth reached says
//! only that this beam found no win.
//!
//! Memory, counted against the budget before it is taken: the visited set
//! (`FpTable`, at most 16 bytes a position), the front (a packed board, 80
//! bytes, per kept position), the candidates of the next depth (12 bytes
//! each) and, to write the win out, each kept position's parent and move
//! (8 bytes, for every depth).

use super::budget::{Budget, Load};
use super::heuristic::score;
use super::progress::{self, Counts, Stage};
use super::result::{LimitKind, Limits, Outcome, SolveResult, Stats};
use super::solution;
use super::tuning::Beam;
use crate::board::{Board, Move, Packed};
use crate::prover::table::FpTable;

/// A child of the front, before the best are kept: its score, its
/// parent's index in the front and its move's code.
#[derive(Clone, Copy)]
struct Candidate {
    score: i32,
    parent: u32,
    code: u32,
}

/// Bytes per candidate, per kept position's link and per packed board.
const CANDIDATE_BYTES: u64 = std::mem::size_of::<Candidate>() as u64;
const LINK_BYTES: u64 = 8;
const BOARD_BYTES: u64 = std::mem::size_of::<Packed>() as u64;

/// The beam on `board`; `Solved` with a solution, or `Limit` (positions:
/// the depth or an empty front; bytes; time) with its figures. Alone, as
/// the reserve runs it (`examples/portfolio --beam`).
pub fn beam(board: &Board, limits: &Limits, beam: &Beam) -> SolveResult {
    let budget = Budget::new(limits);
    let mut b = Beam1 {
        budget,
        seen: FpTable::new(),
        links: Vec::new(),
        expanded: 0,
        peak: 0,
    };
    let outcome = b.run(board, beam);
    let (outcome, solution) = match outcome {
        Ok(path) => (
            Outcome::Solved,
            Some(solution::describe(board, &path, false)),
        ),
        Err(k) => (Outcome::Limit(k), None),
    };
    SolveResult {
        outcome,
        solution,
        stats: Stats {
            expanded: b.expanded,
            proof_expanded: 0,
            stored: b.seen.len(),
            peak_bytes: b.peak,
            peak_disk: 0,
            elapsed: b.budget.elapsed(),
        },
    }
}

struct Beam1 {
    budget: Budget,
    /// Every position generated so far.
    seen: FpTable,
    /// For each depth, each kept position's parent (its index in the front
    /// before) and move's code.
    links: Vec<Vec<(u32, u32)>>,
    expanded: u64,
    peak: u64,
}

impl Beam1 {
    /// The moves of a win from `board`, or why there is none.
    fn run(&mut self, board: &Board, beam: &Beam) -> Result<Vec<Move>, LimitKind> {
        let v = board.variant();
        let width = beam.width as usize;
        let mut start = board.clone();
        let mut log = Vec::new();
        start.autoplay_quick(&mut log, false);
        if start.is_won() {
            return Ok(Vec::new());
        }
        self.insert(start.fingerprint(), 0)?;
        let mut front: Vec<Packed> = vec![start.pack()];
        let mut moves = Vec::new();
        let mut cands: Vec<Candidate> = Vec::new();
        let mut links_bytes = 0u64;
        for _ in 0..beam.depth {
            cands.clear();
            // Held besides the visited set while this depth is expanded:
            // the front, the links so far and the candidates' buffer
            // (`extra` more slots while it grows, the old buffer living
            // until the new one is filled).
            let held = |c: &Vec<Candidate>, extra: u64| {
                front.len() as u64 * BOARD_BYTES
                    + links_bytes
                    + (c.capacity() as u64 + extra) * CANDIDATE_BYTES
            };
            for (i, p) in front.iter().enumerate() {
                let mut b = Board::unpack(p, v);
                moves.clear();
                b.gen_moves_with_runs(&mut moves, b.runs());
                self.expanded += 1;
                if self.expanded & 1023 == 0 {
                    if self.budget.out_of_time() {
                        return Err(LimitKind::Time);
                    }
                    self.report();
                }
                for &m in &moves {
                    b.apply(m);
                    let n = b.autoplay_after(&mut log, m, false);
                    // Scored only when new: most children were generated
                    // before. (An error leaves `b`, a copy, as it is.)
                    let fresh = self.insert(b.fingerprint(), held(&cands, 0))?;
                    let won = fresh && b.is_won();
                    let s = (fresh && !won).then(|| score(&b, &beam.weights));
                    b.undo_autoplay(&mut log, n);
                    b.undo(m);
                    if won {
                        return Ok(self.path(i as u32, m));
                    }
                    let Some(s) = s else { continue };
                    if cands.len() == cands.capacity() {
                        // Doubled: the new buffer beside the old.
                        let new = (2 * cands.capacity()).max(1024);
                        self.fits(self.seen.bytes() + held(&cands, new as u64))?;
                        cands.reserve_exact(new - cands.len());
                    }
                    cands.push(Candidate {
                        score: s,
                        parent: i as u32,
                        code: m.code(),
                    });
                }
            }
            if cands.is_empty() {
                return Err(LimitKind::Positions);
            }
            if cands.len() > width {
                // The best `width`; among equal scores the parent and the
                // move decide (a pair no two candidates share), so the
                // beam is deterministic.
                cands.select_nth_unstable_by_key(width, |c| (c.score, c.parent, c.code));
                cands.truncate(width);
            }
            // The kept positions' links, then their boards, built from
            // their parents'.
            let kept = cands.len() as u64;
            self.fits(self.seen.bytes() + held(&cands, 0) + kept * (LINK_BYTES + BOARD_BYTES))?;
            links_bytes += kept * LINK_BYTES;
            self.links
                .push(cands.iter().map(|c| (c.parent, c.code)).collect());
            let next: Vec<Packed> = cands
                .iter()
                .map(|c| {
                    let mut b = Board::unpack(&front[c.parent as usize], v);
                    let m = Move::from_code(c.code);
                    b.apply(m);
                    b.autoplay_after(&mut log, m, false);
                    b.pack()
                })
                .collect();
            front = next;
        }
        Err(LimitKind::Positions)
    }

    /// Adds `fp` to the visited set (false if it was there) when the set,
    /// grown if it must, fits beside `held` bytes.
    fn insert(&mut self, fp: u128, held: u64) -> Result<bool, LimitKind> {
        if self.seen.contains(fp) {
            return Ok(false);
        }
        if self.seen.len() >= self.budget.limits().max_positions {
            return Err(LimitKind::Positions);
        }
        self.fits(self.seen.bytes_to_insert(fp) + held)?;
        self.seen.insert(fp).map_err(|_| LimitKind::Bytes)
    }

    /// Records `bytes` as held at once; `Err` past the budget.
    fn fits(&mut self, bytes: u64) -> Result<(), LimitKind> {
        if bytes > self.budget.limits().max_bytes {
            return Err(LimitKind::Bytes);
        }
        self.peak = self.peak.max(bytes);
        self.budget.note(Load {
            bytes,
            stored: self.seen.len(),
        });
        Ok(())
    }

    /// The moves from the start to the position reached by `m` from the
    /// front's position `i`.
    fn path(&self, mut i: u32, m: Move) -> Vec<Move> {
        let mut path = vec![m];
        for depth in self.links.iter().rev() {
            let (parent, code) = depth[i as usize];
            path.push(Move::from_code(code));
            i = parent;
        }
        path.reverse();
        path
    }

    fn report(&self) {
        progress::report(Stage::Reserve, || Counts {
            expanded: self.expanded,
            stored: self.seen.len(),
            bytes: self.peak,
            ..Counts::default()
        });
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::solver::Tuning;
    use crate::testutil::replay;
    use crate::variant::Variant;

    fn settings(width: u64, depth: u64) -> Beam {
        Beam {
            width,
            depth,
            weights: Tuning::shipped().final_order,
        }
    }

    #[test]
    fn the_beam_wins_and_writes_a_solution_that_replays() {
        for (deal, cells) in [(7, 2), (14, 2), (2, 1), (1, 3), (617, 4)] {
            let b = Board::deal(deal, Variant::default().with_cells(cells)).unwrap();
            let r = beam(&b, &Limits::default(), &settings(200, 300));
            assert_eq!(r.outcome, Outcome::Solved, "{deal} with {cells}");
            replay(&b, r.solution.as_ref().unwrap());
            assert!(r.stats.expanded > 0 && r.stats.stored >= r.stats.expanded);
            assert!(r.stats.peak_bytes > 0);
            // Deterministic: the same win again.
            let again = beam(&b, &Limits::default(), &settings(200, 300));
            assert_eq!(again.solution, r.solution);
            assert_eq!(again.stats.expanded, r.stats.expanded);
        }
    }

    #[test]
    fn the_beam_keeps_to_its_depth_memory_and_positions() {
        let b = Board::deal(1, Variant::default().with_cells(2)).unwrap();
        let shallow = beam(&b, &Limits::default(), &settings(2_000, 5));
        assert_eq!(shallow.outcome, Outcome::Limit(LimitKind::Positions));
        // Depth d expands at most the start and `width` positions a depth.
        assert!(shallow.stats.expanded <= 1 + 4 * 2_000);
        let limits = Limits {
            max_bytes: 200_000,
            ..Limits::default()
        };
        let small = beam(&b, &limits, &settings(2_000, 300));
        assert_eq!(small.outcome, Outcome::Limit(LimitKind::Bytes));
        assert!(small.stats.peak_bytes <= 200_000);
        let limits = Limits {
            max_positions: 500,
            ..Limits::default()
        };
        let few = beam(&b, &limits, &settings(2_000, 300));
        assert_eq!(few.outcome, Outcome::Limit(LimitKind::Positions));
        assert!(few.stats.stored <= 500);
    }

    #[test]
    fn a_narrow_beam_can_miss_a_win_it_proves_nothing_by() {
        // Deal 1 with 2 cells is won; a beam one position wide runs out of
        // new positions or depth without finding the win, and says only
        // `limit`.
        let b = Board::deal(1, Variant::default().with_cells(2)).unwrap();
        let r = beam(&b, &Limits::default(), &settings(1, 300));
        assert!(
            matches!(r.outcome, Outcome::Limit(LimitKind::Positions)),
            "{:?}",
            r.outcome
        );
        assert!(r.solution.is_none());
    }
}
