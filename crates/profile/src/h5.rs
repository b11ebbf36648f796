//! The HDF5 encoding of a [`Profile`] (schema versions 1 to 5, documented in `SCHEMA.md`).
//!
//! This is the only module that touches `hdf5-pure`; nothing of that crate leaks through the
//! public API. Files are written with plain 1-D `float64`/`uint64` datasets, scalar numeric
//! attributes and variable-length UTF-8 string attributes, so `h5py` reads every value
//! directly (`f["near"].attrs["L_ps"]`, `f["near/latency/values_ps"][:]`) and strings come back
//! as `str`.

use std::collections::HashMap;
use std::fs;
use std::panic::{self, AssertUnwindSafe};
use std::path::Path;

use hdf5_pure::{AttrValue, DType, Dataset, File, FileBuilder, FormatError, Group, GroupBuilder};

use crate::error::{Invalid, ProfileError};
use crate::model::{
    AfterIdle, BaseParams, Calibration, Clock, Day, DetourProcess, DetourTrace, Distribution,
    ExactTail, IdleLevel, MpiProgress, OsNoise, Placement, Prices, Profile, Provenance,
    SizeLatency, SpotPrices,
};
use crate::schema::{self, Unit, MIN_SCHEMA_VERSION, SCHEMA_NAME, SCHEMA_VERSION};
use crate::validate;

/// Datasets with at least this many elements also get the shuffle and deflate filters (built
/// into every HDF5 library, so h5py needs no plugin); see [`storage`].
const COMPRESS_MIN_ELEMENTS: usize = 1024;
/// Largest chunk, in elements (512 KiB of 8-byte values).
const MAX_CHUNK_ELEMENTS: usize = 65536;
const DEFLATE_LEVEL: u32 = 6;

/// Writes `profile` to `path` as an HDF5 noise profile.
///
/// The profile is validated first (the same rules [`read_profile`] applies), then written to a
/// temporary file in the same directory, synced and renamed over `path`, so readers never see
/// a half-written profile and a failed write leaves any previous file untouched (a device or
/// FIFO is written through, a read-only file refused: `loggops_output::write_atomic`).
pub fn write_profile(path: impl AsRef<Path>, profile: &Profile) -> Result<(), ProfileError> {
    let path = path.as_ref();
    validate::validate(profile).map_err(|e| ProfileError::invalid(path, e))?;
    let bytes = encode(profile).map_err(|e| ProfileError::Encode {
        path: path.to_path_buf(),
        reason: e.to_string(),
    })?;
    write_atomically(path, &bytes).map_err(|source| ProfileError::Write {
        path: path.to_path_buf(),
        source,
    })
}

/// Reads and validates the HDF5 noise profile at `path`.
///
/// Errors name the file and, for an incomplete or invalid profile, the HDF5 object at fault.
/// A corrupt or truncated file gives [`ProfileError::NotHdf5`], never a panic.
pub fn read_profile(path: impl AsRef<Path>) -> Result<Profile, ProfileError> {
    let path = path.as_ref();
    let bytes = fs::read(path).map_err(|source| ProfileError::Read {
        path: path.to_path_buf(),
        source,
    })?;
    read_profile_from_bytes(bytes, path)
}

/// Decodes and validates a noise profile held in memory (the whole HDF5 file image). `path`
/// is only used to name the profile in error messages.
pub fn read_profile_from_bytes(
    bytes: Vec<u8>,
    path: impl AsRef<Path>,
) -> Result<Profile, ProfileError> {
    let path = path.as_ref();
    if !hdf5_pure::is_hdf5_bytes(&bytes) {
        let reason = if bytes.is_empty() {
            "the file is empty".to_string()
        } else {
            format!(
                "no HDF5 signature in its first {} bytes",
                bytes.len().min(8)
            )
        };
        return Err(not_hdf5(path, reason));
    }
    // hdf5-pure reports malformed input as errors; the guard keeps a bug there from taking the
    // whole simulator down on a damaged file.
    match panic::catch_unwind(AssertUnwindSafe(|| decode(path, bytes))) {
        Ok(r) => r,
        Err(_) => Err(not_hdf5(path, "the HDF5 decoder failed on malformed data")),
    }
}

fn not_hdf5(path: &Path, reason: impl Into<String>) -> ProfileError {
    ProfileError::NotHdf5 {
        path: path.to_path_buf(),
        reason: reason.into(),
    }
}

// ----------------------------------------------------------------------------------------------
// Writing

/// Through `loggops_output::write_atomic`, the one writer of the project: a regular file is
/// replaced atomically, a device or FIFO written through, a read-only file refused.
fn write_atomically(path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    loggops_output::write_atomic(path, |w| w.write_all(bytes))
}

fn vlen(s: &str) -> AttrValue {
    AttrValue::VarLenString(s.to_string())
}

