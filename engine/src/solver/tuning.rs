//! The search's settings as one value (`Tuning`): the portfolio's members
//! and schedule, and the complete search's share and orders. The shipped
//! settings are the data file `tuning.toml` beside this module, compiled in;
//! the engine reads no other (no environment, no files). Experiments read a
//! file of their own with `Tuning::from_toml` and pass it to
//! `solver::solve_with`.
//!
//! The file is a small part of TOML: `[table]` and `[[member]]` headers,
//! `key = value` lines with integers, booleans, or inline tables of
//! integers (the weights), and `#` comments.

use super::heuristic::Weights;
use crate::variant::MAX_CELLS;
use std::borrow::Cow;
use std::fmt;
use std::sync::LazyLock;

/// One member of the portfolio: a greedy best-first search.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct Member {
    /// The heuristic's weights.
    pub weights: Weights,
    /// The moves a player would make (`Board::gen_moves_pruned`); else the
    /// complete search's moves.
    pub pruned: bool,
    /// Raymond's automatic moves too (`Board::is_home_worthy`).
    pub eager: bool,
    /// Weight of the depth in the priority (0: greedy; 1: weighted-A*-like,
    /// slower on easy deals but far lighter on the hard tail).
    pub depth_weight: i32,
    /// Also try parks, compound moves: the cards above a buried card go to
    /// free cells, then the card goes home or onto another column's top
    /// card, in one step. Parks reach no new position (they are sequences
    /// of moves); they let the heuristic see past the cells they fill.
    pub parks: bool,
    /// The member quota from which this member takes turns (0: from the
    /// first round). Members start in order, so late ones come last, in
    /// order of joining.
    pub join: u64,
    /// The fewest cells of a game this member plays in; with fewer it
    /// takes no turn (`Tuning::for_cells`). Optional in the file (0).
    pub min_cells: u64,
    /// The most cells of a game this member plays in; with more it takes no
    /// turn (`Tuning::for_cells`).
    pub max_cells: u64,
}

/// The blocked-deal rule (`Tuning::blocked`).
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct Blocked {
    /// Most cards home in any position expanded, for a deal to be blocked.
    pub home: u32,
    /// The first member quota at which a deal may be found blocked.
    pub from: u64,
    /// The complete search's share: this times the members' expansions.
    pub factor: u64,
}

/// The first-move probe (`Tuning::probe`).
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct Probe {
    /// Each first move's first cap (a portfolio's expansions), doubled
    /// every round.
    pub quota: u64,
    /// Expansions the probe may spend in all.
    pub cap: u64,
}

/// The reserve (`Tuning::reserve`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Reserve {
    /// Expansions its members may spend in all.
    pub cap: u64,
    /// Its members (`reserve = true` in the file), all from the first
    /// round, each on its own (no shared set).
    pub members: Vec<Member>,
    /// After its members, a beam (`[beam]`; `None`: none).
    pub beam: Option<Beam>,
}

/// The reserve's beam (`solver::beam`): breadth-first, keeping the `width`
/// best positions of each depth by `weights`, up to `depth` moves.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct Beam {
    pub width: u64,
    pub depth: u64,
    pub weights: Weights,
}

