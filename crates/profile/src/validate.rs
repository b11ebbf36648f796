//! Checks that a profile obeys the rules of the schema. Run by [`crate::read_profile`] after
//! decoding and by [`crate::write_profile`] before encoding, so no file that fails them is ever
//! written or accepted. Messages name the HDF5 object the rule is about.
//!
//! Besides the schema's rules, values must be plausible: a time (latency, o, g, a detour) at
//! most [`MAX_TIME_PS`] (one hour), a time per byte at most [`MAX_PER_BYTE_PS`], a detour
//! rate at most [`MAX_RATE_PER_S`]. A tampered or corrupt file with a tail value of 1e300 ps
//! is refused on load instead of overflowing the simulator's clock in the middle of a run.

use crate::error::Invalid;
use crate::model::{
    AfterIdle, BaseParams, DetourTrace, Distribution, ExactTail, OsNoise, Placement, Profile,
};
use crate::schema::{self, Unit};

/// Largest time a profile may hold, ps (one hour).
pub const MAX_TIME_PS: f64 = 3.6e15;
/// Largest time per byte a profile may hold, ps/byte (1 ms per byte, 8 kbit/s).
pub const MAX_PER_BYTE_PS: f64 = 1e9;
/// Largest bandwidth level (a factor on the per-byte time).
pub const MAX_FACTOR: f64 = 1e3;
/// Largest detour rate, per second (one detour per nanosecond).
pub const MAX_RATE_PER_S: f64 = 1e9;

fn max_of(unit: Unit) -> f64 {
    match unit {
        Unit::Ps => MAX_TIME_PS,
        Unit::PsPerByte => MAX_PER_BYTE_PS,
        Unit::Factor => MAX_FACTOR,
    }
}

/// The days' weights: every day has one or none has; each lies in (0, 1) and together they
/// leave the profile's own day a positive share.
fn weights(profile: &Profile) -> Result<(), Invalid> {
    let weighted = profile.days.iter().filter(|d| d.weight.is_some()).count();
    if weighted == 0 {
        return Ok(());
    }
    let object = |k: usize| schema::attr_object(&schema::day_group(k), schema::ATTR_WEIGHT);
    if let Some(k) = profile.days.iter().position(|d| d.weight.is_none()) {
        return Err(Invalid::new(
            object(k),
            "is missing: either every day has a weight or none has",
        ));
    }
    let mut sum = 0.0;
    for (k, d) in profile.days.iter().enumerate() {
        let w = d.weight.expect("checked");
        if !(w > 0.0 && w < 1.0) {
            return Err(Invalid::new(
                object(k),
                format!("is {w}, expected a share in (0, 1)"),
            ));
        }
        sum += w;
    }
    if sum >= 1.0 - 1e-9 {
        return Err(Invalid::new(
            schema::DAYS,
            format!("the days' weights add up to {sum}, leaving the profile's own day no share"),
        ));
    }
    Ok(())
}

/// Checks every rule of the schema on an in-memory profile. The first broken rule is reported.
pub fn validate(profile: &Profile) -> Result<(), Invalid> {
    if profile.nodes_per_switch == 0 {
        return Err(Invalid::new(
            schema::attr_object("/", schema::ATTR_NODES_PER_SWITCH),
            "is 0, expected at least 1 node per switch",
        ));
    }
    placement("/near", &profile.near)?;
    if let Some(far) = &profile.far {
        placement("/far", far)?;
    }
    os_noise("", &profile.os_noise)?;
    for (k, d) in profile.days.iter().enumerate() {
        let base = schema::day_group(k);
        placement(&format!("{base}/near"), &d.near)?;
        if let Some(far) = &d.far {
            placement(&format!("{base}/far"), far)?;
        }
        os_noise(&base, &d.os_noise)?;
    }
    weights(profile)?;
    if let Some(c) = profile.clock {
        for (name, v) in [
            (schema::ATTR_CLOCK_RESOLUTION, c.resolution_ps),
            (schema::ATTR_CLOCK_READ, c.read_ps),
        ] {
            non_negative_finite(&schema::attr_object("/", name), v, " ps", MAX_TIME_PS)?;
        }
    }
    for (attr, v) in [
        (
            schema::ATTR_ON_DEMAND,
            profile.prices.on_demand_usd_per_node_hour,
        ),
        (
            schema::ATTR_COMMITTED,
            profile.prices.committed_usd_per_node_hour,
        ),
        (schema::ATTR_SPOT, profile.prices.spot.usd_per_node_hour),
    ] {
        if let Some(v) = v {
            non_negative_finite(
                &schema::attr_object(schema::PRICES, attr),
                v,
                " USD",
                f64::MAX,
            )?;
        }
    }
    if let Some(v) = profile.prices.spot.interruptions_per_node_hour {
        non_negative_finite(
            &schema::attr_object(schema::PRICES, schema::ATTR_SPOT_RATE),
            v,
            " per node-hour",
            f64::MAX,
        )?;
    }
    Ok(())
}

