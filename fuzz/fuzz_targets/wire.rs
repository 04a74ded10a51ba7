//! Fuzz target for the net driver's wire reader: bytes as a peer's connection might deliver
//! them. No input may panic the reader, and every frame it accepts must survive being written
//! and read again unchanged. (Not byte for byte: postcard reads an over-long varint, so two
//! byte strings can hold one frame.)
#![no_main]

use critsec_replication::net::{FrameReader, encode};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let mut reader = FrameReader::new(data);
    while let Ok(Some(frame)) = reader.next_frame() {
        let mut bytes = Vec::new();
        encode(&frame, &mut bytes).expect("a frame read back encodes");
        let again = FrameReader::new(bytes.as_slice()).next_frame();
        assert_eq!(again.ok().flatten().as_ref(), Some(&frame));
    }
});