/// Every setting that steers a search (docs/SOLVER.md, "The searches").
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Tuning {
    /// The portfolio's members, in the order they start.
    pub members: Vec<Member>,
    /// First member quota (expansions per member and round), doubled every
    /// round.
    pub quota: u64,
    /// Expansions the portfolio may spend in all before the complete search
    /// decides alone.
    pub cap: u64,
    /// A member's turn in the first `stagnation_rounds` rounds ends once
    /// its best score has not improved for this many expansions times the
    /// round's quota multiple, or at twice the quota (0: never early).
    pub stagnation: u64,
    pub stagnation_rounds: u32,
    /// A late member (`Member::join` above 0) shares its group's set of
    /// expanded positions only in games with at least this many cells;
    /// with fewer the others' set blocks the lines it would win by.
    pub late_shared_cells: u64,
    /// From a member quota of `complete_start` on, the complete search
    /// joins each round with 1/`complete_share` of the quota (a running
    /// total; 0: only after the portfolio).
    pub complete_share: u64,
    pub complete_start: u64,
    /// The order of the complete search while it joins the rounds.
    pub interleaved_order: Weights,
    /// The order of a complete search that decides alone after the
    /// portfolio (a new one, unless the interleaved one never started).
    pub final_order: Weights,
    /// A deal on which no member gets cards home gives the complete search
    /// a larger share (`None`: never).
    pub blocked: Option<Blocked>,
    /// A deal on which all members but one have run dry gives the complete
    /// search this many times the members' expansions (`None`: never).
    pub dry_factor: Option<u64>,
    /// Once the portfolio has spent its cap: a portfolio from each first
    /// move's position in turn, before the complete search decides alone
    /// (`None`: never).
    pub probe: Option<Probe>,
    /// Once the complete search has run out of memory or positions, before
    /// the prover: a portfolio of other members from the start (`None`:
    /// never).
    pub reserve: Option<Reserve>,
}

/// The settings the engine ships with: `tuning.toml`.
static SHIPPED: LazyLock<Tuning> = LazyLock::new(|| {
    Tuning::from_toml(include_str!("tuning.toml")).unwrap_or_else(|e| panic!("{e}"))
});

