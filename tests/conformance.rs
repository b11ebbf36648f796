//! Compat mode against LogGOPSim's recorded answers (`../shared/reference/loggopsim/`).
//! Every reference case must give LogGOPSim's stdout exactly (minus the PERFORMANCE line).
use std::path::Path;

use crate::shared_or_skip;
use crate::util::{run, stderr, stdout, strip_performance};

const AWS_PS: &[&str] = &[
    "-L", "16790000", "-o", "1500000", "-g", "1000000", "-G", "100", "-O", "0",
];

fn check(goal: &Path, order: &str, params: &[&str], expected_file: &Path) -> Result<(), String> {
    let mut args = vec![
        "--compat",
        "loggopsim",
        "--order",
        order,
        "--goal",
        goal.to_str().unwrap(),
    ];
    args.extend_from_slice(params);
    let out = run(&args);
    let expected = strip_performance(&std::fs::read_to_string(expected_file).unwrap());
    let got = stdout(&out);
    if got != expected || !out.status.success() {
        return Err(format!(
            "{} {order} {params:?}\n--- expected ({})\n{}--- got (status {:?})\n{}{}",
            goal.display(),
            expected_file.display(),
            expected,
            out.status.code(),
            got,
            stderr(&out)
        ));
    }
    Ok(())
}

fn report(failures: Vec<String>, total: usize) {
    if !failures.is_empty() {
        let shown: Vec<&String> = failures.iter().take(5).collect();
        panic!(
            "{} of {total} cases differ from LogGOPSim:\n{}",
            failures.len(),
            shown
                .iter()
                .map(|s| s.as_str())
                .collect::<Vec<_>>()
                .join("\n")
        );
    }
}

#[test]
fn reference_cases_text_and_binary() {
    let shared = shared_or_skip!();
    let base = shared.join("reference/loggopsim");
    let tsv = std::fs::read_to_string(base.join("results.tsv")).unwrap();
    let mut failures = Vec::new();
    let mut total = 0;
    for line in tsv.lines().skip(1) {
        let f: Vec<&str> = line.split('\t').collect();
        let (case, paramset, binary, cmd) = (f[0], f[4], f[5], f[9]);
        let order = if binary == "LogGOPSim" {
            "libstdcxx"
        } else {
            "stable"
        };
        // The flags after the file name in the recorded command.
        let params: Vec<&str> = cmd.split_whitespace().skip(3).collect();
        let expected = base.join(format!("out/{case}.{paramset}.{binary}.out"));
        for ext in ["bin", "goal"] {
            total += 1;
            if let Err(e) = check(
                &base.join(format!("goal/{case}.{ext}")),
                order,
                &params,
                &expected,
            ) {
                failures.push(e);
            }
        }
    }
    assert!(total >= 200, "results.tsv lists {total} runs");
    report(failures, total);
}

#[test]
fn random_programs_both_orders_both_parameter_sets() {
    let shared = shared_or_skip!();
    let dir = shared.join("reference/loggopsim/random");
    let mut goals: Vec<_> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "goal"))
        .collect();
    goals.sort();
    assert_eq!(goals.len(), 300);
    let mut failures = Vec::new();
    let mut total = 0;
    for g in &goals {
        let stem = g.file_stem().unwrap().to_str().unwrap();
        for (set, params) in [("default", &[][..]), ("aws_ps", AWS_PS)] {
            for (variant, order) in [("upstream", "libstdcxx"), ("stable", "stable")] {
                total += 1;
                let expected = dir.join(format!("{stem}.{set}.{variant}.out"));
                if let Err(e) = check(g, order, params, &expected) {
                    failures.push(e);
                }
            }
        }
    }
    report(failures, total);
}

#[test]
fn micro_cases() {
    let shared = shared_or_skip!();
    let dir = shared.join("reference/loggopsim/micro");
    for m in [
        "m1_eager",
        "m2_rndv",
        "m3_late_recv",
        "m4_late_recv_rndv",
        "m5_two_sends",
        "m6_irequires",
    ] {
        for ext in ["goal", "bin"] {
            let goal = dir.join(format!("{m}.{ext}"));
            check(&goal, "libstdcxx", &[], &dir.join(format!("{m}.out"))).unwrap();
        }
    }
}

#[test]
fn parser_edge_cases_that_upstream_simulated() {
    let shared = shared_or_skip!();
    let dir = shared.join("reference/loggopsim/txt2bin_edge");
    let mut n = 0;
    for e in std::fs::read_dir(&dir).unwrap() {
        let p = e.unwrap().path();
        let name = p.file_name().unwrap().to_str().unwrap().to_string();
        let Some(stem) = name.strip_suffix(".sim.out") else {
            continue;
        };
        let text = std::fs::read_to_string(&p).unwrap();
        // emptyall: upstream segfaults (no executable op), there is no output to compare.
        if !text.contains("LogGP network backend") {
            continue;
        }
        let expected: String = text
            .lines()
            .filter(|l| !l.starts_with("rc="))
            .map(|l| format!("{l}\n"))
            .collect();
        let tmp = std::env::temp_dir().join(format!("loggops-edge-{stem}.out"));
        std::fs::write(&tmp, expected).unwrap();
        check(&dir.join(format!("{stem}.goal")), "libstdcxx", &[], &tmp).unwrap();
        n += 1;
    }
    assert!(n >= 10, "only {n} simulated edge cases found");
}

#[test]
fn schedgen2_ring_matches_closed_form() {
    let shared = shared_or_skip!();
    let dir = shared.join("reference/loggopsim/schedgen2");
    for (p, want) in [(4, 151027908u64), (16, 188908500), (64, 198873108)] {
        let goal = dir.join(format!("sg2_ring_16MiB_P{p}.bin"));
        let out = run(&[
            "--compat",
            "loggopsim",
            "-b",
            "--goal",
            goal.to_str().unwrap(),
        ]);
        let s = stdout(&out);
        assert!(s.contains(&format!(": {want} (")), "P={p}: {s}");
    }
}
