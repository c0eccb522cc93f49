//! A member of the portfolio: a resumable greedy best-first search over a
//! global priority queue on the heuristic (`BestFirst`), run in turns by
//! the portfolio (`super::portfolio`).
//!
//! Children are materialised lazily: a generated position is only its
//! parent, the edge from it and its depth (12 bytes); a position is packed
//! (`Board::pack`, 80 bytes) only once it is expanded, and rebuilt from its
//! parent when popped (cheaply when the parent is the position just
//! expanded, which greedy descents make the common case). A child reached
//! by a move or a park after which nothing goes home is fingerprinted and
//! scored without being played (`Board::narrow_after`, `Parent::plain`);
//! debug builds compare both with the played child.

use super::budget::{table_bytes, Budget, Room};
use super::heuristic::{score, Heuristic, Parent, Unfinished};
use super::park::{self, Park, ParkTo};
use super::queue::{BucketQueue, NONE};
use super::result::{LimitKind, Limits, Outcome, SolveResult, Stats};
use super::solution;
use super::tuning::Member;
use crate::board::{Board, DirtyMark, Move, Packed};
use crate::fpset::{FpHasher, FpSet};
use std::collections::HashMap;
use std::hash::BuildHasherDefault;

/// A member's visited set: the low 64 bits of each fingerprint. The
/// portfolio never proves anything (its solutions are replayed, its running
/// dry only stops it), so a false "seen" (chance ~n^2 / 2^65, 3e-8 for a
/// million positions) could only make it miss a line; half the bytes of the
/// complete search's set make its hottest table cheaper to probe.
type Seen = FpSet;

/// A group's shared set of expanded positions (`portfolio`): the low 64
/// bits of each fingerprint, with whether some member has also expanded one
/// of its children ("followed"). A 64-bit false match only lets a member
/// skip a position, which the portfolio tolerates: it proves nothing.
pub(super) type Shared = HashMap<u64, bool, BuildHasherDefault<FpHasher>>;

/// Bytes of a shared set with room for `cap` positions (a key and a flag
/// take 16 bytes, aligned).
pub(super) fn shared_bytes(cap: usize) -> u64 {
    table_bytes(cap, 16)
}

/// How a member's turn ended.
pub(super) enum Turn {
    Solved(Vec<Move>),
    /// The turn's expansions are spent, or it stalled.
    Budget,
    /// Nothing left to expand (proves nothing when pruned).
    Exhausted,
    /// Its room for positions or bytes is used up.
    Limit,
    /// The time limit passed.
    Time,
}

/// How a best-first search reaches a generated position from its parent.
#[derive(Copy, Clone, PartialEq, Eq, Debug)]
enum Edge {
    Move(Move),
    Park(Park),
}

/// An expanded position.
struct Expanded {
    board: Packed,
    /// Its index in `nodes`.
    node: u32,
    /// The low 64 bits of its fingerprint, where a shared set needed them
    /// (0 otherwise).
    fp: u64,
    /// Its run lengths (`Board::runs`): a child's are these with only the
    /// columns its move changed recomputed.
    runs: u64,
}

/// A generated position: its parent (index in `expanded`), the edge from
/// the parent (`None` at the root), and its depth.
#[derive(Copy, Clone)]
struct Child {
    parent: u32,
    edge: Option<Edge>,
    depth: u16,
}

/// Initial capacity of a best-first search's tables: most deals need a few
/// hundred expansions, so they start with room for them rather than
/// growing through many small sizes.
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

/// A member's search.
pub(super) struct BestFirst {
    member: Member,
    heuristic: Heuristic,
    /// Every generated position; index 0 is the root.
    nodes: Vec<Child>,
    /// Expanded positions.
    expanded: Vec<Expanded>,
    /// How many positions it has expanded.
    count: u64,
    /// The lowest score expanded in turns that can stall, and when it was
    /// reached.
    best_score: i32,
    last_improve: u64,
    /// The most cards home in any position expanded.
    best_home: u32,
    /// Waiting positions (indices into `nodes`) by priority.
    queue: BucketQueue,
    visited: Seen,
    /// Found to have nothing left to expand that matters (`portfolio`).
    pub done: bool,
    /// The expansion's moves and parks.
    moves: Vec<Move>,
    parks: Vec<Park>,
    /// Automatic moves played.
    log: Vec<Move>,
    /// The real moves of the park being tried.
    subs: Vec<(Move, usize)>,
    root: Board,
    /// The board of `expanded[cur_idx]` (the last expansion), or of the
    /// position being expanded.
    cur: Board,
    cur_idx: u32,
}

