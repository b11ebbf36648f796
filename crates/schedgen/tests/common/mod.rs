//! Test helpers: a reader for Schedgen-style GOAL text and the shared reference directory.

#![allow(dead_code)]

pub mod minisim;

use std::collections::HashMap;
use std::path::PathBuf;

use loggops_engine::Op;
use loggops_schedgen::check::{Line, Materialized};

/// `../shared` next to the checkout (the shared reference material), if present.
pub fn shared_dir() -> Option<PathBuf> {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../../shared");
    dir.join("reference").is_dir().then_some(dir)
}

/// Reads the GOAL subset Schedgen writes (labels, send/recv/calc, requires/irequires,
/// `/* */` comments on their own line). Panics with the line on anything else.
pub fn parse_schedgen_text(text: &str) -> Materialized {
    let mut m: Option<Materialized> = None;
    let mut rank: Option<u32> = None;
    let mut labels: HashMap<String, u32> = HashMap::new();
    let mut next = 0u32;
    for (no, raw) in text.lines().enumerate() {
        let line = raw.trim();
        let bad = || -> Op { panic!("line {}: cannot read `{raw}`", no + 1) };
        if line.is_empty() || line.starts_with("/*") || line.starts_with("//") {
            continue;
        }
        let words: Vec<&str> = line.split_whitespace().collect();
        match words[0] {
            "num_ranks" => m = Some(Materialized::new(words[1].parse().unwrap())),
            "rank" => {
                rank = Some(words[1].parse().unwrap());
                labels.clear();
                next = 0;
            }
            "}" => rank = None,
            w if w.ends_with(':') => {
                let label = w.trim_end_matches(':').to_string();
                let num = |s: &str| s.trim_end_matches('b').parse::<u64>().unwrap();
                let tag = || {
                    words
                        .iter()
                        .position(|&x| x == "tag")
                        .map(|i| num(words[i + 1]) as u32)
                        .unwrap_or(0)
                };
                let op = match words[1] {
                    "send" => Op::send(num(words[2]), num(words[4]) as u32, tag()),
                    "recv" => Op::recv(num(words[2]), num(words[4]) as u32, tag()),
                    "calc" => Op::calc(num(words[2])),
                    _ => bad(),
                };
                labels.entry(label).or_insert(next);
                next += 1;
                m.as_mut().unwrap().push_line(rank.unwrap(), Line::Op(op));
            }
            _ if words.len() == 3 && (words[1] == "requires" || words[1] == "irequires") => {
                let tail = labels[words[0]];
                let head = labels[words[2]];
                let l = if words[1] == "requires" {
                    Line::Requires { tail, head }
                } else {
                    Line::Irequires { tail, head }
                };
                m.as_mut().unwrap().push_line(rank.unwrap(), l);
            }
            _ => {
                bad();
            }
        }
    }
    m.expect("no num_ranks line").finish()
}
