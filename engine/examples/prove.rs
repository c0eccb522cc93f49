//! Proves deals with the layered prover and prints its figures:
//! `prove START END [--cells K] [--variant V] [--max-bytes N] [--max-disk N] [--spill DIR] [--check]`
//! (`--check`: replays each solution found).
use engine::prover::{prove, ProofLimits, ProofOutcome};
use engine::{Board, Variant};
use std::path::PathBuf;

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let start: u64 = args[0].parse().expect("START");
    let end: u64 = args[1].parse().expect("END");
    let mut variant = Variant::default();
    let mut limits = ProofLimits::default();
    let mut check = false;
    let mut deals: Vec<u64> = Vec::new();
    let mut i = 2;
    while i < args.len() {
        let v = args.get(i + 1).cloned().unwrap_or_default();
        match args[i].as_str() {
            "--cells" => variant = variant.with_cells(v.parse().unwrap()),
            "--variant" => {
                let c = variant.cells;
                variant = Variant::named(&v).unwrap();
                let _ = c;
            }
            "--max-bytes" => limits.max_bytes = v.parse().unwrap(),
            "--max-disk" => limits.max_disk = v.parse().unwrap(),
            "--max-seconds" => limits.max_seconds = Some(v.parse().unwrap()),
            "--deals" => {
                deals = v.split(',').map(|x| x.parse().unwrap()).collect();
            }
            "--spill" => limits.spill_dir = Some(PathBuf::from(v)),
            "--check" => {
                check = true;
                i += 1;
                continue;
            }
            other => panic!("unknown option {other}"),
        }
        i += 2;
    }
    if deals.is_empty() {
        deals = (start..=end).collect();
    }
    for n in deals {
        let (n, variant) = match n {
            // `N` or, with --deals, `N:K` is not parsed here; cells come from --cells.
            n => (n, variant),
        };
        let b = Board::deal(n, variant).unwrap();
        let p = prove(&b, &limits);
        let s = &p.stats;
        let outcome = match &p.outcome {
            ProofOutcome::Unsolvable => "unsolvable".to_string(),
            ProofOutcome::Solved(path) => {
                if check {
                    let sol = engine::solver::describe(&b, path, false);
                    let mut r = b.clone();
                    for m in &sol.moves {
                        r.apply_checked(*m).expect("solution move legal");
                    }
                    assert!(r.is_won(), "solution wins");
                }
                format!("solved({})", path.len())
            }
            ProofOutcome::Limit(l) => format!("limit({l:?})"),
        };
        println!(
            "{n}\t{outcome}\texpanded {}\tstored {}\tlayers {}\tmax_layer {}\troots {}\tdepth {}\tbfs {}\tseeds {}\tdropped {}\tpeak {:.1} MB\tdisk {:.1} MB\t{:.3} s\t{:.1} B/pos",
            s.expanded, s.stored, s.layers, s.max_layer, s.roots, s.max_depth, s.frontier_layers, s.seeds, s.seeds_dropped,
            s.peak_bytes as f64 / 1e6, s.peak_disk as f64 / 1e6, s.elapsed.as_secs_f64(),
            s.peak_bytes as f64 / s.stored.max(1) as f64
        );
    }
}
