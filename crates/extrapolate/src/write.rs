//! From the template to schedule text: fits, repetitions, statements.

use std::collections::HashMap;
use std::fmt::Write as _;

use crate::coll::CollPattern;
use crate::fit::{fit_dur, fit_size, ComputeMode, DurFit, SizeFit};
use crate::grid::GridRule;
use crate::loops::{compress, Node};
use crate::template::{Entry, Key, Off, Template};
use loggops_schedgen::COLLS_BASE;

/// How a collective's tags are written.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum TagRule {
    /// The k-th collective gets `base + k` (Schedgen's numbering).
    Numbered(i64),
    /// Per collective: one fixed tag.
    Fixed,
}

/// A statement of the schedule, without its computation.
#[derive(Clone, Debug)]
pub struct Stmt {
    /// The statement as written, with `{NAME}` where a request name goes (for `as` and waits).
    pub text: String,
    pub size: Option<SizeFit>,
}

/// A computation's fit and the per-scale means it was fitted to (P, ps).
pub type GapFit = (DurFit, Vec<(u32, f64)>);

/// Everything the writer decided, for the text and the report.
#[derive(Clone, Debug)]
pub struct Model {
    pub stmts: Vec<Stmt>,
    /// Computation before each template call, and its per-scale means (P, ps).
    pub gaps: Vec<GapFit>,
    pub trailing: Option<GapFit>,
    pub nodes: Vec<Node>,
    pub tags: TagRule,
    pub grid_rule: GridRule,
}

fn peer_text(off: &Off, rule: GridRule) -> String {
    match off {
        Off::Any => "any".to_string(),
        Off::Grid(o) => {
            if rule.ndims() == 1 {
                match o[0] {
                    0 => "rank".to_string(),
                    d if d > 0 => format!("rank + {d}"),
                    d => format!("rank - {}", -d),
                }
            } else {
                let a: Vec<String> = o[..rule.ndims()].iter().map(|x| x.to_string()).collect();
                format!("at({})", a.join(", "))
            }
        }
    }
}

/// The condition under which a partner at `off` exists (none for wrapping dimensions).
fn cond_text(off: &Off, rule: GridRule, periodic: [bool; 3]) -> Option<String> {
    let Off::Grid(o) = off else { return None };
    let one = rule.ndims() == 1;
    let (c, n) = if one {
        (["rank", "", ""], ["P", "", ""])
    } else {
        (["x", "y", "z"], ["nx", "ny", "nz"])
    };
    let mut parts = Vec::new();
    for d in 0..rule.ndims() {
        if periodic[d] || o[d] == 0 {
            continue;
        }
        let k = o[d].abs();
        if o[d] < 0 {
            parts.push(if k == 1 {
                format!("{} > 0", c[d])
            } else {
                format!("{} >= {k}", c[d])
            });
        } else {
            parts.push(format!("{} < {} - {k}", c[d], n[d]));
        }
    }
    (!parts.is_empty()).then(|| parts.join(" && "))
}

fn size_points(e: &Entry) -> Vec<(u32, u64)> {
    e.sizes.iter().copied().collect()
}

