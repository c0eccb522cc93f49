//! Fingerprints: the 128-bit fingerprint of the canonical position, kept
//! up to date move by move and worked out for a move without playing it,
//! and the exact canonical key it stands for.

use super::moves::{Loc, Move};
use super::{Board, COL_CAP, NO_CARD};

// ---------------------------------------------------------------------------
// Fingerprints.
//
// The canonical position is the multiset of columns plus the set of cell
// cards (foundations follow from the rest). Its 128-bit fingerprint is
//   sum over columns of mix(Z(column))  +  sum over cell cards of C[card]
// (wrapping), where Z(column) = sum of T[card][depth] (Zobrist) and `mix` is a
// bijective finaliser of each half, so column and cell order never matter and a
// move updates it in O(1). Tables come from splitmix64 with a fixed seed, so
// fingerprints (and therefore searches) are deterministic.
// ---------------------------------------------------------------------------

const fn splitmix(state: u64) -> (u64, u64) {
    let s = state.wrapping_add(0x9E37_79B9_7F4A_7C15);
    let mut z = s;
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    (s, z ^ (z >> 31))
}

const fn make_tables() -> ([[u128; COL_CAP]; 52], [u128; 52]) {
    let mut t = [[0u128; COL_CAP]; 52];
    let mut c = [0u128; 52];
    let mut state = 0x0F3E_C311_DEA1_5EEDu64;
    let mut card = 0;
    while card < 52 {
        let mut d = 0;
        while d < COL_CAP {
            let (s1, a) = splitmix(state);
            let (s2, b) = splitmix(s1);
            state = s2;
            t[card][d] = ((a as u128) << 64) | b as u128;
            d += 1;
        }
        let (s1, a) = splitmix(state);
        let (s2, b) = splitmix(s1);
        state = s2;
        c[card] = ((a as u128) << 64) | b as u128;
        card += 1;
    }
    (t, c)
}

pub(super) static TABLES: ([[u128; COL_CAP]; 52], [u128; 52]) = make_tables();

/// The low halves of `TABLES` (what a narrow board's fingerprint is built
/// from), in half the cache, with rows for card codes up to 63 (zero past
/// 51) so that an index masked to 6 bits needs no bounds check.
const fn make_narrow_tables() -> ([[u64; COL_CAP]; 64], [u64; 64]) {
    let (t, c) = make_tables();
    let mut lo = [[0u64; COL_CAP]; 64];
    let mut clo = [0u64; 64];
    let mut card = 0;
    while card < 52 {
        let mut d = 0;
        while d < COL_CAP {
            lo[card][d] = t[card][d] as u64;
            d += 1;
        }
        clo[card] = c[card] as u64;
        card += 1;
    }
    (lo, clo)
}

static NARROW: ([[u64; COL_CAP]; 64], [u64; 64]) = make_narrow_tables();

/// A position's fingerprint (`Board::fingerprint`, wide) summed from its
/// parts as they are read, without building the board: each column's cards
/// from the bottom (`card`), closed by `end_column` (an empty column too),
/// and the cell cards (`cell`), in any order of columns and of cells. For a
/// reader of stored positions that first asks whether one was met before.
#[derive(Clone, Copy, Default)]
pub struct FpBuilder {
    fp: u128,
    col: u128,
}

impl FpBuilder {
    /// The card at `depth` (0: the bottom) of the column being read.
    #[inline]
    pub fn card(&mut self, card: u8, depth: usize) {
        self.col = self.col.wrapping_add(TABLES.0[card as usize][depth]);
    }

    /// The end of a column.
    #[inline]
    pub fn end_column(&mut self) {
        self.fp = self.fp.wrapping_add(mix(self.col));
        self.col = 0;
    }

    /// A card in a cell.
    #[inline]
    pub fn cell(&mut self, card: u8) {
        self.fp = self.fp.wrapping_add(TABLES.1[card as usize]);
    }

