//! Detecting the process grid from who talks to whom: the layout (1-D, 2-D or 3-D, as a
//! function of P) under which every point-to-point partner is nearest, and which dimensions
//! wrap around.

use loggops_schedgen::dims_create;

/// How the grid's dimensions follow from P (x is the fastest-varying coordinate:
/// `rank = x + nx·(y + ny·z)`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum GridRule {
    /// One dimension of P ranks.
    Line,
    /// √P × √P (P a square).
    Square,
    /// ∛P × ∛P × ∛P (P a cube).
    Cube,
    /// `MPI_Dims_create(P, d)`, x the smallest dimension (row-major, as `MPI_Cart_create`).
    Balanced { d: u8, x_smallest: bool },
}

impl GridRule {
    /// Every rule, in order of preference when they explain the traces equally well.
    pub const ALL: [GridRule; 7] = [
        GridRule::Cube,
        GridRule::Square,
        GridRule::Line,
        GridRule::Balanced {
            d: 3,
            x_smallest: true,
        },
        GridRule::Balanced {
            d: 3,
            x_smallest: false,
        },
        GridRule::Balanced {
            d: 2,
            x_smallest: true,
        },
        GridRule::Balanced {
            d: 2,
            x_smallest: false,
        },
    ];

    /// The dimensions at P, if the rule can lay out P ranks.
    pub fn dims(self, p: u32) -> Option<[u32; 3]> {
        let p64 = p as u64;
        match self {
            GridRule::Line => Some([p, 1, 1]),
            GridRule::Square => {
                let s = (p as f64).sqrt().round() as u64;
                (s * s == p64).then_some([s as u32, s as u32, 1])
            }
            GridRule::Cube => {
                let c = (p as f64).cbrt().round() as u64;
                (c * c * c == p64).then_some([c as u32; 3])
            }
            GridRule::Balanced { d, x_smallest } => {
                let mut v = dims_create(p64, d as usize);
                if x_smallest {
                    v.reverse();
                }
                let mut out = [1u32; 3];
                for (i, x) in v.iter().enumerate() {
                    out[i] = *x as u32;
                }
                Some(out)
            }
        }
    }

    /// Number of dimensions written.
    pub fn ndims(self) -> usize {
        match self {
            GridRule::Line => 1,
            GridRule::Square => 2,
            GridRule::Cube => 3,
            GridRule::Balanced { d, .. } => d as usize,
        }
    }

    /// The `grid` statement (none for a line: the default).
    pub fn statement(self) -> Option<String> {
        match self {
            GridRule::Line => None,
            GridRule::Square => Some("grid root(P, 2), root(P, 2)".to_string()),
            GridRule::Cube => Some("grid root(P, 3), root(P, 3), root(P, 3)".to_string()),
            GridRule::Balanced { d, x_smallest } => {
                let idx: Vec<String> = (0..d)
                    .map(|i| {
                        let k = if x_smallest { d - 1 - i } else { i };
                        format!("dims(P, {d}, {k})")
                    })
                    .collect();
                Some(format!("grid {}", idx.join(", ")))
            }
        }
    }

    /// In words, for reports.
    pub fn describe(self) -> String {
        match self {
            GridRule::Line => "1-D (a line of P ranks)".to_string(),
            GridRule::Square => "2-D square (√P × √P; P a square)".to_string(),
            GridRule::Cube => "3-D cube (∛P × ∛P × ∛P; P a cube)".to_string(),
            GridRule::Balanced { d, x_smallest } => format!(
                "{d}-D balanced (MPI_Dims_create(P, {d}), x the {} dimension)",
                if x_smallest { "smallest" } else { "largest" }
            ),
        }
    }

    /// Which rank counts the rule allows, for messages.
    pub fn allows(self) -> &'static str {
        match self {
            GridRule::Square => "squares (4, 9, 16, …)",
            GridRule::Cube => "cubes (8, 27, 64, 125, …)",
            _ => "any",
        }
    }
}

/// The coordinates of rank `r` in `dims`.
pub fn coords(r: u32, dims: [u32; 3]) -> [i64; 3] {
    let r = r as i64;
    let (nx, ny) = (dims[0] as i64, dims[1] as i64);
    [r % nx, (r / nx) % ny, r / (nx * ny)]
}

/// Offset from `a` to `b` per dimension, wrapped into (−n/2, n/2] where `periodic`.
pub fn offset(a: u32, b: u32, dims: [u32; 3], periodic: [bool; 3]) -> [i64; 3] {
    let (ca, cb) = (coords(a, dims), coords(b, dims));
    let mut o = [0i64; 3];
    for d in 0..3 {
        let n = dims[d] as i64;
        let mut x = cb[d] - ca[d];
        if periodic[d] {
            x = x.rem_euclid(n);
            if x > n / 2 {
                x -= n;
            }
        }
        o[d] = x;
    }
    o
}

