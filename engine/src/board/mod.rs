//! Positions (`Board`): the board itself, its cards and its rules. Its other
//! concerns live beside it:
//! - `moves`: what a move is (`Move`, `Loc`), checking (`IllegalMove`),
//!   playing and undoing one, and standard notation (`Notation`);
//! - `autoplay`: the automatic foundation moves;
//! - `fingerprint`: the 128-bit fingerprint of the canonical position, kept
//!   up to date move by move, and the exact canonical key;
//! - `pack`: the 80-byte form the best-first searches store;
//! - `movegen`: move generation (every move, the complete search's, the
//!   pruned one of the portfolio);
//! - `text`: fc-solve board text.

mod autoplay;
mod fingerprint;
mod movegen;
mod moves;
mod pack;
mod text;

pub use fingerprint::{DirtyMark, FpBuilder};
pub use moves::{IllegalMove, Loc, Move, MoveError, Notation, CELL_CHARS, COLUMN_CHARS};
pub use pack::Packed;

use crate::card::Card;
use crate::deal::{deal_order, DealNumberError};
use crate::variant::{Variant, MAX_CELLS, MAX_COLUMNS};
use fingerprint::{EMPTY_MIX, TABLES};
use std::fmt;

/// Column capacity: at least 4 columns means at most 13 dealt cards, plus at
/// most 12 built on top (ranks descend), so 25 fit; 32 keeps rows aligned.
pub const COL_CAP: usize = 32;
const NO_CARD: u8 = 0xFF;

/// A board that could not be read or is inconsistent.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum BoardError {
    Deal(DealNumberError),
    Text(String),
}

impl fmt::Display for BoardError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            BoardError::Deal(e) => e.fmt(f),
            BoardError::Text(s) => f.write_str(s),
        }
    }
}

impl std::error::Error for BoardError {}

impl From<DealNumberError> for BoardError {
    fn from(e: DealNumberError) -> Self {
        BoardError::Deal(e)
    }
}

/// A position of a FreeCell-family game.
#[derive(Clone)]
pub struct Board {
    variant: Variant,
    cols: [[u8; COL_CAP]; MAX_COLUMNS],
    lens: [u8; MAX_COLUMNS],
    cells: [u8; MAX_CELLS],
    found: [u8; 4],
    col_hash: [u128; MAX_COLUMNS],
    /// `mix(col_hash[i])` as of the last `settle` (current for columns not
    /// in `dirty`), so that a change costs one `mix`, paid lazily.
    col_mix: [u128; MAX_COLUMNS],
    /// The fingerprint with the columns as of the last `settle` (cells are
    /// always current).
    fp: u128,
    /// Columns whose `col_hash` changed since the last `settle`: moves only
    /// add and subtract table entries, and `fingerprint` mixes just these,
    /// so a move and its undo cost no `mix` at all.
    dirty: u16,
    /// A 64-bit fingerprint (`set_narrow`): each column's mix is `mix`'s
    /// low half only (one `fmix64` instead of two).
    narrow: bool,
}

impl PartialEq for Board {
    /// Exact equality: same variant, same cards in the same columns and cells.
    fn eq(&self, other: &Self) -> bool {
        self.variant == other.variant
            && self.found == other.found
            && self.cells[..self.ncells()] == other.cells[..other.ncells()]
            && (0..self.ncols()).all(|i| self.column(i) == other.column(i))
    }
}
impl Eq for Board {}

impl Board {
    /// An empty board (all cards on the foundations).
    fn empty(variant: Variant) -> Board {
        let mut b = Board {
            variant,
            cols: [[NO_CARD; COL_CAP]; MAX_COLUMNS],
            lens: [0; MAX_COLUMNS],
            cells: [NO_CARD; MAX_CELLS],
            found: [13; 4],
            col_hash: [0; MAX_COLUMNS],
            col_mix: [EMPTY_MIX; MAX_COLUMNS],
            fp: 0,
            dirty: 0,
            narrow: false,
        };
        b.fp = b.compute_fp();
        b
    }

