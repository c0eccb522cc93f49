//! Cards and their text form.
//!
//! A card is one byte, `rank * 4 + suit`, with ranks A=0 .. K=12 and suits in
//! the Microsoft order C, D, H, S (REFERENCE.md, "Microsoft deal numbers"), so
//! that the deal generator's deck index *is* the card.

use std::fmt;

/// Rank letters, A=0 .. K=12.
pub const RANK_CHARS: &[u8; 13] = b"A23456789TJQK";
/// Suit letters in Microsoft order: clubs, diamonds, hearts, spades.
pub const SUIT_CHARS: &[u8; 4] = b"CDHS";

/// A playing card, `rank * 4 + suit`.
#[derive(Copy, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Card(pub u8);

impl Card {
    /// Builds a card from rank (0..13) and suit (0..4).
    #[inline]
    pub const fn new(rank: u8, suit: u8) -> Card {
        Card(rank * 4 + suit)
    }
    #[inline]
    pub const fn rank(self) -> u8 {
        self.0 >> 2
    }
    #[inline]
    pub const fn suit(self) -> u8 {
        self.0 & 3
    }
    /// Diamonds and hearts are red.
    #[inline]
    pub const fn is_red(self) -> bool {
        matches!(self.suit(), 1 | 2)
    }
    #[inline]
    pub const fn index(self) -> usize {
        self.0 as usize
    }

    /// Parses `TD`, `10D`, `td`, `AS`...
    pub fn parse(text: &str) -> Result<Card, CardError> {
        let t = text.trim();
        let upper = t.to_ascii_uppercase();
        let b = upper.as_bytes();
        let (rank_part, suit_byte) = match b.len() {
            2 => (&upper[..1], b[1]),
            3 if &upper[..2] == "10" => ("T", b[2]),
            _ => return Err(CardError(text.to_string())),
        };
        let rank = RANK_CHARS
            .iter()
            .position(|&c| c == rank_part.as_bytes()[0])
            .ok_or_else(|| CardError(text.to_string()))?;
        let suit = SUIT_CHARS
            .iter()
            .position(|&c| c == suit_byte)
            .ok_or_else(|| CardError(text.to_string()))?;
        Ok(Card::new(rank as u8, suit as u8))
    }
}

impl fmt::Display for Card {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{}{}",
            RANK_CHARS[self.rank() as usize] as char,
            SUIT_CHARS[self.suit() as usize] as char
        )
    }
}

impl fmt::Debug for Card {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Display::fmt(self, f)
    }
}

/// A card that could not be read.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CardError(pub String);

impl fmt::Display for CardError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "not a card: {:?} (expected rank A 2-9 T J Q K and suit C D H S, e.g. TD or 10D)",
            self.0
        )
    }
}

impl std::error::Error for CardError {}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trip_all_cards() {
        for i in 0..52u8 {
            let c = Card(i);
            assert_eq!(Card::parse(&c.to_string()).unwrap(), c);
        }
    }

    #[test]
    fn ten_forms_and_case() {
        assert_eq!(Card::parse("10D").unwrap(), Card::parse("TD").unwrap());
        assert_eq!(Card::parse("td").unwrap().to_string(), "TD");
        assert_eq!(Card::parse("AC").unwrap(), Card(0));
        assert_eq!(Card::parse("KS").unwrap(), Card(51));
    }

    #[test]
    fn bad_cards() {
        for bad in ["", "1D", "ZZ", "TX", "10", "AAC", "11D"] {
            assert!(Card::parse(bad).is_err(), "{bad}");
        }
    }
}
