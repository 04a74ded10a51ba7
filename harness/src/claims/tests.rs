//! `reproduce_claims` end to end on a synthetic scenario whose scores are set by its
//! parameters (no wall time): replicate structure, ABBA balance, recorded randomisation, ERROR
//! on a failed check, the count kind, NOT TESTABLE HERE, positive controls and seeds; and one
//! run with a fixed seed whose outcomes are pinned whole (`testdata/reproduce_pinned.json`).

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use super::claim::Claim;
use super::reproduce::{PairedSettings, Verdict, reproduce_claims};
use crate::run::fork::Catalog;
use crate::run::runner::{Launcher, Silent};
use crate::run::scenario::{
    CheckFailed, ExternalSample, GroupSpec, Iterations, Metric, ParamSpec, Params, Scenario,
    ScenarioError, SelfTimed, Trial,
};

/// `synthetic/score`: each iteration scores `score` (times a small deterministic wobble) and
/// counts `timeouts`; `broken = 1` fails its check; `seeded = 1` declares it deterministic;
/// `swing = s` makes the score of the trials of the j-th round of a configuration (its two
/// blocks: set-ups 2j and 2j + 1 of that `score` in this catalog) e^{+s} times `score` for even
/// j and e^{-s} times for odd j: a spread between processes, as on a real machine, the same in
/// every run whatever order the group's arms are measured in; `spread = s` makes iteration n
/// (seed n of a seeded arm) score e^{+s} times for even n and e^{-s} times for odd n.
#[derive(Default)]
struct Synthetic {
    swung: std::sync::Mutex<std::collections::HashMap<String, u64>>,
    /// Iterations run by all its trials.
    ran: Arc<AtomicU64>,
}

impl Scenario for Synthetic {
    fn name(&self) -> &'static str {
        "synthetic/score"
    }
    fn description(&self) -> &'static str {
        "test scenario"
    }
    fn params(&self) -> Vec<ParamSpec> {
        vec![
            ParamSpec::free("score", &["100"], "score per iteration"),
            ParamSpec::free("timeouts", &["0"], "timeouts per iteration"),
            ParamSpec::free("broken", &["0"], "1: the check fails"),
            ParamSpec::free("seeded", &["0"], "1: deterministic"),
            ParamSpec::free("swing", &["0"], "log-score spread between processes"),
            ParamSpec::free("spread", &["0"], "log-score spread between iterations"),
            ParamSpec::free(
                "seed",
                &[""],
                "seeded: the first iteration's seed (empty: 0)",
            ),
        ]
    }
    fn deterministic(&self, params: &Params) -> bool {
        params.get("seeded").is_ok_and(|v| v == "1")
    }
    fn setup(&self, p: &Params, _: &[GroupSpec]) -> Result<Box<dyn Trial>, ScenarioError> {
        let swing: f64 = p.parse("swing")?;
        let factor = if swing == 0.0 {
            1.0
        } else {
            let mut swung = self.swung.lock().unwrap();
            let n = swung.entry(p.get("score")?.to_string()).or_default();
            let round = *n / 2;
            *n += 1;
            if round % 2 == 0 {
                swing.exp()
            } else {
                (-swing).exp()
            }
        };
        Ok(Box::new(SyntheticTrial {
            score: p.parse::<f64>("score")? * factor,
            timeouts: p.parse("timeouts")?,
            broken: p.get("broken")? == "1",
            spread: p.parse("spread")?,
            n: AtomicU64::new(match p.get("seed")? {
                "" => 0,
                _ => p.parse("seed")?,
            }),
            ran: Arc::clone(&self.ran),
        }))
    }
}

struct SyntheticTrial {
    score: f64,
    timeouts: f64,
    broken: bool,
    spread: f64,
    n: AtomicU64,
    ran: Arc<AtomicU64>,
}

impl Trial for SyntheticTrial {
    fn verify(&self) -> Result<String, CheckFailed> {
        if self.broken {
            Err("the synthetic check failed".into())
        } else {
            Ok("ok".into())
        }
    }
    fn iterations(&self) -> Iterations<'_> {
        Iterations::SelfTimed(self)
    }
}

impl SelfTimed for SyntheticTrial {
    fn run_iteration(&self, _: bool, _: Duration) -> Result<ExternalSample, CheckFailed> {
        let n = self.n.fetch_add(1, Ordering::Relaxed);
        self.ran.fetch_add(1, Ordering::Relaxed);
        // ±1% wobble, so intervals have a spread.
        let wobble = 1.0 + 0.01 * ((n % 3) as f64 - 1.0);
        let spread = if n % 2 == 0 {
            self.spread
        } else {
            -self.spread
        };
        Ok(ExternalSample {
            score: self.score * wobble * spread.exp(),
            unit: "ops/s".into(),
            secondary: vec![
                Metric::new("timeouts", self.timeouts, "count"),
                Metric::new("requests", 1000.0, "count"),
            ],
        })
    }
}

