//! loggops-sim: the command-line front end. Parses flags, validates them into settings, and calls
//! the library crates; every capability is a library call.
// Every message goes through `out::errln!` / `out::err_text`, which cannot panic on a closed
// stderr; stdout through `run::emit` (a closed stdout ends the run quietly).
#![deny(clippy::print_stdout, clippy::print_stderr)]

mod budget;
mod checks;
mod cli;
mod compat;
mod explain;
mod extrapolate;
mod inputs;
mod mc;
mod out;
mod profile_show;
mod run;
mod schedule;
mod units;
mod validate;

use std::io::Write;
use std::process::ExitCode;

use clap::{CommandFactory, FromArgMatches};

use crate::out::errln;

fn main() -> ExitCode {
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
        Some(cli::Command::Merge(args)) => mc::merge(&args),
        Some(cli::Command::Validate(args)) => validate::validate(*args),
        Some(cli::Command::Extrapolate(args)) => extrapolate::run(*args),
        None => run::simulate(cli.run),
    }
}