impl BestFirst {
    pub(super) fn new(board: &Board, member: Member, max_bytes: u64) -> Self {
        let room = initial_room(max_bytes);
        let mut b = board.clone();
        // The visited sets keep 64 bits (`Seen`).
        b.set_narrow(true);
        let mut log = Vec::new();
        b.autoplay_quick(&mut log, member.eager);
        // Most deals store a few hundred positions: the set starts at a
        // quarter of the other tables, an eighth of their bytes zeroed.
        let mut visited = Seen::with_capacity(room / 2);
        visited.insert(b.fingerprint() as u64);
        let mut queue = BucketQueue::with_capacity(room);
        // Every queued position's priority is its score plus the depth
        // term, the root's too: an expansion takes a popped position's
        // score from its priority.
        queue.push(score(&b, &member.weights), 0);
        let mut nodes = Vec::with_capacity(room);
        nodes.push(Child {
            parent: NONE,
            edge: None,
            depth: 0,
        });
        BestFirst {
            member,
            heuristic: Heuristic::new(member.weights, max_bytes),
            nodes,
            expanded: Vec::with_capacity(room / 8),
            count: 0,
            best_score: i32::MAX,
            last_improve: 0,
            best_home: 0,
            queue,
            visited,
            done: false,
            moves: Vec::new(),
            parks: Vec::new(),
            log,
            subs: Vec::new(),
            cur: b.clone(),
            root: b,
            cur_idx: NONE,
        }
    }

    pub(super) fn member(&self) -> &Member {
        &self.member
    }

    /// Positions expanded.
    pub(super) fn expansions(&self) -> u64 {
        self.count
    }

    /// Positions stored in its visited set.
    pub(super) fn stored(&self) -> u64 {
        self.visited.len() as u64
    }

    /// The most cards home in any position it has expanded.
    pub(super) fn best_home(&self) -> u32 {
        self.best_home
    }

    /// The bytes it holds.
    pub(super) fn bytes(&self) -> u64 {
        Seen::bytes_for(self.visited.capacity())
            + (self.nodes.capacity() * std::mem::size_of::<Child>()) as u64
            + (self.expanded.capacity() * std::mem::size_of::<Expanded>()) as u64
            + self.queue.bytes() as u64
            + self.heuristic.bytes()
    }

    /// Bytes once `extra` more positions are generated and one more is
    /// expanded (counting reallocations), with the group's shared set if
    /// there is one.
    fn bytes_after(&self, extra: usize, shared: Option<&Shared>) -> u64 {
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
        let nodes = vec_bytes(&self.nodes, extra) + vec_bytes(&self.expanded, 1);
        let heap = self.queue.bytes_after(self.nodes.len() + extra);
        let v = self.visited.len() + extra;
        let set = if v > self.visited.capacity() {
            Seen::bytes_for(self.visited.capacity()) + Seen::bytes_for(v * 2)
        } else {
            Seen::bytes_for(self.visited.capacity())
        };
        let shared = shared.map_or(0, |c| {
            // An expansion adds its position.
            if c.len() + 1 > c.capacity() {
                shared_bytes(c.capacity()) + shared_bytes((c.len() + 1) * 2)
            } else {
                shared_bytes(c.capacity())
            }
        });
        (nodes + heap) as u64 + set + shared + self.heuristic.bytes()
    }

