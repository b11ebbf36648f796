//! Sizes and computation as functions of P.
//!
//! A message size that changes with P is written as an integer division `K / D` (or a product
//! `K * D`) where D is P, P², √P, ∛P or a product of grid dimensions, when one reproduces every
//! traced size exactly; otherwise as the form closest to the per-scale means (reported).
//! Computation is fitted per template call from the per-scale mean over ranks: constant (weak
//! scaling), ∝ 1/P (strong scaling), or the better of the two (and, with three scales or more,
//! a + b/P), as `--compute` says.

use crate::grid::GridRule;

/// What a size is divided or multiplied by.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Denom {
    P,
    P2,
    Sqrt,
    Cbrt,
    Nx,
    Ny,
    Nz,
    NxNy,
    NxNz,
    NyNz,
}

impl Denom {
    const ALL: [Denom; 10] = [
        Denom::P,
        Denom::P2,
        Denom::Nx,
        Denom::Ny,
        Denom::Nz,
        Denom::NxNy,
        Denom::NxNz,
        Denom::NyNz,
        Denom::Sqrt,
        Denom::Cbrt,
    ];

    fn value(self, p: u32, dims: [u32; 3]) -> u64 {
        let [nx, ny, nz] = dims.map(|d| d as u64);
        match self {
            Denom::P => p as u64,
            Denom::P2 => p as u64 * p as u64,
            Denom::Sqrt => (p as f64).sqrt().floor() as u64,
            Denom::Cbrt => (p as f64).cbrt().round() as u64,
            Denom::Nx => nx,
            Denom::Ny => ny,
            Denom::Nz => nz,
            Denom::NxNy => nx * ny,
            Denom::NxNz => nx * nz,
            Denom::NyNz => ny * nz,
        }
    }

    fn text(self) -> &'static str {
        match self {
            Denom::P => "P",
            Denom::P2 => "(P * P)",
            Denom::Sqrt => "root(P, 2)",
            Denom::Cbrt => "root(P, 3)",
            Denom::Nx => "nx",
            Denom::Ny => "ny",
            Denom::Nz => "nz",
            Denom::NxNy => "(nx * ny)",
            Denom::NxNz => "(nx * nz)",
            Denom::NyNz => "(ny * nz)",
        }
    }

    /// Whether the rule's grid has the dimensions this uses.
    fn available(self, rule: GridRule) -> bool {
        let n = rule.ndims();
        match self {
            Denom::Nx => n >= 1,
            Denom::Ny | Denom::NxNy => n >= 2,
            Denom::Nz | Denom::NxNz | Denom::NyNz => n >= 3,
            _ => true,
        }
    }
}

/// A size as a function of P.
#[derive(Clone, Debug, PartialEq)]
pub enum SizeFit {
    Const(u64),
    /// ⌊k / D⌋.
    Div {
        k: u64,
        d: Denom,
    },
    /// k · D.
    Mul {
        k: u64,
        d: Denom,
    },
    /// Not exact: the closest form, and its largest relative error on the traced means.
    Approx {
        form: Box<SizeFit>,
        err: f64,
    },
}

impl SizeFit {
    pub fn at(&self, p: u32, dims: [u32; 3]) -> u64 {
        match self {
            SizeFit::Const(v) => *v,
            SizeFit::Div { k, d } => k / d.value(p, dims).max(1),
            SizeFit::Mul { k, d } => k * d.value(p, dims),
            SizeFit::Approx { form, .. } => form.at(p, dims),
        }
    }

    /// As written in a schedule (`968B`, `4194304B / (P * P)`).
    pub fn text(&self) -> String {
        match self {
            SizeFit::Const(v) => format!("{v}B"),
            SizeFit::Div { k, d } => format!("{k}B / {}", d.text()),
            SizeFit::Mul { k, d } => format!("{k}B * {}", d.text()),
            SizeFit::Approx { form, .. } => form.text(),
        }
    }

    pub fn is_exact(&self) -> bool {
        !matches!(self, SizeFit::Approx { .. })
    }
}