fn claims(text: &str) -> Vec<Claim> {
    Claim::parse_file(text, "test.toml").unwrap()
}

/// Quick settings with iterations of 1 ms, and 2 blocks and 1 warmup per round (the tests count
/// them), in this process.
fn settings() -> PairedSettings {
    PairedSettings {
        iteration_time: Duration::from_millis(1),
        blocks: 2,
        warmup_iterations: 1,
        forked: false,
        ..PairedSettings::quick().with_seed(11)
    }
}

fn run(text: &str) -> Vec<super::reproduce::ClaimOutcome> {
    run_counting(text).0
}

/// [`settings`] with budgets (of scenarios and of programs) no run reaches, so that the last
/// look planned after the pilot is the most (16) however fast this machine is.
fn unhurried() -> PairedSettings {
    PairedSettings {
        budget: Duration::from_secs(24 * 3600),
        program_budget: Duration::from_secs(24 * 3600),
        ..settings()
    }
}

/// The outcomes, and how many iterations the synthetic trials ran.
fn run_counting(text: &str) -> (Vec<super::reproduce::ClaimOutcome>, u64) {
    run_with(text, &settings())
}

/// [`run_counting`] with `settings`.
fn run_with(text: &str, settings: &PairedSettings) -> (Vec<super::reproduce::ClaimOutcome>, u64) {
    let synthetic = Synthetic::default();
    let ran = Arc::clone(&synthetic.ran);
    let launcher = Launcher::new(Arc::new(Catalog::new(vec![Box::new(synthetic)])), None);
    let cs = claims(text);
    let out = reproduce_claims(&launcher, &cs, &cs, settings, &mut Silent);
    (out, ran.load(Ordering::Relaxed))
}

const HEAD: &str = "title='t'\nsource='s'\nsource_figure='f'\nscenario='synthetic/score'\n";

fn ratio(id: &str, base: &str, cont: &str, extra: &str) -> String {
    format!(
        "[[claim]]\nid='{id}'\n{HEAD}direction='higher'\nmin_effect=1.5\n{extra}baseline={{params={{score='{base}'}}}}\ncontender={{params={{score='{cont}'}}}}\n"
    )
}

#[test]
fn a_known_ratio_reproduces_with_balanced_recorded_replicates() {
    let o = &run(&ratio("fast", "100", "200", ""))[0];
    assert_eq!(o.verdict, Ok(Verdict::Reproduced), "{o:?}");
    assert_eq!(o.replicate_kind, "process-pair");
    let r = o.interval.unwrap();
    assert!((r.ratio - 2.0).abs() < 0.05, "{r:?}");
    // The pilot decides it: 5 pairs of 2 blocks, one A-B and one B-A each.
    assert_eq!(o.replicates.len(), 5);
    assert_eq!(o.looks, vec![5]);
    for rep in &o.replicates {
        let firsts: Vec<bool> = rep.blocks.iter().map(|b| b.baseline_first).collect();
        assert_eq!(firsts.len(), 2);
        assert_ne!(firsts[0], firsts[1], "unbalanced blocks {firsts:?}");
    }
    // Launch order and padding are drawn per pair and recorded.
    let launched: Vec<bool> = o
        .replicates
        .iter()
        .map(|r| r.baseline_launched_first)
        .collect();
    assert!(
        launched.contains(&true) && launched.contains(&false),
        "{launched:?}"
    );
    assert!(o.replicates.iter().any(|r| r.env_pad.0 != r.env_pad.1));
    assert!(o.components.is_some());
    assert_eq!(o.baseline.verified_before.len(), 5);
}

/// An A/A claim: the same configuration on both sides, run as two processes per round (not one
/// arm measured once), whose interval covers 1 and stays below the claimed 1.5.
#[test]
fn an_aa_claim_runs_one_configuration_as_two_processes_and_covers_one() {
    let text = format!(
        "[[claim]]\nid='synthetic-aa'\n{HEAD}direction='higher'\nmin_effect=1.5\naa=true\nparams={{score='100', swing='0.2'}}\nbaseline={{}}\ncontender={{}}\n"
    );
    let (out, ran) = run_counting(&text);
    let o = &out[0];
    let r = o.interval.expect("an interval");
    assert!(r.low <= 1.0 && 1.0 <= r.high, "{r:?}");
    assert_eq!(o.verdict, Ok(Verdict::NotReproduced), "{o:?}");
    // Two processes a round: each side's blocks were measured, so twice the iterations of
    // one arm (warmup and blocks alike).
    let per_arm = o.replicates.len() as u64 * (1 + o.replicates[0].blocks.len() as u64);
    assert_eq!(ran, 2 * per_arm, "{o:?}");
    assert_eq!(o.baseline.verified_before.len(), o.replicates.len());
}

#[test]
fn the_same_seed_replays_the_same_randomisation() {
    let a = &run(&ratio("fast", "100", "200", ""))[0];
    let b = &run(&ratio("fast", "100", "200", ""))[0];
    let orders = |o: &super::reproduce::ClaimOutcome| {
        o.replicates
            .iter()
            .map(|r| (r.baseline_launched_first, r.env_pad))
            .collect::<Vec<_>>()
    };
    assert_eq!(orders(a), orders(b));
}