    /// Expands positions until it has expanded `until`, or a limit: `room`
    /// bounds the positions and bytes it holds (with the group's shared
    /// set, when it adds to one), `budget` the time of the whole solve.
    ///
    /// `shared`: the positions expanded by this member's group (see
    /// `portfolio`); a popped position in it is skipped (if followed, when
    /// descending), and every position expanded here is added to it, with
    /// a "followed" mark for its parent.
    ///
    /// `stall` (0: none): also stop, with `Turn::Budget`, once this turn
    /// has gone `stall` expansions without a new lowest score
    /// (`Tuning::stagnation`).
    pub(super) fn run(
        &mut self,
        until: u64,
        room: Room,
        budget: &Budget,
        mut shared: Option<&mut Shared>,
        stall: u64,
    ) -> Turn {
        if self.root.is_won() {
            return Turn::Solved(Vec::new());
        }
        if stall > 0 {
            self.last_improve = self.count;
        }
        while self.count < until {
            if stall > 0 && self.count - self.last_improve >= stall {
                return Turn::Budget;
            }
            if self.count & 255 == 0 && budget.out_of_time() {
                return Turn::Time;
            }
            let Some(idx) = self.queue.peek() else {
                return Turn::Exhausted;
            };
            let priority = self.queue.min_priority();
            // Generate before committing, so that a limit leaves the search
            // resumable exactly where it stopped.
            let descending = self.nodes[idx as usize].parent == self.cur_idx;
            let runs = self.materialise(idx);
            self.cur_idx = NONE;
            let fp = match shared.as_deref() {
                Some(s) => match self.shared_fingerprint(s, descending) {
                    Some(fp) => fp,
                    None => {
                        self.queue.pop();
                        continue;
                    }
                },
                None => 0,
            };
            self.generate(runs);
            if !self.fits(room, shared.as_deref()) {
                return Turn::Limit;
            }
            let (me, depth) = self.commit(idx, fp, runs, shared.as_deref_mut());
            if let Some(path) = self.expand(me, depth, priority, stall) {
                return Turn::Solved(path);
            }
        }
        Turn::Budget
    }

    /// Puts the board of generated position `idx` into `self.cur`, and
    /// returns its run lengths (`Board::runs`).
    fn materialise(&mut self, idx: u32) -> u64 {
        let c = self.nodes[idx as usize];
        if c.parent == NONE {
            self.cur = self.root.clone();
            return self.cur.runs();
        }
        if c.parent != self.cur_idx {
            self.cur
                .unpack_into(&self.expanded[c.parent as usize].board);
        }
        match c.edge.expect("a position other than the root") {
            Edge::Park(p) => {
                self.subs.clear();
                park::play(
                    &mut self.cur,
                    p,
                    self.member.eager,
                    &mut self.log,
                    &mut self.subs,
                );
            }
            Edge::Move(m) => {
                self.cur.apply(m);
                self.cur.autoplay_after(&mut self.log, m, self.member.eager);
            }
        }
        self.log.clear();
        // Both boards (the last expansion's, or the parent unpacked) had no
        // changed columns before the move.
        self.cur.runs_after(
            self.expanded[c.parent as usize].runs,
            self.cur.changed_columns(),
        )
    }

    /// The fingerprint (low 64 bits) of the position in `cur`, for the
    /// shared set; `None` when another member of the group has expanded it
    /// (and followed it, if this one is `descending`: a descent is only
    /// blocked by a followed line). Settling first means the expansion
    /// does not mix the columns again.
    fn shared_fingerprint(&mut self, shared: &Shared, descending: bool) -> Option<u64> {
        self.cur.settle();
        let fp = self.cur.fingerprint() as u64;
        let taken = shared
            .get(&fp)
            .is_some_and(|&followed| followed || !descending);
        (!taken).then_some(fp)
    }

    /// Generates the moves and parks of the position in `cur`.
    fn generate(&mut self, runs: u64) {
        self.moves.clear();
        if self.member.pruned {
            self.cur.gen_moves_pruned(&mut self.moves, runs);
        } else {
            self.cur.gen_moves_with_runs(&mut self.moves, runs);
        }
        self.parks.clear();
        if self.member.parks {
            park::generate(&self.cur, &mut self.parks);
        }
    }

    /// Whether expanding the position in `cur` fits in `room`: its children
    /// and, in bytes, the growth of every table they may cause.
    fn fits(&self, room: Room, shared: Option<&Shared>) -> bool {
        let edges = self.moves.len() + self.parks.len();
        let shared_len = shared.map_or(0, |s| s.len() + 1);
        (self.visited.len() + shared_len + edges) as u64 <= room.positions
            && self.bytes_after(edges, shared) <= room.bytes
    }

