//! The solver: one call, `solve(board, limits)`, ends in exactly one
//! outcome: `solved` (with a solution), `unsolvable` (a proof), or `limit`
//! (which budget ran out). docs/SOLVER.md describes the design; its pieces:
//! - `portfolio`: the schedule of a solve, a portfolio of greedy best-first
//!   searches (`best_first`, with `park`s and a `queue`) that finds most
//!   solutions quickly, and the complete search (`complete`), the one that
//!   proves, joining the rounds late and deciding alone if they fail;
//! - `beam`: the reserve's last search for a win, breadth-first with the
//!   best positions of each depth kept;
//! - `heuristic`: the score both searches order positions by (`Weights`);
//! - `tuning`: every setting of the searches, the shipped ones in
//!   `tuning.toml` (`Tuning::shipped`), an experiment's passed explicitly
//!   (`solve_with`);
//! - `budget`: the byte, position and time accounting against `Limits`;
//! - `result`: `Limits` and what a solve gives back;
//! - `progress`: counts a running solve publishes to a watcher;
//! - `solution`: writing a solution out.
//!
//! Searches are deterministic: no clocks or randomness steer them, so the
//! same board, limits and tuning give the same outcome, solution and counts
//! (a time limit is the only exception, by nature).

mod beam;
mod best_first;
mod budget;
mod complete;
mod heuristic;
mod park;
mod pathfile;
mod portfolio;
pub mod progress;
mod queue;
mod result;
mod solution;
mod tuning;

pub use beam::beam as solve_beam_alone;
pub use best_first::solve_member_alone;
pub use complete::solve_complete_alone;
pub use heuristic::Weights;
pub use result::{LimitKind, Limits, Outcome, Solution, SolveResult, Stats};
pub use solution::{describe, expand_move, shorten};
pub use tuning::{Beam, Blocked, Member, Probe, Reserve, Tuning, TuningError};

use crate::board::Board;
use crate::prover::{self, ProofLimit, ProofOutcome};
use crate::variant::Variant;

/// Solves `board` within `limits` with the shipped settings: the portfolio
/// first, the complete search (which alone may answer `unsolvable`) joining
/// it late and deciding alone if it finds nothing; and if that search runs
/// out of memory or positions, the prover (`crate::prover`), which decides
/// in layers within the same memory plus `limits.max_disk` of disk.
pub fn solve(board: &Board, limits: &Limits) -> SolveResult {
    solve_with(board, limits, Tuning::shipped())
}

/// `solve` with the settings of `tuning` (experiments).
pub fn solve_with(board: &Board, limits: &Limits, tuning: &Tuning) -> SolveResult {
    progress::report_cells(board.ncells() as u8);
    let first = portfolio::solve(board, limits, tuning);
    if !matches!(
        first.outcome,
        Outcome::Limit(LimitKind::Bytes | LimitKind::Positions)
    ) {
        return first;
    }
    let first = reserve_after(board, limits, tuning, first);
    match first.outcome {
        Outcome::Limit(LimitKind::Bytes | LimitKind::Positions) => {
            prove_after(board, limits, first)
        }
        _ => first,
    }
}

/// `limits` with what is left of its time after `spent`; `None` when
/// nothing is.
fn left_after(limits: &Limits, spent: std::time::Duration) -> Option<Limits> {
    let max_seconds = match limits.max_seconds {
        Some(s) if s <= spent.as_secs_f64() => return None,
        Some(s) => Some(s - spent.as_secs_f64()),
        None => None,
    };
    Some(Limits {
        max_seconds,
        ..limits.clone()
    })
}

