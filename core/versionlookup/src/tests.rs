//! Conformance suite: every lookup-cache strategy against a brute-force oracle.
//!
//! Follows the invariants Elasticsearch's `VersionsTests`, `LiveVersionMapTests` and
//! `InternalEngineTests` check (resolve equals a scan; a version-map hit never reaches the
//! reader; refreshed entries are found through the new reader; tombstones outlive refreshes
//! until GC; auto ids never look up), plus the PR #19856 counts: N map and thread-local gets
//! for N lookups per reader, N*S per segment. Each check takes a constructor of the strategy;
//! one module per strategy at the bottom runs them all. The refresh's own checks (indexing goes
//! on during a refresh and resolves through `old`; a scheduled refresh is never lost) park a
//! refresh between its commit and its publication, and fail on the engine's refresh mutants.

use std::collections::HashMap;
use std::sync::{Arc, Condvar, Mutex, mpsc};
use std::time::Duration;

use rand::rngs::SmallRng;
use rand::{Rng, SeedableRng};

use super::engine::RefreshMutant;
use super::*;

type Make = fn() -> Box<dyn LookupCache>;

fn engine(make: Make, config: EngineConfig) -> Engine {
    Engine::open(config, make()).expect("engine opens")
}

/// The version [`loaded`] gives id `n`.
fn v0(n: u64) -> u64 {
    1 + n % 5
}

fn id(n: u64) -> String {
    format!("{n:010}")
}

/// An engine with `segments` segments of `per_segment` numeric ids each, version = 1 + n % 5;
/// segment `k` (oldest = 0) holds ids `k * per_segment ..`.
fn loaded(make: Make, segments: u64, per_segment: u64) -> Engine {
    let e = engine(make, EngineConfig::default());
    let ids: Vec<String> = (0..segments * per_segment).map(id).collect();
    let n = e
        .bulk_load(
            ids.iter()
                .enumerate()
                .map(|(i, s)| (s.as_str(), 1 + i as u64 % 5)),
            per_segment as usize,
        )
        .unwrap();
    assert_eq!(n, segments * per_segment);
    assert_eq!(e.segment_count() as u64, segments);
    e
}

fn lookup(e: &Engine, id: &str, stats: &mut LookupStats) -> Option<u64> {
    e.lookup_in_reader(&Uid::encode_id(id).unwrap(), stats)
        .unwrap()
        .map(|v| v.version)
}

/// The cost of `n` lookups of each pattern: misses, hits in the oldest and in the newest segment.
fn costs(e: &Engine, segments: u64, per_segment: u64, n: u64) -> [LookupStats; 3] {
    let mut out = [LookupStats::default(); 3];
    for i in 0..n {
        let miss = id(1_000_000_000 + i);
        let old = id(i % per_segment);
        let recent = id((segments - 1) * per_segment + i % per_segment);
        assert_eq!(lookup(e, &miss, &mut out[0]), None);
        assert_eq!(
            lookup(e, &old, &mut out[1]),
            Some(1 + (i % per_segment) % 5)
        );
        let r = (segments - 1) * per_segment + i % per_segment;
        assert_eq!(lookup(e, &recent, &mut out[2]), Some(1 + r % 5));
    }
    out
}

pub(super) fn check_newest_first_and_deleted_docs(make: Make) {
    let e = loaded(make, 3, 50);
    // Update an id of the oldest segment: its new copy lands in a fourth, newest segment and
    // the old copy is deleted in segment 0.
    assert_eq!(e.index(&id(7), "v").unwrap().version, v0(7) + 1);
    e.refresh().unwrap();
    assert_eq!(e.segment_count(), 4);
    let mut s = LookupStats::default();
    assert_eq!(lookup(&e, &id(7), &mut s), Some(4));
    assert_eq!(s.term_seeks, 1, "the newest segment is visited first");
    // Delete an id: no segment has a live copy, but its dead posting is still sought.
    assert!(e.delete(&id(60)).unwrap().found);
    e.refresh().unwrap();
    let mut s = LookupStats::default();
    assert_eq!(lookup(&e, &id(60), &mut s), None);
    assert_eq!(s.hits, 0);
    assert_eq!(e.get_version(&id(60)).unwrap(), None);
    // A re-index after a delete continues from the tombstone's version.
    assert_eq!(e.index(&id(60), "back").unwrap().version, v0(60) + 2);
}

