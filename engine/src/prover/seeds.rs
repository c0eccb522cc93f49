//! Positions waiting for a later layer (`super`), and the layers' roots
//! kept for writing out a solution: compact records in memory, moved to
//! files on disk when memory runs short.
//!
//! A record is a position in about 20 to 50 bytes (`encode`): the
//! foundations, the cells, and each column with every card that sits on a
//! card it builds on written as which of that card's possible children it
//! is (1 bit under alternate colours, none under suits) instead of 6 bits.
//! With it goes its origin: the layer and the index of the root whose
//! search reached it, so a solution can be traced back (`super::prove`).
//!
//! Files are created already unlinked (`O_TMPFILE` on Linux; elsewhere
//! created and removed at once), so the space goes back to the file system
//! on every exit, a kill included.

use crate::board::{Board, FpBuilder, Packed};
use crate::variant::{Variant, MAX_CELLS, MAX_COLUMNS};
use std::collections::BTreeMap;
use std::fs::File;
use std::io::{self, BufReader, Read, Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};

/// Where a record came from: the layer and the root index of the search
/// that reached it; `NO_ORIGIN` for the start.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct Origin {
    pub layer: u8,
    pub root: u32,
}

pub const NO_ORIGIN: Origin = Origin {
    layer: u8::MAX,
    root: u32::MAX,
};

/// The flag, in a record's origin layer, of a position a search left for
/// later in its own layer (stored in the visited set already). Layers are
/// below 128 (`super::potential` is at most 52 + 64).
const DEFERRED: u8 = 0x80;

impl Origin {
    /// This origin, marked as that of a deferred position.
    pub fn deferred(self) -> Origin {
        Origin {
            layer: self.layer | DEFERRED,
            ..self
        }
    }

    /// The origin without its mark, and whether it had it.
    pub fn split_deferred(self) -> (Origin, bool) {
        if self == NO_ORIGIN {
            return (self, false);
        }
        (
            Origin {
                layer: self.layer & !DEFERRED,
                ..self
            },
            self.layer & DEFERRED != 0,
        )
    }
}

/// Per variant: for each card code, the cards that build on it (at most 4),
/// and how many bits pick one of them.
pub struct Codec {
    children: [[u8; 4]; 52],
    bits: [u8; 52],
    variant: Variant,
}

impl Codec {
    pub fn new(variant: Variant) -> Codec {
        let mut children = [[0xFF; 4]; 52];
        let mut bits = [0u8; 52];
        let table = variant.builds_on_table();
        for p in 0..52usize {
            let mut n = 0;
            let mut m = table[p];
            while m != 0 {
                children[p][n] = m.trailing_zeros() as u8;
                m &= m - 1;
                n += 1;
            }
            bits[p] = match n {
                0 | 1 => 0,
                2 => 1,
                _ => 2,
            };
        }
        Codec {
            children,
            bits,
            variant,
        }
    }

    /// Appends the record of `b` with `origin` to `out`: a length byte, the
    /// origin (5 bytes), then the position's bits.
    pub fn encode(&self, b: &Board, origin: Origin, out: &mut Vec<u8>) {
        let start = out.len();
        out.push(0);
        out.push(origin.layer);
        out.extend_from_slice(&origin.root.to_le_bytes());
        let mut w = BitWriter::new(out);
        for f in b.foundations() {
            w.put(f as u64, 4);
        }
        let cells: Vec<u8> = (0..b.ncells())
            .filter_map(|i| b.cell(i))
            .map(|c| c.0)
            .collect();
        w.put(cells.len() as u64, 4);
        for c in cells {
            w.put(c as u64, 6);
        }
        for i in 0..b.ncols() {
            let col = b.column(i);
            w.put(col.len() as u64, 6);
            for (j, &c) in col.iter().enumerate() {
                if j > 0 {
                    let p = col[j - 1] as usize;
                    if let Some(k) = self.children[p].iter().position(|&x| x == c) {
                        w.put(1, 1);
                        w.put(k as u64, self.bits[p] as u32);
                        continue;
                    }
                    w.put(0, 1);
                }
                w.put(c as u64, 6);
            }
        }
        w.finish();
        let len = out.len() - start - 1;
        debug_assert!(len <= 255);
        out[start] = len as u8;
    }

