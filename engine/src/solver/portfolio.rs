//! The schedule of one solve (docs/SOLVER.md, "The searches"): the
//! portfolio's members (`BestFirst`) take turns in rounds whose quota
//! doubles, the complete search (`Search`) joins the rounds late (early,
//! with a larger share, on a blocked or dry deal), and once the portfolio
//! has spent its cap the complete search decides alone. Every setting comes
//! from a `Tuning`.
//!
//! From the second round on, members with the same moves and automatic
//! moves (a group) share the set of positions they have expanded: a member
//! skips a position another has expanded, but still queues what it
//! generates, so no member loses a line only because another has queued
//! it; a member in a greedy descent (the popped position is a child of its
//! last expansion) is only blocked by a position whose line another member
//! has followed, i.e. expanded one of its children too. They split a hard
//! deal's search instead of each repeating it.

use super::best_first::{shared_bytes, BestFirst, Shared, Turn};
use super::budget::{Budget, Load};
use super::complete::{Search, Step};
use super::progress::{self, Counts, Stage};
use super::result::{LimitKind, Limits, Outcome, Solution, SolveResult, Stats};
use super::solution;
use super::tuning::{Member, Tuning};
use crate::board::{Board, Move};

/// What a group shares: members with the same moves and automatic moves,
/// (pruned, eager).
type Key = (bool, bool);

fn key(m: &Member) -> Key {
    (m.pruned, m.eager)
}

/// A group's shared set of expanded positions.
struct Group {
    key: Key,
    set: Shared,
}

impl Group {
    fn load(&self) -> Load {
        Load {
            bytes: shared_bytes(self.set.capacity()),
            stored: self.set.len() as u64,
        }
    }
}

/// Where a turn leaves the rounds.
enum Flow {
    /// On with the next turn.
    Next,
    /// No more rounds: the complete search decides alone.
    Stop,
    /// The solve's answer.
    Done(SolveResult),
}

/// Solves `board` within `limits` with the settings of `tuning`.
pub(super) fn solve(board: &Board, limits: &Limits, tuning: &Tuning) -> SolveResult {
    let tuning = tuning.for_cells(board.ncells() as u64);
    Portfolio::new(board, limits, &tuning).run()
}

/// The reserve (`Tuning::reserve`): its members from the start of `board`,
/// all from the first round, each on its own, until one wins or they have
/// spent the reserve's cap or memory stops them. `None` when the game has
/// no reserve. The outcome is `Solved`, `Limit(Time)` or, when they found
/// nothing, `Limit(Positions)`; the complete search takes no part (the
/// members are not pruned, but they keep 64 bits of each fingerprint and
/// their running dry proves nothing).
pub(super) fn reserve(board: &Board, limits: &Limits, tuning: &Tuning) -> Option<SolveResult> {
    let tuning = tuning.for_cells(board.ncells() as u64);
    let reserve = tuning.reserve.as_ref()?;
    let t = Tuning {
        members: reserve.members.clone(),
        cap: reserve.cap,
        complete_share: 0,
        blocked: None,
        dry_factor: None,
        probe: None,
        reserve: None,
        ..tuning.as_ref().clone()
    };
    let mut p = Portfolio::new(board, limits, &t);
    p.stage = Stage::Reserve;
    // A shared set blocks the lines they win by, as it does a late member's
    // with few cells (`Tuning::late_shared_cells`).
    p.groups = Vec::new();
    Some(match p.rounds() {
        Some(r) => r,
        None => p.finish(Outcome::Limit(LimitKind::Positions), None),
    })
}

struct Portfolio<'a> {
    board: &'a Board,
    tuning: &'a Tuning,
    budget: Budget,
    /// The members started so far, in order.
    members: Vec<BestFirst>,
    /// One shared set per key that more than one member has.
    groups: Vec<Group>,
    /// Keys of groups found to have expanded their whole reachable set.
    exhausted: Vec<Key>,
    complete: Search,
    /// This round's member quota.
    quota: u64,
    /// The members' expansions so far (`Tuning::cap`).
    spent: u64,
    /// The stage it publishes its counts as (`progress`), and the stage's
    /// expansions before it (a first-move probe's portfolio).
    stage: Stage,
    base: u64,
}

