//! Generated collectives against the GOAL files Schedgen wrote.
//!
//! * `shared_files_match_op_for_op`: every Schedgen file in the shared reference material
//!   (upstream Schedgen: `reference/loggopsim/goal/`; the paper's Schedgen:
//!   `reference/paper/goal/`) equals the lazy generator with the same parameters, through the
//!   `Program` trait, and `write_schedgen` reproduces its text byte for byte.
//! * `local_schedgen_files_match`: the same for a directory of files made with a locally built
//!   Schedgen (`LOGGOPS_SCHEDGEN_REFS=dir`, names `<ptrn>__P<P>__D<D>[__root<R>][__nway<N>]
//!   [__seg<S>][__calc<C>][__chain1].goal`, `chain1` for the cloud_noise fork's
//!   binomialtreebcast); skipped when the variable is unset.

mod common;

use std::path::Path;

use loggops_schedgen::check::{first_difference, validate};
use loggops_schedgen::schedgen_text::write_schedgen;
use loggops_schedgen::{Collective, GenOptions, Generated};

fn check_file(path: &Path, g: &Generated) {
    let text = std::fs::read_to_string(path).unwrap();
    let mut out = Vec::new();
    write_schedgen(g, &mut out).unwrap();
    assert!(
        out == text.as_bytes(),
        "{}: write_schedgen text differs from Schedgen's",
        path.display()
    );
    let explicit = common::parse_schedgen_text(&text);
    if let Some(d) = first_difference(g, &explicit) {
        panic!("{}: generated vs file: {d}", path.display());
    }
    // The GOAL crate's parser reads the same program, in Schedgen's ticks (the generator's
    // `calc <datasize>` is D engine units).
    let ticks = loggops_goal::ParseOptions::ticks_as_is();
    let parsed = loggops_goal::parse_file_with(path, &ticks).unwrap().program;
    if let Some(d) = first_difference(g, &parsed) {
        panic!(
            "{}: generated vs loggops_goal::parse_file: {d}",
            path.display()
        );
    }
    // The GOAL writer places each `requires` line after the later of its two ops, as Schedgen
    // does everywhere except in nwaydissemination's reduction chain (whose lines Schedgen
    // writes after the chain's last calc) and in binarytreebcast (whose lines come after both
    // sends); there the text differs but the program is equal.
    let mut written = Vec::new();
    loggops_goal::write_goal_with(g, &mut written, 1).unwrap();
    let requires_moved = match g.pattern() {
        Collective::NwayDissemination => g.rounds() > 1,
        Collective::BinaryTreeBcast => g.p() > 4,
        // The fork writes the chain's line before the receive's.
        Collective::BinomialTreeBcast => g.chain_sends(),
        _ => false,
    };
    if !requires_moved {
        assert!(
            written == text.as_bytes(),
            "{}: write_goal text differs from Schedgen's",
            path.display()
        );
    } else {
        let reread =
            loggops_goal::parse_str_with("written", std::str::from_utf8(&written).unwrap(), &ticks)
                .unwrap()
                .program;
        assert_eq!(first_difference(g, &reread), None, "{}", path.display());
    }
    validate(g).unwrap();
}

fn size_of(tok: &str) -> u64 {
    loggops_schedgen::units::parse_size(tok).unwrap()
}

#[test]
fn shared_files_match_op_for_op() {
    let Some(shared) = common::shared_dir() else {
        eprintln!("skipping: ../shared (reference material) is absent");
        return;
    };
    let mut checked = 0;
    for sub in ["reference/loggopsim/goal", "reference/paper/goal"] {
        let mut entries: Vec<_> = std::fs::read_dir(shared.join(sub))
            .unwrap()
            .map(|e| e.unwrap().path())
            .collect();
        entries.sort();
        for path in entries
            .into_iter()
            .filter(|p| p.extension().is_some_and(|e| e == "goal"))
        {
            let stem = path.file_stem().unwrap().to_str().unwrap().to_string();
            // <name>_<size>_P<p>
            let parts: Vec<&str> = stem.rsplitn(3, '_').collect();
            let p: u32 = parts[0].trim_start_matches('P').parse().unwrap();
            let d = size_of(parts[1]);
            let (pattern, opts) = match parts[2] {
                "diss" => (Collective::Dissemination, GenOptions::default()),
                "ring" => (Collective::AllreduceRing, GenOptions::default()),
                "recdoub" => (Collective::AllreduceRecdoub, GenOptions::default()),
                // The paper's driver zeroes the reduction calcs (`*_nocompute`).
                "nwaydissemination" => (
                    Collective::NwayDissemination,
                    GenOptions {
                        reduce_calc: Some(0),
                        ..GenOptions::default()
                    },
                ),
                // ... and passes --segmentsize D/P (the default here).
                "pipelinedring" => (Collective::PipelinedRing, GenOptions::default()),
                other => panic!("unexpected reference file {other}"),
            };
            let g = Generated::with_options(pattern, p, d, opts).unwrap();
            check_file(&path, &g);
            checked += 1;
        }
    }
    assert_eq!(checked, 20);
}

#[test]
fn local_schedgen_files_match() {
    let Some(dir) = std::env::var_os("LOGGOPS_SCHEDGEN_REFS") else {
        eprintln!("skipping: LOGGOPS_SCHEDGEN_REFS (a directory of locally generated Schedgen files) is not set");
        return;
    };
    let mut entries: Vec<_> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    entries.sort();
    let mut checked = 0;
    for path in entries
        .into_iter()
        .filter(|p| p.extension().is_some_and(|e| e == "goal"))
    {
        let stem = path.file_stem().unwrap().to_str().unwrap().to_string();
        let mut parts = stem.split("__");
        let pattern: Collective = parts.next().unwrap().parse().unwrap();
        let mut p = 0;
        let mut d = 0;
        let mut opts = GenOptions::default();
        for part in parts {
            let (key, val) = part.split_at(part.find(|c: char| c.is_ascii_digit()).unwrap());
            let val: u64 = val.parse().unwrap();
            match key {
                "P" => p = val as u32,
                "D" => d = val,
                "root" => opts.root = val as u32,
                "nway" => opts.nway = val as u32,
                "seg" => opts.segment_size = Some(val),
                "calc" => opts.reduce_calc = Some(val),
                "chain" => opts.chain_sends = val != 0,
                other => panic!("{}: unknown key {other}", path.display()),
            }
        }
        let g = Generated::with_options(pattern, p, d, opts).unwrap();
        check_file(&path, &g);
        checked += 1;
    }
    eprintln!("checked {checked} locally generated Schedgen files");
    assert!(checked > 0);
}
