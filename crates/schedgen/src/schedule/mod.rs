//! Rank-parametric schedule files: phases (computation, collectives, point-to-point ops,
//! repetition) whose rank count is bound when the file is instantiated with `--nodes`.
//!
//! The format is documented in `goal/README.md`. A [`Schedule`] is a [`Program`] computed on
//! the fly from a small tree (not unrolled: `repeat 1000 { … }` costs one node), so its memory
//! does not depend on the number of ops.
//!
//! # Sequencing phases exactly
//!
//! Statements run in sequence per rank: every op of phase k+1 on a rank starts after every op
//! of phase k on that rank has completed. Phase k is complete when all its *sinks* (ops with no
//! `requires` dependents inside the phase) are complete. Between two consecutive non-empty
//! phases A and B of a rank the program adds, in this order of preference:
//!
//! 1. if A has a single sink: that sink `requires`-releases every root of B (e.g. `calc; ring`);
//! 2. else if B has a single root: every sink of A releases that root;
//! 3. else a *join*, a `calc 0` op placed between the two phases, waits for all sinks of A and
//!    releases every root of B.
//!
//! Each rule adds no time in a noiseless run; only rule 3 adds an op (one per boundary and
//! rank), which, being a zero-length computation, can absorb OS noise that is in progress when
//! the rank finishes A. Phases empty on a rank (e.g. a `send … if rank == 0` on rank 3) are
//! skipped on that rank. Inside `concurrent { … }` the children start together (no
//! dependencies between them) and the block is complete when all of them are.

mod expr;
mod mpi;
mod parse;
mod trace_coll;

pub use expr::dims_create;
pub use mpi::COLLS_BASE;
pub use trace_coll::RecdoubMpich;

use std::path::Path;

use loggops_engine::{DepKind, Op, Program};

use crate::collective::{Collective, GenOptions, Generated};
use crate::error::{GenError, SchedError};
use crate::schedule::expr::{Dimension, Expr, GridDims};
use crate::schedule::mpi::MpiProg;
use crate::schedule::parse::{GridDef, P2pKind, ParamDef, QArg, Source, SpExpr, Span, Stmt, Val};
use crate::units::{format_duration, format_size, parse_duration, parse_size, UnitError};

/// What kind of file a text is, from its first non-comment token.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FileKind {
    /// Starts with `loggops-schedule`: a rank-parametric schedule.
    Schedule,
    /// Starts with `num_ranks`: explicit GOAL text.
    Goal,
    /// Anything else (binary GOAL, empty files, …).
    Unknown,
}

/// Tells schedules from explicit GOAL text by the first token after comments (`#`, `//` and
/// `/* … */`) and white space.
pub fn sniff(text: &str) -> FileKind {
    let mut s = text;
    loop {
        s = s.trim_start();
        if s.starts_with('#') || s.starts_with("//") {
            s = s.find('\n').map_or("", |i| &s[i + 1..]);
        } else if let Some(rest) = s.strip_prefix("/*") {
            s = rest.find("*/").map_or("", |i| &rest[i + 2..]);
        } else {
            break;
        }
    }
    let word: String = s.chars().take_while(|c| !c.is_whitespace()).collect();
    match word.as_str() {
        "loggops-schedule" => FileKind::Schedule,
        "num_ranks" => FileKind::Goal,
        _ => FileKind::Unknown,
    }
}

/// A parsed schedule file, before the rank count is bound. Parameters can be changed with
/// [`ScheduleFile::set_param`]; [`ScheduleFile::instantiate`] builds the [`Schedule`].
pub struct ScheduleFile {
    src: Source,
    params: Vec<ParamDef>,
    grid: Option<GridDef>,
    body: Vec<Stmt>,
}

impl ScheduleFile {
    /// Parses schedule text; `name` is used in messages (usually the path).
    pub fn parse(text: &str, name: &str) -> Result<ScheduleFile, SchedError> {
        let src = Source::new(name, text);
        let parsed = parse::parse(&src)?;
        Ok(ScheduleFile {
            src,
            params: parsed.params,
            grid: parsed.grid,
            body: parsed.body,
        })
    }

    /// Reads and parses a schedule file.
    pub fn read(path: impl AsRef<Path>) -> Result<ScheduleFile, SchedError> {
        let path = path.as_ref();
        let text = std::fs::read_to_string(path).map_err(|source| SchedError::Io {
            path: path.to_path_buf(),
            source,
        })?;
        ScheduleFile::parse(&text, &path.display().to_string())
    }

    /// The parameters with their current values (default or set), in definition order.
    pub fn params(&self) -> Vec<(String, String)> {
        self.params
            .iter()
            .map(|d| {
                (
                    d.name.clone(),
                    d.value.clone().unwrap_or_else(|| d.default.clone()),
                )
            })
            .collect()
    }

    /// Overrides a parameter's default (the value is checked where the parameter is used).
    pub fn set_param(&mut self, name: &str, value: &str) -> Result<(), SchedError> {
        match self.params.iter_mut().find(|d| d.name == name) {
            Some(d) => {
                d.value = Some(value.trim().to_string());
                Ok(())
            }
            None => Err(SchedError::UnknownParam {
                name: name.to_string(),
                known: self.params.iter().map(|d| d.name.clone()).collect(),
            }),
        }
    }