    /// Replaces the origin of a record (without its length byte).
    pub fn set_origin(rec: &mut [u8], origin: Origin) {
        rec[0] = origin.layer;
        rec[1..5].copy_from_slice(&origin.root.to_le_bytes());
    }

    /// The origin of one record (without its length byte).
    pub fn origin(rec: &[u8]) -> Origin {
        Origin {
            layer: rec[0],
            root: u32::from_le_bytes(rec[1..5].try_into().unwrap()),
        }
    }

    /// Reads the position of a record (without its length byte): its
    /// foundations and cell cards into `found` and `cells` (returning how
    /// many cells are taken), then each column in turn to `to`.
    #[inline(always)]
    fn read(
        &self,
        rec: &[u8],
        found: &mut [u8; 4],
        cells: &mut [u8; MAX_CELLS],
        to: &mut impl Columns,
    ) -> usize {
        let mut r = BitReader::new(&rec[5..]);
        for f in found.iter_mut() {
            *f = r.get(4) as u8;
        }
        let n = r.get(4) as usize;
        for c in cells.iter_mut().take(n) {
            *c = r.get(6) as u8;
        }
        for _ in 0..self.variant.columns {
            let l = r.get(6) as usize;
            let mut last = 0u8;
            for j in 0..l {
                let c = if j > 0 && r.get(1) == 1 {
                    let p = last as usize;
                    self.children[p][r.get(self.bits[p] as u32) as usize]
                } else {
                    r.get(6) as u8
                };
                to.card(j, c);
                last = c;
            }
            to.end(l);
        }
        n
    }

    /// The position and origin of one record (without its length byte).
    pub fn decode(&self, rec: &[u8]) -> (Board, Origin) {
        let origin = Self::origin(rec);
        let mut found = [0u8; 4];
        let mut cells = [0xFFu8; MAX_CELLS];
        let ncols = self.variant.columns as usize;
        let mut to = Parts {
            lens: [0; MAX_COLUMNS],
            cards: [0; 52],
            k: 0,
            col: 0,
        };
        self.read(rec, &mut found, &mut cells, &mut to);
        let p = Packed::from_parts(
            &to.lens[..ncols],
            found,
            &cells[..self.variant.cells as usize],
            &to.cards[..to.k],
        );
        (Board::unpack(&p, self.variant), origin)
    }

    /// The fingerprint of a record's position (`Board::fingerprint` of
    /// `decode`'s board), worked out as it is read, without the board: most
    /// waiting positions were met before their turn, which this finds out
    /// at a fraction of the cost of building them.
    pub fn fingerprint(&self, rec: &[u8]) -> u128 {
        let mut found = [0u8; 4];
        let mut cells = [0xFFu8; MAX_CELLS];
        let mut fp = FpBuilder::default();
        let n = self.read(rec, &mut found, &mut cells, &mut fp);
        for &c in &cells[..n] {
            fp.cell(c);
        }
        fp.finish()
    }
}

/// Where `Codec::read` puts a position's columns.
trait Columns {
    /// The card at `depth` (0: the bottom) of the column being read.
    fn card(&mut self, depth: usize, card: u8);
    /// The end of a column of `len` cards.
    fn end(&mut self, len: usize);
}

/// The columns as `Packed::from_parts` takes them.
struct Parts {
    lens: [u8; MAX_COLUMNS],
    cards: [u8; 52],
    k: usize,
    col: usize,
}

impl Columns for Parts {
    #[inline(always)]
    fn card(&mut self, _: usize, card: u8) {
        self.cards[self.k] = card;
        self.k += 1;
    }
    #[inline(always)]
    fn end(&mut self, len: usize) {
        self.lens[self.col] = len as u8;
        self.col += 1;
    }
}

impl Columns for FpBuilder {
    #[inline(always)]
    fn card(&mut self, depth: usize, card: u8) {
        FpBuilder::card(self, card, depth);
    }
    #[inline(always)]
    fn end(&mut self, _: usize) {
        self.end_column();
    }
}

