//! Putting the shards of a run (`--shard I/N`) back together: [`merge`] checks that the shards
//! are all the slices of one run, each exactly once, and returns the result the unsharded run
//! would have written. Cells take their samples from every shard in repetition order, so the
//! merged JSON, CSV and samples files are the unsharded run's, byte for byte, apart from the
//! wall-clock fields of noiseless cells (`run.wall_s`, `run.peak_rss_bytes`).

use std::collections::BTreeMap;

use crate::model::{CellResult, RunResult, Share, Status};

/// A shard's result and the name it is known by in messages (its file name).
#[derive(Debug, Clone)]
pub struct ShardInput {
    pub name: String,
    pub result: RunResult,
}

/// Why shards cannot be merged.
#[derive(Debug, thiserror::Error, PartialEq)]
pub enum MergeError {
    #[error("nothing to merge: give the shard files (the JSON outputs of --shard I/N)")]
    Empty,
    #[error(
        "{name} is not a shard: it has no `shard` entry (it is a whole run's result, written \
         without --shard)"
    )]
    NotAShard { name: String },
    #[error(
        "{name} is a shard of a different run than {first}: `{what}` is {theirs} in {name} but \
         {ours} in {first}; merge only the shards of one command (same schedules, profiles, \
         parameters, seed, repetitions and loggops-sim version)"
    )]
    DifferentRun {
        first: String,
        name: String,
        what: String,
        ours: String,
        theirs: String,
    },
    #[error("shard {shard} given twice: {first} and {second}")]
    Duplicate {
        shard: String,
        first: String,
        second: String,
    },
    #[error(
        "shard(s) {missing} of {count} missing (got {got}): merge needs every shard of the run"
    )]
    Missing {
        missing: String,
        count: u32,
        got: String,
    },
    #[error(
        "{name} (shard {shard}) holds {what} of cell {cell}, which is not its share: it was not \
         written by this version's --shard"
    )]
    NotItsShare {
        name: String,
        shard: String,
        what: String,
        cell: String,
    },
    #[error(
        "the noiseless time of cell {cell} is {ours} ps in {first} but {theirs} ps in {name}: \
         the shards did not simulate the same thing"
    )]
    Baseline {
        cell: String,
        first: String,
        name: String,
        ours: String,
        theirs: String,
    },
}

/// The first place where two JSON values differ, as (path, left, right).
fn first_difference(
    path: &str,
    a: &serde_json::Value,
    b: &serde_json::Value,
) -> Option<(String, String, String)> {
    use serde_json::Value::{Array, Object};
    match (a, b) {
        (Object(x), Object(y)) => {
            for (k, va) in x {
                let p = format!("{path}.{k}");
                match y.get(k) {
                    Some(vb) => {
                        if let Some(d) = first_difference(&p, va, vb) {
                            return Some(d);
                        }
                    }
                    None => return Some((p, va.to_string(), "absent".into())),
                }
            }
            y.keys()
                .find(|k| !x.contains_key(*k))
                .map(|k| (format!("{path}.{k}"), "absent".into(), y[k].to_string()))
        }
        (Array(x), Array(y)) if x.len() == y.len() => x
            .iter()
            .zip(y)
            .enumerate()
            .find_map(|(i, (va, vb))| first_difference(&format!("{path}[{i}]"), va, vb)),
        _ if a == b => None,
        _ => Some((path.to_string(), a.to_string(), b.to_string())),
    }
}

/// What must be equal for two shards to be of one run: the tool, the plan (schedules and their
/// hashes, profiles and their hashes, parameters, seed, repetition rule, model, tick) and the
/// shard count; not the cells, the status, the shard's index or the command's word order. A
/// schedule or profile is known by its SHA-256, not by its path: shards that read the same file
/// from another directory (another node's scratch, a copy) are of one run, and the merged
/// result keeps shard 1's paths. A schedule's label (its file stem) still has to match.
fn run_identity(r: &RunResult) -> serde_json::Value {
    let mut plan = r.plan.clone();
    let files = plan.workloads.iter_mut().map(|w| (&mut w.path, &w.sha256));
    let profiles = plan.systems.iter_mut().filter_map(|s| s.profile.as_mut());
    for (path, sha256) in files.chain(profiles.map(|p| (&mut p.path, &p.sha256))) {
        if !sha256.is_empty() {
            path.clear();
        }
    }
    serde_json::json!({
        "schema": r.schema,
        "schema_version": r.schema_version,
        "tool": r.tool,
        "shard_count": r.shard.map(|s| s.count),
        "plan": plan,
    })
}

fn cell_label(c: &CellResult) -> String {
    format!(
        "{} / {} / {} nodes / {}",
        c.workload, c.system, c.nodes, c.noise_mode
    )
}