/// The OS noise of the day at `base` (empty: the profile's own).
fn os_noise(base: &str, n: &OsNoise) -> Result<(), Invalid> {
    for (k, t) in n.traces.iter().enumerate() {
        trace(&schema::trace_group(base, k), t)?;
    }
    if let Some(p) = &n.process {
        non_negative_finite(
            &schema::attr_object(&format!("{base}{}", schema::PROCESS), schema::ATTR_RATE),
            p.rate_per_s,
            "/s",
            MAX_RATE_PER_S,
        )?;
        distribution(
            &format!("{base}{}", schema::PROCESS_DURATION),
            Unit::Ps,
            &p.duration_ps,
        )?;
    }
    Ok(())
}

fn placement(group: &str, p: &Placement) -> Result<(), Invalid> {
    params(group, &p.params)?;
    let dists = [
        (schema::LATENCY, &p.latency),
        (schema::BANDWIDTH, &p.bandwidth),
        (schema::OVERHEAD, &p.overhead),
        (schema::GAP, &p.gap),
        (schema::BANDWIDTH_LEVELS, &p.bandwidth_levels),
    ];
    for ((name, unit), d) in dists {
        if let Some(d) = d {
            distribution(&format!("{group}/{name}"), unit, d)?;
        }
    }
    if let Some(a) = &p.after_idle {
        after_idle(group, a)?;
    }
    if let Some(t) = &p.latency_by_size {
        let path = format!("{group}/{}", schema::LATENCY_BY_SIZE);
        if t.sizes_bytes.len() != t.extra_ps.len() {
            return Err(Invalid::new(
                format!("{path}/{}", schema::EXTRA_PS),
                format!(
                    "holds {} values for {} sizes in {path}/{}; give one per size",
                    t.extra_ps.len(),
                    t.sizes_bytes.len(),
                    schema::SIZE_BYTES
                ),
            ));
        }
        if t.sizes_bytes.windows(2).any(|w| w[0] >= w[1]) {
            return Err(Invalid::new(
                format!("{path}/{}", schema::SIZE_BYTES),
                "is not strictly increasing",
            ));
        }
        if let Some(v) = t
            .extra_ps
            .iter()
            .find(|v| !(v.is_finite() && **v >= 0.0 && **v <= MAX_TIME_PS))
        {
            return Err(Invalid::new(
                format!("{path}/{}", schema::EXTRA_PS),
                format!("holds {v}; an extra latency is a time in ps, 0 to {MAX_TIME_PS:e}"),
            ));
        }
    }
    if let Some(d) = &p.bandwidth_levels {
        let (name, unit) = schema::BANDWIDTH_LEVELS;
        let (ds, values): (String, Vec<f64>) = match d {
            Distribution::Samples(s) => (schema::samples_name(unit), s.clone()),
            Distribution::Quantiles { values, .. } => (schema::values_name(unit), values.clone()),
        };
        if values.iter().any(|&v| v <= 0.0) {
            return Err(Invalid::new(
                format!("{group}/{name}/{ds}"),
                "holds a level of 0; a level is a factor on the per-byte time, above 0",
            ));
        }
    }
    if p.bandwidth.is_some() && p.bandwidth_block_bytes == 0 {
        return Err(Invalid::new(
            schema::attr_object(group, schema::ATTR_BLOCK),
            format!(
                "is 0 bytes, but {group}/{} holds a per-byte distribution, which needs the message size it was measured at",
                schema::BANDWIDTH.0
            ),
        ));
    }
    Ok(())
}

