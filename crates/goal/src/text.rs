//! Streaming GOAL text parser, compatible with LogGOPSim's `txt2bin`.
//!
//! The file is read line by line; only the current rank's label table stays in memory besides
//! the compact program. Accepted language (txt2bin's, see `LOGGOPSIM.md` §4):
//!
//! ```text
//! num_ranks 2                      // before the first rank block
//! rank 0 {
//! l1: send 16b to 1 tag 0          // optional clauses in the order tag, cpu, nic
//! l2: calc 100 cpu 1               // calc: duration in ticks (1 ns by default); only "cpu"
//! l2 requires l1                   // l2 starts after l1 completes ("irequires": after it starts)
//! }
//! rank 1 {
//! l1: recv 16b from -1 tag -1      // -1 = any source / any tag
//! }
//! ```
//!
//! Differences from txt2bin, all accepting more (anything txt2bin accepts parses to the same
//! program, except what its lexer bugs mangle):
//! * whitespace before a statement is fine (txt2bin swallows the character after leading
//!   whitespace, so ` ab: calc 5` defined label `b` there; here it defines `ab`);
//! * comments (`//`, `/* */`) may appear wherever whitespace may, also after an operation;
//! * size units: `b`/`B` (bytes), `KiB MiB GiB TiB` (1024ⁿ), `kB MB GB TB` (1000ⁿ); `KB` is
//!   rejected as ambiguous. Decimals are allowed if the result is whole (`1.5KiB`);
//! * `calc` durations may carry a unit `ps ns us ms s` (converted to
//!   [`ParseOptions::time_unit`] and kept exact). A plain integer is a number of *ticks*, as in
//!   LogGOPSim, which reads every number in one unit-less tick: one tick is
//!   [`ParseOptions::tick_ps`] picoseconds, 1 ns by default (what Schedgen's trace conversion
//!   writes and LogGOPSim's users pass L, o, g in), and a count of ticks beyond what the
//!   program's `u64` times hold is an error at its position, never a wrap.
//!
//! And it checks what txt2bin does not: number overflow, peers >= num_ranks, rank block order,
//! missing blocks, unterminated comments/blocks, and dependency cycles (ops that can never run).
//! Like txt2bin, `num_ranks`, `rank N {` and `}` may be followed by another statement on the
//! same line, operations and dependencies end at the end of the line, text after the last rank
//! block is ignored (with a warning), and a duplicate label keeps naming its first definition
//! (with a warning).

use std::fs::File;
use std::io::{BufRead, BufReader};
use std::path::Path;

use loggops_engine::{DepKind, Op, OpKind, ANY};

use crate::error::{BuildError, CycleStep, GoalError, GoalWarning, Location};
use crate::explicit::{ExplicitProgram, ProgramBuilder, MAX_CPU_NIC_INDEX, MAX_OPS_PER_RANK};
use crate::fxhash::hash_bytes;
use crate::units::{
    convert_time, scale_error, scan_decimal, time_unit_prefix, Quantity, ScaleError, SizeUnits,
    TimeUnit, UnitError,
};

/// How to interpret the file (text, and the `calc` durations of binary files).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ParseOptions {
    /// The unit of the program's times: durations with a unit (`calc 2.5us`) are converted to
    /// it and must be whole. Default: [`TimeUnit::Ps`], the engine's unit.
    pub time_unit: TimeUnit,
    /// Picoseconds per tick: a plain `calc N` (text) or a calc duration N (binary) lasts N
    /// ticks. Default [`DEFAULT_TICK_PS`] (1 ns: Schedgen's traces and LogGOPSim's users);
    /// 1 with [`TimeUnit::Ps`] takes plain numbers as they are ([`ParseOptions::ticks_as_is`]).
    pub tick_ps: u64,
    /// At most this many warnings are kept (all duplicate labels are counted). Default 100.
    pub max_warnings: usize,
}

/// Picoseconds per tick unless told otherwise: 1 ns.
pub const DEFAULT_TICK_PS: u64 = 1_000;

impl Default for ParseOptions {
    fn default() -> ParseOptions {
        ParseOptions {
            time_unit: TimeUnit::Ps,
            tick_ps: DEFAULT_TICK_PS,
            max_warnings: 100,
        }
    }
}

impl ParseOptions {
    /// Default options with `tick_ps` picoseconds per tick.
    pub fn with_tick(tick_ps: u64) -> ParseOptions {
        ParseOptions {
            tick_ps,
            ..ParseOptions::default()
        }
    }

    /// Plain numbers taken as they are (one tick = one unit of the program): LogGOPSim's
    /// unit-less ticks, as `--compat loggopsim` runs them.
    pub fn ticks_as_is() -> ParseOptions {
        ParseOptions::with_tick(1)
    }

    /// LogGOPSim's ticks as `--compat loggopsim` runs them: plain numbers as they are, and a
    /// duration with a unit (an extension LogGOPSim has not) in ns, the tick its users mean
    /// (`calc 1us` is 1000 ticks; `calc 1.5ns` is not a whole tick and is refused).
    pub fn loggopsim_ticks() -> ParseOptions {
        ParseOptions {
            time_unit: TimeUnit::Ns,
            tick_ps: DEFAULT_TICK_PS,
            ..ParseOptions::default()
        }
    }

