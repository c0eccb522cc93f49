//! Moves: what one is, checking one (`IllegalMove`), playing and undoing
//! it, and standard notation (docs/DESIGN.md, "Moves and notation").

use super::{Board, COL_CAP};
use crate::card::Card;
use crate::variant::{EmptyRule, MoveRule, MAX_CELLS, MAX_COLUMNS};
use std::fmt;

/// A column or a cell: where a card in play is, and where a move takes
/// cards from (and, but for a move home, to).
#[derive(Copy, Clone, PartialEq, Eq, Debug, Hash)]
pub enum Loc {
    Column(u8),
    Cell(u8),
}

/// Cell letters; `h` is skipped because it always means the foundation.
pub const CELL_CHARS: &[u8; MAX_CELLS] = b"abcdefgijk";
/// Column digits: `1`-`9`, then `0` for the tenth column.
pub const COLUMN_CHARS: &[u8; MAX_COLUMNS] = b"1234567890";
/// The foundation's letter in notation.
const FOUNDATION_CHAR: u8 = b'h';

impl Loc {
    /// Its letter in notation.
    pub fn to_char(self) -> char {
        match self {
            Loc::Column(i) => COLUMN_CHARS[i as usize] as char,
            Loc::Cell(i) => CELL_CHARS[i as usize] as char,
        }
    }

    /// The column or cell a (lowercase) notation letter names.
    fn from_byte(b: u8) -> Option<Loc> {
        if let Some(i) = COLUMN_CHARS.iter().position(|&x| x == b) {
            return Some(Loc::Column(i as u8));
        }
        CELL_CHARS
            .iter()
            .position(|&x| x == b)
            .map(|i| Loc::Cell(i as u8))
    }
}

/// One move.
#[derive(Copy, Clone, PartialEq, Eq, Debug, Hash)]
pub enum Move {
    /// `count` cards from the top of `from` onto `to`: more than one only
    /// from a column to a column (a multi-card move).
    Shift { from: Loc, to: Loc, count: u8 },
    /// The top card of `from` to its foundation, that of `suit` (0..4, C D H
    /// S), which undoing the move takes it back from.
    Home { from: Loc, suit: u8 },
}

impl Move {
    /// The move as 32 bits (`from_code` reads them back): for files a
    /// search writes and reads itself.
    pub fn code(self) -> u32 {
        let loc = |l: Loc| match l {
            Loc::Column(i) => i as u32,
            Loc::Cell(i) => 0x80 | i as u32,
        };
        match self {
            Move::Shift { from, to, count } => loc(from) | loc(to) << 8 | (count as u32) << 16,
            Move::Home { from, suit } => loc(from) | (suit as u32) << 8 | 1 << 24,
        }
    }

    /// The move `code` wrote.
    pub fn from_code(c: u32) -> Move {
        let loc = |b: u32| {
            if b & 0x80 != 0 {
                Loc::Cell((b & 0x7f) as u8)
            } else {
                Loc::Column(b as u8)
            }
        };
        let from = loc(c & 0xff);
        if c >> 24 == 1 {
            Move::Home {
                from,
                suit: (c >> 8) as u8,
            }
        } else {
            Move::Shift {
                from,
                to: loc((c >> 8) & 0xff),
                count: (c >> 16) as u8,
            }
        }
    }

    /// Where the cards come from.
    #[inline]
    pub fn from(self) -> Loc {
        match self {
            Move::Shift { from, .. } | Move::Home { from, .. } => from,
        }
    }

    /// The number of cards it carries.
    #[inline]
    pub fn cards(self) -> usize {
        match self {
            Move::Shift { count, .. } => count as usize,
            Move::Home { .. } => 1,
        }
    }

    #[inline]
    pub fn is_home(self) -> bool {
        matches!(self, Move::Home { .. })
    }

    /// For a move between columns: the source, the destination and the
    /// number of cards.
    #[inline]
    pub fn between_columns(self) -> Option<(u8, u8, u8)> {
        match self {
            Move::Shift {
                from: Loc::Column(a),
                to: Loc::Column(d),
                count,
            } => Some((a, d, count)),
            _ => None,
        }
    }
}