pub(super) fn check_version_map_answers_before_the_reader(make: Make) {
    let e = loaded(make, 2, 20);
    let first = e.index(&id(3), "a").unwrap();
    assert!(!first.from_version_map && !first.created);
    assert_eq!(first.lookup.lookups, 1);
    let second = e.index(&id(3), "b").unwrap();
    assert!(second.from_version_map);
    assert_eq!(
        second.lookup,
        LookupStats::default(),
        "a map hit never reaches the reader"
    );
    assert_eq!(second.version, first.version + 1);
    assert_eq!(e.version_map_sizes().0, 1);
    e.refresh().unwrap();
    assert_eq!(
        e.version_map_sizes(),
        (0, 0, 0),
        "refresh moves entries out of the map"
    );
    let third = e.index(&id(3), "c").unwrap();
    assert!(
        !third.from_version_map,
        "after refresh the new reader answers"
    );
    assert_eq!(third.version, second.version + 1);
}

pub(super) fn check_counts_per_lookup(make: Make) -> [LookupStats; 3] {
    let (segments, per_segment, n) = (6, 40, 300);
    let e = loaded(make, segments, per_segment);
    let c = costs(&e, segments, per_segment, n);
    for s in &c {
        assert_eq!(s.lookups, n);
    }
    assert_eq!(c[0].hits, 0);
    assert_eq!(c[1].hits, n);
    assert_eq!(c[2].hits, n);
    assert_eq!(
        c[2].term_seeks, n,
        "a hit in the newest segment costs one seek"
    );
    c
}

pub(super) fn check_auto_ids_never_look_up(make: Make) {
    let e = loaded(make, 2, 10);
    let mut auto = AutoIds::new([9, 8, 7, 6, 5, 4]);
    for i in 0..200 {
        let r = e
            .index_auto(&auto.next_id(1_700_000_000_000 + i / 10), "auto")
            .unwrap();
        assert_eq!((r.version, r.created), (1, true));
        assert_eq!(r.lookup, LookupStats::default());
    }
    assert_eq!(e.version_map_sizes(), (0, 0, 0));
    e.refresh().unwrap();
    assert_eq!(e.checksum().unwrap().0, 220);
}

pub(super) fn check_refresh_every_controls_segments_and_eviction(make: Make) {
    let config = EngineConfig {
        refresh_every_ops: Some(25),
        ..EngineConfig::default()
    };
    let e = engine(make, config);
    for n in 0..200 {
        e.index(&id(n), "x").unwrap();
    }
    assert_eq!(e.segment_count(), 8);
    let mut s = LookupStats::default();
    for n in 0..200 {
        assert_eq!(lookup(&e, &id(n), &mut s), Some(1));
    }
    // Entries of closed readers or merged-away segments are gone after the next refresh.
    assert!(
        e.cache().cached_entries() <= 8,
        "{}",
        e.cache().cached_entries()
    );
    e.force_merge().unwrap();
    assert_eq!(e.segment_count(), 1);
    for n in 0..200 {
        assert_eq!(lookup(&e, &id(n), &mut s), Some(1));
    }
    assert_eq!(e.cache().cached_entries(), 1);
}

pub(super) fn check_mmap_directory(make: Make) {
    let dir = std::env::temp_dir().join(format!(
        "critsec-versionlookup-{}-{}",
        std::process::id(),
        make().id()
    ));
    let _ = std::fs::remove_dir_all(&dir);
    let config = EngineConfig {
        directory: Some(dir.clone()),
        ..EngineConfig::default()
    };
    {
        let e = engine(make, config);
        e.index("doc-1", "on disk").unwrap();
        e.refresh().unwrap();
        assert_eq!(e.index("doc-1", "again").unwrap().version, 2);
        e.refresh().unwrap();
        assert_eq!(e.get_version("doc-1").unwrap(), Some(2));
    }
    std::fs::remove_dir_all(&dir).unwrap();
}

#[derive(Debug, Clone, Copy)]
enum Oracle {
    Live(u64),
    Deleted { version: u64, stamp: u64 },
}

