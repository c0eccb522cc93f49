//! FreeCell Analyzer's engine: cards, Microsoft deals, rules as data,
//! positions and moves, and a complete solver. Plain Rust; the PyO3 glue is
//! in `py.rs`, compiled only with the `python` feature.

pub mod board;
pub mod card;
pub mod deal;
pub mod fpset;
mod heap;
mod pages;
pub mod prover;
pub mod solver;
pub mod variant;

#[cfg(test)]
mod testutil;

#[cfg(feature = "python")]
mod py;

pub use board::{Board, BoardError, IllegalMove, Loc, Move, MoveError, Notation};
pub use card::{Card, CardError};
pub use deal::{deal_order, DealNumberError, MAX_DEAL};
pub use variant::{Build, EmptyRule, MoveRule, Preset, Variant, VariantError};