impl<'a> Portfolio<'a> {
    fn new(board: &'a Board, limits: &Limits, tuning: &'a Tuning) -> Self {
        let mut groups: Vec<Group> = Vec::new();
        for m in &tuning.members {
            let k = key(m);
            let size = tuning.members.iter().filter(|n| key(n) == k).count();
            if size > 1 && !groups.iter().any(|g| g.key == k) {
                groups.push(Group {
                    key: k,
                    set: Shared::default(),
                });
            }
        }
        Portfolio {
            board,
            tuning,
            budget: Budget::new(limits),
            members: Vec::new(),
            groups,
            exhausted: Vec::new(),
            complete: Search::new(board, tuning.interleaved_order, limits),
            quota: tuning.quota,
            spent: 0,
            stage: Stage::Portfolio,
            base: 0,
        }
    }

    fn run(mut self) -> SolveResult {
        match self.rounds() {
            Some(r) => r,
            None => self.decide_alone(),
        }
    }

    /// The rounds, until an answer (`Some`), or until the members have
    /// spent the cap or memory stops them (`None`).
    fn rounds(&mut self) -> Option<SolveResult> {
        while self.spent < self.tuning.cap {
            match self.round() {
                Flow::Next => self.quota *= 2,
                Flow::Stop => break,
                Flow::Done(r) => return Some(r),
            }
        }
        None
    }

    /// One round: each member's turn, then the complete search's.
    fn round(&mut self) -> Flow {
        let t = self.tuning;
        // While the rounds are short, a member's turn ends early when it
        // stops improving, or late, at twice the round's quota, while it
        // keeps improving.
        let multiple = self.quota / t.quota;
        let stall = if multiple < 1 << t.stagnation_rounds {
            t.stagnation * multiple
        } else {
            0
        };
        let turn = if stall > 0 {
            2 * self.quota
        } else {
            self.quota
        };
        for i in 0..t.members.len() {
            match self.member_turn(i, turn, stall) {
                Flow::Next => {}
                flow => return flow,
            }
        }
        self.complete_turn()
    }

    /// Member `i`'s turn: up to `turn` expansions in all so far, or `stall`
    /// without improving (`BestFirst::run`).
    fn member_turn(&mut self, i: usize, turn: u64, stall: u64) -> Flow {
        let t = self.tuning;
        let member = t.members[i];
        if self.quota < member.join {
            return Flow::Next;
        }
        if i == self.members.len() && !self.start_member(i) {
            return Flow::Stop;
        }
        let k = key(&member);
        if self.exhausted.contains(&k) {
            // Another member with the same moves and automatic moves has
            // expanded their whole reachable set: only the order differs
            // here, so this one cannot win either.
            self.members[i].done = true;
        }
        if self.members[i].done {
            return Flow::Next;
        }
        // Sharing starts in the second round; a late member's first turn
        // is not shared: the others have expanded and followed its root,
        // so sharing would leave it nothing to expand. With few cells a
        // late member never shares (`Tuning::late_shared_cells`).
        let sharing = self.quota > t.quota;
        let late_shares = member.join == 0 || self.board.ncells() as u64 >= t.late_shared_cells;
        let own = self
            .groups
            .iter()
            .position(|g| g.key == k)
            .filter(|_| sharing && self.quota > member.join && late_shares);
        let others = self.held_beside(i, own);
        let room = self.budget.room_beside(others);
        let m = &mut self.members[i];
        let before = m.expansions();
        let until = turn.min(before + (t.cap - self.spent));
        let shared = own.map(|g| &mut self.groups[g].set);
        let turn = m.run(until, room, &self.budget, shared, stall);
        self.spent += m.expansions() - before;
        let own_load = own.map_or(Load::default(), |g| self.groups[g].load());
        let held = others + load(&self.members[i]) + own_load;
        self.budget.note(held);
        self.publish(held);
        match turn {
            Turn::Solved(path) => {
                // Best-first paths are nearly direct: they are not
                // shortened (docs/solver-log.md).
                let sol = solution::describe(self.board, &path, member.eager);
                return Flow::Done(self.finish(Outcome::Solved, Some(sol)));
            }
            Turn::Time => return Flow::Done(self.finish(Outcome::Limit(LimitKind::Time), None)),
            Turn::Budget => {}
            Turn::Exhausted => {
                self.members[i].done = true;
                // With a shared set, the group's reachable set is expanded
                // once every member of it has run dry: each member expanded
                // every position it queued, unless another member had.
                let grouped = self.groups.iter().any(|g| g.key == k);
                if grouped
                    && sharing
                    && self.members.iter().any(|m| !m.done && key(m.member()) == k)
                {
                    return Flow::Next;
                }
                // Running out of moves proves nothing here, not even for a
                // member with every move and safe automatic moves: the
                // members keep 64 bits of each fingerprint. The complete
                // search decides.
                self.exhausted.push(k);
            }
            Turn::Limit => return Flow::Stop,
        }
        if self.spent >= t.cap {
            Flow::Stop
        } else {
            Flow::Next
        }
    }

