//! Solves a range of Microsoft deals on one thread and prints a summary:
//! `cargo run --release --example range -- START END [CELLS] [MOVE_RULE]`.
use engine::solver::{solve, Limits, Outcome};
use engine::{Board, MoveRule, Variant};
use std::time::Instant;

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let start: u64 = args.get(1).map_or(1, |s| s.parse().unwrap());
    let end: u64 = args.get(2).map_or(1000, |s| s.parse().unwrap());
    let cells: u8 = args.get(3).map_or(4, |s| s.parse().unwrap());
    let rule: MoveRule = args
        .get(4)
        .map_or(MoveRule::Product, |s| s.parse().unwrap());
    let v = Variant::default().with_cells(cells).with_move_rule(rule);
    let limits = Limits {
        max_positions: std::env::var("FCA_MAXPOS")
            .map(|s| s.parse().unwrap())
            .unwrap_or(Limits::default().max_positions),
        max_bytes: std::env::var("FCA_MAXBYTES")
            .map(|s| s.parse().unwrap())
            .unwrap_or(Limits::default().max_bytes),
        ..Limits::default()
    };
    let t0 = Instant::now();
    let (mut solved, mut unsolvable, mut limit) = (0, 0, 0);
    let mut expanded = 0u64;
    let mut proof_expanded = 0u64;
    let mut lens = Vec::new();
    let mut exps = Vec::new();
    let mut peak = 0u64;
    let mut worst = (0u64, 0u64);
    // FCA_DEALS_FILE: deal numbers, one per line, instead of START..=END.
    let deals: Vec<u64> = match std::env::var("FCA_DEALS_FILE") {
        Ok(f) => std::fs::read_to_string(f)
            .unwrap()
            .split_whitespace()
            .map(|x| x.parse().unwrap())
            .collect(),
        Err(_) => (start..=end).collect(),
    };
    let count = deals.len().max(1) as f64;
    // FCA_LISTHARD=N lists the deals that took more than N expansions (2000
    // when N is not a number), as "hard DEAL EXPANDED OUTCOME PROOF_EXPANDED".
    let list_hard: Option<u64> = std::env::var("FCA_LISTHARD")
        .ok()
        .map(|v| v.parse().unwrap_or(2000));
    for n in deals {
        let b = Board::deal(n, v).unwrap();
        let r = solve(&b, &limits);
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
        "deals {start}..{end} cells {cells}: solved {solved} unsolvable {unsolvable} limit {limit}; \
         {el:.2}s, {:.1} us/deal, expanded {expanded} ({:.0}/deal), worst #{} {}; median single len {}; p90 {}; peak {} MB",
        el * 1e6 / count,
        expanded as f64 / count,
        worst.0, worst.1,
        lens.get(lens.len() / 2).copied().unwrap_or(0),
        lens.get(lens.len() * 9 / 10).copied().unwrap_or(0),
        peak >> 20
    );
}