fn encode(p: &Profile) -> Result<Vec<u8>, hdf5_pure::Error> {
    let mut fb = FileBuilder::new();
    fb.set_attr(schema::ATTR_SCHEMA, vlen(SCHEMA_NAME));
    fb.set_attr(
        schema::ATTR_SCHEMA_VERSION,
        AttrValue::I64(version_needed(p)),
    );
    fb.set_attr(schema::ATTR_SYSTEM, vlen(&p.system));
    fb.set_attr(schema::ATTR_DESCRIPTION, vlen(&p.description));
    fb.set_attr(
        schema::ATTR_NODES_PER_SWITCH,
        AttrValue::U32(p.nodes_per_switch),
    );
    if let Some(m) = p.mpi_progress {
        fb.set_attr(schema::ATTR_MPI_PROGRESS, vlen(m.name()));
    }
    if let Some(c) = p.clock {
        fb.set_attr(
            schema::ATTR_CLOCK_RESOLUTION,
            AttrValue::F64(c.resolution_ps),
        );
        fb.set_attr(schema::ATTR_CLOCK_READ, AttrValue::F64(c.read_ps));
    }

    let near = placement_group(fb.create_group("near"), &p.near);
    fb.add_group(near);
    if let Some(far) = &p.far {
        let far = placement_group(fb.create_group("far"), far);
        fb.add_group(far);
    }

    let os = os_noise_group(fb.create_group("os_noise"), &p.os_noise);
    fb.add_group(os);
    if p.calibration != Calibration::PaperTable {
        fb.set_attr(schema::ATTR_CALIBRATION, vlen(p.calibration.as_str()));
    }
    if !p.day.is_empty() {
        fb.set_attr(schema::ATTR_DAY, vlen(&p.day));
    }
    if !p.days.is_empty() {
        let mut days = fb.create_group(schema::DAYS.trim_start_matches('/'));
        for (k, d) in p.days.iter().enumerate() {
            let mut g = days.create_group(&format!("{}{k}", schema::DAY_PREFIX));
            g.set_attr(schema::ATTR_LABEL, vlen(&d.label));
            if let Some(w) = d.weight {
                g.set_attr(schema::ATTR_WEIGHT, AttrValue::F64(w));
            }
            if d.episode {
                g.set_attr(schema::ATTR_KIND, vlen(schema::KIND_EPISODE));
            }
            let near = placement_group(g.create_group("near"), &d.near);
            g.add_group(near);
            if let Some(far) = &d.far {
                let far = placement_group(g.create_group("far"), far);
                g.add_group(far);
            }
            let os = os_noise_group(g.create_group("os_noise"), &d.os_noise);
            g.add_group(os);
            days.add_group(g.finish());
        }
        fb.add_group(days.finish());
    }

    let mut prices = fb.create_group("prices");
    if let Some(v) = p.prices.on_demand_usd_per_node_hour {
        prices.set_attr(schema::ATTR_ON_DEMAND, AttrValue::F64(v));
    }
    if let Some(v) = p.prices.committed_usd_per_node_hour {
        prices.set_attr(schema::ATTR_COMMITTED, AttrValue::F64(v));
    }
    let spot = &p.prices.spot;
    if let Some(v) = spot.usd_per_node_hour {
        prices.set_attr(schema::ATTR_SPOT, AttrValue::F64(v));
    }
    if let Some(v) = spot.interruptions_per_node_hour {
        prices.set_attr(schema::ATTR_SPOT_RATE, AttrValue::F64(v));
    }
    if !spot.source.is_empty() {
        prices.set_attr(schema::ATTR_SPOT_SOURCE, vlen(&spot.source));
    }
    if !spot.date.is_empty() {
        prices.set_attr(schema::ATTR_SPOT_DATE, vlen(&spot.date));
    }
    fb.add_group(prices.finish());

    let pv = &p.provenance;
    let mut prov = fb.create_group("provenance");
    prov.set_attr(schema::ATTR_COMMAND, vlen(&pv.command));
    prov.set_attr(schema::ATTR_CREATED, vlen(&pv.created));
    prov.set_attr(schema::ATTR_TOOL_VERSION, vlen(&pv.tool_version));
    for (name, list) in [
        (schema::ATTR_SOURCES, &pv.sources),
        (schema::ATTR_NOTES, &pv.notes),
    ] {
        if !list.is_empty() {
            prov.set_attr(name, AttrValue::VarLenStringArray(list.clone()));
        }
    }
    fb.add_group(prov.finish());

    fb.finish()
}

fn os_noise_group(mut os: GroupBuilder, n: &OsNoise) -> hdf5_pure::FinishedGroup {
    for (k, t) in n.traces.iter().enumerate() {
        let mut g = os.create_group(&format!("{}{k}", schema::TRACE_PREFIX));
        g.set_attr(schema::ATTR_PERIOD, AttrValue::U64(t.period_ps));
        u64_dataset(&mut g, schema::START, &t.start_ps);
        u64_dataset(&mut g, schema::DURATION, &t.duration_ps);
        os.add_group(g.finish());
    }
    if let Some(proc_) = &n.process {
        let mut g = os.create_group("process");
        g.set_attr(schema::ATTR_RATE, AttrValue::F64(proc_.rate_per_s));
        let d = distribution_group(g.create_group("duration"), Unit::Ps, &proc_.duration_ps);
        g.add_group(d);
        os.add_group(g.finish());
    }
    os.finish()
}

/// Every placement of `p`: its own and those of its days.
fn every(p: &Profile) -> impl Iterator<Item = &Placement> {
    std::iter::once(&p.near).chain(p.far.as_ref()).chain(
        p.days
            .iter()
            .flat_map(|d| std::iter::once(&d.near).chain(d.far.as_ref())),
    )
}

/// The oldest schema version that holds `p`: 9 with a clock; 8 with weighted days or latency episodes; 7 with
/// a latency by size; 6 with bandwidth levels; 5 with spot capacity; 4 with an idle table of more than one level; 3 with a
/// calibration other than the paper's table, a latency after idle periods, capture days or
/// `mpi_progress`; else 2 when a quantile table has an exact tail, else 1 (so profiles
/// without them stay readable by older builds).
fn version_needed(p: &Profile) -> i64 {
    if p.clock.is_some() {
        return schema::CLOCK_SCHEMA_VERSION;
    }
    if p.days.iter().any(|d| d.weight.is_some() || d.episode) {
        return schema::STATES_SCHEMA_VERSION;
    }
    if every(p).any(|pl| pl.latency_by_size.is_some()) {
        return schema::SIZE_LATENCY_SCHEMA_VERSION;
    }
    if every(p).any(|pl| pl.bandwidth_levels.is_some()) {
        return schema::LEVELS_SCHEMA_VERSION;
    }
    if !p.prices.spot.is_empty() {
        return schema::SPOT_SCHEMA_VERSION;
    }
    if every(p)
        .filter_map(|pl| pl.after_idle.as_ref())
        .any(|a| a.as_step().is_none())
    {
        return schema::IDLE_TABLE_SCHEMA_VERSION;
    }
    if p.mpi_progress.is_some() {
        return schema::MPI_PROGRESS_SCHEMA_VERSION;
    }
    let has_tail =
        |d: Option<&Distribution>| matches!(d, Some(Distribution::Quantiles { tail: Some(_), .. }));
    let placements = std::iter::once(&p.near).chain(p.far.as_ref());
    if p.calibration != Calibration::PaperTable
        || !p.day.is_empty()
        || !p.days.is_empty()
        || placements.clone().any(|pl| pl.after_idle.is_some())
    {
        return schema::CAPTURES_SCHEMA_VERSION;
    }
    let any = placements
        .flat_map(|pl| [&pl.latency, &pl.bandwidth, &pl.overhead, &pl.gap])
        .any(|d| has_tail(d.as_ref()))
        || has_tail(p.os_noise.process.as_ref().map(|pr| &pr.duration_ps));
    if any {
        schema::TAIL_SCHEMA_VERSION
    } else {
        MIN_SCHEMA_VERSION
    }
}

