//! Errors of reading, writing and validating noise profiles.

use std::fmt;
use std::path::PathBuf;

/// A rule of the schema that a profile (in memory or in a file) breaks.
///
/// `object` names the HDF5 object the rule is about, as the schema spells it: a dataset path
/// (`/near/latency/probs`), or an attribute (`/near attribute L_ps`). The same names are used
/// whether the profile came from a file or is about to be written to one.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Invalid {
    /// The HDF5 object at fault.
    pub object: String,
    /// What is wrong with it, with the offending value and what was expected.
    pub reason: String,
}

impl Invalid {
    pub(crate) fn new(object: impl Into<String>, reason: impl Into<String>) -> Self {
        Invalid {
            object: object.into(),
            reason: reason.into(),
        }
    }
}

impl fmt::Display for Invalid {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}", self.object, self.reason)
    }
}

impl std::error::Error for Invalid {}

/// Everything that can go wrong reading or writing a profile file. Every variant names the file.
#[derive(Debug, thiserror::Error)]
pub enum ProfileError {
    /// The file could not be opened or read.
    #[error("cannot read noise profile {}: {source}", path.display())]
    Read {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },

    /// The file (or its temporary sibling) could not be written, synced or renamed.
    #[error("cannot write noise profile {}: {source}", path.display())]
    Write {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },

    /// The HDF5 library refused to serialize the profile (should not happen for valid profiles).
    #[error("cannot write noise profile {}: HDF5 encoder failed: {reason}", path.display())]
    Encode { path: PathBuf, reason: String },

    /// The bytes are not an HDF5 file, or the file is truncated or corrupt.
    #[error("{} is not a readable HDF5 file: {reason}", path.display())]
    NotHdf5 { path: PathBuf, reason: String },

    /// An HDF5 file, but not a loggops-sim noise profile.
    #[error(
        "{} is not a loggops-sim noise profile: root attribute `schema` is {found}, expected \"{expected}\"",
        path.display()
    )]
    WrongSchema {
        path: PathBuf,
        found: String,
        expected: &'static str,
    },

    /// A noise profile of a schema version this build does not read.
    #[error(
        "{}: unsupported noise-profile schema_version {found}; this loggops-sim reads schema_version {oldest} to {expected}",
        path.display()
    )]
    UnsupportedVersion {
        path: PathBuf,
        found: String,
        /// The oldest version this build reads.
        oldest: i64,
        /// The newest version this build reads.
        expected: i64,
    },

    /// A required group is absent.
    #[error("{}: incomplete noise profile: missing required group `{group}`", path.display())]
    MissingGroup { path: PathBuf, group: String },

    /// A required dataset is absent.
    #[error("{}: incomplete noise profile: missing required dataset `{dataset}`", path.display())]
    MissingDataset { path: PathBuf, dataset: String },

    /// A required attribute is absent.
    #[error(
        "{}: incomplete noise profile: missing required attribute `{attribute}` on `{object}`",
        path.display()
    )]
    MissingAttribute {
        path: PathBuf,
        object: String,
        attribute: String,
    },

    /// An object is present but has the wrong type, shape or value.
    #[error("{}: invalid noise profile: {invalid}", path.display())]
    Invalid { path: PathBuf, invalid: Invalid },
}

impl ProfileError {
    pub(crate) fn invalid(path: impl Into<PathBuf>, invalid: Invalid) -> Self {
        ProfileError::Invalid {
            path: path.into(),
            invalid,
        }
    }
}
