//! Progress of one solve, for a watcher on another thread (the CLI's
//! progress lines on a proof that takes an hour): which search is running,
//! with how many cells, and its counts so far.
//!
//! A caller that wants it runs the solve inside `watched`, which hands this
//! thread's searches a `Progress` to publish to; without a watcher the
//! searches publish nothing. The searches publish where they already look at
//! the clock (every 1,024 expansions or so) and after each turn of the
//! portfolio. Publishing only stores counters: it never steers a search, so
//! a watched solve gives the same outcome, solution and counts as any other.
//!
//! The watcher may also stop the solve (`Progress::cancel`, a Ctrl-C): its
//! searches then end as if out of time, at their next look at the clock.

use std::cell::RefCell;
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicU8, Ordering::Relaxed};
use std::sync::Arc;

/// Which search a solve is running.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
#[repr(u8)]
pub enum Stage {
    /// The portfolio's rounds, the complete search taking turns in them,
    /// and the first-move probe.
    Portfolio = 1,
    /// The complete search deciding alone.
    Complete = 2,
    /// The reserve's members, after the complete search filled its memory.
    Reserve = 3,
    /// The prover, in layers, with disk.
    Prover = 4,
}

impl Stage {
    pub fn name(self) -> &'static str {
        match self {
            Stage::Portfolio => "portfolio",
            Stage::Complete => "complete",
            Stage::Reserve => "reserve",
            Stage::Prover => "prover",
        }
    }

    fn from_u8(v: u8) -> Option<Stage> {
        [
            Stage::Portfolio,
            Stage::Complete,
            Stage::Reserve,
            Stage::Prover,
        ]
        .into_iter()
        .find(|s| *s as u8 == v)
    }
}

/// The running search's counts: positions expanded and stored by this
/// stage so far, the bytes of memory and spill disk it holds now, and (the
/// prover) the layers it has started.
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq)]
pub struct Counts {
    pub expanded: u64,
    pub stored: u64,
    pub bytes: u64,
    pub disk: u64,
    pub layer: u64,
}

/// What a watcher reads (`Progress::snapshot`).
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct Snapshot {
    /// `None` before the first search has published.
    pub stage: Option<Stage>,
    /// The cells of the game being solved (`min_cells` solves several).
    pub cells: u8,
    pub counts: Counts,
}

/// Counters a solve publishes to and a watcher reads, each on its own; a
/// snapshot taken while they change may mix two moments, which a progress
/// line can live with.
#[derive(Debug, Default)]
pub struct Progress {
    cancelled: AtomicBool,
    stage: AtomicU8,
    cells: AtomicU8,
    expanded: AtomicU64,
    stored: AtomicU64,
    bytes: AtomicU64,
    disk: AtomicU64,
    layer: AtomicU64,
}

impl Progress {
    pub fn new() -> Self {
        Self::default()
    }

    pub fn snapshot(&self) -> Snapshot {
        Snapshot {
            stage: Stage::from_u8(self.stage.load(Relaxed)),
            cells: self.cells.load(Relaxed),
            counts: Counts {
                expanded: self.expanded.load(Relaxed),
                stored: self.stored.load(Relaxed),
                bytes: self.bytes.load(Relaxed),
                disk: self.disk.load(Relaxed),
                layer: self.layer.load(Relaxed),
            },
        }
    }

    /// Asks the solve to stop: it ends on its time limit (`Limit(Time)`)
    /// at its searches' next look at the clock.
    pub fn cancel(&self) {
        self.cancelled.store(true, Relaxed);
    }

    fn publish(&self, stage: Stage, c: Counts) {
        self.stage.store(stage as u8, Relaxed);
        self.expanded.store(c.expanded, Relaxed);
        self.stored.store(c.stored, Relaxed);
        self.bytes.store(c.bytes, Relaxed);
        self.disk.store(c.disk, Relaxed);
        self.layer.store(c.layer, Relaxed);
    }
}

thread_local! {
    static WATCHER: RefCell<Option<Arc<Progress>>> = const { RefCell::new(None) };
}

/// Runs `f` (a solve on this thread) with its searches publishing to
/// `progress`; the thread's watcher before is back afterwards, a panic
/// included.
pub fn watched<R>(progress: &Arc<Progress>, f: impl FnOnce() -> R) -> R {
    struct Restore(Option<Arc<Progress>>);
    impl Drop for Restore {
        fn drop(&mut self) {
            let prev = self.0.take();
            WATCHER.with(|w| *w.borrow_mut() = prev);
        }
    }
    let prev = WATCHER.with(|w| w.replace(Some(progress.clone())));
    let _restore = Restore(prev);
    f()
}

/// `f` of this thread's watcher, if the solve is watched.
#[inline]
fn with_watcher<R>(f: impl FnOnce(&Progress) -> R) -> Option<R> {
    WATCHER.with(|w| w.borrow().as_deref().map(f))
}

/// Publishes the running search's counts, if the solve is watched.
#[inline]
pub(crate) fn report(stage: Stage, counts: impl FnOnce() -> Counts) {
    with_watcher(|p| p.publish(stage, counts()));
}

/// Whether the watcher has asked the solve to stop (`Progress::cancel`);
/// the searches check it with their time limit.
#[inline]
pub(crate) fn cancelled() -> bool {
    with_watcher(|p| p.cancelled.load(Relaxed)).unwrap_or(false)
}

/// Publishes the cells of the game about to be solved, if watched.
pub(crate) fn report_cells(cells: u8) {
    with_watcher(|p| p.cells.store(cells, Relaxed));
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::board::Board;
    use crate::solver::{solve, LimitKind, Limits, Outcome};
    use crate::variant::Variant;

    #[test]
    fn a_watched_solve_publishes_and_gives_the_same_result() {
        // 11982 with 4 cells in 100 kB: the complete search fills its
        // memory at once and the prover decides, so every stage but the
        // reserve (2 cells at most) publishes on the way.
        let v = Variant::default().with_cells(4);
        let b = Board::deal(11982, v).unwrap();
        let limits = Limits {
            max_bytes: 100_000,
            max_disk: 1 << 30,
            spill_dir: Some(std::env::temp_dir()),
            ..Limits::default()
        };
        let plain = solve(&b, &limits);
        assert_eq!(plain.outcome, Outcome::Unsolvable);
        let p = Arc::new(Progress::new());
        assert_eq!(p.snapshot().stage, None);
        let watched_result = watched(&p, || solve(&b, &limits));
        assert_eq!(watched_result.outcome, plain.outcome);
        assert_eq!(watched_result.stats.expanded, plain.stats.expanded);
        assert_eq!(watched_result.stats.stored, plain.stats.stored);
        let s = p.snapshot();
        assert_eq!(s.stage, Some(Stage::Prover));
        assert_eq!(s.cells, 4);
        assert!(s.counts.expanded > 0 && s.counts.layer > 0, "{s:?}");
        // Cancelled, the same solve ends on its time limit at once.
        let c = Arc::new(Progress::new());
        c.cancel();
        let stopped = watched(&c, || solve(&b, &limits));
        assert_eq!(stopped.outcome, Outcome::Limit(LimitKind::Time));
        assert!(stopped.stats.expanded < plain.stats.expanded);
        // Outside `watched` nothing is published.
        let q = Arc::new(Progress::new());
        let _ = watched(&q, || 0);
        let _ = solve(&b, &limits);
        assert_eq!(q.snapshot().stage, None);
        assert_eq!(p.snapshot(), s);
    }
}