/// Why a move cannot be made in a position (`Board::check`).
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum IllegalMove {
    NoSuchPlace,
    NoSuchColumn,
    SamePlace,
    NoCard,
    SeveralCardsOffColumns,
    FromFoundation,
    EmptyCell,
    EmptyColumn,
    ColumnTooShort {
        len: usize,
    },
    NotARun {
        count: u8,
    },
    NotNextHome {
        card: Card,
    },
    WrongFoundation {
        card: Card,
    },
    CellHolds {
        card: Card,
    },
    DoesNotBuild {
        card: Card,
        onto: Card,
    },
    EmptyColumnRefuses {
        card: Card,
        empty: EmptyRule,
    },
    RunTooLong {
        count: u8,
        rule: MoveRule,
        limit: u32,
    },
    BadCount {
        count: usize,
    },
}

impl fmt::Display for IllegalMove {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match *self {
            IllegalMove::NoSuchPlace => f.write_str("no such column or cell in this variant"),
            IllegalMove::NoSuchColumn => f.write_str("no such column in this variant"),
            IllegalMove::SamePlace => f.write_str("source and destination are the same"),
            IllegalMove::NoCard => f.write_str("moves no card"),
            IllegalMove::SeveralCardsOffColumns => {
                f.write_str("only column-to-column moves carry several cards")
            }
            IllegalMove::FromFoundation => f.write_str("cards never leave the foundations"),
            IllegalMove::EmptyCell => f.write_str("the source cell is empty"),
            IllegalMove::EmptyColumn => f.write_str("the source column is empty"),
            IllegalMove::ColumnTooShort { len } => {
                write!(f, "the source column has only {len} cards")
            }
            IllegalMove::NotARun { count } => {
                write!(
                    f,
                    "the top {count} cards of the source column are not a run"
                )
            }
            IllegalMove::NotNextHome { card } => {
                write!(f, "{card} cannot go to its foundation yet")
            }
            IllegalMove::WrongFoundation { card } => {
                write!(f, "{card} does not go to that foundation")
            }
            IllegalMove::CellHolds { card } => write!(f, "the destination cell holds {card}"),
            IllegalMove::DoesNotBuild { card, onto } => write!(f, "{card} cannot go onto {onto}"),
            IllegalMove::EmptyColumnRefuses { card, empty } => write!(
                f,
                "{card} cannot fill an empty column (empty columns take {empty} cards)"
            ),
            IllegalMove::RunTooLong { count, rule, limit } => write!(
                f,
                "a run of {count} cards exceeds the {rule}-rule limit {limit}"
            ),
            IllegalMove::BadCount { count } => write!(f, "cannot move {count} cards"),
        }
    }
}

impl std::error::Error for IllegalMove {}

/// Why a move could not be read (`Board::parse_move`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum MoveError {
    Notation(String),
    /// Read, but it names no move of the position (`mv` is the text).
    Illegal {
        mv: String,
        reason: IllegalMove,
    },
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

/// A move in standard notation, held inline: two location characters,
/// then for a partial run into an empty column `v` and the count (at most
/// `COL_CAP`, two digits).
#[derive(Copy, Clone, PartialEq, Eq, Hash)]
pub struct Notation {
    len: u8,
    text: [u8; 7],
}

impl Notation {
    /// The notation as one number: equal exactly when the notations are
    /// (its length and its seven bytes, unused ones zero).
    #[inline]
    pub fn key(&self) -> u64 {
        let mut b = [0u8; 8];
        b[0] = self.len;
        b[1..].copy_from_slice(&self.text);
        u64::from_le_bytes(b)
    }

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

impl Board {
    /// The move sending card `c`, on top of `from`, home.
    #[inline]
    pub(super) fn home_move(from: Loc, c: Card) -> Move {
        Move::Home {
            from,
            suit: c.suit(),
        }
    }

    /// Whether the variant has that column or cell.
    fn in_range(&self, l: Loc) -> bool {
        match l {
            Loc::Column(i) => (i as usize) < self.ncols(),
            Loc::Cell(i) => (i as usize) < self.ncells(),
        }
    }

    /// The card a move would carry first (the deepest of a run).
    fn moving_card(&self, m: Move) -> Option<Card> {
        match m.from() {
            Loc::Column(i) => {
                let l = self.lens[i as usize] as usize;
                let k = m.cards();
                (l >= k && k > 0).then(|| Card(self.cols[i as usize][l - k]))
            }
            Loc::Cell(i) => self.cell(i as usize),
        }
    }

