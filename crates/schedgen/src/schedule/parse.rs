//! Lexer and parser of schedule files (syntax only; values are checked when instantiated).
//!
//! The parser and every walk over what it builds (instantiation, evaluation, dropping) recurse
//! once per level of nesting, so nesting is bounded: blocks at most [`MAX_BLOCK_DEPTH`] deep,
//! expressions at most [`MAX_EXPR_DEPTH`] levels. Deeper input (5,000 nested `(` or `repeat 1 {`,
//! 20,000 `+` terms, 50,000 unary `-`) is a located error, never a stack overflow. The limits
//! are far beyond what a schedule needs and keep the deepest walk within a few hundred KB of
//! stack on any thread (rayon's workers have 2 MiB).

use crate::collective::Collective;
use crate::error::{Diagnostic, SchedError};
use crate::schedule::expr::{BinOp, Expr, Func};

/// Deepest nesting of `repeat`, `concurrent` and `sequence` blocks.
pub const MAX_BLOCK_DEPTH: usize = 64;
/// Deepest expression tree: each pair of parentheses, each unary `-` or `!`, and each binary
/// operator of a chain (`a + b + c` is two levels: it is evaluated as `(a + b) + c`) adds one
/// level.
pub const MAX_EXPR_DEPTH: usize = 256;

/// A place in the file: 1-based line and column, width in characters.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Span {
    pub line: usize,
    pub col: usize,
    pub width: usize,
}

impl Span {
    /// From the start of `self` to the end of `end` (same line), or `self` otherwise.
    fn to(self, end: Span) -> Span {
        if end.line == self.line && end.col + end.width >= self.col {
            Span {
                width: end.col + end.width - self.col,
                ..self
            }
        } else {
            self
        }
    }
}

#[derive(Clone, Debug, PartialEq, Eq)]
enum Tok {
    Word(String),
    /// Starts with a digit: `16`, `512MiB`, `21.064us`.
    Quantity(String),
    /// `${name}`.
    Param(String),
    Sym(&'static str),
    Newline,
    Eof,
}

#[derive(Clone, Debug)]
struct Token {
    tok: Tok,
    span: Span,
}

impl Token {
    fn describe(&self) -> String {
        match &self.tok {
            Tok::Word(w) => format!("`{w}`"),
            Tok::Quantity(q) => format!("`{q}`"),
            Tok::Param(p) => format!("`${{{p}}}`"),
            Tok::Sym(s) => format!("`{s}`"),
            Tok::Newline => "the end of the line".to_string(),
            Tok::Eof => "the end of the file".to_string(),
        }
    }
}

/// A value as written: a literal or a `${param}` use, resolved when instantiated.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Val {
    /// Literal text, or the parameter name when `param` is true.
    pub text: String,
    pub param: bool,
    pub span: Span,
}

/// An expression with the span of its text.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct SpExpr {
    pub expr: Expr,
    pub span: Span,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum P2pKind {
    Send,
    Recv,
}

/// A size or a duration: one value as before (`16KiB`, `${size}`), or a quantity expression
/// (`4MiB / (P*P)`, `98ms * 8 / P + 3us`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum QArg {
    Val(Val),
    Expr(SpExpr),
}

/// `grid E [, E [, E]]`: the process grid's dimensions (x fastest).
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct GridDef {
    pub dims: Vec<SpExpr>,
    pub span: Span,
}

/// A collective inside an `mpi { }` block: a Schedgen pattern, or MPICH's recursive doubling
/// allreduce as the trace conversion of spcl/atlahs' Schedgen writes `MPI_Allreduce`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum TraceColl {
    Gen(Collective),
    RecdoubMpich,
}

/// A statement inside an `mpi { }` block (one MPI call, a computation, or a repetition).
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum MStmt {
    Calc {
        dur: QArg,
        cond: Option<SpExpr>,
    },
    /// `send`/`recv` (blocking) or `isend`/`irecv` (nonblocking, optionally named `as r`).
    P2p {
        kind: P2pKind,
        nonblocking: bool,
        size: QArg,
        peer: SpExpr,
        tag: Option<Val>,
        name: Option<(String, Span)>,
        cond: Option<SpExpr>,
        span: Span,
    },
    /// `wait r` (skipped on a rank where `r` was not posted) or `waitall r1 r2 …` (always an
    /// op). `refs` holds, per name, the indices in the same block of the calls given that
    /// name before the wait (a rank waits for the last of them it posted).
    Wait {
        all: bool,
        names: Vec<(String, Span)>,
        refs: Vec<Vec<usize>>,
        cond: Option<SpExpr>,
        span: Span,
    },
    Coll {
        coll: TraceColl,
        name: String,
        name_span: Span,
        size: QArg,
        opts: Vec<(String, Span, Val)>,
    },
    Repeat {
        count: Val,
        body: Vec<MStmt>,
    },
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum Stmt {
    Calc {
        dur: QArg,
        cond: Option<SpExpr>,
    },
    P2p {
        kind: P2pKind,
        size: Val,
        peer: SpExpr,
        tag: Option<Val>,
        cond: Option<SpExpr>,
    },
    Message {
        size: Val,
        from: SpExpr,
        to: SpExpr,
        tag: Option<Val>,
    },
    Coll {
        pattern: Collective,
        name_span: Span,
        name: String,
        size: Val,
        opts: Vec<(String, Span, Val)>,
    },
    Repeat {
        count: Val,
        body: Vec<Stmt>,
    },
    Concurrent {
        body: Vec<Stmt>,
    },
    Sequence {
        body: Vec<Stmt>,
    },
    /// `mpi { … }`: MPI calls as Schedgen's trace conversion turns them into GOAL.
    Mpi {
        body: Vec<MStmt>,
        span: Span,
    },
}

/// A parameter definition: `param name = value`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct ParamDef {
    pub name: String,
    pub default: String,
    pub span: Span,
    /// A value set with `set_param` (overrides `default`).
    pub value: Option<String>,
}