    pub fn finish(self) -> u128 {
        debug_assert_eq!(self.col, 0, "a column left open");
        self.fp
    }
}

// `prefix_eq` compares a column array as two 16-byte words.
const _: () = assert!(COL_CAP == 32);

/// Whether the first `l` (at most 32) bytes of `a` and `b` are equal.
#[inline(always)]
pub(super) fn prefix_eq(a: &[u8; COL_CAP], b: &[u8], l: usize) -> bool {
    let word = |x: &[u8], k: usize| u128::from_le_bytes(x[16 * k..16 * k + 16].try_into().unwrap());
    let mask = |n: usize| match n {
        0 => 0,
        1..=15 => (1u128 << (8 * n)) - 1,
        _ => u128::MAX,
    };
    let d0 = (word(a, 0) ^ word(b, 0)) & mask(l);
    let d1 = (word(a, 1) ^ word(b, 1)) & mask(l.saturating_sub(16));
    d0 | d1 == 0
}

/// `NARROW`'s entry of card `c` at depth `d`.
#[inline(always)]
pub(super) fn zlo(c: u8, d: usize) -> u64 {
    NARROW.0[(c & 63) as usize][d & (COL_CAP - 1)]
}

/// `NARROW`'s entry of card `c` in a cell.
#[inline(always)]
fn clo(c: u8) -> u64 {
    NARROW.1[(c & 63) as usize]
}

#[inline]
const fn fmix64(mut k: u64) -> u64 {
    k ^= k >> 33;
    k = k.wrapping_mul(0xff51_afd7_ed55_8ccd);
    k ^= k >> 33;
    k = k.wrapping_mul(0xc4ce_b9fe_1a85_ec53);
    k ^ (k >> 33)
}

/// A bijective non-linear mixer: murmur3's finaliser on each half. The
/// halves of a column hash are sums of independent random table halves, so
/// the fingerprint's halves are two independent 64-bit fingerprints (the
/// low one is `Board::set_narrow`'s); a false match needs both to collide.
#[inline]
const fn mix(x: u128) -> u128 {
    ((mix_hi(x) as u128) << 64) | mix_lo(x) as u128
}

/// The low half of `mix` (all of it for a narrow board).
#[inline]
pub(super) const fn mix_lo(x: u128) -> u64 {
    fmix64((x as u64) ^ 0x243F_6A88_85A3_08D3)
}

#[inline]
const fn mix_hi(x: u128) -> u64 {
    fmix64(((x >> 64) as u64) ^ 0x1319_8A2E_0370_7344)
}

/// `mix` of an empty column's hash.
pub(super) const EMPTY_MIX: u128 = mix(0);

/// What `Board::dirty_mark` returns.
#[derive(Copy, Clone, Debug)]
pub struct DirtyMark {
    dirty: u16,
    #[cfg(debug_assertions)]
    fp: u128,
}

impl DirtyMark {
    /// Bytes `write` takes.
    pub const BYTES: usize = if cfg!(debug_assertions) { 18 } else { 2 };

    /// Appends the mark to `out` (`read` takes it back): for files a
    /// search writes and reads itself.
    pub fn write(&self, out: &mut Vec<u8>) {
        out.extend_from_slice(&self.dirty.to_le_bytes());
        #[cfg(debug_assertions)]
        out.extend_from_slice(&self.fp.to_le_bytes());
    }

    /// The mark `write` wrote at the start of `b`.
    pub fn read(b: &[u8]) -> DirtyMark {
        DirtyMark {
            dirty: u16::from_le_bytes([b[0], b[1]]),
            #[cfg(debug_assertions)]
            fp: u128::from_le_bytes(b[2..18].try_into().unwrap()),
        }
    }
}

impl Board {
    /// A hash of column `i`'s cards (equal columns, equal hashes; the
    /// Zobrist sum the fingerprint is built from).
    #[inline]
    pub fn column_hash(&self, i: usize) -> u128 {
        self.col_hash[i]
    }