fn placement_group(mut g: GroupBuilder, p: &Placement) -> hdf5_pure::FinishedGroup {
    let b = &p.params;
    g.set_attr(schema::ATTR_L, AttrValue::F64(b.l_ps));
    g.set_attr(schema::ATTR_O, AttrValue::F64(b.o_ps));
    g.set_attr(schema::ATTR_G, AttrValue::F64(b.g_ps));
    g.set_attr(schema::ATTR_BIG_G, AttrValue::F64(b.big_g_ps_per_byte));
    g.set_attr(schema::ATTR_BIG_O, AttrValue::F64(b.big_o_ps_per_byte));
    g.set_attr(schema::ATTR_S, AttrValue::U64(b.s_bytes));
    g.set_attr(schema::ATTR_BLOCK, AttrValue::U64(p.bandwidth_block_bytes));
    for ((name, unit), d) in [
        (schema::LATENCY, &p.latency),
        (schema::BANDWIDTH, &p.bandwidth),
        (schema::OVERHEAD, &p.overhead),
        (schema::GAP, &p.gap),
        (schema::BANDWIDTH_LEVELS, &p.bandwidth_levels),
    ] {
        if let Some(d) = d {
            let sub = distribution_group(g.create_group(name), unit, d);
            g.add_group(sub);
        }
    }
    if let Some(t) = &p.latency_by_size {
        let mut sub = g.create_group(schema::LATENCY_BY_SIZE);
        u64_dataset(&mut sub, schema::SIZE_BYTES, &t.sizes_bytes);
        f64_dataset(&mut sub, schema::EXTRA_PS, &t.extra_ps);
        g.add_group(sub.finish());
    }
    match p.after_idle.as_ref().map(|a| (a, a.as_step())) {
        None => {}
        // A version-3 step keeps its version-3 form, so older builds read it.
        Some((_, Some((threshold_ps, latency)))) => {
            let (name, unit) = schema::LATENCY_AFTER_IDLE;
            let mut sub = g.create_group(name);
            sub.set_attr(schema::ATTR_IDLE_THRESHOLD, AttrValue::F64(threshold_ps));
            let sub = distribution_into(sub, unit, latency);
            g.add_group(sub);
        }
        Some((a, None)) => {
            let mut table = g.create_group(schema::AFTER_IDLE);
            for (k, level) in a.levels.iter().enumerate() {
                let mut lg = table.create_group(&format!("{}{k}", schema::LEVEL_PREFIX));
                lg.set_attr(schema::ATTR_FROM, AttrValue::F64(level.from_ps));
                lg.set_attr(
                    schema::ATTR_PER_BYTE_FACTOR,
                    AttrValue::F64(level.per_byte_factor),
                );
                if let Some(d) = &level.latency {
                    let sub = distribution_group(lg.create_group(schema::LATENCY.0), Unit::Ps, d);
                    lg.add_group(sub);
                }
                table.add_group(lg.finish());
            }
            g.add_group(table.finish());
        }
    }
    g.finish()
}

fn distribution_group(g: GroupBuilder, unit: Unit, d: &Distribution) -> hdf5_pure::FinishedGroup {
    distribution_into(g, unit, d)
}

fn distribution_into(
    mut g: GroupBuilder,
    unit: Unit,
    d: &Distribution,
) -> hdf5_pure::FinishedGroup {
    match d {
        Distribution::Samples(s) => f64_dataset(&mut g, &schema::samples_name(unit), s),
        Distribution::Quantiles {
            probs,
            values,
            tail,
        } => {
            f64_dataset(&mut g, schema::PROBS, probs);
            f64_dataset(&mut g, &schema::values_name(unit), values);
            if let Some(t) = tail {
                f64_dataset(&mut g, &schema::tail_name(unit), &t.values);
                g.set_attr(schema::ATTR_SAMPLE_COUNT, AttrValue::U64(t.sample_count));
            }
        }
    }
    g.finish()
}

/// Storage of a non-empty numeric dataset: chunked with a Fletcher-32 checksum per chunk (so
/// a damaged value is an error, not a silently different profile), plus shuffle and deflate
/// for large ones. All three are filters built into every HDF5 library.
fn storage(d: &mut hdf5_pure::DatasetBuilder, len: usize) {
    d.with_chunks(&[len.min(MAX_CHUNK_ELEMENTS) as u64]);
    if len >= COMPRESS_MIN_ELEMENTS {
        d.with_shuffle().with_deflate(DEFLATE_LEVEL);
    }
    d.with_fletcher32();
}

fn f64_dataset(g: &mut GroupBuilder, name: &str, data: &[f64]) {
    let d = g.create_dataset(name);
    if data.is_empty() {
        d.with_dtype(hdf5_pure::make_f64_type()).with_shape(&[0]);
    } else {
        d.with_f64_data(data);
        storage(d, data.len());
    }
}

fn u64_dataset(g: &mut GroupBuilder, name: &str, data: &[u64]) {
    let d = g.create_dataset(name);
    if data.is_empty() {
        d.with_dtype(hdf5_pure::make_u64_type()).with_shape(&[0]);
    } else {
        d.with_u64_data(data);
        storage(d, data.len());
    }
}

// ----------------------------------------------------------------------------------------------
// Reading

/// Decoding context: the file's path (for messages) and the parsed HDF5 file.
struct Reader<'a> {
    path: &'a Path,
    file: File,
    /// The file's `schema_version` (once checked).
    version: i64,
}

/// The attributes of one object: decoded values, and the datatype of every attribute message
/// (including those whose value could not be decoded, which `values` leaves out).
struct Attrs {
    object: String,
    values: HashMap<String, AttrValue>,
    types: HashMap<String, hdf5_pure::Datatype>,
}

