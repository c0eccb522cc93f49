//! The bottom of a depth-first search's path on disk (`complete::Search`).
//!
//! A depth-first search of a large reachable set keeps a long path: on
//! MS 13599 with 1 cell the complete search's path passed 3 M positions
//! after 12.6 M expansions, each with its waiting children, so its stacks
//! held more memory than its visited set. Only the top of the path is ever
//! touched until the search backs up to the bottom, so the bottom half of
//! the stacks goes to a file, in segments, when they fill their share of
//! the memory, and the last segment is read back when the search has
//! backed up through everything above it. Last in, first out: the file is
//! written and read from its end, and truncated as segments come back.
//! It is created without a name (`unlinked_file`), so no exit path, a kill
//! included, leaves it behind.

use crate::prover::seeds::unlinked_file;
use std::fs::File;
use std::io;
use std::os::unix::fs::FileExt;
use std::path::Path;

/// One segment: its bytes in the file and what it holds.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) struct Segment {
    offset: u64,
    bytes: u64,
    /// Items of each stack (frames, children, automatic moves).
    pub counts: [usize; 3],
}

pub(super) struct PathFile {
    file: File,
    /// Bottom first.
    segments: Vec<Segment>,
    /// Bytes in use (the end of the last segment).
    end: u64,
    /// Most bytes in use at once.
    pub peak: u64,
    max_disk: u64,
}

/// Why a segment could not be written: the disk budget, or the disk.
#[derive(Debug)]
pub(super) enum SpillError {
    Budget,
    Io,
}

impl PathFile {
    /// A file in `dir` for at most `max_disk` bytes at once.
    pub(super) fn new(dir: &Path, max_disk: u64) -> io::Result<PathFile> {
        Ok(PathFile {
            file: unlinked_file(dir)?,
            segments: Vec::new(),
            end: 0,
            peak: 0,
            max_disk,
        })
    }

    /// Bytes in use.
    pub(super) fn disk(&self) -> u64 {
        self.end
    }

    /// Writes `bytes` as the newest segment, holding `counts` items.
    pub(super) fn push(&mut self, bytes: &[u8], counts: [usize; 3]) -> Result<(), SpillError> {
        let n = bytes.len() as u64;
        if self.end + n > self.max_disk {
            return Err(SpillError::Budget);
        }
        self.file
            .write_all_at(bytes, self.end)
            .map_err(|_| SpillError::Io)?;
        self.segments.push(Segment {
            offset: self.end,
            bytes: n,
            counts,
        });
        self.end += n;
        self.peak = self.peak.max(self.end);
        Ok(())
    }

    /// Reads the newest segment back into `out` (cleared first) and frees
    /// its bytes; `None` when there is none.
    pub(super) fn pop(&mut self, out: &mut Vec<u8>) -> Option<io::Result<[usize; 3]>> {
        let s = self.segments.pop()?;
        out.clear();
        out.resize(s.bytes as usize, 0);
        if let Err(e) = self.file.read_exact_at(out, s.offset) {
            return Some(Err(e));
        }
        self.end = s.offset;
        // Gives the disk back: the file only ever shrinks to a segment's start.
        Some(self.file.set_len(self.end).map(|()| s.counts))
    }

    /// Every segment's bytes, bottom first (a solution's path), left in place.
    pub(super) fn each(&self, mut f: impl FnMut(&[u8], [usize; 3])) -> io::Result<()> {
        let mut buf = Vec::new();
        for s in &self.segments {
            buf.resize(s.bytes as usize, 0);
            self.file.read_exact_at(&mut buf, s.offset)?;
            f(&buf, s.counts);
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn segments_come_back_last_first_and_free_their_bytes() {
        let dir = std::env::temp_dir();
        let mut p = PathFile::new(&dir, 100).unwrap();
        p.push(&[1, 2, 3], [1, 2, 3]).unwrap();
        p.push(&[4; 50], [4, 5, 6]).unwrap();
        assert!(matches!(p.push(&[0; 48], [0; 3]), Err(SpillError::Budget)));
        assert_eq!((p.disk(), p.peak), (53, 53));
        let mut seen = Vec::new();
        p.each(|b, c| seen.push((b.to_vec(), c))).unwrap();
        assert_eq!(
            seen,
            vec![(vec![1, 2, 3], [1, 2, 3]), (vec![4; 50], [4, 5, 6])]
        );
        let mut out = Vec::new();
        assert_eq!(p.pop(&mut out).unwrap().unwrap(), [4, 5, 6]);
        assert_eq!(out, vec![4; 50]);
        assert_eq!(p.disk(), 3);
        assert_eq!(p.file.metadata().unwrap().len(), 3);
        p.push(&[7; 40], [7, 8, 9]).unwrap();
        assert_eq!(p.pop(&mut out).unwrap().unwrap(), [7, 8, 9]);
        assert_eq!(p.pop(&mut out).unwrap().unwrap(), [1, 2, 3]);
        assert_eq!(out, vec![1, 2, 3]);
        assert!(p.pop(&mut out).is_none());
        assert_eq!(p.peak, 53);
    }
}
