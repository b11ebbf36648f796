//! Sizes and computation as functions of P.
//!
//! A message size that changes with P is written as an integer division `K / D` (or a product
//! `K * D`) where D is P, P², √P, ∛P or a product of grid dimensions, when one reproduces every
//! traced size exactly; otherwise as the form closest to the per-scale means (reported).
//! Computation is fitted per template call from the per-scale mean over ranks: constant (weak
//! scaling), ∝ 1/P (strong scaling), or, with `--compute best`, the form that extrapolates best
//! within the traces (`best`), as `--compute` says.

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
    /// Per call, the form that best predicts the largest traced size from the smaller ones
    /// (constant, a/P, a + b/P, a + b·P, a + b·P²; with two sizes, constant or a/P).
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
    /// a + b · P
    Linear(u64, u64),
    /// a + b · P²
    Square(u64, u64),
}

impl DurFit {
    pub fn at(&self, p: u32) -> u64 {
        match *self {
            DurFit::Const(a) => a,
            DurFit::Inv(a) => a / p as u64,
            DurFit::Affine(a, b) => a + b / p as u64,
            DurFit::Linear(a, b) => a.saturating_add(b.saturating_mul(p as u64)),
            DurFit::Square(a, b) => a.saturating_add(b.saturating_mul(p as u64 * p as u64)),
        }
    }

    /// As written in a schedule.
    pub fn text(&self) -> String {
        use loggops_units::format_duration as f;
        match *self {
            DurFit::Const(a) => f(a),
            DurFit::Inv(a) => format!("{} / P", f(a)),
            DurFit::Affine(a, b) => format!("{} + {} / P", f(a), f(b)),
            DurFit::Linear(0, b) => format!("{} * P", f(b)),
            DurFit::Linear(a, b) => format!("{} + {} * P", f(a), f(b)),
            DurFit::Square(0, b) => format!("{} * P * P", f(b)),
            DurFit::Square(a, b) => format!("{} + {} * P * P", f(a), f(b)),
        }
    }

    pub fn kind(&self) -> &'static str {
        match self {
            DurFit::Const(_) => "constant",
            DurFit::Inv(_) => "1/P",
            DurFit::Affine(..) => "a + b/P",
            DurFit::Linear(..) => "a + b·P",
            DurFit::Square(..) => "a + b·P²",
        }
    }
}

fn round_to(v: f64, tick: u64) -> u64 {
    let t = tick.max(1) as f64;
    ((v.max(0.0) / t).round() * t) as u64
}

/// Fits per-scale means `(P, mean ps)`, rounding to whole `tick`s.
pub fn fit_dur(points: &[(u32, f64)], mode: ComputeMode, tick: u64) -> DurFit {
    if points.iter().all(|x| x.1 == 0.0) {
        return DurFit::Const(0);
    }
    let f = match mode {
        ComputeMode::Weak => Form::Const.fit(points, tick),
        ComputeMode::Strong => Form::Inv.fit(points, tick),
        ComputeMode::Best => best(points, tick),
    };
    match f {
        Some(DurFit::Inv(0) | DurFit::Affine(0, 0)) | None => DurFit::Const(0),
        Some(DurFit::Affine(a, 0) | DurFit::Linear(a, 0) | DurFit::Square(a, 0)) => {
            DurFit::Const(a)
        }
        Some(DurFit::Affine(0, b)) => DurFit::Inv(b),
        Some(f) => f,
    }
}

/// The forms `--compute best` chooses from, fewest parameters first.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Form {
    Const,
    Inv,
    Affine,
    Linear,
    Square,
}

impl Form {
    const ALL: [Form; 5] = [
        Form::Const,
        Form::Inv,
        Form::Affine,
        Form::Linear,
        Form::Square,
    ];

    fn params(self) -> u8 {
        match self {
            Form::Const | Form::Inv => 1,
            _ => 2,
        }
    }

