//! loggops-sim: the command-line front end. Everything lives in the library (`src/lib.rs`), so
//! that other front ends (the Python module, `crates/python`) call the same code.
#![deny(clippy::print_stdout, clippy::print_stderr)]

fn main() -> std::process::ExitCode {
    loggops_sim::main()
}