/// Fits the sizes seen, `(P, size)` (several per P when ranks differ).
pub fn fit_size(seen: &[(u32, u64)], rule: GridRule) -> SizeFit {
    let dims = |p: u32| rule.dims(p).unwrap_or([p, 1, 1]);
    let first = seen.first().map_or(0, |x| x.1);
    if seen.iter().all(|x| x.1 == first) {
        return SizeFit::Const(first);
    }
    let pmax = seen.iter().map(|x| x.0).max().unwrap_or(1);
    let at_max: Vec<u64> = seen.iter().filter(|x| x.0 == pmax).map(|x| x.1).collect();
    let forms = |s: u64| {
        let mut v = Vec::new();
        for d in Denom::ALL {
            if !d.available(rule) {
                continue;
            }
            let dv = d.value(pmax, dims(pmax));
            v.push(SizeFit::Div { k: s * dv, d });
            if dv > 0 && s.is_multiple_of(dv) {
                v.push(SizeFit::Mul { k: s / dv, d });
            }
        }
        v
    };
    if at_max.iter().all(|&s| s == at_max[0]) {
        for f in forms(at_max[0]) {
            if seen.iter().all(|&(p, s)| f.at(p, dims(p)) == s) {
                return f;
            }
        }
    }
    // closest on the per-scale means
    let mut scales: Vec<u32> = seen.iter().map(|x| x.0).collect();
    scales.dedup();
    let mean = |p: u32| {
        let v: Vec<u64> = seen.iter().filter(|x| x.0 == p).map(|x| x.1).collect();
        v.iter().sum::<u64>() as f64 / v.len() as f64
    };
    let mmax = mean(pmax).round() as u64;
    let mut cands = forms(mmax);
    cands.push(SizeFit::Const(mmax));
    let err = |f: &SizeFit| {
        scales
            .iter()
            .map(|&p| {
                let m = mean(p);
                ((f.at(p, dims(p)) as f64 - m) / m.max(1.0)).abs()
            })
            .fold(0.0, f64::max)
    };
    let best = cands
        .into_iter()
        .min_by(|a, b| err(a).total_cmp(&err(b)))
        .expect("candidates");
    let e = err(&best);
    SizeFit::Approx {
        form: Box::new(best),
        err: e,
    }
}

/// How computation is fitted (`--compute`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ComputeMode {
    /// Constant in P (weak scaling).
    Weak,
    /// ∝ 1/P (strong scaling).
    Strong,
    /// The better of the two per call (and a + b/P with three scales or more).
    Best,
}

/// A computation as a function of P, in ps.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum DurFit {
    Const(u64),
    /// a / P
    Inv(u64),
    /// a + b / P
    Affine(u64, u64),
}

impl DurFit {
    pub fn at(&self, p: u32) -> u64 {
        match *self {
            DurFit::Const(a) => a,
            DurFit::Inv(a) => a / p as u64,
            DurFit::Affine(a, b) => a + b / p as u64,
        }
    }

    /// As written in a schedule.
    pub fn text(&self) -> String {
        use loggops_units::format_duration as f;
        match *self {
            DurFit::Const(a) => f(a),
            DurFit::Inv(a) => format!("{} / P", f(a)),
            DurFit::Affine(a, b) => format!("{} + {} / P", f(a), f(b)),
        }
    }

    pub fn kind(&self) -> &'static str {
        match self {
            DurFit::Const(_) => "constant",
            DurFit::Inv(_) => "1/P",
            DurFit::Affine(..) => "a + b/P",
        }
    }
}

fn round_to(v: f64, tick: u64) -> u64 {
    let t = tick.max(1) as f64;
    ((v.max(0.0) / t).round() * t) as u64
}

