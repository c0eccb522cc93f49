//! PyO3 glue: the only module that knows about Python. Exposed as
//! `analyzer._engine`; the typed public API is `analyzer/__init__.py`.

use crate::board::{Board, Loc, Move};
use crate::solver::{self, Limits, Outcome, SolveResult};
use crate::variant::{Build, EmptyRule, MoveRule, Preset, Variant};
use pyo3::exceptions::PyRuntimeError;
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyType};
use std::panic::{catch_unwind, AssertUnwindSafe};

/// Raises `analyzer.errors.<kind>(msg)`.
fn err(py: Python<'_>, kind: &str, msg: String) -> PyErr {
    let cls = py
        .import("analyzer.errors")
        .and_then(|m| m.getattr(kind))
        .and_then(|c| c.cast_into::<PyType>().map_err(PyErr::from));
    match cls {
        Ok(cls) => PyErr::from_type(cls, msg),
        Err(_) => PyRuntimeError::new_err(msg),
    }
}

/// Runs `f`, turning a Rust panic into `analyzer.errors.EngineError`.
fn guard<T>(py: Python<'_>, f: impl FnOnce() -> T) -> PyResult<T> {
    catch_unwind(AssertUnwindSafe(f)).map_err(|p| err(py, "EngineError", panic_text(&p)))
}

thread_local! {
    /// Where the last panic on this thread happened (filled by the hook).
    static PANIC_AT: std::cell::RefCell<String> = const { std::cell::RefCell::new(String::new()) };
}

/// Panics are reported as Python exceptions or `error` rows, never printed:
/// the hook only records where they happened.
fn install_panic_hook() {
    std::panic::set_hook(Box::new(|info| {
        let at = info
            .location()
            .map(|l| format!(" at {}:{}", l.file(), l.line()))
            .unwrap_or_default();
        PANIC_AT.with(|p| *p.borrow_mut() = at);
    }));
}

#[allow(clippy::borrowed_box)]
fn panic_text(p: &Box<dyn std::any::Any + Send>) -> String {
    let msg = p
        .downcast_ref::<String>()
        .cloned()
        .or_else(|| p.downcast_ref::<&str>().map(|s| s.to_string()))
        .unwrap_or_else(|| "unknown panic".into());
    let at = PANIC_AT.with(|p| p.borrow().clone());
    format!("engine panic: {msg}{at}")
}

type VariantTuple = (String, u8, u8, String, String, String, u8);

fn variant_from(py: Python<'_>, t: &VariantTuple) -> PyResult<Variant> {
    let verr = |e: crate::VariantError| err(py, "VariantError", e.0);
    let preset: Preset = t.0.parse().map_err(verr)?;
    let build: Build = t.3.parse().map_err(verr)?;
    let empty: EmptyRule = t.4.parse().map_err(verr)?;
    let move_rule: MoveRule = t.5.parse().map_err(verr)?;
    let v = Variant {
        preset,
        cells: t.1,
        columns: t.2,
        build,
        empty,
        move_rule,
        dealt_to_cells: t.6,
    };
    v.validate().map_err(verr)
}

fn variant_tuple(v: Variant) -> VariantTuple {
    (
        v.preset.name().into(),
        v.cells,
        v.columns,
        v.build.name().into(),
        v.empty.name().into(),
        v.move_rule.name().into(),
        v.dealt_to_cells,
    )
}

/// The presets as tuples, for the Python `Variant` table to check against.
#[pyfunction]
fn presets() -> Vec<VariantTuple> {
    Preset::ALL
        .into_iter()
        .map(|p| variant_tuple(Variant::preset(p)))
        .collect()
}

fn board_err(py: Python<'_>, e: crate::BoardError) -> PyErr {
    match e {
        crate::BoardError::Deal(d) => err(py, "DealNumberError", d.to_string()),
        crate::BoardError::Text(t) => err(py, "BoardError", t),
    }
}