    /// Checks a move; `Ok` means `apply` may be called.
    pub fn check(&self, m: Move) -> Result<(), IllegalMove> {
        let v = self.variant;
        let to = match m {
            Move::Shift { to, .. } => Some(to),
            Move::Home { .. } => None,
        };
        if !self.in_range(m.from()) || !to.is_none_or(|l| self.in_range(l)) {
            return Err(IllegalMove::NoSuchPlace);
        }
        if to == Some(m.from()) {
            return Err(IllegalMove::SamePlace);
        }
        let count = m.cards();
        if count == 0 {
            return Err(IllegalMove::NoCard);
        }
        if count > 1 && !matches!((m.from(), to), (Loc::Column(_), Some(Loc::Column(_)))) {
            return Err(IllegalMove::SeveralCardsOffColumns);
        }
        let card = match m.from() {
            Loc::Cell(i) => self.cell(i as usize).ok_or(IllegalMove::EmptyCell)?,
            Loc::Column(i) => {
                let l = self.column_len(i as usize);
                if l == 0 {
                    return Err(IllegalMove::EmptyColumn);
                }
                if count > l {
                    return Err(IllegalMove::ColumnTooShort { len: l });
                }
                if count > self.run_len(i as usize) {
                    return Err(IllegalMove::NotARun { count: count as u8 });
                }
                self.moving_card(m).unwrap()
            }
        };
        match m {
            Move::Home { suit, .. } => {
                if !self.can_found(card) {
                    return Err(IllegalMove::NotNextHome { card });
                }
                if suit != card.suit() {
                    return Err(IllegalMove::WrongFoundation { card });
                }
            }
            Move::Shift {
                to: Loc::Cell(i), ..
            } => {
                if let Some(c) = self.cell(i as usize) {
                    return Err(IllegalMove::CellHolds { card: c });
                }
            }
            Move::Shift {
                to: Loc::Column(i),
                count,
                ..
            } => {
                let i = i as usize;
                match self.top(i) {
                    Some(t) => {
                        if !v.builds_on(card, t) {
                            return Err(IllegalMove::DoesNotBuild { card, onto: t });
                        }
                    }
                    None => {
                        if !v.fills_empty(card) {
                            return Err(IllegalMove::EmptyColumnRefuses {
                                card,
                                empty: v.empty,
                            });
                        }
                    }
                }
                if count > 1 {
                    let limit = self.max_run_to(i);
                    if count as u32 > limit {
                        return Err(IllegalMove::RunTooLong {
                            count,
                            rule: v.move_rule,
                            limit,
                        });
                    }
                }
            }
        }
        Ok(())
    }

    /// Applies a move known to be legal.
    #[inline]
    pub fn apply(&mut self, m: Move) {
        match m {
            Move::Shift { from, to, count } => match (from, to) {
                (Loc::Column(a), Loc::Column(b)) => {
                    self.move_run(a as usize, b as usize, count as usize)
                }
                (Loc::Column(a), Loc::Cell(b)) => {
                    let c = self.pop_col(a as usize);
                    self.put_cell(b as usize, c);
                }
                (Loc::Cell(a), Loc::Column(b)) => {
                    let c = self.take_cell(a as usize);
                    self.push_col(b as usize, c);
                }
                (Loc::Cell(a), Loc::Cell(b)) => {
                    let c = self.take_cell(a as usize);
                    self.put_cell(b as usize, c);
                }
            },
            Move::Home { from, .. } => {
                let c = match from {
                    Loc::Column(a) => self.pop_col(a as usize),
                    Loc::Cell(a) => self.take_cell(a as usize),
                };
                self.found[(c & 3) as usize] += 1;
            }
        }
    }