/// How well a layout explains the partners at one scale: the sum over dimensions of the
/// largest offset, and whether each dimension wraps (`None`: cannot tell, n ≤ 2).
pub fn score(pairs: &[(u32, u32)], dims: [u32; 3]) -> (u64, [Option<bool>; 3]) {
    let mut total = 0u64;
    let mut periodic = [None; 3];
    for d in 0..3 {
        let n = dims[d] as i64;
        let (mut raw, mut wrapped) = (0i64, 0i64);
        for &(a, b) in pairs {
            let x = coords(b, dims)[d] - coords(a, dims)[d];
            raw = raw.max(x.abs());
            let mut w = x.rem_euclid(n);
            if w > n / 2 {
                w -= n;
            }
            wrapped = wrapped.max(w.abs());
        }
        total += raw.min(wrapped) as u64;
        if n > 2 && !pairs.is_empty() {
            periodic[d] = Some(wrapped < raw);
        }
    }
    (total, periodic)
}

/// The detected grid.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Grid {
    pub rule: GridRule,
    pub periodic: [bool; 3],
    /// Score per scale (0 = no partners).
    pub scores: Vec<u64>,
}

impl Grid {
    pub fn none() -> Grid {
        Grid {
            rule: GridRule::Line,
            periodic: [false; 3],
            scores: Vec::new(),
        }
    }
}

/// Chooses the rule that lays out every traced scale with the nearest partners. `scales` are
/// (P, partner pairs). `None` if no rule can lay out every scale.
pub fn detect(scales: &[(u32, Vec<(u32, u32)>)]) -> Option<Grid> {
    let mut best: Option<(u64, Grid)> = None;
    for rule in GridRule::ALL {
        let mut total = 0;
        let mut scores = Vec::new();
        let mut per: [Option<bool>; 3] = [None; 3];
        let mut ok = true;
        for (p, pairs) in scales {
            let Some(dims) = rule.dims(*p) else {
                ok = false;
                break;
            };
            let (s, periodic) = score(pairs, dims);
            total += s;
            scores.push(s);
            for d in 0..3 {
                if let Some(w) = periodic[d] {
                    // a dimension that wraps at one scale wraps everywhere
                    per[d] = Some(per[d].unwrap_or(false) || w);
                }
            }
        }
        if !ok {
            continue;
        }
        let g = Grid {
            rule,
            periodic: per.map(|p| p.unwrap_or(false)),
            scores,
        };
        if best.as_ref().is_none_or(|(b, _)| total < *b) {
            best = Some((total, g));
        }
    }
    best.map(|(_, g)| g)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn stencil(dims: [u32; 3], periodic: bool) -> Vec<(u32, u32)> {
        let p = dims[0] * dims[1] * dims[2];
        let mut v = Vec::new();
        for r in 0..p {
            let c = coords(r, dims);
            for d in 0..3 {
                for s in [-1i64, 1] {
                    let mut q = c;
                    q[d] += s;
                    let n = dims[d] as i64;
                    if n == 1 {
                        continue;
                    }
                    if !(0..n).contains(&q[d]) {
                        if !periodic {
                            continue;
                        }
                        q[d] = q[d].rem_euclid(n);
                    }
                    let peer = q[0] + dims[0] as i64 * (q[1] + dims[1] as i64 * q[2]);
                    v.push((r, peer as u32));
                }
            }
        }
        v
    }

    #[test]
    fn finds_cubes_squares_and_rings() {
        let g = detect(&[
            (8, stencil([2, 2, 2], false)),
            (27, stencil([3, 3, 3], false)),
        ])
        .unwrap();
        assert_eq!(g.rule, GridRule::Cube);
        assert_eq!(g.periodic, [false; 3]);
        let g = detect(&[
            (16, stencil([4, 4, 1], true)),
            (36, stencil([6, 6, 1], true)),
        ])
        .unwrap();
        assert_eq!(g.rule, GridRule::Square);
        assert_eq!(g.periodic, [true, true, false]);
        let g = detect(&[
            (5, stencil([5, 1, 1], true)),
            (12, stencil([12, 1, 1], true)),
        ])
        .unwrap();
        assert_eq!(g.rule, GridRule::Line);
        assert!(g.periodic[0]);
        let g = detect(&[
            (12, stencil([3, 4, 1], false)),
            (24, stencil([4, 6, 1], false)),
        ])
        .unwrap();
        assert_eq!(
            g.rule,
            GridRule::Balanced {
                d: 2,
                x_smallest: true
            }
        );
        assert_eq!(
            g.rule.statement().unwrap(),
            "grid dims(P, 2, 1), dims(P, 2, 0)"
        );
    }
}
