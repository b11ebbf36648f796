//! Integer expressions over `rank` and `P` (peers and conditions of point-to-point ops), the
//! grid coordinates `x y z` and dimensions `nx ny nz`, a few functions (`root`, `at`, `min`,
//! `max`), and, in *quantity* expressions (`calc 98ms / P`, `isend 4MiB / (P*P)`), sizes and
//! durations with units.

use std::fmt;

/// Binary operators, loosest binding first.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum BinOp {
    Or,
    And,
    Eq,
    Ne,
    Lt,
    Le,
    Gt,
    Ge,
    Add,
    Sub,
    Mul,
    Div,
    Rem,
}

/// Built-in functions.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Func {
    /// `root(a, k)`: the integer k-th root, ⌊a^(1/k)⌋ (a ≥ 0, k ≥ 1).
    Root,
    /// `at(dx [, dy [, dz]])`: the rank at that offset in the grid, each coordinate taken
    /// modulo its dimension (so offsets wrap around like a torus).
    At,
    Min,
    Max,
    /// `dims(n, d, i)`: dimension i (0-based, non-increasing) of the balanced d-dimensional
    /// grid of n ranks that `MPI_Dims_create(n, d, …)` gives.
    Dims,
}

impl Func {
    pub(crate) fn from_name(name: &str) -> Option<Func> {
        Some(match name {
            "root" => Func::Root,
            "at" => Func::At,
            "min" => Func::Min,
            "max" => Func::Max,
            "dims" => Func::Dims,
            _ => return None,
        })
    }
    /// Accepted argument counts.
    pub(crate) fn arity(self) -> std::ops::RangeInclusive<usize> {
        match self {
            Func::At => 1..=3,
            Func::Dims => 3..=3,
            _ => 2..=2,
        }
    }
    pub(crate) fn name(self) -> &'static str {
        match self {
            Func::Root => "root",
            Func::At => "at",
            Func::Min => "min",
            Func::Max => "max",
            Func::Dims => "dims",
        }
    }
}

/// An expression; `Param` only appears before parameters are resolved, `Coord`, `Dim` and
/// `Call(At)` only before the grid is bound, `Quantity` only in quantity expressions before
/// they are resolved.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum Expr {
    Int(i64),
    Rank,
    P,
    Param(String),
    /// `x`, `y`, `z`: the rank's grid coordinate 0, 1, 2.
    Coord(u8),
    /// `nx`, `ny`, `nz`: grid dimension 0, 1, 2.
    Dim(u8),
    /// A literal with a unit (`98ms`, `4MiB`), in quantity expressions.
    Quantity(String),
    Call(Func, Vec<Expr>),
    Neg(Box<Expr>),
    Not(Box<Expr>),
    Bin(BinOp, Box<Expr>, Box<Expr>),
}

/// The process grid: dimensions, x fastest (`rank = x + nx·(y + ny·z)`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct GridDims(pub [i64; 3]);

/// What a quantity expression measures.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Dimension {
    Number,
    Time,
    Size,
}

impl Dimension {
    pub(crate) fn describe(self) -> &'static str {
        match self {
            Dimension::Number => "a plain number",
            Dimension::Time => "a duration",
            Dimension::Size => "a size",
        }
    }
}

/// Why an expression has no value on some rank.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum EvalError {
    DivByZero,
    Overflow,
    BadRoot,
    BadDims,
}

/// `MPI_Dims_create(n, d)`: n's prime factors, largest first, each multiplied into the
/// currently smallest dimension; the dimensions in non-increasing order.
pub fn dims_create(n: u64, d: usize) -> Vec<u64> {
    let mut primes = Vec::new();
    let mut m = n;
    let mut f = 2;
    while f * f <= m {
        while m.is_multiple_of(f) {
            primes.push(f);
            m /= f;
        }
        f += 1;
    }
    if m > 1 {
        primes.push(m);
    }
    let mut dims = vec![1u64; d.max(1)];
    for &q in primes.iter().rev() {
        let k = (0..dims.len())
            .min_by_key(|&k| (dims[k], k))
            .expect("d >= 1");
        dims[k] *= q;
    }
    dims.sort_unstable_by(|a, b| b.cmp(a));
    dims
}