    /// Microsoft deal `n` laid out for `variant` (docs/DESIGN.md, "Presets").
    pub fn deal(n: u64, variant: Variant) -> Result<Board, BoardError> {
        let variant = variant.validate().map_err(|e| BoardError::Text(e.0))?;
        let order = deal_order(n)?;
        let mut b = Board::empty(variant);
        b.found = [0; 4];
        let to_cols = 52 - variant.dealt_to_cells as usize;
        for (i, &c) in order[..to_cols].iter().enumerate() {
            let col = i % variant.columns as usize;
            b.cols[col][b.lens[col] as usize] = c.0;
            b.lens[col] += 1;
        }
        for (i, &c) in order[to_cols..].iter().enumerate() {
            b.cells[i] = c.0;
        }
        b.rehash();
        Ok(b)
    }

    /// Builds a board from columns (deepest card first), cells and foundation
    /// counts per suit (C D H S), checking every card appears exactly once.
    pub fn from_parts(
        variant: Variant,
        columns: &[Vec<Card>],
        cells: &[Option<Card>],
        foundations: [u8; 4],
    ) -> Result<Board, BoardError> {
        let variant = variant.validate().map_err(|e| BoardError::Text(e.0))?;
        if columns.len() > variant.columns as usize {
            return Err(BoardError::Text(format!(
                "board has {} columns but the variant has {}",
                columns.len(),
                variant.columns
            )));
        }
        if cells.len() > variant.cells as usize {
            return Err(BoardError::Text(format!(
                "board has {} cells but the variant has {}",
                cells.len(),
                variant.cells
            )));
        }
        let mut seen = [false; 52];
        let mark = |c: Card, seen: &mut [bool; 52]| -> Result<(), BoardError> {
            if seen[c.index()] {
                return Err(BoardError::Text(format!("card {c} appears twice")));
            }
            seen[c.index()] = true;
            Ok(())
        };
        for (s, &n) in foundations.iter().enumerate() {
            if n > 13 {
                return Err(BoardError::Text(format!(
                    "foundation count {n} is more than 13"
                )));
            }
            for r in 0..n {
                mark(Card::new(r, s as u8), &mut seen)?;
            }
        }
        let mut b = Board::empty(variant);
        b.found = foundations;
        for (i, col) in columns.iter().enumerate() {
            if col.len() > COL_CAP {
                return Err(BoardError::Text(format!("column {} is too long", i + 1)));
            }
            for &c in col {
                mark(c, &mut seen)?;
                b.cols[i][b.lens[i] as usize] = c.0;
                b.lens[i] += 1;
            }
        }
        for (i, c) in cells.iter().enumerate() {
            if let Some(c) = *c {
                mark(c, &mut seen)?;
                b.cells[i] = c.0;
            }
        }
        if let Some(missing) = (0..52).find(|&i| !seen[i]) {
            return Err(BoardError::Text(format!(
                "card {} is missing",
                Card(missing as u8)
            )));
        }
        b.rehash();
        Ok(b)
    }

    #[inline]
    pub fn variant(&self) -> Variant {
        self.variant
    }
    #[inline]
    pub fn ncols(&self) -> usize {
        self.variant.columns as usize
    }
    #[inline]
    pub fn ncells(&self) -> usize {
        self.variant.cells as usize
    }

