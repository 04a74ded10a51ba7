//! The process allocator of every benchmark process: mimalloc, declared here so that every
//! binary linking the harness (the `critsec` binary, its forks, the bench crates' benches and
//! examples) allocates the same way.
//!
//! Why (a JVM mechanism, not a tuning): the systems critsec models are JVM servers. HotSpot
//! allocates an object by bumping a pointer in the thread's own allocation buffer (TLAB), and a
//! young collection frees garbage without touching it. glibc's `malloc`/`free` (about 140
//! instructions a pair under callgrind in the registry's request path, with arena and bin
//! bookkeeping) is a mechanism the JVM does not have. mimalloc's fast path pops a block from a
//! free list of the size class in a page owned by the thread and frees a block back to it, both
//! thread-local and a few dozen instructions: the nearest well-kept equivalent of a TLAB. It
//! applies to every system alike (the models allocate where the Java code allocates).
//!
//! [`NAME`] is recorded with every run's machine facts ([`crate::run::environment::Machine`]).

#[global_allocator]
static PROCESS_ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

/// The process allocator's name, as recorded in run metadata.
pub const NAME: &str = "mimalloc";
