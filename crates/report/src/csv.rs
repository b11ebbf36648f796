//! CSV output (RFC 4180): the tidy per-cell table and the per-repetition samples.

use crate::cell::{Cell, CellSamples};
use crate::record::{cell_values, Value, CELL_COLUMNS};
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
    match *v {
        Value::Str(s) => field(s).into_owned(),
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

/// Writes the tidy table: a header row of [`CELL_COLUMNS`], then one row per cell. Times are
/// integer picoseconds (`*_ps`), ratios and USD are plain decimals, absent values are empty.
pub fn write_csv<W: Write + ?Sized>(w: &mut W, cells: &[Cell]) -> io::Result<()> {
    writeln!(w, "{}", CELL_COLUMNS.join(","))?;
    for c in cells {
        let row: Vec<String> = cell_values(c).iter().map(value_text).collect();
        writeln!(w, "{}", row.join(","))?;
    }
    Ok(())
}

/// The tidy table as a string (see [`write_csv`]).
pub fn to_csv_string(cells: &[Cell]) -> String {
    let mut out = Vec::new();
    write_csv(&mut out, cells).expect("writing to a Vec cannot fail");
    String::from_utf8(out).expect("CSV is UTF-8")
}

/// Writes one row per repetition:
/// `workload,system,nodes,noise_mode,rep,time_ps`, where `rep` is the 0-based repetition index and
/// `time_ps` the simulated schedule time. When any cell has a cost model, the columns `run_ps`
/// (`repeats * time + extra`) and `cost_increase_pct` follow, and `on_demand_usd` / `committed_usd`
/// when any cell has that price; fields a cell cannot fill are empty.
pub fn write_samples_csv<W: Write + ?Sized>(
    w: &mut W,
    groups: &[CellSamples<'_>],
) -> io::Result<()> {
    let costs = groups.iter().any(|g| g.cell.cost.is_some());
    let model = |g: &CellSamples<'_>| g.cell.cost.as_ref().map(|c| c.model.clone());
    let on_demand = groups
        .iter()
        .any(|g| model(g).is_some_and(|m| m.on_demand_usd_per_node_hour.is_some()));
    let committed = groups
        .iter()
        .any(|g| model(g).is_some_and(|m| m.committed_usd_per_node_hour.is_some()));
    let mut header = String::from("workload,system,nodes,noise_mode,rep,time_ps");
    if costs {
        header.push_str(",run_ps");
    }
    if on_demand {
        header.push_str(",on_demand_usd");
    }
    if committed {
        header.push_str(",committed_usd");
    }
    if costs {
        header.push_str(",cost_increase_pct");
    }
    writeln!(w, "{header}")?;
    for g in groups {
        let l = &g.cell.labels;
        let prefix = format!(
            "{},{},{},{}",
            field(&l.workload),
            field(&l.system),
            l.nodes,
            field(&l.noise_mode)
        );
        let m = model(g);
        for (rep, &t) in g.samples.iter().enumerate() {
            write!(w, "{prefix},{rep},{t}")?;
            let sc = m.as_ref().map(|m| m.sample(t, g.cell.noiseless_ps));
            if costs {
                match sc {
                    Some(sc) => write!(w, ",{}", sc.run_ps)?,
                    None => write!(w, ",")?,
                }
            }
            if on_demand {
                write!(w, ",{}", opt_f64(sc.and_then(|s| s.on_demand_usd)))?;
            }
            if committed {
                write!(w, ",{}", opt_f64(sc.and_then(|s| s.committed_usd)))?;
            }
            if costs {
                write!(w, ",{}", opt_f64(sc.and_then(|s| s.increase_pct)))?;
            }
            writeln!(w)?;
        }
    }
    Ok(())
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
