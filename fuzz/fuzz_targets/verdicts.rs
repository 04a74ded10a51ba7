//! Fuzz target for verdict files (`reproduce --json`, read back by `critsec report --verdicts`):
//! any text. Reading must not panic; an error must name the file.
#![no_main]

use critsec_harness::claims::VerdictFile;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let text = String::from_utf8_lossy(data);
    match VerdictFile::parse(&text, "fuzz-verdicts.json") {
        // What is read back is written again the same way.
        Ok(v) => {
            let again = VerdictFile::parse(&String::from_utf8_lossy(&v.to_json()), "again")
                .expect("a verdict file written from one read must read back");
            assert_eq!(again.to_json(), v.to_json());
        }
        Err(e) => assert!(e.to_string().contains("fuzz-verdicts.json"), "error names no place: {e}"),
    }
});
