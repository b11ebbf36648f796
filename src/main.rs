//! loggops-sim: the command-line front end. Parses flags, validates them into settings, and calls
//! the library crates; every capability is a library call.

mod cli;
mod compat;
mod mc;
mod run;
mod schedule;
mod units;
mod validate;

use std::io::Write;
use std::process::ExitCode;

use clap::Parser;

fn main() -> ExitCode {
    let cli = cli::Cli::parse();
    match dispatch(cli) {
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
                eprintln!("{msg}");
            } else {
                eprintln!("error: {msg}");
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
        Some(cli::Command::Validate(args)) => validate::validate(*args),
        None => run::simulate(cli.run),
    }
}
