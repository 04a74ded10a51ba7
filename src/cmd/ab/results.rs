//! `critsec ab --jmh BENCHMARK --results -- MAIN.json PR.json`: two JMH result files already on
//! disk as the sides, fork k of one against fork k of the other; nothing runs. Which way the
//! metric improves comes from the baseline file's mode, where it has one.

use std::process::ExitCode;

use critsec_harness::Direction;
use critsec_harness::claims::{
    EntrySelection, PairedSettings, Reader, VerdictFile, judge_recorded, parse_jmh,
};
use critsec_harness::run::{git_commit, machine, now_utc};
use critsec_present::verdicts::render;

use super::super::UsageError;
use super::super::reproduce::write_verdicts;
use super::{AbArgs, commands, stated, word};

/// Judges the claim on the two files; exit 1 when it could not be judged.
pub(super) fn run(args: &AbArgs) -> anyhow::Result<ExitCode> {
    let paths = [
        args.baseline.clone().unwrap_or_default(),
        args.contender.clone().unwrap_or_default(),
    ];
    let read = |path: &str| {
        std::fs::read_to_string(path)
            .map_err(|e| UsageError(format!("cannot read the JMH result file {path}: {e}")))
    };
    let (baseline, contender) = (read(&paths[0])?, read(&paths[1])?);
    let select = EntrySelection {
        benchmark: args.jmh.as_deref(),
        mode: args.mode.as_deref(),
        params: None,
    };
    // A file that does not parse is judged (and its error reported) below.
    let better = parse_jmh(&baseline, &select, &args.metric)
        .ok()
        .and_then(|run| run.better);
    let direction = match (stated(args), better) {
        (Some(said), Some(better)) if said != better => {
            return Err(UsageError(format!(
                "--{} contradicts {}: its {} runs in a mode where {} is better",
                word(said),
                paths[0],
                args.jmh.as_deref().unwrap_or("benchmark"),
                word(better)
            ))
            .into());
        }
        (Some(said), _) => said,
        (None, better) => better.unwrap_or(Direction::Higher),
    };
    let mut claim = super::claim(
        args,
        direction,
        commands::side(args, Reader::Jmh, &paths[0])?,
        commands::side(args, Reader::Jmh, &paths[1])?,
    );
    claim.benchmark = args.jmh.clone();
    claim.mode = args.mode.clone();
    let outcome = judge_recorded(&claim, [&baseline, &contender], [&paths[0], &paths[1]]);
    let failed = outcome.verdict.is_err();
    let outcomes = vec![outcome];
    println!(
        "# critsec ab --results: {} against {}, forks as replicates",
        paths[1], paths[0]
    );
    println!("# the claim: {}", claim.title);
    println!();
    print!("{}", render(&outcomes));
    if let Some(path) = &args.json {
        write_verdicts(
            path,
            VerdictFile {
                format: VerdictFile::FORMAT,
                created: now_utc(),
                machine: machine(),
                git_commit: git_commit(),
                hazards: Vec::new(),
                settings: PairedSettings::quick(),
                outcomes,
            },
        )?;
    }
    Ok(if failed {
        ExitCode::from(1)
    } else {
        ExitCode::SUCCESS
    })
}
