//! One proof split across workers by fingerprint: each `Part` owns the
//! positions whose fingerprint falls in its share (`owner`), keeps their
//! visited set, and expands the new ones a breadth-first level at a time;
//! every child goes to its owner as a record. `jobs/split_proof.py` runs
//! one `Part` per Ray actor and moves the records between them, with a
//! barrier between levels (docs/SOLVER.md, "One proof across workers").
//!
//! This is the prototype of that design: it searches the whole reachable
//! set level by level with each owner's share of it in memory, where the
//! design keeps only a layer's last three levels on each owner's disk. The
//! split itself, and why it is sound, are the design's: a position's owner
//! depends only on its fingerprint, so a repeat always meets the first
//! copy at one owner, and the owners' visited sets are one visited set cut
//! into disjoint parts. The moves are the prover's (`Board::
//! gen_moves_with_runs`, each followed by the safe automatic moves), so the
//! owners store exactly the positions the prover stores (tests).

use super::table::{FpTable, TableFull};
use crate::board::{Board, Packed};
use crate::variant::Variant;

/// Bytes of a record: the fingerprint (16, little-endian), then the packed
/// position (80).
pub const RECORD: usize = 16 + 80;

/// The owner of a position among `owners`: its fingerprint's bits 64..128
/// modulo `owners` (the visited set picks segments by the top 8 bits and
/// slots by the next 24, which every owner then still spreads evenly).
#[inline]
pub fn owner(fp: u128, owners: u32) -> u32 {
    ((fp >> 64) as u64 % owners as u64) as u32
}

fn record(fp: u128, b: &Board, out: &mut Vec<u8>) {
    out.extend_from_slice(&fp.to_le_bytes());
    out.extend_from_slice(&b.pack().0);
}

/// Where a proof of `board` starts: the position after its safe automatic
/// moves, as (its owner, its record); `None` when those moves win.
pub fn entry(board: &Board, owners: u32) -> Option<(u32, Vec<u8>)> {
    let mut b = board.clone();
    b.autoplay(&mut Vec::new());
    if b.is_won() {
        return None;
    }
    let fp = b.fingerprint();
    let mut rec = Vec::with_capacity(RECORD);
    record(fp, &b, &mut rec);
    Some((owner(fp, owners), rec))
}

/// How a level's expansion ended.
pub struct Level {
    /// Per owner, the records of the children that go to it.
    pub outboxes: Vec<Vec<u8>>,
    /// Whether a child was a won position.
    pub won: bool,
}

/// One owner's share of a proof.
pub struct Part {
    variant: Variant,
    owners: u32,
    me: u32,
    seen: FpTable,
    /// The positions admitted since the last expansion.
    fresh: Vec<Packed>,
    pub expanded: u64,
}

impl Part {
    pub fn new(variant: Variant, owners: u32, me: u32) -> Part {
        assert!(owners > 0 && me < owners, "owner {me} of {owners}");
        Part {
            variant,
            owners,
            me,
            seen: FpTable::new(),
            fresh: Vec::new(),
            expanded: 0,
        }
    }

    /// Positions in this owner's visited set.
    pub fn stored(&self) -> u64 {
        self.seen.len()
    }

    /// Bytes of the visited set and the positions waiting for expansion.
    pub fn bytes(&self) -> u64 {
        self.seen.bytes() + (self.fresh.capacity() * std::mem::size_of::<Packed>()) as u64
    }

    /// Takes `records` (whole records, each this owner's) and keeps the
    /// positions not seen before for the next `expand`; returns how many
    /// were new. A record of another owner is a caller's error: `Err`.
    pub fn admit(&mut self, records: &[u8]) -> Result<u64, String> {
        if !records.len().is_multiple_of(RECORD) {
            return Err(format!(
                "{} bytes is not a whole number of records",
                records.len()
            ));
        }
        let mut new = 0;
        for r in records.chunks_exact(RECORD) {
            let fp = u128::from_le_bytes(r[..16].try_into().unwrap());
            if owner(fp, self.owners) != self.me {
                return Err(format!(
                    "a record of owner {} sent to owner {}",
                    owner(fp, self.owners),
                    self.me
                ));
            }
            match self.seen.insert(fp) {
                Ok(true) => {
                    let mut p = Packed([0; 80]);
                    p.0.copy_from_slice(&r[16..]);
                    self.fresh.push(p);
                    new += 1;
                }
                Ok(false) => {}
                Err(TableFull) => return Err("the visited set is full".into()),
            }
        }
        Ok(new)
    }

