//! The CSV tables `calibrate` reads base parameters and prices from (the format of the paper's
//! `loggp_params.csv` and its price table).

use std::path::Path;

use loggops_profile::{BaseParams, Prices};

use crate::error::CalibError;
use crate::input::lines_of;
use crate::units::excerpt;

use super::*;

/// One data row of a CSV file: 1-based line number and fields.
pub(super) struct CsvRow {
    pub(super) line: u64,
    pub(super) fields: Vec<String>,
}

/// Reads a small CSV file (plain or xz): header fields and data rows. Fields may be quoted with
/// `"` (doubled inside quotes); blank lines are skipped.
pub(super) fn read_csv(path: &Path) -> Result<(Vec<String>, Vec<CsvRow>), CalibError> {
    let name = path.display().to_string();
    let mut lines = lines_of(path)?;
    let mut header: Option<Vec<String>> = None;
    let mut rows = Vec::new();
    while let Some(l) = lines.next_line()? {
        let t = l.text.trim_end_matches('\r');
        if t.trim().is_empty() {
            continue;
        }
        let fields = split_csv(t).ok_or_else(|| CalibError::Parse {
            path: name.clone(),
            line: l.no,
            expected: "comma-separated fields with balanced quotes".into(),
            found: excerpt(t),
        })?;
        if header.is_none() {
            header = Some(fields.iter().map(|f| f.trim().to_string()).collect());
        } else {
            rows.push(CsvRow { line: l.no, fields });
        }
    }
    match header {
        Some(h) => Ok((h, rows)),
        None => Err(CalibError::Empty {
            path: name,
            expected: "a CSV header line and data rows".into(),
        }),
    }
}

pub(super) fn split_csv(line: &str) -> Option<Vec<String>> {
    let mut out = Vec::new();
    let mut cur = String::new();
    let mut chars = line.chars().peekable();
    let mut quoted = false;
    while let Some(c) = chars.next() {
        match (quoted, c) {
            (true, '"') if chars.peek() == Some(&'"') => {
                cur.push('"');
                chars.next();
            }
            (true, '"') => quoted = false,
            (false, '"') if cur.trim().is_empty() => {
                cur.clear();
                quoted = true;
            }
            (false, ',') => out.push(std::mem::take(&mut cur)),
            (_, c) => cur.push(c),
        }
    }
    if quoted {
        return None;
    }
    out.push(cur);
    Some(out)
}

/// Column indices of `wanted` in `header`, or a parse error naming the missing ones.
pub(super) fn columns(
    path: &Path,
    header: &[String],
    wanted: &[&str],
) -> Result<Vec<usize>, CalibError> {
    let mut idx = Vec::with_capacity(wanted.len());
    let mut missing = Vec::new();
    for w in wanted {
        match header.iter().position(|h| h == w) {
            Some(i) => idx.push(i),
            None => missing.push(*w),
        }
    }
    if missing.is_empty() {
        Ok(idx)
    } else {
        Err(CalibError::Parse {
            path: path.display().to_string(),
            line: 1,
            expected: format!(
                "a header with the column(s) {} (of {})",
                missing.join(", "),
                wanted.join(",")
            ),
            found: excerpt(&header.join(",")),
        })
    }
}

pub(super) fn field(row: &CsvRow, i: usize) -> &str {
    row.fields.get(i).map(|s| s.trim()).unwrap_or("")
}

pub(super) fn same_key(a: &str, b: &str) -> bool {
    a.trim().eq_ignore_ascii_case(b.trim())
}

/// A decimal number in µs (or µs/byte) as ps (ps/byte), scaled in decimal so `0.00017` becomes
/// exactly `170.0`.
pub(super) fn us_text_to_ps(s: &str) -> Option<f64> {
    let s = s.trim();
    s.parse::<f64>().ok()?;
    let scaled = match s.find(['e', 'E']) {
        Some(i) => {
            let exp: i32 = s[i + 1..].parse().ok()?;
            format!("{}e{}", &s[..i], exp + 6)
        }
        None => format!("{s}e6"),
    };
    let v: f64 = scaled.parse().ok()?;
    v.is_finite().then_some(v)
}

pub(super) const PARAM_COLUMNS: [&str; 9] = [
    "provider",
    "instance",
    "placement",
    "L_us",
    "o_us",
    "g_us",
    "G_us_per_byte",
    "S_bytes_eager_threshold",
    "nodes_per_switch_in_simulate_py",
];

/// All rows of a parameter table: (line, provider, instance, placement, params, nodes per switch).
type ParamRow = (u64, String, String, String, BaseParams, u32);