/// The largest factor on the per-byte time after idle periods.
pub const MAX_PER_BYTE_FACTOR: f64 = 1e6;

fn after_idle(group: &str, a: &AfterIdle) -> Result<(), Invalid> {
    if let Some((threshold_ps, latency)) = a.as_step() {
        let name = format!("{group}/{}", schema::LATENCY_AFTER_IDLE.0);
        non_negative_finite(
            &schema::attr_object(&name, schema::ATTR_IDLE_THRESHOLD),
            threshold_ps,
            " ps",
            MAX_TIME_PS,
        )?;
        return distribution(&name, schema::LATENCY_AFTER_IDLE.1, latency);
    }
    let table = format!("{group}/{}", schema::AFTER_IDLE);
    if a.levels.is_empty() {
        return Err(Invalid::new(
            &table,
            "has no level: expected level_0, level_1, … (or no after_idle group)".to_string(),
        ));
    }
    let mut previous: Option<f64> = None;
    for (k, level) in a.levels.iter().enumerate() {
        let name = format!("{table}/{}{k}", schema::LEVEL_PREFIX);
        non_negative_finite(
            &schema::attr_object(&name, schema::ATTR_FROM),
            level.from_ps,
            " ps",
            MAX_TIME_PS,
        )?;
        if let Some(p) = previous {
            if level.from_ps <= p {
                return Err(Invalid::new(
                    schema::attr_object(&name, schema::ATTR_FROM),
                    format!(
                        "is {} ps, not above the previous level's {p} ps: levels must be in strictly increasing idle time",
                        level.from_ps
                    ),
                ));
            }
        }
        previous = Some(level.from_ps);
        let f = level.per_byte_factor;
        if !(f.is_finite() && f > 0.0 && f <= MAX_PER_BYTE_FACTOR) {
            return Err(Invalid::new(
                schema::attr_object(&name, schema::ATTR_PER_BYTE_FACTOR),
                format!("is {f}, expected a factor above 0 and at most {MAX_PER_BYTE_FACTOR}"),
            ));
        }
        if let Some(d) = &level.latency {
            distribution(&format!("{name}/{}", schema::LATENCY.0), Unit::Ps, d)?;
        }
    }
    Ok(())
}

fn params(group: &str, p: &BaseParams) -> Result<(), Invalid> {
    for (attr, v, unit, max) in [
        (schema::ATTR_L, p.l_ps, " ps", MAX_TIME_PS),
        (schema::ATTR_O, p.o_ps, " ps", MAX_TIME_PS),
        (schema::ATTR_G, p.g_ps, " ps", MAX_TIME_PS),
        (
            schema::ATTR_BIG_G,
            p.big_g_ps_per_byte,
            " ps/byte",
            MAX_PER_BYTE_PS,
        ),
        (
            schema::ATTR_BIG_O,
            p.big_o_ps_per_byte,
            " ps/byte",
            MAX_PER_BYTE_PS,
        ),
    ] {
        non_negative_finite(&schema::attr_object(group, attr), v, unit, max)?;
    }
    Ok(())
}

fn non_negative_finite(object: &str, v: f64, unit: &str, max: f64) -> Result<(), Invalid> {
    if v.is_nan() {
        Err(Invalid::new(
            object,
            "is NaN, expected a finite non-negative number",
        ))
    } else if !v.is_finite() || v < 0.0 {
        Err(Invalid::new(
            object,
            format!("is {v}{unit}, expected a finite non-negative number"),
        ))
    } else if v > max {
        Err(Invalid::new(
            object,
            format!("is {v:e}{unit}, more than the plausible maximum {max:e}{unit}"),
        ))
    } else {
        Ok(())
    }
}

