//! Criterion benchmarks of the engine: dealing, move generation with
//! apply/undo, the solver, and the prover's visited set. Each benchmark asserts the answer it times
//! (the deal vectors, move counts, restored positions, solver outcomes), so
//! a fast wrong engine cannot post a good figure.
//!
//! `cargo bench` (all), `cargo bench -- deal` (one group), `cargo bench --
//! --quick` (short runs). Throughput is reported in elements per second:
//! deals/s, moves/s, deals solved/s. Figures belong in notes, not in tests.

use criterion::{criterion_group, criterion_main, BenchmarkId, Criterion, Throughput};
use engine::solver::{solve, Limits, Outcome};
use engine::{deal_order, Board, Move, Variant};
use std::hint::black_box;
use std::time::Duration;

/// A tiny fixed-seed generator (Knuth's MMIX LCG), so the benchmark's
/// inputs never change and no `rand` dependency is needed.
struct Lcg(u64);

impl Lcg {
    fn next(&mut self) -> u64 {
        self.0 = self
            .0
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        self.0 >> 33
    }
    fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }
}

// ---------------------------------------------------------------------------
// Dealing

/// The shared golden vectors (`tests/data/deal_vectors.txt`): deal number and
/// the columns, deepest card first.
fn vectors() -> Vec<(u64, Vec<String>)> {
    let text = include_str!("../../tests/data/deal_vectors.txt");
    let mut out: Vec<(u64, Vec<String>)> = Vec::new();
    for line in text
        .lines()
        .filter(|l| !l.starts_with('#') && !l.trim().is_empty())
    {
        match line.strip_prefix("deal ") {
            Some(n) => out.push((n.trim().parse().expect("deal number"), Vec::new())),
            None => out
                .last_mut()
                .expect("a 'deal N' line first")
                .1
                .push(line.trim().to_string()),
        }
    }
    out
}

fn rows(b: &Board) -> Vec<String> {
    b.to_rows().lines().map(str::to_string).collect()
}

/// 256 deal numbers in `lo..hi` from a fixed seed, plus the golden vectors
/// that fall in that range.
fn deal_numbers(lo: u64, hi: u64, seed: u64) -> Vec<u64> {
    let mut g = Lcg(seed);
    let mut v: Vec<u64> = vectors()
        .into_iter()
        .map(|(n, _)| n)
        .filter(|n| (lo..hi).contains(n))
        .collect();
    while v.len() < 256 {
        v.push(lo + ((g.next() << 31 | g.next()) % (hi - lo)));
    }
    v
}

/// A checksum of a deal's layout that depends on every card's position.
fn layout_sum(b: &Board) -> u64 {
    (0..b.ncols())
        .flat_map(|i| b.column(i).iter().enumerate().map(move |(d, &c)| (i, d, c)))
        .fold(0u64, |acc, (i, d, c)| {
            acc.wrapping_mul(31)
                .wrapping_add((i * 64 + d) as u64 ^ c as u64)
        })
}

fn bench_deal(c: &mut Criterion) {
    // The answer first: every golden vector is reproduced card for card.
    for (n, want) in vectors() {
        assert_eq!(
            rows(&Board::deal(n, Variant::default()).unwrap()),
            want,
            "deal {n}"
        );
    }
    let branches = [
        ("ms_below_2^31", 1u64, 1u64 << 31),
        ("fcpro_2^31_2^32", 1u64 << 31, 1u64 << 32),
        ("fcpro_2^32_2^33", 1u64 << 32, 1u64 << 33),
    ];
    let mut g = c.benchmark_group("deal");
    for (i, &(name, lo, hi)) in branches.iter().enumerate() {
        let ns = deal_numbers(lo, hi, 0x5EED + i as u64);
        let want: u64 = ns
            .iter()
            .map(|&n| layout_sum(&Board::deal(n, Variant::default()).unwrap()))
            .fold(0, u64::wrapping_add);
        let order_want: u64 = ns
            .iter()
            .map(|&n| {
                deal_order(n)
                    .unwrap()
                    .iter()
                    .enumerate()
                    .map(|(i, c)| (i as u64 + 1) * c.0 as u64)
                    .sum::<u64>()
            })
            .fold(0, u64::wrapping_add);
        g.throughput(Throughput::Elements(ns.len() as u64));
        // The generator alone: 52 draws and swaps.
        g.bench_with_input(BenchmarkId::new("deal_order", name), &ns, |b, ns| {
            b.iter(|| {
                let mut sum = 0u64;
                for &n in ns {
                    let order = deal_order(black_box(n)).unwrap();
                    sum = sum.wrapping_add(
                        order
                            .iter()
                            .enumerate()
                            .map(|(i, c)| (i as u64 + 1) * c.0 as u64)
                            .sum::<u64>(),
                    );
                }
                assert_eq!(sum, order_want);
            })
        });
        // The generator plus the layout into a `Board` (with its fingerprint).
        g.bench_with_input(BenchmarkId::new("board", name), &ns, |b, ns| {
            b.iter(|| {
                let mut sum = 0u64;
                for &n in ns {
                    sum = sum.wrapping_add(layout_sum(
                        &Board::deal(black_box(n), Variant::default()).unwrap(),
                    ));
                }
                assert_eq!(sum, want);
            })
        });
    }
    g.finish();
}

