//! critsec: run, reproduce and compare server hot-path benchmarks.
fn main() {}