/// A position (immutable from Python: `apply` returns a new board).
#[pyclass(name = "Board", module = "analyzer._engine", frozen)]
#[derive(Clone)]
struct PyBoard {
    inner: Board,
}

fn parse_move(py: Python<'_>, b: &Board, text: &str) -> PyResult<Move> {
    let m = b.parse_move(text).map_err(|e| match e {
        crate::MoveError::Notation(_) => err(py, "NotationError", e.to_string()),
        crate::MoveError::Illegal { .. } => err(py, "IllegalMoveError", e.to_string()),
    })?;
    b.check(m).map_err(|r| {
        err(
            py,
            "IllegalMoveError",
            format!("illegal move {text:?}: {r}"),
        )
    })?;
    Ok(m)
}

#[pymethods]
impl PyBoard {
    /// Board text in fc-solve's format.
    fn text(&self) -> String {
        self.inner.to_text()
    }
    /// Only the columns, one line each.
    fn rows(&self) -> String {
        self.inner.to_rows()
    }
    fn variant(&self) -> VariantTuple {
        variant_tuple(self.inner.variant())
    }
    fn columns(&self) -> Vec<Vec<String>> {
        (0..self.inner.ncols())
            .map(|i| {
                self.inner
                    .column(i)
                    .iter()
                    .map(|&c| crate::Card(c).to_string())
                    .collect()
            })
            .collect()
    }
    fn cells(&self) -> Vec<Option<String>> {
        (0..self.inner.ncells())
            .map(|i| self.inner.cell(i).map(|c| c.to_string()))
            .collect()
    }
    /// Cards on each foundation, suits in C D H S order.
    fn foundations(&self) -> [u8; 4] {
        self.inner.foundations()
    }
    fn is_won(&self) -> bool {
        self.inner.is_won()
    }
    /// Every legal move in standard notation.
    fn legal_moves(&self) -> Vec<String> {
        let b = &self.inner;
        b.legal_moves()
            .into_iter()
            .map(|m| b.move_to_notation(m))
            .collect()
    }
    /// The board after a move (checked).
    fn apply(&self, py: Python<'_>, mv: &str) -> PyResult<PyBoard> {
        let m = parse_move(py, &self.inner, mv)?;
        let mut b = self.inner.clone();
        b.apply(m);
        Ok(PyBoard { inner: b })
    }
    /// The single-card moves a (multi-card) move stands for.
    fn expand(&self, py: Python<'_>, mv: &str) -> PyResult<Option<Vec<String>>> {
        let m = parse_move(py, &self.inner, mv)?;
        Ok(solver::expand_move(&self.inner, m).map(|ms| {
            let mut b = self.inner.clone();
            ms.into_iter()
                .map(|m| {
                    let s = b.move_to_notation(m);
                    b.apply(m);
                    s
                })
                .collect()
        }))
    }
    /// Plays the safe automatic foundation moves: (board, moves played).
    fn autoplay(&self) -> (PyBoard, Vec<String>) {
        let mut b = self.inner.clone();
        let mut out = Vec::new();
        loop {
            let mut log = Vec::new();
            let before = b.clone();
            if b.autoplay(&mut log) == 0 {
                break;
            }
            b = before;
            out.push(b.move_to_notation(log[0]));
            b.apply(log[0]);
        }
        (PyBoard { inner: b }, out)
    }
    /// 128-bit fingerprint of the canonical position.
    fn fingerprint(&self) -> u128 {
        self.inner.fingerprint()
    }
    /// Exact canonical key (ignores column and cell order).
    fn canonical_key<'py>(&self, py: Python<'py>) -> Bound<'py, PyBytes> {
        PyBytes::new(py, &self.inner.canonical_key())
    }
    /// Most cards a multi-card move onto column `col` (0-based) may carry.
    fn max_run_to(&self, col: usize) -> u32 {
        self.inner.max_run_to(col.min(self.inner.ncols() - 1))
    }
    fn __eq__(&self, other: &PyBoard) -> bool {
        self.inner == other.inner
    }
    fn __hash__(&self) -> u64 {
        self.inner.fingerprint() as u64
    }
}

