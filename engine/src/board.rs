//! Positions (`Board`), moves, legal-move generation, apply/undo, safe
//! automatic foundation moves, canonical keys and the fc-solve board text.

use crate::card::{Card, RANK_CHARS, SUIT_CHARS};
use crate::deal::{deal_order, DealNumberError};
use crate::variant::{Build, Variant, MAX_CELLS, MAX_COLUMNS};
use std::fmt;

/// Column capacity: at least 4 columns means at most 13 dealt cards, plus at
/// most 12 built on top (ranks descend), so 25 fit; 32 keeps rows aligned.
pub const COL_CAP: usize = 32;
const NO_CARD: u8 = 0xFF;

/// Offsets in a `Packed` board.
const PACK_LENS: usize = 0;
const PACK_FOUND: usize = PACK_LENS + MAX_COLUMNS;
const PACK_CELLS: usize = PACK_FOUND + 4;
const PACK_CARDS: usize = PACK_CELLS + MAX_CELLS;
const _: () = assert!(PACK_CARDS + 52 <= 80);

/// A board packed into 80 bytes (`Board::pack`).
#[derive(Copy, Clone)]
pub struct Packed(pub [u8; 80]);

/// A move in standard notation, held inline: two location characters,
/// then for a partial run into an empty column `v` and the count (at most
/// `COL_CAP`, two digits).
#[derive(Copy, Clone, PartialEq, Eq, Hash)]
pub struct Notation {
    len: u8,
    text: [u8; 7],
}

impl Notation {
    pub fn as_str(&self) -> &str {
        // Location characters, `v` and digits: ASCII.
        std::str::from_utf8(&self.text[..self.len as usize]).expect("ASCII notation")
    }
}

impl fmt::Display for Notation {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl fmt::Debug for Notation {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{:?}", self.as_str())
    }
}

/// Where a card is or goes.
#[derive(Copy, Clone, PartialEq, Eq, Debug, Hash)]
pub enum Loc {
    Column(u8),
    Cell(u8),
    Foundation,
}

/// Cell letters; `h` is skipped because it always means the foundation.
pub const CELL_CHARS: &[u8; MAX_CELLS] = b"abcdefgijk";
/// Column digits: `1`-`9`, then `0` for the tenth column.
pub const COLUMN_CHARS: &[u8; MAX_COLUMNS] = b"1234567890";

impl Loc {
    pub fn to_char(self) -> char {
        match self {
            Loc::Column(i) => COLUMN_CHARS[i as usize] as char,
            Loc::Cell(i) => CELL_CHARS[i as usize] as char,
            Loc::Foundation => 'h',
        }
    }
    fn from_char(c: char) -> Option<Loc> {
        let b = c.to_ascii_lowercase() as u8;
        if b == b'h' {
            return Some(Loc::Foundation);
        }
        if let Some(i) = COLUMN_CHARS.iter().position(|&x| x == b) {
            return Some(Loc::Column(i as u8));
        }
        CELL_CHARS
            .iter()
            .position(|&x| x == b)
            .map(|i| Loc::Cell(i as u8))
    }
}

/// One move: `count` cards from `from` to `to` (count > 1 only between
/// columns: a multi-card move).
#[derive(Copy, Clone, PartialEq, Eq, Debug, Hash)]
pub struct Move {
    pub from: Loc,
    pub to: Loc,
    pub count: u8,
}

impl Move {
    pub const fn new(from: Loc, to: Loc, count: u8) -> Move {
        Move { from, to, count }
    }
}

/// Why a move could not be read or made.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum MoveError {
    Notation(String),
    Illegal { mv: String, reason: String },
}

impl fmt::Display for MoveError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            MoveError::Notation(s) => write!(
                f,
                "not a move: {s:?} (expected two characters, source then destination: columns 1-9/0, cells a-g,i-k, foundation h; optional v<count>)"
            ),
            MoveError::Illegal { mv, reason } => write!(f, "illegal move {mv:?}: {reason}"),
        }
    }
}

impl std::error::Error for MoveError {}

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

static TABLES: ([[u128; COL_CAP]; 52], [u128; 52]) = make_tables();

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

// `prefix_eq` compares a column array as two 16-byte words.
const _: () = assert!(COL_CAP == 32);

/// Whether the first `l` (at most 32) bytes of `a` and `b` are equal.
#[inline(always)]
fn prefix_eq(a: &[u8; COL_CAP], b: &[u8], l: usize) -> bool {
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
fn zlo(c: u8, d: usize) -> u64 {
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
const fn mix_lo(x: u128) -> u64 {
    fmix64((x as u64) ^ 0x243F_6A88_85A3_08D3)
}

#[inline]
const fn mix_hi(x: u128) -> u64 {
    fmix64(((x >> 64) as u64) ^ 0x1319_8A2E_0370_7344)
}

/// `mix` of an empty column's hash.
const EMPTY_MIX: u128 = mix(0);

/// What `Board::dirty_mark` returns.
#[derive(Copy, Clone, Debug)]
pub struct DirtyMark {
    dirty: u16,
    #[cfg(debug_assertions)]
    fp: u128,
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

impl fmt::Debug for Board {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.to_text())
    }
}

impl fmt::Display for Board {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.to_text())
    }
}

