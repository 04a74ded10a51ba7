//! divan's figure for an empty closure, to set beside `critsec run harness/empty`.
fn main() {
    divan::main();
}

#[divan::bench]
fn empty_closure() -> u64 {
    std::hint::black_box(0u64)
}