    /// A column's cards, deepest first.
    #[inline]
    pub fn column(&self, i: usize) -> &[u8] {
        &self.cols[i][..self.lens[i] as usize]
    }
    /// Column `i`'s cards in a whole array (those past `column_len` are
    /// not cards), for a copy to build on.
    #[inline]
    pub fn column_array(&self, i: usize) -> &[u8; COL_CAP] {
        &self.cols[i]
    }
    #[inline]
    pub fn column_len(&self, i: usize) -> usize {
        self.lens[i] as usize
    }
    #[inline]
    pub fn cell(&self, i: usize) -> Option<Card> {
        let c = self.cells[i];
        (c != NO_CARD).then_some(Card(c))
    }
    /// Cards on each foundation, by suit C D H S.
    #[inline]
    pub fn foundations(&self) -> [u8; 4] {
        self.found
    }
    #[inline]
    pub fn top(&self, col: usize) -> Option<Card> {
        let l = self.lens[col] as usize;
        (l > 0).then(|| Card(self.cols[col][l - 1]))
    }
    #[inline]
    pub fn is_won(&self) -> bool {
        self.found == [13; 4]
    }
    #[inline]
    pub fn cards_home(&self) -> u32 {
        // The four counts (at most 13 each) summed in one multiplication.
        u32::from_le_bytes(self.found).wrapping_mul(0x0101_0101) >> 24
    }
    /// Free cells. Cells past the variant's count are always empty, so the
    /// whole fixed-size array is counted (no loop bound to test), eight at
    /// a time, and the surplus taken off.
    #[inline]
    pub fn empty_cells(&self) -> u32 {
        debug_assert!(self.cells[self.ncells()..].iter().all(|&c| c == NO_CARD));
        // An empty cell is a byte 0xFF: a zero byte of the complement.
        let all = zero_bytes(!u64::from_le_bytes(self.cells[..8].try_into().unwrap()))
            + zero_bytes(!u64::from(u16::from_le_bytes([self.cells[8], self.cells[9]])) | !0xFFFF);
        all - (MAX_CELLS - self.ncells()) as u32
    }
    /// Empty columns; as `empty_cells`, columns past the variant's count
    /// are always empty.
    #[inline]
    pub fn empty_columns(&self) -> u32 {
        debug_assert!(self.lens[self.ncols()..].iter().all(|&l| l == 0));
        let all = zero_bytes(u64::from_le_bytes(self.lens[..8].try_into().unwrap()))
            + zero_bytes(u64::from(u16::from_le_bytes([self.lens[8], self.lens[9]])) | !0xFFFF);
        all - (MAX_COLUMNS - self.ncols()) as u32
    }

    /// The column holding `c`, if one does.
    #[inline]
    pub fn column_of(&self, c: Card) -> Option<usize> {
        if self.cells[..self.ncells()].contains(&c.0) {
            return None;
        }
        // Eight cards at a time: a zero byte of the word xor the card
        // repeated is a match (the classic test), kept only within the
        // column's length.
        const LOW: u64 = 0x0101_0101_0101_0101;
        const HIGH: u64 = 0x8080_8080_8080_8080;
        let pat = LOW.wrapping_mul(c.0 as u64);
        for i in 0..self.ncols() {
            let l = self.lens[i] as usize;
            let col = &self.cols[i];
            let mut j = 0;
            while j < l {
                let w = u64::from_le_bytes(col[j..j + 8].try_into().unwrap()) ^ pat;
                let mut hit = w.wrapping_sub(LOW) & !w & HIGH;
                if l - j < 8 {
                    hit &= (1u64 << (8 * (l - j))) - 1;
                }
                if hit != 0 {
                    return Some(i);
                }
                j += 8;
            }
        }
        None
    }

    // ----- rules -----------------------------------------------------------

    /// Length of the run (cards each built on the one below) at the top of a column.
    #[inline]
    pub fn run_len(&self, col: usize) -> usize {
        let cards = self.column(col);
        let n = cards.len();
        if n == 0 {
            return 0;
        }
        let builds = self.variant.builds_on_table();
        let mut k = 1;
        while k < n && (builds[(cards[n - k - 1] & 63) as usize] >> (cards[n - k] & 63)) & 1 != 0 {
            k += 1;
        }
        k
    }

    /// Whether `c` is its foundation's next card.
    #[inline]
    fn can_found(&self, c: Card) -> bool {
        self.found[c.suit() as usize] == c.rank()
    }

    /// The most cards a multi-card move onto column `to` may carry now.
    #[inline]
    pub fn max_run_to(&self, to: usize) -> u32 {
        let dest_empty = self.lens[to] == 0;
        let helpers = self.empty_columns() - dest_empty as u32;
        self.variant.max_run(self.empty_cells(), helpers)
    }

    // ----- raw edits (keep the fingerprint in step) ------------------------

    #[inline]
    fn set_col_hash(&mut self, col: usize, h: u128) {
        self.col_hash[col] = h;
        self.dirty |= 1 << col;
    }

