//! Property tests (proptest) on random reachable positions of every preset
//! and move rule: apply/undo, canonical keys and fingerprints, move limits,
//! notation round trips.

use engine::{Board, Card, Loc, Move, MoveRule, Preset, Variant};
use proptest::prelude::*;

const PRESETS: [Preset; 6] = Preset::ALL;
const RULES: [MoveRule; 4] = [
    MoveRule::Single,
    MoveRule::Product,
    MoveRule::Doubling,
    MoveRule::Unlimited,
];

/// A random reachable position: a deal, a variant, and a random walk.
fn walk(deal: u64, preset: usize, rule: usize, steps: &[usize]) -> Vec<Board> {
    let v = Variant::preset(PRESETS[preset]).with_move_rule(RULES[rule]);
    let mut b = Board::deal(deal, v).unwrap();
    let mut out = vec![b.clone()];
    for &s in steps {
        let moves = b.legal_moves();
        if moves.is_empty() {
            break;
        }
        b.apply_checked(moves[s % moves.len()]).unwrap();
        out.push(b.clone());
    }
    out
}

/// The same position with columns and cells in another order.
fn permuted(b: &Board, rot: usize) -> Board {
    let v = b.variant();
    let n = v.columns as usize;
    let cols: Vec<Vec<Card>> = (0..n)
        .map(|i| b.column((i + rot) % n).iter().map(|&c| Card(c)).collect())
        .collect();
    let k = v.cells as usize;
    let cells: Vec<Option<Card>> = (0..k).map(|i| b.cell((i + rot) % k.max(1))).collect();
    Board::from_parts(v, &cols, &cells, b.foundations()).unwrap()
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 256, ..ProptestConfig::default() })]

    #[test]
    fn apply_undo_restores(deal in 1u64..=8_589_934_591, preset in 0usize..6, rule in 0usize..4,
                           steps in prop::collection::vec(0usize..1000, 0..60)) {
        for b in walk(deal, preset, rule, &steps) {
            for m in b.legal_moves() {
                let mut c = b.clone();
                c.apply_checked(m).unwrap();
                c.undo(m);
                prop_assert_eq!(&c, &b);
                prop_assert_eq!(c.fingerprint(), b.fingerprint());

            }
        }
    }

    #[test]
    fn narrow_fingerprints_follow_moves(deal in 1u64..=8_589_934_591, preset in 0usize..6,
                                        rule in 0usize..4, rot in 1usize..10,
                                        steps in prop::collection::vec(0usize..1000, 0..60)) {
        // The 64-bit fingerprint (the low half) kept up to date move by
        // move equals one computed afresh, ignores the order of columns and
        // cells, and is restored by undo.
        for b in walk(deal, preset, rule, &steps) {
            let mut n = b.clone();
            n.set_narrow(true);
            let mut p = permuted(&b, rot);
            p.set_narrow(true);
            prop_assert_eq!(p.fingerprint() as u64, n.fingerprint() as u64);
            for m in b.legal_moves() {
                let mut c = n.clone();
                c.apply_checked(m).unwrap();
                let mut fresh = c.clone();
                fresh.set_narrow(true);
                prop_assert_eq!(c.fingerprint() as u64, fresh.fingerprint() as u64);
                c.undo(m);
                prop_assert_eq!(c.fingerprint() as u64, n.fingerprint() as u64);
            }
        }
    }

    #[test]
    fn pack_unpack_round_trip(deal in 1u64..=8_589_934_591, preset in 0usize..6, rule in 0usize..4,
                              steps in prop::collection::vec(0usize..1000, 0..60)) {
        let positions = walk(deal, preset, rule, &steps);
        // Unpacking in place over an unrelated board of the same variant
        // must leave nothing of it behind.
        let mut scratch = positions.last().unwrap().clone();
        for b in &positions {
            let p = b.pack();
            let u = Board::unpack(&p, b.variant());
            prop_assert_eq!(&u, b);
            prop_assert_eq!(u.fingerprint(), b.fingerprint());
            scratch.unpack_into(&p);
            prop_assert_eq!(&scratch, b);
            prop_assert_eq!(scratch.fingerprint(), b.fingerprint());
            prop_assert_eq!(scratch.legal_moves(), b.legal_moves());
        }
    }

    #[test]
    fn canonical_key_ignores_order(deal in 1u64..100_000, preset in 0usize..6, rule in 0usize..4,
                                   steps in prop::collection::vec(0usize..1000, 0..40), rot in 1usize..10) {
        let boards = walk(deal, preset, rule, &steps);
        for b in &boards {
            let p = permuted(b, rot);
            prop_assert_eq!(p.canonical_key(), b.canonical_key());
            prop_assert_eq!(p.fingerprint(), b.fingerprint());
        }
        // Distinct positions: keys differ exactly when fingerprints differ.
        for w in boards.windows(2) {
            let same_key = w[0].canonical_key() == w[1].canonical_key();
            prop_assert_eq!(same_key, w[0].fingerprint() == w[1].fingerprint());
        }
    }

    #[test]
    fn multi_card_moves_respect_the_rule(deal in 1u64..100_000, preset in 0usize..6, rule in 0usize..4,
                                         steps in prop::collection::vec(0usize..1000, 0..60)) {
        for b in walk(deal, preset, rule, &steps) {
            for m in b.legal_moves() {
                if let Move::Shift { from: Loc::Column(_), to: Loc::Column(d), count } = m {
                    prop_assert!(count as u32 <= b.max_run_to(d as usize).max(1));
                    if RULES[rule] == MoveRule::Single {
                        prop_assert_eq!(count, 1);
                    }
                }
                let text = b.move_to_notation(m);
                prop_assert_eq!(b.parse_move(&text).unwrap(), m);
            }
        }
    }
}
