//! Experiment: exhaustive search over classes of positions that differ only
//! in which of two twin cards (same rank, same colour) carries which free
//! upper run. Over-approximates the real reachable set (swaps are taken as
//! free), so "unsolvable" here is a proof; "won" is inconclusive.
use engine::board::Packed;
use engine::{Board, Loc, Move, Variant};
use std::collections::HashSet;
use std::time::Instant;

const NONE: u8 = 0xFF;

fn columns(b: &Board) -> Vec<Vec<u8>> {
    (0..b.ncols()).map(|i| b.column(i).to_vec()).collect()
}

fn rebuild(b: &Board, cols: &[Vec<u8>]) -> Board {
    let lens: Vec<u8> = cols.iter().map(|c| c.len() as u8).collect();
    let cards: Vec<u8> = cols.iter().flatten().copied().collect();
    let cells: Vec<u8> = (0..b.ncells())
        .map(|i| b.cell(i).map_or(NONE, |c| c.0))
        .collect();
    Board::unpack(
        &Packed::from_parts(&lens, b.foundations(), &cells, &cards),
        b.variant(),
    )
}

/// (column, position) of each card in the tableau.
fn locate(cols: &[Vec<u8>]) -> [(u8, u8); 52] {
    let mut loc = [(NONE, NONE); 52];
    for (i, c) in cols.iter().enumerate() {
        for (j, &x) in c.iter().enumerate() {
            loc[x as usize] = (i as u8, j as u8);
        }
    }
    loc
}

/// Start of each column's natural top run.
fn run_starts(b: &Board) -> Vec<usize> {
    (0..b.ncols())
        .map(|i| b.column_len(i) - b.run_len(i))
        .collect()
}

/// Twin pairs (rank, lower card, higher card) with both in the tableau
/// with free upper parts.
fn swappable(cols: &[Vec<u8>], starts: &[usize]) -> Vec<(u8, u8)> {
    let loc = locate(cols);
    let mut out = Vec::new();
    for r in (1..13u8).rev() {
        for (s1, s2) in [(0u8, 3u8), (1, 2)] {
            let (t, u) = (r * 4 + s1, r * 4 + s2);
            let (lt, lu) = (loc[t as usize], loc[u as usize]);
            if lt.0 == NONE || lu.0 == NONE {
                continue;
            }
            if (lt.1 as usize) < starts[lt.0 as usize] || (lu.1 as usize) < starts[lu.0 as usize] {
                continue;
            }
            out.push((t, u));
        }
    }
    out
}

static mut RESTRICT: bool = false;

/// The pairs whose swap is one legal move each way and independent of the
/// others' (restricted mode), else all swappable pairs.
fn valid(b: &Board, cols: &[Vec<u8>], starts: &[usize]) -> Vec<(u8, u8)> {
    let cand = swappable(cols, starts);
    if !unsafe { RESTRICT } {
        return cand;
    }
    let cand: Vec<(u8, u8)> = cand
        .into_iter()
        .filter(|&(t, u)| (child(cols, t) == NONE) != (child(cols, u) == NONE))
        .collect();
    let loc = locate(cols);
    let cap = b.variant().max_run(b.empty_cells(), b.empty_columns()) as usize;
    let mut twin_of_cand = [false; 52];
    for &(t, u) in &cand {
        twin_of_cand[t as usize] = true;
        twin_of_cand[u as usize] = true;
    }
    cand.into_iter()
        .filter(|&(t, u)| {
            let x = if child(cols, t) == NONE { u } else { t };
            let (ci, p) = loc[x as usize];
            let up = &cols[ci as usize][p as usize + 1..];
            up.len() <= cap && up.iter().all(|&c| !twin_of_cand[c as usize])
        })
        .collect()
}

