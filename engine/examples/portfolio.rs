//! Experiment: expansions per deal for several heuristic configurations.
use engine::solver::{best_first_with, dfs_with, Limits, Outcome};
use engine::{Board, Variant};

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let start: u64 = args[1].parse().unwrap();
    let end: u64 = args[2].parse().unwrap();
    let cap: u64 = args[3].parse().unwrap();
    let cells: u8 = args.get(4).map_or(4, |s| s.parse().unwrap());
    let cfgs: Vec<([i32; 8], bool)> = std::env::var("FCA_CFGS")
        .unwrap()
        .split(';')
        .map(|c| {
            let (w, p) = c.split_once('/').unwrap();
            let mut a = [0; 8];
            for (i, x) in w.split(',').enumerate() {
                a[i] = x.parse().unwrap();
            }
            (a, p == "1")
        })
        .collect();

    let v = Variant::default().with_cells(cells);
    let l = Limits::default();
    // FCA_DEALS: an explicit comma-separated list instead of START..=END.
    let deals: Vec<u64> = match std::env::var("FCA_DEALS") {
        Ok(list) => list.split(',').map(|x| x.trim().parse().unwrap()).collect(),
        Err(_) => (start..=end).collect(),
    };
    for n in deals {
        let b = Board::deal(n, v).unwrap();
        let row: Vec<String> = cfgs
            .iter()
            .map(|(w, p)| {
                let r = if std::env::var("FCA_DFS").is_ok() {
                    dfs_with(&b, &l, cap, w)
                } else {
                    best_first_with(&b, &l, cap, w, *p)
                };
                if r.outcome == Outcome::Solved {
                    r.stats.expanded.to_string()
                } else {
                    // Not solved within the cap (or exhausted): "-" and the count.
                    format!("-{}", r.stats.expanded)
                }
            })
            .collect();
        println!("{n} {}", row.join(" "));
    }
}
