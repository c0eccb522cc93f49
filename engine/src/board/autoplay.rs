//! The automatic foundation moves: which cards may go home without a
//! player's choice (`is_safe_home`, and the eager rule of the heuristic
//! searches, `is_home_worthy`), playing them, and telling without playing
//! a move whether any will follow it.

use super::moves::{Loc, Move};
use super::{Board, COL_CAP, NO_CARD};
use crate::card::Card;
use crate::variant::Build;

impl Board {
    /// Is sending `c` to its foundation provably harmless? It is when no card
    /// still in play could ever be placed on it: aces and twos always (an ace
    /// can go home instead of onto a two); otherwise every card of rank - 1
    /// that builds on it per the variant must be home already. Foundations
    /// are final, so a solution that used `c` as a base would need one of
    /// those cards, which cannot happen; every other move of that solution
    /// stays legal with `c` gone (one more free cell or one card fewer on a
    /// column only adds options for single-card moves). Tested in
    /// `solver::complete::tests::auto_moves_keep_verdicts`.
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
        match m {
            Move::Home { .. } => true,
            Move::Shift {
                from: Loc::Column(a),
                ..
            } => self
                .top(a as usize)
                .is_some_and(|t| self.can_found(t) && self.is_home_worthy(t, eager)),
            Move::Shift { .. } => false,
        }
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
                    log.push(Board::home_move(Loc::Column(w as u8), Card(c)));
                    self.pop_col(w);
                    let l = self.lens[w] as usize;
                    if l > 0 {
                        let t = self.cols[w][(l - 1) & (COL_CAP - 1)];
                        acc |= 1 << t;
                        at[(t & 63) as usize] = w as u8;
                    }
                } else {
                    log.push(Board::home_move(Loc::Cell((w - 16) as u8), Card(c)));
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
                        let m = Board::home_move(Loc::Column(i as u8), t);
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
                    let m = Board::home_move(Loc::Cell(i as u8), Card(c));
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
            self.undo(m);
        }
    }

    /// Whether playing `m` (a move that is not home) uncovers a card that
    /// then goes home by the automatic-move rule (`is_home_worthy` with
    /// `eager`): exactly when `autoplay_after` would move something, for
    /// a position at the automatic-move fixpoint.
    #[inline(always)]
    pub fn exposes_home(&self, m: Move, eager: bool) -> bool {
        let Move::Shift {
            from: Loc::Column(a),
            count,
            ..
        } = m
        else {
            return false;
        };
        let a = a as usize;
        let (l, k) = (self.lens[a] as usize, count as usize);
        if l <= k {
            return false;
        }
        let t = Card(self.cols[a][l - k - 1]);
        self.can_found(t) && self.is_home_worthy(t, eager)
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
}

#[cfg(test)]
mod tests {
    #[test]
    fn automatic_moves_in_any_order_reach_the_same_position() {
        for b in crate::board::sample_positions() {
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
}