#[pyfunction]
fn deal(py: Python<'_>, n: i128, variant: VariantTuple) -> PyResult<PyBoard> {
    let v = variant_from(py, &variant)?;
    if n < 1 || n > crate::MAX_DEAL as i128 {
        return Err(err(
            py,
            "DealNumberError",
            crate::DealNumberError(n).to_string(),
        ));
    }
    let b = Board::deal(n as u64, v).map_err(|e| board_err(py, e))?;
    Ok(PyBoard { inner: b })
}

#[pyfunction]
fn board_from_text(py: Python<'_>, text: &str, variant: VariantTuple) -> PyResult<PyBoard> {
    let v = variant_from(py, &variant)?;
    let b = Board::from_text(text, v).map_err(|e| board_err(py, e))?;
    Ok(PyBoard { inner: b })
}

/// A result as a plain tuple:
/// (outcome, limit_reason, solution, auto_flags, single_len, multi_len,
///  expanded, stored, peak_bytes, elapsed_s, error).
type ResultTuple = (
    String,
    Option<String>,
    Vec<String>,
    Vec<bool>,
    Option<u32>,
    Option<u32>,
    u64,
    u64,
    u64,
    f64,
    Option<String>,
);

fn result_tuple(r: &SolveResult) -> ResultTuple {
    let (sol, auto, single, multi) = match &r.solution {
        Some(s) => (
            s.notation.iter().map(|n| n.as_str().to_owned()).collect(),
            s.auto.clone(),
            s.single_len,
            Some(s.multi_len),
        ),
        None => (Vec::new(), Vec::new(), None, None),
    };
    let limit = match r.outcome {
        Outcome::Limit(k) => Some(k.name().to_string()),
        _ => None,
    };
    (
        r.outcome.name().into(),
        limit,
        sol,
        auto,
        single,
        multi,
        r.stats.expanded,
        r.stats.stored,
        r.stats.peak_bytes,
        r.stats.elapsed.as_secs_f64(),
        None,
    )
}

fn error_tuple(msg: String) -> ResultTuple {
    (
        "error".into(),
        None,
        Vec::new(),
        Vec::new(),
        None,
        None,
        0,
        0,
        0,
        0.0,
        Some(msg),
    )
}

type LimitsTuple = (u64, u64, Option<f64>);

/// (min cells or None, [(cells, result)]).
type MinCellsTuple = (Option<u8>, Vec<(u8, ResultTuple)>);

fn limits_from(t: LimitsTuple) -> Limits {
    Limits {
        max_positions: t.0,
        max_bytes: t.1,
        max_seconds: t.2,
    }
}

#[pyfunction]
fn solve(py: Python<'_>, board: &PyBoard, limits: LimitsTuple) -> PyResult<ResultTuple> {
    let b = board.inner.clone();
    let l = limits_from(limits);
    let r = py.detach(|| catch_unwind(AssertUnwindSafe(|| solver::solve(&b, &l))));
    r.map(|r| result_tuple(&r))
        .map_err(|p| err(py, "EngineError", panic_text(&p)))
}

