//! `profile show` as data: the same facts as the text of `crate::profile_show::render`.

use loggops_profile::{BaseParams, Distribution, Placement, Profile};
use serde_json::{json, Map, Value};

use crate::profile_show::{describe_kind, quantile, TraceStats, PROBS};

/// A profile as a JSON object. Times are ps, per-byte costs ps per byte, sizes bytes, prices
/// USD per node-hour; a distribution is `{"kind": "...", "quantiles": {"min": ..., "p1": ...,
/// "p50": ..., "max": ...}}` (as stored: the noise model scales latency and G draws so that
/// their median is L resp. G, unless `--absolute-latency`), absent ones `null`.
///
/// Keys: `schema` (`"loggops-sim/profile-show/1"`), `path`, `system`, `description`,
/// `size_bytes`, `sha256`, `calibration` (`"captures"` or `"paper-table"`), `day`, `days` (the
/// labels of further days or states, `profile combine`), `state_weights` (the share of
/// repetitions of the profile's own day, then of each further one), `episodes` (the labels of
/// the states that are latency episodes), `mpi_progress` (`"async"`, `"polled"` or `null`:
/// not recorded), `clock` (`resolution_ps` and `read_ps` of the clock benchmarks time themselves
/// with, or `null`: not recorded), `nodes_per_switch`, `near` and `far` (`null`: same as near), each with
/// `params` (`L_ps`, `o_ps`, `g_ps`, `G_ps_per_byte`, `O_ps_per_byte`, `S_bytes`), the
/// distributions `latency_ps`, `G_ps_per_byte`, `o_ps`, `g_ps` (in `far`, each also says
/// `same_as_near`), `after_idle` (the idle table: per level `from_ps`, the distribution
/// `latency_ps` (`null`: the level below's) and `per_byte_factor`; `null`: no table) and
/// `bandwidth_block_bytes` and `bandwidth_levels` (the distribution of the factors one of
/// which each repetition draws, `null`: none) and `latency_by_size` (`size_bytes` and
/// `extra_ps`, the extra one-way latency by message size; `null`: none); `os_noise` with `traces` (per
/// trace `detours`, `period_ps`, `busy_fraction`, `detours_per_s`, `median_ps`, `max_ps`,
/// `captured_detours`: the capture's detours when the trace keeps only its first ones, else
/// `null`) and `process` (`rate_per_s` and the distribution `duration_ps`, or `null`); `prices`
/// (`on_demand_usd_per_node_hour`, `committed_usd_per_node_hour`, `null` when unknown, and
/// `spot`: `null` when none is recorded, else `usd_per_node_hour`,
/// `interruptions_per_node_hour`, `mtbi_node_hours` (its inverse), `source`, `date`);
/// `provenance` (`created`, `tool_version`, `sources`, `command`, `notes`).
pub fn describe(p: &Profile, path: &str, sha256: &str, size: u64) -> Value {
    let os = &p.os_noise;
    json!({
        "schema": "loggops-sim/profile-show/1",
        "path": path,
        "system": p.system,
        "description": p.description,
        "size_bytes": size,
        "sha256": sha256,
        "calibration": p.calibration.as_str(),
        "day": p.day,
        "days": p.days.iter().map(|d| d.label.as_str()).collect::<Vec<_>>(),
        "state_weights": p.state_weights(),
        "episodes": p.days.iter().filter(|d| d.episode).map(|d| d.label.as_str()).collect::<Vec<_>>(),
        "mpi_progress": p.mpi_progress.map(|m| m.name()),
        "clock": p.clock.map(|c| serde_json::json!({
            "resolution_ps": c.resolution_ps,
            "read_ps": c.read_ps,
        })),
        "nodes_per_switch": p.nodes_per_switch,
        "near": placement(&p.near, None),
        "far": p.far.as_ref().map(|f| placement(f, Some(&p.near))),
        "os_noise": {
            "traces": os.traces.iter().map(|t| {
                let s = TraceStats::of(t);
                json!({
                    "detours": s.detours,
                    "period_ps": s.period_ps,
                    "busy_fraction": s.busy_fraction,
                    "detours_per_s": s.per_second,
                    "median_ps": s.median_ps,
                    "max_ps": s.max_ps,
                    "captured_detours": crate::profile_show::captured_detours(os, t),
                })
            }).collect::<Vec<_>>(),
            "process": os.process.as_ref().map(|pr| json!({
                "rate_per_s": pr.rate_per_s,
                "duration_ps": distribution(&pr.duration_ps),
            })),
        },
        "prices": {
            "on_demand_usd_per_node_hour": p.prices.on_demand_usd_per_node_hour,
            "committed_usd_per_node_hour": p.prices.committed_usd_per_node_hour,
            "spot": crate::spot::profile_json(&p.prices.spot),
        },
        "provenance": {
            "created": p.provenance.created,
            "tool_version": p.provenance.tool_version,
            "sources": p.provenance.sources,
            "command": p.provenance.command,
            "notes": p.provenance.notes,
        },
    })
}

fn params(b: &BaseParams) -> Value {
    json!({
        "L_ps": b.l_ps,
        "o_ps": b.o_ps,
        "g_ps": b.g_ps,
        "G_ps_per_byte": b.big_g_ps_per_byte,
        "O_ps_per_byte": b.big_o_ps_per_byte,
        "S_bytes": b.s_bytes,
    })
}

/// A placement; with `near`, a far placement whose distributions say whether they are near's.
fn placement(pl: &Placement, near: Option<&Placement>) -> Value {
    let d = |x: &Option<Distribution>, of_near: Option<&Option<Distribution>>| {
        let Some(dist) = x else {
            return Value::Null;
        };
        let mut v = distribution(dist);
        if let Some(n) = of_near {
            v["same_as_near"] = json!(n == x);
        }
        v
    };
    json!({
        "params": params(&pl.params),
        "latency_ps": d(&pl.latency, near.map(|n| &n.latency)),
        "G_ps_per_byte": d(&pl.bandwidth, near.map(|n| &n.bandwidth)),
        "o_ps": d(&pl.overhead, near.map(|n| &n.overhead)),
        "g_ps": d(&pl.gap, near.map(|n| &n.gap)),
        "after_idle": pl.after_idle.as_ref().map(|a| a.levels.iter().map(|l| json!({
            "from_ps": l.from_ps,
            "latency_ps": l.latency.as_ref().map(distribution),
            "per_byte_factor": l.per_byte_factor,
        })).collect::<Vec<_>>()),
        "bandwidth_block_bytes": pl.bandwidth_block_bytes,
        "bandwidth_levels": d(&pl.bandwidth_levels, near.map(|n| &n.bandwidth_levels)),
        "latency_by_size": pl.latency_by_size.as_ref().map(|t| json!({
            "size_bytes": t.sizes_bytes,
            "extra_ps": t.extra_ps,
        })),
    })
}

/// The quantiles `profile show` prints, by their names there.
fn distribution(d: &Distribution) -> Value {
    let q: Map<String, Value> = PROBS
        .iter()
        .map(|&(p, name)| (name.to_string(), json!(quantile(d, p))))
        .collect();
    json!({ "kind": describe_kind(d), "quantiles": q })
}
