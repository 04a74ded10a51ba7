//! Fuzz target for the strings of the command line and of claims' settings: durations (`-w`,
//! `-r`, time limits), thread counts (`-t`), modes (`--mode`), a command side's `value[,unit]`
//! lines, and `-p` values checked against a scenario's parameters. The first byte picks the
//! reader; none may panic, and every error must quote the bad input.
#![no_main]

use std::collections::BTreeMap;

use critsec_harness::claims::parse_lines;
use critsec_harness::run::{Mode, param_product, parse_duration, resolve_threads};
use critsec_harness::selftest;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Some((&sel, rest)) = data.split_first() else { return };
    let s = String::from_utf8_lossy(rest);
    match sel % 5 {
        0 => {
            if let Err(e) = parse_duration(&s) {
                assert!(e.to_string().contains(&*s), "{e}");
            }
        }
        1 => {
            if let Err(e) = resolve_threads(&s) {
                assert!(e.to_string().contains(&*s), "{e}");
            }
        }
        2 => {
            if let Err(e) = Mode::parse(&s) {
                assert!(e.to_string().contains(&*s), "{e}");
            }
        }
        3 => {
            let _ = parse_lines(s.as_bytes(), "fuzz");
        }
        _ => {
            // `-p NAME=V1,V2` as the CLI splits it, against every self-test scenario.
            let Some((name, values)) = s.split_once('=') else { return };
            let values: Vec<String> = values.split(',').map(|v| v.trim().to_string()).collect();
            let overrides = BTreeMap::from([(name.to_string(), values)]);
            for scenario in selftest::scenarios() {
                let _ = param_product(scenario.as_ref(), &overrides);
            }
        }
    }
});
