//! Names of the HDF5 objects of schema versions 1 to 9 (see `SCHEMA.md`). Shared by the
//! reader, the writer and the validator so that error messages use exactly the names found in
//! files.

/// Value of the root attribute `schema`.
pub const SCHEMA_NAME: &str = "loggops-sim noise profile";
/// The newest `schema_version` this build reads and writes. Version 2 adds exact tails to
/// quantile tables (`tail_<unit>` + `sample_count`); version 3 calibrations from captures,
/// latencies after idle periods, capture days and the root attribute `mpi_progress`;
/// everything else is as in version 1. Version 4 adds the idle table (`<placement>/after_idle`);
/// version 5 spot capacity in `/prices`; version 6 bandwidth levels
/// (`<placement>/bandwidth_levels`); version 7 the latency by size
/// (`<placement>/latency_by_size`); version 8 a day's `weight` and `kind` (latency episodes);
/// version 9 the root attributes `clock_resolution_ps` and `clock_read_ps`.
pub const SCHEMA_VERSION: i64 = 9;
/// The oldest `schema_version` this build reads. The writer writes version 1 for profiles
/// without exact tails, so older builds keep reading them.
pub const MIN_SCHEMA_VERSION: i64 = 1;
/// The first version with exact tails.
pub(crate) const TAIL_SCHEMA_VERSION: i64 = 2;
/// The first version with calibrations, latencies after idle periods and capture days.
pub(crate) const CAPTURES_SCHEMA_VERSION: i64 = 3;
/// The first version with the root attribute `mpi_progress` (SCHEMA.md "MPI progress"): the
/// same version as the captures' additions.
pub(crate) const MPI_PROGRESS_SCHEMA_VERSION: i64 = CAPTURES_SCHEMA_VERSION;
/// The first version with spot capacity in `/prices` (SCHEMA.md "Spot capacity").
pub(crate) const SPOT_SCHEMA_VERSION: i64 = 5;
/// The first version with bandwidth levels (SCHEMA.md "Bandwidth levels").
pub(crate) const LEVELS_SCHEMA_VERSION: i64 = 6;
/// The first version with the latency by size (SCHEMA.md "Latency by size").
pub(crate) const SIZE_LATENCY_SCHEMA_VERSION: i64 = 7;
/// The first version with weighted days and latency episodes (SCHEMA.md "States").
pub(crate) const STATES_SCHEMA_VERSION: i64 = 8;
/// The first version with the clock's root attributes (SCHEMA.md "Clock").
pub(crate) const CLOCK_SCHEMA_VERSION: i64 = 9;

/// Unit suffix of a distribution's value datasets.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Unit {
    /// Picoseconds.
    Ps,
    /// Picoseconds per byte.
    PsPerByte,
    /// A dimensionless factor.
    Factor,
}

impl Unit {
    /// Suffix used in dataset names (`values_ps`, `samples_ps_per_byte`).
    pub(crate) fn suffix(self) -> &'static str {
        match self {
            Unit::Ps => "ps",
            Unit::PsPerByte => "ps_per_byte",
            Unit::Factor => "factor",
        }
    }

    /// Unit as printed after numbers in messages.
    pub(crate) fn short(self) -> &'static str {
        match self {
            Unit::Ps => "ps",
            Unit::PsPerByte => "ps/byte",
            Unit::Factor => "x",
        }
    }
}

pub(crate) const PROBS: &str = "probs";

pub(crate) fn values_name(unit: Unit) -> String {
    format!("values_{}", unit.suffix())
}

pub(crate) fn samples_name(unit: Unit) -> String {
    format!("samples_{}", unit.suffix())
}

pub(crate) fn tail_name(unit: Unit) -> String {
    format!("tail_{}", unit.suffix())
}

/// Attribute of a distribution group with an exact tail: the number of samples N.
pub(crate) const ATTR_SAMPLE_COUNT: &str = "sample_count";

/// The distributions of a placement group: (subgroup name, unit).
pub(crate) const LATENCY: (&str, Unit) = ("latency", Unit::Ps);
pub(crate) const BANDWIDTH: (&str, Unit) = ("bandwidth", Unit::PsPerByte);
pub(crate) const OVERHEAD: (&str, Unit) = ("overhead", Unit::Ps);
pub(crate) const GAP: (&str, Unit) = ("gap", Unit::Ps);
/// Version 6: factors on the per-byte time, one per repetition (SCHEMA.md "Bandwidth levels").
pub(crate) const BANDWIDTH_LEVELS: (&str, Unit) = ("bandwidth_levels", Unit::Factor);
/// Version 3: the latency after an idle period, with its threshold attribute.
pub(crate) const LATENCY_AFTER_IDLE: (&str, Unit) = ("latency_after_idle", Unit::Ps);
pub(crate) const ATTR_IDLE_THRESHOLD: &str = "idle_threshold_ps";
/// The first version with the idle table (SCHEMA.md "Idle table").
pub(crate) const IDLE_TABLE_SCHEMA_VERSION: i64 = 4;
/// Version 4: the idle table of a placement, `<placement>/after_idle/level_<k>`, each level
/// with `from_ps`, optional `per_byte_factor` and optional subgroup `latency`.
pub(crate) const AFTER_IDLE: &str = "after_idle";
pub(crate) const LEVEL_PREFIX: &str = "level_";
pub(crate) const ATTR_FROM: &str = "from_ps";
pub(crate) const ATTR_PER_BYTE_FACTOR: &str = "per_byte_factor";