    /// What the rest of the solve holds while member `i` runs: the other
    /// members, the complete search, and the shared sets but group `own`'s,
    /// which is counted with the member (by `BestFirst::run`).
    fn held_beside(&self, i: usize, own: Option<usize>) -> Load {
        let members: Load = self
            .members
            .iter()
            .enumerate()
            .filter(|(j, _)| *j != i)
            .map(|(_, m)| load(m))
            .sum();
        let own = own.map_or(Load::default(), |g| self.groups[g].load());
        members + self.complete.load() + self.groups_load() - own
    }

    /// Starts member `i` (members start lazily, so that tiny budgets are
    /// honoured); false when it does not fit.
    fn start_member(&mut self, i: usize) -> bool {
        let limits = self.budget.limits();
        let members: Load = self.members.iter().map(load).sum();
        let complete = self.complete.load();
        if members.stored + complete.stored + 1 > limits.max_positions {
            return false;
        }
        let m = BestFirst::new(self.board, self.tuning.members[i], limits.max_bytes);
        if m.bytes() + members.bytes + self.groups_load().bytes + complete.bytes > limits.max_bytes
        {
            return false;
        }
        self.members.push(m);
        true
    }

    /// The complete search's share of the round: it finds the solutions
    /// the members miss on some hard deals, and it is the one that proves
    /// `unsolvable` (the members are all pruned).
    fn complete_turn(&mut self) -> Flow {
        let t = self.tuning;
        let larger = self.larger_share();
        if t.complete_share == 0 || (self.quota < t.complete_start && larger.is_none()) {
            return Flow::Next;
        }
        let held = self.members.iter().map(load).sum::<Load>() + self.groups_load();
        let room = self.budget.room_beside(held);
        let done = self.complete.expansions();
        let mut until = done.max(self.quota / t.complete_share);
        if let Some(f) = larger {
            until = until.max(f * self.member_expansions());
            // A long step: room for what it may store, at once, rather
            // than growing the set through every size.
            self.complete.reserve((until - done) as usize, room.bytes);
        }
        let before = self.base + self.member_expansions();
        self.complete.watch(self.stage, before, held);
        let step = self.complete.resume(until, room, &self.budget);
        let all = held + self.complete.load();
        self.budget.note(all);
        self.publish(all);
        match step {
            Step::Done(r) => Flow::Done(self.merge(r, self.member_expansions())),
            Step::Paused => Flow::Next,
            Step::Squeezed => Flow::Stop,
        }
    }

    /// A blocked deal (`Tuning::blocked`) or a dry one (`Tuning::dry_factor`)
    /// gives the complete search this many times the members' expansions so
    /// far, and from an earlier round: members that get no cards home, or
    /// run out of positions, are typical of the unsolvable deals, whose
    /// proof is the complete search's work anyway. The members keep their
    /// turns, so a solvable deal costs at most about the factor plus one
    /// times what they need.
    fn larger_share(&self) -> Option<u64> {
        let t = self.tuning;
        let blocked = t
            .blocked
            .filter(|b| {
                self.quota >= b.from && self.members.iter().all(|m| m.best_home() <= b.home)
            })
            .map(|b| b.factor);
        let dry = t.dry_factor.filter(|_| {
            t.members.len() > 1
                && self.members.iter().filter(|m| m.done).count() + 1 >= t.members.len()
        });
        blocked.or(dry)
    }

