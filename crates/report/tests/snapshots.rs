//! Snapshots of what users see: the human table, JSON and CSV for a small fixed sweep, and the
//! plots and HTML report drawn from the same result.

use loggops_report::plot::PlotKind;
use loggops_report::{
    render_run_table, render_table, run_samples_to_csv_string, run_to_csv_string,
    run_to_json_string, Cell, CellResult, CostModel, EngineParams, Labels, NoiseSettings, Plan,
    Prices, ProfileRef, Provenance, RepsRule, RunResult, Settings, Status, SystemInfo, Tool,
    WorkloadInfo, CELL_COLUMNS, RUN_COLUMNS, SAMPLE_COLUMNS,
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

/// A small fixed run: one workload on Daint with the two cells above.
fn run() -> RunResult {
    let params = EngineParams {
        l_ps: 1_000_000,
        o_ps: 150_000,
        g_ps: 0,
        big_g_ps_per_byte: 86.5,
        big_o_ps_per_byte: 0.0,
        s_bytes: 4096,
        rndv_3l: true,
    };
    let plan = Plan {
        workloads: vec![WorkloadInfo {
            name: "dissemination 16B".into(),
            path: "goal/dissemination_16B.goal".into(),
            sha256: "0".repeat(64),
            params: vec![],
            explicit: false,
        }],
        systems: vec![SystemInfo {
            name: "daint".into(),
            description: "Piz Daint".into(),
            profile: Some(ProfileRef {
                path: "calibration/paper/daint.h5".into(),
                sha256: "ab".repeat(32),
                provenance: Provenance {
                    sources: vec!["../shared/captures/x/lat.out.xz".into()],
                    command: "loggops-sim calibrate --system daint".into(),
                    created: "2026-01-01T00:00:00Z".into(),
                    tool_version: "0.1.0".into(),
                    notes: vec![],
                },
            }),
            near: params.clone(),
            far: Some(EngineParams {
                big_g_ps_per_byte: 92.0,
                ..params
            }),
            nodes_per_switch: Some(16),
            prices: Prices {
                on_demand_usd_per_node_hour: Some(1.73),
                committed_usd_per_node_hour: Some(1.02),
                ..Prices::default()
            },
            mpi_progress: None,
            latency_episodes: None,
            latency_by_size: None,
        }],
        nodes: vec![64],
        noise_modes: vec!["os".into(), "os+net".into()],
        settings: Settings {
            seed: 1,
            reps: RepsRule::Fixed { count: 12 },
            time_unit: "ps".into(),
            order: "stable".into(),
            model: "queued".into(),
            tick_ps: 1000,
            noise: Some(NoiseSettings {
                latency_scaling: "median".into(),
                cosched: false,
                bandwidth_levels: None,
            }),
            param_flags: vec![],
            job: None,
            why_reps: 0,
            spot: None,
        },
    };
    let tool = Tool {
        name: "loggops-sim".into(),
        version: "0.1.0".into(),
    };
    let mut r = RunResult::new(tool, "loggops-sim --goal x".into(), plan);
    let cell = |id, mode: &str, samples: Vec<u64>, complete| CellResult {
        id,
        workload: "dissemination 16B".into(),
        system: "daint".into(),
        nodes: 64,
        noise_mode: mode.into(),
        complete,
        noiseless_ps: Some(NOISELESS_PS),
        reps: (0..samples.len() as u64).collect(),
        samples_ps: samples,
        run: None,
        why: None,
        engine: None,
    };
    r.cells = vec![
        cell(0, "os", os_samples(), true),
        cell(1, "os+net", os_net_samples(), false),
    ];
    r.status = Status::Interrupted;
    r
}

#[test]
fn run_table_with_footer() {
    insta::assert_snapshot!(render_run_table(&run()));
}

#[test]
fn json() {
    insta::assert_snapshot!(run_to_json_string(&run()));
}

#[test]
fn json_reads_back_to_the_same_result() {
    let r = run();
    let back = RunResult::from_json(&run_to_json_string(&r)).unwrap();
    assert_eq!(back, r);
}

#[test]
fn csv() {
    insta::assert_snapshot!(run_to_csv_string(&run()));
}

#[test]
fn samples_csv() {
    let mut r = run();
    for c in &mut r.cells {
        c.samples_ps.truncate(3);
        c.reps.truncate(3);
    }
    let text = run_samples_to_csv_string(&r);
    assert_eq!(text.lines().next().unwrap(), SAMPLE_COLUMNS.join(","));
    insta::assert_snapshot!(text);
}

#[test]
fn json_schema_invariants() {
    let text = run_to_json_string(&run());
    let doc: serde_json::Value = serde_json::from_str(&text).unwrap();
    assert_eq!(doc["schema"], "loggops-report/run/2");
    assert_eq!(doc["schema_version"], 2);
    assert_eq!(doc["status"], "interrupted");
    for cell in doc["cells"].as_array().unwrap() {
        let obj = cell.as_object().unwrap();
        for k in CELL_COLUMNS {
            assert!(obj.contains_key(k), "{k} missing");
        }
        for (k, v) in obj {
            if k.ends_with("_ps") {
                let ok = |v: &serde_json::Value| v.is_i64() || v.is_u64() || v.is_null();
                match v.as_array() {
                    Some(a) => assert!(a.iter().all(|x| x.is_u64()), "{k} = {v}"),
                    None => assert!(ok(v), "{k} = {v}"),
                }
            }
        }
    }
    // Key order in the text of a cell follows CELL_COLUMNS.
    let cells = &text[text.find("\"cells\": [").unwrap()..];
    let mut last = 0;
    for k in CELL_COLUMNS {
        let pos = cells.find(&format!("\"{k}\":")).unwrap();
        assert!(pos > last, "{k} out of order");
        last = pos;
    }
}

#[test]
fn csv_has_every_column_in_every_row() {
    let csv = run_to_csv_string(&run());
    let mut lines = csv.lines();
    let header = lines.next().unwrap();
    assert_eq!(
        header,
        format!("{},{}", CELL_COLUMNS.join(","), RUN_COLUMNS.join(","))
    );
    for line in lines {
        // Fields split at commas outside quotes (the verdict's sentence is quoted).
        let mut fields = 1;
        let mut quoted = false;
        for ch in line.chars() {
            match ch {
                '"' => quoted = !quoted,
                ',' if !quoted => fields += 1,
                _ => {}
            }
        }
        assert_eq!(fields, CELL_COLUMNS.len() + RUN_COLUMNS.len(), "{line}");
    }
}

#[test]
fn report_files_are_written_atomically() {
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("results.json");
    loggops_report::write_report(&p, loggops_report::Format::Json, &run()).unwrap();
    assert_eq!(
        std::fs::read_to_string(&p).unwrap(),
        run_to_json_string(&run())
    );
    let names: Vec<_> = std::fs::read_dir(dir.path())
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .collect();
    assert_eq!(names, ["results.json"]);
}

#[test]
fn plots_and_report_are_drawn_from_the_result() {
    let dir = tempfile::tempdir().unwrap();
    let r = run();
    for kind in ["all", "runtime", "cost", "ecdf"] {
        let k: PlotKind = kind.parse().unwrap();
        let svg = loggops_report::plot::render_svg(&r, k).unwrap();
        assert!(svg.starts_with("<svg"), "{kind}");
        assert!(svg.contains("dissemination 16B · daint"), "{kind}");
    }
    let png = dir.path().join("p.png");
    loggops_report::plot::write_plot(&png, &r, PlotKind::Runtime).unwrap();
    let bytes = std::fs::read(&png).unwrap();
    assert_eq!(&bytes[..8], b"\x89PNG\r\n\x1a\n");
    let html = loggops_report::html::render_html(&r).unwrap();
    assert!(html.starts_with("<!DOCTYPE html>"));
    assert!(html.contains("PARTIAL RESULT"));
    assert!(html.contains(&"ab".repeat(32)), "the profile's hash");
    // Nothing is loaded from elsewhere: no external scripts, styles, images or fonts.
    for needle in ["<script", "<link", "src=\"http", "url(http", "@import"] {
        assert!(!html.contains(needle), "{needle}");
    }
}

/// The report lists the paired differences, and folds a long list.
#[test]
fn the_report_folds_a_long_list_of_differences() {
    let r = run();
    let html = loggops_report::html::render_html(&r).unwrap();
    assert!(html.contains("<h2>Differences, paired by repetition</h2>"));
    assert!(html.contains("<td>os+net, 64 nodes</td><td>os, 64 nodes</td>"));
    assert!(!html.contains("<details>"));

    // 26 node counts of one mode: 25 differences, folded.
    let mut r = run();
    let proto = r.cells[0].clone();
    r.plan.nodes = (1..=26).collect();
    r.cells = (1..=26u64)
        .map(|n| CellResult {
            id: n as usize - 1,
            nodes: n,
            ..proto.clone()
        })
        .collect();
    assert_eq!(loggops_report::paired::differences(&r).len(), 25);
    let html = loggops_report::html::render_html(&r).unwrap();
    assert!(
        html.contains("<details><summary>25 differences (click to show)</summary>"),
        "folded"
    );
    assert!(html.contains("<td>26 nodes, os</td><td>25 nodes, os</td>"));
}