#[test]
fn a_failed_check_is_an_error_never_a_verdict() {
    let text = ratio("broken", "100", "200", "").replace(
        "contender={params={score='200'}}",
        "contender={params={score='200', broken='1'}}",
    );
    let o = &run(&text)[0];
    let e = o.verdict.as_ref().unwrap_err();
    assert!(e.contains("synthetic check failed"), "{e}");
}

#[test]
fn count_claims_test_none_against_some_with_rates() {
    let count = |id: &str, base: &str, cont: &str| {
        format!(
            "[[claim]]\nid='{id}'\n{HEAD}kind='count'\nmetric='timeouts'\nk=2\nexposure='requests'\nbaseline={{params={{timeouts='{base}'}}}}\ncontender={{params={{timeouts='{cont}', score='101'}}}}\n"
        )
    };
    let text = count("none-vs-some", "3", "0")
        + &count("too-few", "1", "0")
        + &count("some-left", "3", "1");
    let out = run(&text);
    assert_eq!(out[0].verdict, Ok(Verdict::Reproduced), "{:?}", out[0]);
    let c = out[0].counts.as_ref().unwrap();
    // 5 pairs × 2 blocks × 3 timeouts per replicate block = 6 per replicate.
    assert_eq!(c.baseline, vec![6; 5]);
    assert_eq!(c.contender, vec![0; 5]);
    let rate = c.baseline_rate.unwrap();
    assert!((rate.rate - 3.0).abs() < 1e-9, "{rate:?}");
    assert_eq!(c.contender_rate.unwrap().low, 0.0);
    // k = 2 per replicate: a baseline of 1 per block is 2 per replicate, enough; but the
    // contender's 1 per block is not none.
    assert_eq!(out[1].verdict, Ok(Verdict::Reproduced));
    assert_eq!(out[2].verdict, Ok(Verdict::NotReproduced));
    // A ratio against zero is undefined (NaN, `null` in JSON): the outcomes still read back.
    assert!(out[0].replicates[0].log_ratio.is_nan());
    let json = serde_json::to_string(&out).unwrap();
    let back: Vec<super::reproduce::ClaimOutcome> = serde_json::from_str(&json).unwrap();
    assert_eq!(back.len(), 3);
    assert_eq!(back[0].counts, out[0].counts);
}

#[test]
fn requirements_the_machine_lacks_make_a_claim_not_testable_here() {
    let o = &run(&ratio("big", "100", "200", "requires={cores=100000}\n"))[0];
    match &o.verdict {
        Ok(Verdict::NotTestable { reason }) => assert!(reason.contains("100000 cores"), "{reason}"),
        other => panic!("{other:?}"),
    }
    assert!(o.replicates.is_empty(), "nothing was measured");
}

#[test]
fn a_failing_positive_control_makes_a_null_claim_not_testable_here() {
    // The control claims a 1.5x effect that the synthetic scores do not have (1.01x).
    let control = ratio("control", "100", "101", "");
    let null = format!(
        "[[claim]]\nid='null'\n{HEAD}direction='lower'\nmin_effect=1.3\ncontrol='control'\nbaseline={{params={{score='100'}}}}\ncontender={{params={{score='102'}}}}\n"
    );
    let out = run(&(control + &null));
    assert_eq!(out[0].claim.id, "control");
    assert_eq!(out[0].verdict, Ok(Verdict::NotReproduced));
    match &out[1].verdict {
        Ok(Verdict::NotTestable { reason }) => assert!(reason.contains("control"), "{reason}"),
        other => panic!("{other:?}"),
    }
    // The null claim's own interval is still reported.
    assert!(out[1].interval.is_some());
}

#[test]
fn claims_on_one_configuration_share_its_measurements() {
    let text = ratio("a", "100", "200", "") + &ratio("b", "100", "300", "");
    let out = run(&text);
    assert_eq!(out[0].group, vec!["a".to_string(), "b".to_string()]);
    // Both derive from the same rounds: the baseline's values are identical.
    assert_eq!(out[0].baseline.values, out[1].baseline.values);
}

#[test]
fn deterministic_scenarios_replicate_over_seeds() {
    let text = ratio("sim", "100", "200", "")
        .replace("score='100'}", "score='100', seeded='1'}")
        .replace("score='200'}", "score='200', seeded='1'}");
    let o = &run(&text)[0];
    assert_eq!(o.replicate_kind, "seed");
    assert_eq!(o.replicates.len(), 3);
    assert_eq!(
        o.replicates.iter().map(|r| r.seed).collect::<Vec<_>>(),
        vec![Some(0), Some(1), Some(2)]
    );
    assert_eq!(o.verdict, Ok(Verdict::Reproduced));
}

