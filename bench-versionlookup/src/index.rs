//! `versionlookup/index`: end-to-end indexing with Rally's conflict workload, or auto ids.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Instant;

use critsec_harness::{
    CheckFailed, Choice, GroupSpec, Iterations, Metric, ParamSpec, Params, Probe, Scenario,
    ScenarioError, Trial, Worker, WorkerSource,
};
use critsec_sync::kind::ids;
use critsec_versionlookup::{
    AutoIds, CacheKind, Engine, EngineConfig, LookupStats, LookupTimer, RallyIds,
};

use crate::counters::{Counter, CountersProbe, Slots};

/// Rally's `index-update` operation on geonames: 25% conflicts, uniform over used ids.
const CONFLICT_PROBABILITY: f64 = 0.25;
/// Every this many documents the lookup is timed (reading the clock costs ~20 ns a call).
const TIME_EVERY: u64 = 8;
const BODY: &str = "Saint-Martin-de-Belleville Savoie Auvergne-Rhone-Alpes populated place";

/// Indexing throughput in documents per second.
pub struct IndexScenario;

/// A Rally client's state, kept by the trial so that a re-created worker continues the
/// client's id sequence and expected versions.
struct ClientState {
    ids: RallyIds,
    /// Expected current version of each id this client has sent, by position.
    versions: Vec<u32>,
    auto: AutoIds,
}

/// Slots beyond the thread count, for clients created when the harness asks for more
/// concurrent workers than it announced in `setup`.
const SPARE_SLOTS: usize = 64;

struct IndexTrial {
    clients: Vec<Mutex<Option<ClientState>>>,
    /// Next client id for spare clients (Relaxed: only uniqueness matters).
    next_spare: AtomicU64,
    engine: Arc<Engine>,
    provided: bool,
    preloaded: (u64, u64),
    slots: Arc<Slots>,
    probe: CountersProbe,
}

struct SampledTimer {
    armed: bool,
    started: Option<Instant>,
    ns: u64,
    samples: u64,
}

impl LookupTimer for SampledTimer {
    fn start(&mut self) {
        if self.armed {
            self.started = Some(Instant::now());
        }
    }
    fn stop(&mut self) {
        if let Some(t) = self.started.take() {
            self.ns += t.elapsed().as_nanos() as u64;
            self.samples += 1;
        }
    }
}

struct IndexWorker<'a> {
    trial: &'a IndexTrial,
    slot: usize,
    client: Option<ClientState>,
    ops: u64,
    new_ids: u64,
    stats: LookupStats,
    timer: SampledTimer,
    mismatches: u64,
    errors: u64,
}

fn seed() -> u64 {
    19_856
}

/// Where documents' ids come from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum IdSource {
    /// Rally's ids, some of them conflicting: every index op looks its id up.
    Provided,
    /// Auto-generated ids: Elasticsearch skips the lookup.
    Auto,
}

impl Choice for IdSource {
    const ALL: &'static [Self] = &[IdSource::Provided, IdSource::Auto];
    fn id(self) -> &'static str {
        match self {
            IdSource::Provided => "provided",
            IdSource::Auto => "auto",
        }
    }
}

