//! The best-first searches' queue: one LIFO list per priority (priorities
//! are small integers), threaded through the positions' indices.

/// No position: the end of a list.
pub(super) const NONE: u32 = u32::MAX;

/// Pops the lowest priority, and among equals the newest position, in O(1)
/// amortised.
pub(super) struct BucketQueue {
    /// Per priority `base + i`: the newest waiting position, or `NONE`.
    heads: Vec<u32>,
    /// Per position: the next older one with the same priority.
    next: Vec<u32>,
    base: i32,
    /// No waiting position has a priority below `base + min`.
    min: usize,
    len: usize,
}

impl BucketQueue {
    pub(super) fn with_capacity(n: usize) -> Self {
        BucketQueue {
            heads: Vec::new(),
            next: Vec::with_capacity(n),
            base: 0,
            min: 0,
            len: 0,
        }
    }

    pub(super) fn bytes(&self) -> usize {
        (self.heads.capacity() + self.next.capacity()) * 4
    }

    /// Bytes once positions up to `index` can be queued (counting a
    /// reallocation of `next`).
    pub(super) fn bytes_after(&self, index: usize) -> usize {
        let n = index + 1;
        let next = if n > self.next.capacity() {
            3 * n
        } else {
            self.next.capacity()
        };
        // `heads` may double when a priority beyond its ends arrives.
        (2 * self.heads.capacity().max(128) + next) * 4
    }

    #[inline(always)]
    pub(super) fn push(&mut self, priority: i32, index: u32) {
        let mut slot = priority.wrapping_sub(self.base) as u32 as usize;
        if slot >= self.heads.len() {
            slot = self.make_room(priority);
        }
        let i = index as usize;
        let older = self.heads[slot];
        // Positions are queued in the order they are generated, so `next`
        // grows by one (any other order is allowed, and slower).
        if i == self.next.len() {
            self.next.push(older);
        } else {
            if i > self.next.len() {
                self.next.resize(i + 1, NONE);
            }
            self.next[i] = older;
        }
        self.heads[slot] = index;
        self.min = self.min.min(slot);
        self.len += 1;
    }

    /// Grows `heads` to take `priority` (below `base` or past the end, or
    /// the first push), returning its slot.
    #[cold]
    #[inline(never)]
    fn make_room(&mut self, priority: i32) -> usize {
        if self.heads.is_empty() {
            // Priorities fall towards 0 as a search nears a win (the
            // heuristic's value there; a depth weight adds the depth): room
            // from a little below 0 to a little above the first priority,
            // so that most searches never grow it.
            self.base = priority.min(0) - 64;
            self.heads
                .resize((priority - self.base + 64) as usize, NONE);
            self.min = self.heads.len();
        }
        if priority < self.base {
            let grow = ((self.base - priority) as usize).max(self.heads.len());
            let mut heads = vec![NONE; grow];
            heads.extend_from_slice(&self.heads);
            self.heads = heads;
            self.base -= grow as i32;
            self.min += grow;
        }
        let slot = (priority - self.base) as usize;
        if slot >= self.heads.len() {
            let len = (slot + 1).max(self.heads.len() * 2);
            self.heads.resize(len, NONE);
        }
        slot
    }

    #[inline]
    pub(super) fn peek(&mut self) -> Option<u32> {
        if self.len == 0 {
            return None;
        }
        while self.heads[self.min] == NONE {
            self.min += 1;
        }
        Some(self.heads[self.min])
    }

    /// The priority of the position `peek` returns.
    #[inline]
    pub(super) fn min_priority(&self) -> i32 {
        self.base + self.min as i32
    }

    #[inline]
    pub(super) fn pop(&mut self) -> Option<u32> {
        let top = self.peek()?;
        self.heads[self.min] = self.next[top as usize];
        self.len -= 1;
        Some(top)
    }
}
