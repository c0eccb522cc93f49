//! fc-solve board text (docs/DESIGN.md, "Board text"): writing a board,
//! and reading one back with the variations fc-solve and people write.

use super::{Board, BoardError};
use crate::card::{Card, RANK_CHARS, SUIT_CHARS};
use crate::variant::Variant;
use std::fmt;

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
}