    /// `ticks` ticks as a time in [`ParseOptions::time_unit`]: [`ScaleError::Overflow`] beyond
    /// `u64`, [`ScaleError::NotWhole`] if it is not a whole number of that unit.
    pub fn ticks_to_time(&self, ticks: u64) -> Result<u64, ScaleError> {
        let ps = ticks as u128 * self.tick_ps as u128;
        let unit = self.time_unit.picos() as u128;
        if !ps.is_multiple_of(unit) {
            return Err(ScaleError::NotWhole);
        }
        u64::try_from(ps / unit).map_err(|_| ScaleError::Overflow)
    }

    /// The tick as text (`1ns`, `1ps`).
    pub fn tick_text(&self) -> String {
        loggops_units::format_duration(self.tick_ps)
    }

    /// What the largest plain number is, for messages: `18446744073709551 ticks of 1ns`.
    pub(crate) fn tick_limit(&self) -> String {
        let max = (u64::MAX as u128 * self.time_unit.picos() as u128 / self.tick_ps.max(1) as u128)
            .min(u64::MAX as u128);
        format!(
            "{max} ticks of {}: times are u64 {}",
            self.tick_text(),
            self.time_unit.plural()
        )
    }
}

/// A parsed program with the parser's warnings.
#[derive(Debug)]
pub struct Parsed {
    pub program: ExplicitProgram,
    /// The first [`ParseOptions::max_warnings`] warnings, in file order.
    pub warnings: Vec<GoalWarning>,
    /// Number of duplicate label definitions (all of them, also beyond `max_warnings`).
    pub duplicate_labels: u64,
}

/// Where an op was defined, found again by [`describe_op`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OpDescription {
    /// The op's label, if it has one (for a duplicate label: that label, although dependencies
    /// refer to its first definition).
    pub label: Option<String>,
    /// 1-based line number.
    pub line: u64,
}

impl std::fmt::Display for OpDescription {
    /// `l5 (line 12)`, or `op on line 12` without a label.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match &self.label {
            Some(l) => write!(f, "{l} (line {})", self.line),
            None => write!(f, "op on line {}", self.line),
        }
    }
}

/// Parses a GOAL text file (streaming) with default options.
pub fn parse_file(path: impl AsRef<Path>) -> Result<ExplicitProgram, GoalError> {
    parse_file_with(path, &ParseOptions::default()).map(|p| p.program)
}

/// Parses GOAL text held in memory; `name` is used in messages.
pub fn parse_str(name: &str, text: &str) -> Result<ExplicitProgram, GoalError> {
    parse_reader(name, text.as_bytes())
}

/// Parses GOAL text from a reader (streaming); `name` is used in messages.
pub fn parse_reader(name: &str, reader: impl BufRead) -> Result<ExplicitProgram, GoalError> {
    parse_reader_with(name, reader, &ParseOptions::default()).map(|p| p.program)
}

/// Parses a GOAL text file with options, returning warnings too.
pub fn parse_file_with(path: impl AsRef<Path>, opts: &ParseOptions) -> Result<Parsed, GoalError> {
    let path = path.as_ref();
    let name = path.display().to_string();
    let f = File::open(path).map_err(|source| GoalError::Io {
        path: name.clone(),
        source,
    })?;
    parse_reader_with(&name, BufReader::with_capacity(1 << 18, f), opts)
}

/// [`parse_str`] with options and warnings.
pub fn parse_str_with(name: &str, text: &str, opts: &ParseOptions) -> Result<Parsed, GoalError> {
    parse_reader_with(name, text.as_bytes(), opts)
}

/// [`parse_reader`] with options and warnings.
pub fn parse_reader_with(
    name: &str,
    reader: impl BufRead,
    opts: &ParseOptions,
) -> Result<Parsed, GoalError> {
    let mut p = Parser::new(name, reader, opts, BuildSink(None), None);
    p.run()?;
    let program = match p.sink.0 {
        Some(b) => b.finish(),
        None => {
            return Err(GoalError::NoNumRanks {
                file: name.to_string(),
            })
        }
    };
    Ok(Parsed {
        program,
        warnings: p.warnings,
        duplicate_labels: p.duplicate_labels,
    })
}

/// Finds the label and line of op `op_id` of `rank` by scanning the text file again (for error
/// messages about a program parsed before; streaming, builds nothing). `Ok(None)` if there is no
/// such op or the file is a binary GOAL file (which has no labels).
pub fn describe_op(
    path: impl AsRef<Path>,
    rank: u32,
    op_id: u32,
) -> Result<Option<OpDescription>, GoalError> {
    let path = path.as_ref();
    if crate::is_binary(path)? {
        return Ok(None);
    }
    let name = path.display().to_string();
    let f = File::open(path).map_err(|source| GoalError::Io {
        path: name.clone(),
        source,
    })?;
    describe_op_in(&name, BufReader::with_capacity(1 << 18, f), rank, op_id)
}

