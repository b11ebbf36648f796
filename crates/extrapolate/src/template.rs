//! One call sequence for every rank at every scale: the *template*.
//!
//! Every call is abstracted to what must agree between ranks and scales: a point-to-point
//! call's direction, blocking or not, tag and partner as an offset in the grid; a collective's
//! pattern; a wait. The ranks of the largest traced scale that make different sequences are
//! merged into one template (the longest first, the others aligned to it by longest common
//! subsequence). A template call happens on a rank when its partner exists there (an offset
//! along a dimension that does not wrap needs a neighbour on that side); a `wait` when its
//! request was posted; collectives and `waitall` everywhere. Every rank of every trace must then
//! make exactly the template's calls that happen on it, in order: the first that does not is
//! refused, by rank, op and scale. Walking the traces that way assigns every traced size and
//! computation to its template call, for the fits.

use std::collections::{BTreeSet, HashMap};

use crate::coll::{candidates, instance_size, CollPattern};
use crate::error::{refuse, ExtrapError};
use crate::grid::{coords, offset, Grid};
use crate::trace::{CallKind, Peer, Trace};

/// A partner: an offset in the grid, or `MPI_ANY_SOURCE`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Off {
    Grid([i64; 3]),
    Any,
}

/// What must agree between two calls to be the same template call.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum Key {
    P2p {
        send: bool,
        nb: bool,
        off: Off,
        tag: u32,
    },
    Wait,
    /// A collective; the patterns it can be at the scale it was seen.
    Coll(Vec<CollPattern>),
}

impl Key {
    fn matches(&self, other: &Key) -> bool {
        match (self, other) {
            (Key::Coll(a), Key::Coll(b)) => a.iter().any(|x| b.contains(x)),
            _ => self == other,
        }
    }
}

/// A template call and what the traces say about it.
#[derive(Clone, Debug)]
pub struct Entry {
    pub key: Key,
    /// Wait: the template calls whose requests it requires (those posted on a rank).
    pub refs: Vec<usize>,
    /// Wait: `waitall` (an op even when none of its requests was posted).
    pub all: bool,
    /// Every (P, size) seen (point-to-point and collectives).
    pub sizes: BTreeSet<(u32, u64)>,
    /// Per scale: the sum over ranks of the computation before the call (ps).
    pub gap_sum: Vec<u128>,
    /// Per scale: on how many ranks the call happens.
    pub count: Vec<u32>,
    /// Collectives: every (tag − k) seen, k being the rank's number of collectives before it.
    pub tag_bases: BTreeSet<i64>,
    /// Collectives: every tag seen.
    pub tags: BTreeSet<u32>,
    /// One place where it was seen: (scale index, rank, op), for messages.
    pub seen: Option<(usize, u32, u32)>,
    /// The rank (of the largest scale) whose calls brought it into the template, and its op.
    pub origin: Option<(u32, u32)>,
}

impl Entry {
    pub(crate) fn new(key: Key, scales: usize) -> Entry {
        Entry {
            key,
            refs: Vec::new(),
            all: false,
            sizes: BTreeSet::new(),
            gap_sum: vec![0; scales],
            count: vec![0; scales],
            tag_bases: BTreeSet::new(),
            tags: BTreeSet::new(),
            seen: None,
            origin: None,
        }
    }
}

/// The template and the per-scale data walked into it.
#[derive(Clone, Debug)]
pub struct Template {
    pub grid: Grid,
    pub entries: Vec<Entry>,
    /// Per scale: the sum over ranks of the computation after the last call.
    pub trailing_sum: Vec<u128>,
    /// Per scale: ranks with a trailing computation.
    pub trailing_count: Vec<u32>,
    pub scales: Vec<u32>,
    /// Observations worth telling the user.
    pub notes: Vec<String>,
}

/// The abstract keys of one rank's calls, and its waits' requests as call indices.
struct RankKeys {
    keys: Vec<Key>,
    waits: Vec<Vec<u32>>,
    /// Per call: a wait that is certainly a waitall.
    all: Vec<bool>,
}

