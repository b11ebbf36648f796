//! CSV output (RFC 4180): the tidy per-cell table and the per-repetition samples.

use crate::model::RunResult;
use crate::record::{cell_values, run_values, Value, CELL_COLUMNS, RUN_COLUMNS};
use std::io::{self, Write};

/// A text field as CSV writes it (see [`field`]).
pub(crate) fn field_text(s: &str) -> String {
    field(s).into_owned()
}

/// Quotes a field if it contains a comma, quote, CR or LF (quotes doubled).
fn field(s: &str) -> std::borrow::Cow<'_, str> {
    if s.contains([',', '"', '\n', '\r']) {
        format!("\"{}\"", s.replace('"', "\"\"")).into()
    } else {
        s.into()
    }
}

fn value_text(v: &Value<'_>) -> String {
    match v {
        Value::Str(s) => field(s).into_owned(),
        Value::Owned(s) => field(s).into_owned(),
        Value::Bool(b) => b.to_string(),
        Value::U64(x) => x.to_string(),
        Value::I64(x) => x.to_string(),
        Value::F64(x) if x.is_finite() => x.to_string(),
        Value::F64(_) | Value::Null => String::new(),
    }
}

fn opt_f64(v: Option<f64>) -> String {
    v.filter(|x| x.is_finite())
        .map(|x| x.to_string())
        .unwrap_or_default()
}

/// Writes the tidy table of a run: a header row of [`CELL_COLUMNS`] then [`RUN_COLUMNS`] (then,
/// when the run has a spot section, [`crate::spot::SPOT_COLUMNS`]), and one row per cell. Times are integer picoseconds (`*_ps`), ratios and USD plain decimals,
/// absent values empty; the same columns whether the run was noisy or noiseless.
pub fn write_run_csv<W: Write + ?Sized>(w: &mut W, run: &RunResult) -> io::Result<()> {
    let stats = run.cells_summarised().map_err(io::Error::other)?;
    let facts = crate::verdict::facts(run, &stats);
    let spot = run.spot.is_some();
    let mut header = format!("{},{}", CELL_COLUMNS.join(","), RUN_COLUMNS.join(","));
    if spot {
        header = format!("{header},{}", crate::spot::SPOT_COLUMNS.join(","));
    }
    writeln!(w, "{header}")?;
    for ((c, cell), f) in run.cells.iter().zip(&stats).zip(&facts) {
        let mut row: Vec<String> = cell_values(cell, f)
            .iter()
            .chain(run_values(run, c).iter())
            .map(value_text)
            .collect();
        if spot {
            row.extend(
                crate::spot::csv_values(run, c)
                    .iter()
                    .map(|v| field_text(v)),
            );
        }
        writeln!(w, "{}", row.join(","))?;
    }
    Ok(())
}

/// The tidy table as a string (see [`write_run_csv`]).
pub fn run_to_csv_string(run: &RunResult) -> String {
    let mut out = Vec::new();
    write_run_csv(&mut out, run).expect("writing to a Vec cannot fail");
    String::from_utf8(out).expect("CSV is UTF-8")
}

/// Columns of the samples CSV ([`write_run_samples_csv`]), always all of them.
pub const SAMPLE_COLUMNS: [&str; 12] = [
    "workload",
    "system",
    "nodes",
    "noise_mode",
    "rep",
    "time_ps",
    "noiseless_ps",
    "run_ps",
    "on_demand_usd",
    "committed_usd",
    "cost_increase_pct",
    "partial",
];

/// Writes one row per repetition, the columns [`SAMPLE_COLUMNS`]: the cell's labels, `rep` (the
/// 0-based repetition index), `time_ps` (the simulated schedule time), `noiseless_ps` (the
/// cell's noiseless time), `run_ps` (the time of one application iteration,
/// `repeats * time + extra`; the time itself unless a cost model adds compute), the USD of that
/// run at the on-demand and committed prices (empty when the system has no such price),
/// `cost_increase_pct` (over the noiseless run) and `partial` (`true` when the run was
/// interrupted before this cell finished).
pub fn write_run_samples_csv<W: Write + ?Sized>(w: &mut W, run: &RunResult) -> io::Result<()> {
    writeln!(w, "{}", SAMPLE_COLUMNS.join(","))?;
    for c in &run.cells {
        let prefix = format!(
            "{},{},{},{}",
            field(&c.workload),
            field(&c.system),
            c.nodes,
            field(&c.noise_mode)
        );
        let model = run.cost_model(c);
        let base = c.noiseless_ps.map(|b| b.to_string()).unwrap_or_default();
        for (&rep, &t) in c.reps.iter().zip(&c.samples_ps) {
            let sc = model.sample(t, c.noiseless_ps);
            writeln!(
                w,
                "{prefix},{rep},{t},{base},{},{},{},{},{}",
                sc.run_ps,
                opt_f64(sc.on_demand_usd),
                opt_f64(sc.committed_usd),
                opt_f64(sc.increase_pct),
                !c.complete
            )?;
        }
    }
    Ok(())
}

/// The samples CSV as a string (see [`write_run_samples_csv`]).
pub fn run_samples_to_csv_string(run: &RunResult) -> String {
    let mut out = Vec::new();
    write_run_samples_csv(&mut out, run).expect("writing to a Vec cannot fail");
    String::from_utf8(out).expect("CSV is UTF-8")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn quoting() {
        assert_eq!(field("plain"), "plain");
        assert_eq!(field("a,b"), "\"a,b\"");
        assert_eq!(field("say \"hi\""), "\"say \"\"hi\"\"\"");
    }
}