// Root attributes.
pub(crate) const ATTR_SCHEMA: &str = "schema";
pub(crate) const ATTR_SCHEMA_VERSION: &str = "schema_version";
pub(crate) const ATTR_SYSTEM: &str = "system";
pub(crate) const ATTR_DESCRIPTION: &str = "description";
pub(crate) const ATTR_NODES_PER_SWITCH: &str = "nodes_per_switch";
/// Version 3: `paper-table` (absent: the same) or `captures`.
pub(crate) const ATTR_CALIBRATION: &str = "calibration";
/// Version 3: the label of the profile's own capture day.
pub(crate) const ATTR_DAY: &str = "day";
/// Version 3: further capture days, `/days/day_<k>`, each with `label`, `near`, `far`,
/// `os_noise`.
pub(crate) const DAYS: &str = "/days";
pub(crate) const DAY_PREFIX: &str = "day_";
pub(crate) const ATTR_LABEL: &str = "label";
/// Version 8: a day's share of the repetitions, and its kind (`episode`; absent: a day).
pub(crate) const ATTR_WEIGHT: &str = "weight";
pub(crate) const ATTR_KIND: &str = "kind";
pub(crate) const KIND_EPISODE: &str = "episode";
pub(crate) const ATTR_MPI_PROGRESS: &str = "mpi_progress";
pub(crate) const ATTR_CLOCK_RESOLUTION: &str = "clock_resolution_ps";
pub(crate) const ATTR_CLOCK_READ: &str = "clock_read_ps";

// Placement attributes.
pub(crate) const ATTR_L: &str = "L_ps";
pub(crate) const ATTR_O: &str = "o_ps";
pub(crate) const ATTR_G: &str = "g_ps";
pub(crate) const ATTR_BIG_G: &str = "G_ps_per_byte";
pub(crate) const ATTR_BIG_O: &str = "O_ps_per_byte";
pub(crate) const ATTR_S: &str = "S_bytes";
pub(crate) const ATTR_BLOCK: &str = "bandwidth_block_bytes";

// OS noise.
pub(crate) const OS_NOISE: &str = "/os_noise";
pub(crate) const TRACE_PREFIX: &str = "trace_";
pub(crate) const START: &str = "start_ps";
/// The latency by size of a placement, and its two datasets.
pub(crate) const LATENCY_BY_SIZE: &str = "latency_by_size";
pub(crate) const SIZE_BYTES: &str = "size_bytes";
pub(crate) const EXTRA_PS: &str = "extra_ps";
pub(crate) const DURATION: &str = "duration_ps";
pub(crate) const ATTR_PERIOD: &str = "period_ps";
pub(crate) const PROCESS: &str = "/os_noise/process";
pub(crate) const ATTR_RATE: &str = "rate_per_s";
pub(crate) const PROCESS_DURATION: &str = "/os_noise/process/duration";

// Prices.
pub(crate) const PRICES: &str = "/prices";
pub(crate) const ATTR_ON_DEMAND: &str = "on_demand_usd_per_node_hour";
pub(crate) const ATTR_COMMITTED: &str = "committed_usd_per_node_hour";
/// Version 5: spot capacity.
pub(crate) const ATTR_SPOT: &str = "spot_usd_per_node_hour";
pub(crate) const ATTR_SPOT_RATE: &str = "spot_interruptions_per_node_hour";
pub(crate) const ATTR_SPOT_SOURCE: &str = "spot_source";
pub(crate) const ATTR_SPOT_DATE: &str = "spot_date";

// Provenance.
pub(crate) const PROVENANCE: &str = "/provenance";
pub(crate) const ATTR_COMMAND: &str = "command";
pub(crate) const ATTR_CREATED: &str = "created";
pub(crate) const ATTR_TOOL_VERSION: &str = "tool_version";
pub(crate) const ATTR_SOURCES: &str = "sources";
pub(crate) const ATTR_NOTES: &str = "notes";

/// `<base>/os_noise/trace_<k>` (`base` empty for the profile's own day).
pub(crate) fn trace_group(base: &str, k: usize) -> String {
    format!("{base}{OS_NOISE}/{TRACE_PREFIX}{k}")
}

/// `/days/day_<k>`.
pub(crate) fn day_group(k: usize) -> String {
    format!("{DAYS}/{DAY_PREFIX}{k}")
}

/// How messages name an attribute: `/near attribute L_ps`.
pub(crate) fn attr_object(group: &str, attr: &str) -> String {
    format!("{group} attribute {attr}")
}