struct BitWriter<'a> {
    out: &'a mut Vec<u8>,
    acc: u64,
    n: u32,
}

impl<'a> BitWriter<'a> {
    fn new(out: &'a mut Vec<u8>) -> Self {
        BitWriter { out, acc: 0, n: 0 }
    }

    /// Appends the low `bits` (at most 32) bits of `v`, four bytes at a
    /// time.
    #[inline]
    fn put(&mut self, v: u64, bits: u32) {
        debug_assert!(bits <= 32 && v >> bits == 0);
        self.acc |= v << self.n;
        self.n += bits;
        if self.n >= 32 {
            self.out.extend_from_slice(&(self.acc as u32).to_le_bytes());
            self.acc >>= 32;
            self.n -= 32;
        }
    }

    fn finish(self) {
        let bytes = self.n.div_ceil(8) as usize;
        self.out.extend_from_slice(&self.acc.to_le_bytes()[..bytes]);
    }
}

struct BitReader<'a> {
    data: &'a [u8],
    pos: usize,
    acc: u64,
    n: u32,
}

impl<'a> BitReader<'a> {
    fn new(data: &'a [u8]) -> Self {
        BitReader {
            data,
            pos: 0,
            acc: 0,
            n: 0,
        }
    }

    /// The next `bits` (at most 32) bits.
    #[inline]
    fn get(&mut self, bits: u32) -> u64 {
        if self.n < bits {
            self.refill();
        }
        let v = self.acc & ((1u64 << bits) - 1);
        self.acc >>= bits;
        self.n -= bits;
        v
    }

    /// At least 56 bits in `acc`: a whole little-endian word where 8 bytes
    /// are left (its bits past `n` are the bytes the next refill loads
    /// again at the same places, so OR-ing them twice changes nothing),
    /// byte by byte at the end (zeros past it).
    #[inline]
    fn refill(&mut self) {
        if let Some(w) = self.data.get(self.pos..self.pos + 8) {
            self.acc |= u64::from_le_bytes(w.try_into().unwrap()) << self.n;
            self.pos += ((63 - self.n) >> 3) as usize;
            self.n |= 56;
            return;
        }
        while self.n <= 56 {
            let b = self.data.get(self.pos).copied().unwrap_or(0);
            self.pos += 1;
            self.acc |= (b as u64) << self.n;
            self.n += 8;
        }
    }
}

// ---------------------------------------------------------------------------
// Spill files.

/// An unlinked temporary file.
struct SpillFile {
    f: File,
    len: u64,
}

#[cfg(target_os = "linux")]
pub(crate) fn unlinked_file(dir: &Path) -> io::Result<File> {
    use std::os::unix::fs::OpenOptionsExt;
    // O_TMPFILE (__O_TMPFILE | O_DIRECTORY): a file with no name, gone
    // when closed. The value is the same on every Linux architecture Rust
    // supports but alpha, sparc and parisc; `create_unlinked` is the
    // fallback when the file system refuses it.
    const O_TMPFILE: i32 = 0o20_000_000 | 0o200_000;
    match std::fs::OpenOptions::new()
        .read(true)
        .write(true)
        .custom_flags(O_TMPFILE)
        .mode(0o600)
        .open(dir)
    {
        Ok(f) => Ok(f),
        Err(_) => create_unlinked(dir),
    }
}

#[cfg(not(target_os = "linux"))]
pub(crate) fn unlinked_file(dir: &Path) -> io::Result<File> {
    create_unlinked(dir)
}

/// Creates a file with a fresh name and removes the name at once.
fn create_unlinked(dir: &Path) -> io::Result<File> {
    use std::sync::atomic::{AtomicU64, Ordering};
    static NEXT: AtomicU64 = AtomicU64::new(0);
    loop {
        let n = NEXT.fetch_add(1, Ordering::Relaxed);
        let path = dir.join(format!(".fca-proof-{}-{n}.tmp", std::process::id()));
        match std::fs::OpenOptions::new()
            .read(true)
            .write(true)
            .create_new(true)
            .open(&path)
        {
            Ok(f) => {
                std::fs::remove_file(&path)?;
                return Ok(f);
            }
            Err(e) if e.kind() == io::ErrorKind::AlreadyExists => continue,
            Err(e) => return Err(e),
        }
    }
}