    /// Binds the rank count and builds the lazy program. Checks every value, every pattern
    /// against `nodes`, every rank expression on every rank, and that each rank's op count
    /// fits 32 bits.
    pub fn instantiate(&self, nodes: u32) -> Result<Schedule, SchedError> {
        if nodes == 0 {
            return Err(SchedError::ZeroNodes);
        }
        let mut b = Builder {
            file: self,
            p: nodes,
            grid: GridDims([nodes as i64, 1, 1]),
        };
        b.grid = b.grid_dims()?;
        let root = Node::seq(b.stmts(&self.body)?, nodes);
        for rank in 0..nodes {
            if let Some(ops) = root
                .checked_len(rank, nodes)
                .filter(|&n| n > u32::MAX as u128)
            {
                return Err(SchedError::TooManyOps {
                    file: self.src.name.clone(),
                    rank,
                    ops,
                });
            }
        }
        Ok(Schedule {
            p: nodes,
            params: self.params(),
            start_deps: root.has_start_dependents(),
            root,
        })
    }
}

/// Parses the schedule at `path`, applies `overrides` (parameter name, value) and binds
/// `nodes` ranks.
pub fn parse_schedule<K: AsRef<str>, V: AsRef<str>>(
    path: impl AsRef<Path>,
    nodes: u32,
    overrides: &[(K, V)],
) -> Result<Schedule, SchedError> {
    let mut f = ScheduleFile::read(path)?;
    for (k, v) in overrides {
        f.set_param(k.as_ref(), v.as_ref())?;
    }
    f.instantiate(nodes)
}

/// [`parse_schedule`] for text in memory; `name` is used in messages.
pub fn parse_schedule_str<K: AsRef<str>, V: AsRef<str>>(
    text: &str,
    name: &str,
    nodes: u32,
    overrides: &[(K, V)],
) -> Result<Schedule, SchedError> {
    let mut f = ScheduleFile::parse(text, name)?;
    for (k, v) in overrides {
        f.set_param(k.as_ref(), v.as_ref())?;
    }
    f.instantiate(nodes)
}

/// A schedule bound to a rank count: a lazy [`Program`] (time unit: picoseconds).
#[derive(Clone, Debug)]
pub struct Schedule {
    p: u32,
    params: Vec<(String, String)>,
    root: Node,
    /// Some op has `irequires` dependents (nonblocking calls of an `mpi` block).
    start_deps: bool,
}

impl Schedule {
    /// The parameter values used (name, value as written).
    pub fn params(&self) -> &[(String, String)] {
        &self.params
    }

    /// The same schedule with the calls of `mpi` blocks located on every lookup instead of in
    /// advance (the same answers; for tests of both paths).
    #[doc(hidden)]
    pub fn without_precomputed_calls(mut self) -> Schedule {
        fn walk(n: &mut Node) {
            match &mut n.kind {
                Kind::Leaf(Leaf::Mpi(m)) => m.drop_flat(),
                Kind::Leaf(_) => {}
                Kind::Seq(c) | Kind::Par(c) => c.iter_mut().for_each(walk),
                Kind::Repeat { body, .. } => walk(body),
            }
        }
        walk(&mut self.root);
        self
    }

    /// The collective if the schedule is exactly one collective phase (the engine may then
    /// run the [`Generated`] directly).
    pub fn single_collective(&self) -> Option<&Generated> {
        match &self.root.kind {
            Kind::Leaf(Leaf::Coll(g)) => Some(g),
            _ => None,
        }
    }
}

impl Program for Schedule {
    fn num_ranks(&self) -> u32 {
        self.p
    }
    fn num_cpus(&self) -> u8 {
        1
    }
    fn num_nics(&self) -> u8 {
        1
    }
    fn num_ops(&self, rank: u32) -> u32 {
        self.root.len(rank, self.p)
    }
    fn op(&self, rank: u32, id: u32) -> Op {
        self.root.op(rank, self.p, id)
    }
    fn depcount(&self, rank: u32, id: u32) -> u32 {
        self.root.depcount(rank, self.p, id, 0)
    }
    fn num_roots(&self, rank: u32) -> u32 {
        self.root.num_roots(rank, self.p)
    }
    fn root(&self, rank: u32, k: u32) -> u32 {
        self.root.root(rank, self.p, k)
    }
    fn for_each_dependent<F: FnMut(u32)>(&self, rank: u32, id: u32, kind: DepKind, mut f: F) {
        self.root
            .dependents(rank, self.p, id, kind, 0, Out::End, &mut f)
    }
    fn dense_counters(&self) -> bool {
        false
    }
    fn has_start_dependents(&self) -> bool {
        // Only `requires` links (between phases, inside Schedgen's collectives), except after
        // the nonblocking calls of `mpi` blocks.
        self.start_deps
    }
    fn min_send_size(&self) -> u64 {
        self.root.min_send_size()
    }
}

// ---------------------------------------------------------------------------------------------
// Instantiation

struct Builder<'a> {
    file: &'a ScheduleFile,
    p: u32,
    /// The grid's dimensions for this P (1-D, `nx = P`, without a `grid` statement).
    grid: GridDims,
}