/// The statement keywords (for messages).
pub(crate) const STATEMENTS: &str =
    "calc, send, recv, message, repeat, concurrent, sequence, param, grid, mpi, allreduce, bcast, reduce, alltoall, or a Schedgen pattern name";

/// The statements of an `mpi { }` block (for messages).
pub(crate) const MPI_STATEMENTS: &str =
    "calc, send, recv, isend, irecv, wait, waitall, repeat, barrier, allreduce, bcast, reduce, alltoall, or a Schedgen pattern name";

/// `(collective, algorithm) → pattern` for the readable collective statements.
pub(crate) const ALGORITHMS: &[(&str, &str, Collective)] = &[
    ("allreduce", "ring", Collective::AllreduceRing),
    ("allreduce", "recdoub", Collective::AllreduceRecdoub),
    ("allreduce", "butterfly", Collective::AllreduceRecdoub),
    ("allreduce", "dissemination", Collective::Dissemination),
    (
        "allreduce",
        "nwaydissemination",
        Collective::NwayDissemination,
    ),
    ("allreduce", "pipelinedring", Collective::PipelinedRing),
    ("bcast", "binomial", Collective::BinomialTreeBcast),
    ("bcast", "binary", Collective::BinaryTreeBcast),
    ("reduce", "binomial", Collective::BinomialTreeReduce),
    ("alltoall", "linear", Collective::LinearAlltoall),
];

fn algorithms_of(op: &str) -> String {
    ALGORITHMS
        .iter()
        .filter(|(o, _, _)| *o == op)
        .map(|(_, a, _)| *a)
        .collect::<Vec<_>>()
        .join(", ")
}

/// The options a pattern takes.
pub(crate) fn options_of(p: Collective) -> Vec<&'static str> {
    let mut v = Vec::new();
    match p {
        Collective::PipelinedRing => v.push("segment"),
        Collective::NwayDissemination => v.extend(["nway", "calc"]),
        Collective::BinomialTreeBcast => v.push("chain"),
        _ => {}
    }
    if p.has_root() {
        v.push("root");
    }
    v.push("tag");
    v
}

pub(crate) struct Source {
    pub name: String,
    pub lines: Vec<String>,
}

impl Source {
    pub(crate) fn new(name: &str, text: &str) -> Source {
        Source {
            name: name.to_string(),
            lines: text.lines().map(str::to_string).collect(),
        }
    }

    pub(crate) fn diag(
        &self,
        span: Span,
        message: impl Into<String>,
        help: Option<String>,
    ) -> SchedError {
        SchedError::At(Box::new(Diagnostic {
            file: self.name.clone(),
            line: span.line,
            col: span.col,
            width: span.width.max(1),
            source_line: self.lines.get(span.line - 1).cloned().unwrap_or_default(),
            message: message.into(),
            help,
        }))
    }
}

fn lex(src: &Source) -> Result<Vec<Token>, SchedError> {
    let mut out = Vec::new();
    for (li, line) in src.lines.iter().enumerate() {
        let chars: Vec<char> = line.chars().collect();
        let mut i = 0;
        let at = |col: usize, width: usize| Span {
            line: li + 1,
            col: col + 1,
            width,
        };
        while i < chars.len() {
            let c = chars[i];
            if c.is_whitespace() {
                i += 1;
                continue;
            }
            if c == '#' || (c == '/' && chars.get(i + 1) == Some(&'/')) {
                break;
            }
            let start = i;
            let tok = if c.is_ascii_alphabetic() || c == '_' {
                while i < chars.len() && (chars[i].is_ascii_alphanumeric() || chars[i] == '_') {
                    i += 1;
                }
                let mut w: String = chars[start..i].iter().collect();
                let rest: String = chars[i..].iter().take(9).collect();
                if w == "loggops" && rest == "-schedule" {
                    i += 9;
                    w = "loggops-schedule".to_string();
                }
                Tok::Word(w)
            } else if c.is_ascii_digit() {
                while i < chars.len() && (chars[i].is_ascii_digit() || chars[i] == '.') {
                    i += 1;
                }
                while i < chars.len() && (chars[i].is_alphabetic()) {
                    i += 1;
                }
                Tok::Quantity(chars[start..i].iter().collect())
            } else if c == '$' {
                let close = chars[i..].iter().position(|&x| x == '}').map(|k| k + i);
                let name: String = match close {
                    Some(end) if chars.get(i + 1) == Some(&'{') => {
                        chars[i + 2..end].iter().collect()
                    }
                    _ => String::new(),
                };
                let valid = name
                    .chars()
                    .next()
                    .is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
                    && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_');
                if !valid {
                    return Err(src.diag(
                        at(start, close.map_or(1, |e| e + 1 - start)),
                        "malformed parameter use",
                        Some("write a parameter as `${name}`".to_string()),
                    ));
                }
                i = close.unwrap() + 1;
                Tok::Param(name)
            } else {
                const TWO: [&str; 6] = ["==", "!=", "<=", ">=", "&&", "||"];
                const ONE: [&str; 15] = [
                    "{", "}", "(", ")", "=", "+", "-", "*", "/", "%", "<", ">", "!", ";", ",",
                ];
                let two: String = chars[i..].iter().take(2).collect();
                if let Some(s) = TWO.iter().find(|&&s| s == two) {
                    i += 2;
                    Tok::Sym(s)
                } else if let Some(s) = ONE.iter().find(|&&s| s.starts_with(c)) {
                    i += 1;
                    Tok::Sym(s)
                } else {
                    return Err(src.diag(
                        at(start, 1),
                        format!("unexpected character `{c}`"),
                        None,
                    ));
                }
            };
            out.push(Token {
                tok,
                span: at(start, i - start),
            });
        }
        out.push(Token {
            tok: Tok::Newline,
            span: at(chars.len(), 1),
        });
    }
    let end = Span {
        line: src.lines.len().max(1),
        col: src.lines.last().map_or(0, |l| l.chars().count()) + 1,
        width: 1,
    };
    out.push(Token {
        tok: Tok::Eof,
        span: end,
    });
    Ok(out)
}