/// The most bytes of records in one compressed frame of a spill file.
const FRAME: usize = 1 << 20;

/// zstd's level for spill frames. Records written one after another
/// describe neighbouring positions (a search's exits, a level's children
/// in their parents' order) and compress well: a waiting-positions file of
/// MS 1968 with 1 cell to about a fifth (levels 1 to 3: 0.21 to 0.19 of
/// the bytes, at about 350 MB/s on this machine's cores).
const LEVEL: i32 = 3;

/// Records in memory and, past a point, in a file of compressed frames:
/// appended, then read back in order (file first).
#[derive(Default)]
pub(super) struct Log {
    buf: Vec<u8>,
    file: Option<SpillFile>,
    count: u64,
}

impl Log {
    pub(super) fn disk(&self) -> u64 {
        self.file.as_ref().map_or(0, |f| f.len)
    }

    pub(super) fn ram(&self) -> u64 {
        self.buf.capacity() as u64
    }

    /// Records appended.
    pub(super) fn len(&self) -> u64 {
        self.count
    }

    /// Appends a record (without its length byte).
    pub(super) fn append(&mut self, rec: &[u8]) {
        self.buf.push(rec.len() as u8);
        self.buf.extend_from_slice(rec);
        self.count += 1;
    }

    /// Appends a record (without its length byte) with its origin
    /// replaced.
    pub(super) fn append_as(&mut self, rec: &[u8], origin: Origin) {
        let at = self.buf.len() + 1;
        self.append(rec);
        Codec::set_origin(&mut self.buf[at..], origin);
    }

    /// Moves the records in memory to the file, compressed, unless that
    /// takes more than `room` bytes of disk; returns the bytes written.
    /// The records go in frames of at most `FRAME` bytes (whole records),
    /// each compressed alone and written as it is made, so neither the
    /// writer nor the reader holds more than a frame besides the buffer.
    /// When the frames outgrow `room` the file keeps those written and the
    /// error is `StoreError::Disk`: the proof ends there.
    pub(super) fn spill(&mut self, dir: &Path, room: u64) -> Result<u64, StoreError> {
        if self.buf.is_empty() {
            return Ok(0);
        }
        if self.file.is_none() {
            self.file = Some(SpillFile {
                f: unlinked_file(dir)?,
                len: 0,
            });
        }
        let sf = self.file.as_mut().unwrap();
        sf.f.seek(SeekFrom::End(0))?;
        let mut w = io::BufWriter::with_capacity(1 << 20, &mut sf.f);
        let mut z = zstd::bulk::Compressor::new(LEVEL)?;
        let mut written = 0u64;
        let mut i = 0;
        while i < self.buf.len() {
            let start = i;
            while i < self.buf.len() && i - start + 1 + self.buf[i] as usize <= FRAME {
                i += 1 + self.buf[i] as usize;
            }
            let packed = z.compress(&self.buf[start..i])?;
            let n = 8 + packed.len() as u64;
            if written + n > room {
                w.flush()?;
                sf.len += written;
                return Err(StoreError::Disk);
            }
            w.write_all(&((i - start) as u32).to_le_bytes())?;
            w.write_all(&(packed.len() as u32).to_le_bytes())?;
            w.write_all(&packed)?;
            written += n;
        }
        w.flush()?;
        sf.len += written;
        self.buf = Vec::new();
        Ok(written)
    }

