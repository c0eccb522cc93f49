//! Rules as data: one `Variant` value describes a FreeCell-family game.
//!
//! Presets and the Microsoft-deal layout of each are documented in
//! docs/DESIGN.md; the Python verifier keeps its own copy of the table and a
//! test checks the two agree.

use std::fmt;
use std::str::FromStr;

/// Most columns a variant may have (Seahaven Towers has 10).
pub const MAX_COLUMNS: usize = 10;
/// Fewest columns: with at least 4 columns no column is dealt more than 13
/// cards, so a column never exceeds 13 + 12 = 25 cards (see `board::COL_CAP`).
pub const MIN_COLUMNS: usize = 4;
/// Most free cells.
pub const MAX_CELLS: usize = 10;

/// How a card may be placed on a column's top card (always one rank lower).
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash)]
pub enum Build {
    /// Opposite colour (FreeCell).
    Alternate,
    /// Same suit (Baker's Game, Eight Off, Seahaven Towers).
    Suit,
    /// Any suit.
    Any,
}

/// What may fill an empty column.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash)]
pub enum EmptyRule {
    Any,
    Kings,
    None,
}

/// The limit on multi-card moves (REFERENCE.md, "Multi-card moves").
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash)]
pub enum MoveRule {
    /// Only single cards move.
    Single,
    /// StillDeck (seeds 000 and 004): `(1 + cells) * (1 + helper columns)`.
    Product,
    /// FreeCell Pro, PySol, fc-solve (seed 002): `(1 + cells) * 2^helpers`.
    Doubling,
    /// fc-solve's "relaxed": any valid sequence moves as one.
    Unlimited,
}

/// Named presets.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash)]
pub enum Preset {
    FreeCell,
    BakersGame,
    EightOff,
    ForeCell,
    SeahavenTowers,
    RelaxedFreeCell,
    Custom,
}

/// A complete rule set.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash)]
pub struct Variant {
    pub preset: Preset,
    pub cells: u8,
    pub columns: u8,
    pub build: Build,
    pub empty: EmptyRule,
    pub move_rule: MoveRule,
    pub dealt_to_cells: u8,
}

/// A variant that cannot be built.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct VariantError(pub String);

impl fmt::Display for VariantError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for VariantError {}

macro_rules! names {
    ($ty:ty { $($v:ident => $s:literal),* $(,)? }) => {
        impl $ty {
            pub fn name(self) -> &'static str {
                match self { $(Self::$v => $s),* }
            }
            pub const NAMES: &'static [&'static str] = &[$($s),*];
        }
        impl FromStr for $ty {
            type Err = VariantError;
            fn from_str(s: &str) -> Result<Self, VariantError> {
                match s.trim().to_ascii_lowercase().replace('-', "_").as_str() {
                    $($s => Ok(Self::$v),)*
                    _ => Err(VariantError(format!(
                        "unknown {} {:?}; expected one of: {}",
                        stringify!($ty).to_ascii_lowercase(), s, Self::NAMES.join(", ")))),
                }
            }
        }
        impl fmt::Display for $ty {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result { f.write_str(self.name()) }
        }
    };
}

names!(Build { Alternate => "alternate", Suit => "suit", Any => "any" });
names!(EmptyRule { Any => "any", Kings => "kings", None => "none" });
names!(MoveRule { Single => "single", Product => "product", Doubling => "doubling", Unlimited => "unlimited" });
names!(Preset {
    FreeCell => "freecell",
    BakersGame => "bakers_game",
    EightOff => "eight_off",
    ForeCell => "forecell",
    SeahavenTowers => "seahaven_towers",
    RelaxedFreeCell => "relaxed_freecell",
    Custom => "custom",
});

impl Preset {
    /// Every named preset (not `Custom`).
    pub const ALL: [Preset; 6] = [
        Preset::FreeCell,
        Preset::BakersGame,
        Preset::EightOff,
        Preset::ForeCell,
        Preset::SeahavenTowers,
        Preset::RelaxedFreeCell,
    ];
}

impl Default for Variant {
    fn default() -> Self {
        Variant::preset(Preset::FreeCell)
    }
}

