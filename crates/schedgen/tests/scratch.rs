use loggops_schedgen::*;
use loggops_schedgen::check::*;
#[test]
fn scratch() {
    for f in ["ring_512MiB", "dissemination_16B", "butterfly_16MiB", "dgemm128_dissemination_128KiB", "dgemm8192_ring_512MiB"] {
        let path = format!("{}/../../goal/{f}.goal", env!("CARGO_MANIFEST_DIR"));
        match parse_schedule(&path, 16, &[] as &[(&str, &str)]) {
            Ok(s) => { eprintln!("{f}: ops {} {:?}", s.total_ops(), s.params()); validate(&s).unwrap(); }
            Err(e) => eprintln!("{e}"),
        }
    }
    let e = parse_schedule_str("loggops-schedule 1\nallreduce rng 16B\n", "x.goal", 16, &[] as &[(&str, &str)]).unwrap_err();
    eprintln!("{e}");
    let e = parse_schedule_str("loggops-schedule 1\nallreduce recdoub 16B\n", "x.goal", 12, &[] as &[(&str, &str)]).unwrap_err();
    eprintln!("{e}");
}