    pub(super) fn compute_fp(&self) -> u128 {
        let mut fp = 0u128;
        for i in 0..self.ncols() {
            fp = fp.wrapping_add(self.col_mix[i]);
        }
        for &c in &self.cells[..self.ncells()] {
            if c != NO_CARD {
                fp = fp.wrapping_add(TABLES.1[c as usize]);
            }
        }
        fp
    }

    pub(super) fn rehash(&mut self) {
        // Columns past `ncols` stay empty, with the hash and mix `empty` set.
        for i in 0..self.ncols() {
            let mut h = 0u128;
            for (d, &c) in self.column(i).iter().enumerate() {
                h = h.wrapping_add(TABLES.0[c as usize][d]);
            }
            self.col_hash[i] = h;
            self.col_mix[i] = self.mix_col(h);
        }
        self.fp = self.compute_fp();
        self.dirty = 0;
    }

    /// A column hash's contribution to the fingerprint.
    #[inline]
    pub(super) fn mix_col(&self, h: u128) -> u128 {
        if self.narrow {
            mix_lo(h) as u128
        } else {
            mix(h)
        }
    }

    /// With `narrow`, only the low 64 bits of `fingerprint` are a
    /// fingerprint (the high half is not), at half the mixing: for
    /// searches that keep 64 bits anyway (the portfolio, which never proves
    /// anything). Never for a proof: its soundness bound needs all 128.
    pub fn set_narrow(&mut self, narrow: bool) {
        self.narrow = narrow;
        self.rehash();
    }

    /// The 128-bit fingerprint of the canonical position: equal for positions
    /// that differ only by the order of columns or of cells.
    #[inline]
    pub fn fingerprint(&self) -> u128 {
        let mut fp = self.fp;
        let mut d = self.dirty;
        while d != 0 {
            let i = d.trailing_zeros() as usize;
            d &= d - 1;
            fp = fp
                .wrapping_sub(self.col_mix[i])
                .wrapping_add(self.mix_col(self.col_hash[i]));
        }
        fp
    }

    /// What a move between columns and cells changes, worked out without
    /// playing it: the low 64 bits of the fingerprint of the position after
    /// `m` (`fingerprint() as u64` after `apply(m)`, which debug builds
    /// check), and the low 64 bits of the new hashes of the source and the
    /// destination column (`column_hash`; 0 where the source or destination
    /// is a cell). The board must be narrow (`set_narrow`) and settled; the
    /// automatic moves that may follow `m` are not included (see
    /// `exposes_home`).
    #[inline]
    pub fn narrow_after(&self, m: Move) -> (u64, u64, u64) {
        debug_assert!(self.narrow && self.dirty == 0);
        let fp = self.fp as u64;
        let Move::Shift { from, to, count } = m else {
            unreachable!("a move home")
        };
        let out = match (from, to) {
            (Loc::Column(a), Loc::Column(b)) => {
                let (a, b, k) = (a as usize, b as usize, count as usize);
                let (la, lb) = (self.lens[a] as usize, self.lens[b] as usize);
                let mut ha = self.col_hash[a] as u64;
                let mut hb = self.col_hash[b] as u64;
                let src = &self.cols[a];
                for j in 0..k {
                    let d = (la - k + j) & (COL_CAP - 1);
                    let c = src[d];
                    ha = ha.wrapping_sub(zlo(c, d));
                    hb = hb.wrapping_add(zlo(c, lb + j));
                }
                let fp = fp
                    .wrapping_sub(self.col_mix[a] as u64)
                    .wrapping_sub(self.col_mix[b] as u64)
                    .wrapping_add(mix_lo(ha as u128))
                    .wrapping_add(mix_lo(hb as u128));
                (fp, ha, hb)
            }
            (Loc::Column(a), Loc::Cell(_)) => {
                let a = a as usize;
                let d = (self.lens[a] as usize).wrapping_sub(1) & (COL_CAP - 1);
                let c = self.cols[a][d];
                let ha = (self.col_hash[a] as u64).wrapping_sub(zlo(c, d));
                let fp = fp
                    .wrapping_sub(self.col_mix[a] as u64)
                    .wrapping_add(mix_lo(ha as u128))
                    .wrapping_add(clo(c));
                (fp, ha, 0)
            }
            (Loc::Cell(i), Loc::Column(b)) => {
                let b = b as usize;
                let c = self.cells[i as usize];
                let hb = (self.col_hash[b] as u64).wrapping_add(zlo(c, self.lens[b] as usize));
                let fp = fp
                    .wrapping_sub(clo(c))
                    .wrapping_sub(self.col_mix[b] as u64)
                    .wrapping_add(mix_lo(hb as u128));
                (fp, 0, hb)
            }
            (Loc::Cell(_), Loc::Cell(_)) => (fp, 0, 0),
        };
        #[cfg(debug_assertions)]
        {
            let mut b = self.clone();
            b.apply(m);
            debug_assert_eq!(out.0, b.fingerprint() as u64);
            if let Loc::Column(a) = from {
                debug_assert_eq!(out.1, b.column_hash(a as usize) as u64);
            }
            if let Loc::Column(d) = to {
                debug_assert_eq!(out.2, b.column_hash(d as usize) as u64);
            }
        }
        out
    }