impl Builder<'_> {
    fn err(&self, span: Span, msg: impl Into<String>, help: Option<String>) -> SchedError {
        self.file.src.diag(span, msg, help)
    }

    /// The text of a value (parameters replaced) and, for parameters, a note on where the
    /// value came from.
    fn text(&self, v: &Val) -> (String, Option<String>) {
        if !v.param {
            return (v.text.clone(), None);
        }
        let d = self
            .file
            .params
            .iter()
            .find(|d| d.name == v.text)
            .expect("checked by the parser");
        match &d.value {
            Some(val) => (
                val.clone(),
                Some(format!(
                    "parameter `{}` = `{val}` was set on the command line (--param {}={val})",
                    d.name, d.name
                )),
            ),
            None => (
                d.default.clone(),
                Some(format!(
                    "parameter `{}` = `{}` is defined on line {}",
                    d.name, d.default, d.span.line
                )),
            ),
        }
    }

    fn unit_err(&self, v: &Val, e: UnitError) -> SchedError {
        let (_, note) = self.text(v);
        self.err(v.span, e.to_string(), note)
    }

    fn size(&self, v: &Val) -> Result<u64, SchedError> {
        let (t, note) = self.text(v);
        match parse_size(&t) {
            Ok(0) => Err(self.err(v.span, format!("size `{t}` must be at least 1B"), note)),
            Ok(s) => Ok(s),
            Err(e) => Err(self.unit_err(v, e)),
        }
    }

    fn duration(&self, v: &Val) -> Result<u64, SchedError> {
        parse_duration(&self.text(v).0).map_err(|e| self.unit_err(v, e))
    }

    fn int(&self, v: &Val, what: &str, min: u64, max: u64) -> Result<u64, SchedError> {
        let (t, note) = self.text(v);
        let n: u64 = match t.parse() {
            Ok(n) => n,
            Err(_) if t.starts_with('-') && t[1..].chars().all(|c| c.is_ascii_digit()) => {
                return Err(self.err(
                    v.span,
                    format!("{what} must be at least {min}, got {t}"),
                    note,
                ))
            }
            Err(_) if !t.is_empty() && t.chars().all(|c| c.is_ascii_digit()) => {
                return Err(self.err(
                    v.span,
                    format!("{what} `{t}` is too large (at most {max})"),
                    note,
                ))
            }
            Err(_) => {
                return Err(self.err(
                    v.span,
                    format!("{what} must be an integer, got `{t}`"),
                    note,
                ))
            }
        };
        if n < min {
            return Err(self.err(
                v.span,
                format!("{what} must be at least {min}, got {n}"),
                note,
            ));
        }
        if n > max {
            return Err(self.err(
                v.span,
                format!("{what} `{n}` is too large (at most {max})"),
                note,
            ));
        }
        Ok(n)
    }

    fn tag(&self, v: &Option<Val>) -> Result<u32, SchedError> {
        match v {
            Some(v) => Ok(self.int(v, "tag", 0, u32::MAX as u64 - 1)? as u32),
            None => Ok(0),
        }
    }

    /// Resolves parameters and checks that the expression evaluates on every rank.
    fn expr(&self, e: &SpExpr) -> Result<Expr, SchedError> {
        let resolved = e.expr.resolve(&mut |name: &str| {
            let v = Val {
                text: name.to_string(),
                param: true,
                span: e.span,
            };
            let (t, note) = self.text(&v);
            t.parse::<i64>().map_err(|_| {
                self.err(
                    e.span,
                    format!("parameter `{name}` = `{t}` is not an integer"),
                    note,
                )
            })
        })?;
        let resolved = resolved.bind_grid(self.grid);
        for rank in 0..self.p {
            if let Err(err) = resolved.eval(rank, self.p) {
                return Err(self.err(
                    e.span,
                    format!("this expression {err} on rank {rank} (P = {})", self.p),
                    None,
                ));
            }
        }
        Ok(resolved)
    }

    /// A collective's options as Schedgen's generator takes them (`tag` as the tag offset;
    /// options other than the generator's, such as an mpi block's `tagbase`, are skipped).
    fn gen_options(&self, opts: &[(String, Span, Val)]) -> Result<GenOptions, SchedError> {
        let mut o = GenOptions {
            reduce_calc: Some(0),
            ..GenOptions::default()
        };
        for (key, _, v) in opts {
            match key.as_str() {
                "segment" => o.segment_size = Some(self.size(v)?),
                "nway" => o.nway = self.int(v, "nway", 1, u32::MAX as u64)? as u32,
                "root" => {
                    let r = self.int(v, "root", 0, u32::MAX as u64)?;
                    if r >= self.p as u64 {
                        return Err(self.err(
                            v.span,
                            format!(
                                "root {r} is not a rank: the ranks are 0 to {} (P = {})",
                                self.p.saturating_sub(1),
                                self.p
                            ),
                            None,
                        ));
                    }
                    o.root = r as u32;
                }
                "calc" => o.reduce_calc = Some(self.duration(v)?),
                "chain" => o.chain_sends = self.int(v, "chain", 0, 1)? == 1,
                "tag" => o.tag_offset = self.tag(&Some(v.clone()))?,
                _ => {}
            }
        }
        Ok(o)
    }

    /// The text of parameter `name` (its value, or its default).
    fn param_text(&self, name: &str) -> String {
        let v = Val {
            text: name.to_string(),
            param: true,
            span: Span {
                line: 1,
                col: 1,
                width: 1,
            },
        };
        self.text(&v).0
    }

    /// Evaluates the `grid` statement for this P (1-D without one).
    fn grid_dims(&self) -> Result<GridDims, SchedError> {
        let Some(g) = &self.file.grid else {
            return Ok(GridDims([self.p as i64, 1, 1]));
        };
        let mut dims = [1i64; 3];
        for (i, d) in g.dims.iter().enumerate() {
            let e = self.expr(d)?;
            let v = e.eval(0, self.p).unwrap_or(0);
            if v < 1 {
                return Err(self.err(
                    d.span,
                    format!(
                        "grid dimension {} is {v} for P = {}; it must be at least 1",
                        ["nx", "ny", "nz"][i],
                        self.p
                    ),
                    None,
                ));
            }
            dims[i] = v;
        }
        let prod = dims[0].saturating_mul(dims[1]).saturating_mul(dims[2]);
        if prod != self.p as i64 {
            let shown: Vec<String> = dims[..g.dims.len()].iter().map(|d| d.to_string()).collect();
            // The nearest rank counts below and above that the grid can use (within 100,000).
            let exprs: Vec<Expr> = g.dims.iter().filter_map(|d| self.expr(d).ok()).collect();
            let fits = |q: u32| {
                exprs
                    .iter()
                    .map(|e| e.eval(0, q).ok().filter(|&v| v >= 1))
                    .try_fold(1i64, |acc, v| v.map(|v| acc.saturating_mul(v)))
                    == Some(q as i64)
            };
            const SPAN: u32 = 100_000;
            let below = (self.p.saturating_sub(SPAN).max(1)..self.p)
                .rev()
                .find(|&q| fits(q));
            let above = (self.p.saturating_add(1)..=self.p.saturating_add(SPAN)).find(|&q| fits(q));
            let nearest = match (below, above) {
                (Some(b), Some(a)) => format!(" (nearest it can use: {b} and {a})"),
                (Some(q), None) | (None, Some(q)) => format!(" (nearest it can use: {q})"),
                (None, None) => String::new(),
            };
            return Err(self.err(
                g.span,
                format!(
                    "the grid is {} = {prod} ranks, but --nodes is {}{nearest}",
                    shown.join(" x "),
                    self.p
                ),
                Some("the grid's dimensions are functions of P; give a rank count the grid can use (e.g. a cube for `grid root(P, 3), root(P, 3), root(P, 3)`), or edit the `grid` line".to_string()),
            ));
        }
        Ok(GridDims(dims))
    }

    /// A quantity expression (`98ms * 8 / P`, `4MiB / (P*P)`): resolved, checked to measure
    /// `want`, bound to the grid, and evaluated on every rank (no error, not negative).
    fn quantity_expr(&self, e: &SpExpr, want: Dimension) -> Result<Expr, SchedError> {
        let unit = |t: &str, d: Dimension| -> Result<i64, String> {
            let v = match d {
                Dimension::Time => parse_duration(t).map_err(|e| e.to_string())?,
                Dimension::Size => parse_size(t).map_err(|e| e.to_string())?,
                Dimension::Number => return Err(format!("`{t}` is not a plain number")),
            };
            i64::try_from(v).map_err(|_| format!("`{t}` is too large"))
        };
        let mut param = |name: &str| self.param_text(name);
        let (x, dim) = e
            .expr
            .resolve_quantity(want, &mut param, &unit)
            .map_err(|m| self.err(e.span, m, None))?;
        if dim != want {
            let help = match want {
                Dimension::Time => "a duration needs a unit somewhere: `98ms / P`, `2us * nx`",
                _ => "a size needs a unit somewhere: `4MiB / (P*P)`, `968B * nx`",
            };
            return Err(self.err(
                e.span,
                format!(
                    "this expression is {}, not {}",
                    dim.describe(),
                    want.describe()
                ),
                Some(help.to_string()),
            ));
        }
        let x = x.bind_grid(self.grid);
        for rank in 0..self.p {
            match x.eval(rank, self.p) {
                Err(err) => {
                    return Err(self.err(
                        e.span,
                        format!("this expression {err} on rank {rank} (P = {})", self.p),
                        None,
                    ))
                }
                Ok(v) if v < 0 => {
                    return Err(self.err(
                        e.span,
                        format!(
                            "this expression is negative ({v}) on rank {rank} (P = {})",
                            self.p
                        ),
                        None,
                    ))
                }
                Ok(_) => {}
            }
            if !x.uses_rank() {
                break;
            }
        }
        Ok(x)
    }

    fn leaf(&self, l: Leaf) -> Node {
        Node::new(Kind::Leaf(l), self.p)
    }

    fn stmts(&self, body: &[Stmt]) -> Result<Vec<Node>, SchedError> {
        body.iter().map(|s| self.stmt(s)).collect()
    }

    fn stmt(&self, s: &Stmt) -> Result<Node, SchedError> {
        Ok(match s {
            Stmt::Calc { dur, cond } => self.leaf(Leaf::Calc {
                dur: match dur {
                    QArg::Val(v) => CalcDur::Fixed(self.duration(v)?),
                    QArg::Expr(e) => {
                        let x = self.quantity_expr(e, Dimension::Time)?;
                        if x.uses_rank() {
                            CalcDur::Expr(x)
                        } else {
                            CalcDur::Fixed(x.eval(0, self.p).unwrap_or(0) as u64)
                        }
                    }
                },
                cond: cond.as_ref().map(|c| self.expr(c)).transpose()?,
            }),
            Stmt::Mpi { body, span } => self.leaf(Leaf::Mpi(Box::new(self.mpi(body, *span)?))),
            Stmt::P2p {
                kind,
                size,
                peer,
                tag,
                cond,
            } => self.leaf(Leaf::P2p {
                kind: *kind,
                size: self.size(size)?,
                peer: self.expr(peer)?,
                tag: self.tag(tag)?,
                cond: cond.as_ref().map(|c| self.expr(c)).transpose()?,
            }),
            Stmt::Message {
                size,
                from,
                to,
                tag,
            } => {
                let size = self.size(size)?;
                let tag = self.tag(tag)?;
                let (fe, te) = (self.expr(from)?, self.expr(to)?);
                let (f, t) = (
                    fe.eval(0, self.p).unwrap_or(0),
                    te.eval(0, self.p).unwrap_or(0),
                );
                for (v, e) in [(f, from), (t, to)] {
                    if v < 0 || v >= self.p as i64 {
                        return Err(self.err(
                            e.span,
                            format!(
                                "rank {v} does not exist (ranks are 0 to {})",
                                self.p.saturating_sub(1)
                            ),
                            None,
                        ));
                    }
                }
                let on = |r: i64| {
                    Some(Expr::Bin(
                        crate::schedule::expr::BinOp::Eq,
                        Box::new(Expr::Rank),
                        Box::new(Expr::Int(r)),
                    ))
                };
                let p = self.p;
                Node::new(
                    Kind::Par(vec![
                        self.leaf(Leaf::P2p {
                            kind: P2pKind::Send,
                            size,
                            peer: Expr::Int(t),
                            tag,
                            cond: on(f),
                        }),
                        self.leaf(Leaf::P2p {
                            kind: P2pKind::Recv,
                            size,
                            peer: Expr::Int(f),
                            tag,
                            cond: on(t),
                        }),
                    ]),
                    p,
                )
            }
            Stmt::Coll {
                pattern,
                name_span,
                name,
                size,
                opts,
            } => {
                let d = self.size(size)?;
                let o = self.gen_options(opts)?;
                match Generated::with_options(*pattern, self.p, d, o) {
                    Ok(g) => self.leaf(Leaf::Coll(g)),
                    Err(e) => {
                        let help = match e {
                            GenError::NotPowerOfTwo { .. } | GenError::TooManyOps { .. } => Some(
                                format!("the number of ranks comes from --nodes ({})", self.p),
                            ),
                            _ => None,
                        };
                        let span = match e {
                            GenError::ZeroSegment { derived: false, .. } => opts
                                .iter()
                                .find(|(k, _, _)| k == "segment")
                                .map_or(*name_span, |(_, _, v)| v.span),
                            _ => *name_span,
                        };
                        let _ = name;
                        return Err(self.err(span, e.to_string(), help));
                    }
                }
            }
            Stmt::Repeat { count, body } => {
                let n = self.int(count, "repeat count", 1, u32::MAX as u64)? as u32;
                let body = Node::seq(self.stmts(body)?, self.p);
                if n == 1 {
                    body
                } else {
                    Node::new(
                        Kind::Repeat {
                            n,
                            body: Box::new(body),
                        },
                        self.p,
                    )
                }
            }
            Stmt::Concurrent { body } => Node::new(Kind::Par(self.stmts(body)?), self.p),
            Stmt::Sequence { body } => Node::seq(self.stmts(body)?, self.p),
        })
    }
}

