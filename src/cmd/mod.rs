//! One module per subcommand, plus what they share: JMH-style flag spelling and exit codes.

pub mod ab;
pub mod builds;
pub mod calibrate;
pub mod compare;
pub mod doctor;
pub mod list;
pub mod node;
pub mod parse;
pub mod progress;
pub mod report;
pub mod reproduce;
pub mod run;

/// A usage error: the message goes to stderr and the exit code is 2.
#[derive(Debug, thiserror::Error)]
#[error("{0}")]
pub struct UsageError(pub String);

/// 2 for usage errors (anywhere in the chain), 1 for everything else.
pub fn exit_code_of(e: &anyhow::Error) -> u8 {
    if e.chain().any(|c| {
        c.is::<UsageError>()
            || c.is::<critsec_harness::run::PlanError>()
            || c.is::<critsec_harness::run::SettingsError>()
            || c.is::<critsec_harness::ClaimError>()
            || c.is::<critsec_harness::claims::InvalidClaim>()
    }) {
        2
    } else {
        1
    }
}

/// JMH spells some options as one dash plus several letters (`-wi 3`, `-bm avgt`, `-rf json`,
/// `-rff FILE`); clap only
/// knows single-letter short options, so those spellings are rewritten to their long forms.
pub fn jmh_style_args(args: impl Iterator<Item = String>) -> Vec<String> {
    args.map(|a| match a.as_str() {
        "-wi" => "--warmup-iterations".to_string(),
        "-bm" => "--mode".to_string(),
        "-rf" => "--result-format".to_string(),
        "-rff" => "--result-file".to_string(),
        _ => a,
    })
    .collect()
}

#[cfg(test)]
mod tests {
    #[test]
    fn jmh_spellings_become_long_options() {
        let args = ["critsec", "run", "-wi", "2", "-bm", "avgt", "-i", "3"].map(String::from);
        assert_eq!(
            super::jmh_style_args(args.into_iter()),
            [
                "critsec",
                "run",
                "--warmup-iterations",
                "2",
                "--mode",
                "avgt",
                "-i",
                "3"
            ]
        );
    }
}