/// Merges the shards of one run into its whole result (see the module docs). The shards may
/// come in any order. A shard that was interrupted makes the merged result interrupted (its
/// cells cut short are marked so); everything else must be complete and consistent.
pub fn merge(shards: Vec<ShardInput>) -> Result<RunResult, MergeError> {
    let Some(first) = shards.first() else {
        return Err(MergeError::Empty);
    };
    let ident = run_identity(&first.result);
    for s in &shards {
        if s.result.shard.is_none() {
            return Err(MergeError::NotAShard {
                name: s.name.clone(),
            });
        }
    }
    for s in &shards[1..] {
        if let Some((what, ours, theirs)) = first_difference("", &ident, &run_identity(&s.result)) {
            return Err(MergeError::DifferentRun {
                first: first.name.clone(),
                name: s.name.clone(),
                what: what.trim_start_matches('.').to_string(),
                ours,
                theirs,
            });
        }
    }
    let count = first.result.shard.expect("checked").count;
    let mut by_index: BTreeMap<u32, &ShardInput> = BTreeMap::new();
    for s in &shards {
        let shard = s.result.shard.expect("checked");
        if let Some(prev) = by_index.insert(shard.index, s) {
            return Err(MergeError::Duplicate {
                shard: shard.to_string(),
                first: prev.name.clone(),
                second: s.name.clone(),
            });
        }
    }
    let missing: Vec<String> = (1..=count)
        .filter(|i| !by_index.contains_key(i))
        .map(|i| i.to_string())
        .collect();
    if !missing.is_empty() {
        return Err(MergeError::Missing {
            missing: missing.join(", "),
            count,
            got: by_index
                .keys()
                .map(|i| i.to_string())
                .collect::<Vec<_>>()
                .join(", "),
        });
    }

    let plan = &first.result.plan;
    let ncells = plan.cells().len();
    // Per cell: (rep, time) pairs, whether every share of it arrived complete, the baseline
    // and its source, the engine facts.
    let mut reps: Vec<Vec<(u64, u64)>> = vec![Vec::new(); ncells];
    let mut complete = vec![true; ncells];
    let mut baseline: Vec<Option<(u64, &str)>> = vec![None; ncells];
    let mut proto: Vec<Option<&CellResult>> = vec![None; ncells];
    // The attributed repetitions of each cell, from every shard that ran some.
    let mut why: Vec<Option<crate::why::CellWhy>> = vec![None; ncells];
    let mut interrupted = false;
    for s in by_index.values() {
        let r = &s.result;
        let shard = r.shard.expect("checked");
        interrupted |= r.status == Status::Interrupted;
        let shares = plan.shares(shard);
        let mut seen = vec![false; ncells];
        for c in &r.cells {
            let share = shares.get(c.id).copied().unwrap_or(Share::Nothing);
            let not_its = |what: String| MergeError::NotItsShare {
                name: s.name.clone(),
                shard: shard.to_string(),
                what,
                cell: cell_label(c),
            };
            match share {
                Share::Nothing => return Err(not_its("samples".into())),
                Share::Whole => {}
                Share::Reps(set) => {
                    if let Some(&rep) = c.reps.iter().find(|&&rep| !set.contains(rep)) {
                        return Err(not_its(format!("repetition {rep}")));
                    }
                }
            }
            seen[c.id] = true;
            complete[c.id] &= c.complete;
            if let Some(t) = c.noiseless_ps {
                match baseline[c.id] {
                    None => baseline[c.id] = Some((t, &s.name)),
                    Some((b, from)) if b != t => {
                        return Err(MergeError::Baseline {
                            cell: cell_label(c),
                            first: from.to_string(),
                            name: s.name.clone(),
                            ours: b.to_string(),
                            theirs: t.to_string(),
                        })
                    }
                    Some(_) => {}
                }
            }
            if proto[c.id].is_none() || c.run.is_some() {
                proto[c.id] = Some(c);
            }
            reps[c.id].extend(c.reps.iter().copied().zip(c.samples_ps.iter().copied()));
            if let Some(w) = &c.why {
                let m = why[c.id].get_or_insert_with(Default::default);
                m.noiseless = m.noiseless.or(w.noiseless);
                m.reps.extend(w.reps.iter().copied());
            }
        }
        // A share that did not arrive: only an interrupted shard may lack one.
        for (id, share) in shares.iter().enumerate() {
            if *share != Share::Nothing && !seen[id] {
                complete[id] = false;
            }
        }
    }

    let mut cells = Vec::new();
    for id in 0..ncells {
        let Some(p) = proto[id] else { continue };
        let mut pairs = std::mem::take(&mut reps[id]);
        pairs.sort_unstable();
        let why = why[id].take().map(|mut w| {
            w.reps.sort_by_key(|p| p.rep);
            w.reps.dedup_by_key(|p| p.rep);
            w
        });
        cells.push(CellResult {
            why,
            complete: complete[id],
            reps: pairs.iter().map(|p| p.0).collect(),
            samples_ps: pairs.iter().map(|p| p.1).collect(),
            ..p.clone()
        });
    }
    // Shard 1's plan and command (the shards' paths may differ), whatever the files' order.
    let mut out = by_index
        .values()
        .next()
        .expect("no shard is missing")
        .result
        .clone();
    out.shard = None;
    out.status = if interrupted {
        Status::Interrupted
    } else {
        Status::Complete
    };
    out.cells = cells;
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn names_the_first_difference() {
        let a = json!({"plan": {"settings": {"seed": 1, "reps": {"rule": "auto"}}}, "x": [1, 2]});
        let b = json!({"plan": {"settings": {"seed": 2, "reps": {"rule": "auto"}}}, "x": [1, 2]});
        assert_eq!(
            first_difference("", &a, &b),
            Some((".plan.settings.seed".into(), "1".into(), "2".into()))
        );
        let c = json!({"plan": {"settings": {"seed": 1, "reps": {"rule": "auto"}}}, "x": [1, 3]});
        assert_eq!(
            first_difference("", &a, &c),
            Some((".x[1]".into(), "2".into(), "3".into()))
        );
        assert_eq!(first_difference("", &a, &a), None);
    }
}