pub(super) fn read_param_rows(path: &Path) -> Result<Vec<ParamRow>, CalibError> {
    let (header, rows) = read_csv(path)?;
    let c = columns(path, &header, &PARAM_COLUMNS)?;
    let name = path.display().to_string();
    let mut out = Vec::with_capacity(rows.len());
    for row in &rows {
        let num = |k: usize, unit: &str| -> Result<f64, CalibError> {
            let t = field(row, c[k]);
            match us_text_to_ps(t) {
                Some(v) if v >= 0.0 => Ok(v),
                _ => Err(CalibError::Parse {
                    path: name.clone(),
                    line: row.line,
                    expected: format!(
                        "a non-negative number of {unit} in column {}",
                        PARAM_COLUMNS[k]
                    ),
                    found: excerpt(t),
                }),
            }
        };
        let int = |k: usize, what: &str| -> Result<u64, CalibError> {
            let t = field(row, c[k]);
            t.parse::<u64>().map_err(|_| CalibError::Parse {
                path: name.clone(),
                line: row.line,
                expected: format!("a whole number of {what} in column {}", PARAM_COLUMNS[k]),
                found: excerpt(t),
            })
        };
        let params = BaseParams {
            l_ps: num(3, "us")?,
            o_ps: num(4, "us")?,
            g_ps: num(5, "us")?,
            big_g_ps_per_byte: num(6, "us/byte")?,
            big_o_ps_per_byte: 0.0,
            s_bytes: int(7, "bytes")?,
        };
        let nps = int(8, "nodes")?;
        let nps = u32::try_from(nps)
            .ok()
            .filter(|&n| n >= 1)
            .ok_or_else(|| CalibError::Parse {
                path: name.clone(),
                line: row.line,
                expected: format!("at least 1 node per switch in column {}", PARAM_COLUMNS[8]),
                found: nps.to_string(),
            })?;
        out.push((
            row.line,
            field(row, c[0]).to_string(),
            field(row, c[1]).to_string(),
            field(row, c[2]).to_string(),
            params,
            nps,
        ));
    }
    Ok(out)
}

pub(super) fn row_not_found(path: &Path, wanted: String, rows: &[ParamRow]) -> CalibError {
    CalibError::TableRow {
        path: path.display().to_string(),
        wanted,
        available: rows
            .iter()
            .map(|r| format!("{} / {} / {}", r.1, r.2, r.3))
            .collect(),
    }
}

/// Reads one row of a parameter table in the exact format of the paper's `loggp_params.csv`
/// (`provider,instance,placement,L_us,o_us,g_us,G_us_per_byte,S_bytes_eager_threshold,
/// nodes_per_switch_in_simulate_py,…`; µs and µs/byte are converted to ps and ps/byte in decimal,
/// O is 0 as in the paper). Keys match case-insensitively. Returns the parameters and the
/// table's nodes per switch; an unknown row is an error listing every row of the table.
pub fn read_params_table(
    path: impl AsRef<Path>,
    provider: &str,
    instance: &str,
    placement: &str,
) -> Result<(BaseParams, u32), CalibError> {
    let path = path.as_ref();
    let rows = read_param_rows(path)?;
    rows.iter()
        .find(|r| same_key(&r.1, provider) && same_key(&r.2, instance) && same_key(&r.3, placement))
        .map(|r| (r.4.clone(), r.5))
        .ok_or_else(|| {
            row_not_found(
                path,
                format!("provider `{provider}`, instance `{instance}`, placement `{placement}`"),
                &rows,
            )
        })
}

/// The paper's "Different Racks" parameter pair of one system: near = the `Same Rack` row, far =
/// the `Different Racks` row, and the nodes per switch (of the `Different Racks` row).
pub fn read_params_table_placement_pair(
    path: impl AsRef<Path>,
    provider: &str,
    instance: &str,
) -> Result<(BaseParams, BaseParams, u32), CalibError> {
    let path = path.as_ref();
    let rows = read_param_rows(path)?;
    let find = |placement: &str| {
        rows.iter().find(|r| {
            same_key(&r.1, provider) && same_key(&r.2, instance) && same_key(&r.3, placement)
        })
    };
    match (find(SAME_RACK), find(DIFFERENT_RACKS)) {
        (Some(near), Some(far)) => Ok((near.4.clone(), far.4.clone(), far.5)),
        (near, _) => Err(row_not_found(
            path,
            format!(
                "provider `{provider}`, instance `{instance}`, placement `{}` (the paper's Different Racks runs use the Same Rack row for near and the Different Racks row for far messages)",
                if near.is_none() { SAME_RACK } else { DIFFERENT_RACKS }
            ),
            &rows,
        )),
    }
}

/// Reads the prices of one row of a price table in the exact format of the paper's `systems.csv`
/// (`system,class,…,usd_per_hour_committed,usd_per_hour_on_demand,…`; USD per node-hour; an empty
/// cell is an unknown price). Keys match case-insensitively; an unknown row is an error listing
/// every row.
pub fn read_prices_table(
    path: impl AsRef<Path>,
    system: &str,
    class: &str,
) -> Result<Prices, CalibError> {
    let path = path.as_ref();
    let name = path.display().to_string();
    const COLS: [&str; 4] = [
        "system",
        "class",
        "usd_per_hour_committed",
        "usd_per_hour_on_demand",
    ];
    let (header, rows) = read_csv(path)?;
    let c = columns(path, &header, &COLS)?;
    let Some(row) = rows
        .iter()
        .find(|r| same_key(field(r, c[0]), system) && same_key(field(r, c[1]), class))
    else {
        return Err(CalibError::TableRow {
            path: name,
            wanted: format!("system `{system}`, class `{class}`"),
            available: rows
                .iter()
                .map(|r| format!("{} / {}", field(r, c[0]), field(r, c[1])))
                .collect(),
        });
    };
    let price = |k: usize| -> Result<Option<f64>, CalibError> {
        let t = field(row, c[k]);
        if t.is_empty() {
            return Ok(None);
        }
        match t.parse::<f64>() {
            Ok(v) if v.is_finite() && v >= 0.0 => Ok(Some(v)),
            _ => Err(CalibError::Parse {
                path: name.clone(),
                line: row.line,
                expected: format!(
                    "a non-negative price in USD per hour (or nothing) in column {}",
                    COLS[k]
                ),
                found: excerpt(t),
            }),
        }
    };
    Ok(Prices {
        committed_usd_per_node_hour: price(2)?,
        on_demand_usd_per_node_hour: price(3)?,
        spot: Default::default(),
    })
}
