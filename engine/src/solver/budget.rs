//! The accounting of one solve against its `Limits`: what the searches hold
//! at once (`Load`), what one of them may still take beside the others
//! (`Room`), the clock, and the most held at once (`Budget`). Each search
//! checks a growth before it makes it, so a limit is reported before it is
//! exceeded (docs/SOLVER.md, "Limits").

use super::result::Limits;
use std::time::{Duration, Instant};

/// Bytes and positions held.
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq)]
pub(super) struct Load {
    pub bytes: u64,
    pub stored: u64,
}

impl std::ops::Add for Load {
    type Output = Load;
    fn add(self, o: Load) -> Load {
        Load {
            bytes: self.bytes + o.bytes,
            stored: self.stored + o.stored,
        }
    }
}

impl std::ops::Sub for Load {
    type Output = Load;
    fn sub(self, o: Load) -> Load {
        Load {
            bytes: self.bytes - o.bytes,
            stored: self.stored - o.stored,
        }
    }
}

impl std::iter::Sum for Load {
    fn sum<I: Iterator<Item = Load>>(it: I) -> Load {
        it.fold(Load::default(), |a, b| a + b)
    }
}

/// What one search may hold: the limits, less what the other searches of
/// the solve hold.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub(super) struct Room {
    pub bytes: u64,
    pub positions: u64,
}

/// One solve's limits, clock, and the most it has held at once.
pub(super) struct Budget {
    limits: Limits,
    start: Instant,
    peak: Load,
}

impl Budget {
    /// Starts the clock.
    pub fn new(limits: &Limits) -> Self {
        Budget {
            limits: limits.clone(),
            start: Instant::now(),
            peak: Load::default(),
        }
    }

    pub fn limits(&self) -> &Limits {
        &self.limits
    }

    pub fn elapsed(&self) -> Duration {
        self.start.elapsed()
    }

    /// Whether the time limit has passed (searches deterministic only
    /// without one); a solve its watcher stopped (`progress::cancelled`)
    /// is out of time too.
    pub fn out_of_time(&self) -> bool {
        self.limits
            .max_seconds
            .is_some_and(|s| self.elapsed().as_secs_f64() > s)
            || super::progress::cancelled()
    }

    /// All of the limits, for a search that runs alone.
    pub fn whole(&self) -> Room {
        self.room_beside(Load::default())
    }

    /// What a search may hold while others hold `others`.
    pub fn room_beside(&self, others: Load) -> Room {
        Room {
            bytes: self.limits.max_bytes.saturating_sub(others.bytes),
            positions: self.limits.max_positions.saturating_sub(others.stored),
        }
    }

    /// Records that `held` is held at once.
    pub fn note(&mut self, held: Load) {
        self.peak.bytes = self.peak.bytes.max(held.bytes);
        self.peak.stored = self.peak.stored.max(held.stored);
    }

    /// The most held at once so far.
    pub fn peak(&self) -> Load {
        self.peak
    }
}

/// Bytes of a hashbrown table with room for `cap` keys of `key` bytes:
/// buckets = next_pow2(cap * 8 / 7), a key and a control byte each.
pub(super) fn table_bytes(cap: usize, key: usize) -> u64 {
    if cap == 0 {
        return 0;
    }
    let buckets = (cap * 8 / 7).next_power_of_two().max(4);
    (buckets * (key + 1)) as u64
}

/// The capacity a stack grows to (`grow_stack`) to take `extra` more
/// elements: an eighth more, or what is needed if that is more. A stack
/// grown an eighth at a time holds at most an eighth it does not use, where
/// a `Vec` left to double may hold as much again as it uses, and a growth
/// needs the old buffer and an eighth more beside it, not twice.
fn stack_capacity<T>(v: &Vec<T>, extra: usize) -> usize {
    (v.capacity() + v.capacity() / 8)
        .max(v.len() + extra)
        .max(4)
}

/// Bytes of the buffer `v` grows into with `grow_stack(v, extra)`.
pub(super) fn vec_growth<T>(v: &Vec<T>, extra: usize) -> u64 {
    (stack_capacity(v, extra) * std::mem::size_of::<T>()) as u64
}

/// Makes room in `v` for `extra` more elements, growing it by an eighth
/// (`stack_capacity`) when it has too little.
pub(super) fn grow_stack<T>(v: &mut Vec<T>, extra: usize) {
    if v.len() + extra > v.capacity() {
        let cap = stack_capacity(v, extra);
        v.reserve_exact(cap - v.len());
    }
}