/// [`describe_op`] on a reader.
pub fn describe_op_in(
    name: &str,
    reader: impl BufRead,
    rank: u32,
    op_id: u32,
) -> Result<Option<OpDescription>, GoalError> {
    // Plain numbers as they are: the scan only looks for the op and must not fail on a
    // duration the run read with a finer tick.
    let opts = ParseOptions {
        max_warnings: 0,
        ..ParseOptions::ticks_as_is()
    };
    let mut p = Parser::new(name, reader, &opts, CountSink, Some((rank, op_id)));
    let res = p.run();
    match p.found {
        Some(d) => Ok(Some(d)),
        None => res.map(|()| None),
    }
}

/// Receives the parsed schedule.
trait Sink {
    fn begin(&mut self, num_ranks: u32);
    fn start_rank(&mut self, rank: u32);
    fn add_op(&mut self, op: Op);
    fn add_dep(&mut self, dependent: u32, on: u32, kind: DepKind);
    fn end_rank(&mut self) -> Result<(), BuildError>;
}

struct BuildSink(Option<ProgramBuilder>);

impl Sink for BuildSink {
    fn begin(&mut self, num_ranks: u32) {
        self.0 = Some(ProgramBuilder::new(num_ranks));
    }
    fn start_rank(&mut self, rank: u32) {
        self.0.as_mut().unwrap().start_rank(rank)
    }
    #[inline]
    fn add_op(&mut self, op: Op) {
        self.0.as_mut().unwrap().add_op(op);
    }
    #[inline]
    fn add_dep(&mut self, dependent: u32, on: u32, kind: DepKind) {
        self.0.as_mut().unwrap().add_dep(dependent, on, kind)
    }
    fn end_rank(&mut self) -> Result<(), BuildError> {
        self.0.as_mut().unwrap().end_rank()
    }
}

/// Builds nothing (for [`describe_op`]).
struct CountSink;

impl Sink for CountSink {
    fn begin(&mut self, _: u32) {}
    fn start_rank(&mut self, _: u32) {}
    fn add_op(&mut self, _: Op) {}
    fn add_dep(&mut self, _: u32, _: u32, _: DepKind) {}
    fn end_rank(&mut self) -> Result<(), BuildError> {
        Ok(())
    }
}

/// Labels of the current rank block: open addressing over an arena, cleared in O(1) by bumping
/// a generation counter.
#[derive(Clone, Copy, Default)]
struct Slot {
    hash: u64,
    line: u64,
    off: u32,
    len: u32,
    id: u32,
    gen: u32,
}

struct LabelTable {
    arena: Vec<u8>,
    slots: Vec<Slot>,
    len: usize,
    gen: u32,
}

impl LabelTable {
    fn new() -> LabelTable {
        LabelTable {
            arena: Vec::new(),
            slots: vec![Slot::default(); 64],
            len: 0,
            gen: 1,
        }
    }

    fn clear(&mut self) {
        if self.slots.len() > 4096 && self.len * 16 < self.slots.len() {
            self.slots = vec![Slot::default(); (self.len * 4).next_power_of_two().max(64)];
            self.gen = 1;
        } else if self.gen == u32::MAX {
            self.slots.fill(Slot::default());
            self.gen = 1;
        } else {
            self.gen += 1;
        }
        self.arena.clear();
        self.len = 0;
    }

    #[inline]
    fn find(&self, name: &[u8], hash: u64) -> Result<usize, usize> {
        let mask = self.slots.len() - 1;
        let mut i = hash as usize & mask;
        loop {
            let s = &self.slots[i];
            if s.gen != self.gen {
                return Err(i);
            }
            if s.hash == hash && &self.arena[s.off as usize..(s.off + s.len) as usize] == name {
                return Ok(i);
            }
            i = (i + 1) & mask;
        }
    }

    #[inline]
    fn get(&self, name: &[u8]) -> Option<u32> {
        self.find(name, hash_bytes(name))
            .ok()
            .map(|i| self.slots[i].id)
    }

    /// Inserts a label; if it exists, keeps the first definition and returns its line.
    #[inline]
    fn insert(&mut self, name: &[u8], id: u32, line: u64) -> Result<(), u64> {
        let hash = hash_bytes(name);
        match self.find(name, hash) {
            Ok(i) => Err(self.slots[i].line),
            Err(i) => {
                let off = self.arena.len() as u32;
                self.arena.extend_from_slice(name);
                self.slots[i] = Slot {
                    hash,
                    line,
                    off,
                    len: name.len() as u32,
                    id,
                    gen: self.gen,
                };
                self.len += 1;
                if self.len * 2 > self.slots.len() {
                    self.grow();
                }
                Ok(())
            }
        }
    }

    fn grow(&mut self) {
        let cap = self.slots.len() * 2;
        let old = std::mem::replace(&mut self.slots, vec![Slot::default(); cap]);
        let mask = self.slots.len() - 1;
        for s in old.into_iter().filter(|s| s.gen == self.gen) {
            let mut i = s.hash as usize & mask;
            while self.slots[i].gen == self.gen {
                i = (i + 1) & mask;
            }
            self.slots[i] = s;
        }
    }