fn next_version(o: Option<&Oracle>) -> u64 {
    match o {
        Some(Oracle::Live(v)) | Some(Oracle::Deleted { version: v, .. }) => v + 1,
        None => 1,
    }
}

/// Random index/update/delete/refresh/merge sequences on one thread, with tombstone GC.
pub(super) fn check_matches_oracle(make: Make) {
    for seed in 0..3u64 {
        let gc = 2;
        let config = EngineConfig {
            gc_deletes_refreshes: gc,
            ..EngineConfig::default()
        };
        let e = engine(make, config);
        let mut rng = SmallRng::seed_from_u64(seed);
        let mut oracle: HashMap<String, Oracle> = HashMap::new();
        let mut refreshes = 0u64;
        let mut uuids: Vec<String> = (0..20).map(|_| random_uuid_id(&mut rng)).collect();
        uuids.extend((0..20).map(|i| format!("user-{i}")));
        let pick = |rng: &mut SmallRng| -> String {
            if rng.random_bool(0.5) {
                id(rng.random_range(0..60))
            } else {
                uuids[rng.random_range(0..40)].clone()
            }
        };
        for _ in 0..600 {
            match rng.random_range(0..100) {
                0..60 => {
                    let k = pick(&mut rng);
                    let want = next_version(oracle.get(&k));
                    assert_eq!(e.index(&k, "body text").unwrap().version, want, "index {k}");
                    oracle.insert(k, Oracle::Live(want));
                }
                60..80 => {
                    let k = pick(&mut rng);
                    let want = next_version(oracle.get(&k));
                    let found = matches!(oracle.get(&k), Some(Oracle::Live(_)));
                    let r = e.delete(&k).unwrap();
                    assert_eq!((r.version, r.found), (want, found), "delete {k}");
                    oracle.insert(
                        k,
                        Oracle::Deleted {
                            version: want,
                            stamp: refreshes,
                        },
                    );
                }
                80..96 => {
                    let k = pick(&mut rng);
                    let want = match oracle.get(&k) {
                        Some(Oracle::Live(v)) => Some(*v),
                        _ => None,
                    };
                    assert_eq!(e.get_version(&k).unwrap(), want, "get {k}");
                }
                96..99 => {
                    e.refresh().unwrap();
                    refreshes += 1;
                }
                _ => {
                    e.force_merge().unwrap();
                    refreshes += 1;
                }
            }
            oracle.retain(|_, o| match *o {
                Oracle::Deleted { stamp, .. } => refreshes - stamp < gc,
                Oracle::Live(_) => true,
            });
        }
        // After a refresh the version map is empty, so every answer comes from the strategy.
        e.refresh().unwrap();
        let mut stats = LookupStats::default();
        let mut live = (0u64, 0u64);
        for k in (0..60).map(id).chain(uuids.iter().cloned()) {
            let want = match oracle.get(&k) {
                Some(Oracle::Live(v)) => Some(*v),
                _ => None,
            };
            assert_eq!(lookup(&e, &k, &mut stats), want, "final lookup {k}");
            if let Some(v) = want {
                live = (live.0 + 1, live.1 + v);
            }
        }
        assert_eq!(
            e.checksum().unwrap(),
            live,
            "one live copy per id, versions summed"
        );
    }
}