// ---------------------------------------------------------------------------------------------
// The lazy program tree

/// A `calc` duration: fixed, or a quantity expression of the rank.
#[derive(Clone, Debug)]
enum CalcDur {
    Fixed(u64),
    Expr(Expr),
}

#[derive(Clone, Debug)]
enum Leaf {
    Coll(Generated),
    Mpi(Box<MpiProg>),
    Calc {
        dur: CalcDur,
        cond: Option<Expr>,
    },
    P2p {
        kind: P2pKind,
        size: u64,
        peer: Expr,
        tag: u32,
        cond: Option<Expr>,
    },
}

impl Leaf {
    fn len(&self, r: u32, p: u32) -> u32 {
        match self {
            Leaf::Coll(g) => g.num_ops(r),
            Leaf::Mpi(m) => m.len(r),
            Leaf::Calc { cond, .. } | Leaf::P2p { cond, .. } => {
                cond.as_ref().is_none_or(|c| c.holds(r, p)) as u32
            }
        }
    }
    fn op(&self, r: u32, p: u32, i: u32) -> Op {
        match self {
            Leaf::Coll(g) => g.op(r, i),
            Leaf::Mpi(m) => m.op(r, i),
            Leaf::Calc {
                dur: CalcDur::Fixed(d),
                ..
            } => Op::calc(*d),
            Leaf::Calc {
                dur: CalcDur::Expr(e),
                ..
            } => Op::calc(e.eval(r, p).unwrap_or(0).max(0) as u64),
            Leaf::P2p {
                kind: P2pKind::Send,
                size,
                peer,
                tag,
                ..
            } => Op::send(*size, peer.peer(r, p), *tag),
            Leaf::P2p {
                kind: P2pKind::Recv,
                size,
                peer,
                tag,
                ..
            } => Op::recv(*size, peer.peer(r, p), *tag),
        }
    }
    fn depcount(&self, r: u32, i: u32) -> u32 {
        match self {
            Leaf::Coll(g) => g.depcount(r, i),
            Leaf::Mpi(m) => m.depcount(r, i),
            _ => 0,
        }
    }
    fn num_roots(&self, r: u32, p: u32) -> u32 {
        match self {
            Leaf::Coll(g) => g.num_roots(r),
            Leaf::Mpi(m) => m.num_roots(r),
            _ => self.len(r, p),
        }
    }
    fn root(&self, r: u32, k: u32) -> u32 {
        match self {
            Leaf::Coll(g) => Program::root(g, r, k),
            Leaf::Mpi(m) => m.root(r, k),
            _ => 0,
        }
    }
    fn num_sinks(&self, r: u32, p: u32) -> u32 {
        match self {
            Leaf::Coll(g) => g.num_sinks(r),
            Leaf::Mpi(m) => m.num_sinks(r),
            _ => self.len(r, p),
        }
    }
    fn is_sink(&self, r: u32, i: u32) -> bool {
        match self {
            Leaf::Coll(g) => g.is_sink(r, i),
            Leaf::Mpi(m) => m.is_sink(r, i),
            _ => true,
        }
    }
}

