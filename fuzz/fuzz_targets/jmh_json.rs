//! Fuzz target for JMH JSON (`critsec compare`, command sides with `-rf json`): ours and real
//! JMH's layout, any text. Reading must not panic; an error must name the file and a line.
#![no_main]

use std::collections::BTreeMap;

use critsec_harness::claims::{EntrySelection, parse_jmh};
use critsec_harness::format::read_entries;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let text = String::from_utf8_lossy(data);
    match read_entries(&text, "fuzz.json") {
        Ok(entries) => {
            for e in &entries {
                let _ = e.key();
            }
        }
        Err(e) => {
            let m = e.to_string();
            assert!(m.contains("fuzz.json") && m.contains("line"), "error names no place: {m}");
        }
    }
    // What a command side does with the same file: pick the entry (by name, mode and @Param values),
    // take its iterations fork by fork.
    if let Ok(run) = parse_jmh(&text, &EntrySelection::default(), "primary") {
        assert_eq!(run.forks.iter().sum::<usize>(), run.values.len());
        let _ = run.fork_means();
    }
    let params = BTreeMap::from([("impl".to_string(), "chm".to_string())]);
    let select = EntrySelection {
        benchmark: Some("bench"),
        mode: Some("avgt"),
        params: Some(&params),
    };
    let _ = parse_jmh(&text, &select, "gc.alloc.rate");
});