    /// `narrow_after` for a board that is not narrow: the whole 128-bit
    /// fingerprint after `m` (`fingerprint()` after `apply(m)`, which debug
    /// builds check), and the low 64 bits of the new hashes of the source
    /// and destination columns. The board must be settled.
    #[inline]
    pub fn wide_after(&self, m: Move) -> (u128, u64, u64) {
        debug_assert!(!self.narrow && self.dirty == 0);
        let t = &TABLES.0;
        let fp = self.fp;
        let card = |c: u8| (c & 63).min(51) as usize;
        let Move::Shift { from, to, count } = m else {
            unreachable!("a move home")
        };
        let out = match (from, to) {
            (Loc::Column(a), Loc::Column(b)) => {
                let (a, b, k) = (a as usize, b as usize, count as usize);
                let (la, lb) = (self.lens[a] as usize, self.lens[b] as usize);
                let mut ha = self.col_hash[a];
                let mut hb = self.col_hash[b];
                let src = &self.cols[a];
                for j in 0..k {
                    let d = (la - k + j) & (COL_CAP - 1);
                    let c = card(src[d]);
                    ha = ha.wrapping_sub(t[c][d]);
                    hb = hb.wrapping_add(t[c][(lb + j) & (COL_CAP - 1)]);
                }
                let fp = fp
                    .wrapping_sub(self.col_mix[a])
                    .wrapping_sub(self.col_mix[b])
                    .wrapping_add(mix(ha))
                    .wrapping_add(mix(hb));
                (fp, ha as u64, hb as u64)
            }
            (Loc::Column(a), Loc::Cell(_)) => {
                let a = a as usize;
                let d = (self.lens[a] as usize).wrapping_sub(1) & (COL_CAP - 1);
                let c = card(self.cols[a][d]);
                let ha = self.col_hash[a].wrapping_sub(t[c][d]);
                let fp = fp
                    .wrapping_sub(self.col_mix[a])
                    .wrapping_add(mix(ha))
                    .wrapping_add(TABLES.1[c]);
                (fp, ha as u64, 0)
            }
            (Loc::Cell(i), Loc::Column(b)) => {
                let b = b as usize;
                let c = card(self.cells[i as usize]);
                let hb =
                    self.col_hash[b].wrapping_add(t[c][(self.lens[b] as usize) & (COL_CAP - 1)]);
                let fp = fp
                    .wrapping_sub(TABLES.1[c])
                    .wrapping_sub(self.col_mix[b])
                    .wrapping_add(mix(hb));
                (fp, 0, hb as u64)
            }
            (Loc::Cell(_), Loc::Cell(_)) => (fp, 0, 0),
        };
        #[cfg(debug_assertions)]
        {
            let mut b = self.clone();
            b.apply(m);
            debug_assert_eq!(out.0, b.fingerprint());
            if let Loc::Column(a) = from {
                debug_assert_eq!(out.1, b.column_hash(a as usize) as u64);
            }
            if let Loc::Column(d) = to {
                debug_assert_eq!(out.2, b.column_hash(d as usize) as u64);
            }
        }
        out
    }