/// The reserve's answer (`Tuning::reserve`: its members, then its beam if
/// they find nothing) after `first` (a solve that ran out of memory or
/// positions): a win, or the time limit, or `first`'s limit again; its
/// figures are added to `first`'s. The deals that get
/// here are the hard ones, whose complete search filled the memory; the
/// reserve's cap is small beside what they have cost by then.
fn reserve_after(
    board: &Board,
    limits: &Limits,
    tuning: &Tuning,
    first: SolveResult,
) -> SolveResult {
    let spent = first.stats.elapsed;
    let Some(left) = left_after(limits, spent) else {
        return SolveResult {
            outcome: Outcome::Limit(LimitKind::Time),
            ..first
        };
    };
    let Some(mut r) = portfolio::reserve(board, &left, tuning) else {
        return first;
    };
    // Its members found nothing: the beam, if any, with what is left.
    let beam = tuning
        .for_cells(board.ncells() as u64)
        .reserve
        .as_ref()
        .and_then(|t| t.beam);
    if let (Outcome::Limit(LimitKind::Bytes | LimitKind::Positions), Some(b)) = (r.outcome, beam) {
        match left_after(&left, r.stats.elapsed) {
            Some(rest) => {
                let s = beam::beam(board, &rest, &b);
                r = SolveResult {
                    outcome: s.outcome,
                    solution: s.solution,
                    stats: Stats {
                        expanded: r.stats.expanded + s.stats.expanded,
                        stored: r.stats.stored.max(s.stats.stored),
                        peak_bytes: r.stats.peak_bytes.max(s.stats.peak_bytes),
                        elapsed: r.stats.elapsed + s.stats.elapsed,
                        ..r.stats
                    },
                };
            }
            None => r.outcome = Outcome::Limit(LimitKind::Time),
        }
    }
    let stats = Stats {
        expanded: first.stats.expanded + r.stats.expanded,
        proof_expanded: first.stats.proof_expanded,
        stored: first.stats.stored.max(r.stats.stored),
        peak_bytes: first.stats.peak_bytes.max(r.stats.peak_bytes),
        peak_disk: first.stats.peak_disk,
        elapsed: spent + r.stats.elapsed,
    };
    match r.outcome {
        Outcome::Solved | Outcome::Limit(LimitKind::Time) => SolveResult {
            outcome: r.outcome,
            solution: r.solution,
            stats,
        },
        _ => SolveResult { stats, ..first },
    }
}

/// The prover's verdict on `board`, after `first` (a solve that ran out of
/// memory or positions), within what is left of the time budget. Its
/// figures are added to `first`'s.
fn prove_after(board: &Board, limits: &Limits, first: SolveResult) -> SolveResult {
    let spent = first.stats.elapsed;
    let Some(left) = left_after(limits, spent) else {
        return SolveResult {
            outcome: Outcome::Limit(LimitKind::Time),
            ..first
        };
    };
    let proof = prover::prove(board, &left);
    let p = proof.stats;
    let stats = Stats {
        expanded: first.stats.expanded + p.expanded,
        proof_expanded: first.stats.proof_expanded + p.expanded,
        stored: p.stored,
        peak_bytes: first.stats.peak_bytes.max(p.peak_bytes),
        // The complete search's path file is gone before the prover starts.
        peak_disk: first.stats.peak_disk.max(p.peak_disk),
        elapsed: spent + p.elapsed,
    };
    let (outcome, solution) = match proof.outcome {
        ProofOutcome::Unsolvable => (Outcome::Unsolvable, None),
        ProofOutcome::Solved(path) => {
            let path = shorten(board, &path, false);
            (Outcome::Solved, Some(describe(board, &path, false)))
        }
        ProofOutcome::Limit(l) => (
            Outcome::Limit(match l {
                ProofLimit::Positions => LimitKind::Positions,
                ProofLimit::Bytes => LimitKind::Bytes,
                ProofLimit::Disk => LimitKind::Disk,
                ProofLimit::Time => LimitKind::Time,
            }),
            None,
        ),
    };
    SolveResult {
        outcome,
        solution,
        stats,
    }
}

/// What `min_cells` found.
#[derive(Clone, Debug, PartialEq)]
pub struct MinCells {
    /// The fewest cells that win the deal; `None` when a limit left it
    /// unknown (or no count up to the most allowed wins).
    pub min: Option<u8>,
    /// Every count searched, with its result, in the order searched. A
    /// count not here is decided by inference: a deal won with `k` cells is
    /// won with more (the same solution), and one that is unsolvable with
    /// `k` is unsolvable with fewer.
    pub searched: Vec<(u8, SolveResult)>,
}