    /// Calls `each` on every record (without its length byte), in order.
    pub(super) fn for_each(&mut self, mut each: impl FnMut(&[u8]) -> bool) -> io::Result<()> {
        if let Some(sf) = self.file.as_mut() {
            sf.f.seek(SeekFrom::Start(0))?;
            let mut r = BufReader::with_capacity(1 << 20, (&mut sf.f).take(sf.len));
            let mut z = zstd::bulk::Decompressor::new()?;
            let mut packed = Vec::new();
            let mut raw = vec![0u8; FRAME];
            loop {
                let mut head = [0u8; 8];
                match r.read_exact(&mut head) {
                    Ok(()) => {}
                    Err(e) if e.kind() == io::ErrorKind::UnexpectedEof => break,
                    Err(e) => return Err(e),
                }
                let raw_len = u32::from_le_bytes(head[..4].try_into().unwrap()) as usize;
                let packed_len = u32::from_le_bytes(head[4..].try_into().unwrap()) as usize;
                packed.resize(packed_len, 0);
                r.read_exact(&mut packed)?;
                if raw_len > FRAME || z.decompress_to_buffer(&packed, &mut raw)? != raw_len {
                    return Err(io::Error::other("a spill frame does not decompress"));
                }
                if !each_record(&raw[..raw_len], &mut each) {
                    return Ok(());
                }
            }
        }
        each_record(&self.buf, &mut each);
        Ok(())
    }
}

/// Calls `each` on every record of `bytes` (length-prefixed records) until
/// it returns false; whether it went to the end.
fn each_record(bytes: &[u8], each: &mut impl FnMut(&[u8]) -> bool) -> bool {
    let mut i = 0;
    while i < bytes.len() {
        let n = bytes[i] as usize;
        if !each(&bytes[i + 1..i + 1 + n]) {
            return false;
        }
        i += 1 + n;
    }
    true
}

/// One layer's waiting positions, taken out of the store.
pub struct Batch(pub(super) Log);

impl Batch {
    /// Bytes it holds in memory.
    pub fn ram(&self) -> u64 {
        self.0.buf.capacity() as u64
    }

    /// Calls `each` on every record (without its length byte), in the order
    /// they were added, until `each` returns false.
    pub fn for_each(&mut self, each: impl FnMut(&[u8]) -> bool) -> io::Result<()> {
        self.0.for_each(each)
    }
}

/// Why storing a record failed.
#[derive(Debug)]
pub enum StoreError {
    /// The disk budget would be exceeded, or spilling is not allowed.
    Disk,
    /// Writing or reading a spill file failed.
    Io(io::Error),
}

impl From<io::Error> for StoreError {
    fn from(e: io::Error) -> Self {
        StoreError::Io(e)
    }
}

/// Direct-mapped cache of recent records' fingerprints: a record whose
/// fingerprint is there is the same position as one already stored, and is
/// dropped (whatever its origin: any one will do).
/// It starts small (a proof of a few positions pays nothing for it) and
/// grows with the records added, up to `DEDUPE_MAX` slots (16 bytes each).
const DEDUPE_MIN: usize = 1 << 8;
const DEDUPE_MAX: usize = 1 << 18;

/// The waiting positions of every later layer, and the roots of the layers
/// searched so far.
pub struct Store {
    pending: BTreeMap<u32, Log>,
    roots: BTreeMap<u32, Log>,
    recent: Vec<u128>,
    /// Bytes of records in memory.
    ram: u64,
    /// Bytes in spill files now, and at most (with `other_disk`).
    disk: u64,
    pub peak_disk: u64,
    max_disk: u64,
    /// Bytes of other files under the same budget (the prover's
    /// breadth-first levels and sort runs), set by their owner.
    other_disk: u64,
    dedupe_max: usize,
    dir: Option<PathBuf>,
    /// Records added and dropped as duplicates.
    pub added: u64,
    pub dropped: u64,
}

/// The store's disk accounting, borrowed beside one of its logs: a spill
/// gets the room left under `max` (with the other files' `other` bytes),
/// and the bytes it wrote count in `disk` and the peak even when it stops
/// on the budget.
struct DiskBudget<'a> {
    max: u64,
    other: u64,
    disk: &'a mut u64,
    peak: &'a mut u64,
}

impl DiskBudget<'_> {
    fn spill(self, log: &mut Log, dir: &Path) -> Result<(), StoreError> {
        let room = self.max.saturating_sub(*self.disk + self.other);
        let before = log.disk();
        let spilled = log.spill(dir, room);
        *self.disk += log.disk() - before;
        *self.peak = (*self.peak).max(*self.disk + self.other);
        spilled.map(|_| ())
    }
}

