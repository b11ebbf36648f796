//! Rules checked on in-memory profiles (the same rules `read_profile` applies to files).

mod common;

use common::*;
use loggops_profile::*;

#[test]
fn valid_profiles_pass() {
    assert_eq!(validate(&full_profile()), Ok(()));
    assert_eq!(validate(&minimal_profile()), Ok(()));
    assert_eq!(validate(&big_profile()), Ok(()));
    assert_eq!(validate(&tail_profile()), Ok(()));
    // A table ending at 1 - K/N (rounded twice) is accepted as well as (N - K)/N.
    let mut p = tail_profile();
    let Some(Distribution::Quantiles { probs, tail, .. }) = &mut p.near.latency else {
        unreachable!()
    };
    tail.as_mut().unwrap().sample_count = 124_173;
    *probs.last_mut().unwrap() = 1.0 - 3.0 / 124_173.0;
    assert_ne!(*probs.last().unwrap(), (124_173.0 - 3.0) / 124_173.0);
    assert_eq!(validate(&p), Ok(()));
}

#[test]
fn broken_rules() {
    let mut cases: Vec<(&str, Profile)> = Vec::new();
    let mut p = full_profile();
    p.os_noise.traces[0].duration_ps.pop();
    cases.push(("trace lengths differ", p));
    let mut p = full_profile();
    p.os_noise.traces[1].period_ps = 0;
    cases.push(("zero period", p));
    let mut p = full_profile();
    p.os_noise.traces[2].duration_ps[0] = 11;
    cases.push(("last detour overflows u64", p));
    let mut p = full_profile();
    p.near.bandwidth_block_bytes = 0;
    cases.push(("bandwidth without block size", p));
    let mut p = full_profile();
    p.far.as_mut().unwrap().latency = Some(Distribution::Quantiles {
        probs: vec![0.0],
        values: vec![5.0],
        tail: None,
    });
    cases.push(("one-point table", p));
    let mut p = full_profile();
    p.os_noise.process.as_mut().unwrap().duration_ps = Distribution::Samples(vec![]);
    cases.push(("empty process durations", p));
    let mut p = full_profile();
    p.near.params.big_g_ps_per_byte = f64::INFINITY;
    cases.push(("infinite G", p));
    let mut p = full_profile();
    p.prices.on_demand_usd_per_node_hour = Some(f64::NAN);
    cases.push(("NaN price", p));
    let mut p = minimal_profile();
    p.nodes_per_switch = 0;
    cases.push(("no nodes per switch", p));
    let mut p = tail_profile();
    if let Some(Distribution::Quantiles { tail: Some(t), .. }) = &mut p.near.latency {
        t.values.clear();
    }
    cases.push(("empty exact tail", p));
    let mut p = tail_profile();
    if let Some(Distribution::Quantiles { tail: Some(t), .. }) = &mut p.near.latency {
        t.sample_count = 2;
    }
    cases.push(("sample count below the tail", p));
    let mut p = tail_profile();
    if let Some(Distribution::Quantiles { probs, .. }) = &mut p.near.latency {
        *probs.last_mut().unwrap() = 0.997 + 1e-8;
    }
    cases.push(("table end off by 1e-8 (tolerance 1e-6/N = 1e-9)", p));
    let mut p = tail_profile();
    if let Distribution::Quantiles { tail: Some(t), .. } =
        &mut p.os_noise.process.as_mut().unwrap().duration_ps
    {
        t.values[0] = 1.0;
    }
    cases.push(("process tail below its table", p));
    let mut p = tail_profile();
    if let Some(Distribution::Quantiles { tail: Some(t), .. }) = &mut p.near.latency {
        t.values[1] = f64::INFINITY;
    }
    cases.push(("infinite tail sample", p));
    let report: String = cases
        .iter()
        .map(|(name, p)| format!("{name}:\n  {}\n", validate(p).unwrap_err()))
        .collect();
    insta::assert_snapshot!(report);
}
