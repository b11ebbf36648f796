use std::path::PathBuf;

use loggops_engine::{DepKind, Op, Program};
use loggops_goal::{ExplicitProgram, ProgramBuilder};

/// `../shared/reference/loggopsim/<sub>` next to the checkout, or `None` (after printing why)
/// if absent.
pub fn shared(sub: &str) -> Option<PathBuf> {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../../../shared/reference/loggopsim")
        .join(sub);
    if dir.is_dir() {
        Some(dir)
    } else {
        eprintln!("skipping: {} is absent", dir.display());
        None
    }
}

/// Files in `dir` with extension `ext`, sorted.
pub fn files(dir: &std::path::Path, ext: &str) -> Vec<PathBuf> {
    let mut v: Vec<PathBuf> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == ext))
        .collect();
    v.sort();
    v
}

/// One rank of an expected program: ops and `(dependent, on, kind)` declarations in order.
pub type Rank<'a> = (&'a [Op], &'a [(u32, u32, DepKind)]);

/// Builds the program txt2bin's semantics give for the listed ranks.
pub fn program(ranks: &[Rank<'_>]) -> ExplicitProgram {
    let mut b = ProgramBuilder::new(ranks.len() as u32);
    for (r, (ops, deps)) in ranks.iter().enumerate() {
        b.start_rank(r as u32);
        for &op in *ops {
            b.add_op(op);
        }
        for &(d, on, k) in *deps {
            b.add_dep(d, on, k);
        }
        b.end_rank().unwrap();
    }
    b.finish()
}

/// Asserts two programs are the same schedule, showing the first difference.
#[track_caller]
pub fn assert_same(a: &impl Program, b: &impl Program) {
    if let Some(d) = loggops_goal::first_difference(a, b) {
        panic!("programs differ: {d}");
    }
}
