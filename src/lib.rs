//! loggops-sim: how much slower, and how much more expensive, does a parallel job get at scale
//! because of network and OS noise? The command-line program (`src/main.rs` calls [`main`]) and
//! the same capabilities as library calls ([`api`]): a sweep, its repetitions, `validate`,
//! `profile show` and critical paths, from a request to the results the CLI renders, with the
//! CLI's checks and error messages. The Python module `loggops_sim` (`crates/python`) is a thin
//! layer over [`api`].
//!
//! ```
//! use loggops_sim::api::{self, SweepRequest};
//!
//! // The paper's 16 B dissemination on 64 nodes with AWS noise, 20 repetitions.
//! let req = SweepRequest {
//!     nodes: vec![64],
//!     noise: vec!["calibration/aws.h5".into()],
//!     reps: Some("20".into()),
//!     ..SweepRequest::new("goal/dissemination_16B.goal")
//! };
//! let run = api::sweep(&req)?;
//! let cell = &run.result.cells[0];
//! assert_eq!((cell.nodes, cell.noise_mode.as_str(), cell.samples_ps.len()), (64, "os+net", 20));
//! // The CLI's `--format csv`: one row per cell, `mean_ps` among the columns.
//! assert!(run.cells_csv().starts_with("workload,system,nodes,noise_mode,n,mean_ps,"));
//! # Ok::<(), api::Error>(())
//! ```
// Every message goes through `out::errln!` / `out::err_text`, which cannot panic on a closed
// stderr; stdout through `run::emit` (a closed stdout ends the run quietly).
#![deny(clippy::print_stdout, clippy::print_stderr)]

pub mod api;
mod budget;
mod checks;
mod cli;
mod compat;
mod dry_run;
mod explain;
mod extrapolate;
mod inputs;
mod lanes;
mod mc;
mod out;
mod profile_show;
mod request;
mod run;
mod schedule;
mod spot;
mod units;
mod validate;
mod why;

use std::io::Write;
use std::process::ExitCode;

use clap::{CommandFactory, FromArgMatches};

use crate::out::errln;

/// The command line: parses `std::env::args`, runs, and returns the exit status (errors are
/// printed on stderr).
pub fn main() -> ExitCode {
    // Parsed in two steps so that `checks` can ask which flags were given on the command line.
    let matches = cli::Cli::command().get_matches();
    let cli = cli::Cli::from_arg_matches(&matches).unwrap_or_else(|e| e.exit());
    match checks::flags(&cli, &matches).and_then(|()| dispatch(cli)) {
        Ok(code) => code,
        Err(err) => {
            // A closed pipe (`loggops-sim ... | head`) is not an error.
            if err.chain().any(|c| {
                c.downcast_ref::<std::io::Error>()
                    .is_some_and(|e| e.kind() == std::io::ErrorKind::BrokenPipe)
            }) {
                return ExitCode::SUCCESS;
            }
            let _ = std::io::stdout().flush();
            let msg = chain_message(&err);
            // Parser errors already start with `file:line:col: error:`.
            if msg.lines().next().is_some_and(|l| l.contains(": error: ")) {
                errln!("{msg}");
            } else {
                errln!("error: {msg}");
            }
            ExitCode::from(2)
        }
    }
}

/// The error and its causes joined with `: `, like `{:#}`, but without a cause whose text the
/// message already contains (library errors often embed their source's text).
fn chain_message(err: &anyhow::Error) -> String {
    let mut msg = String::new();
    for cause in err.chain() {
        let text = cause.to_string();
        if msg.contains(&text) {
            continue;
        }
        if !msg.is_empty() {
            msg.push_str(": ");
        }
        msg.push_str(&text);
    }
    msg
}

fn dispatch(cli: cli::Cli) -> anyhow::Result<ExitCode> {
    match cli.command {
        Some(cli::Command::Gen(args)) => run::gen(args),
        Some(cli::Command::Calibrate(args)) => run::calibrate(*args),
        Some(cli::Command::Profile(cli::ProfileCommand::Show(args))) => profile_show::show(&args),
        Some(cli::Command::Profile(cli::ProfileCommand::Combine(args))) => {
            profile_show::combine(&args)
        }
        Some(cli::Command::Merge(args)) => mc::merge(&args),
        Some(cli::Command::Validate(args)) => validate::validate(*args),
        Some(cli::Command::Extrapolate(args)) => extrapolate::run(*args),
        None => run::simulate(&request::Request::resolve(&cli.run)?),
    }
}
