//! Comparing schedules: [`first_difference`] names the first op, dependency or root where two
//! programs differ, and `==` on [`ExplicitProgram`] is "no difference" (storage aside).

use loggops_engine::{DepKind, Program};

use super::ExplicitProgram;

impl PartialEq for ExplicitProgram {
    fn eq(&self, other: &ExplicitProgram) -> bool {
        first_difference(self, other).is_none()
    }
}

/// Compares two programs op by op and describes the first difference (`None` if they are the
/// same schedule). Meant for tests and diagnostics.
pub fn first_difference<A: Program + ?Sized, B: Program + ?Sized>(a: &A, b: &B) -> Option<String> {
    if a.num_ranks() != b.num_ranks() {
        return Some(format!("num_ranks {} vs {}", a.num_ranks(), b.num_ranks()));
    }
    if a.num_cpus() != b.num_cpus() || a.num_nics() != b.num_nics() {
        return Some(format!(
            "{} CPUs, {} NICs vs {} CPUs, {} NICs",
            a.num_cpus(),
            a.num_nics(),
            b.num_cpus(),
            b.num_nics()
        ));
    }
    let (mut da, mut db) = (Vec::new(), Vec::new());
    for r in 0..a.num_ranks() {
        if a.num_ops(r) != b.num_ops(r) {
            return Some(format!(
                "rank {r}: {} ops vs {} ops",
                a.num_ops(r),
                b.num_ops(r)
            ));
        }
        for i in 0..a.num_ops(r) {
            if a.op(r, i) != b.op(r, i) {
                return Some(format!(
                    "rank {r} op {i}: {:?} vs {:?}",
                    a.op(r, i),
                    b.op(r, i)
                ));
            }
            if a.depcount(r, i) != b.depcount(r, i) {
                return Some(format!(
                    "rank {r} op {i}: depcount {} vs {}",
                    a.depcount(r, i),
                    b.depcount(r, i)
                ));
            }
            for kind in [DepKind::Done, DepKind::Start] {
                da.clear();
                db.clear();
                a.for_each_dependent(r, i, kind, |d| da.push(d));
                b.for_each_dependent(r, i, kind, |d| db.push(d));
                if da != db {
                    return Some(format!(
                        "rank {r} op {i}: {kind:?} dependents {da:?} vs {db:?}"
                    ));
                }
            }
        }
        if a.num_roots(r) != b.num_roots(r) {
            return Some(format!(
                "rank {r}: {} roots vs {} roots",
                a.num_roots(r),
                b.num_roots(r)
            ));
        }
        for k in 0..a.num_roots(r) {
            if a.root(r, k) != b.root(r, k) {
                return Some(format!(
                    "rank {r}: root {k} is op {} vs op {}",
                    a.root(r, k),
                    b.root(r, k)
                ));
            }
        }
    }
    None
}
