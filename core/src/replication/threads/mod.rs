//! Real threads driver (to come).