impl Scenario for IndexScenario {
    fn name(&self) -> &'static str {
        "versionlookup/index"
    }

    fn description(&self) -> &'static str {
        "Indexes documents the way an Elasticsearch primary does, each thread a Rally client: provided ids (\"%010d\", 25% conflicts uniform over the client's used ids, on-conflict index) take the engine read lock and the id's lock, check the live version map, then look the id up through the cache strategy in the last refreshed reader's segments, and write (delete-by-term + add on an update); auto ids take the append-only path with no lookup. The engine refreshes (commits and reopens) every `refresh_every` docs, on the thread whose doc reaches the count while the other threads go on indexing (they buffer their writes while the refresh has the writer), and merges the smallest segments in the background to keep at most `segments + 1`."
    }

    fn params(&self) -> Vec<ParamSpec> {
        vec![
            ParamSpec::choice(
                "strategy",
                &ids::<CacheKind>(),
                &ids::<CacheKind>(),
                "lookup cache strategy",
            ),
            ParamSpec::free(
                "segments",
                &["1", "10", "30"],
                "segments in the prepared index",
            ),
            ParamSpec::choices(
                "ids",
                IdSource::ALL,
                "Rally ids with conflicts, or auto ids",
            ),
            ParamSpec::free(
                "docs_per_segment",
                &["10000"],
                "documents per prepared segment",
            ),
            ParamSpec::free("refresh_every", &["10000"], "documents between refreshes"),
        ]
    }

    fn default_threads(&self) -> Vec<String> {
        vec!["1".to_string(), "max".to_string()]
    }

    fn setup(
        &self,
        params: &Params,
        groups: &[GroupSpec],
    ) -> Result<Box<dyn Trial>, ScenarioError> {
        let kind: CacheKind = params.parse("strategy")?;
        let segments: u64 = params.parse_in("segments", 1..)?;
        let per_segment: u64 = params.parse_in("docs_per_segment", 1..)?;
        let refresh_every: u64 = params.parse_in("refresh_every", 1..)?;
        let provided = params.choice::<IdSource>("ids")? == IdSource::Provided;
        let threads = groups.iter().map(|g| g.threads).sum::<usize>().max(1) as u64;
        let config = EngineConfig {
            refresh_every_ops: Some(refresh_every),
            max_segments: Some(segments as usize + 1),
            ..EngineConfig::default()
        };
        let setup_err =
            |e: critsec_versionlookup::VersionLookupError| ScenarioError::Setup(e.to_string());
        let engine = Engine::open(config, kind.build()).map_err(setup_err)?;
        // The prepared index holds each client's first ids, interleaved so that every segment
        // holds ids of every client and conflicts land in old and new segments alike.
        let per_client = (segments * per_segment).div_ceil(threads);
        let clients: Vec<RallyIds> = (0..threads)
            .map(|c| RallyIds::new(c, CONFLICT_PROBABILITY, 0.0, seed()))
            .collect();
        let ids: Vec<String> = (0..per_client)
            .flat_map(|p| clients.iter().map(move |c| c.id_at(p)))
            .collect();
        engine
            .bulk_load(ids.iter().map(|s| (s.as_str(), 1)), per_segment as usize)
            .map_err(setup_err)?;
        let preloaded = engine.checksum().map_err(setup_err)?;
        let engine = Arc::new(engine);
        let slots = Arc::new(Slots::new(threads as usize + SPARE_SLOTS));
        let clients = clients
            .into_iter()
            .enumerate()
            .map(|(c, mut ids)| {
                ids.skip_to(per_client);
                let mut node = [0u8; 6];
                node[..4].copy_from_slice(&(c as u32).to_be_bytes());
                let versions = vec![1; per_client as usize];
                Mutex::new(Some(ClientState {
                    ids,
                    versions,
                    auto: AutoIds::new(node),
                }))
            })
            .collect();
        let for_probe = Arc::clone(&engine);
        let probe = CountersProbe::new(
            Arc::clone(&slots),
            threads as usize,
            "doc",
            true,
            Box::new(move || vec![segments_metric(&for_probe)]),
        );
        Ok(Box::new(IndexTrial {
            clients,
            next_spare: AtomicU64::new(threads),
            engine,
            provided,
            preloaded,
            slots,
            probe,
        }))
    }
}

impl Trial for IndexTrial {
    /// The engine merges segments in the background; an idle side must not.
    fn quiesce(&self) {
        self.engine.wait_for_background_merge();
    }

    fn verify(&self) -> Result<String, CheckFailed> {
        self.engine.refresh().map_err(|e| e.to_string())?;
        let (docs, version_sum) = self.engine.checksum().map_err(|e| e.to_string())?;
        let ops = self.slots.sum(Counter::Ops);
        let new_ids = self.slots.sum(Counter::NewIds);
        // Every operation adds one to the sum of versions (a new id adds a version-1 document,
        // an update replaces version v by v + 1); only new ids add documents.
        let want = (self.preloaded.0 + new_ids, self.preloaded.1 + ops);
        if (docs, version_sum) != want {
            return Err(format!(
                "index holds {docs} docs with version sum {version_sum}, expected {} and {}",
                want.0, want.1
            )
            .into());
        }
        Ok(format!(
            "{docs} live docs, version sum {version_sum}, {} segments",
            self.engine.segment_count()
        ))
    }

    fn iterations(&self) -> Iterations<'_> {
        Iterations::Workers(self)
    }

    fn probe(&self) -> Option<&dyn Probe> {
        Some(&self.probe)
    }
}

impl WorkerSource for IndexTrial {
    fn worker(&self, _group: &str, index: usize) -> Box<dyn Worker + '_> {
        let taken = self
            .clients
            .get(index)
            .and_then(|c| c.lock().ok().and_then(|mut g| g.take()));
        let (client, slot) = match taken {
            Some(state) => (state, index),
            None => {
                // A spare client: fresh ids of its own, none preloaded.
                let c = self.next_spare.fetch_add(1, Ordering::Relaxed);
                let mut node = [0u8; 6];
                node[..4].copy_from_slice(&(c as u32).to_be_bytes());
                let state = ClientState {
                    ids: RallyIds::new(c, CONFLICT_PROBABILITY, 0.0, seed()),
                    versions: Vec::new(),
                    auto: AutoIds::new(node),
                };
                (state, self.clients.len() + (c as usize) % SPARE_SLOTS)
            }
        };
        let s = &self.slots;
        Box::new(IndexWorker {
            trial: self,
            slot,
            client: Some(client),
            ops: s.load(slot, Counter::Ops),
            new_ids: s.load(slot, Counter::NewIds),
            stats: s.load_stats(slot),
            timer: SampledTimer {
                armed: false,
                started: None,
                ns: s.load(slot, Counter::SampledLookupNs),
                samples: s.load(slot, Counter::SampledLookups),
            },
            mismatches: 0,
            errors: 0,
        })
    }
}