    /// `narrow_after` for a sequence: the top `k` cards of column `c` to
    /// free cells (the board must have `k` empty ones), then the card
    /// under them onto column `d`. Returns the fingerprint and the new
    /// hashes of `c` and `d`.
    #[inline]
    pub fn narrow_after_park(&self, c: usize, k: usize, d: usize) -> (u64, u64, u64) {
        debug_assert!(self.narrow && self.dirty == 0 && c != d);
        let (lc, ld) = (self.lens[c] as usize, self.lens[d] as usize);
        let mut hc = self.col_hash[c] as u64;
        let mut fp = (self.fp as u64)
            .wrapping_sub(self.col_mix[c] as u64)
            .wrapping_sub(self.col_mix[d] as u64);
        let col = &self.cols[c];
        for j in lc - k..lc {
            let x = col[j & (COL_CAP - 1)];
            hc = hc.wrapping_sub(zlo(x, j));
            fp = fp.wrapping_add(clo(x));
        }
        let j = (lc - k - 1) & (COL_CAP - 1);
        let x = col[j];
        hc = hc.wrapping_sub(zlo(x, j));
        let hd = (self.col_hash[d] as u64).wrapping_add(zlo(x, ld));
        let fp = fp
            .wrapping_add(mix_lo(hc as u128))
            .wrapping_add(mix_lo(hd as u128));
        #[cfg(debug_assertions)]
        {
            let mut b = self.clone();
            for _ in 0..k {
                let cell = (0..b.ncells()).find(|&i| b.cells[i] == NO_CARD).unwrap();
                b.apply(Move::Shift {
                    from: Loc::Column(c as u8),
                    to: Loc::Cell(cell as u8),
                    count: 1,
                });
            }
            b.apply(Move::Shift {
                from: Loc::Column(c as u8),
                to: Loc::Column(d as u8),
                count: 1,
            });
            debug_assert_eq!(fp, b.fingerprint() as u64);
            debug_assert_eq!(hc, b.column_hash(c) as u64);
            debug_assert_eq!(hd, b.column_hash(d) as u64);
        }
        (fp, hc, hd)
    }

    /// Brings the cached column mixes up to date, so that `fingerprint`
    /// costs nothing until the next change (call before trying many moves
    /// from one position).
    #[inline]
    pub fn settle(&mut self) {
        let mut d = self.dirty;
        while d != 0 {
            let i = d.trailing_zeros() as usize;
            d &= d - 1;
            let m = self.mix_col(self.col_hash[i]);
            self.fp = self.fp.wrapping_sub(self.col_mix[i]).wrapping_add(m);
            self.col_mix[i] = m;
        }
        self.dirty = 0;
    }

    /// The set of changed columns, to hand back to `restore_dirty` once
    /// every move made since has been undone.
    #[inline]
    pub fn dirty_mark(&self) -> DirtyMark {
        DirtyMark {
            dirty: self.dirty,
            #[cfg(debug_assertions)]
            fp: self.fingerprint(),
        }
    }

    /// Forgets column changes that were undone since `dirty_mark`: the
    /// columns' hashes are back to their values at the mark, so their cached
    /// mixes are current again.
    #[inline]
    pub fn restore_dirty(&mut self, mark: DirtyMark) {
        self.dirty = mark.dirty;
        #[cfg(debug_assertions)]
        debug_assert_eq!(
            self.fingerprint(),
            mark.fp,
            "moves since the mark were not all undone"
        );
    }