/// Solves deals `start..stop` (stop excluded) with the GIL released. A panic
/// on one deal becomes an `error` row for that deal; the rest go on.
/// `fail_deals` lists deals that must fail (fault injection for tests).
#[pyfunction]
#[pyo3(signature = (start, stop, variant, limits, fail_deals=Vec::new()))]
fn solve_range(
    py: Python<'_>,
    start: i128,
    stop: i128,
    variant: VariantTuple,
    limits: LimitsTuple,
    fail_deals: Vec<u64>,
) -> PyResult<Vec<(u64, ResultTuple)>> {
    let v = variant_from(py, &variant)?;
    for n in [start, stop - 1] {
        if stop > start && (n < 1 || n > crate::MAX_DEAL as i128) {
            return Err(err(
                py,
                "DealNumberError",
                crate::DealNumberError(n).to_string(),
            ));
        }
    }
    let l = limits_from(limits);
    let out = py.detach(|| {
        (start.max(1) as u64..stop.max(start).max(1) as u64)
            .map(|n| {
                let r = catch_unwind(AssertUnwindSafe(|| {
                    if fail_deals.contains(&n) {
                        panic!("injected failure for deal {n}");
                    }
                    let b = Board::deal(n, v).expect("validated deal number");
                    solver::solve(&b, &l)
                }));
                match r {
                    Ok(r) => (n, result_tuple(&r)),
                    Err(p) => (n, error_tuple(panic_text(&p))),
                }
            })
            .collect()
    });
    Ok(out)
}

/// Smallest number of cells that wins deal `n`: (min or None, [(cells, result)]).
#[pyfunction]
fn min_cells(
    py: Python<'_>,
    n: i128,
    variant: VariantTuple,
    max_cells: u8,
    limits: LimitsTuple,
) -> PyResult<MinCellsTuple> {
    let v = variant_from(py, &variant)?;
    if n < 1 || n > crate::MAX_DEAL as i128 {
        return Err(err(
            py,
            "DealNumberError",
            crate::DealNumberError(n).to_string(),
        ));
    }
    if max_cells as usize > crate::variant::MAX_CELLS || max_cells < v.dealt_to_cells {
        return Err(err(
            py,
            "VariantError",
            format!(
                "max_cells {max_cells} is outside {}..{}",
                v.dealt_to_cells,
                crate::variant::MAX_CELLS
            ),
        ));
    }
    let l = limits_from(limits);
    let r = py.detach(|| {
        catch_unwind(AssertUnwindSafe(|| {
            solver::min_cells(n as u64, v, max_cells, &l)
        }))
    });
    match r {
        Ok((m, rs)) => Ok((m, rs.iter().map(|(k, r)| (*k, result_tuple(r))).collect())),
        Err(p) => Err(err(py, "EngineError", panic_text(&p))),
    }
}

/// "release" or "debug": benchmarks refuse a debug build.
#[pyfunction]
fn build_profile() -> &'static str {
    if cfg!(debug_assertions) {
        "debug"
    } else {
        "release"
    }
}

/// Location characters, for tests.
#[pyfunction]
fn notation_chars() -> (String, String) {
    let cols: String = (0..10).map(|i| Loc::Column(i).to_char()).collect();
    let cells: String = (0..10).map(|i| Loc::Cell(i).to_char()).collect();
    (cols, cells)
}

#[pyfunction]
fn _panic_for_test(py: Python<'_>) -> PyResult<()> {
    guard(py, || panic!("deliberate panic"))
}

#[pymodule]
fn _engine(m: &Bound<'_, PyModule>) -> PyResult<()> {
    install_panic_hook();
    m.add(
        "__version__",
        concat!(env!("CARGO_PKG_VERSION"), "+src.", env!("FCA_ENGINE_BUILD")),
    )?;
    m.add_class::<PyBoard>()?;
    m.add_function(wrap_pyfunction!(presets, m)?)?;
    m.add_function(wrap_pyfunction!(deal, m)?)?;
    m.add_function(wrap_pyfunction!(board_from_text, m)?)?;
    m.add_function(wrap_pyfunction!(solve, m)?)?;
    m.add_function(wrap_pyfunction!(solve_range, m)?)?;
    m.add_function(wrap_pyfunction!(min_cells, m)?)?;
    m.add_function(wrap_pyfunction!(build_profile, m)?)?;
    m.add_function(wrap_pyfunction!(notation_chars, m)?)?;
    m.add_function(wrap_pyfunction!(_panic_for_test, m)?)?;
    Ok(())
}
