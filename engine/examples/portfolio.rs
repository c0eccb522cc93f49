//! Experiment: expansions per deal of each member of a portfolio run
//! alone, each capped (`-` and the count when it does not win within the
//! cap); with `--complete`, of the complete search ordered by each member's
//! weights instead. One line per deal: the deal, then one figure per member.
//!
//! ```text
//! cargo run --release --example portfolio -- START END CAP [--cells K]
//!     [--tuning FILE] [--deals FILE] [--complete]
//! ```
mod common;

use engine::solver::{solve_complete_alone, solve_member_alone, Outcome};
use engine::Board;
use std::process::ExitCode;

fn main() -> ExitCode {
    let parsed = common::Args::parse(&["--cells", "--tuning", "--deals"], &["--complete"])
        .and_then(|a| {
            let (start, end) = (a.number(0, "START")?, a.number(1, "END")?);
            let cap = a.number(2, "CAP")?;
            Ok((
                a.deals(start, end)?,
                cap,
                a.variant()?,
                a.tuning()?,
                a.flag("--complete"),
            ))
        });
    let (deals, cap, v, tuning, complete) = match parsed {
        Ok(p) => p,
        Err(e) => {
            eprintln!("portfolio: {e}");
            return ExitCode::from(2);
        }
    };
    let l = engine::solver::Limits::default();
    for n in deals {
        let b = match Board::deal(n, v) {
            Ok(b) => b,
            Err(e) => {
                eprintln!("portfolio: {e}");
                return ExitCode::from(2);
            }
        };
        let row: Vec<String> = tuning
            .members
            .iter()
            .map(|m| {
                let r = if complete {
                    solve_complete_alone(&b, &l, cap, &m.weights)
                } else {
                    solve_member_alone(&b, &l, cap, m)
                };
                if r.outcome == Outcome::Solved {
                    r.stats.expanded.to_string()
                } else {
                    // Not won within the cap (or exhausted): "-" and the count.
                    format!("-{}", r.stats.expanded)
                }
            })
            .collect();
        println!("{n} {}", row.join(" "));
    }
    ExitCode::SUCCESS
}
