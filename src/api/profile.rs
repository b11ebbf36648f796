//! `profile show` as data: the same facts as the text of `crate::profile_show::render`.

use loggops_profile::{BaseParams, Distribution, Placement, Profile};
use serde_json::{json, Map, Value};

use crate::profile_show::{describe_kind, quantile, TraceStats, PROBS};

/// A profile as a JSON object. Times are ps, per-byte costs ps per byte, sizes bytes, prices
/// USD per node-hour; a distribution is `{"kind": "...", "quantiles": {"min": ..., "p1": ...,
/// "p50": ..., "max": ...}}` (as stored: the noise model scales latency and G draws so that
/// their median is L resp. G, unless `--absolute-latency`), absent ones `null`.
///
/// Keys: `path`, `system`, `description`, `size_bytes`, `sha256`, `nodes_per_switch`, `near`
/// and `far` (`null`: same as near), each with `params` (`L_ps`, `o_ps`, `g_ps`,
/// `G_ps_per_byte`, `O_ps_per_byte`, `S_bytes`), the distributions `latency_ps`,
/// `G_ps_per_byte`, `o_ps`, `g_ps` and `bandwidth_block_bytes`; `os_noise` with `traces` (per
/// trace `detours`, `period_ps`, `busy_fraction`, `detours_per_s`, `median_ps`, `max_ps`) and
/// `process` (`rate_per_s` and the distribution `duration_ps`, or `null`); `prices`
/// (`on_demand_usd_per_node_hour`, `committed_usd_per_node_hour`, `null` when unknown);
/// `provenance` (`created`, `tool_version`, `sources`, `command`, `notes`).
pub fn describe(p: &Profile, path: &str, sha256: &str, size: u64) -> Value {
    let os = &p.os_noise;
    json!({
        "path": path,
        "system": p.system,
        "description": p.description,
        "size_bytes": size,
        "sha256": sha256,
        "nodes_per_switch": p.nodes_per_switch,
        "near": placement(&p.near),
        "far": p.far.as_ref().map(placement),
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

fn placement(pl: &Placement) -> Value {
    let d = |x: &Option<Distribution>| x.as_ref().map_or(Value::Null, distribution);
    json!({
        "params": params(&pl.params),
        "latency_ps": d(&pl.latency),
        "G_ps_per_byte": d(&pl.bandwidth),
        "o_ps": d(&pl.overhead),
        "g_ps": d(&pl.gap),
        "bandwidth_block_bytes": pl.bandwidth_block_bytes,
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
