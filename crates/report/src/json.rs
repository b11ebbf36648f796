//! JSON output: the faithful serialisation of a [`RunResult`] (schema [`SCHEMA`], version
//! [`SCHEMA_VERSION`]); [`RunResult::from_json`] reads it back.
//!
//! ```text
//! { "schema": "loggops-report/run/2", "schema_version": 2,
//!   "tool": {"name", "version"}, "command": "...", "status": "complete" | "interrupted",
//!   ["shard": {"index", "count"},]  (only in the output of --shard)
//!   "plan": { "workloads": [...], "systems": [...], "nodes": [...], "noise_modes": [...],
//!             "settings": {...} },
//!   "cells": [ { "id", "complete", <the keys of CELL_COLUMNS>, "run", "reps", "samples_ps" } ] }
//! ```
//!
//! Each cell holds the statistics of [`crate::CELL_COLUMNS`] (derived from its samples, for
//! readers that do not want to recompute them) and the samples themselves with their
//! repetition indices. Times are integer picoseconds in keys ending `_ps`; absent values are
//! `null`.

use crate::cell::Cell;
use crate::model::{CellResult, RunResult};
pub use crate::model::{SCHEMA, SCHEMA_VERSION};
use crate::record::{cell_values, Value, CELL_COLUMNS};
use serde::ser::{SerializeMap, SerializeSeq};
use serde::{Serialize, Serializer};
use std::io::{self, Write};

impl Serialize for Value<'_> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match self {
            Value::Str(v) => s.serialize_str(v),
            Value::Owned(v) => s.serialize_str(v),
            Value::Bool(v) => s.serialize_bool(*v),
            Value::U64(v) => s.serialize_u64(*v),
            Value::I64(v) => s.serialize_i64(*v),
            Value::F64(v) if v.is_finite() => s.serialize_f64(*v),
            Value::F64(_) | Value::Null => s.serialize_none(),
        }
    }
}

struct CellOut<'a>(&'a CellResult, &'a Cell);

impl Serialize for CellOut<'_> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let (c, stats) = (self.0, self.1);
        let values = cell_values(stats);
        let mut map = s.serialize_map(Some(values.len() + 5))?;
        map.serialize_entry("id", &c.id)?;
        map.serialize_entry("complete", &c.complete)?;
        for (k, v) in CELL_COLUMNS.iter().zip(values.iter()) {
            map.serialize_entry(k, v)?;
        }
        map.serialize_entry("run", &c.run)?;
        map.serialize_entry("reps", &c.reps)?;
        map.serialize_entry("samples_ps", &c.samples_ps)?;
        map.end()
    }
}

struct CellsOut<'a>(&'a [CellResult], &'a [Cell]);

impl Serialize for CellsOut<'_> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let mut seq = s.serialize_seq(Some(self.0.len()))?;
        for (c, stats) in self.0.iter().zip(self.1) {
            seq.serialize_element(&CellOut(c, stats))?;
        }
        seq.end()
    }
}

struct Document<'a>(&'a RunResult, &'a [Cell]);

impl Serialize for Document<'_> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let r = self.0;
        let mut map = s.serialize_map(Some(7 + r.shard.is_some() as usize))?;
        map.serialize_entry("schema", &r.schema)?;
        map.serialize_entry("schema_version", &r.schema_version)?;
        map.serialize_entry("tool", &r.tool)?;
        map.serialize_entry("command", &r.command)?;
        map.serialize_entry("status", &r.status)?;
        if let Some(shard) = &r.shard {
            map.serialize_entry("shard", shard)?;
        }
        map.serialize_entry("plan", &r.plan)?;
        map.serialize_entry("cells", &CellsOut(&r.cells, self.1))?;
        map.end()
    }
}

/// Writes the result as pretty-printed JSON (two-space indent) followed by a newline.
pub fn write_run_json<W: Write + ?Sized>(w: &mut W, run: &RunResult) -> io::Result<()> {
    let stats = run.cells_summarised().map_err(io::Error::other)?;
    serde_json::to_writer_pretty(&mut *w, &Document(run, &stats)).map_err(io::Error::from)?;
    w.write_all(b"\n")
}

/// The JSON document as a string (see [`write_run_json`]).
pub fn run_to_json_string(run: &RunResult) -> String {
    let mut out = Vec::new();
    write_run_json(&mut out, run).expect("writing to a Vec cannot fail");
    String::from_utf8(out).expect("serde_json writes UTF-8")
}