fn decode(path: &Path, bytes: Vec<u8>) -> Result<Profile, ProfileError> {
    let len = bytes.len() as u64;
    let file = File::from_bytes(bytes).map_err(|e| not_hdf5(path, e.to_string()))?;
    // As libhdf5 does: a file shorter than the end-of-file address its superblock records has
    // lost its tail, even where everything still parses (the lost bytes may be heap padding).
    let sb = file.superblock();
    let end = sb.base_address.get().saturating_add(sb.eof_address);
    if end > len {
        return Err(not_hdf5(
            path,
            format!("the file is truncated: it has {len} bytes, but its superblock says it ends at byte {end}"),
        ));
    }
    let mut r = Reader {
        path,
        file,
        version: 0,
    };
    let root = r.file.root();
    let attrs = r.attrs(&root, "/")?;
    r.version = r.check_schema(&attrs)?;

    let system = r.req_str(&attrs, "/", schema::ATTR_SYSTEM)?;
    let description = r.req_str(&attrs, "/", schema::ATTR_DESCRIPTION)?;
    let nps = r.req_u64(&attrs, "/", schema::ATTR_NODES_PER_SWITCH)?;
    let nodes_per_switch = u32::try_from(nps).map_err(|_| {
        r.invalid(
            schema::attr_object("/", schema::ATTR_NODES_PER_SWITCH),
            format!("is {nps}, expected at most {} nodes per switch", u32::MAX),
        )
    })?;

    let mpi_progress = r.mpi_progress(&attrs)?;
    let clock = r.clock(&attrs)?;
    let near = r.placement("/near", r.req_group("/near")?)?;
    let far = match r.group("/far")? {
        Some(g) => Some(r.placement("/far", g)?),
        None => None,
    };
    let os_noise = r.os_noise("")?;
    let prices = r.prices()?;
    let provenance = r.provenance()?;
    let calibration = match r.opt_str(&attrs, "/", schema::ATTR_CALIBRATION)? {
        None => Calibration::PaperTable,
        Some(c) => Calibration::parse(&c).ok_or_else(|| {
            r.invalid(
                schema::attr_object("/", schema::ATTR_CALIBRATION),
                format!("is {c:?}, expected \"paper-table\" or \"captures\""),
            )
        })?,
    };
    let day = r
        .opt_str(&attrs, "/", schema::ATTR_DAY)?
        .unwrap_or_default();
    let days = r.days()?;

    let profile = Profile {
        system,
        description,
        near,
        far,
        nodes_per_switch,
        os_noise,
        prices,
        provenance,
        calibration,
        day,
        days,
        mpi_progress,
        clock,
    };
    validate::validate(&profile).map_err(|e| ProfileError::invalid(path, e))?;
    Ok(profile)
}

fn is_not_found(e: &hdf5_pure::Error) -> bool {
    matches!(e, hdf5_pure::Error::Format(FormatError::PathNotFound(_)))
}

fn describe(v: &AttrValue) -> String {
    if let Some(s) = v.as_str() {
        format!("{s:?}")
    } else if let Some(i) = v.as_i64() {
        format!("{i}")
    } else if let Some(u) = v.as_u64() {
        format!("{u}")
    } else if let Some(f) = v.as_f64() {
        format!("{f:?} (a float)")
    } else {
        format!("{v:?}")
    }
}