impl Tuning {
    /// The settings the engine ships with (`tuning.toml`).
    pub fn shipped() -> &'static Tuning {
        &SHIPPED
    }

    /// The reserve's members (none without a reserve).
    pub fn reserve_members(&self) -> &[Member] {
        self.reserve.as_ref().map_or(&[], |r| &r.members)
    }

    /// The settings for a game with `cells` cells: without the members that
    /// play only with fewer or only with more (`Member::max_cells`,
    /// `Member::min_cells`); borrowed when there are none.
    pub fn for_cells(&self, cells: u64) -> Cow<'_, Tuning> {
        let plays = |m: &Member| (m.min_cells..=m.max_cells).contains(&cells);
        if self.members.iter().chain(self.reserve_members()).all(plays) {
            return Cow::Borrowed(self);
        }
        let mut t = self.clone();
        t.members.retain(plays);
        t.reserve = t.reserve.take().and_then(|mut r| {
            r.members.retain(plays);
            (!r.members.is_empty()).then_some(r)
        });
        Cow::Owned(t)
    }

    /// Reads settings in the form of `tuning.toml`: every table and key of
    /// it (a weight left out weighs 0; `[blocked]`, `[dry]`, `[probe]` and
    /// `[reserve]` with its members may be left out, turning their rule
    /// off; a member's `min_cells` and `reserve` may be left out, 0 and
    /// false), nothing else.
    pub fn from_toml(text: &str) -> Result<Tuning, TuningError> {
        let mut tables = parse(text)?;
        let mut schedule =
            Table::take_one(&mut tables, "schedule")?.ok_or_else(|| missing("[schedule]"))?;
        let mut complete =
            Table::take_one(&mut tables, "complete")?.ok_or_else(|| missing("[complete]"))?;
        let blocked = Table::take_one(&mut tables, "blocked")?;
        let dry = Table::take_one(&mut tables, "dry")?;
        let probe = Table::take_one(&mut tables, "probe")?;
        let reserve = Table::take_one(&mut tables, "reserve")?;
        let beam = match Table::take_one(&mut tables, "beam")? {
            Some(mut t) => {
                let b = Beam {
                    width: t.int("width")?,
                    depth: t.int("depth")?,
                    weights: t.weights("weights")?,
                };
                t.done()?;
                if b.width == 0 || b.width > u32::MAX as u64 {
                    return Err(TuningError::at(
                        t.line,
                        format!("[beam] width must be 1 to {}", u32::MAX),
                    ));
                }
                Some((t.line, b))
            }
            None => None,
        };
        let mut members = Vec::new();
        let mut reserve_members = Vec::new();
        for t in tables.iter_mut().filter(|t| t.name == "member" && t.array) {
            let line = t.line;
            let in_reserve = t.flag_or("reserve", false)?;
            let m = Member {
                weights: t.weights("weights")?,
                pruned: t.flag("pruned")?,
                eager: t.flag("eager")?,
                depth_weight: t.int("depth_weight")?,
                parks: t.flag("parks")?,
                join: t.int("join")?,
                min_cells: t.int_or("min_cells", 0)?,
                max_cells: t.int("max_cells")?,
            };
            if !in_reserve {
                members.push(m);
            } else if m.join == 0 {
                reserve_members.push(m);
            } else {
                return Err(TuningError::at(
                    line,
                    "a reserve member starts with the reserve (join = 0)".to_string(),
                ));
            }
            t.done()?;
        }
        tables.retain(|t| !(t.name == "member" && t.array));
        if let Some(t) = tables.first() {
            return Err(TuningError::at(
                t.line,
                format!("unknown table [{}]", t.name),
            ));
        }
        let tuning = Tuning {
            members,
            quota: schedule.int("quota")?,
            cap: schedule.int("cap")?,
            stagnation: schedule.int("stagnation")?,
            stagnation_rounds: schedule.int("stagnation_rounds")?,
            late_shared_cells: schedule.int("late_shared_cells")?,
            complete_share: complete.int("share")?,
            complete_start: complete.int("start")?,
            interleaved_order: complete.weights("interleaved_order")?,
            final_order: complete.weights("final_order")?,
            blocked: match blocked {
                Some(mut t) => {
                    let b = Blocked {
                        home: t.int("home")?,
                        from: t.int("from")?,
                        factor: t.int("factor")?,
                    };
                    t.done()?;
                    Some(b)
                }
                None => None,
            },
            dry_factor: match dry {
                Some(mut t) => {
                    let f = t.int("factor")?;
                    t.done()?;
                    Some(f)
                }
                None => None,
            },
            probe: match probe {
                Some(mut t) => {
                    let p = Probe {
                        quota: t.int("quota")?,
                        cap: t.int("cap")?,
                    };
                    t.done()?;
                    Some(p)
                }
                None => None,
            },
            reserve: match (reserve, reserve_members.is_empty()) {
                (Some(mut t), false) => {
                    let cap = t.int("cap")?;
                    t.done()?;
                    Some(Reserve {
                        cap,
                        members: reserve_members,
                        beam: beam.map(|(_, b)| b),
                    })
                }
                (None, true) => match beam {
                    Some((line, _)) => {
                        return Err(TuningError::at(
                            line,
                            "[beam] is part of the reserve: it needs [reserve]".to_string(),
                        ))
                    }
                    None => None,
                },
                (Some(t), true) => {
                    return Err(TuningError::at(
                        t.line,
                        "[reserve] has no member (reserve = true)".to_string(),
                    ))
                }
                (None, false) => {
                    return Err(missing(
                        "[reserve] (its cap), for the members with reserve = true",
                    ))
                }
            },
        };
        schedule.done()?;
        complete.done()?;
        tuning.check()?;
        Ok(tuning)
    }

    /// What the search needs of the values themselves.
    fn check(&self) -> Result<(), TuningError> {
        let bad = |msg: &str| Err(TuningError(msg.to_string()));
        if self.members.is_empty() {
            return bad("no [[member]]: the portfolio needs one");
        }
        if self.members[0].join != 0 {
            return bad("the first member must start in the first round (join = 0)");
        }
        // Every game needs a member from the first round on.
        if self.members[0].min_cells != 0 || (self.members[0].max_cells as usize) < MAX_CELLS {
            return bad(&format!(
                "the first member must play with any number of cells (max_cells = {MAX_CELLS})"
            ));
        }
        if let Some(m) = self
            .members
            .iter()
            .chain(self.reserve_members())
            .find(|m| m.min_cells > m.max_cells)
        {
            return bad(&format!(
                "a member with min_cells = {} and max_cells = {} plays in no game",
                m.min_cells, m.max_cells
            ));
        }
        // `solve` starts members lazily, in order: a late member before an
        // earlier one would take the earlier one's place.
        if !self.members.windows(2).all(|w| w[0].join <= w[1].join) {
            return bad("late members must come last, in order of joining");
        }
        if self.quota == 0 {
            return bad("schedule.quota must be at least 1");
        }
        if self.stagnation_rounds >= 64 {
            return bad("schedule.stagnation_rounds must be below 64");
        }
        Ok(())
    }
}