    /// The (first) label naming op `id` (error path only: linear scan).
    fn name_of(&self, id: u32) -> Option<String> {
        self.slots
            .iter()
            .filter(|s| s.gen == self.gen && s.id == id)
            .min_by_key(|s| s.off)
            .map(|s| {
                String::from_utf8_lossy(&self.arena[s.off as usize..(s.off + s.len) as usize])
                    .into_owned()
            })
    }
}

#[inline]
fn is_ws(c: u8) -> bool {
    c == b' ' || c == b'\t'
}

#[inline]
fn ident_end(line: &[u8], mut p: usize) -> usize {
    while p < line.len() && (line[p].is_ascii_alphanumeric() || line[p] == b'_') {
        p += 1;
    }
    p
}

#[inline]
fn skip_ws(line: &[u8], mut p: usize) -> usize {
    while p < line.len() && is_ws(line[p]) {
        p += 1;
    }
    p
}

fn find2(hay: &[u8], from: usize, a: u8, b: u8) -> Option<usize> {
    (from..hay.len().saturating_sub(1)).find(|&i| hay[i] == a && hay[i + 1] == b)
}

/// How a token at `p` is shown in "found …".
fn found_at(line: &[u8], p: usize) -> String {
    if p >= line.len() {
        return "end of line".to_string();
    }
    let c = line[p];
    let end = if c.is_ascii_alphabetic() {
        ident_end(line, p)
    } else if c.is_ascii_digit() {
        let mut q = p;
        while q < line.len() && line[q].is_ascii_digit() {
            q += 1;
        }
        q
    } else {
        let len = match c {
            0xc0..=0xdf => 2,
            0xe0..=0xef => 3,
            0xf0..=0xf7 => 4,
            _ => 1,
        };
        (p + len).min(line.len())
    };
    format!("{:?}", String::from_utf8_lossy(&line[p..end]))
}

struct Parser<'o, R: BufRead, S: Sink> {
    file: String,
    reader: R,
    buf: Vec<u8>,
    line_no: u64,
    opts: &'o ParseOptions,
    sink: S,
    num_ranks: Option<(u32, u64)>,
    next_rank: u32,
    cur_rank: Option<u32>,
    rank_ops: u32,
    block_loc: Option<Location>,
    comment_loc: Option<Location>,
    labels: LabelTable,
    dep_lines: Vec<u64>,
    finished: bool,
    stop: bool,
    warnings: Vec<GoalWarning>,
    duplicate_labels: u64,
    target: Option<(u32, u32)>,
    found: Option<OpDescription>,
}

type PResult<T> = Result<T, GoalError>;

impl<'o, R: BufRead, S: Sink> Parser<'o, R, S> {
    fn new(
        file: &str,
        reader: R,
        opts: &'o ParseOptions,
        sink: S,
        target: Option<(u32, u32)>,
    ) -> Self {
        Parser {
            file: file.to_string(),
            reader,
            buf: Vec::with_capacity(256),
            line_no: 0,
            opts,
            sink,
            num_ranks: None,
            next_rank: 0,
            cur_rank: None,
            rank_ops: 0,
            block_loc: None,
            comment_loc: None,
            labels: LabelTable::new(),
            dep_lines: Vec::new(),
            finished: false,
            stop: false,
            warnings: Vec::new(),
            duplicate_labels: 0,
            target,
            found: None,
        }
    }

    fn run(&mut self) -> PResult<()> {
        loop {
            self.buf.clear();
            let n = match self.reader.read_until(b'\n', &mut self.buf) {
                Ok(n) => n,
                Err(source) => {
                    return Err(GoalError::Io {
                        path: self.file.clone(),
                        source,
                    })
                }
            };
            if n == 0 {
                break;
            }
            self.line_no += 1;
            let mut line = std::mem::take(&mut self.buf);
            if line.last() == Some(&b'\n') {
                line.pop();
            }
            if line.last() == Some(&b'\r') {
                line.pop();
            }
            if self.line_no == 1 && line.starts_with(b"\xef\xbb\xbf") {
                line.drain(..3);
            }
            let res = self.line(&line);
            self.buf = line;
            res?;
            if self.stop || self.found.is_some() {
                return Ok(());
            }
        }
        if let Some(loc) = self.comment_loc.take() {
            return Err(GoalError::UnterminatedComment { loc });
        }
        if let Some(rank) = self.cur_rank {
            return Err(GoalError::UnterminatedBlock {
                loc: self.block_loc.take().unwrap(),
                rank,
            });
        }
        match self.num_ranks {
            None => Err(GoalError::NoNumRanks {
                file: self.file.clone(),
            }),
            Some((n, _)) if self.next_rank < n => Err(GoalError::MissingRanks {
                file: self.file.clone(),
                line: self.line_no,
                next: self.next_rank,
                num_ranks: n,
            }),
            _ => Ok(()),
        }
    }

