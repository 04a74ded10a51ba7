//! Claims and their reproduction: a claim as data ([`claim`], read from each bench crate's
//! `claims.toml`), sides that are a reviewer's own programs ([`command`]), how the measurements
//! turn into a verdict ([`reproduce`]) after [`validate`] has checked the claim, and the A/A
//! claims run for calibration ([`calibrate`]), and sides built from git revisions ([`build`]).

pub(crate) mod build;
pub(crate) mod calibrate;
pub(crate) mod claim;
pub(crate) mod command;
pub(crate) mod reproduce;
pub(crate) mod validate;

#[cfg(test)]
mod tests;

pub use build::{BuildError, Builder, Planned, Progress as BuildProgress, WORKING_TREE};
pub use calibrate::{CalibrationPlan, CalibrationRow, calibrate};
pub use claim::{Claim, ClaimError, ClaimKind, Requirements, ResolvedSide, Role, Side};
pub use command::{
    CommandSide, EntrySelection, Invocation, Reader, direction_conflict, parse_jmh, parse_lines,
};
pub use reproduce::{
    BlockRecord, BlockValue, ClaimOutcome, Coherence, CoherenceLevel, CountSummary, Design,
    FULL_PRECISION, FarProcess, PairObserver, PairedSettings, ProgramRecord, QUICK_PRECISION,
    Replicate, ReplicateKind, SideRecord, Verdict, VerdictFile, VerdictReadError, blocks_log_ratio,
    judge_recorded, metric_of, reproduce_claims, verdict,
};
pub use validate::{InvalidClaim, check_claim_file, validate_claim};