/// ⌊a^(1/k)⌋ for k ≥ 1.
pub(crate) fn iroot(a: u64, k: u64) -> u64 {
    if k == 1 || a < 2 {
        return a;
    }
    if k >= 64 {
        return 1;
    }
    let pow_le = |b: u64| -> bool {
        let mut acc: u128 = 1;
        for _ in 0..k {
            acc *= b as u128;
            if acc > a as u128 {
                return false;
            }
        }
        true
    };
    let mut r = (a as f64).powf(1.0 / k as f64).round() as u64;
    while r > 0 && !pow_le(r) {
        r -= 1;
    }
    while pow_le(r + 1) {
        r += 1;
    }
    r
}

impl fmt::Display for EvalError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            EvalError::DivByZero => f.write_str("divides by zero"),
            EvalError::Overflow => f.write_str("overflows a 64-bit integer"),
            EvalError::BadRoot => f.write_str("takes root(a, k) of a negative a or with k < 1"),
            EvalError::BadDims => {
                f.write_str("calls dims(n, d, i) with n < 1, d outside 1..8 or i outside 0..d")
            }
        }
    }
}

impl Expr {
    /// Whether the expression mentions `rank` (or a grid coordinate, or `at`).
    pub(crate) fn uses_rank(&self) -> bool {
        match self {
            Expr::Rank | Expr::Coord(_) | Expr::Call(Func::At, _) => true,
            Expr::Int(_) | Expr::P | Expr::Param(_) | Expr::Dim(_) | Expr::Quantity(_) => false,
            Expr::Call(_, args) => args.iter().any(Expr::uses_rank),
            Expr::Neg(e) | Expr::Not(e) => e.uses_rank(),
            Expr::Bin(_, a, b) => a.uses_rank() || b.uses_rank(),
        }
    }

    /// Whether the expression mentions a grid coordinate or dimension (or `at`).
    pub(crate) fn uses_grid(&self) -> bool {
        match self {
            Expr::Coord(_) | Expr::Dim(_) | Expr::Call(Func::At, _) => true,
            Expr::Int(_) | Expr::P | Expr::Param(_) | Expr::Rank | Expr::Quantity(_) => false,
            Expr::Call(_, args) => args.iter().any(Expr::uses_grid),
            Expr::Neg(e) | Expr::Not(e) => e.uses_grid(),
            Expr::Bin(_, a, b) => a.uses_grid() || b.uses_grid(),
        }
    }

