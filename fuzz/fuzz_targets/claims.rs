//! Fuzz target for claims files (`--claims FILE`, every bench crate's `claims.toml`): any text.
//! Parsing must not panic; an error must name the file, and a claim's error the claim.
#![no_main]

use critsec_harness::Claim;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let text = String::from_utf8_lossy(data);
    match Claim::parse_file(&text, "fuzz.toml") {
        Ok(claims) => {
            for c in &claims {
                let _ = format!("{c:?}");
            }
        }
        Err(e) => assert!(e.to_string().contains("fuzz.toml"), "error names no place: {e}"),
    }
});
