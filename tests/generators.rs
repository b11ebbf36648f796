//! Issue-3 acceptance: simulating a generated collective equals simulating the GOAL file
//! Schedgen wrote for the same pattern, in both orderings (times, event counts and, where
//! upstream's ordering deadlocks, the very same leftovers).
//!
//! Files: the shared Schedgen outputs, plus (optionally) a directory of files made with a
//! locally built Schedgen, `LOGGOPS_SCHEDGEN_REFS=dir`, named
//! `<ptrn>__P<P>__D<D>[__root<R>][__nway<N>][__seg<S>].goal`.
use std::path::Path;

use loggops_engine::{simulate, Config, NoNoise, Order, Outcome, Params};
use loggops_schedgen::{Collective, GenOptions, Generated};

use crate::shared_or_skip;

fn outcome<P: loggops_engine::Program>(p: &P, order: Order) -> Outcome {
    let cfg = Config {
        model: loggops_engine::Model::LogGOPSim,
        params: Params::loggopsim_defaults_ticks(),
        order,
        compat: true,
        progress: None,
        mpi_progress: loggops_engine::MpiProgress::Async,
    };
    simulate(p, &cfg, &mut NoNoise).unwrap()
}

fn compare(path: &Path, g: &Generated) {
    // Compat mode: calc numbers are LogGOPSim's ticks, as they are.
    let ticks = loggops_goal::ParseOptions::ticks_as_is();
    let file = loggops_goal::parse_file_with(path, &ticks).unwrap().program;
    for order in [Order::Stable, Order::Libstdcxx] {
        let mut a = outcome(g, order);
        let mut b = outcome(&file, order);
        // Which never-ran ops are listed depends on the counter storage (dense for parsed
        // files, sparse for generators); their number and everything else must agree.
        for l in a.leftovers.iter_mut().chain(b.leftovers.iter_mut()) {
            l.never_ran_ops.clear();
        }
        assert_eq!(
            a,
            b,
            "{} ({order:?}): generated and Schedgen's file simulate differently",
            path.display()
        );
    }
}

/// (pattern, P, D, options) from a local reference file name.
fn from_name(name: &str) -> Option<(Collective, u32, u64, GenOptions)> {
    let stem = name.strip_suffix(".goal")?;
    let mut parts = stem.split("__");
    let coll: Collective = parts.next()?.parse().ok()?;
    let mut p = None;
    let mut d = None;
    let mut opts = GenOptions::default();
    for part in parts {
        if let Some(v) = part.strip_prefix('P') {
            p = v.parse().ok();
        } else if let Some(v) = part.strip_prefix('D') {
            d = v.parse().ok();
        } else if let Some(v) = part.strip_prefix("root") {
            opts.root = v.parse().ok()?;
        } else if let Some(v) = part.strip_prefix("nway") {
            opts.nway = v.parse().ok()?;
        } else if let Some(v) = part.strip_prefix("seg") {
            opts.segment_size = Some(v.parse().ok()?);
        } else {
            return None;
        }
    }
    Some((coll, p?, d?, opts))
}

#[test]
fn shared_schedgen_files() {
    let shared = shared_or_skip!();
    let mut n = 0;
    for (dir, paper) in [
        ("reference/loggopsim/goal", false),
        ("reference/paper/goal", true),
    ] {
        for e in std::fs::read_dir(shared.join(dir)).unwrap() {
            let path = e.unwrap().path();
            let name = path.file_name().unwrap().to_str().unwrap().to_string();
            let Some(stem) = name.strip_suffix(".goal") else {
                continue;
            };
            // <kind>_<size>_P<P>
            let (kind, rest) = stem.split_once('_').unwrap();
            let (size, p) = rest.rsplit_once("_P").unwrap();
            let p: u32 = p.parse().unwrap();
            let size = loggops_goal::parse_size(size).unwrap();
            let mut opts = GenOptions::default();
            let coll = match (kind, paper) {
                ("diss", false) => Collective::Dissemination,
                ("ring", false) => Collective::AllreduceRing,
                ("recdoub", false) => Collective::AllreduceRecdoub,
                ("nwaydissemination", true) => {
                    opts.reduce_calc = Some(0);
                    Collective::NwayDissemination
                }
                ("pipelinedring", true) => Collective::PipelinedRing,
                _ => panic!("unexpected reference file {name}"),
            };
            compare(
                &path,
                &Generated::with_options(coll, p, size, opts).unwrap(),
            );
            n += 1;
        }
    }
    assert!(n >= 20, "only {n} Schedgen files found");
}

#[test]
fn locally_generated_schedgen_files() {
    let Some(dir) = std::env::var_os("LOGGOPS_SCHEDGEN_REFS") else {
        eprintln!("skipping: LOGGOPS_SCHEDGEN_REFS (a directory of files from a locally built Schedgen) is not set");
        return;
    };
    let mut n = 0;
    for e in std::fs::read_dir(dir).unwrap() {
        let path = e.unwrap().path();
        let name = path.file_name().unwrap().to_str().unwrap().to_string();
        let Some((coll, p, d, opts)) = from_name(&name) else {
            continue;
        };
        compare(&path, &Generated::with_options(coll, p, d, opts).unwrap());
        n += 1;
    }
    eprintln!("compared {n} locally generated Schedgen files");
    assert!(n > 0);
}
