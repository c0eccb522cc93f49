//! Sets of fingerprints (`Board::fingerprint`, already uniformly mixed):
//! `FpHasher`, which hands a hash table a fingerprint's low 64 bits as its
//! hash, and `FpSet`, the best-first members' visited sets: open addressing
//! with linear probing in a power-of-two table at most half full, the key's
//! top bits as its first slot, 0 marking an empty slot (the key 0 itself is
//! kept in a flag). A member's set is small and hot, and most inserts are
//! answered at the first slot: about a tenth of the instructions of a
//! general-purpose table (docs/solver-log.md).

use std::hash::Hasher;

/// A hasher for fingerprint keys: their low 64 bits are the hash.
#[derive(Default)]
pub struct FpHasher(u64);

impl Hasher for FpHasher {
    fn finish(&self) -> u64 {
        self.0
    }
    fn write(&mut self, _: &[u8]) {
        unreachable!("only u128 and u64 keys")
    }
    fn write_u128(&mut self, v: u128) {
        self.0 = v as u64;
    }
    fn write_u64(&mut self, v: u64) {
        self.0 = v;
    }
}

/// The set. `capacity` is the number of keys it holds before it grows.
#[derive(Clone, Debug)]
pub struct FpSet {
    slots: Vec<u64>,
    /// Keys other than 0.
    len: usize,
    has_zero: bool,
    /// `slots.len() - 1`.
    mask: usize,
    /// 64 - log2(slots.len()): a key's first slot is `key >> shift`.
    shift: u32,
}

impl Default for FpSet {
    fn default() -> Self {
        FpSet::with_capacity(0)
    }
}

impl FpSet {
    /// A set holding `n` keys before it first grows.
    pub fn with_capacity(n: usize) -> Self {
        let size = (2 * n).next_power_of_two().max(16);
        FpSet {
            slots: vec![0; size],
            len: 0,
            has_zero: false,
            mask: size - 1,
            shift: 64 - size.trailing_zeros(),
        }
    }

    /// Keys held before the table grows.
    #[inline]
    pub fn capacity(&self) -> usize {
        self.slots.len() / 2
    }

    /// Bytes of a set of `capacity` (`capacity()`), for budgets.
    pub fn bytes_for(capacity: usize) -> u64 {
        ((2 * capacity).next_power_of_two().max(16) * 8) as u64
    }

    #[inline]
    pub fn len(&self) -> usize {
        self.len + self.has_zero as usize
    }

    #[inline]
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Adds `key`; false if it was there already.
    #[inline]
    pub fn insert(&mut self, key: u64) -> bool {
        if key == 0 {
            return !std::mem::replace(&mut self.has_zero, true);
        }
        if self.len >= self.slots.len() / 2 {
            self.grow();
        }
        let mut i = (key >> self.shift) as usize;
        loop {
            let s = self.slots[i];
            if s == key {
                return false;
            }
            if s == 0 {
                self.slots[i] = key;
                self.len += 1;
                return true;
            }
            i = (i + 1) & self.mask;
        }
    }

    #[inline]
    pub fn contains(&self, key: u64) -> bool {
        if key == 0 {
            return self.has_zero;
        }
        let mut i = (key >> self.shift) as usize;
        loop {
            let s = self.slots[i];
            if s == key {
                return true;
            }
            if s == 0 {
                return false;
            }
            i = (i + 1) & self.mask;
        }
    }

    /// Doubles the table.
    #[cold]
    #[inline(never)]
    fn grow(&mut self) {
        let mut bigger = FpSet::with_capacity(self.slots.len());
        // Every key is new there and the table has room: each goes to the
        // first empty slot from its own, without the checks of `insert`.
        for &k in &self.slots {
            if k != 0 {
                let mut i = (k >> bigger.shift) as usize;
                while bigger.slots[i] != 0 {
                    i = (i + 1) & bigger.mask;
                }
                bigger.slots[i] = k;
            }
        }
        bigger.len = self.len;
        bigger.has_zero = self.has_zero;
        *self = bigger;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn behaves_as_a_set() {
        // A fixed-seed LCG's outputs, repeated, with 0 and colliding
        // first slots among them: the same answers as std's HashSet.
        let mut x = 0x2545_F491_4F6C_DD1Du64;
        let mut keys = vec![0u64, 0, 1, 1 << 63, (1 << 63) | 1];
        for _ in 0..5000 {
            x = x
                .wrapping_mul(6_364_136_223_846_793_005)
                .wrapping_add(1_442_695_040_888_963_407);
            keys.push(x);
            keys.push(x >> 7);
        }
        let more = keys.clone();
        keys.extend(more.iter().step_by(3));
        let mut ours = FpSet::with_capacity(4);
        let mut theirs = std::collections::HashSet::new();
        for &k in &keys {
            assert_eq!(ours.insert(k), theirs.insert(k), "insert {k}");
            assert!(ours.contains(k));
            assert_eq!(ours.len(), theirs.len());
            assert!(ours.len() <= ours.capacity() + 1);
        }
        for k in [2u64, 3, 12345, u64::MAX] {
            assert_eq!(ours.contains(k), theirs.contains(&k));
        }
        assert_eq!(
            FpSet::bytes_for(ours.capacity()),
            ours.slots.len() as u64 * 8
        );
    }
}