/// Several indexing threads on disjoint ids share one engine and refresh it at random.
pub(super) fn check_concurrent_matches_oracle(make: Make) {
    const THREADS: u64 = 4;
    let config = EngineConfig {
        gc_deletes_refreshes: u64::MAX,
        refresh_every_ops: Some(97),
        ..EngineConfig::default()
    };
    let e = Arc::new(engine(make, config));
    let handles: Vec<_> = (0..THREADS)
        .map(|t| {
            let e = Arc::clone(&e);
            std::thread::spawn(move || {
                let mut rng = SmallRng::seed_from_u64(100 + t);
                let mut oracle: HashMap<String, Oracle> = HashMap::new();
                for _ in 0..400 {
                    let k = id(t * 1000 + rng.random_range(0..50));
                    let want = next_version(oracle.get(&k));
                    match rng.random_range(0..100) {
                        0..70 => {
                            assert_eq!(e.index(&k, "c").unwrap().version, want, "index {k}");
                            oracle.insert(k, Oracle::Live(want));
                        }
                        70..85 => {
                            assert_eq!(e.delete(&k).unwrap().version, want, "delete {k}");
                            oracle.insert(
                                k,
                                Oracle::Deleted {
                                    version: want,
                                    stamp: 0,
                                },
                            );
                        }
                        85..98 => {
                            let live = match oracle.get(&k) {
                                Some(Oracle::Live(v)) => Some(*v),
                                _ => None,
                            };
                            assert_eq!(e.get_version(&k).unwrap(), live, "get {k}");
                        }
                        98 => e.refresh().unwrap(),
                        _ => e.force_merge().unwrap(),
                    }
                }
                oracle
            })
        })
        .collect();
    let oracles: Vec<_> = handles
        .into_iter()
        .map(|h| h.join().expect("indexer thread"))
        .collect();
    e.refresh().unwrap();
    let mut live = (0u64, 0u64);
    let mut stats = LookupStats::default();
    for oracle in &oracles {
        for (k, o) in oracle {
            let want = match o {
                Oracle::Live(v) => Some(*v),
                Oracle::Deleted { .. } => None,
            };
            assert_eq!(lookup(&e, k, &mut stats), want, "final {k}");
            if let Some(v) = want {
                live = (live.0 + 1, live.1 + v);
            }
        }
    }
    assert_eq!(e.checksum().unwrap(), live);
}

/// A lookup still holding an older generation answers from that generation, even after a
/// refresh has dropped the older generation's cache entries.
pub(super) fn check_older_generation_still_answers(make: Make) {
    let e = loaded(make, 3, 30);
    let before = e.reader();
    e.index(&id(5), "update").unwrap();
    e.refresh().unwrap();
    let after = e.reader();
    assert_ne!(before.generation(), after.generation());
    let uid = Uid::encode_id(&id(5)).unwrap();
    let mut s = LookupStats::default();
    let old = e
        .cache()
        .lookup(&before, &uid, &mut s)
        .unwrap()
        .map(|v| v.version);
    let new = e
        .cache()
        .lookup(&after, &uid, &mut s)
        .unwrap()
        .map(|v| v.version);
    assert_eq!((old, new), (Some(v0(5)), Some(v0(5) + 1)));
    // The next refresh drops whatever the stale lookup re-created.
    e.refresh().unwrap();
    assert!(e.cache().cached_entries() <= e.segment_count());
}

/// `force_merge` merges every segment into one even while a background merge is running. With
/// `max_segments = 2`, the third refresh starts a background merge of the two smallest segments;
/// a `force_merge` that skipped its own merge while that one runs would leave three segments,
/// against its doc comment.
pub(super) fn check_force_merge_waits_for_a_background_merge(make: Make) {
    const BATCH: u64 = 5_000;
    let config = EngineConfig {
        max_segments: Some(2),
        ..EngineConfig::default()
    };
    let e = engine(make, config);
    for batch in 0..3 {
        for n in batch * BATCH..(batch + 1) * BATCH {
            e.index_auto(&id(n), "x").unwrap();
        }
        e.refresh().unwrap();
    }
    e.force_merge().unwrap();
    assert_eq!(e.segment_count(), 1, "force_merge left segments unmerged");
    assert_eq!(e.checksum().unwrap(), (3 * BATCH, 3 * BATCH));
}

/// Longer than any index operation could take; it only turns an operation that waits for a
/// parked refresh (a deadlock in these checks) into a failure. Not a timing assertion.
const DEADLOCK_BREAKER: Duration = Duration::from_secs(60);

#[derive(Default)]
struct GateState {
    armed: bool,
    parked: bool,
    open: bool,
    forced: bool,
}

/// Parks the next refresh that reaches it, once armed, until the test opens it.
#[derive(Default)]
struct Gate {
    state: Mutex<GateState>,
    changed: Condvar,
}

impl Gate {
    fn arm(&self) {
        self.state.lock().unwrap().armed = true;
    }

    /// Called by the refresh; parks it if armed.
    fn pass(&self) {
        let mut s = self.state.lock().unwrap();
        if !std::mem::take(&mut s.armed) {
            return;
        }
        s.parked = true;
        self.changed.notify_all();
        while !s.open {
            let (guard, wait) = self.changed.wait_timeout(s, DEADLOCK_BREAKER).unwrap();
            s = guard;
            if wait.timed_out() && !s.open {
                s.forced = true;
                break;
            }
        }
    }