/// Checks a distribution stored under `group` (e.g. `/near/latency`).
pub(crate) fn distribution(group: &str, unit: Unit, d: &Distribution) -> Result<(), Invalid> {
    match d {
        Distribution::Samples(s) => {
            let ds = format!("{group}/{}", schema::samples_name(unit));
            if s.is_empty() {
                return Err(Invalid::new(ds, "is empty, expected at least 1 sample"));
            }
            values_finite_non_negative(&ds, unit, s)
        }
        Distribution::Quantiles {
            probs,
            values,
            tail,
        } => {
            let pds = format!("{group}/{}", schema::PROBS);
            let vds = format!("{group}/{}", schema::values_name(unit));
            if probs.is_empty() {
                return Err(Invalid::new(
                    pds,
                    "is empty, expected at least 2 probabilities (0 and 1)",
                ));
            }
            if values.is_empty() {
                return Err(Invalid::new(
                    vds,
                    "is empty, expected one value per probability",
                ));
            }
            if probs.len() != values.len() {
                return Err(Invalid::new(
                    vds,
                    format!(
                        "has {} entries but {pds} has {}; a quantile table needs one value per probability",
                        values.len(),
                        probs.len()
                    ),
                ));
            }
            if probs.len() < 2 {
                return Err(Invalid::new(
                    pds,
                    "has 1 entry, expected at least 2 probabilities (0 and 1)",
                ));
            }
            for (i, &p) in probs.iter().enumerate() {
                if p.is_nan() {
                    return Err(Invalid::new(
                        &pds,
                        format!("probs[{i}] is NaN, expected a probability in [0, 1]"),
                    ));
                }
                if !(0.0..=1.0).contains(&p) {
                    return Err(Invalid::new(
                        &pds,
                        format!("probs[{i}] is {p}, expected a probability in [0, 1]"),
                    ));
                }
                if i > 0 && p <= probs[i - 1] {
                    return Err(Invalid::new(
                        &pds,
                        format!(
                            "probs[{i}] = {p} does not exceed probs[{}] = {}; probabilities must be strictly increasing",
                            i - 1,
                            probs[i - 1]
                        ),
                    ));
                }
            }
            if probs[0] != 0.0 {
                return Err(Invalid::new(
                    &pds,
                    format!(
                        "starts at {}, expected 0 (the table must keep the minimum)",
                        probs[0]
                    ),
                ));
            }
            let last = probs[probs.len() - 1];
            let Some(tail) = tail else {
                if last != 1.0 {
                    return Err(Invalid::new(
                        &pds,
                        format!(
                            "ends at {last}, expected 1 (the table must keep the maximum, or end where an exact tail `{}` begins)",
                            schema::tail_name(unit)
                        ),
                    ));
                }
                values_finite_non_negative(&vds, unit, values)?;
                return non_decreasing(&vds, unit, values, "quantile values");
            };
            values_finite_non_negative(&vds, unit, values)?;
            non_decreasing(&vds, unit, values, "quantile values")?;
            exact_tail(group, unit, probs, values, tail)
        }
    }
}

/// Checks an exact tail and how the table joins it.
fn exact_tail(
    group: &str,
    unit: Unit,
    probs: &[f64],
    values: &[f64],
    tail: &ExactTail,
) -> Result<(), Invalid> {
    let tname = schema::tail_name(unit);
    let tds = format!("{group}/{tname}");
    let k = tail.values.len();
    let n = tail.sample_count;
    if k == 0 {
        return Err(Invalid::new(
            tds,
            "is empty, expected at least 1 sample (leave the dataset out for a table without an exact tail)",
        ));
    }
    if n <= k as u64 {
        return Err(Invalid::new(
            schema::attr_object(group, schema::ATTR_SAMPLE_COUNT),
            format!(
                "is {n} samples, but {tds} holds {k}; expected more samples than the exact tail holds (the interpolated table covers the rest)"
            ),
        ));
    }
    values_finite_non_negative(&tds, unit, &tail.values)?;
    non_decreasing(&tds, unit, &tail.values, "tail samples")?;
    let pds = format!("{group}/{}", schema::PROBS);
    let last = probs[probs.len() - 1];
    let body = tail.body_mass();
    if (last - body).abs() > tail.body_mass_tolerance() {
        return Err(Invalid::new(
            pds,
            format!(
                "ends at {last}, expected (N - K)/N = ({n} - {k})/{n} = {body}: the table covers the probabilities below the {k} exact tail samples of {n}"
            ),
        ));
    }
    let vname = schema::values_name(unit);
    let top = values[values.len() - 1];
    if tail.values[0] < top {
        return Err(Invalid::new(
            tds,
            format!(
                "{tname}[0] = {} {u} is below the table's last value {vname}[{}] = {top} {u}; the exact tail must continue the table",
                tail.values[0],
                values.len() - 1,
                u = unit.short()
            ),
        ));
    }
    Ok(())
}