fn swap_uppers(cols: &mut [Vec<u8>], t: u8, u: u8) {
    let loc = locate(cols);
    let (ct, pt) = (loc[t as usize].0 as usize, loc[t as usize].1 as usize);
    let (cu, pu) = (loc[u as usize].0 as usize, loc[u as usize].1 as usize);
    let ut: Vec<u8> = cols[ct][pt + 1..].to_vec();
    let uu: Vec<u8> = cols[cu][pu + 1..].to_vec();
    cols[ct].truncate(pt + 1);
    cols[ct].extend_from_slice(&uu);
    cols[cu].truncate(pu + 1);
    cols[cu].extend_from_slice(&ut);
}

fn child(cols: &[Vec<u8>], c: u8) -> u8 {
    let loc = locate(cols);
    let (ci, p) = loc[c as usize];
    cols[ci as usize]
        .get(p as usize + 1)
        .copied()
        .unwrap_or(NONE)
}

fn canonical(b: &Board) -> Board {
    let starts = run_starts(b);
    let mut cols = columns(b);
    let mut changed = false;
    for (t, u) in valid(b, &cols, &starts) {
        let (a, c) = (child(&cols, t), child(&cols, u));
        // NONE (0xFF) sorts last: the lower twin keeps the smaller child.
        if a > c {
            swap_uppers(&mut cols, t, u);
            changed = true;
        }
    }
    if changed {
        rebuild(b, &cols)
    } else {
        b.clone()
    }
}

fn settle(mut b: Board, log: &mut Vec<Move>) -> Board {
    loop {
        let c = canonical(&b);
        b = c;
        if b.autoplay(log) == 0 {
            log.clear();
            return b;
        }
        log.clear();
    }
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let deal: u64 = args[0].parse().unwrap();
    let cells: u8 = args[1].parse().unwrap();
    let limit: usize = args.get(2).map_or(50_000_000, |v| v.parse().unwrap());
    unsafe { RESTRICT = args.get(3).is_some_and(|v| v == "r") };
    let v = Variant::default().with_cells(cells);
    let t0 = Instant::now();
    let mut log = Vec::new();
    let root = settle(Board::deal(deal, v).unwrap(), &mut log);
    let mut seen: HashSet<u128> = HashSet::new();
    seen.insert(root.fingerprint());
    let mut stack: Vec<Packed> = vec![root.pack()];
    let mut expanded = 0u64;
    let mut members_total = 0u64;
    let mut won = root.is_won();
    let mut moves = Vec::new();
    'search: while let Some(p) = stack.pop() {
        if won || seen.len() > limit {
            break;
        }
        let c = Board::unpack(&p, v);
        expanded += 1;
        let starts = run_starts(&c);
        let cols = columns(&c);
        // Every member of the class: each subset of the valid pairs flipped.
        let pairs = valid(&c, &cols, &starts);
        let mut members: Vec<(Board, Option<usize>)> = Vec::new();
        let k = pairs.len().min(12);
        for mask in 0u32..(1 << k) {
            let mut m = cols.clone();
            for (i, &(t, u)) in pairs.iter().enumerate().take(k) {
                if mask >> i & 1 == 1 {
                    swap_uppers(&mut m, t, u);
                }
            }
            members.push((rebuild(&c, &m), None));
        }
        members_total += members.len() as u64;
        for (mb, only) in &members {
            moves.clear();
            mb.gen_moves(&mut moves, false);
            for &m in &moves {
                if let Some(col) = only {
                    if m.from() != Loc::Column(*col as u8) {
                        continue;
                    }
                }
                let mut ch = mb.clone();
                ch.apply(m);
                ch.autoplay(&mut log);
                log.clear();
                let ch = settle(ch, &mut log);
                if ch.is_won() {
                    won = true;
                    break 'search;
                }
                if seen.insert(ch.fingerprint()) {
                    stack.push(ch.pack());
                }
            }
        }
    }
    println!(
        "deal {deal} cells {cells}: {} classes {} expanded {expanded} members/expansion {:.2} {:.2}s",
        if won { "WON (inconclusive)" } else if seen.len() > limit { "LIMIT" } else { "UNSOLVABLE" },
        seen.len(),
        members_total as f64 / expanded.max(1) as f64,
        t0.elapsed().as_secs_f64()
    );
}