    fn wait_parked(&self) {
        let mut s = self.state.lock().unwrap();
        while !s.parked {
            s = self.changed.wait(s).unwrap();
        }
    }

    /// Lets the parked refresh go on; false if it had to go on without being let go, because
    /// the test's operations were waiting for it.
    fn open(&self) -> bool {
        let mut s = self.state.lock().unwrap();
        s.open = true;
        self.changed.notify_all();
        !s.forced
    }
}

/// A real cache whose `on_refresh` passes the gate first: a refresh parks there after its cut
/// and commit, with the writer still out, before its reader is published and `afterRefresh`.
struct Parking {
    inner: Box<dyn LookupCache>,
    gate: Arc<Gate>,
}

impl LookupCache for Parking {
    fn id(&self) -> &'static str {
        self.inner.id()
    }

    fn lookup(
        &self,
        reader: &ReaderGeneration,
        uid: &[u8],
        stats: &mut LookupStats,
    ) -> Result<Option<DocVersion>, VersionLookupError> {
        self.inner.lookup(reader, uid, stats)
    }

    fn on_refresh(&self, reader: &ReaderGeneration) -> Result<(), VersionLookupError> {
        self.gate.pass();
        self.inner.on_refresh(reader)
    }

    fn cached_entries(&self) -> usize {
        self.inner.cached_entries()
    }
}

fn parking_engine(
    make: Make,
    config: EngineConfig,
    mutant: RefreshMutant,
) -> (Arc<Engine>, Arc<Gate>) {
    let gate = Arc::new(Gate::default());
    let cache = Box::new(Parking {
        inner: make(),
        gate: Arc::clone(&gate),
    });
    let e = Engine::open(config, cache)
        .expect("engine opens")
        .with_mutant(mutant);
    (Arc::new(e), gate)
}

fn expect_version(
    what: &str,
    got: Result<u64, VersionLookupError>,
    want: u64,
) -> Result<(), String> {
    match got {
        Ok(v) if v == want => Ok(()),
        Ok(v) => Err(format!("{what}: version {v}, expected {want}")),
        Err(e) => Err(format!("{what}: {e}")),
    }
}