/// Per-rank sizes when they are the same on every rank (cached at instantiation, so that
/// locating an op does not recompute them).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Uniform {
    len: u32,
    roots: u32,
    sinks: u32,
}

#[derive(Clone, Debug)]
struct Node {
    kind: Kind,
    uniform: Option<Uniform>,
}

#[derive(Clone, Debug)]
enum Kind {
    Leaf(Leaf),
    /// Children in sequence (see the module notes for the boundaries).
    Seq(Vec<Node>),
    /// Children side by side, laid out one after the other.
    Par(Vec<Node>),
    /// `n ≥ 2` copies of `body` in sequence.
    Repeat {
        n: u32,
        body: Box<Node>,
    },
}

/// What the sinks of a node release when they complete (ids are global).
#[derive(Clone, Copy)]
enum Out<'a> {
    End,
    One(u32),
    Roots { node: &'a Node, base: u32 },
}

/// How two consecutive non-empty phases are joined on a rank.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Link {
    /// A's single sink releases all roots of B.
    Direct,
    /// All sinks of A release B's single root.
    Funnel,
    /// A `calc 0` between A and B.
    Join,
}

fn link(a: &Node, b: &Node, r: u32, p: u32) -> Link {
    if a.num_sinks(r, p) == 1 {
        Link::Direct
    } else if b.num_roots(r, p) == 1 {
        Link::Funnel
    } else {
        Link::Join
    }
}