/// Settings that could not be read.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TuningError(String);

impl TuningError {
    fn at(line: usize, msg: String) -> Self {
        TuningError(format!("line {line}: {msg}"))
    }
}

impl fmt::Display for TuningError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "tuning: {}", self.0)
    }
}

impl std::error::Error for TuningError {}

fn missing(what: &str) -> TuningError {
    TuningError(format!("{what} is missing"))
}

// ---------------------------------------------------------------------------
// The file.

/// A value: an integer, a boolean, or an inline table of integers.
#[derive(Clone, Debug)]
enum Value {
    Int(i64),
    Bool(bool),
    Table(Vec<(String, i64)>),
}

/// A table's keys in file order, each with its value and line; a key is
/// removed as it is read, so that what is left over is unknown.
struct Table {
    name: String,
    /// A `[[name]]` table.
    array: bool,
    line: usize,
    keys: Vec<(String, Value, usize)>,
}

impl Table {
    /// Removes and returns the one `[name]` table, if there is one.
    fn take_one(tables: &mut Vec<Table>, name: &str) -> Result<Option<Table>, TuningError> {
        let mut found = tables.iter().filter(|t| t.name == name);
        if let (Some(_), Some(t)) = (found.next(), found.next()) {
            return Err(TuningError::at(t.line, format!("[{name}] appears twice")));
        }
        match tables.iter().position(|t| t.name == name) {
            Some(i) if tables[i].array => Err(TuningError::at(
                tables[i].line,
                format!("[[{name}]] where [{name}] was expected"),
            )),
            Some(i) => Ok(Some(tables.remove(i))),
            None => Ok(None),
        }
    }

    fn take(&mut self, key: &str) -> Result<(Value, usize), TuningError> {
        match self.keys.iter().position(|k| k.0 == key) {
            Some(i) => {
                let (_, v, line) = self.keys.remove(i);
                Ok((v, line))
            }
            None => Err(TuningError::at(
                self.line,
                format!("[{}] has no {key}", self.name),
            )),
        }
    }

    /// An integer that fits `T`.
    fn int<T: TryFrom<i64>>(&mut self, key: &str) -> Result<T, TuningError> {
        match self.take(key)? {
            (Value::Int(n), line) => T::try_from(n)
                .map_err(|_| TuningError::at(line, format!("{key} = {n} is out of range"))),
            (_, line) => Err(TuningError::at(line, format!("{key} must be an integer"))),
        }
    }

    fn has(&self, key: &str) -> bool {
        self.keys.iter().any(|k| k.0 == key)
    }

    /// `int`, or `default` when the key is left out.
    fn int_or<T: TryFrom<i64>>(&mut self, key: &str, default: T) -> Result<T, TuningError> {
        if self.has(key) {
            self.int(key)
        } else {
            Ok(default)
        }
    }

    /// `flag`, or `default` when the key is left out.
    fn flag_or(&mut self, key: &str, default: bool) -> Result<bool, TuningError> {
        if self.has(key) {
            self.flag(key)
        } else {
            Ok(default)
        }
    }

    fn flag(&mut self, key: &str) -> Result<bool, TuningError> {
        match self.take(key)? {
            (Value::Bool(b), _) => Ok(b),
            (_, line) => Err(TuningError::at(
                line,
                format!("{key} must be true or false"),
            )),
        }
    }

    /// An inline table of weights by term name (`Weights::NAMES`).
    fn weights(&mut self, key: &str) -> Result<Weights, TuningError> {
        let (Value::Table(entries), line) = self.take(key)? else {
            return Err(TuningError::at(
                self.line,
                format!("{key} must be an inline table of weights"),
            ));
        };
        let mut w = Weights::default();
        for (name, n) in entries {
            let slot = w.get_mut(&name).ok_or_else(|| {
                TuningError::at(
                    line,
                    format!(
                        "{key}: unknown term {name:?}; expected one of: {}",
                        Weights::NAMES.join(", ")
                    ),
                )
            })?;
            *slot = i32::try_from(n).map_err(|_| {
                TuningError::at(line, format!("{key}.{name} = {n} is out of range"))
            })?;
        }
        Ok(w)
    }