    /// Takes generated position `idx` (in `cur`) off the queue as expanded:
    /// packs it and adds it to the shared set (marking its parent
    /// followed). Returns its index in `expanded` and its children's depth.
    fn commit(&mut self, idx: u32, fp: u64, runs: u64, shared: Option<&mut Shared>) -> (u32, u16) {
        self.queue.pop();
        self.count += 1;
        let parent = self.nodes[idx as usize].parent;
        if let Some(s) = shared {
            s.entry(fp).or_insert(false);
            if parent != NONE && self.expanded[parent as usize].fp != 0 {
                s.insert(self.expanded[parent as usize].fp, true);
            }
        }
        self.best_home = self.best_home.max(self.cur.cards_home());
        self.expanded.push(Expanded {
            board: self.cur.pack(),
            node: idx,
            fp,
            runs,
        });
        let me = (self.expanded.len() - 1) as u32;
        self.cur_idx = me;
        (me, self.nodes[idx as usize].depth + 1)
    }

    /// Queues the children of expanded position `me` (in `cur`, popped at
    /// `priority`); returns the path to a child that is won.
    fn expand(&mut self, me: u32, depth: u16, priority: i32, stall: u64) -> Option<Vec<Move>> {
        self.cur.settle();
        let mark = self.cur.dirty_mark();
        // The position's score, from its priority; children are scored
        // from it (`Parent`).
        let h = priority - self.member.depth_weight * (depth as i32 - 1);
        debug_assert_eq!(h, score(&self.cur, &self.member.weights));
        let mut parent = Parent::new(&self.cur, h, &self.heuristic);
        if stall > 0 && h < self.best_score {
            // Only a turn that can stall needs the score (stalling is
            // limited to the first rounds).
            self.best_score = h;
            self.last_improve = self.count;
        }
        let moves = self.moves.len();
        for k in 0..moves + self.parks.len() {
            let e = if k < moves {
                Edge::Move(self.moves[k])
            } else {
                Edge::Park(self.parks[k - moves])
            };
            if !self.unplayed(e, me, depth, &mut parent) {
                if let Some(path) = self.played(e, me, depth, mark, &mut parent) {
                    return Some(path);
                }
            }
        }
        None
    }

    /// Queues the child that `e` reaches, if new, without playing it, when
    /// nothing goes home on the way (it is then never won: the foundations
    /// stay as they are); false when it must be played.
    fn unplayed(&mut self, e: Edge, me: u32, depth: u16, parent: &mut Parent) -> bool {
        let eager = self.member.eager;
        let cur = &self.cur;
        let score = match e {
            Edge::Move(m @ Move::Shift { .. }) if !cur.exposes_home(m, eager) => {
                let (fp, ha, hd) = cur.narrow_after(m);
                if !self.visited.insert(fp) {
                    return true;
                }
                let s = parent.plain(&mut self.heuristic, cur, m, ha, hd);
                #[cfg(debug_assertions)]
                {
                    let mut b = cur.clone();
                    b.apply(m);
                    debug_assert_eq!(s, score(&b, &self.member.weights));
                }
                s
            }
            Edge::Park(
                p @ Park {
                    to: ParkTo::Column(d),
                    ..
                },
            ) if !cur.exposes_home_within(p.column as usize, p.parked as usize + 1, eager) => {
                let (c, k, d) = (p.column as usize, p.parked as usize, d as usize);
                let (fp, hc, hd) = cur.narrow_after_park(c, k, d);
                if !self.visited.insert(fp) {
                    return true;
                }
                let s = parent.park(&mut self.heuristic, cur, c, k, d, hc, hd);
                #[cfg(debug_assertions)]
                {
                    let mut b = cur.clone();
                    let (mut log, mut subs) = (Vec::new(), Vec::new());
                    park::play(&mut b, p, eager, &mut log, &mut subs);
                    debug_assert!(log.is_empty());
                    debug_assert_eq!(s, score(&b, &self.member.weights));
                }
                s
            }
            _ => return false,
        };
        self.queue_child(me, e, depth, score);
        true
    }