impl IndexWorker<'_> {
    fn provided(&mut self, client: &mut ClientState) -> u64 {
        let action = client.ids.next_action();
        let id = client.ids.id_at(action.position);
        self.timer.armed = self.ops % TIME_EVERY == 0;
        let expected = match client.versions.get(action.position as usize) {
            Some(v) => u64::from(*v) + 1,
            None => 1,
        };
        match self.trial.engine.index_timed(&id, BODY, &mut self.timer) {
            Ok(r) => {
                self.mismatches += u64::from(r.version != expected);
                self.stats.add(&r.lookup);
                if action.conflict {
                    if let Some(v) = client.versions.get_mut(action.position as usize) {
                        *v += 1;
                    }
                } else {
                    client.versions.push(1);
                    self.new_ids += 1;
                }
                r.version
            }
            Err(_) => {
                self.errors += 1;
                0
            }
        }
    }

    fn auto(&mut self, client: &mut ClientState) -> u64 {
        // A logical millisecond clock: ids stay unique through the node bytes and sequence.
        let id = client.auto.next_id(1_700_000_000_000 + self.ops / 1024);
        match self.trial.engine.index_auto(&id, BODY) {
            Ok(r) => {
                self.mismatches += u64::from(r.version != 1);
                self.new_ids += 1;
                r.version
            }
            Err(_) => {
                self.errors += 1;
                0
            }
        }
    }
}

impl Worker for IndexWorker<'_> {
    fn op(&mut self) -> u64 {
        let Some(mut client) = self.client.take() else {
            return 0;
        };
        let v = if self.trial.provided {
            self.provided(&mut client)
        } else {
            self.auto(&mut client)
        };
        self.client = Some(client);
        self.ops += 1;
        let s = &self.trial.slots;
        s.store_stats(self.slot, &self.stats);
        s.store(self.slot, Counter::Ops, self.ops);
        s.store(self.slot, Counter::NewIds, self.new_ids);
        s.store(self.slot, Counter::SampledLookupNs, self.timer.ns);
        s.store(self.slot, Counter::SampledLookups, self.timer.samples);
        v
    }

    fn check(&mut self) -> Result<(), CheckFailed> {
        if self.mismatches + self.errors > 0 {
            return Err(format!(
                "{} wrong versions, {} index errors",
                self.mismatches, self.errors
            )
            .into());
        }
        Ok(())
    }
}

impl Drop for IndexWorker<'_> {
    fn drop(&mut self) {
        // Hand the client back so that a later worker for this index continues it.
        if let (Some(state), Some(cell)) = (self.client.take(), self.trial.clients.get(self.slot)) {
            if let Ok(mut g) = cell.lock() {
                *g = Some(state);
            }
        }
    }
}

/// The live segment count, as a secondary metric.
pub fn segments_metric(engine: &Engine) -> Metric {
    Metric::new("segments", engine.segment_count() as f64, "segments")
}

#[cfg(test)]
mod tests {
    use super::*;
    use critsec_harness::Window;

    fn run(strategy: &str, ids: &str) -> Vec<Metric> {
        let params = Params::from_pairs([
            ("strategy", strategy),
            ("segments", "5"),
            ("ids", ids),
            ("docs_per_segment", "200"),
            ("refresh_every", "150"),
        ]);
        let trial = IndexScenario
            .setup(&params, &[GroupSpec::new("op", 2)])
            .unwrap();
        trial.verify().unwrap();
        let probe = trial.probe().unwrap();
        probe.reset();
        let mut workers: Vec<_> = (0..2)
            .map(|i| trial.expect_workers().worker("op", i))
            .collect();
        for w in &mut workers {
            for _ in 0..400 {
                w.op();
            }
            w.check().unwrap();
        }
        let metrics = probe.read(Window {
            nanos: 1_000_000,
            ops: 800,
        });
        drop(workers);
        let summary = trial.verify().unwrap();
        assert!(summary.contains("live docs"), "{summary}");
        metrics
    }

    fn get(m: &[Metric], name: &str) -> f64 {
        m.iter().find(|x| x.name == name).map(|x| x.value).unwrap()
    }

    #[test]
    fn provided_ids_verify_and_per_reader_needs_fewer_gets() {
        let seg = run("per-segment", "provided");
        let rdr = run("per-reader", "provided");
        let pruned = run("pruned", "provided");
        // Per reader: at most one map get per doc (none when the version map answers).
        assert!(get(&rdr, "map_gets_per_doc") <= 1.0);
        assert!(get(&seg, "map_gets_per_doc") > 3.0 * get(&rdr, "map_gets_per_doc"));
        assert!(get(&pruned, "term_seeks_per_doc") < get(&rdr, "term_seeks_per_doc"));
        assert!(get(&seg, "lookup_ns_per_doc") > 0.0 && get(&seg, "segments") >= 1.0);
    }

    #[test]
    fn auto_ids_never_look_up() {
        let m = run("per-segment", "auto");
        assert_eq!(get(&m, "map_gets_per_doc"), 0.0);
        assert_eq!(get(&m, "term_seeks_per_doc"), 0.0);
    }
}