    /// The portfolio found nothing within its cap: the complete search
    /// alone decides, with all the memory. An interleaved one that never
    /// started simply continues; one that did is replaced by a search in
    /// `Tuning::final_order` (a different order: the deals that outlast the
    /// portfolio are the ones the interleaved order handles badly; its work
    /// is at most a quarter of one member's).
    fn decide_alone(mut self) -> SolveResult {
        let mut expanded = self.member_expansions() + self.complete.expansions();
        let mut proved = 0;
        self.members = Vec::new();
        self.groups = Vec::new();
        if self.complete.started() {
            let spilled = self.complete.peak_disk();
            self.complete = Search::new(self.board, self.tuning.final_order, self.budget.limits());
            self.complete.saw_disk(spilled);
        }
        if let Some(r) = self.probe(&mut expanded, &mut proved) {
            return r;
        }
        self.complete.watch(Stage::Complete, 0, Load::default());
        loop {
            if let Step::Done(r) = self
                .complete
                .resume(u64::MAX, self.budget.whole(), &self.budget)
            {
                return self.merge(r, expanded);
            }
        }
    }

    /// The first-move probe (`Tuning::probe`): a portfolio from each first
    /// move's position in turn, each capped, the caps doubling every round,
    /// until one wins or the probe has spent its cap. Greedy members that
    /// all settle into one large lost subtree never come back to the
    /// first moves they passed over; a portfolio started after each one
    /// does (MS 496564 with 3 cells: won from two of its eight first moves
    /// in about 40,000 expansions each, while the portfolio from the start
    /// spends its cap in the third). `Some`: the solve's answer; `None`:
    /// the complete search decides. `expanded` gains the probe's
    /// expansions, `proved` those of its complete searches.
    ///
    /// The first moves are the complete search's from the start at its
    /// safe automatic-move fixpoint, each followed by the safe automatic
    /// moves, so they reach every position a solution can pass through
    /// next (`Board::gen_moves_with_runs`: the one move they leave out is
    /// reached through a cell). A first move whose portfolio proves its
    /// position unsolvable is dropped, and so is one whose portfolio stops
    /// short of its cap (memory); when every one is proved, so is the start:
    /// each of its solutions begins with one of them. A win is the first
    /// move (and the automatic moves after it) followed by the portfolio's
    /// solution from there.
    fn probe(&mut self, expanded: &mut u64, proved: &mut u64) -> Option<SolveResult> {
        let probe = self.tuning.probe?;
        let mut start = self.board.clone();
        let mut log = Vec::new();
        start.autoplay_quick(&mut log, false);
        let mut moves = Vec::new();
        start.gen_moves_with_runs(&mut moves, start.runs());
        let mut firsts: Vec<(Move, Board)> = Vec::new();
        let mut seen = Vec::new();
        for m in moves {
            let mut b = start.clone();
            b.apply(m);
            b.autoplay_after(&mut log, m, false);
            let fp = b.fingerprint();
            if !seen.contains(&fp) {
                seen.push(fp);
                firsts.push((m, b));
            }
        }
        let mut tuning = self.tuning.clone();
        tuning.probe = None;
        let mut cap = probe.quota;
        let mut spent = 0;
        // A first move dropped without a verdict.
        let mut undecided = false;
        while !firsts.is_empty() && spent < probe.cap {
            let mut i = 0;
            while i < firsts.len() && spent < probe.cap {
                let limits = self.budget.limits();
                let max_seconds = match limits.max_seconds {
                    Some(s) if s <= self.budget.elapsed().as_secs_f64() => {
                        return Some(self.probed(
                            Outcome::Limit(LimitKind::Time),
                            None,
                            *expanded,
                            *proved,
                        ));
                    }
                    Some(s) => Some(s - self.budget.elapsed().as_secs_f64()),
                    None => None,
                };
                let limits = Limits {
                    max_seconds,
                    ..limits.clone()
                };
                tuning.cap = cap.min(probe.cap - spent);
                let (m, ref b) = firsts[i];
                let mut p = Portfolio::new(b, &limits, &tuning);
                p.base = *expanded;
                let r = p.rounds();
                // Stopped short of its cap without a verdict (memory, or
                // members that do not fit): a larger cap would not take it
                // further.
                let short = p.spent < tuning.cap;
                let n = p.member_expansions() + p.complete.expansions();
                spent += n;
                *expanded += n;
                *proved += p.complete.expansions();
                self.budget.note(p.budget.peak());
                match r.map(|r| (r.outcome, r.solution)) {
                    Some((Outcome::Solved, Some(then))) => {
                        let sol = solution::describe_part(self.board, &[m], false)
                            .0
                            .then(then);
                        return Some(self.probed(Outcome::Solved, Some(sol), *expanded, *proved));
                    }
                    Some((Outcome::Unsolvable, _)) => {
                        firsts.remove(i);
                        continue;
                    }
                    Some((Outcome::Limit(LimitKind::Time), _)) => {
                        return Some(self.probed(
                            Outcome::Limit(LimitKind::Time),
                            None,
                            *expanded,
                            *proved,
                        ));
                    }
                    _ if short => {
                        firsts.remove(i);
                        undecided = true;
                        continue;
                    }
                    _ => {}
                }
                i += 1;
            }
            cap *= 2;
        }
        if firsts.is_empty() && !undecided {
            return Some(self.probed(Outcome::Unsolvable, None, *expanded, *proved));
        }
        None
    }