impl Variant {
    /// The preset's rules (docs/DESIGN.md, "Presets").
    pub const fn preset(p: Preset) -> Variant {
        let base = Variant {
            preset: p,
            cells: 4,
            columns: 8,
            build: Build::Alternate,
            empty: EmptyRule::Any,
            move_rule: MoveRule::Product,
            dealt_to_cells: 0,
        };
        match p {
            Preset::FreeCell | Preset::Custom => base,
            Preset::BakersGame => Variant {
                build: Build::Suit,
                ..base
            },
            Preset::EightOff => Variant {
                cells: 8,
                build: Build::Suit,
                empty: EmptyRule::Kings,
                dealt_to_cells: 4,
                ..base
            },
            Preset::ForeCell => Variant {
                empty: EmptyRule::Kings,
                dealt_to_cells: 4,
                ..base
            },
            Preset::SeahavenTowers => Variant {
                columns: 10,
                build: Build::Suit,
                empty: EmptyRule::Kings,
                dealt_to_cells: 2,
                ..base
            },
            Preset::RelaxedFreeCell => Variant {
                move_rule: MoveRule::Unlimited,
                ..base
            },
        }
    }

    /// Looks a preset up by name (`freecell`, `bakers_game`, ...).
    pub fn named(name: &str) -> Result<Variant, VariantError> {
        let p: Preset = name.parse().map_err(|_| {
            VariantError(format!(
                "unknown variant {:?}; expected one of: {}",
                name,
                Preset::NAMES[..Preset::NAMES.len() - 1].join(", ")
            ))
        })?;
        Ok(Variant::preset(p))
    }

    /// Checks the numeric fields are within what the engine supports.
    pub fn validate(self) -> Result<Variant, VariantError> {
        if self.cells as usize > MAX_CELLS {
            return Err(VariantError(format!(
                "{} cells is more than the {MAX_CELLS} supported",
                self.cells
            )));
        }
        if !(MIN_COLUMNS..=MAX_COLUMNS).contains(&(self.columns as usize)) {
            return Err(VariantError(format!(
                "{} columns is outside the supported {MIN_COLUMNS}..{MAX_COLUMNS}",
                self.columns
            )));
        }
        if self.dealt_to_cells > self.cells {
            return Err(VariantError(format!(
                "{} cards dealt to cells but only {} cells",
                self.dealt_to_cells, self.cells
            )));
        }
        Ok(self)
    }

    pub fn with_cells(self, cells: u8) -> Variant {
        Variant { cells, ..self }
    }

    pub fn with_move_rule(self, move_rule: MoveRule) -> Variant {
        Variant { move_rule, ..self }
    }

    /// May `card` go onto `onto` in a column?
    #[inline]
    pub fn builds_on(self, card: crate::card::Card, onto: crate::card::Card) -> bool {
        if card.rank() + 1 != onto.rank() {
            return false;
        }
        match self.build {
            Build::Alternate => card.is_red() != onto.is_red(),
            Build::Suit => card.suit() == onto.suit(),
            Build::Any => true,
        }
    }

    /// `builds_on` as a table: bit `card` of entry `onto` (card codes; the
    /// entries past 51 are empty) is set when `card` may go onto `onto`.
    #[inline]
    pub fn builds_on_table(self) -> &'static [u64; 64] {
        match self.build {
            Build::Alternate => &BUILDS_ON[0],
            Build::Suit => &BUILDS_ON[1],
            Build::Any => &BUILDS_ON[2],
        }
    }

    /// The transpose of `builds_on_table`: bit `onto` of entry `card` is set
    /// when `card` may go onto `onto` (a card of rank r onto one of rank
    /// r + 1).
    #[inline]
    pub fn parents_table(self) -> &'static [u64; 64] {
        match self.build {
            Build::Alternate => &PARENTS[0],
            Build::Suit => &PARENTS[1],
            Build::Any => &PARENTS[2],
        }
    }

    /// May `card` be the deepest card of an empty column?
    #[inline]
    pub fn fills_empty(self, card: crate::card::Card) -> bool {
        match self.empty {
            EmptyRule::Any => true,
            EmptyRule::Kings => card.rank() == 12,
            EmptyRule::None => false,
        }
    }

    /// The most cards one multi-card move may carry, given the empty cells
    /// and the empty columns usable as helpers (neither source nor
    /// destination). Empty columns only help when they accept any card.
    #[inline]
    pub fn max_run(self, empty_cells: u32, helper_columns: u32) -> u32 {
        let h = if self.empty == EmptyRule::Any {
            helper_columns
        } else {
            0
        };
        match self.move_rule {
            MoveRule::Single => 1,
            MoveRule::Product => (1 + empty_cells) * (1 + h),
            MoveRule::Doubling => (1 + empty_cells) << h.min(20),
            MoveRule::Unlimited => u32::MAX,
        }
    }
}