    /// Plays `e` (a move home, one after which cards go home, or a park
    /// that is not worked out unplayed), queues the child if new, and takes
    /// the moves back; returns the path to the child if it is won.
    fn played(
        &mut self,
        e: Edge,
        me: u32,
        depth: u16,
        mark: DirtyMark,
        parent: &mut Parent,
    ) -> Option<Vec<Move>> {
        let eager = self.member.eager;
        let cur = &mut self.cur;
        let autos = match e {
            Edge::Park(p) => {
                self.subs.clear();
                park::play(cur, p, eager, &mut self.log, &mut self.subs);
                0
            }
            Edge::Move(m) => {
                cur.apply(m);
                cur.autoplay_after(&mut self.log, m, eager)
            }
        };
        let mut pending: Option<(Unfinished, usize)> = None;
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
                return Some(self.real_path(child));
            }
            pending = Some((parent.played(&mut self.heuristic, cur), child));
            #[cfg(debug_assertions)]
            {
                full = score(cur, &self.member.weights);
            }
        }
        match e {
            Edge::Park(_) => park::undo(cur, &mut self.log, &self.subs),
            Edge::Move(m) => {
                cur.undo_autoplay(&mut self.log, autos);
                cur.undo(m);
            }
        }
        cur.restore_dirty(mark);
        if let Some((u, child)) = pending {
            let s = parent.finish(&mut self.heuristic, cur, u);
            #[cfg(debug_assertions)]
            debug_assert_eq!(s, full);
            self.queue
                .push(s + self.member.depth_weight * depth as i32, child as u32);
        }
        None
    }

    /// Adds a new child of `me` with `score` to the nodes and the queue.
    #[inline]
    fn queue_child(&mut self, me: u32, e: Edge, depth: u16, score: i32) {
        self.nodes.push(Child {
            parent: me,
            edge: Some(e),
            depth,
        });
        self.queue.push(
            score + self.member.depth_weight * depth as i32,
            (self.nodes.len() - 1) as u32,
        );
    }

    /// The edges from the root to generated position `i`.
    fn path(&self, mut i: usize) -> Vec<Edge> {
        let mut path = Vec::new();
        while i != 0 {
            let c = self.nodes[i];
            path.push(c.edge.expect("a position other than the root"));
            i = self.expanded[c.parent as usize].node as usize;
        }
        path.reverse();
        path
    }

    /// The moves from the root to generated position `i`, every park
    /// written out as the moves it is. A path of moves alone is its edges
    /// (a move is the same whatever the position); only a park needs the
    /// positions, to find its cells, so only a path with one is replayed.
    fn real_path(&self, i: usize) -> Vec<Move> {
        let path = self.path(i);
        if path.iter().any(|e| matches!(e, Edge::Park(_))) {
            return self.replayed(&path);
        }
        let out: Vec<Move> = path
            .iter()
            .map(|e| match *e {
                Edge::Move(m) => m,
                Edge::Park(_) => unreachable!("a path of moves alone"),
            })
            .collect();
        debug_assert_eq!(out, self.replayed(&path));
        out
    }

    /// `path`'s moves, played from the root with every park written out.
    fn replayed(&self, path: &[Edge]) -> Vec<Move> {
        let mut b = self.root.clone();
        let (mut log, mut subs, mut out) = (Vec::new(), Vec::new(), Vec::new());
        for &e in path {
            match e {
                Edge::Park(p) => {
                    subs.clear();
                    park::play(&mut b, p, self.member.eager, &mut log, &mut subs);
                    out.extend(subs.iter().map(|x| x.0));
                }
                Edge::Move(m) => {
                    b.apply(m);
                    b.autoplay_after(&mut log, m, self.member.eager);
                    out.push(m);
                }
            }
        }
        out
    }
}

/// Experiment: `member` alone, for at most `cap` expansions; anything but a
/// win is reported as a position limit.
pub fn solve_member_alone(
    board: &Board,
    limits: &Limits,
    cap: u64,
    member: &Member,
) -> SolveResult {
    let budget = Budget::new(limits);
    let mut r = BestFirst::new(board, *member, limits.max_bytes);
    let turn = r.run(cap, budget.whole(), &budget, None, 0);
    let stats = Stats {
        expanded: r.count,
        stored: r.stored(),
        peak_bytes: r.bytes(),
        elapsed: budget.elapsed(),
        ..Stats::default()
    };
    match turn {
        Turn::Solved(path) => {
            let eager = member.eager;
            let sol = solution::describe(board, &solution::shorten(board, &path, eager), eager);
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