    /// The exact canonical key: columns sorted, cells sorted, as bytes
    /// (each column's cards then 0xFF; then the sorted cell cards).
    pub fn canonical_key(&self) -> Vec<u8> {
        let mut cols: Vec<&[u8]> = (0..self.ncols()).map(|i| self.column(i)).collect();
        cols.sort_unstable();
        let mut key = Vec::with_capacity(64);
        for c in cols {
            key.extend_from_slice(c);
            key.push(NO_CARD);
        }
        let mut cells: Vec<u8> = self.cells[..self.ncells()]
            .iter()
            .copied()
            .filter(|&c| c != NO_CARD)
            .collect();
        cells.sort_unstable();
        key.extend_from_slice(&cells);
        key
    }

    /// The columns changed since the last `settle` (or `restore_dirty`).
    #[inline]
    pub fn changed_columns(&self) -> u16 {
        self.dirty
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::card::Card;

    #[test]
    fn unplayed_children_match_played_ones() {
        for b in crate::board::sample_positions() {
            let mut n = b.clone();
            n.set_narrow(true);
            let mut moves = Vec::new();
            b.gen_moves(&mut moves, true);
            for &m in &moves {
                let Move::Shift { from, to, .. } = m else {
                    continue;
                };
                let mut played = b.clone();
                played.apply(m);
                let (fp, ha, hd) = b.wide_after(m);
                assert_eq!(fp, played.fingerprint(), "{m:?} {b:?}");
                let (nfp, nha, nhd) = n.narrow_after(m);
                let mut np = n.clone();
                np.apply(m);
                assert_eq!(nfp, np.fingerprint() as u64, "{m:?}");
                if let Loc::Column(a) = from {
                    assert_eq!(
                        (ha, nha),
                        (
                            played.column_hash(a as usize) as u64,
                            played.column_hash(a as usize) as u64
                        )
                    );
                }
                if let Loc::Column(d) = to {
                    assert_eq!(
                        (hd, nhd),
                        (
                            played.column_hash(d as usize) as u64,
                            played.column_hash(d as usize) as u64
                        )
                    );
                }
                for eager in [false, true] {
                    let mut c = b.clone();
                    c.autoplay_with(&mut Vec::new(), eager);
                    if c != b {
                        continue; // not at the fixpoint of this rule
                    }
                    c.apply(m);
                    let moved = c.autoplay_after(&mut Vec::new(), m, eager) > 0;
                    assert_eq!(b.exposes_home(m, eager), moved, "{m:?} eager {eager}");
                }
            }
            // Parks: k cards to the cells, the card under them onto a column.
            for c in 0..b.ncols() {
                for k in 1..=(b.empty_cells() as usize).min(b.column_len(c).saturating_sub(1)) {
                    let x = Card(b.column(c)[b.column_len(c) - 1 - k]);
                    for d in (0..b.ncols()).filter(|&d| d != c) {
                        if !b.top(d).is_some_and(|t| b.variant().builds_on(x, t)) {
                            continue;
                        }
                        let mut played = n.clone();
                        for _ in 0..k {
                            let cell = (0..played.ncells())
                                .find(|&i| played.cell(i).is_none())
                                .unwrap();
                            played.apply(Move::Shift {
                                from: Loc::Column(c as u8),
                                to: Loc::Cell(cell as u8),
                                count: 1,
                            });
                        }
                        played.apply(Move::Shift {
                            from: Loc::Column(c as u8),
                            to: Loc::Column(d as u8),
                            count: 1,
                        });
                        let (fp, hc, hd) = n.narrow_after_park(c, k, d);
                        assert_eq!(fp, played.fingerprint() as u64);
                        assert_eq!(hc, played.column_hash(c) as u64);
                        assert_eq!(hd, played.column_hash(d) as u64);
                    }
                }
            }
        }
    }
}
