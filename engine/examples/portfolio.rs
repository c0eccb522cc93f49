//! Experiment: expansions per deal of each member of a portfolio run
//! alone, each capped (`-` and the count when it does not win within the
//! cap); with `--complete`, of the complete search ordered by each member's
//! weights instead. One line per deal: the deal, then one figure per member.
//! With `--final`, the complete search alone in the tuning's final order
//! (as a solve's last complete search): its outcome, expansions, positions
//! stored, peak bytes and peak disk (its path's file) and seconds.
//! With `--beam`, the reserve's beam alone (`Tuning::reserve`'s `beam`),
//! the same figures (CAP unused).
//!
//! ```text
//! cargo run --release --example portfolio -- START END CAP [--cells K]
//!     [--tuning FILE] [--deals FILE] [--complete | --final | --beam]
//!     [--max-bytes N] [--max-disk N]
//! ```
mod common;

use engine::solver::{solve_beam_alone, solve_complete_alone, solve_member_alone, Outcome};
use engine::Board;
use std::process::ExitCode;

fn main() -> ExitCode {
    let parsed = common::Args::parse(
        &[
            "--cells",
            "--tuning",
            "--deals",
            "--max-bytes",
            "--max-disk",
        ],
        &["--complete", "--final", "--beam"],
    )
    .and_then(|a| {
        let (start, end) = (a.number(0, "START")?, a.number(1, "END")?);
        let cap = a.number(2, "CAP")?;
        Ok((
            a.deals(start, end)?,
            cap,
            a.variant()?,
            a.tuning()?,
            (a.flag("--complete"), a.flag("--final"), a.flag("--beam")),
            a.limits()?,
        ))
    });
    let (deals, cap, v, tuning, (complete, last, beam), l) = match parsed {
        Ok(p) => p,
        Err(e) => {
            eprintln!("portfolio: {e}");
            return ExitCode::from(2);
        }
    };
    for n in deals {
        let b = match Board::deal(n, v) {
            Ok(b) => b,
            Err(e) => {
                eprintln!("portfolio: {e}");
                return ExitCode::from(2);
            }
        };
        if last || beam {
            let r = if beam {
                match tuning.reserve.as_ref().and_then(|r| r.beam) {
                    Some(settings) => solve_beam_alone(&b, &l, &settings),
                    None => {
                        eprintln!("portfolio: the tuning has no beam");
                        return ExitCode::from(2);
                    }
                }
            } else {
                solve_complete_alone(&b, &l, cap, &tuning.final_order)
            };
            let s = r.stats;
            println!(
                "{n} {:?} expanded {} stored {} peak_bytes {} peak_disk {} seconds {:.1}",
                r.outcome,
                s.expanded,
                s.stored,
                s.peak_bytes,
                s.peak_disk,
                s.elapsed.as_secs_f64()
            );
            continue;
        }
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
