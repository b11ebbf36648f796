//! Integer expressions over `rank` and `P` (peers and conditions of point-to-point ops).

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

/// An expression; `Param` only appears before parameters are resolved.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum Expr {
    Int(i64),
    Rank,
    P,
    Param(String),
    Neg(Box<Expr>),
    Not(Box<Expr>),
    Bin(BinOp, Box<Expr>, Box<Expr>),
}

/// Why an expression has no value on some rank.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum EvalError {
    DivByZero,
    Overflow,
}

impl fmt::Display for EvalError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            EvalError::DivByZero => f.write_str("divides by zero"),
            EvalError::Overflow => f.write_str("overflows a 64-bit integer"),
        }
    }
}

impl Expr {
    /// Whether the expression mentions `rank`.
    pub(crate) fn uses_rank(&self) -> bool {
        match self {
            Expr::Rank => true,
            Expr::Int(_) | Expr::P | Expr::Param(_) => false,
            Expr::Neg(e) | Expr::Not(e) => e.uses_rank(),
            Expr::Bin(_, a, b) => a.uses_rank() || b.uses_rank(),
        }
    }

    /// Replaces every parameter by its value (`lookup` reports unknown or non-integer ones).
    pub(crate) fn resolve<E>(
        &self,
        lookup: &mut impl FnMut(&str) -> Result<i64, E>,
    ) -> Result<Expr, E> {
        Ok(match self {
            Expr::Param(name) => Expr::Int(lookup(name)?),
            Expr::Int(_) | Expr::Rank | Expr::P => self.clone(),
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
            Expr::Param(_) => unreachable!("parameters are resolved before evaluation"),
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