impl MinCells {
    /// The largest count proved unsolvable (the minimum less one, when the
    /// minimum is known and above the variant's least count).
    pub fn proved_unsolvable(&self) -> Option<u8> {
        self.searched
            .iter()
            .filter(|(_, r)| r.outcome == Outcome::Unsolvable)
            .map(|(k, _)| *k)
            .max()
    }
}

/// The count `min_cells` starts at: 2 for games built in alternate colours
/// (where most deals need exactly 2: 19,092 of MS 1..32000 in Pringle's
/// table, so most deals are settled by solving 2 and proving 1), the
/// variant's own otherwise. Only the work depends on it, not the answer.
fn min_cells_start(variant: Variant) -> u8 {
    match variant.build {
        crate::variant::Build::Alternate => 2.min(variant.cells),
        _ => variant.cells,
    }
}

/// The smallest number of cells (at most `max_cells`) with which Microsoft
/// deal `n` is won under `variant`. Solves from a starting count
/// (`min_cells_start`) down while the deal is won, up while it is not, and
/// stops at the first change: the minimum is then the least count won, and
/// the count below it is proved unsolvable (which proves every smaller one:
/// a solution with fewer cells would be one with more). Every other count
/// is inferred, not searched.
pub fn min_cells(n: u64, variant: Variant, max_cells: u8, limits: &Limits) -> MinCells {
    min_cells_with(n, variant, max_cells, limits, Tuning::shipped())
}