    fn loc(&self, line: &[u8], p: usize) -> Location {
        let p = p.min(line.len());
        let column = 1 + line[..p].iter().filter(|&&c| (c & 0xc0) != 0x80).count() as u32;
        Location {
            file: self.file.clone(),
            line: self.line_no,
            column,
            source_line: String::from_utf8_lossy(line).into_owned(),
        }
    }

    fn expected(&self, line: &[u8], p: usize, expected: &str) -> GoalError {
        let mut found = found_at(line, p);
        if line.get(p) == Some(&b'}') && expected.ends_with("end of line") {
            found.push_str(
                " (an operation ends at the end of its line: put \"}\" on a line of its own)",
            );
        }
        GoalError::Expected {
            loc: self.loc(line, p),
            expected: expected.to_string(),
            found,
        }
    }

    fn misplaced(&self, line: &[u8], p: usize, message: String) -> GoalError {
        GoalError::Misplaced {
            loc: self.loc(line, p),
            message,
        }
    }

    /// Skips blanks and comments; an unterminated `/*` swallows the rest of the line.
    #[inline]
    fn skip(&mut self, line: &[u8], mut p: usize) -> usize {
        loop {
            p = skip_ws(line, p);
            if p + 1 < line.len() && line[p] == b'/' {
                match line[p + 1] {
                    b'/' => return line.len(),
                    b'*' => match find2(line, p + 2, b'*', b'/') {
                        Some(e) => p = e + 2,
                        None => {
                            self.comment_loc = Some(self.loc(line, p));
                            return line.len();
                        }
                    },
                    _ => return p,
                }
            } else {
                return p;
            }
        }
    }

    fn line(&mut self, line: &[u8]) -> PResult<()> {
        let mut p = 0;
        if self.comment_loc.is_some() {
            match find2(line, 0, b'*', b'/') {
                Some(e) => {
                    self.comment_loc = None;
                    p = e + 2;
                }
                None => return Ok(()),
            }
        }
        loop {
            p = self.skip(line, p);
            if p >= line.len() {
                return Ok(());
            }
            if self.finished {
                self.trailing(line, p);
                return Ok(());
            }
            let c = line[p];
            if c == b'}' {
                self.close_block(line, p)?;
                p += 1;
            } else if c.is_ascii_alphabetic() {
                let we = ident_end(line, p);
                match &line[p..we] {
                    b"num_ranks" => p = self.num_ranks_stmt(line, p, we)?,
                    b"rank" => p = self.rank_stmt(line, p, we)?,
                    b"send" => return self.op(line, p, we, OpKind::Send, None),
                    b"recv" => return self.op(line, p, we, OpKind::Recv, None),
                    b"calc" => return self.op(line, p, we, OpKind::Calc, None),
                    _ => return self.labeled(line, p, we),
                }
            } else {
                let what = if self.cur_rank.is_some() {
                    "an operation (\"send\", \"recv\", \"calc\", optionally after \"label:\"), a dependency or \"}\""
                } else {
                    "\"num_ranks\" or \"rank\""
                };
                return Err(self.expected(line, p, what));
            }
        }
    }

    fn trailing(&mut self, line: &[u8], p: usize) {
        if self.target.is_none() && self.warnings.len() < self.opts.max_warnings {
            let num_ranks = self.num_ranks.map_or(0, |n| n.0);
            self.warnings.push(GoalWarning::TrailingText {
                loc: self.loc(line, p),
                num_ranks,
            });
        }
        self.stop = true;
    }

    /// Unsigned decimal integer at `p`, at most `max`.
    fn uint(
        &self,
        line: &[u8],
        p: usize,
        what: &'static str,
        expected: &str,
        max: u64,
    ) -> PResult<(u64, usize)> {
        let mut q = p;
        let mut v: u64 = 0;
        let mut overflow = false;
        while q < line.len() && line[q].is_ascii_digit() {
            match v
                .checked_mul(10)
                .and_then(|v| v.checked_add((line[q] - b'0') as u64))
            {
                Some(x) => v = x,
                None => overflow = true,
            }
            q += 1;
        }
        if q == p {
            return Err(self.expected(line, p, expected));
        }
        if overflow || v > max {
            return Err(GoalError::NumberTooLarge {
                loc: self.loc(line, p),
                what,
                text: String::from_utf8_lossy(&line[p..q]).into_owned(),
                max,
            });
        }
        Ok((v, q))
    }

    fn num_ranks_stmt(&mut self, line: &[u8], ws: usize, we: usize) -> PResult<usize> {
        if let Some(r) = self.cur_rank {
            return Err(self.misplaced(
                line,
                ws,
                format!("\"num_ranks\" inside the block of rank {r}"),
            ));
        }
        if let Some((_, first)) = self.num_ranks {
            return Err(self.misplaced(
                line,
                ws,
                format!("\"num_ranks\" given twice (first on line {first})"),
            ));
        }
        if self.next_rank > 0 {
            return Err(self.misplaced(line, ws, "\"num_ranks\" after a rank block".to_string()));
        }
        let p = self.skip(line, we);
        let (n, q) = self.uint(
            line,
            p,
            "number of ranks",
            "the number of ranks",
            u32::MAX as u64,
        )?;
        if n == 0 {
            return Err(self.expected(line, p, "a number of ranks of at least 1"));
        }
        self.num_ranks = Some((n as u32, self.line_no));
        self.sink.begin(n as u32);
        Ok(q)
    }

