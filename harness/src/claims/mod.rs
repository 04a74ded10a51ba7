//! Claims and their reproduction: a claim as data ([`claim`], read from each bench crate's
//! `claims.toml`), and the paired A/B runs that turn it into a verdict ([`reproduce`]).

pub mod claim;
pub mod reproduce;