/// `min_cells` with these settings (`examples/range --min-cells --tuning`).
pub fn min_cells_with(
    n: u64,
    variant: Variant,
    max_cells: u8,
    limits: &Limits,
    tuning: &Tuning,
) -> MinCells {
    let lo = variant.dealt_to_cells;
    let mut searched: Vec<(u8, SolveResult)> = Vec::new();
    let mut run = |k: u8| -> Outcome {
        let b = Board::deal(n, variant.with_cells(k)).expect("validated deal and variant");
        let r = solve_with(&b, limits, tuning);
        let o = r.outcome;
        searched.push((k, r));
        o
    };
    let start = min_cells_start(variant).clamp(lo, max_cells);
    let mut min = None;
    match run(start) {
        Outcome::Solved => {
            min = Some(start);
            let mut k = start;
            while k > lo {
                k -= 1;
                match run(k) {
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
                match run(k) {
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
    MinCells { min, searched }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testutil::replay;
    use crate::variant::Variant;

    fn run(deal: u64, cells: u8) -> SolveResult {
        let b = Board::deal(deal, Variant::default().with_cells(cells)).unwrap();
        solve(&b, &Limits::default())
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

    /// `tuning` with the shipped settings but `edit`.
    fn shipped_but(edit: impl FnOnce(&mut Tuning)) -> Tuning {
        let mut t = Tuning::shipped().clone();
        edit(&mut t);
        t
    }

    /// The first-move probe (`Tuning::probe`) on small positions from late
    /// in real games, after a portfolio stopped at its first expansion so
    /// that the probe, with no cap of its own, gives every answer: it wins
    /// exactly the positions the exhaustive search wins, with solutions
    /// that replay from the start (the first move, then the portfolio's
    /// from there), and proves the others lost, one first move at a time.
    #[test]
    fn the_probe_answers_as_the_exhaustive_search_does() {
        let t = shipped_but(|t| {
            t.cap = 1;
            t.probe = Some(Probe {
                quota: 200,
                cap: u64::MAX,
            })
        });
        let (mut won, mut lost) = (0, 0);
        for q in crate::testutil::late_positions(Variant::default(), 1..=60) {
            let Some(want) = crate::testutil::exhaustive(&q, true, 40_000) else {
                continue;
            };
            let r = solve_with(&q, &Limits::default(), &t);
            if want {
                assert_eq!(r.outcome, Outcome::Solved, "{q}");
                replay(&q, r.solution.as_ref().unwrap());
                won += 1;
            } else {
                assert_eq!(r.outcome, Outcome::Unsolvable, "{q}");
                lost += 1;
            }
        }
        assert!(won >= 30 && lost >= 10, "{won} {lost}");
    }

    #[test]
    fn a_blocked_deal_gives_the_complete_search_the_larger_share() {
        // No member gets more than two cards home on 11982 with 4 cells by
        // the end of the 400-quota round (`Tuning::blocked`), so the
        // complete search gets 32 times the members' expansions and proves
        // it while they are still running; without the rule the members
        // run dry first.
        let b = Board::deal(11982, Variant::default()).unwrap();
        let with = solve(&b, &Limits::default());
        let without = solve_with(&b, &Limits::default(), &shipped_but(|t| t.blocked = None));
        assert_eq!(with.outcome, Outcome::Unsolvable);
        assert_eq!(without.outcome, Outcome::Unsolvable);
        assert!(with.stats.expanded < 80_000, "{}", with.stats.expanded);
        assert!(
            with.stats.expanded < without.stats.expanded,
            "{} {}",
            with.stats.expanded,
            without.stats.expanded
        );
    }

    #[test]
    fn a_dry_portfolio_gives_the_complete_search_the_larger_share() {
        // On 18356 with 3 cells the members run dry early but for one; with
        // the larger share (`Tuning::dry_factor`) the proof ends before the
        // last member has spent its turns.
        let b = Board::deal(18356, Variant::default().with_cells(3)).unwrap();
        let with = solve(&b, &Limits::default());
        let without = solve_with(
            &b,
            &Limits::default(),
            &shipped_but(|t| t.dry_factor = None),
        );
        assert_eq!(with.outcome, Outcome::Unsolvable);
        assert_eq!(without.outcome, Outcome::Unsolvable);
        assert!(with.stats.expanded < 9_400, "{}", with.stats.expanded);
        assert!(with.stats.expanded < without.stats.expanded);
        let p = with.stats.proof_expanded;
        assert!(0 < p && p < with.stats.expanded);
    }

    #[test]
    fn with_no_cells_the_unpruned_member_wins_where_pruned_moves_run_dry() {
        // 5055 is won with no cells (FreeCell Pro's list), but every pruned
        // member runs dry after 201 expansions; the member on the complete
        // search's moves (`max_cells = 1`) wins it. Without it the search
        // passes 100,000 positions with no verdict.
        let b = Board::deal(5055, Variant::default().with_cells(0)).unwrap();
        let limits = Limits {
            max_positions: 100_000,
            ..Limits::default()
        };
        let with = solve(&b, &limits);
        assert_eq!(with.outcome, Outcome::Solved);
        replay(&b, with.solution.as_ref().unwrap());
        let pruned_only = shipped_but(|t| {
            t.members.retain(|m| m.pruned);
            t.reserve = None;
        });
        let without = solve_with(&b, &limits, &pruned_only);
        assert_eq!(without.outcome, Outcome::Limit(LimitKind::Positions));
    }

    #[test]
    // Six solves of up to 200,000 positions, each twice: over two minutes
    // with the debug build's checks, a few seconds in the release pass.
    #[cfg_attr(debug_assertions, ignore = "run by the release build's tests")]
    fn a_member_takes_no_part_in_games_outside_its_cells() {
        // With 3 cells the shipped settings search exactly as they would
        // without the unpruned members (games with 0 or 1 cells, with 2, and
        // the reserve's, up to 2); with 2 cells, as without the member
        // limited to 0 and 1.
        let pruned_only = shipped_but(|t| {
            t.members.retain(|m| m.pruned);
            t.reserve = None;
        });
        let two = shipped_but(|t| t.members.retain(|m| m.max_cells != 1));
        assert_eq!(two.members.len() + 1, Tuning::shipped().members.len());
        for (cells, other) in [(3, &pruned_only), (2, &two)] {
            for deal in [1, 209, 982] {
                let b = Board::deal(deal, Variant::default().with_cells(cells)).unwrap();
                let limits = Limits {
                    max_positions: 200_000,
                    ..Limits::default()
                };
                let a = solve(&b, &limits);
                let c = solve_with(&b, &limits, other);
                assert_eq!((a.outcome, a.stats.expanded), (c.outcome, c.stats.expanded));
            }
        }
    }

    #[test]
    fn the_reserve_wins_after_the_complete_search_fills_its_budget() {
        // A portfolio stopped at its first expansion leaves these 2-cell
        // deals to the complete search, which passes 20,000 positions on
        // each without a verdict; the reserve's members (`Tuning::reserve`),
        // within the same budget, win them, before the prover (which
        // without the reserve runs out of positions too).
        let t = shipped_but(|t| {
            t.cap = 1;
            t.probe = None;
        });
        let no = shipped_but(|t| {
            t.cap = 1;
            t.probe = None;
            t.reserve = None;
        });
        let limits = Limits {
            max_positions: 20_000,
            ..Limits::default()
        };
        for deal in [7, 14] {
            let b = Board::deal(deal, Variant::default().with_cells(2)).unwrap();
            let with = solve_with(&b, &limits, &t);
            let without = solve_with(&b, &limits, &no);
            assert_eq!(with.outcome, Outcome::Solved, "{deal}");
            replay(&b, with.solution.as_ref().unwrap());
            assert_eq!(without.outcome, Outcome::Limit(LimitKind::Positions));
            // The complete search's expansions, then the reserve's.
            assert!(with.stats.expanded > with.stats.proof_expanded, "{deal}");
            assert!(with.stats.proof_expanded >= 19_000, "{deal}");
        }
        // With 3 cells there is no reserve (its members play with up to 2).
        let b = Board::deal(7, Variant::default().with_cells(3)).unwrap();
        assert!(Tuning::shipped().for_cells(3).reserve.is_none());
        assert_eq!(
            solve_with(&b, &limits, &t).stats.expanded,
            solve_with(&b, &limits, &no).stats.expanded
        );
    }

    #[test]
    fn the_reserves_beam_wins_after_its_members_find_nothing() {
        // The portfolio and the reserve's members stopped at their first
        // expansion, so the complete search fills the positions and the
        // members find nothing; the beam, within the same 20,000 positions,
        // wins these 2-cell deals before the prover (which without it runs
        // out of positions too).
        let beam = Some(Beam {
            width: 50,
            depth: 200,
            weights: Tuning::shipped().final_order,
        });
        let with = |b: Option<Beam>| {
            shipped_but(move |t| {
                t.cap = 1;
                t.probe = None;
                let r = t.reserve.as_mut().unwrap();
                r.cap = 1;
                r.beam = b;
            })
        };
        let (t, no) = (with(beam), with(None));
        let limits = Limits {
            max_positions: 20_000,
            ..Limits::default()
        };
        for deal in [7, 14] {
            let b = Board::deal(deal, Variant::default().with_cells(2)).unwrap();
            let r = solve_with(&b, &limits, &t);
            assert_eq!(r.outcome, Outcome::Solved, "{deal}");
            replay(&b, r.solution.as_ref().unwrap());
            let without = solve_with(&b, &limits, &no);
            assert_eq!(without.outcome, Outcome::Limit(LimitKind::Positions));
            // The complete search's expansions, then the members' and the
            // beam's.
            assert!(r.stats.proof_expanded >= 19_000, "{deal}");
            assert!(r.stats.expanded > r.stats.proof_expanded + 1_000, "{deal}");
        }
        // The shipped reserve has the beam with 2 cells and fewer, and with
        // 3 there is neither.
        assert!(Tuning::shipped()
            .for_cells(1)
            .reserve
            .as_ref()
            .unwrap()
            .beam
            .is_some());
        assert!(Tuning::shipped().for_cells(3).reserve.is_none());
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