/// Seeds have looks too (quick: 3, 5 and 8): a seeded claim of twice the baseline give or take
/// e^{±0.1} from seed to seed against a claimed 1.5 is undecided at 3 seeds (99.9999923%, t
/// with 2 degrees of freedom) and at 5, and decided at 8; a decided one in the same group stops
/// at 3. With `first_seed` set, a later look runs only the seeds each arm it continues lacks,
/// and the replicates are those of a full rerun.
fn seeded_looks(first_seed: &str) -> (Vec<super::reproduce::ClaimOutcome>, u64) {
    let seeded = |id: &str, cont: &str, spread: &str| {
        ratio(id, "100", cont, "")
            .replace(
                "score='100'}",
                &format!("score='100', seeded='1', seed='{first_seed}'}}"),
            )
            .replace(
                &format!("score='{cont}'}}"),
                &format!("score='{cont}', seeded='1', seed='{first_seed}', spread='{spread}'}}"),
            )
    };
    run_counting(&(seeded("decided", "200", "0") + &seeded("later", "200", "0.1")))
}

#[test]
fn a_later_seed_look_runs_only_the_seeds_not_yet_run() {
    let (rerun, ran_all) = seeded_looks("");
    let (continued, ran) = seeded_looks("0");
    // Three arms (the baseline is shared) of 3 seeds; then the undecided claim's two arms to 5,
    // and to 8: from seed 0 at each look when the scenario cannot start elsewhere.
    assert_eq!(ran_all, 3 * 3 + 2 * 5 + 2 * 8);
    assert_eq!(ran, 3 * 3 + 2 * 5);
    for (a, b) in rerun.iter().zip(&continued) {
        assert_eq!(a.looks, b.looks);
        assert_eq!(a.baseline.values, b.baseline.values, "{}", a.claim.id);
        assert_eq!(a.contender.values, b.contender.values, "{}", a.claim.id);
        assert_eq!(a.verdict, b.verdict);
    }
}

#[test]
fn an_undecided_seeded_claim_runs_on_to_the_last_seed_look() {
    let (out, _) = seeded_looks("");
    assert_eq!(out[0].looks, vec![3], "{:?}", out[0]);
    assert_eq!(out[0].verdict, Ok(Verdict::Reproduced));
    let later = &out[1];
    assert_eq!(later.looks, vec![3, 5, 8], "{later:?}");
    assert_eq!(
        later.replicates.iter().map(|r| r.seed).collect::<Vec<_>>(),
        (0..8).map(Some).collect::<Vec<_>>()
    );
    assert_eq!(later.verdict, Ok(Verdict::Reproduced), "{later:?}");
}

/// A claim that the last look could not decide, even had its estimate moved two standard errors
/// away from the bound with a spread as small as plausible, stops where it is (futility), though
/// never at the pilot: a ratio of exactly the claimed 1.5, give or take e^{±0.1} from process to
/// process, stops at the second look (8 rounds) of the looks out to 16, and its verdict says why.
#[test]
fn a_claim_the_last_look_could_not_decide_stops_early_and_says_why() {
    let text =
        ratio("never", "100", "150", "").replace("score='150'}", "score='150', swing='0.1'}");
    let never = &run_with(&text, &unhurried()).0[0];
    assert_eq!(never.looks, vec![5, 8], "{never:?}");
    assert!(
        matches!(never.verdict, Ok(Verdict::Inconclusive { .. })),
        "{never:?}"
    );
    let design = never.design.as_ref().expect("a design");
    assert_eq!(design.looks, vec![5, 8, 11, 14, 16]);
    assert!(
        design.ended.contains("stopped at 8") && design.ended.contains("straddle"),
        "{design:?}"
    );
}

/// The stopping rule beyond the pilot (quick settings: looks at 5 and 8 pairs). The contender's
/// score swings by e^{±0.1} from one process to the next, so the pairs' log ratios are ln 2 ± 0.1:
/// at 5 pairs the first look's interval (99.997%, t with 4 degrees of freedom, about ±9.3 sd)
/// still reaches below 1.5; at 8 (99.903%, 7 degrees of freedom, about ±1.9 sd) it lies above.
/// So `later` is measured on to the second look and decided there. `never` (a ratio of exactly the claimed 1.5) is
/// undecided at every look and stops at the last, 8 pairs, without a verdict.
#[test]
fn an_undecided_pilot_measures_on_to_the_next_look_and_stops_at_the_last() {
    let swung = |id: &str, cont: &str| {
        ratio(id, "100", cont, "").replace(
            &format!("score='{cont}'}}"),
            &format!("score='{cont}', swing='0.1'}}"),
        )
    };
    let fixed = PairedSettings {
        most_pairs: 0,
        ..settings()
    };
    let out = run_with(&(swung("later", "200") + &swung("never", "150")), &fixed).0;
    let later = &out[0];
    assert_eq!(later.looks, vec![5, 8], "{later:?}");
    assert_eq!(later.replicates.len(), 8);
    assert_eq!(later.verdict, Ok(Verdict::Reproduced), "{later:?}");
    let never = &out[1];
    assert_eq!(never.looks, vec![5, 8], "{never:?}");
    assert_eq!(never.replicates.len(), 8, "no rounds past the last look");
    assert!(
        matches!(never.verdict, Ok(Verdict::Inconclusive { .. })),
        "{never:?}"
    );
}