    /// Fails on a key that was not read.
    fn done(&self) -> Result<(), TuningError> {
        match self.keys.first() {
            Some((k, _, line)) => Err(TuningError::at(
                *line,
                format!("unknown key {k:?} in [{}]", self.name),
            )),
            None => Ok(()),
        }
    }
}

/// The tables of `text`, in file order.
fn parse(text: &str) -> Result<Vec<Table>, TuningError> {
    let mut tables: Vec<Table> = Vec::new();
    for (i, raw) in text.lines().enumerate() {
        let line = i + 1;
        let s = raw.split('#').next().unwrap_or("").trim();
        if s.is_empty() {
            continue;
        }
        if let Some(h) = s.strip_prefix('[') {
            let (name, array) = match h.strip_prefix('[') {
                Some(h) => (h.strip_suffix("]]"), true),
                None => (h.strip_suffix(']'), false),
            };
            let name = name
                .map(str::trim)
                .filter(|n| is_key(n))
                .ok_or_else(|| TuningError::at(line, format!("bad table header {s:?}")))?;
            tables.push(Table {
                name: name.to_string(),
                array,
                line,
                keys: Vec::new(),
            });
            continue;
        }
        let (key, value) = s
            .split_once('=')
            .map(|(k, v)| (k.trim(), v.trim()))
            .filter(|(k, _)| is_key(k))
            .ok_or_else(|| TuningError::at(line, format!("expected `key = value`, not {s:?}")))?;
        let value = parse_value(value).map_err(|e| TuningError::at(line, format!("{key}: {e}")))?;
        let table = tables
            .last_mut()
            .ok_or_else(|| TuningError::at(line, format!("{key} is outside any table")))?;
        if table.keys.iter().any(|k| k.0 == key) {
            return Err(TuningError::at(line, format!("{key} appears twice")));
        }
        table.keys.push((key.to_string(), value, line));
    }
    Ok(tables)
}

fn is_key(s: &str) -> bool {
    !s.is_empty() && s.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_')
}

fn parse_value(s: &str) -> Result<Value, String> {
    match s {
        "true" => return Ok(Value::Bool(true)),
        "false" => return Ok(Value::Bool(false)),
        _ => {}
    }
    if let Some(inner) = s.strip_prefix('{') {
        let inner = inner
            .strip_suffix('}')
            .ok_or_else(|| format!("unclosed inline table {s:?}"))?;
        let mut entries: Vec<(String, i64)> = Vec::new();
        for part in inner.split(',').map(str::trim).filter(|p| !p.is_empty()) {
            let (k, v) = part
                .split_once('=')
                .map(|(k, v)| (k.trim(), v.trim()))
                .filter(|(k, _)| is_key(k))
                .ok_or_else(|| format!("expected `name = integer`, not {part:?}"))?;
            if entries.iter().any(|e| e.0 == k) {
                return Err(format!("{k} appears twice"));
            }
            entries.push((k.to_string(), parse_int(v)?));
        }
        return Ok(Value::Table(entries));
    }
    parse_int(s).map(Value::Int)
}