    /// The probe's answer, with every expansion of the solve so far
    /// (`proved`: the probe's complete searches').
    fn probed(
        &self,
        outcome: Outcome,
        solution: Option<Solution>,
        expanded: u64,
        proved: u64,
    ) -> SolveResult {
        let mut r = self.finish(outcome, solution);
        r.stats.expanded = expanded;
        r.stats.proof_expanded = proved;
        r
    }

    /// Publishes the stage's counts (`progress`): its expansions so far and
    /// what the searches hold, `held`.
    fn publish(&self, held: Load) {
        progress::report(self.stage, || Counts {
            expanded: self.base + self.member_expansions() + self.complete.expansions(),
            stored: held.stored,
            bytes: held.bytes,
            ..Counts::default()
        });
    }

    fn member_expansions(&self) -> u64 {
        self.members.iter().map(|m| m.expansions()).sum()
    }

    /// What the shared sets hold.
    fn groups_load(&self) -> Load {
        self.groups.iter().map(Group::load).sum()
    }

    /// The result of the solve, ending before the complete search's.
    fn finish(&self, outcome: Outcome, solution: Option<Solution>) -> SolveResult {
        let peak = self.budget.peak();
        SolveResult {
            outcome,
            solution,
            stats: Stats {
                expanded: self.member_expansions() + self.complete.expansions(),
                proof_expanded: self.complete.expansions(),
                stored: peak.stored,
                peak_bytes: peak.bytes,
                // The interleaved complete search's path file, if any.
                peak_disk: self.complete.peak_disk(),
                elapsed: self.budget.elapsed(),
            },
        }
    }

    /// The complete search's result with the portfolio's figures added
    /// (`proof_expanded` stays the complete search's own count).
    fn merge(&self, mut r: SolveResult, portfolio_expanded: u64) -> SolveResult {
        let peak = self.budget.peak();
        r.stats.expanded += portfolio_expanded;
        r.stats.stored = r.stats.stored.max(peak.stored);
        r.stats.elapsed = self.budget.elapsed();
        r.stats.peak_bytes = r.stats.peak_bytes.max(peak.bytes);
        r
    }
}

/// What a member holds.
fn load(m: &BestFirst) -> Load {
    Load {
        bytes: m.bytes(),
        stored: m.stored(),
    }
}