fn dims_at(grid: &Grid, p: u32) -> [u32; 3] {
    grid.rule.dims(p).unwrap_or([p, 1, 1])
}

/// The collective candidates and size of every instance of a trace (the k-th collective call
/// of every rank), or a refusal.
pub(crate) fn collectives(t: &Trace) -> Result<Vec<(Vec<CollPattern>, u64)>, ExtrapError> {
    let per_rank = t.collective_calls();
    // what most ranks do
    let mut counts: HashMap<usize, u32> = HashMap::new();
    for v in &per_rank {
        *counts.entry(v.len()).or_default() += 1;
    }
    let n0 = counts
        .iter()
        .max_by_key(|(n, c)| (**c, std::cmp::Reverse(**n)))
        .map_or(0, |x| *x.0);
    if let Some(r) = (0..t.p).find(|&r| per_rank[r as usize].len() != n0) {
        let n = per_rank[r as usize].len();
        let op = per_rank[r as usize]
            .get(n0.min(n))
            .map(|x| x.0)
            .or_else(|| t.ranks[r as usize].calls.last().map(|c| c.op));
        return Err(refuse(
            t.p,
            &t.path,
            r,
            op,
            format!("rank {r} makes {n} collective calls, {} of the {} ranks make {n0}", counts[&n0], t.p),
            "every rank must take part in the same collectives (collectives on sub-communicators are dropped by Schedgen's trace conversion); trace a run where all ranks call the same collectives",
        ));
    }
    let mut out = Vec::with_capacity(n0);
    for k in 0..n0 {
        let ops: Vec<&[loggops_engine::Op]> = per_rank.iter().map(|v| v[k].1).collect();
        let c = candidates(t.p, &ops);
        if c.is_empty() {
            return Err(refuse(
                t.p,
                &t.path,
                0,
                Some(per_rank[0][k].0),
                format!("collective call {} (tag {}) is none of the patterns Schedgen's trace conversion writes (dissemination, MPICH recursive-doubling allreduce, binomial bcast/reduce, linear alltoall)", k + 1, ops[0].first().map_or(0, |o| o.tag)),
                "convert the trace with spcl/atlahs' or upstream Schedgen (`schedgen -p trace`), whose collectives this tool rebuilds",
            ));
        }
        out.push((c, instance_size(&ops)));
    }
    Ok(out)
}

fn rank_keys(t: &Trace, r: u32, grid: &Grid, colls: &[Vec<CollPattern>]) -> RankKeys {
    let dims = dims_at(grid, t.p);
    let mut keys = Vec::new();
    let mut waits = Vec::new();
    let mut all = Vec::new();
    let mut k = 0;
    for c in &t.ranks[r as usize].calls {
        keys.push(match &c.kind {
            CallKind::P2p {
                send,
                nb,
                peer,
                tag,
                ..
            } => Key::P2p {
                send: *send,
                nb: *nb,
                off: match peer {
                    Peer::Rank(q) => Off::Grid(offset(r, *q, dims, grid.periodic)),
                    Peer::Any => Off::Any,
                },
                tag: *tag,
            },
            CallKind::Wait { .. } => Key::Wait,
            CallKind::Coll { .. } => {
                k += 1;
                Key::Coll(colls[k - 1].clone())
            }
        });
        waits.push(match &c.kind {
            CallKind::Wait { reqs, .. } => reqs.clone(),
            _ => Vec::new(),
        });
        all.push(matches!(c.kind, CallKind::Wait { all: true, .. }));
    }
    RankKeys { keys, waits, all }
}

/// Whether a point-to-point call with offset `o` happens on a rank at `c` in `dims`.
pub fn partner_exists(o: &Off, c: [i64; 3], dims: [u32; 3], periodic: [bool; 3]) -> bool {
    match o {
        Off::Any => true,
        Off::Grid(o) => (0..3).all(|d| {
            periodic[d] || {
                let x = c[d] + o[d];
                x >= 0 && x < dims[d] as i64
            }
        }),
    }
}