/// After the pilot the last look moves out to what the budget affords (a budget of a day: to
/// the most, 16), with looks every 3 rounds before it, spending the α the
/// pilot left by the same shape: `later` is decided at 11 (at 8 the look now spends little), and
/// `never`, whose estimate sits on the bound, stops with it, since 16 rounds could not decide it
/// (without a precision goal, which would keep the group going for `later`).
#[test]
fn the_last_look_moves_out_to_what_the_budget_affords() {
    let swung = |id: &str, cont: &str| {
        ratio(id, "100", cont, "").replace(
            &format!("score='{cont}'}}"),
            &format!("score='{cont}', swing='0.1'}}"),
        )
    };
    let settings = PairedSettings {
        precision: None,
        ..unhurried()
    };
    let out = run_with(&(swung("later", "200") + &swung("never", "150")), &settings).0;
    let later = &out[0];
    let design = later.design.as_ref().expect("a design");
    assert_eq!(design.looks, vec![5, 8, 11, 14, 16], "{design:?}");
    assert!(design.why.contains("at most 16"), "{design:?}");
    let spent: f64 = design.confidence.iter().map(|c| 1.0 - c).sum();
    assert!((spent - 0.001).abs() < 1e-12, "{design:?}");
    assert_eq!(later.looks, vec![5, 8, 11], "{later:?}");
    assert_eq!(later.verdict, Ok(Verdict::Reproduced), "{later:?}");
    let never = &out[1];
    assert_eq!(never.looks, vec![5, 8, 11], "{never:?}");
    assert!(
        matches!(never.verdict, Ok(Verdict::Inconclusive { .. })),
        "{never:?}"
    );
    assert!(design.ended.is_empty(), "{design:?}");
    let ended = &never.design.as_ref().expect("a design").ended;
    assert!(ended.contains("stopped at 11"), "{ended}");
}

/// A group whose claims are all decided takes its next looks while a decided interval is wider
/// than the precision goal: `decided` (a spread of e^{±0.02} between processes) is decided at
/// the pilot, where its interval at 99.997% is wide, and narrows look by look until it meets the
/// goal; its verdict stays, and the design says which looks were for precision. Without a goal
/// the group stops at the pilot.
#[test]
fn a_decided_group_measures_on_until_its_intervals_meet_the_precision_goal() {
    let text =
        ratio("decided", "100", "200", "").replace("score='200'}", "score='200', swing='0.02'}");
    let half_width = |o: &super::reproduce::ClaimOutcome| {
        let r = o.interval.expect("an interval");
        (r.high / r.low).ln() / 2.0
    };
    let stopping = PairedSettings {
        precision: None,
        ..unhurried()
    };
    let at_the_pilot = &run_with(&text, &stopping).0[0];
    assert_eq!(
        at_the_pilot.verdict,
        Ok(Verdict::Reproduced),
        "{at_the_pilot:?}"
    );
    assert_eq!(at_the_pilot.looks, vec![5], "{at_the_pilot:?}");
    let design = at_the_pilot.design.as_ref().expect("a design");
    assert!(design.for_precision.is_empty(), "{design:?}");
    let wide = half_width(at_the_pilot);
    let goal = 0.05;
    assert!(wide > goal, "{at_the_pilot:?}");

    let precise = &run_with(
        &text,
        &PairedSettings {
            precision: Some(goal),
            ..unhurried()
        },
    )
    .0[0];
    assert_eq!(precise.verdict, Ok(Verdict::Reproduced), "{precise:?}");
    let narrow = half_width(precise);
    assert!(narrow <= goal, "{precise:?}");
    let looks = &precise.looks;
    assert!(looks.len() > 1 && looks[0] == 5, "{precise:?}");
    let design = precise.design.as_ref().expect("a design");
    // It stopped at the first look that met the goal, before the last planned one.
    assert!(looks.last() < design.looks.last(), "{design:?}");
    let later: Vec<String> = looks[1..].iter().map(u32::to_string).collect();
    assert!(
        design.for_precision.contains(&format!(
            "the looks at {} were taken for precision alone",
            later.join(", ")
        )) && design.for_precision.contains(&format!(
            "before the look at {} decided had an interval wider than x/÷ 1.051",
            later[0]
        )),
        "{design:?}"
    );
    // The pilot's replicates are the same ones: going on only added to them.
    assert_eq!(precise.replicates[..5], at_the_pilot.replicates[..]);
}

/// A command side running `sh -c script` (the script sees `$CRITSEC_REPLICATE`; `$0` is the
/// JMH result file where `jmh` is the output).
fn sh(script: &str, output: &str) -> String {
    let script = script.replace('\\', "\\\\").replace('"', "\\\"");
    let result = if output == "jmh" {
        ", \"{result}\""
    } else {
        ""
    };
    format!("{{command={{program='sh', args=['-c', \"{script}\"{result}], output='{output}'}}}}")
}

