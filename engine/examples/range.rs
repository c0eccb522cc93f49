//! Solves a range of Microsoft deals on one thread and prints a summary:
//! outcomes, the distribution of expansions per deal, the complete
//! search's share, and time. The tuning workhorse (`bench/tune_portfolio.py`
//! reads its summary lines).
//!
//! ```text
//! cargo run --release --example range -- START END [--cells K] [--move-rule R]
//!     [--max-positions N] [--max-bytes N] [--max-disk N] [--deals FILE]
//!     [--tuning FILE]
//!     [--max-seconds S] [--list-hard N] [--min-cells [--max-cells M]]
//! ```
//!
//! `--deals FILE`: the deal numbers in FILE instead of START..=END.
//! `--tuning FILE`: the search's settings from FILE (in the form of
//! `engine/src/solver/tuning.toml`) instead of the shipped ones.
//! `--list-hard N`: a line `hard DEAL EXPANDED OUTCOME PROOF_EXPANDED` for
//! every deal that takes more than N expansions; with `--min-cells`, a line
//! `search DEAL CELLS OUTCOME EXPANDED PROOF_EXPANDED SECONDS` for every
//! search of a count that takes more than N.
//! `--min-cells`: the fewest cells of each deal (`solver::min_cells_with`,
//! up to `--max-cells`, 8 by default; `--max-seconds` limits each search),
//! then how many deals need each count, how many are undetermined, and the
//! expansions and seconds spent on each count searched.
mod common;

use engine::solver::{min_cells_with, solve_with, Limits, Outcome, Tuning};
use engine::Board;
use engine::Variant;
use std::process::ExitCode;
use std::time::Instant;

fn main() -> ExitCode {
    let values = [
        "--cells",
        "--move-rule",
        "--max-positions",
        "--max-bytes",
        "--max-disk",
        "--deals",
        "--tuning",
        "--list-hard",
        "--max-cells",
        "--max-seconds",
    ];
    let args = match common::Args::parse(&values, &["--min-cells"]) {
        Ok(a) => a,
        Err(e) => return usage(e),
    };
    let parsed = (|| {
        let a = &args;
        let (start, end) = (a.number(0, "START")?, a.number(1, "END")?);
        let mut limits = a.limits()?;
        limits.max_seconds = a.value("--max-seconds")?;
        Ok::<_, String>((
            start,
            end,
            a.deals(start, end)?,
            a.variant()?,
            limits,
            a.tuning()?,
            a.value::<u64>("--list-hard")?,
            a.value::<u8>("--max-cells")?.unwrap_or(8),
        ))
    })();
    let (start, end, deals, v, limits, tuning, list_hard, max_cells) = match parsed {
        Ok(p) => p,
        Err(e) => return usage(e),
    };
    if args.flag("--min-cells") {
        return min_cells_range(&deals, v, max_cells, &limits, &tuning, list_hard);
    }
    let t0 = Instant::now();
    let (mut solved, mut unsolvable, mut limit) = (0, 0, 0);
    let mut expanded = 0u64;
    let mut proof_expanded = 0u64;
    let mut lens = Vec::new();
    let mut exps = Vec::new();
    let mut peak = 0u64;
    let mut worst = (0u64, 0u64);
    let count = deals.len().max(1) as f64;
    for n in deals {
        let b = match Board::deal(n, v) {
            Ok(b) => b,
            Err(e) => return usage(e.to_string()),
        };
        let r = solve_with(&b, &limits, &tuning);
        expanded += r.stats.expanded;
        proof_expanded += r.stats.proof_expanded;
        exps.push(r.stats.expanded);
        if list_hard.is_some_and(|n| r.stats.expanded > n) {
            println!(
                "hard {n} {} {} {}",
                r.stats.expanded,
                r.outcome.name(),
                r.stats.proof_expanded
            );
        }
        peak = peak.max(r.stats.peak_bytes);
        if r.stats.expanded > worst.1 {
            worst = (n, r.stats.expanded);
        }
        match r.outcome {
            Outcome::Solved => {
                solved += 1;
                lens.push(r.solution.unwrap().single_len.unwrap_or(0));
            }
            Outcome::Unsolvable => {
                unsolvable += 1;
                println!("unsolvable {n} (expanded {})", r.stats.expanded);
            }
            Outcome::Limit(k) => {
                limit += 1;
                println!("limit {n} {}", k.name());
            }
        }
    }
    lens.sort_unstable();
    exps.sort_unstable();
    let q = |f: f64| exps[((exps.len() as f64 - 1.0) * f) as usize];
    for cap in [200u64, 1000, 5000, 20000, 100000] {
        print!("over{cap}: {} ", exps.iter().filter(|&&e| e > cap).count());
    }
    println!();
    println!(
        "expansions p50 {} p90 {} p99 {} p999 {} max {}",
        q(0.5),
        q(0.9),
        q(0.99),
        q(0.999),
        q(1.0)
    );
    let el = t0.elapsed().as_secs_f64();
    // The complete search's share (its expansions cost about half a
    // member's): what `bench/tune_portfolio.py --cost time` weighs.
    println!("complete search expanded {proof_expanded}");
    println!(
        "deals {start}..{end} cells {}: solved {solved} unsolvable {unsolvable} limit {limit}; \
         {el:.2}s, {:.1} us/deal, expanded {expanded} ({:.0}/deal), worst #{} {}; median single len {}; p90 {}; peak {} MB",
        v.cells,
        el * 1e6 / count,
        expanded as f64 / count,
        worst.0, worst.1,
        lens.get(lens.len() / 2).copied().unwrap_or(0),
        lens.get(lens.len() * 9 / 10).copied().unwrap_or(0),
        peak >> 20
    );
    ExitCode::SUCCESS
}

