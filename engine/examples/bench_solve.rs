//! The solver side of `bench/vs_fcsolve.py`: solves Microsoft deals
//! `START..=END` one after the other on one thread and prints one line per
//! deal, so the benchmark can time the whole process exactly as it times
//! fc-solve (CPU time and peak RSS of the child, no Python in the loop).
//!
//! ```text
//! cargo run --release --example bench_solve -- START END [--cells K]
//!     [--move-rule R] [--max-positions N] [--max-bytes N] [--solutions]
//! ```
//!
//! Output, tab-separated, one line per deal:
//! `deal outcome limit single_len multi_len expanded stored peak_bytes elapsed_s [solution]`
//! (`-` for a missing field; the solution, with `--solutions`, is the moves
//! in standard notation separated by spaces).
mod common;

use engine::solver::{solve, Outcome};
use engine::Board;
use std::io::{BufWriter, Write};
use std::process::ExitCode;

fn usage(msg: &str) -> ExitCode {
    eprintln!("bench_solve: {msg}");
    eprintln!(
        "usage: bench_solve START END [--cells K] [--move-rule R] [--max-positions N] [--max-bytes N] [--solutions]"
    );
    ExitCode::from(2)
}

fn main() -> ExitCode {
    let values = ["--cells", "--move-rule", "--max-positions", "--max-bytes"];
    let parsed = common::Args::parse(&values, &["--solutions"]).and_then(|a| {
        if a.positional.len() != 2 {
            return Err("expected START and END".to_string());
        }
        let (start, end) = (a.number(0, "START")?, a.number(1, "END")?);
        Ok((start, end, a.variant()?, a.limits()?, a.flag("--solutions")))
    });
    let (start, end, variant, limits, solutions) = match parsed {
        Ok(p) => p,
        Err(e) => return usage(&e),
    };
    if let Err(e) = Board::deal(start.max(1), variant) {
        return usage(&e.to_string());
    }
    let stdout = std::io::stdout();
    let mut out = BufWriter::new(stdout.lock());
    for n in start..=end {
        let board = match Board::deal(n, variant) {
            Ok(b) => b,
            Err(e) => return usage(&e.to_string()),
        };
        let r = solve(&board, &limits);
        let dash = || "-".to_string();
        let limit = match r.outcome {
            Outcome::Limit(k) => k.name().to_string(),
            _ => dash(),
        };
        let sol = r.solution.as_ref();
        let single = sol
            .and_then(|s| s.single_len)
            .map_or_else(dash, |x| x.to_string());
        let multi = sol.map_or_else(dash, |s| s.multi_len.to_string());
        let _ = write!(
            out,
            "{n}\t{}\t{limit}\t{single}\t{multi}\t{}\t{}\t{}\t{:.6}",
            r.outcome.name(),
            r.stats.expanded,
            r.stats.stored,
            r.stats.peak_bytes,
            r.stats.elapsed.as_secs_f64()
        );
        if solutions {
            let text = sol.map_or_else(String::new, |s| {
                let moves: Vec<&str> = s.notation.iter().map(|n| n.as_str()).collect();
                moves.join(" ")
            });
            let _ = write!(out, "\t{text}");
        }
        let _ = writeln!(out);
    }
    if out.flush().is_err() {
        return ExitCode::from(1);
    }
    ExitCode::SUCCESS
}