/// Index operations go on while a refresh runs, and resolve every id correctly through it: an
/// id written before the cut through `old` until the new reader is published, a tombstone
/// written during the refresh until a reader holds its delete; writes two threads buffered
/// during it reach the index in the order they were made. Errs (rather than panics) on a wrong
/// version, so that the mutants' runs can expect it.
pub(super) fn check_indexing_goes_on_during_a_refresh(
    make: Make,
    mutant: RefreshMutant,
) -> Result<(), String> {
    let config = EngineConfig {
        gc_deletes_refreshes: 1,
        ..EngineConfig::default()
    };
    let (e, gate) = parking_engine(make, config, mutant);
    let ids: Vec<String> = (0..40).map(id).collect();
    e.bulk_load(
        ids.iter()
            .enumerate()
            .map(|(n, s)| (s.as_str(), v0(n as u64))),
        20,
    )
    .map_err(|e| e.to_string())?;
    let index = |n: u64| e.index(&id(n), "x").map(|r| r.version);
    let delete = |n: u64| e.delete(&id(n)).map(|r| r.version);
    // A second indexing thread, so that writes made during the refresh land in two buffers.
    let (to_helper, requests) = mpsc::channel::<u64>();
    let (replies, from_helper) = mpsc::channel();
    let helper_engine = Arc::clone(&e);
    let helper = std::thread::spawn(move || {
        for n in requests {
            let _ = replies.send(helper_engine.index(&id(n), "y").map(|r| r.version));
        }
    });
    let index_on_helper = |n: u64| {
        to_helper.send(n).expect("helper thread");
        from_helper.recv().expect("helper thread")
    };
    expect_version("update before the refresh", index(1), v0(1) + 1)?;
    expect_version("delete before the refresh", delete(2), v0(2) + 1)?;
    expect_version("new id before the refresh", index(100), 1)?;

    gate.arm();
    let refreshing = Arc::clone(&e);
    let refresher = std::thread::spawn(move || refreshing.refresh());
    gate.wait_parked();
    // Parked after its commit: the batch is committed but not visible, and still in `old`; the
    // writer is out, so these writes are buffered.
    let during = (|| {
        expect_version("update during the refresh", index(1), v0(1) + 2)?;
        expect_version("second write of a new id during the refresh", index(100), 2)?;
        let deleted = e.get_version(&id(2)).map_err(|e| e.to_string())?;
        if deleted.is_some() {
            return Err(format!("id 2 deleted before the refresh reads {deleted:?}"));
        }
        expect_version("delete during the refresh", delete(3), v0(3) + 1)?;
        expect_version("new id during the refresh", index(101), 1)?;
        // Ids 5 and 6, each written by both threads in turn.
        expect_version("helper's first write of 5", index_on_helper(5), v0(5) + 1)?;
        expect_version("second write of 5", index(5), v0(5) + 2)?;
        expect_version("first write of 6", index(6), v0(6) + 1)?;
        expect_version("helper's second write of 6", index_on_helper(6), v0(6) + 2)
    })();
    let in_time = gate.open();
    let refreshed = refresher.join().expect("refresh thread");
    during?;
    refreshed.map_err(|e| e.to_string())?;
    if !in_time {
        return Err("index operations waited for the refresh".into());
    }
    // The delete made during the refresh is not in the reader it published, so its tombstone
    // must still answer.
    expect_version(
        "re-index after a delete made during the refresh",
        index(3),
        v0(3) + 2,
    )?;
    expect_version("update after the refresh", index(1), v0(1) + 3)?;
    // Ids 1, 3, 5, 6, 100 and 101 were written since the cut; the re-index cleared 3's
    // tombstone.
    if e.version_map_sizes() != (6, 0, 0) {
        return Err(format!(
            "version map (current, old, tombstones) {:?}, expected (6, 0, 0)",
            e.version_map_sizes()
        ));
    }
    e.refresh().map_err(|e| e.to_string())?;
    let mut want: HashMap<u64, Option<u64>> = (0..40).map(|n| (n, Some(v0(n)))).collect();
    want.extend([
        (1, Some(v0(1) + 3)),
        (2, None),
        (3, Some(v0(3) + 2)),
        (5, Some(v0(5) + 2)),
        (6, Some(v0(6) + 2)),
        (100, Some(2)),
        (101, Some(1)),
    ]);
    let mut stats = LookupStats::default();
    let mut live = (0u64, 0u64);
    for (&n, &v) in &want {
        let got = lookup(&e, &id(n), &mut stats);
        if got != v {
            return Err(format!("final lookup of id {n}: {got:?}, expected {v:?}"));
        }
        if let Some(v) = v {
            live = (live.0 + 1, live.1 + v);
        }
    }
    let checksum = e.checksum().map_err(|e| e.to_string())?;
    if checksum != live {
        return Err(format!("checksum {checksum:?}, expected {live:?}"));
    }
    drop(to_helper);
    helper.join().expect("helper thread");
    Ok(())
}

/// An operation that reaches the refresh count while a scheduled refresh runs neither waits
/// for it nor loses its refresh: the running one refreshes once more when it ends.
pub(super) fn check_a_scheduled_refresh_is_owed_while_one_runs(make: Make) {
    let config = EngineConfig {
        refresh_every_ops: Some(10),
        ..EngineConfig::default()
    };
    let (e, gate) = parking_engine(make, config, RefreshMutant::None);
    gate.arm();
    let first = Arc::clone(&e);
    // Its tenth operation runs the first scheduled refresh, which parks.
    let indexer = std::thread::spawn(move || {
        for n in 0..10 {
            first.index(&id(n), "x").unwrap();
        }
    });
    gate.wait_parked();
    for n in 10..20 {
        e.index(&id(n), "x").unwrap();
    }
    assert!(
        gate.open(),
        "the twentieth operation waited for the parked refresh"
    );
    indexer.join().expect("indexing thread");
    // The parked refresh's thread ran the owed one before its operation returned.
    assert_eq!(e.version_map_sizes(), (0, 0, 0));
    assert_eq!(e.segment_count(), 2, "one segment per scheduled refresh");
    assert_eq!(e.checksum().unwrap(), (20, 20));
}