impl Reader<'_> {
    fn corrupt(&self, object: &str, e: hdf5_pure::Error) -> ProfileError {
        let hint = match e {
            // HDF5 2.x writes chunked datasets with layout message version 5 when the file's
            // lower format bound is v200 (h5py `libver="latest"`); hdf5-pure 0.47 reads up to 4.
            hdf5_pure::Error::Format(FormatError::InvalidLayoutVersion(v)) if v > 4 => format!(
                " (data layout version {v} comes from HDF5 2.x with libver \"latest\"/\"v200\"; \
                 rewrite the file with h5py's default libver or libver=\"v114\")"
            ),
            _ => String::new(),
        };
        not_hdf5(self.path, format!("cannot read `{object}`: {e}{hint}"))
    }

    fn invalid(&self, object: impl Into<String>, reason: impl Into<String>) -> ProfileError {
        ProfileError::invalid(self.path, Invalid::new(object, reason))
    }

    fn missing_attr(&self, object: &str, attribute: &str) -> ProfileError {
        ProfileError::MissingAttribute {
            path: self.path.to_path_buf(),
            object: object.to_string(),
            attribute: attribute.to_string(),
        }
    }

    /// Checks the schema name and returns the (supported) schema version.
    fn check_schema(&self, attrs: &Attrs) -> Result<i64, ProfileError> {
        let found = match self.attr(attrs, schema::ATTR_SCHEMA)? {
            None => Some("absent".to_string()),
            Some(v) if v.as_str() == Some(SCHEMA_NAME) => None,
            Some(v) => Some(describe(v)),
        };
        if let Some(found) = found {
            return Err(ProfileError::WrongSchema {
                path: self.path.to_path_buf(),
                found,
                expected: SCHEMA_NAME,
            });
        }
        let v = self
            .attr(attrs, schema::ATTR_SCHEMA_VERSION)?
            .ok_or_else(|| self.missing_attr("/", schema::ATTR_SCHEMA_VERSION))?;
        match v.as_i64() {
            Some(version) if (MIN_SCHEMA_VERSION..=SCHEMA_VERSION).contains(&version) => {
                Ok(version)
            }
            _ => Err(ProfileError::UnsupportedVersion {
                path: self.path.to_path_buf(),
                found: describe(v),
                oldest: MIN_SCHEMA_VERSION,
                expected: SCHEMA_VERSION,
            }),
        }
    }

    /// Opens the group at absolute schema path `gpath`; `None` if absent.
    fn group(&self, gpath: &str) -> Result<Option<Group>, ProfileError> {
        match self.file.group(gpath.trim_start_matches('/')) {
            Ok(g) => Ok(Some(g)),
            Err(e) if is_not_found(&e) => Ok(None),
            Err(hdf5_pure::Error::NotAGroup(_)) => {
                Err(self.invalid(gpath, "is a dataset, expected a group"))
            }
            Err(e) => Err(self.corrupt(gpath, e)),
        }
    }

    fn req_group(&self, gpath: &str) -> Result<Group, ProfileError> {
        self.group(gpath)?
            .ok_or_else(|| ProfileError::MissingGroup {
                path: self.path.to_path_buf(),
                group: gpath.to_string(),
            })
    }

    fn attrs(&self, g: &Group, gpath: &str) -> Result<Attrs, ProfileError> {
        Ok(Attrs {
            object: gpath.to_string(),
            values: g.attrs().map_err(|e| self.corrupt(gpath, e))?,
            types: g.attr_datatypes().map_err(|e| self.corrupt(gpath, e))?,
        })
    }

    /// Attribute `name`; `None` if absent. An attribute that exists but whose value cannot be
    /// decoded (e.g. its string lies in a damaged heap) is a corrupt file, not a missing value.
    fn attr<'a>(
        &self,
        attrs: &'a Attrs,
        name: &str,
    ) -> Result<Option<&'a AttrValue>, ProfileError> {
        match attrs.values.get(name) {
            Some(v) => Ok(Some(v)),
            None if attrs.types.contains_key(name) => Err(not_hdf5(
                self.path,
                format!(
                    "cannot decode the value of attribute `{name}` of `{}` (its datatype is {:?})",
                    attrs.object, attrs.types[name]
                ),
            )),
            None => Ok(None),
        }
    }

    /// A version-3 string attribute; `None` if absent (an error in an older file).
    fn opt_str(
        &self,
        attrs: &Attrs,
        obj: &str,
        name: &str,
    ) -> Result<Option<String>, ProfileError> {
        if self.attr(attrs, name)?.is_none() {
            return Ok(None);
        }
        self.need_v3(&schema::attr_object(obj, name))?;
        self.req_str(attrs, obj, name).map(Some)
    }

    /// An error unless the file is of schema version 3 or later (`object` is a version-3
    /// object found in it).
    fn need_v3(&self, object: &str) -> Result<(), ProfileError> {
        self.need_version(object, schema::CAPTURES_SCHEMA_VERSION)
    }

    /// An error unless the file is of schema version `version` or later (`object`, found in
    /// it, needs that version).
    fn need_version(&self, object: &str, version: i64) -> Result<(), ProfileError> {
        if self.version < version {
            return Err(self.invalid(
                object,
                format!(
                    "needs schema_version {version} or later, but the file has schema_version {}",
                    self.version
                ),
            ));
        }
        Ok(())
    }

    /// The capture days under `/days` (empty if absent).
    fn days(&self) -> Result<Vec<Day>, ProfileError> {
        let Some(g) = self.group(schema::DAYS)? else {
            return Ok(Vec::new());
        };
        self.need_v3(schema::DAYS)?;
        let names = g.groups().map_err(|e| self.corrupt(schema::DAYS, e))?;
        let count = self.numbered(schema::DAYS, &names, schema::DAY_PREFIX, "day_<k>")?;
        let mut days = Vec::with_capacity(count);
        for k in 0..count {
            let dpath = schema::day_group(k);
            let dg = self.req_group(&dpath)?;
            let a = self.attrs(&dg, &dpath)?;
            let label = self.req_str(&a, &dpath, schema::ATTR_LABEL)?;
            let near_path = format!("{dpath}/near");
            let near = self.placement(&near_path, self.req_group(&near_path)?)?;
            let far_path = format!("{dpath}/far");
            let far = match self.group(&far_path)? {
                Some(fg) => Some(self.placement(&far_path, fg)?),
                None => None,
            };
            let os_noise = self.os_noise(&dpath)?;
            let weight = self.opt_f64(&a, &dpath, schema::ATTR_WEIGHT)?;
            if weight.is_some() {
                self.need_version(
                    &schema::attr_object(&dpath, schema::ATTR_WEIGHT),
                    schema::STATES_SCHEMA_VERSION,
                )?;
            }
            let kind = self.opt_str(&a, &dpath, schema::ATTR_KIND)?;
            let episode = match kind.as_deref() {
                None => false,
                Some(schema::KIND_EPISODE) => {
                    self.need_version(
                        &schema::attr_object(&dpath, schema::ATTR_KIND),
                        schema::STATES_SCHEMA_VERSION,
                    )?;
                    true
                }
                Some(other) => {
                    return Err(self.invalid(
                        schema::attr_object(&dpath, schema::ATTR_KIND),
                        format!("is `{other}`, expected `{}`", schema::KIND_EPISODE),
                    ))
                }
            };
            days.push(Day {
                label,
                near,
                far,
                os_noise,
                weight,
                episode,
            });
        }
        Ok(days)
    }

    /// The number of groups named `<prefix><k>` among `names` (k = 0, 1, … without gaps) in
    /// group `gpath`; other names are ignored.
    fn numbered(
        &self,
        gpath: &str,
        names: &[String],
        prefix: &str,
        pattern: &str,
    ) -> Result<usize, ProfileError> {
        let mut indices = Vec::new();
        for n in names {
            if let Some(k) = n.strip_prefix(prefix) {
                let idx = k
                    .parse::<usize>()
                    .ok()
                    .filter(|i| i.to_string() == k)
                    .ok_or_else(|| {
                        self.invalid(
                            format!("{gpath}/{n}"),
                            format!("is not a valid name, expected {pattern} with k = 0, 1, 2, …"),
                        )
                    })?;
                indices.push(idx);
            }
        }
        indices.sort_unstable();
        for (want, &got) in indices.iter().enumerate() {
            if want != got {
                return Err(ProfileError::MissingGroup {
                    path: self.path.to_path_buf(),
                    group: format!("{gpath}/{prefix}{want}"),
                });
            }
        }
        Ok(indices.len())
    }

    fn req_str(&self, attrs: &Attrs, obj: &str, name: &str) -> Result<String, ProfileError> {
        let v = self
            .attr(attrs, name)?
            .ok_or_else(|| self.missing_attr(obj, name))?;
        v.as_str().map(str::to_string).ok_or_else(|| {
            self.invalid(
                schema::attr_object(obj, name),
                format!("is {}, expected a string", describe(v)),
            )
        })
    }

    /// The root attributes `clock_resolution_ps` and `clock_read_ps` (schema version 9): both
    /// or neither.
    fn clock(&self, attrs: &Attrs) -> Result<Option<Clock>, ProfileError> {
        let res = self.opt_f64(attrs, "/", schema::ATTR_CLOCK_RESOLUTION)?;
        let read = self.opt_f64(attrs, "/", schema::ATTR_CLOCK_READ)?;
        for (name, v) in [
            (schema::ATTR_CLOCK_RESOLUTION, res),
            (schema::ATTR_CLOCK_READ, read),
        ] {
            if v.is_some() {
                self.need_version(
                    &schema::attr_object("/", name),
                    schema::CLOCK_SCHEMA_VERSION,
                )?;
            }
        }
        match (res, read) {
            (None, None) => Ok(None),
            (Some(resolution_ps), Some(read_ps)) => Ok(Some(Clock {
                resolution_ps,
                read_ps,
            })),
            (Some(_), None) => Err(self.missing_attr("/", schema::ATTR_CLOCK_READ)),
            (None, Some(_)) => Err(self.missing_attr("/", schema::ATTR_CLOCK_RESOLUTION)),
        }
    }

    /// The root attribute `mpi_progress` (schema version 3), if present.
    fn mpi_progress(&self, attrs: &Attrs) -> Result<Option<MpiProgress>, ProfileError> {
        let name = schema::ATTR_MPI_PROGRESS;
        let Some(v) = self.attr(attrs, name)? else {
            return Ok(None);
        };
        let object = schema::attr_object("/", name);
        self.need_version(&object, schema::MPI_PROGRESS_SCHEMA_VERSION)?;
        match v.as_str().and_then(MpiProgress::from_name) {
            Some(m) => Ok(Some(m)),
            None => Err(self.invalid(
                object,
                format!("is {}, expected \"async\" or \"polled\"", describe(v)),
            )),
        }
    }

    fn opt_strings(
        &self,
        attrs: &Attrs,
        obj: &str,
        name: &str,
    ) -> Result<Vec<String>, ProfileError> {
        match self.attr(attrs, name)? {
            None => Ok(Vec::new()),
            Some(v) => v.as_strings().map(<[String]>::to_vec).ok_or_else(|| {
                self.invalid(
                    schema::attr_object(obj, name),
                    format!(
                        "is {}, expected a string or an array of strings",
                        describe(v)
                    ),
                )
            }),
        }
    }

    fn req_u64(&self, attrs: &Attrs, obj: &str, name: &str) -> Result<u64, ProfileError> {
        let v = self
            .attr(attrs, name)?
            .ok_or_else(|| self.missing_attr(obj, name))?;
        v.as_u64().ok_or_else(|| {
            self.invalid(
                schema::attr_object(obj, name),
                format!("is {}, expected a non-negative integer", describe(v)),
            )
        })
    }

    /// A number attribute; integers are accepted and converted.
    fn opt_f64(&self, attrs: &Attrs, obj: &str, name: &str) -> Result<Option<f64>, ProfileError> {
        let Some(v) = self.attr(attrs, name)? else {
            return Ok(None);
        };
        if let Some(f) = v.as_f64() {
            Ok(Some(f))
        } else if let Some(i) = v.as_i64() {
            Ok(Some(i as f64))
        } else if let Some(u) = v.as_u64() {
            Ok(Some(u as f64))
        } else {
            Err(self.invalid(
                schema::attr_object(obj, name),
                format!("is {}, expected a number", describe(v)),
            ))
        }
    }

    fn req_f64(&self, attrs: &Attrs, obj: &str, name: &str) -> Result<f64, ProfileError> {
        self.opt_f64(attrs, obj, name)?
            .ok_or_else(|| self.missing_attr(obj, name))
    }

    /// Opens dataset `name` of group `gpath`, checks it is 1-D, and returns it with its type.
    fn dataset(
        &self,
        g: &Group,
        gpath: &str,
        name: &str,
    ) -> Result<Option<(Dataset, DType)>, ProfileError> {
        let dpath = format!("{gpath}/{name}");
        let ds = match g.dataset(name) {
            Ok(d) => d,
            Err(e) if is_not_found(&e) => return Ok(None),
            Err(hdf5_pure::Error::NotADataset(_)) => {
                return Err(self.invalid(dpath, "is a group, expected a dataset"))
            }
            Err(e) => return Err(self.corrupt(&dpath, e)),
        };
        let shape = ds.shape().map_err(|e| self.corrupt(&dpath, e))?;
        if shape.len() != 1 {
            return Err(self.invalid(
                dpath,
                format!("has shape {shape:?}, expected a 1-D dataset"),
            ));
        }
        let dtype = ds.dtype().map_err(|e| self.corrupt(&dpath, e))?;
        Ok(Some((ds, dtype)))
    }

    fn f64_dataset(
        &self,
        g: &Group,
        gpath: &str,
        name: &str,
    ) -> Result<Option<Vec<f64>>, ProfileError> {
        let Some((ds, dtype)) = self.dataset(g, gpath, name)? else {
            return Ok(None);
        };
        let dpath = format!("{gpath}/{name}");
        match dtype {
            DType::F32
            | DType::F64
            | DType::I8
            | DType::I16
            | DType::I32
            | DType::I64
            | DType::U8
            | DType::U16
            | DType::U32
            | DType::U64 => {}
            other => {
                return Err(
                    self.invalid(dpath, format!("has element type {other}, expected float64"))
                )
            }
        }
        ds.read_f64().map(Some).map_err(|e| self.corrupt(&dpath, e))
    }

    fn u64_dataset(&self, g: &Group, gpath: &str, name: &str) -> Result<Vec<u64>, ProfileError> {
        let dpath = format!("{gpath}/{name}");
        let Some((ds, dtype)) = self.dataset(g, gpath, name)? else {
            return Err(ProfileError::MissingDataset {
                path: self.path.to_path_buf(),
                dataset: dpath,
            });
        };
        match dtype {
            DType::U8 | DType::U16 | DType::U32 | DType::U64 => {
                ds.read_u64().map_err(|e| self.corrupt(&dpath, e))
            }
            DType::I8 | DType::I16 | DType::I32 | DType::I64 => {
                let v = ds.read_i64().map_err(|e| self.corrupt(&dpath, e))?;
                v.iter()
                    .enumerate()
                    .map(|(i, &x)| {
                        u64::try_from(x).map_err(|_| {
                            self.invalid(
                                &dpath,
                                format!("{name}[{i}] is {x} ps, expected a non-negative integer"),
                            )
                        })
                    })
                    .collect()
            }
            other => Err(self.invalid(dpath, format!("has element type {other}, expected uint64"))),
        }
    }

    /// Reads the distribution in group `gpath`; `None` if the group is absent.
    fn distribution(&self, gpath: &str, unit: Unit) -> Result<Option<Distribution>, ProfileError> {
        let Some(g) = self.group(gpath)? else {
            return Ok(None);
        };
        let sname = schema::samples_name(unit);
        let vname = schema::values_name(unit);
        let tname = schema::tail_name(unit);
        let samples = self.f64_dataset(&g, gpath, &sname)?;
        let probs = self.f64_dataset(&g, gpath, schema::PROBS)?;
        let values = self.f64_dataset(&g, gpath, &vname)?;
        let tail = self.f64_dataset(&g, gpath, &tname)?;
        let missing = |name: &str| ProfileError::MissingDataset {
            path: self.path.to_path_buf(),
            dataset: format!("{gpath}/{name}"),
        };
        match (samples, probs, values) {
            (Some(_), _, _) if tail.is_some() => Err(self.invalid(
                gpath,
                format!(
                    "holds both `{sname}` and `{tname}`; an exact tail belongs to a quantile table (`{}` and `{vname}`)",
                    schema::PROBS
                ),
            )),
            (Some(s), None, None) => Ok(Some(Distribution::Samples(s))),
            (None, Some(probs), Some(values)) => {
                let tail = match tail {
                    None => None,
                    Some(t) => Some(self.exact_tail(&g, gpath, &tname, t)?),
                };
                Ok(Some(Distribution::Quantiles {
                    probs,
                    values,
                    tail,
                }))
            }
            (None, None, None) if tail.is_some() => Err(missing(schema::PROBS)),
            (None, None, None) => Err(self.invalid(
                gpath,
                format!(
                    "holds no distribution: expected datasets `{}` and `{vname}` (a quantile table) or `{sname}` (raw samples)",
                    schema::PROBS
                ),
            )),
            (None, Some(_), None) => Err(missing(&vname)),
            (None, None, Some(_)) => Err(missing(schema::PROBS)),
            (Some(_), _, _) => Err(self.invalid(
                gpath,
                format!(
                    "holds both `{sname}` and a quantile table; keep exactly one of them"
                ),
            )),
        }
    }

    /// The exact tail `values` of the quantile table in `g`, with its `sample_count`.
    fn exact_tail(
        &self,
        g: &Group,
        gpath: &str,
        tname: &str,
        values: Vec<f64>,
    ) -> Result<ExactTail, ProfileError> {
        if self.version < schema::TAIL_SCHEMA_VERSION {
            return Err(self.invalid(
                format!("{gpath}/{tname}"),
                format!(
                    "is an exact tail, which needs schema_version {} or later, but the file has schema_version {}",
                    schema::TAIL_SCHEMA_VERSION,
                    self.version
                ),
            ));
        }
        let a = self.attrs(g, gpath)?;
        let sample_count = self.req_u64(&a, gpath, schema::ATTR_SAMPLE_COUNT)?;
        Ok(ExactTail {
            values,
            sample_count,
        })
    }

    fn placement(&self, gpath: &str, g: Group) -> Result<Placement, ProfileError> {
        let a = self.attrs(&g, gpath)?;
        let params = BaseParams {
            l_ps: self.req_f64(&a, gpath, schema::ATTR_L)?,
            o_ps: self.req_f64(&a, gpath, schema::ATTR_O)?,
            g_ps: self.req_f64(&a, gpath, schema::ATTR_G)?,
            big_g_ps_per_byte: self.req_f64(&a, gpath, schema::ATTR_BIG_G)?,
            big_o_ps_per_byte: self.req_f64(&a, gpath, schema::ATTR_BIG_O)?,
            s_bytes: self.req_u64(&a, gpath, schema::ATTR_S)?,
        };
        let bandwidth_block_bytes = self.req_u64(&a, gpath, schema::ATTR_BLOCK)?;
        let sub = |(name, unit): (&str, Unit)| self.distribution(&format!("{gpath}/{name}"), unit);
        let step = match sub(schema::LATENCY_AFTER_IDLE)? {
            None => None,
            Some(latency) => {
                let apath = format!("{gpath}/{}", schema::LATENCY_AFTER_IDLE.0);
                self.need_v3(&apath)?;
                let ag = self.req_group(&apath)?;
                let a = self.attrs(&ag, &apath)?;
                Some(AfterIdle::step(
                    self.req_f64(&a, &apath, schema::ATTR_IDLE_THRESHOLD)?,
                    latency,
                ))
            }
        };
        let table = self.idle_table(gpath)?;
        let after_idle = match (step, table) {
            (Some(_), Some(_)) => {
                return Err(self.invalid(
                    format!("{gpath}/{}", schema::AFTER_IDLE),
                    format!(
                        "is given together with {gpath}/{}; keep one of them (a step is a table of one level)",
                        schema::LATENCY_AFTER_IDLE.0
                    ),
                ))
            }
            (a, b) => a.or(b),
        };
        Ok(Placement {
            params,
            latency: sub(schema::LATENCY)?,
            bandwidth: sub(schema::BANDWIDTH)?,
            bandwidth_block_bytes,
            overhead: sub(schema::OVERHEAD)?,
            gap: sub(schema::GAP)?,
            after_idle,
            bandwidth_levels: self.bandwidth_levels(gpath)?,
            latency_by_size: self.latency_by_size(gpath)?,
        })
    }

    /// The latency by size `<gpath>/latency_by_size` (schema version 7), if present.
    fn latency_by_size(&self, gpath: &str) -> Result<Option<SizeLatency>, ProfileError> {
        let path = format!("{gpath}/{}", schema::LATENCY_BY_SIZE);
        let Some(g) = self.group(&path)? else {
            return Ok(None);
        };
        self.need_version(&path, schema::SIZE_LATENCY_SCHEMA_VERSION)?;
        let sizes_bytes = self.u64_dataset(&g, &path, schema::SIZE_BYTES)?;
        let extra_ps = self
            .f64_dataset(&g, &path, schema::EXTRA_PS)?
            .ok_or_else(|| self.invalid(format!("{path}/{}", schema::EXTRA_PS), "is missing"))?;
        Ok(Some(SizeLatency {
            sizes_bytes,
            extra_ps,
        }))
    }

    /// The bandwidth levels `<gpath>/bandwidth_levels` (schema version 6), if present.
    fn bandwidth_levels(&self, gpath: &str) -> Result<Option<Distribution>, ProfileError> {
        let (name, unit) = schema::BANDWIDTH_LEVELS;
        let path = format!("{gpath}/{name}");
        let Some(d) = self.distribution(&path, unit)? else {
            return Ok(None);
        };
        self.need_version(&path, schema::LEVELS_SCHEMA_VERSION)?;
        Ok(Some(d))
    }

    /// The idle table `<gpath>/after_idle` (schema version 4), if present.
    fn idle_table(&self, gpath: &str) -> Result<Option<AfterIdle>, ProfileError> {
        let tpath = format!("{gpath}/{}", schema::AFTER_IDLE);
        let Some(g) = self.group(&tpath)? else {
            return Ok(None);
        };
        self.need_version(&tpath, schema::IDLE_TABLE_SCHEMA_VERSION)?;
        let names = g.groups().map_err(|e| self.corrupt(&tpath, e))?;
        let count = self.numbered(&tpath, &names, schema::LEVEL_PREFIX, "level_<k>")?;
        let mut levels = Vec::with_capacity(count);
        for k in 0..count {
            let lpath = format!("{tpath}/{}{k}", schema::LEVEL_PREFIX);
            let lg = self.req_group(&lpath)?;
            let a = self.attrs(&lg, &lpath)?;
            levels.push(IdleLevel {
                from_ps: self.req_f64(&a, &lpath, schema::ATTR_FROM)?,
                latency: self.distribution(&format!("{lpath}/{}", schema::LATENCY.0), Unit::Ps)?,
                per_byte_factor: self
                    .opt_f64(&a, &lpath, schema::ATTR_PER_BYTE_FACTOR)?
                    .unwrap_or(1.0),
            });
        }
        Ok(Some(AfterIdle { levels }))
    }

    /// The OS noise of the day at `base` (empty: the profile's own, `/os_noise`).
    fn os_noise(&self, base: &str) -> Result<OsNoise, ProfileError> {
        let os_path = format!("{base}{}", schema::OS_NOISE);
        let Some(g) = self.group(&os_path)? else {
            return Ok(OsNoise::default());
        };
        let names = g.groups().map_err(|e| self.corrupt(&os_path, e))?;
        let count = self.numbered(&os_path, &names, schema::TRACE_PREFIX, "trace_<k>")?;
        let mut traces = Vec::with_capacity(count);
        for k in 0..count {
            let tpath = schema::trace_group(base, k);
            let tg = self.req_group(&tpath)?;
            let a = self.attrs(&tg, &tpath)?;
            let period_ps = self.req_u64(&a, &tpath, schema::ATTR_PERIOD)?;
            let start_ps = self.u64_dataset(&tg, &tpath, schema::START)?;
            let duration_ps = self.u64_dataset(&tg, &tpath, schema::DURATION)?;
            traces.push(DetourTrace {
                start_ps,
                duration_ps,
                period_ps,
            });
        }
        let process_path = format!("{base}{}", schema::PROCESS);
        let duration_path = format!("{base}{}", schema::PROCESS_DURATION);
        let process = match self.group(&process_path)? {
            None => None,
            Some(pg) => {
                let a = self.attrs(&pg, &process_path)?;
                let rate_per_s = self.req_f64(&a, &process_path, schema::ATTR_RATE)?;
                let duration_ps =
                    self.distribution(&duration_path, Unit::Ps)?
                        .ok_or_else(|| ProfileError::MissingGroup {
                            path: self.path.to_path_buf(),
                            group: duration_path.clone(),
                        })?;
                Some(DetourProcess {
                    rate_per_s,
                    duration_ps,
                })
            }
        };
        Ok(OsNoise { traces, process })
    }

    fn prices(&self) -> Result<Prices, ProfileError> {
        let Some(g) = self.group(schema::PRICES)? else {
            return Ok(Prices::default());
        };
        let a = self.attrs(&g, schema::PRICES)?;
        Ok(Prices {
            on_demand_usd_per_node_hour: self.opt_f64(
                &a,
                schema::PRICES,
                schema::ATTR_ON_DEMAND,
            )?,
            committed_usd_per_node_hour: self.opt_f64(
                &a,
                schema::PRICES,
                schema::ATTR_COMMITTED,
            )?,
            spot: self.spot(&a)?,
        })
    }

    /// Spot capacity in `/prices` (schema version 5).
    fn spot(&self, a: &Attrs) -> Result<SpotPrices, ProfileError> {
        let p = schema::PRICES;
        let names = [
            schema::ATTR_SPOT,
            schema::ATTR_SPOT_RATE,
            schema::ATTR_SPOT_SOURCE,
            schema::ATTR_SPOT_DATE,
        ];
        for name in names {
            if self.attr(a, name)?.is_some() && self.version < schema::SPOT_SCHEMA_VERSION {
                return Err(self.invalid(
                    schema::attr_object(p, name),
                    format!(
                        "is spot capacity, which needs schema_version {} or later, but the \
                         file has schema_version {}",
                        schema::SPOT_SCHEMA_VERSION,
                        self.version
                    ),
                ));
            }
        }
        let text = |name: &str| -> Result<String, ProfileError> {
            Ok(match self.attr(a, name)? {
                Some(_) => self.req_str(a, p, name)?,
                None => String::new(),
            })
        };
        Ok(SpotPrices {
            usd_per_node_hour: self.opt_f64(a, p, schema::ATTR_SPOT)?,
            interruptions_per_node_hour: self.opt_f64(a, p, schema::ATTR_SPOT_RATE)?,
            source: text(schema::ATTR_SPOT_SOURCE)?,
            date: text(schema::ATTR_SPOT_DATE)?,
        })
    }

    fn provenance(&self) -> Result<Provenance, ProfileError> {
        let p = schema::PROVENANCE;
        let g = self.req_group(p)?;
        let a = self.attrs(&g, p)?;
        Ok(Provenance {
            command: self.req_str(&a, p, schema::ATTR_COMMAND)?,
            created: self.req_str(&a, p, schema::ATTR_CREATED)?,
            tool_version: self.req_str(&a, p, schema::ATTR_TOOL_VERSION)?,
            sources: self.opt_strings(&a, p, schema::ATTR_SOURCES)?,
            notes: self.opt_strings(&a, p, schema::ATTR_NOTES)?,
        })
    }
}