    /// Least squares of this form through `points`; `None` when the form needs more points
    /// than given or its best coefficients are negative (a duration cannot be).
    fn fit(self, points: &[(u32, f64)], tick: u64) -> Option<DurFit> {
        let basis = |p: u32| -> f64 {
            let p = p as f64;
            match self {
                Form::Const => 1.0,
                Form::Inv | Form::Affine => 1.0 / p,
                Form::Linear => p,
                Form::Square => p * p,
            }
        };
        let n = points.len() as f64;
        match self {
            Form::Const => Some(DurFit::Const(round_to(
                points.iter().map(|x| x.1).sum::<f64>() / n,
                tick,
            ))),
            Form::Inv => {
                // v = a/P
                let num: f64 = points.iter().map(|&(p, v)| v * basis(p)).sum();
                let den: f64 = points.iter().map(|&(p, _)| basis(p) * basis(p)).sum();
                Some(DurFit::Inv(round_to(num / den, tick)))
            }
            Form::Affine | Form::Linear | Form::Square => {
                // v = a + b·x with x the basis
                if points.len() < 2 {
                    return None;
                }
                if matches!(self, Form::Linear | Form::Square) && !rises(points) {
                    // growth is only read from durations that grow at every traced size
                    return None;
                }
                let mx = points.iter().map(|&(p, _)| basis(p)).sum::<f64>() / n;
                let my = points.iter().map(|x| x.1).sum::<f64>() / n;
                let sxx: f64 = points.iter().map(|&(p, _)| (basis(p) - mx).powi(2)).sum();
                let sxy: f64 = points
                    .iter()
                    .map(|&(p, v)| (basis(p) - mx) * (v - my))
                    .sum();
                if sxx <= 0.0 {
                    return None;
                }
                let b = sxy / sxx;
                let a = my - b * mx;
                if a < 0.0 || b <= 0.0 {
                    return None;
                }
                let (a, b) = (round_to(a, tick), round_to(b, tick));
                Some(match self {
                    Form::Affine => DurFit::Affine(a, b),
                    Form::Linear => DurFit::Linear(a, b),
                    _ => DurFit::Square(a, b),
                })
            }
        }
    }
}

/// Whether the durations grow strictly from each traced size to the next larger one.
fn rises(points: &[(u32, f64)]) -> bool {
    let mut sorted = points.to_vec();
    sorted.sort_by_key(|x| x.0);
    sorted.windows(2).all(|w| w[1].1 > w[0].1)
}

/// `--compute best`. With two traced sizes: constant or a/P, whichever is closer (relative
/// squared error). With three or more, each form is fitted to all sizes but the largest and
/// judged by how well it predicts the largest, which is what an extrapolation asks of it; a
/// two-parameter form must halve the error of the best one-parameter form (it is extrapolated
/// far: its second parameter multiplies any noise by the distance). The winner is then fitted
/// to every size.
fn best(points: &[(u32, f64)], tick: u64) -> Option<DurFit> {
    let rel = |f: &DurFit, p: u32, v: f64| (f.at(p) as f64 - v) / v.max(1.0);
    // constant or a/P, whichever is closer at every size
    let closer = || {
        let err = |f: &DurFit| {
            points
                .iter()
                .map(|&(p, v)| rel(f, p, v).powi(2))
                .sum::<f64>()
        };
        let c = Form::Const.fit(points, tick)?;
        let i = Form::Inv.fit(points, tick)?;
        Some(if err(&i) < err(&c) { i } else { c })
    };
    if points.len() < 3 {
        return closer();
    }
    let mut sorted = points.to_vec();
    sorted.sort_by_key(|x| x.0);
    let (&(pl, vl), smaller) = sorted.split_last()?;
    let mut chosen = Form::Const;
    let mut chosen_err = f64::INFINITY;
    for form in Form::ALL {
        if let Some(f) = form.fit(smaller, tick) {
            let e = rel(&f, pl, vl).abs();
            // a second parameter must pay for itself: half the error of the best form with one
            let bar = if form.params() > chosen.params() {
                0.5 * chosen_err
            } else {
                chosen_err
            };
            if e < bar {
                (chosen, chosen_err) = (form, e);
            }
        }
    }
    // a two-parameter winner whose coefficients turn negative on all sizes gives way
    chosen.fit(points, tick).or_else(closer)
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

    #[test]
    fn best_chooses_the_form_that_predicts_the_largest_size() {
        // grows with P²: constant, a/P and a + b/P all miss 16 from 4 and 8
        let square = [(4, 5.0 + 16.0), (8, 5.0 + 64.0), (16, 5.0 + 256.0)];
        let f = fit_dur(&square, ComputeMode::Best, 1);
        assert_eq!(f, DurFit::Square(5, 1));
        assert_eq!(f.at(32), 5 + 1024);
        assert_eq!(f.text(), "5ps + 1ps * P * P");
        let linear = [
            (8, 1000.0 + 80.0),
            (27, 1000.0 + 270.0),
            (64, 1000.0 + 640.0),
        ];
        assert_eq!(
            fit_dur(&linear, ComputeMode::Best, 1),
            DurFit::Linear(1000, 10)
        );
        // the same growth is not read when one size breaks it: the constant predicts better
        let dip = [(4, 100.0), (8, 99.0), (16, 101.0)];
        assert_eq!(fit_dur(&dip, ComputeMode::Best, 1), DurFit::Const(100));
        // rising a little at every size: a + b·P predicts 16 worse than half as well as the
        // constant would need to be beaten, so the constant stays
        let creep = [(4, 100.0), (8, 103.0), (16, 104.0)];
        assert_eq!(fit_dur(&creep, ComputeMode::Best, 1), DurFit::Const(102));
        // weak and strong never grow
        assert_eq!(fit_dur(&square, ComputeMode::Weak, 1), DurFit::Const(117));
        assert!(matches!(
            fit_dur(&square, ComputeMode::Strong, 1),
            DurFit::Inv(_)
        ));
    }
}