impl Store {
    /// A store that may spill up to `max_disk` bytes into `dir` (no spilling
    /// without a directory or with a budget of 0).
    /// The dedupe cache takes at most 1/64 of `max_bytes`.
    pub fn new(dir: Option<PathBuf>, max_disk: u64, max_bytes: u64) -> Store {
        Store {
            pending: BTreeMap::new(),
            roots: BTreeMap::new(),
            recent: vec![0; DEDUPE_MIN],
            ram: 0,
            disk: 0,
            peak_disk: 0,
            max_disk,
            other_disk: 0,
            dedupe_max: ((max_bytes / 64 / 16) as usize)
                .next_power_of_two()
                .clamp(DEDUPE_MIN, DEDUPE_MAX),
            dir,
            added: 0,
            dropped: 0,
        }
    }

    /// Bytes of records held in memory (buffers' capacity).
    pub fn ram(&self) -> u64 {
        self.ram
    }

    /// Bytes in spill files now.
    pub fn disk(&self) -> u64 {
        self.disk
    }

    /// Counts `bytes` of other files against the budget: the store spills
    /// only while its files and those fit in `max_disk` together.
    pub fn set_other_disk(&mut self, bytes: u64) {
        self.other_disk = bytes;
        self.peak_disk = self.peak_disk.max(self.disk + bytes);
    }

    pub fn can_spill(&self) -> bool {
        self.dir.is_some() && self.max_disk > 0
    }

    /// Adds a position for layer `layer`, unless a recent record was the
    /// same position (`fp`).
    pub fn push(&mut self, codec: &Codec, layer: u32, fp: u128, b: &Board, origin: Origin) {
        if self.added as usize >= 4 * self.recent.len() && self.recent.len() < self.dedupe_max {
            let n = self.recent.len() * 4;
            self.ram += (n - self.recent.len()) as u64 * 16;
            self.recent = vec![0; n];
        }
        let slot = (fp as usize) & (self.recent.len() - 1);
        if self.recent[slot] == fp {
            self.dropped += 1;
            return;
        }
        self.recent[slot] = fp;
        self.added += 1;
        let log = self.pending.entry(layer).or_default();
        let before = log.buf.capacity();
        codec.encode(b, origin, &mut log.buf);
        log.count += 1;
        self.ram += (log.buf.capacity() - before) as u64;
    }

    /// Adds a position its own layer's search left for later (never
    /// dropped as a repeat: it is in the visited set, so it is unique).
    pub fn push_deferred(&mut self, codec: &Codec, layer: u32, b: &Board, origin: Origin) {
        let log = self.pending.entry(layer).or_default();
        let before = log.buf.capacity();
        codec.encode(b, origin, &mut log.buf);
        log.count += 1;
        self.ram += (log.buf.capacity() - before) as u64;
    }

    /// The lowest layer with positions waiting.
    pub fn next_layer(&self) -> Option<u32> {
        self.pending.keys().next().copied()
    }

    /// Moves every record in memory to disk (pending positions first, the
    /// largest logs first), until at most `keep` bytes stay in memory.
    pub fn spill(&mut self, keep: u64) -> Result<(), StoreError> {
        let Some(dir) = self.dir.clone() else {
            return Err(StoreError::Disk);
        };
        let mut sizes: Vec<(u64, bool, u32)> = self
            .pending
            .iter()
            .map(|(&k, l)| (l.buf.capacity() as u64, true, k))
            .chain(
                self.roots
                    .iter()
                    .map(|(&k, l)| (l.buf.capacity() as u64, false, k)),
            )
            .filter(|s| s.0 > 0)
            .collect();
        sizes.sort_by(|a, b| b.cmp(a));
        for (size, pending, k) in sizes {
            if self.ram <= keep {
                break;
            }
            let log = if pending {
                self.pending.get_mut(&k).unwrap()
            } else {
                self.roots.get_mut(&k).unwrap()
            };
            let budget = DiskBudget {
                max: self.max_disk,
                other: self.other_disk,
                disk: &mut self.disk,
                peak: &mut self.peak_disk,
            };
            budget.spill(log, &dir)?;
            self.ram -= size;
        }
        Ok(())
    }

