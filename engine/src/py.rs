//! PyO3 glue: the only module that knows about Python. Exposed as
//! `analyzer._engine`; the typed public API is `analyzer/__init__.py`.

use crate::board::{Board, Loc, Move, Notation};
use crate::solver::progress::{self, Progress};
use crate::solver::{self, Limits, Outcome, SolveResult, Stats};
use crate::variant::{Build, EmptyRule, MoveRule, Preset, Variant};
use pyo3::exceptions::PyRuntimeError;
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyDict, PyString, PyTuple, PyType};
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::Arc;

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

/// A variant across the boundary, with `analyzer.Variant`'s fields: handed
/// to Python as a record, and read from any object with those fields as
/// attributes (a `Variant` itself, or a record).
#[pyclass(frozen, get_all, name = "VariantRecord", module = "analyzer._engine")]
#[derive(FromPyObject)]
struct VariantRecord {
    name: String,
    cells: u8,
    columns: u8,
    build: String,
    empty: String,
    move_rule: String,
    dealt_to_cells: u8,
}

fn variant_from(py: Python<'_>, f: &VariantRecord) -> PyResult<Variant> {
    let verr = |e: crate::VariantError| err(py, "VariantError", e.0);
    let v = Variant {
        preset: f.name.parse::<Preset>().map_err(verr)?,
        cells: f.cells,
        columns: f.columns,
        build: f.build.parse::<Build>().map_err(verr)?,
        empty: f.empty.parse::<EmptyRule>().map_err(verr)?,
        move_rule: f.move_rule.parse::<MoveRule>().map_err(verr)?,
        dealt_to_cells: f.dealt_to_cells,
    };
    v.validate().map_err(verr)
}

impl From<Variant> for VariantRecord {
    fn from(v: Variant) -> Self {
        VariantRecord {
            name: v.preset.name().into(),
            cells: v.cells,
            columns: v.columns,
            build: v.build.name().into(),
            empty: v.empty.name().into(),
            move_rule: v.move_rule.name().into(),
            dealt_to_cells: v.dealt_to_cells,
        }
    }
}