// ---------------------------------------------------------------------------
// Move generation, apply and undo

/// Positions reached by fixed random walks from deals 1..=50 (standard
/// FreeCell, product rule): from each deal, 60 random legal moves, keeping
/// the positions after 0, 15, 30, 45 and 60 moves (a walk stops early at a
/// position without moves).
fn walk_positions() -> Vec<Board> {
    let mut g = Lcg(0xF4EE_CE11);
    let mut out = Vec::new();
    for n in 1..=50 {
        let mut b = Board::deal(n, Variant::default()).unwrap();
        for step in 0..=60 {
            if step % 15 == 0 {
                out.push(b.clone());
            }
            let moves = b.legal_moves();
            if moves.is_empty() {
                break;
            }
            let m = moves[g.below(moves.len() as u64) as usize];
            b.apply(m);
        }
    }
    out
}

/// Generates every legal move of every position and applies and undoes
/// each; returns the number of moves. Asserts that undo restores the
/// position.
fn gen_apply_undo(positions: &mut [Board], buf: &mut Vec<Move>, all: bool) -> u64 {
    let mut total = 0u64;
    for b in positions.iter_mut() {
        let fp = b.fingerprint();
        buf.clear();
        b.gen_moves(buf, all);
        for &m in buf.iter() {
            b.apply(m);
            black_box(b.fingerprint());
            b.undo(m);
        }
        assert_eq!(b.fingerprint(), fp, "undo did not restore the position");
        total += buf.len() as u64;
    }
    total
}

fn bench_moves(c: &mut Criterion) {
    let positions = walk_positions();
    // The answers, checked once outside the timing: every generated move is
    // legal (`apply_checked` re-checks it), apply + undo gives back the very
    // same board, and the move counts the timed loops must reproduce.
    let mut count_all = 0u64;
    let mut count_solver = 0u64;
    for p in &positions {
        for (all, count) in [(true, &mut count_all), (false, &mut count_solver)] {
            let mut moves = Vec::new();
            p.gen_moves(&mut moves, all);
            *count += moves.len() as u64;
            for &m in &moves {
                let mut b = p.clone();
                b.apply_checked(m)
                    .unwrap_or_else(|e| panic!("generated move {m:?} is illegal: {e}"));
                b.undo(m);
                assert_eq!(&b, p);
            }
        }
    }
    assert!(count_all > 0 && count_solver > 0 && count_solver <= count_all);

    let mut g = c.benchmark_group("moves");
    g.throughput(Throughput::Elements(count_all));
    g.bench_function("legal_moves", |b| {
        let mut buf = Vec::with_capacity(64);
        b.iter(|| {
            let mut total = 0u64;
            for p in &positions {
                buf.clear();
                p.gen_moves(&mut buf, true);
                total += buf.len() as u64;
            }
            assert_eq!(total, count_all);
        })
    });
    g.bench_function("legal_moves_apply_undo", |b| {
        let mut work = positions.clone();
        let mut buf = Vec::with_capacity(64);
        b.iter(|| assert_eq!(gen_apply_undo(&mut work, &mut buf, true), count_all))
    });
    // The solver's generator: one move per canonical result.
    g.throughput(Throughput::Elements(count_solver));
    g.bench_function("solver_moves_apply_undo", |b| {
        let mut work = positions.clone();
        let mut buf = Vec::with_capacity(64);
        b.iter(|| assert_eq!(gen_apply_undo(&mut work, &mut buf, false), count_solver))
    });
    // Safe automatic foundation moves after each move, as the solver plays them.
    g.bench_function("solver_moves_apply_autoplay_undo", |b| {
        let mut work = positions.clone();
        let mut buf = Vec::with_capacity(64);
        let mut log = Vec::with_capacity(64);
        b.iter(|| {
            let mut total = 0u64;
            for p in work.iter_mut() {
                let fp = p.fingerprint();
                buf.clear();
                p.gen_moves(&mut buf, false);
                for &m in &buf {
                    p.apply(m);
                    let n = p.autoplay(&mut log);
                    black_box(p.fingerprint());
                    p.undo_autoplay(&mut log, n);
                    p.undo(m);
                }
                assert_eq!(p.fingerprint(), fp);
                total += buf.len() as u64;
            }
            assert_eq!(total, count_solver);
        })
    });
    g.finish();
}