/// A bad command line or deal: one line, exit 2.
fn usage(e: String) -> ExitCode {
    eprintln!("range: {e}");
    ExitCode::from(2)
}

/// `--min-cells`: prints a line per undetermined deal, then the summary.
fn min_cells_range(
    deals: &[u64],
    v: Variant,
    max_cells: u8,
    limits: &Limits,
    tuning: &Tuning,
    list_hard: Option<u64>,
) -> ExitCode {
    let t0 = Instant::now();
    let mut minima = [0u64; 11];
    let mut undetermined = Vec::new();
    // Per count searched: searches, expansions, seconds.
    let mut per = [(0u64, 0u64, 0f64); 11];
    for &n in deals {
        if let Err(e) = Board::deal(n, v) {
            return usage(e.to_string());
        }
        let m = min_cells_with(n, v, max_cells, limits, tuning);
        for (k, r) in &m.searched {
            let p = &mut per[*k as usize];
            p.0 += 1;
            p.1 += r.stats.expanded;
            p.2 += r.stats.elapsed.as_secs_f64();
            if list_hard.is_some_and(|h| r.stats.expanded > h) {
                println!(
                    "search {n} {k} {} {} {} {:.3}",
                    r.outcome.name(),
                    r.stats.expanded,
                    r.stats.proof_expanded,
                    r.stats.elapsed.as_secs_f64()
                );
            }
        }
        match m.min {
            Some(k) => minima[k as usize] += 1,
            None => {
                let last = m.searched.last().map(|(k, r)| (*k, r.outcome.name()));
                println!("undetermined {n} {last:?}");
                undetermined.push(n);
            }
        }
    }
    let el = t0.elapsed().as_secs_f64();
    let shown: Vec<String> = (0..=max_cells as usize)
        .map(|k| format!("{k}: {}", minima[k]))
        .collect();
    println!(
        "minima {}; undetermined {}",
        shown.join(", "),
        undetermined.len()
    );
    for (k, p) in per.iter().enumerate().filter(|(_, p)| p.0 > 0) {
        println!("cells {k}: {} searches, expanded {}, {:.2}s", p.0, p.1, p.2);
    }
    println!(
        "min-cells of {} deals: {el:.2}s, {:.1} us/deal",
        deals.len(),
        el * 1e6 / deals.len().max(1) as f64
    );
    ExitCode::SUCCESS
}
