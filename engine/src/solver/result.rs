//! What a solve is given and gives back: its `Limits`, and its
//! `SolveResult` (outcome, solution, statistics).

use crate::board::{Move, Notation};
use std::path::PathBuf;
use std::time::Duration;

/// Budgets for one search.
#[derive(Clone, Debug, PartialEq)]
pub struct Limits {
    /// Most positions stored by one search.
    pub max_positions: u64,
    /// Most bytes of memory for a search's visited sets, stacks and queues.
    pub max_bytes: u64,
    /// Most bytes of spill files the prover may hold at once (`crate::prover`);
    /// 0: none, the prover keeps everything in memory.
    pub max_disk: u64,
    /// Wall-clock budget; `None` for none (searches stay deterministic only
    /// without a time limit).
    pub max_seconds: Option<f64>,
    /// Where the prover's spill files go (they have no name there and
    /// vanish with the process). Never changes a verdict, only where the
    /// disk budget is spent; `None`: nowhere, the prover keeps to memory
    /// whatever `max_disk` says (the Python API passes the system's
    /// temporary directory unless told otherwise).
    pub spill_dir: Option<PathBuf>,
}

/// By default memory and disk bind: the position budget is no bound of its
/// own (`u64::MAX`).
impl Default for Limits {
    fn default() -> Self {
        Limits {
            max_positions: u64::MAX,
            max_bytes: 1 << 30,
            max_disk: 0,
            max_seconds: None,
            spill_dir: None,
        }
    }
}

/// The budget that ran out.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum LimitKind {
    Positions,
    Bytes,
    Disk,
    Time,
}

impl LimitKind {
    pub fn name(self) -> &'static str {
        match self {
            LimitKind::Positions => "positions",
            LimitKind::Bytes => "bytes",
            LimitKind::Disk => "disk",
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
    /// Peak bytes of spill files: the complete search's path file, the
    /// prover's files (never both at once).
    pub peak_disk: u64,
    pub elapsed: Duration,
}

/// A solution: moves in order, automatic foundation moves written out.
#[derive(Clone, Debug, PartialEq)]
pub struct Solution {
    pub moves: Vec<Move>,
    /// Standard notation of each move, in the position it is played from.
    pub notation: Vec<Notation>,
    /// Whether each move was an automatic (safe) foundation move.
    pub auto: Vec<bool>,
    /// Length counting each multi-card move as one move.
    pub multi_len: u32,
    /// Length once every multi-card move is expanded into single-card moves
    /// (`None` under the `unlimited` rule, where that is not always possible).
    pub single_len: Option<u32>,
}

impl Solution {
    /// This solution followed by `then`, a solution from the position this
    /// one ends in.
    pub fn then(mut self, then: Solution) -> Solution {
        self.moves.extend(then.moves);
        self.notation.extend(then.notation);
        self.auto.extend(then.auto);
        self.multi_len += then.multi_len;
        self.single_len = self.single_len.zip(then.single_len).map(|(a, b)| a + b);
        self
    }
}

/// The result of one search.
#[derive(Clone, Debug, PartialEq)]
pub struct SolveResult {
    pub outcome: Outcome,
    pub solution: Option<Solution>,
    pub stats: Stats,
}