// ---------------------------------------------------------------------------
// The solver

fn solve_deals(deals: &[u64], cells: u8, want: Outcome) {
    let v = Variant::default().with_cells(cells);
    for &n in deals {
        let r = solve(&Board::deal(n, v).unwrap(), &Limits::default());
        assert_eq!(r.outcome, want, "deal {n} with {cells} cells");
        if want == Outcome::Solved {
            let sol = r.solution.expect("a solved outcome carries its solution");
            assert!(sol.single_len.unwrap() >= sol.multi_len);
        }
    }
}

fn bench_solve(c: &mut Criterion) {
    let mut g = c.benchmark_group("solve");
    g.sample_size(10)
        .warm_up_time(Duration::from_secs(1))
        .measurement_time(Duration::from_secs(5));
    // Deals 1..=20 with 4 cells: all solved (the common case).
    let easy: Vec<u64> = (1..=20).collect();
    g.throughput(Throughput::Elements(easy.len() as u64));
    g.bench_function("deals_1_20_cells_4", |b| {
        b.iter(|| solve_deals(&easy, 4, Outcome::Solved))
    });
    // 20 fixed deals in 1..=32000 with 3 cells, all solved.
    let spread = [
        3057, 4721, 5385, 7602, 8912, 10447, 11237, 12961, 14410, 15863, 17298, 18834, 20103,
        21744, 23150, 24611, 26038, 27795, 29412, 31007,
    ];
    g.bench_function("spread_20_cells_3", |b| {
        b.iter(|| solve_deals(&spread, 3, Outcome::Solved))
    });
    g.finish();

    // Proofs: exhaustive searches that end in `unsolvable` (REFERENCE.md,
    // "Known answers").
    let mut g = c.benchmark_group("prove");
    g.sample_size(10)
        .warm_up_time(Duration::from_secs(1))
        .measurement_time(Duration::from_secs(10));
    g.throughput(Throughput::Elements(1));
    for (name, deal, cells) in [
        ("11982_cells_4", 11982, 4),
        ("617_cells_3", 617, 3),
        ("1_cells_2", 1, 2),
    ] {
        g.bench_function(name, |b| {
            b.iter(|| solve_deals(&[deal], cells, Outcome::Unsolvable))
        });
    }
    g.finish();
}

// ---------------------------------------------------------------------------
// The prover's visited set

/// `FpTable` with a million positions (16 MB, past the caches): filling
/// it from empty (its segments growing), and looking up a million keys
/// it holds and a million it does not.
fn bench_table(c: &mut Criterion) {
    use engine::prover::table::{sample_key as table_key, FpTable};
    const N: u64 = 1_000_000;
    let mut g = c.benchmark_group("table");
    g.sample_size(10)
        .warm_up_time(Duration::from_secs(1))
        .measurement_time(Duration::from_secs(5));
    g.throughput(Throughput::Elements(N));
    g.bench_function("insert_1m", |b| {
        b.iter(|| {
            let mut t = FpTable::new();
            for i in 0..N {
                assert_eq!(t.insert(table_key(i)), Ok(true));
            }
            t.len()
        })
    });
    let mut full = FpTable::new();
    for i in 0..N {
        full.insert(table_key(i)).unwrap();
    }
    g.bench_function("contains_1m_held", |b| {
        b.iter(|| {
            let n = (0..N).filter(|&i| full.contains(table_key(i))).count();
            assert_eq!(n as u64, N);
        })
    });
    g.bench_function("contains_1m_absent", |b| {
        b.iter(|| {
            let n = (N..2 * N).filter(|&i| full.contains(table_key(i))).count();
            assert_eq!(n, 0);
        })
    });
    g.finish();
}

criterion_group!(benches, bench_deal, bench_moves, bench_solve, bench_table);
criterion_main!(benches);