/// The presets, for the Python `Variant` table to check against.
#[pyfunction]
fn presets() -> Vec<VariantRecord> {
    Preset::ALL
        .into_iter()
        .map(|p| Variant::preset(p).into())
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
    fn variant(&self) -> VariantRecord {
        self.inner.variant().into()
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

/// `n` if it is a deal number, else `analyzer.errors.DealNumberError`.
fn check_deal(py: Python<'_>, n: i128) -> PyResult<u64> {
    if n < 1 || n > crate::MAX_DEAL as i128 {
        return Err(err(
            py,
            "DealNumberError",
            crate::DealNumberError(n).to_string(),
        ));
    }
    Ok(n as u64)
}

#[pyfunction]
fn deal(py: Python<'_>, n: i128, variant: VariantRecord) -> PyResult<PyBoard> {
    let v = variant_from(py, &variant)?;
    check_deal(py, n)?;
    let b = Board::deal(n as u64, v).map_err(|e| board_err(py, e))?;
    Ok(PyBoard { inner: b })
}

#[pyfunction]
fn board_from_text(py: Python<'_>, text: &str, variant: VariantRecord) -> PyResult<PyBoard> {
    let v = variant_from(py, &variant)?;
    let b = Board::from_text(text, v).map_err(|e| board_err(py, e))?;
    Ok(PyBoard { inner: b })
}

/// A search's result, as `analyzer.SolveResult` names its fields (without
/// the deal and variant, which the caller knows). `solution` and `auto` are
/// tuples made once, their move texts shared (`Texts`).
#[pyclass(frozen, get_all, name = "SolveRecord", module = "analyzer._engine")]
struct SolveRecord {
    outcome: &'static str,
    limit_reason: Option<&'static str>,
    solution: Py<PyTuple>,
    /// Whether each move of `solution` is an automatic foundation move.
    auto: Py<PyTuple>,
    solution_length_single: Option<u32>,
    solution_length_multi: Option<u32>,
    positions_expanded: u64,
    positions_stored: u64,
    peak_bytes: u64,
    /// Peak bytes of spill files: the complete search's path, the prover's
    /// (0 when it wrote none).
    peak_disk_bytes: u64,
    elapsed_s: f64,
    error: Option<String>,
}

/// A search as it ends on the engine's side, before Python sees it: its
/// result, or the message of the panic that ended it.
enum Searched {
    Done(SolveResult),
    Panicked(String),
}

impl From<std::thread::Result<SolveResult>> for Searched {
    fn from(r: std::thread::Result<SolveResult>) -> Self {
        match r {
            Ok(r) => Searched::Done(r),
            Err(p) => Searched::Panicked(panic_text(&p)),
        }
    }
}

/// Python strings of move texts, each made once per call: a batch's
/// solutions repeat a few dozen texts millions of times. Direct-mapped by
/// the notation's `key`: a slot keeps the last text made there, so two
/// notations sharing a slot only cost a new string now and then (a
/// solution's moves are a few hundred distinct texts at most, in 1,024
/// slots), and a lookup is a multiply and a compare.
struct Texts<'py> {
    py: Python<'py>,
    slots: Vec<Option<(u64, Bound<'py, PyString>)>>,
}

/// log2 of `Texts`' slots.
const TEXT_SLOT_BITS: u32 = 10;

impl<'py> Texts<'py> {
    fn new(py: Python<'py>) -> Self {
        Texts {
            py,
            slots: vec![None; 1 << TEXT_SLOT_BITS],
        }
    }

    #[inline]
    fn get(&mut self, n: Notation) -> Bound<'py, PyString> {
        let k = n.key();
        let i = (k.wrapping_mul(0x9E37_79B9_7F4A_7C15) >> (64 - TEXT_SLOT_BITS)) as usize;
        match &self.slots[i] {
            Some((key, s)) if *key == k => s.clone(),
            _ => {
                let s = PyString::new(self.py, n.as_str());
                self.slots[i] = Some((k, s.clone()));
                s
            }
        }
    }

    fn record(&mut self, s: &Searched) -> PyResult<SolveRecord> {
        let py = self.py;
        let r = match s {
            Searched::Done(r) => r,
            Searched::Panicked(msg) => {
                return Ok(SolveRecord {
                    outcome: "error",
                    limit_reason: None,
                    solution: PyTuple::empty(py).unbind(),
                    auto: PyTuple::empty(py).unbind(),
                    solution_length_single: None,
                    solution_length_multi: None,
                    positions_expanded: 0,
                    positions_stored: 0,
                    peak_bytes: 0,
                    peak_disk_bytes: 0,
                    elapsed_s: 0.0,
                    error: Some(msg.clone()),
                })
            }
        };
        let sol = r.solution.as_ref();
        let notation: &[Notation] = sol.map_or(&[], |s| &s.notation);
        let auto: &[bool] = sol.map_or(&[], |s| &s.auto);
        let texts = PyTuple::new(py, notation.iter().map(|&n| self.get(n)))?;
        Ok(SolveRecord {
            outcome: r.outcome.name(),
            limit_reason: match r.outcome {
                Outcome::Limit(k) => Some(k.name()),
                _ => None,
            },
            solution: texts.unbind(),
            auto: PyTuple::new(py, auto)?.unbind(),
            solution_length_single: sol.and_then(|s| s.single_len),
            solution_length_multi: sol.map(|s| s.multi_len),
            positions_expanded: r.stats.expanded,
            positions_stored: r.stats.stored,
            peak_bytes: r.stats.peak_bytes,
            peak_disk_bytes: r.stats.peak_disk,
            elapsed_s: r.stats.elapsed.as_secs_f64(),
            error: None,
        })
    }
}

/// Limits as Python gives them: any object with `analyzer.Limits`'s fields
/// as attributes (the `Limits` itself).
#[derive(FromPyObject)]
struct LimitsFields {
    max_positions: Option<u64>,
    max_bytes: u64,
    max_disk: u64,
    max_seconds: Option<f64>,
    spill_dir: Option<std::path::PathBuf>,
}

impl From<LimitsFields> for Limits {
    fn from(f: LimitsFields) -> Self {
        Limits {
            max_positions: f.max_positions.unwrap_or(u64::MAX),
            max_bytes: f.max_bytes,
            max_disk: f.max_disk,
            max_seconds: f.max_seconds,
            spill_dir: f.spill_dir,
        }
    }
}

/// (min cells or None, [(cells, result)]).
type MinCells = (Option<u8>, Vec<(u8, SolveRecord)>);

/// A running solve's progress (`solver::progress`), read from another
/// thread while `solve` or `min_cells` runs with the GIL released.
#[pyclass(name = "Progress", frozen)]
struct PyProgress {
    inner: Arc<Progress>,
}

#[pymethods]
impl PyProgress {
    #[new]
    fn new() -> Self {
        PyProgress {
            inner: Arc::new(Progress::new()),
        }
    }

    /// Stops the solve: it ends on its time limit at its next look at the
    /// clock (a Ctrl-C while `analyzer.solve` watches it).
    fn cancel(&self) {
        self.inner.cancel();
    }

    /// (stage or None, cells, expanded, stored, bytes, disk, layer).
    #[allow(clippy::type_complexity)]
    fn snapshot(&self) -> (Option<&'static str>, u8, u64, u64, u64, u64, u64) {
        let s = self.inner.snapshot();
        let c = s.counts;
        (
            s.stage.map(|s| s.name()),
            s.cells,
            c.expanded,
            c.stored,
            c.bytes,
            c.disk,
            c.layer,
        )
    }
}

/// Runs `f` publishing to `watch`'s progress, if given.
fn maybe_watched<R>(watch: Option<Arc<Progress>>, f: impl FnOnce() -> R) -> R {
    match watch {
        Some(p) => progress::watched(&p, f),
        None => f(),
    }
}

#[pyfunction]
#[pyo3(signature = (board, limits, watch=None))]
fn solve(
    py: Python<'_>,
    board: &PyBoard,
    limits: LimitsFields,
    watch: Option<&Bound<'_, PyProgress>>,
) -> PyResult<SolveRecord> {
    let b = board.inner.clone();
    let l = Limits::from(limits);
    let w = watch.map(|p| p.get().inner.clone());
    let r = py.detach(|| {
        maybe_watched(w, || {
            catch_unwind(AssertUnwindSafe(|| solver::solve(&b, &l)))
        })
    });
    match r {
        Ok(r) => Texts::new(py).record(&Searched::Done(r)),
        Err(p) => Err(err(py, "EngineError", panic_text(&p))),
    }
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
    variant: VariantRecord,
    limits: LimitsFields,
    fail_deals: Vec<u64>,
) -> PyResult<Vec<(u64, SolveRecord)>> {
    let searched = search_range(py, start, stop, variant, limits, fail_deals)?;
    let mut texts = Texts::new(py);
    searched
        .iter()
        .map(|(n, s)| Ok((*n, texts.record(s)?)))
        .collect()
}

/// The searches of `solve_range` and `solve_range_arrow`: deals
/// `start..stop`, the GIL released, a panic caught per deal.
fn search_range(
    py: Python<'_>,
    start: i128,
    stop: i128,
    variant: VariantRecord,
    limits: LimitsFields,
    fail_deals: Vec<u64>,
) -> PyResult<Vec<(u64, Searched)>> {
    let v = variant_from(py, &variant)?;
    if stop > start {
        check_deal(py, start)?;
        check_deal(py, stop - 1)?;
    }
    let l = Limits::from(limits);
    Ok(py.detach(|| {
        (start.max(1) as u64..stop.max(start).max(1) as u64)
            .map(|n| {
                let r = catch_unwind(AssertUnwindSafe(|| {
                    if fail_deals.contains(&n) {
                        panic!("injected failure for deal {n}");
                    }
                    let b = Board::deal(n, v).expect("validated deal number");
                    solver::solve(&b, &l)
                }));
                (n, Searched::from(r))
            })
            .collect()
    }))
}

/// `solve_range`'s results as Arrow columns (little-endian, Arrow's
/// layouts), in the order of the deals: what a batch run writes
/// (`jobs.chunks`, through `analyzer.solve_range_table`), without a Python
/// object per result. Each column is a `(validity, offsets, values)` triple
/// of byte strings: the validity a bitmap, least significant bit first, or
/// None when no value is null; offsets (`i64`, one more than the rows) only
/// for strings; `outcome` and `limit_reason` as `i8` codes into their
/// `*_labels`. A solution is its move texts joined by spaces, null unless
/// solved; a deal whose search panicked has outcome `error`, its message in
/// `error` and zero counts.
struct ArrowColumns {
    n: usize,
    deal_number: Vec<u8>,
    outcome: Vec<u8>,
    limit_reason: Vec<u8>,
    limit_valid: Bits,
    solution: Strings,
    solution_length_single: Vec<u8>,
    single_valid: Bits,
    solution_length_multi: Vec<u8>,
    multi_valid: Bits,
    positions_expanded: Vec<u8>,
    positions_stored: Vec<u8>,
    peak_bytes: Vec<u8>,
    elapsed_s: Vec<u8>,
    error: Strings,
}

/// The labels of `ArrowColumns::outcome`'s codes, in code order.
const OUTCOME_LABELS: [&str; 4] = ["solved", "unsolvable", "limit", "error"];
/// The labels of `ArrowColumns::limit_reason`'s codes, in code order.
const LIMIT_LABELS: [&str; 4] = ["positions", "bytes", "disk", "time"];

fn code(labels: &[&str], name: &str) -> u8 {
    labels
        .iter()
        .position(|l| *l == name)
        .expect("a known label") as u8
}

/// An Arrow validity bitmap being built, and whether any bit is clear.
#[derive(Default)]
struct Bits {
    bytes: Vec<u8>,
    len: usize,
    nulls: bool,
}

impl Bits {
    fn push(&mut self, valid: bool) {
        if self.len.is_multiple_of(8) {
            self.bytes.push(0);
        }
        if valid {
            *self.bytes.last_mut().unwrap() |= 1 << (self.len % 8);
        } else {
            self.nulls = true;
        }
        self.len += 1;
    }

    /// The bitmap, or None when every value is valid (Arrow's shorthand).
    fn into_bytes(self) -> Option<Vec<u8>> {
        self.nulls.then_some(self.bytes)
    }
}

/// A nullable string column being built.
struct Strings {
    valid: Bits,
    offsets: Vec<u8>,
    data: Vec<u8>,
}

impl Strings {
    fn new() -> Self {
        Strings {
            valid: Bits::default(),
            offsets: 0i64.to_le_bytes().to_vec(),
            data: Vec::new(),
        }
    }

    fn push(&mut self, s: Option<&str>) {
        self.valid.push(s.is_some());
        self.data.extend_from_slice(s.unwrap_or("").as_bytes());
        self.offsets
            .extend_from_slice(&(self.data.len() as i64).to_le_bytes());
    }
}

impl ArrowColumns {
    fn with_capacity(n: usize) -> Self {
        ArrowColumns {
            n: 0,
            deal_number: Vec::with_capacity(n * 8),
            outcome: Vec::with_capacity(n),
            limit_reason: Vec::with_capacity(n),
            limit_valid: Bits::default(),
            solution: Strings::new(),
            solution_length_single: Vec::with_capacity(n * 4),
            single_valid: Bits::default(),
            solution_length_multi: Vec::with_capacity(n * 4),
            multi_valid: Bits::default(),
            positions_expanded: Vec::with_capacity(n * 8),
            positions_stored: Vec::with_capacity(n * 8),
            peak_bytes: Vec::with_capacity(n * 8),
            elapsed_s: Vec::with_capacity(n * 8),
            error: Strings::new(),
        }
    }

    fn push(&mut self, n: u64, s: &Searched) {
        // A panicked search: outcome `error`, its message, zero counts.
        let (r, error) = match s {
            Searched::Done(r) => (Some(r), None),
            Searched::Panicked(msg) => (None, Some(msg.as_str())),
        };
        let outcome = r.map(|r| r.outcome);
        let stats = r.map_or(Stats::default(), |r| r.stats);
        let sol = r.and_then(|r| r.solution.as_ref());
        let limit = match outcome {
            Some(Outcome::Limit(k)) => Some(k.name()),
            _ => None,
        };
        self.n += 1;
        self.deal_number
            .extend_from_slice(&(n as i64).to_le_bytes());
        self.outcome.push(code(
            &OUTCOME_LABELS,
            outcome.map_or("error", Outcome::name),
        ));
        self.limit_reason
            .push(limit.map_or(0, |l| code(&LIMIT_LABELS, l)));
        self.limit_valid.push(limit.is_some());
        self.solution.push(
            match outcome {
                Some(Outcome::Solved) => Some(joined(sol.map_or(&[], |s| &s.notation))),
                _ => None,
            }
            .as_deref(),
        );
        for (col, valid, v) in [
            (
                &mut self.solution_length_single,
                &mut self.single_valid,
                sol.and_then(|s| s.single_len),
            ),
            (
                &mut self.solution_length_multi,
                &mut self.multi_valid,
                sol.map(|s| s.multi_len),
            ),
        ] {
            col.extend_from_slice(&(v.unwrap_or(0) as i32).to_le_bytes());
            valid.push(v.is_some());
        }
        for (col, v) in [
            (&mut self.positions_expanded, stats.expanded),
            (&mut self.positions_stored, stats.stored),
            (&mut self.peak_bytes, stats.peak_bytes),
        ] {
            col.extend_from_slice(&(v as i64).to_le_bytes());
        }
        self.elapsed_s
            .extend_from_slice(&stats.elapsed.as_secs_f64().to_le_bytes());
        self.error.push(error);
    }

    /// The columns as a dict for `analyzer.solve_range_table`.
    fn into_py(self, py: Python<'_>) -> PyResult<Bound<'_, PyDict>> {
        type Triple<'a> = (
            Option<Bound<'a, PyBytes>>,
            Option<Bound<'a, PyBytes>>,
            Bound<'a, PyBytes>,
        );
        let b = |v: &[u8]| PyBytes::new(py, v);
        let plain = |v: Vec<u8>| -> Triple<'_> { (None, None, b(&v)) };
        let nullable = |v: Vec<u8>, bits: Bits| -> Triple<'_> {
            (bits.into_bytes().map(|x| b(&x)), None, b(&v))
        };
        let strings = |s: Strings| -> Triple<'_> {
            (
                s.valid.into_bytes().map(|x| b(&x)),
                Some(b(&s.offsets)),
                b(&s.data),
            )
        };
        let d = PyDict::new(py);
        d.set_item("n", self.n)?;
        d.set_item("outcome_labels", OUTCOME_LABELS.to_vec())?;
        d.set_item("limit_reason_labels", LIMIT_LABELS.to_vec())?;
        d.set_item("deal_number", plain(self.deal_number))?;
        d.set_item("outcome", plain(self.outcome))?;
        d.set_item(
            "limit_reason",
            nullable(self.limit_reason, self.limit_valid),
        )?;
        d.set_item("solution", strings(self.solution))?;
        d.set_item(
            "solution_length_single",
            nullable(self.solution_length_single, self.single_valid),
        )?;
        d.set_item(
            "solution_length_multi",
            nullable(self.solution_length_multi, self.multi_valid),
        )?;
        d.set_item("positions_expanded", plain(self.positions_expanded))?;
        d.set_item("positions_stored", plain(self.positions_stored))?;
        d.set_item("peak_bytes", plain(self.peak_bytes))?;
        d.set_item("elapsed_s", plain(self.elapsed_s))?;
        d.set_item("error", strings(self.error))?;
        Ok(d)
    }
}