/// `Variant::parents_table` for each build rule, in `Build` order: the
/// transpose of `BUILDS_ON`.
static PARENTS: [[u64; 64]; 3] = {
    let mut t = [[0u64; 64]; 3];
    let mut k = 0;
    while k < 3 {
        let mut onto = 0;
        while onto < 64 {
            let mut card = 0;
            while card < 64 {
                if BUILDS_ON[k][onto] >> card & 1 != 0 {
                    t[k][card] |= 1 << onto;
                }
                card += 1;
            }
            onto += 1;
        }
        k += 1;
    }
    t
};

/// `Variant::builds_on_table` for each build rule, in `Build` order.
static BUILDS_ON: [[u64; 64]; 3] = {
    let mut t = [[0u64; 64]; 3];
    let mut onto = 4;
    while onto < 52 {
        let mut card = 0;
        while card < 52 {
            if card / 4 + 1 == onto / 4 {
                // Red suits are D and H (codes 1 and 2 mod 4).
                let (rc, ro) = (
                    card % 4 == 1 || card % 4 == 2,
                    onto % 4 == 1 || onto % 4 == 2,
                );
                if rc != ro {
                    t[0][onto] |= 1 << card;
                }
                if card % 4 == onto % 4 {
                    t[1][onto] |= 1 << card;
                }
                t[2][onto] |= 1 << card;
            }
            card += 1;
        }
        onto += 1;
    }
    t
};

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parents_table_is_the_transpose() {
        for p in Preset::ALL {
            let v = Variant::preset(p);
            let (t, up) = (v.builds_on_table(), v.parents_table());
            for (onto, &cards) in t.iter().enumerate() {
                for (card, &ontos) in up.iter().enumerate() {
                    assert_eq!(cards >> card & 1, ontos >> onto & 1, "{p:?} {card} {onto}");
                }
            }
        }
    }

    #[test]
    fn builds_on_table_agrees() {
        for p in Preset::ALL {
            let v = Variant::preset(p);
            let t = v.builds_on_table();
            for onto in 0..52u8 {
                for card in 0..52u8 {
                    let want = v.builds_on(crate::card::Card(card), crate::card::Card(onto));
                    assert_eq!(
                        (t[onto as usize] >> card) & 1 == 1,
                        want,
                        "{p:?} {card} on {onto}"
                    );
                }
            }
        }
    }

    #[test]
    fn reference_limits() {
        let v = Variant::default();
        // REFERENCE.md: 4 empty cells, no empty column: 5; one column: 10.
        assert_eq!(v.max_run(4, 0), 5);
        assert_eq!(v.max_run(4, 1), 10);
        assert_eq!(v.max_run(4, 2), 15);
        let d = v.with_move_rule(MoveRule::Doubling);
        assert_eq!(d.max_run(4, 2), 20);
        assert_eq!(d.max_run(2, 1), 6); // seed 002's example
        assert_eq!(v.with_move_rule(MoveRule::Single).max_run(4, 4), 1);
        // Kings-only empty columns never help.
        assert_eq!(Variant::named("forecell").unwrap().max_run(2, 3), 3);
    }

    #[test]
    fn product_never_exceeds_doubling() {
        let p = Variant::default();
        let d = p.with_move_rule(MoveRule::Doubling);
        for f in 0..=10 {
            for h in 0..=9 {
                assert!(p.max_run(f, h) <= d.max_run(f, h));
            }
        }
    }

    #[test]
    fn names_parse() {
        for n in Preset::NAMES {
            if *n != "custom" {
                assert_eq!(Variant::named(n).unwrap().preset.name(), *n);
            }
        }
        assert!(Variant::named("klondike").is_err());
        assert_eq!("Doubling".parse::<MoveRule>().unwrap(), MoveRule::Doubling);
    }
}
