//! What the examples share: their command lines (`START END`, then `--name
//! value` options and `--flag`s), the variant and limits those name, and
//! the deals to solve.
#![allow(dead_code)] // each example uses a part

use engine::solver::{Limits, Tuning};
use engine::{MoveRule, Variant};
use std::str::FromStr;

/// A parsed command line.
pub struct Args {
    pub positional: Vec<String>,
    values: Vec<(String, String)>,
    flags: Vec<String>,
}

impl Args {
    /// The process's arguments: options that take a value are `values`,
    /// those that do not are `flags`; anything else starting with `--` is
    /// an error.
    pub fn parse(values: &[&str], flags: &[&str]) -> Result<Args, String> {
        let mut out = Args {
            positional: Vec::new(),
            values: Vec::new(),
            flags: Vec::new(),
        };
        let mut it = std::env::args().skip(1);
        while let Some(a) = it.next() {
            if values.contains(&a.as_str()) {
                let v = it.next().ok_or_else(|| format!("{a} needs a value"))?;
                out.values.push((a, v));
            } else if flags.contains(&a.as_str()) {
                out.flags.push(a);
            } else if a.starts_with("--") {
                return Err(format!("unknown option {a:?}"));
            } else {
                out.positional.push(a);
            }
        }
        Ok(out)
    }

    /// The last value of option `name`, parsed.
    pub fn value<T: FromStr>(&self, name: &str) -> Result<Option<T>, String> {
        match self.values.iter().rev().find(|(n, _)| n == name) {
            Some((_, v)) => v.parse().map(Some).map_err(|_| format!("bad {name} {v:?}")),
            None => Ok(None),
        }
    }

    pub fn flag(&self, name: &str) -> bool {
        self.flags.iter().any(|f| f == name)
    }

    /// Positional argument `i` as a number.
    pub fn number(&self, i: usize, what: &str) -> Result<u64, String> {
        let s = self
            .positional
            .get(i)
            .ok_or_else(|| format!("expected {what}"))?;
        s.parse()
            .map_err(|_| format!("{what} must be a number, not {s:?}"))
    }

    /// Freecell with `--cells K` and `--move-rule R`.
    pub fn variant(&self) -> Result<Variant, String> {
        let mut v = Variant::default();
        if let Some(k) = self.value::<u8>("--cells")? {
            v = v.with_cells(k);
        }
        if let Some(r) = self.value::<MoveRule>("--move-rule")? {
            v = v.with_move_rule(r);
        }
        Ok(v)
    }

    /// The default limits with `--max-positions N`, `--max-bytes N` and
    /// `--max-disk N` (the prover's spill files, in the temporary
    /// directory; none by default, where the command line allows 8 GiB).
    pub fn limits(&self) -> Result<Limits, String> {
        let mut l = Limits::default();
        if let Some(n) = self.value("--max-positions")? {
            l.max_positions = n;
        }
        if let Some(n) = self.value("--max-bytes")? {
            l.max_bytes = n;
        }
        if let Some(n) = self.value("--max-disk")? {
            l.max_disk = n;
            l.spill_dir = Some(std::env::temp_dir());
        }
        Ok(l)
    }

    /// The settings of `--tuning FILE`, or the shipped ones.
    pub fn tuning(&self) -> Result<Tuning, String> {
        match self.value::<String>("--tuning")? {
            Some(path) => {
                let text = std::fs::read_to_string(&path).map_err(|e| format!("{path}: {e}"))?;
                Tuning::from_toml(&text).map_err(|e| format!("{path}: {e}"))
            }
            None => Ok(Tuning::shipped().clone()),
        }
    }

    /// The deal numbers of `--deals FILE` (whitespace-separated), or
    /// `start..=end`.
    pub fn deals(&self, start: u64, end: u64) -> Result<Vec<u64>, String> {
        match self.value::<String>("--deals")? {
            Some(path) => std::fs::read_to_string(&path)
                .map_err(|e| format!("{path}: {e}"))?
                .split_whitespace()
                .map(|x| {
                    x.parse()
                        .map_err(|_| format!("{path}: not a deal number: {x:?}"))
                })
                .collect(),
            None => Ok((start..=end).collect()),
        }
    }
}