    fn rank_stmt(&mut self, line: &[u8], ws: usize, we: usize) -> PResult<usize> {
        if let Some(r) = self.cur_rank {
            return Err(self.misplaced(
                line,
                ws,
                format!("a rank block opened inside the block of rank {r} (missing \"}}\"?)"),
            ));
        }
        let Some((num, _)) = self.num_ranks else {
            return Err(self.misplaced(
                line,
                ws,
                "\"num_ranks N\" must come before the first rank block".to_string(),
            ));
        };
        let p = self.skip(line, we);
        let (r, q) = self.uint(line, p, "rank", "a rank number", u32::MAX as u64)?;
        let r = r as u32;
        let b = self.skip(line, q);
        if b >= line.len() || line[b] != b'{' {
            return Err(self.expected(line, b, "\"{\" after the rank number"));
        }
        if r >= num {
            return Err(GoalError::RankOutOfRange {
                loc: self.loc(line, p),
                rank: r,
                num_ranks: num,
            });
        }
        if r != self.next_rank {
            return Err(GoalError::RankOrder {
                loc: self.loc(line, p),
                found: r,
                expected: self.next_rank,
            });
        }
        self.sink.start_rank(r);
        self.labels.clear();
        self.dep_lines.clear();
        self.rank_ops = 0;
        self.cur_rank = Some(r);
        self.block_loc = Some(self.loc(line, ws));
        Ok(b + 1)
    }

    fn close_block(&mut self, line: &[u8], p: usize) -> PResult<()> {
        let Some(rank) = self.cur_rank else {
            return Err(self.misplaced(line, p, "\"}\" outside of a rank block".to_string()));
        };
        if let Err(BuildError::Cycle { rank, cycle }) = self.sink.end_rank() {
            let name = |id: u32| {
                self.labels
                    .name_of(id)
                    .unwrap_or_else(|| format!("op {id}"))
            };
            let steps = cycle
                .iter()
                .map(|e| CycleStep {
                    line: self.dep_lines[e.decl_index],
                    dependent: name(e.dependent),
                    on: name(e.on),
                    kind: e.kind,
                })
                .collect();
            return Err(GoalError::Cycle {
                file: self.file.clone(),
                rank,
                steps,
            });
        }
        self.cur_rank = None;
        self.next_rank = rank + 1;
        if self.num_ranks.is_some_and(|(n, _)| self.next_rank == n) {
            self.finished = true;
        }
        Ok(())
    }

    /// `label: op` or `label requires label`.
    fn labeled(&mut self, line: &[u8], ws: usize, we: usize) -> PResult<()> {
        let p = self.skip(line, we);
        let rest = &line[p.min(line.len())..];
        if rest.first() == Some(&b':') {
            let p = self.skip(line, p + 1);
            // The whole word (its letters: `send16b` is glued to its size): `l: calcc 50` is
            // an unknown op, not `calc` and a bad duration.
            let oe = p + line[p..]
                .iter()
                .take_while(|c| c.is_ascii_alphabetic())
                .count();
            let kind = match &line[p..oe] {
                b"send" => OpKind::Send,
                b"recv" => OpKind::Recv,
                b"calc" => OpKind::Calc,
                _ => {
                    return Err(self.expected(
                        line,
                        p,
                        "\"send\", \"recv\" or \"calc\" after the label (unknown op)",
                    ))
                }
            };
            return self.op(line, p, oe, kind, Some((ws, we)));
        }
        let (kind, klen) = if rest.starts_with(b"irequires") {
            (DepKind::Start, 9)
        } else if rest.starts_with(b"requires") {
            (DepKind::Done, 8)
        } else {
            return Err(GoalError::UnknownKeyword {
                loc: self.loc(line, ws),
                word: String::from_utf8_lossy(&line[ws..we]).into_owned(),
            });
        };
        let l2 = self.skip(line, p + klen);
        if l2 >= line.len() || !line[l2].is_ascii_alphabetic() {
            return Err(self.expected(line, l2, "a label"));
        }
        let l2e = ident_end(line, l2);
        let end = self.skip(line, l2e);
        if end < line.len() {
            return Err(self.expected(line, end, "end of line after the dependency"));
        }
        if self.cur_rank.is_none() {
            return Err(self.misplaced(line, ws, "dependency outside of a rank block".to_string()));
        }
        let resolve = |s: &Self, a: usize, b: usize| {
            s.labels
                .get(&line[a..b])
                .ok_or_else(|| GoalError::UndefinedLabel {
                    loc: s.loc(line, a),
                    label: String::from_utf8_lossy(&line[a..b]).into_owned(),
                })
        };
        let dependent = resolve(self, ws, we)?;
        let on = resolve(self, l2, l2e)?;
        self.sink.add_dep(dependent, on, kind);
        self.dep_lines.push(self.line_no);
        Ok(())
    }