    /// Expands every position admitted since the last call: the records of
    /// their children, by owner, and whether one of them is won.
    pub fn expand(&mut self) -> Level {
        let mut outboxes = vec![Vec::new(); self.owners as usize];
        let mut won = false;
        let mut moves = Vec::new();
        let mut log = Vec::new();
        for p in std::mem::take(&mut self.fresh) {
            self.expanded += 1;
            let mut b = Board::unpack(&p, self.variant);
            b.settle();
            moves.clear();
            b.gen_moves_with_runs(&mut moves, b.runs());
            for &m in &moves {
                let mut c = b.clone();
                c.apply(m);
                c.autoplay_after(&mut log, m, false);
                log.clear();
                if c.is_won() {
                    won = true;
                    continue;
                }
                let fp = c.fingerprint();
                record(fp, &c, &mut outboxes[owner(fp, self.owners) as usize]);
            }
        }
        Level { outboxes, won }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::prover::{prove, ProofLimits, ProofOutcome};
    use crate::testutil::{late_positions, reachable};

    /// The split proof run in one process: levels until none is new; `None`
    /// past `cap` positions.
    fn split_capped(board: &Board, owners: u32, cap: u64) -> Option<(bool, u64, Vec<u64>)> {
        let mut parts: Vec<Part> = (0..owners)
            .map(|i| Part::new(board.variant(), owners, i))
            .collect();
        let Some((o, rec)) = entry(board, owners) else {
            return Some((true, 0, vec![0; owners as usize]));
        };
        parts[o as usize].admit(&rec).unwrap();
        loop {
            let levels: Vec<Level> = parts.iter_mut().map(|p| p.expand()).collect();
            if levels.iter().any(|l| l.won) {
                return Some((true, 0, vec![]));
            }
            let mut new = 0;
            for (j, part) in parts.iter_mut().enumerate() {
                for l in &levels {
                    new += part.admit(&l.outboxes[j]).unwrap();
                }
            }
            let stored: Vec<u64> = parts.iter().map(|p| p.stored()).collect();
            if new == 0 {
                return Some((false, stored.iter().sum(), stored));
            }
            if stored.iter().sum::<u64>() > cap {
                return None;
            }
        }
    }

    fn split(board: &Board, owners: u32) -> (bool, u64, Vec<u64>) {
        split_capped(board, owners, 5_000_000).expect("a test's split proof outgrew 5 M positions")
    }

    #[test]
    fn split_proofs_store_what_the_prover_stores() {
        // Unsolvable: 11982 with 4 cells, 12 and 27 with 1 (Pringle: 2).
        for (deal, cells) in [(11982, 4), (12, 1), (27, 1)] {
            let b = Board::deal(deal, Variant::default().with_cells(cells)).unwrap();
            let p = prove(&b, &ProofLimits::default());
            assert_eq!(p.outcome, ProofOutcome::Unsolvable);
            for owners in [1, 2, 5] {
                let (won, stored, parts) = split(&b, owners);
                assert!(!won, "{deal}@{cells}");
                assert_eq!(stored, p.stats.stored, "{deal}@{cells}, {owners} owners");
                // Every owner holds a share (none empty, none all).
                if owners > 1 {
                    assert!(parts.iter().all(|&s| 0 < s && s < stored), "{parts:?}");
                }
            }
        }
    }

    /// On small positions from late in real games (both won and lost), a
    /// split proof decides as the exhaustive reference search does, and a
    /// lost one stores the positions that search reaches.
    #[test]
    fn split_proofs_decide_as_the_reference_search() {
        let (mut lost, mut won) = (0, 0);
        let deals = if cfg!(debug_assertions) {
            1..=6
        } else {
            1..=16
        };
        for q in late_positions(Variant::default(), deals) {
            let Some((wins, n)) = reachable(&q, true, 20_000) else {
                continue;
            };
            // A won position's breadth-first search can pass many more
            // positions than the depth-first reference before its win.
            let Some((w, stored, _)) = split_capped(&q, 3, 200_000) else {
                assert!(wins, "{q}");
                continue;
            };
            assert_eq!(w, wins, "{q}");
            if wins {
                won += 1;
            } else {
                assert_eq!(stored, n as u64, "{q}");
                lost += 1;
            }
        }
        assert!(lost > 0 && won > 0, "lost {lost}, won {won}");
    }

    #[test]
    fn a_record_for_another_owner_is_refused() {
        let b = Board::deal(1, Variant::default()).unwrap();
        let (o, rec) = entry(&b, 4).unwrap();
        let mut other = Part::new(b.variant(), 4, (o + 1) % 4);
        assert!(other.admit(&rec).unwrap_err().contains("sent to owner"));
        assert!(other
            .admit(&rec[..50])
            .unwrap_err()
            .contains("whole number"));
        let mut mine = Part::new(b.variant(), 4, o);
        assert_eq!(mine.admit(&rec).unwrap(), 1);
        assert_eq!(mine.admit(&rec).unwrap(), 0);
    }
}