    /// Replaces the grid's names by arithmetic on `rank` and the dimensions: `x` becomes
    /// `rank % nx`, `at(dx, dy, dz)` the wrapped neighbour's rank.
    pub(crate) fn bind_grid(&self, g: GridDims) -> Expr {
        let [nx, ny, _] = g.0;
        let int = Expr::Int;
        let bin = |op, a: Expr, b: Expr| Expr::Bin(op, Box::new(a), Box::new(b));
        let coord = |c: u8| -> Expr {
            match c {
                0 => bin(BinOp::Rem, Expr::Rank, int(nx)),
                1 => bin(BinOp::Rem, bin(BinOp::Div, Expr::Rank, int(nx)), int(ny)),
                _ => bin(BinOp::Div, Expr::Rank, int(nx * ny)),
            }
        };
        match self {
            Expr::Coord(c) => coord(*c),
            Expr::Dim(d) => int(g.0[*d as usize]),
            Expr::Call(Func::At, args) => {
                let mut total: Option<Expr> = None;
                let mut stride = 1;
                for d in 0..3u8 {
                    let off = args.get(d as usize).map(|a| a.bind_grid(g));
                    let c = match off {
                        Some(o) => bin(
                            BinOp::Rem,
                            bin(BinOp::Add, coord(d), o),
                            int(g.0[d as usize]),
                        ),
                        None => coord(d),
                    };
                    let term = if stride == 1 {
                        c
                    } else {
                        bin(BinOp::Mul, c, int(stride))
                    };
                    total = Some(match total {
                        None => term,
                        Some(t) => bin(BinOp::Add, t, term),
                    });
                    stride *= g.0[d as usize];
                }
                total.expect("three dimensions")
            }
            Expr::Int(_) | Expr::Rank | Expr::P | Expr::Param(_) | Expr::Quantity(_) => {
                self.clone()
            }
            Expr::Call(f, args) => Expr::Call(*f, args.iter().map(|a| a.bind_grid(g)).collect()),
            Expr::Neg(e) => Expr::Neg(Box::new(e.bind_grid(g))),
            Expr::Not(e) => Expr::Not(Box::new(e.bind_grid(g))),
            Expr::Bin(op, a, b) => {
                Expr::Bin(*op, Box::new(a.bind_grid(g)), Box::new(b.bind_grid(g)))
            }
        }
    }

    /// Replaces every literal with a unit by its value (picoseconds or bytes) and checks that
    /// the expression measures `want`: sums of like quantities, a quantity times or divided
    /// by plain numbers. `param` gives a parameter's value text (already checked to exist).
    pub(crate) fn resolve_quantity(
        &self,
        want: Dimension,
        param: &mut impl FnMut(&str) -> String,
        unit: &impl Fn(&str, Dimension) -> Result<i64, String>,
    ) -> Result<(Expr, Dimension), String> {
        let (e, d) = self.quantity(want, param, unit)?;
        Ok((e, d))
    }

    fn quantity(
        &self,
        want: Dimension,
        param: &mut impl FnMut(&str) -> String,
        unit: &impl Fn(&str, Dimension) -> Result<i64, String>,
    ) -> Result<(Expr, Dimension), String> {
        use Dimension::*;
        Ok(match self {
            Expr::Quantity(t) => (Expr::Int(unit(t, want)?), want),
            Expr::Param(name) => {
                let text = param(name);
                match text.parse::<i64>() {
                    Ok(v) => (Expr::Int(v), Number),
                    Err(_) => (Expr::Int(unit(&text, want)?), want),
                }
            }
            Expr::Int(_) | Expr::Rank | Expr::P | Expr::Coord(_) | Expr::Dim(_) => {
                (self.clone(), Number)
            }
            Expr::Call(f, args) => {
                let mut out = Vec::with_capacity(args.len());
                for a in args {
                    let (e, d) = a.quantity(want, param, unit)?;
                    if d != Number {
                        return Err(format!(
                            "the arguments of `{}` are plain numbers, not {}",
                            f.name(),
                            d.describe()
                        ));
                    }
                    out.push(e);
                }
                (Expr::Call(*f, out), Number)
            }
            Expr::Neg(e) => {
                let (e, d) = e.quantity(want, param, unit)?;
                (Expr::Neg(Box::new(e)), d)
            }
            Expr::Not(e) => {
                let (e, d) = e.quantity(want, param, unit)?;
                if d != Number {
                    return Err(format!(
                        "`!` applies to plain numbers, not {}",
                        d.describe()
                    ));
                }
                (Expr::Not(Box::new(e)), Number)
            }
            Expr::Bin(op, a, b) => {
                let (x, dx) = a.quantity(want, param, unit)?;
                let (y, dy) = b.quantity(want, param, unit)?;
                let d = match op {
                    BinOp::Add | BinOp::Sub => {
                        if dx != dy {
                            return Err(format!(
                                "cannot add or subtract {} and {}",
                                dx.describe(),
                                dy.describe()
                            ));
                        }
                        dx
                    }
                    BinOp::Mul => match (dx, dy) {
                        (Number, d) | (d, Number) => d,
                        _ => {
                            return Err(format!(
                                "cannot multiply {} by {}",
                                dx.describe(),
                                dy.describe()
                            ))
                        }
                    },
                    BinOp::Div => match (dx, dy) {
                        (d, Number) => d,
                        (a, b) if a == b => Number,
                        _ => {
                            return Err(format!(
                                "cannot divide {} by {}",
                                dx.describe(),
                                dy.describe()
                            ))
                        }
                    },
                    _ => {
                        if dx != Number || dy != Number {
                            return Err(format!(
                                "`%`, comparisons and logic apply to plain numbers, not {}",
                                if dx != Number { dx } else { dy }.describe()
                            ));
                        }
                        Number
                    }
                };
                (Expr::Bin(*op, Box::new(x), Box::new(y)), d)
            }
        })
    }