    /// An operation; `ks..ke` is the keyword, `label` the label's span.
    fn op(
        &mut self,
        line: &[u8],
        ks: usize,
        ke: usize,
        kind: OpKind,
        label: Option<(usize, usize)>,
    ) -> PResult<()> {
        let Some(rank) = self.cur_rank else {
            return Err(self.misplaced(
                line,
                label.map_or(ks, |l| l.0),
                "operation outside of a rank block".to_string(),
            ));
        };
        let num_ranks = self.num_ranks.map_or(0, |n| n.0);
        let mut p = self.skip(line, ke);
        let op = match kind {
            OpKind::Send | OpKind::Recv => {
                let size;
                (size, p) = self.size_value(line, p)?;
                p = self.skip(line, p);
                let (word, what) = if kind == OpKind::Send {
                    ("to", "\"to\"")
                } else {
                    ("from", "\"from\"")
                };
                if !line[p..].starts_with(word.as_bytes()) {
                    return Err(self.expected(line, p, what));
                }
                p = self.skip(line, p + word.len());
                let peer;
                if line[p..].starts_with(b"-1")
                    && !line.get(p + 2).is_some_and(|c| c.is_ascii_digit())
                {
                    if kind == OpKind::Send {
                        return Err(GoalError::SendToAny {
                            loc: self.loc(line, p),
                        });
                    }
                    peer = ANY;
                    p += 2;
                } else {
                    let expected = if kind == OpKind::Send {
                        "a destination rank"
                    } else {
                        "a source rank or -1 (any source)"
                    };
                    let start = p;
                    let v;
                    (v, p) = self.uint(line, p, "rank", expected, u32::MAX as u64)?;
                    if v >= num_ranks as u64 {
                        return Err(GoalError::PeerOutOfRange {
                            loc: self.loc(line, start),
                            peer: v as u32,
                            num_ranks,
                        });
                    }
                    peer = v as u32;
                }
                let (mut tag, mut cpu, mut nic) = (0u32, 0u8, 0u8);
                let mut stage = 0;
                loop {
                    p = self.skip(line, p);
                    if p >= line.len() {
                        break;
                    }
                    let rest = &line[p..];
                    let which = if rest.starts_with(b"tag") {
                        1
                    } else if rest.starts_with(b"cpu") {
                        2
                    } else if rest.starts_with(b"nic") {
                        3
                    } else {
                        0
                    };
                    if which <= stage {
                        let exp = [
                            "\"tag\", \"cpu\", \"nic\" or end of line",
                            "\"cpu\", \"nic\" or end of line",
                            "\"nic\" or end of line",
                            "end of line",
                        ][stage];
                        let mut e = self.expected(line, p, exp);
                        if which != 0 {
                            if let GoalError::Expected { found, .. } = &mut e {
                                found.push_str(" (clauses must come in the order tag, cpu, nic)");
                            }
                        }
                        return Err(e);
                    }
                    p = self.skip(line, p + 3);
                    match which {
                        1 => {
                            if line[p..].starts_with(b"-1")
                                && !line.get(p + 2).is_some_and(|c| c.is_ascii_digit())
                            {
                                tag = ANY;
                                p += 2;
                            } else {
                                let v;
                                (v, p) = self.uint(
                                    line,
                                    p,
                                    "tag",
                                    "a tag or -1 (any tag)",
                                    u32::MAX as u64 - 1,
                                )?;
                                tag = v as u32;
                            }
                        }
                        2 => (cpu, p) = self.index(line, p, "cpu index")?,
                        _ => (nic, p) = self.index(line, p, "nic index")?,
                    }
                    stage = which;
                }
                Op {
                    kind,
                    peer,
                    tag,
                    size,
                    cpu,
                    nic,
                }
            }
            OpKind::Calc => {
                let duration;
                (duration, p) = self.time_value(line, p)?;
                let mut cpu = 0u8;
                let mut stage = 0;
                loop {
                    p = self.skip(line, p);
                    if p >= line.len() {
                        break;
                    }
                    let rest = &line[p..];
                    if rest.starts_with(b"nic") {
                        return Err(GoalError::CalcNic {
                            loc: self.loc(line, p),
                        });
                    }
                    if stage == 0 && rest.starts_with(b"cpu") {
                        p = self.skip(line, p + 3);
                        (cpu, p) = self.index(line, p, "cpu index")?;
                        stage = 1;
                        continue;
                    }
                    return Err(self.expected(
                        line,
                        p,
                        if stage == 0 {
                            "\"cpu\" or end of line"
                        } else {
                            "end of line"
                        },
                    ));
                }
                Op::calc(duration).on_cpu(cpu)
            }
        };
        if self.rank_ops == MAX_OPS_PER_RANK {
            return Err(GoalError::TooManyOps {
                loc: self.loc(line, ks),
                rank,
            });
        }
        let id = self.rank_ops;
        self.rank_ops += 1;
        self.sink.add_op(op);
        if let Some((a, b)) = label {
            if let Err(first_line) = self.labels.insert(&line[a..b], id, self.line_no) {
                self.duplicate_labels += 1;
                if self.warnings.len() < self.opts.max_warnings {
                    self.warnings.push(GoalWarning::DuplicateLabel {
                        loc: self.loc(line, a),
                        label: String::from_utf8_lossy(&line[a..b]).into_owned(),
                        first_line,
                    });
                }
            }
        }
        if self.target == Some((rank, id)) {
            self.found = Some(OpDescription {
                label: label.map(|(a, b)| String::from_utf8_lossy(&line[a..b]).into_owned()),
                line: self.line_no,
            });
        }
        Ok(())
    }