fn run_all(make: Make) -> [LookupStats; 3] {
    check_indexing_goes_on_during_a_refresh(make, RefreshMutant::None).unwrap();
    check_a_scheduled_refresh_is_owed_while_one_runs(make);
    check_older_generation_still_answers(make);
    check_newest_first_and_deleted_docs(make);
    check_version_map_answers_before_the_reader(make);
    check_auto_ids_never_look_up(make);
    check_refresh_every_controls_segments_and_eviction(make);
    check_mmap_directory(make);
    check_matches_oracle(make);
    check_concurrent_matches_oracle(make);
    check_counts_per_lookup(make)
}

const N: u64 = 300;
const S: u64 = 6;

mod per_segment {
    use super::*;

    #[test]
    fn force_merge_waits_for_a_background_merge() {
        check_force_merge_waits_for_a_background_merge(|| Box::new(PerSegmentCache::new()));
    }

    #[test]
    fn conforms_and_pays_a_map_and_thread_local_get_per_segment() {
        let [miss, old, recent] = run_all(|| Box::new(PerSegmentCache::new()));
        for c in [&miss, &old] {
            assert_eq!(
                (c.map_gets, c.thread_local_gets, c.term_seeks),
                (N * S, N * S, N * S)
            );
        }
        assert_eq!((recent.map_gets, recent.thread_local_gets), (N, N));
    }
}

mod per_reader {
    use super::*;

    #[test]
    fn force_merge_waits_for_a_background_merge() {
        check_force_merge_waits_for_a_background_merge(|| Box::new(PerReaderCache::new()));
    }

    #[test]
    fn conforms_and_pays_one_map_and_thread_local_get_per_lookup() {
        let [miss, old, recent] = run_all(|| Box::new(PerReaderCache::new()));
        for c in [&miss, &old] {
            assert_eq!(
                (c.map_gets, c.thread_local_gets, c.term_seeks),
                (N, N, N * S)
            );
        }
        assert_eq!((recent.map_gets, recent.thread_local_gets), (N, N));
    }
}

mod pruned {
    use super::*;

    #[test]
    fn force_merge_waits_for_a_background_merge() {
        check_force_merge_waits_for_a_background_merge(|| Box::new(PrunedCache::new()));
    }

    #[test]
    fn conforms_and_skips_segments_that_cannot_hold_the_id() {
        let [miss, old, recent] = run_all(|| Box::new(PrunedCache::new()));
        assert_eq!(miss.map_gets, N);
        // A bloom filter with ~1% false positives: a miss seeks almost nowhere, and a hit in the
        // oldest segment seeks almost only there.
        assert!(miss.term_seeks * 20 < N * S, "{miss:?}");
        assert!(miss.thread_local_gets * 5 < N, "{miss:?}");
        assert_eq!(miss.segments_skipped + miss.term_seeks, N * S);
        assert_eq!((old.map_gets, old.thread_local_gets), (N, N));
        assert!(old.term_seeks < N + N / 5, "{old:?}");
        assert_eq!(
            (recent.map_gets, recent.thread_local_gets, recent.term_seeks),
            (N, N, N)
        );
    }
}

/// The refresh checks catch each deliberate bug in the refresh.
mod refresh_mutants {
    use super::*;

    fn make() -> Box<dyn LookupCache> {
        Box::new(PerReaderCache::new())
    }

    #[test]
    fn dropping_old_before_the_reader_is_published_gives_wrong_versions() {
        let e = check_indexing_goes_on_during_a_refresh(make, RefreshMutant::DropOldBeforePublish)
            .unwrap_err();
        assert!(e.contains("during the refresh"), "{e}");
    }

    #[test]
    fn feeding_buffered_writes_thread_by_thread_reorders_an_id_s_writes() {
        let e =
            check_indexing_goes_on_during_a_refresh(make, RefreshMutant::FeedByThread).unwrap_err();
        assert!(e.starts_with("final lookup of id "), "{e}");
    }

    #[test]
    fn counting_a_refresh_at_publication_collects_a_tombstone_too_early() {
        let e = check_indexing_goes_on_during_a_refresh(make, RefreshMutant::CountRefreshAtPublish)
            .unwrap_err();
        assert!(e.contains("after a delete made during the refresh"), "{e}");
    }
}