/// Builds the template from the largest scale and walks every trace into it.
pub fn build(traces: &[Trace], grid: Grid) -> Result<Template, ExtrapError> {
    let ns = traces.len();
    let scales: Vec<u32> = traces.iter().map(|t| t.p).collect();
    let mut colls = Vec::with_capacity(ns);
    for t in traces {
        colls.push(collectives(t)?.into_iter().map(|c| c.0).collect::<Vec<_>>());
    }
    // the largest scale (the last of equals)
    let big = (0..ns).max_by_key(|&s| (traces[s].p, s)).expect("traces");
    let t = &traces[big];
    type Class = (Vec<Key>, Vec<Vec<u32>>, Vec<bool>);
    let mut classes: HashMap<Class, Vec<u32>> = HashMap::new();
    for r in 0..t.p {
        let rk = rank_keys(t, r, &grid, &colls[big]);
        classes
            .entry((rk.keys, rk.waits, rk.all))
            .or_default()
            .push(r);
    }
    let mut order: Vec<(Class, Vec<u32>)> = classes.into_iter().collect();
    order.sort_by_key(|((k, _, _), ranks)| (std::cmp::Reverse(k.len()), ranks[0]));
    let mut entries: Vec<Entry> = Vec::new();
    let mut notes = Vec::new();
    for (ci, ((keys, waits, alls), ranks)) in order.iter().enumerate() {
        let rep = ranks[0];
        if ci == 0 {
            for (i, key) in keys.iter().enumerate() {
                let mut e = Entry::new(key.clone(), ns);
                e.origin = Some((rep, t.ranks[rep as usize].calls[i].op));
                e.refs = waits[i].iter().map(|&q| q as usize).collect();
                e.all = alls[i] || (matches!(key, Key::Wait) && e.refs.len() != 1);
                entries.push(e);
            }
            continue;
        }
        // already a filtered version of the template? (the usual case: a boundary rank);
        // a single wait found without its request is a waitall
        let mut same = false;
        for _ in 0..=entries.len() {
            match filter_matches(&entries, keys, waits, rep, t.p, &grid) {
                Ok(()) => {
                    same = true;
                    break;
                }
                Err(Some(i)) => entries[i].all = true,
                Err(None) => break,
            }
        }
        if same {
            continue;
        }
        let map = merge(&mut entries, keys, ns);
        for (j, &i) in map.iter().enumerate() {
            if entries[i].origin.is_none() {
                entries[i].origin = Some((rep, t.ranks[rep as usize].calls[j].op));
            }
        }
        for (i, w) in waits.iter().enumerate() {
            if matches!(keys[i], Key::Wait) {
                let e = &mut entries[map[i]];
                for &q in w {
                    let x = map[q as usize];
                    if !e.refs.contains(&x) {
                        e.refs.push(x);
                    }
                }
                e.refs.sort_unstable();
                e.all |= alls[i] || e.refs.len() != 1;
            }
        }
        notes.push(format!(
            "rank {rep} at P = {} makes calls the longest sequence (rank {}) does not; merged in",
            t.p, order[0].1[0]
        ));
    }
    // walk every trace; a single wait that turns out to be called without its request
    // becomes a waitall, and the walk starts again
    loop {
        for e in entries.iter_mut() {
            e.sizes.clear();
            e.gap_sum.iter_mut().for_each(|g| *g = 0);
            e.count.iter_mut().for_each(|g| *g = 0);
            e.tag_bases.clear();
            e.tags.clear();
            e.seen = None;
        }
        let mut tmpl = Template {
            grid: grid.clone(),
            entries,
            trailing_sum: vec![0; ns],
            trailing_count: vec![0; ns],
            scales: scales.clone(),
            notes: notes.clone(),
        };
        match walk_all(&mut tmpl, traces, &colls) {
            Ok(()) => return Ok(tmpl),
            Err(Walk::Flip(i)) => {
                entries = tmpl.entries;
                entries[i].all = true;
            }
            Err(Walk::Refused(e)) => return Err(e),
        }
    }
}