    /// Takes layer `layer`'s waiting positions out, to read with
    /// `Batch::for_each`; hand the batch back to `release` afterwards.
    pub fn take(&mut self, layer: u32) -> Option<Batch> {
        let log = self.pending.remove(&layer)?;
        self.ram -= log.buf.capacity() as u64;
        Some(Batch(log))
    }

    /// Moves a taken batch's records to disk (they are read once more,
    /// in order, while the layer is searched).
    pub fn spill_batch(&mut self, batch: &mut Batch) -> Result<(), StoreError> {
        let Some(dir) = self.dir.clone() else {
            return Err(StoreError::Disk);
        };
        let budget = DiskBudget {
            max: self.max_disk,
            other: self.other_disk,
            disk: &mut self.disk,
            peak: &mut self.peak_disk,
        };
        budget.spill(&mut batch.0, &dir)
    }

    /// Gives a batch's disk space back.
    pub fn release(&mut self, batch: Batch) {
        self.disk -= batch.0.disk();
    }

    /// Keeps root number `count_roots(layer)` of `layer`: the fingerprint
    /// of the position of `rec` (a record as `Batch::for_each` gives it) and
    /// the record's origin, 21 bytes instead of the whole record. A solution
    /// finds each root again by its fingerprint from its own origin's root
    /// (`super::Prover::trace_back`).
    pub fn keep_root(&mut self, layer: u32, fp: u128, rec: &[u8]) -> u32 {
        let log = self.roots.entry(layer).or_default();
        let before = log.buf.capacity();
        log.buf.push(21);
        log.buf.extend_from_slice(&fp.to_le_bytes());
        log.buf.extend_from_slice(&rec[..5]);
        log.count += 1;
        self.ram += (log.buf.capacity() - before) as u64;
        (log.count - 1) as u32
    }

