//! One noisy repetition on 1 and 2 threads (parallel windows), timed in one run.
//!
//! `cargo bench --bench threads [-- NODES ROUNDS THREADS...]` (defaults: 16384 ranks of
//! `goal/ring_512MiB.goal` under `calibration/aws.h5`, os+net, queued model, seed 42,
//! repetition 0; 2 rounds; threads 1 and 2). The runs alternate thread counts round by round
//! so that a change in the machine's load touches every count alike. Each line gives the wall
//! time, the process's CPU time over the same span (from `/proc/self/stat`) and the answer,
//! which must be the same for every thread count. The ratio to one thread is printed last.
//! Nothing here runs in CI (clippy compiles it).

use std::time::Instant;

use loggops_engine::WindowOdds;

#[allow(dead_code)] // the cases' other helpers serve the other benches
mod cases;

/// The process's user + system CPU time in seconds, or `None` off Linux.
fn cpu_seconds() -> Option<f64> {
    let stat = std::fs::read_to_string("/proc/self/stat").ok()?;
    // Fields after the command name (which is in parentheses and may hold spaces).
    let rest = &stat[stat.rfind(')')? + 2..];
    let f: Vec<&str> = rest.split_whitespace().collect();
    let ticks: f64 = f.get(11)?.parse::<f64>().ok()? + f.get(12)?.parse::<f64>().ok()?;
    // USER_HZ is 100 on every Linux this runs on.
    Some(ticks / 100.0)
}

fn main() {
    let args: Vec<String> = std::env::args()
        .skip(1)
        .filter(|a| !a.starts_with("--"))
        .collect();
    let nodes: u32 = args.first().map_or(16384, |s| s.parse().expect("NODES"));
    let rounds: usize = args.get(1).map_or(2, |s| s.parse().expect("ROUNDS"));
    let threads: Vec<usize> = if args.len() > 2 {
        args[2..]
            .iter()
            .map(|s| s.parse().expect("THREADS"))
            .collect()
    } else {
        vec![1, 2]
    };

    // The AWS profile, os+net, queued model: the benches' own case setup.
    let cases::Prepared::Sim {
        prog,
        cfg,
        noise: Some(model),
    } = cases::aws(cases::goal("ring_512MiB.goal", nodes))
    else {
        unreachable!("a noisy simulation case")
    };
    let odds = WindowOdds::default();

    println!(
        "one noisy repetition: ring_512MiB, {nodes} ranks, aws os+net, queued, seed 42, rep 0"
    );
    let mut walls = vec![0.0f64; threads.len()];
    let mut answer = None;
    for round in 0..rounds {
        for (i, &t) in threads.iter().enumerate() {
            let mut noise = model.instance(42, 0, nodes);
            let (c0, w0) = (cpu_seconds(), Instant::now());
            let out = odds
                .simulate_on(&prog, &cfg, &mut noise, t)
                .expect("the repetition runs");
            let wall = w0.elapsed().as_secs_f64();
            let cpu = cpu_seconds().zip(c0).map(|(b, a)| b - a);
            let max = out.max().0;
            assert_eq!(
                *answer.get_or_insert(max),
                max,
                "the answer depends on threads"
            );
            walls[i] += wall;
            println!(
                "round {round} threads {t}: wall {wall:.2} s, CPU {}, answer {max} ps",
                cpu.map_or("unknown".into(), |c| format!("{c:.2} s"))
            );
        }
    }
    for (i, &t) in threads.iter().enumerate() {
        println!(
            "threads {t}: total wall {:.2} s, {:.3}x the first count's",
            walls[i],
            walls[i] / walls[0]
        );
    }
}
