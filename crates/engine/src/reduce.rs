//! Redundant `requires` of an [`OpTable`] dropped, for the windowed engine.
//!
//! When op `x` requires `y` and also requires `z`, which itself requires `y` (directly or
//! through a chain of `requires`), `x`'s dependency on `y` changes nothing: `y` completes in
//! an event processed before the one in which `z` is freed, so before `z` completes, and `x`
//! is freed by the completion of its last dependency, which is never `y`. The event that frees
//! `x`, and `x`'s place among the ops it frees (its place in the completing op's dependents),
//! stay the same, so every answer does. Schedgen's reductions are built this way (a round's
//! send requires the round's receive and the reduction calc that requires it too), and each
//! such dependency costs a dependency counter per op and a lookup per release.
//!
//! A table only has completion dependents (`Tabled` has no start dependents), so only
//! `requires` chains are followed; a chain through an `irequires` would not imply
//! completion.

use crate::program::{OpTable, TableDep, TableOp};

/// How many ops one search for an alternative chain visits at most: a dependency whose chain
/// is not found within it is kept (keeping a redundant dependency is always correct).
const VISIT_LIMIT: usize = 64;

/// An [`OpTable`]'s ops and dependents with the redundant dependencies dropped.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub(crate) struct Reduced {
    pub ops: Vec<TableOp>,
    pub deps: Vec<TableDep>,
}

impl Reduced {
    pub fn table(&self, ranks: u32) -> OpTable<'_> {
        OpTable {
            ranks,
            ops: &self.ops,
            deps: &self.deps,
        }
    }
}

