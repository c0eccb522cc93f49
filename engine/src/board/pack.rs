//! The packed form of a position: 80 bytes, what the best-first searches
//! store for every position they expand.

use super::fingerprint::{mix_lo, prefix_eq, zlo, TABLES};
use super::{Board, COL_CAP, NO_CARD};
use crate::variant::{Variant, MAX_CELLS, MAX_COLUMNS};

/// Offsets in a `Packed` board.
const PACK_LENS: usize = 0;
const PACK_FOUND: usize = PACK_LENS + MAX_COLUMNS;
const PACK_CELLS: usize = PACK_FOUND + 4;
const PACK_CARDS: usize = PACK_CELLS + MAX_CELLS;
const _: () = assert!(PACK_CARDS + 52 <= 80);

/// A board packed into 80 bytes (`Board::pack`).
#[derive(Copy, Clone)]
pub struct Packed(pub [u8; 80]);

impl Packed {
    /// The packed form of a position given by its parts: each column's
    /// length (`lens`, one per column of the variant), the foundation
    /// counts (C D H S), each cell's card code (0xFF when empty, one per
    /// cell of the variant) and every column's cards in turn, deepest
    /// first (`cards`). `Board::unpack` makes the board; nothing is checked
    /// here, so the parts must come from a valid position.
    pub fn from_parts(lens: &[u8], found: [u8; 4], cells: &[u8], cards: &[u8]) -> Packed {
        let mut p = [NO_CARD; 80];
        p[PACK_LENS..PACK_LENS + MAX_COLUMNS].fill(0);
        p[PACK_LENS..PACK_LENS + lens.len()].copy_from_slice(lens);
        p[PACK_FOUND..PACK_FOUND + 4].copy_from_slice(&found);
        p[PACK_CELLS..PACK_CELLS + cells.len()].copy_from_slice(cells);
        p[PACK_CARDS..PACK_CARDS + cards.len()].copy_from_slice(cards);
        Packed(p)
    }
}

impl Board {
    /// The exact position in 80 bytes: the column lengths, the foundations
    /// and every cell (0xFF when empty) at fixed offsets, then each column's
    /// cards in turn.
    #[inline]
    pub fn pack(&self) -> Packed {
        // Whole column arrays are copied (fixed-size copies, no call to
        // `memcpy`), each overwriting the previous one's tail; two blocks of
        // NO_CARD then cover the rest (at most 80 - PACK_CARDS bytes).
        const _: () = assert!(80 - PACK_CARDS <= 2 * COL_CAP);
        let mut p = [NO_CARD; 80 + 2 * COL_CAP];
        p[PACK_LENS..PACK_LENS + MAX_COLUMNS].copy_from_slice(&self.lens);
        p[PACK_FOUND..PACK_FOUND + 4].copy_from_slice(&self.found);
        p[PACK_CELLS..PACK_CELLS + MAX_CELLS].copy_from_slice(&self.cells);
        let mut i = PACK_CARDS;
        for c in 0..self.ncols() {
            p[i..i + COL_CAP].copy_from_slice(&self.cols[c]);
            i += self.lens[c] as usize;
        }
        p[i..i + 2 * COL_CAP].fill(NO_CARD);
        let mut out = [0u8; 80];
        out.copy_from_slice(&p[..80]);
        Packed(out)
    }

    /// The board `pack` stored (same variant).
    pub fn unpack(p: &Packed, variant: Variant) -> Board {
        let mut b = Board::empty(variant);
        b.unpack_into(p);
        b
    }

    /// Makes this board (of the same variant) the one `p` stored, without
    /// building a new one.
    #[inline]
    #[allow(clippy::needless_range_loop)] // parallel per-column arrays
    pub fn unpack_into(&mut self, p: &Packed) {
        let p = &p.0;
        let old_lens = self.lens;
        self.lens
            .copy_from_slice(&p[PACK_LENS..PACK_LENS + MAX_COLUMNS]);
        self.found.copy_from_slice(&p[PACK_FOUND..PACK_FOUND + 4]);
        self.cells
            .copy_from_slice(&p[PACK_CELLS..PACK_CELLS + MAX_CELLS]);
        if self.narrow {
            // Only the low halves of the hashes, which are all a narrow
            // board's fingerprint reads (the high halves are left 0 and
            // never read). A column equal to the one this board holds
            // keeps its hash, and its mix if that is current (a search
            // unpacks a position near the one it holds, so most are);
            // another is copied whole from a padded copy of `p` (a
            // fixed-size copy) and hashed.
            let mut buf = [NO_CARD; 80 + COL_CAP];
            buf[..80].copy_from_slice(p);
            let mut i = PACK_CARDS;
            let mut fp = 0u64;
            for c in 0..self.ncols() {
                let l = (self.lens[c] as usize).min(COL_CAP);
                let new = &buf[i..i + COL_CAP];
                if l == old_lens[c] as usize && prefix_eq(&self.cols[c], new, l) {
                    if self.dirty & (1 << c) != 0 {
                        self.col_mix[c] = mix_lo(self.col_hash[c]) as u128;
                    }
                } else {
                    self.cols[c].copy_from_slice(new);
                    let col = &self.cols[c];
                    let mut h = 0u64;
                    for (d, &card) in col[..l].iter().enumerate() {
                        h = h.wrapping_add(zlo(card, d));
                    }
                    self.col_hash[c] = h as u128;
                    self.col_mix[c] = mix_lo(h as u128) as u128;
                }
                i += l;
                fp = fp.wrapping_add(self.col_mix[c] as u64);
            }
            let mut fp = fp as u128;
            for &c in &self.cells[..self.ncells()] {
                if c != NO_CARD {
                    fp = fp.wrapping_add(TABLES.1[c as usize]);
                }
            }
            self.fp = fp;
            self.dirty = 0;
            return;
        }
        let mut i = PACK_CARDS;
        for c in 0..self.ncols() {
            let l = self.lens[c] as usize;
            let mut h = 0u128;
            for d in 0..l {
                let card = p[i + d];
                self.cols[c][d] = card;
                h = h.wrapping_add(TABLES.0[card as usize][d]);
            }
            i += l;
            self.col_hash[c] = h;
            self.col_mix[c] = self.mix_col(h);
        }
        self.fp = self.compute_fp();
        self.dirty = 0;
    }
}

#[cfg(test)]
mod tests {
    use crate::card::Card;

    #[test]
    fn column_of_and_narrow_unpacking() {
        let boards = crate::board::sample_positions();
        // Unpacked one after another into one narrow board, which keeps
        // what it can of the columns it holds.
        let mut scratch = boards[0].clone();
        scratch.set_narrow(true);
        for b in &boards {
            for card in 0..52u8 {
                let naive = (0..b.ncols()).find(|&i| b.column(i).contains(&card));
                assert_eq!(b.column_of(Card(card)), naive, "{card} {b:?}");
            }
            if b.variant() != scratch.variant() {
                scratch = b.clone();
                scratch.set_narrow(true);
                continue;
            }
            scratch.unpack_into(&b.pack());
            let mut fresh = b.clone();
            fresh.set_narrow(true);
            assert_eq!(&scratch, b);
            assert_eq!(scratch.fingerprint() as u64, fresh.fingerprint() as u64);
            for i in 0..b.ncols() {
                assert_eq!(scratch.column_hash(i) as u64, fresh.column_hash(i) as u64);
            }
        }
    }
}