    #[inline]
    fn pop_col(&mut self, col: usize) -> u8 {
        let l = self.lens[col] as usize - 1;
        let c = self.cols[col][l];
        self.lens[col] = l as u8;
        let h = self.col_hash[col].wrapping_sub(TABLES.0[c as usize][l]);
        self.set_col_hash(col, h);
        c
    }

    #[inline]
    fn push_col(&mut self, col: usize, c: u8) {
        let l = self.lens[col] as usize;
        self.cols[col][l] = c;
        self.lens[col] = l as u8 + 1;
        let h = self.col_hash[col].wrapping_add(TABLES.0[c as usize][l]);
        self.set_col_hash(col, h);
    }

    #[inline]
    fn take_cell(&mut self, i: usize) -> u8 {
        let c = self.cells[i];
        self.cells[i] = NO_CARD;
        self.fp = self.fp.wrapping_sub(TABLES.1[c as usize]);
        c
    }

    #[inline]
    fn put_cell(&mut self, i: usize, c: u8) {
        self.cells[i] = c;
        self.fp = self.fp.wrapping_add(TABLES.1[c as usize]);
    }

    /// Moves the top `k` cards of `from` onto `to`, keeping their order.
    #[inline]
    fn move_run(&mut self, from: usize, to: usize, k: usize) {
        let lf = self.lens[from] as usize;
        let lt = self.lens[to] as usize;
        let mut hf = self.col_hash[from];
        let mut ht = self.col_hash[to];
        for j in 0..k {
            let c = self.cols[from][lf - k + j];
            hf = hf.wrapping_sub(TABLES.0[c as usize][lf - k + j]);
            ht = ht.wrapping_add(TABLES.0[c as usize][lt + j]);
            self.cols[to][lt + j] = c;
        }
        self.lens[from] = (lf - k) as u8;
        self.lens[to] = (lt + k) as u8;
        self.set_col_hash(from, hf);
        self.set_col_hash(to, ht);
    }
}

/// The number of zero bytes in `x` (exact: no carry crosses a byte).
#[inline(always)]
fn zero_bytes(x: u64) -> u32 {
    const LOW7: u64 = 0x7F7F_7F7F_7F7F_7F7F;
    // A byte's high bit is set here exactly when the byte is not zero.
    let nonzero = ((x & LOW7).wrapping_add(LOW7) | x) & !LOW7;
    8 - nonzero.count_ones()
}

/// Random reachable positions of every preset and move rule (a fixed-seed
/// LCG picks deals and moves), for the tests of the board's modules: what
/// the searches compute without playing a move, or by a way of their own,
/// against playing it. These run in release builds too, where the
/// searches' debug checks of the same do not.
#[cfg(test)]
pub(crate) fn sample_positions() -> Vec<Board> {
    let mut x = 0x9E37_79B9_7F4A_7C15u64;
    let mut next = move || {
        x = x
            .wrapping_mul(6_364_136_223_846_793_005)
            .wrapping_add(1_442_695_040_888_963_407);
        (x >> 33) as usize
    };
    let rules = [
        crate::variant::MoveRule::Single,
        crate::variant::MoveRule::Product,
        crate::variant::MoveRule::Doubling,
        crate::variant::MoveRule::Unlimited,
    ];
    let mut out = Vec::new();
    for preset in crate::variant::Preset::ALL {
        for (r, &rule) in rules.iter().enumerate() {
            for cells in [1u8, 3, 4] {
                let mut v = Variant::preset(preset).with_move_rule(rule);
                if v.dealt_to_cells == 0 {
                    v = v.with_cells(cells);
                }
                let mut b = Board::deal(1 + (next() % 100_000) as u64 + r as u64, v).unwrap();
                for step in 0..120 {
                    let moves = b.legal_moves();
                    if moves.is_empty() {
                        break;
                    }
                    b.apply_checked(moves[next() % moves.len()]).unwrap();
                    if step % 4 == 0 {
                        let mut c = b.clone();
                        c.rehash();
                        out.push(c);
                    }
                }
            }
        }
    }
    out
}
