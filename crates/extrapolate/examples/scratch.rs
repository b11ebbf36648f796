fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let mut inputs = Vec::new();
    let mut opts = loggops_extrapolate::Options::default();
    let mut out = None;
    let mut i = 0;
    while i < args.len() {
        match args[i].as_str() {
            "--compare" => {
                opts.compare.push(args[i + 1].clone().into());
                i += 1;
            }
            "--nodes" => {
                opts.nodes = Some(args[i + 1].parse().unwrap());
                i += 1;
            }
            "--tick" => {
                opts.tick_ps = args[i + 1].parse().unwrap();
                i += 1;
            }
            "-o" => {
                out = Some(args[i + 1].clone());
                i += 1;
            }
            a => inputs.push(std::path::PathBuf::from(a)),
        }
        i += 1;
    }
    let t0 = std::time::Instant::now();
    match loggops_extrapolate::extrapolate(&inputs, &opts, &mut |m| {
        eprintln!("[{:.1}s] {m}", t0.elapsed().as_secs_f64())
    }) {
        Ok(x) => {
            if let Some(o) = out {
                std::fs::write(o, &x.schedule).unwrap();
            }
            println!("{}", x.report.render());
        }
        Err(e) => println!("{e}"),
    }
}
