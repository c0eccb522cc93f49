//! Runs the prover alone (`engine::prover`) on Microsoft deals and prints
//! its figures, one tab-separated line per deal after a header: what
//! `bench/prover.py` times, and a way to look at one proof.
//!
//! ```text
//! cargo run --release --example prove -- START END [--deals N,N,...]
//!     [--cells K] [--variant V] [--max-bytes B] [--max-disk B]
//!     [--spill DIR] [--max-seconds S] [--check] [--progress S]
//! ```
//! `--deals` replaces START..=END; `--check` replays every solution found;
//! `--progress S` prints the proof's counts on stderr every S seconds.
use engine::prover::{prove, ProofLimits, ProofOutcome};
use engine::solver::progress::{self, Progress};
use engine::{Board, Variant};
use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::{mpsc, Arc};
use std::time::{Duration, Instant};

/// Proves `b`, printing the counts it publishes every `every` seconds.
fn prove_watched(b: &Board, limits: &ProofLimits, every: f64) -> engine::prover::Proof {
    let watch = Arc::new(Progress::new());
    let (done, wait) = mpsc::channel::<()>();
    let w = Arc::clone(&watch);
    let t0 = Instant::now();
    let printer = std::thread::spawn(move || {
        while wait
            .recv_timeout(Duration::from_secs_f64(every))
            .is_err_and(|e| e == mpsc::RecvTimeoutError::Timeout)
        {
            let c = w.snapshot().counts;
            eprintln!(
                "{:.0} s: layer {}, {} expanded, {} stored, {:.2} GB memory, {:.2} GB disk",
                t0.elapsed().as_secs_f64(),
                c.layer,
                c.expanded,
                c.stored,
                c.bytes as f64 / 1e9,
                c.disk as f64 / 1e9
            );
        }
    });
    let p = progress::watched(&watch, || prove(b, limits));
    drop(done);
    printer.join().expect("the progress printer");
    p
}

fn parse<T: std::str::FromStr>(name: &str, v: Option<&String>) -> Result<T, String> {
    let v = v.ok_or_else(|| format!("{name} needs a value"))?;
    v.parse().map_err(|_| format!("bad {name} {v:?}"))
}

fn run(args: &[String]) -> Result<(), String> {
    let mut deals: Vec<u64> = Vec::new();
    let mut cells = None;
    let mut variant = Variant::default();
    let mut limits = ProofLimits::default();
    let mut check = false;
    let mut every = None;
    let mut positional = Vec::new();
    let mut it = args.iter();
    while let Some(a) = it.next() {
        let a = a.as_str();
        if !a.starts_with("--") {
            positional.push(parse::<u64>("START/END", Some(&a.to_string()))?);
            continue;
        }
        if a == "--check" {
            check = true;
            continue;
        }
        let v = it.next();
        match a {
            "--deals" => {
                let list: String = parse(a, v)?;
                deals = list
                    .split(',')
                    .map(|x| x.parse().map_err(|_| format!("bad deal {x:?}")))
                    .collect::<Result<_, _>>()?;
            }
            "--cells" => cells = Some(parse::<u8>(a, v)?),
            "--variant" => {
                let name: String = parse(a, v)?;
                variant = Variant::named(&name).map_err(|e| e.to_string())?;
            }
            "--max-bytes" => limits.max_bytes = parse(a, v)?,
            "--max-disk" => limits.max_disk = parse(a, v)?,
            "--max-seconds" => limits.max_seconds = Some(parse(a, v)?),
            "--spill" => limits.spill_dir = Some(PathBuf::from(parse::<String>(a, v)?)),
            "--progress" => every = Some(parse::<f64>(a, v)?).filter(|s| *s > 0.0),
            _ => return Err(format!("unknown option {a}")),
        }
    }
    if let Some(k) = cells {
        variant = variant.with_cells(k);
    }
    if deals.is_empty() {
        let [start, end] = positional[..] else {
            return Err("give START END or --deals".into());
        };
        deals = (start..=end).collect();
    }
    println!(
        "deal\toutcome\texpanded\tstored\tlayers\tmax_layer\tbreadth_first_layers\tcarried\tpeak_bytes\tpeak_disk\tseconds\tbytes_per_position\tseeds\tseeds_dropped\troots"
    );
    for n in deals {
        let b = Board::deal(n, variant).map_err(|e| e.to_string())?;
        let p = match every {
            Some(s) => prove_watched(&b, &limits, s),
            None => prove(&b, &limits),
        };
        let s = &p.stats;
        let outcome = match &p.outcome {
            ProofOutcome::Unsolvable => "unsolvable".to_string(),
            ProofOutcome::Solved(path) => {
                if check {
                    let sol = engine::solver::describe(&b, path, false);
                    let mut r = b.clone();
                    for m in &sol.moves {
                        r.apply_checked(*m).map_err(|e| format!("deal {n}: {e}"))?;
                    }
                    if !r.is_won() {
                        return Err(format!("deal {n}: the solution does not win"));
                    }
                }
                "solved".to_string()
            }
            ProofOutcome::Limit(l) => format!("limit:{l:?}").to_lowercase(),
        };
        println!(
            "{n}\t{outcome}\t{}\t{}\t{}\t{}\t{}\t{}\t{}\t{}\t{:.3}\t{:.1}\t{}\t{}\t{}",
            s.expanded,
            s.stored,
            s.layers,
            s.max_layer,
            s.frontier_layers,
            s.carried,
            s.peak_bytes,
            s.peak_disk,
            s.elapsed.as_secs_f64(),
            s.peak_bytes as f64 / s.stored.max(1) as f64,
            s.seeds,
            s.seeds_dropped,
            s.roots
        );
    }
    Ok(())
}

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    match run(&args) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("prove: {e}");
            ExitCode::from(2)
        }
    }
}
