//! What a solve is given and gives back: its `Limits`, and its
//! `SolveResult` (outcome, solution, statistics).

use crate::board::{Move, Notation};
use std::time::Duration;

/// Budgets for one search.
#[derive(Copy, Clone, Debug, PartialEq)]
pub struct Limits {
    /// Most positions stored in the visited set.
    pub max_positions: u64,
    /// Most bytes for the visited set and search stack together.
    pub max_bytes: u64,
    /// Wall-clock budget; `None` for none (searches stay deterministic only
    /// without a time limit).
    pub max_seconds: Option<f64>,
}

/// By default the byte budget binds: 1 GiB holds at most ~30 M positions
/// in the complete search's visited set, so the position budget (100 M) is
/// only a second bound (with 20 M, a 3-cell deal that 1 GiB proves ended as
/// `limit`; docs/solver-log.md).
impl Default for Limits {
    fn default() -> Self {
        Limits {
            max_positions: 100_000_000,
            max_bytes: 1 << 30,
            max_seconds: None,
        }
    }
}

/// The budget that ran out.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum LimitKind {
    Positions,
    Bytes,
    Time,
}

impl LimitKind {
    pub fn name(self) -> &'static str {
        match self {
            LimitKind::Positions => "positions",
            LimitKind::Bytes => "bytes",
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

/// The result of one search.
#[derive(Clone, Debug, PartialEq)]
pub struct SolveResult {
    pub outcome: Outcome,
    pub solution: Option<Solution>,
    pub stats: Stats,
}