/// An integer, `_` allowed between digits (`4_000_000`).
fn parse_int(s: &str) -> Result<i64, String> {
    let digits = s.strip_prefix(['+', '-']).unwrap_or(s);
    let ok = !digits.is_empty()
        && !digits.starts_with('_')
        && !digits.ends_with('_')
        && !digits.contains("__")
        && digits.bytes().all(|b| b.is_ascii_digit() || b == b'_');
    ok.then(|| s.replace('_', "").parse().ok())
        .flatten()
        .ok_or_else(|| format!("not an integer, a boolean or an inline table: {s:?}"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_shipped_settings_read() {
        let t = Tuning::shipped();
        assert_eq!(t.members.len(), 7);
        assert_eq!(t.members[5].max_cells, 1);
        assert_eq!(t.members[5].min_cells, 0);
        assert!(!t.members[5].pruned);
        assert_eq!((t.members[6].min_cells, t.members[6].max_cells), (2, 2));
        assert_eq!(t.members[6].join, 12_800);
        let r = t.reserve.as_ref().unwrap();
        assert_eq!(r.cap, 8_000_000);
        assert_eq!(r.members.len(), 3);
        assert!(r
            .members
            .iter()
            .all(|m| !m.pruned && m.join == 0 && m.max_cells == 2));
        assert_eq!(t.quota, 150);
        assert_eq!(t.cap, 4_000_000);
        assert_eq!(t.members[4].join, 400);
        assert_eq!(t.members[1].weights.empty_columns, 10);
        assert_eq!(t.dry_factor, Some(8));
        assert_eq!(
            t.probe,
            Some(Probe {
                quota: 25_000,
                cap: 4_000_000
            })
        );
        assert_eq!(
            t.blocked,
            Some(Blocked {
                home: 2,
                from: 400,
                factor: 32
            })
        );
    }

    /// The shipped file with `old` replaced by `new`.
    fn edited(old: &str, new: &str) -> Result<Tuning, TuningError> {
        let text = include_str!("tuning.toml");
        assert!(text.contains(old), "{old}");
        Tuning::from_toml(&text.replacen(old, new, 1))
    }

    #[test]
    fn a_game_gets_the_members_that_play_with_its_cells() {
        let t = Tuning::shipped();
        let four = t.for_cells(4);
        assert_eq!(four.members.len(), 5);
        assert!(four.members.iter().all(|m| m.pruned));
        // With 2 cells the late unpruned member joins; with 0 or 1 the
        // earlier one plays instead.
        let two = t.for_cells(2);
        assert_eq!(two.members.len(), 6);
        assert!(!two.members[5].pruned);
        assert_eq!(two.members[5].join, 12_800);
        for cells in [0, 1] {
            let few = t.for_cells(cells);
            assert_eq!(few.members.len(), 6);
            assert_eq!(few.members[5].join, 400);
        }
        assert_eq!(t.for_cells(1).reserve.as_ref().unwrap().members.len(), 3);
        assert!(t.for_cells(3).reserve.is_none());
        let all = edited(
            "join = 12800\nmin_cells = 2\nmax_cells = 2",
            "join = 12800\nmax_cells = 10",
        )
        .unwrap();
        assert!(matches!(all.for_cells(1), Cow::Borrowed(_)));
        assert_eq!(all.for_cells(2).members.len(), 6);
    }

    #[test]
    fn rules_turn_off_by_leaving_their_table_out() {
        let t = edited("[dry]\nfactor = 8\n", "").unwrap();
        assert_eq!(t.dry_factor, None);
        let t = edited("[blocked]\nhome = 2\nfrom = 400\nfactor = 32\n", "").unwrap();
        assert_eq!(t.blocked, None);
        let t = edited("[probe]\nquota = 25_000\ncap = 4_000_000\n", "").unwrap();
        assert_eq!(t.probe, None);
        // A weight left out weighs 0.
        let t = edited(
            "empty_columns = 6, below_run = 1, breaks = 0, capacity = 0 }",
            "empty_columns = 6 }",
        )
        .unwrap();
        assert_eq!(t.members[0].weights.below_run, 0);
    }

    #[test]
    fn mistakes_are_refused_with_their_line() {
        let text = include_str!("tuning.toml");
        let quota_line = 1 + text.lines().position(|l| l == "quota = 150").unwrap();
        let bad_quota = format!("line {quota_line}: quota: not an integer");
        let cases = [
            ("quota = 150", "quota = 15x0", bad_quota.as_str()),
            ("quota = 150", "quotas = 150", "[schedule] has no quota"),
            (
                "stagnation_rounds = 5",
                "stagnation_rounds = 5\nextra = 1",
                "unknown key \"extra\" in [schedule]",
            ),
            (
                "below_run = 1, breaks",
                "below_rum = 1, breaks",
                "unknown term \"below_rum\"",
            ),
            (
                "parks = false\njoin = 0",
                "parks = 0\njoin = 0",
                "parks must be true or false",
            ),
            ("join = 400", "join = -1", "join = -1 is out of range"),
            ("join = 400", "join = 0", ""),
            ("[dry]", "[wet]", "unknown table [wet]"),
            (
                "[complete]",
                "[[complete]]",
                "[[complete]] where [complete] was expected",
            ),
        ];
        for (old, new, want) in cases {
            match edited(old, new) {
                Ok(_) => assert_eq!(want, "", "{new} was accepted"),
                Err(e) => assert!(e.to_string().contains(want), "{new}: {e}"),
            }
        }
        // A member that plays in no game.
        let e = edited(
            "min_cells = 2\nmax_cells = 2",
            "min_cells = 3\nmax_cells = 2",
        )
        .unwrap_err();
        assert!(e.to_string().contains("plays in no game"), "{e}");
        let e = edited(
            "join = 0\nmax_cells = 2\nreserve = true",
            "join = 0\nmin_cells = 3\nmax_cells = 2\nreserve = true",
        )
        .unwrap_err();
        assert!(e.to_string().contains("plays in no game"), "{e}");
        let e = edited("min_cells = 2", "min_cells = -2").unwrap_err();
        assert!(
            e.to_string().contains("min_cells = -2 is out of range"),
            "{e}"
        );
        // The reserve: a table with no members, members with no table, a
        // member that would join late.
        let text = include_str!("tuning.toml");
        let e = Tuning::from_toml(&text.replace("\nreserve = true\n", "\nreserve = false\n"))
            .unwrap_err();
        assert!(e.to_string().contains("[reserve] has no member"), "{e}");
        let e = edited("[reserve]\ncap = 8_000_000\n", "").unwrap_err();
        assert!(e.to_string().contains("[reserve] (its cap)"), "{e}");
        let e = edited(
            "join = 0\nmax_cells = 2\nreserve = true",
            "join = 5\nmax_cells = 2\nreserve = true",
        )
        .unwrap_err();
        assert!(
            e.to_string().contains("starts with the reserve (join = 0)"),
            "{e}"
        );
        let e = edited("\nreserve = true\n", "\nreserve = 1\n").unwrap_err();
        assert!(
            e.to_string().contains("reserve must be true or false"),
            "{e}"
        );
        // Leaving both out turns it off.
        let cut = &text[..text.find("# Once the complete search has filled").unwrap()];
        assert_eq!(Tuning::from_toml(cut).unwrap().reserve, None);
        // The beam: part of the reserve, 1 to 2^32 - 1 wide, its keys only;
        // left out, none.
        let beam = "[beam]\nwidth = 400_000\n";
        assert!(text.contains(beam));
        let at = text.find(beam).unwrap();
        let table = &text[at..at + text[at..].find("\n[[member]]").unwrap()];
        let e = Tuning::from_toml(&format!("{cut}\n{table}")).unwrap_err();
        assert!(
            e.to_string().contains("[beam] is part of the reserve"),
            "{e}"
        );
        let e = edited("width = 400_000", "width = 0").unwrap_err();
        assert!(e.to_string().contains("[beam] width must be 1 to"), "{e}");
        let e = edited("width = 400_000", "width = 400_000\nextra = 1").unwrap_err();
        assert!(
            e.to_string().contains("unknown key \"extra\" in [beam]"),
            "{e}"
        );
        let b = Tuning::shipped().reserve.as_ref().unwrap().beam.unwrap();
        assert_eq!((b.width, b.depth), (400_000, 100));
        let start = text.find("# After the reserve's members, a beam").unwrap();
        let end = text[start..].find("\n[[member]]").unwrap() + start;
        let off = format!("{}{}", &text[..start], &text[end..]);
        assert_eq!(Tuning::from_toml(&off).unwrap().reserve.unwrap().beam, None);
        // A first member that leaves some games without one.
        let e = edited("max_cells = 10", "max_cells = 9").unwrap_err();
        assert!(e.to_string().contains("any number of cells"), "{e}");
        // Members out of the order they join in.
        let text = text.replacen("join = 0\n", "join = 800\n", 1);
        let e = Tuning::from_toml(&text).unwrap_err();
        assert!(e.to_string().contains("the first member must start"), "{e}");
    }
}