    /// Undoes `m`, which must be the last move applied.
    #[inline]
    pub fn undo(&mut self, m: Move) {
        match m {
            Move::Shift { from, to, count } => match (from, to) {
                (Loc::Column(a), Loc::Column(b)) => {
                    self.move_run(b as usize, a as usize, count as usize)
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
            },
            Move::Home { from, suit } => {
                // The card that went home is the top of its suit's foundation.
                self.found[suit as usize] -= 1;
                let c = Card::new(self.found[suit as usize], suit).0;
                match from {
                    Loc::Column(a) => self.push_col(a as usize, c),
                    Loc::Cell(a) => self.put_cell(a as usize, c),
                }
            }
        }
    }

    /// Applies a possibly illegal move after checking it.
    pub fn apply_checked(&mut self, m: Move) -> Result<(), IllegalMove> {
        self.check(m)?;
        self.apply(m);
        Ok(())
    }

    // ----- notation --------------------------------------------------------

    /// Writes a legal move of this position in standard notation.
    pub fn move_to_notation(&self, m: Move) -> String {
        self.notation(m).as_str().to_owned()
    }

    /// `move_to_notation` without an allocation (a solution writes one per
    /// move; docs/solver-log.md).
    #[inline]
    pub fn notation(&self, m: Move) -> Notation {
        let mut n = Notation {
            len: 2,
            text: [0; 7],
        };
        n.text[0] = m.from().to_char() as u8;
        n.text[1] = match m {
            Move::Shift { to, .. } => to.to_char() as u8,
            Move::Home { .. } => FOUNDATION_CHAR,
        };
        if let Some((a, d, count)) = m.between_columns() {
            if self.lens[d as usize] == 0 && count as usize != self.longest_to_empty(a, d) {
                n.text[2] = b'v';
                n.len = 3;
                if count >= 10 {
                    n.text[3] = b'0' + count / 10;
                    n.len = 4;
                }
                n.text[n.len as usize] = b'0' + count % 10;
                n.len += 1;
            }
        }
        n
    }

    /// The longest legal run from column `a` into the empty column `d`.
    fn longest_to_empty(&self, a: u8, d: u8) -> usize {
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
        let illegal = |reason: IllegalMove| MoveError::Illegal {
            mv: t.to_string(),
            reason,
        };
        let mut chars = t.chars();
        let (Some(a), Some(b)) = (chars.next(), chars.next()) else {
            return Err(bad());
        };
        let rest: String = chars.collect();
        // A location letter: a column or a cell, or `None` for the foundation.
        let letter = |c: char| -> Result<Option<Loc>, MoveError> {
            let c = c.to_ascii_lowercase();
            if c == FOUNDATION_CHAR as char {
                return Ok(None);
            }
            let b = u8::try_from(c).map_err(|_| bad())?;
            Loc::from_byte(b).map(Some).ok_or_else(bad)
        };
        let (from, to) = (letter(a)?, letter(b)?);
        let explicit: Option<usize> = if rest.is_empty() {
            None
        } else if let Some(n) = rest.strip_prefix(['v', 'V']) {
            Some(n.parse().map_err(|_| bad())?)
        } else {
            return Err(bad());
        };
        let count = match (from, to) {
            (Some(Loc::Column(a)), Some(Loc::Column(d))) => {
                let (a, d) = (a as usize, d as usize);
                if a >= self.ncols() || d >= self.ncols() {
                    return Err(illegal(IllegalMove::NoSuchColumn));
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
                    self.longest_to_empty(a as u8, d as u8)
                }
            }
            _ => {
                if explicit.is_some_and(|k| k != 1) {
                    return Err(illegal(IllegalMove::SeveralCardsOffColumns));
                }
                1
            }
        };
        if count == 0 || count > COL_CAP {
            return Err(illegal(IllegalMove::BadCount { count }));
        }
        match (from, to) {
            (Some(from), Some(to)) => Ok(Move::Shift {
                from,
                to,
                count: count as u8,
            }),
            (Some(from), None) => {
                // The suit of the card on top of `from`, if there is one
                // (`check` reports an empty source).
                let suit = self
                    .moving_card(Move::Home { from, suit: 0 })
                    .map_or(0, |c| c.suit());
                Ok(Move::Home { from, suit })
            }
            // No move leaves the foundations: what `check` would say of one.
            (None, to) => Err(illegal(match to {
                Some(to) if !self.in_range(to) => IllegalMove::NoSuchPlace,
                Some(_) => IllegalMove::FromFoundation,
                None => IllegalMove::SamePlace,
            })),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::variant::Variant;

    fn freecell() -> Variant {
        Variant::default()
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
            b.undo(m);
            assert_eq!(b, orig);
            assert_eq!(b.fingerprint(), orig.fingerprint());
        }
    }

    /// Every move of every kind and place reads back from its code.
    #[test]
    fn codes_round_trip() {
        let locs = (0..10u8).flat_map(|i| [Loc::Column(i), Loc::Cell(i)]);
        let mut n = 0;
        for from in locs.clone() {
            for suit in 0..4 {
                let m = Move::Home { from, suit };
                assert_eq!(Move::from_code(m.code()), m);
            }
            for to in locs.clone() {
                for count in [1, 2, 13, 255] {
                    let m = Move::Shift { from, to, count };
                    assert_eq!(Move::from_code(m.code()), m);
                    n += 1;
                }
            }
        }
        assert_eq!(n, 20 * 20 * 4);
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
            let m = Move::Shift {
                from: Loc::Column(0),
                to: Loc::Column(7),
                count: k,
            };
            b.check(m).unwrap();
            let n = b.notation(m);
            assert_eq!(n.as_str(), want);
            assert_eq!(n.to_string(), b.move_to_notation(m));
            assert_eq!(b.parse_move(want).unwrap(), m);
        }
    }
}