/// Where an id falls inside a sequence.
enum Hit<'a> {
    /// Inside `child` at `base`; `prev` is the previous non-empty child (and the link to it),
    /// `next` the following one (with its base) and the id of a join between them.
    Child {
        child: &'a Node,
        base: u32,
        prev: Option<(&'a Node, Link)>,
        next: Option<(&'a Node, u32, Link)>,
    },
    /// The join op between `prev` and `next` (`next` starts at `next_base`).
    Join {
        prev: &'a Node,
        next: &'a Node,
        next_base: u32,
    },
}

fn emit(out: Out<'_>, r: u32, p: u32, f: &mut dyn FnMut(u32)) {
    match out {
        Out::End => {}
        Out::One(x) => f(x),
        Out::Roots { node, base } => {
            for k in 0..node.num_roots(r, p) {
                f(base + node.root(r, p, k));
            }
        }
    }
}

fn in_count(prev: Option<(&Node, Link)>, outer: u32, r: u32, p: u32) -> u32 {
    match prev {
        None => outer,
        Some((a, Link::Funnel)) => a.num_sinks(r, p),
        Some(_) => 1,
    }
}

impl Node {
    /// Whether some op of the node has `irequires` dependents.
    fn has_start_dependents(&self) -> bool {
        match &self.kind {
            Kind::Leaf(Leaf::Mpi(m)) => m.has_start_dependents(),
            Kind::Leaf(_) => false,
            Kind::Seq(c) | Kind::Par(c) => c.iter().any(Node::has_start_dependents),
            Kind::Repeat { body, .. } => body.has_start_dependents(),
        }
    }

    /// A lower bound of the size of every send in the node (`u64::MAX` when it has none).
    fn min_send_size(&self) -> u64 {
        match &self.kind {
            Kind::Leaf(Leaf::Coll(g)) => g.min_send_size(),
            Kind::Leaf(Leaf::Mpi(m)) => m.min_send_size(),
            Kind::Leaf(Leaf::P2p {
                kind: P2pKind::Send,
                size,
                ..
            }) => *size,
            Kind::Leaf(_) => u64::MAX,
            Kind::Seq(c) | Kind::Par(c) => {
                c.iter().map(Node::min_send_size).min().unwrap_or(u64::MAX)
            }
            Kind::Repeat { body, .. } => body.min_send_size(),
        }
    }

    /// A node, with its per-rank sizes cached when they do not depend on the rank.
    fn new(kind: Kind, p: u32) -> Node {
        let mut n = Node {
            kind,
            uniform: None,
        };
        // Sizes beyond u32 are reported by `checked_len` at instantiation; never cache them.
        let fits = |r: u32| n.checked_len(r, p).is_some_and(|l| l <= u32::MAX as u128);
        if !(0..p).all(fits) {
            return n;
        }
        let at = |r: u32| Uniform {
            len: n.len(r, p),
            roots: n.num_roots(r, p),
            sinks: n.num_sinks(r, p),
        };
        let first = at(0);
        if (1..p).all(|r| at(r) == first) {
            n.uniform = Some(first);
        }
        n
    }

    /// A sequence; nested sequences are spliced in and a single child stands for itself.
    fn seq(children: Vec<Node>, p: u32) -> Node {
        let mut flat = Vec::with_capacity(children.len());
        for c in children {
            match c.kind {
                Kind::Seq(v) => flat.extend(v),
                _ => flat.push(c),
            }
        }
        if flat.len() == 1 {
            return flat.pop().unwrap();
        }
        Node::new(Kind::Seq(flat), p)
    }

    fn len(&self, r: u32, p: u32) -> u32 {
        if let Some(u) = self.uniform {
            return u.len;
        }
        match &self.kind {
            Kind::Leaf(l) => l.len(r, p),
            Kind::Par(v) => v.iter().map(|c| c.len(r, p)).sum(),
            Kind::Seq(v) => {
                let mut total = 0;
                let mut prev: Option<&Node> = None;
                for c in v {
                    let n = c.len(r, p);
                    if n == 0 {
                        continue;
                    }
                    if let Some(a) = prev {
                        total += (link(a, c, r, p) == Link::Join) as u32;
                    }
                    total += n;
                    prev = Some(c);
                }
                total
            }
            Kind::Repeat { n, body } => {
                let l = body.len(r, p);
                if l == 0 {
                    return 0;
                }
                let j = (link(body, body, r, p) == Link::Join) as u32;
                n * l + (n - 1) * j
            }
        }
    }

    /// `len` in 128 bits, checking every part before using it (`None` never happens; the
    /// value may exceed `u32::MAX`).
    fn checked_len(&self, r: u32, p: u32) -> Option<u128> {
        Some(match &self.kind {
            Kind::Leaf(l) => l.len(r, p) as u128,
            Kind::Par(v) => {
                let mut t = 0;
                for c in v {
                    t += c.checked_len(r, p)?;
                }
                t
            }
            Kind::Seq(v) => {
                let mut total = 0;
                let mut prev: Option<&Node> = None;
                for c in v {
                    let n = c.checked_len(r, p)?;
                    if n > u32::MAX as u128 {
                        return Some(n);
                    }
                    if n == 0 {
                        continue;
                    }
                    if let Some(a) = prev {
                        total += (link(a, c, r, p) == Link::Join) as u128;
                    }
                    total += n;
                    prev = Some(c);
                }
                total
            }
            Kind::Repeat { n, body } => {
                let l = body.checked_len(r, p)?;
                if l == 0 || l > u32::MAX as u128 {
                    return Some(l * *n as u128);
                }
                let j = (link(body, body, r, p) == Link::Join) as u128;
                *n as u128 * l + (*n as u128 - 1) * j
            }
        })
    }

    fn locate_seq<'a>(v: &'a [Node], r: u32, p: u32, i: u32) -> Hit<'a> {
        let mut base = 0;
        let mut prev: Option<(&Node, Link)> = None;
        let mut last: Option<&Node> = None;
        let mut iter = v.iter();
        while let Some(c) = iter.next() {
            let n = c.len(r, p);
            if n == 0 {
                continue;
            }
            if let Some(a) = last {
                let l = link(a, c, r, p);
                if l == Link::Join {
                    if i == base {
                        return Hit::Join {
                            prev: a,
                            next: c,
                            next_base: base + 1,
                        };
                    }
                    base += 1;
                }
                prev = Some((a, l));
            }
            if i < base + n {
                // Find the next non-empty child for the out-link.
                let next = iter.find(|d| d.len(r, p) > 0).map(|d| {
                    let l = link(c, d, r, p);
                    let nb = base + n + (l == Link::Join) as u32;
                    (d, nb, l)
                });
                return Hit::Child {
                    child: c,
                    base,
                    prev,
                    next,
                };
            }
            base += n;
            last = Some(c);
        }
        unreachable!("op id {i} out of range on rank {r}")
    }

    fn op(&self, r: u32, p: u32, i: u32) -> Op {
        match &self.kind {
            Kind::Leaf(l) => l.op(r, p, i),
            Kind::Par(v) => {
                let (c, base) = Node::locate_par(v, r, p, i);
                c.op(r, p, i - base)
            }
            Kind::Seq(v) => match Node::locate_seq(v, r, p, i) {
                Hit::Child { child, base, .. } => child.op(r, p, i - base),
                Hit::Join { .. } => Op::calc(0),
            },
            Kind::Repeat { body, .. } => {
                let (l, j) = (
                    body.len(r, p),
                    (link(body, body, r, p) == Link::Join) as u32,
                );
                let off = i % (l + j);
                if off == l {
                    Op::calc(0)
                } else {
                    body.op(r, p, off)
                }
            }
        }
    }

    fn locate_par(v: &[Node], r: u32, p: u32, i: u32) -> (&Node, u32) {
        let mut base = 0;
        for c in v {
            let n = c.len(r, p);
            if i < base + n {
                return (c, base);
            }
            base += n;
        }
        unreachable!("op id {i} out of range on rank {r}")
    }

    /// Dependency count of `i`; `inc` is what the node's roots wait for from outside.
    fn depcount(&self, r: u32, p: u32, i: u32, inc: u32) -> u32 {
        match &self.kind {
            Kind::Leaf(l) => match l.depcount(r, i) {
                0 => inc,
                d => d,
            },
            Kind::Par(v) => {
                let (c, base) = Node::locate_par(v, r, p, i);
                c.depcount(r, p, i - base, inc)
            }
            Kind::Seq(v) => match Node::locate_seq(v, r, p, i) {
                Hit::Child {
                    child, base, prev, ..
                } => child.depcount(r, p, i - base, in_count(prev, inc, r, p)),
                Hit::Join { prev, .. } => prev.num_sinks(r, p),
            },
            Kind::Repeat { body, .. } => {
                let (l, lk) = (body.len(r, p), link(body, body, r, p));
                let stride = l + (lk == Link::Join) as u32;
                let (k, off) = (i / stride, i % stride);
                if off == l {
                    body.num_sinks(r, p)
                } else if k == 0 {
                    body.depcount(r, p, off, inc)
                } else {
                    body.depcount(r, p, off, in_count(Some((body, lk)), inc, r, p))
                }
            }
        }
    }

    fn num_roots(&self, r: u32, p: u32) -> u32 {
        if let Some(u) = self.uniform {
            return u.roots;
        }
        match &self.kind {
            Kind::Leaf(l) => l.num_roots(r, p),
            Kind::Par(v) => v.iter().map(|c| c.num_roots(r, p)).sum(),
            Kind::Seq(v) => v
                .iter()
                .find(|c| c.len(r, p) > 0)
                .map_or(0, |c| c.num_roots(r, p)),
            Kind::Repeat { body, .. } => body.num_roots(r, p),
        }
    }

    fn root(&self, r: u32, p: u32, mut k: u32) -> u32 {
        match &self.kind {
            Kind::Leaf(l) => l.root(r, k),
            Kind::Par(v) => {
                let mut base = 0;
                for c in v {
                    let nr = c.num_roots(r, p);
                    if k < nr {
                        return base + c.root(r, p, k);
                    }
                    k -= nr;
                    base += c.len(r, p);
                }
                unreachable!("root index out of range")
            }
            Kind::Seq(v) => v
                .iter()
                .find(|c| c.len(r, p) > 0)
                .map_or(0, |c| c.root(r, p, k)),
            Kind::Repeat { body, .. } => body.root(r, p, k),
        }
    }

    fn num_sinks(&self, r: u32, p: u32) -> u32 {
        if let Some(u) = self.uniform {
            return u.sinks;
        }
        match &self.kind {
            Kind::Leaf(l) => l.num_sinks(r, p),
            Kind::Par(v) => v.iter().map(|c| c.num_sinks(r, p)).sum(),
            Kind::Seq(v) => v
                .iter()
                .rev()
                .find(|c| c.len(r, p) > 0)
                .map_or(0, |c| c.num_sinks(r, p)),
            Kind::Repeat { body, .. } => body.num_sinks(r, p),
        }
    }

    /// Calls `f` with the global ids released by `i` (local; the node starts at `base`);
    /// the node's sinks release `out`.
    fn dependents(
        &self,
        r: u32,
        p: u32,
        i: u32,
        kind: DepKind,
        base: u32,
        out: Out<'_>,
        f: &mut dyn FnMut(u32),
    ) {
        match &self.kind {
            Kind::Leaf(l) => {
                if let Leaf::Coll(g) = l {
                    g.for_each_dependent(r, i, kind, |x| f(base + x));
                }
                if let Leaf::Mpi(m) = l {
                    m.for_each_dependent(r, i, kind, &mut |x| f(base + x));
                }
                if kind == DepKind::Done && l.is_sink(r, i) {
                    emit(out, r, p, f);
                }
            }
            Kind::Par(v) => {
                let (c, b) = Node::locate_par(v, r, p, i);
                c.dependents(r, p, i - b, kind, base + b, out, f)
            }
            Kind::Seq(v) => match Node::locate_seq(v, r, p, i) {
                Hit::Child {
                    child,
                    base: b,
                    next,
                    ..
                } => {
                    let child_out = match next {
                        None => out,
                        Some((d, nb, Link::Direct)) => Out::Roots {
                            node: d,
                            base: base + nb,
                        },
                        Some((d, nb, Link::Funnel)) => Out::One(base + nb + d.root(r, p, 0)),
                        Some((_, nb, Link::Join)) => Out::One(base + nb - 1),
                    };
                    child.dependents(r, p, i - b, kind, base + b, child_out, f)
                }
                Hit::Join {
                    next, next_base, ..
                } => {
                    if kind == DepKind::Done {
                        emit(
                            Out::Roots {
                                node: next,
                                base: base + next_base,
                            },
                            r,
                            p,
                            f,
                        );
                    }
                }
            },
            Kind::Repeat { n, body } => {
                let (l, lk) = (body.len(r, p), link(body, body, r, p));
                let stride = l + (lk == Link::Join) as u32;
                let (k, off) = (i / stride, i % stride);
                let copy_base = base + k * stride;
                if off == l {
                    if kind == DepKind::Done {
                        emit(
                            Out::Roots {
                                node: body,
                                base: copy_base + stride,
                            },
                            r,
                            p,
                            f,
                        );
                    }
                    return;
                }
                let copy_out = if k + 1 == *n {
                    out
                } else {
                    match lk {
                        Link::Direct => Out::Roots {
                            node: body,
                            base: copy_base + stride,
                        },
                        Link::Funnel => Out::One(copy_base + stride + body.root(r, p, 0)),
                        Link::Join => Out::One(copy_base + l),
                    }
                };
                body.dependents(r, p, off, kind, copy_base, copy_out, f)
            }
        }
    }
}

/// A human-readable one-line summary of a collective (for reports).
pub fn describe(g: &Generated) -> String {
    let mut s = format!(
        "{} {} on {} ranks",
        g.pattern(),
        format_size(g.size()),
        g.p()
    );
    match g.pattern() {
        Collective::PipelinedRing => s += &format!(", segment {}", format_size(g.segment_size())),
        Collective::NwayDissemination => {
            s += &format!(
                ", nway {}, reduction calc {}",
                g.nway(),
                format_duration(g.reduce_calc())
            )
        }
        _ => {}
    }
    if g.pattern().has_root() && g.root_rank() != 0 {
        s += &format!(", root {}", g.root_rank());
    }
    s
}