/// Fits per-scale means `(P, mean ps)`, rounding to whole `tick`s.
pub fn fit_dur(points: &[(u32, f64)], mode: ComputeMode, tick: u64) -> DurFit {
    let n = points.len() as f64;
    let constant = || DurFit::Const(round_to(points.iter().map(|x| x.1).sum::<f64>() / n, tick));
    let inv = || {
        // least squares of v = a/P
        let num: f64 = points.iter().map(|&(p, v)| v / p as f64).sum();
        let den: f64 = points
            .iter()
            .map(|&(p, _)| 1.0 / (p as f64 * p as f64))
            .sum();
        DurFit::Inv(round_to(num / den, tick))
    };
    if points.iter().all(|x| x.1 == 0.0) {
        return DurFit::Const(0);
    }
    let f = fit_mode(points, mode, tick, n, constant, inv);
    match f {
        DurFit::Inv(0) | DurFit::Affine(0, 0) => DurFit::Const(0),
        DurFit::Affine(a, 0) => DurFit::Const(a),
        DurFit::Affine(0, b) => DurFit::Inv(b),
        f => f,
    }
}

fn fit_mode(
    points: &[(u32, f64)],
    mode: ComputeMode,
    tick: u64,
    n: f64,
    constant: impl Fn() -> DurFit,
    inv: impl Fn() -> DurFit,
) -> DurFit {
    match mode {
        ComputeMode::Weak => constant(),
        ComputeMode::Strong => inv(),
        ComputeMode::Best => {
            let err = |f: &DurFit| -> f64 {
                points
                    .iter()
                    .map(|&(p, v)| {
                        let d = (f.at(p) as f64 - v) / v.max(1.0);
                        d * d
                    })
                    .sum()
            };
            let (c, i) = (constant(), inv());
            let mut best = if err(&i) < err(&c) { i } else { c };
            if points.len() >= 3 {
                // v = a + b/P, least squares in x = 1/P
                let xs: Vec<f64> = points.iter().map(|&(p, _)| 1.0 / p as f64).collect();
                let mx = xs.iter().sum::<f64>() / n;
                let my = points.iter().map(|x| x.1).sum::<f64>() / n;
                let sxx: f64 = xs.iter().map(|x| (x - mx) * (x - mx)).sum();
                let sxy: f64 = xs
                    .iter()
                    .zip(points)
                    .map(|(x, pt)| (x - mx) * (pt.1 - my))
                    .sum();
                if sxx > 0.0 {
                    let b = sxy / sxx;
                    let a = my - b * mx;
                    if a > 0.0 && b > 0.0 {
                        let aff = DurFit::Affine(round_to(a, tick), round_to(b, tick));
                        // an extra parameter must pay: half the error
                        if err(&aff) < 0.5 * err(&best) {
                            best = aff;
                        }
                    }
                }
            }
            best
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes_are_exact_forms_of_p_or_the_grid() {
        let cube = GridRule::Cube;
        assert_eq!(fit_size(&[(8, 968), (27, 968)], cube), SizeFit::Const(968));
        let f = fit_size(&[(4, 262144), (8, 65536), (16, 16384)], GridRule::Line);
        assert_eq!(
            f,
            SizeFit::Div {
                k: 4194304,
                d: Denom::P2
            }
        );
        assert_eq!(f.text(), "4194304B / (P * P)");
        let f = fit_size(&[(8, 400), (27, 266), (64, 200)], cube);
        assert_eq!(f.text(), "800B / nx");
        let f = fit_size(&[(8, 100), (8, 120), (27, 90)], cube);
        assert!(!f.is_exact());
    }

    #[test]
    fn computation_fits_weak_strong_and_best() {
        let weak = [(8, 100.0), (27, 110.0)];
        assert_eq!(fit_dur(&weak, ComputeMode::Weak, 1), DurFit::Const(105));
        assert_eq!(fit_dur(&weak, ComputeMode::Best, 1), DurFit::Const(105));
        let strong = [(8, 1000.0), (16, 500.0), (32, 250.0)];
        assert_eq!(fit_dur(&strong, ComputeMode::Best, 1), DurFit::Inv(8000));
        assert_eq!(fit_dur(&strong, ComputeMode::Strong, 1), DurFit::Inv(8000));
        let aff = [(2, 600.0), (4, 350.0), (8, 225.0)];
        assert_eq!(
            fit_dur(&aff, ComputeMode::Best, 1),
            DurFit::Affine(100, 1000)
        );
        assert_eq!(DurFit::Inv(98_000_000).text(), "98us / P");
    }
}