enum Walk {
    /// Template wait `i` is a waitall.
    Flip(usize),
    Refused(ExtrapError),
}

/// The rank's calls (indices) whose requests a template wait requires: its requests the rank
/// posted (`present[i]`: the rank's call of template call i, `usize::MAX` if none).
fn posted(e: &Entry, present: &[usize]) -> Vec<u32> {
    e.refs
        .iter()
        .filter(|&&q| present[q] != usize::MAX)
        .map(|&q| present[q] as u32)
        .collect()
}

/// Whether `keys` are exactly the template's calls that happen on rank `r` at `p`; `Err(Some(i))`
/// when they would be if template wait `i` were a waitall.
fn filter_matches(
    entries: &[Entry],
    keys: &[Key],
    waits: &[Vec<u32>],
    r: u32,
    p: u32,
    grid: &Grid,
) -> Result<(), Option<usize>> {
    let dims = dims_at(grid, p);
    let c = coords(r, dims);
    let mut present = vec![usize::MAX; entries.len()];
    let mut j = 0;
    for (i, e) in entries.iter().enumerate() {
        let here = match &e.key {
            Key::P2p { off, .. } => partner_exists(off, c, dims, grid.periodic),
            Key::Coll(_) => true,
            Key::Wait => e.all || e.refs.iter().any(|&q| present[q] != usize::MAX),
        };
        if !here {
            if matches!(e.key, Key::Wait) && keys.get(j) == Some(&Key::Wait) && waits[j].is_empty()
            {
                return Err(Some(i));
            }
            continue;
        }
        if j >= keys.len() || !e.key.matches(&keys[j]) {
            return Err(None);
        }
        if let Key::Wait = e.key {
            let want = posted(e, &present);
            if want != waits[j] {
                return Err(None);
            }
        }
        present[i] = j;
        j += 1;
    }
    if j == keys.len() {
        Ok(())
    } else {
        Err(None)
    }
}

/// Merges `keys` into the template (longest common subsequence); returns, for each key, its
/// template index.
fn merge(entries: &mut Vec<Entry>, keys: &[Key], ns: usize) -> Vec<usize> {
    let (m, n) = (entries.len(), keys.len());
    // lcs[i][j] = LCS of entries[i..] and keys[j..]
    let w = n + 1;
    let mut lcs = vec![0u32; (m + 1) * w];
    for i in (0..m).rev() {
        for j in (0..n).rev() {
            lcs[i * w + j] = if entries[i].key.matches(&keys[j]) {
                lcs[(i + 1) * w + j + 1] + 1
            } else {
                lcs[(i + 1) * w + j].max(lcs[i * w + j + 1])
            };
        }
    }
    let mut out: Vec<Entry> = Vec::with_capacity(m + n);
    let mut old_to_new = vec![0usize; m];
    let mut map = vec![0usize; n];
    let (mut i, mut j) = (0, 0);
    while i < m || j < n {
        if i < m
            && j < n
            && entries[i].key.matches(&keys[j])
            && lcs[i * w + j] == lcs[(i + 1) * w + j + 1] + 1
        {
            old_to_new[i] = out.len();
            map[j] = out.len();
            out.push(entries[i].clone());
            i += 1;
            j += 1;
        } else if i < m && (j == n || lcs[(i + 1) * w + j] >= lcs[i * w + j + 1]) {
            old_to_new[i] = out.len();
            out.push(entries[i].clone());
            i += 1;
        } else {
            map[j] = out.len();
            out.push(Entry::new(keys[j].clone(), ns));
            j += 1;
        }
    }
    for e in &mut out {
        for q in &mut e.refs {
            *q = old_to_new[*q];
        }
    }
    *entries = out;
    map
}

