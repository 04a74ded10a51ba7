//! Claims and their reproduction: a claim as data ([`claim`], read from each bench crate's
//! `claims.toml`), how the configurations its sides run are measured in replicated rounds or
//! seeds ([`measure`]), sides that are a reviewer's own programs ([`command`]), and how the
//! measurements turn into a verdict ([`reproduce`]), after [`validate`] has checked the claim.

pub mod calibrate;
pub mod claim;
pub mod command;
pub mod measure;
pub mod reproduce;
pub mod validate;

#[cfg(test)]
mod tests;