    /// Replaces every parameter by its value (`lookup` reports unknown or non-integer ones).
    pub(crate) fn resolve<E>(
        &self,
        lookup: &mut impl FnMut(&str) -> Result<i64, E>,
    ) -> Result<Expr, E> {
        Ok(match self {
            Expr::Param(name) => Expr::Int(lookup(name)?),
            Expr::Int(_)
            | Expr::Rank
            | Expr::P
            | Expr::Coord(_)
            | Expr::Dim(_)
            | Expr::Quantity(_) => self.clone(),
            Expr::Call(f, args) => Expr::Call(
                *f,
                args.iter()
                    .map(|a| a.resolve(lookup))
                    .collect::<Result<_, _>>()?,
            ),
            Expr::Neg(e) => Expr::Neg(Box::new(e.resolve(lookup)?)),
            Expr::Not(e) => Expr::Not(Box::new(e.resolve(lookup)?)),
            Expr::Bin(op, a, b) => Expr::Bin(
                *op,
                Box::new(a.resolve(lookup)?),
                Box::new(b.resolve(lookup)?),
            ),
        })
    }

    /// Evaluates on `rank` of `p` (booleans are 0 and 1; `%` is never negative).
    pub(crate) fn eval(&self, rank: u32, p: u32) -> Result<i64, EvalError> {
        Ok(match self {
            Expr::Int(v) => *v,
            Expr::Rank => rank as i64,
            Expr::P => p as i64,
            Expr::Param(_) | Expr::Coord(_) | Expr::Dim(_) | Expr::Quantity(_) => {
                unreachable!("parameters, grid names and units are resolved before evaluation")
            }
            Expr::Call(f, args) => {
                let x = args[0].eval(rank, p)?;
                let y = args[1].eval(rank, p)?;
                match f {
                    Func::Root => {
                        if x < 0 || y < 1 {
                            return Err(EvalError::BadRoot);
                        }
                        iroot(x as u64, y as u64) as i64
                    }
                    Func::Min => x.min(y),
                    Func::Max => x.max(y),
                    Func::Dims => {
                        let i = args[2].eval(rank, p)?;
                        if x < 1 || !(1..=8).contains(&y) || i < 0 || i >= y {
                            return Err(EvalError::BadDims);
                        }
                        dims_create(x as u64, y as usize)[i as usize] as i64
                    }
                    Func::At => unreachable!("at() is bound with the grid"),
                }
            }
            Expr::Neg(e) => e.eval(rank, p)?.checked_neg().ok_or(EvalError::Overflow)?,
            Expr::Not(e) => (e.eval(rank, p)? == 0) as i64,
            Expr::Bin(op, a, b) => {
                let x = a.eval(rank, p)?;
                let y = b.eval(rank, p)?;
                match op {
                    BinOp::Or => (x != 0 || y != 0) as i64,
                    BinOp::And => (x != 0 && y != 0) as i64,
                    BinOp::Eq => (x == y) as i64,
                    BinOp::Ne => (x != y) as i64,
                    BinOp::Lt => (x < y) as i64,
                    BinOp::Le => (x <= y) as i64,
                    BinOp::Gt => (x > y) as i64,
                    BinOp::Ge => (x >= y) as i64,
                    BinOp::Add => x.checked_add(y).ok_or(EvalError::Overflow)?,
                    BinOp::Sub => x.checked_sub(y).ok_or(EvalError::Overflow)?,
                    BinOp::Mul => x.checked_mul(y).ok_or(EvalError::Overflow)?,
                    BinOp::Div if y == 0 => return Err(EvalError::DivByZero),
                    BinOp::Div => x.checked_div_euclid(y).ok_or(EvalError::Overflow)?,
                    BinOp::Rem if y == 0 => return Err(EvalError::DivByZero),
                    BinOp::Rem => x.checked_rem_euclid(y).ok_or(EvalError::Overflow)?,
                }
            }
        })
    }