fn walk_all(
    tmpl: &mut Template,
    traces: &[Trace],
    colls: &[Vec<Vec<CollPattern>>],
) -> Result<(), Walk> {
    // the largest scale first: the template comes from it, so its odd ranks are named first
    let mut order: Vec<usize> = (0..traces.len()).collect();
    order.sort_by_key(|&s| std::cmp::Reverse(traces[s].p));
    for s in order {
        let t = &traces[s];
        for r in 0..t.p {
            walk_rank(tmpl, s, t, r, &colls[s])?;
        }
    }
    // the patterns every scale allows
    for e in &mut tmpl.entries {
        if let Key::Coll(c) = &e.key {
            if c.is_empty() {
                return Err(Walk::Refused(ExtrapError::Usage(
                    "internal: a collective without a pattern".into(),
                )));
            }
        }
    }
    Ok(())
}

fn describe_key(k: &Key) -> String {
    match k {
        Key::P2p { send, nb, off, tag } => {
            let verb = match (send, nb) {
                (true, false) => "MPI_Send",
                (true, true) => "MPI_Isend",
                (false, false) => "MPI_Recv",
                (false, true) => "MPI_Irecv",
            };
            let dir = if *send { "to" } else { "from" };
            match off {
                Off::Any => format!("{verb} {dir} MPI_ANY_SOURCE, tag {tag}"),
                Off::Grid(o) => format!(
                    "{verb} {dir} the rank at offset {} in the grid, tag {tag}",
                    fmt_off(o)
                ),
            }
        }
        Key::Wait => "MPI_Wait/MPI_Waitall".to_string(),
        Key::Coll(c) => format!(
            "a collective ({})",
            c.iter()
                .map(|x| x.mpi_call())
                .collect::<Vec<_>>()
                .join(" or ")
        ),
    }
}

/// `(+1, 0, -1)`.
pub fn fmt_off(o: &[i64; 3]) -> String {
    let s: Vec<String> = o
        .iter()
        .map(|&x| {
            if x > 0 {
                format!("+{x}")
            } else {
                x.to_string()
            }
        })
        .collect();
    format!("({})", s.join(", "))
}

