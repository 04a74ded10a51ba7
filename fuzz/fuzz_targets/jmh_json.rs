//! Fuzz target for JMH JSON (`critsec compare`, command sides with `-rf json`): ours and real
//! JMH's layout, any text. Reading must not panic; an error must name the file and a line.
#![no_main]

use critsec_harness::claims::command::parse_jmh;
use critsec_harness::format::jmh::read_entries;
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
    // What a command side does with the same file: pick the entry, take its iterations.
    let _ = parse_jmh(&text, None, "primary");
    let _ = parse_jmh(&text, Some("bench"), "gc.alloc.rate");
});