fn command(id: &str, extra: &str, base: &str, cont: &str) -> String {
    format!(
        "[[claim]]\nid='{id}'\ntitle='t'\nsource='s'\nsource_figure='f'\ndirection='higher'\nmin_effect=1.5\n{extra}baseline={base}\ncontender={cont}\n"
    )
}

/// Which side of a command claim is invoked first is balanced over its replicates (half each,
/// in pairs), whatever the seed: a coin per replicate gave a 4:1 split over 5 pairs.
#[test]
fn command_sides_run_first_equally_often() {
    let lines = |v: &str| sh(&format!("echo {v},ops/s"), "lines");
    let text = command("cmd-order", "", &lines("100"), &lines("300"));
    for seed in 0..6 {
        let cs = claims(&text);
        let launcher = Launcher::new(Arc::new(Catalog::new(vec![])), None);
        let s = PairedSettings {
            min_pairs: 6,
            max_pairs: 6,
            ..settings().with_seed(seed)
        };
        let o = &reproduce_claims(&launcher, &cs, &cs, &s, &mut Silent)[0];
        let firsts: Vec<bool> = o
            .replicates
            .iter()
            .map(|r| r.baseline_launched_first)
            .collect();
        assert_eq!(firsts.len(), 6, "{o:?}");
        assert_eq!(
            firsts.iter().filter(|f| **f).count(),
            3,
            "seed {seed}: {firsts:?}"
        );
    }
}

/// A JMH result of one entry `b.run` whose primary metric's raw data is `raw`.
fn jmh_script(raw: &str) -> String {
    format!(
        "printf '%s' '[{{\"benchmark\":\"b.run\",\"mode\":\"thrpt\",\"threads\":1,\"primaryMetric\":{{\"score\":1,\"scoreError\":0,\"scoreConfidence\":[0,0],\"scoreUnit\":\"ops/s\",\"rawData\":[[{raw}]]}}}}]' > \"$0\""
    )
}

/// Claims covering every path `reproduce_claims` takes: groups of rounds (one decided at the
/// pilot, one measured on to the last look, one merged from two through a shared arm), count
/// claims (one whose exposure metric is missing), a failed check, a missing metric, positive
/// controls that do and do not reproduce, seeded groups with looks and a failed seeded arm, and
/// command sides (lines and JMH; decided, undecided, failing after the first look, units that
/// differ).
fn pinned_claims() -> String {
    let seeded = |id: &str, base: &str, cont: &str, spread: &str, extra: &str| {
        ratio(id, base, cont, "")
            .replace(
                &format!("score='{base}'}}"),
                &format!("score='{base}', seeded='1', seed='0'{extra}}}"),
            )
            .replace(
                &format!("score='{cont}'}}"),
                &format!("score='{cont}', seeded='1', seed='0', spread='{spread}'}}"),
            )
    };
    let swung = |id: &str, base: &str, cont: &str| {
        ratio(id, base, cont, "").replace(
            &format!("score='{cont}'}}"),
            &format!("score='{cont}', swing='0.1'}}"),
        )
    };
    let count = |id: &str, base: &str, cont: &str, exposure: &str| {
        format!(
            "[[claim]]\nid='{id}'\n{HEAD}kind='count'\nmetric='timeouts'\nk=2\nexposure='{exposure}'\nbaseline={{params={{timeouts='{base}'}}}}\ncontender={{params={{timeouts='{cont}', score='101'}}}}\n"
        )
    };
    let lines = |values: &str| sh(&format!("echo {values}"), "lines");
    [
        ratio("fast", "100", "200", ""),
        swung("later", "110", "220"),
        swung("never", "110", "165"),
        count("none-vs-some", "3", "0", "requests"),
        count("too-few", "1", "0", "requests"),
        count("bad-exposure", "4", "0", "nope"),
        ratio("broken", "105", "210", "").replace(
            "contender={params={score='210'}}",
            "contender={params={score='210', broken='1'}}",
        ),
        ratio("no-metric", "160", "320", "metric='nope'\n"),
        ratio("m1", "140", "280", ""),
        ratio("m2", "150", "300", ""),
        ratio("m3", "280", "300", ""),
        ratio("control", "120", "121", ""),
        format!(
            "[[claim]]\nid='null'\n{HEAD}direction='lower'\nmin_effect=1.3\ncontrol='control'\nbaseline={{params={{score='130'}}}}\ncontender={{params={{score='132'}}}}\n"
        ),
        format!(
            "[[claim]]\nid='null-ok'\n{HEAD}direction='lower'\nmin_effect=1.3\ncontrol='fast'\nbaseline={{params={{score='170'}}}}\ncontender={{params={{score='172'}}}}\n"
        ),
        seeded("sim-decided", "100", "200", "0", ""),
        seeded("sim-never", "100", "150", "0.1", ""),
        seeded("sim-broken", "190", "380", "0", ", broken='1'"),
        command(
            "cmd-fast",
            "benchmark='b'\n",
            &lines("100,ops/s; echo 102,ops/s"),
            &lines("$((200 + CRITSEC_REPLICATE % 3)),ops/s"),
        ),
        command(
            "cmd-undecided",
            "",
            &lines("100,ops/s"),
            &lines("$((140 + CRITSEC_REPLICATE % 2 * 20)),ops/s"),
        ),
        command(
            "cmd-fails-later",
            "",
            &lines("100,ops/s"),
            &sh(
                "[ $CRITSEC_REPLICATE -lt 6 ] || exit 3; echo $((140 + CRITSEC_REPLICATE % 2 * 20)),ops/s",
                "lines",
            ),
        ),
        command(
            "cmd-units",
            "",
            &lines("100,ops/s"),
            &lines("200,ms/op"),
        ),
        command(
            "cmd-jmh",
            "benchmark='b.run'\n",
            &sh(&jmh_script("100, 101"), "jmh"),
            &sh(&jmh_script("200, 210"), "jmh"),
        ),
    ]
    .concat()
}

