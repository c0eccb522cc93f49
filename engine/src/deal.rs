//! Microsoft FreeCell deal numbers 1..=8,589,934,591 (REFERENCE.md).
//!
//! Deal `n` comes from the Microsoft C runtime LCG seeded with `n`:
//! `state = (214013 * state + 2531011) mod 2^31`, draw `state >> 16`.
//! FreeCell Pro extended the range to 2^33 - 1 with two branches:
//! `2^31 <= n < 2^32` draws `((state >> 16) & 0x7fff) | 0x8000`, and
//! `2^32 <= n < 2^33` seeds with `n - 2^32` and draws `((state >> 16) & 0xffff) + 1`.

use crate::card::Card;
use std::fmt;

/// The largest deal number (FreeCell Pro): 2^33 - 1.
pub const MAX_DEAL: u64 = (1u64 << 33) - 1;

/// A deal number outside 1..=8,589,934,591.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DealNumberError(pub i128);

impl fmt::Display for DealNumberError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "deal number {} is out of range: Microsoft deals are numbered 1..{}",
            self.0, MAX_DEAL
        )
    }
}

impl std::error::Error for DealNumberError {}

/// The 52 cards of deal `n` in dealing order: card `i` goes to column `i % 8`
/// in standard FreeCell, each column growing from its deepest card upwards.
pub fn deal_order(n: u64) -> Result<[Card; 52], DealNumberError> {
    if n == 0 || n > MAX_DEAL {
        return Err(DealNumberError(n as i128));
    }
    // Branch selection per REFERENCE.md.
    let (mut state, mode) = if n < (1 << 31) {
        (n, 0u8)
    } else if n < (1 << 32) {
        (n, 1u8)
    } else {
        (n - (1 << 32), 2u8)
    };
    let mut deck: [u8; 52] = std::array::from_fn(|i| i as u8);
    let mut out = [Card(0); 52];
    let mut remaining = 52usize;
    for slot in out.iter_mut() {
        // The Microsoft CRT keeps a 32-bit state and draws bits 16..30. For
        // n < 2^32 that equals REFERENCE.md's "mod 2^31" form, but the third
        // branch reads bit 31 too (`& 0xffff`), so the state must be kept
        // mod 2^32: with mod 2^31 deal 6000000000 does not match its vector.
        state = (state.wrapping_mul(214013).wrapping_add(2531011)) & 0xffff_ffff;
        let r = match mode {
            0 => (state >> 16) & 0x7fff,
            1 => ((state >> 16) & 0x7fff) | 0x8000,
            _ => ((state >> 16) & 0xffff) + 1,
        };
        let j = (r % remaining as u64) as usize;
        *slot = Card(deck[j]);
        deck[j] = deck[remaining - 1];
        remaining -= 1;
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Reads the shared golden vectors (tests/data/deal_vectors.txt) that the
    /// Python tests read too.
    pub fn vectors() -> Vec<(u64, Vec<Vec<String>>)> {
        let text = include_str!("../../tests/data/deal_vectors.txt");
        let mut out = Vec::new();
        let mut cur: Option<(u64, Vec<Vec<String>>)> = None;
        for line in text.lines() {
            if line.starts_with('#') {
                continue;
            }
            if let Some(rest) = line.strip_prefix("deal ") {
                if let Some(c) = cur.take() {
                    out.push(c);
                }
                cur = Some((rest.trim().parse().unwrap(), Vec::new()));
            } else if !line.trim().is_empty() {
                let cols = line.split_whitespace().map(|s| s.to_string()).collect();
                cur.as_mut().unwrap().1.push(cols);
            }
        }
        out.extend(cur);
        out
    }

    #[test]
    fn reference_vectors() {
        let vs = vectors();
        assert_eq!(vs.len(), 7);
        for (n, cols) in vs {
            let order = deal_order(n).unwrap();
            let mut got: Vec<Vec<String>> = vec![Vec::new(); 8];
            for (i, c) in order.iter().enumerate() {
                got[i % 8].push(c.to_string());
            }
            assert_eq!(got, cols, "deal {n}");
        }
    }

    #[test]
    fn range_errors() {
        assert!(deal_order(0).is_err());
        assert!(deal_order(MAX_DEAL + 1).is_err());
        assert!(deal_order(MAX_DEAL).is_ok());
        assert!(deal_order(1).is_ok());
    }

    #[test]
    fn every_deal_is_a_permutation() {
        for n in [1u64, 2, 31999, 1 << 31, (1 << 32) - 1, 1 << 32, MAX_DEAL] {
            let mut seen = [false; 52];
            for c in deal_order(n).unwrap() {
                assert!(!seen[c.index()]);
                seen[c.index()] = true;
            }
        }
    }
}