/// Foundation order in board text, as fc-solve writes it.
const TEXT_SUITS: [u8; 4] = [2, 0, 1, 3]; // H C D S

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
    /// A hash of column `i`'s cards (equal columns, equal hashes; the
    /// Zobrist sum the fingerprint is built from).
    #[inline]
    pub fn column_hash(&self, i: usize) -> u128 {
        self.col_hash[i]
    }

    /// A column's cards, deepest first.
    #[inline]
    pub fn column(&self, i: usize) -> &[u8] {
        &self.cols[i][..self.lens[i] as usize]
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
        self.found.iter().map(|&x| x as u32).sum()
    }
    #[inline]
    pub fn empty_cells(&self) -> u32 {
        self.cells[..self.ncells()]
            .iter()
            .filter(|&&c| c == NO_CARD)
            .count() as u32
    }
    #[inline]
    pub fn empty_columns(&self) -> u32 {
        self.lens[..self.ncols()]
            .iter()
            .filter(|&&l| l == 0)
            .count() as u32
    }
    // ----- hashing ---------------------------------------------------------

    fn compute_fp(&self) -> u128 {
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

    fn rehash(&mut self) {
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
    fn mix_col(&self, h: u128) -> u128 {
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
        let out = match (m.from, m.to) {
            (Loc::Column(a), Loc::Column(b)) => {
                let (a, b, k) = (a as usize, b as usize, m.count as usize);
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
            _ => unreachable!("narrow_after: a move to or from a foundation"),
        };
        #[cfg(debug_assertions)]
        {
            let mut b = self.clone();
            b.apply(m);
            debug_assert_eq!(out.0, b.fingerprint() as u64);
            if let Loc::Column(a) = m.from {
                debug_assert_eq!(out.1, b.column_hash(a as usize) as u64);
            }
            if let Loc::Column(d) = m.to {
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
        let out = match (m.from, m.to) {
            (Loc::Column(a), Loc::Column(b)) => {
                let (a, b, k) = (a as usize, b as usize, m.count as usize);
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
            _ => unreachable!("wide_after: a move to or from a foundation"),
        };
        #[cfg(debug_assertions)]
        {
            let mut b = self.clone();
            b.apply(m);
            debug_assert_eq!(out.0, b.fingerprint());
            if let Loc::Column(a) = m.from {
                debug_assert_eq!(out.1, b.column_hash(a as usize) as u64);
            }
            if let Loc::Column(d) = m.to {
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
                b.apply(Move::new(Loc::Column(c as u8), Loc::Cell(cell as u8), 1));
            }
            b.apply(Move::new(Loc::Column(c as u8), Loc::Column(d as u8), 1));
            debug_assert_eq!(fp, b.fingerprint() as u64);
            debug_assert_eq!(hc, b.column_hash(c) as u64);
            debug_assert_eq!(hd, b.column_hash(d) as u64);
        }
        (fp, hc, hd)
    }

    /// Whether taking the top `k` cards off column `c`, one by one,
    /// uncovers a card that goes home by the automatic-move rule along the
    /// way (`exposes_home` for each step; the foundations stay as they are
    /// until one does).
    #[inline]
    pub fn exposes_home_within(&self, c: usize, k: usize, eager: bool) -> bool {
        let l = self.lens[c] as usize;
        (1..=k.min(l.saturating_sub(1))).any(|j| {
            let t = Card(self.cols[c][l - j - 1]);
            self.can_found(t) && self.is_home_worthy(t, eager)
        })
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

    /// Column `i`'s cards in a whole array (those past `column_len` are
    /// not cards), for a copy to build on.
    #[inline]
    pub fn column_array(&self, i: usize) -> &[u8; COL_CAP] {
        &self.cols[i]
    }

    /// Whether playing `m` (not a foundation move) uncovers a card that
    /// then goes home by the automatic-move rule (`is_home_worthy` with
    /// `eager`): exactly when `autoplay_after` would move something, for
    /// a position at the automatic-move fixpoint.
    #[inline(always)]
    pub fn exposes_home(&self, m: Move, eager: bool) -> bool {
        let Loc::Column(a) = m.from else { return false };
        let a = a as usize;
        let (l, k) = (self.lens[a] as usize, m.count as usize);
        if l <= k {
            return false;
        }
        let t = Card(self.cols[a][l - k - 1]);
        self.can_found(t) && self.is_home_worthy(t, eager)
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

    /// The card a move would carry first (the deepest of a run).
    fn moving_card(&self, m: Move) -> Option<Card> {
        match m.from {
            Loc::Column(i) => {
                let l = self.lens[i as usize] as usize;
                (l >= m.count as usize && m.count > 0)
                    .then(|| Card(self.cols[i as usize][l - m.count as usize]))
            }
            Loc::Cell(i) => self.cell(i as usize),
            Loc::Foundation => None,
        }
    }

    /// Checks a move; `Ok` means `apply` may be called.
    pub fn check(&self, m: Move) -> Result<(), String> {
        let v = self.variant;
        let in_range = |l: Loc| match l {
            Loc::Column(i) => (i as usize) < self.ncols(),
            Loc::Cell(i) => (i as usize) < self.ncells(),
            Loc::Foundation => true,
        };
        if !in_range(m.from) || !in_range(m.to) {
            return Err("no such column or cell in this variant".into());
        }
        if m.from == m.to {
            return Err("source and destination are the same".into());
        }
        let m = if m.to == Loc::Foundation {
            Move { count: 1, ..m }
        } else {
            m
        };
        if m.count == 0 {
            return Err("moves no card".into());
        }
        if m.count > 1 && !matches!((m.from, m.to), (Loc::Column(_), Loc::Column(_))) {
            return Err("only column-to-column moves carry several cards".into());
        }
        let card = match m.from {
            Loc::Foundation => return Err("cards never leave the foundations".into()),
            Loc::Cell(i) => self.cell(i as usize).ok_or("the source cell is empty")?,
            Loc::Column(i) => {
                let l = self.column_len(i as usize);
                if l == 0 {
                    return Err("the source column is empty".into());
                }
                if (m.count as usize) > l {
                    return Err(format!("the source column has only {l} cards"));
                }
                if (m.count as usize) > self.run_len(i as usize) {
                    return Err(format!(
                        "the top {} cards of the source column are not a run",
                        m.count
                    ));
                }
                self.moving_card(m).unwrap()
            }
        };
        match m.to {
            Loc::Foundation => {
                if !self.can_found(card) {
                    return Err(format!("{card} cannot go to its foundation yet"));
                }
            }
            Loc::Cell(i) => {
                if let Some(c) = self.cell(i as usize) {
                    return Err(format!("the destination cell holds {c}"));
                }
            }
            Loc::Column(i) => {
                let i = i as usize;
                match self.top(i) {
                    Some(t) => {
                        if !v.builds_on(card, t) {
                            return Err(format!("{card} cannot go onto {t}"));
                        }
                    }
                    None => {
                        if !v.fills_empty(card) {
                            return Err(format!(
                                "{card} cannot fill an empty column (empty columns take {} cards)",
                                v.empty
                            ));
                        }
                    }
                }
                if m.count > 1 {
                    let lim = self.max_run_to(i);
                    if m.count as u32 > lim {
                        return Err(format!(
                            "a run of {} cards exceeds the {}-rule limit {}",
                            m.count, v.move_rule, lim
                        ));
                    }
                }
            }
        }
        Ok(())
    }

    /// Applies a move known to be legal.
    #[inline]
    pub fn apply(&mut self, m: Move) {
        match (m.from, m.to) {
            (Loc::Column(a), Loc::Column(b)) => {
                self.move_run(a as usize, b as usize, m.count as usize)
            }
            (Loc::Column(a), Loc::Cell(b)) => {
                let c = self.pop_col(a as usize);
                self.put_cell(b as usize, c);
            }
            (Loc::Column(a), Loc::Foundation) => {
                let c = self.pop_col(a as usize);
                self.found[(c & 3) as usize] += 1;
            }
            (Loc::Cell(a), Loc::Column(b)) => {
                let c = self.take_cell(a as usize);
                self.push_col(b as usize, c);
            }
            (Loc::Cell(a), Loc::Cell(b)) => {
                let c = self.take_cell(a as usize);
                self.put_cell(b as usize, c);
            }
            (Loc::Cell(a), Loc::Foundation) => {
                let c = self.take_cell(a as usize);
                self.found[(c & 3) as usize] += 1;
            }
            (Loc::Foundation, _) => unreachable!("cards never leave the foundations"),
        }
    }

    /// Undoes `m`, which must be the last move applied.
    #[inline]
    pub fn undo(&mut self, m: Move) {
        match (m.from, m.to) {
            (Loc::Column(a), Loc::Column(b)) => {
                self.move_run(b as usize, a as usize, m.count as usize)
            }
            (Loc::Column(a), Loc::Cell(b)) => {
                let c = self.take_cell(b as usize);
                self.push_col(a as usize, c);
            }
            (Loc::Cell(a), Loc::Column(b)) => {
                let c = self.pop_col(b as usize);
                self.put_cell(a as usize, c);
            }
            (Loc::Cell(a), Loc::Cell(b)) => {
                let c = self.take_cell(b as usize);
                self.put_cell(a as usize, c);
            }
            (from, Loc::Foundation) => {
                // The card that went home is the top of the foundation it went to;
                // find it by the source: a column or a cell.
                unreachable!("use undo_home for foundation moves: {from:?}")
            }
            (Loc::Foundation, _) => unreachable!(),
        }
    }

    /// Undoes a move to the foundation of `suit`.
    #[inline]
    pub fn undo_home(&mut self, m: Move, suit: u8) {
        self.found[suit as usize] -= 1;
        let c = Card::new(self.found[suit as usize], suit).0;
        match m.from {
            Loc::Column(a) => self.push_col(a as usize, c),
            Loc::Cell(a) => self.put_cell(a as usize, c),
            Loc::Foundation => unreachable!(),
        }
    }

    /// Is sending `c` to its foundation provably harmless? It is when no card
    /// still in play could ever be placed on it: aces and twos always (an ace
    /// can go home instead of onto a two); otherwise every card of rank - 1
    /// that builds on it per the variant must be home already. Foundations
    /// are final, so a solution that used `c` as a base would need one of
    /// those cards, which cannot happen; every other move of that solution
    /// stays legal with `c` gone (one more free cell or one card fewer on a
    /// column only adds options for single-card moves). Tested in
    /// `solver::tests::auto_moves_keep_verdicts`.
    #[inline]
    pub fn is_safe_home(&self, c: Card) -> bool {
        self.is_home_worthy(c, false)
    }

    /// `is_safe_home`, or with `eager` also Raymond's rule for alternate
    /// colours (patsolve): both opposite-colour cards two ranks lower and
    /// the other same-colour card three ranks lower are home. Eager moves
    /// are only used by the heuristic phase, whose solutions are replayed
    /// move by move; they are never part of a proof.
    #[inline]
    pub fn is_home_worthy(&self, c: Card, eager: bool) -> bool {
        let r = c.rank();
        if r <= 1 {
            return true;
        }
        let f = &self.found;
        match self.variant.build {
            Build::Suit => true,
            Build::Alternate => {
                let (o1, o2, same) = match c.suit() {
                    0 => (1, 2, 3),
                    3 => (1, 2, 0),
                    1 => (0, 3, 2),
                    _ => (0, 3, 1),
                };
                (f[o1] >= r && f[o2] >= r)
                    || (eager && r >= 3 && f[o1] >= r - 1 && f[o2] >= r - 1 && f[same] + 2 >= r)
            }
            Build::Any => (0..4).all(|s| s == c.suit() as usize || f[s] >= r),
        }
    }

    /// Plays every safe foundation move until none is left, appending each
    /// to `log` (to undo with `undo_autoplay`).
    #[inline]
    pub fn autoplay(&mut self, log: &mut Vec<Move>) -> usize {
        self.autoplay_with(log, false)
    }

    /// `autoplay_with` after move `m`, for a position that was at the
    /// automatic-move fixpoint (same rule) before `m`: unless `m` sent a card
    /// home, only the new top of its source column can have become
    /// eligible, so the full scan runs only when that card is.
    ///
    /// The automatic moves are played in any order (`autoplay_quick`): the
    /// position reached is the same (see there).
    #[inline]
    pub fn autoplay_after(&mut self, log: &mut Vec<Move>, m: Move, eager: bool) -> usize {
        if !self.may_autoplay_after(m, eager) {
            return 0;
        }
        self.autoplay_quick(log, eager)
    }

    /// Whether a card can go home after `m`, from a position at the
    /// automatic-move fixpoint (false: none can).
    #[inline]
    fn may_autoplay_after(&self, m: Move, eager: bool) -> bool {
        if m.to != Loc::Foundation {
            let Loc::Column(a) = m.from else { return false };
            match self.top(a as usize) {
                Some(t) if self.can_found(t) && self.is_home_worthy(t, eager) => {}
                _ => return false,
            }
        }
        true
    }

    /// `autoplay_with` in another order: whichever accessible card can go
    /// home, found through bit sets of the accessible cards (column tops
    /// and cells) and of each suit's next card, instead of scans of every
    /// column and cell until one finds nothing. The position reached is
    /// the same, so a search may use either: a card that can go home stays
    /// able to (foundations only grow, cards only become accessible, and
    /// `is_home_worthy` only gains with the foundations), so every order
    /// sends the same cards home. Debug builds compare with `autoplay_with`.
    #[inline]
    pub fn autoplay_quick(&mut self, log: &mut Vec<Move>, eager: bool) -> usize {
        #[cfg(debug_assertions)]
        let want = {
            let mut b = self.clone();
            b.autoplay_with(&mut Vec::new(), eager);
            b
        };
        let start = log.len();
        let mut need = 0u64;
        for (suit, &r) in self.found.iter().enumerate() {
            need |= 1 << (r as usize * 4 + suit);
        }
        // Accessible cards and where each is: a column, or 16 + a cell.
        let mut acc = 0u64;
        let mut at = [0u8; 64];
        for i in 0..self.ncols() {
            let l = self.lens[i] as usize;
            if l > 0 {
                let t = self.cols[i][(l - 1) & (COL_CAP - 1)];
                acc |= 1 << t;
                at[(t & 63) as usize] = i as u8;
            }
        }
        for i in 0..self.ncells() {
            let c = self.cells[i];
            if c != NO_CARD {
                acc |= 1 << c;
                at[(c & 63) as usize] = 16 + i as u8;
            }
        }
        loop {
            let mut cand = acc & need;
            let mut moved = false;
            while cand != 0 {
                let c = cand.trailing_zeros() as u8;
                cand &= cand - 1;
                if !self.is_home_worthy(Card(c), eager) {
                    continue;
                }
                let w = at[(c & 63) as usize] as usize;
                acc &= !(1 << c);
                if w < 16 {
                    log.push(self.home_move(Loc::Column(w as u8), Card(c)));
                    self.pop_col(w);
                    let l = self.lens[w] as usize;
                    if l > 0 {
                        let t = self.cols[w][(l - 1) & (COL_CAP - 1)];
                        acc |= 1 << t;
                        at[(t & 63) as usize] = w as u8;
                    }
                } else {
                    log.push(self.home_move(Loc::Cell((w - 16) as u8), Card(c)));
                    self.take_cell(w - 16);
                }
                self.found[(c & 3) as usize] += 1;
                need = need & !(1 << c) | 1 << (c + 4);
                // The suit's next card may be accessible already.
                cand |= acc & need & (1 << (c + 4));
                moved = true;
            }
            if !moved {
                break;
            }
        }
        #[cfg(debug_assertions)]
        debug_assert!(*self == want, "autoplay_quick reached another position");
        log.len() - start
    }

    /// `autoplay`, optionally with the eager rule (`is_home_worthy`).
    #[inline]
    pub fn autoplay_with(&mut self, log: &mut Vec<Move>, eager: bool) -> usize {
        let start = log.len();
        loop {
            let mut moved = false;
            for i in 0..self.ncols() {
                while let Some(t) = self.top(i) {
                    if self.can_found(t) && self.is_home_worthy(t, eager) {
                        let m = self.home_move(Loc::Column(i as u8), t);
                        self.apply(m);
                        log.push(m);
                        moved = true;
                    } else {
                        break;
                    }
                }
            }
            for i in 0..self.ncells() {
                let c = self.cells[i];
                if c != NO_CARD && self.can_found(Card(c)) && self.is_home_worthy(Card(c), eager) {
                    let m = self.home_move(Loc::Cell(i as u8), Card(c));
                    self.apply(m);
                    log.push(m);
                    moved = true;
                }
            }
            if !moved {
                return log.len() - start;
            }
        }
    }

    /// Undoes the last `n` foundation moves of `log` (popping them).
    #[inline]
    pub fn undo_autoplay(&mut self, log: &mut Vec<Move>, n: usize) {
        for _ in 0..n {
            let m = log.pop().unwrap();
            self.undo_home(m, home_suit(m));
        }
    }

    /// Generates moves. With `all`, every legal move (moves to each empty cell
    /// and each empty column, whole columns into empty columns); without, one
    /// representative per canonical result (first empty cell, first empty
    /// column, no whole-column moves into an empty column).
    pub fn gen_moves(&self, out: &mut Vec<Move>, all: bool) {
        self.gen_moves_inner(out, all, false, false, None);
    }

    /// The complete search's moves: `gen_moves(out, false)` less a single
    /// card into an empty column while a cell is free, with the run lengths
    /// given (`runs`, or `runs_after` from the previous position's).
    ///
    /// The move left out reaches no position the search would miss: the
    /// card to a cell, then from the cell into the column, reaches the same
    /// one (the same cards are accessible after either first move, so the
    /// same automatic moves follow, and the column is still empty). The
    /// search stores the same set of positions, with fewer children to
    /// generate and look up on the way (MS 1..100 with 3 cells: 356 M ->
    /// 315 M instructions, session 14; tests
    /// `a_card_left_out_of_an_empty_column_gets_there_through_a_cell`,
    /// `solver::tests::a_proof_stores_every_reachable_position`).
    #[inline]
    pub fn gen_moves_with_runs(&self, out: &mut Vec<Move>, runs: u64) {
        debug_assert_eq!(runs, self.runs());
        #[cfg(debug_assertions)]
        let start = out.len();
        self.gen_moves_fast::<false>(out, runs);
        #[cfg(debug_assertions)]
        {
            let mut want = Vec::new();
            self.gen_moves_inner(&mut want, false, false, true, Some(runs));
            debug_assert_eq!(&out[start..], &want[..], "{self:?}");
        }
    }

    /// Every column's `run_len`, 4 bits each, column 0 lowest (a run is at
    /// most 13 cards).
    #[inline]
    pub fn runs(&self) -> u64 {
        self.runs_after(0, (1 << self.ncols()) - 1)
    }

    /// `runs` of this board, given those of a position it differs from only
    /// in the columns of `changed` (a `changed_columns` set).
    #[inline]
    pub fn runs_after(&self, mut runs: u64, mut changed: u16) -> u64 {
        while changed != 0 {
            let i = changed.trailing_zeros() as usize;
            changed &= changed - 1;
            runs = (runs & !(15 << (4 * i))) | (self.run_len(i) as u64) << (4 * i);
        }
        runs
    }

    /// The columns changed since the last `settle` (or `restore_dirty`).
    #[inline]
    pub fn changed_columns(&self) -> u16 {
        self.dirty
    }

    /// Shared generator: with `pruned`, moves that break a run are left out
    /// (see `gen_moves_pruned`); with `cell_first`, a single card into an
    /// empty column while a cell is free (see `gen_moves_with_runs`).
    #[inline(always)]
    #[allow(clippy::needless_range_loop)] // parallel per-column arrays
    fn gen_moves_inner(
        &self,
        out: &mut Vec<Move>,
        all: bool,
        pruned: bool,
        cell_first: bool,
        col_runs: Option<u64>,
    ) {
        let v = self.variant;
        let nc = self.ncols();
        let ncells = self.ncells();
        // Column to column (below) looks up `onto_cols[card]`: the set of
        // columns whose top card `card` builds on (a card of rank r can only
        // go onto one of the cards of rank r + 1), filled from the columns'
        // tops, so each source needs one lookup per run card instead of a
        // scan of every destination.
        let mut onto_cols = [0u16; 52];
        // For each suit, the suits of the cards that build on it (one rank
        // lower).
        let under_suits: [u8; 4] = std::array::from_fn(|suit| {
            (0..4u8)
                .filter(|&u| v.builds_on(Card::new(0, u), Card::new(1, suit as u8)))
                .fold(0, |m, u| m | 1 << u)
        });
        // One pass over the columns, then one over the cells: run lengths,
        // empties, `onto_cols`, and the moves to the foundations (columns'
        // first, then cells').
        let mut runs = [0usize; MAX_COLUMNS];
        let mut empty_cols = 0u32;
        let mut first_empty_col = usize::MAX;
        for i in 0..nc {
            let l = self.lens[i] as usize;
            if l == 0 {
                empty_cols += 1;
                if first_empty_col == usize::MAX {
                    first_empty_col = i;
                }
                continue;
            }
            runs[i] = match col_runs {
                Some(r) => (r >> (4 * i)) as usize & 15,
                None => self.run_len(i),
            };
            let t = Card(self.cols[i][l - 1]);
            if self.can_found(t) {
                out.push(self.home_move(Loc::Column(i as u8), t));
            }
            if t.rank() > 0 {
                let below = (t.rank() as usize - 1) * 4;
                let mut suits = under_suits[t.suit() as usize];
                while suits != 0 {
                    onto_cols[below + suits.trailing_zeros() as usize] |= 1 << i;
                    suits &= suits - 1;
                }
            }
        }
        let mut empty_cells = 0u32;
        let mut first_empty_cell = usize::MAX;
        for i in 0..ncells {
            let c = self.cells[i];
            if c == NO_CARD {
                empty_cells += 1;
                if first_empty_cell == usize::MAX {
                    first_empty_cell = i;
                }
            } else if self.can_found(Card(c)) {
                out.push(self.home_move(Loc::Cell(i as u8), Card(c)));
            }
        }
        let limit_onto = v.max_run(empty_cells, empty_cols) as usize;
        let limit_empty = if empty_cols > 0 {
            v.max_run(empty_cells, empty_cols - 1) as usize
        } else {
            0
        };
        let movable = self.movable_cards(
            runs[..nc]
                .iter()
                .enumerate()
                .fold(0, |r, (i, &n)| r | (n as u64) << (4 * i)),
        );
        // Moves are emitted by source, then destination.
        // The columns whose top card `c` builds on, as a bit set.
        let parents = |c: Card| -> u16 { onto_cols[c.0 as usize] };
        let empty_dst: u16 = if empty_cols == 0 {
            0
        } else if all {
            (0..nc)
                .filter(|&i| self.lens[i] == 0)
                .fold(0, |m, i| m | 1 << i)
        } else {
            1 << first_empty_col
        };
        for src in 0..nc {
            let len = self.lens[src] as usize;
            if len == 0 {
                continue;
            }
            let run = runs[src];
            let col = &self.cols[src];
            // Per destination, the number of cards that fit on its top.
            let mut onto = [0u8; MAX_COLUMNS];
            let mut mask = 0u16;
            let first_k = if pruned { run } else { 1 };
            for k in first_k..=run {
                if k > 1 && k > limit_onto {
                    break;
                }
                let mut p = parents(Card(col[len - k]));
                mask |= p;
                while p != 0 {
                    onto[p.trailing_zeros() as usize] = k as u8;
                    p &= p - 1;
                }
            }
            let mut bits = mask | empty_dst;
            while bits != 0 {
                let dst = bits.trailing_zeros() as usize;
                bits &= bits - 1;
                if self.lens[dst] > 0 {
                    out.push(Move::new(
                        Loc::Column(src as u8),
                        Loc::Column(dst as u8),
                        onto[dst],
                    ));
                } else {
                    let lim = limit_empty.min(run);
                    for k in 1..=lim {
                        if !all && k == len {
                            continue; // same canonical position
                        }
                        if pruned && !(k == 1 || k == run || k == lim) {
                            continue;
                        }
                        if pruned && k == run && mask != 0 {
                            continue; // the whole run can go onto a column
                        }
                        if pruned && k == 1 && k < len && !self.exposes_a_use(src, movable) {
                            continue;
                        }
                        if cell_first && k == 1 && empty_cells > 0 {
                            continue;
                        }
                        if v.fills_empty(Card(col[len - k])) {
                            out.push(Move::new(
                                Loc::Column(src as u8),
                                Loc::Column(dst as u8),
                                k as u8,
                            ));
                        }
                    }
                }
            }
        }
        // Cell to column (destinations by the same lookup).
        for i in 0..ncells {
            let c = self.cells[i];
            if c == NO_CARD {
                continue;
            }
            let c = Card(c);
            let mut mask = parents(c);
            let takes_none =
                || (0..52u8).all(|x| !v.builds_on(Card(x), c) || movable & 1 << x == 0);
            if v.fills_empty(c) && !(pruned && (mask != 0 || takes_none())) {
                mask |= empty_dst;
            }
            while mask != 0 {
                let dst = mask.trailing_zeros();
                mask &= mask - 1;
                out.push(Move::new(Loc::Cell(i as u8), Loc::Column(dst as u8), 1));
            }
        }
        // Column to cell.
        if empty_cells > 0 {
            let keep_runs = pruned && !prune_cells_off();
            for src in 0..nc {
                if self.lens[src] == 0 || (keep_runs && runs[src] > 1) {
                    continue;
                }
                let len = self.lens[src] as usize;
                if pruned && parents(Card(self.cols[src][len - 1])) != 0 {
                    continue;
                }
                if !all {
                    let cell = first_empty_cell as u8;
                    out.push(Move::new(Loc::Column(src as u8), Loc::Cell(cell), 1));
                    continue;
                }
                for cell in 0..ncells {
                    if self.cells[cell] == NO_CARD {
                        out.push(Move::new(Loc::Column(src as u8), Loc::Cell(cell as u8), 1));
                    }
                }
            }
        }
    }

    /// The cards that could go onto a column's new top card: the base of
    /// each column's top run (`runs`, as `Board::runs`) and the cards in
    /// the cells, as a bit set over card codes.
    #[inline]
    fn movable_cards(&self, runs: u64) -> u64 {
        let mut m = 0u64;
        for j in 0..self.ncols() {
            let l = self.lens[j] as usize;
            if l > 0 {
                let r = ((runs >> (4 * j)) & 15) as usize;
                m |= 1 << (self.cols[j][(l - r) & (COL_CAP - 1)] & 63);
            }
        }
        for &x in &self.cells[..self.ncells()] {
            if x != NO_CARD {
                m |= 1 << (x & 63);
            }
        }
        m
    }

    /// Whether taking the top card off column `src` (which has another
    /// card under it) gives the card under it a use: it can go home, or
    /// onto a column's top (the card taken off included, wherever it goes:
    /// a higher card on a lower one is put right that way), or some card of
    /// `movable` (`movable_cards`) other than the one taken off could go
    /// onto it.
    fn exposes_a_use(&self, src: usize, movable: u64) -> bool {
        let (col, len) = (&self.cols[src], self.lens[src] as usize);
        let (top, under) = (col[len - 1], Card(col[len - 2]));
        if self.can_found(under) {
            return true;
        }
        let v = self.variant;
        let onto_column = (0..self.ncols())
            .filter_map(|j| self.top(j))
            .any(|t| v.builds_on(under, t));
        let takes = v.builds_on_table()[under.0 as usize] & movable & !(1 << top);
        onto_column || takes != 0
    }

    /// The moves the heuristic phase tries: `gen_moves_with_runs` minus
    /// - moves that break a run: part of a run onto another column, the top
    ///   card of a run to a cell, and a part of a run into an empty column
    ///   other than a single card and as much as fits;
    /// - free space spent on cards a column would take (session 14): a card
    ///   goes to a cell, from a cell into an empty column, or as a whole
    ///   run into an empty column, only if it can go onto no column;
    /// - an empty column used for nothing (session 14): a card leaves a
    ///   cell for an empty column only if some card could then go onto it
    ///   (the base of a column's top run or a card in a cell,
    ///   `movable_cards`), and a single card goes into one from a column
    ///   (which happens only while no cell is free) only if that gives the
    ///   card under it a use (`exposes_a_use`).
    ///
    /// Incomplete on purpose (the complete search uses
    /// `gen_moves_with_runs`): these are the moves a player would not make,
    /// and leaving them out cut the 4-cell expansions of MS 1..32000 from
    /// 5.995 M to 4.716 M (docs/SOLVER.md, session 14). The run lengths
    /// are given (`runs`, or `runs_after` from the previous position's).
    ///
    /// The same moves in the same order as the shared generator
    /// (`gen_moves_inner` with `pruned`, which debug builds compare), by a
    /// generator of its own: every source moves its whole top run, so one
    /// table lookup per source finds its destinations, and the members
    /// call it once per expansion.
    #[inline]
    pub fn gen_moves_pruned(&self, out: &mut Vec<Move>, runs: u64) {
        debug_assert_eq!(runs, self.runs());
        #[cfg(debug_assertions)]
        let start = out.len();
        self.gen_moves_fast::<true>(out, runs);
        #[cfg(debug_assertions)]
        {
            let mut want = Vec::new();
            self.gen_moves_inner(&mut want, false, true, true, Some(runs));
            debug_assert_eq!(&out[start..], &want[..], "{self:?}");
        }
    }

    /// The generator of `gen_moves_pruned` and `gen_moves_with_runs`.
    #[inline(always)]
    fn gen_moves_fast<const PRUNED: bool>(&self, out: &mut Vec<Move>, runs: u64) {
        let v = self.variant;
        let (nc, ncells) = (self.ncols(), self.ncells());
        // The columns' top cards, as a bit set and by column; the columns
        // a card builds on are then found from the cards it may go onto
        // (`Variant::parents_table`: at most two are tops).
        let parents = v.parents_table();
        let mut tops = 0u64;
        let mut top_col = [0u8; 64];
        let mut empty_mask = 0u16;
        for i in 0..nc {
            let l = self.lens[i] as usize;
            if l == 0 {
                empty_mask |= 1 << i;
                continue;
            }
            let t = self.cols[i][(l - 1) & (COL_CAP - 1)];
            let (r, suit) = (t >> 2, (t & 3) as usize);
            if self.found[suit] == r {
                out.push(Move::new(
                    Loc::Column(i as u8),
                    Loc::Foundation,
                    1 | ((suit as u8) << 4),
                ));
            }
            tops |= 1 << (t & 63);
            top_col[(t & 63) as usize] = i as u8;
        }
        let onto_cols = |c: u8| -> u16 {
            let mut p = parents[(c & 63) as usize] & tops;
            let mut m = 0u16;
            while p != 0 {
                m |= 1 << top_col[p.trailing_zeros() as usize];
                p &= p - 1;
            }
            m
        };
        let mut empty_cells = 0u32;
        let mut first_empty_cell = 0u8;
        for i in 0..ncells {
            let c = self.cells[i];
            if c == NO_CARD {
                if empty_cells == 0 {
                    first_empty_cell = i as u8;
                }
                empty_cells += 1;
            } else if self.found[(c & 3) as usize] == c >> 2 {
                out.push(Move::new(
                    Loc::Cell(i as u8),
                    Loc::Foundation,
                    1 | ((c & 3) << 4),
                ));
            }
        }
        let empty_cols = empty_mask.count_ones();
        let limit_onto = v.max_run(empty_cells, empty_cols) as usize;
        let limit_empty = if empty_cols > 0 {
            v.max_run(empty_cells, empty_cols - 1) as usize
        } else {
            0
        };
        // One empty column stands for all (the same canonical position).
        let empty_dst = empty_mask & empty_mask.wrapping_neg();
        // Pruned: the cards that could go onto a card put into an empty
        // column (`gen_moves_pruned`).
        let movable = if PRUNED && empty_dst != 0 {
            self.movable_cards(runs)
        } else {
            0
        };
        for src in 0..nc {
            let len = self.lens[src] as usize;
            if len == 0 {
                continue;
            }
            let run = ((runs >> (4 * src)) & 15) as usize;
            let col = &self.cols[src];
            // Per destination, the cards of the run that fit on its top
            // (pruned: the whole run only).
            let mut onto = [0u8; MAX_COLUMNS];
            let mut mask = 0u16;
            if PRUNED {
                if run == 1 || run <= limit_onto {
                    mask = onto_cols(col[(len - run) & (COL_CAP - 1)]);
                }
            } else {
                for k in 1..=run.min(limit_onto.max(1)) {
                    let mut p = onto_cols(col[(len - k) & (COL_CAP - 1)]);
                    mask |= p;
                    while p != 0 {
                        onto[p.trailing_zeros() as usize] = k as u8;
                        p &= p - 1;
                    }
                }
            }
            let mut bits = mask | empty_dst;
            while bits != 0 {
                let dst = bits.trailing_zeros() as u8;
                bits &= bits - 1;
                if mask & (1 << dst) != 0 {
                    let k = if PRUNED {
                        run as u8
                    } else {
                        onto[dst as usize]
                    };
                    out.push(Move::new(Loc::Column(src as u8), Loc::Column(dst), k));
                } else {
                    // Into the empty column: any part of the run that fits
                    // (pruned: one card, or as much as fits), never the
                    // whole column (the same position), and a single card
                    // only while no cell is free (`gen_moves_with_runs`).
                    // Pruned: not the whole run when it can go onto a
                    // column (`gen_moves_pruned`).
                    let lim = limit_empty.min(run);
                    let first = if empty_cells > 0 { 2 } else { 1 };
                    if PRUNED {
                        let whole_elsewhere = mask != 0 && lim == run;
                        let one = first == 1
                            && len > 1
                            && !(whole_elsewhere && run == 1)
                            && self.exposes_a_use(src, movable);
                        let ks = [(one, 1), (lim > 1 && !whole_elsewhere, lim)];
                        for (wanted, k) in ks {
                            if wanted
                                && k != len
                                && v.fills_empty(Card(col[(len - k) & (COL_CAP - 1)]))
                            {
                                out.push(Move::new(
                                    Loc::Column(src as u8),
                                    Loc::Column(dst),
                                    k as u8,
                                ));
                            }
                        }
                    } else {
                        for k in first..=lim {
                            if k != len && v.fills_empty(Card(col[(len - k) & (COL_CAP - 1)])) {
                                out.push(Move::new(
                                    Loc::Column(src as u8),
                                    Loc::Column(dst),
                                    k as u8,
                                ));
                            }
                        }
                    }
                }
            }
        }
        // Cell to column. Pruned: into an empty column only a card that can
        // go onto no column and that some card could then go onto: the base
        // of a column's top run, or a card in a cell (`gen_moves_pruned`).
        let builds = v.builds_on_table();
        for i in 0..ncells {
            let c = self.cells[i];
            if c == NO_CARD {
                continue;
            }
            let mut mask = onto_cols(c);
            if v.fills_empty(Card(c))
                && !(PRUNED && (mask != 0 || builds[(c & 63) as usize] & movable == 0))
            {
                mask |= empty_dst;
            }
            while mask != 0 {
                let dst = mask.trailing_zeros() as u8;
                mask &= mask - 1;
                out.push(Move::new(Loc::Cell(i as u8), Loc::Column(dst), 1));
            }
        }
        // Column to cell (pruned: a lone card only, not a run's top, and
        // only one that can go onto no column).
        if empty_cells > 0 {
            let keep_runs = PRUNED && !prune_cells_off();
            for src in 0..nc {
                let run = (runs >> (4 * src)) & 15;
                let len = self.lens[src] as usize;
                if len == 0 || (keep_runs && run > 1) {
                    continue;
                }
                if PRUNED && onto_cols(self.cols[src][(len - 1) & (COL_CAP - 1)]) != 0 {
                    continue;
                }
                out.push(Move::new(
                    Loc::Column(src as u8),
                    Loc::Cell(first_empty_cell),
                    1,
                ));
            }
        }
    }

    /// A foundation move; its `count` field carries the suit in the high
    /// nibble so that undo knows which foundation to take back from.
    #[inline]
    fn home_move(&self, from: Loc, c: Card) -> Move {
        Move::new(from, Loc::Foundation, 1 | (c.suit() << 4))
    }

    /// Every legal move (see `gen_moves`).
    pub fn legal_moves(&self) -> Vec<Move> {
        let mut v = Vec::new();
        self.gen_moves(&mut v, true);
        v
    }

    /// Applies a possibly illegal move after checking it (a foundation move
    /// gets its suit tag filled in).
    pub fn apply_checked(&mut self, m: Move) -> Result<Move, String> {
        let m = self.normalize(m);
        self.check(m)?;
        self.apply(m);
        Ok(m)
    }

    /// Undoes any move made by `apply` or `apply_checked`.
    pub fn undo_any(&mut self, m: Move) {
        if m.to == Loc::Foundation {
            self.undo_home(m, m.count >> 4);
        } else {
            self.undo(m);
        }
    }

    /// Fills in the suit tag of a foundation move.
    fn normalize(&self, m: Move) -> Move {
        if m.to == Loc::Foundation {
            if let Some(c) = self.moving_card(Move { count: 1, ..m }) {
                return self.home_move(m.from, c);
            }
            return Move { count: 1, ..m };
        }
        m
    }

    /// The number of cards a move carries (foundation moves carry one).
    #[inline]
    pub fn move_cards(m: Move) -> usize {
        if m.to == Loc::Foundation {
            1
        } else {
            m.count as usize
        }
    }

    // ----- notation --------------------------------------------------------

    /// Writes a legal move of this position in standard notation.
    pub fn move_to_notation(&self, m: Move) -> String {
        self.notation(m).as_str().to_owned()
    }

    /// `move_to_notation` without an allocation (a solution writes one per
    /// move: 3 % of the CPU of MS 1..8000 with 4 cells as `String`s).
    #[inline]
    pub fn notation(&self, m: Move) -> Notation {
        let mut n = Notation {
            len: 2,
            text: [0; 7],
        };
        n.text[0] = m.from.to_char() as u8;
        n.text[1] = m.to.to_char() as u8;
        if let (Loc::Column(_), Loc::Column(d)) = (m.from, m.to) {
            if self.lens[d as usize] == 0 && (m.count as usize) != self.longest_to_empty(m) {
                n.text[2] = b'v';
                n.len = 3;
                if m.count >= 10 {
                    n.text[3] = b'0' + m.count / 10;
                    n.len = 4;
                }
                n.text[n.len as usize] = b'0' + m.count % 10;
                n.len += 1;
            }
        }
        n
    }

    /// The longest legal run from `m.from` into the empty column `m.to`.
    fn longest_to_empty(&self, m: Move) -> usize {
        let (Loc::Column(a), Loc::Column(d)) = (m.from, m.to) else {
            return 1;
        };
        let (a, d) = (a as usize, d as usize);
        let lim = (self.max_run_to(d) as usize).min(self.run_len(a));
        let col = self.column(a);
        (1..=lim)
            .rev()
            .find(|&k| self.variant.fills_empty(Card(col[col.len() - k])))
            .unwrap_or(1)
    }

    /// Reads a move in standard notation for this position (the count of a
    /// column-to-column move follows from the position).
    pub fn parse_move(&self, text: &str) -> Result<Move, MoveError> {
        let t = text.trim();
        let bad = || MoveError::Notation(text.to_string());
        let mut chars = t.chars();
        let (Some(a), Some(b)) = (chars.next(), chars.next()) else {
            return Err(bad());
        };
        let rest: String = chars.collect();
        let from = Loc::from_char(a).ok_or_else(bad)?;
        let to = Loc::from_char(b).ok_or_else(bad)?;
        let explicit: Option<usize> = if rest.is_empty() {
            None
        } else if let Some(n) = rest.strip_prefix(['v', 'V']) {
            Some(n.parse().map_err(|_| bad())?)
        } else {
            return Err(bad());
        };
        let illegal = |reason: String| MoveError::Illegal {
            mv: t.to_string(),
            reason,
        };
        let count = match (from, to) {
            (Loc::Column(a), Loc::Column(d)) => {
                let (a, d) = (a as usize, d as usize);
                if a >= self.ncols() || d >= self.ncols() {
                    return Err(illegal("no such column in this variant".into()));
                }
                if let Some(k) = explicit {
                    k
                } else if let Some(top) = self.top(d) {
                    // The run whose deepest card fits on the destination.
                    let col = self.column(a);
                    let run = self.run_len(a);
                    (1..=run)
                        .find(|&k| self.variant.builds_on(Card(col[col.len() - k]), top))
                        .unwrap_or(1)
                } else if self.column_len(a) == 0 {
                    1
                } else {
                    self.longest_to_empty(Move::new(from, to, 1))
                }
            }
            _ => {
                if explicit.is_some_and(|k| k != 1) {
                    return Err(illegal(
                        "only column-to-column moves carry several cards".into(),
                    ));
                }
                1
            }
        };
        if count == 0 || count > COL_CAP {
            return Err(illegal(format!("cannot move {count} cards")));
        }
        Ok(self.normalize(Move::new(from, to, count as u8)))
    }

    // ----- text --------------------------------------------------------------

    /// The board in fc-solve's text format (docs/DESIGN.md).
    pub fn to_text(&self) -> String {
        let mut s = String::from("Foundations:");
        for &suit in &TEXT_SUITS {
            let n = self.found[suit as usize];
            let r = if n == 0 {
                '0'
            } else {
                RANK_CHARS[n as usize - 1] as char
            };
            s.push_str(&format!(" {}-{}", SUIT_CHARS[suit as usize] as char, r));
        }
        s.push_str("\nFreecells:");
        for i in 0..self.ncells() {
            match self.cell(i) {
                Some(c) => s.push_str(&format!("  {c}")),
                None => s.push_str("  -"),
            }
        }
        s.push('\n');
        for i in 0..self.ncols() {
            s.push(':');
            for &c in self.column(i) {
                s.push(' ');
                s.push_str(&Card(c).to_string());
            }
            s.push('\n');
        }
        s
    }

    /// Only the columns, one per line, deepest card first (as REFERENCE.md
    /// prints the test vectors).
    pub fn to_rows(&self) -> String {
        let mut s = String::new();
        for i in 0..self.ncols() {
            let cards: Vec<String> = self
                .column(i)
                .iter()
                .map(|&c| Card(c).to_string())
                .collect();
            s.push_str(&cards.join(" "));
            s.push('\n');
        }
        s
    }

    /// Reads fc-solve board text (docs/DESIGN.md). `Foundations:` and
    /// `Freecells:` lines are optional; column lines may start with `: `.
    pub fn from_text(text: &str, variant: Variant) -> Result<Board, BoardError> {
        let variant = variant.validate().map_err(|e| BoardError::Text(e.0))?;
        let mut found = [0u8; 4];
        let mut cells: Vec<Option<Card>> = Vec::new();
        let mut columns: Vec<Vec<Card>> = Vec::new();
        let card = |tok: &str, line_no: usize| {
            Card::parse(tok).map_err(|e| BoardError::Text(format!("line {line_no}: {e}")))
        };
        for (ln, raw) in text.lines().enumerate() {
            let line_no = ln + 1;
            let line = raw.trim_end();
            let trimmed = line.trim_start();
            if let Some(rest) = trimmed.strip_prefix("Foundations:") {
                for tok in rest.split_whitespace() {
                    let (s, r) = tok.split_once('-').ok_or_else(|| {
                        BoardError::Text(format!("line {line_no}: bad foundation entry {tok:?}"))
                    })?;
                    let suit = SUIT_CHARS
                        .iter()
                        .position(|&c| s.len() == 1 && c == s.as_bytes()[0].to_ascii_uppercase())
                        .ok_or_else(|| {
                            BoardError::Text(format!("line {line_no}: bad foundation suit {s:?}"))
                        })?;
                    let n = match r.to_ascii_uppercase().as_str() {
                        "0" | "-" => 0,
                        x => {
                            if let Ok(n) = x.parse::<u8>() {
                                n
                            } else if let Some(p) = RANK_CHARS
                                .iter()
                                .position(|&c| x.len() == 1 && c == x.as_bytes()[0])
                            {
                                p as u8 + 1
                            } else {
                                return Err(BoardError::Text(format!(
                                    "line {line_no}: bad foundation rank {r:?}"
                                )));
                            }
                        }
                    };
                    found[suit] = n;
                }
            } else if let Some(rest) = trimmed.strip_prefix("Freecells:") {
                if rest.contains('-') {
                    for tok in rest.split_whitespace() {
                        cells.push(if tok == "-" {
                            None
                        } else {
                            Some(card(tok, line_no)?)
                        });
                    }
                } else {
                    // fc-solve's fixed-width form: four characters per cell.
                    let bytes: Vec<char> = rest.chars().collect();
                    for chunk in bytes.chunks(4) {
                        let tok: String = chunk.iter().collect();
                        let tok = tok.trim();
                        cells.push(if tok.is_empty() {
                            None
                        } else {
                            Some(card(tok, line_no)?)
                        });
                    }
                    while cells.last() == Some(&None) && cells.len() > variant.cells as usize {
                        cells.pop();
                    }
                }
            } else if trimmed.is_empty() {
                continue;
            } else {
                let body = trimmed.strip_prefix(':').unwrap_or(trimmed);
                let col = body
                    .split_whitespace()
                    .map(|t| card(t, line_no))
                    .collect::<Result<Vec<_>, _>>()?;
                columns.push(col);
            }
        }
        Board::from_parts(variant, &columns, &cells, found)
    }
}

fn prune_cells_off() -> bool {
    static P: std::sync::OnceLock<bool> = std::sync::OnceLock::new();
    *P.get_or_init(|| std::env::var("FCA_CELLBREAK").is_ok())
}

/// Which suit a foundation move (made by `apply`) sent home.
#[inline]
pub fn home_suit(m: Move) -> u8 {
    m.count >> 4
}

#[cfg(test)]
mod tests {
    use super::*;

    fn freecell() -> Variant {
        Variant::default()
    }

    #[test]
    fn deal_617_text() {
        let b = Board::deal(617, freecell()).unwrap();
        let t = b.to_text();
        assert!(t.starts_with(
            "Foundations: H-0 C-0 D-0 S-0\nFreecells:  -  -  -  -\n: 7D TD TH KD 4C 4S JD\n"
        ));
        assert_eq!(Board::from_text(&t, freecell()).unwrap(), b);
        // Plain rows without prefixes read too.
        assert_eq!(Board::from_text(&b.to_rows(), freecell()).unwrap(), b);
    }

    #[test]
    fn fc_solve_fixed_width_cells() {
        let mut b = Board::deal(617, freecell()).unwrap();
        let m = b.parse_move("8b").unwrap();
        b.apply_checked(m).unwrap();
        let text = b
            .to_text()
            .replace("Freecells:  -  QH  -  -", "Freecells:      QH        ");
        let back = Board::from_text(&text, freecell()).unwrap();
        assert_eq!(back, b);
    }

    #[test]
    fn apply_undo_and_fingerprint() {
        let mut b = Board::deal(1, freecell()).unwrap();
        let orig = b.clone();
        let moves = b.legal_moves();
        assert!(!moves.is_empty());
        for m in moves {
            b.check(m).unwrap();
            b.apply(m);
            let mut fresh = b.clone();
            fresh.rehash();
            assert_eq!(fresh.fingerprint(), b.fingerprint());
            b.undo_any(m);
            assert_eq!(b, orig);
            assert_eq!(b.fingerprint(), orig.fingerprint());
        }
    }

    #[test]
    fn notation_round_trip() {
        let b = Board::deal(1, freecell()).unwrap();
        for m in b.legal_moves() {
            let s = b.move_to_notation(m);
            assert_eq!(b.parse_move(&s).unwrap(), m, "{s}");
        }
        assert!(b.parse_move("1").is_err());
        assert!(b.parse_move("1x").is_err());
        assert!(b.parse_move("12q").is_err());
    }

    #[test]
    fn notation_of_a_partial_run_with_two_digits() {
        // A 12-card run, an empty column, unlimited multi-card moves: ten
        // cards into the empty column are written with their count.
        let v = freecell().with_move_rule(crate::variant::MoveRule::Unlimited);
        let text = concat!(
            "Foundations: H-0 C-0 D-0 S-0\n",
            "Freecells:  -  -  -  -\n",
            ": KS QH JS TH 9S 8H 7S 6H 5S 4H 3S 2H\n",
            ": AH KH 6C QC 5D JD 6S\n",
            ": 3H AC 7C KC 6D QD 8S\n",
            ": 5H 2C 8C AD 7D KD TS\n",
            ": 7H 3C 9C 2D 8D AS QS\n",
            ": 9H 4C TC 3D 9D 2S\n",
            ": JH 5C JC 4D TD 4S\n",
            ":\n",
        );
        let b = Board::from_text(text, v).unwrap();
        for (k, want) in [(10u8, "18v10"), (11, "18v11"), (9, "18v9"), (12, "18")] {
            let m = Move::new(Loc::Column(0), Loc::Column(7), k);
            b.check(m).unwrap();
            let n = b.notation(m);
            assert_eq!(n.as_str(), want);
            assert_eq!(n.to_string(), b.move_to_notation(m));
            assert_eq!(b.parse_move(want).unwrap(), m);
        }
    }

    /// Random reachable positions of every preset and move rule (a fixed-
    /// seed LCG picks deals and moves): what the searches compute without
    /// playing a move, or by a way of their own, against playing it. These
    /// run in release builds too, where the searches' debug checks of the
    /// same do not.
    fn sample_positions() -> Vec<Board> {
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

    #[test]
    fn generators_of_their_own_agree_with_the_shared_one() {
        let boards = sample_positions();
        assert!(boards.len() > 500, "{} positions", boards.len());
        for b in boards {
            let runs = b.runs();
            let (mut fast, mut want) = (Vec::new(), Vec::new());
            b.gen_moves_fast::<true>(&mut fast, runs);
            b.gen_moves_inner(&mut want, false, true, true, Some(runs));
            assert_eq!(fast, want, "pruned, {b:?}");
            fast.clear();
            want.clear();
            b.gen_moves_fast::<false>(&mut fast, runs);
            b.gen_moves_inner(&mut want, false, false, true, Some(runs));
            assert_eq!(fast, want, "all, {b:?}");
        }
    }

    /// Every move of `gen_moves_pruned` keeps the free-space rules, checked
    /// here from the columns and cells directly: a card goes to a cell, or
    /// from a cell into an empty column, and a whole run into an empty
    /// column, only if it can go onto no column; a card from a cell into an
    /// empty column only if some top-run base or cell card could go onto
    /// it; a single card from a column into an empty column only while no
    /// cell is free, and only if the card under it can then go home, onto a
    /// column's top (the moved card's too), or take a top-run base or a
    /// cell card. Each rule leaves out some move of `gen_moves_with_runs`
    /// on these positions.
    #[test]
    fn pruned_moves_keep_the_free_space_rules() {
        let mut positions = sample_positions();
        for deal in 1..=40 {
            let mut b = Board::deal(deal, Variant::default()).unwrap();
            let limits = crate::solver::Limits::default();
            for &m in &crate::solver::solve(&b, &limits).solution.unwrap().moves {
                b.apply(m);
                positions.push(b.clone());
            }
        }
        let mut left_out = [0usize; 4];
        for b in positions {
            let v = b.variant();
            let tops: Vec<(usize, Card)> = (0..b.ncols())
                .filter_map(|j| b.top(j).map(|t| (j, t)))
                .collect();
            let onto_a_column =
                |c: Card, not: usize| tops.iter().any(|&(j, t)| j != not && v.builds_on(c, t));
            let base = |j: usize| {
                let col = b.column(j);
                Card(col[col.len() - b.run_len(j)])
            };
            let takes = |c: Card, except: Option<Card>| {
                (0..b.ncols())
                    .filter(|&j| b.column_len(j) > 0)
                    .map(base)
                    .chain((0..b.ncells()).filter_map(|i| b.cell(i)))
                    .any(|x| Some(x) != except && v.builds_on(x, c))
            };
            let runs = b.runs();
            let (mut pruned, mut all) = (Vec::new(), Vec::new());
            b.gen_moves_pruned(&mut pruned, runs);
            b.gen_moves_with_runs(&mut all, runs);
            for &m in &all {
                let kept = pruned.contains(&m);
                let rule = match (m.from, m.to) {
                    (Loc::Column(a), Loc::Cell(_)) if b.run_len(a as usize) == 1 => {
                        let c = b.top(a as usize).unwrap();
                        Some((0, !onto_a_column(c, a as usize)))
                    }
                    (Loc::Cell(i), Loc::Column(d)) if b.column_len(d as usize) == 0 => {
                        let c = b.cell(i as usize).unwrap();
                        Some((1, !onto_a_column(c, usize::MAX) && takes(c, None)))
                    }
                    (Loc::Column(a), Loc::Column(d)) if b.column_len(d as usize) == 0 => {
                        let (a, k) = (a as usize, m.count as usize);
                        let col = b.column(a);
                        if k == 1 && b.run_len(a) > 1 {
                            None // a run's top card: the run-breaking rule
                        } else if k == 1 {
                            let under = Card(col[col.len() - 2]);
                            // (The card moved counts as a column's top: the
                            // one under it may go onto it in its new column.)
                            let used = b.can_found(under)
                                || onto_a_column(under, usize::MAX)
                                || takes(under, Some(b.top(a).unwrap()));
                            Some((3, b.empty_cells() == 0 && used))
                        } else if k == b.run_len(a) {
                            let limit_onto = v.max_run(b.empty_cells(), b.empty_columns()) as usize;
                            Some((2, !onto_a_column(base(a), a) || (k > 1 && k > limit_onto)))
                        } else {
                            None
                        }
                    }
                    _ => None,
                };
                if let Some((r, allowed)) = rule {
                    assert!(!kept || allowed, "rule {r}: {m:?} in {b:?}");
                    if !kept && !allowed {
                        left_out[r] += 1;
                    }
                }
            }
        }
        assert!(left_out.iter().all(|&n| n > 20), "{left_out:?}");
    }

    /// What the searches' generators leave out of `gen_moves(false)` is a
    /// single card into an empty column while a cell is free, and they
    /// reach that position in two moves: the card to a cell, then from the
    /// cell into the column (so a complete search still stores it).
    #[test]
    fn a_card_left_out_of_an_empty_column_gets_there_through_a_cell() {
        let mut left_out = 0;
        let mut log = Vec::new();
        let after = |b: &Board, m: Move, log: &mut Vec<Move>| {
            let mut c = b.clone();
            c.apply(m);
            c.autoplay_after(log, m, false);
            c
        };
        // Empty columns with cells free are rare in random play: positions
        // along solutions (which empty columns) too.
        let mut positions = sample_positions();
        for deal in 1..=60 {
            let mut b = Board::deal(deal, Variant::default()).unwrap();
            let limits = crate::solver::Limits::default();
            for &m in &crate::solver::solve(&b, &limits).solution.unwrap().moves {
                b.apply(m);
                positions.push(b.clone());
            }
        }
        for b in positions {
            let runs = b.runs();
            let (mut all, mut search) = (Vec::new(), Vec::new());
            b.gen_moves(&mut all, false);
            b.gen_moves_with_runs(&mut search, runs);
            assert!(search.iter().all(|m| all.contains(m)), "{b:?}");
            for &m in all.iter().filter(|m| !search.contains(m)) {
                let (Loc::Column(a), Loc::Column(d)) = (m.from, m.to) else {
                    panic!("{m:?} left out, {b:?}");
                };
                assert!(m.count == 1 && b.column_len(d as usize) == 0 && b.empty_cells() > 0);
                let want = after(&b, m, &mut log).fingerprint();
                let to_cell = *search
                    .iter()
                    .find(|s| s.from == Loc::Column(a) && matches!(s.to, Loc::Cell(_)))
                    .expect("the card to a cell");
                let c = after(&b, to_cell, &mut log);
                let mut next = Vec::new();
                c.gen_moves_with_runs(&mut next, c.runs());
                // (Or at once, if the card itself went home.)
                assert!(
                    c.fingerprint() == want
                        || next
                            .iter()
                            .any(|&n| after(&c, n, &mut log).fingerprint() == want),
                    "{m:?} not reached through a cell, {b:?}"
                );
                left_out += 1;
            }
        }
        eprintln!("left out {left_out}");
        assert!(left_out > 100, "{left_out}");
    }

    #[test]
    fn unplayed_children_match_played_ones() {
        for b in sample_positions() {
            let mut n = b.clone();
            n.set_narrow(true);
            let mut moves = Vec::new();
            b.gen_moves(&mut moves, true);
            for &m in &moves {
                if m.to == Loc::Foundation {
                    continue;
                }
                let mut played = b.clone();
                played.apply(m);
                let (fp, ha, hd) = b.wide_after(m);
                assert_eq!(fp, played.fingerprint(), "{m:?} {b:?}");
                let (nfp, nha, nhd) = n.narrow_after(m);
                let mut np = n.clone();
                np.apply(m);
                assert_eq!(nfp, np.fingerprint() as u64, "{m:?}");
                if let Loc::Column(a) = m.from {
                    assert_eq!(
                        (ha, nha),
                        (
                            played.column_hash(a as usize) as u64,
                            played.column_hash(a as usize) as u64
                        )
                    );
                }
                if let Loc::Column(d) = m.to {
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
                            played.apply(Move::new(Loc::Column(c as u8), Loc::Cell(cell as u8), 1));
                        }
                        played.apply(Move::new(Loc::Column(c as u8), Loc::Column(d as u8), 1));
                        let (fp, hc, hd) = n.narrow_after_park(c, k, d);
                        assert_eq!(fp, played.fingerprint() as u64);
                        assert_eq!(hc, played.column_hash(c) as u64);
                        assert_eq!(hd, played.column_hash(d) as u64);
                    }
                }
            }
        }
    }

    #[test]
    fn automatic_moves_in_any_order_reach_the_same_position() {
        for b in sample_positions() {
            for eager in [false, true] {
                let (mut q, mut o) = (b.clone(), b.clone());
                let (mut lq, mut lo) = (Vec::new(), Vec::new());
                let nq = q.autoplay_quick(&mut lq, eager);
                let no = o.autoplay_with(&mut lo, eager);
                assert_eq!(q, o);
                assert_eq!(nq, no);
                assert_eq!(q.fingerprint(), o.fingerprint());
                q.undo_autoplay(&mut lq, nq);
                assert_eq!(q, b);
            }
        }
    }

    #[test]
    fn column_of_and_narrow_unpacking() {
        let boards = sample_positions();
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