    fn index(&self, line: &[u8], p: usize, what: &'static str) -> PResult<(u8, usize)> {
        let (v, q) = self.uint(line, p, what, "an integer", MAX_CPU_NIC_INDEX as u64)?;
        Ok((v as u8, q))
    }

    /// A message size: number, optional blanks, mandatory unit.
    fn size_value(&self, line: &[u8], p: usize) -> PResult<(u64, usize)> {
        let Some((d, q)) = scan_decimal(line, p) else {
            return Err(self.expected(line, p, "a message size such as \"16b\""));
        };
        let u = skip_ws(line, q);
        let Some((mult, ulen)) = SizeUnits::Goal.prefix(&line[u..]) else {
            if u < line.len() && line[u].is_ascii_alphabetic() {
                let e = ident_end(line, u);
                if matches!(line[e - 1], b'b' | b'B') && e - u <= 3 {
                    return Err(self.unknown_unit(line, p, u, e, Quantity::Size));
                }
            }
            return Err(self.expected(
                line,
                u,
                "\"b\" (or another size unit such as \"KiB\") after the size",
            ));
        };
        let end = u + ulen;
        d.scale(mult, 0)
            .exact()
            .map(|v| (v, end))
            .map_err(|e| self.unit_error(line, p, end, e, "bytes"))
    }

    /// A calc duration: a plain integer (ticks, see [`ParseOptions::tick_ps`]) or a number
    /// with a time unit.
    fn time_value(&self, line: &[u8], p: usize) -> PResult<(u64, usize)> {
        let Some((d, q)) = scan_decimal(line, p) else {
            return Err(self.expected(
                line,
                p,
                "a duration (a whole number of ticks, or e.g. \"2.5us\")",
            ));
        };
        let u = skip_ws(line, q);
        let target = self.opts.time_unit;
        if let Some((from, ulen)) = time_unit_prefix(&line[u..]) {
            let end = u + ulen;
            return convert_time(&d, from, target)
                .exact()
                .map(|v| (v, end))
                .map_err(|e| self.unit_error(line, p, end, e, target.plural()));
        }
        // A word right after the number is a unit this reader does not know (`2.5parsec`),
        // unless it is the calc's next keyword, which may touch the number (`calc5cpu1`, as
        // txt2bin reads it).
        let keyword = [&b"cpu"[..], b"nic"]
            .iter()
            .any(|k| line[u..].starts_with(k));
        if u == q && u < line.len() && line[u].is_ascii_alphabetic() && !keyword {
            let e = ident_end(line, u);
            return Err(self.unknown_unit(line, p, u, e, Quantity::Duration));
        }
        let time = match d.scale(1, 0).exact() {
            Ok(ticks) => self.opts.ticks_to_time(ticks),
            Err(ScaleError::NotWhole) => {
                return Err(self.unit_error(line, p, q, ScaleError::NotWhole, "ticks"))
            }
            Err(e) => Err(e),
        };
        match time {
            Ok(v) => Ok((v, q)),
            Err(ScaleError::Overflow) => Err(GoalError::Unit {
                loc: self.loc(line, p),
                source: UnitError::Overflow {
                    text: String::from_utf8_lossy(&line[p..q]).into_owned(),
                    limit: self.opts.tick_limit(),
                },
            }),
            Err(e) => Err(self.unit_error(line, p, q, e, target.plural())),
        }
    }

    /// A value at `line[p..end]` that does not scale to a whole `u64` of `target`.
    /// The unit `line[u..e]` of the number at `p` is not one this reader knows.
    fn unknown_unit(&self, line: &[u8], p: usize, u: usize, e: usize, what: Quantity) -> GoalError {
        GoalError::Unit {
            loc: self.loc(line, u),
            source: UnitError::UnknownUnit {
                unit: String::from_utf8_lossy(&line[u..e]).into_owned(),
                text: String::from_utf8_lossy(&line[p..e]).into_owned(),
                what,
            },
        }
    }

    fn unit_error(
        &self,
        line: &[u8],
        p: usize,
        end: usize,
        e: loggops_units::ScaleError,
        target: &'static str,
    ) -> GoalError {
        GoalError::Unit {
            loc: self.loc(line, p),
            source: scale_error(e, &String::from_utf8_lossy(&line[p..end]), target),
        }
    }
}