    /// Root `index` of `layer`: its position's fingerprint and its origin.
    pub fn root(&mut self, layer: u32, index: u32) -> io::Result<Option<(u128, Origin)>> {
        let Some(log) = self.roots.get_mut(&layer) else {
            return Ok(None);
        };
        let mut i = 0u32;
        let mut found = None;
        log.for_each(|rec| {
            if i == index {
                let fp = u128::from_le_bytes(rec[..16].try_into().unwrap());
                let origin = Origin {
                    layer: rec[16],
                    root: u32::from_le_bytes(rec[17..21].try_into().unwrap()),
                };
                found = Some((fp, origin));
                return false;
            }
            i += 1;
            true
        })?;
        Ok(found)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Bit streams of every width and length read back as written, the
    /// last bytes (no whole word left) included.
    #[test]
    fn bits_round_trip() {
        let mut state = 0x9E37_79B9_7F4A_7C15u64;
        let mut next = move || {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            state
        };
        for len in 0..200 {
            let items: Vec<(u64, u32)> = (0..len)
                .map(|_| {
                    let bits = (next() % 32) as u32 + 1;
                    (next() & ((1u64 << bits) - 1), bits)
                })
                .collect();
            let mut out = Vec::new();
            let mut w = BitWriter::new(&mut out);
            for &(v, bits) in &items {
                w.put(v, bits);
            }
            w.finish();
            let total: u32 = items.iter().map(|i| i.1).sum();
            assert_eq!(out.len(), total.div_ceil(8) as usize);
            let mut r = BitReader::new(&out);
            for &(v, bits) in &items {
                assert_eq!(r.get(bits), v);
            }
        }
    }

    #[test]
    fn records_round_trip() {
        for name in ["freecell", "bakers_game", "seahaven_towers", "eight_off"] {
            let v = Variant::named(name).unwrap();
            let codec = Codec::new(v);
            for n in [1u64, 617, 11982, 8_589_934_591] {
                let mut b = Board::deal(n, v).unwrap();
                let mut ms = Vec::new();
                // Walk a little so that runs form and cards go home.
                for step in 0..40 {
                    ms.clear();
                    b.gen_moves(&mut ms, false);
                    if ms.is_empty() {
                        break;
                    }
                    let m = ms[(step * 7 + n as usize) % ms.len()];
                    b.apply_checked(m).unwrap();
                    let o = Origin {
                        layer: step as u8,
                        root: n as u32,
                    };
                    let mut buf = Vec::new();
                    codec.encode(&b, o, &mut buf);
                    assert_eq!(buf[0] as usize, buf.len() - 1);
                    let (d, o2) = codec.decode(&buf[1..]);
                    assert_eq!(o2, o);
                    assert_eq!(d.fingerprint(), b.fingerprint());
                    // Worked out without building the board, the same.
                    assert_eq!(codec.fingerprint(&buf[1..]), b.fingerprint());
                    assert_eq!(d.foundations(), b.foundations());
                }
            }
        }
    }

    /// A spill of more records than a frame holds comes back whole and in
    /// order, compressed (neighbouring positions share most of their
    /// bytes); a spill that would outgrow its room writes no frame past it
    /// and says so.
    #[test]
    fn spills_span_frames_compress_and_keep_their_room() {
        let dir = std::env::temp_dir().join(format!("fca-frames-test-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let v = Variant::default();
        let codec = Codec::new(v);
        let mut b = Board::deal(617, v).unwrap();
        let (mut log, mut full) = (Log::default(), Log::default());
        let mut fps = Vec::new();
        let (mut ms, mut rec) = (Vec::new(), Vec::new());
        let mut raw = 0u64;
        for step in 0..120_000usize {
            ms.clear();
            b.gen_moves(&mut ms, false);
            if ms.is_empty() {
                b = Board::deal(618 + step as u64, v).unwrap();
                b.gen_moves(&mut ms, false);
            }
            let m = ms[(step * 7919) % ms.len()];
            b.apply_checked(m).unwrap();
            rec.clear();
            codec.encode(
                &b,
                Origin {
                    layer: 2,
                    root: step as u32,
                },
                &mut rec,
            );
            raw += rec.len() as u64;
            log.append(&rec[1..]);
            full.append(&rec[1..]);
            fps.push(b.fingerprint());
            if step == 50_000 {
                log.spill(&dir, u64::MAX).unwrap();
            }
        }
        assert!(raw > 2 * FRAME as u64, "the records span frames");
        log.spill(&dir, u64::MAX).unwrap();
        assert_eq!(log.ram(), 0);
        assert!(
            log.disk() * 2 < raw,
            "{} bytes on disk for {raw}",
            log.disk()
        );
        let mut i = 0;
        log.for_each(|r| {
            let (d, o) = codec.decode(r);
            assert_eq!((d.fingerprint(), o.root), (fps[i], i as u32));
            i += 1;
            true
        })
        .unwrap();
        assert_eq!(i, fps.len());
        let room = log.disk() / 3;
        assert!(matches!(full.spill(&dir, room), Err(StoreError::Disk)));
        assert!(full.disk() > 0 && full.disk() <= room);
        std::fs::remove_dir(&dir).unwrap();
    }

    #[test]
    fn spilled_records_come_back_in_order_and_leave_no_file() {
        let dir = std::env::temp_dir().join(format!("fca-seeds-test-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let v = Variant::default();
        let codec = Codec::new(v);
        let mut store = Store::new(Some(dir.clone()), 1 << 30, 1 << 30);
        let boards: Vec<Board> = (1..=300).map(|n| Board::deal(n, v).unwrap()).collect();
        for (i, b) in boards.iter().enumerate() {
            store.push(
                &codec,
                3,
                b.fingerprint(),
                b,
                Origin {
                    layer: 1,
                    root: i as u32,
                },
            );
            if i % 100 == 99 {
                store.spill(0).unwrap();
            }
        }
        assert!(store.peak_disk > 0);
        assert_eq!(
            std::fs::read_dir(&dir).unwrap().count(),
            0,
            "spill files have no name"
        );
        let mut got = Vec::new();
        let mut batch = store.take(3).unwrap();
        batch
            .for_each(|rec| {
                got.push(codec.decode(rec));
                true
            })
            .unwrap();
        store.release(batch);
        assert_eq!(got.len(), 300);
        for (i, (b, o)) in got.iter().enumerate() {
            assert_eq!(b.fingerprint(), boards[i].fingerprint());
            assert_eq!(o.root, i as u32);
        }
        assert_eq!(store.disk, 0);
        std::fs::remove_dir(&dir).unwrap();
    }
}
