//! JSON output: `{"schema": "loggops-report/cells/1", "cells": [{...}, ...]}`, one object per cell
//! with the keys of [`crate::CELL_COLUMNS`] in that order (see the crate docs for their meaning);
//! [`write_json_with`] puts entries about the whole run (the caller's, e.g. `tick_ps`) between
//! `schema` and `cells`.
//! Times are integer picoseconds in keys ending `_ps`; absent values are `null`.

use crate::cell::Cell;
use crate::record::{cell_values, Value, CELL_COLUMNS};
use serde::ser::{SerializeMap, SerializeSeq};
use serde::{Serialize, Serializer};
use std::io::{self, Write};

/// Value of the `schema` key; bumped whenever a key is renamed, removed or changes meaning.
pub const JSON_SCHEMA: &str = "loggops-report/cells/1";

impl Serialize for Value<'_> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match *self {
            Value::Str(v) => s.serialize_str(v),
            Value::U64(v) => s.serialize_u64(v),
            Value::I64(v) => s.serialize_i64(v),
            Value::F64(v) if v.is_finite() => s.serialize_f64(v),
            Value::F64(_) | Value::Null => s.serialize_none(),
        }
    }
}

struct CellRow<'a>(&'a Cell);

impl Serialize for CellRow<'_> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let values = cell_values(self.0);
        let mut map = s.serialize_map(Some(values.len()))?;
        for (k, v) in CELL_COLUMNS.iter().zip(values.iter()) {
            map.serialize_entry(k, v)?;
        }
        map.end()
    }
}

struct Cells<'a>(&'a [Cell]);

impl Serialize for Cells<'_> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let mut seq = s.serialize_seq(Some(self.0.len()))?;
        for c in self.0 {
            seq.serialize_element(&CellRow(c))?;
        }
        seq.end()
    }
}

struct Document<'a>(&'a [Cell], &'a [(&'a str, u64)]);

impl Serialize for Document<'_> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let mut map = s.serialize_map(Some(2 + self.1.len()))?;
        map.serialize_entry("schema", JSON_SCHEMA)?;
        for (k, v) in self.1 {
            map.serialize_entry(k, v)?;
        }
        map.serialize_entry("cells", &Cells(self.0))?;
        map.end()
    }
}

/// Writes the cells as pretty-printed JSON (two-space indent) followed by a newline.
pub fn write_json<W: Write + ?Sized>(w: &mut W, cells: &[Cell]) -> io::Result<()> {
    write_json_with(w, cells, &[])
}

/// [`write_json`] with integer entries about the whole run (e.g. `("tick_ps", 1000)`) between
/// `schema` and `cells`.
pub fn write_json_with<W: Write + ?Sized>(
    w: &mut W,
    cells: &[Cell],
    run: &[(&str, u64)],
) -> io::Result<()> {
    serde_json::to_writer_pretty(&mut *w, &Document(cells, run)).map_err(io::Error::from)?;
    w.write_all(b"\n")
}

/// The JSON document as a string (see [`write_json`]).
pub fn to_json_string(cells: &[Cell]) -> String {
    to_json_string_with(cells, &[])
}

/// The JSON document with run entries as a string (see [`write_json_with`]).
pub fn to_json_string_with(cells: &[Cell], run: &[(&str, u64)]) -> String {
    let mut out = Vec::new();
    write_json_with(&mut out, cells, run).expect("writing to a Vec cannot fail");
    String::from_utf8(out).expect("serde_json writes UTF-8")
}