/// Move texts joined by single spaces.
fn joined(moves: &[Notation]) -> String {
    let mut out = String::with_capacity(moves.len() * 4);
    for (i, m) in moves.iter().enumerate() {
        if i > 0 {
            out.push(' ');
        }
        out.push_str(m.as_str());
    }
    out
}

/// Solves deals `start..stop` (stop excluded) as `solve_range` does; the
/// results as Arrow columns (`ArrowColumns`), a dict of byte strings.
#[pyfunction]
#[pyo3(signature = (start, stop, variant, limits, fail_deals=Vec::new()))]
fn solve_range_arrow<'py>(
    py: Python<'py>,
    start: i128,
    stop: i128,
    variant: VariantRecord,
    limits: LimitsFields,
    fail_deals: Vec<u64>,
) -> PyResult<Bound<'py, PyDict>> {
    let searched = search_range(py, start, stop, variant, limits, fail_deals)?;
    let mut cols = ArrowColumns::with_capacity(searched.len());
    for (n, s) in &searched {
        cols.push(*n, s);
    }
    cols.into_py(py)
}

/// Smallest number of cells that wins deal `n`: (min or None, [(cells, result)]).
#[pyfunction]
#[pyo3(signature = (n, variant, max_cells, limits, watch=None))]
fn min_cells(
    py: Python<'_>,
    n: i128,
    variant: VariantRecord,
    max_cells: u8,
    limits: LimitsFields,
    watch: Option<&Bound<'_, PyProgress>>,
) -> PyResult<MinCells> {
    let v = variant_from(py, &variant)?;
    check_deal(py, n)?;
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
    let l = Limits::from(limits);
    let w = watch.map(|p| p.get().inner.clone());
    let r = py.detach(|| {
        maybe_watched(w, || {
            catch_unwind(AssertUnwindSafe(|| {
                solver::min_cells(n as u64, v, max_cells, &l)
            }))
        })
    });
    match r {
        Ok(m) => {
            let mut texts = Texts::new(py);
            let searched = m
                .searched
                .into_iter()
                .map(|(k, r)| Ok((k, texts.record(&Searched::Done(r))?)))
                .collect::<PyResult<_>>()?;
            Ok((m.min, searched))
        }
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

/// One owner's share of a proof split across workers by fingerprint
/// (`prover::split`; driven by `jobs/split_proof.py`). Records cross as
/// bytes: `entry` gives the first, `expand` the children by owner, `admit`
/// takes an owner's.
#[pyclass(name = "ProofPart", module = "analyzer._engine")]
struct PyProofPart {
    inner: crate::prover::split::Part,
}

#[pymethods]
impl PyProofPart {
    #[new]
    fn new(py: Python<'_>, variant: VariantRecord, owners: u32, me: u32) -> PyResult<Self> {
        let v = variant_from(py, &variant)?;
        if owners == 0 || me >= owners {
            return Err(err(py, "EngineError", format!("owner {me} of {owners}")));
        }
        Ok(PyProofPart {
            inner: crate::prover::split::Part::new(v, owners, me),
        })
    }

    /// The start of a proof of `board` split among `owners`: (its owner,
    /// its record), or None when the safe automatic moves win it.
    #[staticmethod]
    fn entry(py: Python<'_>, board: &PyBoard, owners: u32) -> Option<(u32, Py<PyBytes>)> {
        crate::prover::split::entry(&board.inner, owners.max(1))
            .map(|(o, rec)| (o, PyBytes::new(py, &rec).unbind()))
    }

    /// Keeps the records not seen before for the next `expand`; returns
    /// how many were new.
    fn admit(&mut self, py: Python<'_>, records: &[u8]) -> PyResult<u64> {
        let inner = &mut self.inner;
        py.detach(|| inner.admit(records))
            .map_err(|e| err(py, "EngineError", e))
    }

    /// Expands the positions admitted since the last call: (the records of
    /// their children, one bytes per owner, whether a child is won).
    fn expand(&mut self, py: Python<'_>) -> (Vec<Py<PyBytes>>, bool) {
        let inner = &mut self.inner;
        let level = py.detach(|| inner.expand());
        let out = level
            .outboxes
            .iter()
            .map(|o| PyBytes::new(py, o).unbind())
            .collect();
        (out, level.won)
    }

    #[getter]
    fn stored(&self) -> u64 {
        self.inner.stored()
    }

    #[getter]
    fn expanded(&self) -> u64 {
        self.inner.expanded
    }

    #[getter]
    fn bytes(&self) -> u64 {
        self.inner.bytes()
    }
}

#[pymodule]
fn _engine(m: &Bound<'_, PyModule>) -> PyResult<()> {
    install_panic_hook();
    m.add(
        "__version__",
        concat!(env!("CARGO_PKG_VERSION"), "+src.", env!("FCA_ENGINE_BUILD")),
    )?;
    m.add_class::<PyBoard>()?;
    m.add_class::<VariantRecord>()?;
    m.add_class::<SolveRecord>()?;
    m.add_class::<PyProofPart>()?;
    m.add_class::<PyProgress>()?;
    m.add_function(wrap_pyfunction!(presets, m)?)?;
    m.add_function(wrap_pyfunction!(deal, m)?)?;
    m.add_function(wrap_pyfunction!(board_from_text, m)?)?;
    m.add_function(wrap_pyfunction!(solve, m)?)?;
    m.add_function(wrap_pyfunction!(solve_range, m)?)?;
    m.add_function(wrap_pyfunction!(solve_range_arrow, m)?)?;
    m.add_function(wrap_pyfunction!(min_cells, m)?)?;
    m.add_function(wrap_pyfunction!(build_profile, m)?)?;
    m.add_function(wrap_pyfunction!(notation_chars, m)?)?;
    m.add_function(wrap_pyfunction!(_panic_for_test, m)?)?;
    Ok(())
}