/// The outcomes as the verdict file writes them, with what wall time decides (seconds, and the
/// blocks per pair recommended from the measured costs) blanked.
fn pinned_json(outcomes: &[super::reproduce::ClaimOutcome]) -> String {
    let mut v = serde_json::to_value(outcomes).unwrap();
    for o in v.as_array_mut().unwrap() {
        o["seconds"] = serde_json::Value::from(0.0);
        o["optimal_blocks"] = serde_json::Value::Null;
        if o["design"].is_object() {
            o["design"]["replicate_seconds"] = serde_json::Value::from(0.0);
        }
    }
    serde_json::to_string_pretty(&v).unwrap() + "\n"
}

/// Every verdict, interval, replicate and randomisation of a run with a fixed seed, pinned in
/// `testdata/reproduce_pinned.json`: a change to how claims are planned, measured or derived
/// that changes any of them shows here. `CRITSEC_BLESS=1` rewrites the file (review its diff).
#[test]
fn a_fixed_seed_reproduces_the_pinned_outcomes() {
    let path = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/src/claims/testdata/reproduce_pinned.json"
    );
    // A budget no run reaches, so that how fast this machine is decides nothing.
    let settings = unhurried();
    let launcher = Launcher::new(
        Arc::new(Catalog::new(vec![Box::new(Synthetic::default())])),
        None,
    );
    let cs = claims(&pinned_claims());
    let got = pinned_json(&reproduce_claims(
        &launcher,
        &cs,
        &cs,
        &settings,
        &mut Silent,
    ));
    if std::env::var_os("CRITSEC_BLESS").is_some() {
        std::fs::write(path, &got).unwrap();
    }
    let want = std::fs::read_to_string(path).unwrap();
    assert!(got == want, "the outcomes differ from {path}:\n{got}");
}

/// Values that cannot enter a ratio are an ERROR naming the side and the value, never a verdict:
/// a `lines` side printing 4, -1, 4 (a mean of 2.3 hid the -1), a JMH side whose raw data is
/// all NaN (its `score` stood in), a scenario whose metric is not positive, a count of NaN (it
/// rounded to zero, "none").
#[test]
fn garbage_from_a_side_is_an_error_naming_the_side_and_the_value() {
    let lines = |values: &str| sh(&format!("printf '{values}'"), "lines");
    let text = command(
        "negative-line",
        "",
        &lines("1.0\\n1.0\\n1.0\\n"),
        &lines("4.0\\n-1.0\\n4.0\\n"),
    ) + &command(
        "nan-jmh",
        "benchmark='b.run'\n",
        &sh(&jmh_script("1, 1"), "jmh"),
        &sh(&jmh_script("\"NaN\", \"NaN\""), "jmh"),
    ) + &ratio("zero-score", "100", "0", "")
        + &format!(
            "[[claim]]\nid='nan-count'\n{HEAD}kind='count'\nmetric='timeouts'\nk=1\nbaseline={{params={{timeouts='3'}}}}\ncontender={{params={{timeouts='NaN'}}}}\n"
        );
    let out = run(&text);
    let error = |i: usize| {
        out[i]
            .verdict
            .clone()
            .expect_err(&format!("{} has a verdict: {:?}", out[i].claim.id, out[i]))
    };
    let e = error(0);
    assert!(e.contains("contender") && e.contains("-1"), "{e}");
    let e = error(1);
    assert!(e.contains("contender") && e.contains("NaN"), "{e}");
    let e = error(2);
    assert!(e.contains("contender") && e.contains("is 0"), "{e}");
    // A count of NaN is no count of zero.
    let e = error(3);
    assert!(e.contains("contender") && e.contains("is NaN"), "{e}");
}