/// `t` without its redundant dependencies, or `None` when it has none (or is not
/// consistent: an op whose count differs from the dependents naming it is left alone).
pub(crate) fn reduce(t: &OpTable) -> Option<Reduced> {
    let n = t.ops.len();
    // What each op requires, as compressed rows: `reqs[start[x]..start[x + 1]]`.
    let mut start = vec![0u32; n + 1];
    for d in t.deps {
        start[d.op as usize + 1] += 1;
    }
    for x in 0..n {
        start[x + 1] += start[x];
    }
    let mut fill = start.clone();
    let mut reqs = vec![0u32; t.deps.len()];
    for (y, op) in t.ops.iter().enumerate() {
        for d in &t.deps[op.dependents()] {
            let slot = &mut fill[d.op as usize];
            reqs[*slot as usize] = y as u32;
            *slot += 1;
        }
    }
    let required = |x: usize| &reqs[start[x] as usize..start[x + 1] as usize];

    // Redundant (x, y) pairs, one per dependency dropped.
    let mut drop: Vec<(u32, u32)> = Vec::new();
    let mut stack = Vec::new();
    let mut seen = Vec::new();
    for (x, op) in t.ops.iter().enumerate() {
        let r = required(x);
        if r.len() < 2 || op.depcount as usize != r.len() {
            continue;
        }
        for &y in r {
            // Is `y` reached from another requirement `z` of `x`?
            stack.clear();
            seen.clear();
            stack.extend(r.iter().copied().filter(|&z| z != y));
            let mut found = false;
            while let Some(z) = stack.pop() {
                if seen.contains(&z) {
                    continue;
                }
                if seen.len() == VISIT_LIMIT {
                    break;
                }
                seen.push(z);
                let up = required(z as usize);
                if up.contains(&y) {
                    found = true;
                    break;
                }
                stack.extend_from_slice(up);
            }
            if found {
                drop.push((x as u32, y));
            }
        }
    }
    if drop.is_empty() {
        return None;
    }
    drop.sort_unstable();
    drop.dedup();
    let dropped = |x: u32, y: u32| drop.binary_search(&(x, y)).is_ok();
    let mut count: Vec<u32> = t.ops.iter().map(|o| o.depcount).collect();
    for (y, op) in t.ops.iter().enumerate() {
        for d in &t.deps[op.dependents()] {
            if dropped(d.op, y as u32) {
                count[d.op as usize] -= 1;
            }
        }
    }
    let mut out = Reduced {
        ops: Vec::with_capacity(n),
        deps: Vec::with_capacity(t.deps.len()),
    };
    for (y, op) in t.ops.iter().enumerate() {
        let first_dep = out.deps.len() as u32;
        out.deps.extend(
            t.deps[op.dependents()]
                .iter()
                .filter(|d| !dropped(d.op, y as u32))
                .map(|d| TableDep {
                    op: d.op,
                    depcount: count[d.op as usize],
                }),
        );
        out.ops.push(TableOp {
            depcount: count[y],
            first_dep,
            num_deps: out.deps.len() as u32 - first_dep,
            ..*op
        });
    }
    Some(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::program::Op;
    use crate::test_rng::xorshift;

    /// A table from each op's `requires` (op ids below `requires.len()`).
    fn table(requires: &[Vec<u32>]) -> (Vec<TableOp>, Vec<TableDep>) {
        let n = requires.len();
        let mut ops = Vec::new();
        let mut deps = Vec::new();
        for y in 0..n as u32 {
            let first_dep = deps.len() as u32;
            for (x, r) in requires.iter().enumerate() {
                for _ in r.iter().filter(|&&d| d == y) {
                    deps.push(TableDep {
                        op: x as u32,
                        depcount: r.len() as u32,
                    });
                }
            }
            ops.push(TableOp {
                op: Op::calc(y as u64),
                depcount: requires[y as usize].len() as u32,
                first_dep,
                num_deps: deps.len() as u32 - first_dep,
            });
        }
        (ops, deps)
    }

    /// What each op requires in `t`, sorted.
    fn requires_of(t: &OpTable) -> Vec<Vec<u32>> {
        let mut r = vec![Vec::new(); t.ops.len()];
        for (y, op) in t.ops.iter().enumerate() {
            for d in &t.deps[op.dependents()] {
                assert_eq!(d.depcount, t.ops[d.op as usize].depcount);
                r[d.op as usize].push(y as u32);
            }
        }
        for (x, v) in r.iter_mut().enumerate() {
            assert_eq!(v.len() as u32, t.ops[x].depcount);
            v.sort_unstable();
        }
        r
    }

    fn reduced(requires: &[Vec<u32>]) -> Option<Vec<Vec<u32>>> {
        let (ops, deps) = table(requires);
        let t = OpTable {
            ranks: 1,
            ops: &ops,
            deps: &deps,
        };
        reduce(&t).map(|r| requires_of(&r.table(1)))
    }

    /// Schedgen's reduction round: a receive, the calc that requires it, and the send that
    /// requires both keeps only the calc.
    #[test]
    fn drops_the_dependency_a_chain_implies() {
        let r = reduced(&[vec![], vec![0], vec![0, 1]]).unwrap();
        assert_eq!(r, [vec![], vec![0], vec![1]]);
        // Through a longer chain, and with the implied dependency listed first or last.
        let r = reduced(&[vec![], vec![0], vec![1], vec![0, 2], vec![2, 0]]).unwrap();
        assert_eq!(r, [vec![], vec![0], vec![1], vec![2], vec![2]]);
    }

    #[test]
    fn keeps_dependencies_no_chain_implies() {
        // A diamond: 3 needs both branches.
        assert_eq!(reduced(&[vec![], vec![0], vec![0], vec![1, 2]]), None);
        assert_eq!(reduced(&[vec![], vec![], vec![0, 1]]), None);
    }

    /// Releases ops the way both engines do, completing one freed op at a time in an order
    /// `pick` chooses; returns, for each op, the completion that freed it and its place among
    /// the ops that completion freed.
    fn freed_by(t: &OpTable, pick: &mut impl FnMut(usize) -> usize) -> Vec<(u32, usize)> {
        let n = t.ops.len();
        let mut left: Vec<u32> = t.ops.iter().map(|o| o.depcount).collect();
        let mut ready: Vec<u32> = (0..n as u32).filter(|&x| left[x as usize] == 0).collect();
        let mut by = vec![(u32::MAX, 0); n];
        while !ready.is_empty() {
            let y = ready.swap_remove(pick(ready.len()));
            let mut k = 0;
            for d in &t.deps[t.ops[y as usize].dependents()] {
                left[d.op as usize] -= 1;
                if left[d.op as usize] == 0 {
                    by[d.op as usize] = (y, k);
                    k += 1;
                    ready.push(d.op);
                }
            }
        }
        by
    }

    /// On random DAGs (each op requires up to four earlier ones, sometimes twice), whatever
    /// the order in which freed ops complete, every op is freed by the same completion, in the
    /// same place among the ops it frees, with and without the dropped dependencies.
    #[test]
    fn frees_every_op_at_the_same_completion_in_the_same_place() {
        let mut next = xorshift(0x0005_EED0_FDA6);
        let mut rnd = |n: u64| next() % n;
        let mut dropped = 0;
        for _ in 0..2000 {
            let n = 1 + rnd(24) as usize;
            let requires: Vec<Vec<u32>> = (0..n)
                .map(|x| match x {
                    0 => vec![],
                    _ => (0..rnd(5)).map(|_| rnd(x as u64) as u32).collect(),
                })
                .collect();
            let (ops, deps) = table(&requires);
            let t = OpTable {
                ranks: 1,
                ops: &ops,
                deps: &deps,
            };
            let Some(r) = reduce(&t) else { continue };
            dropped += deps.len() - r.deps.len();
            for order in 0..4u64 {
                let mut a = xorshift(order + 1);
                let mut b = xorshift(order + 1);
                let before = freed_by(&t, &mut |k| (a() % k as u64) as usize);
                let after = freed_by(&r.table(1), &mut |k| (b() % k as u64) as usize);
                assert_eq!(before, after, "{requires:?}");
            }
        }
        assert!(dropped > 1000, "{dropped}");
    }
}
