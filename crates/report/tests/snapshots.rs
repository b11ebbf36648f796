//! Snapshots of what users see: the human table, JSON and CSV for a small fixed sweep.

use loggops_report::{
    render_table, to_csv_string, to_json_string, write_samples_csv, Cell, CellSamples, CostModel,
    Labels, CELL_COLUMNS,
};

const NOISELESS_PS: u64 = 30_509_900;

fn os_samples() -> Vec<u64> {
    vec![
        30_509_900, 31_200_000, 35_750_000, 41_800_000, 39_000_000, 44_100_000, 30_509_900,
        42_250_000, 49_600_000, 38_125_000, 41_000_000, 80_000_000,
    ]
}

fn os_net_samples() -> Vec<u64> {
    vec![
        28_900_000,
        33_400_000,
        40_700_000,
        55_250_000,
        47_125_000,
        60_700_000,
        36_000_000,
        51_500_000,
        44_444_444,
        290_000_000,
    ]
}

fn cells() -> Vec<Cell> {
    // Daint's prices (Table I) and its 128x128 DGEMM time (9.985 us) as extra compute per run.
    let cost = CostModel::new(64)
        .with_on_demand(1.73)
        .with_committed(1.02)
        .with_extra_ps_per_run(9_985_000);
    vec![
        Cell::new(
            Labels::new("dissemination 16B", "daint", 64, "os"),
            &os_samples(),
            Some(NOISELESS_PS),
            Some(&cost),
        )
        .unwrap(),
        Cell::new(
            Labels::new("dissemination 16B", "daint", 64, "os+net"),
            &os_net_samples(),
            Some(NOISELESS_PS),
            Some(&cost),
        )
        .unwrap(),
    ]
}

#[test]
fn table() {
    insta::assert_snapshot!(render_table(&cells()));
}

#[test]
fn table_without_costs_or_baseline() {
    let cells = vec![
        Cell::new(
            Labels::new("ring 16MiB", "alps", 4, "net"),
            &[5, 6, 7],
            None,
            None,
        )
        .unwrap(),
        Cell::new(
            Labels::new("ring 16MiB", "alps", 1024, "net"),
            &[1_500_000_000_000],
            None,
            None,
        )
        .unwrap(),
    ];
    insta::assert_snapshot!(render_table(&cells));
}

#[test]
fn json() {
    insta::assert_snapshot!(to_json_string(&cells()));
}

#[test]
fn csv() {
    insta::assert_snapshot!(to_csv_string(&cells()));
}

#[test]
fn samples_csv() {
    let cells = cells();
    let (a, b) = (os_samples(), os_net_samples());
    let groups = [
        CellSamples {
            cell: &cells[0],
            samples: &a[..3],
        },
        CellSamples {
            cell: &cells[1],
            samples: &b[..3],
        },
    ];
    let mut out = Vec::new();
    write_samples_csv(&mut out, &groups).unwrap();
    insta::assert_snapshot!(String::from_utf8(out).unwrap());
}

#[test]
fn json_schema_invariants() {
    let text = to_json_string(&cells());
    let doc: serde_json::Value = serde_json::from_str(&text).unwrap();
    assert_eq!(doc["schema"], "loggops-report/cells/1");
    for cell in doc["cells"].as_array().unwrap() {
        let obj = cell.as_object().unwrap();
        let keys: Vec<&str> = obj.keys().map(String::as_str).collect();
        // serde_json's default map sorts keys when parsing; compare as sets, order via the text.
        let mut want: Vec<&str> = CELL_COLUMNS.to_vec();
        want.sort_unstable();
        assert_eq!(keys, want);
        for (k, v) in obj {
            if k.ends_with("_ps") {
                assert!(v.is_i64() || v.is_u64() || v.is_null(), "{k} = {v}");
            }
        }
    }
    // Key order in the text follows CELL_COLUMNS.
    let mut last = 0;
    for k in CELL_COLUMNS {
        let pos = text.find(&format!("\"{k}\":")).unwrap();
        assert!(pos > last, "{k} out of order");
        last = pos;
    }
}

#[test]
fn csv_matches_json_columns() {
    let csv = to_csv_string(&cells());
    let mut lines = csv.lines();
    assert_eq!(lines.next().unwrap(), CELL_COLUMNS.join(","));
    for line in lines {
        // No label here contains a comma, so splitting is safe.
        assert_eq!(line.split(',').count(), CELL_COLUMNS.len());
    }
}

#[test]
fn report_files_are_written_atomically() {
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("results.json");
    loggops_report::write_report(&p, loggops_report::Format::Json, &cells()).unwrap();
    assert_eq!(
        std::fs::read_to_string(&p).unwrap(),
        to_json_string(&cells())
    );
    let names: Vec<_> = std::fs::read_dir(dir.path())
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .collect();
    assert_eq!(names, ["results.json"]);
}