/// Builds the model: statements, fits, repetitions.
pub fn model(t: &Template, mode: ComputeMode, tick: u64) -> Model {
    let rule = t.grid.rule;
    // collective tags: one numbering for all, or fixed per collective
    let bases: std::collections::BTreeSet<i64> = t
        .entries
        .iter()
        .flat_map(|e| e.tag_bases.iter().copied())
        .collect();
    let tags = if bases.len() <= 1 {
        TagRule::Numbered(bases.into_iter().next().unwrap_or(COLLS_BASE as i64))
    } else {
        TagRule::Fixed
    };
    let mut stmts = Vec::with_capacity(t.entries.len());
    for e in &t.entries {
        stmts.push(match &e.key {
            Key::P2p { send, nb, off, tag } => {
                let size = fit_size(&size_points(e), rule);
                let verb = match (send, nb) {
                    (true, false) => "send",
                    (true, true) => "isend",
                    (false, false) => "recv",
                    (false, true) => "irecv",
                };
                let mut s = format!(
                    "{verb} {} {} {} tag {tag}",
                    size.text(),
                    if *send { "to" } else { "from" },
                    peer_text(off, rule)
                );
                if *nb {
                    s.push_str(" as {NAME}");
                }
                if let Some(c) = cond_text(off, rule, t.grid.periodic) {
                    s.push_str(" if ");
                    s.push_str(&c);
                }
                Stmt {
                    text: s,
                    size: Some(size),
                }
            }
            Key::Wait => Stmt {
                text: if e.all {
                    "waitall {REFS}".to_string()
                } else {
                    "wait {REFS}".to_string()
                },
                size: None,
            },
            Key::Coll(c) => {
                let pat = c.first().copied().unwrap_or(CollPattern::Dissemination);
                let size = fit_size(&size_points(e), rule);
                let size_text = size.text();
                let mut s = if pat == CollPattern::Dissemination && size == SizeFit::Const(1) {
                    "barrier".to_string()
                } else {
                    format!("{} {size_text}{}", pat.statement(), pat.options())
                };
                match &tags {
                    TagRule::Numbered(b) if *b != COLLS_BASE as i64 => {
                        let _ = write!(s, " tagbase {b}");
                    }
                    TagRule::Fixed => {
                        let _ = write!(s, " tag {}", e.tags.iter().next().copied().unwrap_or(0));
                    }
                    _ => {}
                }
                Stmt {
                    text: s,
                    size: Some(size),
                }
            }
        });
    }
    // signatures: the statement, and a wait's requests as distances back
    let mut ids: HashMap<String, u32> = HashMap::new();
    let sig: Vec<u32> = t
        .entries
        .iter()
        .enumerate()
        .map(|(i, e)| {
            let mut s = stmts[i].text.clone();
            if matches!(e.key, Key::Wait) {
                for &q in &e.refs {
                    let _ = write!(s, " -{}", i - q);
                }
            }
            let n = ids.len() as u32;
            *ids.entry(s).or_insert(n)
        })
        .collect();
    let entries = &t.entries;
    let ok = |start: usize, len: usize| {
        // a wait in the body waits only for requests posted in the same repetition, and no
        // wait after the body waits for a request posted in it
        (start..start + len).all(|i| entries[i].refs.iter().all(|&q| q >= start))
            && entries[start + len..]
                .iter()
                .all(|e| e.refs.iter().all(|&q| q < start || q >= start + len))
    };
    let nodes = compress(&sig, &ok);
    // computation: per-scale means, averaged over the repetitions of a body position
    let ns = t.scales.len();
    let mean = |e: &Entry, s: usize| e.gap_sum[s] as f64 / t.scales[s] as f64;
    let mut gaps: Vec<Option<GapFit>> = vec![None; t.entries.len()];
    fn assign(
        nodes: &[Node],
        copies: &[usize],
        t: &Template,
        mean: &dyn Fn(&Entry, usize) -> f64,
        gaps: &mut Vec<Option<GapFit>>,
        mode: ComputeMode,
        tick: u64,
        ns: usize,
    ) {
        for nd in nodes {
            match nd {
                Node::Call(i) => {
                    let pts: Vec<(u32, f64)> = (0..ns)
                        .map(|s| {
                            let m = copies
                                .iter()
                                .map(|&c| mean(&t.entries[i + c], s))
                                .sum::<f64>()
                                / copies.len() as f64;
                            (t.scales[s], m)
                        })
                        .collect();
                    let f = fit_dur(&pts, mode, tick);
                    gaps[*i] = Some((f, pts));
                }
                Node::Repeat { n, len, body, .. } => {
                    let c: Vec<usize> = copies
                        .iter()
                        .flat_map(|&c| (0..*n as usize).map(move |k| c + k * len))
                        .collect();
                    assign(body, &c, t, mean, gaps, mode, tick, ns);
                }
            }
        }
    }
    assign(&nodes, &[0], t, &mean, &mut gaps, mode, tick, ns);
    let trailing = (t.trailing_count.iter().sum::<u32>() > 0).then(|| {
        let pts: Vec<(u32, f64)> = (0..ns)
            .map(|s| (t.scales[s], t.trailing_sum[s] as f64 / t.scales[s] as f64))
            .collect();
        (fit_dur(&pts, mode, tick), pts)
    });
    Model {
        stmts,
        gaps: gaps
            .into_iter()
            .map(|g| g.unwrap_or((DurFit::Const(0), Vec::new())))
            .collect(),
        trailing,
        nodes,
        tags,
        grid_rule: rule,
    }
}

/// Writes the `mpi { }` block (and the grid line) of a model.
pub fn body_text(t: &Template, m: &Model) -> String {
    let mut out = String::new();
    if let Some(g) = m.grid_rule.statement() {
        if t.entries.iter().any(|e| matches!(e.key, Key::P2p { .. })) {
            out.push_str(&g);
            out.push('\n');
        }
    }
    out.push_str("mpi {\n");
    // request names: unique per block
    let mut names: Vec<String> = vec![String::new(); t.entries.len()];
    let mut counter = 0usize;
    fn name_block(nodes: &[Node], t: &Template, names: &mut Vec<String>, counter: &mut usize) {
        for nd in nodes {
            match nd {
                Node::Call(i) => {
                    if let Key::P2p { send, nb: true, .. } = t.entries[*i].key {
                        *counter += 1;
                        names[*i] = format!("{}{}", if send { "s" } else { "r" }, counter);
                    }
                }
                Node::Repeat { body, .. } => name_block(body, t, names, counter),
            }
        }
    }
    name_block(&m.nodes, t, &mut names, &mut counter);
    fn write_nodes(
        nodes: &[Node],
        t: &Template,
        m: &Model,
        names: &[String],
        depth: usize,
        out: &mut String,
    ) {
        let pad = "  ".repeat(depth);
        for nd in nodes {
            match nd {
                Node::Call(i) => {
                    let (f, _) = &m.gaps[*i];
                    if !matches!(f, DurFit::Const(0)) {
                        let _ = writeln!(out, "{pad}calc {}", f.text());
                    }
                    let e = &t.entries[*i];
                    let mut s = m.stmts[*i].text.clone();
                    if s.contains("{NAME}") {
                        s = s.replace("{NAME}", &names[*i]);
                    }
                    if s.contains("{REFS}") {
                        // in a body, refer to this repetition's requests
                        let refs: Vec<&str> = e.refs.iter().map(|&q| names[q].as_str()).collect();
                        s = s.replace("{REFS}", &refs.join(" "));
                    }
                    let _ = writeln!(out, "{pad}{s}");
                }
                Node::Repeat { n, body, .. } => {
                    let _ = writeln!(out, "{pad}repeat {n} {{");
                    write_nodes(body, t, m, names, depth + 1, out);
                    let _ = writeln!(out, "{pad}}}");
                }
            }
        }
    }
    write_nodes(&m.nodes, t, m, &names, 1, &mut out);
    if let Some((f, _)) = &m.trailing {
        let _ = writeln!(out, "  calc {}", f.text());
    }
    out.push_str("}\n");
    out
}