pub(crate) struct Parsed {
    pub params: Vec<ParamDef>,
    pub grid: Option<GridDef>,
    pub body: Vec<Stmt>,
}

struct Parser<'a> {
    src: &'a Source,
    toks: Vec<Token>,
    pos: usize,
    params: Vec<ParamDef>,
    /// Parameter uses, checked against the definitions at the end.
    uses: Vec<(String, Span)>,
    /// Blocks open around the current statement.
    blocks: usize,
    /// Parentheses and unary operators open around the current token.
    nest: usize,
    /// Literals with units are allowed in the expression being parsed.
    quantities: bool,
    grid: Option<GridDef>,
}

pub(crate) fn parse(src: &Source) -> Result<Parsed, SchedError> {
    let toks = lex(src)?;
    let mut p = Parser {
        src,
        toks,
        pos: 0,
        params: Vec::new(),
        uses: Vec::new(),
        blocks: 0,
        nest: 0,
        quantities: false,
        grid: None,
    };
    p.header()?;
    let body = p.block(None)?;
    for (name, span) in &p.uses {
        if !p.params.iter().any(|d| &d.name == name) {
            let known = p
                .params
                .iter()
                .map(|d| d.name.as_str())
                .collect::<Vec<_>>()
                .join(", ");
            let help = if known.is_empty() {
                format!("define it with `param {name} = <value>`")
            } else {
                format!("defined parameters: {known}; define it with `param {name} = <value>`")
            };
            return Err(src.diag(*span, format!("unknown parameter `{name}`"), Some(help)));
        }
    }
    Ok(Parsed {
        params: p.params,
        grid: p.grid,
        body,
    })
}

