//! Latency episodes as a state of their own (`--latency-episodes state`, the default of the
//! captures calibration).
//!
//! A latency capture whose tail comes in a few Netgauge runs ([`crate::episodes`]) is two
//! states of the network rather than one distribution: a real run of a collective (well under a
//! second) lies inside an episode or outside, never half in each. The profile is made from the
//! other runs; the episodes' runs make a second profile of the same captures otherwise, stored
//! as a day of the first marked as an episode, weighted by their share of the latency samples.
//! A repetition then runs wholly in one state, and simulating the capture's own ping-pong with
//! both states in their weights reproduces the whole capture: that is the closure table the
//! fit report prints, each state's own closure beside it.

use loggops_profile::{Day, Profile};

use super::*;
use crate::closure::{closure_rows, closure_states_model, ClosureInputs, Explicit};

/// The profile of the other runs with the episodes as a weighted state (see the module docs).
pub(super) fn build_states(inp: &CalibrateInputs) -> Result<(Profile, FitReport), CalibError> {
    if inp.calibration != Calibration::Captures {
        return Err(CalibError::InvalidProfile {
            detail: "--latency-episodes state needs --calibration captures (the paper's table \
                     pins every distribution's median to its parameters; use keep or separate)"
                .into(),
        });
    }
    let (mut profile, mut report, quiet) = build_with(inp, Runs::Quiet)?;
    let Some((episode_runs, runs)) = quiet.episode_runs else {
        return Ok((profile, report));
    };
    inp.step("fitting the latency episodes' runs as a state of their own");
    let alone = CalibrateInputs {
        progress: None,
        ..inp.clone()
    };
    let (episodes, ep_report, ep) = match build_with(&alone, Runs::Episodes) {
        Ok(b) => b,
        // Too few samples (or another capture property) to fit the episodes on their own:
        // every run pooled, and the report says why.
        Err(e) => {
            let (profile, mut report, _) = build_with(inp, Runs::All)?;
            report.warnings.push(format!(
                "near latency: the episodes' runs cannot make a state of their own ({e}); \
                 they are pooled with the other runs"
            ));
            return Ok((profile, report));
        }
    };
    let weight = ep.latency_used as f64 / (ep.latency_used + quiet.latency_used) as f64;
    let label = if profile.day.is_empty() {
        "latency episodes".to_string()
    } else {
        format!("{} latency episodes", profile.day)
    };
    profile.days.push(Day {
        weight: Some(weight),
        episode: true,
        ..Day::new(label, episodes.near, episodes.far, Default::default())
    });
    loggops_profile::validate(&profile).map_err(|e| CalibError::InvalidProfile {
        detail: e.to_string(),
    })?;
    // Both states against the whole capture.
    inp.step("simulating the captures' ping-pongs with both latency states");
    let closure = report
        .closure
        .as_mut()
        .expect("the captures calibration has a closure");
    let stripes = closure.rows.get(1).map_or(1, |r| r.stripes);
    let model = closure_states_model(&profile).map_err(|detail| CalibError::InvalidProfile {
        detail: format!("the latency states: {detail}"),
    })?;
    let quiet_rows = std::mem::take(&mut closure.rows);
    closure.rows = closure_rows(
        &model,
        &ClosureInputs {
            latency_ps: &quiet.latency_all_ps,
            latency_size: quiet.latency_size,
            bandwidth_ps: &quiet.bandwidth_ps,
            bandwidth_runs: &[],
            bandwidth_size: quiet.bandwidth_size,
            stripes,
            loggp: None,
            explicit: Explicit::default(),
            table: &inp.table,
        },
    )
    .map_err(|detail| CalibError::InvalidProfile {
        detail: format!("the latency states' closure: {detail}"),
    })?;
    for (pooled, one) in closure.rows.iter_mut().zip(&quiet_rows) {
        pooled.benchmark.clone_from(&one.benchmark);
    }
    report.states = Some(StatesReport {
        episode_runs,
        runs,
        episode_weight: weight,
        quiet_closure: quiet_rows,
        episode_closure: ep_report.closure.map(|c| c.rows).unwrap_or_default(),
        episode_l_us: ep_report.near.params.l_us,
        episode_latency: ep_report.near.latency,
    });
    Ok((profile, report))
}