    /// A peer rank: the value modulo P (so `rank+1` wraps around). Only call after
    /// [`Expr::eval`] succeeded for this rank.
    pub(crate) fn peer(&self, rank: u32, p: u32) -> u32 {
        self.eval(rank, p).unwrap_or(0).rem_euclid(p as i64) as u32
    }

    /// A condition. Only call after [`Expr::eval`] succeeded for this rank.
    pub(crate) fn holds(&self, rank: u32, p: u32) -> bool {
        self.eval(rank, p).unwrap_or(0) != 0
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn bin(op: BinOp, a: Expr, b: Expr) -> Expr {
        Expr::Bin(op, Box::new(a), Box::new(b))
    }

    #[test]
    fn roots_and_dims_create() {
        for a in 0..2000u64 {
            for k in 1..5 {
                let r = iroot(a, k);
                assert!(r.pow(k as u32) <= a && (r + 1).pow(k as u32) > a, "{a} {k}");
            }
        }
        assert_eq!(iroot(u64::MAX, 2), 4294967295);
        assert_eq!(dims_create(12, 2), [4, 3]);
        assert_eq!(dims_create(64, 3), [4, 4, 4]);
        assert_eq!(dims_create(24, 3), [4, 3, 2]);
        assert_eq!(dims_create(7, 2), [7, 1]);
        assert_eq!(dims_create(16, 3), [4, 2, 2]);
        for n in 1..500u64 {
            for d in 1..4 {
                assert_eq!(dims_create(n, d).iter().product::<u64>(), n);
            }
        }
    }

    #[test]
    fn evaluates_with_euclidean_remainder() {
        let e = bin(
            BinOp::Rem,
            bin(BinOp::Sub, Expr::Rank, Expr::Int(1)),
            Expr::P,
        );
        assert_eq!(e.eval(0, 16), Ok(15));
        assert_eq!(e.eval(5, 16), Ok(4));
        assert_eq!(bin(BinOp::Sub, Expr::Rank, Expr::Int(1)).peer(0, 8), 7);
        assert_eq!(
            bin(
                BinOp::Div,
                Expr::Int(1),
                bin(BinOp::Sub, Expr::Rank, Expr::Int(3))
            )
            .eval(3, 8),
            Err(EvalError::DivByZero)
        );
        assert_eq!(
            bin(BinOp::Mul, Expr::Int(i64::MAX), Expr::Int(2)).eval(0, 1),
            Err(EvalError::Overflow)
        );
        let c = bin(
            BinOp::And,
            bin(
                BinOp::Eq,
                bin(BinOp::Rem, Expr::Rank, Expr::Int(2)),
                Expr::Int(0),
            ),
            bin(BinOp::Lt, Expr::Rank, Expr::Int(4)),
        );
        assert_eq!(
            (0..8).filter(|&r| c.holds(r, 8)).collect::<Vec<_>>(),
            vec![0, 2]
        );
        assert!(Expr::Not(Box::new(Expr::Rank)).holds(0, 2));
    }
}