fn walk_rank(
    tmpl: &mut Template,
    s: usize,
    t: &Trace,
    r: u32,
    colls: &[Vec<CollPattern>],
) -> Result<(), Walk> {
    let grid = tmpl.grid.clone();
    let dims = dims_at(&grid, t.p);
    let c = coords(r, dims);
    let rk = rank_keys(t, r, &grid, colls);
    let calls = &t.ranks[r as usize].calls;
    let n = tmpl.entries.len();
    let mut present = vec![usize::MAX; n];
    let mut j = 0usize;
    let mut k = 0i64; // collectives so far
    let fix = "extrapolation needs every rank at every traced scale to make the same sequence of calls, each point-to-point call with a neighbour at a fixed offset in the grid (skipped where that neighbour does not exist); trace a program whose communication pattern does not change with P, or replicate the trace (`--replicate`) instead";
    let pmax = *tmpl.scales.iter().max().expect("scales");
    let origin = |i: usize, e: &Entry| match e.origin {
        Some((r, op)) => format!(
            "call {} of the template, made by rank {r} at P = {pmax}, op l{}",
            i + 1,
            op + 1
        ),
        None => format!("call {} of the template", i + 1),
    };
    for i in 0..n {
        let e = &tmpl.entries[i];
        let here = match &e.key {
            Key::P2p { off, .. } => partner_exists(off, c, dims, grid.periodic),
            Key::Coll(_) => true,
            Key::Wait => e.all || e.refs.iter().any(|&q| present[q] != usize::MAX),
        };
        if !here {
            // a single wait skipped although the rank makes a wait here: a waitall
            if matches!(e.key, Key::Wait)
                && j < rk.keys.len()
                && rk.keys[j] == Key::Wait
                && rk.waits[j].is_empty()
            {
                return Err(Walk::Flip(i));
            }
            continue;
        }
        if j >= rk.keys.len() {
            let last = calls.last().map(|c| c.op);
            return Err(Walk::Refused(refuse(
                t.p,
                &t.path,
                r,
                last,
                format!("the rank ends after {} calls, but the pattern of the other ranks and scales continues with {} ({})", calls.len(), describe_key(&e.key), origin(i, e)),
                fix,
            )));
        }
        if !e.key.matches(&rk.keys[j]) {
            return Err(Walk::Refused(refuse(
                t.p,
                &t.path,
                r,
                Some(calls[j].op),
                format!("call {} is {}, but the pattern of the other ranks and scales expects {} here ({})", j + 1, describe_key(&rk.keys[j]), describe_key(&e.key), origin(i, e)),
                fix,
            )));
        }
        if let Key::Wait = e.key {
            let want = posted(e, &present);
            if want != rk.waits[j] {
                let ops = |v: &[u32]| {
                    v.iter()
                        .map(|&q| format!("l{}", calls[q as usize].op + 1))
                        .collect::<Vec<_>>()
                        .join(" ")
                };
                return Err(Walk::Refused(refuse(
                    t.p,
                    &t.path,
                    r,
                    Some(calls[j].op),
                    format!(
                        "the wait requires the requests [{}], but the pattern expects [{}]",
                        ops(&rk.waits[j]),
                        ops(&want)
                    ),
                    fix,
                )));
            }
        }
        // the data
        let call = &calls[j];
        let e = &mut tmpl.entries[i];
        e.gap_sum[s] += call.gap as u128;
        e.count[s] += 1;
        if e.seen.is_none() {
            e.seen = Some((s, r, call.op));
        }
        match &call.kind {
            CallKind::P2p { size, .. } => {
                e.sizes.insert((t.p, *size));
            }
            CallKind::Coll { ops, .. } => {
                if let Some(o) = ops.first() {
                    e.sizes.insert((t.p, o.size));
                    e.tag_bases.insert(o.tag as i64 - k);
                    e.tags.insert(o.tag);
                }
                k += 1;
                if let (Key::Coll(a), Key::Coll(b)) = (&mut e.key, &rk.keys[j]) {
                    a.retain(|x| b.contains(x));
                }
            }
            CallKind::Wait { .. } => {}
        }
        present[i] = j;
        j += 1;
    }
    if j < calls.len() {
        return Err(Walk::Refused(refuse(
            t.p,
            &t.path,
            r,
            Some(calls[j].op),
            format!("call {} ({}) is more than the pattern of the other ranks and scales has (it ends after the rank's call {j})", j + 1, describe_key(&rk.keys[j])),
            fix,
        )));
    }
    if let Some(g) = t.ranks[r as usize].trailing {
        tmpl.trailing_sum[s] += g as u128;
        tmpl.trailing_count[s] += 1;
    }
    Ok(())
}

/// The partner pairs of a trace's point-to-point calls (for grid detection).
pub fn partner_pairs(t: &Trace) -> Vec<(u32, u32)> {
    let mut v = Vec::new();
    for (r, rc) in t.ranks.iter().enumerate() {
        for c in &rc.calls {
            if let CallKind::P2p {
                peer: Peer::Rank(q),
                ..
            } = c.kind
            {
                v.push((r as u32, q));
            }
        }
    }
    v.sort_unstable();
    v.dedup();
    v
}

/// Refuses wildcard receives (their matches depend on timing, which the pattern cannot keep).
pub fn refuse_wildcards(t: &Trace) -> Result<(), ExtrapError> {
    for (r, rc) in t.ranks.iter().enumerate() {
        for c in &rc.calls {
            if let CallKind::P2p {
                peer: Peer::Any, ..
            } = c.kind
            {
                return Err(refuse(
                    t.p,
                    &t.path,
                    r as u32,
                    Some(c.op),
                    "a receive from MPI_ANY_SOURCE: which rank's message it takes depends on timing, so its partner cannot be written as a position in the grid",
                    "make the receive name its source in the program and trace again, or replicate the trace (`--replicate`), which keeps wildcard receives",
                ));
            }
        }
    }
    Ok(())
}
