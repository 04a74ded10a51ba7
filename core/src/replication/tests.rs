//! Conformance suite (to come).