impl Parser<'_> {
    fn peek(&self) -> &Token {
        &self.toks[self.pos.min(self.toks.len() - 1)]
    }
    /// Returns the current token and advances (past the end stays at `Eof`; `pos -= 1`
    /// after `next` always steps back to the token just returned).
    fn next(&mut self) -> Token {
        let t = self.peek().clone();
        self.pos += 1;
        t
    }
    fn is_sym(&self, s: &str) -> bool {
        matches!(&self.peek().tok, Tok::Sym(x) if *x == s)
    }
    fn is_word(&self, w: &str) -> bool {
        matches!(&self.peek().tok, Tok::Word(x) if x == w)
    }

    fn unexpected(&self, expected: &str) -> SchedError {
        let t = self.peek();
        self.src.diag(
            t.span,
            format!("expected {expected}, found {}", t.describe()),
            None,
        )
    }

    fn skip_newlines(&mut self) {
        while matches!(self.peek().tok, Tok::Newline) || self.is_sym(";") {
            self.next();
        }
    }

    fn header(&mut self) -> Result<(), SchedError> {
        self.skip_newlines();
        let t = self.peek().clone();
        match &t.tok {
            Tok::Word(w) if w == "loggops-schedule" => {
                self.next();
                let v = self.next();
                match &v.tok {
                    Tok::Quantity(q) if q == "1" => {}
                    Tok::Quantity(q) => {
                        return Err(self.src.diag(
                            v.span,
                            format!("unsupported schedule format version `{q}`"),
                            Some("this loggops-sim reads `loggops-schedule 1`".to_string()),
                        ))
                    }
                    _ => {
                        self.pos -= 1;
                        return Err(self.unexpected("the format version `1` after `loggops-schedule`"));
                    }
                }
                self.end_of_statement()
            }
            Tok::Word(w) if w == "num_ranks" => Err(self.src.diag(
                t.span,
                "this is an explicit GOAL file, not a loggops schedule",
                Some("explicit GOAL files are read by the GOAL parser; schedules start with `loggops-schedule 1`".to_string()),
            )),
            _ => Err(self.src.diag(
                t.span,
                format!("expected `loggops-schedule 1` as the first line, found {}", t.describe()),
                None,
            )),
        }
    }

    fn end_of_statement(&mut self) -> Result<(), SchedError> {
        match self.peek().tok {
            Tok::Newline | Tok::Eof => Ok(()),
            Tok::Sym(";") | Tok::Sym("}") => Ok(()),
            _ => Err(self.unexpected("the end of the statement")),
        }
    }

    /// Statements until `}` (when `open` is the span of the `{`) or the end of the file.
    fn block(&mut self, open: Option<Span>) -> Result<Vec<Stmt>, SchedError> {
        let mut body = Vec::new();
        loop {
            self.skip_newlines();
            let t = self.peek().clone();
            match t.tok {
                Tok::Eof => {
                    if let Some(open) = open {
                        return Err(self.src.diag(
                            open,
                            "this `{` is never closed",
                            Some("add a `}` line".to_string()),
                        ));
                    }
                    return Ok(body);
                }
                Tok::Sym("}") => {
                    if open.is_some() {
                        self.next();
                        return Ok(body);
                    }
                    return Err(self
                        .src
                        .diag(t.span, "unexpected `}` (no block is open)", None));
                }
                _ => {}
            }
            if let Some(s) = self.statement(open.is_some())? {
                body.push(s);
            }
            self.end_of_statement()?;
        }
    }

    fn statement(&mut self, nested: bool) -> Result<Option<Stmt>, SchedError> {
        let t = self.next();
        let word = match &t.tok {
            Tok::Word(w) => w.clone(),
            _ => {
                self.pos -= 1;
                return Err(self.unexpected(&format!("a statement ({STATEMENTS})")));
            }
        };
        Ok(Some(match word.as_str() {
            "loggops-schedule" => {
                return Err(self.src.diag(
                    t.span,
                    "the `loggops-schedule` header may appear only once, on the first line",
                    None,
                ))
            }
            "param" => {
                if nested {
                    return Err(self.src.diag(
                        t.span,
                        "parameters must be defined at the top level, not inside a block",
                        None,
                    ));
                }
                self.param()?;
                return Ok(None);
            }
            "calc" => {
                let dur = self.quantity("a duration such as `21.064us`")?;
                let cond = self.condition()?;
                Stmt::Calc { dur, cond }
            }
            "grid" => {
                if nested {
                    return Err(self.src.diag(
                        t.span,
                        "the grid must be defined at the top level, not inside a block",
                        None,
                    ));
                }
                if let Some(g) = &self.grid {
                    return Err(self.src.diag(
                        t.span,
                        "the grid is defined twice",
                        Some(format!("first defined on line {}", g.span.line)),
                    ));
                }
                let mut dims = vec![self.expr()?];
                while self.is_sym(",") {
                    self.next();
                    if dims.len() == 3 {
                        return Err(self.src.diag(
                            self.peek().span,
                            "a grid has at most three dimensions",
                            None,
                        ));
                    }
                    dims.push(self.expr()?);
                }
                for d in &dims {
                    if d.expr.uses_rank() || d.expr.uses_grid() {
                        return Err(self.src.diag(
                            d.span,
                            "a grid dimension must not depend on `rank` or on the grid",
                            Some("write each dimension with `P`, integers and parameters, e.g. `grid root(P, 3), root(P, 3), root(P, 3)`".to_string()),
                        ));
                    }
                }
                self.grid = Some(GridDef { dims, span: t.span });
                return Ok(None);
            }
            "mpi" => {
                let open = self.open_brace()?;
                let body = self.mpi_block(open)?;
                Stmt::Mpi { body, span: t.span }
            }
            "send" | "recv" => {
                let kind = if word == "send" {
                    P2pKind::Send
                } else {
                    P2pKind::Recv
                };
                let size = self.value("a size such as `1MiB`")?;
                let dir = if kind == P2pKind::Send { "to" } else { "from" };
                self.keyword(dir)?;
                let peer = self.expr()?;
                let tag = self.opt_value("tag")?;
                let cond = self.condition()?;
                Stmt::P2p {
                    kind,
                    size,
                    peer,
                    tag,
                    cond,
                }
            }
            "message" => {
                let size = self.value("a size such as `1MiB`")?;
                self.keyword("from")?;
                let from = self.expr()?;
                self.keyword("to")?;
                let to = self.expr()?;
                for e in [&from, &to] {
                    if e.expr.uses_rank() {
                        return Err(self.src.diag(
                            e.span,
                            "the ends of a `message` must not depend on `rank`",
                            Some("for a pattern over all ranks use `send`/`recv` inside `concurrent { }`".to_string()),
                        ));
                    }
                }
                let tag = self.opt_value("tag")?;
                Stmt::Message {
                    size,
                    from,
                    to,
                    tag,
                }
            }
            "repeat" => {
                let count = self.value("a repeat count")?;
                let open = self.open_brace()?;
                Stmt::Repeat {
                    count,
                    body: self.nested_block(open)?,
                }
            }
            "concurrent" => {
                let open = self.open_brace()?;
                Stmt::Concurrent {
                    body: self.nested_block(open)?,
                }
            }
            "sequence" => {
                let open = self.open_brace()?;
                Stmt::Sequence {
                    body: self.nested_block(open)?,
                }
            }
            "allreduce" | "bcast" | "reduce" | "alltoall" => {
                let alg = self.next();
                let Tok::Word(a) = &alg.tok else {
                    self.pos -= 1;
                    return Err(self
                        .unexpected(&format!("the {word} algorithm ({})", algorithms_of(&word))));
                };
                let Some(&(_, _, pattern)) =
                    ALGORITHMS.iter().find(|(o, al, _)| *o == word && al == a)
                else {
                    return Err(self.src.diag(
                        t.span.to(alg.span),
                        format!("unknown collective `{word} {a}`"),
                        Some(format!("known {word} algorithms: {}", algorithms_of(&word))),
                    ));
                };
                self.collective(pattern, format!("{word} {a}"), t.span.to(alg.span))?
            }
            w => match w.parse::<Collective>() {
                Ok(pattern) => self.collective(pattern, w.to_string(), t.span)?,
                Err(_) => {
                    return Err(self.src.diag(
                        t.span,
                        format!("unknown statement or collective `{w}`"),
                        Some(format!(
                            "expected {STATEMENTS}; collectives: {}; Schedgen patterns: {}",
                            ALGORITHMS
                                .iter()
                                .map(|(o, a, _)| format!("{o} {a}"))
                                .collect::<Vec<_>>()
                                .join(", "),
                            Collective::known_names()
                        )),
                    ));
                }
            },
        }))
    }

    /// A size or duration: a single value as before, or an expression with units.
    fn quantity(&mut self, what: &str) -> Result<QArg, SchedError> {
        let save = self.pos;
        if matches!(
            self.peek().tok,
            Tok::Quantity(_) | Tok::Word(_) | Tok::Param(_) | Tok::Sym("-")
        ) {
            if let Ok(v) = self.value(what) {
                let binop = matches!(&self.peek().tok, Tok::Sym(s) if ["+", "-", "*", "/", "%"].contains(s));
                if !binop {
                    return Ok(QArg::Val(v));
                }
            }
            self.pos = save;
        }
        if !matches!(
            self.peek().tok,
            Tok::Quantity(_) | Tok::Word(_) | Tok::Param(_) | Tok::Sym("-") | Tok::Sym("(")
        ) {
            return Err(self.unexpected(what));
        }
        self.quantities = true;
        let e = self.expr();
        self.quantities = false;
        Ok(QArg::Expr(e?))
    }

    /// The statements of an `mpi { }` block whose `{` is at `open`; resolves request names.
    fn mpi_block(&mut self, open: Span) -> Result<Vec<MStmt>, SchedError> {
        if self.blocks >= MAX_BLOCK_DEPTH {
            return Err(self.src.diag(
                open,
                format!("blocks nest too deeply: this `{{` opens level {}, and at most {MAX_BLOCK_DEPTH} are allowed", self.blocks + 1),
                None,
            ));
        }
        self.blocks += 1;
        let body = self.mpi_body(open);
        self.blocks -= 1;
        body
    }

    fn mpi_body(&mut self, open: Span) -> Result<Vec<MStmt>, SchedError> {
        let mut body: Vec<MStmt> = Vec::new();
        loop {
            self.skip_newlines();
            let t = self.peek().clone();
            match t.tok {
                Tok::Eof => {
                    return Err(self.src.diag(
                        open,
                        "this `{` is never closed",
                        Some("add a `}` line".to_string()),
                    ))
                }
                Tok::Sym("}") => {
                    self.next();
                    return Ok(body);
                }
                _ => {}
            }
            let mut s = self.mpi_statement()?;
            if let MStmt::Wait { names, refs, .. } = &mut s {
                for (name, span) in names.iter() {
                    let found: Vec<usize> = body
                        .iter()
                        .enumerate()
                        .filter(|(_, b)| {
                            matches!(b, MStmt::P2p { name: Some((n, _)), .. } if n == name)
                        })
                        .map(|(i, _)| i)
                        .collect();
                    match found.is_empty() {
                        false => refs.push(found),
                        true => {
                            return Err(self.src.diag(
                                *span,
                                format!("no request `{name}` is posted before this wait in the same block"),
                                Some("name a request with `isend ... as NAME` or `irecv ... as NAME` earlier in the same block (a wait inside `repeat` refers to requests of the same repetition)".to_string()),
                            ));
                        }
                    }
                }
            }
            body.push(s);
            self.end_of_statement()?;
        }
    }

    fn mpi_statement(&mut self) -> Result<MStmt, SchedError> {
        let t = self.next();
        let word = match &t.tok {
            Tok::Word(w) => w.clone(),
            _ => {
                self.pos -= 1;
                return Err(
                    self.unexpected(&format!("a statement of an mpi block ({MPI_STATEMENTS})"))
                );
            }
        };
        Ok(match word.as_str() {
            "calc" => {
                let dur = self.quantity("a duration such as `21.064us`")?;
                let cond = self.condition()?;
                MStmt::Calc { dur, cond }
            }
            "send" | "recv" | "isend" | "irecv" => {
                let kind = if word.ends_with("send") {
                    P2pKind::Send
                } else {
                    P2pKind::Recv
                };
                let nonblocking = word.starts_with('i');
                let size = self.quantity("a size such as `1MiB`")?;
                self.keyword(if kind == P2pKind::Send { "to" } else { "from" })?;
                let peer = self.expr()?;
                let tag = self.opt_value("tag")?;
                let name = if self.is_word("as") {
                    let at = self.next().span;
                    let n = self.next();
                    match n.tok {
                        Tok::Word(w) if !nonblocking => {
                            return Err(self.src.diag(
                                at.to(n.span),
                                format!("a blocking `{word}` has no request to name (`as {w}`)"),
                                Some(format!("use `i{word}` for a nonblocking call that a later `wait` completes")),
                            ))
                        }
                        Tok::Word(w) => Some((w, n.span)),
                        _ => {
                            self.pos -= 1;
                            return Err(self.unexpected("a request name after `as`"));
                        }
                    }
                } else {
                    None
                };
                let cond = self.condition()?;
                MStmt::P2p {
                    kind,
                    nonblocking,
                    size,
                    peer,
                    tag,
                    name,
                    cond,
                    span: t.span,
                }
            }
            "wait" | "waitall" => {
                let mut names = Vec::new();
                while let Tok::Word(w) = &self.peek().tok {
                    if w == "if" {
                        break;
                    }
                    let w = w.clone();
                    names.push((w, self.next().span));
                }
                if word == "wait" && names.len() != 1 {
                    return Err(self.src.diag(
                        t.span,
                        "`wait` completes exactly one request",
                        Some(
                            "write `wait NAME`, or `waitall NAME1 NAME2 …` for several".to_string(),
                        ),
                    ));
                }
                let cond = self.condition()?;
                MStmt::Wait {
                    all: word == "waitall",
                    names,
                    refs: Vec::new(),
                    cond,
                    span: t.span,
                }
            }
            "repeat" => {
                let count = self.value("a repeat count")?;
                let open = self.open_brace()?;
                MStmt::Repeat {
                    count,
                    body: self.mpi_block(open)?,
                }
            }
            "barrier" => MStmt::Coll {
                coll: TraceColl::Gen(Collective::Dissemination),
                name: "barrier".to_string(),
                name_span: t.span,
                size: QArg::Val(Val {
                    text: "1B".to_string(),
                    param: false,
                    span: t.span,
                }),
                opts: self.coll_options(TraceColl::Gen(Collective::Dissemination), "barrier")?,
            },
            "allreduce" | "bcast" | "reduce" | "alltoall" => {
                let alg = self.next();
                let Tok::Word(a) = &alg.tok else {
                    self.pos -= 1;
                    return Err(self.unexpected(&format!(
                        "the {word} algorithm ({}{})",
                        algorithms_of(&word),
                        if word == "allreduce" {
                            ", recdoub_mpich"
                        } else {
                            ""
                        }
                    )));
                };
                let coll = if word == "allreduce" && a == "recdoub_mpich" {
                    TraceColl::RecdoubMpich
                } else {
                    match ALGORITHMS.iter().find(|(o, al, _)| *o == word && al == a) {
                        Some(&(_, _, pattern)) => TraceColl::Gen(pattern),
                        None => {
                            return Err(self.src.diag(
                                t.span.to(alg.span),
                                format!("unknown collective `{word} {a}`"),
                                Some(format!(
                                    "known {word} algorithms: {}{}",
                                    algorithms_of(&word),
                                    if word == "allreduce" {
                                        ", recdoub_mpich"
                                    } else {
                                        ""
                                    }
                                )),
                            ))
                        }
                    }
                };
                let name = format!("{word} {a}");
                let size = self.quantity("a size such as `8B`")?;
                let opts = self.coll_options(coll, &name)?;
                MStmt::Coll {
                    coll,
                    name,
                    name_span: t.span.to(alg.span),
                    size,
                    opts,
                }
            }
            w => match w.parse::<Collective>() {
                Ok(pattern) => {
                    let size = self.quantity("a size such as `8B`")?;
                    let coll = TraceColl::Gen(pattern);
                    let opts = self.coll_options(coll, w)?;
                    MStmt::Coll {
                        coll,
                        name: w.to_string(),
                        name_span: t.span,
                        size,
                        opts,
                    }
                }
                Err(_) => {
                    let help = match w {
                        "concurrent" | "sequence" | "message" | "param" | "grid" | "mpi" => {
                            format!("`{w}` is not allowed inside an mpi block")
                        }
                        _ => format!("an mpi block takes {MPI_STATEMENTS}"),
                    };
                    return Err(self.src.diag(
                        t.span,
                        format!("unknown statement `{w}` in an mpi block"),
                        Some(help),
                    ));
                }
            },
        })
    }

    /// The options of a collective in an mpi block: the pattern's own, `tag` (a fixed tag) and
    /// `tagbase` (the k-th collective of a rank gets tag `tagbase + k`; default 1000000).
    fn coll_options(
        &mut self,
        coll: TraceColl,
        name: &str,
    ) -> Result<Vec<(String, Span, Val)>, SchedError> {
        let mut allowed = match coll {
            TraceColl::Gen(p) => options_of(p),
            TraceColl::RecdoubMpich => vec!["tag"],
        };
        allowed.push("tagbase");
        let opts = self.options(&allowed, name)?;
        if opts.iter().any(|(o, _, _)| o == "tag") && opts.iter().any(|(o, _, _)| o == "tagbase") {
            let span = opts
                .iter()
                .find(|(o, _, _)| o == "tagbase")
                .map(|o| o.1)
                .unwrap();
            return Err(self.src.diag(
                span,
                "give either `tag` (one fixed tag) or `tagbase` (numbered tags), not both",
                None,
            ));
        }
        Ok(opts)
    }

    /// `KEY VALUE` options while the next word is one: each allowed, none twice.
    fn options(
        &mut self,
        allowed: &[&str],
        name: &str,
    ) -> Result<Vec<(String, Span, Val)>, SchedError> {
        let mut opts: Vec<(String, Span, Val)> = Vec::new();
        while let Tok::Word(w) = &self.peek().tok {
            let w = w.clone();
            let span = self.peek().span;
            if !allowed.contains(&w.as_str()) {
                return Err(self.src.diag(
                    span,
                    format!("option `{w}` does not apply to {name}"),
                    Some(format!("{name} takes: {}", allowed.join(", "))),
                ));
            }
            if opts.iter().any(|(o, _, _)| *o == w) {
                return Err(self
                    .src
                    .diag(span, format!("option `{w}` is given twice"), None));
            }
            self.next();
            let v = self.value(&format!("a value for `{w}`"))?;
            opts.push((w, span, v));
        }
        Ok(opts)
    }

    fn collective(
        &mut self,
        pattern: Collective,
        name: String,
        name_span: Span,
    ) -> Result<Stmt, SchedError> {
        let size = self.value("a size such as `512MiB`")?;
        let opts = self.options(&options_of(pattern), &name)?;
        Ok(Stmt::Coll {
            pattern,
            name_span,
            name,
            size,
            opts,
        })
    }

    /// The body of a block whose `{` is at `open`, at most [`MAX_BLOCK_DEPTH`] deep.
    fn nested_block(&mut self, open: Span) -> Result<Vec<Stmt>, SchedError> {
        if self.blocks >= MAX_BLOCK_DEPTH {
            return Err(self.src.diag(
                open,
                format!(
                    "blocks nest too deeply: this `{{` opens level {}, and at most {MAX_BLOCK_DEPTH} are allowed",
                    self.blocks + 1
                ),
                Some("`repeat`, `concurrent` and `sequence` blocks may be nested at most 64 deep; flatten the schedule".to_string()),
            ));
        }
        self.blocks += 1;
        let body = self.block(Some(open));
        self.blocks -= 1;
        body
    }

    fn open_brace(&mut self) -> Result<Span, SchedError> {
        if self.is_sym("{") {
            Ok(self.next().span)
        } else {
            Err(self.unexpected("`{`"))
        }
    }

    fn keyword(&mut self, w: &str) -> Result<(), SchedError> {
        if self.is_word(w) {
            self.next();
            Ok(())
        } else {
            Err(self.unexpected(&format!("`{w}`")))
        }
    }

    fn param(&mut self) -> Result<(), SchedError> {
        let t = self.next();
        let Tok::Word(name) = t.tok else {
            self.pos -= 1;
            return Err(self.unexpected("a parameter name"));
        };
        if matches!(name.as_str(), "rank" | "P" | "nodes") {
            return Err(self.src.diag(
                t.span,
                format!("`{name}` is a built-in name and cannot be a parameter"),
                None,
            ));
        }
        if let Some(prev) = self.params.iter().find(|d| d.name == name) {
            return Err(self.src.diag(
                t.span,
                format!("parameter `{name}` is defined twice"),
                Some(format!("first defined on line {}", prev.span.line)),
            ));
        }
        if !self.is_sym("=") {
            return Err(self.unexpected("`=`"));
        }
        self.next();
        let v = self.value(&format!("a value for parameter `{name}`"))?;
        if v.param {
            return Err(self.src.diag(
                v.span,
                "a parameter's default cannot use another parameter",
                None,
            ));
        }
        self.params.push(ParamDef {
            name,
            default: v.text,
            span: t.span,
            value: None,
        });
        Ok(())
    }

    /// A single value: literal quantity or word, `-quantity` (rejected later with a clear
    /// message), or `${param}`.
    fn value(&mut self, what: &str) -> Result<Val, SchedError> {
        let t = self.peek().clone();
        match &t.tok {
            Tok::Quantity(q) | Tok::Word(q) => {
                self.next();
                Ok(Val {
                    text: q.clone(),
                    param: false,
                    span: t.span,
                })
            }
            Tok::Param(p) => {
                self.next();
                self.uses.push((p.clone(), t.span));
                Ok(Val {
                    text: p.clone(),
                    param: true,
                    span: t.span,
                })
            }
            Tok::Sym("-") => {
                self.next();
                match self.peek().tok.clone() {
                    Tok::Quantity(q) => {
                        let end = self.next().span;
                        Ok(Val {
                            text: format!("-{q}"),
                            param: false,
                            span: t.span.to(end),
                        })
                    }
                    _ => Err(self.unexpected(what)),
                }
            }
            _ => Err(self.unexpected(what)),
        }
    }

    fn opt_value(&mut self, key: &str) -> Result<Option<Val>, SchedError> {
        if self.is_word(key) {
            self.next();
            Ok(Some(self.value(&format!("a value for `{key}`"))?))
        } else {
            Ok(None)
        }
    }

    fn condition(&mut self) -> Result<Option<SpExpr>, SchedError> {
        if self.is_word("if") {
            self.next();
            Ok(Some(self.expr()?))
        } else {
            Ok(None)
        }
    }

    fn expr(&mut self) -> Result<SpExpr, SchedError> {
        let start = self.peek().span;
        let (expr, _) = self.binary(0)?;
        let end = self.toks[self.pos.saturating_sub(1).min(self.toks.len() - 1)].span;
        Ok(SpExpr {
            expr,
            span: start.to(end),
        })
    }

    /// The error for an expression deeper than [`MAX_EXPR_DEPTH`], at the token that goes
    /// beyond it.
    fn too_deep(&self, at: Span) -> SchedError {
        self.src.diag(
            at,
            format!("expression nested too deeply: more than {MAX_EXPR_DEPTH} levels"),
            Some("parentheses, unary `-` and `!`, and every operator of a chain (`a + b + c` is two) count one level each; simplify the expression".to_string()),
        )
    }

    /// An expression at operator precedence `level` and its depth (a leaf is 0).
    fn binary(&mut self, level: usize) -> Result<(Expr, usize), SchedError> {
        const LEVELS: [&[(&str, BinOp)]; 5] = [
            &[("||", BinOp::Or)],
            &[("&&", BinOp::And)],
            &[
                ("==", BinOp::Eq),
                ("!=", BinOp::Ne),
                ("<=", BinOp::Le),
                (">=", BinOp::Ge),
                ("<", BinOp::Lt),
                (">", BinOp::Gt),
            ],
            &[("+", BinOp::Add), ("-", BinOp::Sub)],
            &[("*", BinOp::Mul), ("/", BinOp::Div), ("%", BinOp::Rem)],
        ];
        if level == LEVELS.len() {
            return self.unary();
        }
        let (mut lhs, mut depth) = self.binary(level + 1)?;
        loop {
            let op = match &self.peek().tok {
                Tok::Sym(s) => LEVELS[level]
                    .iter()
                    .find(|(x, _)| x == s)
                    .map(|(_, op)| *op),
                _ => None,
            };
            let Some(op) = op else {
                return Ok((lhs, depth));
            };
            let at = self.next().span;
            let (rhs, rd) = self.binary(level + 1)?;
            // Checked before the node is built: a tree deeper than the limit is never made
            // (dropping it would recurse as deep).
            depth = depth.max(rd) + 1;
            if depth + self.nest > MAX_EXPR_DEPTH {
                return Err(self.too_deep(at));
            }
            lhs = Expr::Bin(op, Box::new(lhs), Box::new(rhs));
        }
    }

    /// An operand: a unary operator, parentheses, or a leaf; with its depth.
    fn unary(&mut self) -> Result<(Expr, usize), SchedError> {
        let t = self.next();
        if matches!(t.tok, Tok::Sym("-") | Tok::Sym("!") | Tok::Sym("(")) {
            if self.nest >= MAX_EXPR_DEPTH {
                return Err(self.too_deep(t.span));
            }
            self.nest += 1;
            let inner = self.nested_unary(&t);
            self.nest -= 1;
            return inner;
        }
        self.leaf(t).map(|e| (e, 0))
    }

    fn nested_unary(&mut self, t: &Token) -> Result<(Expr, usize), SchedError> {
        match &t.tok {
            Tok::Sym("-") => {
                let (e, d) = self.unary()?;
                Ok((Expr::Neg(Box::new(e)), d + 1))
            }
            Tok::Sym("!") => {
                let (e, d) = self.unary()?;
                Ok((Expr::Not(Box::new(e)), d + 1))
            }
            _ => {
                let (e, d) = self.binary(0)?;
                if !self.is_sym(")") {
                    return Err(self.unexpected("`)`"));
                }
                self.next();
                Ok((e, d + 1))
            }
        }
    }

    fn leaf(&mut self, t: Token) -> Result<Expr, SchedError> {
        match &t.tok {
            Tok::Word(w) if w == "rank" => Ok(Expr::Rank),
            Tok::Word(w) if w == "P" || w == "nodes" => Ok(Expr::P),
            Tok::Word(w) if matches!(w.as_str(), "x" | "y" | "z") => {
                Ok(Expr::Coord(w.as_bytes()[0] - b'x'))
            }
            Tok::Word(w) if matches!(w.as_str(), "nx" | "ny" | "nz") => {
                Ok(Expr::Dim(w.as_bytes()[1] - b'x'))
            }
            Tok::Word(w) if Func::from_name(w).is_some() && self.is_sym("(") => {
                let f = Func::from_name(w).expect("checked");
                let open = self.next().span;
                if self.nest >= MAX_EXPR_DEPTH {
                    return Err(self.too_deep(open));
                }
                self.nest += 1;
                let mut args = Vec::new();
                let res = (|| {
                    if !self.is_sym(")") {
                        loop {
                            args.push(self.binary(0)?.0);
                            if self.is_sym(",") {
                                self.next();
                                continue;
                            }
                            break;
                        }
                    }
                    if !self.is_sym(")") {
                        return Err(self.unexpected("`,` or `)`"));
                    }
                    Ok(self.next().span)
                })();
                self.nest -= 1;
                let close = res?;
                if !f.arity().contains(&args.len()) {
                    let (lo, hi) = (f.arity().start().to_owned(), f.arity().end().to_owned());
                    return Err(self.src.diag(
                        t.span.to(close),
                        format!(
                            "`{}` takes {} argument{}, got {}",
                            f.name(),
                            if lo == hi { lo.to_string() } else { format!("{lo} to {hi}") },
                            if hi == 1 { "" } else { "s" },
                            args.len()
                        ),
                        Some(match f {
                            Func::Root => "root(a, k) is the integer k-th root of a, e.g. `root(P, 3)`".to_string(),
                            Func::At => "at(dx, dy, dz) is the rank at that offset in the grid (wrapping around)".to_string(),
                            Func::Dims => "dims(n, d, i) is dimension i of MPI_Dims_create(n, d), e.g. `dims(P, 2, 0)`".to_string(),
                            _ => format!("{}(a, b)", f.name()),
                        }),
                    ));
                }
                Ok(Expr::Call(f, args))
            }
            Tok::Quantity(q) if self.quantities && q.parse::<i64>().is_err() => {
                Ok(Expr::Quantity(q.clone()))
            }
            Tok::Param(p) => {
                self.uses.push((p.clone(), t.span));
                Ok(Expr::Param(p.clone()))
            }
            Tok::Quantity(q) => match q.parse::<i64>() {
                Ok(v) => Ok(Expr::Int(v)),
                Err(_) => Err(self.src.diag(
                    t.span,
                    format!("expected an integer, found `{q}`"),
                    Some("rank expressions use integers, `rank`, `P`, parameters and + - * / % ( ) == != < <= > >= && || !".to_string()),
                )),
            },
            _ => {
                self.pos -= 1;
                Err(self.unexpected("a rank expression (an integer, `rank`, `P` or `(`)"))
            }
        }
    }
}