/// A side that reports exactly what it reported before, to the last bit, is flagged (a cached
/// result file counted as five replicates read "REPRODUCED 9.785 [9.785, 9.785]"); a side whose
/// values vary is not.
#[test]
fn identical_replicates_of_a_program_are_flagged() {
    let cached = sh("echo 9.785,ops/s", "lines");
    let varying = sh("echo 10$CRITSEC_REPLICATE,ops/s", "lines");
    let out = run(&command("cached", "", &varying, &cached));
    let flags = &out[0].flags;
    assert!(!flags.is_empty(), "{:?}", out[0]);
    assert_eq!(flags.len(), 1, "{flags:?}");
    // Every replicate after the first, however many the precision goal took.
    let repeats: Vec<String> = (2..=out[0].replicates.len())
        .map(|r| r.to_string())
        .collect();
    assert!(repeats.len() >= 4, "{:?}", out[0]);
    assert!(
        flags[0].starts_with(&format!(
            "the contender's replicates {} repeat",
            repeats.join(", ")
        )),
        "{flags:?}"
    );
}

/// A side that fails once is run again (up to twice), and the verdict says so; a side that
/// keeps failing fails the claim with an error naming the replicate, the side and the attempts,
/// and the replicates measured before it are kept in the record.
#[test]
fn a_failed_invocation_is_retried_and_what_was_measured_is_kept() {
    let mark = std::env::temp_dir().join(format!("critsec-flaky-{}", std::process::id()));
    let _ = std::fs::remove_file(&mark);
    let flaky = sh(
        &format!(
            "if [ $CRITSEC_REPLICATE = 1 ] && [ ! -e {m} ]; then touch {m}; exit 3; fi; echo $((200 + CRITSEC_REPLICATE)),ops/s",
            m = mark.display()
        ),
        "lines",
    );
    let steady = sh("echo $((100 + CRITSEC_REPLICATE)),ops/s", "lines");
    let out = run(&command("flaky", "", &steady, &flaky));
    let _ = std::fs::remove_file(&mark);
    assert_eq!(out[0].verdict, Ok(Verdict::Reproduced), "{:?}", out[0]);
    assert!(
        out[0]
            .flags
            .iter()
            .any(|f| f.starts_with("replicate 2's contender failed and was run again")),
        "{:?}",
        out[0].flags
    );
    let broken = sh(
        "[ $CRITSEC_REPLICATE -lt 2 ] || exit 3; echo $((200 + CRITSEC_REPLICATE)),ops/s",
        "lines",
    );
    let out = run(&command("broken", "", &steady, &broken));
    let e = out[0].verdict.clone().expect_err("it keeps failing");
    assert!(
        e.starts_with("replicate 3, the contender (3 attempts): contender command"),
        "{e}"
    );
    assert_eq!(out[0].replicates.len(), 2, "{:?}", out[0]);
}

/// JMH exits 0 with an empty result (`[]`) when its fork dies or the benchmark throws; the error
/// says so and shows the end of what JMH printed, where the cause is.
#[test]
fn an_empty_jmh_result_shows_the_end_of_its_output() {
    let dead = sh(
        "echo '# Run progress: 0.00% complete'; echo 'java.lang.IllegalStateException: boom in setup' >&2; printf '[]' > \"$0\"",
        "jmh",
    );
    let text = command(
        "dead-fork",
        "benchmark='b.run'\n",
        &sh(&jmh_script("1, 1"), "jmh"),
        &dead,
    );
    let out = run(&text);
    let e = out[0]
        .verdict
        .clone()
        .expect_err("a dead fork has no verdict");
    assert!(
        e.contains("contender") && e.contains("empty") && e.contains("boom in setup"),
        "{e}"
    );
}

/// A control's own control counts: in the chain top -> middle -> base, a base that does not
/// reproduce makes middle NOT TESTABLE HERE, and so top too, however well each measured. Selecting
/// top alone runs the whole chain.
#[test]
fn a_claim_whose_controls_control_fails_is_not_testable_here() {
    let text = ratio("top", "140", "280", "control='middle'\n")
        + &ratio("middle", "100", "200", "control='base'\n")
        + &ratio("base", "120", "121", "");
    let all = claims(&text);
    let synthetic = Synthetic::default();
    let launcher = Launcher::new(Arc::new(Catalog::new(vec![Box::new(synthetic)])), None);
    for selected in [&all[..], &all[..1]] {
        let out = reproduce_claims(&launcher, selected, &all, &settings(), &mut Silent);
        let ids: Vec<&str> = out.iter().map(|o| o.claim.id.as_str()).collect();
        assert_eq!(
            ids,
            ["base", "middle", "top"],
            "each control before its claims"
        );
        assert_eq!(out[0].verdict, Ok(Verdict::NotReproduced), "{:?}", out[0]);
        for (o, control) in [(&out[1], "base"), (&out[2], "middle")] {
            match &o.verdict {
                Ok(Verdict::NotTestable { reason }) => assert!(
                    reason.contains(&format!("control `{control}`")),
                    "{}: {reason}",
                    o.claim.id
                ),
                other => panic!("{}: {other:?}", o.claim.id),
            }
        }
    }
}