fn non_decreasing(ds: &str, unit: Unit, v: &[f64], what: &str) -> Result<(), Invalid> {
    let name = ds.rsplit('/').next().unwrap_or(ds);
    for i in 1..v.len() {
        if v[i] < v[i - 1] {
            return Err(Invalid::new(
                ds,
                format!(
                    "{name}[{i}] = {} {u} is below {name}[{}] = {} {u}; {what} must be non-decreasing",
                    v[i],
                    i - 1,
                    v[i - 1],
                    u = unit.short()
                ),
            ));
        }
    }
    Ok(())
}

fn values_finite_non_negative(ds: &str, unit: Unit, v: &[f64]) -> Result<(), Invalid> {
    let name = ds.rsplit('/').next().unwrap_or(ds);
    for (i, &x) in v.iter().enumerate() {
        if x.is_nan() {
            return Err(Invalid::new(
                ds,
                format!("{name}[{i}] is NaN, expected a finite non-negative number"),
            ));
        }
        if !x.is_finite() || x < 0.0 {
            return Err(Invalid::new(
                ds,
                format!(
                    "{name}[{i}] is {x} {}, expected a finite non-negative number",
                    unit.short()
                ),
            ));
        }
        if x > max_of(unit) {
            return Err(Invalid::new(
                ds,
                format!(
                    "{name}[{i}] is {x:e} {u}, more than the plausible maximum {:e} {u}",
                    max_of(unit),
                    u = unit.short()
                ),
            ));
        }
    }
    Ok(())
}

fn trace(group: &str, t: &DetourTrace) -> Result<(), Invalid> {
    let sds = format!("{group}/{}", schema::START);
    let dds = format!("{group}/{}", schema::DURATION);
    if t.start_ps.len() != t.duration_ps.len() {
        return Err(Invalid::new(
            dds,
            format!(
                "has {} entries but {sds} has {}; every detour needs a start and a duration",
                t.duration_ps.len(),
                t.start_ps.len()
            ),
        ));
    }
    if let Some((i, d)) = t
        .duration_ps
        .iter()
        .enumerate()
        .find(|(_, &d)| d as f64 > MAX_TIME_PS)
    {
        return Err(Invalid::new(
            dds,
            format!(
                "duration_ps[{i}] is {d} ps, more than the plausible maximum {MAX_TIME_PS:e} ps (one hour)"
            ),
        ));
    }
    if t.period_ps == 0 {
        return Err(Invalid::new(
            schema::attr_object(group, schema::ATTR_PERIOD),
            "is 0 ps, expected the length of the measured period",
        ));
    }
    for i in 1..t.start_ps.len() {
        if t.start_ps[i] <= t.start_ps[i - 1] {
            return Err(Invalid::new(
                sds,
                format!(
                    "start_ps[{i}] = {} ps does not exceed start_ps[{}] = {} ps; detour starts must be strictly increasing",
                    t.start_ps[i],
                    i - 1,
                    t.start_ps[i - 1]
                ),
            ));
        }
    }
    if let (Some(&s), Some(&d)) = (t.start_ps.last(), t.duration_ps.last()) {
        let end = s.checked_add(d);
        if end.is_none_or(|e| e > t.period_ps) {
            return Err(Invalid::new(
                schema::attr_object(group, schema::ATTR_PERIOD),
                format!(
                    "is {} ps, but the last detour starts at {s} ps and lasts {d} ps; the period must cover every detour",
                    t.period_ps
                ),
            ));
        }
    }
    Ok(())
}
